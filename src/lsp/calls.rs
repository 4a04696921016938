//! The call hierarchy: `textDocument/prepareCallHierarchy` (an item per function definition of
//! the name under the cursor), `callHierarchy/incomingCalls` (find_callers: each calling
//! function with its call sites, a call through a function pointer marked with the member it
//! goes through) and `callHierarchy/outgoingCalls` (find_callees: each called function where it
//! is defined, with the lines that call it).
//!
//! An item's `data` carries what the next requests need, `{name, path, line}` (`name` absent
//! for an item nothing can be asked of: a call at file scope, a member called through a
//! pointer), so they never read a cursor again. Calls at file scope (an initializer, the body
//! of a `#define`) come from an item named `(file scope)`, as the CLI names them (cscope's
//! `<global>`), of kind File, at the first such call. Calls through a
//! member whose struct is not known (guesses by the member's name) are left out, as the CLI
//! leaves them out by default.

use std::collections::HashMap;

use lsp_types::{
    CallHierarchyIncomingCall, CallHierarchyIncomingCallsParams, CallHierarchyItem,
    CallHierarchyOutgoingCall, CallHierarchyOutgoingCallsParams, CallHierarchyPrepareParams, Range,
    SymbolKind,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::envelope::{CallSite, Callee, Callees, Record, Results};
use crate::index::store::Snapshot;
use crate::query::Page;
use crate::request::Ask;
use crate::serve::state::Tree;
use knav_ctags::Kind;

use super::session::{Failure, Session, Texts};

/// The requests of the group `calls`.
pub const METHODS: &[&str] = &[
    "textDocument/prepareCallHierarchy",
    "callHierarchy/incomingCalls",
    "callHierarchy/outgoingCalls",
];

/// The name of an item for calls outside any function, as the CLI prints it.
pub const FILE_SCOPE: &str = "(file scope)";

/// Bodies get_symbol_body is asked for to find the one find_callees read.
const MAX_BODIES: u64 = 5;

/// Pages of find_callees read at most for one function.
const MAX_CALLEE_PAGES: usize = 50;

/// What an item carries to the next requests.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Data {
    /// The function (absent: nothing to ask of the item).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Its root-relative path.
    pub path: String,
    /// Its 1-based line.
    pub line: u32,
    /// A caller through a pointer: the member the call goes through (`STRUCT.FIELD`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
}

/// A caller of incoming calls: its path, function (`None` at file scope) and the member the
/// calls go through (`None` for direct calls).
type CallerKey = (String, Option<String>, Option<String>);

/// Where an item is and what it says.
struct Place<'a> {
    name: String,
    kind: SymbolKind,
    path: &'a str,
    line: u32,
    /// The text its range covers on the line (the whole line when not found).
    word: &'a str,
    /// Where `word` is on the line, when the answer read it: 1-based byte column, 0-based
    /// UTF-16 column (the line is not read again).
    at: Option<(u32, u32)>,
    detail: Option<String>,
    data: Data,
}

/// `textDocument/prepareCallHierarchy`: an item per function definition of the name under the
/// cursor (its prototypes when it has no body in the tree); `null` when it is no function.
pub fn prepare(s: &mut Session, params: Value) -> Result<Value, Failure> {
    let p: CallHierarchyPrepareParams = serde_json::from_value(params).map_err(Failure::params)?;
    let at = s.cursor(&p.text_document_position_params)?;
    let defs = super::nav::definitions(s, &at);
    let of_kind = |k: Kind| -> Vec<&Record> {
        defs.iter()
            .filter(|r| r.kind.as_deref().map(Kind::from_name) == Some(k))
            .collect()
    };
    let mut chosen = of_kind(Kind::Function);
    if chosen.is_empty() {
        chosen = of_kind(Kind::Prototype);
    }
    if chosen.is_empty() {
        return Ok(Value::Null);
    }
    let mut texts = Texts::default();
    let items: Vec<CallHierarchyItem> = chosen
        .into_iter()
        .filter_map(|r| {
            let place = Place {
                name: r.symbol.clone(),
                kind: SymbolKind::FUNCTION,
                path: &r.path,
                line: r.line,
                word: &r.symbol,
                at: None,
                detail: Some(where_with_guard(r)),
                data: Data {
                    name: Some(r.symbol.clone()),
                    path: r.path.clone(),
                    line: r.line,
                    via: None,
                },
            };
            item(s, &at.tree, &mut texts, &place)
        })
        .collect();
    to_value(items)
}

/// `callHierarchy/incomingCalls`: find_callers of the item's function, one item per calling
/// function and way of calling (direct, or through each member), its call sites as
/// `fromRanges`.
pub fn incoming(s: &mut Session, params: Value) -> Result<Value, Failure> {
    let p: CallHierarchyIncomingCallsParams =
        serde_json::from_value(params).map_err(Failure::params)?;
    let Some(name) = data_of(&p.item).name else {
        return to_value(Vec::<CallHierarchyIncomingCall>::new());
    };
    let (tree, snap, _) = s.tree_of(&p.item.uri)?;
    let page = s.page(&tree)?;
    let ask = Ask::Callers {
        symbol: name.clone(),
        include_uncertain: false,
    };
    let places = Page {
        places_only: true,
        ..page.clone()
    };
    let env = s.all(&snap, &places, &ask);
    // The answer's own word (calls through guessed members left out) and its error (a name
    // the index does not know) go to the client's log: the hierarchy shows no calls.
    s.notes.extend(env.message.clone());
    s.notes.extend(env.error.clone());
    let sites = match env.results {
        Some(Results::Calls(c)) => c,
        _ => Vec::new(),
    };
    // Grouped by (path, caller, via), in the answer's order.
    let mut groups: Vec<(CallerKey, Vec<CallSite>)> = Vec::new();
    let mut group_of: HashMap<CallerKey, usize> = HashMap::new();
    for c in sites {
        let key = (c.path.clone(), c.caller.clone(), c.via.clone());
        match group_of.get(&key) {
            Some(&i) => groups[i].1.push(c),
            None => {
                group_of.insert(key.clone(), groups.len());
                groups.push((key, vec![c]));
            }
        }
    }
    let mut texts = Texts::default();
    // Each caller's definitions, looked up once whatever the number of its calls and files.
    let mut defs: HashMap<String, Vec<Held>> = HashMap::new();
    let q = crate::query::Query::new(&snap, page.clone());
    let mut out: Vec<CallHierarchyIncomingCall> = Vec::with_capacity(groups.len());
    for ((path, caller, via), calls) in groups {
        let first = calls[0].line;
        let line = match (&caller, calls[0].caller_at) {
            // Where the answer found the enclosing function's name.
            (Some(_), Some((line, col, utf16))) => Some((line, Some((col, utf16)))),
            (Some(c), None) => {
                let places = defs
                    .entry(c.clone())
                    .or_insert_with(|| function_places(&q, c));
                holding(places, &path, first)
            }
            (None, _) => None,
        };
        let place = caller_place(&path, caller.as_deref(), via.as_deref(), &calls[0], line);
        let Some(from) = item(s, &tree, &mut texts, &place) else {
            continue;
        };
        let word = match &via {
            Some(v) => v.rsplit('.').next().unwrap_or(v),
            None => name.as_str(),
        };
        let from_ranges: Vec<Range> = calls
            .iter()
            .filter_map(|c| match c.at_col {
                Some((col, utf16)) => s
                    .location(
                        &tree,
                        &mut texts,
                        &path,
                        c.line,
                        col,
                        word.len(),
                        Some(utf16),
                    )
                    .map(|l| l.range),
                None => range_of(s, &tree, &mut texts, &path, c.line, word),
            })
            .collect();
        if !from_ranges.is_empty() {
            out.push(CallHierarchyIncomingCall { from, from_ranges });
        }
    }
    to_value(out)
}

/// `callHierarchy/outgoingCalls`: find_callees of the item's function, each callee as an item
/// where it is defined (at the call, said so, when the tree has no definition of it; a member
/// called through a pointer at the call, with the functions registered in it), the lines of
/// the body that call it as `fromRanges`.
pub fn outgoing(s: &mut Session, params: Value) -> Result<Value, Failure> {
    let p: CallHierarchyOutgoingCallsParams =
        serde_json::from_value(params).map_err(Failure::params)?;
    let data = data_of(&p.item);
    let Some(name) = data.name.clone() else {
        return to_value(Vec::<CallHierarchyOutgoingCall>::new());
    };
    let (tree, snap, _) = s.tree_of(&p.item.uri)?;
    let page = s.page(&tree)?;
    let Some(callees) = callees_of(s, &snap, &page, &name) else {
        // No body in the tree (said in the log): it calls nothing knav can show.
        return to_value(Vec::<CallHierarchyOutgoingCall>::new());
    };
    if (callees.path.as_str(), callees.line) != (data.path.as_str(), data.line) {
        s.notes.push(format!(
            "{name}: the calls of its definition at {}:{} (find_callees reads one definition), \
             not of {}:{}",
            callees.path, callees.line, data.path, data.line
        ));
    }
    let sites = call_sites(&tree, &snap, &page, &callees);
    let mut texts = Texts::default();
    let mut out: Vec<CallHierarchyOutgoingCall> = Vec::with_capacity(callees.callees.len());
    for c in &callees.callees {
        let place = callee_place(c, &callees.path);
        let Some(to) = item(s, &tree, &mut texts, &place) else {
            continue;
        };
        let word = c.symbol.rsplit('.').next().unwrap_or(&c.symbol);
        let mut lines: Vec<u32> = sites.get(word).cloned().unwrap_or_default();
        if !lines.contains(&c.line) {
            lines.insert(0, c.line);
        }
        let from_ranges: Vec<Range> = lines
            .iter()
            .filter_map(|&l| range_of(s, &tree, &mut texts, &callees.path, l, word))
            .collect();
        if !from_ranges.is_empty() {
            out.push(CallHierarchyOutgoingCall { to, from_ranges });
        }
    }
    to_value(out)
}

/// The item of the calls `first` starts, made in `path` by `caller` (at its definition's
/// `line`) or at file scope, through `via` or directly.
fn caller_place<'a>(
    path: &'a str,
    caller: Option<&'a str>,
    via: Option<&str>,
    first: &CallSite,
    line: Option<(u32, Option<(u32, u32)>)>,
) -> Place<'a> {
    let data = |name: Option<&str>, line: u32| Data {
        name: name.map(str::to_string),
        path: path.to_string(),
        line,
        via: via.map(str::to_string),
    };
    match caller {
        Some(c) => {
            let (line, at) = line.unwrap_or((first.line, None));
            Place {
                name: c.to_string(),
                kind: SymbolKind::FUNCTION,
                path,
                line,
                word: c,
                at,
                detail: Some(caller_detail(path, first)),
                data: data(Some(c), line),
            }
        }
        None => Place {
            name: FILE_SCOPE.to_string(),
            kind: SymbolKind::FILE,
            path,
            line: first.line,
            word: "",
            at: None,
            detail: Some(format!(
                "{} · file scope: an initializer or a macro's body",
                caller_detail(path, first)
            )),
            data: data(None, first.line),
        },
    }
}

/// Where callee `c` of a body in `caller_path` is shown: its definition, else the call.
fn callee_place<'a>(c: &'a Callee, caller_path: &'a str) -> Place<'a> {
    let member = c.registered.is_some() || c.guesses.is_some() || c.symbol.contains('.');
    let at_call = |detail: String| Place {
        name: c.symbol.clone(),
        kind: if member {
            SymbolKind::FIELD
        } else {
            SymbolKind::FUNCTION
        },
        path: caller_path,
        line: c.line,
        word: c.symbol.rsplit('.').next().unwrap_or(&c.symbol),
        at: None,
        detail: Some(detail),
        data: Data {
            name: (!member).then(|| c.symbol.clone()),
            path: caller_path.to_string(),
            line: c.line,
            via: None,
        },
    };
    if member {
        let mut detail = format!(
            "through a pointer: {} functions registered",
            c.registered.unwrap_or(0)
        );
        if !c.targets.is_empty() {
            detail.push_str(&format!(" ({})", c.targets.join(", ")));
        }
        if let Some(g) = c.guesses {
            detail.push_str(&format!("; {g} guessed by the member's name, not listed"));
        }
        return at_call(detail);
    }
    let Some((path, line)) = c.defined_at.as_deref().and_then(split_place) else {
        return at_call("not defined in the tree".to_string());
    };
    Place {
        name: c.symbol.clone(),
        kind: SymbolKind::FUNCTION,
        path,
        line,
        word: &c.symbol,
        at: None,
        detail: c.defined_at.clone(),
        data: Data {
            name: Some(c.symbol.clone()),
            path: path.to_string(),
            line,
            via: None,
        },
    }
}

/// Every page of find_callees of `name`; `None` (its error noted) when it has no body in the
/// tree.
fn callees_of(s: &mut Session, snap: &Snapshot, page: &Page, name: &str) -> Option<Callees> {
    let ask = Ask::Callees {
        symbol: name.to_string(),
        include_uncertain: false,
    };
    let mut all: Option<Callees> = None;
    let mut offset = 0;
    for _ in 0..MAX_CALLEE_PAGES {
        let next = Page {
            offset,
            ..page.clone()
        };
        let env = crate::request::answer(snap, next, &ask);
        s.notes.extend(env.warning.clone());
        let more = match (env.results, env.error) {
            (Some(Results::Callees(c)), _) => c,
            (_, Some(e)) => {
                s.notes.push(e);
                break;
            }
            _ => break,
        };
        let n = more.callees.len() as u64;
        match &mut all {
            Some(a) => a.callees.extend(more.callees),
            None => all = Some(more),
        }
        offset += n;
        if !env.truncated || n == 0 {
            break;
        }
    }
    all
}

/// The lines of the body of `callees`' function that call each name (a member called through
/// a pointer by its member's name), read from the body get_symbol_body gives with the
/// scanner that finds the calls.
fn call_sites(
    tree: &Tree,
    snap: &Snapshot,
    page: &Page,
    callees: &Callees,
) -> HashMap<String, Vec<u32>> {
    let ask = Ask::Body {
        symbol: callees.symbol.clone(),
        // find_callees reads the best function definition; the bodies come in the same order.
        max_definitions: MAX_BODIES,
    };
    let env = crate::request::answer(snap, page.clone(), &ask);
    let end = match env.results {
        Some(Results::Records(r)) => r
            .iter()
            .find(|r| r.path == callees.path && r.line == callees.line)
            .and_then(|r| r.end_line),
        _ => None,
    };
    let mut out: HashMap<String, Vec<u32>> = HashMap::new();
    let Some(end) = end else {
        return out;
    };
    let mut texts = Texts::default();
    let mut body = String::new();
    for l in callees.line..=end {
        body.push_str(
            &texts
                .line(tree, &callees.path, l.saturating_sub(1))
                .unwrap_or_default(),
        );
        body.push('\n');
    }
    let scanned = crate::scan::scan(body.as_bytes());
    for o in scanned
        .occurrences
        .iter()
        .filter(|o| o.role == crate::scan::Role::Call)
    {
        let name = body
            .get(o.start as usize..o.start as usize + o.len as usize)
            .unwrap_or_default();
        let lines = out.entry(name.to_string()).or_default();
        let line = (callees.line + o.line).saturating_sub(1);
        if !lines.contains(&line) {
            lines.push(line);
        }
    }
    out
}

/// The function definitions of `name`, `(path, line)`, from the index's definitions of the
/// name (not find_definition's whole answer, which reads each definition's source line and
/// checks its file, once per caller).
fn function_places(q: &crate::query::Query<'_>, name: &str) -> Vec<Held> {
    q.definitions(name)
        .into_iter()
        .filter(|f| f.def.kind == Kind::Function)
        .map(|f| {
            let (seg, file, line) = (f.seg, f.def.file, f.def.line);
            let at = q.word_col(seg, file, line, name, 0);
            (q.path(seg, file).to_string(), line, at)
        })
        .collect()
}

/// A function's definition: its path, line, and where its name is on the line (1-based byte
/// column, 0-based UTF-16 column) when it was read.
type Held = (String, u32, Option<(u32, u32)>);

/// Of `places`, the line of the one in `path` that holds the call at `line` (the nearest
/// above it).
fn holding(places: &[Held], path: &str, line: u32) -> Option<(u32, Option<(u32, u32)>)> {
    places
        .iter()
        .filter(|(p, l, _)| p == path && *l <= line)
        .map(|(_, l, at)| (*l, *at))
        .max_by_key(|(l, _)| *l)
}

/// A caller's detail: its path, and for a call through a pointer the member, where the
/// function was stored in it, and how sure the match is.
fn caller_detail(path: &str, c: &CallSite) -> String {
    let Some(via) = &c.via else {
        return path.to_string();
    };
    let mut d = format!("via {via}");
    if let Some(at) = &c.registered_at {
        d.push_str(&format!(" (registered at {at})"));
    }
    if c.certainty == Some("field-name") {
        d.push_str(", matched by the member's name only");
    }
    d.push_str(&format!(" · {path}"));
    d
}

/// `path:line`, with the guard when there is one.
fn where_with_guard(r: &Record) -> String {
    match r.guard.as_deref() {
        Some(g) if !g.is_empty() => format!("{}:{} · #if {}", r.path, r.line, g.join(" && ")),
        _ => format!("{}:{}", r.path, r.line),
    }
}

/// The item of `place`; `None` when its line is one an unsaved edit changed.
fn item(
    s: &mut Session,
    tree: &Tree,
    texts: &mut Texts,
    place: &Place<'_>,
) -> Option<CallHierarchyItem> {
    let (range, uri) = match place.at {
        Some((col, utf16)) => {
            let (path, len) = (place.path, place.word.len());
            let loc = s.location(tree, texts, path, place.line, col, len, Some(utf16))?;
            (loc.range, loc.uri)
        }
        None => (
            range_of(s, tree, texts, place.path, place.line, place.word)?,
            s.location(tree, texts, place.path, place.line, 0, 0, None)?
                .uri,
        ),
    };
    Some(CallHierarchyItem {
        name: place.name.clone(),
        kind: place.kind,
        tags: None,
        detail: place.detail.clone(),
        uri,
        range,
        selection_range: range,
        data: serde_json::to_value(&place.data).ok(),
    })
}

/// The range of `word` on 1-based `line` of `path` (the line's text without its indentation
/// when `word` is not on it), in the client's terms.
fn range_of(
    s: &mut Session,
    tree: &Tree,
    texts: &mut Texts,
    path: &str,
    line: u32,
    word: &str,
) -> Option<Range> {
    let text = texts
        .line(tree, path, line.saturating_sub(1))
        .unwrap_or_default();
    let (col, len) = match word_col(&text, word) {
        Some(c) => (c, word.len()),
        None => {
            let start = text.len() - text.trim_start().len();
            (start, text.trim().len())
        }
    };
    let loc = s.location(tree, texts, path, line, col as u32 + 1, len, None)?;
    Some(loc.range)
}

/// The byte column (0-based) of `word` as a whole identifier in `line`.
fn word_col(line: &str, word: &str) -> Option<usize> {
    if word.is_empty() {
        return None;
    }
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let bytes = line.as_bytes();
    line.match_indices(word).map(|(i, _)| i).find(|&i| {
        let before = i.checked_sub(1).is_none_or(|b| !ident(bytes[b]));
        let after = bytes.get(i + word.len()).is_none_or(|&a| !ident(a));
        before && after
    })
}

/// `path:line` split.
fn split_place(at: &str) -> Option<(&str, u32)> {
    let (path, line) = at.rsplit_once(':')?;
    Some((path, line.parse().ok()?))
}

/// The item's `data`, or its name at its place when a client dropped it.
fn data_of(item: &CallHierarchyItem) -> Data {
    item.data
        .clone()
        .and_then(|d| serde_json::from_value(d).ok())
        .unwrap_or_else(|| Data {
            name: Some(item.name.clone()).filter(|n| n != FILE_SCOPE),
            path: String::new(),
            line: item.selection_range.start.line.saturating_add(1),
            via: None,
        })
}

fn to_value<T: Serialize>(v: T) -> Result<Value, Failure> {
    serde_json::to_value(v).map_err(|e| Failure::failed(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_word_is_found_whole_and_a_place_splits_at_its_last_colon() {
        assert_eq!(
            word_col("\treturn vfs_read_iter(vfs_read(f));", "vfs_read"),
            Some(22)
        );
        assert_eq!(word_col("x_read = read;", "read"), Some(9));
        assert_eq!(word_col("nothing", ""), None);
        assert_eq!(split_place("fs/a:b.c:12"), Some(("fs/a:b.c", 12)));
        assert_eq!(split_place("fs/a.c"), None);
    }
}
