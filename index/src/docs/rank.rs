//! BM25F over a section's two fields: a word in the title counts [`TITLE_WEIGHT`] times one in
//! the body, each field's count normalised by its length against the average, then saturated
//! by BM25's `k1` and weighted by the word's inverse document frequency.

use std::collections::HashMap;

use super::part::{Doc, Docs};
use crate::bm25;
use crate::error::IndexError;

/// How much a word in the title counts against one in the body.
const TITLE_WEIGHT: f32 = 4.0;
/// BM25's length normalisation.
const B: f32 = 0.75;

/// Every section holding one of `terms` (distinct search words) with its score.
pub fn bm25f(docs: &Docs, terms: &[String]) -> Result<Vec<(f32, u32)>, IndexError> {
    let n = docs.docs.len().max(1) as f32;
    let avg = |f: fn(&Doc) -> u32| {
        (docs.docs.iter().map(|d| f(d) as f64).sum::<f64>() / n as f64).max(1.0) as f32
    };
    let (avg_title, avg_body) = (avg(|d| d.title_words), avg(|d| d.body_words));
    let norm = |len: u32, avg: f32| bm25::norm(B, len as f32, avg);
    let mut acc: HashMap<u32, f32> = HashMap::new();
    for t in terms {
        let list = docs.postings(t)?;
        let df = list.len() as f32;
        let idf = bm25::idf(n, df);
        for (d, in_title, in_body) in list {
            let doc = &docs.docs[d as usize];
            let tf = TITLE_WEIGHT * in_title as f32 / norm(doc.title_words, avg_title)
                + in_body as f32 / norm(doc.body_words, avg_body);
            *acc.entry(d).or_default() += bm25::score(idf, tf);
        }
    }
    Ok(acc.into_iter().map(|(d, s)| (s, d)).collect())
}
