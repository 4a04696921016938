//! The documentation part on disk, written and read: a directory (`kd-…`) of three files.
//! `docs.dat` holds the paths and, per section, where it is, its title and its title and body
//! lengths in words, then the byte lengths of the other two; `terms.fst` maps each word to the
//! offset of its postings; `postings.dat` holds per word the sections holding it (delta ids),
//! with how often in the title and in the body.
//!
//! A build reads the files in parallel, one worker per thread with its own [`Vocab`] (each
//! distinct token stemmed once per thread), then maps the workers' terms to one numbering.

use std::path::Path;
use std::sync::Mutex;

use rayon::prelude::*;

use super::sections::{sections, Section};
use super::words::Vocab;
use crate::index::accum::NameMap;
use crate::index::codec::{checksum_bytes, hash64, put_str, put_varint, Reader};
use crate::index::error::IndexError;
use crate::index::format::{check_header, header, HEADER_LEN};
use crate::index::segment::MapBytes;
use crate::index::text::walk::TextFile;

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

/// A section with its words counted, by term id of its worker's [`Vocab`].
struct Counted {
    section: Section,
    title_words: u32,
    body_words: u32,
    /// (term, in the title, in the body).
    counts: Vec<(u32, u32, u32)>,
}

/// One worker's files: (file index, content hash, sections), and its vocabulary.
#[derive(Default)]
struct Worker {
    vocab: Vocab,
    files: Vec<(usize, u64, Vec<Counted>)>,
    /// Per term id, (title, body) counts of the section being counted.
    counts: Vec<(u32, u32)>,
    /// The term ids the section being counted touched.
    touched: Vec<u32>,
}

impl Worker {
    /// Counts the words of `s`, whose text is `lines`.
    fn count(&mut self, s: Section, lines: &[&str]) -> Counted {
        let (mut title_words, mut body_words) = (0, 0);
        let Worker {
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
        let counts = touched
            .drain(..)
            .map(|id| {
                let (t, b) = std::mem::take(&mut self.counts[id as usize]);
                (id, t, b)
            })
            .collect();
        Counted {
            section: s,
            title_words,
            body_words,
            counts,
        }
    }

    /// Reads file `i` at `path` and counts its sections.
    fn read(&mut self, root: Option<&crate::beneath::Root>, i: usize, path: &str) {
        let bytes = root.and_then(|r| r.read(path).ok());
        let bytes = bytes.as_deref().unwrap_or_default();
        let text = String::from_utf8_lossy(bytes);
        let lines: Vec<&str> = text.lines().collect();
        let counted = sections(&lines)
            .into_iter()
            .map(|s| self.count(s, &lines))
            .collect();
        self.files.push((i, hash64(bytes), counted));
    }
}

/// One term's postings as they are gathered.
#[derive(Default)]
struct List {
    count: u64,
    last: u32,
    bytes: Vec<u8>,
}

/// Reads `files` (in path order) under `root` and writes the part into the new directory
/// `dir`.
pub fn build(root: &Path, files: &[TextFile], dir: &Path) -> Result<Built, IndexError> {
    // One worker per thread, never shared: its lock is never waited on.
    let workers: Vec<Mutex<Worker>> = (0..rayon::current_num_threads())
        .map(|_| Mutex::default())
        .collect();
    let beneath = crate::beneath::Root::open(root).ok();
    files.par_iter().enumerate().for_each(|(i, f)| {
        let at = rayon::current_thread_index().unwrap_or(0) % workers.len();
        let mut w = workers[at].lock().unwrap_or_else(|e| e.into_inner());
        w.read(beneath.as_ref(), i, &f.path);
    });
    let mut workers: Vec<Worker> = workers
        .into_iter()
        .map(|w| w.into_inner().unwrap_or_else(|e| e.into_inner()))
        .collect();
    // (file index, content hash, sections, worker), in path order.
    let mut parsed: Vec<(usize, u64, Vec<Counted>, usize)> = Vec::new();
    for (k, w) in workers.iter_mut().enumerate() {
        let files = std::mem::take(&mut w.files);
        parsed.extend(files.into_iter().map(|(i, h, c)| (i, h, c, k)));
    }
    parsed.sort_unstable_by_key(|f| f.0);
    // Each worker's term ids → one numbering.
    let mut ids: NameMap<&str, u32> = NameMap::default();
    let mut terms: Vec<&str> = Vec::new();
    let maps: Vec<Vec<u32>> = workers
        .iter()
        .map(|w| {
            w.vocab
                .stems
                .terms
                .iter()
                .map(|t| {
                    *ids.entry(t).or_insert_with(|| {
                        terms.push(t);
                        terms.len() as u32 - 1
                    })
                })
                .collect()
        })
        .collect();
    let content = super::combine(
        files
            .iter()
            .map(|f| f.path.as_str())
            .zip(parsed.iter().map(|p| p.1)),
    );
    let mut docs = header(DOCS_KIND).to_vec();
    put_varint(&mut docs, files.len() as u64);
    for f in files {
        put_str(&mut docs, f.path.as_bytes());
    }
    let sections: usize = parsed.iter().map(|p| p.2.len()).sum();
    put_varint(&mut docs, sections as u64);
    let mut lists: Vec<List> = (0..terms.len()).map(|_| List::default()).collect();
    let mut id = 0u32;
    for (p, _, counted, k) in &parsed {
        let map = &maps[*k];
        for c in counted {
            let s = &c.section;
            for v in [*p as u64, s.line as u64, s.start as u64, s.end as u64] {
                put_varint(&mut docs, v);
            }
            put_varint(&mut docs, c.title_words as u64);
            put_varint(&mut docs, c.body_words as u64);
            put_str(&mut docs, s.title.as_bytes());
            for &(term, t, b) in &c.counts {
                let list = &mut lists[map[term as usize] as usize];
                put_varint(&mut list.bytes, (id - list.last) as u64);
                put_varint(&mut list.bytes, t as u64);
                put_varint(&mut list.bytes, b as u64);
                list.last = id;
                list.count += 1;
            }
            id += 1;
        }
    }
    let mut order: Vec<u32> = (0..terms.len() as u32).collect();
    order.sort_unstable_by_key(|&t| terms[t as usize]);
    let mut postings = header(POSTINGS_KIND).to_vec();
    let mut fst = crate::index::fstbuild::MapWriter::new(Vec::new());
    let fst_error = |e| IndexError::io("cannot write", dir)(e);
    for t in order {
        let list = &lists[t as usize];
        fst.insert(terms[t as usize].as_bytes(), postings.len() as u64)
            .map_err(fst_error)?;
        put_varint(&mut postings, list.count);
        postings.extend_from_slice(&list.bytes);
    }
    let fst = fst.finish().map_err(fst_error)?;
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
        sections: sections as u64,
        content,
        checksums,
        bytes: (docs.len() + fst.len() + postings.len()) as u64,
    })
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
        let terms = crate::index::damage::open_fst(dir, FILES[1], Some(terms_len))?;
        let postings = crate::index::segment::map(dir, FILES[2], Some(postings_len))?;
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
        let mut r = Reader::new(body);
        let n = r.varint();
        if n > self.docs.len() as u64 {
            return Err(damaged());
        }
        let mut out = Vec::with_capacity(n as usize);
        let mut doc = 0u64;
        for i in 0..n {
            let delta = r.varint();
            doc += delta;
            let (t, b) = (r.varint(), r.varint());
            if r.overrun || doc >= self.docs.len() as u64 || (i > 0 && delta == 0) {
                return Err(damaged());
            }
            out.push((
                doc as u32,
                t.min(u32::MAX as u64) as u32,
                b.min(u32::MAX as u64) as u32,
            ));
        }
        Ok(out)
    }
}
