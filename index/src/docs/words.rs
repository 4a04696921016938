//! Search words: text split into lowercase runs of letters and digits, common English
//! stopwords dropped, each stemmed with Snowball's English stemmer. A query's words and an
//! indexed section's words are made by the same rules ([`Words`], [`Vocab`]).

use crate::accum::NameMap;

/// Common English words no query needs to match, sorted.
const STOPWORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "an", "and", "any", "are", "as", "at", "be", "been",
    "but", "by", "can", "could", "do", "does", "each", "for", "from", "had", "has", "have", "he",
    "her", "his", "how", "i", "if", "in", "into", "is", "it", "its", "may", "more", "most", "must",
    "no", "not", "of", "on", "one", "or", "other", "our", "shall", "she", "should", "so", "some",
    "such", "than", "that", "the", "their", "them", "then", "there", "these", "they", "this",
    "those", "to", "too", "was", "we", "were", "what", "when", "where", "which", "while", "who",
    "why", "will", "with", "would", "you", "your",
];

/// Longer runs (hex dumps, base64) are no words.
const MAX_WORD_BYTES: usize = 64;

fn stemmer() -> rust_stemmers::Stemmer {
    rust_stemmers::Stemmer::create(rust_stemmers::Algorithm::English)
}

/// Stems interned as term ids: a lowercase word is stemmed (Snowball English) and its stem
/// given the next id the first time it is seen. Shared by the documentation and code searches.
pub struct Stems {
    stemmer: rust_stemmers::Stemmer,
    /// Stem → term id.
    ids: NameMap<Box<str>, u32>,
    /// Term id → stem.
    pub terms: Vec<Box<str>>,
}

impl Default for Stems {
    fn default() -> Self {
        Stems {
            stemmer: stemmer(),
            ids: NameMap::default(),
            terms: Vec::new(),
        }
    }
}

impl Stems {
    /// The term id of the stem of `lower`.
    pub fn id(&mut self, lower: &str) -> u32 {
        let stem = stem(&self.stemmer, lower);
        match self.ids.get(&*stem) {
            Some(&id) => id,
            None => {
                let id = self.terms.len() as u32;
                self.terms.push(stem.as_ref().into());
                self.ids.insert(stem.as_ref().into(), id);
                id
            }
        }
    }
}

/// The Snowball stem of `lower`; a word that ends with a digit is its own stem (every rule
/// of the English stemmer removes or replaces a suffix of letters), and skips the stemmer:
/// generated code has millions of names like `f1234`.
fn stem<'a>(stemmer: &rust_stemmers::Stemmer, lower: &'a str) -> std::borrow::Cow<'a, str> {
    if lower.as_bytes().last().is_some_and(u8::is_ascii_digit) {
        std::borrow::Cow::Borrowed(lower)
    } else {
        stemmer.stem(lower)
    }
}

/// Calls `f` with each run of letters and digits of `text`, lowercased into `lower`.
fn each_token(text: &str, lower: &mut String, mut f: impl FnMut(&str)) {
    for raw in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty() && w.len() <= MAX_WORD_BYTES)
    {
        lower.clear();
        if raw.is_ascii() {
            lower.push_str(raw);
            lower.make_ascii_lowercase();
        } else {
            lower.extend(raw.chars().flat_map(char::to_lowercase));
        }
        f(lower);
    }
}

fn is_stopword(lower: &str) -> bool {
    STOPWORDS.binary_search(&lower).is_ok()
}

/// Splits a query (or a snippet's line) into search words, stemming every word.
pub struct Words {
    stemmer: rust_stemmers::Stemmer,
}

impl Default for Words {
    fn default() -> Self {
        Words { stemmer: stemmer() }
    }
}

impl Words {
    /// Calls `f` with each search word of `text`.
    pub fn each(&self, text: &str, mut f: impl FnMut(&str)) {
        let mut lower = String::new();
        each_token(text, &mut lower, |w| {
            if !is_stopword(w) {
                f(&stem(&self.stemmer, w));
            }
        });
    }
}

/// Marks a token that is a stopword in [`Vocab`]'s map.
const STOP: u32 = u32::MAX;

/// The words of many texts as term ids: each distinct token is lowercased, checked against the
/// stopwords and stemmed once; later occurrences are one hash lookup.
#[derive(Default)]
pub struct Vocab {
    /// Lowercase token → term id, or [`STOP`].
    tokens: NameMap<Box<str>, u32>,
    /// The stems and their ids.
    pub stems: Stems,
    lower: String,
}

impl Vocab {
    /// Calls `f` with the term id of each search word of `text`.
    pub fn each(&mut self, text: &str, mut f: impl FnMut(u32)) {
        let mut lower = std::mem::take(&mut self.lower);
        each_token(text, &mut lower, |w| {
            let id = match self.tokens.get(w) {
                Some(&id) => id,
                None => {
                    let id = if is_stopword(w) {
                        STOP
                    } else {
                        self.stems.id(w)
                    };
                    self.tokens.insert(w.into(), id);
                    id
                }
            };
            if id != STOP {
                f(id);
            }
        });
        self.lower = lower;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        #[test]
        fn a_word_that_ends_with_a_digit_is_its_own_stem(
            word in "[a-z]{0,4}(y|e|s|ed|ing|ies|ly|ness|ation|al)?[a-z0-9]{0,4}[0-9]"
        ) {
            let stemmer = stemmer();
            let snowball = stemmer.stem(&word);
            proptest::prop_assert_eq!(&snowball, &stem(&stemmer, &word));
            proptest::prop_assert_eq!(snowball.as_ref(), word.as_str());
        }
    }

    #[test]
    fn stopwords_are_sorted_for_binary_search() {
        assert!(STOPWORDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn words_are_stemmed_without_stopwords() {
        let mut got = Vec::new();
        Words::default().each("The Allocating of pages, allocation!", |w| {
            got.push(w.to_string())
        });
        assert_eq!(got, ["alloc", "page", "alloc"]);
    }

    #[test]
    fn a_vocabulary_gives_one_id_per_stem_and_the_same_stems_as_words() {
        let mut v = Vocab::default();
        let mut ids = Vec::new();
        v.each("The Allocating of pages, allocation! ÜBER", |id| {
            ids.push(id)
        });
        assert_eq!(ids, [0, 1, 0, 2]);
        let terms: Vec<&str> = v.stems.terms.iter().map(|t| &**t).collect();
        assert_eq!(terms, ["alloc", "page", "über"]);
    }
}
