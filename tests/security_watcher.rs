//! The watcher daemon's private directory is the user's alone (issue 46 review, finding 5):
//! `$XDG_RUNTIME_DIR` is used only when it is the user's own directory of mode 0700 (one that
//! `sudo -E` carried over from another user is theirs to swap for a link), and `knav status`
//! says when the watcher is off because its directory is not the user's.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use common::{fixture, outside, Tree};

/// `(exit code, stdout + stderr)` of `knav ARGS --root TREE` with `$XDG_RUNTIME_DIR` set to
/// `runtime`.
fn run_with_runtime_dir(t: &Tree, runtime: &Path, args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_knav"))
        .args(args)
        .arg("--root")
        .arg(&t.root)
        .env_remove("KNAV_INDEX_DIR")
        .env_remove("KNAV_WATCH")
        .env("KNAV_CACHE_DIR", "off")
        .env("XDG_RUNTIME_DIR", runtime)
        .output()
        .unwrap();
    common::outcome(&out, args)
}

/// Indexes `t`, then runs a query, which asks the watcher (and starts it).
fn asks_the_watcher(t: &Tree, runtime: &Path) {
    for args in [&["index"][..], &["def", "vfs_read"]] {
        let (code, text) = run_with_runtime_dir(t, runtime, args);
        assert_eq!(code, 0, "{text}");
    }
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn an_xdg_runtime_dir_others_may_enter_is_not_used() {
    let t = fixture("xdg-open");
    let runtime = outside("xdg-open");
    chmod(&runtime.0, 0o755);
    asks_the_watcher(&t, &runtime.0);
    assert!(!runtime.0.join("knav").exists(), "knav/ made in it");
}

#[test]
#[ignore = "needs root (chown to another user); .ci/run runs it as root with --ignored"]
fn an_xdg_runtime_dir_of_another_user_is_not_used() {
    // SAFETY: plain syscall without arguments.
    let euid = unsafe { libc::geteuid() };
    assert_eq!(
        euid, 0,
        "another user's directory needs root (a unit test covers the rule)"
    );
    let t = fixture("xdg-foreign");
    let runtime = outside("xdg-foreign");
    chmod(&runtime.0, 0o700);
    assert!(Command::new("chown")
        .args(["4242:4242"])
        .arg(&runtime.0)
        .status()
        .unwrap()
        .success());
    asks_the_watcher(&t, &runtime.0);
    assert!(!runtime.0.join("knav").exists(), "knav/ made in it");
}

#[test]
fn status_says_the_watcher_is_off_when_its_directory_is_not_the_user_s() {
    let t = fixture("xdg-status");
    let runtime = outside("xdg-status");
    chmod(&runtime.0, 0o700);
    let (code, text) = run_with_runtime_dir(&t, &runtime.0, &["index"]);
    assert_eq!(code, 0, "{text}");
    let (_, text) = run_with_runtime_dir(&t, &runtime.0, &["status"]);
    assert!(!text.contains("watcher is off"), "{text}");
    // Its own directory opened to everyone (as if another user had made it first).
    let private = runtime.0.join("knav");
    assert!(private.is_dir());
    chmod(&private, 0o777);
    let (_, text) = run_with_runtime_dir(&t, &runtime.0, &["status"]);
    assert!(text.contains("the watcher is off"), "{text}");
    assert!(text.contains(&private.display().to_string()), "{text}");
    // A link in its place, the same.
    std::fs::remove_dir_all(&private).unwrap();
    std::os::unix::fs::symlink(&t.root, &private).unwrap();
    let (_, text) = run_with_runtime_dir(&t, &runtime.0, &["status"]);
    assert!(text.contains("the watcher is off"), "{text}");
}
