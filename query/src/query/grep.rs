//! search_text (`knav grep`): the lines of any text file of the tree that match a pattern,
//! exactly as `rg -n` finds them, answered from the text index.
//!
//! The pattern's required trigrams select candidate files (plus those changed since the text
//! index was built, and those it holds no trigrams for); rg's own matcher and searcher confirm
//! them in parallel. Every hit is counted (`total` is exact); only the page's hits are read
//! again for their snippet, column, enclosing definition, guard and context.

use std::collections::{HashMap, HashSet};

use super::verdict::Verdict;
use super::{source, Query};
use crate::envelope::{Context, Enclosing, Envelope, FileGroup, Hit, Results};
use knav_index::text::index::{TextIndex, BINARY};
use knav_index::text::search::Pattern;
use knav_index::Part;

/// Lines of context either side at most.
pub const MAX_CONTEXT: u32 = 10;
/// The longest pattern, in bytes.
pub const MAX_PATTERN: usize = 64 << 10;

/// What search_text lists.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GrepMode {
    /// One row per matching line.
    #[default]
    Lines,
    /// One row per file with a match (`-l`).
    Files,
    /// One row per file with its count of matching lines (`-c`).
    Count,
    /// Every matching line, unpaged: one row per file with all its lines, the files in rg's
    /// `--sort path` order (what the CLI prints as rg's plain output, `path:line:text`).
    Every,
}

/// A search_text question.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GrepAsk {
    /// The pattern and rg's flags.
    pub pattern: Pattern,
    /// Root-relative files or directories to search in (all of the tree when empty).
    pub paths: Vec<String>,
    /// rg globs (`!` to exclude).
    pub globs: Vec<String>,
    /// Only hits inside the definitions of this symbol.
    pub within: Option<String>,
    /// Lines of context either side (0..=10).
    pub context: u32,
    /// Lines, files or counts.
    pub mode: GrepMode,
    /// At most this many matching lines of each file (rg's `-m`).
    pub max_count: Option<u64>,
}

/// The tool this module answers (its MCP name, and `Ask::tool`'s).
pub const TOOL: &str = "search_text";

/// Which files a search covers: paths, globs and the path prefix.
struct Scope {
    paths: Vec<String>,
    globs: Option<ignore::overrides::Override>,
    prefix: Option<String>,
    within: Option<HashMap<String, Vec<(u32, u32)>>>,
}

impl Scope {
    fn is_filtered(&self) -> bool {
        !self.paths.is_empty()
            || self.globs.is_some()
            || self.prefix.is_some()
            || self.within.is_some()
    }

    fn holds(&self, path: &str) -> bool {
        if let Some(p) = &self.prefix {
            if !path.starts_with(p.as_str()) {
                return false;
            }
        }
        if !self.paths.is_empty()
            && !self.paths.iter().any(|p| {
                p.is_empty()
                    || path == p
                    || (path.starts_with(p.as_str()) && path.as_bytes().get(p.len()) == Some(&b'/'))
            })
        {
            return false;
        }
        if let Some(w) = &self.within {
            if !w.contains_key(path) {
                return false;
            }
        }
        if let Some(g) = &self.globs {
            // rg does not enter a directory a glob excludes.
            let mut at = 0;
            while let Some(k) = path[at..].find('/') {
                if g.matched(&path[..at + k], true).is_ignore() {
                    return false;
                }
                at += k + 1;
            }
            if g.matched(path, false).is_ignore() {
                return false;
            }
        }
        true
    }
}

/// A path argument made root-relative: `./fs/`, `fs` and `ROOT/fs` are `fs`; `.` is the root.
fn relative(root: &str, arg: &str) -> Result<String, String> {
    let rel = match arg.strip_prefix(root) {
        Some(r) if r.is_empty() || r.starts_with('/') => r,
        _ if arg.starts_with('/') => {
            return Err(format!(
                "{} is outside the root {root}; give a path relative to the root",
                crate::envelope::quote(arg)
            ))
        }
        _ => arg,
    };
    let mut parts = Vec::new();
    for c in rel.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                return Err(format!(
                    "{} leaves the root; give a path inside it",
                    crate::envelope::quote(arg)
                ))
            }
            c => parts.push(c),
        }
    }
    Ok(parts.join("/"))
}

/// A file to confirm.
struct Candidate<'a> {
    path: &'a str,
    /// The index found it free of NUL bytes (base files only: what changed since is scanned
    /// for one).
    text_known: bool,
    /// Its size when indexed.
    size: u64,
    /// The blocks to search (`start, end, first line`); empty: the whole file.
    blocks: Vec<(u64, u64, u32)>,
}

/// Answers search_text.
pub fn search_text(q: &Query<'_>, ask: &GrepAsk) -> Envelope {
    match search(q, ask) {
        Ok(env) => env,
        Err(e) => {
            let mut env = q.envelope_error(TOOL, e);
            env.next_tools = vec![TOOL];
            env
        }
    }
}

/// The answer to `ask`, or why there is none.
fn search(q: &Query<'_>, ask: &GrepAsk) -> Result<Envelope, String> {
    let p = &ask.pattern;
    if p.text.len() > MAX_PATTERN {
        return Err(format!(
            "the pattern is {} bytes; at most {MAX_PATTERN}",
            p.text.len()
        ));
    }
    if ask.context > MAX_CONTEXT {
        return Err(format!(
            "context {} is out of range; use 0 to {MAX_CONTEXT} lines",
            ask.context
        ));
    }
    let matcher = p.matcher().map_err(|e| format!("bad pattern: {e}"))?;
    let root = q.snap.root.display().to_string();
    let text =
        q.snap.manifest.text.as_ref().ok_or_else(|| {
            "this index has no text part; run `knav index` to build it".to_string()
        })?;
    let idx = TextIndex::open(&q.snap.index_dir.join(&text.dir))?;
    // A small part is checksummed at every open, as the other parts are.
    if knav_index::checksum_at_open(idx.bytes()) {
        TextIndex::verify_files(&q.snap.index_dir, text, Some(&idx))
            .map_err(|e| e.rebuild().to_string())?;
    }
    let scope = scope(q, ask, &root)?;
    // The candidates: what the trigrams select, less what changed since, plus what changed
    // and what holds no trigrams.
    let need = knav_index::text::plan::parse(&p.text, p.fixed, p.ignore_case)
        .map(|hir| knav_index::text::plan::need(&hir))
        .unwrap_or(knav_index::text::plan::Need::All);
    let selected = knav_index::text::plan::files(&need, &idx).map_err(|e| {
        format!("the text index is damaged ({e}); run `knav index --full` to rebuild it")
    })?;
    let stale: HashSet<&str> = text
        .dirty
        .iter()
        .chain(&text.deleted)
        .map(String::as_str)
        .collect();
    let from = Searched {
        idx: &idx,
        text,
        scope: &scope,
        stale: &stale,
    };
    let candidates = from.candidates(selected.as_deref());
    // What the search covers, for the summary.
    let (searched, binary) = from.covered();
    // A prefix no file of the tree starts with names nothing, as a missing path does.
    if let Some(p) = scope.prefix.as_deref().filter(|p| !p.is_empty()) {
        if searched == 0 && q.snap.root.join(p).symlink_metadata().is_err() {
            return Err(format!(
                "path prefix {}: no file or directory under the root {root} starts with it",
                crate::envelope::quote(p)
            ));
        }
    }
    let (found, unreadable) = confirm(q, &candidates, &matcher);
    // Keep what `within` and the active config keep.
    let mut env = q.envelope(TOOL);
    if let Some(first) = unreadable.first() {
        // rg says each and exits 2 even with hits elsewhere; so does search_text.
        env.error = Some(format!(
            "{} files could not be read (first: {}); their lines are not searched",
            unreadable.len(),
            crate::envelope::quote(first)
        ));
    }
    let mut hits = kept_hits(q, &mut env, &scope, &candidates, found, ask.max_count);
    match ask.mode {
        GrepMode::Every => hits.sort_by(|a, b| rg_path_order(a.0, b.0).then(a.1.cmp(&b.1))),
        // Translations repeat what the English text says: after the rest.
        _ => hits.sort_by_key(|h| is_translation(h.0)),
    }
    let mut files_with_hits = 0u64;
    for (k, h) in hits.iter().enumerate() {
        if k == 0 || hits[k - 1].0 != h.0 {
            files_with_hits += 1;
        }
    }
    env.search = Some(crate::envelope::SearchSummary {
        pattern: p.text.clone(),
        mode: match ask.mode {
            GrepMode::Lines => "lines",
            GrepMode::Files => "files",
            GrepMode::Count => "count",
            GrepMode::Every => "every",
        },
        hits: hits.len() as u64,
        files_with_hits,
        files_searched: searched,
        files_read: candidates.len() as u64 - unreadable.len() as u64,
        files_binary: binary,
    });
    env.next_tools = vec!["get_symbol_body", "find_references"];
    if ask.mode == GrepMode::Every {
        env.total = hits.len() as u64;
        env.limit = env.total;
        env.results = Some(Results::Groups(every_line(&hits)));
        return Ok(env);
    }
    if ask.mode != GrepMode::Lines {
        let page = q.paginate(&mut env, file_groups(&hits));
        env.results = Some(Results::Groups(page));
        return Ok(env);
    }
    let page = q.paginate(&mut env, hits);
    env.results = Some(Results::Hits(hit_records(q, page, &matcher, ask.context)));
    if env.total == 0 && env.message.is_none() {
        env.message = Some(format!(
            "no line matches {} in {searched} files",
            crate::envelope::quote(&p.text)
        ));
    }
    Ok(env)
}

/// A hit kept: its path, line and whether the active configuration builds it (`None`: no
/// active configuration, or unknown).
type KeptHit<'a> = (&'a str, u32, Option<bool>);

/// What a search looks through: the text part, its index, the scope asked for and the files
/// changed or deleted since the index was built.
struct Searched<'a> {
    idx: &'a TextIndex,
    text: &'a knav_index::text::TextRef,
    scope: &'a Scope,
    stale: &'a HashSet<&'a str>,
}

impl<'a> Searched<'a> {
    /// The files to confirm, sorted by path: those of the index's documents `selected` (every
    /// file when `None`) in the scope and not stale, in the blocks selected, and (whole) those
    /// the index holds no trigrams for and those changed since.
    fn candidates(&self, selected: Option<&[u32]>) -> Vec<Candidate<'a>> {
        let (idx, text, scope, stale) = (self.idx, self.text, self.scope, self.stale);
        let mut candidates: Vec<Candidate<'_>> = Vec::new();
        let mut push = |id: u32, blocks: Vec<(u64, u64, u32)>| {
            let e = idx.entry(id);
            if !stale.contains(e.path) && scope.holds(e.path) {
                candidates.push(Candidate {
                    path: e.path,
                    text_known: e.flag == knav_index::text::index::INDEXED,
                    size: e.size,
                    blocks,
                });
            }
        };
        match selected {
            Some(docs) => {
                // Documents to files: a file indexed in blocks is read in the blocks selected.
                let mut at = 0;
                while at < docs.len() {
                    let id = idx.file_of(docs[at]);
                    let all = idx.docs(id);
                    let mut blocks = Vec::new();
                    while at < docs.len() && all.contains(&docs[at]) {
                        let d = docs[at];
                        let end = if d + 1 < all.end {
                            u64::from(idx.block(d + 1).offset)
                        } else {
                            idx.entry(id).size
                        };
                        let b = idx.block(d);
                        blocks.push((u64::from(b.offset), end, b.line));
                        at += 1;
                    }
                    if all.len() == 1 {
                        blocks.clear();
                    }
                    push(id, blocks);
                }
            }
            None => (0..idx.len() as u32).for_each(|id| push(id, Vec::new())),
        }
        let whole = |path| Candidate {
            path,
            text_known: false,
            size: 0,
            blocks: Vec::new(),
        };
        if selected.is_some() {
            candidates.extend(
                text.unindexed
                    .iter()
                    .map(String::as_str)
                    .filter(|p| !stale.contains(p) && scope.holds(p))
                    .map(whole),
            );
        }
        candidates.extend(
            text.dirty
                .iter()
                .map(String::as_str)
                .filter(|p| scope.holds(p))
                .map(whole),
        );
        candidates.sort_unstable_by(|a, b| a.path.cmp(b.path));
        candidates.dedup_by(|a, b| a.path == b.path);
        candidates
    }

    /// The files the search covers and how many of them are binary.
    fn covered(&self) -> (u64, u64) {
        let (idx, text, scope, stale) = (self.idx, self.text, self.scope, self.stale);
        if scope.is_filtered() {
            let mut n = 0u64;
            let mut b = 0u64;
            for id in 0..idx.len() as u32 {
                let e = idx.entry(id);
                if !stale.contains(e.path) && scope.holds(e.path) {
                    n += 1;
                    b += (e.flag == BINARY) as u64;
                }
            }
            n += text.dirty.iter().filter(|p| scope.holds(p)).count() as u64;
            (n, b)
        } else {
            (text.files, text.binary)
        }
    }
}

/// The matching lines of each candidate with a match, confirmed in parallel by rg's matcher:
/// `(index in candidates, lines)`; and the candidates that exist but could not be read.
fn confirm(
    q: &Query<'_>,
    candidates: &[Candidate<'_>],
    matcher: &grep_regex::RegexMatcher,
) -> (Vec<(usize, Vec<u32>)>, Vec<String>) {
    use rayon::prelude::*;
    let opener = knav_index::text::search::Opener::new(&q.snap.root);
    let read: Vec<(usize, Option<Vec<u32>>)> = candidates
        .par_iter()
        .enumerate()
        .map_init(
            || (knav_index::text::search::searcher(), Vec::new()),
            |(s, buf), (i, c)| {
                let lines = if c.blocks.is_empty() {
                    opener.read_with(c.path, buf).map(|b| {
                        knav_index::text::search::matching_lines(s, matcher, &b, c.text_known)
                    })
                } else {
                    opener.matching_lines_in(c.path, c.size, &c.blocks, s, matcher, buf)
                };
                (i, lines)
            },
        )
        .filter(|(_, l)| l.as_ref().is_none_or(|l| !l.is_empty()))
        .collect();
    let (mut found, mut unreadable) = (Vec::new(), Vec::new());
    for (i, lines) in read {
        let path = candidates[i].path;
        match lines {
            Some(l) => found.push((i, l)),
            // Gone since it was indexed: not searched, as rg would not see it. There and
            // unreadable: said.
            None if q
                .snap
                .root
                .join(knav_index::tree::pathname::to_path(path))
                .symlink_metadata()
                .is_ok() =>
            {
                unreadable.push(path.to_string())
            }
            None => {}
        }
    }
    (found, unreadable)
}

/// The lines `found` in `candidates` that `within` and the active configuration keep; those
/// the configuration hides are listed in `env`.
fn kept_hits<'a>(
    q: &Query<'_>,
    env: &mut Envelope,
    scope: &Scope,
    candidates: &[Candidate<'a>],
    found: Vec<(usize, Vec<u32>)>,
    max_count: Option<u64>,
) -> Vec<KeptHit<'a>> {
    let mut hidden = 0usize;
    let mut hits: Vec<KeptHit<'a>> = Vec::new();
    for (i, lines) in found {
        let path = candidates[i].path;
        let ranges = scope.within.as_ref().and_then(|w| w.get(path));
        let at = q.snap.find_file(path);
        let mut kept = 0u64;
        for line in lines {
            if max_count.is_some_and(|m| kept >= m) {
                break;
            }
            if let Some(r) = ranges {
                if !r.iter().any(|&(a, b)| a <= line && line <= b) {
                    continue;
                }
            }
            let verdict = q.page.active.as_deref().map(|c| match at {
                Some((s, f)) => q.verdict(s, f, line).unwrap_or(Verdict::Unknown),
                None => q.file_verdict(path, c),
            });
            let active = match verdict {
                Some(Verdict::Hidden(reason)) => {
                    hidden += 1;
                    env.list_hidden(path, line, &reason);
                    continue;
                }
                Some(Verdict::Live) => Some(true),
                _ => None,
            };
            hits.push((path, line, active));
            kept += 1;
        }
    }
    if hidden > env.hidden.len() {
        env.warn(format!(
            "{hidden} hits hidden by the active config; the first {} are listed",
            env.hidden.len()
        ));
    }
    hits
}

/// Whether `path` is under Documentation/translations/.
fn is_translation(path: &str) -> bool {
    path.starts_with("Documentation/translations/")
}

/// rg's `--sort path` order: component by component (`fs/a/x` before `fs/a-b/x`), as a walk
/// that sorts each directory's entries by name visits them.
pub fn rg_path_order(a: &str, b: &str) -> std::cmp::Ordering {
    a.split('/').cmp(b.split('/'))
}

/// One row per file of `hits` (in their order) with every line.
fn every_line(hits: &[KeptHit<'_>]) -> Vec<FileGroup> {
    let mut groups = file_groups(hits);
    let mut at = 0;
    for g in &mut groups {
        let n = g.count as usize;
        g.lines = hits[at..at + n].iter().map(|h| h.1).collect();
        at += n;
    }
    groups
}

/// One row per file of `hits` (in path order), with its count of matching lines.
fn file_groups(hits: &[KeptHit<'_>]) -> Vec<FileGroup> {
    let mut groups: Vec<FileGroup> = Vec::new();
    for (path, _, _) in hits {
        match groups.last_mut() {
            Some(g) if g.path == *path => g.count += 1,
            _ => groups.push(FileGroup {
                path: path.to_string(),
                count: 1,
                lines: Vec::new(),
            }),
        }
    }
    groups
}

/// The records of the hits of a page: each line's column, snippet, enclosing definition,
/// guard and `context` lines either side.
fn hit_records(
    q: &Query<'_>,
    page: Vec<KeptHit<'_>>,
    matcher: &grep_regex::RegexMatcher,
    context: u32,
) -> Vec<Hit> {
    let mut defs = FileDefs::default();
    page.into_iter()
        .map(|(path, line, active)| {
            let src = q.source(path);
            let l = src.as_deref().and_then(|s| s.line(line)).unwrap_or(b"");
            let col = knav_index::text::search::column(matcher, l);
            let at = q.snap.find_file(path);
            let context = (context > 0).then(|| {
                let get = |n: u32| src.as_deref().and_then(|s| s.line(n)).map(source::cut);
                Context {
                    before: (line.saturating_sub(context).max(1)..line)
                        .filter_map(get)
                        .collect(),
                    after: (line + 1..=line + context).map_while(get).collect(),
                }
            });
            Hit {
                path: path.to_string(),
                line,
                col,
                snippet: source::cut_near(l, col),
                enclosing: at.and_then(|(s, f)| defs.enclosing(q, s, f, line)),
                guard: at.and_then(|(s, f)| q.guard(s, f, line)),
                context,
                active: q.page.active.as_ref().map(|_| active),
            }
        })
        .collect()
}

/// The scope of `ask`: its paths, globs, the path prefix and the `within` ranges.
fn scope(q: &Query<'_>, ask: &GrepAsk, root: &str) -> Result<Scope, String> {
    let paths = ask
        .paths
        .iter()
        .map(|a| relative(root, a))
        .collect::<Result<Vec<_>, _>>()?;
    // A path that names nothing is an error, as rg says "No such file or directory".
    for (p, arg) in paths.iter().zip(&ask.paths) {
        if q.snap.root.join(p).symlink_metadata().is_err() {
            return Err(format!(
                "{}: no such file or directory under the root {root}",
                crate::envelope::quote(arg)
            ));
        }
    }
    let globs = if ask.globs.is_empty() {
        None
    } else {
        let mut b = ignore::overrides::OverrideBuilder::new(&q.snap.root);
        for g in &ask.globs {
            b.add(g)
                .map_err(|e| format!("bad glob {}: {e}", crate::envelope::quote(g)))?;
        }
        Some(b.build().map_err(|e| format!("bad glob: {e}"))?)
    };
    let within = match &ask.within {
        None => None,
        Some(symbol) => {
            let defs = q.definitions(symbol);
            if defs.is_empty() {
                return Err(format!(
                    "no symbol named {} in the index for within",
                    crate::envelope::quote(symbol)
                ));
            }
            let mut w: HashMap<String, Vec<(u32, u32)>> = HashMap::new();
            for f in &defs {
                let end = f.def.end_line.or_else(|| q.macro_shape(f).0);
                w.entry(q.path(f.seg, f.def.file).to_string())
                    .or_default()
                    .push((f.def.line, end.unwrap_or(f.def.line)));
            }
            Some(w)
        }
    };
    let prefix = match q.page.path_prefix.as_deref() {
        None => None,
        Some(p) if p.starts_with('/') => Some(relative(root, p)?),
        Some(p) => Some(p.trim_start_matches("./").to_string()),
    };
    Ok(Scope {
        paths,
        globs,
        prefix,
        within,
    })
}

/// A definition spanning lines: first line, last line, name, kind.
type Span = (u32, u32, String, String);

/// Definitions with line ranges of the files of a page, decoded once each.
#[derive(Default)]
struct FileDefs {
    files: HashMap<(usize, u32), Vec<Span>>,
}

impl FileDefs {
    /// The innermost definition of file `f` of segment `s` whose lines hold `line`.
    fn enclosing(&mut self, q: &Query<'_>, s: usize, f: u32, line: u32) -> Option<Enclosing> {
        let defs = self.files.entry((s, f)).or_insert_with(|| {
            q.snap.segments[s]
                .file_defs(f)
                .iter()
                .filter(|d| d.kind != knav_ctags::Kind::Entry)
                .filter_map(|d| {
                    let end = d.end_line.filter(|&e| e > d.line)?;
                    Some((d.line, end, d.name.to_string(), d.kind.name().to_string()))
                })
                .collect()
        });
        let (start, end, name, kind) = defs
            .iter()
            .filter(|(a, b, _, _)| *a <= line && line <= *b)
            .max_by_key(|(a, b, _, _)| (*a, std::cmp::Reverse(*b)))?;
        let signature = q.snippet_at(s, f, *start);
        Some(Enclosing {
            symbol: name.clone(),
            kind: kind.clone(),
            line: *start,
            end_line: *end,
            signature,
        })
    }
}
