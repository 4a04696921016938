//! Root discovery is fed by whoever can make a directory above the user: run without `--root`,
//! knav looks upward for an index, a `.git` or a kernel top, and must take only the user's own
//! (issue 46 review, finding 1). A world-writable directory (`/tmp`, sticky or not) or another
//! user's is never entered; a `.knav` or `.git` another user planted is ignored; and the
//! nearest marker wins over an index farther up. "Another user" is made with `chown` when the
//! tests run as root; the rules themselves have unit tests in `src/discover.rs`.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use common::{outside, Outside};

/// `(exit code, stdout + stderr)` of `knav ARGS` run in `cwd` without `--root`, the watcher
/// and the fact store off.
fn run_in(cwd: &Path, args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_knav"))
        .args(args)
        .current_dir(cwd)
        .env_remove("KNAV_INDEX_DIR")
        .env("KNAV_CACHE_DIR", "off")
        .env("KNAV_WATCH", "0")
        .output()
        .unwrap();
    common::outcome(&out, args)
}

/// Writes `text` to `base/path`, making its directories.
fn write(base: &Path, path: &str, text: &str) {
    let p = base.join(path);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// A C function named `name`.
fn function(name: &str) -> String {
    format!("int {name}(void)\n{{\n\treturn 0;\n}}\n")
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Gives `path` (and everything below it) to user 4242, as another user would own it.
fn chown_foreign(path: &Path) {
    let ok = Command::new("chown")
        .args(["-R", "-h", "4242:4242"])
        .arg(path)
        .status()
        .unwrap()
        .success();
    assert!(ok, "chown {}", path.display());
}

fn as_root() -> bool {
    // SAFETY: plain syscall without arguments.
    unsafe { libc::geteuid() == 0 }
}

/// A scratch directory with a planted tree at `planted` (`evil.c` defining `planted_fn`, and
/// the marker `marker` made by `plant`), and the user's own directory `mine` below it holding
/// `mine.c`.
fn planted(name: &str, planted: &str, mine: &str, plant: impl FnOnce(&Path)) -> Outside {
    let base = outside(name);
    let top = base.0.join(planted);
    write(&top, "evil.c", &function("planted_fn"));
    plant(&top);
    write(&base.0, &format!("{mine}/mine.c"), &function("mine_fn"));
    base
}

/// What a user in `dir` is answered: `planted_fn` is not found, `mine_fn` is, and no planted
/// index is named.
fn answers_only_its_own(dir: &Path) {
    let (code, text) = run_in(dir, &["def", "planted_fn"]);
    assert_eq!(code, 1, "{text}");
    assert!(!text.contains("evil.c"), "{text}");
    assert!(!text.contains("refuses"), "{text}");
    let (code, text) = run_in(dir, &["def", "mine_fn"]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("mine.c:1"), "{text}");
}

#[test]
fn an_index_planted_in_a_world_writable_sticky_parent_is_not_taken() {
    let base = planted("disc-sticky-knav", "pub", "pub/mine", |top| {
        let (code, text) = run_in(top, &["index"]);
        assert_eq!(code, 0, "{text}");
    });
    let public = base.0.join("pub");
    chmod(&public, 0o1777);
    if as_root() {
        chown_foreign(&public.join(".knav"));
    }
    answers_only_its_own(&public.join("mine"));
}

#[test]
fn a_git_top_in_a_world_writable_directory_is_not_taken() {
    let base = planted("disc-open-git", "x", "x/mine", |top| {
        std::fs::create_dir(top.join(".git")).unwrap();
    });
    chmod(&base.0.join("x"), 0o777);
    answers_only_its_own(&base.0.join("x/mine"));
}

#[test]
fn a_git_top_in_a_group_writable_directory_is_not_taken() {
    let base = planted("disc-group-git", "x", "x/mine", |top| {
        std::fs::create_dir(top.join(".git")).unwrap();
    });
    chmod(&base.0.join("x"), 0o775);
    answers_only_its_own(&base.0.join("x/mine"));
}

#[test]
#[ignore = "needs root (chown to another user); .ci/run runs it as root with --ignored"]
fn a_git_top_another_user_owns_is_not_taken() {
    assert!(
        as_root(),
        "making another user's directory needs root (unit tests cover it)"
    );
    let base = planted("disc-foreign-git", "x", "x/mine", |top| {
        std::fs::create_dir(top.join(".git")).unwrap();
    });
    chown_foreign(&base.0.join("x"));
    Command::new("chown")
        .args(["-R", "0:0"])
        .arg(base.0.join("x/mine"))
        .status()
        .unwrap();
    answers_only_its_own(&base.0.join("x/mine"));
}

#[test]
#[ignore = "needs root (chown to another user); .ci/run runs it as root with --ignored"]
fn a_git_marker_another_user_planted_in_the_user_s_directory_is_ignored() {
    assert!(
        as_root(),
        "planting another user's marker needs root (unit tests cover it)"
    );
    let base = planted("disc-planted-git", "t", "t/mine", |top| {
        std::fs::create_dir(top.join(".git")).unwrap();
        chown_foreign(&top.join(".git"));
    });
    answers_only_its_own(&base.0.join("t/mine"));
}

#[test]
#[ignore = "needs root (chown to another user); .ci/run runs it as root with --ignored"]
fn an_index_another_user_owns_above_is_ignored_not_refused() {
    assert!(
        as_root(),
        "planting another user's index needs root (unit tests cover it)"
    );
    let base = planted("disc-planted-knav", "t", "t/mine", |top| {
        let (code, text) = run_in(top, &["index"]);
        assert_eq!(code, 0, "{text}");
        chown_foreign(&top.join(".knav"));
    });
    answers_only_its_own(&base.0.join("t/mine"));
}

#[test]
fn a_nearer_git_top_beats_an_index_farther_up() {
    let base = outside("disc-nearer");
    write(&base.0, "outer.c", &function("outer_fn"));
    let (code, text) = run_in(&base.0, &["index"]);
    assert_eq!(code, 0, "{text}");
    let inner = base.0.join("inner");
    write(&inner, "src/inner.c", &function("inner_fn"));
    std::fs::create_dir(inner.join(".git")).unwrap();
    let (code, text) = run_in(&inner.join("src"), &["def", "inner_fn"]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("src/inner.c:1"), "{text}");
    assert!(!text.contains("inner/src/inner.c"), "{text}");
    let (code, text) = run_in(&inner.join("src"), &["def", "outer_fn"]);
    assert_eq!(code, 1, "{text}");
    assert!(inner.join(".knav/CURRENT").is_file());
}
