//! Names → postings, built in bounded memory.
//!
//! Files arrive in file-id order, so each name's postings are appended already sorted: no global
//! sort. When the in-memory map outgrows its budget it is written out as a run (names sorted,
//! postings as they are) and cleared; at the end the runs are merged name by name, in one
//! streaming pass, into `names.fst` and `names.dat`. A name's postings from a later run follow
//! those of earlier runs; only the first file delta of each later run is re-encoded.

use std::collections::HashMap;
use std::fs::File;
use std::hash::{BuildHasherDefault, Hasher};
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use super::codec::{put_str, put_varint, Reader};
use super::format::header;

/// A word-at-a-time multiplicative hasher: names are short and trusted, SipHash's DoS
/// resistance buys nothing here and cost a fifth of the build.
#[derive(Default, Clone, Copy)]
pub struct NameHasher(u64);

impl Hasher for NameHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0x517c_c1b7_2722_0a95;
        let mut h = self.0;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            h = (h.rotate_left(5) ^ u64::from_le_bytes(w)).wrapping_mul(K);
        }
        for &b in chunks.remainder() {
            h = (h.rotate_left(5) ^ b as u64).wrapping_mul(K);
        }
        self.0 = h;
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

/// A hash map keyed by names, with [`NameHasher`].
pub type NameMap<K, V> = HashMap<K, V, BuildHasherDefault<NameHasher>>;

#[derive(Default)]
struct NameAcc {
    defs: Vec<u64>,
    postings: Vec<u8>,
    first_file: u32,
    last_file: u32,
    n_occ: u32,
    n_files: u32,
}

/// Accumulates postings and definition pointers per name.
pub struct Accumulator {
    map: NameMap<Box<[u8]>, NameAcc>,
    mem: usize,
    budget: usize,
    runs: Vec<PathBuf>,
    tmp_dir: PathBuf,
}

/// Totals of a finished names file.
#[derive(Clone, Copy, Debug, Default)]
pub struct NamesSummary {
    /// Distinct names.
    pub names: u64,
    /// Occurrences in all postings.
    pub occurrences: u64,
    /// Runs that were spilled to disk and merged.
    pub runs: usize,
}

const ENTRY_OVERHEAD: usize = 128;

impl Accumulator {
    /// An accumulator that spills runs into `tmp_dir` beyond `budget` bytes.
    pub fn new(tmp_dir: &Path, budget: usize) -> Accumulator {
        Accumulator {
            map: NameMap::default(),
            mem: 0,
            budget,
            runs: Vec::new(),
            tmp_dir: tmp_dir.to_path_buf(),
        }
    }

    /// Runs `f` on the entry of `name`, creating it first: one lookup when it exists.
    fn with_entry(&mut self, name: &[u8], f: impl FnOnce(&mut NameAcc) -> usize) {
        if let Some(acc) = self.map.get_mut(name) {
            self.mem += f(acc);
            return;
        }
        let mut acc = NameAcc::default();
        self.mem += f(&mut acc) + name.len() + ENTRY_OVERHEAD;
        self.map.insert(name.into(), acc);
    }

    /// Adds the occurrences of `name` in `file`: `block` holds `count` encoded occurrences.
    /// Files must come in increasing id order.
    pub fn add_block(&mut self, name: &[u8], file: u32, count: u32, block: &[u8]) {
        self.with_entry(name, |acc| Self::add_block_to(acc, file, count, block));
    }

    /// Adds a definition of `name` stored at `offset` in `defs.dat`.
    pub fn add_def(&mut self, name: &[u8], offset: u64) {
        self.with_entry(name, |acc| {
            acc.defs.push(offset);
            8
        });
    }

    /// Appends a file block to a name's postings; returns the bytes allocated.
    fn add_block_to(acc: &mut NameAcc, file: u32, count: u32, block: &[u8]) -> usize {
        let before = acc.postings.capacity();
        let delta = if acc.n_files == 0 {
            acc.first_file = file;
            file
        } else {
            file - acc.last_file
        };
        put_varint(&mut acc.postings, delta as u64);
        put_varint(&mut acc.postings, count as u64);
        acc.postings.extend_from_slice(block);
        acc.last_file = file;
        acc.n_files += 1;
        acc.n_occ += count;
        acc.postings.capacity() - before
    }

    /// Spills the map to a run when it is over budget. Call between files.
    pub fn maybe_spill(&mut self) -> io::Result<()> {
        if self.mem > self.budget {
            self.spill()?;
        }
        Ok(())
    }

    fn spill(&mut self) -> io::Result<()> {
        let path = self.tmp_dir.join(format!("run-{}", self.runs.len()));
        let file = File::create(&path)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
        let mut w = BufWriter::with_capacity(1 << 20, file);
        let mut entries: Vec<(Box<[u8]>, NameAcc)> = self.map.drain().collect();
        entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let mut buf = Vec::new();
        for (name, acc) in entries {
            buf.clear();
            encode_run_entry(&mut buf, &name, &acc);
            w.write_all(&buf)?;
        }
        w.flush()?;
        self.runs.push(path);
        self.mem = 0;
        Ok(())
    }

    /// Merges everything into `fst_path` and `dat_path`.
    pub fn finish(mut self, fst_path: &Path, dat_path: &Path) -> io::Result<NamesSummary> {
        let mut sources: Vec<Source> = Vec::new();
        let spilled = self.runs.len();
        for run in &self.runs {
            let f = File::open(run)?;
            sources.push(Source::Disk(BufReader::with_capacity(1 << 20, f)));
        }
        let mut mem: Vec<(Box<[u8]>, NameAcc)> = self.map.drain().collect();
        mem.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        sources.push(Source::Mem(mem.into_iter()));

        let fst_file = BufWriter::with_capacity(1 << 20, File::create(fst_path)?);
        let mut fst = fst::MapBuilder::new(fst_file).map_err(io::Error::other)?;
        let mut dat = BufWriter::with_capacity(1 << 20, File::create(dat_path)?);
        dat.write_all(&header(b"NAME"))?;
        let mut offset = super::format::HEADER_LEN as u64;

        let mut heads: Vec<Option<RunEntry>> = Vec::with_capacity(sources.len());
        for s in &mut sources {
            heads.push(s.next_entry()?);
        }
        let mut summary = NamesSummary {
            runs: spilled,
            ..Default::default()
        };
        let mut out = Vec::new();
        let mut merged = RunEntry::default();
        loop {
            // The smallest name among the heads; few runs, so a linear scan beats a heap.
            let mut min: Option<&[u8]> = None;
            for e in heads.iter().flatten() {
                if min.is_none_or(|m| e.name.as_slice() < m) {
                    min = Some(&e.name);
                }
            }
            let Some(min) = min.map(|m| m.to_vec()) else {
                break;
            };
            merged.clear();
            for (i, head) in heads.iter_mut().enumerate() {
                if head.as_ref().is_some_and(|e| e.name == min) {
                    if let Some(e) = head.take() {
                        merged.append(e);
                    }
                    *head = sources[i].next_entry()?;
                }
            }
            out.clear();
            put_varint(&mut out, merged.defs.len() as u64);
            let mut prev = 0u64;
            for d in &merged.defs {
                put_varint(&mut out, d - prev);
                prev = *d;
            }
            put_varint(&mut out, merged.n_occ as u64);
            put_varint(&mut out, merged.n_files as u64);
            put_varint(&mut out, merged.postings.len() as u64);
            out.extend_from_slice(&merged.postings);
            fst.insert(&min, offset).map_err(io::Error::other)?;
            dat.write_all(&out)?;
            offset += out.len() as u64;
            summary.names += 1;
            summary.occurrences += merged.n_occ as u64;
        }
        fst.finish().map_err(io::Error::other)?;
        dat.flush()?;
        for run in &self.runs {
            let _ = std::fs::remove_file(run);
        }
        Ok(summary)
    }
}

fn encode_run_entry(buf: &mut Vec<u8>, name: &[u8], acc: &NameAcc) {
    put_str(buf, name);
    put_varint(buf, acc.defs.len() as u64);
    for d in &acc.defs {
        put_varint(buf, *d);
    }
    put_varint(buf, acc.n_occ as u64);
    put_varint(buf, acc.n_files as u64);
    put_varint(buf, acc.first_file as u64);
    put_varint(buf, acc.last_file as u64);
    put_varint(buf, acc.postings.len() as u64);
    buf.extend_from_slice(&acc.postings);
}

#[derive(Default)]
struct RunEntry {
    name: Vec<u8>,
    defs: Vec<u64>,
    postings: Vec<u8>,
    first_file: u32,
    last_file: u32,
    n_occ: u32,
    n_files: u32,
}

impl RunEntry {
    fn clear(&mut self) {
        self.defs.clear();
        self.postings.clear();
        self.n_occ = 0;
        self.n_files = 0;
    }

    /// Appends a later run's entry for the same name.
    fn append(&mut self, e: RunEntry) {
        self.defs.extend_from_slice(&e.defs);
        if e.n_files > 0 {
            if self.n_files == 0 {
                self.postings.extend_from_slice(&e.postings);
                self.first_file = e.first_file;
            } else {
                // The run's first block holds an absolute file id; make it a delta.
                let mut r = Reader::new(&e.postings);
                let first = r.varint();
                put_varint(&mut self.postings, first - self.last_file as u64);
                self.postings.extend_from_slice(&e.postings[r.pos()..]);
            }
            self.last_file = e.last_file;
            self.n_files += e.n_files;
            self.n_occ += e.n_occ;
        }
    }
}

enum Source {
    Disk(BufReader<File>),
    Mem(std::vec::IntoIter<(Box<[u8]>, NameAcc)>),
}

fn read_varint(r: &mut impl Read) -> io::Result<Option<u64>> {
    let mut v = 0u64;
    let mut shift = 0;
    let mut b = [0u8; 1];
    loop {
        if r.read(&mut b)? == 0 {
            return if shift == 0 {
                Ok(None)
            } else {
                Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "truncated run",
                ))
            };
        }
        v |= ((b[0] & 0x7f) as u64) << shift.min(63);
        if b[0] < 0x80 {
            return Ok(Some(v));
        }
        shift += 7;
    }
}

fn need(r: &mut impl Read) -> io::Result<u64> {
    read_varint(r)?.ok_or_else(|| io::Error::new(io::ErrorKind::UnexpectedEof, "truncated run"))
}

impl Source {
    fn next_entry(&mut self) -> io::Result<Option<RunEntry>> {
        match self {
            Source::Mem(it) => Ok(it.next().map(|(name, acc)| RunEntry {
                name: name.into_vec(),
                defs: acc.defs,
                postings: acc.postings,
                first_file: acc.first_file,
                last_file: acc.last_file,
                n_occ: acc.n_occ,
                n_files: acc.n_files,
            })),
            Source::Disk(r) => {
                let Some(len) = read_varint(r)? else {
                    return Ok(None);
                };
                let mut name = vec![0u8; len as usize];
                r.read_exact(&mut name)?;
                let n_defs = need(r)?;
                let defs = (0..n_defs).map(|_| need(r)).collect::<io::Result<_>>()?;
                let n_occ = need(r)? as u32;
                let n_files = need(r)? as u32;
                let first_file = need(r)? as u32;
                let last_file = need(r)? as u32;
                let plen = need(r)? as usize;
                let mut postings = vec![0u8; plen];
                r.read_exact(&mut postings)?;
                Ok(Some(RunEntry {
                    name,
                    defs,
                    postings,
                    first_file,
                    last_file,
                    n_occ,
                    n_files,
                }))
            }
        }
    }
}
