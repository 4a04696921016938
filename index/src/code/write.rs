//! Writing a segment's code search files. During the scan, the record writer appends each
//! file's documents to a spool file in file order ([`Spool`]); after the names are merged (their
//! memory freed), [`write_code_index`] reads the spool once, gives each document its id, builds
//! every term's postings in memory (about 3 bytes a posting) and writes the three files.

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::Path;

use crate::fstbuild::MapWriter;

use super::extract::{DocHead, FileDocs, FIELDS, HEAD_LEN};
use super::{put_tf, read_tf};
use crate::accum::NameMap;
use crate::codec::{put_varint, read_varint, Reader};
use crate::format::header;
use crate::idlist::IdList;

/// The spool file, removed once the code files are written.
const SPOOL: &str = "codedocs.spool";

/// The documents of a segment's files, appended in file order.
pub struct Spool {
    w: BufWriter<File>,
    buf: Vec<u8>,
}

impl Spool {
    /// Creates the spool in segment directory `dir`.
    pub fn create(dir: &Path) -> io::Result<Spool> {
        Ok(Spool {
            w: BufWriter::with_capacity(1 << 20, File::create(dir.join(SPOOL))?),
            buf: Vec::new(),
        })
    }

    /// Adds the documents of file `file_id`, whose definitions are at `def_offsets` of
    /// `defs.dat`.
    pub fn add(&mut self, file_id: u32, docs: &FileDocs, def_offsets: &[u64]) -> io::Result<()> {
        if docs.defs.is_empty() {
            return Ok(());
        }
        self.buf.clear();
        put_varint(&mut self.buf, file_id as u64);
        put_varint(&mut self.buf, docs.defs.len() as u64);
        for &i in &docs.defs {
            let off = def_offsets.get(i as usize).copied().ok_or_else(|| {
                io::Error::other("a document names a definition its file does not have")
            })?;
            put_varint(&mut self.buf, off);
        }
        for part in [&docs.terms, &docs.path] {
            put_varint(&mut self.buf, part.len() as u64);
            self.buf.extend_from_slice(part);
        }
        put_varint(&mut self.buf, docs.bytes.len() as u64);
        self.w.write_all(&self.buf)?;
        self.w.write_all(&docs.bytes)
    }

    /// Flushes the spool.
    pub fn finish(mut self) -> io::Result<()> {
        self.w.flush()
    }
}

/// One term's postings while they are built: over documents, and over files for the path.
#[derive(Default)]
struct Term {
    /// The documents holding the term, with its count in each field.
    docs: IdList,
    /// The files whose path holds it, with its count.
    files: IdList,
}

impl Term {
    /// The id of `term` in `ids`, added to `terms` when new.
    fn id(ids: &mut NameMap<Box<[u8]>, u32>, terms: &mut Vec<Term>, term: &[u8]) -> u32 {
        match ids.get(term) {
            Some(&id) => id,
            None => {
                let id = terms.len() as u32;
                ids.insert(term.into(), id);
                terms.push(Term::default());
                id
            }
        }
    }
}

/// Writes `codedocs.dat`, `codeterms.fst` and `codepost.dat` in segment directory `dir` (of
/// `files` files) from its spool, and removes the spool.
pub fn write_code_index(dir: &Path, files: u32) -> io::Result<()> {
    let spool = dir.join(SPOOL);
    let mut r = BufReader::with_capacity(1 << 20, File::open(&spool)?);
    let mut ids: NameMap<Box<[u8]>, u32> = NameMap::default();
    let mut terms: Vec<Term> = Vec::new();
    let mut docs: Vec<u8> = Vec::new();
    let mut starts: Vec<u32> = Vec::with_capacity(files as usize + 1);
    let mut sums = [0u64; FIELDS];
    let mut n: u32 = 0;
    let mut offsets = Vec::new();
    let mut blob = Vec::new();
    // The ids of the file's terms.
    let mut local: Vec<u32> = Vec::new();
    let bad = |what: &str| io::Error::other(format!("{}: {what}", spool.display()));
    while let Some(file) = read_varint(&mut r)? {
        let file = u32::try_from(file).map_err(|_| bad("a file id is out of range"))?;
        if file < starts.len() as u32 || file >= files {
            return Err(bad("file ids are not in order"));
        }
        starts.resize(file as usize + 1, n);
        offsets.clear();
        for _ in 0..read_varint(&mut r)?.unwrap_or(0) {
            offsets.push(read_varint(&mut r)?.ok_or_else(|| bad("it ends early"))?);
        }
        blob.resize(read_varint(&mut r)?.unwrap_or(0) as usize, 0);
        r.read_exact(&mut blob)?;
        let mut b = Reader::new(&blob);
        local.clear();
        for _ in 0..b.varint() {
            local.push(Term::id(&mut ids, &mut terms, b.str()));
        }
        if b.overrun || !b.at_end() {
            return Err(bad("a file's terms do not decode"));
        }
        let term = |b: &mut Reader<'_>| {
            let i = b.varint();
            local
                .get(i as usize)
                .copied()
                .ok_or_else(|| bad("a term is not its file's"))
        };
        blob.resize(read_varint(&mut r)?.unwrap_or(0) as usize, 0);
        r.read_exact(&mut blob)?;
        let mut b = Reader::new(&blob);
        for _ in 0..b.varint() {
            let t = &mut terms[term(&mut b)? as usize];
            t.files.push(file as u64).push(b.u8());
        }
        if b.overrun || !b.at_end() {
            return Err(bad("a file's path terms do not decode"));
        }
        blob.resize(read_varint(&mut r)?.unwrap_or(0) as usize, 0);
        r.read_exact(&mut blob)?;
        let mut b = Reader::new(&blob);
        for &off in &offsets {
            let head = DocHead::decode(b.bytes(HEAD_LEN)).ok_or_else(|| bad("it ends early"))?;
            for (s, l) in sums.iter_mut().zip(head.lens) {
                *s += l as u64;
            }
            docs.extend_from_slice(&off.to_le_bytes()[..5]);
            head.encode(&mut docs);
            for _ in 0..b.varint() {
                let id = term(&mut b)?;
                let tf = read_tf(&mut b);
                put_tf(terms[id as usize].docs.push(n as u64), tf);
            }
            n += 1;
        }
        if b.overrun || !b.at_end() {
            return Err(bad("a file's documents do not decode"));
        }
    }
    starts.resize(files as usize + 1, n);
    write_docs(dir, n, &sums, &starts, &docs)?;
    drop(docs);
    let mut sorted: Vec<(Box<[u8]>, u32)> = ids.into_iter().collect();
    sorted.sort_unstable();
    let mut post = BufWriter::with_capacity(1 << 20, File::create(dir.join("codepost.dat"))?);
    post.write_all(&header(b"CPST"))?;
    let mut at = crate::format::HEADER_LEN as u64;
    let mut map = MapWriter::new(BufWriter::new(File::create(dir.join("codeterms.fst"))?));
    for (term, id) in sorted {
        let t = std::mem::take(&mut terms[id as usize]);
        map.insert(&term, at)?;
        at += t.docs.write_to(&mut post)?;
        at += t.files.write_to(&mut post)?;
    }
    map.finish()?;
    post.flush()?;
    std::fs::remove_file(spool)
}

/// Writes `codedocs.dat`: `n` documents, the field length sums, each file's first document and
/// the documents' records.
fn write_docs(
    dir: &Path,
    n: u32,
    sums: &[u64; FIELDS],
    starts: &[u32],
    docs: &[u8],
) -> io::Result<()> {
    let mut w = BufWriter::with_capacity(1 << 20, File::create(dir.join("codedocs.dat"))?);
    w.write_all(&header(b"CDOC"))?;
    w.write_all(&n.to_le_bytes())?;
    for s in sums {
        let avg = if n == 0 { 0.0 } else { *s as f32 / n as f32 };
        w.write_all(&avg.to_le_bytes())?;
    }
    for s in starts {
        w.write_all(&s.to_le_bytes())?;
    }
    w.write_all(docs)?;
    w.flush()
}
