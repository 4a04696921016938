//! Building one segment: scan and ctags in parallel workers, postings accumulated in file order.
//!
//! The files are cut into chunks of consecutive files by bytes (about 8 MiB each). Each worker
//! takes the next chunk, reads and scans its files, and gives those with code beyond `#define`s
//! to one `ctags -L -` run (a chunk that times out is retried file by file with an interactive
//! ctags, each file with its own timeout). Results go to the writer (the calling thread), which
//! takes them in file-id order, writes definition and file records, and feeds the postings
//! accumulator. Nothing waits for the whole tree.
//!
//! This module drives the build (`build_segment`) and says what it needs (`BuildOptions`,
//! `Input`); the steps are its modules: [`analysis`] (one file), [`pipeline`] (the chunks and
//! workers), [`writer`] (the records in file order) and [`names`] (the name merge).

use crate::tree::beneath::{Root, Source, Unread};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::time::Duration;

use knav_ctags::{Ctags, FileTags, Kind, Worker};

use super::accum::Accumulator;
use super::code::extract::{file_docs, DocState, FileDocs};
use super::code::write::{write_code_index, Spool};
use super::codec::hash64;
use super::ctagstext::{ctags_text, CtagsTexts};
use super::defined::{describe, write_file_parts, write_name_parts, DefinedWriter};
use super::error::IndexError;
use super::factstore::FactStore;
use super::filefacts::{Deps, FileNames, FileResult, Kept, NameGroup};
use super::format::{header, DefRecord, FileRecord, FileStatus, HEADER_LEN, VERSION};
use super::format::{shard_of, NAME_SHARDS};
use super::scratch::Scratch;
use super::segment::{segment_files, SegmentMeta};
use crate::progress::Progress;
use crate::rank::PathRank;
use crate::tree::settings::{Ignore, Settings};
use crate::tree::walk::SourceFile;
use knav_c::definers::{Definers, Learned};
use knav_c::scan::{scan, FileScan};

mod analysis;
mod names;
mod pipeline;
mod writer;

use crate::alloc::{limit_malloc_arenas, release_free_memory};
use analysis::*;
use names::*;
use pipeline::*;
use writer::*;

/// Settings of a build.
#[derive(Clone, Debug)]
pub struct BuildOptions {
    /// Worker threads (each with a ctags process).
    pub workers: usize,
    /// Per-file ctags timeout.
    pub ctags_timeout: Duration,
    /// Extra ctags options (the kernel set, `.knav.toml` additions).
    pub ctags_args: Vec<String>,
    /// Bytes of postings kept in memory before a run is spilled.
    pub mem_budget: usize,
    /// Paths the walk leaves out (`.knav.toml`'s `index.ignore`).
    pub ignore: Ignore,
    /// Every header of the tree, whose `#define`s say which macros define names
    /// ([`knav_c::definers`]); `None`: the headers among the inputs (a full build).
    pub headers: Option<Arc<Vec<String>>>,
    /// The [`DEFINES_FILE`] of the base segment: what the headers that are not inputs define.
    pub saved_defines: Option<PathBuf>,
    /// Where files' facts are kept by content ([`super::factstore`]); `None`: every file is
    /// analyzed.
    pub facts: Option<Arc<FactStore>>,
    /// Where the tree's builds keep facts (`.knav.toml`'s `[cache]`, `KNAV_CACHE_DIR`): the
    /// store an update opens into `facts`.
    pub cache: crate::tree::settings::Cache,
}

impl BuildOptions {
    /// The defaults with the tree's `.knav.toml` applied.
    pub fn for_root(root: &Path) -> Result<BuildOptions, String> {
        Ok(BuildOptions::with_settings(&Settings::load(root)?))
    }

    /// The defaults with `settings` applied.
    pub fn with_settings(settings: &Settings) -> BuildOptions {
        let mut opts = BuildOptions::default();
        opts.ctags_args
            .extend(settings.ctags_options.iter().cloned());
        opts.ignore = settings.ignore.clone();
        opts.cache = settings.cache.clone();
        opts
    }
}

impl Default for BuildOptions {
    fn default() -> Self {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        let mem_mb = std::env::var("KNAV_MEM_BUDGET_MB")
            .ok()
            .and_then(|v| v.parse::<usize>().ok())
            .unwrap_or(96);
        BuildOptions {
            // One more worker than cores: a worker waiting on its ctags process leaves its core
            // to the others.
            workers: cores + 1,
            ctags_timeout: Duration::from_secs(
                std::env::var("KNAV_CTAGS_TIMEOUT")
                    .ok()
                    .and_then(|v| v.parse::<u64>().ok())
                    .filter(|t| *t > 0)
                    .unwrap_or(60),
            ),
            ctags_args: knav_ctags::kernel::options(),
            mem_budget: mem_mb << 20,
            ignore: Ignore::default(),
            headers: None,
            saved_defines: None,
            facts: None,
            cache: crate::tree::settings::Cache::default(),
        }
    }
}

/// A file to put in a segment.
#[derive(Clone, Debug)]
pub struct Input {
    /// Path and stat.
    pub file: SourceFile,
    /// Over the size cap: recorded, not read.
    pub too_big: bool,
}

/// A segment's record of the headers' `#define`s that define names, for the next delta.
pub const DEFINES_FILE: &str = "defines.txt";

/// Beside it, the table resolved from them, which a delta uses as it is.
pub const DEFINERS_FILE: &str = "definers.txt";

/// The report's name for definitions made by macros learned from their `#define`s.
pub const LEARNED_FAMILY: &str = "(learned from #defines)";

/// The family a definition made by macro `via` is counted under: its family in the kernel
/// macro table, or [`LEARNED_FAMILY`] for a macro learned from its `#define`.
pub fn counted_family(via: &str) -> &str {
    let table = knav_ctags::macros::MacroTable::kernel();
    if table.families().iter().any(|f| f.name == via) {
        via
    } else {
        LEARNED_FAMILY
    }
}

/// Builds a segment of `inputs` (sorted by path) in `out_dir`, which must be empty.
///
/// The steps: learn what macros define, scan and ctags the files while the writer stores
/// their records and feeds the name accumulators, merge each shard's names into its FST, then
/// checksum every file into `meta.json`.
pub fn build_segment(
    root: &Path,
    inputs: &[Input],
    out_dir: &Path,
    ctags: Option<&Ctags>,
    opts: &BuildOptions,
    progress: &mut Progress,
) -> Result<SegmentMeta, IndexError> {
    std::fs::create_dir_all(out_dir)
        .map_err(IndexError::io("cannot create segment in", out_dir))?;
    let started = std::time::Instant::now();
    limit_malloc_arenas();
    let _mapped = crate::alloc::LargeBlocksMapped::start();
    let learned = learn_definers(root, inputs, out_dir, opts)?;
    let learned_at = started.elapsed();
    let mut meta = SegmentMeta {
        version: VERSION,
        files: inputs.len() as u32,
        ..Default::default()
    };
    let scan = Scan {
        root,
        inputs,
        ctags,
        opts,
        learned: &learned,
    };
    let mut trace = super::Trace::new();
    let (accumulators, facts, indirect) = scan.run(out_dir, &mut meta, progress)?;
    release_free_memory();
    trace.mark("segment: scan+ctags");
    let scanned_at = started.elapsed();
    progress.phase("merge names");
    merge_names(out_dir, inputs, accumulators, &facts, &mut meta)?;
    drop(facts);
    trace.mark("segment: merge names");
    let names_at = started.elapsed();
    progress.phase("search tables");
    // The calls through pointers and the code documents read only what the scan spooled: they
    // are written beside the search parts (after the merge, whose peak memory they would add to),
    // each on a thread of its own: one after the other, they ended half a second after the
    // search parts, with a core idle.
    let (parts, pointers, code) = std::thread::scope(|s| {
        let pointers =
            s.spawn(move || timed(|| indirect.finish(&out_dir.join(super::indirect::FILE))));
        let code = s.spawn(move || timed(|| write_code_index(out_dir, inputs.len() as u32)));
        let parts = write_search_parts(out_dir, inputs);
        let parts_ms = started.elapsed() - names_at;
        let joined =
            |h: std::thread::ScopedJoinHandle<'_, std::io::Result<std::time::Duration>>,
             what: &str| {
                h.join()
                    .map_err(|_| IndexError::Build(format!("the {what} thread panicked")))
            };
        (
            parts.map(|()| parts_ms),
            joined(pointers, "calls through pointers'"),
            joined(code, "code documents'"),
        )
    });
    let parts_ms = parts?;
    let pointers_ms = pointers?.map_err(write_error(out_dir))?;
    let code_ms = code?.map_err(write_error(out_dir))?;
    trace.mark("segment: search parts, calls through pointers, code documents");
    let merged_at = started.elapsed();
    seal(out_dir, &mut meta)?;
    meta.phase_ms = vec![
        ("learn defines".into(), learned_at.as_millis() as u64),
        (
            "scan+ctags".into(),
            (scanned_at - learned_at).as_millis() as u64,
        ),
        ("merge".into(), (names_at - scanned_at).as_millis() as u64),
        // These three ran side by side: each is its own time, not a share of the total.
        ("search parts".into(), parts_ms.as_millis() as u64),
        (
            "calls through pointers".into(),
            pointers_ms.as_millis() as u64,
        ),
        ("code documents".into(), code_ms.as_millis() as u64),
        (
            "checksum".into(),
            (started.elapsed() - merged_at).as_millis() as u64,
        ),
    ];
    let json = serde_json::to_vec_pretty(&meta).map_err(std::io::Error::from);
    std::fs::write(
        out_dir.join("meta.json"),
        json.map_err(write_error(out_dir))?,
    )
    .map_err(write_error(out_dir))?;
    Ok(meta)
}

/// How long `step` took, or its error.
fn timed(step: impl FnOnce() -> std::io::Result<()>) -> std::io::Result<std::time::Duration> {
    let at = std::time::Instant::now();
    step().map(|()| at.elapsed())
}

/// The error of a failed write into segment directory `out_dir`.
fn write_error(out_dir: &Path) -> impl FnOnce(std::io::Error) -> IndexError {
    IndexError::io("cannot write index in", out_dir)
}

/// What macros define, learned from every header before any invocation is read; a full build
/// saves it in `out_dir` for its deltas, a delta takes its base's.
fn learn_definers(
    root: &Path,
    inputs: &[Input],
    out_dir: &Path,
    opts: &BuildOptions,
) -> Result<Definers, IndexError> {
    // A delta's table is its base's: a delta that would change it is a full rebuild.
    let base_table = opts
        .saved_defines
        .as_deref()
        .and_then(|p| super::definers_read::load(&p.with_file_name(DEFINERS_FILE)));
    if let Some(table) = base_table {
        return Ok(table);
    }
    let headers: Vec<&str> = match &opts.headers {
        Some(h) => h.iter().map(String::as_str).collect(),
        None => inputs
            .iter()
            .filter(|i| !i.too_big && i.file.path.ends_with(".h"))
            .map(|i| i.file.path.as_str())
            .collect(),
    };
    let fresh: std::collections::HashSet<&str> =
        inputs.iter().map(|i| i.file.path.as_str()).collect();
    let (learned, kept) = super::definers_read::learn_headers(
        root,
        &headers,
        opts.saved_defines.as_deref(),
        &fresh,
        opts.workers,
    );
    let cannot_write = || IndexError::io("cannot write in", out_dir);
    super::definers_read::save(&out_dir.join(DEFINES_FILE), &kept).map_err(cannot_write())?;
    super::definers_read::save_resolved(&learned, &out_dir.join(DEFINERS_FILE))
        .map_err(cannot_write())?;
    Ok(learned)
}

/// Writes the search tables of the defined names' parts and of the files' path parts.
fn write_search_parts(out_dir: &Path, inputs: &[Input]) -> Result<(), IndexError> {
    write_name_parts(out_dir)?;
    write_file_parts(out_dir, inputs.iter().map(|i| i.file.path.as_str()))
        .map_err(write_error(out_dir))
}

/// Records the length and checksum of every file of the segment in `meta`.
fn seal(out_dir: &Path, meta: &mut SegmentMeta) -> Result<(), IndexError> {
    let io = || write_error(out_dir);
    // The definer tables are written by a full build only (a delta uses its base's).
    let optional = [DEFINES_FILE, DEFINERS_FILE]
        .into_iter()
        .filter(|f| out_dir.join(f).is_file())
        .map(String::from);
    for name in segment_files().into_iter().chain(optional) {
        let path = out_dir.join(&name);
        let len = std::fs::metadata(&path).map_err(io())?.len();
        meta.lengths.push((name.to_string(), len));
        meta.checksums.push((
            name.to_string(),
            super::codec::checksum_file(&path).map_err(io())?,
        ));
    }
    Ok(())
}
