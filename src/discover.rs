//! Which tree a command run without `--root` is about, found from below as git and gtags find
//! theirs: the nearest directory at or above the current one that holds a usable knav index,
//! the top of a git work tree or the top of a kernel tree (`Kbuild`, `Kconfig`, `MAINTAINERS`
//! or `Makefile`, and `arch/`), in one nearest-first pass; never `$HOME` or above it, never the
//! filesystem's root. When none is found the current directory is the root, as before.
//!
//! Whoever can plant a marker decides which tree knav reads, so only the user's own are taken
//! (as git's `safe.directory`): the search never enters a directory another user owns (root
//! aside) or one that group or others may write (`/tmp`, sticky or not), and it ignores a
//! `.knav` the user does not own and a `.git` or kernel marker that neither the user nor (in
//! root's own directory) root owns.

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

/// True when the search may look in a directory owned by `owner` with mode `mode`, for user
/// `euid`: the user's or root's, and writable by no one else (no exemption for the sticky bit:
/// anyone may make an entry in `/tmp`).
fn dir_trusted(owner: u32, mode: u32, euid: u32) -> bool {
    (owner == euid || owner == 0) && mode & 0o022 == 0
}

/// True when a `.git` or kernel marker owned by `owner`, in a directory owned by `dir_owner`,
/// marks a tree for user `euid`: the user's own, or the directory owner's when that is the user
/// or root (a tree root unpacked and the user reads).
fn marker_trusted(owner: u32, dir_owner: u32, euid: u32) -> bool {
    owner == euid || (owner == dir_owner && (dir_owner == euid || dir_owner == 0))
}

/// The owner of `path` itself (a link's own, not its target's).
fn owner(path: &Path) -> Option<u32> {
    std::fs::symlink_metadata(path).ok().map(|m| m.uid())
}

/// One directory the search looks in, with its owner.
struct Candidate<'a> {
    dir: &'a Path,
    owner: u32,
    euid: u32,
}

impl Candidate<'_> {
    /// True when `name` in the directory is a marker of a trusted owner.
    fn owned(&self, name: &str) -> bool {
        owner(&self.dir.join(name)).is_some_and(|o| marker_trusted(o, self.owner, self.euid))
    }

    /// True when the directory holds an index of the user's own.
    fn indexed(&self) -> bool {
        let index = existing_index_dir(self.dir, None);
        index.join(CURRENT).is_file() && owner(&index) == Some(self.euid)
    }

    /// True when the directory is the top of a git work tree of a trusted owner.
    fn git_top(&self) -> bool {
        self.dir.join(".git").exists() && self.owned(".git")
    }

    /// True when the directory is the top of a kernel tree (not `arch/x86`, which has its own
    /// `Kbuild`, `Kconfig` and `Makefile`), every marker of a trusted owner.
    fn kernel_top(&self) -> bool {
        let file = |name: &str| self.dir.join(name).is_file() && self.owned(name);
        file("Kbuild")
            && file("Kconfig")
            && (file("MAINTAINERS") || file("Makefile"))
            && self.dir.join("arch").is_dir()
            && self.owned("arch")
    }
}

fn euid() -> u32 {
    // SAFETY: plain syscall without arguments.
    unsafe { libc::geteuid() }
}

/// The root for a command run in `start` (a real path): see the module's doc. `explicit_dir`:
/// an index directory the user named (`--index-dir`, `$KNAV_INDEX_DIR`), which belongs to no
/// directory in particular, so only the markers count.
pub fn root_above(start: &Path, explicit_dir: bool) -> Option<Found> {
    let euid = euid();
    for dir in candidates(start) {
        let meta = std::fs::symlink_metadata(dir).ok()?;
        if !dir_trusted(meta.uid(), meta.mode(), euid) {
            return None;
        }
        let c = Candidate {
            dir,
            owner: meta.uid(),
            euid,
        };
        let why = if !explicit_dir && c.indexed() {
            "an index"
        } else if c.git_top() {
            "a git work tree"
        } else if c.kernel_top() {
            "a kernel tree"
        } else {
            continue;
        };
        return Some(Found {
            root: dir.to_path_buf(),
            why,
        });
    }
    None
}

/// True when `root` is another user's directory: its index then goes to the user's cache
/// directory, never into the tree (SECURITY.md: an index directory another user owns is
/// refused, and one made in another's tree would be refused to them).
pub fn someone_elses(root: &Path) -> bool {
    std::fs::metadata(root).is_ok_and(|m| m.uid() != euid())
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
    fn a_directory_another_user_may_write_or_owns_is_never_searched() {
        let me = 1000;
        assert!(dir_trusted(me, 0o40755, me));
        assert!(dir_trusted(0, 0o40755, me), "root's /usr/src");
        assert!(!dir_trusted(4242, 0o40755, me), "another user's");
        assert!(!dir_trusted(me, 0o40775, me), "group-writable");
        assert!(!dir_trusted(me, 0o40777, me), "world-writable");
        assert!(!dir_trusted(0, 0o41777, me), "/tmp: sticky is no exemption");
        assert!(!dir_trusted(0, 0o40757, me));
    }

    #[test]
    fn a_marker_counts_only_when_the_user_or_the_root_owned_directory_s_owner_made_it() {
        let me = 1000;
        assert!(marker_trusted(me, me, me));
        assert!(
            marker_trusted(me, 0, me),
            "the user's .git in a root-owned directory"
        );
        assert!(marker_trusted(0, 0, me), "root's tree, root's .git");
        assert!(
            !marker_trusted(4242, me, me),
            "planted in the user's directory"
        );
        assert!(!marker_trusted(4242, 4242, me), "another user's tree");
        assert!(
            !marker_trusted(0, me, me),
            "root's marker in the user's directory"
        );
        assert!(!marker_trusted(4242, 0, me));
    }

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
