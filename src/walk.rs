//! Walking a source tree: which files knav indexes and which it only counts.
//!
//! `.c` and `.h` files are candidates; every other file is counted as unindexed. Symbolic links
//! are never followed (the kernel's `scripts/dtc/include-prefixes` would otherwise index 1,029
//! files twice, and a link loop would never end). Version-control directories and knav's own
//! index directory are skipped. The result is sorted by path, so file ids are stable.

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
    /// Candidate `.c`/`.h` files at or under the size cap, sorted by path.
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

/// Walks `root`.
pub fn walk(root: &Path, max_file_bytes: u64) -> Walk {
    let mut out = Walk::default();
    let it = walkdir::WalkDir::new(root)
        .follow_links(false)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            !(e.file_type().is_dir()
                && e.depth() > 0
                && skipped_dir(e.file_name().as_encoded_bytes()))
        });
    for entry in it {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                out.errors.push(e.to_string());
                continue;
            }
        };
        let ft = entry.file_type();
        if ft.is_symlink() {
            out.symlinks += 1;
            continue;
        }
        if !ft.is_file() {
            continue;
        }
        let name = entry.file_name().to_str().unwrap_or("");
        if !is_source_name(name) {
            out.other_files += 1;
            continue;
        }
        let Some(path) = relative(root, entry.path()) else {
            out.errors
                .push(format!("{}: path is not UTF-8", entry.path().display()));
            continue;
        };
        let meta = match entry.metadata() {
            Ok(m) => m,
            Err(e) => {
                out.errors.push(format!("{path}: {e}"));
                continue;
            }
        };
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
    // walkdir sorts each directory by name; a full path sort makes `a/b.c` vs `a.c/…` agree.
    out.sources.sort_by(|a, b| a.path.cmp(&b.path));
    out.too_big.sort_by(|a, b| a.path.cmp(&b.path));
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
