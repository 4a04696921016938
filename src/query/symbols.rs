//! list_file_symbols: the definitions of one file, in line order.

use knav_ctags::Kind;

use super::{Found, Query};
use crate::envelope::{Envelope, Results};
use crate::index::format::Def;

/// Answers list_file_symbols for `file` (root-relative, or absolute inside the root).
pub fn list_file_symbols(q: &Query<'_>, file: &str) -> Envelope {
    const TOOL: &str = "list_file_symbols";
    let root = q.snap.root.display().to_string();
    let rel = file
        .strip_prefix(&root)
        .map(|r| r.trim_start_matches('/'))
        .unwrap_or(file)
        .trim_start_matches("./");
    let rel = &*crate::pathname::normalize(rel);
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
    let Some((seg, id)) = q.snap.find_file(rel) else {
        let mut env = q.envelope(TOOL);
        env.error = Some(
            if q.snap.root.join(crate::pathname::to_path(rel)).is_file() {
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
    let scanned = text.as_ref().map(|t| crate::scan::scan(t.bytes()));
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
    let page = q.paginate(&mut env, defs);
    let records = page
        .iter()
        .map(|d| q.def_record(&Found { seg, def: *d }))
        .collect();
    if env.total == 0 {
        env.message = Some(format!("{rel} defines nothing ctags or knav recognise"));
    }
    env.results = Some(Results::Records(records));
    env.next_tools = vec!["get_symbol_body", "find_references"];
    env
}
