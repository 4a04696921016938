//! Which tree a command run without `--root` is about, found from below as git and gtags find
//! theirs: the nearest directory at or above the current one that holds a usable knav index,
//! else the nearest top of a git work tree or of a kernel tree (`Kbuild`, `Kconfig`, and
//! `MAINTAINERS` or `Makefile`); never `$HOME` or above it, never the filesystem's root. When
//! none is found the current directory is the root, as before.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::index::store::{existing_index_dir, CURRENT};

/// The root found above a directory, and why it is that one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    /// The tree's top (a real path).
    pub root: PathBuf,
    /// What marks it: `an index`, `a git work tree`, `a kernel tree`.
    pub why: &'static str,
}

/// The directories a search from `start` (a real path) may take as a root, nearest first:
/// `start` and its parents, stopping below `$HOME` (when `start` is under it) and below `/`.
fn candidates(start: &Path) -> Vec<&Path> {
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .and_then(|h| std::fs::canonicalize(h).ok());
    start
        .ancestors()
        .take_while(|a| a.parent().is_some())
        .take_while(|a| home.as_deref() != Some(*a))
        .collect()
}

/// True when `dir` is the top of a kernel tree.
fn kernel_top(dir: &Path) -> bool {
    dir.join("Kbuild").is_file()
        && dir.join("Kconfig").is_file()
        && (dir.join("MAINTAINERS").is_file() || dir.join("Makefile").is_file())
}

/// The root for a command run in `start` (a real path): see the module's doc. `explicit_dir`:
/// an index directory the user named (`--index-dir`, `$KNAV_INDEX_DIR`), which belongs to no
/// directory in particular, so only the markers count.
pub fn root_above(start: &Path, explicit_dir: bool) -> Option<Found> {
    let dirs = candidates(start);
    if !explicit_dir {
        let indexed = dirs
            .iter()
            .find(|d| existing_index_dir(d, None).join(CURRENT).is_file());
        if let Some(d) = indexed {
            return Some(Found {
                root: d.to_path_buf(),
                why: "an index",
            });
        }
    }
    dirs.iter().find_map(|d| {
        let why = if d.join(".git").exists() {
            "a git work tree"
        } else if kernel_top(d) {
            "a kernel tree"
        } else {
            return None;
        };
        Some(Found {
            root: d.to_path_buf(),
            why,
        })
    })
}

/// True when `root` is another user's directory: its index then goes to the user's cache
/// directory, never into the tree (SECURITY.md: an index directory another user owns is
/// refused, and one made in another's tree would be refused to them).
pub fn someone_elses(root: &Path) -> bool {
    // SAFETY: plain syscall without arguments.
    let me = unsafe { libc::geteuid() };
    std::fs::metadata(root).is_ok_and(|m| m.uid() != me)
}

/// `path`, given relative to the directory `cwd` below `root`, as a root-relative path in
/// knav's escaped form (`.` and `..` folded; a path that leaves the root kept as given, for
/// the search to refuse).
pub fn rebased(root: &Path, cwd: &Path, path: &str) -> String {
    let below = cwd.strip_prefix(root).unwrap_or(Path::new(""));
    let given = crate::pathname::to_path(path);
    if given.is_absolute() {
        return path.to_string();
    }
    let mut parts: Vec<std::ffi::OsString> = Vec::new();
    for c in below.components().chain(given.components()) {
        match c {
            std::path::Component::Normal(n) => parts.push(n.to_os_string()),
            std::path::Component::ParentDir if parts.pop().is_none() => return path.to_string(),
            _ => {}
        }
    }
    let joined: PathBuf = parts.iter().collect();
    if joined.as_os_str().is_empty() {
        return ".".to_string();
    }
    crate::pathname::encode(joined.as_os_str().as_encoded_bytes()).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_given_below_the_root_is_made_root_relative() {
        let (root, cwd) = (Path::new("/t"), Path::new("/t/fs/ext4"));
        assert_eq!(rebased(root, cwd, "inode.c"), "fs/ext4/inode.c");
        assert_eq!(rebased(root, cwd, "../open.c"), "fs/open.c");
        assert_eq!(rebased(root, cwd, "./"), "fs/ext4");
        assert_eq!(rebased(root, cwd, "../../.."), "../../..");
        assert_eq!(rebased(root, Path::new("/t"), ".."), "..");
        assert_eq!(rebased(root, Path::new("/t/fs"), ".."), ".");
    }
}
