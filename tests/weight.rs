//! What a build weighs: the history of a repository whose first commit is a whole tree, built
//! in bounded memory (a bound on the peak, never a time).

mod common;

use std::process::Command;

use common::git::git;

/// `knav ARGS --root ROOT`'s stdout and its peak resident set in kB (`wait4`'s `ru_maxrss`).
// The child is reaped by wait4, which std's Child does not see.
#[allow(clippy::zombie_processes)]
fn knav_peak(root: &std::path::Path, args: &[&str]) -> (String, i64) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_knav"))
        .args(args)
        .arg("--root")
        .arg(root)
        .env_remove("KNAV_INDEX_DIR")
        .env("KNAV_CACHE_DIR", "off")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("knav starts");
    let mut out = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().expect("stdout"), &mut out)
        .expect("knav's answer");
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value; wait4 fills it for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `child` is ours and not yet waited for; both pointers are valid for the call.
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as i32, "wait4 on knav");
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "knav {args:?} failed: {out}"
    );
    (out, usage.ru_maxrss)
}

/// A root commit of 1,500 headers of 100 macros each (150,000 definitions touched, each name
/// its own, all read in one batch). The build held every touch with a name of its own, then in a
/// map of names to vectors of touches, and let glibc keep the blobs' large blocks in its heaps
/// (the peaks before and after are in BENCHMARKS.md, "History in bounded memory").
#[test]
fn history_of_a_first_commit_holding_a_whole_tree_is_built_in_bounded_memory() {
    let files: Vec<(String, String)> = (0..1500)
        .map(|f| {
            let text: String = (0..100)
                .map(|j| format!("#define NAME_{f}_{j} {j}\n"))
                .collect();
            (format!("d{:02}/f{f}.h", f % 30), text)
        })
        .collect();
    let files: Vec<(&str, &str)> = files.iter().map(|(p, t)| (&p[..], &t[..])).collect();
    let t = common::tree("weight-history", &files);
    git(&t.root, &["init", "-q", "."]);
    git(&t.root, &["add", "-A"]);
    git(&t.root, &["commit", "-q", "-m", "the whole tree"]);
    let (out, peak_kb) = knav_peak(&t.root, &["index", "--history"]);
    assert!(
        out.contains("history: 1 commits read now, 1 in all; 150000 definitions touched"),
        "{out}"
    );
    assert!(peak_kb < 72_000, "peak {peak_kb} kB for 150,000 touches");
    let (code, rows) = common::knav(&t, &["history", "NAME_1499_99"]);
    assert_eq!(code, 0, "{rows}");
    assert!(rows.contains("d29/f1499.h"), "{rows}");
    assert!(rows.contains("the whole tree"), "{rows}");
}
