//! change_impact: who is affected by a change to a function — its callers, their callers, to a
//! depth — grouped by `MAINTAINERS` subsystem and top directory, each with its export status.
//!
//! The walk is breadth-first over the call sites find_callers reads ([`direct_calls`], and the
//! calls through function pointers whose struct type is certain, [`indirect_calls`]). A
//! `static` caller is followed only through the calls of its own file. The walk reads at most
//! [`MAX_CALL_SITES`] call sites: past that every count is a floor (`counts_capped`), never a
//! total.

use std::collections::{HashMap, HashSet};

use knav_ctags::Kind;

use super::callers::{direct_calls, indirect_calls};
use super::def::macro_on_line;
use super::indirect::TYPE;
use super::{def_lines, not_found, valid_name, Query};
use crate::envelope::{Affected, Envelope, Impact, ImpactGroup, Results};
use crate::index::segment::Postings;
use crate::maintainers::{top_dir, Maintainers};
use crate::scan::Role;

/// Default levels of callers.
pub const DEFAULT_DEPTH: u32 = 2;
/// Most levels of callers.
pub const MAX_DEPTH: u32 = 10;
/// Call sites a walk reads at most; past it, counts are floors.
pub const MAX_CALL_SITES: usize = 10_000;

/// A function the walk reached: `(name, path)` of the file defining it.
type Node = (String, String);

/// What is known of one affected function.
struct Reached {
    level: u32,
    calls: String,
    line: u32,
    sites: u64,
    seg: usize,
    file: u32,
    active: Option<Option<bool>>,
    /// `STRUCT.FIELD` when the call goes through a function pointer.
    via: Option<String>,
}

/// Answers change_impact for `symbol` to `depth` levels of callers.
pub fn change_impact(q: &Query<'_>, symbol: &str, depth: u32) -> Envelope {
    const TOOL: &str = "change_impact";
    if !valid_name(symbol) {
        return q.envelope_error(TOOL, format!("'{symbol}' is not a C identifier"));
    }
    if depth > MAX_DEPTH {
        return q.envelope_error(TOOL, format!("depth must be 0..{MAX_DEPTH}, not {depth}"));
    }
    let defs = q.definitions(symbol);
    if defs.is_empty() && q.postings_iter(symbol).next().is_none() {
        return not_found(q, TOOL, symbol);
    }
    let mut env = q.envelope(TOOL);
    let subsystems = match crate::maintainers::for_root(&q.snap.root) {
        Ok(Some(m)) => Some(m),
        Ok(None) => {
            env.warn("the tree has no MAINTAINERS file: grouped by top directory only");
            None
        }
        Err(e) => {
            env.warn(format!("{e}: grouped by top directory only"));
            None
        }
    };
    let subsystem_of = |path: &str| -> Option<String> {
        subsystems
            .as_deref()
            .and_then(|m: &Maintainers| m.subsystem(path))
            .map(str::to_string)
    };

    let mut reached: HashMap<Node, Reached> = HashMap::new();
    let mut order: Vec<Node> = Vec::new();
    let mut file_scope: Vec<(String, Reached)> = Vec::new();
    let mut followed: HashSet<(String, Option<String>)> = HashSet::new();
    followed.insert((symbol.to_string(), None));
    let mut frontier: Vec<(String, Option<String>)> = vec![(symbol.to_string(), None)];
    let mut read = 0usize;
    let mut hidden = 0u64;
    let mut capped = false;
    let mut statics: HashMap<(usize, u32), HashSet<String>> = HashMap::new();
    'walk: for level in 1..=depth {
        let mut next = Vec::new();
        for (name, scope) in frontier {
            let lines = def_lines(&q.definitions(&name));
            let postings: Vec<_> = q
                .postings_iter(&name)
                .filter(|(s, p)| q.wanted_file(*s, p.file))
                .filter(|(s, p)| scope.as_deref().is_none_or(|f| q.path(*s, p.file) == f))
                .collect();
            let (calls, mut out) = direct_calls(q, postings, &lines);
            // Calls through function pointers whose struct type is certain, from any file (a
            // static function stored in an ops table is called from elsewhere).
            let through = indirect_calls(q, &name, &mut out);
            for h in out {
                hidden += 1;
                env.list_hidden(&h.path, h.line, &h.reason);
            }
            let calls = calls
                .into_iter()
                .map(|(s, p, active)| (s, p.file, p.line, active, None))
                .chain(
                    through
                        .into_iter()
                        .filter(|(c, _)| c.certainty == TYPE)
                        .map(|(c, active)| (c.at.0, c.at.1, c.at.2, active, Some(c.via))),
                );
            for (s, file, line, active, via) in calls {
                if read == MAX_CALL_SITES {
                    capped = true;
                    break 'walk;
                }
                read += 1;
                let path = q.path(s, file).to_string();
                let here = Reached {
                    level,
                    calls: name.clone(),
                    line,
                    sites: 1,
                    seg: s,
                    file,
                    active,
                    via,
                };
                let Some(caller) = q.enclosing_function(s, file, line) else {
                    file_scope.push((path, here));
                    continue;
                };
                let node = (caller, path);
                if let Some(r) = reached.get_mut(&node) {
                    r.sites += 1;
                    continue;
                }
                if node.0 == symbol {
                    continue;
                }
                let is_static = statics
                    .entry((s, file))
                    .or_insert_with(|| {
                        q.snap.segments[s]
                            .file_defs(file)
                            .iter()
                            .filter(|d| d.kind == Kind::Function && d.file_local)
                            .map(|d| d.name.to_string())
                            .collect()
                    })
                    .contains(&node.0);
                let follow = (node.0.clone(), is_static.then(|| node.1.clone()));
                if followed.insert(follow.clone()) {
                    next.push(follow);
                }
                reached.insert(node.clone(), here);
                order.push(node);
            }
        }
        frontier = next;
    }

    // Groups over every affected function and call site, not one page.
    let mut by_subsystem: HashMap<String, (u64, u64)> = HashMap::new();
    let mut by_dir: HashMap<String, (u64, u64)> = HashMap::new();
    let mut count = |path: &str, function: bool, sites: u64| {
        let sub = subsystem_of(path).unwrap_or_else(|| "(no MAINTAINERS entry)".into());
        for (map, key) in [
            (&mut by_subsystem, sub),
            (&mut by_dir, top_dir(path).to_string()),
        ] {
            let e = map.entry(key).or_default();
            e.0 += function as u64;
            e.1 += sites;
        }
    };
    for (node, r) in &reached {
        count(&node.1, true, r.sites);
    }
    for (path, _) in &file_scope {
        count(path, false, 1);
    }
    let groups = |map: HashMap<String, (u64, u64)>| {
        let mut g: Vec<ImpactGroup> = map
            .into_iter()
            .map(|(name, (functions, call_sites))| ImpactGroup {
                name,
                functions,
                call_sites,
            })
            .collect();
        g.sort_by(|a, b| {
            (b.functions, b.call_sites)
                .cmp(&(a.functions, a.call_sites))
                .then(a.name.cmp(&b.name))
        });
        g
    };
    let direct = reached.values().filter(|r| r.level == 1).count() as u64;
    // Its best-ranked definition (a `#define` of kmalloc before a copy in tools/).
    let best = defs.iter().find(|f| f.def.kind != Kind::Entry);
    let defined = best.map(|f| format!("{}:{}", q.path(f.seg, f.def.file), f.def.line));
    let subsystem = best.and_then(|f| subsystem_of(q.path(f.seg, f.def.file)));
    let exported = export_macro(q, symbol);

    let mut rows: Vec<(Option<String>, String, Reached)> = order
        .into_iter()
        .filter_map(|node| {
            let r = reached.remove(&node)?;
            Some((Some(node.0), node.1, r))
        })
        .chain(file_scope.into_iter().map(|(path, r)| (None, path, r)))
        .collect();
    rows.sort_by(|a, b| (a.2.level, &a.1, a.2.line, &a.0).cmp(&(b.2.level, &b.1, b.2.line, &b.0)));
    let functions = rows.iter().filter(|r| r.0.is_some()).count() as u64;
    let page = q.paginate(&mut env, rows);
    let callers = page
        .into_iter()
        .map(|(function, path, r)| Affected {
            exported: function.as_deref().and_then(|f| export_macro(q, f)),
            subsystem: subsystem_of(&path),
            guard: q.guard(r.seg, r.file, r.line),
            function,
            level: r.level,
            calls: r.calls,
            line: r.line,
            call_sites: r.sites,
            path,
            active: r.active,
            via: r.via,
        })
        .collect();
    if hidden > env.hidden.len() as u64 {
        env.warn(format!(
            "{hidden} call sites hidden by the active config; {} listed",
            env.hidden.len()
        ));
    }
    if capped {
        env.warn(format!(
            "the walk stopped after {MAX_CALL_SITES} call sites: every count is a floor"
        ));
    }
    if functions == 0 && depth > 0 {
        env.message = Some(format!(
            "no calls to '{symbol}' found (it may be used through a function pointer; \
             find_references lists every mention)"
        ));
    }
    env.results = Some(Results::Impact(Impact {
        symbol: symbol.to_string(),
        depth,
        defined_at: defined,
        subsystem,
        exported,
        direct_callers: direct,
        transitive_callers: functions - direct,
        call_sites: read as u64,
        counts_capped: capped,
        subsystems: groups(by_subsystem),
        top_dirs: groups(by_dir),
        callers,
    }));
    env.next_tools = vec!["find_callers", "get_symbol_body", "reachability"];
    env
}

/// The `EXPORT_SYMBOL*` macro exporting `name`, when the index knows one (a tracepoint's
/// export is not the function's).
pub fn export_macro(q: &Query<'_>, name: &str) -> Option<String> {
    for (s, seg) in q.snap.segments.iter().enumerate() {
        let Some(entry) = seg.lookup(name.as_bytes()) else {
            continue;
        };
        let at: Vec<(u32, u32)> = match &entry.stats {
            Some(st) => st.exports.clone(),
            None => Postings::new(entry.postings)
                .filter(|p| p.role == Role::Export)
                .map(|p| (p.file, p.line))
                .collect(),
        };
        for (file, line) in at {
            if !q.snap.is_live(s, file) {
                continue;
            }
            let m = macro_on_line(q, s, file, line).unwrap_or_else(|| "EXPORT_SYMBOL".into());
            if !m.starts_with("EXPORT_TRACEPOINT") {
                return Some(m);
            }
        }
    }
    None
}
