//! A name looked up in the snapshot: its definitions in live files (ranked by
//! [`super::ranking`]), its postings, the Kconfig entries and build-file uses of a `CONFIG_`
//! name, the role of each occurrence, and the answer for a name the index does not hold.

use knav_c::scan::Role;
use knav_ctags::Kind;

use super::Query;
use crate::envelope::Envelope;
use knav_index::buildfiles::{BuildUse, KconfigEntry};
use knav_index::format::Def;
use knav_index::segment::{Posting, Postings};
use knav_index::{DefLines, NameStats};

/// One definition found, with where it lives.
#[derive(Clone, Copy, Debug)]
pub struct Found<'s> {
    /// Segment index.
    pub seg: usize,
    /// The record. A `#define` (kind macro) comes from a posting: its end line and signature
    /// are read from the source on demand ([`Query::macro_shape`]).
    pub def: Def<'s>,
}

/// What [`Query::definitions_visiting`] shows of a name's postings in one segment.
pub enum Visit<'a> {
    /// A live posting, and whether it is on the line of one of the name's ctags definitions.
    Posting(&'a Posting, bool),
    /// The facts stored for a hot name in place of its postings (dead files included), and
    /// its occurrences in the segment.
    Stats(u64, &'a NameStats),
}

impl<'s> Query<'s> {
    /// The definitions of `name` in live files, ranked: ctags's records and `#define`s, in
    /// [`super::rank`]'s order (the kernel before its copies, bodies
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
        self.rank_definitions(&mut out);
        out
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

    /// The Kconfig entries defining `symbol` (a `CONFIG_` name) under the path prefix.
    pub fn kconfig_entries(&self, symbol: &str) -> Vec<KconfigEntry> {
        match (&self.snap.build, symbol.starts_with("CONFIG_")) {
            (Some(b), true) => b
                .entries(symbol)
                .into_iter()
                .filter(|e| self.page.wanted(&e.path))
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
                .filter(|u| self.page.wanted(&u.path))
                .collect(),
            _ => Vec::new(),
        }
    }
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

/// The standard "not found" error, with near-misses.
pub fn not_found(q: &Query<'_>, tool: &'static str, name: &str) -> Envelope {
    let mut env = q.envelope(tool);
    env.near_misses = super::nearmiss::near_misses(q, name, 10);
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
