//! find_references: every occurrence of a name, with its role, guard and enclosing function.

use std::collections::BTreeMap;

use super::{def_lines, not_found, role_of, valid_name, Query, Verdict};
use crate::envelope::{Envelope, FileGroup, Hidden, Record, Results};

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

/// Hidden references listed at most; the rest are counted in a warning.
const MAX_HIDDEN_LISTED: usize = 100;

/// Answers find_references for `symbol`.
pub fn find_references(q: &Query<'_>, symbol: &str, group_by: GroupBy) -> Envelope {
    const TOOL: &str = "find_references";
    if !valid_name(symbol) {
        return q.envelope_error(TOOL, format!("'{symbol}' is not a C identifier"));
    }
    let defs = q.definitions(symbol);
    let lines = def_lines(&defs);
    let postings: Vec<_> = q
        .postings(symbol)
        .into_iter()
        .filter(|(s, p)| q.wanted_file(*s, p.file))
        .collect();
    if postings.is_empty() {
        if q.page.path_prefix.is_some() && !q.postings(symbol).is_empty() {
            let mut env = q.envelope(TOOL);
            env.results = Some(Results::Records(Vec::new()));
            env.message = Some(format!("no references to '{symbol}' under the path prefix"));
            return env;
        }
        return not_found(q, TOOL, symbol);
    }
    let mut env = q.envelope(TOOL);
    env.next_tools = vec!["find_callers", "find_definition"];
    // References the active configuration does not build are left out and counted; the first
    // hundred are listed with their reasons.
    let mut hidden = 0usize;
    // Each kept posting with its `active` value.
    let postings: Vec<_> = postings
        .into_iter()
        .filter_map(|(s, p)| match q.verdict(s, p.file, p.line) {
            Some(Verdict::Hidden(reason)) => {
                hidden += 1;
                if env.hidden.len() < MAX_HIDDEN_LISTED {
                    env.hidden.push(Hidden {
                        path: q.path(s, p.file).to_string(),
                        line: p.line,
                        reason,
                    });
                }
                None
            }
            Some(Verdict::Live) => Some(((s, p), Some(true))),
            _ => Some(((s, p), None)),
        })
        .collect();
    if hidden > env.hidden.len() {
        env.warn(format!(
            "{hidden} references hidden by the active config; the first {} are listed",
            env.hidden.len()
        ));
    }
    let grouped = match group_by {
        GroupBy::File => true,
        GroupBy::Line => false,
        GroupBy::Auto => postings.len() > AUTO_GROUP_ABOVE,
    };
    if grouped {
        let mut files: BTreeMap<(usize, u32), Vec<u32>> = BTreeMap::new();
        for ((s, p), _) in &postings {
            files.entry((*s, p.file)).or_default().push(p.line);
        }
        let mut groups: Vec<FileGroup> = files
            .into_iter()
            .map(|((s, f), mut lines)| {
                lines.dedup();
                FileGroup {
                    path: q.path(s, f).to_string(),
                    count: 0,
                    lines,
                }
            })
            .collect();
        for g in &mut groups {
            g.count = g.lines.len() as u64;
        }
        groups.sort_by(|a, b| a.path.cmp(&b.path));
        if group_by == GroupBy::Auto {
            env.warn(format!(
                "{} references: grouped by file; pass path_prefix to narrow, or group_by=line",
                postings.len()
            ));
        }
        let page = q.paginate(&mut env, groups);
        env.results = Some(Results::Groups(page));
        return env;
    }
    let mut rows = postings;
    rows.sort_by(|(a, _), (b, _)| {
        q.path(a.0, a.1.file)
            .cmp(q.path(b.0, b.1.file))
            .then(a.1.line.cmp(&b.1.line))
    });
    // The n-th posting on a line is the n-th occurrence on it: that gives the column.
    let mut nth = vec![0usize; rows.len()];
    for i in 1..rows.len() {
        let (a, b) = (&rows[i - 1].0, &rows[i].0);
        if a.0 == b.0 && a.1.file == b.1.file && a.1.line == b.1.line {
            nth[i] = nth[i - 1] + 1;
        }
    }
    let rows: Vec<_> = rows.into_iter().zip(nth).collect();
    let page = q.paginate(&mut env, rows);
    let records = page
        .iter()
        .map(|(((s, p), active), nth)| {
            let path = q.path(*s, p.file);
            let role = role_of(p, &lines, *s);
            let def = defs
                .iter()
                .find(|f| f.seg == *s && f.def.file == p.file && f.def.line == p.line);
            Record {
                symbol: symbol.to_string(),
                path: path.to_string(),
                line: p.line,
                col: q.column(path, p.line, symbol, *nth),
                kind: def.map(|f| f.def.kind.name().to_string()),
                typeref: def.and_then(|f| f.def.typeref.map(str::to_string)),
                scope: def.and_then(|f| f.def.scope.map(str::to_string)),
                signature: def.and_then(|f| q.macro_shape(f).1),
                guard: q.guard(*s, p.file, p.line),
                snippet: q.snippet(path, p.line),
                role: Some(role.to_string()),
                caller: q.enclosing_function(*s, p.file, p.line),
                active: q.page.active.as_ref().map(|_| *active),
                ..Default::default()
            }
        })
        .collect();
    env.results = Some(Results::Records(records));
    env
}
