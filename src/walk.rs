//! Walking a source tree: which files knav indexes and which it only counts.
//!
//! `.c` and `.h` files are candidates; every other file is counted as unindexed. Symbolic links
//! are never followed (the kernel's `scripts/dtc/include-prefixes` would otherwise index 1,029
//! files twice, and a link loop would never end). Version-control directories and knav's own
//! index directory are skipped. Directories are read in parallel and files are stat'ed relative
//! to their open directory. The index sorts the files by path, so file ids are stable.

use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

/// Files larger than this are not indexed by default (the kernel's largest generated register
/// header is 24 MB; anything above 64 MB is not source a person reads).
pub const DEFAULT_MAX_FILE_BYTES: u64 = 64 << 20;

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

/// What a walk found.
#[derive(Debug, Default)]
pub struct Walk {
    /// Candidate `.c`/`.h` files at or under the size cap.
    pub sources: Vec<SourceFile>,
    /// `.c`/`.h` files over the size cap.
    pub too_big: Vec<SourceFile>,
    /// Files that are not C sources (Makefiles, `.S`, docs…): counted, not indexed.
    pub other_files: u64,
    /// Symbolic links skipped.
    pub symlinks: u64,
    /// Entries that could not be read, with the reason.
    pub errors: Vec<String>,
}

/// Directory names never entered.
fn skipped_dir(name: &[u8]) -> bool {
    matches!(name, b".git" | b".hg" | b".svn" | b".knav" | b".pc")
}

/// True for a file name knav indexes.
pub fn is_source_name(name: &str) -> bool {
    name.ends_with(".c") || name.ends_with(".h")
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

/// Walks `root`, reading directories in parallel. The files come in no particular order.
pub fn walk(root: &Path, max_file_bytes: u64) -> Walk {
    walk_dir(root, "", max_file_bytes)
}

/// One directory (`rel` under `root`, `""` for the root) and everything below it.
fn walk_dir(root: &Path, rel: &str, max_file_bytes: u64) -> Walk {
    let mut out = Walk::default();
    let dir = if rel.is_empty() {
        root.to_path_buf()
    } else {
        root.join(rel)
    };
    let entries = match std::fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) => {
            out.errors.push(format!("{}: {e}", dir.display()));
            return out;
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
        let Some(name) = name.to_str() else {
            out.errors.push(format!(
                "{}: path is not UTF-8",
                dir.join(entry.file_name()).display()
            ));
            continue;
        };
        let path = || {
            if rel.is_empty() {
                name.to_string()
            } else {
                format!("{rel}/{name}")
            }
        };
        if ft.is_symlink() {
            out.symlinks += 1;
        } else if ft.is_dir() {
            if !skipped_dir(name.as_bytes()) {
                subdirs.push(path());
            }
        } else if !ft.is_file() {
        } else if !is_source_name(name) {
            out.other_files += 1;
        } else {
            let path = path();
            // `DirEntry::metadata` stats relative to the open directory: no path walk.
            match entry.metadata() {
                Ok(meta) => {
                    let file = SourceFile {
                        path,
                        size: meta.len(),
                        mtime_ns: mtime_ns(&meta),
                    };
                    if file.size > max_file_bytes {
                        out.too_big.push(file);
                    } else {
                        out.sources.push(file);
                    }
                }
                Err(e) => out.errors.push(format!("{path}: {e}")),
            }
        }
    }
    use rayon::prelude::*;
    let below: Vec<Walk> = subdirs
        .par_iter()
        .map(|d| walk_dir(root, d, max_file_bytes))
        .collect();
    for w in below {
        out.sources.extend(w.sources);
        out.too_big.extend(w.too_big);
        out.other_files += w.other_files;
        out.symlinks += w.symlinks;
        out.errors.extend(w.errors);
    }
    out
}

/// `path` relative to `root`, with `/` separators; `None` when it is not UTF-8.
pub fn relative(root: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).unwrap_or(path);
    let s = rel.to_str()?;
    Some(s.replace(std::path::MAIN_SEPARATOR, "/"))
}

/// `root` made absolute and canonical, or an error that says what is wrong with it.
pub fn resolve_root(root: &Path) -> Result<PathBuf, String> {
    let meta = std::fs::metadata(root).map_err(|e| {
        format!(
            "root {} cannot be read: {e}; pass --root with an existing directory",
            root.display()
        )
    })?;
    if !meta.is_dir() {
        return Err(format!(
            "root {} is not a directory; pass --root with the top of a source tree",
            root.display()
        ));
    }
    std::fs::canonicalize(root).map_err(|e| format!("root {}: {e}", root.display()))
}
