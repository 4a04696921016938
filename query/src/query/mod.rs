//! Answering questions from an open index: each tool builds an [`Envelope`].
//!
//! The tools share [`Query`] (the snapshot, paging and a cache of source files read for
//! snippets) and the definition lookup with its ranking: the kernel proper before `tools/`,
//! `samples/` and selftests, code of common builds before `arch/um` and no-MMU or
//! negated-condition files, bodies before prototypes and `extern` declarations, then path order.

mod body;
mod callees;
mod callers;
mod code;
mod def;
mod docs;
mod files;
pub(crate) mod find;
pub mod fuzzy;
mod grep;
pub mod impact;
mod indirect;
mod learned;
mod memo;
mod nearmiss;
mod reach;
mod refs;
mod review;
pub mod source;
mod span;
mod structs;
mod symbols;
mod vocab;
mod why;
mod zeroed;

use std::cell::RefCell;
use std::collections::HashMap;

use knav_ctags::Kind;

use crate::envelope::{Coverage, Envelope, Hidden, Record};
use knav_c::scan::Role;
use knav_index::buildfiles::{BuildUse, KconfigEntry};
use knav_index::format::{Def, FileStatus};
use knav_index::segment::{Posting, Postings};
use knav_index::store::Snapshot;
use knav_index::{DefLines, NameStats};

pub use body::get_symbol_body;
pub use callees::find_callees;
pub use callers::find_callers;
pub use code::{search_code, Scope};
pub use def::{find_definition, find_tag, mark_resolved, resolved, several};
pub use docs::search_docs;
pub use files::search_files;
pub use find::{parse_kind, search_symbols};
pub use grep::{search_text, GrepAsk, GrepMode, MAX_CONTEXT};
pub use impact::change_impact;
pub use reach::reachability;
pub use refs::{find_references, GroupBy};
pub use review::review_diff;
pub use symbols::list_file_symbols;

pub use knav_index::rank::rank;

/// Default page size.
pub const DEFAULT_LIMIT: u64 = 100;
/// Largest page size; larger requests are clamped.
pub const MAX_LIMIT: u64 = 1000;
/// Source lines are cut at this many characters.
pub const MAX_LINE_CHARS: usize = 200;
/// User-mode Linux's architecture: a rare build carrying its own copies of kernel names.
pub(crate) const UML: &str = "arch/um/";

/// Bodies are cut at this many lines.
pub const MAX_BODY_LINES: u32 = 300;

/// Paging and filtering shared by every tool.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Page {
    /// Page size; 0 means the default.
    pub limit: u64,
    /// Results to skip.
    pub offset: u64,
    /// Only results whose path starts with this.
    pub path_prefix: Option<String>,
    /// The `.config` deciding which guarded code is built (`--active-config`).
    pub active: Option<std::sync::Arc<knav_kconfig::Config>>,
    /// Bytes of source text (bodies) one answer shows at most; 0: the query's own maximum
    /// (the CLI's). Over MCP it keeps a body an agent asked for under its token budget.
    pub body_bytes: usize,
}

/// What the active configuration says about one line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Built: every enclosing condition is true.
    Live,
    /// Not decided (a condition names something the config does not set, or the file was not
    /// scanned).
    Unknown,
    /// Not built, and why (shared: every line of a hidden file has the same reason).
    Hidden(std::rc::Rc<str>),
}

/// A query against one snapshot.
pub struct Query<'s> {
    /// The index.
    pub snap: &'s Snapshot,
    /// Paging.
    pub page: Page,
    limit: u64,
    clamped: Option<u64>,
    /// What this question has read, decoded and evaluated so far.
    memo: memo::Memo,
    /// Files not read because they changed since indexing (now a link, …), with what they are.
    pub changed: RefCell<Vec<(String, &'static str)>>,
}

/// A line of a file of the snapshot: `(segment, file id, line)`.
type LineKey = (usize, u32, u32);

/// The byte offsets of each identifier on one line.
type LineNames = HashMap<Box<[u8]>, Vec<u32>>;

/// Lines longer than this many bytes are scanned once per query for columns.
const LONG_LINE: usize = 4096;

/// What [`Query::definitions_visiting`] shows of a name's postings in one segment.
pub enum Visit<'a> {
    /// A live posting, and whether it is on the line of one of the name's ctags definitions.
    Posting(&'a Posting, bool),
    /// The facts stored for a hot name in place of its postings (dead files included), and
    /// its occurrences in the segment.
    Stats(u64, &'a NameStats),
}

/// A guard condition's value under the active config, and the reason when it is false.
type Decided = (knav_kconfig::Tri, Option<std::rc::Rc<str>>);

/// A file of the snapshot: `(segment, file id)`.
type FileKey = (usize, u32);

/// What rows of one file need: its guard transitions and its functions' line ranges.
struct FileFacts {
    /// Where its guard transitions are in the segment's files table
    /// ([`knav_index::segment::Segment::guard_at`]); `None` when it was not scanned.
    guards: Option<usize>,
    /// Decoded on first use: a file's definitions are many, and a guard needs none of them.
    functions: std::cell::OnceCell<Vec<(u32, u32, String)>>,
    /// With an active config: whether the file is built at all (its architecture, Kbuild).
    built: std::cell::OnceCell<Verdict>,
}

/// One definition found, with where it lives.
#[derive(Clone, Copy, Debug)]
pub struct Found<'s> {
    /// Segment index.
    pub seg: usize,
    /// The record. A `#define` (kind macro) comes from a posting: its end line and signature
    /// are read from the source on demand ([`Query::macro_shape`]).
    pub def: Def<'s>,
}

impl<'s> Query<'s> {
    /// A query with `page`; an absurd limit is clamped (and reported by [`Query::envelope`]).
    pub fn new(snap: &'s Snapshot, page: Page) -> Query<'s> {
        let (limit, clamped) = match page.limit {
            0 => (DEFAULT_LIMIT, None),
            l if l > MAX_LIMIT => (MAX_LIMIT, Some(l)),
            l => (l, None),
        };
        Query {
            snap,
            page,
            limit,
            clamped,
            memo: memo::Memo::default(),
            changed: RefCell::new(Vec::new()),
        }
    }

    /// The page size in effect.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// A fresh envelope for `tool` carrying paging state and coverage.
    pub fn envelope(&self, tool: &'static str) -> Envelope {
        let mut e = Envelope::new(tool, &self.snap.root.display().to_string());
        e.offset = self.page.offset;
        e.limit = self.limit;
        e.index = Some(Coverage {
            files_scanned: self.snap.manifest.files_scanned,
            files_unindexed: self.snap.manifest.files_unindexed,
        });
        if let Some(asked) = self.clamped {
            e.warn(format!("limit {asked} clamped to the maximum {MAX_LIMIT}"));
        }
        e
    }

    /// An error envelope for `tool` with paging state.
    pub fn envelope_error(&self, tool: &'static str, error: String) -> Envelope {
        let mut e = self.envelope(tool);
        e.error = Some(error);
        e
    }

    /// Cuts `items` to this page, setting `total` and `truncated`.
    pub fn paginate<T>(&self, env: &mut Envelope, items: Vec<T>) -> Vec<T> {
        self.paginate_by(env, items, self.limit)
    }

    /// [`Query::paginate`] with pages of `size` (a tool whose rows are costly pages by fewer);
    /// an offset past the end leaves the page empty and says so in `message`.
    pub fn paginate_by<T>(&self, env: &mut Envelope, items: Vec<T>, size: u64) -> Vec<T> {
        let total = items.len() as u64;
        env.total = total;
        env.limit = size;
        let start = self.page.offset.min(total);
        let end = start.saturating_add(size).min(total);
        env.truncated = end < total;
        if self.page.offset >= total && self.page.offset > 0 && total > 0 {
            env.message.get_or_insert_with(|| {
                format!(
                    "offset {} is past the end: there are {total} results (offsets 0..{})",
                    self.page.offset,
                    total - 1
                )
            });
        }
        items
            .into_iter()
            .skip(start as usize)
            .take((end - start) as usize)
            .collect()
    }

    /// True when file `file` of segment `seg` passes the path prefix filter (its path is not
    /// even looked up without one: refs of a hot name ask for every posting).
    pub fn wanted_file(&self, seg: usize, file: u32) -> bool {
        self.page.path_prefix.is_none() || self.wanted(self.path(seg, file))
    }

    /// True when `path` passes the path prefix filter.
    pub fn wanted(&self, path: &str) -> bool {
        match &self.page.path_prefix {
            Some(p) => path.starts_with(&*knav_index::tree::pathname::normalize(
                p.trim_start_matches("./"),
            )),
            None => true,
        }
    }

    /// True when an indexed file's path starts with the path prefix asked, or none is asked
    /// (`no/such/` matches nothing: an answer says so rather than "0 definitions").
    pub fn prefix_matches(&self) -> bool {
        let Some(p) = &self.page.path_prefix else {
            return true;
        };
        let p = knav_index::tree::pathname::normalize(p.trim_start_matches("./"));
        self.snap.segments.iter().any(|seg| {
            // Paths are sorted: the first at or after the prefix starts with it, or none does.
            let (mut lo, mut hi) = (0, seg.file_count());
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                if seg.file_path(mid) < &*p {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            lo < seg.file_count() && seg.file_path(lo).starts_with(&*p)
        })
    }

    /// The definitions of `name` in live files, ranked: ctags's records and `#define`s, in
    /// [`rank`]'s order (the kernel before its copies, bodies
    /// before `#define`s before declarations), then a definition only its own file sees (a
    /// `static` function, a `#define` of a `.c` file) after those other files see, a `#define`
    /// of the kernel's shared headers (`include/`, an architecture's `include/`) before other
    /// headers' (`ARRAY_SIZE` is include/linux/array_size.h's before crypto/jitterentropy.c's
    /// own and a BPF program's), generic code before an architecture's, then path order (a
    /// function keeps it: a header's `static inline` stub is the `#else` of the real one).
    pub fn definitions<'a>(&self, name: &'a str) -> Vec<Found<'a>>
    where
        's: 'a,
    {
        self.definitions_visiting(name, |_, _| {})
    }

    /// [`Query::definitions`], showing `visit` what the name's postings hold on the way: one
    /// walk of a hot name's postings where a caller also counts them, or none where the
    /// segment stored their [`NameStats`] at index time.
    pub fn definitions_visiting<'a>(
        &self,
        name: &'a str,
        mut visit: impl FnMut(usize, Visit<'_>),
    ) -> Vec<Found<'a>>
    where
        's: 'a,
    {
        let mut out = Vec::new();
        for (s, seg) in self.snap.segments.iter().enumerate() {
            let Some(entry) = seg.lookup(name.as_bytes()) else {
                continue;
            };
            let mut seg_defs = Vec::new();
            for &off in &entry.defs {
                let def = seg.def_at(off);
                if self.snap.is_live(s, def.file) {
                    if def.kind != Kind::Entry {
                        seg_defs.push((def.file, def.line));
                    }
                    out.push(Found { seg: s, def });
                }
            }
            let macro_def = |file: u32, line: u32| Found {
                seg: s,
                def: Def {
                    file,
                    name,
                    line,
                    end_line: None,
                    kind: Kind::Macro,
                    file_local: seg.file_path(file).ends_with(".c"),
                    typeref: None,
                    scope: None,
                    signature: None,
                    via: None,
                },
            };
            if let Some(stats) = &entry.stats {
                out.extend(
                    stats
                        .macro_defs
                        .iter()
                        .filter(|&&(f, _)| self.snap.is_live(s, f))
                        .map(|&(f, l)| macro_def(f, l)),
                );
                visit(s, Visit::Stats(entry.occurrences, stats));
                continue;
            }
            let all_live = self.snap.all_live(s);
            seg_defs.sort_unstable();
            let mut def_lines = DefLines::new(&seg_defs);
            for p in Postings::new(entry.postings) {
                if !all_live && !self.snap.is_live(s, p.file) {
                    continue;
                }
                let at_def = def_lines.contains(p.file, p.line);
                visit(s, Visit::Posting(&p, at_def));
                if p.role == Role::MacroDef {
                    out.push(macro_def(p.file, p.line));
                }
            }
        }
        if out.len() > 1 {
            out.sort_by_cached_key(|f| {
                let path = self.snap.segments[f.seg].file_path(f.def.file);
                let (copies, decl, arch) = rank(f.def.kind, path);
                (
                    // A member named like a function is another entity: after the function's
                    // every definition (`kmalloc`'s bcachefs flag after tools/' copies).
                    decl == 3,
                    copies,
                    self.unbuilt(path),
                    // User-mode Linux's copies of kernel names after the kernel's own, whatever
                    // their kind (printk's #define before arch/um's static inline).
                    path.starts_with(UML),
                    // A body a common build leaves out still comes before a declaration of it:
                    // rare only orders bodies among themselves (ath9k_hw_deinit's hw.c, built
                    // by a selected symbol, before its prototype in hw.h).
                    decl,
                    self.rare(path),
                    only_its_file(&f.def, path),
                    f.def.kind == Kind::Macro && !structs::global_for(path, ""),
                    arch,
                    path.to_string(),
                    f.def.line,
                )
            });
        }
        out
    }

    /// True when a file is built only in uncommon configurations, so that without a config a
    /// name's usual definition comes first: User-mode Linux's `arch/um` (which carries its own
    /// copies of kernel names, `printk` among them), and generic C files Kbuild builds only when
    /// a symbol is *not* set (not built with every symbol `y`: `mm/nommu.c`, which `mmu-y :=
    /// nommu.o` names until `mmu-$(CONFIG_MMU) :=` replaces it).
    pub fn rare(&self, path: &str) -> bool {
        if path.starts_with(UML) {
            return true;
        }
        let Some(build) = &self.snap.build else {
            return false;
        };
        // Architectures' own choices (`ifeq ($(CONFIG_X86_32),y) … else …`) are left alone.
        if path.starts_with("arch/") || !(path.ends_with(".c") || path.ends_with(".S")) {
            return false;
        }
        if let Some(&known) = self.memo.rare.borrow().get(path) {
            return known;
        }
        static ALL_YES: std::sync::LazyLock<knav_kconfig::Config> =
            std::sync::LazyLock::new(knav_kconfig::Config::all_yes);
        static ALL_NO: std::sync::LazyLock<Option<knav_kconfig::Config>> =
            std::sync::LazyLock::new(|| knav_kconfig::Config::parse("").ok());
        use knav_kconfig::kbuild::Decision;
        let rare =
            match build.decide_file(path, &ALL_YES, &mut self.memo.all_yes_atoms.borrow_mut()) {
                Decision::Hidden(_) => true,
                // Built by a symbol that is off in common builds: `obj-$(CONFIG_TINY_RCU) +=
                // tiny.o`, whose Kconfig entry is `default y if !PREEMPT_RCU && !SMP`.
                _ => ALL_NO.as_ref().is_some_and(|none| {
                    match build.decide_file(path, none, &mut self.memo.all_no_atoms.borrow_mut()) {
                        Decision::Hidden(reason) => {
                            let symbols = config_symbols(&reason);
                            !symbols.is_empty()
                                && symbols.iter().all(|s| {
                                    let entries = build.entries(s);
                                    !entries.is_empty()
                                        && entries.iter().all(|e| off_in_common_builds(&e.entry))
                                })
                        }
                        _ => false,
                    }
                }),
            };
        self.memo.rare.borrow_mut().insert(path.to_string(), rare);
        rare
    }

    /// The active configuration's architecture (`x86` for Debian's amd64 config), if any.
    pub fn config_arch(&self) -> Option<&'static str> {
        let config = self.page.active.as_deref()?;
        *self.memo.arch.get_or_init(|| config.arch())
    }

    /// True when the active configuration does not build the file at `path` at all (another
    /// architecture's `arch/`, a C file Kbuild leaves out); false without one. Definitions
    /// there are ranked after those it may build, wherever one is chosen.
    pub fn unbuilt(&self, path: &str) -> bool {
        self.page
            .active
            .as_deref()
            .is_some_and(|c| matches!(self.file_verdict(path, c), Verdict::Hidden(_)))
    }

    /// Every live posting of `name`, as `(segment, posting)`, in segment then file order.
    pub fn postings(&self, name: &str) -> Vec<(usize, Posting)> {
        self.postings_iter(name).collect()
    }

    /// [`Query::postings`] without collecting them: a hot name has hundreds of thousands.
    pub fn postings_iter<'n>(
        &'n self,
        name: &'n str,
    ) -> impl Iterator<Item = (usize, Posting)> + 'n {
        self.snap
            .segments
            .iter()
            .enumerate()
            .filter_map(move |(s, seg)| seg.lookup(name.as_bytes()).map(|e| (s, e)))
            .flat_map(move |(s, entry)| {
                Postings::new(entry.postings)
                    .filter(move |p| self.snap.is_live(s, p.file))
                    .map(move |p| (s, p))
            })
    }

    /// The path of a file.
    pub fn path(&self, seg: usize, file: u32) -> &'s str {
        self.snap.segments[seg].file_path(file)
    }

    /// File `file` of segment `seg` at `path` as a file search lists it.
    pub fn file_hit(&self, path: &str, seg: usize, file: u32) -> crate::envelope::FileHit {
        let rec = self.snap.segments[seg].file(file);
        crate::envelope::FileHit {
            path: path.to_string(),
            lines: rec.lines,
            definitions: rec.defs_count,
        }
    }

    /// The text of a live file, read once per query.
    pub fn source(&self, path: &str) -> Option<std::rc::Rc<source::SourceText>> {
        if let Some(s) = self.memo.sources.borrow().get(path) {
            return s.clone();
        }
        let text = match source::SourceText::read(&self.snap.root, path) {
            Ok(t) => Some(std::rc::Rc::new(t)),
            Err(knav_index::tree::beneath::Unread::Changed(what)) => {
                self.changed.borrow_mut().push((path.to_string(), what));
                None
            }
            Err(knav_index::tree::beneath::Unread::Io(_)) => None,
        };
        self.memo
            .sources
            .borrow_mut()
            .insert(path.to_string(), text.clone());
        text
    }

    /// Drops the text of `path` that [`Query::source`] keeps: a tool reading many files once
    /// each (review_diff's up to 10,000) does not hold them all until it answers.
    pub fn forget_source(&self, path: &str) {
        self.memo.sources.borrow_mut().remove(path);
    }

    /// Text holding lines `from..=to` of file `file` of segment `seg` (or as many as it has):
    /// the whole file when it was read already; else a window read from the line mark before
    /// `from` (a snippet of line 4,800 should not read 200 KB); the whole file when it no
    /// longer matches its record or its rows need many windows.
    pub fn text_at(
        &self,
        seg: usize,
        file: u32,
        from: u32,
        to: u32,
    ) -> Option<std::rc::Rc<source::SourceText>> {
        /// Windows read from one file before it is read whole instead.
        const MAX_WINDOWS: u32 = 4;
        let path = self.path(seg, file);
        if let Some(s) = self.memo.sources.borrow().get(path) {
            return s.clone();
        }
        let read = match self.memo.windows.borrow().get(&(seg, file)) {
            Some((w, _)) if w.covers(from, to) => return Some(w.clone()),
            Some((_, n)) => *n,
            None => 0,
        };
        if read >= MAX_WINDOWS {
            return self.source(path);
        }
        let hint = self.snap.segments[seg].line_hint(file, from);
        let root = &self.snap.root;
        match source::SourceText::read_window(root, path, hint, from, to.saturating_sub(from)) {
            Some(w) => {
                let w = std::rc::Rc::new(w);
                self.memo
                    .windows
                    .borrow_mut()
                    .insert((seg, file), (w.clone(), read + 1));
                Some(w)
            }
            None => self.source(path),
        }
    }

    /// Line `line` of file `file` of segment `seg`, cut for display; empty when unreadable.
    pub fn snippet_at(&self, seg: usize, file: u32, line: u32) -> String {
        source::snippet(self.text_at(seg, file, line, line).as_deref(), line)
    }

    /// The 1-based column of the `nth` (0-based) occurrence of `name` on line `line` of file
    /// `file` of segment `seg`.
    pub fn column_at(&self, seg: usize, file: u32, line: u32, name: &str, nth: usize) -> u32 {
        let src = self.text_at(seg, file, line, line);
        let Some(l) = src.as_deref().and_then(|s| s.line(line)) else {
            return 1;
        };
        if l.len() <= LONG_LINE {
            return source::column(src.as_deref(), line, name, nth);
        }
        if nth == 0 {
            // A definition's name: read up to it, not the whole line.
            return span::find_name(l, 0, name.as_bytes()).map_or(1, |c| c as u32 + 1);
        }
        // A long line is scanned once for all the rows on it (a generated file's one line can
        // hold thousands of them).
        let mut cache = self.memo.long_line.borrow_mut();
        if cache
            .as_ref()
            .is_none_or(|(at, _)| *at != (seg, file, line))
        {
            let mut names = LineNames::new();
            for o in knav_c::scan::scan(l).occurrences {
                let w = &l[o.start as usize..o.start as usize + o.len as usize];
                names.entry(w.into()).or_default().push(o.start);
            }
            *cache = Some(((seg, file, line), names));
        }
        cache
            .as_ref()
            .and_then(|(_, names)| names.get(name.as_bytes())?.get(nth).copied())
            .map_or(1, |c| c + 1)
    }

    /// Line `line` of a file cut for display, from a little before byte column `col` when the
    /// cut would leave it out (a call deep into a long line is shown, not the line's start).
    pub fn snippet_near(&self, seg: usize, file: u32, line: u32, col: u32) -> String {
        let src = self.text_at(seg, file, line, line);
        let Some(l) = src.as_deref().and_then(|s| s.line(line)) else {
            return String::new();
        };
        source::cut_near(l, col)
    }

    /// The source line `line` of `path`, cut for display; empty when unreadable.
    pub fn snippet(&self, path: &str, line: u32) -> String {
        source::snippet(self.source(path).as_deref(), line)
    }

    /// The guard of `line` in a file; `None` when the file was not scanned.
    pub fn guard(&self, seg: usize, file: u32, line: u32) -> Option<Vec<String>> {
        let facts = self.file_facts(seg, file);
        let at = facts.guards?;
        Some(
            self.snap.segments[seg]
                .guard_at(at, line)
                .into_iter()
                .map(str::to_string)
                .collect(),
        )
    }

    fn file_facts(&self, seg: usize, file: u32) -> std::rc::Rc<FileFacts> {
        if let Some((key, f)) = &*self.memo.last_file.borrow() {
            if *key == (seg, file) {
                return f.clone();
            }
        }
        let found = self.memo.files.borrow().get(&(seg, file)).cloned();
        if let Some(f) = found {
            *self.memo.last_file.borrow_mut() = Some(((seg, file), f.clone()));
            return f;
        }
        let segment = &self.snap.segments[seg];
        let file_guards = segment.file_guards(file);
        let guards = match file_guards.status {
            FileStatus::Indexed | FileStatus::NoDefinitions => Some(file_guards.at),
            _ => None,
        };
        let facts = std::rc::Rc::new(FileFacts {
            guards,
            functions: std::cell::OnceCell::new(),
            built: std::cell::OnceCell::new(),
        });
        self.memo
            .files
            .borrow_mut()
            .insert((seg, file), facts.clone());
        *self.memo.last_file.borrow_mut() = Some(((seg, file), facts.clone()));
        facts
    }

    /// The last line and parameter list of a `#define`, read from the source.
    pub fn macro_shape(&self, f: &Found<'_>) -> (Option<u32>, Option<String>) {
        if f.def.kind != Kind::Macro || f.def.signature.is_some() || f.def.end_line.is_some() {
            return (f.def.end_line, f.def.signature.map(str::to_string));
        }
        // Most `#define`s are one line or a few: a window of the next lines, the whole file
        // when the continuation runs past it.
        let line = f.def.line;
        let Some(src) = self.text_at(f.seg, f.def.file, line, line + 16) else {
            return (None, None);
        };
        let shape = src.macro_shape(line, f.def.name);
        let end = shape.0.unwrap_or(line);
        if src.covers(end + 1, end + 1) {
            return shape;
        }
        match self.source(self.path(f.seg, f.def.file)) {
            Some(src) => src.macro_shape(line, f.def.name),
            None => (None, None),
        }
    }

    /// The 1-based column of the `nth` (0-based) occurrence of `name` on a line.
    pub fn column(&self, path: &str, line: u32, name: &str, nth: usize) -> u32 {
        source::column(self.source(path).as_deref(), line, name, nth)
    }

    /// A record for a definition.
    pub fn def_record(&self, f: &Found<'_>) -> Record {
        let path = self.path(f.seg, f.def.file);
        let col = self.column_at(f.seg, f.def.file, f.def.line, f.def.name, 0);
        let snippet = self.snippet_near(f.seg, f.def.file, f.def.line, col);
        let (_, macro_signature) = self.macro_shape(f);
        Record {
            symbol: f.def.name.to_string(),
            path: path.to_string(),
            line: f.def.line,
            col,
            kind: Some(f.def.kind.name().to_string()),
            typeref: f.def.typeref.map(str::to_string),
            scope: f.def.scope.map(str::to_string),
            signature: macro_signature,
            guard: self.guard(f.seg, f.def.file, f.def.line),
            snippet,
            resolved_via: f.def.via.map(|v| format!("macro:{v}")),
            ..Default::default()
        }
    }

    /// What the active configuration says about `line` of a file; `None` without one.
    pub fn verdict(&self, seg: usize, file: u32, line: u32) -> Option<Verdict> {
        let config = self.page.active.as_deref()?;
        let facts = self.file_facts(seg, file);
        let built = facts
            .built
            .get_or_init(|| self.file_verdict(self.path(seg, file), config));
        if let Verdict::Hidden(_) = built {
            return Some(built.clone());
        }
        let Some(at) = facts.guards else {
            return Some(Verdict::Unknown);
        };
        let mut unknown = *built == Verdict::Unknown;
        for cond in self.snap.segments[seg].guard_at(at, line) {
            let known = self.memo.decided.borrow().get(cond).cloned();
            let (tri, reason) = match known {
                Some(t) => t,
                None => {
                    let t = knav_kconfig::eval(cond, config);
                    let reason = (t == knav_kconfig::Tri::False).then(|| {
                        let symbols: Vec<String> = config_symbols(cond)
                            .into_iter()
                            .map(|s| config.describe(&s))
                            .collect();
                        let why = if symbols.is_empty() {
                            "false".to_string()
                        } else {
                            symbols.join(", ")
                        };
                        std::rc::Rc::from(format!("#if {cond}: {why}"))
                    });
                    self.memo
                        .decided
                        .borrow_mut()
                        .insert(cond.to_string(), (t, reason.clone()));
                    (t, reason)
                }
            };
            match (tri, reason) {
                (knav_kconfig::Tri::Unknown, _) => unknown = true,
                (knav_kconfig::Tri::False, Some(reason)) => return Some(Verdict::Hidden(reason)),
                _ => {}
            }
        }
        Some(if unknown {
            Verdict::Unknown
        } else {
            Verdict::Live
        })
    }

    /// The Kconfig entries defining `symbol` (a `CONFIG_` name) under the path prefix.
    pub fn kconfig_entries(&self, symbol: &str) -> Vec<KconfigEntry> {
        match (&self.snap.build, symbol.starts_with("CONFIG_")) {
            (Some(b), true) => b
                .entries(symbol)
                .into_iter()
                .filter(|e| self.wanted(&e.path))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// Where Kconfig files and Makefiles name `symbol` (a `CONFIG_` name) under the path
    /// prefix, its definitions' lines left out.
    pub fn build_uses(&self, symbol: &str) -> Vec<BuildUse> {
        match (&self.snap.build, symbol.starts_with("CONFIG_")) {
            (Some(b), true) => b
                .uses(symbol)
                .into_iter()
                .filter(|u| self.wanted(&u.path))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// A record for a Kconfig entry: its `config X` line, with the type, prompt and
    /// dependencies in the snippet (`config HIGHMEM: bool "High memory support"; depends on
    /// X86_32`).
    pub fn kconfig_record(&self, k: &KconfigEntry) -> Record {
        let e = &k.entry;
        let name = e.symbol.trim_start_matches("CONFIG_");
        let mut text = format!("{} {name}", e.keyword);
        let signature = match (&e.kind, &e.prompt) {
            (Some(kind), Some(p)) => Some(format!("{kind} \"{p}\"")),
            (Some(kind), None) => Some(kind.clone()),
            (None, Some(p)) => Some(format!("prompt \"{p}\"")),
            (None, None) => None,
        };
        let mut parts: Vec<String> = signature.iter().cloned().collect();
        if !e.depends.is_empty() {
            let d: Vec<String> = if e.depends.len() == 1 {
                e.depends.clone()
            } else {
                e.depends.iter().map(|d| format!("({d})")).collect()
            };
            parts.push(format!("depends on {}", d.join(" && ")));
        }
        parts.extend(e.selects.iter().cloned());
        if !parts.is_empty() {
            text.push_str(": ");
            text.push_str(&parts.join("; "));
        }
        let col = self
            .source(&k.path)
            .and_then(|s| s.line(e.line).map(|l| source::nth_identifier(l, name, 0)))
            .flatten()
            .map_or(1, |c| c as u32 + 1);
        Record {
            symbol: e.symbol.clone(),
            path: k.path.clone(),
            line: e.line,
            col,
            kind: Some(e.keyword.clone()),
            signature,
            snippet: source::cut(text.as_bytes()),
            resolved_via: Some("kconfig".into()),
            ..Default::default()
        }
    }

    /// [`Query::by_config`] for Kconfig entries: only their file (an architecture's Kconfig)
    /// can be out.
    pub fn kconfig_by_config(
        &self,
        entries: Vec<KconfigEntry>,
    ) -> (Vec<(KconfigEntry, Option<bool>)>, Vec<Hidden>) {
        let mut kept = Vec::with_capacity(entries.len());
        let mut hidden = Vec::new();
        for k in entries {
            match self
                .page
                .active
                .as_deref()
                .map(|c| self.file_verdict(&k.path, c))
            {
                Some(Verdict::Hidden(reason)) => hidden.push(Hidden {
                    path: k.path.clone(),
                    line: k.entry.line,
                    reason: reason.to_string(),
                }),
                Some(Verdict::Live) => kept.push((k, Some(true))),
                _ => kept.push((k, None)),
            }
        }
        (kept, hidden)
    }

    /// Whether `config` builds the file at `path` at all: only the configured architecture's
    /// `arch/` tree is; a C or assembly file is when Kbuild's Makefiles say so (a header is
    /// decided by its guards alone). `Live` means "no objection": the lines' guards decide.
    pub fn file_verdict(&self, path: &str, config: &knav_kconfig::Config) -> Verdict {
        let arch = *self.memo.arch.get_or_init(|| config.arch());
        if let (Some(arch), Some(rest)) = (arch, path.strip_prefix("arch/")) {
            if let Some((dir, _)) = rest.split_once('/') {
                if dir != arch {
                    return Verdict::Hidden(
                        format!("arch/{dir} is not built: the config's architecture is {arch}")
                            .into(),
                    );
                }
            }
        }
        let compiled = path.ends_with(".c") || path.ends_with(".S");
        match (&self.snap.build, compiled) {
            (Some(build), true) => {
                match build.decide_file(path, config, &mut self.memo.kbuild_atoms.borrow_mut()) {
                    knav_kconfig::kbuild::Decision::Live => Verdict::Live,
                    knav_kconfig::kbuild::Decision::Unknown => Verdict::Unknown,
                    knav_kconfig::kbuild::Decision::Hidden(r) => Verdict::Hidden(r.into()),
                }
            }
            _ => Verdict::Live,
        }
    }

    /// Splits `defs` by the active configuration: the ones kept with their `active` value
    /// (`Some(true)` decided, `None` undecided; all `None` without a config), and the hidden
    /// ones with their reasons.
    pub fn by_config<'a>(
        &self,
        defs: Vec<Found<'a>>,
    ) -> (Vec<(Found<'a>, Option<bool>)>, Vec<Hidden>) {
        let mut kept = Vec::with_capacity(defs.len());
        let mut hidden = Vec::new();
        for f in defs {
            match self.verdict(f.seg, f.def.file, f.def.line) {
                None | Some(Verdict::Unknown) => kept.push((f, None)),
                Some(Verdict::Live) => kept.push((f, Some(true))),
                Some(Verdict::Hidden(reason)) => hidden.push(Hidden {
                    path: self.path(f.seg, f.def.file).to_string(),
                    line: f.def.line,
                    reason: reason.to_string(),
                }),
            }
        }
        (kept, hidden)
    }

    /// The function enclosing `line` of a file, from ctags's line ranges.
    pub fn enclosing_function(&self, seg: usize, file: u32, line: u32) -> Option<String> {
        let facts = self.file_facts(seg, file);
        facts
            .functions
            .get_or_init(|| {
                self.snap.segments[seg]
                    .file_defs(file)
                    .iter()
                    .filter(|d| d.kind == Kind::Function)
                    .filter_map(|d| Some((d.line, d.end_line?, d.name.to_string())))
                    .collect()
            })
            .iter()
            .filter(|(start, end, _)| *start <= line && line <= *end)
            .min_by_key(|(start, _, _)| line - start)
            .map(|(_, _, name)| name.clone())
    }
}

/// Orders `items` by `key` as far as the pages up to the one `q` asks for: a search may match
/// tens of thousands, and only the first pages are read.
pub fn order_pages<T, K: Ord>(q: &Query<'_>, items: &mut [T], key: impl Fn(&T) -> K) {
    let wanted = q
        .page
        .offset
        .saturating_add(q.limit())
        .min(items.len() as u64) as usize;
    if wanted < items.len() {
        items.select_nth_unstable_by_key(wanted, &key);
    }
    items[..wanted].sort_unstable_by_key(key);
}

/// The role of an occurrence: def and decl come from definitions on the same line.
pub fn role_of(p: &Posting, def_lines: &[(usize, u32, u32, Kind)], seg: usize) -> &'static str {
    if let Some(&(_, _, _, kind)) = def_lines
        .iter()
        .find(|(s, f, l, _)| *s == seg && *f == p.file && *l == p.line)
    {
        return if kind.is_declaration() { "decl" } else { "def" };
    }
    match p.role {
        Role::MacroDef => "def",
        Role::Call => "call",
        Role::Export => "export",
        Role::Ref => "ref",
    }
}

/// `(segment, file, line, kind)` of every definition of `name`, for [`role_of`]. An entry-point
/// mark (`module_init(fn)`) is not a definition: its line stays a reference.
pub fn def_lines(defs: &[Found<'_>]) -> Vec<(usize, u32, u32, Kind)> {
    defs.iter()
        .filter(|f| f.def.kind != Kind::Entry)
        .map(|f| (f.seg, f.def.file, f.def.line, f.def.kind))
        .collect()
}

/// True for a Kconfig entry a build with every visible symbol set leaves off: one that
/// depends on a symbol *not* being set (`depends on !SMP`), or has no prompt and only defaults
/// under such a condition (`TINY_RCU`: `default y if !PREEMPT_RCU && !SMP`).
fn off_in_common_builds(e: &knav_kconfig::kconfig::Entry) -> bool {
    let negated = |cond: &str| {
        cond.split("&&").any(|c| {
            c.trim()
                .strip_prefix('!')
                .is_some_and(|r| !r.starts_with('='))
        })
    };
    if e.depends.iter().any(|d| negated(d)) {
        return true;
    }
    e.prompt.is_none()
        && !e.defaults.is_empty()
        && e.defaults.iter().all(|d| {
            let (value, cond) = d.split_once(" if ").unwrap_or((d, ""));
            value.trim() == "n" || negated(cond)
        })
}

/// The `CONFIG_` names in a condition, in order, once each.
fn config_symbols(cond: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for word in cond.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
        if word.starts_with("CONFIG_") && !out.iter().any(|w| w == word) {
            out.push(word.to_string());
        }
    }
    out
}

/// The standard "not found" error, with near-misses.
pub fn not_found(q: &Query<'_>, tool: &'static str, name: &str) -> Envelope {
    let mut env = q.envelope(tool);
    env.near_misses = nearmiss::near_misses(q, name, 10);
    env.error = Some(format!(
        "no symbol named '{name}' in the index ({})",
        crate::envelope::file_counts(
            q.snap.manifest.files_scanned,
            q.snap.manifest.files_unindexed,
            q.snap.manifest.other_files
        )
    ));
    env.next_tools = vec!["find_references"];
    env
}

/// True when `name` is a plausible C identifier (anything else cannot be in the index).
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 512
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// True for a definition no other file sees: a `static` function or variable, a `#define` of a
/// file that is not a header.
pub(crate) fn only_its_file(def: &Def<'_>, path: &str) -> bool {
    def.file_local || (def.kind == Kind::Macro && !path.ends_with(".h"))
}
