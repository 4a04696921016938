//! find_definition: where a name is defined, under which guards, how hot and whether exported.

use std::collections::{BTreeSet, HashMap};

use super::{def_lines, not_found, role_of, valid_name, Query};
use crate::envelope::{DefSummary, Envelope, Export, Results, TopFile};
use crate::scan::Role;

/// Answers find_definition for `symbol`.
pub fn find_definition(q: &Query<'_>, symbol: &str) -> Envelope {
    const TOOL: &str = "find_definition";
    if !valid_name(symbol) {
        return q.envelope_error(TOOL, format!("'{symbol}' is not a C identifier"));
    }
    let defs = q.definitions(symbol);
    let postings = q.postings(symbol);
    if defs.is_empty() && postings.is_empty() {
        return not_found(q, TOOL, symbol);
    }
    let mut env = q.envelope(TOOL);
    let lines = def_lines(&defs);
    let mut per_file: HashMap<(usize, u32), u64> = HashMap::new();
    let mut refs = 0u64;
    let mut exported = None;
    for (s, p) in &postings {
        if p.role == Role::Export && exported.is_none() {
            let path = q.path(*s, p.file);
            let macro_name = q
                .source(path)
                .and_then(|src| {
                    src.line(p.line).map(|l| {
                        let l = String::from_utf8_lossy(l);
                        let t = l.trim_start();
                        t[..t.find('(').unwrap_or(t.len())].trim().to_string()
                    })
                })
                .unwrap_or_else(|| "EXPORT_SYMBOL".into());
            exported = Some(Export {
                macro_name,
                path: path.to_string(),
                line: p.line,
            });
        }
        if matches!(role_of(p, &lines, *s), "def" | "decl") {
            continue;
        }
        refs += 1;
        *per_file.entry((*s, p.file)).or_default() += 1;
    }
    let mut top: Vec<TopFile> = per_file
        .iter()
        .map(|((s, f), c)| TopFile {
            path: q.path(*s, *f).to_string(),
            count: *c,
        })
        .collect();
    top.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.path.cmp(&b.path)));
    top.truncate(5);

    let wanted: Vec<_> = defs
        .iter()
        .filter(|f| q.wanted(q.path(f.seg, f.def.file)))
        .collect();
    let records: Vec<_> = wanted.iter().map(|f| q.def_record(f)).collect();
    let variants: BTreeSet<_> = records.iter().map(|r| r.guard.clone()).collect();
    env.summary = Some(DefSummary {
        symbol: symbol.to_string(),
        definition_count: records.len() as u64,
        guard_variants: variants.len() as u64,
        reference_count: refs,
        file_count: per_file.len() as u64,
        top_files: top,
        exported,
    });
    if records.is_empty() {
        env.message = Some(if defs.is_empty() {
            format!(
                "no definition of '{symbol}' in the index; it occurs {} times in {} files",
                postings.len(),
                per_file.len()
            )
        } else {
            "no definition under the path prefix".to_string()
        });
        env.next_tools = vec!["find_references"];
        env.results = Some(Results::Records(Vec::new()));
        return env;
    }
    let page = q.paginate(&mut env, records);
    env.results = Some(Results::Records(page));
    env.next_tools = vec!["get_symbol_body", "find_callers", "find_references"];
    env
}
