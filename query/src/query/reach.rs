//! reachability: is there a call chain from one function to another (breadth-first).

use std::collections::{HashMap, VecDeque};

use super::callees::{calls_in_body, function_defs};
use super::lookup::{not_found, valid_name, Found};
use super::{indirect, Query};
use crate::envelope::{Envelope, Reach, Results};

/// The tool this module answers (its MCP name, and `Ask::tool`'s).
pub const TOOL: &str = "reachability";

/// Default and largest search depths.
#[allow(dead_code)]
pub const DEFAULT_DEPTH: u32 = 8;
/// Largest depth accepted.
pub const MAX_DEPTH: u32 = 12;
/// Function bodies searched at most, so a hub like `printk` cannot stall the answer.
pub const MAX_EXPLORED: usize = 20_000;

/// Answers reachability from `from` to `to` within `max_depth` calls.
/// Calls through members whose struct type is known are followed to every function registered
/// in that member of that struct; with `include_uncertain`, also those matched by the member's
/// name only.
pub fn reachability(
    q: &Query<'_>,
    from: &str,
    to: &str,
    max_depth: u32,
    include_uncertain: bool,
) -> Envelope {
    for name in [from, to] {
        if !valid_name(name) {
            return q.envelope_error(TOOL, format!("'{name}' is not a C identifier"));
        }
    }
    if !(1..=MAX_DEPTH).contains(&max_depth) {
        return q.envelope_error(
            TOOL,
            format!("max_depth must be 1..{MAX_DEPTH}, not {max_depth}"),
        );
    }
    if function_defs(q, from).is_empty() {
        return not_found(q, TOOL, from);
    }
    if q.definitions(to).is_empty() && q.postings(to).is_empty() {
        return not_found(q, TOOL, to);
    }
    let mut parent: Parents = HashMap::new();
    parent.insert(from.to_string(), None);
    let mut queue = VecDeque::from([(from.to_string(), 0u32)]);
    let mut explored = 0usize;
    let mut found = from == to;
    let mut capped = false;
    // Calls through members of unknown struct type not followed.
    let mut skipped = 0usize;
    'bfs: while let Some((name, depth)) = queue.pop_front() {
        if found || depth >= max_depth {
            continue;
        }
        if explored >= MAX_EXPLORED {
            capped = true;
            break;
        }
        let defs = function_defs(q, &name);
        let Some(f) = defs.first() else { continue };
        explored += 1;
        let (direct, through) = calls(q, f);
        // The calls through members only when the direct ones do not reach `to`: their
        // targets (every function stored in the member) cost most of a search.
        let mut step = |edges: Vec<(String, Option<String>)>| {
            for (callee, via) in edges {
                if parent.contains_key(&callee) {
                    continue;
                }
                parent.insert(callee.clone(), Some((name.clone(), via)));
                if callee == to {
                    return true;
                }
                queue.push_back((callee, depth + 1));
            }
            false
        };
        if step(direct) {
            found = true;
            break 'bfs;
        }
        let (edges, unknown) = pointer_edges(q, f, through, include_uncertain);
        skipped += unknown;
        if step(edges) {
            found = true;
            break 'bfs;
        }
    }
    let (chain, via) = if found {
        chain_to(&parent, to)
    } else {
        Default::default()
    };
    let mut env = q.envelope(TOOL);
    // One answer, not a list: there is no page to skip to.
    env.offset = 0;
    if q.page.offset > 0 {
        env.warn(format!(
            "offset {} ignored: reachability answers with one chain",
            q.page.offset
        ));
    }
    if capped {
        env.warn(format!("search stopped after {MAX_EXPLORED} functions"));
    }
    if !found {
        let mut m = format!(
            "no call chain from {from} to {to} within {max_depth} calls ({explored} functions searched)"
        );
        if skipped > 0 {
            m.push_str(&format!(
                "; {skipped} calls through members of unknown struct type not followed (their \
                 targets would be guesses by member name): include_uncertain follows them"
            ));
        }
        env.message = Some(m);
    }
    env.total = found as u64;
    env.results = Some(Results::Reach(Reach {
        from: from.to_string(),
        to: to.to_string(),
        reachable: found,
        chain,
        via,
        explored: explored as u64,
    }));
    env.next_tools = vec!["find_callees", "find_callers"];
    env
}

/// Each function reached: what called it, and the member the call went through.
type Parents = HashMap<String, Option<(String, Option<String>)>>;

/// The chain of calls from the search's start to `to`, by `parent`, and the member each call
/// went through (empty when every call is direct).
fn chain_to(parent: &Parents, to: &str) -> (Vec<String>, Vec<Option<String>>) {
    let mut chain = Vec::new();
    let mut via = Vec::new();
    let mut at = Some(to.to_string());
    while let Some(n) = at {
        let up = parent.get(&n).cloned().flatten();
        chain.push(n);
        at = up.map(|(p, v)| {
            via.push(v);
            p
        });
    }
    chain.reverse();
    via.reverse();
    if via.iter().all(Option::is_none) {
        via.clear();
    }
    (chain, via)
}

/// A call through a member: the member's struct (`None` when not known) and name, and the
/// call's name as `calls_in_body` gives it.
type Through = (Option<String>, String, String);

/// The body of `f`'s direct calls, each with its member (`None`, or the list-of-targets mark
/// for an `INDIRECT_CALL_*`), and its calls through members, still to be resolved.
fn calls(q: &Query<'_>, f: &Found<'_>) -> (Vec<(String, Option<String>)>, Vec<Through>) {
    let mut direct = Vec::new();
    let mut through = Vec::new();
    for c in calls_in_body(q, f) {
        if c.listed {
            direct.push((c.name, Some(indirect::INDIRECT_CALL.to_string())));
            continue;
        }
        match c.through {
            Some((tag, field)) => through.push((tag, field, c.name)),
            None => direct.push((c.name, None)),
        }
    }
    (direct, through)
}

/// The functions the calls through members of `f` reach, each with the call's name; and the
/// calls through members of unknown struct type left out (without `include_uncertain`).
fn pointer_edges(
    q: &Query<'_>,
    f: &Found<'_>,
    through: Vec<Through>,
    include_uncertain: bool,
) -> (Vec<(String, Option<String>)>, usize) {
    let mut out = Vec::new();
    let mut skipped = 0;
    for (tag, field, name) in through {
        let regs = match tag {
            Some(tag) => indirect::registered_in(q, &tag, &field, Some(q.path(f.seg, f.def.file))),
            None if include_uncertain => indirect::registered_by_field(q, &field),
            None => {
                skipped += 1;
                continue;
            }
        };
        for r in regs {
            out.push((r.func, Some(name.clone())));
        }
    }
    (out, skipped)
}
