//! A git revision of a tree as a directory every part of the index reads as it reads a tree:
//! the revision's files are hard links to its blobs, written once each by object id under
//! `revs/blobs`, so revisions share the bytes of the files they share, and each revision has
//! its own index beside its files. Nothing of the repository's work tree, index or HEAD is
//! touched. Only what an index reads is written: a file over the size cap, a binary file (a NUL
//! in its first 8 KiB, as the build decides), the commit's `.knav.toml` and `.knav` are left
//! out. At most [`KEEP`] revisions and [`MAX_BYTES`] of blobs and indexes are kept: the least
//! recently used go first, those used in the last ten minutes (or being indexed) last; a blob
//! goes with the last revision that links it. A revision that fails removes what it wrote.
//!
//! ```text
//! revs/lock                 held while a revision is written or revisions are evicted
//! revs/blobs/ab/cdef…       one file per blob (read-only), named by object id
//! revs/t-<tree id>/tree/…   the revision's files: hard links to blobs (symbolic links as such)
//! revs/t-<tree id>/index/   its knav index
//! revs/t-<tree id>/rev.json what it is (commit, the name asked, files); its mtime: last use
//! ```
//!
//! The directory is untrusted input ([`crate::indexdir`]): everything below it is reached
//! through descriptors without following a link, a name is only ever made from an object id
//! checked to be one, and a revision directory is used only when it is what knav makes (a
//! directory whose record names its tree, with a `tree` directory, no link).
//!
//! A revision is keyed by the tree of the root's directory, not by the commit: two commits
//! with the same files share one index.

use std::collections::{HashMap, HashSet};
use std::ffi::{CString, OsStr};
use std::fmt;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use crate::git::{self, EntryKind, GitError, Resolved};
use crate::indexdir::{
    IndexDir, Kind, REV_PREFIX as PREFIX, REV_RECORD as RECORD, REV_TREE as TREE,
};
use crate::progress::Progress;

/// Revisions kept: the least recently used beyond these are removed after a new one is made.
pub const KEEP: usize = 8;

/// Bytes kept (blobs and the revisions' indexes): the least recently used revisions beyond
/// this are removed after a new one is made (never the one just made).
pub const MAX_BYTES: u64 = 4 << 30;

/// A revision used this recently (seconds) is removed after the others: a query or a server
/// may still be reading its files (each use marks it). It never keeps more than [`KEEP`] or
/// [`MAX_BYTES`].
const IN_USE_S: u64 = 600;

/// A symbolic link's target read at most (Linux's PATH_MAX).
const LINK_CAP: u64 = 4096;
/// A record read at most.
const RECORD_CAP: u64 = 64 << 10;
/// The bytes looked at for a NUL to call a file binary (as `build` does).
const BINARY_PROBE: usize = 8192;

/// The lock of the revisions directory.
const LOCK: &str = "lock";
/// The blobs' directory.
const BLOBS: &str = "blobs";
/// A revision's index.
const INDEX: &str = "index";

/// True while a build holds the lock of the index of revision `name`.
fn building(revs: &IndexDir, name: &OsStr) -> bool {
    revs.sub(name)
        .and_then(|d| d.sub(INDEX))
        .and_then(|i| i.open_file("lock"))
        .is_ok_and(|f| matches!(f.try_lock_shared(), Err(std::fs::TryLockError::WouldBlock)))
}

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
    /// Something below the index directory is not what knav makes there (a link, a file in a
    /// directory's place, a record naming another tree): left alone, and said.
    Refused(String),
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
            RevError::Refused(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for RevError {}

impl From<GitError> for RevError {
    fn from(e: GitError) -> Self {
        RevError::Git(e)
    }
}

/// An I/O error while doing `what` at `path`; [`crate::indexdir`]'s refusals (a link, a file
/// where a directory belongs, another user's directory) say so themselves.
fn io_err<'a>(what: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> RevError + 'a {
    move |e| {
        if e.kind() == io::ErrorKind::Other {
            return RevError::Refused(e.to_string());
        }
        RevError::Io {
            what,
            path: path.to_path_buf(),
            source: Arc::new(e),
        }
    }
}

/// `path` refused as not what knav makes there.
fn not_knavs(path: &Path, what: &str) -> RevError {
    RevError::Refused(format!(
        "{}: {what}, not a revision knav made; knav neither follows nor reads it: remove it \
         (`rm -r` removes a link, not what it names) and ask again",
        path.display()
    ))
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
    /// Entries left out: submodules, paths no tree can hold (`..`, empty parts), files the
    /// index does not read (over the size cap, binary), the commit's `.knav.toml` and `.knav`.
    pub skipped: u64,
    /// When it was made (seconds since the epoch).
    pub made_unix: u64,
    /// Bytes of the files written, as git gave their sizes (0 in a record from before this was
    /// kept: then unknown).
    #[serde(default)]
    pub file_bytes: u64,
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
        self.dir.join(TREE)
    }

    /// Its index directory.
    pub fn index_dir(&self) -> PathBuf {
        self.dir.join(INDEX)
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
    let resolved = crate::git::resolved::resolve(root, revs, rev)?;
    make(root, revs, resolved, progress)
}

/// The directory of revision `resolved` under `revs` (its ids are checked by [`make`] and
/// [`check_kept`] before anything below it is used).
pub fn dir_of(revs: &Path, resolved: &Resolved) -> PathBuf {
    revs.join(format!("{PREFIX}{}", resolved.tree))
}

/// The name of revision `resolved`'s directory, once its ids are checked to be object ids (a
/// remembered resolution is read from the index directory, which anyone may have written).
fn dir_name(resolved: &Resolved) -> Result<String, RevError> {
    if !git::is_object_id(&resolved.tree) || !git::is_object_id(&resolved.commit) {
        return Err(RevError::Refused(format!(
            "revision {} resolved to tree '{}' of commit '{}', which are not object ids; \
             remove the index directory's revs/resolved.json and ask again",
            resolved.asked, resolved.tree, resolved.commit
        )));
    }
    Ok(format!("{PREFIX}{}", resolved.tree))
}

/// Checks that revision `resolved`, when kept under `revs`, is one knav made: a server calls
/// it before it reads a revision's files or index.
pub fn check_kept(revs: &Path, resolved: &Resolved) -> Result<(), RevError> {
    let name = dir_name(resolved)?;
    if let Some(revs) = open_revs(revs, false)? {
        kept(&revs, &name, &resolved.tree)?;
    }
    Ok(())
}

/// The revisions' directory `revs`, opened (and made, with `create`) below its index
/// directory; `None` when it is not there and not to be made.
fn open_revs(revs: &Path, create: bool) -> Result<Option<IndexDir>, RevError> {
    let index = revs.parent().unwrap_or(Path::new("."));
    let name = revs.file_name().unwrap_or(OsStr::new("revs"));
    let opened = if create {
        IndexDir::create(index)
    } else {
        IndexDir::open(index)
    };
    let index_dir = match opened {
        Ok(d) => d,
        Err(e) if !create && e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_err("cannot open the index directory", index)(e)),
    };
    if create {
        index_dir.ignore_in_git();
    } else if index_dir.kind(name) == Kind::Missing {
        return Ok(None);
    }
    let opened = if create {
        index_dir.sub_or_create(name)
    } else {
        index_dir.sub(name)
    };
    opened.map(Some).map_err(io_err("cannot open", revs))
}

/// True when revision directory `name` is there and is one knav made for `tree`: a directory
/// whose record names `tree`, with a `tree` directory and at most an `index` directory
/// beside it. A directory without a record is an unfinished one (false); anything else is
/// refused.
fn kept(revs: &IndexDir, name: &str, tree: &str) -> Result<bool, RevError> {
    let path = revs.join(name);
    match revs.kind(name) {
        Kind::Missing => return Ok(false),
        Kind::Dir => {}
        Kind::Link => return Err(not_knavs(&path, "a symbolic link")),
        _ => return Err(not_knavs(&path, "not a directory")),
    }
    let dir = revs.sub(name).map_err(io_err("cannot open", &path))?;
    match dir.kind(RECORD) {
        Kind::Missing => return Ok(false),
        Kind::File => {}
        _ => return Err(not_knavs(&path.join(RECORD), "not a regular file")),
    }
    let bytes = dir
        .read(RECORD, RECORD_CAP)
        .map_err(io_err("cannot read", &path))?;
    let record: Record = serde_json::from_slice(&bytes)
        .map_err(|e| not_knavs(&path.join(RECORD), &format!("unreadable ({e})")))?;
    if record.tree != tree {
        return Err(not_knavs(&path.join(RECORD), "a record of another tree"));
    }
    for (sub, may_be_missing) in [(TREE, false), (INDEX, true)] {
        match dir.kind(sub) {
            Kind::Dir => {}
            Kind::Missing if may_be_missing => {}
            Kind::Link => return Err(not_knavs(&path.join(sub), "a symbolic link")),
            _ => return Err(not_knavs(&path.join(sub), "not a directory")),
        }
    }
    Ok(true)
}

/// [`materialize`] for a revision git has resolved.
pub fn make(
    root: &Path,
    revs: &Path,
    resolved: Resolved,
    progress: &mut Progress,
) -> Result<Revision, RevError> {
    let name = dir_name(&resolved)?;
    let dir = revs.join(&name);
    let found = |revs_dir: &IndexDir, resolved, dir: PathBuf| {
        touch(revs_dir, &name);
        Ok(Revision {
            resolved,
            dir,
            blobs_written: 0,
        })
    };
    if let Some(revs_dir) = open_revs(revs, false)? {
        if kept(&revs_dir, &name, &resolved.tree)? {
            return found(&revs_dir, resolved, dir);
        }
    }
    let revs_dir = open_revs(revs, true)?.ok_or_else(|| not_knavs(revs, "missing"))?;
    let lock = revs_dir
        .lock_file(LOCK)
        .map_err(io_err("cannot create", &revs.join(LOCK)))?;
    lock.lock()
        .map_err(io_err("cannot lock", &revs.join(LOCK)))?;
    // Another process may have made it while this one waited for the lock.
    if kept(&revs_dir, &name, &resolved.tree)? {
        return found(&revs_dir, resolved, dir);
    }
    remove_unfinished(&revs_dir);
    let tmp = format!("{name}.tmp-{}", std::process::id());
    let written = match write_revision(root, &revs_dir, &resolved, (&name, &tmp), progress) {
        Ok(n) => n,
        Err(e) => {
            // Nothing of a failed revision stays: its directory, and the blobs it added that
            // no revision links.
            let _ = revs_dir.remove_tree(&tmp);
            if let Ok(blobs) = revs_dir.sub(BLOBS) {
                sweep_blobs(&blobs);
            }
            return Err(e);
        }
    };
    evict(&revs_dir, (KEEP, MAX_BYTES), &name);
    Ok(Revision {
        resolved,
        dir,
        blobs_written: written,
    })
}

/// An entry of the revision's tree to write, with its path's parts.
type Wanted<'a> = (&'a git::Entry, PathBuf);

/// The entries an index reads, as paths below the tree; and how many were left out.
fn wanted(entries: &[git::Entry]) -> (Vec<Wanted<'_>>, u64) {
    let max = crate::tree::beneath::DEFAULT_MAX_FILE_BYTES;
    let mut out = Vec::with_capacity(entries.len());
    for e in entries {
        let keep = match e.kind {
            EntryKind::Submodule => false,
            EntryKind::Symlink => e.size <= LINK_CAP,
            EntryKind::File => e.size <= max,
        };
        let Some(rel) = safe_path(&e.path).filter(|_| keep) else {
            continue;
        };
        // The tree's own settings and index are not the revision's to give.
        let first = rel.iter().next().unwrap_or_default();
        if first == ".knav" || rel.as_os_str() == ".knav.toml" {
            continue;
        }
        out.push((e, rel));
    }
    let skipped = (entries.len() - out.len()) as u64;
    (out, skipped)
}

/// Writes the revision's blobs and links, then its record, in directory `names.1`, and
/// renames it to `names.0`; the blobs written.
fn write_revision(
    root: &Path,
    revs: &IndexDir,
    resolved: &Resolved,
    (name, tmp): (&str, &str),
    progress: &mut Progress,
) -> Result<u64, RevError> {
    let phase = format!("reading {} from git", resolved.asked);
    progress.phase(&phase);
    let entries = git::list_tree(root, &resolved.tree)?;
    let blobs = revs
        .sub_or_create(BLOBS)
        .map_err(io_err("cannot create", &revs.join(BLOBS)))?;
    let (wanted, skipped) = wanted(&entries);
    let mut seen = HashSet::new();
    let mut shards = HashMap::new();
    let missing: Vec<&str> = wanted
        .iter()
        .map(|(e, _)| e.oid.as_str())
        .filter(|oid| seen.insert(*oid) && !has_blob(&blobs, &mut shards, oid))
        .collect();
    let binary = read_missing(root, &blobs, &missing, &phase, progress)?;
    let total = (missing.len() - binary.len()) as u64;
    let tmp_path = revs.join(tmp);
    revs.remove_tree(tmp)
        .map_err(io_err("cannot remove", &tmp_path))?;
    revs.mkdir(tmp)
        .map_err(io_err("cannot create", &tmp_path))?;
    let tmp_dir = revs.sub(tmp).map_err(io_err("cannot open", &tmp_path))?;
    let tree = tmp_dir
        .sub_or_create(TREE)
        .map_err(io_err("cannot create", &tmp_path))?;
    let (files, binaries) = link_all(&wanted, &binary, &blobs, &tree)?;
    let file_bytes = wanted
        .iter()
        .filter(|(e, _)| !binary.contains(&e.oid))
        .map(|(e, _)| e.size)
        .sum();
    let record = Record {
        tree: resolved.tree.clone(),
        commit: resolved.commit.clone(),
        asked: resolved.asked.clone(),
        files,
        file_bytes,
        skipped: skipped + binaries,
        made_unix: now_unix(),
    };
    let record_path = tmp_path.join(RECORD);
    let json = serde_json::to_vec_pretty(&record).unwrap_or_default();
    tmp_dir
        .create_new(RECORD, 0o644)
        .and_then(|mut f| f.write_all(&json))
        .map_err(io_err("cannot write", &record_path))?;
    // A directory without a record is what an index build left after an eviction removed the
    // revision under it: nothing to keep.
    let path = revs.join(name);
    revs.remove_tree(name)
        .map_err(io_err("cannot remove", &path))?;
    revs.rename(tmp, name)
        .map_err(io_err("cannot publish the revision", &path))?;
    progress.finish();
    Ok(total)
}

/// True when blob `oid` is kept; `shards` holds the shard directories opened so far (each
/// opened once: a revision asks for every blob of its tree).
fn has_blob<'a>(
    blobs: &IndexDir,
    shards: &mut HashMap<&'a str, Option<IndexDir>>,
    oid: &'a str,
) -> bool {
    shards
        .entry(&oid[..2])
        .or_insert_with(|| blobs.sub(&oid[..2]).ok())
        .as_ref()
        .is_some_and(|shard| shard.kind(&oid[2..]) == Kind::File)
}

/// Links the files of `wanted` into `tree` (symbolic links made as such, `binary` ones left
/// out), each top-level directory's on a core of its own; `(files, binary files left out)`.
fn link_all(
    wanted: &[Wanted<'_>],
    binary: &HashSet<String>,
    blobs: &IndexDir,
    tree: &IndexDir,
) -> Result<(u64, u64), RevError> {
    use rayon::prelude::*;
    // At most 256 blob directories, opened once for every core.
    let mut shards: HashMap<&str, IndexDir> = HashMap::new();
    for (e, _) in wanted {
        let shard = &e.oid[..2];
        if !binary.contains(&e.oid) && !shards.contains_key(shard) {
            let dir = blobs
                .sub(shard)
                .map_err(io_err("cannot open", blobs.path()))?;
            shards.insert(shard, dir);
        }
    }
    // git lists a directory's entries together.
    let top = |w: &Wanted<'_>| w.1.iter().next().map(OsStr::to_owned);
    let runs: Vec<&[Wanted<'_>]> = wanted.chunk_by(|a, b| top(a) == top(b)).collect();
    runs.par_iter()
        .map(|run| link_run(run, binary, &shards, tree))
        .try_reduce(|| (0, 0), |a, b| Ok((a.0 + b.0, a.1 + b.1)))
}

/// [`link_all`] for entries listed together, one directory descriptor open per level.
fn link_run(
    wanted: &[Wanted<'_>],
    binary: &HashSet<String>,
    shards: &HashMap<&str, IndexDir>,
    tree: &IndexDir,
) -> Result<(u64, u64), RevError> {
    // The open directories of the last path.
    let mut open: Vec<(&OsStr, IndexDir)> = Vec::new();
    let (mut files, mut left_out) = (0u64, 0u64);
    for (e, rel) in wanted {
        if binary.contains(&e.oid) {
            left_out += 1;
            continue;
        }
        let path = tree.join(rel);
        let parts: Vec<&OsStr> = rel.iter().collect();
        let Some((last, dirs)) = parts.split_last() else {
            continue;
        };
        let same = open
            .iter()
            .zip(dirs)
            .take_while(|((a, _), b)| a == *b)
            .count();
        open.truncate(same);
        for d in &dirs[same..] {
            let sub = open
                .last()
                .map_or(tree, |(_, p)| p)
                .sub_or_create(d)
                .map_err(io_err("cannot create", &path))?;
            open.push((d, sub));
        }
        let here = open.last().map_or(tree, |(_, p)| p);
        let (shard, rest) = e.oid.split_at(2);
        let from_dir = shards
            .get(shard)
            .ok_or_else(|| not_knavs(&path, "a blob directory missing"))?;
        let c = |s: &[u8]| CString::new(s).map_err(|_| not_knavs(&path, "a NUL in a name"));
        let (from, to) = (c(rest.as_bytes())?, c(last.as_encoded_bytes())?);
        if e.kind == EntryKind::Symlink {
            let target = from_dir
                .read(rest, LINK_CAP)
                .map_err(io_err("cannot read", &path))?;
            here.symlink(&target, &to)
                .map_err(io_err("cannot make the symbolic link", &path))?;
        } else {
            here.link_from(from_dir, &from, &to)
                .map_err(io_err("cannot link", &path))?;
        }
        files += 1;
    }
    Ok((files, left_out))
}

/// Reads the blobs `missing` from git into `blobs` ([`git::read_blobs`]); the binary ones are not
/// written, and returned.
fn read_missing(
    root: &Path,
    blobs: &IndexDir,
    missing: &[&str],
    phase: &str,
    progress: &mut Progress,
) -> Result<HashSet<String>, RevError> {
    use std::sync::atomic::{AtomicU64, Ordering};
    let total = missing.len() as u64;
    let (done, bytes) = (AtomicU64::new(0), AtomicU64::new(0));
    let binary = Mutex::new(HashSet::new());
    let take = |oid: &str, data: &[u8]| {
        if memchr::memchr(0, &data[..data.len().min(BINARY_PROBE)]).is_some() {
            binary
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(oid.to_string());
        } else {
            write_blob(blobs, oid, data)?;
        }
        done.fetch_add(1, Ordering::Relaxed);
        bytes.fetch_add(data.len() as u64, Ordering::Relaxed);
        Ok(())
    };
    let tick = || {
        let n = done.load(Ordering::Relaxed);
        progress.update(phase, n, total, bytes.load(Ordering::Relaxed), 0);
    };
    git::read_blobs(root, missing, take, tick).map_err(RevError::from)?;
    Ok(binary.into_inner().unwrap_or_else(|p| p.into_inner()))
}

/// Writes blob `oid` read-only under `blobs`, whole or not at all (a temporary name, then a
/// rename).
fn write_blob(blobs: &IndexDir, oid: &str, data: &[u8]) -> io::Result<()> {
    let (shard, rest) = oid.split_at(2);
    let dir = blobs.sub_or_create(shard)?;
    let tmp = format!("{rest}.tmp-{}", std::process::id());
    let _ = dir.remove_file(&tmp);
    let written = dir
        .create_new(&tmp, 0o444)
        .and_then(|mut f| f.write_all(data))
        .and_then(|()| dir.rename(&tmp, rest));
    if written.is_err() {
        let _ = dir.remove_file(&tmp);
    }
    written
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

/// Marks revision `name` used now (its record's mtime).
fn touch(revs: &IndexDir, name: &str) {
    if let Ok(f) = revs.sub(name).and_then(|d| d.open_file(RECORD)) {
        let _ = f.set_modified(std::time::SystemTime::now());
    }
}

/// Removes what a writer killed midway left: temporary revision directories, revision
/// directories without a record, and blobs no revision links. Called with the lock held, so no writer is running.
fn remove_unfinished(revs: &IndexDir) {
    for name in revs.entries().unwrap_or_default() {
        let text = name.to_string_lossy();
        // And revisions without a record: what an index build left after an eviction removed
        // the revision under it, once it is not running.
        let unrecorded = text.strip_prefix(PREFIX).is_some_and(git::is_object_id)
            && revs
                .sub(&name)
                .is_ok_and(|d| d.kind(RECORD) == Kind::Missing)
            && !building(revs, &name);
        if text.contains(".tmp-") || unrecorded {
            let _ = revs.remove_tree(&name);
        }
    }
    if let Ok(blobs) = revs.sub(BLOBS) {
        sweep_blobs(&blobs);
    }
}

/// Removes the blobs no revision links (and temporary ones): a blob only the blobs directory
/// links is in no kept revision. A link found there is removed as a link. Called with the
/// lock held.
fn sweep_blobs(blobs: &IndexDir) {
    for shard in blobs.entries().unwrap_or_default() {
        match blobs.kind(&shard) {
            Kind::Dir => {}
            Kind::Link => {
                let _ = blobs.remove_file(&shard);
                continue;
            }
            _ => continue,
        }
        let Ok(dir) = blobs.sub(&shard) else { continue };
        for e in dir.entries().unwrap_or_default() {
            let gone = match dir.kind(&e) {
                Kind::Link => true,
                Kind::File => dir.links(&e) <= 1,
                _ => false,
            };
            if gone {
                let _ = dir.remove_file(&e);
            }
        }
    }
}

/// The revisions kept under `revs`, most recently used first.
pub fn list(revs: &Path) -> Vec<Kept> {
    match open_revs(revs, false) {
        Ok(Some(revs)) => list_in(&revs).into_iter().map(|(_, k)| k).collect(),
        _ => Vec::new(),
    }
}

/// The revisions knav made in `revs` with their directories' names, most recently used
/// first: a directory named by an object id whose record names that tree.
fn list_in(revs: &IndexDir) -> Vec<(String, Kept)> {
    let mut kept: Vec<(String, Kept, std::time::Duration)> = revs
        .entries()
        .unwrap_or_default()
        .into_iter()
        .filter_map(|name| {
            let name = name.into_string().ok()?;
            let tree = name.strip_prefix(PREFIX).filter(|t| git::is_object_id(t))?;
            let dir = revs.sub(&name).ok()?;
            let file = dir.open_file(RECORD).ok()?;
            let mut bytes = Vec::new();
            io::Read::read_to_end(&mut io::Read::take(&file, RECORD_CAP), &mut bytes).ok()?;
            let record: Record = serde_json::from_slice(&bytes).ok()?;
            if record.tree != tree || !git::is_object_id(&record.commit) {
                return None;
            }
            let used = file
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .unwrap_or_default();
            // The manifest a published index has (`store::CURRENT`).
            let indexed = dir
                .sub(INDEX)
                .is_ok_and(|i| i.kind("CURRENT") == Kind::File);
            let kept = Kept {
                record,
                used_unix: used.as_secs(),
                indexed,
            };
            Some((name, kept, used))
        })
        .collect();
    // Uses a second apart are told apart by the nanoseconds of the record's mtime.
    kept.sort_by(|(_, a, at), (_, b, bt)| bt.cmp(at).then(a.record.tree.cmp(&b.record.tree)));
    kept.into_iter().map(|(n, k, _)| (n, k)).collect()
}

/// Whether the revisions take more than `max` bytes: their blobs and their indexes (their
/// trees are links to the blobs). The records' file sizes bound the blobs from above (a blob
/// is kept while a revision links it, and revisions share blobs), so the blobs are counted one
/// by one only when that bound passes the cap or a record does not say.
fn over_bytes(revs: &IndexDir, max: u64) -> bool {
    let kept = list_in(revs);
    let indexes: u64 = kept
        .iter()
        .filter_map(|(name, _)| revs.sub(name).ok())
        .map(|d| d.bytes(INDEX))
        .sum();
    let bound = kept
        .iter()
        .map(|(_, k)| (k.record.file_bytes > 0).then_some(k.record.file_bytes))
        .sum::<Option<u64>>();
    if bound.is_some_and(|b| b.saturating_add(indexes) <= max) {
        return false;
    }
    revs.bytes(BLOBS) + indexes > max
}

/// Removes revisions (never `current`) until at most `keep` are kept and they take at most
/// `max_bytes`, then the blobs no kept revision links. The least recently used go first, and
/// those used in the last ten minutes or being indexed after all others: they are spared
/// only within the bounds. Called with the lock held.
fn evict(revs: &IndexDir, (keep, max_bytes): (usize, u64), current: &str) {
    let kept = list_in(revs);
    let now = now_unix();
    // `kept` is most recently used first: its reverse position is the order of use.
    let mut victims: Vec<(bool, std::cmp::Reverse<usize>, &str)> = kept
        .iter()
        .enumerate()
        .filter(|(_, (name, _))| name != current)
        .map(|(i, (name, k))| {
            let in_use =
                now.saturating_sub(k.used_unix) < IN_USE_S || building(revs, OsStr::new(name));
            (in_use, std::cmp::Reverse(i), name.as_str())
        })
        .collect();
    // Not in use first, then least recently used first.
    victims.sort();
    let mut victims = victims.into_iter().map(|(_, _, name)| name);
    let mut count = kept.len();
    let blobs = revs.sub(BLOBS).ok();
    let sweep = || {
        if let Some(b) = &blobs {
            sweep_blobs(b);
        }
    };
    let mut removed = false;
    while count > keep {
        let Some(name) = victims.next() else { break };
        let _ = revs.remove_tree(name);
        count -= 1;
        removed = true;
    }
    if removed {
        sweep();
    }
    while over_bytes(revs, max_bytes) {
        let Some(name) = victims.next() else { break };
        let _ = revs.remove_tree(name);
        sweep();
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
    use std::fs::File;

    /// A tree id made of `c`.
    fn id(c: char) -> String {
        std::iter::repeat_n(c, 40).collect()
    }

    /// A revision directory under `revs` whose record was last used `ago` seconds ago.
    fn kept_revision(revs: &Path, tree: &str, ago: u64) -> PathBuf {
        let dir = revs.join(format!("{PREFIX}{tree}"));
        std::fs::create_dir_all(dir.join("tree")).unwrap();
        let record = Record {
            tree: tree.into(),
            commit: tree.into(),
            asked: tree.into(),
            files: 0,
            skipped: 0,
            made_unix: 0,
            file_bytes: 0,
        };
        std::fs::write(dir.join(RECORD), serde_json::to_vec(&record).unwrap()).unwrap();
        let when = std::time::SystemTime::now() - std::time::Duration::from_secs(ago);
        File::options()
            .append(true)
            .open(dir.join(RECORD))
            .unwrap()
            .set_modified(when)
            .unwrap();
        dir
    }

    fn scratch(name: &str) -> (PathBuf, IndexDir) {
        let revs = std::env::temp_dir().join(format!("knav-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&revs);
        std::fs::create_dir_all(&revs).unwrap();
        let dir = IndexDir::open(&revs).unwrap();
        (revs, dir)
    }

    #[test]
    fn eviction_spares_revisions_in_use_or_being_indexed_within_the_bounds() {
        let (revs, dir) = scratch("evict");
        let (a, b, c, d) = (id('a'), id('b'), id('c'), id('d'));
        let current = kept_revision(&revs, &a, 0);
        let recent = kept_revision(&revs, &b, 60);
        let old = kept_revision(&revs, &c, 7200);
        let building_one = kept_revision(&revs, &d, 7200);
        std::fs::create_dir_all(building_one.join("index")).unwrap();
        let lock = File::create(building_one.join("index/lock")).unwrap();
        lock.lock().unwrap();
        let current_name = format!("{PREFIX}{a}");
        evict(&dir, (3, u64::MAX), &current_name);
        assert!(current.exists() && recent.exists() && building_one.exists());
        assert!(!old.exists());
        // Over the count, the recent and the building ones go too: least recently used first.
        evict(&dir, (2, u64::MAX), &current_name);
        assert!(!building_one.exists() && recent.exists());
        drop(lock);
        evict(&dir, (1, u64::MAX), &current_name);
        assert!(current.exists() && !recent.exists());
        let _ = std::fs::remove_dir_all(&revs);
    }

    #[test]
    fn eviction_keeps_the_bytes_under_the_cap() {
        let (revs, dir) = scratch("evict-bytes");
        let names: Vec<String> = "abcd".chars().map(id).collect();
        for (i, n) in names.iter().enumerate() {
            let d = kept_revision(&revs, n, i as u64);
            std::fs::create_dir_all(d.join("index")).unwrap();
            std::fs::write(d.join("index/seg"), vec![0u8; 1000]).unwrap();
        }
        let current = format!("{PREFIX}{}", names[0]);
        evict(&dir, (8, 2500), &current);
        let left: Vec<String> = list_in(&dir).into_iter().map(|(n, _)| n).collect();
        assert_eq!(
            left,
            [current.clone(), format!("{PREFIX}{}", names[1])],
            "the two most recently used fit in 2,500 bytes"
        );
        let _ = std::fs::remove_dir_all(&revs);
    }

    #[test]
    fn eviction_counts_the_blobs_when_the_records_sizes_pass_the_cap() {
        let (revs, dir) = scratch("evict-bound");
        let names: Vec<String> = "ab".chars().map(id).collect();
        for (i, n) in names.iter().enumerate() {
            let d = kept_revision(&revs, n, i as u64);
            let mut record: Record =
                serde_json::from_slice(&std::fs::read(d.join(RECORD)).unwrap()).unwrap();
            // Shared blobs: the records' sum (6,000) passes the cap, the blobs (1,000) do not.
            record.file_bytes = 3000;
            std::fs::write(d.join(RECORD), serde_json::to_vec(&record).unwrap()).unwrap();
        }
        std::fs::create_dir_all(revs.join("blobs/ab")).unwrap();
        std::fs::write(revs.join("blobs/ab/cdef"), vec![0u8; 1000]).unwrap();
        assert!(!over_bytes(&dir, 2500));
        assert!(over_bytes(&dir, 900));
        let current = format!("{PREFIX}{}", names[0]);
        evict(&dir, (8, 2500), &current);
        assert_eq!(list_in(&dir).len(), 2, "both fit: the blobs were counted");
        let _ = std::fs::remove_dir_all(&revs);
    }

    #[test]
    fn a_planted_record_naming_another_tree_is_neither_listed_nor_evicted() {
        let (revs, dir) = scratch("planted");
        let outside = revs.with_extension("victim");
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("f"), "kept").unwrap();
        let planted = kept_revision(&revs, &id('e'), 7200);
        let record = format!(
            r#"{{"tree":"x/../../{}","commit":"{}","asked":"v","files":0,"skipped":0,"made_unix":0}}"#,
            outside.file_name().unwrap().to_str().unwrap(),
            id('e')
        );
        std::fs::write(planted.join(RECORD), record).unwrap();
        std::fs::create_dir_all(revs.join("t-x")).unwrap();
        assert!(list_in(&dir).is_empty());
        evict(&dir, (0, 0), "t-none");
        assert_eq!(std::fs::read(outside.join("f")).unwrap(), b"kept");
        let _ = std::fs::remove_dir_all(&revs);
        let _ = std::fs::remove_dir_all(&outside);
    }

    #[test]
    fn only_what_an_index_reads_is_wanted() {
        let e = |path: &str, kind, size| git::Entry {
            kind,
            oid: id('a'),
            path: path.as_bytes().to_vec(),
            size,
        };
        let max = crate::tree::beneath::DEFAULT_MAX_FILE_BYTES;
        let entries = [
            e("fs/a.c", EntryKind::File, 10),
            e("fs/huge.bin", EntryKind::File, max + 1),
            e(".knav.toml", EntryKind::File, 10),
            e(".knav/CURRENT", EntryKind::File, 10),
            e("sub", EntryKind::Submodule, 0),
            e("link", EntryKind::Symlink, 5),
            e("long-link", EntryKind::Symlink, LINK_CAP + 1),
            e("a/../b", EntryKind::File, 1),
        ];
        let (kept, skipped) = wanted(&entries);
        let paths: Vec<&Path> = kept.iter().map(|(_, p)| p.as_path()).collect();
        assert_eq!(paths, [Path::new("fs/a.c"), Path::new("link")]);
        assert_eq!(skipped, 6);
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
