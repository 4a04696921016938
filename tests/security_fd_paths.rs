//! Swaps under a running build or a read: the index directory (or a revision's directory)
//! replaced by a link after knav checked and opened it changes nothing, because everything
//! below it is named through the descriptor knav opened (issue 45). Each test is named after
//! the finding it pins.

mod common;

use std::path::Path;
use std::process::Command;

use common::gate::{gated_ctags, wait_for};
use common::{knav_output, outside, tree};

/// Every file and directory below `dir` (root-relative, sorted).
fn listing(dir: &Path) -> Vec<String> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            out.push(p.strip_prefix(base).unwrap().display().to_string());
            if std::fs::symlink_metadata(&p).unwrap().is_dir() {
                walk(base, &p, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

#[test]
fn a_knav_dir_swapped_for_a_link_during_a_build_receives_nothing_outside() {
    let t = tree(
        "fd-knav-swap",
        &[("a/a.c", "int alpha(void) { return 1; }\n")],
    );
    let out = outside("fd-knav-swap");
    let gate = outside("fd-knav-swap-gate");
    let ctags = gated_ctags(&gate.0);
    let ctags = ctags.to_str().unwrap();
    let index = |envs: &[(&str, &str)]| {
        Command::new(env!("CARGO_BIN_EXE_knav"))
            .args(["index", "--root"])
            .arg(&t.root)
            .env_remove("KNAV_INDEX_DIR")
            .env("KNAV_CTAGS", ctags)
            .envs(envs.iter().copied())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let first = index(&[]).wait_with_output().unwrap();
    assert!(first.status.success(), "{first:?}");
    // An edit: the next build makes a new segment (and text part), running ctags.
    std::fs::write(t.root.join("a/b.c"), "int beta(void) { return 2; }\n").unwrap();
    std::fs::write(out.0.join("keep"), "outside's own\n").unwrap();
    std::fs::write(gate.0.join("armed"), "").unwrap();
    let build = index(&[]);
    wait_for(&gate.0.join("started"));
    // The swap: `.knav` moved away and a link to the outside in its place, with a directory
    // of every name the build made there so far (what a path-following build writes into).
    let (knav, real) = (t.root.join(".knav"), t.root.join(".knav.real"));
    std::fs::rename(&knav, &real).unwrap();
    for e in std::fs::read_dir(&real).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            std::fs::create_dir(out.0.join(e.file_name())).unwrap();
        }
    }
    let before = listing(&out.0);
    std::os::unix::fs::symlink(&out.0, &knav).unwrap();
    std::fs::write(gate.0.join("go"), "").unwrap();
    let done = build.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(listing(&out.0), before, "{stderr}");
    assert_eq!(
        std::fs::read(out.0.join("keep")).unwrap(),
        b"outside's own\n"
    );
    // The build went on in the directory it opened: its index names `beta`, and every part
    // its CURRENT names is there.
    assert!(done.status.success(), "{stderr}");
    let current = std::fs::read_to_string(real.join("CURRENT")).unwrap();
    let manifest: serde_json::Value = serde_json::from_str(&current).unwrap();
    let segs = manifest["segments"].as_array().unwrap();
    assert!(segs.len() >= 2, "{current}");
    for s in segs {
        let dir = s["dir"].as_str().unwrap();
        assert!(real.join(dir).join("meta.json").is_file(), "{dir}");
    }
    // What it printed names the tree's `.knav`, never a descriptor's path.
    let stdout = String::from_utf8_lossy(&done.stdout);
    assert!(!stdout.contains("/proc/self/fd") && !stderr.contains("/proc/self/fd"));
    std::fs::remove_file(&knav).unwrap();
    std::fs::rename(&real, &knav).unwrap();
    let (code, found, err) = knav_output(&t, &["def", "beta"]);
    assert_eq!(code, 0, "{err}");
    assert!(found.contains("a/b.c:1:"), "{found}");
}
