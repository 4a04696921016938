//! find_callees: what a function calls, read from its body.

use std::collections::HashSet;

use super::span::function_span;
use super::{not_found, valid_name, Found, Query};
use crate::envelope::{Callee, Callees, Envelope, Results};
use knav_ctags::Kind;

/// At most this many distinct callees are listed a page.
pub const MAX_CALLEES: usize = 40;

/// The distinct names called in the body of `f`, with the line of their first call: read from
/// its name to its closing `}` (a function sharing its line with others calls only its own),
/// in time linear in the body.
pub fn calls_in_body(q: &Query<'_>, f: &Found<'_>) -> Vec<(String, u32)> {
    let end = f.def.end_line.unwrap_or(f.def.line);
    let Some(src) = q.text_at(f.seg, f.def.file, f.def.line, end) else {
        return Vec::new();
    };
    let braces = f.def.kind == Kind::Function;
    let Some(span) = function_span(&src, f.def.line, end, f.def.name, braces, 0) else {
        return Vec::new();
    };
    let body = &span.text;
    let scanned = crate::scan::scan(body);
    let mut seen: HashSet<&[u8]> = HashSet::new();
    let mut out: Vec<(String, u32)> = Vec::new();
    for o in scanned
        .occurrences
        .iter()
        .filter(|o| o.role == crate::scan::Role::Call)
    {
        let name = &body[o.start as usize..o.start as usize + o.len as usize];
        // The definition's own name (found, or where a macro made it, on its first line).
        let own = match span.name_at {
            Some(at) => o.start as usize == at,
            None => o.line == 1 && name == f.def.name.as_bytes(),
        };
        if own || !seen.insert(name) {
            continue;
        }
        // Identifiers are ASCII: the scanner reports no other bytes as one.
        out.push((
            String::from_utf8_lossy(name).into_owned(),
            f.def.line + o.line - 1,
        ));
    }
    out
}

/// The function definitions of `symbol`, best first.
pub fn function_defs<'s: 'a, 'a>(q: &Query<'s>, symbol: &'a str) -> Vec<Found<'a>> {
    q.definitions(symbol)
        .into_iter()
        .filter_map(|mut f| match f.def.kind {
            Kind::Function => Some(f),
            // A multi-line macro has a body worth following.
            Kind::Macro => {
                f.def.end_line = q.macro_shape(&f).0;
                f.def.end_line.map(|_| f)
            }
            _ => None,
        })
        .collect()
}

/// Answers find_callees for `symbol`.
pub fn find_callees(q: &Query<'_>, symbol: &str) -> Envelope {
    const TOOL: &str = "find_callees";
    if !valid_name(symbol) {
        return q.envelope_error(TOOL, format!("'{symbol}' is not a C identifier"));
    }
    let defs = function_defs(q, symbol);
    let Some(f) = defs.first() else {
        if q.definitions(symbol).is_empty() {
            return not_found(q, TOOL, symbol);
        }
        let mut env = q.envelope(TOOL);
        env.error = Some(format!("'{symbol}' is not a function with a body"));
        env.next_tools = vec!["find_definition"];
        return env;
    };
    let mut env = q.envelope(TOOL);
    if defs.len() > 1 {
        env.warn(format!(
            "{} function definitions; showing {}:{}",
            defs.len(),
            q.path(f.seg, f.def.file),
            f.def.line
        ));
    }
    let calls = calls_in_body(q, f);
    // Each callee costs a definition lookup: pages hold at most MAX_CALLEES.
    let size = q.limit().min(MAX_CALLEES as u64);
    if q.page.limit > size {
        env.warn(format!(
            "limit {} cut to {size}: find_callees lists at most {MAX_CALLEES} callees a page",
            q.page.limit
        ));
    }
    let calls = q.paginate_by(&mut env, calls, size);
    let callees = calls
        .into_iter()
        .map(|(name, line)| {
            let defined_at = q
                .definitions(&name)
                .first()
                .map(|d| format!("{}:{}", q.path(d.seg, d.def.file), d.def.line));
            Callee {
                symbol: name,
                line,
                defined_at,
            }
        })
        .collect();
    env.results = Some(Results::Callees(Callees {
        symbol: symbol.to_string(),
        path: q.path(f.seg, f.def.file).to_string(),
        line: f.def.line,
        callees,
    }));
    env.next_tools = vec!["get_symbol_body", "reachability"];
    env
}
