//! Trees for the tests: a private copy of the committed fixture tree, or one a test writes;
//! removed when dropped. (kernel-bench's tests include this file alone.)
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// A copy of the fixture, removed when dropped.
pub struct Tree {
    pub root: PathBuf,
}

impl Drop for Tree {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let ft = e.file_type().unwrap();
        let dest = to.join(e.file_name());
        if e.file_name() == ".knav" {
            continue;
        }
        if ft.is_dir() {
            copy_dir(&e.path(), &dest);
        } else if ft.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(e.path()).unwrap(), &dest).unwrap();
        } else {
            std::fs::copy(e.path(), &dest).unwrap();
        }
    }
}

/// A private copy of `tests/fixtures/minikernel` named after the test.
pub fn fixture(name: &str) -> Tree {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/minikernel");
    let root = std::env::temp_dir().join(format!("knav-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    copy_dir(&src, &root);
    Tree { root }
}

/// A tree of its own named after the test, with `files` (root-relative path, content) written
/// under it.
pub fn tree<T: AsRef<[u8]>>(name: &str, files: &[(&str, T)]) -> Tree {
    let root = std::env::temp_dir().join(format!("knav-tree-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    for (path, text) in files {
        let p = root.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
    }
    Tree { root }
}

/// A directory outside every test's root, removed when dropped.
pub struct Outside(pub PathBuf);

impl Drop for Outside {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl Outside {
    /// Its path as a string (for an environment variable or an argument).
    pub fn path(&self) -> &str {
        self.0
            .to_str()
            .expect("a temporary directory's path is UTF-8")
    }
}

/// An [`Outside`] named after the test that does not exist yet (a fact store, a cache).
pub fn scratch(name: &str) -> Outside {
    let dir = std::env::temp_dir().join(format!("knav-scratch-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    Outside(dir)
}

/// A new, empty [`Outside`] named after the test.
pub fn outside(name: &str) -> Outside {
    let dir = std::env::temp_dir().join(format!("knav-outside-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    Outside(dir)
}
