//! The record writer: definition and file records written in file-id order, each file's
//! names fed to the shard accumulators.

use super::*;

/// One file's names and definitions on their way to the shard accumulators.
pub(super) struct Batch {
    pub(super) file_id: u32,
    pub(super) defs: Vec<DefRecord>,
    /// Where each of `defs` was written in `defs.dat`.
    pub(super) def_offsets: Vec<u64>,
    pub(super) names: FileNames,
}

/// Writes a whole file and returns its length.
pub(super) fn write_file(path: &Path, kind: &[u8; 4], body: &[u8]) -> std::io::Result<u64> {
    let mut w = BufWriter::new(File::create(path)?);
    w.write_all(&header(kind))?;
    w.write_all(body)?;
    w.flush()?;
    Ok((HEADER_LEN + body.len()) as u64)
}

/// One shard's accumulator thread: adds the definitions and postings of the names of shard
/// `k` from every batch.
pub(super) fn accumulate_shard(
    k: usize,
    mut acc: Accumulator,
    rx: mpsc::Receiver<Arc<Vec<Batch>>>,
) -> std::io::Result<Accumulator> {
    for chunk in rx {
        for b in chunk.iter() {
            for (d, off) in b.defs.iter().zip(&b.def_offsets) {
                if shard_of(d.name.as_bytes()) == k {
                    acc.add_def(d.name.as_bytes(), *off);
                }
            }
            let names = &b.names;
            let blocks = names
                .groups
                .iter()
                .filter(|g| g.shard as usize == k)
                .map(|g| (g.name(&names.text), g.count, g.block(&names.blocks)));
            acc.add_blocks(b.file_id, blocks);
            acc.maybe_spill()?;
        }
    }
    Ok(acc)
}

/// The writer of a segment's `defs.dat`, `files.dat` and `files.idx`, which takes the files'
/// results in file-id order.
pub(super) struct RecordWriter {
    pub(super) out_dir: PathBuf,
    pub(super) defs: BufWriter<File>,
    pub(super) files: BufWriter<File>,
    pub(super) defs_len: u64,
    pub(super) files_len: u64,
    /// The offset of each file's record in `files.dat`, written at the end.
    pub(super) files_idx: Vec<u8>,
    /// The kind and file of every definition written, for the merge.
    pub(super) def_facts: DefFacts,
    /// Calls through function pointers, written sorted at the end.
    pub(super) indirect: crate::indirect::IndirectWriter,
    /// The families of the kernel macro table: definitions of other macros are counted together.
    pub(super) table_families: std::collections::HashSet<&'static str>,
    /// The files' search documents, in file order.
    pub(super) spool: Spool,
    pub(super) buf: Vec<u8>,
}

impl RecordWriter {
    /// Creates `defs.dat` and `files.dat` in `out_dir` for `files` files.
    pub(super) fn create(out_dir: &Path, files: usize) -> Result<RecordWriter, IndexError> {
        let create = |name: &str, what: &'static str| -> Result<BufWriter<File>, IndexError> {
            let mut w = BufWriter::with_capacity(
                1 << 20,
                File::create(out_dir.join(name)).map_err(IndexError::io(what, out_dir))?,
            );
            let kind = if name == "defs.dat" { b"DEFS" } else { b"FILE" };
            w.write_all(&header(kind)).map_err(write_error(out_dir))?;
            Ok(w)
        };
        Ok(RecordWriter {
            out_dir: out_dir.to_path_buf(),
            defs: create("defs.dat", "cannot create defs.dat in")?,
            files: create("files.dat", "cannot create files.dat in")?,
            defs_len: HEADER_LEN as u64,
            files_len: HEADER_LEN as u64,
            files_idx: Vec::with_capacity(files * 8),
            def_facts: DefFacts::default(),
            indirect: crate::indirect::IndirectWriter::create(out_dir)
                .map_err(IndexError::io("cannot create indirect.spool in", out_dir))?,
            table_families: knav_ctags::macros::MacroTable::kernel()
                .families()
                .iter()
                .map(|f| f.name.as_str())
                .collect(),
            spool: Spool::create(out_dir).map_err(IndexError::io("cannot create", out_dir))?,
            buf: Vec::new(),
        })
    }

    /// Writes the results arriving on `rx`, each chunk's (by its number in `chunks`) in file
    /// order, chunks in order, counting them into `meta`, and hands each chunk's names to
    /// `send` with its number; returns how many files were written.
    pub(super) fn write_in_order(
        &mut self,
        rx: mpsc::Receiver<(usize, Vec<FileResult>)>,
        inputs: &[Input],
        chunks: &[std::ops::Range<usize>],
        meta: &mut SegmentMeta,
        progress: &mut Progress,
        send: impl Fn(usize, Arc<Vec<Batch>>),
    ) -> Result<usize, IndexError> {
        let total_bytes: u64 = inputs
            .iter()
            .filter(|i| !i.too_big)
            .map(|i| i.file.size)
            .sum();
        let mut pending: BTreeMap<usize, Vec<FileResult>> = BTreeMap::new();
        let (mut want_chunk, mut want) = (0usize, 0usize);
        let mut bytes_done = 0u64;
        for (chunk, results) in rx {
            pending.insert(chunk, results);
            while let Some(results) = pending.remove(&want_chunk) {
                let range = &chunks[want_chunk];
                if range.start != want || range.len() != results.len() {
                    return Err(IndexError::Build(format!(
                        "chunk {want_chunk} of files {range:?} came with {} results at file {want}",
                        results.len()
                    )));
                }
                let mut batches = Vec::with_capacity(results.len());
                for r in results {
                    batches.push(self.write(want as u32, r, meta)?);
                    if !inputs[want].too_big {
                        bytes_done += inputs[want].file.size;
                    }
                    want += 1;
                    progress.update(
                        "index",
                        want as u64,
                        inputs.len() as u64,
                        bytes_done,
                        total_bytes,
                    );
                }
                send(want_chunk, Arc::new(batches));
                want_chunk += 1;
            }
        }
        meta.source_bytes = bytes_done;
        Ok(want)
    }

    /// Writes the definitions and the record of file `file_id`; its names go on as a batch.
    pub(super) fn write(
        &mut self,
        file_id: u32,
        mut r: FileResult,
        meta: &mut SegmentMeta,
    ) -> Result<Batch, IndexError> {
        let io = || write_error(&self.out_dir);
        r.record.defs_start = self.defs_len;
        r.record.defs_count = r.defs.len() as u32;
        let mut def_offsets = Vec::with_capacity(r.defs.len());
        for d in &mut r.defs {
            d.file = file_id;
            self.buf.clear();
            d.encode(&mut self.buf);
            def_offsets.push(self.defs_len);
            self.def_facts.push(self.defs_len, d.kind, file_id);
            self.defs.write_all(&self.buf).map_err(io())?;
            self.defs_len += self.buf.len() as u64;
        }
        meta.defs += r.defs.len() as u64;
        self.spool
            .add(file_id, &r.docs, &def_offsets)
            .map_err(io())?;
        for d in &r.defs {
            if let Some(family) = &d.via {
                // Macros learned from their `#define`s are counted together.
                let key = if self.table_families.contains(family.as_str()) {
                    family.as_str()
                } else {
                    LEARNED_FAMILY
                };
                match meta.macro_definitions.get_mut(key) {
                    Some(n) => *n += 1,
                    None => {
                        meta.macro_definitions.insert(key.to_string(), 1);
                    }
                }
            }
        }
        if r.macro_only {
            meta.macro_only_files += 1;
        }
        meta.ctags_bytes += r.ctags_bytes;
        self.indirect.add(file_id, &r.indirect).map_err(io())?;
        self.buf.clear();
        r.record.encode(&mut self.buf);
        self.files_idx
            .extend_from_slice(&self.files_len.to_le_bytes());
        self.files.write_all(&self.buf).map_err(io())?;
        self.files_len += self.buf.len() as u64;
        Ok(Batch {
            file_id,
            defs: r.defs,
            def_offsets,
            names: r.names,
        })
    }

    /// Flushes `defs.dat` and `files.dat` and writes `files.idx`, counting the registrations
    /// and dispatch sites into `meta`; returns what the merge needs of the definitions, and the
    /// calls through pointers, left to sort later ([`crate::indirect::IndirectWriter::finish`]
    /// reads the whole spool) when the names' accumulators no longer hold their memory.
    pub(super) fn finish(
        self,
        meta: &mut SegmentMeta,
    ) -> std::io::Result<(DefFacts, crate::indirect::IndirectWriter)> {
        let RecordWriter {
            out_dir,
            mut defs,
            mut files,
            files_idx,
            def_facts,
            indirect,
            spool,
            ..
        } = self;
        spool.finish()?;
        defs.flush()?;
        files.flush()?;
        drop((defs, files));
        write_file(&out_dir.join("files.idx"), b"FIDX", &files_idx)?;
        meta.registrations = indirect.registrations;
        meta.dispatch_sites = indirect.dispatches;
        Ok((def_facts, indirect))
    }
}

/// The kind and file of every definition of a segment by its offset in `defs.dat`: what the
/// defined names' search table needs of them, kept as it is written (8 bytes a definition)
/// instead of read back from `defs.dat`, whose every page the merge would otherwise map in (a
/// third of a kernel build's peak RSS).
#[derive(Default)]
pub(super) struct DefFacts {
    /// In offset order.
    pub(super) facts: Vec<DefFact>,
    /// For each 2^[`FACTS_BUCKET`] bytes of `defs.dat`, the index of its first definition: a
    /// lookup searches a bucket's few facts, not all of them (a binary search over millions
    /// missed the cache at every step).
    pub(super) buckets: Vec<u32>,
}

/// One definition's facts: a lookup reads one record, not an offset, a kind and a file from
/// three arrays (each a cache miss).
#[derive(Clone, Copy)]
pub(super) struct DefFact {
    pub(super) file: u32,
    /// The offset's low [`FACTS_BUCKET`] bits: its bucket holds the rest.
    pub(super) low: u16,
    pub(super) kind: Kind,
}

/// The base-2 logarithm of the bytes of `defs.dat` per bucket of [`DefFacts`].
pub(super) const FACTS_BUCKET: u32 = 10;

impl DefFacts {
    pub(super) fn push(&mut self, offset: u64, kind: Kind, file: u32) {
        let bucket = (offset >> FACTS_BUCKET) as usize;
        while self.buckets.len() <= bucket {
            self.buckets.push(self.facts.len() as u32);
        }
        self.facts.push(DefFact {
            file,
            low: (offset & ((1 << FACTS_BUCKET) - 1)) as u16,
            kind,
        });
    }

    /// The kind and file of the definition at `offset`.
    pub(super) fn get(&self, offset: u64) -> Option<(Kind, u32)> {
        let bucket = (offset >> FACTS_BUCKET) as usize;
        let start = *self.buckets.get(bucket)? as usize;
        let end = self
            .buckets
            .get(bucket + 1)
            .map_or(self.facts.len(), |&e| e as usize);
        let low = (offset & ((1 << FACTS_BUCKET) - 1)) as u16;
        let facts = &self.facts[start..end];
        let i = facts.binary_search_by_key(&low, |f| f.low).ok()?;
        Some((facts[i].kind, facts[i].file))
    }
}
