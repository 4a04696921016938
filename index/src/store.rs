//! Where an index lives, how a new one is published, and how a reader opens a consistent one.
//!
//! An index directory holds segment directories (`seg-…`) and one small file, `CURRENT`, the
//! manifest: which segments make up the index (a base and at most one delta that shadows the
//! base's changed and deleted files). Builders write new segments beside the old ones, then
//! replace `CURRENT` with one rename, so a reader sees the old index or the new one, never half
//! of one. Segments of the previous generation are kept for readers that opened it; older ones
//! are deleted. One builder at a time holds `lock` (and writes its pid there for a builder
//! that waits); so whatever a builder finds that `CURRENT` does not name was left by a killed
//! build, and is removed.

use std::collections::HashSet;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::codec::{hash64, put_str, put_varint, Reader};
use super::docs::part::Docs;
use super::error::IndexError;
use super::format::{check_header, header, FileStatus, HEADER_LEN, VERSION};
use super::part::{Kind, Part, Stamp};
use super::segment::{Segment, SegmentRef};
use super::text::index::TextIndex;
use crate::indexdir::IndexDir;
use crate::tree::walk::{DirListing, Names, WalkCache};

/// The manifest stored in `CURRENT`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Manifest {
    /// Index format version.
    pub version: u32,
    /// The indexed root.
    pub root: String,
    /// Incremented at every publish.
    pub generation: u64,
    /// Seconds since the epoch when published.
    pub published_unix: u64,
    /// Segments, base first.
    pub segments: Vec<SegmentRef>,
    /// Segments of the previous generation, kept while readers may use them.
    pub retired: Vec<String>,
    /// ctags version used.
    pub ctags_version: Option<String>,
    /// Hash of the build options that change results (ctags options, size cap).
    pub options_hash: u64,
    /// `.c`/`.h` files scanned.
    pub files_scanned: u64,
    /// Files not indexed: other kinds, binary, too big, unreadable, ctags failures.
    pub files_unindexed: u64,
    /// Of those, files that are not C sources.
    pub other_files: u64,
    /// Symbolic links skipped.
    pub symlinks: u64,
    /// The build-file part (Kbuild, Kconfig), when the tree has build files.
    #[serde(default)]
    pub build_files: Option<super::buildfiles::BuildFilesRef>,
    /// The text part (`knav grep`): every file rg searches, as trigram postings.
    #[serde(default)]
    pub text: Option<crate::text::TextRef>,
    /// The documentation part (search_docs), when the tree has documentation files.
    #[serde(default)]
    pub docs: Option<crate::docs::DocsRef>,
    /// The hardware part (find_device), when the tree has device trees or binding schemas.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hw: Option<crate::hw::HwRef>,
    /// The restat part of an index started from another tree's ([`crate::restat::Restat`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restat: Option<String>,
}

impl Manifest {
    /// Every part directory the manifest names: its parts', the previous generation's kept
    /// for readers, and the retired segments.
    pub fn part_dirs(&self) -> Vec<&str> {
        let mut dirs: Vec<&str> = self.segments.iter().map(|s| s.dir.as_str()).collect();
        dirs.extend(self.retired.iter().map(String::as_str));
        for (dir, previous) in [
            self.build_files.as_ref().map(|b| (&b.dir, &b.previous)),
            self.text.as_ref().map(|t| (&t.dir, &t.previous)),
            self.docs.as_ref().map(|d| (&d.dir, &d.previous)),
            self.hw.as_ref().map(|h| (&h.dir, &h.previous)),
        ]
        .into_iter()
        .flatten()
        {
            dirs.push(dir);
            dirs.extend(previous.as_deref());
        }
        dirs.extend(self.restat.as_deref());
        dirs
    }
}

/// An open, consistent index.
pub struct Snapshot {
    /// The indexed root.
    pub root: PathBuf,
    /// The index directory.
    pub index_dir: PathBuf,
    /// The manifest it was opened from.
    pub manifest: Manifest,
    /// Segments, base first.
    pub segments: Vec<Segment>,
    /// The build-file part: Kbuild conditions, Kconfig entries, `CONFIG_` uses.
    pub build: Option<super::buildfiles::BuildFiles>,
    /// Why the build-file part could not be opened (the next update rebuilds it).
    pub build_error: Option<IndexError>,
    /// Per segment, one bit per file id: set when a later segment shadows it. Asked for every
    /// posting a query reads, so a bit test rather than a hash lookup.
    dead: Vec<Vec<u64>>,
}

/// The live files of an index by status: [`Snapshot::count_files`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileCounts {
    /// Scanned (with or without definitions).
    pub scanned: u64,
    /// Not indexed, or indexed without definitions.
    pub unindexed: u64,
    /// The C sources among them as `path: why`, at most [`MAX_UNINDEXED_LISTED`].
    pub unindexed_sources: Vec<String>,
}

/// C sources not indexed that an index report lists by name at most.
pub const MAX_UNINDEXED_LISTED: usize = 200;

/// The file name of the manifest.
pub const CURRENT: &str = "CURRENT";

/// The index directory for `root`: `explicit`, else `$KNAV_INDEX_DIR`, else `ROOT/.knav` when
/// it exists or can be created, else a directory under the user's cache directory.
pub fn index_dir(root: &Path, explicit: Option<&Path>) -> PathBuf {
    find_index_dir(root, explicit, true)
}

/// [`index_dir`] without creating `ROOT/.knav`: for a reader that must leave the tree as it is
/// (a server without --root).
pub fn existing_index_dir(root: &Path, explicit: Option<&Path>) -> PathBuf {
    find_index_dir(root, explicit, false)
}

fn find_index_dir(root: &Path, explicit: Option<&Path>, create: bool) -> PathBuf {
    // A directory the user names may be reached through a link (resolved here, once); only
    // a link planted in the tree, as `.knav`, is refused.
    let resolved = |dir: PathBuf| match is_link(&dir) {
        true => std::fs::canonicalize(&dir).unwrap_or(dir),
        false => dir,
    };
    if let Some(dir) = explicit {
        return resolved(dir.to_path_buf());
    }
    if let Some(dir) = std::env::var_os("KNAV_INDEX_DIR").filter(|d| !d.is_empty()) {
        return resolved(PathBuf::from(dir));
    }
    let local = root.join(".knav");
    // A link in `.knav`'s place is never followed: the lock and the reader refuse it, saying
    // what to do.
    if local.join(CURRENT).is_file() || is_link(&local) {
        return local;
    }
    let cache = cache_dir(root);
    if cache.as_ref().is_some_and(|c| c.join(CURRENT).is_file()) {
        return cache.unwrap_or(local);
    }
    // Without an index anywhere, a reader looks where `knav index` would most likely put it.
    if local.is_dir() || !create {
        return local;
    }
    if std::fs::create_dir(&local).is_ok() {
        crate::disk::no_wider_than(&local, root);
        if let Ok(dir) = IndexDir::open(&local) {
            dir.ignore_in_git();
        }
        return local;
    }
    cache.unwrap_or(local)
}

fn is_link(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

/// Index directory `index_dir` opened as [`IndexDir`] does (no link in its place, not another
/// user's), made first with `create`.
pub fn open_dir(index_dir: &Path, create: bool) -> Result<IndexDir, IndexError> {
    let opened = if create {
        IndexDir::create(index_dir)
    } else {
        IndexDir::open(index_dir)
    };
    opened.map_err(|e| match e.kind() {
        // The refusals of `indexdir`, which say what to do.
        std::io::ErrorKind::Other => IndexError::io(REFUSES, index_dir)(e),
        _ if create => IndexError::NoIndexDir {
            dir: index_dir.to_path_buf(),
            source: e.into(),
        },
        _ => IndexError::io("", index_dir)(e),
    })
}

/// What an error of [`crate::indexdir`]'s refusals (which name the path) says first.
const REFUSES: &str = "knav refuses what it found in";

/// Replaces file `name` of `dir` with `bytes` ([`IndexDir::replace`]).
fn replace_file(dir: &IndexDir, name: &str, bytes: &[u8], sync: bool) -> std::io::Result<()> {
    dir.replace(name, bytes, sync)
}

/// Where `root`'s index goes under the user's cache directory (`$XDG_CACHE_HOME/knav`, else
/// `~/.cache/knav`), when there is one.
pub fn cache_dir(root: &Path) -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(cache_dir_in(&base, root))
}

/// The directory of `root`'s index under the cache directory `base`: named after the root and
/// the one-lane hash of its path, so that it never moves between releases.
fn cache_dir_in(base: &Path, root: &Path) -> PathBuf {
    let name = root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "root".into());
    let h = super::codec::hash64_one_lane(root.as_os_str().as_encoded_bytes());
    base.join("knav").join(format!("{name}-{h:016x}"))
}

/// Reads the manifest, or `None` when there is no index.
pub fn read_manifest(index_dir: &Path) -> Result<Option<Manifest>, IndexError> {
    let path = index_dir.join(CURRENT);
    // Through the directory's descriptor: a link as CURRENT (or as the directory) is refused.
    let read = open_dir(index_dir, false).and_then(|dir| {
        dir.read(CURRENT, MANIFEST_CAP).map_err(|e| match e.kind() {
            std::io::ErrorKind::Other => IndexError::io(REFUSES, index_dir)(e),
            _ => IndexError::io("", &path)(e),
        })
    });
    let bytes = match read {
        Ok(b) => b,
        Err(IndexError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            return Ok(None)
        }
        Err(e) => return Err(e),
    };
    let m: Manifest = serde_json::from_slice(&bytes).map_err(|e| {
        IndexError::Json {
            path: path.clone(),
            source: e.into(),
        }
        .rebuild_full()
    })?;
    // Every part it names is a directory of its own below the index directory.
    let single = |d: &str| !(d.is_empty() || d == "." || d == ".." || d.contains('/'));
    if !m.part_dirs().into_iter().all(single) {
        return Err(
            IndexError::damaged(&path, "it names a part outside the index directory")
                .rebuild_full(),
        );
    }
    Ok(Some(m))
}

/// The largest manifest read (a kernel's is a few KiB).
const MANIFEST_CAP: u64 = 16 << 20;

/// Publishes `manifest` with one rename, then deletes segments no reader can still need.
pub fn publish(index_dir: &Path, manifest: &Manifest) -> Result<(), IndexError> {
    let io = || IndexError::io("cannot publish index in", index_dir);
    let dir = open_dir(index_dir, false)?;
    let json = serde_json::to_vec_pretty(manifest).map_err(std::io::Error::from);
    replace_file(&dir, CURRENT, &json.map_err(io())?, true).map_err(io())?;
    if let Ok(d) = File::open(index_dir) {
        let _ = d.sync_all();
    }
    remove_unreferenced(index_dir, manifest.part_dirs());
    Ok(())
}

/// Removes what builds killed before they published left in `index_dir` (segment and
/// build-file directories `CURRENT` does not name, temporary files). Called with the build
/// lock held: no other build is running, so nothing unnamed is still being written.
pub fn remove_orphans(index_dir: &Path, _lock: &BuildLock) {
    remove_unpublished(index_dir);
}

/// What [`remove_orphans`] removes, for a process that holds the lock (or is ending because it
/// was interrupted while it did).
pub fn remove_unpublished(index_dir: &Path) {
    // An unreadable manifest names nothing: the build that follows replaces it, then cleans.
    // Without one (a first build), no part is named.
    match read_manifest(index_dir) {
        Ok(Some(manifest)) => remove_unreferenced(index_dir, manifest.part_dirs()),
        Ok(None) => remove_unreferenced(index_dir, Vec::new()),
        Err(_) => {}
    }
    let Ok(dir) = IndexDir::open(index_dir) else {
        return;
    };
    for name in dir.entries().unwrap_or_default() {
        if name.to_string_lossy().contains(".tmp-") {
            let _ = dir.remove_file(&name);
        }
    }
}

/// Removes the part directories (`seg-`, `kb-`, `tx-`, `kd-`, `rs-`) that `keep` (a manifest's
/// [`Manifest::part_dirs`]) does not name.
fn remove_unreferenced(index_dir: &Path, keep: Vec<&str>) {
    let keep: HashSet<&str> = keep.into_iter().collect();
    let Ok(dir) = IndexDir::open(index_dir) else {
        return;
    };
    for entry in dir.entries().unwrap_or_default() {
        let name = entry.to_string_lossy();
        let part = Kind::ALL.iter().any(|k| {
            name.strip_prefix(k.prefix())
                .is_some_and(|rest| rest.starts_with('-'))
        });
        // Removed through the directory's descriptor; a link is removed as a link.
        if part && !keep.contains(name.as_ref()) {
            let _ = dir.remove_tree(&entry);
        }
    }
}

/// The file listing the index files whose checksums were last found right, with the stat they
/// had then: `knav index` re-hashes only a file whose stat moved since.
const CHECKED: &str = "checked";

/// What a stat says of a file: inode, size, mtime and ctime (ns). ctime moves on any write,
/// even one that restores the mtime.
type StatKey = (u64, u64, i64, i64);

fn stat_key(path: &Path) -> Option<StatKey> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).ok()?;
    Some((
        m.ino(),
        m.size(),
        m.mtime() * 1_000_000_000 + m.mtime_nsec(),
        m.ctime() * 1_000_000_000 + m.ctime_nsec(),
    ))
}

/// Damage [`check_stamped`] found: in which part, and where.
#[derive(Debug)]
pub struct Damaged {
    /// The part damaged: a segment's damage means a full build, another part's that part
    /// alone is built again.
    pub kind: Kind,
    /// The damaged file and what is wrong with it.
    pub error: IndexError,
}

/// Checks the checksums of every file of every part of `snap` ([`Snapshot::stamps`]) that changed
/// since the last check (all of them the first time), and records what it found right. A
/// refresh calls it before it builds on an index, so that damage is rebuilt, not kept. With
/// `just_built`, the files were checksummed as they were written: only their stats are taken.
pub fn check_stamped(index_dir: &Path, snap: &Snapshot, just_built: bool) -> Result<(), Damaged> {
    use rayon::prelude::*;
    let stamps: std::collections::HashMap<String, StatKey> =
        IndexDir::read_cache(index_dir, CHECKED)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default()
            .lines()
            .filter_map(|l| {
                let mut f = l.split('\t');
                let name = f.next()?.to_string();
                let mut n = || f.next()?.parse::<i128>().ok();
                Some((name, (n()? as u64, n()? as u64, n()? as i64, n()? as i64)))
            })
            .collect();
    // (name in the index directory, expected checksum, its part, hash even if its stat is as
    // stamped). A part whose meta.json moved (the checksums themselves) has every file hashed
    // again; meta.json's own stat is stamped beside them.
    let mut files: Vec<(String, u64, Kind, bool)> = Vec::new();
    let mut metas: Vec<String> = Vec::new();
    for stamp in snap.stamps() {
        let meta = format!("{}/meta.json", stamp.dir);
        let moved = stamps.get(&meta) != stat_key(&index_dir.join(&meta)).as_ref();
        for (name, sum) in stamp.checksums {
            files.push((format!("{}/{name}", stamp.dir), *sum, stamp.kind, moved));
        }
        metas.push(meta);
    }
    let checked: Vec<Result<(String, StatKey), Damaged>> = files
        .par_iter()
        .map(|(name, sum, kind, moved)| {
            let path = index_dir.join(name);
            let key = stat_key(&path);
            let damaged = |what: &str| Damaged {
                kind: *kind,
                error: IndexError::damaged(&path, what),
            };
            let key = key.ok_or_else(|| damaged("it cannot be read"))?;
            if !just_built && (*moved || stamps.get(name) != Some(&key)) {
                let got =
                    super::codec::checksum_file(&path).map_err(|e| damaged(&e.to_string()))?;
                if got != *sum {
                    return Err(damaged("checksum mismatch"));
                }
            }
            Ok((name.clone(), key))
        })
        .collect();
    let mut out = String::new();
    // The first damage of the first part damaged, in [`Kind::ALL`]'s order: a segment's first.
    let mut damage: Option<Damaged> = None;
    let mut same = true;
    for c in checked {
        match c {
            Ok((name, key)) => {
                same &= stamps.get(&name) == Some(&key);
                let (ino, size, mtime, ctime) = key;
                out.push_str(&format!("{name}\t{ino}\t{size}\t{mtime}\t{ctime}\n"));
            }
            Err(d) => {
                if damage.as_ref().is_none_or(|x| d.kind < x.kind) {
                    damage = Some(d);
                }
            }
        }
    }
    if let Some(d) = damage {
        return Err(d);
    }
    for meta in metas {
        if let Some(key) = stat_key(&index_dir.join(&meta)) {
            same &= stamps.get(&meta) == Some(&key);
            let (ino, size, mtime, ctime) = key;
            out.push_str(&format!("{meta}\t{ino}\t{size}\t{mtime}\t{ctime}\n"));
        }
    }
    // Unchanged stamps (and no stale ones): nothing to write.
    same &= out.lines().count() == stamps.len();
    if same {
        return Ok(());
    }
    // Only a cache: a failure to write it costs the next refresh a re-hash.
    if let Ok(dir) = IndexDir::open(index_dir) {
        let _ = replace_file(&dir, CHECKED, out.as_bytes(), false);
    }
    Ok(())
}

/// The file holding the last walk's directory listings.
const WALK_CACHE: &str = "walk.cache";
/// Its kind tag; changed when its layout or meaning changes (listings gained build files; names
/// that are not UTF-8 are listed, escaped, where an older walk counted them as other files).
const WALK_KIND: &[u8; 4] = b"WLK4";

/// True when a listing read from the walk cache names only what is at or below the root.
fn listing_below_root(d: &DirListing) -> bool {
    use crate::tree::pathname::decode;
    use crate::tree::walk::{is_one_name, is_path_below_root};
    let name = |n: &str| is_one_name(&decode(n));
    is_path_below_root(&decode(&d.path))
        && d.subdirs.iter().all(name)
        && d.sources.iter().all(name)
        && d.builds.iter().all(name)
}

/// Reads the walk cache; `None` when it is missing, unreadable or names a path outside the
/// root (a forged cache, checksum and all, must not make a refresh or the watcher reach a
/// directory outside): the walk then reads every directory and writes a new one.
pub fn read_walk_cache(index_dir: &Path) -> Option<WalkCache> {
    let bytes = IndexDir::read_cache(index_dir, WALK_CACHE)?;
    check_header(&bytes, WALK_KIND, Path::new(WALK_CACHE)).ok()?;
    let body = &bytes[HEADER_LEN..];
    let (sum, body) = body.split_at_checked(8)?;
    if u64::from_le_bytes(sum.try_into().ok()?) != hash64(body) {
        return None;
    }
    let mut r = Reader::new(body);
    let taken_ns = r.varint() as i64;
    let generation = r.varint();
    let n = r.varint() as usize;
    let mut dirs = Vec::with_capacity(n.min(1 << 20));
    let text = |r: &mut Reader<'_>| String::from_utf8_lossy(r.str()).into_owned();
    let names = |r: &mut Reader<'_>| -> Names {
        let k = r.varint() as usize;
        let mut out = Names::with_capacity(k.min(1 << 20), k.min(1 << 20) * 16);
        for _ in 0..k.min(1 << 20) {
            out.push(&String::from_utf8_lossy(r.str()));
        }
        out
    };
    for _ in 0..n {
        let path = text(&mut r);
        let mtime_ns = r.varint() as i64;
        let other_files = r.varint() as u32;
        let symlinks = r.varint() as u32;
        let subdirs = names(&mut r);
        let sources = names(&mut r);
        let builds = names(&mut r);
        let stat = |r: &mut Reader<'_>| (r.varint(), r.varint() as i64);
        let k = r.varint() as usize;
        let stats = (0..k.min(1 << 20)).map(|_| stat(&mut r)).collect();
        let k = r.varint() as usize;
        let build_stats = (0..k.min(1 << 20)).map(|_| stat(&mut r)).collect();
        if r.overrun {
            return None;
        }
        let d = DirListing {
            path,
            mtime_ns,
            other_files,
            symlinks,
            subdirs,
            sources,
            builds,
            stats,
            build_stats,
        };
        if !listing_below_root(&d) {
            return None;
        }
        dirs.push(d);
    }
    Some(WalkCache {
        taken_ns,
        dirs,
        generation,
    })
}

/// Replaces the walk cache (write beside, then rename).
pub fn write_walk_cache(index_dir: &Path, cache: &WalkCache) -> Result<(), IndexError> {
    let mut body = Vec::new();
    put_varint(&mut body, cache.taken_ns.max(0) as u64);
    put_varint(&mut body, cache.generation);
    put_varint(&mut body, cache.dirs.len() as u64);
    for d in &cache.dirs {
        put_str(&mut body, d.path.as_bytes());
        put_varint(&mut body, d.mtime_ns.max(0) as u64);
        put_varint(&mut body, d.other_files as u64);
        put_varint(&mut body, d.symlinks as u64);
        put_varint(&mut body, d.subdirs.len() as u64);
        for s in d.subdirs.iter() {
            put_str(&mut body, s.as_bytes());
        }
        put_varint(&mut body, d.sources.len() as u64);
        for s in d.sources.iter() {
            put_str(&mut body, s.as_bytes());
        }
        put_varint(&mut body, d.builds.len() as u64);
        for s in d.builds.iter() {
            put_str(&mut body, s.as_bytes());
        }
        for stats in [&d.stats, &d.build_stats] {
            put_varint(&mut body, stats.len() as u64);
            for &(size, mtime) in stats {
                put_varint(&mut body, size);
                put_varint(&mut body, mtime.max(0) as u64);
            }
        }
    }
    let mut out = header(WALK_KIND).to_vec();
    out.extend_from_slice(&hash64(&body).to_le_bytes());
    out.extend_from_slice(&body);
    let dir = open_dir(index_dir, false)?;
    replace_file(&dir, WALK_CACHE, &out, false)
        .map_err(IndexError::io("cannot write", &index_dir.join(WALK_CACHE)))
}

/// Holds the index directory's build lock until dropped.
pub struct BuildLock {
    _file: File,
    dir: crate::indexdir::Pinned,
}

impl BuildLock {
    /// The index directory as the lock opened it, through its descriptor
    /// ([`crate::indexdir::Pinned::via`]): a build names every file below it through this, so
    /// the directory swapped for a link after the lock was taken changes nothing.
    pub fn via(&self) -> &Path {
        self.dir.via()
    }
}

/// Takes the build lock, waiting for another builder to finish.
/// The directory is opened as [`IndexDir`] opens one (a link in its place, or another user's
/// directory, is refused) and the lock file made `O_NOFOLLOW`, never truncated through a link.
pub fn lock(index_dir: &Path) -> Result<BuildLock, IndexError> {
    let dir = open_dir(index_dir, true)?;
    let path = index_dir.join("lock");
    let mut file = dir.lock_file("lock").map_err(|e| match e.kind() {
        std::io::ErrorKind::Other => IndexError::io(REFUSES, index_dir)(e),
        _ => IndexError::io("", &path)(e),
    })?;
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            // Say why nothing happens: another build holds the lock (its pid is in the file).
            let mut holder = String::new();
            let _ = std::io::Read::read_to_string(&mut &file, &mut holder);
            let holder = holder.trim();
            let who = if holder.is_empty() {
                "another build".to_string()
            } else {
                format!("the build of pid {holder}")
            };
            eprintln!(
                "knav: waiting for {who} to finish indexing {}",
                index_dir.display()
            );
            file.lock().map_err(IndexError::io("", &path))?;
        }
        Err(std::fs::TryLockError::Error(e)) => return Err(IndexError::io("", &path)(e)),
    }
    // The holder's pid, for a build that waits on it.
    let _ = file.set_len(0);
    let _ = write!(file, "{}", std::process::id());
    let _ = file.flush();
    Ok(BuildLock {
        _file: file,
        dir: crate::indexdir::Pinned::new(dir),
    })
}

/// Runs `f` (a query on `snap`) and checks what it read: `Err` with the clear error and what to
/// run when `f` ran into damage (a decoder past its data, or a panic in the `fst` crate that
/// `--verify` then explains). A panic on an index that verifies is a bug, and stays a panic.
pub fn answer_or_damage<T>(snap: &Snapshot, f: impl FnOnce() -> T) -> Result<T, IndexError> {
    match super::damage::catch_decoder_panic(f) {
        Ok(v) => match snap.damage() {
            Some(d) => Err(d.clone().rebuild()),
            None => Ok(v),
        },
        Err(panic) => match snap.verify() {
            Err(d) => Err(d.rebuild()),
            Ok(()) => panic!("{panic}"),
        },
    }
}

impl Snapshot {
    /// Opens the current index in `index_dir`; `Ok(None)` when there is none.
    pub fn open(root: &Path, index_dir: &Path) -> Result<Option<Snapshot>, IndexError> {
        // An index in a link's place, or another user's, is not read.
        match open_dir(index_dir, false) {
            Err(IndexError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                return Ok(None)
            }
            Err(e) => return Err(e),
            Ok(_) => {}
        }
        // A builder may delete a retired segment between our reading CURRENT and opening it;
        // reading CURRENT again then finds the newer generation.
        let mut tries = 0;
        loop {
            let Some(manifest) = read_manifest(index_dir)? else {
                return Ok(None);
            };
            if manifest.version != VERSION {
                return Err(IndexError::OtherFormat {
                    reads: VERSION,
                    dir: index_dir.to_path_buf(),
                    found: manifest.version,
                });
            }
            match Self::open_segments(root, index_dir, manifest) {
                Ok(s) => return Ok(Some(s)),
                Err(e) if tries == 2 => return Err(e.rebuild_full()),
                Err(_) => tries += 1,
            }
        }
    }

    /// Opens the segments `manifest` names, before it is published.
    pub fn open_unpublished(
        root: &Path,
        index_dir: &Path,
        manifest: &Manifest,
    ) -> Result<Snapshot, IndexError> {
        Self::open_segments(root, index_dir, manifest.clone())
    }

    fn open_segments(
        root: &Path,
        index_dir: &Path,
        manifest: Manifest,
    ) -> Result<Snapshot, IndexError> {
        let mut segments = Vec::with_capacity(manifest.segments.len());
        for s in &manifest.segments {
            segments.push(<Segment as Part>::open(index_dir, s)?);
        }
        let mut dead: Vec<Vec<u64>> = segments
            .iter()
            .map(|s| vec![0u64; (s.file_count() as usize).div_ceil(64)])
            .collect();
        for (later, sref) in manifest.segments.iter().enumerate().skip(1) {
            for path in &sref.shadow_paths {
                for (earlier, seg) in segments[..later].iter().enumerate() {
                    if let Some(id) = seg.find_file(path) {
                        if let Some(w) = dead[earlier].get_mut(id as usize / 64) {
                            *w |= 1 << (id % 64);
                        }
                    }
                }
            }
        }
        // An unreadable build-file part costs only itself: queries say so, and the next
        // update rebuilds it without rebuilding the segments.
        let (build, build_error) = match &manifest.build_files {
            Some(b) => match <super::buildfiles::BuildFiles as Part>::open(index_dir, b) {
                Ok(open) => (Some(open), None),
                Err(e) => (None, Some(e)),
            },
            None => (None, None),
        };
        Ok(Snapshot {
            root: root.to_path_buf(),
            index_dir: index_dir.to_path_buf(),
            manifest,
            segments,
            build,
            build_error,
            dead,
        })
    }

    /// The first damage a read of this index ran into, as a clear error: an answer read from
    /// a damaged index is replaced by it.
    pub fn damage(&self) -> Option<&IndexError> {
        self.segments
            .iter()
            .find_map(|s| s.damage())
            .or_else(|| self.build.as_ref().and_then(|b| b.damage()))
    }

    /// Re-reads every file of every part and compares it with the checksums recorded when
    /// it was built; then reports the damage a read ran into, if any.
    pub fn verify(&self) -> Result<(), IndexError> {
        if let Some(e) = &self.build_error {
            return Err(e.clone());
        }
        for stamp in self.stamps() {
            super::part::verify(&self.index_dir, &stamp)?;
        }
        match self.damage() {
            Some(d) => Err(d.clone()),
            None => Ok(()),
        }
    }

    /// The stamp of every part of the index, segments first, in [`Kind::ALL`]'s order.
    pub fn stamps(&self) -> Vec<Stamp<'_>> {
        let m = &self.manifest;
        let segments = m
            .segments
            .iter()
            .zip(&self.segments)
            .filter_map(|(r, s)| Segment::stamp(r, Some(s)));
        let build = m
            .build_files
            .as_ref()
            .zip(self.build.as_ref())
            .and_then(|(r, b)| super::buildfiles::BuildFiles::stamp(r, Some(b)));
        let text = m.text.as_ref().and_then(|r| TextIndex::stamp(r, None));
        let docs = m.docs.as_ref().and_then(|r| Docs::stamp(r, None));
        let hw =
            m.hw.as_ref()
                .and_then(|r| crate::hw::part::Hw::stamp(r, None));
        segments
            .chain(build)
            .chain(text)
            .chain(docs)
            .chain(hw)
            .collect()
    }

    /// True when every file of segment `seg` is live: nothing later replaced or deleted any.
    pub fn all_live(&self, seg: usize) -> bool {
        self.dead[seg].iter().all(|w| *w == 0)
    }

    /// True when file `file` of segment `seg` is live (no later segment has its path).
    pub fn is_live(&self, seg: usize, file: u32) -> bool {
        self.dead[seg]
            .get(file as usize / 64)
            .is_none_or(|w| w & (1 << (file % 64)) == 0)
    }

    /// Every live file as `(segment, file id)`, in path order per segment.
    pub fn live_files(&self) -> impl Iterator<Item = (usize, u32)> + '_ {
        self.segments.iter().enumerate().flat_map(move |(s, seg)| {
            (0..seg.file_count())
                .filter(move |f| self.is_live(s, *f))
                .map(move |f| (s, f))
        })
    }

    /// The live file at `path`.
    pub fn find_file(&self, path: &str) -> Option<(usize, u32)> {
        for (s, seg) in self.segments.iter().enumerate().rev() {
            if let Some(f) = seg.find_file(path) {
                if self.is_live(s, f) {
                    return Some((s, f));
                }
            }
        }
        None
    }

    /// Counts files by status, for a manifest, and lists the C sources not (fully) indexed.
    pub fn count_files(&self) -> FileCounts {
        let (mut scanned, mut unindexed) = (0, 0);
        let mut why = Vec::new();
        for (s, f) in self.live_files() {
            match self.segments[s].file_stat(f).status {
                FileStatus::Indexed => {
                    scanned += 1;
                    continue;
                }
                FileStatus::NoDefinitions => scanned += 1,
                _ => {}
            }
            unindexed += 1;
            // A bounded sample: the count says how many there are.
            if why.len() < MAX_UNINDEXED_LISTED {
                let rec = self.segments[s].file(f);
                why.push(format!("{}: {}", rec.path, rec.note.unwrap_or_default()));
            }
        }
        FileCounts {
            scanned,
            unindexed,
            unindexed_sources: why,
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_manifest_naming_a_part_outside_the_index_directory_is_refused() {
        let dir = std::env::temp_dir().join(format!("knav-manifest-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut m = super::Manifest {
            version: super::VERSION,
            ..Default::default()
        };
        m.retired = vec!["seg-1".into()];
        std::fs::write(dir.join(super::CURRENT), serde_json::to_vec(&m).unwrap()).unwrap();
        assert!(super::read_manifest(&dir).unwrap().is_some());
        m.retired = vec!["../outside".into()];
        std::fs::write(dir.join(super::CURRENT), serde_json::to_vec(&m).unwrap()).unwrap();
        let e = super::read_manifest(&dir).unwrap_err().to_string();
        assert!(
            e.contains("names a part outside the index directory"),
            "{e}"
        );
        // A link as CURRENT is not read.
        std::fs::rename(dir.join(super::CURRENT), dir.join("elsewhere")).unwrap();
        std::os::unix::fs::symlink(dir.join("elsewhere"), dir.join(super::CURRENT)).unwrap();
        let e = super::read_manifest(&dir).unwrap_err().to_string();
        assert!(e.contains("CURRENT: a symbolic link"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_roots_cache_directory_is_named_as_knavs_first_releases_named_it() {
        // Named after the root and its one-lane hash: an index found there before a change of
        // the hash is found there after it.
        let dir = super::cache_dir_in(
            std::path::Path::new("/c"),
            std::path::Path::new("/home/someone/src/linux-6.12-with-a-long-name"),
        );
        assert_eq!(
            dir,
            std::path::Path::new("/c/knav/linux-6.12-with-a-long-name-e79f096b3cfc977d")
        );
    }
}
