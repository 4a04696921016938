//! Abbreviations learned from the tree at query time: for a query word (`receive`), the terms
//! that could abbreviate it (`rcv`, `recv`: [`knav_index::code::read::ShortFor`]) are kept
//! when the tree's own text says they do — the definitions whose name has the short form have
//! the word in the comment above them far more often than definitions at large (`tcp_v4_rcv`'s
//! kerneldoc says "receive"). No list is kept: what the kernel abbreviates, and how, comes from
//! its names and comments.

use knav_index::code::extract::Field;
use knav_index::segment::Segment;

/// Words shorter than this are not abbreviated.
const MIN_WORD: usize = 4;

/// Candidate short forms of a word weighed at most (the term index's first, in order).
const MAX_CANDIDATES: usize = 24;

/// A candidate's definitions with it in their name read at most (a very common short form is
/// a word of its own, `dev`, and the small hand list has the common ones).
const MAX_NAME_DOCS: u64 = 50_000;

/// Definitions with the word read at most.
const MAX_WORD_DOCS: u64 = 30_000;

/// Definitions whose name has the short form and whose comment has the word, at least.
const MIN_TOGETHER: u32 = 3;

/// How much more often than at large the word must be in those definitions' comments.
const MIN_LIFT: f32 = 8.0;

/// The share of the short form's definitions whose comment has the word, at least.
const MIN_SHARE: f32 = 0.04;

/// The short forms of `word` that the segment's names and comments show to stand for it.
pub fn short_forms(seg: &Segment, word: &str) -> Vec<String> {
    if word.len() < MIN_WORD {
        return Vec::new();
    }
    let Some(code) = seg.code() else {
        return Vec::new();
    };
    let n = code.len() as usize;
    let Some(postings) = code.postings(word) else {
        return Vec::new();
    };
    // A word this common is left to the seed table (reading its postings would cost more than
    // the rest of the query).
    if postings.docs > MAX_WORD_DOCS {
        return Vec::new();
    }
    // The documents with the word in their comment.
    let mut with_word = vec![0u64; n.div_ceil(64)];
    let mut commented = 0u32;
    for (doc, tf) in postings {
        if tf[Field::Comment as usize] > 0 && (doc as usize) < n {
            with_word[doc as usize / 64] |= 1 << (doc % 64);
            commented += 1;
        }
    }
    if commented == 0 {
        return Vec::new();
    }
    let base = commented as f32 / n.max(1) as f32;
    let mut out = Vec::new();
    for short in code.shorter_forms(word, MAX_CANDIDATES) {
        let Some(postings) = code.postings(&short) else {
            continue;
        };
        if postings.docs > MAX_NAME_DOCS {
            continue;
        }
        let (mut named, mut together) = (0u32, 0u32);
        for (doc, tf) in postings {
            if tf[Field::Name as usize] == 0 || doc as usize >= n {
                continue;
            }
            named += 1;
            if with_word[doc as usize / 64] & (1 << (doc % 64)) != 0 {
                together += 1;
            }
        }
        let share = together as f32 / named.max(1) as f32;
        if together >= MIN_TOGETHER && share >= MIN_SHARE && share >= MIN_LIFT * base {
            out.push(short);
        }
    }
    out
}
