//! `textDocument/hover`: what the name under the cursor is, from find_definition's answer: its
//! declaration as a C code block, where it is, its `#if` guard, whether the configured
//! `.config` builds it (and the false condition when not), its export, and the first line of
//! the comment above it as the index recorded it for search_code. With several definitions the
//! best (as find_definition ranks them, a body before a prototype) is shown and the others
//! counted.

use lsp_types::{HoverParams, TextDocumentPositionParams};
use serde_json::{json, Value};

use crate::envelope::{Envelope, Export, Hidden, Record, Results};
use crate::index::store::Snapshot;
use crate::request::Ask;
use crate::serve::state::Tree;

use super::position::Lines;
use super::session::{read_text, Cursor, Failure, Session, NO_NAME};

/// What the active configuration says of one definition.
enum Built {
    /// No configuration is set.
    Unknown,
    /// It builds it (`Some(true)`) or cannot decide (`None`).
    Kept(Option<bool>),
    /// It does not: why.
    Hidden(String),
}

/// `textDocument/hover`: markdown about the definition of the name under the cursor; `null`
/// when it has none.
pub fn hover(s: &mut Session, params: Value) -> Result<Value, Failure> {
    let p: HoverParams = serde_json::from_value(params).map_err(Failure::params)?;
    let at = match s.cursor(&p.text_document_position_params) {
        Err(f) if f.message == NO_NAME => return Ok(Value::Null),
        r => r?,
    };
    let (mut records, exported, mut built) = definitions(s, &at);
    member_first(
        s,
        &at,
        &p.text_document_position_params,
        &mut records,
        &mut built,
    );
    let Some((best, others)) = best(records) else {
        return Ok(Value::Null);
    };
    let text = markdown(&at, &best, others, exported.as_ref(), &built);
    let mut v = json!({"contents": {"kind": "markdown", "value": text}});
    v["range"] = json!(at.range(p.text_document_position_params.position.line, s.enc));
    Ok(v)
}

/// The definitions of the name (all of them, whatever the configuration builds), its export,
/// and per definition what the configuration says.
fn definitions(s: &mut Session, at: &Cursor) -> (Vec<Record>, Option<Export>, Vec<Built>) {
    let ask = Ask::Def {
        symbol: at.name.clone(),
    };
    let unfiltered = crate::query::Page {
        active: None,
        ..at.page.clone()
    };
    let env = s.all(&at.snap, &unfiltered, &ask);
    let exported = env.summary.as_ref().and_then(|d| d.exported.clone());
    let records = records_named(env, &at.name);
    if at.page.active.is_none() {
        let built = records.iter().map(|_| Built::Unknown).collect();
        return (records, exported, built);
    }
    let configured = s.all(&at.snap, &at.page, &ask);
    let hidden: Vec<Hidden> = configured.hidden.clone();
    let kept = records_named(configured, &at.name);
    let built: Vec<Built> = records
        .iter()
        .map(|r| {
            if let Some(k) = kept.iter().find(|k| k.path == r.path && k.line == r.line) {
                return Built::Kept(k.active.flatten());
            }
            match hidden.iter().find(|h| h.path == r.path && h.line == r.line) {
                Some(h) => Built::Hidden(h.reason.clone()),
                None => Built::Kept(None),
            }
        })
        .collect();
    // Those it builds first, the ranking kept among each.
    let mut both: Vec<(Record, Built)> = records.into_iter().zip(built).collect();
    both.sort_by_key(|(_, b)| matches!(b, Built::Hidden(_)));
    let (records, built) = both.into_iter().unzip();
    (records, exported, built)
}

/// When the name is a member of several structs, the member of the struct the cursor is on
/// (`snd->fetch` is `sound_ops`'s, not `stream_operations`'s) put first.
fn member_first(
    s: &mut Session,
    at: &Cursor,
    pos: &TextDocumentPositionParams,
    records: &mut Vec<Record>,
    built: &mut Vec<Built>,
) {
    let members: Vec<&Record> = records
        .iter()
        .filter(|r| r.kind.as_deref() == Some("member"))
        .collect();
    if members.len() < 2
        || records
            .first()
            .is_some_and(|r| r.kind.as_deref() != Some("member"))
    {
        return;
    }
    let Some(tag) = super::impls::member_struct(s, at, pos, &members) else {
        return;
    };
    if let Some(i) = records
        .iter()
        .position(|r| r.scope.as_deref() == Some(&tag))
    {
        let r = records.remove(i);
        records.insert(0, r);
        let b = built.remove(i);
        built.insert(0, b);
    }
}

fn records_named(env: Envelope, name: &str) -> Vec<Record> {
    match env.results {
        Some(Results::Records(r)) => r
            .into_iter()
            .filter(|r| r.symbol == name || r.resolved_via.is_some())
            .collect(),
        _ => Vec::new(),
    }
}

/// The best definition (the first with a body, else the first) with its index, and how many
/// others there are.
fn best(records: Vec<Record>) -> Option<((usize, Record), usize)> {
    let is_decl = |r: &Record| {
        r.kind
            .as_deref()
            .is_some_and(|k| knav_ctags::Kind::from_name(k).is_declaration())
    };
    let i = records
        .iter()
        .position(|r| !is_decl(r))
        .or((!records.is_empty()).then_some(0))?;
    let others = records.len() - 1;
    let r = records.into_iter().nth(i)?;
    Some(((i, r), others))
}

/// True when `r`'s line or type says `static` (file scope).
fn is_static(r: &Record) -> bool {
    let words = |t: &str| t.split_whitespace().any(|w| w == "static");
    words(&r.snippet) || r.typeref.as_deref().is_some_and(words)
}

/// The hover's text.
fn markdown(
    at: &Cursor,
    best: &(usize, Record),
    others: usize,
    exported: Option<&Export>,
    built: &[Built],
) -> String {
    let (i, r) = best;
    let mut out = format!("```c\n{}\n```\n", declaration(r));
    let kind = r.kind.as_deref().unwrap_or("definition");
    out.push_str(&format!("\n{kind} at `{}:{}`", r.path, r.line));
    if let Some(scope) = &r.scope {
        out.push_str(&format!(" in `{scope}`"));
    }
    out.push('\n');
    match r.guard.as_deref() {
        Some([]) => {}
        Some(g) => out.push_str(&format!("\nunder `#if {}`\n", g.join(" && "))),
        None => out.push_str("\n`#if` guard not known (the file was not scanned)\n"),
    }
    match built.get(*i) {
        Some(Built::Kept(Some(true))) => out.push_str("\nbuilt by the configured `.config`\n"),
        Some(Built::Kept(_)) => {
            out.push_str("\nthe configured `.config` cannot tell whether it is built\n")
        }
        Some(Built::Hidden(why)) => out.push_str(&format!(
            "\n**not built** by the configured `.config`: {why}\n"
        )),
        Some(Built::Unknown) | None => {}
    }
    // A `static` definition cannot be exported: "not exported" would be noise.
    if matches!(kind, "function" | "variable") && !is_static(r) {
        match exported {
            Some(e) => out.push_str(&format!(
                "\nexported: `{}` at `{}:{}`\n",
                e.macro_name, e.path, e.line
            )),
            None => out.push_str("\nnot exported\n"),
        }
    }
    if let Some(c) = comment(&at.snap, &at.tree, r) {
        out.push_str(&format!("\n---\n{c}\n"));
    }
    if others > 0 {
        let s = if others == 1 { "" } else { "s" };
        out.push_str(&format!("\n---\n{others} other definition{s}\n"));
    }
    out
}

/// The definition's declaration: its source line, or its type, name and parameters when the
/// line does not hold them (a prototype split over lines).
fn declaration(r: &Record) -> String {
    let line = r.snippet.trim();
    let function = matches!(r.kind.as_deref(), Some("function" | "prototype"));
    if function && !line.contains(')') {
        if let Some(sig) = &r.signature {
            let t = r.typeref.as_deref().unwrap_or("");
            return format!("{t} {}{sig}", r.symbol).trim().to_string();
        }
    }
    line.to_string()
}

/// The first line of words of the comment right above `r`'s definition, as the index's
/// search documents recorded it (functions and types have one).
fn comment(snap: &Snapshot, tree: &Tree, r: &Record) -> Option<String> {
    let (seg, file) = snap.find_file(&r.path)?;
    let segment = snap.segments.get(seg)?;
    let code = segment.code()?;
    let back = code.docs_of(file).find_map(|id| {
        let doc = code.doc(id)?;
        let def = segment.def_at(doc.def);
        (def.line == r.line && def.name == r.symbol).then_some(doc.head.comment_back)
    })?;
    if back == 0 {
        return None;
    }
    let text = read_text(tree, &r.path)?;
    let line = Lines::new(&text)
        .line(
            &text,
            r.line.saturating_sub(u32::from(back)).saturating_sub(1) as usize,
        )?
        .to_string();
    Some(crate::query::comment_words(&line)).filter(|c| !c.is_empty())
}
