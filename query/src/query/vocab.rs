//! A query's words and the terms that count as each of them ([`slots`]): the word's own term
//! and the abbreviations kernel code writes for it ([`ABBREVIATIONS`]: `interrupt` → `irq`,
//! and back, `irq` → `interrupt`). A small table of general kernel vocabulary, never names.

use knav_index::code::terms::Terms;

/// The words kernel code abbreviates, and how: in a query with every word on the left, each of
/// those words also matches the terms on the right (`system call`: `system` and `call` each
/// match `syscall`); a one-word left side goes both ways (`irq` in a query also matches
/// `interrupt`).
const ABBREVIATIONS: &[(&str, &str)] = &[
    ("address", "addr"),
    ("buffer", "buf"),
    ("configuration", "config cfg"),
    ("device", "dev"),
    ("directory", "dir"),
    ("file descriptor", "fd"),
    ("initialize", "init"),
    ("interrupt", "irq"),
    ("kernel thread", "kthread"),
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

/// One word of a query: the ids of the terms that count as it, its own first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Slot {
    /// Term ids.
    pub terms: Vec<u32>,
}

impl Slot {
    fn add(&mut self, id: u32) {
        if !self.terms.contains(&id) {
            self.terms.push(id);
        }
    }
}

/// The slots of `query`: one per distinct word that is not a stopword, in query order.
pub fn slots(words: &mut Terms, query: &str) -> Vec<Slot> {
    let mut slots: Vec<Slot> = Vec::new();
    words.of_text(query.as_bytes(), |id| {
        if !slots.iter().any(|s| s.terms[0] == id) {
            slots.push(Slot { terms: vec![id] });
        }
    });
    let own: Vec<u32> = slots.iter().map(|s| s.terms[0]).collect();
    let slot_of = |id: u32| own.iter().position(|&t| t == id);
    for (long, short) in ABBREVIATIONS {
        let (mut long_ids, mut short_ids) = (Vec::new(), Vec::new());
        words.of_text(long.as_bytes(), |id| long_ids.push(id));
        words.of_text(short.as_bytes(), |id| short_ids.push(id));
        let long_slots: Option<Vec<usize>> = long_ids.iter().map(|&id| slot_of(id)).collect();
        for s in long_slots.unwrap_or_default() {
            for &id in &short_ids {
                slots[s].add(id);
            }
        }
        if let [long] = long_ids[..] {
            for &id in &short_ids {
                if let Some(s) = slot_of(id) {
                    slots[s].add(long);
                }
            }
        }
    }
    // `irq interrupt` asks for one thing, not for it twice: a slot with the terms of an
    // earlier one is dropped.
    let mut kept: Vec<Slot> = Vec::with_capacity(slots.len());
    for s in slots {
        let same = |o: &Slot| {
            o.terms.len() == s.terms.len() && o.terms.iter().all(|t| s.terms.contains(t))
        };
        if !kept.iter().any(same) {
            kept.push(s);
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(query: &str) -> Vec<Vec<String>> {
        let mut words = Terms::default();
        let slots = slots(&mut words, query);
        slots
            .iter()
            .map(|s| {
                s.terms
                    .iter()
                    .map(|&id| words.term(id).to_string())
                    .collect()
            })
            .collect()
    }

    #[test]
    fn abbreviations_count_as_the_words_they_stand_for_both_ways() {
        assert_eq!(
            terms("handle a hardware interrupt"),
            [vec!["handl"], vec!["hardwar"], vec!["interrupt", "irq"]]
        );
        assert_eq!(terms("irq irq"), [vec!["irq", "interrupt"]]);
        assert_eq!(terms("irq interrupt"), [vec!["irq", "interrupt"]]);
        assert_eq!(
            terms("create a kernel thread"),
            [
                vec!["creat"],
                vec!["kernel", "kthread"],
                vec!["thread", "kthread"]
            ]
        );
    }

    #[test]
    fn a_many_word_abbreviation_needs_all_its_words_and_goes_one_way() {
        assert_eq!(
            terms("a kernel"),
            [vec!["kernel"]],
            "half of `kernel thread`"
        );
        assert_eq!(terms("kthread"), [vec!["kthread"]]);
    }
}
