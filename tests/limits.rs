//! Bounds on what an answer holds: paging at absurd offsets and limits, caps on bodies and
//! long lines, and the notes that state every cut. Each test indexes its own tree.

use std::process::Command;

use serde_json::Value;

mod common;
use common::{fixture, Tree};

fn knav(tree: &Tree, args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_knav"))
        .args(args)
        .arg("--root")
        .arg(&tree.root)
        .env_remove("KNAV_INDEX_DIR")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("panicked"),
        "knav panicked on {args:?}: {stderr}"
    );
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn json(tree: &Tree, args: &[&str]) -> (i32, Value) {
    let mut a = args.to_vec();
    a.extend(["--format", "json"]);
    let (code, out) = knav(tree, &a);
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    (code, v)
}

/// A tree of its own, with `files` written under it.
fn tree(name: &str, files: &[(&str, &[u8])]) -> Tree {
    let root = std::env::temp_dir().join(format!("knav-limits-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    for (path, text) in files {
        let p = root.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
    }
    Tree { root }
}

fn callee_names(v: &Value) -> Vec<String> {
    v["results"]["callees"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["symbol"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn callees_honour_offset_instead_of_ignoring_it() {
    let t = fixture("callees-offset");
    let (_, v) = json(&t, &["callees", "vfs_read"]);
    assert_eq!(callee_names(&v), ["rw_verify_area", "pr_warn"]);
    let (_, v) = json(&t, &["callees", "vfs_read", "--offset", "1"]);
    assert_eq!(callee_names(&v), ["pr_warn"]);
    assert_eq!(
        (v["total"].as_u64(), v["offset"].as_u64()),
        (Some(2), Some(1))
    );
    let (_, out) = knav(
        &t,
        &["callees", "vfs_read", "--offset", "1", "--limit", "1"],
    );
    assert!(out.contains("calls 2:\n  pr_warn"), "{out}");
    assert!(out.contains("[2-2 of 2]\n"), "{out}");
    // Past the end: an empty page that says so, never `[6-13 of 8]`.
    let (_, out) = knav(
        &t,
        &["callees", "vfs_read", "--offset", "5", "--limit", "8"],
    );
    assert!(out.contains("[none of 2 at offset=5]\n"), "{out}");
    assert!(out.contains("offset 5 is past the end"), "{out}");
}

#[test]
fn callees_page_at_forty_and_point_at_the_next_page() {
    let calls: String = (0..45).map(|i| format!("\tcallee_{i:02}();\n")).collect();
    let src = format!("void big(void)\n{{\n{calls}}}\n");
    let t = tree("callees-40", &[("big.c", src.as_bytes())]);
    let (_, v) = json(&t, &["callees", "big"]);
    assert_eq!(v["total"], 45);
    assert_eq!(v["limit"], 40);
    assert_eq!(v["truncated"], true);
    let names = callee_names(&v);
    assert_eq!(names.len(), 40);
    assert_eq!(
        (names[0].as_str(), names[39].as_str()),
        ("callee_00", "callee_39")
    );
    let (_, out) = knav(&t, &["callees", "big", "--offset", "40"]);
    assert!(out.contains("  callee_40  line 43"), "{out}");
    assert!(out.contains("[41-45 of 45]\n"), "{out}");
    let (_, v) = json(&t, &["callees", "big", "--limit", "500"]);
    assert_eq!(callee_names(&v).len(), 40);
    assert!(
        v["warning"]
            .as_str()
            .unwrap()
            .contains("limit 500 cut to 40"),
        "{v}"
    );
}

#[test]
fn offsets_near_two_to_the_64_do_not_wrap_the_footer() {
    let t = fixture("offset-wrap");
    let max = u64::MAX.to_string();
    for args in [
        vec!["def", "kmap"],
        vec!["refs", "vfs_read"],
        vec!["refs", "vfs_read", "--group-by", "file"],
        vec!["callers", "vfs_read"],
        vec!["callees", "vfs_read"],
        vec!["body", "kmap"],
        vec!["symbols", "fs/read_write.c"],
    ] {
        for offset in [max.as_str(), "18446744073709551614", "99999999999"] {
            let mut a = args.clone();
            a.extend(["--offset", offset, "--limit", &max]);
            let (code, out) = knav(&t, &a);
            assert_eq!(code, 0, "{a:?}: {out}");
            assert!(
                out.contains(&format!(" at offset={offset}]\n")),
                "{a:?}: {out}"
            );
            assert!(out.contains("is past the end"), "{a:?}: {out}");
            let (_, v) = json(&t, &a);
            assert_eq!(v["offset"].as_u64(), offset.parse().ok(), "{a:?}");
            assert_eq!(v["truncated"], false, "{a:?}");
            assert!(v["total"].as_u64().unwrap() > 0, "{a:?}");
        }
    }
    // The last page near the top of the range is numbered without wrapping.
    let (_, out) = knav(&t, &["refs", "vfs_read", "--offset", "4", "--limit", &max]);
    assert!(out.contains("[5-5 of 5]\n"), "{out}");
}

#[test]
fn max_definitions_above_the_maximum_is_cut_and_says_so() {
    let t = fixture("max-defs");
    let (code, v) = json(&t, &["body", "kmap", "--max-definitions", "99999999999"]);
    assert_eq!(code, 0);
    assert_eq!(v["limit"], 50);
    let w = v["warning"].as_str().unwrap_or("");
    assert!(
        w.contains("max_definitions 99999999999 cut to the maximum 50"),
        "{v}"
    );
    // Bodies page with offset like every other list.
    let (_, v) = json(&t, &["body", "kmap", "--max-definitions", "1"]);
    assert_eq!(v["results"][0]["line"], 20);
    assert_eq!(v["truncated"], true);
    let (_, v) = json(
        &t,
        &["body", "kmap", "--max-definitions", "1", "--offset", "1"],
    );
    assert_eq!(v["results"][0]["line"], 25);
    assert_eq!(v["truncated"], false);
    assert_eq!(v["results"].as_array().unwrap().len(), 1);
}

#[test]
fn reachability_ignores_an_offset_and_says_so() {
    let t = fixture("reach-offset");
    let (_, out) = knav(
        &t,
        &["reach", "vfs_read", "rw_verify_area", "--offset", "3"],
    );
    assert!(
        out.starts_with("vfs_read reaches rw_verify_area in 1 calls"),
        "{out}"
    );
    assert!(!out.contains("[4-4 of 1]"), "{out}");
    assert!(out.contains("offset 3 ignored"), "{out}");
}
