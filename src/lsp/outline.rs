//! A file's outline and the workspace's symbols: `documentSymbol` (list_file_symbols' answer,
//! struct and union members inside their struct, enumerators inside their enum, nested when
//! the client takes a tree, else flat) and `workspace/symbol` (search_symbols' answer, exact
//! names first, on every folder). Kinds are mapped from ctags's: a prototype is a `Function`
//! (it is one, declared), a function-like macro a `Function` and any other macro a `Constant`,
//! a typedef a `Class` (as clangd has it; LSP has no kind for a type alias).

use lsp_types::{
    DocumentSymbolParams, Location, Position, Range, SymbolKind, WorkspaceSymbolParams,
};
use serde_json::{json, Value};

use crate::envelope::{Record, Results};
use crate::request::Ask;
use crate::serve::state::Tree;

use super::session::{Failure, Session, Texts};

/// Symbols `workspace/symbol` answers at most.
pub const MAX_WORKSPACE_SYMBOLS: u64 = 100;

/// The LSP kind of a definition of ctags kind `kind`; `function_like` for a macro with
/// parameters.
pub fn symbol_kind(kind: &str, function_like: bool) -> SymbolKind {
    use knav_ctags::Kind as K;
    match knav_ctags::Kind::from_name(kind) {
        K::Function | K::Prototype | K::Entry => SymbolKind::FUNCTION,
        K::Macro if function_like => SymbolKind::FUNCTION,
        K::Macro => SymbolKind::CONSTANT,
        K::Struct | K::Union => SymbolKind::STRUCT,
        K::Enum => SymbolKind::ENUM,
        K::Enumerator => SymbolKind::ENUM_MEMBER,
        K::Member => SymbolKind::FIELD,
        K::Typedef => SymbolKind::CLASS,
        K::Label => SymbolKind::KEY,
        K::Variable | K::Externvar | K::Local | K::Other => SymbolKind::VARIABLE,
    }
}

fn kind_of(r: &Record) -> SymbolKind {
    symbol_kind(r.kind.as_deref().unwrap_or("other"), r.signature.is_some())
}

/// A definition placed in the client's document: its whole lines and its name.
struct Placed {
    record: Record,
    range: Range,
    selection: Location,
}

/// `textDocument/documentSymbol`: the file's definitions, members inside their struct.
pub fn document_symbol(s: &mut Session, params: Value) -> Result<Value, Failure> {
    let p: DocumentSymbolParams = serde_json::from_value(params).map_err(Failure::params)?;
    let (tree, snap, path) = s.tree_of(&p.text_document.uri)?;
    let page = s.page(&tree)?;
    let ask = Ask::Symbols {
        file: path.clone(),
        from_end: false,
    };
    let env = s.all(&snap, &page, &ask);
    if let Some(e) = env.error {
        // A file the index does not hold (a Kconfig, a new file not saved yet): no outline,
        // said in the log rather than as an error at every edit.
        s.notes.push(format!("the outline of {path}: {e}"));
        return Ok(Value::Array(Vec::new()));
    }
    let records = match env.results {
        Some(Results::Records(r)) => r,
        _ => Vec::new(),
    };
    let placed = place(s, &tree, &path, records);
    let out = if s.caps.hierarchical_symbols {
        nested(placed)
    } else {
        placed.into_iter().map(information).collect()
    };
    Ok(Value::Array(out))
}

/// `records` placed in the client's document; those on lines edited since the last save are
/// left out, said once in the log (an outline is asked at every edit: no message box).
fn place(s: &mut Session, tree: &Tree, path: &str, records: Vec<Record>) -> Vec<Placed> {
    let alerts = s.alerts.len();
    let mut texts = Texts::default();
    let mut out = Vec::with_capacity(records.len());
    let mut left_out = 0;
    for r in records {
        let len = if r.col > 0 { r.symbol.len() } else { 0 };
        let Some(selection) = s.location(tree, &mut texts, &r.path, r.line, r.col, len, None)
        else {
            left_out += 1;
            continue;
        };
        let last = r.end_line.unwrap_or(r.line).max(r.line);
        let end = s
            .location(tree, &mut texts, &r.path, last, u32::MAX, 0, None)
            .map(|l| l.range.end)
            .filter(|e| e.line >= selection.range.end.line)
            .unwrap_or(selection.range.end);
        let range = Range::new(Position::new(selection.range.start.line, 0), end);
        out.push(Placed {
            record: r,
            range,
            selection,
        });
    }
    s.alerts.truncate(alerts);
    if left_out > 0 {
        s.notes.push(format!(
            "{path}: {left_out} definitions on lines edited since the last save are left out of \
             the outline; save to have them re-indexed"
        ));
    }
    out
}

/// True for the kinds that hold members.
fn holds_members(r: &Record) -> bool {
    matches!(
        r.kind.as_deref(),
        Some("struct" | "union" | "enum" | "typedef")
    )
}

/// The index of `placed[i]`'s container: the innermost earlier struct, union or enum named as
/// its scope whose lines hold it.
fn container(placed: &[Placed], i: usize) -> Option<usize> {
    let r = &placed[i].record;
    let scope = r.scope.as_deref()?;
    (0..i).rev().find(|&j| {
        let c = &placed[j].record;
        holds_members(c)
            && c.symbol == scope
            && c.line <= r.line
            && r.line <= c.end_line.unwrap_or(c.line)
    })
}

/// `placed` as a tree of `DocumentSymbol`s.
fn nested(mut placed: Vec<Placed>) -> Vec<Value> {
    placed.sort_by_key(|p| (p.record.line, !holds_members(&p.record)));
    let parents: Vec<Option<usize>> = (0..placed.len()).map(|i| container(&placed, i)).collect();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); placed.len()];
    let mut roots = Vec::new();
    for (i, p) in parents.iter().enumerate() {
        match p {
            Some(j) => children[*j].push(i),
            None => roots.push(i),
        }
    }
    // Built from the last: a container comes before its members, so theirs are done first.
    let mut built: Vec<Option<Value>> = vec![None; placed.len()];
    for i in (0..placed.len()).rev() {
        let kids: Vec<Value> = children[i]
            .iter()
            .filter_map(|&k| built[k].take())
            .collect();
        built[i] = Some(document_symbol_value(&placed[i], kids));
    }
    roots.into_iter().filter_map(|i| built[i].take()).collect()
}

fn document_symbol_value(p: &Placed, children: Vec<Value>) -> Value {
    let r = &p.record;
    let mut v = json!({
        "name": r.symbol,
        "kind": kind_of(r),
        "range": p.range,
        "selectionRange": p.selection.range,
    });
    if let Some(d) = detail(r) {
        v["detail"] = json!(d);
    }
    if !children.is_empty() {
        v["children"] = Value::Array(children);
    }
    v
}

/// What an outline shows beside a name: a function's parameters, a member's type.
fn detail(r: &Record) -> Option<String> {
    match (&r.signature, &r.typeref) {
        (Some(sig), Some(t)) => Some(format!("{t} {sig}")),
        (Some(sig), None) => Some(sig.clone()),
        (None, Some(t)) => Some(t.clone()),
        (None, None) => None,
    }
}

/// A placed definition as a flat `SymbolInformation`, its container named.
fn information(p: Placed) -> Value {
    let mut v = json!({
        "name": p.record.symbol,
        "kind": kind_of(&p.record),
        "location": Location::new(p.selection.uri, p.range),
    });
    if let Some(scope) = &p.record.scope {
        v["containerName"] = json!(scope);
    }
    v
}

/// `workspace/symbol`: the names matching the query's parts (search_symbols: each part a
/// prefix of the name or of one of its `_` parts, exact names first), in every folder, at most
/// [`MAX_WORKSPACE_SYMBOLS`]; an empty query has none.
pub fn workspace_symbol(s: &mut Session, params: Value) -> Result<Value, Failure> {
    let p: WorkspaceSymbolParams = serde_json::from_value(params).map_err(Failure::params)?;
    let query = p.query.trim().to_string();
    let mut out: Vec<Value> = Vec::new();
    if query.is_empty() {
        return Ok(Value::Array(out));
    }
    for root in s.folders.clone() {
        let left = MAX_WORKSPACE_SYMBOLS.saturating_sub(out.len() as u64);
        if left == 0 {
            break;
        }
        let (tree, snap) = match s.snapshot(&root) {
            Ok(t) => t,
            // One folder not ready: the others still answer.
            Err(f) if s.folders.len() > 1 => {
                s.notes.push(format!("{}: {}", root.display(), f.message));
                continue;
            }
            Err(f) => return Err(f),
        };
        let mut page = s.page(&tree)?;
        page.limit = left;
        let ask = Ask::Find {
            query: query.clone(),
            kind: None,
        };
        let env = crate::request::answer(&snap, page, &ask);
        s.notes.extend(env.warning.clone());
        if let Some(e) = env.error {
            return Err(Failure::failed(format!("workspace symbols {query:?}: {e}")));
        }
        let records = match env.results {
            Some(Results::Records(r)) => r,
            _ => Vec::new(),
        };
        let mut texts = Texts::default();
        for r in records {
            let len = if r.col > 0 { r.symbol.len() } else { 0 };
            let Some(loc) = s.location(&tree, &mut texts, &r.path, r.line, r.col, len, None) else {
                continue;
            };
            let container = r.scope.clone().unwrap_or_else(|| r.path.clone());
            out.push(json!({
                "name": r.symbol,
                "kind": kind_of(&r),
                "location": loc,
                "containerName": container,
            }));
        }
    }
    Ok(Value::Array(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ctags_kinds_map_to_lsp_kinds() {
        assert_eq!(symbol_kind("function", false), SymbolKind::FUNCTION);
        assert_eq!(symbol_kind("prototype", false), SymbolKind::FUNCTION);
        assert_eq!(symbol_kind("macro", true), SymbolKind::FUNCTION);
        assert_eq!(symbol_kind("macro", false), SymbolKind::CONSTANT);
        assert_eq!(symbol_kind("enumerator", false), SymbolKind::ENUM_MEMBER);
        assert_eq!(symbol_kind("member", false), SymbolKind::FIELD);
        assert_eq!(symbol_kind("typedef", false), SymbolKind::CLASS);
        assert_eq!(symbol_kind("union", false), SymbolKind::STRUCT);
    }
}
