//! Reading a segment's code search files ([`super`] describes them). Every read is
//! bounds-checked; a read that runs past its file returns `None` (or ends a postings walk with
//! [`Postings::overrun`] set) for the caller to report as damage.

use std::path::Path;

use memmap2::Mmap;

use super::extract::{DocHead, FIELDS};
use super::{read_tf, DOC_LEN};
use crate::damage::open_fst;
use crate::disk::{map, MapBytes};
use crate::error::IndexError;
use crate::format::{check_header, HEADER_LEN};
use crate::idlist::IdReader;

/// Bytes of `codedocs.dat` before the file starts: the count and the averages.
const STATS_LEN: usize = 4 + 4 * FIELDS;

/// The code search files of an open segment.
pub struct CodeIndex {
    terms: fst::Map<MapBytes>,
    post: Mmap,
    docs: Mmap,
    files: u32,
    n: u32,
}

/// A document: its definition's offset in `defs.dat` and its head.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Doc {
    /// The offset of its definition in `defs.dat`.
    pub def: u64,
    /// Its kind, rank, comment line and field lengths.
    pub head: DocHead,
}

impl CodeIndex {
    /// Opens the files in `dir` of a segment of `files` files (`len` gives each file's length).
    pub fn open(
        dir: &Path,
        files: u32,
        len: impl Fn(&str) -> Option<u64>,
    ) -> Result<CodeIndex, IndexError> {
        let headed = |name: &str, kind: &[u8; 4]| -> Result<Mmap, IndexError> {
            let m = map(dir, name, len(name))?;
            check_header(&m, kind, &dir.join(name))?;
            Ok(m)
        };
        let docs = headed("codedocs.dat", b"CDOC")?;
        let post = headed("codepost.dat", b"CPST")?;
        let terms = open_fst(dir, "codeterms.fst", len("codeterms.fst"))?;
        let n = docs
            .get(HEADER_LEN..HEADER_LEN + 4)
            .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        let want = HEADER_LEN + STATS_LEN + 4 * (files as usize + 1) + DOC_LEN * n as usize;
        if docs.len() != want {
            return Err(IndexError::damaged(
                dir.join("codedocs.dat"),
                format!(
                    "{} bytes, where {n} documents of {files} files take {want}",
                    docs.len()
                ),
            ));
        }
        Ok(CodeIndex {
            terms,
            post,
            docs,
            files,
            n,
        })
    }

    /// The number of documents.
    pub fn len(&self) -> u32 {
        self.n
    }

    /// True without documents.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The average number of terms in each field.
    pub fn averages(&self) -> [f32; FIELDS] {
        let mut out = [0f32; FIELDS];
        for (f, a) in out.iter_mut().enumerate() {
            let at = HEADER_LEN + 4 + 4 * f;
            let b = &self.docs[at..at + 4];
            *a = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        }
        out
    }

    /// Document `id`; `None` past the end.
    pub fn doc(&self, id: u32) -> Option<Doc> {
        let at = self.docs_at() + DOC_LEN * id as usize;
        let b = self.docs.get(at..at + DOC_LEN)?;
        let mut off = [0u8; 8];
        off[..5].copy_from_slice(&b[..5]);
        Some(Doc {
            def: u64::from_le_bytes(off),
            head: DocHead::decode(&b[5..])?,
        })
    }

    /// The first document of file `file` (`files` for the end of the last one).
    fn start(&self, file: u32) -> u32 {
        let at = HEADER_LEN + STATS_LEN + 4 * file.min(self.files) as usize;
        let b = &self.docs[at..at + 4];
        u32::from_le_bytes([b[0], b[1], b[2], b[3]])
    }

    /// The documents of file `file`, clamped to the documents there are.
    pub fn docs_of(&self, file: u32) -> std::ops::Range<u32> {
        let end = self.start(file.saturating_add(1)).min(self.n);
        self.start(file).min(end)..end
    }

    /// The file of document `id`.
    pub fn file_of(&self, id: u32) -> Option<u32> {
        if id >= self.n {
            return None;
        }
        // The last file whose first document is at or before `id`.
        let (mut lo, mut hi) = (0u32, self.files);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.start(mid + 1) <= id {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        (lo < self.files).then_some(lo)
    }

    /// The postings of `term`; `None` when no document has it.
    pub fn postings(&self, term: &str) -> Option<Postings<'_>> {
        let at = self.terms.get(term)? as usize;
        let r = IdReader::new(self.post.get(at..).unwrap_or(&[]));
        Some(Postings {
            docs: r.left(),
            overrun: r.damaged,
            r,
        })
    }

    /// The terms that could be an abbreviation of `word` as kernel code writes them
    /// (`rcv`, `recv` of `receiv`): [`ShortFor`]'s, at most `max`.
    pub fn shorter_forms(&self, word: &str, max: usize) -> Vec<String> {
        use fst::{IntoStreamer, Streamer};
        let mut out = Vec::new();
        let mut stream = self.terms.search(ShortFor(word.as_bytes())).into_stream();
        while let Some((t, _)) = stream.next() {
            if t != word.as_bytes() {
                out.push(String::from_utf8_lossy(t).into_owned());
            }
            if out.len() >= max {
                break;
            }
        }
        out
    }

    fn docs_at(&self) -> usize {
        HEADER_LEN + STATS_LEN + 4 * (self.files as usize + 1)
    }
}

/// A term's postings: `(document, frequency in each field)` in document order, then
/// ([`Postings::files`]) the files whose path has it.
pub struct Postings<'a> {
    r: IdReader<'a>,
    /// The number of documents with the term.
    pub docs: u64,
    /// Set when the postings ran past their file (damage).
    pub overrun: bool,
}

impl<'a> Postings<'a> {
    /// The files whose path has the term, `(file, count)` in file order (the documents left
    /// are skipped).
    pub fn files(self) -> impl Iterator<Item = (u32, u8)> + 'a {
        let rest = match self.overrun {
            true => None,
            false => self.r.skip_rest(|r| {
                read_tf(r);
            }),
        };
        let mut files = rest.map(|r| IdReader::new(r.rest()));
        std::iter::from_fn(move || {
            let list = files.as_mut()?;
            let file = list.next_id()?;
            let n = list.payload().u8();
            if list.payload().overrun || file > u32::MAX as u64 {
                files = None;
                return None;
            }
            Some((file as u32, n))
        })
    }
}

impl Iterator for Postings<'_> {
    type Item = (u32, [u8; FIELDS]);

    fn next(&mut self) -> Option<Self::Item> {
        if self.overrun {
            return None;
        }
        let Some(doc) = self.r.next_id() else {
            self.overrun = self.r.damaged;
            return None;
        };
        let tf = read_tf(self.r.payload());
        if self.r.payload().overrun || doc > u32::MAX as u64 {
            self.overrun = true;
            return None;
        }
        Some((doc as u32, tf))
    }
}

/// Matches the terms that could abbreviate a word: two letters or more, starting with its
/// first letter, the rest of them in the word's order (`rcv`, `recv`, `rx` is not one of
/// `receiv`: its `x` is not in the word), and shorter than the word.
pub struct ShortFor<'a>(pub &'a [u8]);

impl fst::Automaton for ShortFor<'_> {
    /// `Some((letters matched, position in the word after the last one))`; `None`: dead.
    type State = Option<(usize, usize)>;

    fn start(&self) -> Self::State {
        Some((0, 0))
    }

    fn is_match(&self, state: &Self::State) -> bool {
        state.is_some_and(|(n, _)| n >= 2 && n < self.0.len())
    }

    fn can_match(&self, state: &Self::State) -> bool {
        state.is_some()
    }

    fn accept(&self, state: &Self::State, byte: u8) -> Self::State {
        let (n, at) = (*state)?;
        if n == 0 {
            return (self.0.first() == Some(&byte)).then_some((1, 1));
        }
        if n + 1 >= self.0.len() {
            return None;
        }
        let next = memchr::memchr(byte, self.0.get(at..)?)?;
        Some((n + 1, at + next + 1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fst::{IntoStreamer, Streamer};

    #[test]
    fn short_forms_start_with_the_words_letter_and_keep_its_order() {
        let terms = [
            "queu", "rc", "rcv", "rebuild", "receiv", "recv", "rvc", "rx", "sk", "socket", "v",
        ];
        let set = fst::Set::from_iter(terms).unwrap();
        let found = |word: &str| {
            let mut out = Vec::new();
            let mut s = set.search(ShortFor(word.as_bytes())).into_stream();
            while let Some(t) = s.next() {
                out.push(String::from_utf8_lossy(t).into_owned());
            }
            out
        };
        assert_eq!(found("receiv"), ["rc", "rcv", "recv"]);
        assert_eq!(found("socket"), ["sk"]);
        assert_eq!(found("queue"), ["queu"]);
        assert_eq!(found("v"), Vec::<String>::new());
    }
}
