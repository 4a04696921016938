//! list_file_symbols: the definitions of one file in line order, each with its line range
//! (paged from the end of the file backwards with `from_end`), or a directory's files with
//! their definition counts.

use knav_ctags::Kind;

use super::lookup::Found;
use super::Query;
use crate::envelope::{Envelope, Results};
use knav_index::format::Def;

/// The tool this module answers (its MCP name, and `Ask::tool`'s).
pub const TOOL: &str = "list_file_symbols";

/// Answers list_file_symbols for `file` (root-relative, or absolute inside the root); with
/// `from_end` the rows run from the last definition backwards.
pub fn list_file_symbols(q: &Query<'_>, file: &str, from_end: bool) -> Envelope {
    let root = q.snap.root.display().to_string();
    let rel = file
        .strip_prefix(&root)
        .map(|r| r.trim_start_matches('/'))
        .unwrap_or(file)
        .trim_start_matches("./");
    let rel = &*knav_index::tree::pathname::normalize(rel);
    if std::path::Path::new(rel)
        .components()
        .any(|c| !matches!(c, std::path::Component::Normal(_)))
    {
        let mut env = q.envelope(TOOL);
        env.error = Some(format!(
            "{file} is outside the root {root}; give a path relative to the root"
        ));
        return env;
    }
    let found = q.snap.find_file(rel);
    if found.is_none() && (rel.is_empty() || file.ends_with('/') || q.snap.root.join(rel).is_dir())
    {
        return directory(q, rel.trim_end_matches('/'));
    }
    let Some((seg, id)) = found else {
        let mut env = q.envelope(TOOL);
        env.error = Some(
            if q.snap
                .root
                .join(knav_index::tree::pathname::to_path(rel))
                .is_file()
            {
                format!("{rel} is not an indexed C source (only .c, .h and .S files are indexed)")
            } else {
                format!("no file {rel} under {root}")
            },
        );
        return env;
    };
    let mut env = q.envelope(TOOL);
    let mut defs: Vec<Def<'_>> = q.snap.segments[seg].file_defs(id);
    // `#define`s are not stored per file; the scanner finds them again.
    let text = q.source(rel);
    let scanned = text.as_ref().map(|t| knav_c::scan::scan(t.bytes()));
    let mut macro_names: Vec<(String, u32)> = Vec::new();
    if let (Some(t), Some(s)) = (&text, &scanned) {
        for m in &s.macros {
            let name = &t.bytes()[m.start as usize..m.start as usize + m.len as usize];
            macro_names.push((String::from_utf8_lossy(name).into_owned(), m.line));
        }
    }
    for (name, line) in &macro_names {
        defs.push(Def {
            file: id,
            name,
            line: *line,
            end_line: None,
            kind: Kind::Macro,
            file_local: rel.ends_with(".c"),
            typeref: None,
            scope: None,
            signature: None,
            via: None,
        });
    }
    // One row per macro invocation: `SYSCALL_DEFINE3(read, …)` lists sys_read, not each of the
    // wrapper names it also makes (they are all found by find_definition).
    defs.sort_by(|a, b| {
        (a.line, a.via, a.name.len(), a.name).cmp(&(b.line, b.via, b.name.len(), b.name))
    });
    defs.dedup_by(|later, first| {
        later.via.is_some() && later.line == first.line && later.via == first.via
    });
    defs.sort_by(|a, b| (a.line, a.name).cmp(&(b.line, b.name)));
    let rec = q.snap.segments[seg].file(id);
    if let Some(note) = &rec.note {
        env.warn(format!("{rel}: {note}"));
    }
    if !rec.warnings.is_empty() {
        env.warn(format!(
            "{rel}: unbalanced directives at {}",
            rec.warnings.join(", ")
        ));
    }
    if from_end {
        defs.reverse();
    }
    let page = q.paginate(&mut env, defs);
    let records = page
        .iter()
        .map(|d| {
            let f = Found { seg, def: *d };
            let mut r = q.def_record(&f);
            r.end_line = Some(q.macro_shape(&f).0.unwrap_or(d.line).max(d.line));
            r
        })
        .collect();
    if env.total == 0 {
        env.message = Some(format!("{rel} defines nothing ctags or knav recognise"));
    }
    env.results = Some(Results::Records(records));
    env.next_tools = vec!["get_symbol_body", "find_references"];
    env
}

/// The indexed files under directory `dir` (root-relative, `""`: the root) in path order,
/// each with its line count and ctags's definitions in it (`#define`s not counted).
fn directory(q: &Query<'_>, dir: &str) -> Envelope {
    let mut env = q.envelope("list_file_symbols");
    let mut files: Vec<(&str, usize, u32)> = q
        .snap
        .live_files()
        .map(|(s, f)| (q.path(s, f), s, f))
        .filter(|(p, _, _)| {
            dir.is_empty() || p.strip_prefix(dir).is_some_and(|r| r.starts_with('/'))
        })
        .collect();
    files.sort_unstable();
    let page = q.paginate(&mut env, files);
    let hits = page
        .into_iter()
        .map(|(path, s, f)| super::record::file_hit(q.snap, path, s, f))
        .collect();
    if env.total == 0 {
        env.message = Some(format!(
            "no indexed file under {dir}/ (only .c, .h and .S files are indexed)"
        ));
    }
    env.results = Some(Results::Files(hits));
    env.next_tools = vec!["list_file_symbols"];
    env
}
