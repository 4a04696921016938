//! Updating an index: building it, refreshing it and publishing it.
//!
//! [`update`] is the one entry point that writes. On a tree without an index, or with `full`, it
//! builds a base segment of every file. Otherwise it stats every file against the index, re-hashes
//! those whose size or mtime changed, and re-indexes only those whose content changed, into a
//! delta segment that shadows their old versions (and deleted files) in the base. When the delta
//! grows past a fraction of the tree, the next update rebuilds the base instead.
//!
//! This file orchestrates: it opens the previous index, walks, builds what changed and
//! publishes. Each other job is a module of its own: [`changes`] (the walk against the index:
//! which files to index again, and `knav status`'s [`changes()`]), `text` (the text part's
//! refresh), `build_files` (the build-file part's) and [`trace`] (phase timings, kept by the
//! CLI).

use std::collections::HashSet;
use std::path::Path;
use std::time::Instant;

use serde::Serialize;

use crate::build::{build_segment, BuildOptions, Input};
use crate::error::IndexError;
use crate::part::Kind;
use crate::progress::Progress;
use crate::segment::SegmentRef;
use crate::store::{Manifest, Snapshot};
use crate::tree::walk::{SourceFile, DEFAULT_MAX_FILE_BYTES};
use crate::{build, codec, definers_read, format, scratch, segment, store};

mod build_files;
mod changes;
mod hw;
mod text;
mod trace;

use self::build_files::{build_files_part, BuildFilesPart, BuildFilesState};
pub use self::changes::{changes, Changes};
use self::changes::{compare, indexed_files, walk_tree, Diff, Indexed, Walked};
use self::hw::HwState;
use self::text::TextUpdate;
pub use self::trace::Trace;

/// What an update did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct UpdateReport {
    /// What the update did.
    pub mode: UpdateMode,
    /// Files re-indexed because their content changed.
    pub changed: u64,
    /// Files new since the last update.
    pub added: u64,
    /// Files deleted since the last update.
    pub deleted: u64,
    /// `.c`/`.h` files scanned in the index now.
    pub files_scanned: u64,
    /// Files not indexed.
    pub files_unindexed: u64,
    /// Of those, files that are not C sources (`knav grep` searches them).
    pub other_files: u64,
    /// The `.c`/`.h` files among them (or indexed without definitions), as `path: why`; at
    /// most [`store::MAX_UNINDEXED_LISTED`].
    pub unindexed_sources: Vec<String>,
    /// Distinct names in the segment built (0 when unchanged).
    pub names: u64,
    /// Definitions in the segment built.
    pub definitions: u64,
    /// Identifier occurrences in the segment built.
    pub occurrences: u64,
    /// Bytes of the index on disk.
    pub index_bytes: u64,
    /// Entries the walk could not read (unreadable directories),
    /// at most [`store::MAX_UNINDEXED_LISTED`].
    pub walk_errors: Vec<String>,
    /// Directories read during the walk (the others were unchanged since the last walk).
    pub dirs_read: u64,
    /// Wall time in milliseconds.
    pub elapsed_ms: u64,
    /// The index directory.
    pub index_dir: String,
    /// When the build files changed: what reading them found (`2372 Makefiles followed, …`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub build_files: Option<String>,
    /// When the documentation files changed: what reading them found.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub docs: Option<String>,
    /// When the device trees or binding schemas changed: what reading them found.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hw: Option<String>,
    /// Full builds: definitions each kernel macro family made (`SYSCALL_DEFINE`: 1,900…).
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub macro_definitions: std::collections::BTreeMap<String, u64>,
    /// Why the index (or its build-file part) was rebuilt instead of refreshed: the damage or
    /// the unreadable index found.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rebuilt_because: Option<String>,
    /// Files the text index (`knav grep`) covers: every file rg searches.
    pub text_files: u64,
    /// Bytes of the text index's base on disk.
    pub text_index_bytes: u64,
    /// The index of another tree this one's first index started from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seeded_from: Option<crate::seed::Seeded>,
    /// What the segment build did with the fact store, when it used one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub facts: Option<FactsReport>,
}

/// What a build did with the fact store ([`crate::factstore`]).
#[derive(Clone, Debug, Default, Serialize)]
pub struct FactsReport {
    /// The store's directory.
    pub dir: String,
    /// Hits, misses, entries written, and why nothing could be kept when it could not.
    #[serde(flatten)]
    pub tally: crate::factstore::Tally,
    /// What the store holds after the build (and its prune).
    pub usage: crate::factstore::Usage,
    /// What the prune to the size cap removed.
    pub pruned: crate::factstore::Usage,
}

/// A delta (not a full build) of fewer files than this analyzes them without the fact store:
/// reading the store's index would cost more than it saves, and every build that computes
/// facts leaves a pack.
const FACTS_MIN_FILES: usize = 64;

/// What an update did: the `mode` of its report.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum UpdateMode {
    /// Nothing changed.
    #[default]
    Unchanged,
    /// A new base segment of every file.
    Full,
    /// A delta segment of the changed files, or only a new build-file part.
    Incremental,
    /// `--verify`: every file checked, nothing written.
    Verified,
}

impl std::fmt::Display for UpdateMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            UpdateMode::Unchanged => "unchanged",
            UpdateMode::Full => "full",
            UpdateMode::Incremental => "incremental",
            UpdateMode::Verified => "verified",
        })
    }
}

/// The delta is folded into a new base when it holds more files than this share of the tree.
const DELTA_MAX_SHARE: f64 = 0.05;
/// …but a delta of this many files is always fine.
const DELTA_MIN_FILES: usize = 500;
/// Builds of at least this many files take their small blocks from mimalloc.
const MIMALLOC_FILES: usize = 4096;

fn options_hash(opts: &BuildOptions, max_file_bytes: u64) -> u64 {
    let mut s = opts.ctags_args.join("\u{1}");
    s.push_str(&max_file_bytes.to_string());
    for p in opts.ignore.sources() {
        s.push('\u{2}');
        s.push_str(p);
    }
    codec::hash64(s.as_bytes())
}

/// Bytes of the files of one segment or build-file part directory.
fn dir_size(dir: &Path) -> u64 {
    // A segment directory holds only files: one level is all there is to read.
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.metadata().ok())
        .filter(|m| m.is_file())
        .map(|m| m.len())
        .sum()
}

/// Seconds since the epoch, for a manifest about to be published.
fn now_unix() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The report of an update that kept the segments of `snap`.
fn same_segments(
    snap: &Snapshot,
    walked: &crate::tree::walk::Walk,
    started: Instant,
    index_dir: &Path,
) -> UpdateReport {
    let text = snap.manifest.text.as_ref();
    UpdateReport {
        text_files: text.map_or(0, |t| t.files),
        text_index_bytes: text.map_or(0, |t| t.index_bytes),
        dirs_read: walked.dirs_read,
        walk_errors: walk_errors(walked),
        files_scanned: snap.manifest.files_scanned,
        files_unindexed: snap.manifest.files_unindexed,
        other_files: snap.manifest.other_files,
        elapsed_ms: started.elapsed().as_millis() as u64,
        index_dir: index_dir.display().to_string(),
        ..Default::default()
    }
}

/// Bytes on disk of the segments and the build-file part `manifest` names.
fn index_bytes(index_dir: &Path, manifest: &Manifest) -> u64 {
    manifest
        .segments
        .iter()
        .map(|s| s.dir.as_str())
        .chain(manifest.build_files.iter().map(|b| b.dir.as_str()))
        .chain(manifest.text.iter().map(|t| t.dir.as_str()))
        .chain(manifest.docs.iter().map(|d| d.dir.as_str()))
        .chain(manifest.hw.iter().map(|h| h.dir.as_str()))
        .map(|d| dir_size(&index_dir.join(d)))
        .sum()
}

/// Brings the index of `root` in `index_dir` up to date.
pub fn update(
    root: &Path,
    index_dir: &Path,
    full: bool,
    opts: &BuildOptions,
    progress: &mut Progress,
) -> Result<UpdateReport, IndexError> {
    update_hinted(root, index_dir, full, opts, progress, None)
}

/// [`update`], looking only at what `hint` names when there is one (a file watcher saw every
/// change since the last update); the rest of the tree is taken as the index has it.
///
/// The steps: take the build lock and clear what killed builds left; open the index as it is
/// ([`open_previous`]); walk the tree ([`walk_tree`]) and compare it with the index; then
/// either keep the segments ([`Update::keep_segments`], [`Update::replace_parts`]) or
/// build and publish a new one ([`Update::build`]).
pub fn update_hinted(
    root: &Path,
    index_dir: &Path,
    full: bool,
    opts: &BuildOptions,
    progress: &mut Progress,
    hint: Option<&crate::tree::walk::Hint>,
) -> Result<UpdateReport, IndexError> {
    let started = Instant::now();
    // Before any thread makes an arena of its own: arenas that the walks' and the text
    // build's threads leave behind are taken up again by the segment build's threads, and its
    // peak RSS grew by a third (see `limit_malloc_arenas`).
    crate::alloc::limit_malloc_arenas();
    let lock = store::lock(index_dir)?;
    // From here on every file below the index directory is named through the descriptor the
    // lock opened (`/proc/self/fd/N`): the directory swapped for a link after the lock's
    // check changes nothing. What is shown names the directory's own path.
    let at = lock.via();
    let _interrupted = crate::interrupt::guard_index(at);
    crate::disk::no_wider_than(at, root);
    // What killed builds left behind goes first, whatever this update finds to do.
    store::remove_orphans(at, &lock);
    scratch::remove_abandoned_scratch();
    match update_locked(root, at, started, full, opts, progress, hint) {
        Ok(report) => Ok(UpdateReport {
            index_dir: index_dir.display().to_string(),
            ..report
        }),
        Err(e) => Err(e.shown()),
    }
}

/// [`update_hinted`] once the build lock is taken, `index_dir` reached through its descriptor.
fn update_locked(
    root: &Path,
    index_dir: &Path,
    started: Instant,
    full: bool,
    opts: &BuildOptions,
    progress: &mut Progress,
    hint: Option<&crate::tree::walk::Hint>,
) -> Result<UpdateReport, IndexError> {
    let mut trace = Trace::new();
    progress.phase("walk");
    let options_hash = options_hash(opts, DEFAULT_MAX_FILE_BYTES);
    let Previous {
        snap: mut old,
        rebuilt_because,
        docs_damaged,
        hw_damaged,
    } = open_previous(root, index_dir, full, options_hash);
    let up = Update {
        root,
        index_dir,
        started,
        cache: old.as_ref().and_then(|_| store::read_walk_cache(index_dir)),
        walk_started: crate::tree::walk::now_ns(),
        options_hash,
        rebuilt_because,
    };
    trace.mark("walk start");
    let Walked {
        walk: mut walked,
        mut indexed,
    } = walk_tree(root, opts, old.as_ref(), up.cache.as_ref(), hint);
    trace.mark("walk");
    // A tree's first index may start from another tree's that holds nearly all its files.
    let mut seeded = None;
    if let (None, false, None, Some(store)) = (&old, full, hint, &opts.cache.dir) {
        progress.phase("looking for an index to start from");
        // The walk found nothing indexed: there was no index.
        indexed = Indexed::default();
        (old, seeded) = start_from_another(root, index_dir, &walked.sources, store, options_hash);
        trace.mark("seed");
    }
    let same_walk = match (&old, &up.cache) {
        (Some(snap), Some(c)) => {
            hint.is_none()
                && c.generation == snap.manifest.generation
                && walked.same_as_cache()
                && snap.build_error.is_none()
        }
        _ => false,
    };
    if let Some(c) = up.cache.as_ref().filter(|_| !same_walk) {
        walked.materialize(c, DEFAULT_MAX_FILE_BYTES);
    }
    // A damaged documentation or hardware part (or a hardware part an older knav did not
    // build) is built again from the text walk's list of files.
    let hw_damaged = hw_damaged || old.as_ref().is_some_and(|s| s.manifest.hw.is_none());
    let mut text = TextUpdate::walk(
        root,
        index_dir,
        old.as_ref(),
        &walked,
        same_walk,
        opts,
        docs_damaged || hw_damaged,
    );
    trace.mark("text walk");
    if let Some(snap) = &old {
        if same_walk && text.same && !docs_damaged && !hw_damaged {
            progress.finish();
            return Ok(UpdateReport {
                mode: UpdateMode::Unchanged,
                ..same_segments(snap, &walked, started, index_dir)
            });
        }
    }
    // Every file, for the diff (a walk that found the index's files as cached listed none when
    // only the text part changed).
    if let Some(c) = &up.cache {
        walked.materialize(c, DEFAULT_MAX_FILE_BYTES);
    }
    if hint.is_none() {
        indexed = old.as_ref().map(indexed_files).unwrap_or_default();
    }
    // Compare with the index first: the common "nothing changed" answer needs nothing else.
    let changes = old
        .as_ref()
        .map(|snap| compare(root, index_dir, snap, indexed, &walked, &mut text));
    trace.mark("diff");
    let builds = BuildFilesState::of(root, old.as_ref(), &walked.builds);
    let (docs, hw) = listed_parts(root, index_dir, old.as_ref(), &text);
    trace.mark("docs and hardware state");
    let beside = Beside {
        docs: &docs,
        hw: &hw,
    };
    if let (Some(snap), Some(d)) = (&old, &changes) {
        if d.changed.is_empty() && d.deleted.is_empty() {
            let report = if builds.same && docs.same && hw.same {
                up.keep_segments(snap, &walked, &text)?
            } else {
                up.replace_parts(snap, &walked, &builds, &text, beside)?
            };
            progress.finish();
            return Ok(seeded_report(report, seeded));
        }
    }
    trace.mark("inputs");
    let report = up.build(
        old, changes, walked, &builds, &text, beside, opts, progress, &mut trace,
    )?;
    Ok(seeded_report(report, seeded))
}

/// The documentation and hardware files among those the text walk listed against the index
/// `old`'s parts.
fn listed_parts(
    root: &Path,
    index_dir: &Path,
    old: Option<&Snapshot>,
    text: &TextUpdate,
) -> (crate::docs::DocsState, HwState) {
    let manifest = old.map(|s| &s.manifest);
    let docs =
        crate::docs::DocsState::of(root, manifest.and_then(|m| m.docs.as_ref()), text.listed());
    let hw = HwState::of(
        root,
        index_dir,
        manifest.and_then(|m| m.hw.as_ref()),
        text.listed(),
    );
    (docs, hw)
}

/// `report`, of an update that started from another tree's index when `seeded` says where:
/// an incremental update (even when no file differed).
fn seeded_report(mut report: UpdateReport, seeded: Option<crate::seed::Seeded>) -> UpdateReport {
    if seeded.is_some() {
        report.mode = UpdateMode::Incremental;
        report.seeded_from = seeded;
    }
    report
}

/// The index of `root` in `index_dir` started from another tree's registered in the store at
/// `store` ([`crate::seed`]), opened and checked, with where it came from; `None` when none
/// fits (or the linked parts fail their checks: the update then builds the tree whole).
fn start_from_another(
    root: &Path,
    index_dir: &Path,
    sources: &[SourceFile],
    store: &Path,
    options_hash: u64,
) -> (Option<Snapshot>, Option<crate::seed::Seeded>) {
    let Some(seeded) = crate::seed::seed(root, index_dir, sources, store, options_hash) else {
        return (None, None);
    };
    let snap = Snapshot::open(root, index_dir)
        .ok()
        .flatten()
        .filter(|snap| store::check_stamped(index_dir, snap, false).is_ok());
    let seeded = snap.as_ref().map(|_| seeded);
    (snap, seeded)
}

/// The index an update starts from, and why it is not built on when it is not.
struct Previous {
    /// The index to refresh; `None`: build a new base.
    snap: Option<Snapshot>,
    /// Why the index (or its build-file part) is rebuilt instead of refreshed.
    rebuilt_because: Option<String>,
    /// The documentation part is damaged: it is built again.
    docs_damaged: bool,
    /// The hardware part is damaged: it is built again.
    hw_damaged: bool,
}

/// Opens the index in `index_dir` to refresh it (none with `full`). An unreadable or
/// old-format index, or one built with other options (ctags options, ignore patterns), is
/// rebuilt; so is damage, never built on: a segment's means a full build, the build-file
/// part's a new part.
fn open_previous(root: &Path, index_dir: &Path, full: bool, options_hash: u64) -> Previous {
    let mut rebuilt_because = None;
    let mut docs_damaged = false;
    let mut hw_damaged = false;
    let old = if full {
        None
    } else {
        Snapshot::open(root, index_dir).unwrap_or_else(|e| {
            rebuilt_because = Some(e.cause().to_string());
            None
        })
    };
    let old = old.filter(|s| s.manifest.options_hash == options_hash);
    let snap = match old.map(|s| (store::check_stamped(index_dir, &s, false), s)) {
        Some((Err(d), mut s)) => {
            rebuilt_because = Some(d.error.to_string());
            // Any other part is built again alone; the rest stays.
            match d.kind {
                Kind::Segment => {
                    return Previous {
                        snap: None,
                        rebuilt_because,
                        docs_damaged,
                        hw_damaged,
                    }
                }
                Kind::Text => s.manifest.text = None,
                Kind::Docs => {
                    s.manifest.docs = None;
                    docs_damaged = true;
                }
                Kind::Hw => {
                    s.manifest.hw = None;
                    hw_damaged = true;
                }
                Kind::BuildFiles => {
                    s.build = None;
                    s.build_error = Some(d.error);
                }
                // Without it, the files it listed are hashed again.
                Kind::Restat => s.manifest.restat = None,
            }
            Some(s)
        }
        Some((Ok(()), s)) => {
            if let Some(e) = &s.build_error {
                rebuilt_because = Some(e.to_string());
            }
            Some(s)
        }
        None => None,
    };
    // A hardware part of another format is written again, whole.
    let mut snap = snap;
    if let Some(s) = snap.as_mut() {
        if s.manifest
            .hw
            .as_ref()
            .is_some_and(|h| h.format != crate::hw::FORMAT)
        {
            s.manifest.hw = None;
            hw_damaged = true;
        }
    }
    Previous {
        snap,
        rebuilt_because,
        docs_damaged,
        hw_damaged,
    }
}

/// One update past its walk: what every way of finishing it needs.
struct Update<'a> {
    root: &'a Path,
    index_dir: &'a Path,
    started: Instant,
    /// The last walk's listings, when the index is built on.
    cache: Option<crate::tree::walk::WalkCache>,
    /// When this walk started (ns since the epoch): the time of the walk cache it writes.
    walk_started: i64,
    /// [`options_hash`] of the build options.
    options_hash: u64,
    /// Why the index (or its build-file part) is rebuilt instead of refreshed.
    rebuilt_because: Option<String>,
}

/// What a new segment holds and where it goes in the index.
struct Layout {
    /// The files to index, in path order.
    inputs: Vec<Input>,
    /// The base segment kept beside a new delta; `None`: the new segment is the base.
    base: Option<SegmentRef>,
    /// For a delta: paths whose versions in the base are dead (changed or deleted), sorted.
    shadow: Vec<String>,
}

impl Update<'_> {
    /// Nothing to index and the same build files: the index stays; the walk cache is written
    /// when the next walk should find new listings or stats (a touched file), or when it was
    /// of another generation.
    fn keep_segments(
        &self,
        snap: &Snapshot,
        walked: &crate::tree::walk::Walk,
        text: &TextUpdate,
    ) -> Result<UpdateReport, IndexError> {
        let part = text.part(self.root, self.index_dir, false, &|| ())?;
        if part != snap.manifest.text {
            // Only text files changed: a new overlay (or text base), the rest as it was.
            let mut manifest = snap.manifest.clone();
            manifest.generation += 1;
            manifest.retired = Vec::new();
            manifest.text = part;
            manifest.published_unix = now_unix();
            store::publish(self.index_dir, &manifest)?;
            text.write_cache(self.index_dir, &manifest.text)?;
            self.write_walk_cache(walked, manifest.generation)?;
            return Ok(UpdateReport {
                mode: UpdateMode::Incremental,
                rebuilt_because: self.rebuilt_because.clone(),
                index_bytes: index_bytes(self.index_dir, &manifest),
                ..same_segments(snap, walked, self.started, self.index_dir)
            });
        }
        text.write_cache(self.index_dir, &part)?;
        let stale = self
            .cache
            .as_ref()
            .is_none_or(|c| c.generation != snap.manifest.generation);
        if !walked.same_as_cache() || stale {
            self.write_walk_cache(walked, snap.manifest.generation)?;
        }
        Ok(UpdateReport {
            mode: UpdateMode::Unchanged,
            ..same_segments(snap, walked, self.started, self.index_dir)
        })
    }

    /// Only build or documentation files changed: the segments stay, the parts that changed
    /// are replaced.
    fn replace_parts(
        &self,
        snap: &Snapshot,
        walked: &crate::tree::walk::Walk,
        builds: &BuildFilesState,
        text: &TextUpdate,
        beside: Beside<'_>,
    ) -> Result<UpdateReport, IndexError> {
        let proofs = text.proofs.as_deref();
        let part = build_files_part(self.root, self.index_dir, &walked.builds, builds, proofs)?;
        let (docs_part, docs_summary) = beside.docs.part(self.root, self.index_dir, proofs)?;
        let (hw_part, hw_summary) = beside.hw.part(self.root, self.index_dir)?;
        let mut manifest = snap.manifest.clone();
        manifest.generation += 1;
        manifest.retired = Vec::new();
        manifest.build_files = part.part;
        manifest.text = text.part(self.root, self.index_dir, false, &|| ())?;
        manifest.docs = docs_part;
        manifest.hw = hw_part;
        manifest.published_unix = now_unix();
        store::publish(self.index_dir, &manifest)?;
        text.write_cache(self.index_dir, &manifest.text)?;
        self.write_walk_cache(walked, manifest.generation)?;
        Ok(UpdateReport {
            mode: UpdateMode::Incremental,
            build_files: part.summary,
            docs: docs_summary,
            hw: hw_summary,
            rebuilt_because: self.rebuilt_because.clone(),
            index_bytes: index_bytes(self.index_dir, &manifest),
            ..same_segments(snap, walked, self.started, self.index_dir)
        })
    }

    /// The cache names the generation its stats were taken for: written at every publish.
    fn write_walk_cache(
        &self,
        walked: &crate::tree::walk::Walk,
        generation: u64,
    ) -> Result<(), IndexError> {
        let cache = walked.cache(self.cache.as_ref(), self.walk_started, generation);
        store::write_walk_cache(self.index_dir, &cache)
    }

    /// Builds a new segment of what changed (or of every file) and the build-file part when
    /// needed, then publishes them.
    #[allow(clippy::too_many_arguments)]
    fn build(
        self,
        old: Option<Snapshot>,
        changes: Option<Diff>,
        walked: crate::tree::walk::Walk,
        builds: &BuildFilesState,
        text: &TextUpdate,
        beside: Beside<'_>,
        opts: &BuildOptions,
        progress: &mut Progress,
        trace: &mut Trace,
    ) -> Result<UpdateReport, IndexError> {
        let mut report = UpdateReport {
            index_dir: self.index_dir.display().to_string(),
            dirs_read: walked.dirs_read,
            walk_errors: walk_errors(&walked),
            rebuilt_because: self.rebuilt_because.clone(),
            ..Default::default()
        };
        let layout = self.layout(old.as_ref(), changes.as_ref(), &walked, &mut report);
        trace.mark("delta plan");
        // A large build's small blocks come from mimalloc (see `crate::alloc`); a small one (a
        // refresh) keeps glibc: the switch was measured on whole-tree builds only.
        if layout.inputs.len() >= MIMALLOC_FILES && crate::alloc::small_blocks_from_mimalloc() {
            trace.mark("small blocks from mimalloc");
        }
        progress.phase("text index, docs, build files");
        let sides = Sides {
            builds,
            text,
            beside,
            full: report.mode == UpdateMode::Full,
        };
        let built = self.build_all(&walked, &layout, &sides, opts, progress, trace)?;
        let Built {
            text: text_part,
            docs: (docs_part, docs_summary),
            hw: (hw_part, hw_summary),
            build_files: part,
            ctags,
            segment:
                NewSegment {
                    dir: seg_dir,
                    meta,
                    facts,
                },
        } = built;
        report.facts = facts;
        report.docs = docs_summary;
        report.hw = hw_summary;
        report.build_files = part.summary;
        let new_segment = SegmentRef {
            dir: seg_dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            shadow_paths: layout.shadow,
        };
        // A delta keeps the base's records, and so what was proven of them.
        let restat = layout
            .base
            .as_ref()
            .and(old.as_ref())
            .and_then(|s| s.manifest.restat.clone());
        let mut manifest = Manifest {
            restat,
            version: format::VERSION,
            root: crate::indexdir::shown(self.root).display().to_string(),
            generation: old.as_ref().map_or(1, |s| s.manifest.generation + 1),
            published_unix: now_unix(),
            segments: layout.base.into_iter().chain([new_segment]).collect(),
            retired: old
                .as_ref()
                .map(|s| s.manifest.segments.iter().map(|r| r.dir.clone()).collect())
                .unwrap_or_default(),
            ctags_version: Some(ctags.version.clone()),
            options_hash: self.options_hash,
            other_files: walked.other_files,
            symlinks: walked.symlinks,
            build_files: part.part,
            text: text_part,
            docs: docs_part,
            hw: hw_part,
            ..Default::default()
        };
        drop(old);
        trace.mark("manifest");
        report.unindexed_sources = self.count_files(&mut manifest)?;
        if report.mode == UpdateMode::Full {
            // One segment: its build counted them.
            report.macro_definitions = meta.macro_definitions.clone();
        }
        trace.mark("count files");
        progress.phase("publish");
        store::publish(self.index_dir, &manifest)?;
        if let Some(store) = &opts.cache.dir {
            crate::seed::register(store, self.index_dir);
        }
        text.write_cache(self.index_dir, &manifest.text)?;
        trace.mark("publish");
        self.write_walk_cache(&walked, manifest.generation)?;
        progress.finish();
        report.files_scanned = manifest.files_scanned;
        report.files_unindexed = manifest.files_unindexed;
        report.other_files = manifest.other_files;
        report.names = meta.names;
        report.definitions = meta.defs;
        report.occurrences = meta.occurrences;
        report.index_bytes = index_bytes(self.index_dir, &manifest);
        if let Some(t) = &manifest.text {
            report.text_files = t.files;
            report.text_index_bytes = t.index_bytes;
        }
        trace.mark("walk cache + size");
        report.elapsed_ms = self.started.elapsed().as_millis() as u64;
        Ok(report)
    }

    /// Builds the parts `sides` says how to make and the segment of `layout`, each text,
    /// documentation and build-file part beside the segment where it can be.
    fn build_all(
        &self,
        walked: &crate::tree::walk::Walk,
        layout: &Layout,
        sides: &Sides<'_>,
        opts: &BuildOptions,
        progress: &mut Progress,
        trace: &mut Trace,
    ) -> Result<Built, IndexError> {
        let Sides {
            builds,
            text,
            beside,
            full,
        } = *sides;
        // The text part first, while the process is small: its lists live in mappings it gives
        // back whole, so the segment build's peak is not raised by them. The documentation and
        // build-file parts are made beside it, on a thread of their own: they use about one
        // core for a second, which the text part leaves idle at its start and end. (Kbuild and
        // Kconfig are not parsed beside the segment build: they would add to its peak memory.)
        // The text part says when it has read its files: what is left of it (its lists sorted
        // and written, one thread's work for about half a second) goes on beside the segment
        // build's start, which waited for it with a core idle.
        std::thread::scope(|s| -> Result<_, IndexError> {
            let (read, files_read) = std::sync::mpsc::channel::<()>();
            let text_part = s.spawn(move || {
                text.part(self.root, self.index_dir, full, &|| {
                    let _ = read.send(());
                })
            });
            let join_text = |h: std::thread::ScopedJoinHandle<'_, _>| {
                h.join()
                    .map_err(|_| IndexError::Build("the text index thread panicked".into()))?
            };
            let side = s.spawn(|| {
                let (root, proofs) = (self.root, text.proofs.as_deref());
                let docs = beside.docs.part(root, self.index_dir, proofs);
                let hw = beside.hw.part(root, self.index_dir);
                let builds = build_files_part(root, self.index_dir, &walked.builds, builds, proofs);
                (docs, hw, builds)
            });
            // Without the signal, the text part has ended (no new base, or an error): its
            // answer is known before the segment is built.
            let (text_part, early) = match files_read.recv() {
                Ok(()) => (Some(text_part), None),
                Err(_) => (None, Some(join_text(text_part)?)),
            };
            let (docs, hw, part) = side.join().map_err(|_| {
                IndexError::Build("the documentation and build files thread panicked".into())
            })?;
            let docs = docs?;
            let hw = hw?;
            let part = part?;
            // What these builds freed (their per-thread sets and buffers) goes back to the
            // system before the segment build grows.
            #[cfg(all(target_os = "linux", target_env = "gnu"))]
            // SAFETY: malloc_trim only releases free heap memory; no live allocation is touched.
            unsafe {
                libc::malloc_trim(0);
            }
            trace.mark("text index, docs, build files");
            let ctags = knav_ctags::Ctags::probe().map_err(|e| IndexError::Ctags(e.into()))?;
            trace.mark("probe");
            let segment = self.new_segment(walked, layout, &ctags, opts, progress)?;
            trace.mark("build segment");
            let text_part = match (text_part, early) {
                (Some(h), _) => join_text(h)?,
                (None, early) => early.flatten(),
            };
            Ok(Built {
                text: text_part,
                docs,
                hw,
                build_files: part,
                ctags,
                segment,
            })
        })
    }

    /// A delta of the files `changes` names and the old delta's, or a new base of every file;
    /// counts the changes into `report` and sets its mode.
    fn layout(
        &self,
        old: Option<&Snapshot>,
        changes: Option<&Diff>,
        walked: &crate::tree::walk::Walk,
        report: &mut UpdateReport,
    ) -> Layout {
        let plan = match (old, changes) {
            (Some(snap), Some(diff)) => {
                report.changed = diff.modified;
                report.added = diff.changed.len() as u64 - diff.modified;
                report.deleted = diff.deleted.len() as u64;
                plan_delta(self.root, self.index_dir, snap, diff)
            }
            // `changes` is `Some` whenever `old` is.
            _ => SegmentPlan::Full,
        };
        match plan {
            SegmentPlan::Full => {
                report.mode = UpdateMode::Full;
                let inputs = inputs_where(walked, |_| true);
                if old.is_none() {
                    report.added = inputs.len() as u64;
                }
                Layout {
                    inputs,
                    base: None,
                    shadow: Vec::new(),
                }
            }
            SegmentPlan::Delta {
                files,
                base,
                shadow,
            } => {
                report.mode = UpdateMode::Incremental;
                Layout {
                    inputs: inputs_where(walked, |p| files.contains(p)),
                    base: Some(base),
                    shadow,
                }
            }
        }
    }

    /// Builds the segment of `layout` in a new directory; returns it and what the build
    /// counted. A failed build leaves nothing behind.
    fn new_segment(
        &self,
        walked: &crate::tree::walk::Walk,
        layout: &Layout,
        ctags: &knav_ctags::Ctags,
        opts: &BuildOptions,
        progress: &mut Progress,
    ) -> Result<NewSegment, IndexError> {
        // Made and opened through the index directory's descriptor; written through its own.
        let part = crate::indexdir::Part::make(self.index_dir, "seg")
            .map_err(IndexError::io("cannot create a segment in", self.index_dir))?;
        let seg_dir = self.index_dir.join(part.name());
        // A delta's invocations need what every header's macros define, not its own headers'.
        let mut opts = opts.clone();
        opts.headers = Some(std::sync::Arc::new(
            walked
                .sources
                .iter()
                .filter(|f| f.path.ends_with(".h"))
                .map(|f| f.path.clone())
                .collect(),
        ));
        opts.saved_defines = layout
            .base
            .as_ref()
            .map(|base| self.index_dir.join(&base.dir).join(build::DEFINES_FILE));
        let mut unopened = None;
        let store = match &opts.cache.dir {
            Some(dir) if layout.base.is_none() || layout.inputs.len() >= FACTS_MIN_FILES => {
                match crate::factstore::FactStore::open(dir) {
                    Ok(s) => Some(std::sync::Arc::new(s)),
                    Err(e) => {
                        unopened = Some(FactsReport {
                            dir: dir.display().to_string(),
                            tally: crate::factstore::Tally {
                                not_kept: Some(format!("cannot open the store: {e}")),
                                ..Default::default()
                            },
                            ..Default::default()
                        });
                        None
                    }
                }
            }
            _ => None,
        };
        opts.facts = store.clone();
        let built = build_segment(
            self.root,
            &layout.inputs,
            part.via(),
            Some(ctags),
            &opts,
            progress,
        );
        let facts = store
            .map(|s| finish_facts(&s, opts.cache.max_bytes))
            .or(unopened);
        match built {
            Ok(meta) => Ok(NewSegment {
                dir: seg_dir,
                meta,
                facts,
            }),
            Err(e) => {
                let e = e.shown();
                part.remove();
                Err(e)
            }
        }
    }

    /// Counts the files of `manifest`'s segments, as they will be published, into it, and
    /// returns the C sources not (fully) indexed as `path: why`. The build checksummed its
    /// files as it wrote them: their stats are recorded so that the next refresh re-hashes
    /// only what changed since.
    fn count_files(&self, manifest: &mut Manifest) -> Result<Vec<String>, IndexError> {
        let fresh = Snapshot::open_unpublished(self.root, self.index_dir, manifest)?;
        store::check_stamped(self.index_dir, &fresh, true).map_err(|d| d.error)?;
        let counts = fresh.count_files();
        manifest.files_scanned = counts.scanned;
        manifest.files_unindexed = counts.unindexed + manifest.other_files;
        Ok(counts.unindexed_sources)
    }
}

/// How an update makes the parts beside its segment ([`Update::build_all`]).
struct Sides<'a> {
    /// The tree's build files against the index's part.
    builds: &'a BuildFilesState,
    /// The text part's walk.
    text: &'a TextUpdate,
    /// The documentation and hardware files against the index's parts.
    beside: Beside<'a>,
    /// A full build: the text part is built anew.
    full: bool,
}

/// The parts read from files the text walk lists, against the index's.
#[derive(Clone, Copy)]
struct Beside<'a> {
    /// The documentation files against the index's part.
    docs: &'a crate::docs::DocsState,
    /// The device trees and binding schemas against the index's part.
    hw: &'a HwState,
}

/// What [`Update::build_all`] made, not yet published.
struct Built {
    /// The text part.
    text: Option<crate::text::TextRef>,
    /// The documentation part and, when new, what reading the files found.
    docs: (Option<crate::docs::DocsRef>, Option<String>),
    /// The hardware part and, when new, what reading the files found.
    hw: (Option<crate::hw::HwRef>, Option<String>),
    /// The build-file part.
    build_files: BuildFilesPart,
    /// The ctags that indexed the segment.
    ctags: knav_ctags::Ctags,
    /// The segment.
    segment: NewSegment,
}

/// A segment built, not yet published.
struct NewSegment {
    /// Its directory.
    dir: std::path::PathBuf,
    /// What its build counted.
    meta: segment::SegmentMeta,
    /// What its build did with the fact store.
    facts: Option<FactsReport>,
}

/// Ends a build's use of the fact store `s`: publishes what it computed, then prunes the
/// store to `max_bytes`.
fn finish_facts(s: &crate::factstore::FactStore, max_bytes: u64) -> FactsReport {
    let tally = s.finish();
    let (usage, pruned) = match crate::factstore::FactStore::open(s.dir()) {
        Ok(now) => {
            let held = now.usage();
            let pruned = if held.bytes > max_bytes {
                now.prune(max_bytes)
            } else {
                crate::factstore::Usage::default()
            };
            let usage = crate::factstore::Usage {
                packs: held.packs - pruned.packs,
                entries: held.entries - pruned.entries,
                bytes: held.bytes - pruned.bytes,
            };
            (usage, pruned)
        }
        Err(_) => Default::default(),
    };
    FactsReport {
        dir: s.dir().display().to_string(),
        tally,
        usage,
        pruned,
    }
}

/// The files of `walked` to index, in path order: those `keep` names.
fn inputs_where(walked: &crate::tree::walk::Walk, keep: impl Fn(&str) -> bool) -> Vec<Input> {
    let mut inputs: Vec<Input> = walked
        .sources
        .iter()
        .map(|f| (f, false))
        .chain(walked.too_big.iter().map(|f| (f, true)))
        .filter(|(f, _)| keep(&f.path))
        .map(|(f, too_big)| Input {
            file: f.clone(),
            too_big,
        })
        .collect();
    inputs.sort_by(|a, b| a.file.path.cmp(&b.file.path));
    inputs
}

/// What an update that has something to index builds.
enum SegmentPlan {
    /// A new base segment of every file.
    Full,
    /// A new delta segment of `files` beside the old base.
    Delta {
        /// The paths the delta holds: the old delta's that still exist, and what changed.
        files: HashSet<String>,
        /// The base segment, kept.
        base: SegmentRef,
        /// Paths whose versions in the base are dead (changed or deleted), sorted.
        shadow: Vec<String>,
    },
}

/// A new delta for the changes `diff` of `snap`, or a new base when the delta would grow past
/// [`DELTA_MAX_SHARE`] of the tree.
fn plan_delta(root: &Path, index_dir: &Path, snap: &Snapshot, diff: &Diff) -> SegmentPlan {
    let base_files = snap.segments[0].file_count() as usize;
    let mut files: HashSet<String> = HashSet::new();
    let mut shadow: HashSet<String> = HashSet::new();
    for sref in snap.manifest.segments.iter().skip(1) {
        shadow.extend(sref.shadow_paths.iter().cloned());
    }
    for (s, seg) in snap.segments.iter().enumerate().skip(1) {
        for f in 0..seg.file_count() {
            if snap.is_live(s, f) {
                files.insert(seg.file_path(f).to_string());
            }
        }
    }
    files.extend(diff.changed.iter().cloned());
    for d in &diff.deleted {
        files.remove(d);
    }
    shadow.extend(files.iter().cloned());
    shadow.extend(diff.deleted.iter().cloned());
    let limit = ((base_files as f64 * DELTA_MAX_SHARE) as usize).max(DELTA_MIN_FILES);
    if files.len() > limit {
        return SegmentPlan::Full;
    }
    // A header whose macros now define other names changes files the delta does not hold:
    // those that invoke them.
    let headers: Vec<&str> = diff
        .changed
        .iter()
        .chain(&diff.deleted)
        .map(String::as_str)
        .filter(|p| p.ends_with(".h"))
        .collect();
    let base_defines = index_dir
        .join(&snap.manifest.segments[0].dir)
        .join(build::DEFINES_FILE);
    if definers_read::record_differs(root, &base_defines, &headers) {
        return SegmentPlan::Full;
    }
    let mut shadow: Vec<String> = shadow.into_iter().collect();
    shadow.sort();
    SegmentPlan::Delta {
        files,
        base: snap.manifest.segments[0].clone(),
        shadow,
    }
}

/// Re-reads every file of the current index and checks it against the checksums recorded when
/// it was built.
pub fn verify(root: &Path, index_dir: &Path) -> Result<UpdateReport, IndexError> {
    let started = Instant::now();
    let snap = Snapshot::open(root, index_dir)?.ok_or_else(|| IndexError::NoIndex {
        dir: index_dir.to_path_buf(),
    })?;
    snap.verify().map_err(IndexError::rebuild_full)?;
    Ok(UpdateReport {
        mode: UpdateMode::Verified,
        files_scanned: snap.manifest.files_scanned,
        files_unindexed: snap.manifest.files_unindexed,
        other_files: snap.manifest.other_files,
        index_bytes: index_bytes(index_dir, &snap.manifest),
        elapsed_ms: started.elapsed().as_millis() as u64,
        index_dir: index_dir.display().to_string(),
        ..Default::default()
    })
}

fn walk_errors(walked: &crate::tree::walk::Walk) -> Vec<String> {
    walked
        .errors
        .iter()
        .take(store::MAX_UNINDEXED_LISTED)
        .cloned()
        .collect()
}
