//! compare_versions: one symbol in two versions of a tree (two git revisions, or one and the
//! files as they are), each answered by its own snapshot. Definitions are paired by kind and
//! file (a pair in two files has moved); each pair says what changed (signature, guard, kind,
//! body) with the body's unified diff, capped; the export status and the callers, added and
//! removed, are compared for the symbol as a whole.

use std::collections::BTreeSet;

use knav_index::store::Snapshot;

use crate::envelope::{
    CallSite, Caller, CallersChange, Comparison, DefAt, DefChange, Envelope, Export, Record,
    Results, RevName,
};
use crate::query::Page;
use crate::request::{answer, Ask};

/// Lines of one body diff shown at most.
pub const MAX_DIFF_LINES: usize = 120;
/// Callers added or removed listed at most (all are counted).
pub const MAX_CALLERS_LISTED: usize = 10;
/// Definitions and call sites read per side at most.
const MAX_READ: u64 = 1000;

/// One side of a comparison: the version's name and its snapshot.
pub struct Side<'a> {
    /// The revision, or `None` for the files as they are.
    pub rev: Option<RevName>,
    /// Its index.
    pub snap: &'a Snapshot,
}

impl Side<'_> {
    fn label(&self) -> String {
        RevName::label(self.rev.as_ref())
    }
}

/// One version's answers about the symbol.
struct Seen {
    defs: Vec<Record>,
    bodies: Vec<Record>,
    exported: Option<Export>,
    calls: Vec<CallSite>,
    call_total: u64,
}

fn page_of(page: &Page) -> Page {
    Page {
        limit: MAX_READ,
        offset: 0,
        path_prefix: page.path_prefix.clone(),
        active: page.active.clone(),
        body_bytes: page.body_bytes,
        places_only: page.places_only,
    }
}

fn look(side: &Side<'_>, symbol: &str, page: &Page) -> Result<Seen, String> {
    let ask = |a: Ask| answer(side.snap, page_of(page), &a);
    let def = ask(Ask::Def {
        symbol: symbol.to_string(),
    });
    let defs = match def.results {
        Some(Results::Records(rs)) => rs,
        _ if def
            .error
            .as_deref()
            .is_some_and(|e| !e.contains("no symbol")) =>
        {
            return Err(format!(
                "{}: {}",
                side.label(),
                def.error.unwrap_or_default()
            ))
        }
        _ => Vec::new(),
    };
    let exported = def.summary.and_then(|s| s.exported);
    let bodies = match ask(Ask::Body {
        symbol: symbol.to_string(),
        max_definitions: MAX_READ,
    })
    .results
    {
        Some(Results::Records(rs)) => rs,
        _ => Vec::new(),
    };
    let callers = ask(Ask::Callers {
        include_uncertain: false,
        symbol: symbol.to_string(),
    });
    let call_total = callers.total;
    let calls = match callers.results {
        Some(Results::Calls(cs)) => cs,
        _ => Vec::new(),
    };
    Ok(Seen {
        defs,
        bodies,
        exported,
        calls,
        call_total,
    })
}

/// Compares `symbol` in versions `a` and `b`; `page` gives the path prefix and active
/// configuration both are read with.
pub fn compare(root: &str, symbol: &str, a: &Side<'_>, b: &Side<'_>, page: &Page) -> Envelope {
    const TOOL: &str = "compare_versions";
    let (sa, sb) = match (look(a, symbol, page), look(b, symbol, page)) {
        (Ok(sa), Ok(sb)) => (sa, sb),
        (Err(e), _) | (_, Err(e)) => return Envelope::error(TOOL, root, e),
    };
    let mut env = Envelope::new(TOOL, root);
    if sa.defs.is_empty() && sb.defs.is_empty() {
        env.error = Some(format!(
            "no symbol '{symbol}' in {} nor in {}",
            a.label(),
            b.label()
        ));
        env.next_tools = vec!["search_symbols"];
        return env;
    }
    let definitions = pair(&sa, &sb, &a.label(), &b.label());
    let callers = callers_change(&sa, &sb);
    env.total = definitions.len() as u64;
    env.limit = MAX_READ;
    env.results = Some(Results::Compare(Box::new(Comparison {
        symbol: symbol.to_string(),
        a: a.rev.clone(),
        b: b.rev.clone(),
        definitions,
        exported: [sa.exported, sb.exported],
        callers,
    })));
    env.next_tools = vec!["get_symbol_body", "find_callers"];
    env
}

fn at(r: &Record) -> DefAt {
    DefAt {
        path: r.path.clone(),
        line: r.line,
        kind: r.kind.clone(),
        signature: r.signature.clone(),
        guard: r.guard.clone(),
    }
}

/// The body of the definition at `r`'s path and line, if `seen` read one.
fn body_of<'s>(seen: &'s Seen, r: &Record) -> Option<&'s str> {
    seen.bodies
        .iter()
        .find(|b| b.path == r.path && b.line == r.line)
        .and_then(|b| b.body.as_deref())
}

/// Pairs the definitions: same kind and file first, then same kind in another file (moved),
/// then what is left of both in order (kind changed); the rest were added or removed.
fn pair(sa: &Seen, sb: &Seen, la: &str, lb: &str) -> Vec<DefChange> {
    let mut used_b = vec![false; sb.defs.len()];
    let mut pairs: Vec<(Option<usize>, Option<usize>)> = Vec::new();
    let mut left_a = Vec::new();
    for (i, ra) in sa.defs.iter().enumerate() {
        let j = (0..sb.defs.len())
            .find(|&j| !used_b[j] && sb.defs[j].kind == ra.kind && sb.defs[j].path == ra.path);
        match j {
            Some(j) => {
                used_b[j] = true;
                pairs.push((Some(i), Some(j)));
            }
            None => left_a.push(i),
        }
    }
    let mut still_a = Vec::new();
    for i in left_a {
        let kind = &sa.defs[i].kind;
        match (0..sb.defs.len()).find(|&j| !used_b[j] && &sb.defs[j].kind == kind) {
            Some(j) => {
                used_b[j] = true;
                pairs.push((Some(i), Some(j)));
            }
            None => still_a.push(i),
        }
    }
    let mut free_b = (0..sb.defs.len())
        .filter(|&j| !used_b[j])
        .collect::<Vec<_>>()
        .into_iter();
    for i in still_a {
        pairs.push((Some(i), free_b.next()));
    }
    pairs.extend(free_b.map(|j| (None, Some(j))));
    pairs
        .into_iter()
        .map(|(i, j)| {
            change(
                i.map(|i| &sa.defs[i]),
                j.map(|j| &sb.defs[j]),
                sa,
                sb,
                la,
                lb,
            )
        })
        .collect()
}

fn change(
    ra: Option<&Record>,
    rb: Option<&Record>,
    sa: &Seen,
    sb: &Seen,
    la: &str,
    lb: &str,
) -> DefChange {
    let (Some(ra), Some(rb)) = (ra, rb) else {
        return DefChange {
            status: if ra.is_some() { "removed" } else { "added" },
            a: ra.map(at),
            b: rb.map(at),
            changed: Vec::new(),
            diff: None,
            diff_cut: None,
        };
    };
    let mut changed = Vec::new();
    if ra.signature != rb.signature {
        changed.push("signature");
    }
    if ra.guard != rb.guard {
        changed.push("guard");
    }
    if ra.kind != rb.kind {
        changed.push("kind");
    }
    let (body_a, body_b) = (body_of(sa, ra), body_of(sb, rb));
    let (mut diff, mut diff_cut) = (None, None);
    if body_a != body_b {
        changed.push("body");
        let (d, cut) = unified(
            body_a.unwrap_or(""),
            body_b.unwrap_or(""),
            (&format!("{la} {}", ra.path), ra.line),
            (&format!("{lb} {}", rb.path), rb.line),
        );
        diff = Some(d);
        diff_cut = cut;
    }
    let status = if ra.path != rb.path {
        "moved"
    } else if changed.is_empty() {
        "same"
    } else {
        "changed"
    };
    DefChange {
        status,
        a: Some(at(ra)),
        b: Some(at(rb)),
        changed,
        diff,
        diff_cut,
    }
}

/// The unified diff of two bodies, hunks numbered by the files' lines (the bodies start at
/// `line_a` and `line_b`), cut at [`MAX_DIFF_LINES`] lines (the lines in all when cut).
fn unified(
    a: &str,
    b: &str,
    (from, line_a): (&str, u32),
    (to, line_b): (&str, u32),
) -> (String, Option<usize>) {
    use similar::ChangeTag;
    // Bodies end without a newline; a diff of their lines need not say so.
    let (a, b) = (format!("{a}\n"), format!("{b}\n"));
    let diff = similar::TextDiff::from_lines(&a, &b);
    let mut lines = vec![format!("--- {from}"), format!("+++ {to}")];
    for group in diff.grouped_ops(3) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let old = first.old_range().start..last.old_range().end;
        let new = first.new_range().start..last.new_range().end;
        lines.push(format!(
            "@@ -{},{} +{},{} @@",
            line_a as usize + old.start,
            old.len(),
            line_b as usize + new.start,
            new.len()
        ));
        for op in &group {
            for change in diff.iter_changes(op) {
                let sign = match change.tag() {
                    ChangeTag::Equal => ' ',
                    ChangeTag::Delete => '-',
                    ChangeTag::Insert => '+',
                };
                lines.push(format!("{sign}{}", change.value().trim_end_matches('\n')));
            }
        }
    }
    let total = lines.len();
    let mut text: String = lines
        .iter()
        .take(MAX_DIFF_LINES)
        .flat_map(|l| [l.as_str(), "\n"])
        .collect();
    if total <= MAX_DIFF_LINES {
        return (text, None);
    }
    text.push_str(&format!("… ({} more lines)\n", total - MAX_DIFF_LINES));
    (text, Some(total))
}

/// Callers as (file, function) sets: added are the second's alone, removed the first's alone.
fn callers_change(sa: &Seen, sb: &Seen) -> CallersChange {
    let set = |s: &Seen| -> BTreeSet<Caller> {
        s.calls
            .iter()
            .map(|c| Caller {
                path: c.path.clone(),
                caller: c.caller.clone(),
            })
            .collect()
    };
    let (ca, cb) = (set(sa), set(sb));
    let added: Vec<Caller> = cb.difference(&ca).cloned().collect();
    let removed: Vec<Caller> = ca.difference(&cb).cloned().collect();
    CallersChange {
        a_total: sa.call_total,
        b_total: sb.call_total,
        added_total: added.len() as u64,
        removed_total: removed.len() as u64,
        added: added.into_iter().take(MAX_CALLERS_LISTED).collect(),
        removed: removed.into_iter().take(MAX_CALLERS_LISTED).collect(),
        complete: sa.calls.len() as u64 >= sa.call_total && sb.calls.len() as u64 >= sb.call_total,
    }
}
