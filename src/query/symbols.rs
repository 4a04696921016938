//! list_file_symbols: the definitions of one file, in line order.

use super::{Found, Query};
use crate::envelope::{Envelope, Results};

/// Answers list_file_symbols for `file` (root-relative, or absolute inside the root).
pub fn list_file_symbols(q: &Query<'_>, file: &str) -> Envelope {
    const TOOL: &str = "list_file_symbols";
    let root = q.snap.root.display().to_string();
    let rel = file
        .strip_prefix(&root)
        .map(|r| r.trim_start_matches('/'))
        .unwrap_or(file)
        .trim_start_matches("./");
    let Some((seg, id)) = q.snap.find_file(rel) else {
        let mut env = q.envelope(TOOL);
        env.error = Some(if q.snap.root.join(rel).is_file() {
            format!("{rel} is not an indexed C source (only .c and .h files are indexed)")
        } else {
            format!("no file {rel} under {root}")
        });
        return env;
    };
    let mut env = q.envelope(TOOL);
    let defs = q.snap.segments[seg].file_defs(id);
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
