//! The match tables of one C file: every `struct X_device_id NAME[] = { … };` with its line,
//! its entries (designated, positional by the struct's field order, and made by macros such as
//! `PCI_VDEVICE(INTEL, 0x1234)` expanded from their `#define`s) and the
//! `MODULE_DEVICE_TABLE(type, NAME)` that exports it.

use serde::{Deserialize, Serialize};

use crate::cmacro::{arguments, text_of, Scope};
use crate::cmacro_eval::{value, Value};
use crate::cmacro_lex::{Kind, Tok};
use crate::idtable_layout::Layouts;
use crate::landmarks::Landmarks;

/// One match table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Table {
    /// The struct tag of its entries (`pci_device_id`).
    pub kind: String,
    /// The array's name.
    pub name: String,
    /// The line of its name.
    pub line: u32,
    /// Its entries, the terminating empty one left out.
    pub entries: Vec<Entry>,
    /// The `MODULE_DEVICE_TABLE` that names it: its bus type (`pci`) and line.
    pub module_device_table: Option<(String, u32)>,
}

/// One entry of a table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// The line of its first token inside its braces (of its `{` when it is empty; of the
    /// invocation when a macro makes it).
    pub line: u32,
    /// The first macro it invokes as written (`PCI_VDEVICE`), if any.
    pub via: Option<String>,
    /// Its fields in initializer order: designated ones by name, positional ones by the
    /// struct's field order (`#3` when the struct's layout is unknown).
    pub fields: Vec<Field>,
    /// The entry as written when no macro in scope makes it an initializer
    /// (`HDA_CODEC_ENTRY(0x10ec0221, "ALC221", patch_alc269)` without `hda_codec.h`); its
    /// fields are then empty.
    pub unexpanded: Option<String>,
}

/// One initialized field.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Field {
    /// Its name (`vendor`, `compatible`; `a.b` for a nested designator).
    pub name: String,
    /// Its value.
    pub value: Value,
}

impl Entry {
    /// The value of the field named `name` (the last one when it is initialized twice).
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.fields
            .iter()
            .rev()
            .find(|f| f.name == name)
            .map(|f| &f.value)
    }
}

/// The match tables of a file's tokens (after [`crate::driver_file`]'s splicing).
pub fn tables(toks: &[Tok<'_>], scope: Scope<'_>, layouts: &Layouts) -> Vec<Table> {
    let marks = Landmarks::of(toks);
    let exported = exported_in(toks, &marks);
    tables_in(toks, &marks, scope, layouts, &exported)
}

/// [`tables`] at the places [`Landmarks`] found, with the file's `MODULE_DEVICE_TABLE`s.
pub(crate) fn tables_in(
    toks: &[Tok<'_>],
    marks: &Landmarks,
    scope: Scope<'_>,
    layouts: &Layouts,
    exported: &[(String, String, u32)],
) -> Vec<Table> {
    let mut out = Vec::new();
    // Past the end of the last table found: a table inside one is not another.
    let mut from = 0;
    for &i in &marks.tables {
        if i + 3 >= toks.len() {
            break;
        }
        if i < from {
            continue;
        }
        if let Some((table, end)) = table_at(toks, &marks.close, i, scope, layouts) {
            out.push(table);
            from = end;
        }
    }
    for (bus, name, line) in exported.iter().cloned() {
        if let Some(t) = out.iter_mut().find(|t| t.name == name) {
            t.module_device_table = Some((bus, line));
        }
    }
    out
}

/// The table declared at `toks[i]` (`struct`), and the index past its `}`.
fn table_at(
    toks: &[Tok<'_>],
    closers: &[u32],
    i: usize,
    scope: Scope<'_>,
    layouts: &Layouts,
) -> Option<(Table, usize)> {
    let (kw, tag) = (&toks[i], &toks[i + 1]);
    if !kw.is_ident("struct") || tag.kind != Kind::Ident || !tag.text.ends_with("_device_id") {
        return None;
    }
    // Attributes may come before the name (`__maybe_unused lm75_of_match[]`).
    let mut k = i + 2;
    while toks.get(k)?.kind == Kind::Ident && k < i + 6 {
        k += 1;
    }
    if k == i + 2 || !toks[k].is("[") {
        return None;
    }
    let name = &toks[k - 1];
    k += 1;
    // The bound, `]`, then attributes (`__initconst`, `__section(x)`) up to `= {`.
    while k < toks.len() && !toks[k].is("=") {
        if toks[k].is(";") || toks[k].is("{") || k > i + 40 {
            return None;
        }
        k += 1;
    }
    if !toks.get(k + 1)?.is("{") {
        return None;
    }
    let close = closer(closers, k + 1)?;
    let fields = layouts.fields(&tag.text).unwrap_or(&[]);
    let entries = entries(&toks[k + 2..close], scope, fields);
    let table = Table {
        kind: tag.text.to_string(),
        name: name.text.to_string(),
        line: name.line,
        entries,
        module_device_table: None,
    };
    Some((table, close + 1))
}

/// For each token, the index of the bracket that closes it when it opens one (any of `(`,
/// `[`, `{` closed by any of `)`, `]`, `}`, as depth counts them); `u32::MAX` otherwise. One
/// pass, so that finding every initializer's end stays linear on any input.
pub fn closers(toks: &[Tok<'_>]) -> Vec<u32> {
    let mut out = vec![u32::MAX; toks.len()];
    let mut open = Vec::new();
    for (k, t) in toks.iter().enumerate() {
        if t.kind != Kind::Punct {
            continue;
        }
        match t.text.as_bytes() {
            [b'{' | b'(' | b'['] => open.push(k),
            [b'}' | b')' | b']'] => {
                if let Some(o) = open.pop() {
                    out[o] = u32::try_from(k).unwrap_or(u32::MAX);
                }
            }
            _ => {}
        }
    }
    out
}

/// The identifiers of `toks` followed by a `(` that closes, with their index: the calls and
/// macro invocations a reader looks at (one whose `(` never closes is passed over at once:
/// linear on any input).
pub fn called<'t, 'a>(toks: &'t [Tok<'a>]) -> impl Iterator<Item = (usize, &'t Tok<'a>)> {
    let close = closers(toks);
    toks.iter()
        .enumerate()
        .filter(move |(k, t)| t.kind == Kind::Ident && closer(&close, k + 1).is_some())
}

/// The index of the bracket that closes the one at `open`, from [`closers`].
pub fn closer(closers: &[u32], open: usize) -> Option<usize> {
    match *closers.get(open)? {
        u32::MAX => None,
        c => usize::try_from(c).ok(),
    }
}

/// The entries of a table's body: each top-level item expanded, then each `{ … }` in it.
fn entries(body: &[Tok<'_>], scope: Scope<'_>, fields: &[String]) -> Vec<Entry> {
    let mut out = Vec::new();
    for item in split_commas(body) {
        let head = match item.first() {
            Some(t) if t.is("{") => item.get(1),
            first => first,
        };
        let via = head
            .filter(|t| t.kind == Kind::Ident && scope.get(&t.text).is_some())
            .map(|t| t.text.to_string());
        let expanded = scope.expand(item);
        if let Some(e) = unexpanded(&expanded) {
            out.push(e);
            continue;
        }
        let close = closers(&expanded);
        let mut k = 0;
        while k < expanded.len() {
            if !expanded[k].is("{") {
                k += 1;
                continue;
            }
            let Some(close) = closer(&close, k) else {
                break;
            };
            let entry = Entry {
                line: expanded[k + 1..close]
                    .first()
                    .map_or(expanded[k].line, |t| t.line),
                via: via.clone(),
                fields: entry_fields(&expanded[k + 1..close], fields),
                unexpanded: None,
            };
            if !is_sentinel(&entry) {
                out.push(entry);
            }
            k = close + 1;
        }
    }
    out
}

/// The entry an item is when, expanded, it is still an invocation `NAME(…)` of no macro in
/// scope (no braces in it).
fn unexpanded(expanded: &[Tok<'_>]) -> Option<Entry> {
    let (name, open) = (expanded.first()?, expanded.get(1)?);
    let no_braces = !expanded.iter().any(|t| t.is("{"));
    (name.kind == Kind::Ident && open.is("(") && no_braces).then(|| Entry {
        line: name.line,
        via: Some(name.text.to_string()),
        fields: Vec::new(),
        unexpanded: Some(text_of(expanded)),
    })
}

/// True for the empty entry that ends a table (`{ }`, `{ 0 }`, `{ "" }`).
fn is_sentinel(e: &Entry) -> bool {
    e.unexpanded.is_none()
        && e.fields.iter().all(|f| match &f.value {
            Value::Int(0) => true,
            Value::Str(s) => s.is_empty(),
            Value::Text(t) => t.is_empty(),
            _ => false,
        })
}

/// The fields of one entry's tokens (inside its braces), as C assigns them: a designator names
/// its field and the next positional value goes to the field after it.
fn entry_fields(toks: &[Tok<'_>], layout: &[String]) -> Vec<Field> {
    let mut out = Vec::new();
    let mut next = 0usize;
    for item in split_commas(toks) {
        if item.is_empty() {
            continue;
        }
        let (name, value_toks) = match designator(item) {
            Some((path, rest)) => {
                next = layout
                    .iter()
                    .position(|f| *f == path[0])
                    .map_or(next, |p| p + 1);
                (path.join("."), rest)
            }
            None => {
                let name = layout
                    .get(next)
                    .cloned()
                    .unwrap_or_else(|| format!("#{next}"));
                next += 1;
                (name, item)
            }
        };
        out.push(Field {
            name,
            value: value(value_toks),
        });
    }
    out
}

/// The names of a `.a.b =` designator and the value after it.
fn designator<'t, 'a>(item: &'t [Tok<'a>]) -> Option<(Vec<String>, &'t [Tok<'a>])> {
    let mut path = Vec::new();
    let mut k = 0;
    while item.get(k)?.is(".") {
        let name = item.get(k + 1).filter(|t| t.kind == Kind::Ident)?;
        path.push(name.text.to_string());
        k += 2;
    }
    (!path.is_empty() && item.get(k)?.is("=")).then_some((path, &item[k + 1..]))
}

/// `toks` split at its top-level commas.
pub fn split_commas<'t, 'a>(toks: &'t [Tok<'a>]) -> Vec<&'t [Tok<'a>]> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (k, t) in toks.iter().enumerate() {
        if t.kind != Kind::Punct {
            continue;
        }
        match t.text.as_ref() {
            "{" | "(" | "[" => depth += 1,
            "}" | ")" | "]" => depth = depth.saturating_sub(1),
            "," if depth == 0 => {
                out.push(&toks[start..k]);
                start = k + 1;
            }
            _ => {}
        }
    }
    if start < toks.len() {
        out.push(&toks[start..]);
    }
    out
}

/// Each `MODULE_DEVICE_TABLE(bus, name)`: its bus, table name and line (the table may be of
/// a type that is no `*_device_id`: `dmi_system_id`, `x86_cpu_id`, `amba_id`).
pub fn module_device_tables(toks: &[Tok<'_>]) -> Vec<(String, String, u32)> {
    exported_in(toks, &Landmarks::of(toks))
}

/// [`module_device_tables`] at the places [`Landmarks`] found.
pub(crate) fn exported_in(toks: &[Tok<'_>], marks: &Landmarks) -> Vec<(String, String, u32)> {
    let mut out = Vec::new();
    for &k in &marks.exports {
        let t = &toks[k];
        if let Some((args, _)) = arguments(toks, k + 1) {
            if let [bus, name] = &args[..] {
                if let ([b], [n]) = (&bus[..], &name[..]) {
                    out.push((b.text.to_string(), n.text.to_string(), t.line));
                }
            }
        }
    }
    out
}
