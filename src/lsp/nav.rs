//! Going to a name: `definition` (every definition of the name under the cursor, best first as
//! find_definition ranks them; a name a macro makes goes to the macro use that makes it),
//! `declaration` (its prototypes and `extern` declarations) and `references` (every
//! occurrence, with or without the definitions).

use lsp_types::{GotoDefinitionParams, Location, ReferenceParams};
use serde_json::Value;

use crate::envelope::{Record, Results};
use crate::query::GroupBy;
use crate::request::Ask;

use super::session::{Cursor, Failure, Session, Texts};

/// `textDocument/definition`: the definitions (prototypes only when there is nothing else).
pub fn definition(s: &mut Session, params: Value) -> Result<Value, Failure> {
    let p: GotoDefinitionParams = serde_json::from_value(params).map_err(Failure::params)?;
    let at = s.cursor(&p.text_document_position_params)?;
    let defs = definitions(s, &at);
    let (decls, bodies): (Vec<Record>, Vec<Record>) = defs.into_iter().partition(is_declaration);
    let chosen = if bodies.is_empty() { decls } else { bodies };
    locations(s, &at, &chosen)
}

/// `textDocument/declaration`: prototypes and `extern` declarations (the definitions when
/// there are none).
pub fn declaration(s: &mut Session, params: Value) -> Result<Value, Failure> {
    let p: GotoDefinitionParams = serde_json::from_value(params).map_err(Failure::params)?;
    let at = s.cursor(&p.text_document_position_params)?;
    let defs = definitions(s, &at);
    let (decls, bodies): (Vec<Record>, Vec<Record>) = defs.into_iter().partition(is_declaration);
    let chosen = if decls.is_empty() { bodies } else { decls };
    locations(s, &at, &chosen)
}

/// `textDocument/references`: every occurrence, the definitions and declarations only when
/// `context.includeDeclaration`.
pub fn references(s: &mut Session, params: Value) -> Result<Value, Failure> {
    let p: ReferenceParams = serde_json::from_value(params).map_err(Failure::params)?;
    let at = s.cursor(&p.text_document_position)?;
    let ask = Ask::Refs {
        symbol: at.name.clone(),
        group_by: GroupBy::Line,
    };
    let places = crate::query::Page {
        places_only: true,
        ..at.page.clone()
    };
    let env = s.all(&at.snap, &places, &ask);
    let mut records = match env.results {
        Some(Results::Records(r)) => r,
        _ => Vec::new(),
    };
    if !p.context.include_declaration {
        records.retain(|r| !matches!(r.role.as_deref(), Some("def" | "decl")));
    }
    locations(s, &at, &records)
}

/// The definitions find_definition gives for the name under the cursor.
pub fn definitions(s: &mut Session, at: &Cursor) -> Vec<Record> {
    let ask = Ask::Def {
        symbol: at.name.clone(),
    };
    let env = s.all(&at.snap, &at.page, &ask);
    match env.results {
        Some(Results::Records(r)) => r
            .into_iter()
            .filter(|r| r.symbol == at.name || r.resolved_via.is_some())
            .collect(),
        _ => Vec::new(),
    }
}

fn is_declaration(r: &Record) -> bool {
    r.kind
        .as_deref()
        .is_some_and(|k| knav_ctags::Kind::from_name(k).is_declaration())
}

/// `records` as LSP locations, each on the name it cites.
pub fn locations(s: &mut Session, at: &Cursor, records: &[Record]) -> Result<Value, Failure> {
    let mut texts = Texts::default();
    let mut out: Vec<Location> = Vec::with_capacity(records.len());
    for r in records {
        let len = if r.col > 0 { r.symbol.len() } else { 0 };
        if let Some(loc) = s.location(
            &at.tree,
            &mut texts,
            &r.path,
            r.line,
            r.col,
            len,
            r.utf16_col,
        ) {
            out.push(loc);
        }
    }
    serde_json::to_value(out).map_err(|e| Failure::failed(e.to_string()))
}
