//! The documentation part on disk, written and read: a directory (`kd-…`) of three files.
//! `docs.dat` holds the paths and, per section, where it is, its title and its title and body
//! lengths in words, then the byte lengths of the other two; `terms.fst` maps each word to the
//! offset of its postings; `postings.dat` holds per word the sections holding it (delta ids),
//! with how often in the title and in the body.
//!
//! A build takes each file's facts ([`DocFacts`]: its sections and their words, made in
//! parallel, each thread with its own [`Vocab`] so that a distinct token is stemmed once per
//! thread), then merges them in path order ([`DocsMerge`]).

use std::path::Path;

use super::sections::{sections, Section};
use super::words::Vocab;
use crate::accum::NameMap;
use crate::codec::{checksum_bytes, hash64, put_str, put_varint, Reader};
use crate::disk::MapBytes;
use crate::error::IndexError;
use crate::format::{check_header, header, HEADER_LEN};
use crate::idlist::{IdList, IdReader};
use crate::part::{FromFacts, Merge};
use crate::text::walk::TextFile;

/// The part's files, in the order [`build`] writes them.
pub const FILES: [&str; 3] = ["docs.dat", "terms.fst", "postings.dat"];

const DOCS_KIND: &[u8; 4] = b"DOCS";
const POSTINGS_KIND: &[u8; 4] = b"DPST";

/// What a build read and wrote.
pub struct Built {
    /// Files read.
    pub files: u64,
    /// Sections indexed.
    pub sections: u64,
    /// [`super::combine`] of the files' paths and content hashes.
    pub content: u64,
    /// Each file of the part with its checksum.
    pub checksums: Vec<(String, u64)>,
    /// Bytes written.
    pub bytes: u64,
}

/// A section with its words counted, by index into its file's terms.
struct Counted {
    section: Section,
    title_words: u32,
    body_words: u32,
    /// (term, in the title, in the body).
    counts: Vec<(u32, u32, u32)>,
}

/// What one documentation file contributes to the part: the hash of its bytes, its distinct
/// search words, and its sections with their words counted.
pub struct DocFacts {
    hash: u64,
    /// The file's distinct terms, numbered in the order first seen.
    terms: Vec<Box<str>>,
    sections: Vec<Counted>,
}

/// One thread's scratch for [`DocFacts::of`]: a vocabulary (each distinct token stemmed once
/// per thread) and the counts of the section being counted.
#[derive(Default)]
struct Counter {
    vocab: Vocab,
    /// Per term id of `vocab`, (title, body) counts of the section being counted.
    counts: Vec<(u32, u32)>,
    /// The term ids the section being counted touched.
    touched: Vec<u32>,
    /// Per term id of `vocab`, its index among the file's terms plus one (0: not yet).
    local: Vec<u32>,
    /// The term ids of `vocab` the file touched.
    file_terms: Vec<u32>,
}

thread_local! {
    static COUNTER: std::cell::RefCell<Counter> = std::cell::RefCell::default();
}

impl Counter {
    /// Counts the words of `s`, whose text is `lines`.
    fn count(&mut self, s: Section, lines: &[&str]) -> Counted {
        let (mut title_words, mut body_words) = (0, 0);
        let Counter {
            vocab,
            counts,
            touched,
            ..
        } = self;
        let mut add = |id: u32, title: bool| {
            let id = id as usize;
            if id >= counts.len() {
                counts.resize(id + 1, (0, 0));
            }
            let c = &mut counts[id];
            if *c == (0, 0) {
                touched.push(id as u32);
            }
            if title {
                c.0 += 1;
            } else {
                c.1 += 1;
            }
        };
        vocab.each(&s.title, |id| {
            title_words += 1;
            add(id, true)
        });
        for l in &lines[s.start as usize - 1..s.end as usize] {
            vocab.each(l, |id| {
                body_words += 1;
                add(id, false)
            });
        }
        let mut touched = std::mem::take(&mut self.touched);
        let counts = touched
            .drain(..)
            .map(|id| {
                let (t, b) = std::mem::take(&mut self.counts[id as usize]);
                (self.local_id(id), t, b)
            })
            .collect();
        self.touched = touched;
        Counted {
            section: s,
            title_words,
            body_words,
            counts,
        }
    }

    /// The file's own number of term `id` of the vocabulary.
    fn local_id(&mut self, id: u32) -> u32 {
        let i = id as usize;
        if i >= self.local.len() {
            self.local.resize(i + 1, 0);
        }
        if self.local[i] == 0 {
            self.file_terms.push(id);
            self.local[i] = self.file_terms.len() as u32;
        }
        self.local[i] - 1
    }

    /// The facts of a file of `bytes`.
    fn facts(&mut self, bytes: &[u8]) -> DocFacts {
        let text = String::from_utf8_lossy(bytes);
        let lines: Vec<&str> = text.lines().collect();
        let sections = sections(&lines)
            .into_iter()
            .map(|s| self.count(s, &lines))
            .collect();
        let terms = self
            .file_terms
            .drain(..)
            .map(|id| {
                self.local[id as usize] = 0;
                self.vocab.stems.terms[id as usize].clone()
            })
            .collect();
        DocFacts {
            hash: hash64(bytes),
            terms,
            sections,
        }
    }
}

impl DocFacts {
    /// What a file of `bytes` contributes (an unreadable file: nothing, as an empty one).
    pub fn of(bytes: Option<&[u8]>) -> DocFacts {
        COUNTER.with(|c| c.borrow_mut().facts(bytes.unwrap_or_default()))
    }
}

/// The part's files' facts merged, in path order.
#[derive(Default)]
pub struct DocsMerge {
    /// Each file's content hash, in path order.
    hashes: Vec<u64>,
    /// Term → id, in the order first merged.
    ids: NameMap<Box<str>, u32>,
    terms: Vec<Box<str>>,
    /// Per term, the sections holding it with their title and body counts.
    lists: Vec<IdList>,
    /// The sections' records of `docs.dat`.
    sections: Vec<u8>,
    /// Sections merged: the next section's id.
    next: u32,
}

impl Merge<DocFacts> for DocsMerge {
    fn add(&mut self, batch: Vec<DocFacts>) -> Result<(), IndexError> {
        for f in batch {
            self.add_file(f);
        }
        Ok(())
    }
}

impl DocsMerge {
    /// Adds the next file's facts.
    fn add_file(&mut self, f: DocFacts) {
        let p = self.hashes.len() as u64;
        self.hashes.push(f.hash);
        let map: Vec<u32> = f
            .terms
            .into_iter()
            .map(|t| {
                let next = self.terms.len() as u32;
                *self.ids.entry(t).or_insert_with_key(|t| {
                    self.terms.push(t.clone());
                    next
                })
            })
            .collect();
        self.lists.resize_with(self.terms.len(), IdList::default);
        let docs = &mut self.sections;
        for c in f.sections {
            let s = &c.section;
            for v in [p, s.line as u64, s.start as u64, s.end as u64] {
                put_varint(docs, v);
            }
            put_varint(docs, c.title_words as u64);
            put_varint(docs, c.body_words as u64);
            put_str(docs, s.title.as_bytes());
            let id = self.next;
            for &(term, t, b) in &c.counts {
                let payload = self.lists[map[term as usize] as usize].push(id as u64);
                put_varint(payload, t as u64);
                put_varint(payload, b as u64);
            }
            self.next += 1;
        }
    }

    /// Writes the part of `files` (whose facts were merged, in this order) into the new
    /// directory `dir`.
    pub fn finish(self, files: &[TextFile], dir: &Path) -> Result<Built, IndexError> {
        let content = super::combine(
            files
                .iter()
                .map(|f| f.path.as_str())
                .zip(self.hashes.iter().copied()),
        );
        let mut docs = header(DOCS_KIND).to_vec();
        put_varint(&mut docs, files.len() as u64);
        for f in files {
            put_str(&mut docs, f.path.as_bytes());
        }
        put_varint(&mut docs, self.next as u64);
        docs.extend_from_slice(&self.sections);
        let (fst, postings) = terms_and_postings(&self.terms, &self.lists)
            .map_err(|e| IndexError::io("cannot write", dir)(e))?;
        put_varint(&mut docs, fst.len() as u64);
        put_varint(&mut docs, postings.len() as u64);
        std::fs::create_dir_all(dir).map_err(IndexError::io("cannot create", dir))?;
        let mut checksums = Vec::new();
        for (name, bytes) in FILES.iter().zip([&docs, &fst, &postings]) {
            let path = dir.join(name);
            std::fs::write(&path, bytes).map_err(IndexError::io("cannot write", &path))?;
            checksums.push((name.to_string(), checksum_bytes(bytes)));
        }
        Ok(Built {
            files: files.len() as u64,
            sections: self.next as u64,
            content,
            checksums,
            bytes: (docs.len() + fst.len() + postings.len()) as u64,
        })
    }
}

/// `terms.fst` and `postings.dat`: each term's list, in term order.
fn terms_and_postings(terms: &[Box<str>], lists: &[IdList]) -> std::io::Result<(Vec<u8>, Vec<u8>)> {
    let mut order: Vec<u32> = (0..terms.len() as u32).collect();
    order.sort_unstable_by_key(|&t| &terms[t as usize]);
    let mut postings = header(POSTINGS_KIND).to_vec();
    let mut fst = crate::fstbuild::MapWriter::new(Vec::new());
    for t in order {
        fst.insert(terms[t as usize].as_bytes(), postings.len() as u64)?;
        lists[t as usize].put(&mut postings);
    }
    Ok((fst.finish()?, postings))
}

/// Reads `files` (in path order) under `root` and writes the part into the new directory
/// `dir`: each file's facts, merged; `prover` takes the digest of each file read.
pub fn build(
    root: &Path,
    files: &[TextFile],
    dir: &Path,
    prover: Option<&crate::factstore::Prover>,
) -> Result<Built, IndexError> {
    let beneath = crate::tree::beneath::Root::open(root).ok();
    let mut merge = DocsMerge::default();
    let built = crate::part::build(
        files,
        |f| {
            let bytes = beneath.as_ref().and_then(|r| r.read(&f.path).ok());
            if let (Some(p), Some(b)) = (prover, bytes.as_deref()) {
                p.saw(&f.path, b);
            }
            <Docs as FromFacts>::facts(&f.path, bytes.as_deref())
        },
        &mut merge,
    );
    // Each thread's vocabulary (every distinct token of the documentation) would outlive the
    // build in the pool's threads: given back here, before the segment build grows.
    rayon::broadcast(|_| COUNTER.with(|c| c.take()));
    built?;
    merge.finish(files, dir)
}

impl FromFacts for Docs {
    type Facts = DocFacts;

    fn facts(_path: &str, bytes: Option<&[u8]>) -> DocFacts {
        DocFacts::of(bytes)
    }
}

/// A section as the part stores it.
#[derive(Clone, Debug)]
pub struct Doc {
    /// Index into the part's paths.
    pub path: u32,
    /// See [`Section`].
    pub line: u32,
    /// See [`Section`].
    pub start: u32,
    /// See [`Section`].
    pub end: u32,
    /// Words in the title.
    pub title_words: u32,
    /// Words in the body.
    pub body_words: u32,
    /// The title.
    pub title: String,
}

/// A section holding a word, and how often in its title and in its body.
pub type Posting = (u32, u32, u32);

/// An open documentation part.
pub struct Docs {
    /// The part's directory.
    pub dir: std::path::PathBuf,
    /// Root-relative paths of the files read.
    pub paths: Vec<String>,
    /// Every section, by id.
    pub docs: Vec<Doc>,
    terms: fst::Map<MapBytes>,
    postings: memmap2::Mmap,
    bytes: u64,
}

impl Docs {
    /// Opens the part in `dir` (the word files mapped); an error says which file is
    /// unreadable or damaged.
    pub fn open(dir: &Path) -> Result<Docs, IndexError> {
        let path = dir.join(FILES[0]);
        let damaged = |what: &str| IndexError::damaged(&path, what);
        let bytes = std::fs::read(&path).map_err(IndexError::io("", &path))?;
        check_header(&bytes, DOCS_KIND, &path)?;
        let mut r = Reader::new(&bytes[HEADER_LEN..]);
        let n = r.varint();
        let mut paths = Vec::with_capacity(n.min(1 << 20) as usize);
        for _ in 0..n {
            if r.overrun {
                return Err(damaged("truncated"));
            }
            let p = std::str::from_utf8(r.str()).map_err(|_| damaged("a path is not UTF-8"))?;
            paths.push(p.to_string());
        }
        let n = r.varint();
        let mut docs = Vec::with_capacity(n.min(1 << 24) as usize);
        for _ in 0..n {
            if r.overrun {
                return Err(damaged("truncated"));
            }
            let mut v = || u32::try_from(r.varint()).unwrap_or(u32::MAX);
            let (path, line, start, end, title_words, body_words) = (v(), v(), v(), v(), v(), v());
            let title = String::from_utf8_lossy(r.str()).into_owned();
            if path as usize >= paths.len() || start == 0 || start > end {
                return Err(damaged("a section does not decode"));
            }
            docs.push(Doc {
                path,
                line,
                start,
                end,
                title_words,
                body_words,
                title,
            });
        }
        let (terms_len, postings_len) = (r.varint(), r.varint());
        if r.overrun || !r.at_end() {
            return Err(damaged("truncated"));
        }
        let terms = crate::damage::open_fst(dir, FILES[1], Some(terms_len))?;
        let postings = crate::disk::map(dir, FILES[2], Some(postings_len))?;
        check_header(&postings, POSTINGS_KIND, &dir.join(FILES[2]))?;
        Ok(Docs {
            bytes: bytes.len() as u64 + terms_len + postings_len,
            dir: dir.to_path_buf(),
            paths,
            docs,
            terms,
            postings,
        })
    }

    /// Bytes of the part's files.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The sections holding `word` (a word as [`super::words::Words`] makes them), with how
    /// often in the title and in the body; an error when its postings do not decode.
    pub fn postings(&self, word: &str) -> Result<Vec<Posting>, IndexError> {
        let damaged = || IndexError::damaged(self.dir.join(FILES[2]), "a list does not decode");
        let Some(at) = self.terms.get(word) else {
            return Ok(Vec::new());
        };
        let body = self
            .postings
            .get(at as usize..)
            .filter(|_| at >= HEADER_LEN as u64)
            .ok_or_else(damaged)?;
        let mut r = IdReader::new(body);
        if r.left() > self.docs.len() as u64 {
            return Err(damaged());
        }
        let mut out: Vec<Posting> = Vec::with_capacity(r.left() as usize);
        while let Some(doc) = r.next_id() {
            let (t, b) = (r.payload().varint(), r.payload().varint());
            let repeated = out.last().is_some_and(|p| p.0 as u64 == doc);
            if r.payload().overrun || doc >= self.docs.len() as u64 || repeated {
                return Err(damaged());
            }
            out.push((
                doc as u32,
                t.min(u32::MAX as u64) as u32,
                b.min(u32::MAX as u64) as u32,
            ));
        }
        if r.damaged {
            return Err(damaged());
        }
        Ok(out)
    }
}
