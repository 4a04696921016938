//! Words to search terms: an identifier or a phrase is cut into words (at `_`, at a lowercase
//! to uppercase change, around digits), lowercased, stopwords dropped (common English words and
//! C keywords), and each word stemmed with Snowball's English stemmer (`reading` → `read`).
//! Documents and queries go through the same [`Terms::of_text`], so they meet on the same terms.

use crate::index::accum::NameMap as HashMap;

use crate::docs::words::Stems;

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

/// Distinct identifiers cached before the cache is emptied (it lives as long as a build
/// worker, and is emptied only between files: ids stay valid for one file).
const MAX_CACHED: usize = 1 << 17;

/// Turns text into search terms, each distinct word stemmed once. A term has an id, valid
/// until [`Terms::forget`] empties the cache.
#[derive(Default)]
pub struct Terms {
    /// Identifier → its terms' ids, a range of `parts`.
    idents: HashMap<Box<[u8]>, (u32, u32)>,
    parts: Vec<u32>,
    /// Word (as written) → its term's id, `None` for a stopword.
    words: HashMap<Box<[u8]>, Option<u32>>,
    /// Term → id, and id → term.
    stems: Stems,
}

impl Terms {
    /// The ids of the terms of identifier `ident`'s words that are not stopwords
    /// (`ext4_file_read_iter` → `ext4`, `file`, `read`, `iter`).
    pub fn of_ident(&mut self, ident: &[u8]) -> &[u32] {
        let (start, end) = self.ident_range(ident);
        &self.parts[start as usize..end as usize]
    }

    /// Where `ident`'s term ids are in `parts`.
    fn ident_range(&mut self, ident: &[u8]) -> (u32, u32) {
        if let Some(&r) = self.idents.get(ident) {
            return r;
        }
        let start = self.parts.len() as u32;
        let mut ids = Vec::new();
        for_words(ident, |w| ids.extend(self.word(w)));
        self.parts.extend(ids);
        let r = (start, self.parts.len() as u32);
        self.idents.insert(ident.into(), r);
        r
    }

    /// Calls `add` with the id of each term of free text (a comment, a path, a query).
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

    /// Empties the cache when it has grown past its bound; the ids given out are invalid then.
    pub fn forget(&mut self) {
        if self.idents.len() + self.words.len() >= MAX_CACHED {
            *self = Terms::default();
        }
    }

    /// The term id of one word; `None` for a stopword, a number or one letter.
    fn word(&mut self, word: &[u8]) -> Option<u32> {
        if let Some(&id) = self.words.get(word) {
            return id;
        }
        let lower = String::from_utf8_lossy(word).to_ascii_lowercase();
        let keep = lower.len() > 1
            && !lower.bytes().all(|b| b.is_ascii_digit())
            && STOPWORDS.binary_search(&lower.as_str()).is_err();
        let id = keep.then(|| self.stems.id(&lower));
        self.words.insert(word.into(), id);
        id
    }
}

/// One file's identifiers, each looked up in [`Terms`] once, and their terms numbered from 0
/// for the file: a document's counts then live in a small array. Looking every occurrence up
/// in the build-wide table and counting in an array indexed by its ids (hundreds of thousands)
/// was most of the code documents' cost (perf: about 9 s of CPU on the kernel).
#[derive(Default)]
pub struct FileTerms<'s> {
    /// Identifier → its terms' file ids, a range of `parts`.
    idents: HashMap<Ident<'s>, (u32, u32)>,
    parts: Vec<u32>,
    /// File id → term id of [`Terms`].
    globals: Vec<u32>,
    /// Term id → file id.
    locals: HashMap<u32, u32>,
}

/// An identifier as a key: hashed without its length, compared a word at a time.
#[derive(Clone, Copy, Eq)]
struct Ident<'s>(&'s [u8]);

impl std::hash::Hash for Ident<'_> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write(self.0);
    }
}

impl PartialEq for Ident<'_> {
    fn eq(&self, other: &Self) -> bool {
        let (a, b) = (self.0, other.0);
        let n = a.len();
        if n != b.len() {
            return false;
        }
        let word = |s: &[u8], at: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&s[at..at + 8]);
            u64::from_le_bytes(w)
        };
        match n {
            0..=7 => a.iter().zip(b).all(|(x, y)| x == y),
            // Two words that overlap cover 8 to 16 bytes.
            8..=16 => word(a, 0) == word(b, 0) && word(a, n - 8) == word(b, n - 8),
            _ => a == b,
        }
    }
}

impl<'s> FileTerms<'s> {
    /// The file ids of the terms of `ident` (see [`Terms::of_ident`]).
    pub fn of_ident(&mut self, terms: &mut Terms, ident: &'s [u8]) -> &[u32] {
        let (start, end) = self.range(terms, ident);
        &self.parts[start as usize..end as usize]
    }

    /// Calls `add` with the file id of each term of `text` (see [`Terms::of_text`]).
    pub fn of_text(&mut self, terms: &mut Terms, text: &'s [u8], mut add: impl FnMut(u32)) {
        for ident in identifiers(text) {
            let (start, end) = self.range(terms, ident);
            for &id in &self.parts[start as usize..end as usize] {
                add(id);
            }
        }
    }

    /// The term of file id `id`.
    pub fn term<'t>(&self, terms: &'t Terms, id: u32) -> &'t str {
        terms.term(self.globals[id as usize])
    }

    /// The number of file ids given out.
    pub fn len(&self) -> usize {
        self.globals.len()
    }

    /// True when no file id was given out.
    pub fn is_empty(&self) -> bool {
        self.globals.is_empty()
    }

    fn range(&mut self, terms: &mut Terms, ident: &'s [u8]) -> (u32, u32) {
        if let Some(&r) = self.idents.get(&Ident(ident)) {
            return r;
        }
        let start = self.parts.len() as u32;
        for &global in terms.of_ident(ident) {
            let next = self.globals.len() as u32;
            let local = *self.locals.entry(global).or_insert(next);
            if local == next {
                self.globals.push(global);
            }
            self.parts.push(local);
        }
        let r = (start, self.parts.len() as u32);
        self.idents.insert(Ident(ident), r);
        r
    }
}

/// The identifiers (ASCII letters, digits and `_`, not starting with a digit) of `text`.
pub fn identifiers(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut at = 0;
    std::iter::from_fn(move || {
        while at < text.len() && !is_word_start(text[at]) {
            if text[at].is_ascii_digit() {
                // A number (or `0x1f`, `8ul`) is skipped whole.
                while at < text.len() && is_word_byte(text[at]) {
                    at += 1;
                }
            } else {
                at += 1;
            }
        }
        let start = at;
        while at < text.len() && is_word_byte(text[at]) {
            at += 1;
        }
        (at > start).then(|| &text[start..at])
    })
}

fn is_word_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
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
    fn identifiers_compare_equal_only_when_every_byte_is() {
        let names = [
            "",
            "a",
            "ab",
            "abcdefg",
            "abcdefgh",
            "abcdefgx",
            "xbcdefgh",
            "abcdefghijklmnop",
            "abcdefghijklmnoq",
            "abcdefghXjklmnop",
            "abcdefghijklmnopq",
            "abcdefghijklmnopr",
        ];
        for a in names {
            for b in names {
                assert_eq!(
                    Ident(a.as_bytes()) == Ident(b.as_bytes()),
                    a == b,
                    "{a:?} {b:?}"
                );
            }
        }
    }

    #[test]
    fn a_files_terms_are_numbered_from_zero_in_order_first_seen() {
        let mut terms = Terms::default();
        terms.of_ident(b"unrelated_words");
        let mut file = FileTerms::default();
        let mut ids = Vec::new();
        file.of_text(&mut terms, b"read_page(page); write_page", |id| {
            ids.push(id)
        });
        assert_eq!(ids, [0, 1, 1, 2, 1]);
        let words: Vec<&str> = (0..file.len() as u32)
            .map(|i| file.term(&terms, i))
            .collect();
        assert_eq!(words, ["read", "page", "write"]);
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
