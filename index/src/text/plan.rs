//! From a pattern to the files that can hold a match: the trigrams every match must contain,
//! as an AND/OR query over the posting lists.
//!
//! Each node of the pattern's syntax tree requires what its parts require (a concatenation all
//! of them, an alternation one of them, a repetition its body when it repeats at least once),
//! and, whatever its shape, one of the prefixes and one of the suffixes regex-syntax's literal
//! extraction gives it (which expands case-insensitive letters and small classes into
//! literals). A literal shorter than three bytes requires nothing. The query can only select
//! too many files, never too few: the search confirms every candidate.

use regex_syntax::hir::literal::{ExtractKind, Extractor, Seq};
use regex_syntax::hir::{Hir, HirKind};

use super::index::{trigram, TextIndex};

/// What a pattern requires of a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Need {
    /// Nothing: every file is a candidate.
    All,
    /// This trigram.
    Tri(u32),
    /// Every one of these.
    And(Vec<Need>),
    /// One of these.
    Or(Vec<Need>),
}

impl Need {
    fn and(parts: Vec<Need>) -> Need {
        let mut out: Vec<Need> = Vec::new();
        for p in parts {
            match p {
                Need::All => {}
                Need::And(v) => out.extend(v),
                other => out.push(other),
            }
        }
        Need::joined(out, Need::And)
    }

    fn or(parts: Vec<Need>) -> Need {
        let mut out: Vec<Need> = Vec::new();
        for p in parts {
            match p {
                Need::All => return Need::All,
                Need::Or(v) => out.extend(v),
                other => out.push(other),
            }
        }
        Need::joined(out, Need::Or)
    }

    /// `parts` sorted and deduplicated: no need at all, the one need, or `make` of them all.
    fn joined(mut parts: Vec<Need>, make: fn(Vec<Need>) -> Need) -> Need {
        parts.sort_by_key(|n| format!("{n:?}"));
        parts.dedup();
        match parts.len() {
            0 => Need::All,
            1 => parts.pop().unwrap_or(Need::All),
            _ => make(parts),
        }
    }
}

/// The trigrams of one literal (nothing when shorter than three bytes).
fn literal(bytes: &[u8]) -> Need {
    Need::and(
        bytes
            .windows(3)
            .map(|w| Need::Tri(trigram(w[0], w[1], w[2])))
            .collect(),
    )
}

/// One of the literals of `seq` (nothing when it is infinite or has an empty literal).
fn one_of(seq: &Seq) -> Need {
    match seq.literals() {
        Some(lits) if !lits.is_empty() => {
            Need::or(lits.iter().map(|l| literal(l.as_bytes())).collect())
        }
        _ => Need::All,
    }
}

fn extract(hir: &Hir, kind: ExtractKind) -> Seq {
    let mut e = Extractor::new();
    e.kind(kind);
    e.extract(hir)
}

/// What a match of `hir` requires.
pub fn need(hir: &Hir) -> Need {
    let shape = match hir.kind() {
        HirKind::Literal(l) => literal(&l.0),
        HirKind::Concat(parts) => Need::and(parts.iter().map(need).collect()),
        HirKind::Alternation(parts) => Need::or(parts.iter().map(need).collect()),
        HirKind::Capture(c) => need(&c.sub),
        HirKind::Repetition(r) if r.min >= 1 => need(&r.sub),
        _ => Need::All,
    };
    Need::and(vec![
        shape,
        one_of(&extract(hir, ExtractKind::Prefix)),
        one_of(&extract(hir, ExtractKind::Suffix)),
    ])
}

/// The syntax tree rg's matcher is built from, for planning: the same flags (Unicode,
/// multi-line anchors, case folding with `ignore_case`, the pattern escaped with `fixed`).
pub fn parse(pattern: &str, fixed: bool, ignore_case: bool) -> Result<Hir, String> {
    let text = if fixed {
        regex_syntax::escape(pattern)
    } else {
        pattern.to_string()
    };
    regex_syntax::ParserBuilder::new()
        .case_insensitive(ignore_case)
        .multi_line(true)
        .utf8(false)
        .build()
        .parse(&text)
        .map_err(|e| e.to_string())
}

/// The ids of the documents of `idx` that satisfy `need`, in order; `None` for every one.
pub fn files(need: &Need, idx: &TextIndex) -> Result<Option<Vec<u32>>, &'static str> {
    Ok(match need {
        Need::All => None,
        Need::Tri(t) => Some(idx.list(*t)?),
        Need::And(parts) => {
            let mut lists = Vec::new();
            for p in parts {
                if let Some(l) = files(p, idx)? {
                    if l.is_empty() {
                        return Ok(Some(l));
                    }
                    lists.push(l);
                }
            }
            lists.sort_by_key(Vec::len);
            let mut it = lists.into_iter();
            let Some(mut acc) = it.next() else {
                return Ok(None);
            };
            for l in it {
                let mut j = 0;
                acc.retain(|id| {
                    while j < l.len() && l[j] < *id {
                        j += 1;
                    }
                    j < l.len() && l[j] == *id
                });
                if acc.is_empty() {
                    break;
                }
            }
            Some(acc)
        }
        Need::Or(parts) => {
            let mut acc: Vec<u32> = Vec::new();
            for p in parts {
                match files(p, idx)? {
                    None => return Ok(None),
                    Some(l) => acc.extend(l),
                }
            }
            acc.sort_unstable();
            acc.dedup();
            Some(acc)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tris(s: &str) -> Need {
        literal(s.as_bytes())
    }

    #[test]
    fn a_literal_needs_its_trigrams_and_a_short_one_nothing() {
        let n = need(&parse("kmalloc", false, false).unwrap());
        assert_eq!(n, tris("kmalloc"));
        assert_eq!(need(&parse("ab", false, false).unwrap()), Need::All);
        assert_eq!(
            need(&parse("[A-Z_]{40,}", false, false).unwrap()),
            Need::All
        );
    }

    #[test]
    fn case_folding_and_alternation_keep_what_every_match_needs() {
        // Folded trigrams: -i needs the same as the literal.
        assert_eq!(
            need(&parse("MuTeX_Init", false, true).unwrap()),
            tris("mutex_init")
        );
        let n = need(&parse("foo_bar|baz_qux", false, false).unwrap());
        assert_eq!(n, Need::or(vec![tris("foo_bar"), tris("baz_qux")]));
        // Both ends of a gap are needed.
        let n = need(&parse(r"spin_lock\(.*irq", false, false).unwrap());
        assert_eq!(n, Need::and(vec![tris("spin_lock("), tris("irq")]));
        // An optional part needs nothing; a fixed string's metacharacters are literal.
        assert_eq!(need(&parse("(abcd)?xy", false, false).unwrap()), Need::All);
        assert_eq!(need(&parse("a.b*c", true, false).unwrap()), tris("a.b*c"));
    }
}
