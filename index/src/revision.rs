//! A git revision of a tree as a directory every part of the index reads as it reads a tree:
//! the revision's files are hard links to its blobs, written once each by object id under
//! `revs/blobs`, so revisions share the bytes of the files they share, and each revision has
//! its own index beside its files. Nothing of the repository's work tree, index or HEAD is
//! touched. The most recently used [`KEEP`] revisions are kept (and any used in the last ten
//! minutes or being indexed); a blob goes with the last
//! revision that links it.
//!
//! ```text
//! revs/lock                 held while a revision is written or revisions are evicted
//! revs/blobs/ab/cdef…       one file per blob (read-only), named by object id
//! revs/t-<tree id>/tree/…   the revision's files: hard links to blobs (symbolic links as such)
//! revs/t-<tree id>/index/   its knav index
//! revs/t-<tree id>/rev.json what it is (commit, the name asked, files); its mtime: last use
//! ```
//!
//! A revision is keyed by the tree of the root's directory, not by the commit: two commits
//! with the same files share one index.

use std::collections::HashSet;
use std::fmt;
use std::fs::{self, File};
use std::io::{self, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::git::{self, EntryKind, GitError, Resolved};
use crate::progress::Progress;

/// Revisions kept: the least recently used beyond these are removed after a new one is made.
pub const KEEP: usize = 8;

/// A revision used this recently (seconds) is never removed: a query or a server may still be
/// reading its files (each use marks it), whatever [`KEEP`] says.
const IN_USE_S: u64 = 600;

/// True while a build holds the lock of the index of the revision in `dir`.
fn building(dir: &Path) -> bool {
    File::open(dir.join("index").join("lock"))
        .is_ok_and(|f| matches!(f.try_lock_shared(), Err(std::fs::TryLockError::WouldBlock)))
}

/// The record of a written revision.
const RECORD: &str = "rev.json";
/// The lock of the revisions directory.
const LOCK: &str = "lock";
/// The blobs' directory.
const BLOBS: &str = "blobs";
/// A revision directory's name before its tree id.
const PREFIX: &str = "t-";

/// What went wrong making a revision's files.
#[derive(Debug, Clone)]
pub enum RevError {
    /// git could not say what the revision holds.
    Git(GitError),
    /// Writing the revision's files failed.
    Io {
        /// What was being done.
        what: &'static str,
        /// Where.
        path: PathBuf,
        /// The system's error.
        source: Arc<io::Error>,
    },
}

impl RevError {
    /// True when the revision names nothing (the CLI's usage error, exit 2).
    pub fn is_unknown_revision(&self) -> bool {
        matches!(self, RevError::Git(GitError::UnknownRevision { .. }))
    }
}

impl fmt::Display for RevError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RevError::Git(e) => e.fmt(f),
            RevError::Io { what, path, source } => write!(
                f,
                "{what} {}: {source}; free space there or set KNAV_INDEX_DIR to another \
                 directory",
                path.display()
            ),
        }
    }
}

impl std::error::Error for RevError {}

impl From<GitError> for RevError {
    fn from(e: GitError) -> Self {
        RevError::Git(e)
    }
}

fn io_err<'a>(what: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> RevError + 'a {
    move |e| RevError::Io {
        what,
        path: path.to_path_buf(),
        source: Arc::new(e),
    }
}

/// What `rev.json` says of a revision.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Record {
    /// The tree id of the root's directory.
    pub tree: String,
    /// The commit it was made for.
    pub commit: String,
    /// The revision as asked when it was made.
    pub asked: String,
    /// Files (and symbolic links) written.
    pub files: u64,
    /// Entries left out: submodules, and paths no tree can hold (`..`, empty parts).
    pub skipped: u64,
    /// When it was made (seconds since the epoch).
    pub made_unix: u64,
}

/// A revision's files, ready to index.
#[derive(Debug, Clone)]
pub struct Revision {
    /// The revision as git resolved it.
    pub resolved: Resolved,
    /// Its directory (`revs/t-<tree id>`).
    pub dir: PathBuf,
    /// Blobs written for it now (0 when it was there already).
    pub blobs_written: u64,
}

impl Revision {
    /// The tree to index: the revision's files.
    pub fn root(&self) -> PathBuf {
        self.dir.join("tree")
    }

    /// Its index directory.
    pub fn index_dir(&self) -> PathBuf {
        self.dir.join("index")
    }
}

/// A kept revision, as `knav status` lists it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Kept {
    /// Its record.
    #[serde(flatten)]
    pub record: Record,
    /// Last used (seconds since the epoch).
    pub used_unix: u64,
    /// True when its index has been built.
    pub indexed: bool,
}

/// Makes (or finds) the files of revision `rev` of the tree at `root` under `revs`, and marks
/// it used.
pub fn materialize(
    root: &Path,
    revs: &Path,
    rev: &str,
    progress: &mut Progress,
) -> Result<Revision, RevError> {
    let resolved = crate::resolved::resolve(root, revs, rev)?;
    make(root, revs, resolved, progress)
}

/// The directory of revision `resolved` under `revs`.
pub fn dir_of(revs: &Path, resolved: &Resolved) -> PathBuf {
    revs.join(format!("{PREFIX}{}", resolved.tree))
}

/// [`materialize`] for a revision git has resolved.
pub fn make(
    root: &Path,
    revs: &Path,
    resolved: Resolved,
    progress: &mut Progress,
) -> Result<Revision, RevError> {
    let dir = dir_of(revs, &resolved);
    let found = |resolved, dir: PathBuf| {
        touch(&dir);
        Ok(Revision {
            resolved,
            dir,
            blobs_written: 0,
        })
    };
    if dir.join(RECORD).is_file() {
        return found(resolved, dir);
    }
    fs::create_dir_all(revs).map_err(io_err("cannot create", revs))?;
    if let Some(index_dir) = revs.parent() {
        crate::disk::ignored_by_git(index_dir);
    }
    let lock_path = revs.join(LOCK);
    let lock = File::create(&lock_path).map_err(io_err("cannot create", &lock_path))?;
    lock.lock().map_err(io_err("cannot lock", &lock_path))?;
    // Another process may have made it while this one waited for the lock.
    if dir.join(RECORD).is_file() {
        return found(resolved, dir);
    }
    remove_unfinished(revs);
    let written = write_revision(root, revs, &resolved, &dir, progress)?;
    evict(revs, KEEP, &dir);
    Ok(Revision {
        resolved,
        dir,
        blobs_written: written,
    })
}

/// Writes the revision's blobs and links, then its record, and renames its directory into
/// place; the blobs written.
fn write_revision(
    root: &Path,
    revs: &Path,
    resolved: &Resolved,
    dir: &Path,
    progress: &mut Progress,
) -> Result<u64, RevError> {
    let phase = format!("reading {} from git", resolved.asked);
    progress.phase(&phase);
    let entries = git::list_tree(root, &resolved.tree)?;
    let blobs = revs.join(BLOBS);
    let mut seen = HashSet::new();
    let missing: Vec<&str> = entries
        .iter()
        .filter(|e| e.kind != EntryKind::Submodule)
        .map(|e| e.oid.as_str())
        .filter(|oid| seen.insert(*oid) && !blob_path(&blobs, oid).exists())
        .collect();
    read_missing(root, &blobs, &missing, &phase, progress)?;
    let total = missing.len() as u64;
    let tmp = revs.join(format!(
        "{PREFIX}{}.tmp-{}",
        resolved.tree,
        std::process::id()
    ));
    let tree = tmp.join("tree");
    fs::create_dir_all(&tree).map_err(io_err("cannot create", &tree))?;
    let (files, skipped) = link_all(&entries, &blobs, &tree)?;
    let record = Record {
        tree: resolved.tree.clone(),
        commit: resolved.commit.clone(),
        asked: resolved.asked.clone(),
        files,
        skipped,
        made_unix: now_unix(),
    };
    let record_path = tmp.join(RECORD);
    let json = serde_json::to_vec_pretty(&record).unwrap_or_default();
    fs::write(&record_path, json).map_err(io_err("cannot write", &record_path))?;
    // A directory without a record is what an index build left after an eviction removed the
    // revision under it: nothing to keep.
    if dir.exists() && !dir.join(RECORD).is_file() {
        let _ = fs::remove_dir_all(dir);
    }
    fs::rename(&tmp, dir).map_err(io_err("cannot publish the revision", dir))?;
    progress.finish();
    Ok(total)
}

/// Links the files of `entries` into `tree` (symbolic links made as such), directories first,
/// then the links on every core; `(files, entries skipped)`.
fn link_all(entries: &[git::Entry], blobs: &Path, tree: &Path) -> Result<(u64, u64), RevError> {
    use rayon::prelude::*;
    let mut dirs: Vec<PathBuf> = Vec::new();
    let mut made: HashSet<PathBuf> = HashSet::new();
    let mut links: Vec<(&git::Entry, PathBuf)> = Vec::with_capacity(entries.len());
    let mut skipped = 0u64;
    for e in entries {
        let Some(rel) = safe_path(&e.path).filter(|_| e.kind != EntryKind::Submodule) else {
            skipped += 1;
            continue;
        };
        let to = tree.join(&rel);
        if let Some(parent) = to.parent() {
            if made.insert(parent.to_path_buf()) {
                dirs.push(parent.to_path_buf());
            }
        }
        links.push((e, to));
    }
    for d in &dirs {
        fs::create_dir_all(d).map_err(io_err("cannot create", d))?;
    }
    links.par_iter().try_for_each(|(e, to)| {
        let from = blob_path(blobs, &e.oid);
        if e.kind == EntryKind::Symlink {
            let target = fs::read(&from).map_err(io_err("cannot read", &from))?;
            use std::os::unix::ffi::OsStrExt;
            std::os::unix::fs::symlink(std::ffi::OsStr::from_bytes(&target), to)
                .map_err(io_err("cannot make the symbolic link", to))
        } else {
            fs::hard_link(&from, to).map_err(io_err("cannot link", to))
        }
    })?;
    Ok((links.len() as u64, skipped))
}

/// Reads the blobs `missing` from git into `blobs`, with two readers at once (git inflates and
/// resolves deltas on one core each).
fn read_missing(
    root: &Path,
    blobs: &Path,
    missing: &[&str],
    phase: &str,
    progress: &mut Progress,
) -> Result<(), RevError> {
    use std::sync::atomic::{AtomicU64, Ordering};
    let total = missing.len() as u64;
    let (done, bytes) = (AtomicU64::new(0), AtomicU64::new(0));
    let half = missing.len().div_ceil(2);
    let (first, second) = missing.split_at(half);
    let take = |oid: &str, data: &[u8]| {
        write_blob(blobs, oid, data)?;
        done.fetch_add(1, Ordering::Relaxed);
        bytes.fetch_add(data.len() as u64, Ordering::Relaxed);
        Ok(())
    };
    let (a, b) = std::thread::scope(|s| {
        let other = s.spawn(|| git::read_blobs(root, second, take));
        let mine = git::read_blobs(root, first, |oid, data| {
            take(oid, data)?;
            let n = done.load(Ordering::Relaxed);
            progress.update(phase, n, total, bytes.load(Ordering::Relaxed), 0);
            Ok(())
        });
        let theirs = other.join().unwrap_or_else(|_| {
            Err(GitError::Failed {
                what: "git cat-file --batch".into(),
                said: "the reader thread panicked".into(),
            })
        });
        (mine, theirs)
    });
    a.and(b).map_err(RevError::from)
}

/// True when `dir` is (or is below) the files of a kept revision: `revs/t-<tree id>/tree`.
pub fn is_revision_tree(dir: &Path) -> bool {
    dir.ancestors().any(|d| {
        d.file_name().is_some_and(|n| n == "tree")
            && d.parent().is_some_and(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with(PREFIX))
                    && p.join(RECORD).is_file()
            })
    })
}

/// Where blob `oid` is kept.
fn blob_path(blobs: &Path, oid: &str) -> PathBuf {
    blobs.join(&oid[..2]).join(&oid[2..])
}

/// Writes blob `oid` read-only under `blobs`, whole or not at all (a temporary name, then a
/// rename).
fn write_blob(blobs: &Path, oid: &str, data: &[u8]) -> io::Result<()> {
    let path = blob_path(blobs, oid);
    let parent = path.parent().unwrap_or(blobs);
    fs::create_dir_all(parent)?;
    let tmp = parent.join(format!("{}.tmp-{}", &oid[2..], std::process::id()));
    let mut f = File::create(&tmp)?;
    f.write_all(data)?;
    f.set_permissions(fs::Permissions::from_mode(0o444))?;
    drop(f);
    fs::rename(&tmp, &path)
}

/// A path git stored, as a relative path below the revision's tree; None for one no tree
/// can hold safely (absolute, `.` or `..` parts, empty parts, `.git`).
fn safe_path(raw: &[u8]) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let mut out = PathBuf::new();
    for part in raw.split(|&b| b == b'/') {
        if matches!(part, b"" | b"." | b"..") || part.eq_ignore_ascii_case(b".git") {
            return None;
        }
        out.push(std::ffi::OsStr::from_bytes(part));
    }
    Some(out)
}

/// Marks a revision used now (its record's mtime).
fn touch(dir: &Path) {
    if let Ok(f) = File::options().append(true).open(dir.join(RECORD)) {
        let _ = f.set_modified(std::time::SystemTime::now());
    }
}

/// Removes what a writer killed midway left: temporary revision directories and blobs.
/// Called with the lock held, so no writer is running.
fn remove_unfinished(revs: &Path) {
    for e in fs::read_dir(revs).into_iter().flatten().flatten() {
        let name = e.file_name();
        if name.to_string_lossy().contains(".tmp-") {
            let _ = fs::remove_dir_all(e.path());
        }
    }
    for sub in fs::read_dir(revs.join(BLOBS))
        .into_iter()
        .flatten()
        .flatten()
    {
        for e in fs::read_dir(sub.path()).into_iter().flatten().flatten() {
            if e.file_name().to_string_lossy().contains(".tmp-") {
                let _ = fs::remove_file(e.path());
            }
        }
    }
}

/// The revisions kept under `revs`, most recently used first.
pub fn list(revs: &Path) -> Vec<Kept> {
    let mut kept: Vec<Kept> = fs::read_dir(revs)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.starts_with(PREFIX) && !name.contains(".tmp-")
        })
        .filter_map(|e| {
            let path = e.path().join(RECORD);
            let record: Record = serde_json::from_slice(&fs::read(&path).ok()?).ok()?;
            let used_unix = fs::metadata(&path)
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_secs());
            // The manifest a published index has (`store::CURRENT`).
            let indexed = e.path().join("index").join("CURRENT").is_file();
            Some(Kept {
                record,
                used_unix,
                indexed,
            })
        })
        .collect();
    kept.sort_by(|a, b| {
        b.used_unix
            .cmp(&a.used_unix)
            .then(a.record.tree.cmp(&b.record.tree))
    });
    kept
}

/// Removes the least recently used revisions beyond `keep` (never `current`), then the blobs
/// no kept revision links. Called with the lock held.
fn evict(revs: &Path, keep: usize, current: &Path) {
    let kept = list(revs);
    let mut removed = false;
    let now = now_unix();
    for k in kept.iter().skip(keep) {
        let dir = revs.join(format!("{PREFIX}{}", k.record.tree));
        // Not one a reader may still be reading (each use marks it) or a build is indexing.
        let in_use = now.saturating_sub(k.used_unix) < IN_USE_S || building(&dir);
        if dir != current && !in_use {
            let _ = fs::remove_dir_all(&dir);
            removed = true;
        }
    }
    if !removed {
        return;
    }
    // A blob only the blobs directory links is in no kept revision.
    use std::os::unix::fs::MetadataExt;
    for sub in fs::read_dir(revs.join(BLOBS))
        .into_iter()
        .flatten()
        .flatten()
    {
        for e in fs::read_dir(sub.path()).into_iter().flatten().flatten() {
            if e.metadata().is_ok_and(|m| m.nlink() <= 1) {
                let _ = fs::remove_file(e.path());
            }
        }
    }
}

fn now_unix() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A revision directory under `revs` whose record was last used `ago` seconds ago.
    fn kept_revision(revs: &Path, tree: &str, ago: u64) -> PathBuf {
        let dir = revs.join(format!("{PREFIX}{tree}"));
        fs::create_dir_all(dir.join("tree")).unwrap();
        let record = Record {
            tree: tree.into(),
            commit: tree.into(),
            asked: tree.into(),
            files: 0,
            skipped: 0,
            made_unix: 0,
        };
        fs::write(dir.join(RECORD), serde_json::to_vec(&record).unwrap()).unwrap();
        let when = std::time::SystemTime::now() - std::time::Duration::from_secs(ago);
        File::options()
            .append(true)
            .open(dir.join(RECORD))
            .unwrap()
            .set_modified(when)
            .unwrap();
        dir
    }

    #[test]
    fn eviction_spares_revisions_in_use_or_being_indexed() {
        let revs = std::env::temp_dir().join(format!("knav-evict-{}", std::process::id()));
        let _ = fs::remove_dir_all(&revs);
        let current = kept_revision(&revs, "a", 0);
        let recent = kept_revision(&revs, "b", 60);
        let old = kept_revision(&revs, "c", 7200);
        let building_one = kept_revision(&revs, "d", 7200);
        fs::create_dir_all(building_one.join("index")).unwrap();
        let lock = File::create(building_one.join("index/lock")).unwrap();
        lock.lock().unwrap();
        evict(&revs, 1, &current);
        assert!(current.exists() && recent.exists() && building_one.exists());
        assert!(!old.exists());
        drop(lock);
        evict(&revs, 1, &current);
        assert!(!building_one.exists() && recent.exists());
        let _ = fs::remove_dir_all(&revs);
    }

    #[test]
    fn safe_path_refuses_what_would_leave_the_tree() {
        assert_eq!(
            safe_path(b"fs/read_write.c"),
            Some(PathBuf::from("fs/read_write.c"))
        );
        assert_eq!(safe_path(b"../etc/passwd"), None);
        assert_eq!(safe_path(b"a/../../b"), None);
        assert_eq!(safe_path(b"/abs"), None);
        assert_eq!(safe_path(b"a//b"), None);
        assert_eq!(safe_path(b"a/.git/config"), None);
        assert_eq!(safe_path(b"a/./b"), None);
    }
}
