//! A local header a C file includes (`#include "hw.h"`), read once so that every file
//! including it reads its `#define`s without lexing them again (a driver's headers are
//! included by each of its files), with what the reader's cheap tests need to know of it.
//!
//! Most local headers hold no needle (of Linux 6.12's 16,659, 286 do): such a header only
//! lends its macros to the files that include it, and most are never asked for one. Its
//! `#define`s are then lexed on the first lookup of a name it may define (a Bloom filter of
//! its names says which), not when it is read.

use std::hash::{BuildHasher, BuildHasherDefault};
use std::sync::OnceLock;

use super::{makes_table_or_driver, Context};
use crate::cmacro::{Lookup, Macro, Macros};
use crate::cmacro_lex::{define_names, defines, text};
use crate::fxhash::FxHasher;

/// One local header's `#define`s, owned (`Send` and `Sync`: read once, then by every file
/// that includes it, from any thread), and what they hold for the [`Context`] it was made
/// with; read with another context, a file may be passed over wrongly.
#[derive(Clone, Debug, Default)]
pub struct LocalHeader {
    /// Its macros, in the order of their `#define`s (a later one wins): read at once when its
    /// bytes hold a needle, else on the first lookup that `names` lets through.
    macros: OnceLock<Macros<'static>>,
    /// Its text until its macros are read (empty when they were read at once).
    text: Box<str>,
    /// The names it may define, when its macros wait to be read.
    names: Bloom,
    /// Its bytes hold a needle (`Context`'s texts a file must hold to say anything).
    pub(crate) holds_needle: bool,
    /// The names of its macros one of whose definitions holds a needle in its body: a file
    /// that holds no needle itself says something only if it names one of them.
    pub(crate) needle_macros: Vec<String>,
    /// One of its macros' bodies names a declarer of the `OF_DECLARE` family, so that it may
    /// add declarers of its own.
    pub(crate) names_a_declarer: bool,
    /// The names of its macros that declare a table or a driver structure.
    pub(crate) makers: Vec<String>,
}

impl LocalHeader {
    /// Reads a local header's bytes for files read with `cx`: only its `#define`s, found by
    /// their `#` at the start of a line. A header that holds no needle has no macro with one
    /// in its body, none that declares a table, a driver or a declarer (each names a needle):
    /// its macros are read when a file asks for one.
    pub fn new(src: &[u8], cx: &Context) -> Self {
        let text = text(src);
        if !cx.needles.in_bytes(src) {
            return Self {
                names: Bloom::of(define_names(&text)),
                text: text.into(),
                ..Self::default()
            };
        }
        let mut macros = Macros::new();
        let mut needle_macros: Vec<String> = Vec::new();
        let mut names_a_declarer = false;
        for d in &defines(&text) {
            macros.add_owned(d);
            let holds = d.body.iter().any(|t| cx.needles.in_token(&t.text));
            if holds && !needle_macros.iter().any(|n| n == d.name) {
                needle_macros.push(d.name.to_string());
            }
            names_a_declarer |= cx.declarers.any_in(&d.body);
        }
        let makers = macros
            .iter()
            .filter(|(_, m)| makes_table_or_driver(m))
            .map(|(n, _)| n.to_string())
            .collect();
        Self {
            macros: OnceLock::from(macros),
            holds_needle: true,
            needle_macros,
            names_a_declarer,
            makers,
            ..Self::default()
        }
    }

    /// Its macros, read now if they were not.
    pub fn macros(&self) -> &Macros<'static> {
        self.macros.get_or_init(|| {
            let mut macros = Macros::new();
            for d in &defines(&self.text) {
                macros.add_owned(d);
            }
            macros
        })
    }
}

impl Lookup for LocalHeader {
    fn lookup(&self, name: &str) -> Option<&Macro<'_>> {
        match self.macros.get() {
            Some(m) => m.get(name),
            None if self.names.may_hold(name) => self.macros().get(name),
            None => None,
        }
    }
}

/// A Bloom filter of names: 24 bits or more and 4 hashes a name, about one false positive in
/// 1,700 lookups (a false positive lexes the whole header). Empty, it may hold any name.
#[derive(Clone, Debug, Default)]
struct Bloom {
    bits: Vec<u64>,
}

impl Bloom {
    /// The filter of `names`.
    fn of<'a>(names: impl Iterator<Item = &'a str>) -> Self {
        let names: Vec<&str> = names.collect();
        let words = (names.len() * 24).div_ceil(64).next_power_of_two();
        let mut bits = vec![0u64; words];
        for n in names {
            for b in Self::bits(n, words) {
                bits[b / 64] |= 1 << (b % 64);
            }
        }
        Self { bits }
    }

    /// False when `name` is surely not among the names.
    fn may_hold(&self, name: &str) -> bool {
        self.bits.is_empty()
            || Self::bits(name, self.bits.len())
                .iter()
                .all(|&b| self.bits[b / 64] & (1 << (b % 64)) != 0)
    }

    /// The four bits of `name` in a filter of `words` words (a power of two): two halves of a
    /// mixed hash, combined (Kirsch and Mitzenmacher's double hashing).
    fn bits(name: &str, words: usize) -> [usize; 4] {
        let mut h = BuildHasherDefault::<FxHasher>::default().hash_one(name);
        // MurmurHash3's finalizer: every bit of the hash depends on every bit of the name's.
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        h ^= h >> 33;
        let (a, b) = (h >> 32, h | 1);
        let mask = (words * 64 - 1) as u64;
        [0u64, 1, 2, 3].map(|i| (a.wrapping_add(i.wrapping_mul(b)) & mask) as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_header_without_needles_is_read_on_the_first_lookup_it_may_answer() {
        let cx = Context::from_headers([&b"struct of_device_id { char compatible[128]; };"[..]]);
        let h = LocalHeader::new(
            b"#define E1000_DEV_ID_82571EB_COPPER 0x105E\n#define F(a) ((a) + 1)\n",
            &cx,
        );
        assert!(!h.holds_needle);
        assert!(h.macros.get().is_none(), "nothing read yet");
        assert!(h.lookup("PCI_VDEVICE").is_none());
        assert!(
            h.macros.get().is_none(),
            "a name it cannot hold reads nothing"
        );
        let m = h.lookup("E1000_DEV_ID_82571EB_COPPER").expect("its macro");
        assert_eq!(m.body[0].text, "0x105E");
        assert!(h.macros.get().is_some());
        assert!(h.lookup("F").is_some_and(|m| m.params.is_some()));
    }

    #[test]
    fn a_header_with_needles_is_read_at_once() {
        let cx = Context::from_headers([&b"#define X 1\n"[..]]);
        let h = LocalHeader::new(
            b"#define MY_MATCH(c) of_device_is_compatible(np, c)\n#define TBL static const struct of_device_id t[] = {\n",
            &cx,
        );
        assert!(h.holds_needle && h.macros.get().is_some());
        assert_eq!(h.needle_macros, ["MY_MATCH", "TBL"]);
        assert_eq!(h.makers, ["TBL"]);
        assert!(!h.names_a_declarer);
    }

    #[test]
    fn the_filter_holds_every_name_it_was_given() {
        let names: Vec<String> = (0..5000).map(|k| format!("REG_{k:X}_MASK")).collect();
        let b = Bloom::of(names.iter().map(String::as_str));
        assert!(names.iter().all(|n| b.may_hold(n)));
        let false_positives = (0..10_000)
            .filter(|k| b.may_hold(&format!("OTHER_{k}")))
            .count();
        assert!(false_positives < 30, "{false_positives}");
        assert!(Bloom::default().may_hold("anything"));
    }
}
