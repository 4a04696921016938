//! Helpers shared by the integration tests: a private copy of the committed fixture tree or a
//! tree a test writes, and the `knav` binary run on one.
#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

use serde_json::Value;

pub mod client;
pub mod gate;
pub mod git;
pub mod lsp;
mod tree;
// Each test uses some of them.
#[allow(unused_imports)]
pub use tree::{copy_dir, fixture, outside, scratch, tree, Outside, Tree};

/// `(exit code, stdout, stderr)` of `knav ARGS --root TREE`, with no `KNAV_INDEX_DIR` from the
/// environment; a signal is code -1, and a panic fails the test.
pub fn knav_output(tree: &Tree, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_knav"))
        .args(args)
        .arg("--root")
        .arg(&tree.root)
        .env_remove("KNAV_INDEX_DIR")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        !stderr.contains("panicked"),
        "knav panicked on {args:?}: {stderr}"
    );
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr,
    )
}

/// `(exit code, stdout)` of [`knav_output`].
pub fn knav(tree: &Tree, args: &[&str]) -> (i32, String) {
    let (code, out, _) = knav_output(tree, args);
    (code, out)
}

/// `(exit code, answer)` of `knav ARGS --format json` on `tree`.
pub fn json(tree: &Tree, args: &[&str]) -> (i32, Value) {
    let mut a = args.to_vec();
    a.extend(["--format", "json"]);
    let (code, out) = knav(tree, &a);
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    (code, v)
}

/// Indexes `root` with the CLI, as a user would before starting a server without `--root`.
pub fn index_with_cli(root: &Path) {
    let built = Command::new(env!("CARGO_BIN_EXE_knav"))
        .args(["index", "--root"])
        .arg(root)
        .env_remove("KNAV_INDEX_DIR")
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "knav index: {}",
        String::from_utf8_lossy(&built.stderr)
    );
}

/// Sets the mtime of every file and directory under `dir` to an hour ago, so that a walk
/// trusts its cache.
pub fn age(dir: &Path) {
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let ft = e.file_type().unwrap();
        if ft.is_symlink() || e.file_name() == ".knav" {
            continue;
        }
        if ft.is_dir() {
            age(&e.path());
        }
        std::fs::File::open(e.path())
            .unwrap()
            .set_modified(old)
            .unwrap();
    }
    std::fs::File::open(dir).unwrap().set_modified(old).unwrap();
}

/// `(symbol, path:line)` of each result of `knav ARGS --format json` (a search's records).
pub fn hits(tree: &Tree, args: &[&str]) -> Vec<(String, String)> {
    let (code, v) = json(tree, args);
    assert_eq!(code, 0, "{v}");
    rows(&v)
}

/// `(symbol, path:line)` of each record of a JSON answer.
pub fn rows(v: &Value) -> Vec<(String, String)> {
    v["results"]
        .as_array()
        .unwrap_or_else(|| panic!("{v}"))
        .iter()
        .map(|r| {
            (
                r["symbol"].as_str().unwrap().to_string(),
                format!("{}:{}", r["path"].as_str().unwrap(), r["line"]),
            )
        })
        .collect()
}

/// The symbols of [`hits`].
pub fn names(tree: &Tree, args: &[&str]) -> Vec<String> {
    hits(tree, args).into_iter().map(|(n, _)| n).collect()
}

/// `(exit code, stdout + stderr)` of `knav ARGS --root TREE` with `envs` set and no
/// `KNAV_INDEX_DIR` from the environment; a signal is code -1.
pub fn knav_env(tree: &Tree, args: &[&str], envs: &[(&str, &str)]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_knav"))
        .args(args)
        .arg("--root")
        .arg(&tree.root)
        .env_remove("KNAV_INDEX_DIR")
        .envs(envs.iter().copied())
        .output()
        .unwrap();
    outcome(&out, args)
}

/// `(exit code, stdout + stderr)` of a finished knav run with `args`; a signal is code -1, and
/// a panic fails the test.
pub fn outcome(out: &std::process::Output, args: &[&str]) -> (i32, String) {
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!text.contains("panicked"), "{args:?}: {text}");
    (out.status.code().unwrap_or(-1), text)
}

/// The `path` of each record of a JSON answer.
pub fn paths(v: &Value) -> Vec<String> {
    v["results"]
        .as_array()
        .unwrap_or_else(|| panic!("{v}"))
        .iter()
        .map(|r| r["path"].as_str().unwrap().to_string())
        .collect()
}

/// A git diff of the fixture touching two functions of fs/read_write.c and adding one, a struct
/// and a macro of include/linux/fs.h, and a hunk of mm/highmem.c whose context is not the
/// file's. In diff order: hunk 1 of fs/read_write.c and vfs_read; hunk 2, ksys_read and
/// kernel_read_all; hunk 1 of include/linux/fs.h and struct file; hunk 2 and MAX_RW_COUNT;
/// mm/highmem.c's hunk, which does not apply.
pub const PATCH: &str = "\
From: A Developer <a@example.org>
Subject: [PATCH] fs: check reads

---
 fs/read_write.c    | 10 +++++++++-
 include/linux/fs.h |  3 ++-
 mm/highmem.c       |  2 +-

diff --git a/fs/read_write.c b/fs/read_write.c
index 75da830..6afd506 100644
--- a/fs/read_write.c
+++ b/fs/read_write.c
@@ -21,7 +21,7 @@ ssize_t vfs_read(struct file *file, char *buf, size_t count, loff_t *pos)
 {
 \tint ret = rw_verify_area(file, pos, count);
 
-\tif (ret)
+\tif (ret < 0)
 \t\tpr_warn(\"vfs_read failed: %d\\n\", ret);
 \treturn ret;
 }
@@ -32,10 +32,18 @@ ssize_t kernel_read(struct file *file, void *buf, size_t count, loff_t *pos)
 }
 EXPORT_SYMBOL(kernel_read);
 
+static ssize_t kernel_read_all(struct file *file, void *buf, size_t count)
+{
+\treturn kernel_read(file, buf, count, &file->f_pos);
+}
+
 ssize_t ksys_read(unsigned int fd, char *buf, size_t count)
 {
 \tstruct file *f = fget(fd);
 
+\tif (!f)
+\t\treturn -9;
+
 \treturn vfs_read(f, buf, count, &f->f_pos);
 }
 
diff --git a/include/linux/fs.h b/include/linux/fs.h
index 37e6dfd..d78bb2c 100644
--- a/include/linux/fs.h
+++ b/include/linux/fs.h
@@ -9,6 +9,7 @@ typedef long long loff_t;
 struct file {
 \tloff_t f_pos;
 \tunsigned int f_flags;
+\tunsigned int f_mode;
 };
 
 struct file_operations {
@@ -20,6 +21,6 @@ extern ssize_t vfs_read(struct file *file, char *buf, size_t count, loff_t *pos)
 extern ssize_t kernel_read(struct file *file, void *buf, size_t count, loff_t *pos);
 ssize_t ksys_read(unsigned int fd, char *buf, size_t count);
 
-#define MAX_RW_COUNT (1L << 30)
+#define MAX_RW_COUNT (1L << 31)
 
 #endif /* _LINUX_FS_H */
diff --git a/mm/highmem.c b/mm/highmem.c
--- a/mm/highmem.c
+++ b/mm/highmem.c
@@ -12,4 +12,4 @@
 int copy_page_data(struct page *dst, struct page *src)
 {
-\tvoid *from = kmap_atomic(src);
+\tvoid *from = kmap_local_page(src);
 \tvoid *to = kmap(dst);
-- 
2.43.0
";
