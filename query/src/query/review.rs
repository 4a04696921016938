//! review_diff: the definitions a unified diff touches in the indexed tree, each with its
//! guard, its direct callers and the subsystems they are in.
//!
//! Each hunk is placed in the tree's file by its lines, not by its numbers alone: its old side
//! at the line the header gives (the tree before the patch), else its new side there (the
//! tree already has it: `git diff` of a working tree), else the same sides anywhere in the
//! file (a shifted hunk, reported with its offset, as `patch` does without fuzz). A hunk none of
//! whose sides is in the file is reported as not applying, and nothing is guessed for it.
//! Definitions come from the index (ctags's line ranges), `#define`s and Kconfig entries from
//! the lines around the change, and definitions the patch adds (or, on an applied tree,
//! removes) from the lines of the side the tree does not have.
//!
//! The answer is paged by rows in diff order (each hunk, then the definitions it touches
//! first; a file without hunks, or refused, is one row), and always counts the files, hunks
//! and definitions of all pages; guards, callers and subsystems are looked up for the page's
//! definitions only. A file whose path leaves the root is refused alone, with nothing of it
//! read; the diff's size is bounded where it is read ([`crate::diff`]).

use std::cell::OnceCell;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use knav_ctags::Kind;

use super::callers::direct_calls;
use super::lookup::def_lines;
use super::source::SourceText;
use super::Query;
use crate::diff::{DiffError, FilePatch, Hunk, Line};
use crate::envelope::{Envelope, HunkStatus, Results, Review, ReviewFile, Touched};
use crate::maintainers::Maintainers;

/// The tool this module answers (its MCP name, and `Ask::tool`'s).
pub const TOOL: &str = "review_diff";

/// Which side of a hunk the tree holds.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    /// The old one: the patch is not applied.
    Old,
    /// The new one: the patch is applied.
    New,
}

/// One row of the answer: what `limit` and `offset` count.
#[derive(Clone, Copy)]
enum Row {
    /// A file without hunks to show (binary, a rename alone, a path refused), by its index.
    File(usize),
    /// Hunk `.1` of file `.0`.
    Hunk(usize, usize),
    /// A touched definition, by its index in [`Found::list`].
    Definition(usize),
}

/// A touched definition before its guard, callers and subsystems are looked up: only a page's
/// are.
struct Candidate {
    /// The definition, without guard, callers or subsystems yet.
    touched: Touched,
    /// The file and hunk of the review that touch it first.
    at: (usize, usize),
    /// The tree's file in the index (segment, file).
    indexed: Option<(usize, u32)>,
    /// The line of the tree's file its guard is read at.
    tree_line: Option<u32>,
}

/// The definitions the diff touches, in diff order, each once.
#[derive(Default)]
struct Found {
    list: Vec<Candidate>,
    /// Symbol, path and line of each one listed.
    seen: HashSet<(String, String, u32)>,
    /// Symbol and path of each one listed.
    named: HashSet<(String, String)>,
}

/// Where a hunk's definitions are: the tree's path of its file, the file in the index, and
/// the hunk in the review.
struct HunkAt<'h> {
    path: &'h str,
    indexed: Option<(usize, u32)>,
    at: (usize, usize),
    label: String,
}

impl Found {
    /// Lists a touched definition, once per name, file and line.
    fn add(
        &mut self,
        h: &HunkAt<'_>,
        (symbol, kind): (String, &'static str),
        change: &'static str,
        line: u32,
        tree_line: Option<u32>,
    ) {
        if !self.seen.insert((symbol.clone(), h.path.to_string(), line)) {
            return;
        }
        self.named.insert((symbol.clone(), h.path.to_string()));
        self.list.push(Candidate {
            touched: Touched {
                symbol,
                kind,
                change,
                path: h.path.to_string(),
                line,
                hunk: h.label.clone(),
                guard: None,
                callers: None,
                subsystems: Vec::new(),
            },
            at: h.at,
            indexed: h.indexed,
            tree_line,
        });
    }

    /// True when a definition `symbol` of `path` is listed.
    fn has(&self, symbol: &str, path: &str) -> bool {
        self.named.contains(&(symbol.to_string(), path.to_string()))
    }
}

/// Answers review_diff for the unified diff `text`.
pub fn review_diff(q: &Query<'_>, text: &str) -> Envelope {
    let patches =
        match crate::diff::parse(text) {
            Ok(f) if f.is_empty() => return q.envelope_error(
                TOOL,
                "no file in the diff: give a unified diff (git diff, diff -u or a mailed patch)"
                    .into(),
            ),
            Ok(f) => f,
            Err(DiffError::Malformed(e)) => {
                return q.envelope_error(TOOL, format!("{e}; give a unified diff"))
            }
            Err(e @ DiffError::TooLarge(_)) => return q.envelope_error(TOOL, e.to_string()),
        };
    let mut env = q.envelope(TOOL);
    let maintainers = match crate::maintainers::for_root(&q.snap.root) {
        Ok(m) => m,
        Err(e) => {
            env.warn(e);
            None
        }
    };
    let m = maintainers.as_deref();
    let mut found = Found::default();
    let mut files: Vec<ReviewFile> = Vec::new();
    for f in patches.iter().filter(|f| wanted(q, f)) {
        let file = review_file(q, f, m, files.len(), &mut found);
        files.push(file);
    }
    warn_of(&mut env, &files);
    let review = page(q, &mut env, m, files, found);
    env.results = Some(Results::Review(review));
    env.next_tools = vec!["get_symbol_body", "find_callers", "change_impact"];
    env
}

/// True when either path of `f` passes the path prefix filter (a rename out of it too).
fn wanted(q: &Query<'_>, f: &FilePatch<'_>) -> bool {
    match (&f.old_path, &f.new_path) {
        (None, None) => q.page.wanted(""),
        (a, b) => a.iter().chain(b).any(|p| q.page.wanted(p)),
    }
}

/// The warnings of the whole diff: hunks that do not apply, files whose paths leave the root.
fn warn_of(env: &mut Envelope, files: &[ReviewFile]) {
    let hunks: u64 = files.iter().map(|f| f.hunks_total).sum();
    let not_applied = files
        .iter()
        .flat_map(|f| &f.hunks)
        .filter(|h| h.applies == "no")
        .count();
    if not_applied > 0 {
        env.warn(format!(
            "{not_applied} of {hunks} hunks do not apply to the indexed tree: their definitions \
             are not listed"
        ));
    }
    let mut refused = files.iter().filter_map(|f| f.error.as_deref());
    if let Some(first) = refused.next() {
        let more = match refused.count() {
            0 => String::new(),
            n => format!(" (and {n} more files)"),
        };
        env.warn(format!("not reviewed: {first}{more}"));
    }
}

/// The page `limit` and `offset` ask for, of rows in diff order (each hunk followed by the
/// definitions it touches first; a file without hunks, or refused, is one row): its files, each
/// with the page's hunks of it, and its definitions, whose guards, callers and subsystems are
/// looked up now. The totals count every page.
fn page(
    q: &Query<'_>,
    env: &mut Envelope,
    m: Option<&Maintainers>,
    files: Vec<ReviewFile>,
    found: Found,
) -> Review {
    let mut rows = Vec::new();
    let mut defs = found.list.iter().enumerate().peekable();
    for (i, f) in files.iter().enumerate() {
        if f.hunks.is_empty() {
            rows.push(Row::File(i));
        }
        for j in 0..f.hunks.len() {
            rows.push(Row::Hunk(i, j));
            while let Some((k, _)) = defs.next_if(|(_, c)| c.at == (i, j)) {
                rows.push(Row::Definition(k));
            }
        }
    }
    let mut review = Review {
        files_total: files.len() as u64,
        hunks: files.iter().map(|f| f.hunks_total).sum(),
        hunks_not_applied: files
            .iter()
            .flat_map(|f| &f.hunks)
            .filter(|h| h.applies == "no")
            .count() as u64,
        definitions_total: found.list.len() as u64,
        ..Review::default()
    };
    let mut candidates: Vec<Option<Candidate>> = found.list.into_iter().map(Some).collect();
    let mut shown: Option<usize> = None;
    for row in q.paginate(env, rows) {
        let i = match row {
            Row::File(i) | Row::Hunk(i, _) => i,
            Row::Definition(k) => candidates[k].as_ref().map_or(0, |c| c.at.0),
        };
        if shown != Some(i) {
            review.files.push(head(&files[i]));
            shown = Some(i);
        }
        match row {
            Row::File(_) => {}
            Row::Hunk(i, j) => {
                if let Some(f) = review.files.last_mut() {
                    f.hunks.push(files[i].hunks[j].clone());
                }
            }
            Row::Definition(k) => {
                if let Some(c) = candidates[k].take() {
                    review.definitions.push(enrich(q, m, c));
                }
            }
        }
    }
    review
}

/// `f` without its hunks: its entry on a page, to which the page's hunks are added.
fn head(f: &ReviewFile) -> ReviewFile {
    ReviewFile {
        path: f.path.clone(),
        old_path: f.old_path.clone(),
        status: f.status,
        binary: f.binary,
        subsystem: f.subsystem.clone(),
        hunks: Vec::new(),
        hunks_total: f.hunks_total,
        error: f.error.clone(),
    }
}

/// `p`, a path of the diff, as a path under the root: `./` and doubled slashes dropped, an
/// absolute path inside the root made relative. An error says it leaves the root (a `..`
/// component, an absolute path elsewhere) or is empty: knav reads no file for it.
fn under_root(root: Option<&str>, p: &str) -> Result<String, String> {
    let leaves = || {
        format!(
            "{} leaves the root; fix the patch's paths (relative to the tree's root, as git \
             diff writes them)",
            crate::envelope::quote(p)
        )
    };
    let rel = match root.and_then(|r| p.strip_prefix(r)) {
        Some(r) if r.starts_with('/') => r,
        _ if p.starts_with('/') => return Err(leaves()),
        _ => p,
    };
    let mut parts = Vec::new();
    for c in rel.split('/') {
        match c {
            "" | "." => {}
            ".." => return Err(leaves()),
            c => parts.push(c),
        }
    }
    if parts.is_empty() {
        return Err(format!(
            "{} names no file; fix the patch's paths (relative to the tree's root, as git diff \
             writes them)",
            crate::envelope::quote(p)
        ));
    }
    Ok(parts.join("/"))
}

/// `p` as the tree has it (as given, else without its first component: `diff -u
/// linux.orig/…`; as given when the tree has neither), with the tree's text of it.
fn in_tree(q: &Query<'_>, p: String) -> (String, Option<Rc<SourceText>>) {
    if let Some(src) = q.source(&p) {
        return (p, Some(src));
    }
    if let Some((_, rest)) = p.split_once('/') {
        if let Some(src) = q.source(rest) {
            return (rest.to_string(), Some(src));
        }
    }
    (p, None)
}

/// modified, added, deleted or renamed.
fn status_of(old: Option<&str>, new: Option<&str>) -> &'static str {
    match (old, new) {
        (None, _) => "added",
        (_, None) => "deleted",
        // `diff -u old/x new/x` names one file twice.
        (Some(a), Some(b))
            if a != b && a.split_once('/').map(|x| x.1) != b.split_once('/').map(|x| x.1) =>
        {
            "renamed"
        }
        _ => "modified",
    }
}

/// One file of the diff: its entry with every hunk's status, the definitions its hunks touch
/// added to `found` (as file `ix` of the review). A file with a path that leaves the root is
/// refused alone: its entry says why, and nothing of it is read.
fn review_file(
    q: &Query<'_>,
    f: &FilePatch<'_>,
    m: Option<&Maintainers>,
    ix: usize,
    found: &mut Found,
) -> ReviewFile {
    let status = status_of(f.old_path.as_deref(), f.new_path.as_deref());
    let root = q.snap.root.to_str().map(|r| r.trim_end_matches('/'));
    let check = |p: &Option<String>| p.as_deref().map(|p| under_root(root, p)).transpose();
    let mut out = ReviewFile {
        path: f
            .new_path
            .clone()
            .or(f.old_path.clone())
            .unwrap_or_default(),
        old_path: f.old_path.clone().filter(|_| status == "renamed"),
        status,
        binary: f.binary,
        subsystem: None,
        hunks: Vec::new(),
        hunks_total: f.hunks.len() as u64,
        error: None,
    };
    let (old, new) = match (check(&f.old_path), check(&f.new_path)) {
        (Ok(old), Ok(new)) => (old, new),
        (Err(e), _) | (_, Err(e)) => {
            out.error = Some(e);
            return out;
        }
    };
    let old = old.map(|p| in_tree(q, p));
    let new = new.map(|p| in_tree(q, p));
    // The tree's file: the old one (the patch is not applied), else the new one.
    let tree = old
        .iter()
        .chain(&new)
        .find_map(|(p, src)| Some((p.clone(), src.clone()?)));
    let shown = new.as_ref().or(old.as_ref()).map(|(p, _)| p.clone());
    out.path = shown.unwrap_or_default();
    out.old_path = old.map(|(p, _)| p).filter(|_| status == "renamed");
    // Hunks and definitions are the tree's file's: the old path of a rename not applied yet.
    let path = tree.as_ref().map_or(out.path.clone(), |(p, _)| p.clone());
    out.subsystem = m.and_then(|m| m.subsystem(&out.path)).map(str::to_string);
    out.hunks = review_hunks(q, f, (ix, &path), tree.map(|(_, src)| src), found);
    // Each file is read for its own hunks: a diff of 10,000 files must not hold them all.
    q.forget_source(&path);
    q.forget_source(&out.path);
    out
}

/// The status of each hunk of `f`, whose file is number `ix` of the review and `path` in the
/// tree (`src` its text, if the tree has it); the definitions they touch go to `found`.
fn review_hunks(
    q: &Query<'_>,
    f: &FilePatch<'_>,
    (ix, path): (usize, &str),
    src: Option<Rc<SourceText>>,
    found: &mut Found,
) -> Vec<HunkStatus> {
    let indexed = q.snap.find_file(path);
    // Definitions of the tree's file from the index, read once for all its hunks.
    let mut indexed_defs: Vec<(String, Kind, u32, u32)> = Vec::new();
    if let Some((s, id)) = indexed {
        for d in q.snap.segments[s].file_defs(id) {
            if matches!(
                d.kind,
                Kind::Member | Kind::Enumerator | Kind::Local | Kind::Label | Kind::Entry
            ) {
                continue;
            }
            indexed_defs.push((
                d.name.to_string(),
                d.kind,
                d.line,
                d.end_line.unwrap_or(d.line),
            ));
        }
    }
    let lines_at = OnceCell::new();
    let prefer = src
        .as_deref()
        .map_or(Side::Old, |src| preferred_side(src, f));
    let mut out = Vec::with_capacity(f.hunks.len());
    for (j, h) in f.hunks.iter().enumerate() {
        let at = HunkAt {
            path,
            indexed,
            at: (ix, j),
            label: h.label(),
        };
        let mut st = HunkStatus {
            hunk: at.label.clone(),
            applies: "no",
            offset: 0,
            note: None,
        };
        let Some(src) = &src else {
            if f.old_path.is_none() {
                // A new file the tree does not have yet: what it adds is all there is.
                st.applies = "new file";
                for (line, l) in side_lines(h, Side::New) {
                    for def in declared(l, path) {
                        found.add(&at, def, "added", line, None);
                    }
                }
            } else {
                st.note = Some(format!("{path} is not in the tree"));
            }
            out.push(st);
            continue;
        };
        let Some((side, place_at)) = place(src, h, &lines_at, prefer) else {
            st.note = Some(format!(
                "neither side of the hunk is in {path} (near line {})",
                h.old_start
            ));
            out.push(st);
            continue;
        };
        let start = match side {
            Side::Old => h.old_start.max(1),
            Side::New => h.new_start.max(1),
        };
        st.offset = place_at as i64 - start as i64;
        st.applies = match side {
            Side::Old => "yes",
            Side::New => "already applied",
        };
        touched_by(
            src,
            h,
            (side, place_at, st.offset),
            &indexed_defs,
            &at,
            found,
        );
        out.push(st);
    }
    out
}

/// The definitions hunk `h` touches in `src`, where it is at `place` (its tree's side, first
/// line and offset), added to `found`: those of the index and the `#define`s and Kconfig
/// entries whose lines it changes or inserts into, and what the other side's lines define.
fn touched_by(
    src: &SourceText,
    h: &Hunk<'_>,
    (side, at, offset): (Side, u32, i64),
    indexed_defs: &[(String, Kind, u32, u32)],
    hunk: &HunkAt<'_>,
    found: &mut Found,
) {
    let path = hunk.path;
    // Lines of the tree's side the change holds, and where the other side's lines go.
    let mut changed: Vec<u32> = Vec::new();
    let mut points: Vec<u32> = Vec::new();
    let mut other: Vec<(u32, u32, &str)> = Vec::new();
    let (mut tree_ln, mut other_ln) = match side {
        Side::Old => (
            at,
            (h.new_start as i64 + offset).clamp(1, u32::MAX.into()) as u32,
        ),
        Side::New => (
            at,
            (h.old_start as i64 + offset).clamp(1, u32::MAX.into()) as u32,
        ),
    };
    for l in h.lines() {
        match (l, side) {
            (Line::Context(_), _) => {
                tree_ln = tree_ln.saturating_add(1);
                other_ln = other_ln.saturating_add(1);
            }
            (Line::Removed(_), Side::Old) | (Line::Added(_), Side::New) => {
                changed.push(tree_ln);
                tree_ln = tree_ln.saturating_add(1);
            }
            (Line::Added(t), Side::Old) | (Line::Removed(t), Side::New) => {
                points.push(tree_ln);
                other.push((other_ln, tree_ln, t));
                other_ln = other_ln.saturating_add(1);
            }
        }
    }
    let (gone, new) = match side {
        Side::Old => ("removed", "added"),
        Side::New => ("added", "removed"),
    };
    let is_kconfig = path
        .rsplit('/')
        .next()
        .is_some_and(|n| n.starts_with("Kconfig"));
    let mut marks: Vec<u32> = changed.clone();
    marks.extend(points.iter().map(|p| p.saturating_sub(1)));
    let text_defs: Vec<(String, Kind, u32, u32)> = marks
        .iter()
        .filter_map(|&l| enclosing_text_def(src, l, is_kconfig))
        .collect();
    let changed_set: HashSet<u32> = changed.iter().copied().collect();
    for (name, kind, line, end) in indexed_defs.iter().chain(&text_defs) {
        let (line, end) = (*line, *end);
        let hit = changed.iter().any(|&c| line <= c && c <= end)
            || points.iter().any(|&p| line < p && p <= end);
        if !hit {
            continue;
        }
        // All of it changed, and not written again by the other side: gone.
        let rewritten = other
            .iter()
            .any(|(_, _, t)| declared(t, path).iter().any(|(n, _)| n == name));
        let change = if !rewritten && (line..=end).all(|l| changed_set.contains(&l)) {
            gone
        } else {
            "modified"
        };
        let def = (name.clone(), kind_name(*kind, is_kconfig));
        found.add(hunk, def, change, line, Some(line));
    }
    for (line, tree_at, text) in other {
        for (symbol, kind) in declared(text, path) {
            // A changed first line of a definition the tree has is that definition's change.
            if found.has(&symbol, path) {
                continue;
            }
            found.add(hunk, (symbol, kind), new, line, Some(tree_at));
        }
    }
}

fn kind_name(kind: Kind, kconfig: bool) -> &'static str {
    if kconfig {
        "kconfig"
    } else {
        kind.name()
    }
}

/// The `#define` or Kconfig entry holding line `l` of `src`, as `(name, kind, line, end)`.
fn enclosing_text_def(src: &SourceText, l: u32, kconfig: bool) -> Option<(String, Kind, u32, u32)> {
    let text = |n: u32| src.line(n).map(String::from_utf8_lossy);
    if kconfig {
        // Back over the entry's indented attributes and help to its `config NAME` line.
        let mut n = l;
        loop {
            let t = text(n)?;
            if let Some((name, _)) = declared(&t, "Kconfig").into_iter().next() {
                let mut end = n;
                while text(end + 1).is_some_and(|t| t.is_empty() || t.starts_with([' ', '\t'])) {
                    end += 1;
                }
                return Some((name, Kind::Other, n, end));
            }
            if !(t.is_empty() || t.starts_with([' ', '\t'])) || n <= 1 {
                return None;
            }
            n -= 1;
        }
    }
    // Back over continued lines to the logical line's start.
    let mut start = l;
    while start > 1 && text(start - 1).is_some_and(|t| t.trim_end().ends_with('\\')) {
        start -= 1;
    }
    let name = define_name(&text(start)?)?;
    let mut end = start;
    while text(end).is_some_and(|t| t.trim_end().ends_with('\\')) {
        end += 1;
    }
    (end >= l).then_some((name, Kind::Macro, start, end))
}

/// `NAME` of a `#define NAME` line.
fn define_name(line: &str) -> Option<String> {
    let rest = line.trim_start().strip_prefix('#')?.trim_start();
    let rest = rest.strip_prefix("define")?;
    if !rest.starts_with([' ', '\t']) {
        return None;
    }
    let name: String = rest
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    (!name.is_empty()).then_some(name)
}

/// What one added (or removed) line defines: `#define NAME`, a Kconfig `config NAME`, a
/// `struct`/`union`/`enum NAME {`, or a function's first line (a line at the left margin naming
/// `NAME(` after its type, not ending in `;`).
fn declared(line: &str, path: &str) -> Vec<(String, &'static str)> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    if path
        .rsplit('/')
        .next()
        .is_some_and(|n| n.starts_with("Kconfig"))
    {
        let t = line.trim_start();
        for kw in ["config ", "menuconfig "] {
            if let Some(rest) = t.strip_prefix(kw) {
                let name = ident(rest.trim_start());
                if !name.is_empty() {
                    return vec![(format!("CONFIG_{name}"), "kconfig")];
                }
            }
        }
        return Vec::new();
    }
    if let Some(name) = define_name(line) {
        return vec![(name, "macro")];
    }
    let t = line.trim_end();
    if t.is_empty() || t.starts_with([' ', '\t', '#', '}', '{', '/', '*']) || t.ends_with(';') {
        return Vec::new();
    }
    let words: Vec<&str> = t.split_whitespace().collect();
    for (i, kw) in words.iter().enumerate() {
        if matches!(*kw, "struct" | "union" | "enum") && words.len() > i + 1 {
            let name = ident(words[i + 1]);
            let opens = words[i + 2..].first().is_none_or(|w| w.starts_with('{'));
            if !name.is_empty() && opens && !t.contains('(') {
                return vec![(name, if *kw == "enum" { "enum" } else { "struct" })];
            }
        }
    }
    let Some(paren) = t.find('(') else {
        return Vec::new();
    };
    let before = t[..paren].trim_end();
    if before.contains(['=', ',', '"']) || !before.contains([' ', '*']) {
        return Vec::new();
    }
    let name: String = before
        .chars()
        .rev()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
        return Vec::new();
    }
    vec![(name, "function")]
}

/// The lines of one side of `h` with their line numbers in that side.
fn side_lines<'h>(h: &Hunk<'h>, side: Side) -> Vec<(u32, &'h str)> {
    let mut ln = match side {
        Side::Old => h.old_start.max(1),
        Side::New => h.new_start.max(1),
    };
    let mut out = Vec::new();
    for l in h.lines() {
        let t = match (l, side) {
            (Line::Context(t), _) | (Line::Removed(t), Side::Old) | (Line::Added(t), Side::New) => {
                t
            }
            _ => continue,
        };
        out.push((ln, t));
        ln = ln.saturating_add(1);
    }
    out
}

/// The lines of a file where each text is, to look a hunk up by.
type LineIndex<'s> = HashMap<&'s [u8], Vec<u32>>;

/// The lines of `src` by their text.
fn line_index(src: &SourceText) -> LineIndex<'_> {
    let mut index: LineIndex<'_> = HashMap::new();
    let mut n = 1;
    while let Some(l) = src.line(n) {
        index.entry(l).or_default().push(n);
        n += 1;
    }
    index
}

/// Where `h` is in `src`: its old side at its own line, its new side at its own line, then
/// either side at the nearest line it is found at. A side is looked for only where its rarest
/// line is (`index`, built on the first hunk that needs it), not at every line of the file:
/// 50,000 hunks on a 5,000-line file are not 250 million comparisons.
fn place<'s>(
    src: &'s SourceText,
    h: &Hunk<'_>,
    index: &OnceCell<LineIndex<'s>>,
    prefer: Side,
) -> Option<(Side, u32)> {
    let order = match prefer {
        Side::Old => [Side::Old, Side::New],
        Side::New => [Side::New, Side::Old],
    };
    let sides = order.map(|side| {
        let lines: Vec<&str> = side_lines(h, side).into_iter().map(|(_, t)| t).collect();
        (side, lines)
    });
    let at = |lines: &[&str], start: u32| -> bool {
        lines
            .iter()
            .enumerate()
            .all(|(k, t)| src.line(start.saturating_add(k as u32)) == Some(t.as_bytes()))
    };
    let own = |side: Side| match side {
        // An empty side (`-0,0`) names the line before it.
        Side::Old if h.old_count == 0 => h.old_start.saturating_add(1),
        Side::New if h.new_count == 0 => h.new_start.saturating_add(1),
        Side::Old => h.old_start.max(1),
        Side::New => h.new_start.max(1),
    };
    for (side, lines) in &sides {
        if at(lines, own(*side)) {
            return Some((*side, own(*side)));
        }
    }
    let index = index.get_or_init(|| line_index(src));
    for (side, lines) in &sides {
        let rarest = lines
            .iter()
            .enumerate()
            .map(|(k, t)| {
                (
                    k as u32,
                    index.get(t.as_bytes()).map_or(&[][..], Vec::as_slice),
                )
            })
            .min_by_key(|(_, found)| found.len());
        let Some((k, found)) = rarest else {
            continue;
        };
        let from = own(*side) as i64;
        let nearest = found
            .iter()
            .filter_map(|&l| l.checked_sub(k).filter(|&s| s >= 1 && at(lines, s)))
            .min_by_key(|&s| (s as i64 - from).abs());
        if let Some(s) = nearest {
            return Some((*side, s));
        }
    }
    None
}

/// The side a hunk both of whose sides are at their own lines is placed on: the one the file's
/// other hunks show, when more of them show it, so that one file's hunks read alike (a range
/// reviewed at its last revision labelled one hunk "already applied", the next "yes").
fn preferred_side(src: &SourceText, f: &FilePatch<'_>) -> Side {
    let at_own = |h: &Hunk<'_>, side: Side| {
        let start = match side {
            Side::Old if h.old_count == 0 => h.old_start.saturating_add(1),
            Side::New if h.new_count == 0 => h.new_start.saturating_add(1),
            Side::Old => h.old_start.max(1),
            Side::New => h.new_start.max(1),
        };
        side_lines(h, side)
            .iter()
            .enumerate()
            .all(|(k, (_, t))| src.line(start.saturating_add(k as u32)) == Some(t.as_bytes()))
    };
    let (mut old, mut new) = (0, 0);
    for h in &f.hunks {
        match (at_own(h, Side::Old), at_own(h, Side::New)) {
            (true, false) => old += 1,
            (false, true) => new += 1,
            _ => {}
        }
    }
    if new > old {
        Side::New
    } else {
        Side::Old
    }
}

/// `c` with its guard (at its line of the tree's file), its direct callers and the subsystems
/// of its file and theirs.
fn enrich(q: &Query<'_>, m: Option<&Maintainers>, c: Candidate) -> Touched {
    let mut t = c.touched;
    t.guard = match (c.indexed, c.tree_line) {
        (Some((s, f)), Some(l)) => q.guard(s, f, l),
        _ => None,
    };
    let mut subsystems: HashMap<String, u64> = HashMap::new();
    if let Some(sub) = m.and_then(|m| m.subsystem(&t.path)) {
        subsystems.insert(sub.to_string(), 0);
    }
    t.callers = matches!(t.kind, "function" | "prototype" | "macro").then(|| {
        let defs = q.definitions(&t.symbol);
        let is_static = defs.iter().any(|f| {
            f.def.kind == Kind::Function && f.def.file_local && q.path(f.seg, f.def.file) == t.path
        });
        let postings: Vec<_> = q
            .postings_iter(&t.symbol)
            .filter(|(s, p)| !is_static || q.path(*s, p.file) == t.path)
            .collect();
        let (calls, _) = direct_calls(q, postings, &def_lines(&defs));
        for (s, p, _) in &calls {
            if let Some(sub) = m.and_then(|m| m.subsystem(q.path(*s, p.file))) {
                *subsystems.entry(sub.to_string()).or_default() += 1;
            }
        }
        calls.len() as u64
    });
    let mut subsystems: Vec<(String, u64)> = subsystems.into_iter().collect();
    subsystems.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    t.subsystems = subsystems.into_iter().map(|(s, _)| s).collect();
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn added_lines_name_what_they_define() {
        let d = |l: &str| declared(l, "fs/x.c");
        assert_eq!(d("#define FOO(x) (x)"), vec![("FOO".into(), "macro")]);
        assert_eq!(d("struct kiocb {"), vec![("kiocb".into(), "struct")]);
        assert_eq!(d("enum rw_hint {"), vec![("rw_hint".into(), "enum")]);
        assert_eq!(
            d("static ssize_t new_sync_read(struct file *filp, char __user *buf,"),
            vec![("new_sync_read".into(), "function")]
        );
        assert_eq!(d("int *ptr(void)"), vec![("ptr".into(), "function")]);
        assert_eq!(d("EXPORT_SYMBOL(vfs_read);"), Vec::new());
        assert_eq!(d("\treturn foo(x);"), Vec::new());
        assert_eq!(d("struct file *f;"), Vec::new());
        assert_eq!(d("module_init(foo)"), Vec::new());
        assert_eq!(d("out:"), Vec::new());
        assert_eq!(
            declared("menuconfig NET", "net/Kconfig"),
            vec![("CONFIG_NET".into(), "kconfig")]
        );
    }

    #[test]
    fn paths_that_leave_the_root_are_refused_as_such() {
        let root = Some("/src/linux");
        let ok = |p: &str| under_root(root, p).unwrap();
        assert_eq!(ok("fs/read_write.c"), "fs/read_write.c");
        assert_eq!(ok("./fs//read_write.c"), "fs/read_write.c");
        assert_eq!(ok("/src/linux/fs/read_write.c"), "fs/read_write.c");
        let refused = |p: &str| under_root(root, p).unwrap_err();
        assert_eq!(
            refused("../../etc/passwd"),
            "'../../etc/passwd' leaves the root; fix the patch's paths (relative to the tree's \
             root, as git diff writes them)"
        );
        for p in [
            "fs/../../x.c",
            "fs/../mm/x.c",
            "/etc/passwd",
            "/src/linuxx/fs/x.c",
            "/src/x.c",
        ] {
            assert_eq!(
                refused(p),
                format!(
                    "'{p}' leaves the root; fix the patch's paths (relative to the tree's root, \
                     as git diff writes them)"
                )
            );
        }
        assert_eq!(
            refused("./"),
            "'./' names no file; fix the patch's paths (relative to the tree's root, as git diff \
             writes them)"
        );
        // A root that is not UTF-8 matches no absolute path: each is refused.
        assert!(under_root(None, "/src/linux/fs/x.c").is_err());
        // The root `/`: every absolute path is under it.
        assert_eq!(under_root(Some(""), "/etc/passwd").unwrap(), "etc/passwd");
    }
}
