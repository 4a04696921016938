//! index_status / `knav status`: whether a tree's index is ready and what it holds, read
//! without building or refreshing anything: its generation and age, files indexed and not
//! (by reason), its size on disk, whether a build holds the index directory's lock, and (for
//! `knav status`) which C sources changed since it was built.

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::envelope::{Build, Envelope, IndexStatus, Results, SinceIndexed};
use knav_index::format::FileStatus;
use knav_index::store::{read_manifest, Snapshot};

/// The pid of the process holding `index_dir`'s build lock, `Some(None)` when it is held by one
/// that did not say; `None` when no build runs. Opens the lock read-only, through the index
/// directory (a link or a FIFO planted as the lock is no lock), and creates nothing.
pub fn build_holder(index_dir: &Path) -> Option<Option<u32>> {
    let dir = knav_index::indexdir::IndexDir::open(index_dir).ok()?;
    let mut file = dir.open_file("lock").ok()?;
    match file.try_lock_shared() {
        Ok(()) => None,
        Err(std::fs::TryLockError::WouldBlock) => Some({
            let mut pid = String::new();
            std::io::Read::read_to_string(&mut std::io::Read::take(&mut file, 64), &mut pid)
                .ok()
                .and_then(|_| pid.trim().parse().ok())
        }),
        Err(std::fs::TryLockError::Error(_)) => None,
    }
}

/// Bytes of the files under `dir`, recursively (links not followed), without the revisions
/// kept there (status lists them apart).
fn size_on_disk(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .filter(|e| e.file_name() != REVS)
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => size_on_disk(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}

/// Where a tree's git revisions are kept, below its index directory.
pub const REVS: &str = "revs";

/// The status of the index of `root` in `index_dir`; `progress`: how far a build this process
/// runs is.
pub fn index_status(root: &Path, index_dir: &Path, progress: Option<String>) -> Envelope {
    let root_s = root.display().to_string();
    let mut st = IndexStatus {
        index_dir: index_dir.display().to_string(),
        size_bytes: size_on_disk(index_dir),
        revisions: knav_index::git::revision::list(&index_dir.join(REVS)),
        build: build_holder(index_dir).map(|pid| Build {
            pid,
            progress: None,
        }),
        ..Default::default()
    };
    if let Some(p) = progress {
        st.build.get_or_insert_with(Build::default).progress = Some(p);
    }
    let mut env = Envelope::new("index_status", &root_s);
    match Snapshot::open(root, index_dir) {
        Ok(Some(snap)) => {
            st.indexed = true;
            describe(&snap, &mut st);
        }
        Ok(None) => {
            env.message = Some(match &st.build {
                Some(_) => format!("{root_s} is being indexed for the first time"),
                None => format!("{root_s} has no index yet; run update_index or `knav index`"),
            });
        }
        Err(e) => {
            // A manifest from another knav or a damaged index: say what is there.
            if let Ok(Some(m)) = read_manifest(index_dir) {
                st.generation = m.generation;
                st.age_s = age(m.published_unix);
            }
            st.unusable = Some(e.to_string());
        }
    }
    env.total = 1;
    env.results = Some(Results::Status(Box::new(st)));
    env.next_tools = vec!["update_index"];
    env
}

/// Seconds since `unix`.
fn age(unix: u64) -> u64 {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    now.saturating_sub(unix)
}

/// Fills in what the open index holds.
fn describe(snap: &Snapshot, st: &mut IndexStatus) {
    let m = &snap.manifest;
    st.generation = m.generation;
    st.age_s = age(m.published_unix);
    st.files_scanned = m.files_scanned;
    st.files_unindexed = m.files_unindexed;
    st.unindexed.not_c = m.other_files;
    st.symlinks = m.symlinks;
    for seg in &snap.segments {
        for (family, n) in &seg.meta.macro_definitions {
            *st.macro_definitions.entry(family.clone()).or_default() += n;
        }
    }
    // A segment counts the names made in all its files; those of a file a later segment
    // replaced (or that was deleted) are no longer in the index.
    for (s, seg) in snap.segments.iter().enumerate() {
        for f in (0..seg.file_count()).filter(|&f| !snap.is_live(s, f)) {
            for d in seg.file_defs(f) {
                let Some(via) = d.via else { continue };
                let family = knav_index::counted_family(via);
                if let Some(n) = st.macro_definitions.get_mut(family) {
                    *n = n.saturating_sub(1);
                }
            }
        }
    }
    st.macro_definitions.retain(|_, n| *n > 0);
    for (s, f) in snap.live_files() {
        let u = &mut st.unindexed;
        match snap.segments[s].file_stat(f).status {
            FileStatus::Indexed => {}
            FileStatus::NoDefinitions => u.no_definitions += 1,
            FileStatus::Binary => u.binary += 1,
            FileStatus::TooBig => u.too_big += 1,
            FileStatus::Unreadable => u.unreadable += 1,
        }
    }
}

/// Files [`add_changes`] names at most.
const CHANGES_NAMED: usize = 10;

/// Adds to the status in `env` (of `root`'s index in `index_dir`) what changed in the tree's
/// C sources since the index was built: nothing when `clean` (the watcher daemon saw nothing
/// change), else what a scan finds, refreshing nothing. A scan that fails leaves it out.
pub fn add_changes(env: &mut Envelope, root: &Path, index_dir: &Path, clean: bool) {
    let Some(Results::Status(st)) = env.results.as_mut() else {
        return;
    };
    if !st.indexed {
        return;
    }
    if clean {
        st.since_indexed = Some(SinceIndexed {
            by: "watcher".into(),
            ..SinceIndexed::default()
        });
        return;
    }
    let Ok(opts) = knav_index::BuildOptions::for_root(root) else {
        return;
    };
    let Ok(Some(c)) = knav_index::changes(root, index_dir, &opts) else {
        return;
    };
    let files = (c.added.iter().map(|p| format!("added {p}")))
        .chain(c.changed.iter().map(|p| format!("changed {p}")))
        .chain(c.deleted.iter().map(|p| format!("deleted {p}")))
        .take(CHANGES_NAMED)
        .collect();
    st.since_indexed = Some(SinceIndexed {
        by: "scan".into(),
        added: c.added.len() as u64,
        changed: c.changed.len() as u64,
        deleted: c.deleted.len() as u64,
        files,
    });
}
