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
use super::format::{header, Def};
use super::stats::{self, NameStats};
use knav_ctags::Kind;

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
    prefix: String,
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

/// Bytes a new name costs beyond its postings: the boxed name, the table slot and the
/// first allocations of its vectors, as measured with glibc malloc.
const ENTRY_OVERHEAD: usize = 224;

impl Accumulator {
    /// An accumulator that spills runs named `prefix-N` into `tmp_dir` beyond `budget` bytes.
    pub fn new(tmp_dir: &Path, prefix: &str, budget: usize) -> Accumulator {
        Accumulator {
            prefix: prefix.to_string(),
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

    /// Writes the map as a run and clears it. (A background writer would overlap this with
    /// accumulating, but hold two budgets of postings at once: over the memory target.)
    fn spill(&mut self) -> io::Result<()> {
        let path = self
            .tmp_dir
            .join(format!("{}-{}", self.prefix, self.runs.len()));
        let entries: Vec<(Box<[u8]>, NameAcc)> = self.map.drain().collect();
        write_run(&path, entries)?;
        self.runs.push(path);
        self.mem = 0;
        Ok(())
    }

    /// Merges everything into `fst_path` and `dat_path`. The FST is built on its own thread
    /// while this one merges runs and writes `names.dat`. `defs_dat` is the finished
    /// `defs.dat`: a hot name's [`NameStats`] need its definitions' lines.
    pub fn finish(
        mut self,
        fst_path: &Path,
        dat_path: &Path,
        defs_dat: &[u8],
    ) -> io::Result<NamesSummary> {
        let spilled = self.runs.len();
        if !self.map.is_empty() || self.runs.is_empty() {
            self.spill()?;
        }
        let mut heads: Vec<RunReader> = Vec::with_capacity(self.runs.len());
        for run in &self.runs {
            let f = File::open(run)?;
            let mut r = RunReader {
                file: BufReader::with_capacity(1 << 20, f),
                buf: Vec::new(),
                entry: None,
            };
            r.advance()?;
            heads.push(r);
        }

        let fst_file = BufWriter::with_capacity(1 << 20, File::create(fst_path)?);
        let (tx, rx) = std::sync::mpsc::sync_channel::<FstBatch>(4);
        let fst_thread = std::thread::spawn(move || -> io::Result<()> {
            let mut fst = fst::MapBuilder::new(fst_file).map_err(io::Error::other)?;
            for batch in rx {
                let mut at = 0usize;
                for &(len, value) in &batch.keys {
                    let key = &batch.bytes[at..at + len as usize];
                    fst.insert(key, value).map_err(io::Error::other)?;
                    at += len as usize;
                }
            }
            fst.finish().map_err(io::Error::other)
        });

        let mut dat = BufWriter::with_capacity(1 << 20, File::create(dat_path)?);
        dat.write_all(&header(b"NAME"))?;
        let mut offset = super::format::HEADER_LEN as u64;
        let mut summary = NamesSummary {
            runs: spilled,
            ..Default::default()
        };
        let mut batch = FstBatch::default();
        let mut out = Vec::new();
        let mut defs: Vec<u64> = Vec::new();
        let mut postings: Vec<u8> = Vec::new();
        let mut same: Vec<usize> = Vec::with_capacity(heads.len());
        loop {
            // The heads holding the smallest name; few runs, so a linear scan beats a heap.
            same.clear();
            let mut min: Option<&[u8]> = None;
            for (i, h) in heads.iter().enumerate() {
                let Some(e) = &h.entry else { continue };
                let name = &h.buf[e.name.clone()];
                match min.map(|m| name.cmp(m)) {
                    None | Some(std::cmp::Ordering::Less) => {
                        min = Some(name);
                        same.clear();
                        same.push(i);
                    }
                    Some(std::cmp::Ordering::Equal) => same.push(i),
                    Some(std::cmp::Ordering::Greater) => {}
                }
            }
            let Some(&first) = same.first() else { break };
            let name_range = heads[first].entry.as_ref().map_or(0..0, |e| e.name.clone());
            batch.push(&heads[first].buf[name_range], offset);
            defs.clear();
            postings.clear();
            let (mut n_occ, mut n_files, mut last_file) = (0u64, 0u64, 0u32);
            for &i in &same {
                let h = &heads[i];
                let Some(e) = &h.entry else { continue };
                let mut r = Reader::new(&h.buf[e.defs.clone()]);
                for _ in 0..e.n_defs {
                    defs.push(r.varint());
                }
                let block = &h.buf[e.postings.clone()];
                if e.n_files > 0 {
                    if n_files == 0 {
                        postings.extend_from_slice(block);
                    } else {
                        // The run's first block holds an absolute file id; make it a delta.
                        let mut r = Reader::new(block);
                        let first = r.varint();
                        put_varint(&mut postings, first - last_file as u64);
                        postings.extend_from_slice(&block[r.pos()..]);
                    }
                    last_file = e.last_file;
                    n_files += e.n_files;
                    n_occ += e.n_occ;
                }
            }
            out.clear();
            put_varint(&mut out, defs.len() as u64);
            let mut prev = 0u64;
            for d in &defs {
                put_varint(&mut out, d - prev);
                prev = *d;
            }
            put_varint(&mut out, n_occ);
            put_varint(&mut out, n_files);
            put_varint(&mut out, postings.len() as u64);
            out.extend_from_slice(&postings);
            if n_occ >= stats::MIN_OCCURRENCES {
                let mut lines: Vec<(u32, u32)> = defs
                    .iter()
                    .map(|&off| {
                        let body = defs_dat.get(off as usize..).unwrap_or(&[]);
                        Def::decode(&mut Reader::new(body))
                    })
                    .filter(|d| d.kind != Kind::Entry)
                    .map(|d| (d.file, d.line))
                    .collect();
                lines.sort_unstable();
                NameStats::compute(&postings, &lines).encode(&mut out);
            }
            dat.write_all(&out)?;
            offset += out.len() as u64;
            summary.names += 1;
            summary.occurrences += n_occ;
            for &i in &same {
                heads[i].advance()?;
            }
            if batch.keys.len() >= 4096 && tx.send(std::mem::take(&mut batch)).is_err() {
                break;
            }
        }
        let _ = tx.send(batch);
        drop(tx);
        dat.flush()?;
        fst_thread
            .join()
            .map_err(|_| io::Error::other("the FST builder panicked"))??;
        for run in &self.runs {
            let _ = std::fs::remove_file(run);
        }
        Ok(summary)
    }
}

/// Names and FST values on their way to the FST builder thread.
#[derive(Default)]
struct FstBatch {
    bytes: Vec<u8>,
    keys: Vec<(u32, u64)>,
}

impl FstBatch {
    fn push(&mut self, key: &[u8], value: u64) {
        self.bytes.extend_from_slice(key);
        self.keys.push((key.len() as u32, value));
    }
}

/// Where the parts of the current run entry are in [`RunReader::buf`].
struct RunEntry {
    name: std::ops::Range<usize>,
    n_defs: u64,
    defs: std::ops::Range<usize>,
    n_occ: u64,
    n_files: u64,
    last_file: u32,
    postings: std::ops::Range<usize>,
}

/// Reads a run one entry at a time into a reused buffer.
struct RunReader {
    file: BufReader<File>,
    buf: Vec<u8>,
    entry: Option<RunEntry>,
}

impl RunReader {
    fn advance(&mut self) -> io::Result<()> {
        let Some(len) = read_varint(&mut self.file)? else {
            self.entry = None;
            return Ok(());
        };
        self.buf.resize(len as usize, 0);
        self.file.read_exact(&mut self.buf)?;
        let mut r = Reader::new(&self.buf);
        let name_len = r.varint() as usize;
        let name = r.pos()..r.pos() + name_len;
        r.bytes(name_len);
        let n_defs = r.varint();
        let defs_start = r.pos();
        for _ in 0..n_defs {
            r.varint();
        }
        let defs = defs_start..r.pos();
        let n_occ = r.varint();
        let n_files = r.varint();
        let _first_file = r.varint();
        let last_file = r.varint() as u32;
        let plen = r.varint() as usize;
        let postings = r.pos()..r.pos() + plen;
        r.bytes(plen);
        if r.overrun {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "corrupt run entry",
            ));
        }
        self.entry = Some(RunEntry {
            name,
            n_defs,
            defs,
            n_occ,
            n_files,
            last_file,
            postings,
        });
        Ok(())
    }
}

/// Sorts `entries` by name and writes them to `path` as a run.
fn write_run(path: &Path, entries: Vec<(Box<[u8]>, NameAcc)>) -> io::Result<()> {
    let file = File::create(path)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
    let mut w = BufWriter::with_capacity(1 << 20, file);
    // Sorting (first 8 bytes as a number, index) pairs moves 16 bytes instead of whole entries
    // and settles most comparisons without a memcmp. Names hold no NUL, so zero padding keeps
    // the byte order.
    let prefix = |n: &[u8]| {
        let mut b = [0u8; 8];
        let k = n.len().min(8);
        b[..k].copy_from_slice(&n[..k]);
        u64::from_be_bytes(b)
    };
    let mut order: Vec<(u64, u32)> = entries
        .iter()
        .enumerate()
        .map(|(i, (n, _))| (prefix(n), i as u32))
        .collect();
    order.sort_unstable_by(|a, b| {
        a.0.cmp(&b.0)
            .then_with(|| entries[a.1 as usize].0.cmp(&entries[b.1 as usize].0))
    });
    let mut buf = Vec::new();
    let mut len = Vec::new();
    for (_, i) in order {
        let (name, acc) = &entries[i as usize];
        buf.clear();
        len.clear();
        encode_run_entry(&mut buf, name, acc);
        put_varint(&mut len, buf.len() as u64);
        w.write_all(&len)?;
        w.write_all(&buf)?;
    }
    w.flush()
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
