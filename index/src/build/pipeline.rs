//! The chunk pipeline: the files cut into chunks by bytes, workers that scan and run ctags
//! over a chunk, and the hand-off of their results to the writer in file order.

use super::*;

/// Source bytes per ctags run: big enough that process start-up is noise, small enough that
/// the workers stay balanced and the results waiting to be written stay small.
pub(super) const CHUNK_BYTES: u64 = 8 << 20;

/// Files per ctags run at most.
pub(super) const CHUNK_FILES: usize = 2000;

/// Splits `inputs` into runs of consecutive files by bytes.
pub(super) fn chunks(inputs: &[Input]) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let (mut start, mut bytes) = (0, 0u64);
    for (i, input) in inputs.iter().enumerate() {
        if !input.too_big {
            bytes += input.file.size;
        }
        if bytes >= CHUNK_BYTES || i + 1 - start >= CHUNK_FILES {
            out.push(start..i + 1);
            start = i + 1;
            bytes = 0;
        }
    }
    if start < inputs.len() {
        out.push(start..inputs.len());
    }
    out
}

/// What a build worker keeps from one chunk to the next.
#[derive(Default)]
pub(super) struct WorkerState {
    /// The interactive ctags that retries files one by one, started on first need.
    pub(super) fallback: Option<Worker>,
    /// Words already turned into search terms, and the memory for a file's documents.
    pub(super) docs: DocState,
}

/// Scans a chunk of files, gives those with code to one ctags run (a chunk that times out is
/// retried file by file, each with its own timeout), then makes each file's search documents
/// from its bytes and definitions.
#[allow(clippy::too_many_arguments)]
pub(super) fn process_chunk(
    root: &Path,
    inputs: &[Input],
    learned: &Definers,
    ctags: Option<&Ctags>,
    opts: &BuildOptions,
    scratch: Option<&Path>,
    chunk: usize,
    state: &mut WorkerState,
    kept: Option<&Kept<'_>>,
) -> Vec<FileResult> {
    // Scratch space is only made when there is a ctags to read it.
    let shorten = scratch.is_some();
    let beneath = Root::open(root).ok();
    let mut results = Vec::with_capacity(inputs.len());
    let mut scans = Vec::with_capacity(inputs.len());
    let mut sources = Vec::with_capacity(inputs.len());
    for input in inputs {
        let (r, scanned, src) = scan_start(beneath.as_ref(), input, shorten, kept);
        results.push(r);
        scans.push(scanned);
        sources.push(src);
    }
    let wanted: Vec<usize> = (0..results.len())
        .filter(|&i| needs_ctags(&results[i]))
        .collect();
    let opaque: Vec<Cuts> = wanted
        .iter()
        .map(|&i| {
            let r = &mut results[i];
            (
                std::mem::take(&mut r.opaque),
                std::mem::take(&mut r.semicolons),
            )
        })
        .collect();
    // ctags reads the chunk while this thread finishes the scans: a chunk of one large file
    // would otherwise leave a core idle for as long as each takes.
    let fallback = &mut state.fallback;
    let tagged = std::thread::scope(|s| {
        let sources = &sources;
        // No thread for a chunk ctags has nothing to read in (its facts from the store).
        let tagging = (!wanted.is_empty()).then(|| {
            s.spawn(move || {
                tag_chunk(
                    inputs, wanted, opaque, sources, ctags, opts, scratch, chunk, fallback,
                )
            })
        });
        for ((r, scanned), src) in results.iter_mut().zip(&mut scans).zip(sources) {
            if let (Some(scanned), Some(src)) = (scanned.take(), src) {
                scan_finish(r, scanned, src, learned);
            }
        }
        tagging.map_or(Ok(Vec::new()), |t| t.join())
    });
    match tagged {
        Ok(tagged) => {
            for (i, ctags_bytes, tags) in tagged {
                results[i].ctags_bytes = ctags_bytes;
                attach_tags(&mut results[i], tags);
            }
        }
        Err(_) => {
            for r in results.iter_mut().filter(|r| needs_ctags(r)) {
                attach_tags(r, Err("the ctags thread panicked".into()));
            }
        }
    }
    for (r, src) in results.iter_mut().zip(sources) {
        // Facts from the store have their documents.
        if let (Some(src), Some(_)) = (src, &r.deps) {
            r.docs = file_docs(&src, &r.record.path, &r.defs, &mut state.docs);
            if let Some(kept) = kept {
                kept.keep(r, &src);
            }
        }
    }
    results
}

/// What the text ctags reads leaves out of a file and adds to it: its opaque spans and its
/// `;`s ([`crate::ctagstext::ctags_text`]).
pub(super) type Cuts = (Vec<(u32, u32)>, Vec<u32>);

/// ctags's definitions of the files `wanted` of a chunk (indexes into `inputs`, each with the
/// spans ctags need not read and the `;`s it needs), from one ctags run: per file, its index,
/// the bytes ctags read and its tags or why there are none.
#[allow(clippy::too_many_arguments)]
pub(super) fn tag_chunk(
    inputs: &[Input],
    wanted: Vec<usize>,
    mut opaque: Vec<Cuts>,
    sources: &[Option<Source>],
    ctags: Option<&Ctags>,
    opts: &BuildOptions,
    scratch: Option<&Path>,
    chunk: usize,
    fallback: &mut Option<Worker>,
) -> Vec<(usize, u64, Result<FileTags, String>)> {
    let mut out = Vec::with_capacity(wanted.len());
    let Some(ctags) = ctags else {
        for i in wanted {
            out.push((i, 0, Err("ctags not available".into())));
        }
        return out;
    };
    // `ctags -L -` reads one name a line: a file whose name has a newline is asked for alone.
    let newline = |i: usize| crate::tree::pathname::decode(&inputs[i].file.path).contains(&b'\n');
    // The `;`s of every file, for one retried alone.
    let semicolons: std::collections::HashMap<usize, Vec<u32>> = wanted
        .iter()
        .zip(&opaque)
        .filter(|(_, (_, s))| !s.is_empty())
        .map(|(&i, (_, s))| (i, s.clone()))
        .collect();
    let alone: Vec<usize> = wanted.iter().copied().filter(|&i| newline(i)).collect();
    let (wanted, opaque): (Vec<usize>, Vec<Cuts>) = wanted
        .into_iter()
        .zip(opaque.drain(..))
        .filter(|&(i, _)| !newline(i))
        .unzip();
    // ctags is given the files' real names: its anonymous types are named after them.
    let paths: Vec<std::borrow::Cow<'_, Path>> = wanted
        .iter()
        .map(|i| crate::tree::pathname::to_path(&inputs[*i].file.path))
        .collect();
    let paths: Vec<&Path> = paths.iter().map(|p| &**p).collect();
    let bytes: u64 = wanted.iter().map(|i| inputs[*i].file.size).sum();
    let timeout = opts.ctags_timeout + Duration::from_secs(bytes >> 20);
    // ctags reads the bytes knav read, never the tree: texts in the scratch directory, else
    // each file sent to a worker (a file swapped for a link since must not give its names).
    let shortened = wanted.iter().zip(opaque).map(|(&i, (opaque, semicolons))| {
        (
            sources[i].as_deref().unwrap_or_default(),
            opaque,
            semicolons,
        )
    });
    let texts = scratch.and_then(|s| CtagsTexts::write(s, chunk, &paths, shortened));
    let retried = match &texts {
        Some(texts) => {
            // Beside the texts, on the same RAM file system: ctags's own tag file (see
            // knav_ctags::batch).
            let tag_file = texts.dir.with_extension("tags");
            let batch = knav_ctags::tags_of_chunk(
                ctags,
                &texts.dir,
                &opts.ctags_args,
                &paths,
                timeout,
                Some(&tag_file),
            );
            match batch {
                Ok(tags) => {
                    for ((&i, mut t), text) in wanted.iter().zip(tags).zip(&texts.texts) {
                        for tag in &mut t.tags {
                            tag.line = text.lines.file_line(tag.line);
                            tag.end = tag.end.map(|e| text.lines.file_line(e));
                        }
                        out.push((i, text.len, Ok(t)));
                    }
                    Vec::new()
                }
                Err(_) => wanted,
            }
        }
        None => wanted,
    };
    drop(texts);
    for i in retried.into_iter().chain(alone) {
        let worker = fallback
            // In `/`: it reads no file, and the tree's `./.ctags.d` must not reach it.
            .get_or_insert_with(|| {
                Worker::new(ctags, Path::new("/"), &opts.ctags_args, opts.ctags_timeout)
            });
        let path = crate::tree::pathname::to_path(&inputs[i].file.path);
        let t = match sources[i].as_deref() {
            // The `;`s the batch run's texts have, so that its tags are the same.
            Some(src) if semicolons.contains_key(&i) => {
                let mut text = Vec::with_capacity(src.len() + 64);
                ctags_text(src, &[], &semicolons[&i], &mut text);
                worker.tags_of_text(&path, &text)
            }
            Some(text) => worker.tags_of_text(&path, text),
            None => Err(knav_ctags::WorkerError::Read(std::io::Error::other(
                "not read by knav",
            ))),
        };
        out.push((i, inputs[i].file.size, t.map_err(|e| e.to_string())));
    }
    out
}

/// The scan of a segment's files: what every worker shares.
pub(super) struct Scan<'a> {
    pub(super) root: &'a Path,
    pub(super) inputs: &'a [Input],
    pub(super) ctags: Option<&'a Ctags>,
    pub(super) opts: &'a BuildOptions,
    pub(super) learned: &'a Definers,
}

impl Scan<'_> {
    /// Scans every input on worker threads and writes their records in file-id order, feeding
    /// one accumulator thread per name shard; returns the accumulators, all names added.
    pub(super) fn run(
        &self,
        out_dir: &Path,
        meta: &mut SegmentMeta,
        progress: &mut Progress,
    ) -> Result<(Vec<Accumulator>, DefFacts, crate::indirect::IndirectWriter), IndexError> {
        let scratch = self.ctags.and_then(|_| Scratch::for_ctags());
        let scratch_dir = scratch.as_ref().map(|s| s.path());
        let kept = self.opts.facts.as_deref().map(|store| Kept {
            store: store.proving(out_dir),
            salt: crate::filefacts::salt(self.ctags, &self.opts.ctags_args, scratch.is_some()),
            table: crate::filefacts::TableHashes::of(self.learned),
        });
        let kept = kept.as_ref();
        let chunks = chunks(self.inputs);
        let workers = self.opts.workers.max(1).min(chunks.len().max(1));
        let mut records = RecordWriter::create(out_dir, self.inputs.len())?;
        let io = write_error(out_dir);
        let next = AtomicUsize::new(0);
        // Each worker's chunk and one more finished may wait for the writer.
        let window = Window::new(workers + 1);
        let accumulators = std::thread::scope(|s| {
            let (shard_tx, shard_threads): (Vec<_>, Vec<_>) = (0..NAME_SHARDS)
                .map(|k| {
                    // A chunk's batches go together: one message, one wake-up, a chunk
                    // (sending each file's cost a second of CPU in futex calls over the
                    // kernel). With one chunk in the channel, at most three chunks' names
                    // are alive: the slowest shard's, the one waiting, the writer's.
                    let (tx, rx) = mpsc::sync_channel::<Arc<Vec<Batch>>>(1);
                    let acc = Accumulator::new(
                        out_dir,
                        &format!("run-{k}"),
                        self.opts.mem_budget / NAME_SHARDS,
                    );
                    (tx, s.spawn(move || accumulate_shard(k, acc, rx)))
                })
                .unzip();
            let (tx, rx) = mpsc::sync_channel::<(usize, Vec<FileResult>)>(workers);
            for _ in 0..workers {
                let (tx, next, chunks, window) = (tx.clone(), &next, &chunks, &window);
                s.spawn(move || self.work(chunks, next, window, scratch_dir, kept, tx));
            }
            drop(tx);
            // Workers waiting for their turn stop when the writer does, even on an error or a
            // panic.
            let closes = Closes {
                window: &window,
                always: true,
            };
            let written =
                records.write_in_order(rx, self.inputs, &chunks, meta, progress, |c, batches| {
                    for tx in &shard_tx {
                        // A closed channel means the shard thread failed; its join says why.
                        let _ = tx.send(Arc::clone(&batches));
                    }
                    window.written(c);
                });
            drop(closes);
            let written = written?;
            if written != self.inputs.len() {
                return Err(IndexError::Build(format!(
                    "indexing stopped after {written} of {} files (a worker failed)",
                    self.inputs.len()
                )));
            }
            drop(shard_tx);
            shard_threads
                .into_iter()
                .map(|h| match h.join() {
                    Ok(r) => r.map_err(write_error(out_dir)),
                    Err(_) => Err(IndexError::Build(
                        "a name accumulator thread panicked".into(),
                    )),
                })
                .collect::<Result<Vec<_>, _>>()
        })?;
        let (facts, indirect) = records.finish(meta).map_err(io)?;
        Ok((accumulators, facts, indirect))
    }

    /// A worker: takes the next chunk until none is left, and sends its files' results
    /// together with its number.
    pub(super) fn work(
        &self,
        chunks: &[std::ops::Range<usize>],
        next: &AtomicUsize,
        window: &Window,
        scratch: Option<&Path>,
        kept: Option<&Kept<'_>>,
        tx: mpsc::SyncSender<(usize, Vec<FileResult>)>,
    ) {
        let mut state = WorkerState::default();
        // A worker that panics never sends its chunk: the writer, and the workers waiting
        // for it, would wait for ever.
        let _closes = Closes {
            window,
            always: false,
        };
        loop {
            let c = next.fetch_add(1, Ordering::Relaxed);
            let Some(range) = chunks.get(c) else {
                return;
            };
            if !window.wait_for(c) {
                return;
            }
            let results = process_chunk(
                self.root,
                &self.inputs[range.clone()],
                self.learned,
                self.ctags,
                self.opts,
                scratch,
                c,
                &mut state,
                kept,
            );
            if tx.send((c, results)).is_err() {
                return;
            }
        }
    }
}

/// How far ahead of the writer the workers may scan. Results are written in file order, so
/// a chunk finished before the one being written waits in memory; without a bound, one slow
/// chunk (a large generated file, a ctags retried file by file) let the others pile up behind it.
pub(super) struct Window {
    /// Chunks written so far, and whether the writer has stopped.
    pub(super) state: Mutex<(usize, bool)>,
    pub(super) moved: Condvar,
    /// Chunks, from the first unwritten one on, that may be scanned or wait to be written.
    pub(super) ahead: usize,
}

impl Window {
    pub(super) fn new(ahead: usize) -> Window {
        Window {
            state: Mutex::new((0, false)),
            moved: Condvar::new(),
            ahead,
        }
    }

    /// Waits until chunk `chunk` may be scanned; false when the writer has stopped.
    pub(super) fn wait_for(&self, chunk: usize) -> bool {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        while !state.1 && chunk >= state.0 + self.ahead {
            state = self.moved.wait(state).unwrap_or_else(|e| e.into_inner());
        }
        !state.1
    }

    /// The writer has written chunk `chunk` (and every one before it).
    pub(super) fn written(&self, chunk: usize) {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).0 = chunk + 1;
        self.moved.notify_all();
    }

    /// The writer has stopped: no worker waits any more.
    pub(super) fn close(&self) {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).1 = true;
        self.moved.notify_all();
    }
}

/// Closes a [`Window`] when dropped: always, or only while its thread panics.
pub(super) struct Closes<'a> {
    pub(super) window: &'a Window,
    pub(super) always: bool,
}

impl Drop for Closes<'_> {
    fn drop(&mut self) {
        if self.always || std::thread::panicking() {
            self.window.close();
        }
    }
}
