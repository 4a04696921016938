//! get_symbol_body: the source text of a definition.

use super::lookup::{not_found, valid_name, Found};
use super::span::{function_span, made_by, Invocation};
use super::Query;
use crate::envelope::{Envelope, Results};
use knav_c::definers::{define_named, pieces_text, Learned};
use knav_ctags::Kind;

/// Bodies are cut at this many lines.
pub const MAX_BODY_LINES: u32 = 300;
/// The tool this module answers (its MCP name, and `Ask::tool`'s).
pub const TOOL: &str = "get_symbol_body";

/// Bodies shown when the caller does not say.
pub const DEFAULT_BODIES: u64 = 3;
/// Bodies shown at most: `max_definitions` above it is cut, and the answer says so.
pub const MAX_BODIES: u64 = 50;
/// Bytes of one body shown at most (a generated file's function can be one 60 MB line).
pub const MAX_BODY_BYTES: usize = 64 << 10;
/// Bytes of all the bodies of one answer at most.
pub const MAX_ANSWER_BODY_BYTES: usize = 256 << 10;
/// A body's line is cut at this many characters (code is read whole up to there).
pub const MAX_BODY_LINE_CHARS: usize = 1000;

/// `text` as a body to show: each line cut at [`MAX_BODY_LINE_CHARS`] characters (with `…`),
/// the whole at a line's end within `budget` bytes; `skipped` prefixes a `…` (the first line
/// started before the text). True when lines were left out for the budget.
fn fit(text: &[u8], skipped: bool, budget: usize) -> (String, bool) {
    let mut out = String::new();
    if skipped {
        out.push('…');
    }
    for (n, line) in text.split(|&b| b == b'\n').enumerate() {
        // A char is at most 4 bytes: this prefix holds every char shown.
        let head = &line[..line.len().min(MAX_BODY_LINE_CHARS * 4 + 4)];
        let head = String::from_utf8_lossy(head);
        let mut shown: String = head.chars().take(MAX_BODY_LINE_CHARS).collect();
        if shown.len() < head.len() || head.len() < line.len() {
            shown.push('…');
        }
        let sep = usize::from(n > 0);
        if out.len() + sep + shown.len() > budget {
            if n == 0 {
                // The first line alone is over the budget: as much of it as fits.
                let mut cut: String = String::new();
                for c in shown.chars() {
                    if out.len() + cut.len() + c.len_utf8() + '…'.len_utf8() > budget {
                        break;
                    }
                    cut.push(c);
                }
                out.push_str(&cut);
                out.push('…');
            }
            return (out, true);
        }
        if sep == 1 {
            out.push('\n');
        }
        out.push_str(&shown);
    }
    (out, false)
}

/// Answers get_symbol_body for `symbol`, with at most `max_definitions` bodies (0: 3).
pub fn get_symbol_body(q: &Query<'_>, symbol: &str, max_definitions: u64) -> Envelope {
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
    let mut records = Vec::with_capacity(page.len());
    let answer_bytes = match q.page.body_bytes {
        0 => MAX_ANSWER_BODY_BYTES,
        n => n.min(MAX_ANSWER_BODY_BYTES),
    };
    let mut left = answer_bytes;
    for (f, active) in &page {
        let end = f.def.end_line.unwrap_or(f.def.line);
        let cut = end.saturating_sub(f.def.line) + 1 > MAX_BODY_LINES;
        let last = if cut {
            f.def.line + MAX_BODY_LINES - 1
        } else {
            end
        };
        // A name a macro made: the whole invocation, and how the macro makes it.
        let made = made_by(q, f);
        let (end, cut, last) = match &made {
            Some(inv) => (inv.end, false, inv.end),
            None => (end, cut, last),
        };
        let budget = left.min(MAX_BODY_BYTES);
        let (body, over) = match &made {
            Some(inv) => fit(&inv.text, false, budget),
            None => source_body(q, f, last, budget),
        };
        if over && budget < MAX_BODY_BYTES && !records.is_empty() {
            // The answer is full: this body starts the next page instead of showing a stub.
            break;
        }
        left -= body.len().min(left);
        if let Some(inv) = &made {
            env.warn(made_note(q, f, inv));
        }
        let mut r = q.def_record(f);
        if q.page.active.is_some() {
            r.active = Some(*active);
        }
        r.end_line = Some(end);
        r.body = Some(body);
        r.body_truncated = (cut || over).then_some(true);
        r.body_cut = if over {
            Some(format!("{budget} bytes"))
        } else {
            cut.then(|| format!("{MAX_BODY_LINES} lines"))
        };
        if over {
            env.warn(format!(
                "the body of {} at {}:{} is cut at {budget} bytes; read lines {}-{end} of the file for the rest",
                f.def.name, r.path, f.def.line, f.def.line
            ));
        }
        records.push(r);
    }
    if records.len() < page.len() {
        env.truncated = true;
        env.warn(format!(
            "bodies stop at {answer_bytes} bytes an answer: {} of {} on this page; offset={} for the rest",
            records.len(),
            page.len(),
            env.offset.saturating_add(records.len() as u64)
        ));
    }
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

/// The text of `f` on its lines up to `last`, fitted to `budget` bytes ([`fit`]): a function
/// from its name to its closing `}` ([`function_span`]), read once (the record's snippet comes
/// from the same read); true when lines were left out for the budget.
fn source_body(q: &Query<'_>, f: &Found<'_>, last: u32, budget: usize) -> (String, bool) {
    let braces = f.def.kind == Kind::Function;
    let span = q
        .text_at(f.seg, f.def.file, f.def.line, last)
        .and_then(|s| {
            function_span(
                &s,
                f.def.line,
                last,
                f.def.name,
                braces,
                MAX_BODY_LINE_CHARS,
            )
        });
    match &span {
        Some(span) => fit(&span.text, span.skipped > 0, budget),
        None => (String::new(), false),
    }
}

/// `#define`s followed from the macro invoked to the one that declares the name, at most.
const MAX_CHAIN: usize = 4;
/// Definitions of one macro tried at each step of the chain.
const MAX_DEFINES: usize = 8;
/// `#define`s read in looking for one chain, at most: each step multiplies the macros a
/// tree's `#define`s call, so the search stops here, saying so.
const MAX_DEFINES_READ: usize = 256;

/// One search of [`macro_chain`]: the steps (macro, arguments) taken, each with the least
/// depth it was taken at, and the `#define`s read.
#[derive(Default)]
struct ChainSearch {
    taken: std::collections::HashMap<(String, Vec<String>), usize>,
    read: usize,
}

impl ChainSearch {
    /// True when the search stopped at [`MAX_DEFINES_READ`].
    fn gave_up(&self) -> bool {
        self.read >= MAX_DEFINES_READ
    }
}

/// What says how `f` is made by the invocation `inv`: the invocation (its first argument when
/// the rest is long) and its place, then each `#define` from the macro invoked to the one whose
/// text declares the name (`#define PAGEFLAG` → `TESTPAGEFLAG` → `FOLIO_TEST_FLAG`), or the
/// macro's `#define` alone when that chain is not found.
fn made_note(q: &Query<'_>, f: &Found<'_>, inv: &Invocation) -> String {
    let all = inv.args.join(", ");
    let args = match inv.args.first() {
        Some(a) if all.len() > 60 => format!("{a}, …"),
        _ => all,
    };
    let mut note = format!(
        "{} is made by {}({args}) at {}:{}",
        f.def.name,
        inv.macro_name,
        q.path(f.seg, f.def.file),
        f.def.line
    );
    let mut search = ChainSearch::default();
    match macro_chain(q, &mut search, &inv.macro_name, &inv.args, f.def.name, 0) {
        Some(chain) => {
            note.push_str(&format!("; #define {}", chain.join(" → ")));
            if chain.len() > 1 {
                note.push_str(" declares it");
            }
        }
        None => {
            if let Some(d) = macro_defines(q, &inv.macro_name).first() {
                let path = q.path(d.seg, d.def.file);
                note.push_str(&format!(
                    "; #define {} at {path}:{}",
                    d.def.name, d.def.line
                ));
            }
            if search.gave_up() {
                note.push_str(&format!(
                    " (the #define that declares it not found: {MAX_DEFINES_READ} #defines read)"
                ));
            }
        }
    }
    note
}

/// The `#define`s of `name`, best first, at most [`MAX_DEFINES`].
fn macro_defines<'a>(q: &Query<'a>, name: &'a str) -> Vec<Found<'a>> {
    let mut defs = q.definitions(name);
    defs.retain(|d| d.def.kind == Kind::Macro);
    defs.truncate(MAX_DEFINES);
    defs
}

/// The `#define`s from `macro_name` invoked with `args` to the one whose text declares `name`,
/// each as `MACRO at PATH:LINE`; `None` when none within [`MAX_CHAIN`] does, or when
/// `search` has read [`MAX_DEFINES_READ`] `#define`s. A step taken before is taken again only
/// nearer the start (where more of the chain is left to find).
fn macro_chain(
    q: &Query<'_>,
    search: &mut ChainSearch,
    macro_name: &str,
    args: &[String],
    name: &str,
    depth: usize,
) -> Option<Vec<String>> {
    if depth >= MAX_CHAIN {
        return None;
    }
    let step = (macro_name.to_string(), args.to_vec());
    if search.taken.get(&step).is_some_and(|&at| at <= depth) {
        return None;
    }
    search.taken.insert(step, depth);
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    for d in macro_defines(q, macro_name) {
        if search.gave_up() {
            return None;
        }
        search.read += 1;
        let Some(learned) = learned_define(q, &d) else {
            continue;
        };
        let place = format!(
            "{macro_name} at {}:{}",
            q.path(d.seg, d.def.file),
            d.def.line
        );
        if (learned.templates().iter()).any(|t| t.name(&a).as_deref() == Some(name)) {
            return Some(vec![place]);
        }
        for (callee, pieces) in learned.calls() {
            let next: Vec<String> = (pieces.iter())
                .map(|p| (p.as_deref()).and_then(|p| pieces_text(p, &a)))
                .map(Option::unwrap_or_default)
                .collect();
            if let Some(mut rest) = macro_chain(q, search, callee, &next, name, depth + 1) {
                rest.insert(0, place);
                return Some(rest);
            }
        }
    }
    None
}

/// What the `#define` `d` declares from its parameters, read from its lines.
fn learned_define(q: &Query<'_>, d: &Found<'_>) -> Option<Learned> {
    let end = q.macro_shape(d).0.unwrap_or(d.def.line);
    let src = q.text_at(d.seg, d.def.file, d.def.line, end)?;
    let text = src.lines(d.def.line, end);
    let first = src.line(d.def.line)?;
    let at = super::span::find_name(first, 0, d.def.name.as_bytes())?;
    define_named(text.as_bytes(), at).map(|(_, l)| l)
}

/// The bodies of a `CONFIG_` symbol's Kconfig entries: each `config X` block, help included.
fn kconfig_bodies(
    q: &Query<'_>,
    entries: Vec<knav_index::buildfiles::KconfigEntry>,
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
            let text = q
                .source(&k.path)
                .map(|s| s.lines(first, last))
                .unwrap_or_default();
            let (body, over) = fit(text.as_bytes(), false, MAX_BODY_BYTES);
            r.body = Some(body);
            r.body_truncated = (last < end || over).then_some(true);
            r.body_cut = if over {
                Some(format!("{MAX_BODY_BYTES} bytes"))
            } else {
                (last < end).then(|| format!("{MAX_BODY_LINES} lines"))
            };
            r
        })
        .collect();
    env.results = Some(Results::Records(records));
    env.next_tools = vec!["find_references"];
    env
}
