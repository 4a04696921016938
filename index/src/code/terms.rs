//! Words to search terms: an identifier or a phrase is cut into words (at `_`, at a lowercase
//! to uppercase change, around digits), lowercased, stopwords dropped (common English words and
//! C keywords), and each word stemmed with Snowball's English stemmer (`reading` → `read`).
//! Documents and queries go through the same [`Terms::of_ident`], so they meet on the same terms.

use crate::docs::words::Stems;
use knav_c::keep::{clear_kept, KEEP};

/// Words that say nothing about what code does: common English words (a question's "where
/// does the kernel …"), C keywords and types.
const STOPWORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "an", "and", "any", "are", "as", "at", "auto", "be",
    "been", "before", "bool", "break", "but", "by", "can", "case", "char", "const", "continue",
    "could", "default", "did", "do", "does", "doing", "done", "double", "each", "else", "enum",
    "extern", "false", "float", "for", "from", "goto", "had", "has", "have", "he", "her", "here",
    "his", "how", "i", "if", "in", "inline", "int", "into", "is", "it", "its", "long", "may", "me",
    "might", "must", "my", "no", "nor", "not", "null", "of", "off", "on", "once", "only", "or",
    "other", "our", "out", "over", "own", "register", "restrict", "return", "same", "shall", "she",
    "short", "should", "signed", "sizeof", "so", "some", "static", "struct", "such", "switch",
    "than", "that", "the", "their", "them", "then", "there", "these", "they", "this", "those",
    "through", "to", "too", "true", "typedef", "typeof", "under", "union", "unsigned", "until",
    "up", "upon", "us", "very", "void", "volatile", "was", "we", "were", "what", "when", "where",
    "which", "while", "who", "whom", "why", "will", "with", "would", "you", "your",
];

/// Distinct identifiers cached before their cache is emptied (it lives as long as a build
/// worker, and is emptied only between files: ids stay valid for one file). Kept small so that
/// it stays in the caches: the kernel's files look up 12 million (file, identifier) pairs, and
/// with 2^18 identifiers cached (a table of 16 MB) a lookup cost about 200 ns, more than
/// cutting a new identifier into words found in the words' cache (perf, whole kernel: 3.4 s
/// of CPU with 2^13 against 4.4 s with 2^18).
const MAX_IDENTS: usize = 1 << 13;
/// Distinct words cached before the whole cache (words, stems and the ids they have) is
/// emptied.
const MAX_WORDS: usize = 1 << 17;

/// Turns text into search terms, each distinct word stemmed once. A term has an id, valid
/// until [`Terms::forget`] empties the words' cache (emptying only the identifiers' keeps it).
#[derive(Default)]
pub struct Terms {
    /// Identifier → its terms' ids, a range of `parts`.
    idents: Table<(u32, u32)>,
    parts: Vec<u32>,
    /// Word (as written) → its term's id, `None` for a stopword.
    words: Table<Option<u32>>,
    /// Term → id, and id → term.
    stems: Stems,
    /// A new word lowercased.
    lower: String,
}

impl Terms {
    /// The ids of the terms of identifier `ident`'s words that are not stopwords
    /// (`ext4_file_read_iter` → `ext4`, `file`, `read`, `iter`).
    pub fn of_ident(&mut self, ident: &[u8]) -> &[u32] {
        let (start, end) = match self.idents.find(ident) {
            Ok(range) => range,
            Err(vacant) => {
                let start = self.parts.len() as u32;
                let mut parts = std::mem::take(&mut self.parts);
                for_words(ident, |w| parts.extend(self.word(w)));
                self.parts = parts;
                let range = (start, self.parts.len() as u32);
                self.idents.insert(vacant, ident, range);
                range
            }
        };
        &self.parts[start as usize..end as usize]
    }

    /// Asks for the memory that [`Terms::of_ident`] of each of `idents` reads: their slots in
    /// the identifiers' cache, then the words' slots of those not in it. The lookups of a
    /// document's new identifiers would otherwise miss the caches one after the other.
    fn prefetch<'a>(&mut self, idents: impl Iterator<Item = &'a [u8]> + Clone) {
        for ident in idents.clone() {
            self.idents.prefetch(ident);
        }
        for ident in idents {
            if self.idents.find(ident).is_err() {
                for_words(ident, |w| self.words.prefetch(w));
            }
        }
    }

    /// Calls `add` with the id of each term of free text (a query; a file's text goes through
    /// [`FileTerms::each_ident`]).
    pub fn of_text(&mut self, text: &[u8], mut add: impl FnMut(u32)) {
        for ident in identifiers(text) {
            for &id in self.of_ident(ident) {
                add(id);
            }
        }
    }

    /// The term of id `id`.
    pub fn term(&self, id: u32) -> &str {
        &self.stems.terms[id as usize]
    }

    /// The number of ids given out since the cache was last emptied.
    pub fn len(&self) -> usize {
        self.stems.terms.len()
    }

    /// True when no id was given out.
    pub fn is_empty(&self) -> bool {
        self.stems.terms.is_empty()
    }

    /// Empties the identifiers' cache when it has grown past its bound, and the whole cache
    /// when the words' has; the ids given out are invalid then.
    pub fn forget(&mut self) {
        if self.words.len() >= MAX_WORDS {
            *self = Terms::default();
        } else if self.idents.len() >= MAX_IDENTS {
            self.idents.clear();
            self.parts.clear();
        }
    }

    /// The term id of one word; `None` for a stopword, a number or one letter.
    fn word(&mut self, word: &[u8]) -> Option<u32> {
        let vacant = match self.words.find(word) {
            Ok(id) => return id,
            Err(vacant) => vacant,
        };
        let lower = &mut self.lower;
        lower.clear();
        lower.push_str(&String::from_utf8_lossy(word));
        lower.make_ascii_lowercase();
        let keep = lower.len() > 1
            && !lower.bytes().all(|b| b.is_ascii_digit())
            && STOPWORDS.binary_search(&lower.as_str()).is_err();
        let id = keep.then(|| self.stems.id(lower));
        self.words.insert(vacant, word, id);
        id
    }
}

/// One file's identifiers, each looked up in [`Terms`] once, and their terms numbered from 0
/// for the file: a document counts the occurrences of its identifiers in a small array, and
/// turns only the distinct ones into terms (the kernel's documents have 60 million occurrences
/// of 12 million (file, identifier) pairs). New identifiers are turned into terms together
/// ([`FileTerms::resolve`]), so that their lookups in [`Terms`]'s large tables, which miss the
/// caches, overlap. [`FileTerms::clear`] makes it ready for the next file, keeping its memory.
#[derive(Default)]
pub struct FileTerms {
    /// Identifier → its index, and by it the range of `parts` of its terms' file ids.
    idents: Table<u32>,
    ranges: Vec<(u32, u32)>,
    parts: Vec<u32>,
    /// The identifiers from this index on are not turned into terms yet; their bytes, one
    /// after the other, and where each ends.
    resolved: usize,
    new_bytes: Vec<u8>,
    new_ends: Vec<usize>,
    /// File id → term id of [`Terms`].
    globals: Vec<u32>,
    /// Term id → file id, [`NO_ID`] for the terms not in the file.
    locals: Vec<u32>,
}

/// A term id that is not in [`FileTerms::locals`].
const NO_ID: u32 = u32::MAX;

impl FileTerms {
    /// Forgets the file's identifiers and terms, keeping the memory for the next file's (at
    /// most [`KEEP`] entries a table).
    pub fn clear(&mut self) {
        for &global in &self.globals {
            self.locals[global as usize] = NO_ID;
        }
        clear_kept(&mut self.globals);
        self.idents.clear();
        clear_kept(&mut self.ranges);
        clear_kept(&mut self.parts);
        self.resolved = 0;
        clear_kept(&mut self.new_bytes);
        clear_kept(&mut self.new_ends);
    }

    /// The index of identifier `ident` among the file's (in the order first seen). A new one
    /// has terms ([`FileTerms::parts`]) once [`FileTerms::resolve`] is called.
    #[inline]
    pub fn ident(&mut self, ident: &[u8]) -> u32 {
        match self.idents.find(ident) {
            Ok(i) => i,
            Err(vacant) => self.new_ident(vacant, ident),
        }
    }

    /// Gives identifier `ident`, new to the file, the next index (out of line: four
    /// occurrences in five find theirs).
    #[inline(never)]
    fn new_ident(&mut self, vacant: Vacant, ident: &[u8]) -> u32 {
        self.new_bytes.extend_from_slice(ident);
        self.new_ends.push(self.new_bytes.len());
        let i = self.ranges.len() as u32;
        self.ranges.push((0, 0));
        self.idents.insert(vacant, ident, i);
        i
    }

    /// Calls `add` with the index of each identifier of `text` (see [`FileTerms::ident`]).
    pub fn each_ident(&mut self, text: &[u8], mut add: impl FnMut(u32)) {
        for ident in identifiers(text) {
            add(self.ident(ident));
        }
    }

    /// Turns the identifiers that are new since the last call into terms, numbering the terms
    /// new to the file in the order of the identifiers and of their words.
    pub fn resolve(&mut self, terms: &mut Terms) {
        let bytes = &self.new_bytes;
        let new = || {
            let starts = std::iter::once(0).chain(self.new_ends.iter().copied());
            starts.zip(&self.new_ends).map(|(s, &e)| &bytes[s..e])
        };
        terms.prefetch(new());
        for (i, ident) in (self.resolved..).zip(new()) {
            let start = self.parts.len() as u32;
            for &global in terms.of_ident(ident) {
                let g = global as usize;
                if g >= self.locals.len() {
                    self.locals.resize(g + 1, NO_ID);
                }
                if self.locals[g] == NO_ID {
                    self.locals[g] = self.globals.len() as u32;
                    self.globals.push(global);
                }
                self.parts.push(self.locals[g]);
            }
            self.ranges[i] = (start, self.parts.len() as u32);
        }
        self.resolved = self.ranges.len();
        self.new_bytes.clear();
        self.new_ends.clear();
    }

    /// The file ids of the terms of the identifier of index `ident` (see [`Terms::of_ident`]).
    pub fn parts(&self, ident: u32) -> &[u32] {
        debug_assert!(
            (ident as usize) < self.resolved,
            "identifier {ident} is not resolved"
        );
        let (start, end) = self.ranges[ident as usize];
        &self.parts[start as usize..end as usize]
    }

    /// The term of file id `id` (the tests' view; a build writes them with
    /// [`FileTerms::each_term`]).
    #[cfg(test)]
    pub fn term<'t>(&self, terms: &'t Terms, id: u32) -> &'t str {
        terms.term(self.globals[id as usize])
    }

    /// Calls `f` with the term of each file id in order. The terms
    /// are scattered in memory: each is asked for a few terms ahead, so that the misses overlap.
    pub fn each_term<'t>(&self, terms: &'t Terms, mut f: impl FnMut(&'t str)) {
        let all = &terms.stems.terms;
        for (i, &global) in self.globals.iter().enumerate() {
            if let Some(&ahead) = self.globals.get(i + 16) {
                crate::prefetch::prefetch(&all[ahead as usize]);
            }
            if let Some(&near) = self.globals.get(i + 8) {
                crate::prefetch::prefetch(all[near as usize].as_ptr());
            }
            f(&all[global as usize]);
        }
    }

    /// The most entries any of the file's tables has room for (not `locals`, which is as long
    /// as the words' cache).
    #[cfg(test)]
    pub fn capacity(&self) -> usize {
        [
            self.idents.slots.capacity(),
            self.ranges.capacity(),
            self.parts.capacity(),
            self.new_bytes.capacity(),
            self.new_ends.capacity(),
            self.globals.capacity(),
        ]
        .into_iter()
        .max()
        .unwrap_or(0)
    }

    /// The number of file ids given out.
    pub fn len(&self) -> usize {
        self.globals.len()
    }

    /// True when no file id was given out.
    pub fn is_empty(&self) -> bool {
        self.globals.is_empty()
    }
}

/// Identifiers (or words) and a value each, in one open-addressing table. One is found by its
/// length and first and last 8 bytes (the first and last 4, or the first, middle and last
/// byte, when shorter), which are the whole of one of at most 16 bytes, compared as integers;
/// a longer one's other bytes are compared too. A key and its value share a slot: a lookup
/// reads one cache line.
#[derive(Default)]
struct Table<V> {
    /// A power of two long (or empty), at least twice the keys.
    slots: Vec<(Key, V)>,
    len: usize,
    /// The bytes of the keys longer than 16.
    long: Vec<u8>,
}

/// A [`Table`]'s key: where its bytes are in [`Table::long`] when it is longer than 16.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
struct Key {
    head: u64,
    tail: u64,
    /// The length plus 1; 0 in an empty slot.
    len: u32,
    at: u32,
}

/// Where a key not in a [`Table`] goes.
struct Vacant {
    slot: usize,
    key: Key,
}

/// The 8 bytes of `s` at `at`, little-endian.
fn word_at(s: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&s[at..at + 8]);
    u64::from_le_bytes(w)
}

impl Key {
    fn of(s: &[u8]) -> Key {
        let n = s.len();
        let half = |at: usize| {
            let mut w = [0u8; 4];
            w.copy_from_slice(&s[at..at + 4]);
            u32::from_le_bytes(w) as u64
        };
        let (head, tail) = match n {
            0 => (0, 0),
            1..=3 => (
                s[0] as u64 | (s[n / 2] as u64) << 8 | (s[n - 1] as u64) << 16,
                0,
            ),
            4..=7 => (half(0), half(n - 4)),
            _ => (word_at(s, 0), word_at(s, n - 8)),
        };
        Key {
            head,
            tail,
            len: n as u32 + 1,
            at: 0,
        }
    }

    fn slot(&self, mask: usize) -> usize {
        const K: u64 = 0x517c_c1b7_2722_0a95;
        let h = (self.head ^ (self.len as u64) << 40).wrapping_mul(K);
        let h = (h.rotate_left(29) ^ self.tail).wrapping_mul(K);
        (h >> 32) as usize & mask
    }

    /// True when `other`, the key of `bytes`, is this one's.
    fn is(&self, other: &Key, long: &[u8], bytes: &[u8]) -> bool {
        if (self.head, self.tail, self.len) != (other.head, other.tail, other.len) {
            return false;
        }
        let n = bytes.len();
        if n <= 16 {
            return true;
        }
        // The first and last 8 bytes are equal: compare the others 8 at a time.
        let mine = &long[self.at as usize..self.at as usize + n];
        (8..n - 8)
            .step_by(8)
            .all(|i| word_at(mine, i) == word_at(bytes, i))
    }
}

impl<V: Copy + Default> Table<V> {
    /// The value of `bytes`, or where it goes.
    #[inline]
    fn find(&mut self, bytes: &[u8]) -> Result<V, Vacant> {
        if self.slots.len() < 2 * (self.len + 1) {
            self.grow();
        }
        let key = Key::of(bytes);
        let mask = self.slots.len() - 1;
        let mut slot = key.slot(mask);
        loop {
            let (k, v) = &self.slots[slot];
            if k.len == 0 {
                return Err(Vacant { slot, key });
            }
            if k.is(&key, &self.long, bytes) {
                return Ok(*v);
            }
            slot = (slot + 1) & mask;
        }
    }

    /// Asks for the memory of the slot where looking `bytes` up starts.
    fn prefetch(&self, bytes: &[u8]) {
        if !self.slots.is_empty() {
            let slot = Key::of(bytes).slot(self.slots.len() - 1);
            crate::prefetch::prefetch(&self.slots[slot]);
        }
    }

    /// Adds `bytes` with value `v` where [`Table::find`] said (the table unchanged since).
    fn insert(&mut self, vacant: Vacant, bytes: &[u8], v: V) {
        let mut key = vacant.key;
        if bytes.len() > 16 {
            key.at = self.long.len() as u32;
            self.long.extend_from_slice(bytes);
        }
        self.slots[vacant.slot] = (key, v);
        self.len += 1;
    }

    fn len(&self) -> usize {
        self.len
    }

    /// Forgets the keys, keeping the memory (at most 4 slots a key it had, so that a table
    /// grown large once costs little to clear again, and at most [`KEEP`]).
    fn clear(&mut self) {
        self.slots
            .truncate((4 * self.len).next_power_of_two().clamp(256, KEEP));
        self.slots.shrink_to(KEEP);
        self.slots.fill(Default::default());
        self.len = 0;
        self.long.clear();
    }

    /// Doubles the table (to 256 slots at first) and puts the keys back in.
    #[inline(never)]
    fn grow(&mut self) {
        let len = (self.slots.len() * 2).max(256);
        let old = std::mem::replace(&mut self.slots, vec![Default::default(); len]);
        for (k, v) in old.into_iter().filter(|(k, _)| k.len != 0) {
            let mut slot = k.slot(len - 1);
            while self.slots[slot].0.len != 0 {
                slot = (slot + 1) & (len - 1);
            }
            self.slots[slot] = (k, v);
        }
    }
}

/// The identifiers (ASCII letters, digits and `_`, not starting with a digit) of `text`.
pub fn identifiers(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut runs = WordRuns {
        text,
        base: 0,
        mask: word_mask(text, 0),
    };
    // A number (or `0x1f`, `8ul`) is skipped whole.
    std::iter::from_fn(move || loop {
        let run = runs.next()?;
        if !text[run.start].is_ascii_digit() {
            return Some(&text[run]);
        }
    })
}

/// The runs of identifier bytes of a text, found 64 bytes at a time: a chunk's bytes are
/// classified together into a bit mask, and a run's ends are its mask's bit changes (a byte
/// at a time, a run's every byte was a branch the CPU guessed wrong at its end).
struct WordRuns<'a> {
    text: &'a [u8],
    /// Where the chunk of `mask` starts.
    base: usize,
    /// The identifier bytes of the chunk at `base` not yet passed.
    mask: u64,
}

impl WordRuns<'_> {
    fn next(&mut self) -> Option<std::ops::Range<usize>> {
        while self.mask == 0 {
            self.base += 64;
            if self.base >= self.text.len() {
                return None;
            }
            self.mask = word_mask(self.text, self.base);
        }
        let from = self.mask.trailing_zeros();
        let start = self.base + from as usize;
        // The bytes below `from` are passed; the first other byte at or after it ends the run.
        let others = !self.mask & (u64::MAX << from);
        if others != 0 {
            let end = others.trailing_zeros();
            self.mask &= u64::MAX << end;
            return Some(start..self.base + end as usize);
        }
        loop {
            self.base += 64;
            if self.base >= self.text.len() {
                self.mask = 0;
                return Some(start..self.text.len());
            }
            let mask = word_mask(self.text, self.base);
            if mask != u64::MAX {
                let end = (!mask).trailing_zeros();
                self.mask = mask & (u64::MAX << end);
                return Some(start..self.base + end as usize);
            }
        }
    }
}

/// Bit `i` set when byte `at + i` of `text` is an identifier byte (bytes past the end are not).
fn word_mask(text: &[u8], at: usize) -> u64 {
    match text.get(at..).and_then(|t| t.first_chunk::<64>()) {
        Some(chunk) => chunk_mask(chunk),
        None => {
            let mut chunk = [0u8; 64];
            let tail = text.get(at..).unwrap_or_default();
            chunk[..tail.len()].copy_from_slice(tail);
            chunk_mask(&chunk)
        }
    }
}

/// Bit `i` set when byte `i` is an ASCII letter, digit or `_`, with SSE2 16 bytes at a time.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
fn chunk_mask(chunk: &[u8; 64]) -> u64 {
    use std::arch::x86_64::*;
    let mut mask = 0;
    // SAFETY: SSE2 is part of x86-64, and each load reads 16 bytes of `chunk`.
    unsafe {
        // Bytes `b` with `b - lo < n` (unsigned): shifted by 128 into a signed compare.
        let in_range = |v: __m128i, lo: u8, n: u8| {
            let shifted = _mm_add_epi8(v, _mm_set1_epi8(128u8.wrapping_sub(lo) as i8));
            _mm_cmplt_epi8(shifted, _mm_set1_epi8(n.wrapping_sub(128) as i8))
        };
        for (i, part) in chunk.chunks_exact(16).enumerate() {
            let v = _mm_loadu_si128(part.as_ptr().cast());
            let letter = in_range(_mm_or_si128(v, _mm_set1_epi8(0x20)), b'a', 26);
            let digit = in_range(v, b'0', 10);
            let under = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'_' as i8));
            let word = _mm_or_si128(_mm_or_si128(letter, digit), under);
            mask |= (_mm_movemask_epi8(word) as u16 as u64) << (16 * i);
        }
    }
    mask
}

/// Bit `i` set when byte `i` is an ASCII letter, digit or `_`.
#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
fn chunk_mask(chunk: &[u8; 64]) -> u64 {
    (0..64).fold(0, |m, i| m | (knav_c::scan::is_ident(chunk[i]) as u64) << i)
}

/// Calls `f` with each word of an identifier: cut at `_`, between a lowercase letter or digit
/// and an uppercase one, and before the last capital of a run followed by a lowercase letter
/// (`HTTPServer` → `HTTP`, `Server`); digits stay with the letters before them (`ext4`).
fn for_words(ident: &[u8], mut f: impl FnMut(&[u8])) {
    for part in ident.split(|&b| b == b'_').filter(|p| !p.is_empty()) {
        let mut start = 0;
        for i in 1..part.len() {
            let (prev, cur) = (part[i - 1], part[i]);
            let next_lower = part.get(i + 1).is_some_and(u8::is_ascii_lowercase);
            let cut = cur.is_ascii_uppercase()
                && (prev.is_ascii_lowercase()
                    || prev.is_ascii_digit()
                    || (prev.is_ascii_uppercase() && next_lower));
            if cut {
                f(&part[start..i]);
                start = i;
            }
        }
        f(&part[start..]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(text: &str) -> Vec<String> {
        let mut t = Terms::default();
        let mut ids = Vec::new();
        t.of_text(text.as_bytes(), |id| ids.push(id));
        ids.iter().map(|&id| t.term(id).to_string()).collect()
    }

    #[test]
    fn a_file_gives_identifiers_one_index_each_only_when_every_byte_is_the_same() {
        let names = [
            "a",
            "ab",
            "ba",
            "abc",
            "axc",
            "abcd",
            "abcdefg",
            "abcxefg",
            "abcdefgh",
            "abcdefgx",
            "xbcdefgh",
            "abcdefghijklmnop",
            "abcdefghijklmnoq",
            "abcdefghXjklmnop",
            "abcdefghijklmnopq",
            "abcdefghijklmnopr",
            "abcdefghXjklmnopq",
            "abcdefghYjklmnopq",
            "abcdefgh_middle_one_ijklmnop",
            "abcdefgh_middle_two_ijklmnop",
        ];
        let mut file = FileTerms::default();
        // Past the first table's 256 slots, so that it grows.
        let many: Vec<String> = (0..300).map(|i| format!("n{i}")).collect();
        let all: Vec<&str> = names
            .iter()
            .copied()
            .chain(many.iter().map(String::as_str))
            .collect();
        let first: Vec<u32> = all.iter().map(|n| file.ident(n.as_bytes())).collect();
        assert_eq!(first, (0..all.len() as u32).collect::<Vec<_>>());
        for (a, &i) in all.iter().zip(&first) {
            assert_eq!(file.ident(a.as_bytes()), i, "{a:?}");
        }
    }

    #[test]
    fn a_files_terms_are_numbered_from_zero_in_order_first_seen() {
        let mut terms = Terms::default();
        terms.of_ident(b"unrelated_words");
        let mut file = FileTerms::default();
        let mut ids = Vec::new();
        file.each_ident(b"read_page(page); write_page", |i| ids.push(i));
        file.resolve(&mut terms);
        assert_eq!(ids, [0, 1, 2]);
        let parts: Vec<&[u32]> = ids.iter().map(|&i| file.parts(i)).collect();
        assert_eq!(parts, [&[0, 1][..], &[1], &[2, 1]]);
        let words: Vec<&str> = (0..file.len() as u32)
            .map(|i| file.term(&terms, i))
            .collect();
        assert_eq!(words, ["read", "page", "write"]);
    }

    proptest::proptest! {
        /// Files of texts (`resolve` after each text), against a simple model: an identifier's
        /// index is its rank among the file's distinct identifiers, a term's file id its rank
        /// among the file's distinct terms, in the order of the identifiers and their words.
        #[test]
        fn a_files_identifiers_and_terms_are_numbered_as_a_simple_model_does(
            files in proptest::collection::vec(
                proptest::collection::vec("[a-zA-Z_0-9 ]{0,40}", 1..6),
                1..5,
            )
        ) {
            let mut terms = Terms::default();
            let mut file = FileTerms::default();
            for texts in &files {
                file.clear();
                let mut model_idents: Vec<&[u8]> = Vec::new();
                let mut model_terms: Vec<String> = Vec::new();
                for text in texts {
                    let mut got = Vec::new();
                    file.each_ident(text.as_bytes(), |i| got.push(i));
                    file.resolve(&mut terms);
                    for (ident, &i) in identifiers(text.as_bytes()).zip(&got) {
                        let at = model_idents.iter().position(|&m| m == ident);
                        let want = at.unwrap_or(model_idents.len());
                        proptest::prop_assert_eq!(i as usize, want);
                        if at.is_none() {
                            model_idents.push(ident);
                        }
                        let mut want_parts = Vec::new();
                        let globals = terms.of_ident(ident).to_vec();
                        for g in globals {
                            let term = terms.term(g).to_string();
                            let at = model_terms.iter().position(|t| *t == term);
                            want_parts.push(at.unwrap_or(model_terms.len()) as u32);
                            if at.is_none() {
                                model_terms.push(term);
                            }
                        }
                        proptest::prop_assert_eq!(file.parts(i), &want_parts[..]);
                    }
                }
                let got: Vec<&str> = (0..file.len() as u32).map(|i| file.term(&terms, i)).collect();
                proptest::prop_assert_eq!(&got, &model_terms);
                let mut each = Vec::new();
                file.each_term(&terms, |t| each.push(t));
                proptest::prop_assert_eq!(each, got);
            }
        }
    }

    /// The identifiers of `text`, a byte at a time.
    fn identifiers_model(text: &[u8]) -> Vec<&[u8]> {
        text.split(|&b| !knav_c::scan::is_ident(b))
            .filter(|w| w.first().is_some_and(|b| !b.is_ascii_digit()))
            .collect()
    }

    #[test]
    fn every_byte_is_classified_as_the_model_does() {
        let all: Vec<u8> = (0..=255).collect();
        for chunk in all.chunks(64) {
            let mask = chunk_mask(chunk.try_into().unwrap());
            for (i, &b) in chunk.iter().enumerate() {
                assert_eq!(mask >> i & 1 == 1, knav_c::scan::is_ident(b), "byte {b:#x}");
            }
        }
    }

    proptest::proptest! {
        /// Texts of runs of 0 to 150 bytes (across chunks of 64 bytes), numbers and other bytes.
        #[test]
        fn identifiers_are_found_as_a_byte_at_a_time_model_finds_them(
            pieces in proptest::collection::vec(
                proptest::prop_oneof!["[a-zA-Z_]{1,3}", "[a-z_0-9]{60,150}", "[0-9][a-z]{0,3}", "[ \n(){};*/.é\x7f-]{1,70}"],
                0..40,
            )
        ) {
            let text = pieces.concat();
            let got: Vec<&[u8]> = identifiers(text.as_bytes()).collect();
            proptest::prop_assert_eq!(got, identifiers_model(text.as_bytes()));
        }
    }

    #[test]
    fn stopwords_are_sorted_for_their_binary_search() {
        assert!(STOPWORDS.windows(2).all(|w| w[0] < w[1]), "{STOPWORDS:?}");
    }

    #[test]
    fn identifiers_are_cut_into_stemmed_words() {
        assert_eq!(
            terms("ext4_file_read_iter"),
            ["ext4", "file", "read", "iter"]
        );
        assert_eq!(
            terms("HTTPServer getNextTask"),
            ["http", "server", "get", "next", "task"]
        );
        assert_eq!(terms("__alloc_pages_noprof"), ["alloc", "page", "noprof"]);
    }

    #[test]
    fn questions_lose_their_stopwords_and_numbers() {
        assert_eq!(
            terms("where does the kernel choose which process to kill when memory runs out"),
            ["kernel", "choos", "process", "kill", "memori", "run"]
        );
        assert_eq!(terms("0x1f 42 8ul a x86_64"), ["x86"]);
    }
}
