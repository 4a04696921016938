//! Paths knav cannot index are counted and named, never skipped in silence.

use std::os::unix::ffi::OsStrExt;

mod common;
use common::{knav, Tree};

#[test]
fn names_that_are_not_utf8_are_counted_as_unindexed_and_named_escaped() {
    let root = std::env::temp_dir().join(format!("knav-paths-utf8-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let t = Tree { root };
    std::fs::create_dir_all(&t.root).unwrap();
    std::fs::write(t.root.join("ok.c"), "int ok(void) { return 0; }\n").unwrap();
    let bad_file = t.root.join(std::ffi::OsStr::from_bytes(b"caf\xff.c"));
    std::fs::write(&bad_file, "int bad(void) { return 0; }\n").unwrap();
    let bad_dir = t.root.join(std::ffi::OsStr::from_bytes(b"d\xfe"));
    std::fs::create_dir_all(&bad_dir).unwrap();
    std::fs::write(bad_dir.join("a.c"), "int a(void) { return 0; }\n").unwrap();
    let out = knav(&t, &["index"]).1;
    assert!(
        out.starts_with("index full: 1 files scanned, 2 unindexed;"),
        "{out}"
    );
    assert!(
        out.contains("  skipped: caf\\xff.c: not indexed: its name is not UTF-8\n"),
        "{out}"
    );
    assert!(
        out.contains(
            "  skipped: d\\xfe/: not indexed, nor anything below it: its name is not UTF-8\n"
        ),
        "{out}"
    );
    // A refresh that reads no directory again keeps the count.
    let out = knav(&t, &["index"]).1;
    assert!(out.contains("1 files scanned, 2 unindexed;"), "{out}");
}
