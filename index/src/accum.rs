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

use super::codec::{put_str, put_varint, read_varint, Reader};
use super::format::{header, Def, NameEntry};
use super::postings::Postings;
use super::stats::NameStats;
use crate::prefetch::prefetch;
use knav_c::scan::Role;
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

    /// Finished by folding the high half in, multiplying and folding again: a product's low
    /// bits depend only on the low bits of what was multiplied (for an 8-byte name, its first
    /// bytes), and tables index by the low bits: names sharing a prefix (`f1000000`…
    /// `f1999999`) all landed in one run of slots, and a 60 MB file of them took 280 s to
    /// group.
    #[inline]
    fn finish(&self) -> u64 {
        const K: u64 = 0x517c_c1b7_2722_0a95;
        let h = (self.0 ^ (self.0 >> 32)).wrapping_mul(K);
        h ^ (h >> 32)
    }
}

/// A hash map keyed by names, with [`NameHasher`].
pub type NameMap<K, V> = HashMap<K, V, BuildHasherDefault<NameHasher>>;

/// The [`NameHasher`] hash of a name's bytes.
pub(super) fn name_hash(name: &[u8]) -> u64 {
    let mut h = NameHasher::default();
    h.write(name);
    h.finish()
}

/// One name of the current run. Its postings are a chain of chunks in [`Accumulator::pool`].
#[derive(Clone, Copy)]
struct Entry {
    /// Where the name's bytes are in [`Accumulator::names`].
    name: u32,
    name_len: u32,
    hash: u32,
    /// The first postings chunk.
    head: u32,
    /// Where the next postings byte goes, and the end of the chunk it is in.
    tail: u32,
    end: u32,
    level: u8,
    /// Postings bytes.
    len: u32,
    first_file: u32,
    last_file: u32,
    n_occ: u32,
    n_files: u32,
    n_defs: u32,
}

/// Data bytes of a postings chunk by level; a chunk is followed by the 4-byte position of the
/// next. A name's first chunk is small (most names occur in one or two files), later ones grow.
const CHUNK_SIZES: [u32; 10] = [8, 24, 64, 256, 1024, 4096, 16384, 65536, 262_144, 1 << 20];

/// Accumulates postings and definition pointers per name.
///
/// A run's names, entries, postings and table live in a few flat buffers that are cleared, not
/// freed, when the run is spilled: no allocation per name, and none at all once the buffers
/// have grown to the budget.
pub struct Accumulator {
    /// Names of the run, back to back.
    names: Vec<u8>,
    entries: Vec<Entry>,
    /// Open-addressing table of entry index + 1 (0: empty), a power of two in size.
    slots: Vec<u32>,
    /// Postings chunks.
    pool: Vec<u8>,
    /// (entry, offset in `defs.dat`) in arrival order.
    defs: Vec<(u32, u64)>,
    /// [`Accumulator::add_blocks`]'s hashes, kept for the next file.
    hashes: Vec<u64>,
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

impl Accumulator {
    /// An accumulator that spills runs named `prefix-N` into `tmp_dir` beyond `budget` bytes.
    pub fn new(tmp_dir: &Path, prefix: &str, budget: usize) -> Accumulator {
        Accumulator {
            names: Vec::new(),
            entries: Vec::new(),
            slots: vec![0; 1024],
            pool: Vec::new(),
            defs: Vec::new(),
            hashes: Vec::new(),
            budget,
            runs: Vec::new(),
            tmp_dir: tmp_dir.to_path_buf(),
            prefix: prefix.to_string(),
        }
    }

    /// Bytes the run holds.
    fn mem(&self) -> usize {
        self.names.len()
            + self.entries.len() * std::mem::size_of::<Entry>()
            + self.slots.len() * 4
            + self.pool.len()
            + self.defs.len() * 16
    }

    /// The entry of `name`, created when new.
    fn entry(&mut self, name: &[u8]) -> usize {
        self.entry_hashed(name, name_hash(name))
    }

    /// The entry of `name`, whose [`name_hash`] is `hash`, created when new.
    fn entry_hashed(&mut self, name: &[u8], hash: u64) -> usize {
        let short = (hash >> 32) as u32;
        let mask = self.slots.len() - 1;
        let mut at = hash as usize & mask;
        loop {
            match self.slots[at] {
                0 => break,
                slot => {
                    let e = &self.entries[slot as usize - 1];
                    if e.hash == short
                        && e.name_len as usize == name.len()
                        && &self.names[e.name as usize..e.name as usize + name.len()] == name
                    {
                        return slot as usize - 1;
                    }
                }
            }
            at = (at + 1) & mask;
        }
        let index = self.entries.len();
        let head = self.new_chunk(0);
        self.entries.push(Entry {
            name: self.names.len() as u32,
            name_len: name.len() as u32,
            hash: short,
            head,
            tail: head,
            end: head + CHUNK_SIZES[0],
            level: 0,
            len: 0,
            first_file: 0,
            last_file: 0,
            n_occ: 0,
            n_files: 0,
            n_defs: 0,
        });
        self.names.extend_from_slice(name);
        self.slots[at] = index as u32 + 1;
        if self.entries.len() * 2 > self.slots.len() {
            self.grow_table();
        }
        index
    }

    /// Doubles the table.
    fn grow_table(&mut self) {
        let size = self.slots.len() * 2;
        let mut slots = vec![0u32; size];
        for (i, e) in self.entries.iter().enumerate() {
            let name = &self.names[e.name as usize..(e.name + e.name_len) as usize];
            let mut at = name_hash(name) as usize & (size - 1);
            while slots[at] != 0 {
                at = (at + 1) & (size - 1);
            }
            slots[at] = i as u32 + 1;
        }
        self.slots = slots;
    }

    /// Appends a chunk of `level` to the pool; returns where its data starts.
    fn new_chunk(&mut self, level: u8) -> u32 {
        let start = self.pool.len();
        self.pool
            .resize(start + CHUNK_SIZES[level as usize] as usize + 4, 0);
        start as u32
    }

    /// Appends `data` to the postings of entry `i`.
    fn append(&mut self, i: usize, mut data: &[u8]) {
        self.entries[i].len += data.len() as u32;
        while !data.is_empty() {
            let mut e = self.entries[i];
            if e.tail == e.end {
                let level = (e.level + 1).min(CHUNK_SIZES.len() as u8 - 1);
                let next = self.new_chunk(level);
                self.pool[e.end as usize..e.end as usize + 4].copy_from_slice(&next.to_le_bytes());
                e.tail = next;
                e.end = next + CHUNK_SIZES[level as usize];
                e.level = level;
            }
            let n = data.len().min((e.end - e.tail) as usize);
            self.pool[e.tail as usize..e.tail as usize + n].copy_from_slice(&data[..n]);
            e.tail += n as u32;
            data = &data[n..];
            self.entries[i] = e;
        }
    }

    /// Writes the postings of `e` to `out`, chunk by chunk.
    fn write_postings(&self, e: &Entry, out: &mut impl Write) -> io::Result<()> {
        let (mut at, mut level, mut left) = (e.head as usize, 0usize, e.len as usize);
        loop {
            let size = CHUNK_SIZES[level] as usize;
            let n = left.min(size);
            out.write_all(&self.pool[at..at + n])?;
            left -= n;
            if left == 0 {
                return Ok(());
            }
            let mut next = [0u8; 4];
            next.copy_from_slice(&self.pool[at + size..at + size + 4]);
            at = u32::from_le_bytes(next) as usize;
            level = (level + 1).min(CHUNK_SIZES.len() - 1);
        }
    }

    /// Adds the occurrences of names in `file`: `blocks` holds each name, its number of
    /// occurrences and their encoding, one block a name. Files must come in increasing id
    /// order. A run's table, entries, names and postings are far larger than the caches, and a
    /// lookup missed them one after the other; here the memory each name will need is asked
    /// for a few names ahead (its slot, then its entry, then the entry's name and postings
    /// tail), so the misses overlap.
    /// `blocks` is gone through twice (the caller makes no vector of them).
    pub fn add_blocks<'a>(
        &mut self,
        file: u32,
        blocks: impl Iterator<Item = (&'a [u8], u32, &'a [u8])> + Clone,
    ) {
        /// Names between asking for a slot and using it; the entry is asked for halfway.
        const AHEAD: usize = 8;
        let mut hashes = std::mem::take(&mut self.hashes);
        hashes.clear();
        hashes.extend(blocks.clone().map(|b| name_hash(b.0)));
        for (i, (name, count, block)) in blocks.enumerate() {
            let mask = self.slots.len() - 1;
            if let Some(&h) = hashes.get(i + AHEAD) {
                prefetch(&self.slots[h as usize & mask]);
            }
            if let Some(&h) = hashes.get(i + AHEAD / 2) {
                if let Some(slot) = (self.slots[h as usize & mask] as usize).checked_sub(1) {
                    prefetch(&self.entries[slot]);
                }
            }
            if let Some(&h) = hashes.get(i + AHEAD / 4) {
                if let Some(slot) = (self.slots[h as usize & mask] as usize).checked_sub(1) {
                    let e = &self.entries[slot];
                    if let Some(b) = self.names.get(e.name as usize) {
                        prefetch(b);
                    }
                    if let Some(b) = self.pool.get(e.tail as usize) {
                        prefetch(b);
                    }
                }
            }
            self.add_block_hashed(name, hashes[i], file, count, block);
        }
        self.hashes = hashes;
    }

    fn add_block_hashed(&mut self, name: &[u8], hash: u64, file: u32, count: u32, block: &[u8]) {
        let i = self.entry_hashed(name, hash);
        let e = &mut self.entries[i];
        let delta = if e.n_files == 0 {
            e.first_file = file;
            file
        } else {
            file - e.last_file
        };
        e.last_file = file;
        e.n_files += 1;
        e.n_occ += count;
        let mut buf = [0u8; 20];
        let n = super::postings::put_block_head(&mut buf, delta, count);
        self.append(i, &buf[..n]);
        self.append(i, block);
    }

    /// Adds a definition of `name` stored at `offset` in `defs.dat`.
    pub fn add_def(&mut self, name: &[u8], offset: u64) {
        let i = self.entry(name);
        self.entries[i].n_defs += 1;
        self.defs.push((i as u32, offset));
    }

    /// Spills the run when it is over budget. Call between files.
    pub fn maybe_spill(&mut self) -> io::Result<()> {
        if self.mem() > self.budget {
            self.spill()?;
        }
        Ok(())
    }

    /// Writes the run, names sorted, and clears it (keeping the buffers). (A background writer
    /// would overlap this with accumulating, but hold two budgets of postings at once: over
    /// the memory target.)
    fn spill(&mut self) -> io::Result<()> {
        let path = self
            .tmp_dir
            .join(format!("{}-{}", self.prefix, self.runs.len()));
        self.write_run(&path)?;
        self.runs.push(path);
        self.names.clear();
        self.entries.clear();
        self.slots.fill(0);
        self.pool.clear();
        self.defs.clear();
        Ok(())
    }

    /// Writes the run to `path`, names sorted.
    fn write_run(&self, path: &Path) -> io::Result<()> {
        let file = File::create(path)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
        let mut w = BufWriter::with_capacity(1 << 20, file);
        let name = |e: &Entry| &self.names[e.name as usize..(e.name + e.name_len) as usize];
        // Sorting (first 8 bytes as a number, index) pairs settles most comparisons without a
        // memcmp. Names hold no NUL, so zero padding keeps the byte order.
        let prefix = |n: &[u8]| {
            let mut b = [0u8; 8];
            let k = n.len().min(8);
            b[..k].copy_from_slice(&n[..k]);
            u64::from_be_bytes(b)
        };
        let mut order: Vec<(u64, u32)> = self
            .entries
            .iter()
            .enumerate()
            .map(|(i, e)| (prefix(name(e)), i as u32))
            .collect();
        radix_sort(&mut order);
        // Names sharing their first 8 bytes are next to each other: order them by the rest.
        for same in order.chunk_by_mut(|a, b| a.0 == b.0) {
            if same.len() > 1 {
                same.sort_unstable_by(|a, b| {
                    name(&self.entries[a.1 as usize]).cmp(name(&self.entries[b.1 as usize]))
                });
            }
        }
        // Each entry's definitions, in arrival order: a counting sort by entry.
        let mut def_start: Vec<u32> = Vec::with_capacity(self.entries.len());
        let mut total = 0u32;
        for e in &self.entries {
            def_start.push(total);
            total += e.n_defs;
        }
        let mut fill = def_start.clone();
        let mut defs = vec![0u64; self.defs.len()];
        for &(i, off) in &self.defs {
            defs[fill[i as usize] as usize] = off;
            fill[i as usize] += 1;
        }
        /// Entries between asking for an entry and using it; its name and postings are asked
        /// for halfway (the order is random in the pool).
        const AHEAD: usize = 8;
        let mut buf = Vec::new();
        let mut len = Vec::new();
        for (k, &(_, i)) in order.iter().enumerate() {
            if let Some(&(_, ahead)) = order.get(k + AHEAD) {
                prefetch(&self.entries[ahead as usize]);
            }
            if let Some(&(_, ahead)) = order.get(k + AHEAD / 2) {
                let e = &self.entries[ahead as usize];
                prefetch(self.names.as_ptr().wrapping_add(e.name as usize));
                prefetch(self.pool.as_ptr().wrapping_add(e.head as usize));
            }
            let e = &self.entries[i as usize];
            buf.clear();
            len.clear();
            put_str(&mut buf, name(e));
            put_varint(&mut buf, e.n_defs as u64);
            let start = def_start[i as usize] as usize;
            for d in &defs[start..start + e.n_defs as usize] {
                put_varint(&mut buf, *d);
            }
            put_varint(&mut buf, e.n_occ as u64);
            put_varint(&mut buf, e.n_files as u64);
            put_varint(&mut buf, e.first_file as u64);
            put_varint(&mut buf, e.last_file as u64);
            put_varint(&mut buf, e.len as u64);
            put_varint(&mut len, (buf.len() + e.len as usize) as u64);
            w.write_all(&len)?;
            w.write_all(&buf)?;
            self.write_postings(e, &mut w)?;
        }
        w.flush()
    }

    /// Merges everything into `fst_path` and `dat_path`. The FST is built on its own thread
    /// while this one merges runs and writes `names.dat`. `defs_dat` is the finished
    /// `defs.dat`: a hot name's [`NameStats`] need its definitions' lines. `named` is shown
    /// each name in order ([`Named`]).
    pub fn finish(
        mut self,
        fst_path: &Path,
        dat_path: &Path,
        defs_dat: &[u8],
        named: &mut Named<'_>,
    ) -> io::Result<NamesSummary> {
        let spilled = self.runs.len();
        if !self.entries.is_empty() || self.runs.is_empty() {
            self.spill()?;
        }
        let mut heads = self.open_runs()?;
        let (tx, fst_thread) = spawn_fst_builder(fst_path)?;

        let mut dat = BufWriter::with_capacity(1 << 20, File::create(dat_path)?);
        dat.write_all(&header(b"NAME"))?;
        let mut offset = super::format::HEADER_LEN as u64;
        let mut summary = NamesSummary {
            runs: spilled,
            ..Default::default()
        };
        let mut batch = FstBatch::default();
        let mut m = Merge {
            same: Vec::with_capacity(heads.len()),
            ..Default::default()
        };
        loop {
            smallest(&heads, &mut m.same);
            let Some(&first) = m.same.first() else { break };
            let name_range = heads[first].entry.as_ref().map_or(0..0, |e| e.name.clone());
            batch.push(&heads[first].buf[name_range.clone()], offset);
            let (n_occ, macro_file) = m.merge_name(&heads, defs_dat);
            named(
                &heads[first].buf[name_range.clone()],
                offset,
                &m.defs,
                macro_file,
            )?;
            dat.write_all(&m.out)?;
            offset += m.out.len() as u64;
            summary.names += 1;
            summary.occurrences += n_occ;
            for &i in &m.same {
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

    /// Opens the spilled runs, each at its first entry.
    fn open_runs(&self) -> io::Result<Vec<RunReader>> {
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
        Ok(heads)
    }
}

/// The FST builder of [`Accumulator::finish`]: a thread writing `fst_path` from the batches sent
/// to it, in order.
type FstBuilder = (
    std::sync::mpsc::SyncSender<FstBatch>,
    std::thread::JoinHandle<io::Result<()>>,
);

/// Creates `fst_path` and starts the thread that builds the FST into it from the batches sent.
fn spawn_fst_builder(fst_path: &Path) -> io::Result<FstBuilder> {
    let fst_file = BufWriter::with_capacity(1 << 20, File::create(fst_path)?);
    let (tx, rx) = std::sync::mpsc::sync_channel::<FstBatch>(4);
    let fst_thread = std::thread::spawn(move || -> io::Result<()> {
        let mut fst = super::fstbuild::MapWriter::new(fst_file);
        for batch in rx {
            let mut at = 0usize;
            for &(len, value) in &batch.keys {
                let key = &batch.bytes[at..at + len as usize];
                fst.insert(key, value)?;
                at += len as usize;
            }
        }
        fst.finish().map(drop)
    });
    Ok((tx, fst_thread))
}

/// Sets `same` to the heads holding the smallest name (empty when all runs are done); few runs,
/// so a linear scan beats a heap.
#[inline]
fn smallest(heads: &[RunReader], same: &mut Vec<usize>) {
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
}

/// The buffers the merge of [`Accumulator::finish`] reuses from name to name.
#[derive(Default)]
struct Merge {
    /// The heads holding the current name ([`smallest`]).
    same: Vec<usize>,
    /// The name's definitions, as offsets in `defs.dat`.
    defs: Vec<u64>,
    /// The name's postings when more than one run holds it.
    merged: Vec<u8>,
    /// The name's `names.dat` entry.
    out: Vec<u8>,
}

impl Merge {
    /// Merges the name the heads in `same` hold: its definitions into `defs` and its
    /// `names.dat` entry into `out`. Returns its occurrences and the file of its first
    /// `#define`.
    #[inline]
    fn merge_name(&mut self, heads: &[RunReader], defs_dat: &[u8]) -> (u64, Option<u32>) {
        let (n_occ, n_files) = self.gather(heads);
        let Merge {
            same,
            defs,
            merged,
            out,
        } = self;
        let first = same[0];
        // A name in one run (most) has its postings there already: no copy.
        let postings = match (&same[..], &heads[first].entry) {
            ([_], Some(e)) => &heads[first].buf[e.postings.clone()],
            _ => &merged[..],
        };
        out.clear();
        let stats = NameEntry::encode(out, defs, n_occ, n_files, postings, || {
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
            NameStats::compute(postings, &lines)
        });
        let macro_file = match &stats {
            Some(st) => st.macro_defs.first().map(|&(file, _)| file),
            None => Postings::new(postings)
                .find(|p| p.role == Role::MacroDef)
                .map(|p| p.file),
        };
        (n_occ, macro_file)
    }

    /// Collects the definitions of the name the heads in `same` hold into `defs` and, when more
    /// than one run holds it, its postings into `merged`, in run order. Returns its occurrences
    /// and files.
    #[inline]
    fn gather(&mut self, heads: &[RunReader]) -> (u64, u64) {
        self.defs.clear();
        self.merged.clear();
        let (mut n_occ, mut n_files, mut last_file) = (0u64, 0u64, 0u32);
        for &i in &self.same {
            let h = &heads[i];
            let Some(e) = &h.entry else { continue };
            let mut r = Reader::new(&h.buf[e.defs.clone()]);
            for _ in 0..e.n_defs {
                self.defs.push(r.varint());
            }
            let block = &h.buf[e.postings.clone()];
            if e.n_files > 0 {
                if self.same.len() == 1 {
                    // Taken from the run as it is, by merge_name.
                } else if n_files == 0 {
                    self.merged.extend_from_slice(block);
                } else {
                    // The run's first block holds an absolute file id; make it a delta.
                    let mut r = Reader::new(block);
                    let first = r.varint();
                    put_varint(&mut self.merged, first - last_file as u64);
                    self.merged.extend_from_slice(&block[r.pos()..]);
                }
                last_file = e.last_file;
                n_files += e.n_files;
                n_occ += e.n_occ;
            }
        }
        (n_occ, n_files)
    }
}

/// Sorts `v` by its keys (the `u64`s), stably: a byte at a time from the lowest, skipping a byte
/// all keys share (quicksort's comparisons of names with the same first 8 bytes missed the
/// cache).
fn radix_sort(v: &mut Vec<(u64, u32)>) {
    let mut other = vec![(0u64, 0u32); v.len()];
    for shift in (0..64).step_by(8) {
        let mut counts = [0usize; 256];
        for &(key, _) in v.iter() {
            counts[(key >> shift) as usize & 0xff] += 1;
        }
        if counts.contains(&v.len()) {
            continue;
        }
        let mut at = 0;
        for c in counts.iter_mut() {
            (*c, at) = (at, at + *c);
        }
        for &item in v.iter() {
            let digit = (item.0 >> shift) as usize & 0xff;
            other[counts[digit]] = item;
            counts[digit] += 1;
        }
        std::mem::swap(v, &mut other);
    }
}

/// What [`Accumulator::finish`] shows each name: its bytes, the offset of its entry in
/// `names.dat` (its FST value), its definitions' offsets in `defs.dat` and the file of its
/// first `#define`.
pub type Named<'a> = dyn FnMut(&[u8], u64, &[u64], Option<u32>) -> io::Result<()> + 'a;

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_share_a_prefix_spread_over_the_low_bits_a_table_indexes_by() {
        // A 60 MB generated file of `f10000000`-style names once took 280 s to group.
        let low: std::collections::HashSet<u64> = (0..65536u64)
            .map(|n| name_hash(format!("f{}", 10_000_000 + n).as_bytes()) & 0xffff)
            .collect();
        assert!(low.len() > 30_000, "{} distinct", low.len());
    }

    /// A name's expected definitions and (file, count, block) postings.
    type Want = (Vec<u64>, Vec<(u32, u32, Vec<u8>)>);

    /// What `names.dat` should hold for a name: its definitions and postings, as the merge
    /// writes them.
    fn expected(defs: &[u64], files: &[(u32, u32, Vec<u8>)]) -> Vec<u8> {
        let mut postings = Vec::new();
        let mut last = 0;
        for (i, (file, count, block)) in files.iter().enumerate() {
            put_varint(
                &mut postings,
                (if i == 0 { *file } else { file - last }) as u64,
            );
            put_varint(&mut postings, *count as u64);
            postings.extend_from_slice(block);
            last = *file;
        }
        let mut out = Vec::new();
        put_varint(&mut out, defs.len() as u64);
        let mut prev = 0;
        for d in defs {
            put_varint(&mut out, d - prev);
            prev = *d;
        }
        let occ: u32 = files.iter().map(|f| f.1).sum();
        put_varint(&mut out, occ as u64);
        put_varint(&mut out, files.len() as u64);
        put_varint(&mut out, postings.len() as u64);
        out.extend_from_slice(&postings);
        out
    }

    #[test]
    fn postings_across_chunks_and_spilled_runs_come_back_in_file_order() {
        let dir = std::env::temp_dir().join(format!("knav-accum-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // A small budget: a run every few hundred files.
        let mut acc = Accumulator::new(&dir, "run", 64 << 10);
        let names: Vec<String> = (0..300)
            .map(|i| format!("name_{:03}", i * 7 % 300))
            .collect();
        let mut want: Vec<Want> = vec![Default::default(); 300];
        let mut def_off = 100u64;
        for file in 0..2000u32 {
            for (k, name) in names.iter().enumerate() {
                // Name k occurs in every (k+1)-th file, with blocks of up to 300 bytes: long
                // chains of growing chunks for the common names, one small chunk for the rare.
                if file % (k as u32 + 1) != 0 {
                    continue;
                }
                let len = (file as usize * 31 + k) % 300 + 1;
                let block: Vec<u8> = (0..len).map(|j| (j as u8) & 0x7f).collect();
                let count = 1;
                acc.add_blocks(file, [(name.as_bytes(), count, &block[..])].into_iter());
                want[k].1.push((file, count, block));
                if file % 97 == 0 {
                    acc.add_def(name.as_bytes(), def_off);
                    want[k].0.push(def_off);
                    def_off += 13;
                }
            }
            acc.maybe_spill().unwrap();
        }
        assert!(acc.runs.len() >= 3, "{} runs", acc.runs.len());
        let fst_path = dir.join("names.fst");
        let dat_path = dir.join("names.dat");
        let summary = acc
            .finish(&fst_path, &dat_path, &[], &mut |_, _, _, _| Ok(()))
            .unwrap();
        assert_eq!(summary.names, 300);
        let map = fst::Map::new(std::fs::read(&fst_path).unwrap()).unwrap();
        let dat = std::fs::read(&dat_path).unwrap();
        for (k, name) in names.iter().enumerate() {
            let at = map.get(name).unwrap() as usize;
            let e = expected(&want[k].0, &want[k].1);
            assert_eq!(&dat[at..at + e.len()], &e[..], "{name}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// One file's additions: `(name, count, block)` per distinct name, and names defined.
    type FileAdds = (Vec<(Vec<u8>, u32, Vec<u8>)>, Vec<Vec<u8>>);

    fn file_adds() -> impl proptest::strategy::Strategy<Value = FileAdds> {
        use proptest::prelude::*;
        // Short names from a small alphabet (so files share them), bytes above ASCII too.
        let name = prop::collection::vec(
            prop::sample::select(vec![b'a', b'b', b'_', b'Z', b'0', 0xc3, 0xff]),
            1..5,
        );
        let posting = (
            name.clone(),
            1u32..4,
            prop::collection::vec(any::<u8>(), 0..12),
        );
        (
            prop::collection::vec(posting, 0..12),
            prop::collection::vec(name, 0..3),
        )
    }

    proptest::proptest! {
        /// Keys from a few values in each byte (so that some bytes are shared by all and
        /// many keys are equal), against the standard library's stable sort.
        #[test]
        fn radix_sort_is_a_stable_sort_by_key(
            keys in proptest::collection::vec(
                proptest::collection::vec(proptest::sample::select(vec![0u8, 1, 0x80, 0xff]), 8),
                0..300),
            shared in proptest::prelude::any::<u64>(),
            mask in proptest::prelude::any::<u64>(),
        ) {
            let mut v: Vec<(u64, u32)> = keys
                .iter()
                .enumerate()
                .map(|(i, k)| {
                    let key = u64::from_le_bytes(k[..].try_into().unwrap());
                    ((key & mask) | (shared & !mask), i as u32)
                })
                .collect();
            let mut want = v.clone();
            want.sort_by_key(|e| e.0);
            radix_sort(&mut v);
            proptest::prop_assert_eq!(v, want);
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(crate::proptest_cases(48)))]

        /// With no memory budget every file spills a run; the merge must give exactly what a
        /// `BTreeMap` of the same additions holds.
        #[test]
        fn spilling_every_file_merges_to_what_a_btreemap_holds(
            files in proptest::collection::vec(file_adds(), 0..24)
        ) {
            let dir = std::env::temp_dir().join(format!(
                "knav-accum-prop-{}-{:?}",
                std::process::id(),
                std::thread::current().id()
            ));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            let mut acc = Accumulator::new(&dir, "run", 0);
            let mut model: std::collections::BTreeMap<Vec<u8>, Want> = Default::default();
            let mut def_off = 16u64;
            for (file, (postings, defs)) in files.iter().enumerate() {
                let file = file as u32;
                let mut seen = std::collections::HashSet::new();
                for (name, count, block) in postings {
                    // One block per name and file, as a file's scan gives.
                    if !seen.insert(name.clone()) {
                        continue;
                    }
                    acc.add_blocks(file, [(&name[..], *count, &block[..])].into_iter());
                    model.entry(name.clone()).or_default().1.push((file, *count, block.clone()));
                }
                for name in defs {
                    acc.add_def(name, def_off);
                    model.entry(name.clone()).or_default().0.push(def_off);
                    def_off += 7;
                }
                acc.maybe_spill().unwrap();
            }
            // Every file that added anything spilled its own run.
            let busy = files.iter().filter(|(p, d)| !p.is_empty() || !d.is_empty()).count();
            proptest::prop_assert!(acc.runs.len() >= busy, "{} runs", acc.runs.len());
            let fst_path = dir.join("names.fst");
            let dat_path = dir.join("names.dat");
            let summary = acc.finish(&fst_path, &dat_path, &[], &mut |_, _, _, _| Ok(())).unwrap();
            proptest::prop_assert_eq!(summary.names, model.len() as u64);
            let map = fst::Map::new(std::fs::read(&fst_path).unwrap()).unwrap();
            let keys: Vec<Vec<u8>> = map.stream().into_byte_keys();
            proptest::prop_assert_eq!(keys, model.keys().cloned().collect::<Vec<_>>());
            let dat = std::fs::read(&dat_path).unwrap();
            for (name, (defs, postings)) in &model {
                let at = map.get(name).unwrap() as usize;
                let e = expected(defs, postings);
                proptest::prop_assert_eq!(&dat[at..at + e.len()], &e[..], "{:?}", name);
            }
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
}
