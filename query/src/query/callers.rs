//! find_callers: the call sites of a function, each with its enclosing function and source line.

use std::collections::HashSet;

use super::lookup::{def_lines, not_found, role_of, valid_name};
use super::verdict::Verdict;
use super::{indirect, Query};
use crate::envelope::{CallSite, Envelope, Hidden, Results};
use knav_index::segment::Posting;

/// The tool this module answers (its MCP name, and `Ask::tool`'s).
pub const TOOL: &str = "find_callers";

/// A call site kept: `(segment, posting, active)`, `active` as [`CallSite::active`].
pub type Call = (usize, Posting, Option<Option<bool>>);

/// The calls among `postings` (a name's, `lines` its definitions' lines), in path and line
/// order, one a line; those the active configuration does not build are split out, each with
/// its reason.
pub fn direct_calls(
    q: &Query<'_>,
    postings: Vec<(usize, Posting)>,
    lines: &[(usize, u32, u32, knav_ctags::Kind)],
) -> (Vec<Call>, Vec<Hidden>) {
    let mut calls: Vec<_> = postings
        .into_iter()
        .filter(|(s, p)| role_of(p, lines, *s) == "call")
        .collect();
    calls.sort_by(|a, b| {
        q.path(a.0, a.1.file)
            .cmp(q.path(b.0, b.1.file))
            .then(a.1.line.cmp(&b.1.line))
    });
    calls.dedup_by(|a, b| a.0 == b.0 && a.1.file == b.1.file && a.1.line == b.1.line);
    let mut kept = Vec::with_capacity(calls.len());
    let mut hidden = Vec::new();
    for (s, p) in calls {
        match q.verdict(s, p.file, p.line) {
            Some(Verdict::Hidden(reason)) => hidden.push(Hidden {
                path: q.path(s, p.file).to_string(),
                line: p.line,
                reason: reason.to_string(),
            }),
            Some(Verdict::Live) => kept.push((s, p, Some(Some(true)))),
            Some(Verdict::Unknown) => kept.push((s, p, Some(None))),
            None => kept.push((s, p, None)),
        }
    }
    (kept, hidden)
}

/// A call through a pointer kept: the call and `active` as [`CallSite::active`].
pub type IndirectSite = (indirect::IndirectCall, Option<Option<bool>>);

/// The calls through function pointers that can reach `symbol`; one whose site or registration
/// the active configuration does not build is pushed to `hidden` instead (once a line). Those
/// through a member whose struct is not known for sure ([`indirect::FIELD_NAME`],
/// [`indirect::TAG`]) are kept with `include_uncertain`, else only counted: the count is the
/// second value.
pub fn indirect_calls(
    q: &Query<'_>,
    symbol: &str,
    include_uncertain: bool,
    hidden_out: &mut Vec<Hidden>,
) -> (Vec<IndirectSite>, usize) {
    let mut indirect = Vec::new();
    let mut guesses = 0;
    for c in indirect::callers_through_pointers(q, symbol) {
        let (s, file, line) = c.at;
        let hidden = |at: indirect::At| match q.verdict(at.0, at.1, at.2) {
            Some(Verdict::Hidden(reason)) => Some((at, reason)),
            _ => None,
        };
        if let Some(((s, file, line), reason)) =
            hidden(c.at).or_else(|| c.registered_at.and_then(hidden))
        {
            let path = q.path(s, file);
            // Several calls through one member hidden by one registration: listed once.
            if !hidden_out.iter().any(|h| h.path == path && h.line == line) {
                hidden_out.push(Hidden {
                    path: path.to_string(),
                    line,
                    reason: reason.to_string(),
                });
            }
            continue;
        }
        if !include_uncertain && c.certainty != indirect::TYPE {
            guesses += 1;
            continue;
        }
        let active = match q.verdict(s, file, line) {
            Some(Verdict::Live) => Some(Some(true)),
            Some(_) => Some(None),
            None => None,
        };
        indirect.push((c, active));
    }
    (indirect, guesses)
}

/// The words that say how many guesses an answer left out (calls through a member whose
/// struct is not known for sure: [`indirect::FIELD_NAME`], [`indirect::TAG`]), and how to see
/// them.
pub fn guesses_left_out(n: usize) -> String {
    format!(
        "+{n} {} left out (a call through a member whose struct is not known for sure): \
         include_uncertain lists {}",
        if n == 1 { "guess" } else { "guesses" },
        if n == 1 { "it" } else { "them" }
    )
}

/// Answers find_callers for `symbol`; calls through members whose struct is not known for
/// sure ([`indirect::FIELD_NAME`], [`indirect::TAG`]) are listed with `include_uncertain`, else
/// counted.
pub fn find_callers(q: &Query<'_>, symbol: &str, include_uncertain: bool) -> Envelope {
    if !valid_name(symbol) {
        return q.envelope_error(TOOL, format!("'{symbol}' is not a C identifier"));
    }
    let defs = q.definitions(symbol);
    let lines = def_lines(&defs);
    let all = q.postings(symbol);
    if all.is_empty() && defs.is_empty() {
        return not_found(q, TOOL, symbol);
    }
    let postings: Vec<_> = all
        .into_iter()
        .filter(|(s, p)| q.wanted_file(*s, p.file))
        .collect();
    let mut env = q.envelope(TOOL);
    let (calls, hidden) = direct_calls(q, postings, &lines);
    let narrow = narrowing(q, &calls);
    let direct = calls.len();
    env.hidden = hidden;
    // Then the calls through pointers.
    let (indirect, guesses) = indirect_calls(q, symbol, include_uncertain, &mut env.hidden);
    env.next_tools = vec!["get_symbol_body", "find_callees", "find_references"];
    if calls.is_empty() && indirect.is_empty() {
        env.message = Some(match guesses {
            0 => format!(
                "no calls to '{symbol}' found (it may be used through a function pointer; \
                 find_references lists every mention)"
            ),
            n => format!("no calls to '{symbol}' found; {}", guesses_left_out(n)),
        });
        env.results = Some(Results::Calls(Vec::new()));
        env.next_tools = vec!["find_references"];
        // A driver's probe no code calls by name: the hardware that reaches it.
        env.devices = super::device::probe_devices(q, symbol);
        return env;
    }
    if !indirect.is_empty() || guesses > 0 {
        let mut m = format!(
            "{} direct calls, {} through function pointers",
            calls.len(),
            indirect.len()
        );
        if guesses > 0 {
            m.push_str("; ");
            m.push_str(&guesses_left_out(guesses));
        }
        env.message = Some(m);
    }
    let site = |s, file, line, active, word: &str| call_site(q, (s, file, line), active, word);
    let rows: Vec<Row> = calls
        .into_iter()
        .map(|(s, p, active)| Row::Direct(s, p.file, p.line, active))
        .chain(
            indirect
                .into_iter()
                .map(|(c, active)| Row::Indirect(c, active)),
        )
        .collect();
    let page = q.paginate(&mut env, rows);
    if let (true, Some((files, narrow))) = (env.truncated, narrow) {
        env.message = Some(match env.message.take() {
            Some(m) => format!("{m}; in {files} files; {narrow}"),
            None => format!("{direct} direct calls in {files} files; {narrow}"),
        });
    }
    // Read ahead a chunk of rows' files at a time, then let go of them.
    let mut sites = Vec::with_capacity(page.len());
    for chunk in page.chunks(super::snippet::READ_AHEAD_ROWS) {
        q.read_ahead(&super::snippet::file_spans(chunk.iter().map(|row| {
            let (s, file, line) = match row {
                Row::Direct(s, file, line, _) => (*s, *file, *line),
                Row::Indirect(c, _) => c.at,
            };
            // The language server places the caller's name too: its window starts there.
            let first = match q.page.places_only {
                true => q
                    .enclosing_function_at(s, file, line)
                    .map_or(line, |(_, at)| at),
                false => line,
            };
            (s, file, first, line)
        })));
        sites.extend(chunk.iter().map(|row| match row {
            Row::Direct(s, file, line, active) => site(*s, *file, *line, *active, symbol),
            Row::Indirect(c, active) => {
                let (s, file, line) = c.at;
                let member = c.via.rsplit('.').next().unwrap_or(&c.via);
                CallSite {
                    via: Some(c.via.clone()),
                    registered_at: c
                        .registered_at
                        .map(|(s, f, l)| format!("{}:{l}", q.path(s, f))),
                    certainty: Some(c.certainty),
                    ..site(s, file, line, *active, member)
                }
            }
        }));
        q.forget_windows();
    }
    // A driver's probe: the hardware that reaches it, when the pointer calls say so.
    if sites
        .iter()
        .any(|s| s.via.as_deref().is_some_and(|v| v.ends_with(".probe")))
    {
        env.devices = super::device::probe_devices(q, symbol);
    }
    env.results = Some(Results::Calls(sites));
    env
}

/// The call site at `(segment, file, line)` of `word` (the name called, or the member called
/// through). With [`Page::places_only`](super::Page) it says where the word and its caller's
/// name are on their lines and leaves out the line and its guard.
fn call_site(
    q: &Query<'_>,
    (s, file, line): (usize, u32, u32),
    active: Option<Option<bool>>,
    word: &str,
) -> CallSite {
    let places_only = q.page.places_only;
    let caller = q.enclosing_function_at(s, file, line);
    let caller_at = match (&caller, places_only) {
        (Some((name, at)), true) => q.word_col(s, file, *at, name, 0).map(|(c, u)| (*at, c, u)),
        _ => None,
    };
    CallSite {
        caller: caller.map(|(name, _)| name),
        path: q.path(s, file).to_string(),
        line,
        snippet: match places_only {
            true => String::new(),
            false => q.snippet_at(s, file, line),
        },
        guard: match places_only {
            true => None,
            false => q.guard(s, file, line),
        },
        active,
        via: None,
        registered_at: None,
        certainty: None,
        at_col: match places_only {
            true => q.word_col(s, file, line, word, 0),
            false => None,
        },
        caller_at,
    }
}

/// For a name called from many places: in how many files, and the `path_prefix` that
/// narrows the calls to the directory holding the most (`net/` for `kfree_skb`), one level
/// below the prefix asked.
fn narrowing(q: &Query<'_>, calls: &[Call]) -> Option<(usize, String)> {
    let files: HashSet<(usize, u32)> = calls.iter().map(|(s, p, _)| (*s, p.file)).collect();
    let mut by_dir: Vec<(&str, usize)> = Vec::new();
    for (s, p, _) in calls {
        let path = q.path(*s, p.file);
        let asked = q
            .page
            .path_prefix
            .as_deref()
            .unwrap_or("")
            .trim_start_matches("./");
        // One directory below the prefix asked (or the top one).
        let rest = path.strip_prefix(asked).unwrap_or(path);
        let Some(cut) = rest.find('/') else { continue };
        let dir = &path[..path.len() - rest.len() + cut + 1];
        match by_dir.iter_mut().find(|(d, _)| *d == dir) {
            Some((_, n)) => *n += 1,
            None => by_dir.push((dir, 1)),
        }
    }
    let (dir, n) = by_dir
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(a.0)))?;
    Some((
        files.len(),
        format!("path_prefix={dir} narrows them to its {n}"),
    ))
}

/// A call site kept: a direct call, or a call through a pointer.
enum Row {
    Direct(usize, u32, u32, Option<Option<bool>>),
    Indirect(indirect::IndirectCall, Option<Option<bool>>),
}
