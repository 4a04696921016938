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

use std::collections::{HashMap, HashSet};

use knav_ctags::Kind;

use super::callers::direct_calls;
use super::source::SourceText;
use super::{def_lines, Query};
use crate::diff::{FilePatch, Hunk, Line};
use crate::envelope::{Envelope, HunkStatus, Results, Review, ReviewFile, Touched};
use crate::maintainers::Maintainers;

const TOOL: &str = "review_diff";

/// Which side of a hunk the tree holds.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    /// The old one: the patch is not applied.
    Old,
    /// The new one: the patch is applied.
    New,
}

/// Answers review_diff for the unified diff `text`.
pub fn review_diff(q: &Query<'_>, text: &str) -> Envelope {
    let files =
        match crate::diff::parse(text) {
            Ok(f) if f.is_empty() => return q.envelope_error(
                TOOL,
                "no file in the diff: give a unified diff (git diff, diff -u or a mailed patch)"
                    .into(),
            ),
            Ok(f) => f,
            Err(e) => return q.envelope_error(TOOL, format!("{e}; give a unified diff")),
        };
    let mut env = q.envelope(TOOL);
    let maintainers = match crate::maintainers::for_root(&q.snap.root) {
        Ok(m) => m,
        Err(e) => {
            env.warn(e);
            None
        }
    };
    let mut review = Review::default();
    let mut touched: Vec<Touched> = Vec::new();
    let mut seen = HashSet::new();
    for f in &files {
        let shown = f
            .new_path
            .as_deref()
            .or(f.old_path.as_deref())
            .unwrap_or("");
        if !q.wanted(shown) {
            continue;
        }
        let file = review_file(q, f, maintainers.as_deref(), &mut touched, &mut seen);
        review.hunks += file.hunks.len() as u64;
        review.hunks_not_applied += file.hunks.iter().filter(|h| h.applies == "no").count() as u64;
        review.files.push(file);
    }
    review.definitions = q.paginate(&mut env, touched);
    if review.hunks_not_applied > 0 {
        env.warn(format!(
            "{} of {} hunks do not apply to the indexed tree: their definitions are not listed",
            review.hunks_not_applied, review.hunks
        ));
    }
    env.results = Some(Results::Review(review));
    env.next_tools = vec!["get_symbol_body", "find_callers", "change_impact"];
    env
}

/// The first of the diff's paths for `f` the tree has (with `-p1`'s first component off, for
/// `diff -u old/… new/…`), and its text.
fn tree_file(q: &Query<'_>, f: &FilePatch<'_>) -> Option<(String, std::rc::Rc<SourceText>)> {
    let paths = [&f.old_path, &f.new_path];
    let stripped = paths
        .iter()
        .filter_map(|p| Some(p.as_deref()?.split_once('/')?.1.to_string()));
    paths
        .iter()
        .filter_map(|p| (*p).clone())
        .chain(stripped)
        .find_map(|p| Some((p.clone(), q.source(&p)?)))
}

fn review_file(
    q: &Query<'_>,
    f: &FilePatch<'_>,
    m: Option<&Maintainers>,
    touched: &mut Vec<Touched>,
    seen: &mut HashSet<(String, String, u32)>,
) -> ReviewFile {
    // Shown as the tree has it (a `diff -u` path without its first component).
    let shown = f
        .new_path
        .clone()
        .or(f.old_path.clone())
        .unwrap_or_default();
    let status = match (&f.old_path, &f.new_path) {
        (None, _) => "added",
        (_, None) => "deleted",
        // `diff -u old/x new/x` names one file twice.
        (Some(a), Some(b))
            if a != b && a.split_once('/').map(|x| x.1) != b.split_once('/').map(|x| x.1) =>
        {
            "renamed"
        }
        _ => "modified",
    };
    let tree = tree_file(q, f);
    let path = tree.as_ref().map_or(shown.clone(), |(p, _)| p.clone());
    let mut out = ReviewFile {
        subsystem: m.and_then(|m| m.subsystem(&path)).map(str::to_string),
        path: path.clone(),
        old_path: f.old_path.clone().filter(|_| status == "renamed"),
        status,
        binary: f.binary,
        hunks: Vec::new(),
    };
    let indexed = q.snap.find_file(&path);
    for h in &f.hunks {
        let mut st = HunkStatus {
            hunk: h.label(),
            applies: "no",
            offset: 0,
            note: None,
        };
        let Some((_, src)) = &tree else {
            if f.old_path.is_none() {
                // A new file the tree does not have yet: what it adds is all there is.
                st.applies = "new file";
                for (line, l) in side_lines(h, Side::New) {
                    for (symbol, kind) in declared(l, &path) {
                        push(
                            q,
                            m,
                            touched,
                            seen,
                            &path,
                            indexed,
                            h,
                            (symbol, kind),
                            "added",
                            line,
                            None,
                        );
                    }
                }
            } else {
                st.note = Some(format!("{path} is not in the tree"));
            }
            out.hunks.push(st);
            continue;
        };
        let Some((side, at)) = place(src, h) else {
            st.note = Some(format!(
                "neither side of the hunk is in {path} (near line {})",
                h.old_start
            ));
            out.hunks.push(st);
            continue;
        };
        let start = match side {
            Side::Old => h.old_start.max(1),
            Side::New => h.new_start.max(1),
        };
        st.offset = at as i64 - start as i64;
        st.applies = match side {
            Side::Old => "yes",
            Side::New => "already applied",
        };
        // Lines of the tree's side the change holds, and where the other side's lines go.
        let mut changed: Vec<u32> = Vec::new();
        let mut points: Vec<u32> = Vec::new();
        let mut other: Vec<(u32, u32, &str)> = Vec::new();
        let (mut tree_ln, mut other_ln) = match side {
            Side::Old => (at, (h.new_start as i64 + st.offset).max(1) as u32),
            Side::New => (at, (h.old_start as i64 + st.offset).max(1) as u32),
        };
        for l in &h.lines {
            match (l, side) {
                (Line::Context(_), _) => {
                    tree_ln += 1;
                    other_ln += 1;
                }
                (Line::Removed(_), Side::Old) | (Line::Added(_), Side::New) => {
                    changed.push(tree_ln);
                    tree_ln += 1;
                }
                (Line::Added(t), Side::Old) | (Line::Removed(t), Side::New) => {
                    points.push(tree_ln);
                    other.push((other_ln, tree_ln, t));
                    other_ln += 1;
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
        // Definitions of the tree's file the change is in.
        let mut defs: Vec<(String, Kind, u32, u32)> = Vec::new();
        if let Some((s, id)) = indexed {
            for d in q.snap.segments[s].file_defs(id) {
                if matches!(
                    d.kind,
                    Kind::Member | Kind::Enumerator | Kind::Local | Kind::Label | Kind::Entry
                ) {
                    continue;
                }
                defs.push((
                    d.name.to_string(),
                    d.kind,
                    d.line,
                    d.end_line.unwrap_or(d.line),
                ));
            }
        }
        let mut marks: Vec<u32> = changed.clone();
        marks.extend(points.iter().map(|p| p.saturating_sub(1)));
        for &l in &marks {
            if let Some(d) = enclosing_text_def(src, l, is_kconfig) {
                defs.push(d);
            }
        }
        let changed_set: HashSet<u32> = changed.iter().copied().collect();
        for (name, kind, line, end) in defs {
            let hit = changed.iter().any(|&c| line <= c && c <= end)
                || points.iter().any(|&p| line < p && p <= end);
            if !hit {
                continue;
            }
            // All of it changed, and not written again by the other side: gone.
            let rewritten = other
                .iter()
                .any(|(_, _, t)| declared(t, &path).iter().any(|(n, _)| *n == name));
            let change = if !rewritten && (line..=end).all(|l| changed_set.contains(&l)) {
                gone
            } else {
                "modified"
            };
            push(
                q,
                m,
                touched,
                seen,
                &path,
                indexed,
                h,
                (name, kind_name(kind, is_kconfig)),
                change,
                line,
                Some(line),
            );
        }
        for (line, tree_at, text) in other {
            for (symbol, kind) in declared(text, &path) {
                // A changed first line of a definition the tree has is that definition's change.
                if touched.iter().any(|t| t.symbol == symbol && t.path == path) {
                    continue;
                }
                push(
                    q,
                    m,
                    touched,
                    seen,
                    &path,
                    indexed,
                    h,
                    (symbol, kind),
                    new,
                    line,
                    Some(tree_at),
                );
            }
        }
        out.hunks.push(st);
    }
    out
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
fn side_lines<'h>(h: &'h Hunk<'_>, side: Side) -> Vec<(u32, &'h str)> {
    let mut ln = match side {
        Side::Old => h.old_start.max(1),
        Side::New => h.new_start.max(1),
    };
    let mut out = Vec::new();
    for l in &h.lines {
        let t = match (l, side) {
            (Line::Context(t), _) | (Line::Removed(t), Side::Old) | (Line::Added(t), Side::New) => {
                t
            }
            _ => continue,
        };
        out.push((ln, *t));
        ln += 1;
    }
    out
}

/// Where `h` is in `src`: its old side at its own line, its new side at its own line, then
/// either side at the nearest line it is found at.
fn place(src: &SourceText, h: &Hunk<'_>) -> Option<(Side, u32)> {
    let at = |side: Side, start: u32| -> bool {
        side_lines(h, side)
            .iter()
            .enumerate()
            .all(|(k, (_, t))| src.line(start + k as u32) == Some(t.as_bytes()))
    };
    let own = |side: Side| match side {
        // An empty side (`-0,0`) names the line before it.
        Side::Old if h.old_count == 0 => h.old_start + 1,
        Side::New if h.new_count == 0 => h.new_start + 1,
        Side::Old => h.old_start.max(1),
        Side::New => h.new_start.max(1),
    };
    for side in [Side::Old, Side::New] {
        if at(side, own(side)) {
            return Some((side, own(side)));
        }
    }
    let mut last = 1;
    while src.line(last).is_some() {
        last += 1;
    }
    for side in [Side::Old, Side::New] {
        if side_lines(h, side).is_empty() {
            continue;
        }
        let from = own(side);
        let found = (1..last)
            .filter(|&s| at(side, s))
            .min_by_key(|&s| (s as i64 - from as i64).abs());
        if let Some(s) = found {
            return Some((side, s));
        }
    }
    None
}

/// Adds a touched definition (once per name, file and line) with its guard (at `tree_line` of
/// the tree's file), its direct callers and the subsystems of its file and theirs.
#[allow(clippy::too_many_arguments)]
fn push(
    q: &Query<'_>,
    m: Option<&Maintainers>,
    touched: &mut Vec<Touched>,
    seen: &mut HashSet<(String, String, u32)>,
    path: &str,
    indexed: Option<(usize, u32)>,
    h: &Hunk<'_>,
    (symbol, kind): (String, &'static str),
    change: &'static str,
    line: u32,
    tree_line: Option<u32>,
) {
    if !seen.insert((symbol.clone(), path.to_string(), line)) {
        return;
    }
    let guard = match (indexed, tree_line) {
        (Some((s, f)), Some(l)) => q.guard(s, f, l),
        _ => None,
    };
    let mut subsystems: HashMap<String, u64> = HashMap::new();
    if let Some(sub) = m.and_then(|m| m.subsystem(path)) {
        subsystems.insert(sub.to_string(), 0);
    }
    let callers = matches!(kind, "function" | "prototype" | "macro").then(|| {
        let defs = q.definitions(&symbol);
        let is_static = defs.iter().any(|f| {
            f.def.kind == Kind::Function && f.def.file_local && q.path(f.seg, f.def.file) == path
        });
        let postings: Vec<_> = q
            .postings_iter(&symbol)
            .filter(|(s, p)| !is_static || q.path(*s, p.file) == path)
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
    touched.push(Touched {
        symbol,
        kind,
        change,
        path: path.to_string(),
        line,
        hunk: h.label(),
        guard,
        callers,
        subsystems: subsystems.into_iter().map(|(s, _)| s).collect(),
    });
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
}
