//! Why search_code ranked a definition, in a few words: which of the query's words it has and
//! where — its name, the comment above it, its path, its lines — as the ranking weighs them
//! (`name: wake up process · comment: queue · body: sleeping`). Which words a definition has
//! comes from the ranking; where, from the definition's name, comment and path, with the terms
//! the ranking used (a word in none of them is in the body).

use knav_index::code::terms::Terms;

/// Where a definition has its words, in the ranking's order of weight.
const FIELDS: [&str; 4] = ["name", "comment", "path", "body"];

/// A query word as the user wrote it, and the terms that count as it (its own first, then the
/// abbreviations: `interrupt`, `irq`).
pub struct Word {
    /// As written.
    pub written: String,
    /// Its terms.
    pub terms: Vec<String>,
}

/// The query's words: each slot's terms with the query's word that made it.
pub fn words(query: &str, slots: &[Vec<String>]) -> Vec<Word> {
    let mut stems = Terms::default();
    slots
        .iter()
        .map(|terms| {
            let written = query
                .split(|c: char| !c.is_alphanumeric() && c != '_')
                .find(|w| {
                    let ids = stems.of_ident(w.as_bytes()).to_vec();
                    ids.iter()
                        .any(|&id| Some(stems.term(id)) == terms.first().map(|t| t.as_str()))
                })
                .unwrap_or_else(|| terms.first().map_or("", |t| t.as_str()))
                .to_lowercase();
            Word {
                written,
                terms: terms.clone(),
            }
        })
        .collect()
}

/// The reasons of a definition named `name` at `path`, with comment text `comment`, that has
/// the query's words of `mask` (bit i: `words[i]`, as the ranking found them): per field, the
/// words it has there that no weightier field has; a word found in none of the name, the
/// comment and the path is in the body. `stems` is kept from one definition to the next (a
/// word is stemmed once).
pub fn reasons(
    stems: &mut Terms,
    words: &[Word],
    mask: u32,
    name: &str,
    comment: &str,
    path: &str,
) -> String {
    let mut per_field: Vec<Vec<String>> = vec![Vec::new(); FIELDS.len()];
    let mut unfound: Vec<&Word> = words
        .iter()
        .enumerate()
        .filter(|(i, _)| mask & (1 << i) != 0)
        .map(|(_, w)| w)
        .collect();
    let mut lower = String::new();
    for (f, text) in [name, comment, path].into_iter().enumerate() {
        if unfound.is_empty() {
            break;
        }
        // Only identifiers that could hold a term of a word not found yet are stemmed: those
        // with its first two letters (a stem may end differently from the word: `memori`).
        let heads: Vec<&str> = unfound
            .iter()
            .flat_map(|w| w.terms.iter())
            .map(|t| &t[..t.char_indices().nth(2).map_or(t.len(), |(i, _)| i)])
            .collect();
        let mut idents: Vec<&str> = text
            .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
            .filter(|w| w.len() > 1)
            .collect();
        idents.sort_unstable();
        idents.dedup();
        let mut have: Vec<String> = Vec::new();
        for ident in idents {
            lower.clear();
            lower.push_str(ident);
            lower.make_ascii_lowercase();
            if !heads.iter().any(|h| lower.contains(h)) {
                continue;
            }
            let ids = stems.of_ident(ident.as_bytes()).to_vec();
            have.extend(ids.iter().map(|&id| stems.term(id).to_string()));
        }
        have.sort_unstable();
        have.dedup();
        unfound.retain(|w| {
            let Some(t) = w.terms.iter().find(|t| have.binary_search(t).is_ok()) else {
                return true;
            };
            // A stem's variant (`queu` of `queued` for `queue`) is the word itself.
            let own = w.terms.first().is_some_and(|o| o.starts_with(t.as_str()));
            per_field[f].push(match own {
                true => w.written.clone(),
                false => format!("{} ({t})", w.written),
            });
            false
        });
    }
    per_field[FIELDS.len() - 1].extend(unfound.iter().map(|w| w.written.clone()));
    let parts: Vec<String> = per_field
        .iter()
        .zip(FIELDS)
        .filter(|(w, _)| !w.is_empty())
        .map(|(w, f)| format!("{f}: {}", w.join(" ")))
        .collect();
    parts.join(" · ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slots(terms: &[&[&str]]) -> Vec<Vec<String>> {
        terms
            .iter()
            .map(|t| t.iter().map(|s| s.to_string()).collect())
            .collect()
    }

    #[test]
    fn reasons_name_each_word_once_in_its_weightiest_field() {
        let s = slots(&[&["wake"], &["process", "task"], &["queue"], &["sleep"]]);
        let w = words("wake up a Process sleeping on a queue", &s);
        assert_eq!(w[1].written, "process");
        assert_eq!(w[3].written, "sleeping");
        let why = reasons(
            &mut Terms::default(),
            &w,
            0b1111,
            "wake_up_process",
            "wake_up_process - Wake up a specific process from its queue",
            "kernel/sched/core.c",
        );
        assert_eq!(why, "name: wake process · comment: queue · body: sleeping");
        // A word the ranking did not find is not a reason.
        let why = reasons(
            &mut Terms::default(),
            &w,
            0b0011,
            "wake_up_process",
            "",
            "kernel/sched/core.c",
        );
        assert_eq!(why, "name: wake process");
    }

    #[test]
    fn an_abbreviation_that_matched_is_shown_beside_the_word() {
        let s = slots(&[&["receiv", "rcv"], &["packet", "skb"]]);
        let w = words("receive packets", &s);
        let why = reasons(
            &mut Terms::default(),
            &w,
            0b11,
            "tcp_v4_rcv",
            "",
            "net/ipv4/tcp_ipv4.c",
        );
        assert_eq!(why, "name: receive (rcv) · body: packets");
    }
}
