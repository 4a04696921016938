//! `textDocument/implementation`: for a member of an ops table (`read_iter` in
//! `f->f_op->read_iter(…)`, or in `struct file_operations`'s definition), the functions stored
//! in it, found as find_callees finds a call's targets (the struct of the call's expression
//! resolved by find_callees itself, every store of a function into that member of that struct:
//! designated initializers, assignments, `INDIRECT_CALL_n`); for any other name, its
//! definitions. A member whose struct is not known (a designated initializer, an assignment
//! outside a call) is that of the store the index has at the line (`.fetch = plain_fetch`),
//! else the member of the one struct that has a member of that name;
//! when several have one, there is no answer (a guess by name is mostly wrong) and the log says
//! so. A function pointer that is not a struct member has no stores indexed: its definition is
//! the answer.

use lsp_types::request::GotoImplementationParams;
use lsp_types::TextDocumentPositionParams;
use serde_json::Value;

use crate::envelope::{Record, Results};
use crate::request::Ask;

use super::nav::{definitions, locations};
use super::session::{Cursor, Failure, Session};

/// `textDocument/implementation`.
pub fn implementation(s: &mut Session, params: Value) -> Result<Value, Failure> {
    let p: GotoImplementationParams = serde_json::from_value(params).map_err(Failure::params)?;
    let pos = &p.text_document_position_params;
    let at = s.cursor(pos)?;
    let defs = definitions(s, &at);
    let members: Vec<&Record> = defs
        .iter()
        .filter(|r| r.kind.as_deref() == Some("member") && r.symbol == at.name)
        .collect();
    if members.is_empty() {
        // A plain name: its definitions, as `definition` gives them.
        let bodies: Vec<Record> = defs.iter().filter(|r| !is_decl(r)).cloned().collect();
        let chosen = if bodies.is_empty() { defs } else { bodies };
        return locations(s, &at, &chosen);
    }
    let tag = member_struct(s, &at, pos, &members);
    let Some(tag) = tag else {
        s.notes.push(format!(
            "implementation of {}: a member of {} structs, and which one is meant here is not \
             known",
            at.name,
            members.len()
        ));
        return Ok(Value::Array(Vec::new()));
    };
    let from = (declared_in(&members, &tag) != Some(at.path.as_str())).then_some(at.path.as_str());
    let stored = crate::query::stored_in(&at.snap, at.page.clone(), &tag, &at.name, from);
    let mut chosen = Vec::new();
    for (func, path, _) in stored {
        chosen.extend(function_defs(s, &at, &func, &path));
    }
    locations(s, &at, &chosen)
}

/// The struct whose member `members` (the definitions of the name under the cursor, all
/// members) the cursor is on: in the struct's definition, its own; at a store into it (`.f =
/// fn`, `p->f = fn`), the struct the index recorded for the store; at a call through it, the
/// struct find_callees resolves; else the one struct with a member of the name.
pub fn member_struct(
    s: &mut Session,
    at: &Cursor,
    pos: &TextDocumentPositionParams,
    members: &[&Record],
) -> Option<String> {
    let line = pos.position.line.saturating_add(1);
    if let Some(r) = members.iter().find(|r| r.path == at.path && r.line == line) {
        return r.scope.clone();
    }
    let before = at.line[..at.start].trim_end();
    if !(before.ends_with('.') || before.ends_with("->")) {
        return sole_owner(members);
    }
    stored_here(at, line, &at.line[at.start + at.name.len()..])
        .or_else(|| called_through(s, at, line))
        .or_else(|| sole_owner(members))
}

fn is_decl(r: &Record) -> bool {
    r.kind
        .as_deref()
        .is_some_and(|k| knav_ctags::Kind::from_name(k).is_declaration())
}

/// The file defining member `tag.name` among `members`.
fn declared_in<'a>(members: &[&'a Record], tag: &str) -> Option<&'a str> {
    members
        .iter()
        .find(|r| r.scope.as_deref() == Some(tag))
        .map(|r| r.path.as_str())
}

/// The struct of the one member of the name, when only one struct has it.
fn sole_owner(members: &[&Record]) -> Option<String> {
    let first = members.first()?.scope.clone()?;
    members
        .iter()
        .all(|r| r.scope.as_deref() == Some(&first))
        .then_some(first)
}

/// The struct of the member at the cursor when the line stores a function in it
/// (`.fetch = plain_fetch,`, `ops->fetch = fancy_fetch;`): `after`, the text after the member,
/// is `= function`, and the index has that store at this line.
fn stored_here(at: &Cursor, line: u32, after: &str) -> Option<String> {
    let value = after.trim_start().strip_prefix('=')?.trim_start();
    let value = value.strip_prefix('&').unwrap_or(value).trim_start();
    let end = value
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(value.len());
    let func = &value[..end];
    if func.is_empty() {
        return None;
    }
    crate::query::stores_of(&at.snap, at.page.clone(), func)
        .into_iter()
        .find(|(_, field, path, l)| *field == at.name && *path == at.path && *l == line)
        .map(|(tag, ..)| tag)
}

/// The struct of the member called at `line` of the cursor's file, as find_callees of the
/// function holding the line resolves it.
fn called_through(s: &mut Session, at: &Cursor, line: u32) -> Option<String> {
    let outline = s.all(
        &at.snap,
        &at.page,
        &Ask::Symbols {
            file: at.path.clone(),
            from_end: false,
        },
    );
    let Some(Results::Records(symbols)) = outline.results else {
        return None;
    };
    let function = symbols.into_iter().find(|r| {
        r.kind.as_deref() == Some("function")
            && r.line <= line
            && line <= r.end_line.unwrap_or(r.line)
    })?;
    let ask = Ask::Callees {
        symbol: function.symbol,
        include_uncertain: true,
    };
    let env = s.all(&at.snap, &at.page, &ask);
    let Some(Results::Callees(c)) = env.results else {
        return None;
    };
    let suffix = format!(".{}", at.name);
    let through: Vec<_> = c
        .callees
        .iter()
        .filter(|c| c.symbol.ends_with(&suffix))
        .collect();
    // The call at this line, else the one call through a member of the name.
    let callee = through
        .iter()
        .find(|c| c.line == line)
        .or_else(|| (through.len() == 1).then(|| &through[0]))?;
    callee
        .symbol
        .strip_suffix(&suffix)
        .map(str::to_string)
        .filter(|t| !t.is_empty() && t != "?")
}

/// The definitions of function `func` stored at a line of `path`: the one in that file (a
/// `static` function) when there is one, else all with a body.
fn function_defs(s: &mut Session, at: &Cursor, func: &str, path: &str) -> Vec<Record> {
    let env = s.all(
        &at.snap,
        &at.page,
        &Ask::Def {
            symbol: func.to_string(),
        },
    );
    let Some(Results::Records(records)) = env.results else {
        return Vec::new();
    };
    let bodies: Vec<Record> = records
        .into_iter()
        .filter(|r| r.symbol == func && r.kind.as_deref() == Some("function"))
        .collect();
    match bodies.iter().find(|r| r.path == path) {
        Some(local) => vec![local.clone()],
        None => bodies,
    }
}
