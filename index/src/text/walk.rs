//! The files `rg` searches in a tree by default, with their sizes and mtimes, and a cache that
//! lets the next walk stat them instead of reading every directory again.
//!
//! The rules are ripgrep's own, from its `ignore` crate: hidden files and directories skipped,
//! symbolic links not followed, `.ignore` and `.rgignore` honoured everywhere (and in the root's
//! parents), `.gitignore` and `.git/info/exclude` only inside a git repository. A directory
//! whose mtime did not change keeps its listing (its files are stat'ed through one open
//! descriptor); one that changed is listed again with the same rules. An ignore file that
//! appears, goes or changes makes the whole walk start over, since it can change any file below.

use std::collections::HashSet;
use std::path::Path;
use std::sync::Mutex;

use crate::tree::walk::{mtime_ns, Names, CACHE_SLACK_NS};

/// One file rg would search.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextFile {
    /// Root-relative path with `/` separators.
    pub path: String,
    /// Size in bytes.
    pub size: u64,
    /// Modification time in nanoseconds since the epoch.
    pub mtime_ns: i64,
}

/// One directory as last listed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TextDir {
    /// Root-relative path, `""` for the root.
    pub path: String,
    /// Its mtime when listed.
    pub mtime_ns: i64,
    /// Names of the files searched, in order.
    pub names: Names,
    /// `(size, mtime_ns)` of each of `names`.
    pub stats: Vec<(u64, i64)>,
    /// Ignore files in it (`.ignore`, `.rgignore`, `.gitignore`), with `(size, mtime_ns)`.
    pub ignores: Vec<(String, u64, i64)>,
}

/// The listings of the last walk.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TextCache {
    /// When that walk started (ns since the epoch).
    pub taken_ns: i64,
    /// Every directory it entered, by path.
    pub dirs: Vec<TextDir>,
}

/// What a walk found.
#[derive(Debug, Default)]
pub struct TextWalk {
    /// Every file, sorted by path; empty when `same_as_cache` and the caller allowed it.
    pub files: Vec<TextFile>,
    /// The listings for the next walk.
    pub cache: TextCache,
    /// True when nothing differs from the cache it started from.
    pub same_as_cache: bool,
}

/// Ignore file names read in every directory (hidden: never searched themselves).
const IGNORE_FILES: [&str; 3] = [".gitignore", ".ignore", ".rgignore"];

/// The builder of ripgrep's default walk under `dir`.
/// A git revision's files (`--rev`) are walked as a checkout of it is: their own ignore files
/// apply, those of the directories they are kept in do not.
fn builder(dir: &Path, max_depth: Option<usize>) -> ignore::WalkBuilder {
    // A pinned root (`/proc/self/fd/N`, a link by design) is walked from its `.`: the walk
    // follows no link, and its paths are the same below the root.
    let pinned = crate::indexdir::shown(dir) != dir;
    let mut b = match pinned {
        true => ignore::WalkBuilder::new(dir.join(".")),
        false => ignore::WalkBuilder::new(dir),
    };
    b.add_custom_ignore_filename(".rgignore")
        .follow_links(false)
        .max_depth(max_depth)
        .threads(rayon::current_num_threads().max(1));
    if crate::indexdir::is_revision_tree(&crate::indexdir::shown(dir)) {
        b.parents(false).require_git(false);
    }
    b
}

/// What the index's own walk already knows of the C sources and build files, so that the
/// text walk need not stat them again.
pub enum Known<'a> {
    /// Nothing: stat every file.
    Nothing,
    /// Every C source and build file is as its cached listing has it (the index's walk found
    /// nothing changed).
    AsCached,
    /// Their stats by root-relative path (the index's walk just took them).
    Stats(&'a std::collections::HashMap<&'a str, (u64, i64)>),
}

/// Walks `root` (or, with a `cache`, only the directories that changed since). With `lazy`,
/// a walk that finds everything as the cache has it lists neither files nor listings (the
/// caller has what it needs).
pub fn walk(root: &Path, cache: Option<&TextCache>, known: &Known<'_>, lazy: bool) -> TextWalk {
    let taken_ns = crate::tree::walk::now_ns();
    if let Some(c) = cache.filter(|c| !c.dirs.is_empty()) {
        if let Some(w) = refresh(root, c, taken_ns, known, lazy) {
            return w;
        }
    }
    let dirs = list_tree(root, "");
    finish(dirs, taken_ns, false)
}

/// Sorts the listings and flattens their files.
fn finish(mut dirs: Vec<TextDir>, taken_ns: i64, same_as_cache: bool) -> TextWalk {
    dirs.sort_by(|a, b| a.path.cmp(&b.path));
    dirs.dedup_by(|a, b| a.path == b.path);
    let mut files: Vec<TextFile> = dirs
        .iter()
        .flat_map(|d| {
            d.names
                .iter()
                .zip(&d.stats)
                .map(|(name, (size, mtime_ns))| TextFile {
                    path: join(&d.path, name),
                    size: *size,
                    mtime_ns: *mtime_ns,
                })
        })
        .collect();
    files.sort_unstable_by(|a, b| a.path.cmp(&b.path));
    TextWalk {
        files,
        cache: TextCache { taken_ns, dirs },
        same_as_cache,
    }
}

/// Every directory under `rel` (itself included) with rg's rules, listed.
fn list_tree(root: &Path, rel: &str) -> Vec<TextDir> {
    list_with(root, rel, None).0
}

/// The directories rg enters under `rel`, down to `max_depth`, each with its files, and the
/// directories it would enter next (at `max_depth`).
fn list_with(root: &Path, rel: &str, max_depth: Option<usize>) -> (Vec<TextDir>, Vec<String>) {
    let top = root.join(rel);
    let found: Mutex<Vec<(String, bool, u64, i64)>> = Mutex::new(Vec::new());
    builder(&top, max_depth).build_parallel().run(|| {
        let found = &found;
        Box::new(move |entry| {
            let Ok(entry) = entry else {
                return ignore::WalkState::Continue;
            };
            let Some(ft) = entry.file_type() else {
                return ignore::WalkState::Continue;
            };
            let Ok(sub) = entry.path().strip_prefix(root) else {
                return ignore::WalkState::Continue;
            };
            // Names that are not UTF-8 are left out (the index counts them elsewhere).
            let Some(sub) = sub.to_str() else {
                return ignore::WalkState::Continue;
            };
            if ft.is_dir() || ft.is_file() {
                if let Ok(meta) = entry.metadata() {
                    let row = (sub.to_string(), ft.is_dir(), meta.len(), mtime_ns(&meta));
                    found
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .push(row);
                }
            }
            ignore::WalkState::Continue
        })
    });
    let found = found
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    type Listed = (TextDir, Vec<(String, u64, i64)>);
    let mut dirs: std::collections::HashMap<String, Listed> = std::collections::HashMap::new();
    for (path, is_dir, size, mtime) in found {
        if is_dir {
            let d = &mut dirs.entry(path.clone()).or_default().0;
            d.path = path;
            d.mtime_ns = mtime;
        } else {
            let (dir, name) = match path.rsplit_once('/') {
                Some((d, n)) => (d.to_string(), n.to_string()),
                None => (String::new(), path),
            };
            let d = dirs.entry(dir.clone()).or_default();
            d.0.path = dir;
            d.1.push((name, size, mtime));
        }
    }
    let mut out: Vec<TextDir> = dirs
        .into_values()
        .map(|(mut d, mut files)| {
            files.sort();
            d.names = Names::with_capacity(files.len(), files.iter().map(|f| f.0.len()).sum());
            for (name, size, mtime) in files {
                d.names.push(&name);
                d.stats.push((size, mtime));
            }
            d
        })
        .collect();
    // A directory at `max_depth` was seen as an entry but not entered.
    let mut next = Vec::new();
    if let Some(depth) = max_depth {
        let depth_of = |p: &str| {
            if p.is_empty() {
                0
            } else {
                p.split('/').count()
            }
        };
        let base = depth_of(rel);
        out.retain(|d| {
            let deep = depth_of(&d.path) >= base + depth;
            if deep {
                next.push(d.path.clone());
            }
            !deep
        });
    }
    for d in &mut out {
        d.ignores = ignore_files(&root.join(&d.path));
    }
    (out, next)
}

/// The ignore files in `dir`, with their stats.
fn ignore_files(dir: &Path) -> Vec<(String, u64, i64)> {
    IGNORE_FILES
        .iter()
        .filter_map(|name| {
            let m = std::fs::symlink_metadata(dir.join(name)).ok()?;
            Some((name.to_string(), m.len(), mtime_ns(&m)))
        })
        .collect()
}

/// What one cached directory turned out to be.
enum Seen {
    /// As cached, every file's stat the same.
    Same,
    /// Its listings now (itself, and any new directory below it; none when it is gone).
    Changed(Vec<TextDir>),
}

/// The walk from `cache`: `None` when an ignore file changed (walk everything again).
fn refresh(
    root: &Path,
    cache: &TextCache,
    taken_ns: i64,
    known: &Known<'_>,
    lazy: bool,
) -> Option<TextWalk> {
    use rayon::prelude::*;
    let cached_dirs: HashSet<&str> = cache.dirs.iter().map(|d| d.path.as_str()).collect();
    let parts: Vec<Option<Seen>> = cache
        .dirs
        .par_iter()
        .map(|d| see_dir(root, cache, d, known, &cached_dirs))
        .collect();
    let mut parts: Vec<Seen> = parts.into_iter().collect::<Option<_>>()?;
    let same = parts.iter().all(|p| matches!(p, Seen::Same));
    if same && lazy {
        return Some(TextWalk {
            same_as_cache: true,
            ..Default::default()
        });
    }
    let mut dirs = Vec::with_capacity(cache.dirs.len());
    for (i, p) in parts.iter_mut().enumerate() {
        match p {
            Seen::Same => dirs.push(cache.dirs[i].clone()),
            Seen::Changed(listed) => dirs.append(listed),
        }
    }
    // A directory whose parent was listed again but no longer holds it is dropped with the
    // parent's new listing: keep only directories whose parent is kept.
    let kept: HashSet<String> = dirs.iter().map(|d| d.path.clone()).collect();
    dirs.retain(|d| match d.path.rsplit_once('/') {
        Some((parent, _)) => kept.contains(parent),
        None => d.path.is_empty() || kept.contains(""),
    });
    Some(finish(dirs, taken_ns, same))
}

/// What the cached directory `d` of `cache` is now: stats its files (those `known` has not) and
/// lists it again when its mtime changed. `None` when one of its ignore files changed.
fn see_dir(
    root: &Path,
    cache: &TextCache,
    d: &TextDir,
    known: &Known<'_>,
    cached_dirs: &HashSet<&str>,
) -> Option<Seen> {
    let dir = root.join(&d.path);
    // The stats the index's walk has; the other files are stat'ed here.
    let given = known_stats(d, known);
    let names = d
        .names
        .iter()
        .zip(&given)
        .filter(|(_, g)| g.is_none())
        .map(|(n, _)| n)
        .chain(d.ignores.iter().map(|f| f.0.as_str()));
    let Some((mtime, stats)) = crate::tree::walk::stat_dir(&dir, names) else {
        // Gone: its parent changed and was listed again.
        return Some(Seen::Changed(Vec::new()));
    };
    let stated = stats.len() - d.ignores.len();
    let (looked, ignore_stats) = stats.split_at(stated);
    let ignores_same = ignore_stats
        .iter()
        .zip(&d.ignores)
        .all(|(s, (_, size, mtime))| *s == Some((*size, *mtime)));
    if !ignores_same {
        return None;
    }
    if mtime == d.mtime_ns && d.mtime_ns < cache.taken_ns - CACHE_SLACK_NS {
        let mut looked = looked.iter();
        let now: Vec<Option<(u64, i64)>> = given
            .iter()
            .map(|g| g.or_else(|| looked.next().copied().flatten()))
            .collect();
        if now.iter().zip(&d.stats).all(|(n, c)| *n == Some(*c)) {
            return Some(Seen::Same);
        }
        // Files edited in place (or gone: the mtime would say so, unless in the same
        // tick): the listing with their new stats.
        let mut listing = TextDir {
            path: d.path.clone(),
            mtime_ns: d.mtime_ns,
            ignores: d.ignores.clone(),
            ..Default::default()
        };
        for (name, s) in d.names.iter().zip(&now) {
            if let Some(s) = s {
                listing.names.push(name);
                listing.stats.push(*s);
            }
        }
        return Some(Seen::Changed(vec![listing]));
    }
    // Listed again; a subdirectory the cache does not know is walked whole.
    let (mut listed, subdirs) = list_with(root, &d.path, Some(1));
    if listed
        .iter()
        .any(|l| l.path == d.path && l.ignores != d.ignores)
    {
        return None;
    }
    for s in subdirs.iter().filter(|s| !cached_dirs.contains(s.as_str())) {
        listed.extend(list_tree(root, s));
    }
    Some(Seen::Changed(listed))
}

/// The stats of the files of the cached directory `d` that `known` gives (the C sources and
/// build files the index's walk has), in the order of its names; `None` for the others.
fn known_stats(d: &TextDir, known: &Known<'_>) -> Vec<Option<(u64, i64)>> {
    let mut path = String::new();
    d.names
        .iter()
        .zip(&d.stats)
        .map(|(name, &(size, mtime))| {
            let indexed =
                crate::tree::walk::is_source_name(name) || crate::tree::walk::is_build_name(name);
            match known {
                Known::AsCached if indexed => Some((size, mtime)),
                Known::Stats(m) if indexed => {
                    path.clear();
                    if !d.path.is_empty() {
                        path.push_str(&d.path);
                        path.push('/');
                    }
                    path.push_str(name);
                    m.get(path.as_str()).copied()
                }
                _ => None,
            }
        })
        .collect()
}

fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}
