//! search_docs: the sections of the tree's documentation ranked for a query in words
//! ([`knav_index::docs::rank::bm25f`]); a section needs one of the query's words. Order: score,
//! then path and line. Each row carries the section's best line (the most query words), read
//! from the file as it is now.

use std::collections::HashMap;
use std::rc::Rc;

use super::Query;
use crate::envelope::{DocHit, Envelope, Results};
use knav_index::docs::part::Docs;
use knav_index::docs::sections::adornment;
use knav_index::docs::words::Words;
use knav_index::IndexError;
use knav_index::Part;

/// The tool this module answers (its MCP name, and `Ask::tool`'s).
pub const TOOL: &str = "search_docs";

/// The longest snippet, in characters.
const SNIPPET_CHARS: usize = 200;

/// Answers search_docs for `query`.
pub fn search_docs(q: &Query<'_>, query: &str) -> Envelope {
    let query = query.trim();
    let words = Words::default();
    let mut terms: Vec<String> = Vec::new();
    words.each(query, |w| terms.push(w.to_string()));
    terms.sort();
    terms.dedup();
    if terms.is_empty() {
        return q.envelope_error(
            TOOL,
            format!(
                "query {} has no word to search for (common English words are left out); \
                 give a few words (out of memory killer)",
                crate::envelope::quote(query)
            ),
        );
    }
    let Some(part) = &q.snap.manifest.docs else {
        let mut env = q.envelope(TOOL);
        env.message = Some(
            "the index holds no documentation (no .rst or .txt file under Documentation/); \
             search the text with knav grep"
                .into(),
        );
        env.results = Some(Results::Docs(Vec::new()));
        return env;
    };
    let ranked = open(q, part).and_then(|docs| {
        let scores = knav_index::docs::rank::bm25f(&docs, &terms)?;
        Ok((docs, scores))
    });
    let (docs, scores) = match ranked {
        Ok(r) => r,
        Err(e) => return q.envelope_error(TOOL, e.rebuild().to_string()),
    };
    let mut hits: Vec<(f32, u32)> = scores
        .into_iter()
        .filter(|&(_, d)| {
            q.page
                .wanted(&docs.paths[docs.docs[d as usize].path as usize])
        })
        .collect();
    let key = |&(s, d): &(f32, u32)| {
        let doc = &docs.docs[d as usize];
        (
            std::cmp::Reverse(s.to_bits()),
            docs.paths[doc.path as usize].as_str(),
            doc.line,
        )
    };
    super::page::order_pages(q, &mut hits, key);
    let mut env = q.envelope(TOOL);
    let page = q.paginate(&mut env, hits);
    // Each file read once, however many of its sections the page holds.
    let mut read: HashMap<String, Rc<String>> = HashMap::new();
    let beneath = knav_index::tree::beneath::Root::open(&q.snap.root).ok();
    let mut text = |path: &str| -> Rc<String> {
        read.entry(path.to_string())
            .or_insert_with(|| {
                let bytes = beneath.as_ref().and_then(|b| b.read(path).ok());
                let bytes = bytes.as_deref().unwrap_or_default();
                Rc::new(String::from_utf8_lossy(bytes).into_owned())
            })
            .clone()
    };
    let rows: Vec<DocHit> = page
        .into_iter()
        .map(|(score, d)| {
            let doc = &docs.docs[d as usize];
            let path = &docs.paths[doc.path as usize];
            DocHit {
                path: path.clone(),
                line: doc.line,
                title: doc.title.clone(),
                snippet: snippet(&text(path), doc, &words, &terms),
                score: (score * 100.0).round() / 100.0,
            }
        })
        .collect();
    if env.total == 0 {
        env.message = Some(format!(
            "no documentation section matches '{query}'; try other words, or search the text \
             with knav grep"
        ));
    } else {
        env.next_tools = vec!["search_symbols"];
    }
    env.results = Some(Results::Docs(rows));
    env
}

/// Opens the documentation part; a small one is checksummed first, as the other parts are.
fn open(q: &Query<'_>, part: &knav_index::docs::DocsRef) -> Result<Docs, IndexError> {
    let docs = <Docs as Part>::open(&q.snap.index_dir, part)?;
    if knav_index::checksum_at_open(docs.bytes()) {
        Docs::verify_files(&q.snap.index_dir, part, Some(&docs))?;
    }
    Ok(docs)
}

/// The line of the section `doc` of `text` with the most of `terms` (the first such; never
/// the title or an adornment), trimmed and cut at [`SNIPPET_CHARS`]; without one, the first
/// other line; empty when the file cannot be read.
fn snippet(
    text: &str,
    doc: &knav_index::docs::part::Doc,
    words: &Words,
    terms: &[String],
) -> String {
    let mut best = (0usize, "");
    for (n, line) in text
        .lines()
        .enumerate()
        .skip(doc.start as usize - 1)
        .take((doc.end + 1 - doc.start) as usize)
    {
        if n + 1 == doc.line as usize || line.trim().is_empty() || adornment(line).is_some() {
            continue;
        }
        if best.1.is_empty() {
            best.1 = line;
        }
        let mut found: Vec<&String> = Vec::new();
        words.each(line, |w| {
            if let Some(t) = terms.iter().find(|t| t.as_str() == w) {
                if !found.contains(&t) {
                    found.push(t);
                }
            }
        });
        if found.len() > best.0 {
            best = (found.len(), line);
        }
    }
    knav_index::docs::sections::cut(best.1.trim(), SNIPPET_CHARS)
}
