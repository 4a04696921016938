//! find_references: every occurrence of a name, with its role, guard and enclosing function.

use std::borrow::Cow;
use std::collections::BTreeMap;

use super::lookup::{def_lines, not_found, role_of, valid_name};
use super::verdict::Verdict;
use super::{indirect, Query};
use crate::envelope::{Envelope, FileGroup, Record, Results};

/// The tool this module answers (its MCP name, and `Ask::tool`'s).
pub const TOOL: &str = "find_references";

/// References are grouped by file above this many rows when grouping is automatic.
pub const AUTO_GROUP_ABOVE: usize = 200;

/// How references are listed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GroupBy {
    /// One row per reference up to 200, else one row per file.
    #[default]
    Auto,
    /// One row per reference.
    Line,
    /// One row per file.
    File,
}

impl std::str::FromStr for GroupBy {
    type Err = String;
    fn from_str(s: &str) -> Result<GroupBy, String> {
        match s {
            "auto" => Ok(GroupBy::Auto),
            "line" => Ok(GroupBy::Line),
            "file" => Ok(GroupBy::File),
            _ => Err(format!("group_by must be auto, line or file, not '{s}'")),
        }
    }
}

/// Answers find_references for `symbol`.
pub fn find_references(q: &Query<'_>, symbol: &str, group_by: GroupBy) -> Envelope {
    if !valid_name(symbol) {
        return q.envelope_error(TOOL, format!("'{symbol}' is not a C identifier"));
    }
    let defs = q.definitions(symbol);
    let postings: Vec<_> = q
        .postings(symbol)
        .into_iter()
        .filter(|(s, p)| q.wanted_file(*s, p.file))
        .collect();
    let build_rows = build_rows(q, symbol);
    if postings.is_empty() && build_rows.is_empty() {
        if q.page.path_prefix.is_some() && !q.postings(symbol).is_empty() {
            let mut env = q.envelope(TOOL);
            env.results = Some(Results::Records(Vec::new()));
            env.message = Some(format!("no references to '{symbol}' under the path prefix"));
            return env;
        }
        if !defs.is_empty() {
            return no_references(q, symbol);
        }
        return not_found(q, TOOL, symbol);
    }
    let mut env = q.envelope(TOOL);
    env.next_tools = vec!["find_callers", "find_definition"];
    let mut rows = kept_rows(q, &mut env, postings, build_rows);
    let grouped = match group_by {
        GroupBy::File => true,
        GroupBy::Line => false,
        GroupBy::Auto => rows.len() > AUTO_GROUP_ABOVE,
    };
    if grouped {
        let groups = file_groups(&rows);
        if group_by == GroupBy::Auto {
            env.warn(format!(
                "{} references: grouped by file; pass path_prefix to narrow, or group_by=line",
                rows.len()
            ));
        }
        let page = q.paginate(&mut env, groups);
        env.results = Some(Results::Groups(page));
        return env;
    }
    rows.sort_by(|a, b| a.path.cmp(&b.path).then(a.line.cmp(&b.line)));
    // The n-th posting on a line is the n-th occurrence on it: that gives the column.
    let mut nth = vec![0usize; rows.len()];
    for i in 1..rows.len() {
        if rows[i - 1].path == rows[i].path && rows[i - 1].line == rows[i].line {
            nth[i] = nth[i - 1] + 1;
        }
    }
    let rows: Vec<_> = rows.into_iter().zip(nth).collect();
    let page = q.paginate(&mut env, rows);
    env.results = Some(Results::Records(records(q, symbol, &defs, &page)));
    env
}

/// The lines of Kconfig files and Makefiles that define or name `symbol` (a `CONFIG_` one):
/// `(path, line, role)`, its Kconfig entries first.
fn build_rows(q: &Query<'_>, symbol: &str) -> Vec<(String, u32, &'static str)> {
    // A `CONFIG_` symbol is also defined in Kconfig and named in Kconfig files and Makefiles.
    let mut build_rows: Vec<(String, u32, &'static str)> = q
        .kconfig_entries(symbol)
        .into_iter()
        .map(|k| (k.path, k.entry.line, "def"))
        .collect();
    for u in q.build_uses(symbol) {
        let role = if u
            .path
            .rsplit('/')
            .next()
            .is_some_and(|n| n.starts_with("Kconfig"))
        {
            "kconfig"
        } else {
            "makefile"
        };
        build_rows.push((u.path, u.line, role));
    }
    build_rows
}

/// The rows of `postings` and `build_rows` that the active configuration builds (all of
/// them without one); the others are counted, and listed in `env`.
fn kept_rows<'s>(
    q: &Query<'s>,
    env: &mut Envelope,
    postings: Vec<(usize, knav_index::segment::Posting)>,
    build_rows: Vec<(String, u32, &'static str)>,
) -> Vec<Row<'s>> {
    // References the active configuration does not build are left out and counted; the first
    // hundred are listed with their reasons.
    let mut hidden = 0usize;
    let mut keep =
        |env: &mut Envelope, verdict: Option<Verdict>, path: &str, line: u32| match verdict {
            Some(Verdict::Hidden(reason)) => {
                hidden += 1;
                env.list_hidden(path, line, &reason);
                None
            }
            Some(Verdict::Live) => Some(Some(true)),
            _ => Some(None),
        };
    let mut rows: Vec<Row<'_>> = Vec::with_capacity(postings.len() + build_rows.len());
    for (s, p) in postings {
        let verdict = q.verdict(s, p.file, p.line);
        let path = q.path(s, p.file);
        if let Some(active) = keep(env, verdict, path, p.line) {
            rows.push(Row {
                path: Cow::Borrowed(path),
                line: p.line,
                at: Some((s, p)),
                role: None,
                active,
            });
        }
    }
    for (path, line, role) in build_rows {
        let verdict = q.page.active.as_deref().map(|c| q.file_verdict(&path, c));
        if let Some(active) = keep(env, verdict, &path, line) {
            rows.push(Row {
                path: Cow::Owned(path),
                line,
                at: None,
                role: Some(role),
                active,
            });
        }
    }
    if hidden > env.hidden.len() {
        env.warn(format!(
            "{hidden} references hidden by the active config; the first {} are listed",
            env.hidden.len()
        ));
    }
    rows
}

/// One row per file of `rows`, in path order, with its distinct lines.
fn file_groups(rows: &[Row<'_>]) -> Vec<FileGroup> {
    let mut files: BTreeMap<&str, Vec<u32>> = BTreeMap::new();
    for r in rows {
        files.entry(r.path.as_ref()).or_default().push(r.line);
    }
    files
        .into_iter()
        .map(|(path, mut lines)| {
            lines.sort_unstable();
            lines.dedup();
            FileGroup {
                path: path.to_string(),
                count: lines.len() as u64,
                lines,
            }
        })
        .collect()
}

/// The records of the rows of a page (each with the number of the occurrence on its line) for
/// references to `symbol`, whose definitions are `defs`.
fn records(
    q: &Query<'_>,
    symbol: &str,
    defs: &[super::lookup::Found<'_>],
    page: &[(Row<'_>, usize)],
) -> Vec<Record> {
    let lines = def_lines(defs);
    let registered = indirect::registration_lines(q, symbol);
    let mut out = Vec::with_capacity(page.len());
    for chunk in page.chunks(super::snippet::READ_AHEAD_ROWS) {
        q.read_ahead(&spans(chunk));
        out.extend(
            chunk
                .iter()
                .map(|(row, nth)| record(q, symbol, defs, &lines, &registered, row, *nth)),
        );
        q.forget_windows();
    }
    out
}

/// Per file of `rows` (each once), its first and last line: `(segment, file, first, last)`.
fn spans(rows: &[(Row<'_>, usize)]) -> Vec<(usize, u32, u32, u32)> {
    super::snippet::file_spans(
        rows.iter()
            .filter_map(|(row, _)| row.at.map(|(s, p)| (s, p.file, p.line, p.line))),
    )
}

/// The record of one reference row.
fn record(
    q: &Query<'_>,
    symbol: &str,
    defs: &[super::lookup::Found<'_>],
    lines: &[(usize, u32, u32, knav_ctags::Kind)],
    registered: &std::collections::HashSet<indirect::At>,
    row: &Row<'_>,
    nth: usize,
) -> Record {
    let path = row.path.as_ref();
    let active = q.page.active.as_ref().map(|_| row.active);
    let Some((s, p)) = row.at else {
        return Record {
            symbol: symbol.to_string(),
            path: path.to_string(),
            line: row.line,
            col: q.column(path, row.line, symbol, 0),
            snippet: q.snippet(path, row.line),
            role: row.role.map(str::to_string),
            active,
            ..Default::default()
        };
    };
    let role = match role_of(&p, lines, s) {
        "ref" if registered.contains(&(s, p.file, p.line)) => "register",
        role => role,
    };
    let def = defs
        .iter()
        .find(|f| f.seg == s && f.def.file == p.file && f.def.line == p.line);
    let col = q.column_at(s, p.file, p.line, symbol, nth);
    if q.page.places_only {
        return Record {
            symbol: symbol.to_string(),
            path: path.to_string(),
            line: p.line,
            col,
            kind: def.map(|f| f.def.kind.name().to_string()),
            role: Some(role.to_string()),
            active,
            utf16_col: q.utf16_col(s, p.file, p.line, col),
            ..Default::default()
        };
    }
    Record {
        symbol: symbol.to_string(),
        path: path.to_string(),
        line: p.line,
        col,
        kind: def.map(|f| f.def.kind.name().to_string()),
        typeref: def.and_then(|f| f.def.typeref.map(str::to_string)),
        scope: def.and_then(|f| f.def.scope.map(str::to_string)),
        signature: def.and_then(|f| q.macro_shape(f).1),
        guard: q.guard(s, p.file, p.line),
        snippet: q.snippet_near(s, p.file, p.line, col),
        role: Some(role.to_string()),
        caller: q.enclosing_function(s, p.file, p.line),
        active,
        ..Default::default()
    }
}

/// One reference kept: a posting of the index, or a line of a Kconfig file or Makefile.
struct Row<'s> {
    path: Cow<'s, str>,
    line: u32,
    at: Option<(usize, knav_index::segment::Posting)>,
    /// Build-file rows: `def` (a Kconfig entry), `kconfig` or `makefile`.
    role: Option<&'static str>,
    active: Option<bool>,
}

/// find_references of `name`, defined (a system call's function, reached through its table;
/// a name a macro makes) but named nowhere in the index: none, said as such rather than as a
/// name not found.
fn no_references(q: &Query<'_>, name: &str) -> Envelope {
    let mut env = q.envelope("find_references");
    env.results = Some(Results::Records(Vec::new()));
    env.message = Some(format!(
        "no references to {}: it is defined, and nothing in the index names it",
        crate::envelope::quote(name)
    ));
    env.next_tools = vec!["find_definition", "get_symbol_body"];
    env
}
