//! search_code: definitions ranked for a natural-language query with BM25F. The query's words
//! become terms as the documents' did ([`crate::index::code::terms`]); each document scores, per
//! query term, its idf times the term's weighted, length-normalized frequency over the four
//! fields (name > comment > path > body) saturated by `K1`. The kernel's own code comes before
//! the copies `tools/`, `samples/` and selftests carry (their score is scaled down), and a
//! document of a file a newer segment replaced is not counted. The best [`RERANKED`] are then
//! scaled up by how widely their name is used (the number of files it occurs in): among
//! definitions that match a question alike, the kernel's own API (`kfree`, `mutex_lock`)
//! answers it more often than a driver's helper.

use std::cmp::Reverse;

use knav_ctags::Kind;

use super::{Found, Query};
use crate::envelope::{Envelope, Results, Score};
use crate::index::code::extract::{Field, FIELDS};
use crate::index::code::terms::Terms;

const TOOL: &str = "search_code";

/// Field weights: name, comment, path, body.
const WEIGHTS: [f32; FIELDS] = [6.0, 4.0, 1.0, 0.2];

/// Length normalization of each field (0: none, 1: full).
const B: [f32; FIELDS] = [0.5, 0.75, 0.5, 0.75];

/// Term frequency saturation.
const K1: f32 = 1.2;

/// The score of a definition in `tools/`, `samples/`, a selftest or `Documentation/` is
/// scaled by this.
const COPY_FACTOR: f32 = 0.5;

/// The score of a type (struct, union, enum, typedef) is scaled by this: a question in words
/// asks more often what code does than what it holds.
const TYPE_FACTOR: f32 = 0.6;

/// The bit of [`crate::rank::rank_byte`] that marks such copies.
const COPY_RANK: u8 = 1 << 4;

/// Documents whose score the use of their name scales, best first; every other scores less
/// than they do before and after.
const RERANKED: usize = 1000;

/// How much the use of a name counts: the score is scaled by `1 + POPULARITY * ln(1 + files)`.
const POPULARITY: f32 = 0.3;

/// The words kernel code abbreviates, and how: a query with every word on the left also
/// searches for those on the right (`handle a hardware interrupt` for `irq`), each weighted
/// [`EXPANDED`].
const ABBREVIATIONS: &[(&str, &str)] = &[
    ("address", "addr"),
    ("buffer", "buf"),
    ("configuration", "config cfg"),
    ("device", "dev"),
    ("directory", "dir"),
    ("file descriptor", "fd"),
    ("initialize", "init"),
    ("interrupt", "irq"),
    ("memory", "mem"),
    ("message", "msg"),
    ("number", "nr num"),
    ("packet", "skb pkt"),
    ("pointer", "ptr"),
    ("process", "task proc"),
    ("receive", "rx recv"),
    ("reference", "ref"),
    ("request", "req"),
    ("signal", "sig"),
    ("system call", "syscall"),
    ("transmit", "tx xmit"),
];

/// How much an abbreviation a query did not write counts against its own words.
const EXPANDED: f32 = 0.5;

/// Adds to the term ids `ids` of a query those of the abbreviations of its words.
fn expand(words: &mut Terms, ids: &mut Vec<u32>) {
    let asked = ids.clone();
    for (long, short) in ABBREVIATIONS {
        let mut all = true;
        words.of_text(long.as_bytes(), |id| all &= asked.contains(&id));
        if all {
            words.of_text(short.as_bytes(), |id| {
                if !ids.contains(&id) {
                    ids.push(id)
                }
            });
        }
    }
}

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
    let asked = ids.len();
    expand(&mut words, &mut ids);
    let terms: Vec<(&str, f32)> = ids
        .iter()
        .enumerate()
        .map(|(i, &id)| (words.term(id), if i < asked { 1.0 } else { EXPANDED }))
        .collect();
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
    rerank_by_use(q, &mut hits);
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
fn score(q: &Query<'_>, terms: &[(&str, f32)], kind: Option<Kind>) -> Vec<Hit> {
    let segs = &q.snap.segments;
    let n: f32 = segs.iter().map(|s| s.code().len() as f32).sum();
    let mut hits = Vec::new();
    let idf: Vec<f32> = terms
        .iter()
        .map(|(t, factor)| {
            let df: u64 = segs
                .iter()
                .filter_map(|s| s.code().postings(t))
                .map(|p| p.docs)
                .sum();
            factor * (1.0 + (n - df as f32 + 0.5) / (df as f32 + 0.5)).ln()
        })
        .collect();
    for (s, seg) in segs.iter().enumerate() {
        let code = seg.code();
        let avg = code.averages();
        let norm = |f: usize, len: u16| 1.0 - B[f] + B[f] * len as f32 / avg[f].max(1.0);
        let mut scores = vec![0f32; code.len() as usize];
        // A term's weighted frequency in each document, over its fields, and who has one.
        let mut freq = vec![0f32; code.len() as usize];
        let mut touched: Vec<u32> = Vec::new();
        for ((t, _), idf) in terms.iter().zip(&idf) {
            let Some(mut postings) = code.postings(t) else {
                continue;
            };
            for (doc, tf) in postings.by_ref() {
                let (Some(d), Some(slot)) = (code.doc(doc), freq.get_mut(doc as usize)) else {
                    seg.mark_damaged("codepost.dat", "a posting names no document");
                    return Vec::new();
                };
                for f in [Field::Name, Field::Comment, Field::Body].map(|f| f as usize) {
                    if tf[f] > 0 {
                        *slot += WEIGHTS[f] * tf[f] as f32 / norm(f, d.head.lens[f]);
                    }
                }
                touched.push(doc);
            }
            if postings.overrun {
                seg.mark_damaged("codepost.dat", "a term's postings run past its end");
                return Vec::new();
            }
            let path = Field::Path as usize;
            for (file, count) in postings.files() {
                for doc in code.docs_of(file) {
                    let Some(d) = code.doc(doc) else { break };
                    if freq[doc as usize] == 0.0 {
                        touched.push(doc);
                    }
                    freq[doc as usize] +=
                        WEIGHTS[path] * count as f32 / norm(path, d.head.lens[path]);
                }
            }
            for &doc in &touched {
                let w = std::mem::take(&mut freq[doc as usize]);
                scores[doc as usize] += idf * w / (K1 + w);
            }
            touched.clear();
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
            let mut score = if copy { score * COPY_FACTOR } else { score };
            if d.head.kind != Kind::Function as u8 {
                score *= TYPE_FACTOR;
            }
            hits.push(Hit { seg: s, doc, score });
        }
    }
    hits
}

/// Scales the scores of the best [`RERANKED`] hits by how many files use their name.
fn rerank_by_use(q: &Query<'_>, hits: &mut [Hit]) {
    let key = |h: &Hit| (Reverse(h.score.to_bits()), h.seg, h.doc);
    if hits.len() > RERANKED {
        hits.select_nth_unstable_by_key(RERANKED, key);
    }
    let n = hits.len().min(RERANKED);
    for h in &mut hits[..n] {
        let seg = &q.snap.segments[h.seg];
        let Some(doc) = seg.code().doc(h.doc) else {
            continue;
        };
        let name = seg.def_at(doc.def).name;
        let uses = seg
            .lookup(name.as_bytes())
            .map_or(0.0, |e| e.files as f32 / e.defs.len().max(1) as f32);
        h.score *= 1.0 + POPULARITY * (1.0 + uses).ln();
    }
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
