//! Walking a source tree: which files knav indexes and which it only counts.
//!
//! `.c`, `.h` and `.S` files are candidates; every other file is counted as unindexed. Symbolic links
//! are never followed (the kernel's `scripts/dtc/include-prefixes` would otherwise index 1,029
//! files twice, and a link loop would never end). Version-control directories and knav's own
//! index directory are skipped, and so is what `.knav.toml`'s `index.ignore` names. Directories are read in parallel and files are stat'ed relative
//! to their open directory. Names of any bytes are kept as [`crate::tree::pathname`] escapes them. The
//! index sorts the files by path, so file ids are stable.

use std::collections::HashSet;
use std::path::Path;
use std::time::UNIX_EPOCH;

use crate::tree::pathname;
use crate::tree::settings::Ignore;

pub use crate::tree::beneath::DEFAULT_MAX_FILE_BYTES;

/// One candidate source file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceFile {
    /// Root-relative path with `/` separators.
    pub path: String,
    /// Size in bytes.
    pub size: u64,
    /// Modification time in nanoseconds since the epoch.
    pub mtime_ns: i64,
}

/// What one directory held when it was read: enough to skip reading it again while its
/// modification time stays the same (adding, removing or renaming an entry changes it).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DirListing {
    /// Root-relative path, `""` for the root.
    pub path: String,
    /// The directory's modification time when it was read, or 0 when unknown.
    pub mtime_ns: i64,
    /// Files that are not C sources.
    pub other_files: u32,
    /// Symbolic links.
    pub symlinks: u32,
    /// Names of subdirectories entered.
    pub subdirs: Names,
    /// Names of `.c`/`.h` files.
    pub sources: Names,
    /// Names of build files (`Makefile`, `Kbuild`, `Kconfig*`).
    pub builds: Names,
    /// `(size, mtime_ns)` of each of `sources` when last seen.
    pub stats: Vec<(u64, i64)>,
    /// `(size, mtime_ns)` of each of `builds` when last seen.
    pub build_stats: Vec<(u64, i64)>,
}

/// File names back to back in one string: a cached directory's names cost two allocations,
/// not one each (reading the kernel's walk cache allocated 70,000 strings).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Names {
    text: String,
    ends: Vec<u32>,
}

impl Names {
    /// Room for `names` names of `bytes` bytes in all.
    pub fn with_capacity(names: usize, bytes: usize) -> Names {
        Names {
            text: String::with_capacity(bytes),
            ends: Vec::with_capacity(names),
        }
    }

    /// Appends `name`.
    pub fn push(&mut self, name: &str) {
        self.text.push_str(name);
        self.ends.push(self.text.len() as u32);
    }

    /// The number of names.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The names in order.
    pub fn iter(&self) -> impl Iterator<Item = &str> + Clone + '_ {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts
            .zip(&self.ends)
            .map(|(a, &b)| &self.text[a as usize..b as usize])
    }
}

/// The listings of a previous walk, and when it was taken.
#[derive(Clone, Debug, Default)]
pub struct WalkCache {
    /// When the walk started, in nanoseconds since the epoch. Listings whose directory changed
    /// less than [`CACHE_SLACK_NS`] before it are not trusted: a change in the same clock tick
    /// would not move the mtime.
    pub taken_ns: i64,
    /// Every directory walked.
    pub dirs: Vec<DirListing>,
    /// The index generation the listings' stats were taken for: a walk that sees the same stats
    /// in the same directories has nothing to report against that generation.
    pub generation: u64,
}

/// The stats of a listed file that could not be stat'ed: matches no real file.
const UNSEEN: (u64, i64) = (u64::MAX, 0);

/// See [`WalkCache::taken_ns`].
pub const CACHE_SLACK_NS: i64 = 2_000_000_000;

/// What a walk found.
#[derive(Debug, Default)]
pub struct Walk {
    /// Candidate `.c`/`.h` files at or under the size cap.
    pub sources: Vec<SourceFile>,
    /// `.c`/`.h` files over the size cap.
    pub too_big: Vec<SourceFile>,
    /// Build files: `Makefile`, `Kbuild`, `Kconfig*` (also counted in `other_files`).
    pub builds: Vec<SourceFile>,
    /// Files that are not C sources (Makefiles, `.S`, docs…): counted, not indexed.
    pub other_files: u64,
    /// Symbolic links skipped.
    pub symlinks: u64,
    /// Entries that could not be read, with the reason.
    pub errors: Vec<String>,
    /// The listings of directories read, for the next walk.
    pub dirs: Vec<DirListing>,
    /// Indices of the cache's listings that were still valid.
    pub cached_dirs: Vec<usize>,
    /// Of those, the ones whose files were all as cached and are not in `sources` and
    /// `builds` yet ([`Walk::materialize`]).
    pub lazy_dirs: Vec<usize>,
    /// Directories read (rather than taken from the cache).
    pub dirs_read: u64,
    /// Cached directories in which a file's size or mtime differs from the cache's.
    pub dirs_restated: u64,
}

impl Walk {
    fn absorb(&mut self, w: Walk) {
        self.sources.extend(w.sources);
        self.too_big.extend(w.too_big);
        self.builds.extend(w.builds);
        self.other_files += w.other_files;
        self.symlinks += w.symlinks;
        self.errors.extend(w.errors);
        self.dirs.extend(w.dirs);
        self.cached_dirs.extend(w.cached_dirs);
        self.lazy_dirs.extend(w.lazy_dirs);
        self.dirs_read += w.dirs_read;
        self.dirs_restated += w.dirs_restated;
    }

    fn add_source(&mut self, file: SourceFile, max_file_bytes: u64) {
        if file.size > max_file_bytes {
            self.too_big.push(file);
        } else {
            self.sources.push(file);
        }
    }

    /// Adds the files of the directories found as cached (`lazy_dirs`) to `sources`,
    /// `too_big` and `builds`, with their cached sizes and mtimes: what a caller that compares
    /// every file needs.
    pub fn materialize(&mut self, cache: &WalkCache, max_file_bytes: u64) {
        for i in std::mem::take(&mut self.lazy_dirs) {
            if let Some(d) = cache.dirs.get(i) {
                self.add_listed(d, max_file_bytes);
            }
        }
    }

    /// Adds the files of listing `d` with the sizes and mtimes it holds (those it could not
    /// stat are left out).
    fn add_listed(&mut self, d: &DirListing, max_file_bytes: u64) {
        let file = |name: &str, &(size, mtime_ns): &(u64, i64)| {
            (size != UNSEEN.0).then(|| SourceFile {
                path: join(&d.path, name),
                size,
                mtime_ns,
            })
        };
        for (name, stat) in d.sources.iter().zip(&d.stats) {
            if let Some(f) = file(name, stat) {
                self.add_source(f, max_file_bytes);
            }
        }
        for (name, stat) in d.builds.iter().zip(&d.build_stats) {
            self.builds.extend(file(name, stat));
        }
    }

    /// True when every directory came from the cache and every file's size and mtime are
    /// the cache's: nothing changed since the walk that wrote it.
    pub fn same_as_cache(&self) -> bool {
        self.dirs_read == 0 && self.dirs_restated == 0
    }

    /// The listings as a cache for the next walk, taken at `taken_ns` for index generation
    /// `generation`; `previous` is the cache this walk used, if any.
    pub fn cache(&self, previous: Option<&WalkCache>, taken_ns: i64, generation: u64) -> WalkCache {
        let mut dirs = self.dirs.clone();
        if let Some(p) = previous {
            dirs.extend(
                self.cached_dirs
                    .iter()
                    .filter_map(|i| p.dirs.get(*i).cloned()),
            );
        }
        dirs.sort_by(|a, b| a.path.cmp(&b.path));
        WalkCache {
            taken_ns,
            dirs,
            generation,
        }
    }
}

/// Now, in nanoseconds since the epoch.
pub fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}

/// Directory names never entered.
fn skipped_dir(name: &[u8]) -> bool {
    matches!(name, b".git" | b".hg" | b".svn" | b".knav" | b".pc")
}

/// True when there is a C source (`.c`, `.h`, `.S`) anywhere under `root` (ignore files not
/// read, hidden directories entered, `.git` and `.knav` not): the walk stops at the first.
pub fn any_source(root: &Path) -> bool {
    ignore::WalkBuilder::new(root)
        .standard_filters(false)
        .follow_links(false)
        .filter_entry(|e| !matches!(e.file_name().to_str(), Some(".git" | ".knav")))
        .build()
        .flatten()
        .any(|e| {
            e.file_type().is_some_and(|t| t.is_file())
                && e.file_name().to_str().is_some_and(is_source_name)
        })
}

/// True when `path` (bytes, unescaped) names a directory at or below the root as a cache
/// lists it: empty (the root), or relative with no component empty, `.`, `..` or holding a NUL.
/// A cache that names another is forged or damaged.
pub fn is_path_below_root(path: &[u8]) -> bool {
    path.is_empty() || path.split(|b| *b == b'/').all(is_one_name)
}

/// True when `name` (bytes, unescaped) is one directory entry's name: not empty, `.` or `..`,
/// with no `/` or NUL.
pub fn is_one_name(name: &[u8]) -> bool {
    !matches!(name, b"" | b"." | b"..") && !name.iter().any(|b| matches!(b, b'/' | 0))
}

/// True for a file name knav indexes.
pub fn is_source_name(name: &str) -> bool {
    name.ends_with(".c") || name.ends_with(".h") || is_asm_name(name)
}

/// True for a preprocessed assembly file (`.S`): scanned for references and for the symbols
/// its `SYM_FUNC_START(…)`-style macros define, but not given to ctags.
pub fn is_asm_name(name: &str) -> bool {
    name.ends_with(".S")
}

/// The modification time of `meta` in nanoseconds.
pub fn mtime_ns(meta: &std::fs::Metadata) -> i64 {
    match meta.modified() {
        Ok(t) => match t.duration_since(UNIX_EPOCH) {
            Ok(d) => d.as_nanos() as i64,
            Err(e) => -(e.duration().as_nanos() as i64),
        },
        Err(_) => 0,
    }
}

fn join(rel: &str, name: &str) -> String {
    if rel.is_empty() {
        name.to_string()
    } else {
        format!("{rel}/{name}")
    }
}

/// What changed since the last walk, as a file watcher saw it: the only entries a walk needs
/// to look at again. Everything else is taken as it was.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Hint {
    /// Root-relative files written, created, deleted or moved.
    pub files: HashSet<String>,
    /// Root-relative directories whose entries changed (a subdirectory came or went).
    pub dirs: HashSet<String>,
}

impl Hint {
    /// True when nothing changed.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty() && self.dirs.is_empty()
    }
}

/// A hint and where to find the size and mtime of every file it does not name (the index).
pub struct Trust<'a> {
    /// What changed.
    pub hint: &'a Hint,
    /// `(size, mtime_ns)` of a file as last indexed; `None` makes the walk stat it.
    pub known: &'a (dyn Fn(&str) -> Option<(u64, i64)> + Sync),
}

/// True for a build file knav reads for Kbuild and Kconfig facts.
pub fn is_build_name(name: &str) -> bool {
    name == "Makefile" || name == "Kbuild" || name.starts_with("Kconfig")
}

/// Walks `root`, reading directories in parallel. With a `cache`, a directory whose mtime is
/// unchanged is not read again: only its C sources are stat'ed. With `trust` as well, a
/// directory the hint does not name is not even stat'ed, and neither are its files the hint
/// does not name. The files come in no particular order.
pub fn walk(
    root: &Path,
    max_file_bytes: u64,
    ignore: &Ignore,
    cache: Option<&WalkCache>,
    trust: Option<&Trust<'_>>,
) -> Walk {
    use rayon::prelude::*;
    let Some(cache) = cache.filter(|c| !c.dirs.is_empty()) else {
        return walk_dir(root, "", max_file_bytes, ignore);
    };
    let known: HashSet<&str> = cache.dirs.iter().map(|d| d.path.as_str()).collect();
    let parts: Vec<Walk> = cache
        .dirs
        .par_iter()
        .enumerate()
        .map(|(i, d)| {
            if let Some(t) = trust.filter(|t| !t.hint.dirs.contains(&d.path)) {
                return trusted_dir(root, i, d, t, max_file_bytes);
            }
            let dir = root.join(pathname::to_path(&d.path));
            let names = d.sources.iter().chain(d.builds.iter());
            let Some((mtime, mut stats)) = stat_dir(&dir, names) else {
                return Walk::default(); // gone; its parent was read again and says so
            };
            let build_stats = stats.split_off(d.sources.len());
            if mtime == d.mtime_ns && d.mtime_ns < cache.taken_ns - CACHE_SLACK_NS {
                // A file edited in place leaves the directory's mtime alone: its stats say it.
                let same = |seen: &[Option<(u64, i64)>], cached: &[(u64, i64)]| {
                    seen.len() == cached.len()
                        && seen.iter().zip(cached).all(|(a, b)| a.as_ref() == Some(b))
                };
                let restated = !same(&stats, &d.stats) || !same(&build_stats, &d.build_stats);
                let mut out = Walk {
                    other_files: d.other_files as u64,
                    symlinks: d.symlinks as u64,
                    ..Default::default()
                };
                if !restated {
                    // Its files are the cache's: listed only if the caller needs them
                    // ([`Walk::materialize`]).
                    out.cached_dirs.push(i);
                    out.lazy_dirs.push(i);
                    return out;
                }
                out.dirs_restated = 1;
                let listing = DirListing {
                    stats: stats.iter().map(|s| s.unwrap_or(UNSEEN)).collect(),
                    build_stats: build_stats.iter().map(|s| s.unwrap_or(UNSEEN)).collect(),
                    ..d.clone()
                };
                out.add_listed(&listing, max_file_bytes);
                out.dirs.push(listing);
                return out;
            }
            // Changed: read it again; subdirectories the cache does not know are walked whole.
            let (mut out, subdirs) = list_dir(root, &d.path, max_file_bytes, ignore, mtime);
            let new: Vec<Walk> = subdirs
                .par_iter()
                .filter(|s| !known.contains(s.as_str()))
                .map(|s| walk_dir(root, s, max_file_bytes, ignore))
                .collect();
            for w in new {
                out.absorb(w);
            }
            out
        })
        .collect();
    let mut out = Walk::default();
    for w in parts {
        out.absorb(w);
    }
    out
}

/// A cached directory whose entries did not change: sources the hint does not name keep their
/// indexed size and mtime; the others are stat'ed.
fn trusted_dir(root: &Path, i: usize, d: &DirListing, t: &Trust<'_>, max_file_bytes: u64) -> Walk {
    let mut out = Walk {
        other_files: d.other_files as u64,
        symlinks: d.symlinks as u64,
        cached_dirs: vec![i],
        ..Default::default()
    };
    let mut to_stat = Vec::new();
    for (name, build) in d
        .sources
        .iter()
        .map(|n| (n, false))
        .chain(d.builds.iter().map(|n| (n, true)))
    {
        let path = join(&d.path, name);
        match (t.hint.files.contains(&path), (t.known)(&path)) {
            (false, Some((size, mtime_ns))) => {
                let file = SourceFile {
                    path,
                    size,
                    mtime_ns,
                };
                if build {
                    out.builds.push(file);
                } else {
                    out.add_source(file, max_file_bytes);
                }
            }
            _ => to_stat.push((name, build)),
        }
    }
    if !to_stat.is_empty() {
        let names = to_stat.iter().map(|(n, _)| *n);
        let stats =
            stat_dir(&root.join(pathname::to_path(&d.path)), names).map_or_else(Vec::new, |s| s.1);
        for ((name, build), stat) in to_stat.iter().zip(stats) {
            if let Some((size, mtime_ns)) = stat {
                let file = SourceFile {
                    path: join(&d.path, name),
                    size,
                    mtime_ns,
                };
                if *build {
                    out.builds.push(file);
                } else {
                    out.add_source(file, max_file_bytes);
                }
            }
        }
    }
    out
}

/// The mtime of directory `dir` (not followed if a link: then `None`, as when it is gone) and
/// `(size, mtime_ns)` of each regular file of `names` in it (`None` for one that is gone or not
/// a regular file). On Linux the directory is opened once and stat'ed through its descriptor,
/// and each name relative to it (`fstatat`): a fraction of the cost of stats by full path.
#[cfg(target_os = "linux")]
#[allow(clippy::type_complexity)]
pub(crate) fn stat_dir<'n>(
    dir: &Path,
    names: impl Iterator<Item = &'n str>,
) -> Option<(i64, Vec<Option<(u64, i64)>>)> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let dir = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW)
        .open(dir)
        .ok()?;
    let meta = dir.metadata().ok()?;
    let mtime = meta.mtime() * 1_000_000_000 + meta.mtime_nsec();
    let fd = dir.as_raw_fd();
    // One buffer for every name's C string.
    let mut cname: Vec<u8> = Vec::with_capacity(256);
    let out = names
        .map(|name| {
            let name = pathname::decode(name);
            if name.contains(&0) {
                return None;
            }
            cname.clear();
            cname.extend_from_slice(&name);
            cname.push(0);
            // SAFETY: `st` is plain data that fstatat fills.
            let mut st: libc::stat = unsafe { std::mem::zeroed() };
            // SAFETY: `fd` is open while `dir` lives; `cname` is a NUL-terminated string
            // without inner NULs; `st` is writable.
            let rc = unsafe {
                libc::fstatat(
                    fd,
                    cname.as_ptr().cast(),
                    &mut st,
                    libc::AT_SYMLINK_NOFOLLOW,
                )
            };
            if rc != 0 || st.st_mode & libc::S_IFMT != libc::S_IFREG {
                return None;
            }
            Some((
                st.st_size as u64,
                st.st_mtime as i64 * 1_000_000_000 + st.st_mtime_nsec as i64,
            ))
        })
        .collect();
    Some((mtime, out))
}

#[cfg(not(target_os = "linux"))]
#[allow(clippy::type_complexity)]
pub(crate) fn stat_dir<'n>(
    dir: &Path,
    names: impl Iterator<Item = &'n str>,
) -> Option<(i64, Vec<Option<(u64, i64)>>)> {
    let meta = std::fs::symlink_metadata(dir).ok().filter(|m| m.is_dir())?;
    let stats = names
        .map(
            |name| match std::fs::symlink_metadata(dir.join(pathname::to_path(name))) {
                Ok(m) if m.is_file() => Some((m.len(), mtime_ns(&m))),
                _ => None,
            },
        )
        .collect();
    Some((mtime_ns(&meta), stats))
}

/// One directory (`rel` under `root`, `""` for the root) and everything below it.
fn walk_dir(root: &Path, rel: &str, max_file_bytes: u64, ignore: &Ignore) -> Walk {
    use rayon::prelude::*;
    let dir = root.join(pathname::to_path(rel));
    // The mtime is taken before reading, so a change during the read shows up next time.
    let mtime = std::fs::symlink_metadata(&dir).map_or(0, |m| mtime_ns(&m));
    let (mut out, subdirs) = list_dir(root, rel, max_file_bytes, ignore, mtime);
    let below: Vec<Walk> = subdirs
        .par_iter()
        .map(|d| walk_dir(root, d, max_file_bytes, ignore))
        .collect();
    for w in below {
        out.absorb(w);
    }
    out
}

/// Reads one directory: its sources (stat'ed), counts, and the paths of its subdirectories.
fn list_dir(
    root: &Path,
    rel: &str,
    max_file_bytes: u64,
    ignore: &Ignore,
    mtime: i64,
) -> (Walk, Vec<String>) {
    let mut out = Walk {
        dirs_read: 1,
        ..Default::default()
    };
    let mut listing = DirListing {
        path: rel.to_string(),
        mtime_ns: mtime,
        ..Default::default()
    };
    let dir = root.join(pathname::to_path(rel));
    let entries = match std::fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) => {
            out.errors.push(format!("{}: {e}", dir.display()));
            return (out, Vec::new());
        }
    };
    let mut subdirs: Vec<String> = Vec::new();
    for entry in entries {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                out.errors.push(format!("{}: {e}", dir.display()));
                continue;
            }
        };
        // The type comes from the directory entry itself: no stat, and links are not followed.
        let Ok(ft) = entry.file_type() else { continue };
        let name = entry.file_name();
        let name = &*pathname::encode_os(&name);
        if !ignore.is_empty() && ignore.is_ignored(&join(rel, name), ft.is_dir()) {
            continue;
        }
        if ft.is_symlink() {
            listing.symlinks += 1;
        } else if ft.is_dir() {
            if !skipped_dir(name.as_bytes()) {
                subdirs.push(join(rel, name));
                listing.subdirs.push(name);
            }
        } else if !ft.is_file() {
        } else if !is_source_name(name) {
            listing.other_files += 1;
            if is_build_name(name) {
                listing.builds.push(name);
                match entry.metadata() {
                    Ok(meta) => {
                        listing.build_stats.push((meta.len(), mtime_ns(&meta)));
                        out.builds.push(SourceFile {
                            path: join(rel, name),
                            size: meta.len(),
                            mtime_ns: mtime_ns(&meta),
                        })
                    }
                    Err(e) => {
                        listing.build_stats.push(UNSEEN);
                        out.errors.push(format!("{}: {e}", join(rel, name)))
                    }
                }
            }
        } else {
            let path = join(rel, name);
            listing.sources.push(name);
            // `DirEntry::metadata` stats relative to the open directory: no path walk.
            match entry.metadata() {
                Ok(meta) => {
                    listing.stats.push((meta.len(), mtime_ns(&meta)));
                    out.add_source(
                        SourceFile {
                            path,
                            size: meta.len(),
                            mtime_ns: mtime_ns(&meta),
                        },
                        max_file_bytes,
                    )
                }
                Err(e) => {
                    listing.stats.push(UNSEEN);
                    out.errors.push(format!("{path}: {e}"))
                }
            }
        }
    }
    out.other_files = listing.other_files as u64;
    out.symlinks = listing.symlinks as u64;
    out.dirs.push(listing);
    (out, subdirs)
}
