//! The index's files on disk: mapped read-only with their length checked, and new part
//! directories named so that no two builds pick the same, and an index directory kept out of
//! `git status`.
//!
//! # Safety
//!
//! Index files are memory-mapped, all through [`map_file`]. A part is never written after it is
//! published (a refresh writes a new one beside it; the history writes new files and renames
//! them in), so a map sees one file whole and only breaks if something outside knav truncates an
//! index file while a query runs; that ends the query with SIGBUS, it cannot corrupt anything.

use std::fs::File;
use std::path::Path;

use memmap2::Mmap;

use super::error::IndexError;

/// A byte range of a memory map, for the `fst` crate.
pub struct MapBytes(pub Mmap);

impl AsRef<[u8]> for MapBytes {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

/// Maps the index file at `path` read-only: the one place an index file is mapped.
pub fn map_file(path: &Path) -> std::io::Result<Mmap> {
    let file = File::open(path)?;
    // SAFETY: see the module documentation; published parts are immutable.
    unsafe { Mmap::map(&file) }
}

/// Maps file `name` of `dir`, checking its length when the index gives one.
pub fn map(dir: &Path, name: &str, expected: Option<u64>) -> Result<Mmap, IndexError> {
    let path = dir.join(name);
    let m = map_file(&path).map_err(IndexError::io("", &path))?;
    match expected {
        Some(len) if m.len() as u64 != len => Err(IndexError::Truncated {
            path,
            len: m.len() as u64,
            expected: len,
        }),
        _ => Ok(m),
    }
}

/// A fresh, unique directory name inside `dir` with `prefix` (for tests).
#[cfg(test)]
pub fn unique_dir(dir: &Path, prefix: &str) -> std::path::PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    dir.join(format!("{prefix}-{nanos:x}-{}", std::process::id()))
}

/// Takes from `dir`'s permissions what `root`'s lack for the group and others (owner access
/// kept): an index must not let read the symbols of a tree its reader cannot read. The index's
/// files are reached only through `dir`, so `dir` alone decides.
pub fn no_wider_than(dir: &Path, root: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let (Ok(d), Ok(r)) = (std::fs::metadata(dir), std::fs::metadata(root)) else {
        return;
    };
    let (mode, allowed) = (
        d.permissions().mode() & 0o7777,
        r.permissions().mode() | 0o700,
    );
    if mode & !allowed & 0o077 != 0 {
        let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode & allowed));
    }
}
