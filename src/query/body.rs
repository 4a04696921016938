//! get_symbol_body: the source text of a definition.

use super::{not_found, valid_name, Query, MAX_BODY_LINES};
use crate::envelope::{Envelope, Results};

/// Bodies shown when the caller does not say.
pub const DEFAULT_BODIES: u64 = 3;
/// Bodies shown at most: `max_definitions` above it is cut, and the answer says so.
pub const MAX_BODIES: u64 = 50;

/// Answers get_symbol_body for `symbol`, with at most `max_definitions` bodies (0: 3).
pub fn get_symbol_body(q: &Query<'_>, symbol: &str, max_definitions: u64) -> Envelope {
    const TOOL: &str = "get_symbol_body";
    if !valid_name(symbol) {
        return q.envelope_error(TOOL, format!("'{symbol}' is not a C identifier"));
    }
    let max = match max_definitions {
        0 => DEFAULT_BODIES,
        n => n.min(MAX_BODIES),
    };
    let mut env = bodies(q, symbol, max);
    if max_definitions > MAX_BODIES && env.error.is_none() {
        env.warn(format!(
            "max_definitions {max_definitions} cut to the maximum {MAX_BODIES}; page with offset"
        ));
    }
    env
}

/// The bodies of `symbol`'s definitions, `max` a page.
fn bodies(q: &Query<'_>, symbol: &str, max: u64) -> Envelope {
    const TOOL: &str = "get_symbol_body";
    // Bodies first: a prototype's "body" is one line nobody asked for.
    let mut resolved = None;
    let mut defs = q.definitions(symbol);
    if defs.is_empty() {
        let kconfig = q.kconfig_entries(symbol);
        if !kconfig.is_empty() {
            return kconfig_bodies(q, kconfig, max);
        }
    }
    if defs.is_empty() {
        match super::fuzzy::resolve(q, symbol) {
            super::fuzzy::Fuzzy::One(name, how) => resolved = Some((name, how)),
            super::fuzzy::Fuzzy::Several(names) => {
                return super::def::several(q, TOOL, symbol, names)
            }
            super::fuzzy::Fuzzy::Nothing => return not_found(q, TOOL, symbol),
        }
    }
    if let Some((name, _)) = &resolved {
        defs = q.definitions(name);
    }
    // An entry-point mark (`module_init(fn)`) has no body of its own.
    let defs: Vec<_> = defs
        .into_iter()
        .filter(|f| f.def.kind != knav_ctags::Kind::Entry && q.wanted_file(f.seg, f.def.file))
        .collect();
    if defs.is_empty() {
        return not_found(q, TOOL, symbol);
    }
    let (mut defs, hidden) = q.by_config(defs);
    for (f, _) in &mut defs {
        if f.def.kind == knav_ctags::Kind::Macro {
            f.def.end_line = q.macro_shape(f).0;
        }
    }
    defs.sort_by_key(|(f, _)| f.def.end_line.is_none());
    let mut env = q.envelope(TOOL);
    env.hidden = hidden;
    let page = q.paginate_by(&mut env, defs, max);
    let records = page
        .iter()
        .map(|(f, active)| {
            let end = f.def.end_line.unwrap_or(f.def.line);
            let cut = end.saturating_sub(f.def.line) + 1 > MAX_BODY_LINES;
            let last = if cut {
                f.def.line + MAX_BODY_LINES - 1
            } else {
                end
            };
            // The body's lines first: the record's snippet comes from the same read.
            let body = q
                .text_at(f.seg, f.def.file, f.def.line, last)
                .map(|s| s.lines(f.def.line, last))
                .unwrap_or_default();
            let mut r = q.def_record(f);
            if q.page.active.is_some() {
                r.active = Some(*active);
            }
            r.end_line = Some(end);
            r.body = Some(body);
            r.body_truncated = cut.then_some(true);
            r
        })
        .collect();
    env.results = Some(Results::Records(records));
    if let Some((name, how)) = &resolved {
        super::def::mark_resolved(&mut env, name);
        env.warn(format!(
            "'{symbol}' has no definition; showing '{name}' ({how}), not an exact match"
        ));
    }
    env.next_tools = vec!["find_callees", "find_callers"];
    env
}

/// The bodies of a `CONFIG_` symbol's Kconfig entries: each `config X` block, help included.
fn kconfig_bodies(
    q: &Query<'_>,
    entries: Vec<crate::index::buildfiles::KconfigEntry>,
    max: u64,
) -> Envelope {
    let mut env = q.envelope("get_symbol_body");
    let (kept, hidden) = q.kconfig_by_config(entries);
    env.hidden = hidden;
    let page = q.paginate_by(&mut env, kept, max);
    let records = page
        .iter()
        .map(|(k, active)| {
            let mut r = q.kconfig_record(k);
            if q.page.active.is_some() {
                r.active = Some(*active);
            }
            let (first, end) = (k.entry.line, k.entry.end_line.max(k.entry.line));
            let last = end.min(first + MAX_BODY_LINES - 1);
            r.end_line = Some(end);
            r.body = Some(
                q.source(&k.path)
                    .map(|s| s.lines(first, last))
                    .unwrap_or_default(),
            );
            r.body_truncated = (last < end).then_some(true);
            r
        })
        .collect();
    env.results = Some(Results::Records(records));
    env.next_tools = vec!["find_references"];
    env
}
