//! search_code: definitions ranked for a natural-language query with BM25F. The query's words
//! become terms as the documents' did ([`crate::index::code::terms`]); each document scores, per
//! query term, its idf times the term's weighted, length-normalized frequency over the four
//! fields (name > comment > path > body) saturated by `K1`. The kernel's own code comes before
//! the copies `tools/`, `samples/` and selftests carry (their score is scaled down), and a
//! document of a file a newer segment replaced is not counted.

use std::cmp::Reverse;

use knav_ctags::Kind;

use super::{Found, Query};
use crate::envelope::{Envelope, Results, Score};
use crate::index::code::extract::FIELDS;
use crate::index::code::terms::Terms;

const TOOL: &str = "search_code";

/// Field weights: name, comment, path, body.
const WEIGHTS: [f32; FIELDS] = [4.0, 2.0, 1.5, 1.0];

/// Length normalization of each field (0: none, 1: full).
const B: [f32; FIELDS] = [0.5, 0.75, 0.5, 0.75];

/// Term frequency saturation.
const K1: f32 = 1.2;

/// The score of a definition in `tools/`, `samples/`, a selftest or `Documentation/` is
/// scaled by this.
const COPY_FACTOR: f32 = 0.5;

/// The bit of [`crate::rank::rank_byte`] that marks such copies.
const COPY_RANK: u8 = 1 << 4;

/// Query terms at most: a longer query is refused rather than walking every postings list.
const MAX_TERMS: usize = 32;

/// A document that scored, in segment `seg`.
#[derive(Clone, Copy, Debug)]
struct Hit {
    seg: usize,
    doc: u32,
    score: f32,
}

/// Answers search_code for `query`, keeping definitions of `kind` when given.
pub fn search_code(q: &Query<'_>, query: &str, kind: Option<Kind>) -> Envelope {
    let mut words = Terms::default();
    let mut ids = Vec::new();
    words.of_text(query.as_bytes(), |id| {
        if !ids.contains(&id) {
            ids.push(id)
        }
    });
    let terms: Vec<&str> = ids.iter().map(|&id| words.term(id)).collect();
    if terms.is_empty() {
        return q.envelope_error(
            TOOL,
            format!(
                "query {} has no word to search for (only stopwords, numbers or single \
                 letters); describe what the code does: `oom kill process`",
                crate::request::quote(query)
            ),
        );
    }
    if terms.len() > MAX_TERMS {
        return q.envelope_error(
            TOOL,
            format!("query has {} words; give at most {MAX_TERMS}", terms.len()),
        );
    }
    let mut hits = score(q, &terms, kind);
    let mut env = q.envelope(TOOL);
    super::order_pages(q, &mut hits, |h| (Reverse(h.score.to_bits()), h.seg, h.doc));
    let page = q.paginate(&mut env, hits);
    let mut records = Vec::with_capacity(page.len());
    for h in page {
        let seg = &q.snap.segments[h.seg];
        let Some(doc) = seg.code().doc(h.doc) else {
            seg.mark_damaged("codedocs.dat", "a document id is past its end");
            continue;
        };
        let def = seg.def_at(doc.def);
        let mut r = q.def_record(&Found { seg: h.seg, def });
        r.end_line = def.end_line;
        r.score = Some(Score((h.score * 100.0).round() as f64 / 100.0));
        if doc.head.comment_back > 0 {
            let line = def.line.saturating_sub(doc.head.comment_back as u32);
            let text = q.snippet_at(h.seg, def.file, line);
            r.comment = Some(comment_words(&text)).filter(|c| !c.is_empty());
        }
        records.push(r);
    }
    if env.total == 0 {
        env.message = Some(format!(
            "no definition matches '{query}'{}; try other words, `knav find` (search_symbols) \
             for parts of a name, or `knav grep` (search_text) for text",
            kind.map_or(String::new(), |k| format!(" with kind {}", k.name()))
        ));
        env.next_tools = vec!["search_symbols", "search_text"];
    } else {
        env.next_tools = vec!["get_symbol_body", "find_callers"];
    }
    env.results = Some(Results::Records(records));
    env
}

/// Every live document with at least one of `terms` (of `kind`, under the path prefix), scored.
fn score(q: &Query<'_>, terms: &[&str], kind: Option<Kind>) -> Vec<Hit> {
    let segs = &q.snap.segments;
    let n: f32 = segs.iter().map(|s| s.code().len() as f32).sum();
    let mut hits = Vec::new();
    let idf: Vec<f32> = terms
        .iter()
        .map(|t| {
            let df: u64 = segs
                .iter()
                .filter_map(|s| s.code().postings(t))
                .map(|p| p.docs)
                .sum();
            (1.0 + (n - df as f32 + 0.5) / (df as f32 + 0.5)).ln()
        })
        .collect();
    for (s, seg) in segs.iter().enumerate() {
        let code = seg.code();
        let avg = code.averages();
        let mut scores = vec![0f32; code.len() as usize];
        for (t, idf) in terms.iter().zip(&idf) {
            let Some(mut postings) = code.postings(t) else {
                continue;
            };
            for (doc, tf) in postings.by_ref() {
                let (Some(d), Some(slot)) = (code.doc(doc), scores.get_mut(doc as usize)) else {
                    seg.mark_damaged("codepost.dat", "a posting names no document");
                    return Vec::new();
                };
                let mut w = 0f32;
                for f in 0..FIELDS {
                    if tf[f] > 0 {
                        let norm = 1.0 - B[f] + B[f] * d.head.lens[f] as f32 / avg[f].max(1.0);
                        w += WEIGHTS[f] * tf[f] as f32 / norm;
                    }
                }
                *slot += idf * w / (K1 + w);
            }
            if postings.overrun {
                seg.mark_damaged("codepost.dat", "a term's postings run past its end");
                return Vec::new();
            }
        }
        let check_file = !q.snap.all_live(s) || q.page.path_prefix.is_some();
        for (doc, &score) in scores.iter().enumerate() {
            if score <= 0.0 {
                continue;
            }
            let doc = doc as u32;
            let Some(d) = code.doc(doc) else { continue };
            if kind.is_some_and(|k| d.head.kind != k as u8) {
                continue;
            }
            if check_file {
                let Some(file) = code.file_of(doc) else {
                    seg.mark_damaged("codedocs.dat", "a document has no file");
                    return Vec::new();
                };
                if !q.snap.is_live(s, file) || !q.wanted_file(s, file) {
                    continue;
                }
            }
            let copy = d.head.rank & COPY_RANK != 0;
            hits.push(Hit {
                seg: s,
                doc,
                score: if copy { score * COPY_FACTOR } else { score },
            });
        }
    }
    hits
}

/// The words of a comment's line: without its `/*`, `*`, `//` and `*/`.
fn comment_words(line: &str) -> String {
    let t = line.trim();
    let t = t.strip_suffix("*/").unwrap_or(t);
    t.trim_start_matches(['/', '*', '!']).trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_comment_line_loses_its_markers() {
        assert_eq!(
            comment_words(" * kfree - free memory"),
            "kfree - free memory"
        );
        assert_eq!(comment_words("/** kfree - free */"), "kfree - free");
        assert_eq!(comment_words("// Pick a victim"), "Pick a victim");
    }
}
