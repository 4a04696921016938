//! git runs nothing and is read the same whatever the repository's configuration says; the
//! history stays true (rewritten commits, shallow boundaries), bounded (huge and binary blobs)
//! and cannot be forged (control characters escaped, knav's path form); a `.git` file naming
//! another repository is refused (issue 45, "Security, round two").

mod common;
use common::git::git;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::client::Client;
use common::{json, knav, knav_output, tree, Tree};
use serde_json::{json, Value};

/// Writes `files` under `root` (an empty text removes the file).
fn write(root: &Path, files: &[(&str, &str)]) {
    for (path, text) in files {
        let p = root.join(path);
        if text.is_empty() {
            std::fs::remove_file(&p).unwrap();
        } else {
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, text).unwrap();
        }
    }
}

const V1_A: &str =
    "int helper(int x)\n{\n\treturn x + 1;\n}\n\nint foo(int a)\n{\n\treturn helper(a);\n}\n";
const V2_A: &str = "int helper(int x)\n{\n\treturn x + 2;\n}\n\nint foo(int a)\n{\n\treturn helper(a) + 1;\n}\n\nint added(void)\n{\n\treturn 3;\n}\n";
const V3_A: &str = "int helper(int x)\n{\n\treturn x + 3;\n}\n\nint foo(int a)\n{\n\treturn helper(a) + 1;\n}\n\nint added(void)\n{\n\treturn 3;\n}\n";

/// A repository with tags v1 (helper and foo), v2 (both changed, `added` added), v3 (helper
/// changed again).
fn repo(name: &str) -> Tree {
    let t = tree(name, &[("lib/a.c", V1_A)]);
    git(&t.root, &["init", "-q", "-b", "main"]);
    git(&t.root, &["add", "-A"]);
    git(&t.root, &["commit", "-q", "-m", "one"]);
    git(&t.root, &["tag", "v1"]);
    write(&t.root, &[("lib/a.c", V2_A)]);
    git(&t.root, &["commit", "-q", "-am", "two"]);
    git(&t.root, &["tag", "v2"]);
    write(&t.root, &[("lib/a.c", V3_A)]);
    git(&t.root, &["commit", "-q", "-am", "three"]);
    git(&t.root, &["tag", "v3"]);
    t
}

/// `knav history` rows as `CHANGE PATH +A -R [introduced] SUBJECT`.
fn history_rows(t: &Tree, args: &[&str]) -> Vec<String> {
    let mut a = vec!["history"];
    a.extend(args);
    let (code, v) = json(t, &a);
    assert_eq!(code, 0, "{v}");
    rows(&v)
}

fn rows(v: &Value) -> Vec<String> {
    v["results"]
        .as_array()
        .unwrap_or_else(|| panic!("no results: {v}"))
        .iter()
        .map(|e| {
            format!(
                "{} {} +{} -{}{} {}",
                e["change"].as_str().unwrap(),
                e["path"].as_str().unwrap(),
                e["added"],
                e["removed"],
                if e["introduced"] == json!(true) {
                    " introduced"
                } else {
                    ""
                },
                e["subject"].as_str().unwrap()
            )
        })
        .collect()
}

/// helper's history in [`repo`], as a checkout with no configuration gives it.
fn helper_rows() -> Vec<String> {
    [
        "changed lib/a.c +1 -1 three",
        "changed lib/a.c +1 -1 two",
        "added lib/a.c +4 -0 introduced one",
    ]
    .map(str::to_string)
    .to_vec()
}

/// A program that creates `marker` when run (and fails): the proof git ran it.
fn marker_program(t: &Tree, name: &str) -> (PathBuf, PathBuf) {
    let dir = t.root.with_extension("bin");
    std::fs::create_dir_all(&dir).unwrap();
    let marker = dir.join(format!("{name}.ran"));
    let program = dir.join(name);
    std::fs::write(
        &program,
        format!("#!/bin/sh\ntouch '{}'\nexit 1\n", marker.display()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
    (program, marker)
}

/// Replaces HEAD's commit by one with a (fake) OpenPGP signature: `git log --show-signature`
/// runs `gpg.program` to check it.
fn sign_head(root: &Path) {
    let commit = git(root, &["cat-file", "commit", "HEAD"]);
    let (head, body) = commit.split_once("\n\n").unwrap();
    let signed = format!(
        "{head}\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----\n\n{body}"
    );
    let file = root.with_extension("commit");
    std::fs::write(&file, signed).unwrap();
    let id = git(
        root,
        &["hash-object", "-t", "commit", "-w", file.to_str().unwrap()],
    );
    git(root, &["update-ref", "HEAD", id.trim()]);
    std::fs::remove_file(file).unwrap();
}

#[test]
fn history_with_log_show_signature_runs_no_gpg_program() {
    let t = repo("sg-gpg");
    sign_head(&t.root);
    let (gpg, marker) = marker_program(&t, "gpg");
    git(&t.root, &["config", "log.showSignature", "true"]);
    git(&t.root, &["config", "gpg.program", gpg.to_str().unwrap()]);
    // git itself runs it (the test's premise).
    git(&t.root, &["log", "-1", "--format=%H"]);
    assert!(
        marker.exists(),
        "git log ran no gpg.program: the test proves nothing"
    );
    std::fs::remove_file(&marker).unwrap();
    assert_eq!(history_rows(&t, &["helper"]), helper_rows());
    assert!(!marker.exists(), "knav history ran gpg.program");
}

#[test]
fn rev_in_a_partial_clone_runs_no_upload_pack_and_fetches_nothing() {
    let origin = repo("sg-partial-origin");
    git(&origin.root, &["config", "uploadpack.allowFilter", "true"]);
    let clone = tree("sg-partial", &[] as &[(&str, &str)]);
    std::fs::remove_dir_all(&clone.root).unwrap();
    let url = format!("file://{}", origin.root.display());
    let parent = clone.root.parent().unwrap().to_path_buf();
    git(
        &parent,
        &[
            "clone",
            "-q",
            "--filter=blob:none",
            &url,
            clone.root.to_str().unwrap(),
        ],
    );
    let (pack, marker) = marker_program(&clone, "upload-pack");
    git(
        &clone.root,
        &["config", "remote.origin.uploadpack", pack.to_str().unwrap()],
    );
    // v1's blob is not in the clone: reading it would fetch it from the remote.
    let (_, out, err) = knav_output(&clone, &["def", "foo", "--rev", "v1"]);
    assert!(
        !marker.exists(),
        "knav ran the remote's upload-pack: {out}{err}"
    );
}

/// `knav history helper` rows in a [`repo`] whose `.git/config` sets `key` to `value`, twice:
/// the second time with the key unset again (a history built under the key stays right).
fn history_under(name: &str, key: &str, value: &str) -> (Vec<String>, Vec<String>) {
    let t = repo(name);
    git(&t.root, &["config", key, value]);
    let under = history_rows(&t, &["helper"]);
    git(&t.root, &["config", "--unset", key]);
    git(&t.root, &["commit", "-q", "--allow-empty", "-m", "four"]);
    (under, history_rows(&t, &["helper"]))
}

macro_rules! history_ignores {
    ($($name:ident: $key:literal = $value:literal;)*) => {$(
        #[test]
        fn $name() {
            let (under, after) = history_under(stringify!($name), $key, $value);
            assert_eq!(under, helper_rows(), "with {}={}", $key, $value);
            assert_eq!(after, helper_rows(), "after {}={}", $key, $value);
        }
    )*};
}

history_ignores! {
    log_output_encoding_utf16_leaves_the_history_true: "i18n.logOutputEncoding" = "UTF-16";
    log_show_root_false_still_marks_the_introduction: "log.showRoot" = "false";
    color_ui_always_leaves_the_history_true: "color.ui" = "always";
    log_decorate_full_leaves_the_history_true: "log.decorate" = "full";
    diff_renames_copies_leaves_the_history_true: "diff.renames" = "copies";
    diff_noprefix_leaves_the_history_true: "diff.noprefix" = "true";
    diff_relative_leaves_the_history_true: "diff.relative" = "true";
}

/// `knav diff v1..v2`'s answer (JSON) in a [`repo`] whose `.git/config` sets `key` to `value`.
fn review_under(name: &str, sets: &[(&str, &str)]) -> Value {
    let t = repo(name);
    for (k, v) in sets {
        git(&t.root, &["config", k, v]);
    }
    let (code, v) = json(&t, &["diff", "v1..v2"]);
    assert_eq!(code, 0, "{v}");
    v["results"].clone()
}

macro_rules! review_ignores {
    ($($name:ident: $key:literal = $value:literal;)*) => {$(
        #[test]
        fn $name() {
            let plain = review_under(concat!(stringify!($name), "-plain"), &[]);
            let under = review_under(stringify!($name), &[($key, $value)]);
            assert_eq!(under, plain, "with {}={}", $key, $value);
            assert!(plain.to_string().contains("\"added\""), "{plain}");
        }
    )*};
}

review_ignores! {
    diff_src_prefix_keeps_a_change_a_change: "diff.srcPrefix" = "x/";
    diff_dst_prefix_keeps_a_change_a_change: "diff.dstPrefix" = "y/";
    diff_noprefix_keeps_the_review: "diff.noprefix" = "true";
    diff_mnemonic_prefix_keeps_the_review: "diff.mnemonicPrefix" = "true";
    color_diff_always_keeps_the_review: "color.diff" = "always";
    diff_inter_hunk_context_keeps_the_review: "diff.interHunkContext" = "40";
    diff_context_keeps_the_review: "diff.context" = "0";
    diff_order_file_keeps_the_review: "diff.orderFile" = "/dev/null";
}

/// Runs a review, a history and a `--rev` answer in a [`repo`] whose `.git/config` sets
/// `key` to a program (and `.git/info/attributes` to `attributes`): true when it ran.
fn program_ran(name: &str, key: &str, attributes: &str) -> bool {
    let t = repo(name);
    let (prog, marker) = marker_program(&t, "prog");
    git(&t.root, &["config", key, prog.to_str().unwrap()]);
    write(&t.root, &[(".git/info/attributes", attributes)]);
    let (code, v) = json(&t, &["diff", "v1..v2"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(history_rows(&t, &["helper"]), helper_rows());
    let (code, out) = knav(&t, &["def", "foo", "--rev", "v1"]);
    assert_eq!(code, 0, "{out}");
    marker.exists()
}

#[test]
fn diff_external_runs_no_program() {
    assert!(!program_ran("sg-extdiff", "diff.external", "\n"));
}

#[test]
fn a_textconv_driver_runs_no_program() {
    assert!(!program_ran(
        "sg-textconv",
        "diff.m.textconv",
        "*.c diff=m\n"
    ));
}

#[test]
fn core_fsmonitor_runs_no_program() {
    assert!(!program_ran("sg-fsmonitor", "core.fsmonitor", "\n"));
}

#[test]
fn core_pager_runs_no_program() {
    assert!(!program_ran("sg-pager", "core.pager", "\n"));
}

#[test]
fn a_filter_driver_runs_no_program() {
    assert!(!program_ran(
        "sg-filter",
        "filter.m.smudge",
        "*.c filter=m\n"
    ));
}

#[test]
fn a_git_file_naming_another_repository_is_refused() {
    let other = repo("sg-other");
    write(
        &other.root,
        &[("lib/secret.c", "int secret(void)\n{\n\treturn 1;\n}\n")],
    );
    git(&other.root, &["add", "-A"]);
    git(&other.root, &["commit", "-q", "-m", "secret"]);
    let t = tree("sg-gitfile", &[("lib/mine.c", "int mine(void)\n{\n}\n")]);
    let gitfile = format!("gitdir: {}\n", other.root.join(".git").display());
    write(&t.root, &[(".git", &gitfile)]);
    for args in [
        &["def", "secret", "--rev", "HEAD"][..],
        &["history", "secret"][..],
    ] {
        let (code, out) = knav(&t, args);
        assert_ne!(code, 0, "{args:?}: {out}");
        assert!(!out.contains("secret.c"), "{args:?}: {out}");
        assert!(
            out.contains("which does not take this tree for its work tree"),
            "{args:?}: {out}"
        );
    }
}

#[test]
fn a_git_symlink_to_another_repository_is_refused() {
    let other = repo("sg-other-link");
    write(
        &other.root,
        &[("lib/secret.c", "int secret(void)\n{\n\treturn 1;\n}\n")],
    );
    git(&other.root, &["add", "-A"]);
    git(&other.root, &["commit", "-q", "-m", "secret"]);
    let t = tree("sg-gitlink", &[("lib/mine.c", "int mine(void)\n{\n}\n")]);
    std::os::unix::fs::symlink(other.root.join(".git"), t.root.join(".git")).unwrap();
    // Twice: the second answer would come from the remembered resolutions.
    for _ in 0..2 {
        let (code, out) = knav(&t, &["def", "secret", "--rev", "HEAD"]);
        assert_ne!(code, 0, "{out}");
        assert!(!out.contains("secret.c"), "{out}");
        assert!(
            out.contains("which does not take this tree for its work tree"),
            "{out}"
        );
    }
}

#[test]
fn a_worktree_and_a_submodule_git_file_are_followed() {
    let t = repo("sg-worktree-main");
    let wt = tree("sg-worktree", &[] as &[(&str, &str)]);
    std::fs::remove_dir_all(&wt.root).unwrap();
    git(
        &t.root,
        &["worktree", "add", "-q", wt.root.to_str().unwrap(), "v1"],
    );
    let (code, v) = json(&wt, &["def", "added", "--rev", "v2"]);
    assert_eq!(code, 0, "{v}");
    assert!(v.to_string().contains("lib/a.c"), "{v}");
    // A submodule: its .git file names .git/modules/sub, whose core.worktree is the tree.
    let sup = tree("sg-super", &[("top.c", "int top;\n")]);
    git(&sup.root, &["init", "-q", "-b", "main"]);
    let url = t.root.display().to_string();
    git(
        &sup.root,
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            &url,
            "sub",
        ],
    );
    let sub = Tree {
        root: sup.root.join("sub"),
    };
    let (code, v) = json(&sub, &["def", "added", "--rev", "v2"]);
    std::mem::forget(sub);
    assert_eq!(code, 0, "{v}");
    assert!(v.to_string().contains("lib/a.c"), "{v}");
}

#[test]
fn git_variables_are_named_by_the_cli_and_dropped_by_a_server() {
    let t = repo("sg-gitdir-env");
    let other = repo("sg-gitdir-env-other");
    write(&other.root, &[("lib/b.c", "int elsewhere(void)\n{\n}\n")]);
    git(&other.root, &["add", "-A"]);
    git(&other.root, &["commit", "-q", "-m", "elsewhere"]);
    let gitdir = other.root.join(".git");
    // The command line honours GIT_DIR, and says so.
    let out = Command::new(env!("CARGO_BIN_EXE_knav"))
        .args(["history", "helper", "--root"])
        .arg(&t.root)
        .env_remove("KNAV_INDEX_DIR")
        .env("GIT_DIR", &gitdir)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.lines()
            .any(|l| l.starts_with("warning: git ran with ") && l.contains("GIT_DIR")),
        "{text}"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_knav"))
        .args(["def", "foo", "--rev", "HEAD", "--root"])
        .arg(&t.root)
        .env_remove("KNAV_INDEX_DIR")
        .env("GIT_DIR", &gitdir)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.lines()
            .any(|l| l.starts_with("warning: git ran with ") && l.contains("GIT_DIR")),
        "{text}"
    );
    // A server does not: its answers are its root's repository's.
    let root = t.root.display().to_string();
    let gitdir_s = gitdir.display().to_string();
    let mut c = Client::start(&["--root", &root], &t.root, &[("GIT_DIR", &gitdir_s)]);
    let (text, err) = c.call_when_built(
        "find_definition",
        json!({"symbol": "elsewhere", "rev": "HEAD"}),
    );
    assert!(!text.contains("lib/b.c"), "{text}");
    let _ = err;
    let (text, err) =
        c.call_when_built("find_definition", json!({"symbol": "added", "rev": "HEAD"}));
    assert!(!err, "{text}");
    assert!(text.contains("lib/a.c"), "{text}");
}

#[test]
fn a_commit_rewritten_away_by_amend_and_gc_leaves_the_history() {
    let t = repo("sg-amend");
    assert_eq!(history_rows(&t, &["helper"]), helper_rows());
    git(&t.root, &["tag", "-d", "v3"]);
    write(&t.root, &[("lib/a.c", &V3_A.replace("x + 3", "x + 4"))]);
    git(
        &t.root,
        &["commit", "-q", "-a", "--amend", "-m", "three again"],
    );
    git(&t.root, &["reflog", "expire", "--expire=now", "--all"]);
    git(&t.root, &["gc", "-q", "--prune=now"]);
    assert_eq!(
        history_rows(&t, &["helper"]),
        [
            "changed lib/a.c +1 -1 three again",
            "changed lib/a.c +1 -1 two",
            "added lib/a.c +4 -0 introduced one",
        ]
    );
}

#[test]
fn a_commit_rewritten_away_by_amend_leaves_the_history_while_the_reflog_keeps_it() {
    let t = repo("sg-amend-reflog");
    assert_eq!(history_rows(&t, &["helper"]), helper_rows());
    git(&t.root, &["tag", "-d", "v3"]);
    write(&t.root, &[("lib/a.c", &V3_A.replace("x + 3", "x + 4"))]);
    git(
        &t.root,
        &["commit", "-q", "-a", "--amend", "-m", "three again"],
    );
    assert_eq!(
        history_rows(&t, &["helper"]),
        [
            "changed lib/a.c +1 -1 three again",
            "changed lib/a.c +1 -1 two",
            "added lib/a.c +4 -0 introduced one",
        ]
    );
    // Back to the old commit (still in the reflog): answered again.
    let old = git(&t.root, &["rev-parse", "HEAD@{1}"]);
    git(&t.root, &["reset", "-q", "--hard", old.trim()]);
    assert_eq!(history_rows(&t, &["helper"]), helper_rows());
}

#[test]
fn a_shallow_clone_boundary_introduces_nothing() {
    let origin = repo("sg-shallow-origin");
    let clone = tree("sg-shallow", &[] as &[(&str, &str)]);
    std::fs::remove_dir_all(&clone.root).unwrap();
    let url = format!("file://{}", origin.root.display());
    let parent = clone.root.parent().unwrap().to_path_buf();
    git(
        &parent,
        &[
            "clone",
            "-q",
            "--depth",
            "2",
            &url,
            clone.root.to_str().unwrap(),
        ],
    );
    // two is the boundary: it shows all it holds as added, but added none of it but `added`.
    let (code, v) = json(&clone, &["history", "helper"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(rows(&v), ["changed lib/a.c +1 -1 three"]);
    assert_eq!(
        v["message"],
        json!(
            "'helper' was there before the oldest commit the history read: no commit introduced it"
        )
    );
}

#[test]
fn colon_slash_text_revisions_resolve() {
    let t = repo("sg-colon-slash");
    let (code, v) = json(&t, &["def", "added", "--rev", ":/two"]);
    assert_eq!(code, 0, "{v}");
    assert!(v.to_string().contains("lib/a.c"), "{v}");
    let (_, v) = json(&t, &["def", "added", "--rev", ":/one"]);
    assert_eq!(
        v["rev"]["commit"],
        json!(git(&t.root, &["rev-parse", "v1"]).trim())
    );
    assert!(!v.to_string().contains("lib/a.c"), "{v}");
    assert_eq!(
        history_rows(&t, &["added", "--rev", ":/three"]),
        ["added lib/a.c +4 -0 introduced two"]
    );
}

#[test]
fn a_revision_name_over_256_bytes_is_refused_unmatched() {
    let t = repo("sg-long-rev");
    let long = "v".repeat(100_000);
    let started = std::time::Instant::now();
    let (code, out) = knav(&t, &["def", "foo", "--rev", &long]);
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("a revision name is at most 256 bytes, this one has 100000"),
        "{out}"
    );
    assert!(!out.contains(&"v".repeat(257)), "the name echoed whole");
    assert!(started.elapsed().as_secs() < 20);
}

#[test]
fn a_blob_over_the_file_size_limit_is_never_read_by_history() {
    let t = tree("sg-huge", &[("lib/small.c", "int small(void)\n{\n}\n")]);
    git(&t.root, &["init", "-q", "-b", "main"]);
    let mut big = b"int big(void)\n{\n}\n".to_vec();
    big.resize(big.len() + (65 << 20), b'\n');
    std::fs::write(t.root.join("lib/big.c"), &big).unwrap();
    drop(big);
    git(&t.root, &["add", "-A"]);
    git(&t.root, &["commit", "-q", "-m", "huge"]);
    assert_eq!(
        history_rows(&t, &["small"]),
        ["added lib/small.c +3 -0 introduced huge"]
    );
    let (code, out) = knav(&t, &["history", "big"]);
    assert_ne!(code, 0, "{out}");
    assert!(out.contains("touched a definition named 'big'"), "{out}");
    // Its peak memory, where GNU time can say it: far below the blob's 8 bytes a line.
    let time = Path::new("/usr/bin/time");
    if time.exists() {
        let out = Command::new(time)
            .args(["-f", "maxrss=%M"])
            .arg(env!("CARGO_BIN_EXE_knav"))
            .args(["index", "--history", "--root"])
            .arg(&t.root)
            .env_remove("KNAV_INDEX_DIR")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        let kb: u64 = err
            .rsplit("maxrss=")
            .next()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or_else(|| panic!("{err}"));
        assert!(kb < 200_000, "peak {kb} KB: {err}");
    }
}

#[test]
fn a_binary_c_file_touches_nothing_in_history() {
    let t = tree("sg-binary", &[("lib/a.c", "int text(void)\n{\n}\n")]);
    std::fs::write(t.root.join("lib/blob.c"), b"int bin(void)\n{\n\0}\n").unwrap();
    git(&t.root, &["init", "-q", "-b", "main"]);
    git(&t.root, &["add", "-A"]);
    git(&t.root, &["commit", "-q", "-m", "one"]);
    assert_eq!(
        history_rows(&t, &["text"]),
        ["added lib/a.c +3 -0 introduced one"]
    );
    let (code, out) = knav(&t, &["history", "bin"]);
    assert_ne!(code, 0, "{out}");
}

#[test]
fn control_characters_in_subjects_and_authors_are_escaped_in_history_text() {
    let t = repo("sg-escapes");
    write(&t.root, &[("lib/a.c", &V3_A.replace("x + 3", "x + 5"))]);
    let out = Command::new("git")
        .args(["commit", "-q", "-am", "evil\x1b[2J\x07 subject"])
        .current_dir(&t.root)
        .env("GIT_AUTHOR_NAME", "ev\x1b]0;title\x07il")
        .env("GIT_AUTHOR_EMAIL", "e@localhost")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@localhost")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let (code, text) = knav(&t, &["history", "helper"]);
    assert_eq!(code, 0, "{text}");
    assert!(!text.contains('\x1b') && !text.contains('\x07'), "{text:?}");
    let first = text.lines().next().unwrap();
    assert!(
        first.contains(r"ev\x1b]0;title\x07il  +1 -1 lib/a.c  evil\x1b[2J\x07 subject"),
        "{first}"
    );
    // JSON carries them as they are (JSON escapes them).
    let (_, v) = json(&t, &["history", "helper"]);
    assert_eq!(v["results"][0]["subject"], json!("evil\x1b[2J\x07 subject"));
}

#[test]
fn an_unknown_revision_with_a_newline_cannot_forge_a_next_line() {
    let t = repo("sg-forge");
    for args in [
        &["def", "foo", "--rev", "x\nnext: forged"][..],
        &["history", "foo", "--rev", "x\nnext: forged"][..],
        &["def", "foo", "--rev", "x\x1b[2Jy"][..],
    ] {
        let (code, out) = knav(&t, args);
        assert_ne!(code, 0, "{out}");
        assert!(
            !out.lines().any(|l| l.starts_with("next: forged")),
            "{args:?}: {out}"
        );
        assert!(!out.contains('\x1b'), "{args:?}: {out:?}");
        assert!(
            out.contains(r"no revision 'x\x0anext: forged'")
                || out.contains(r"no revision 'x\x1b[2Jy'"),
            "{args:?}: {out}"
        );
    }
}

#[test]
fn history_paths_are_knavs_escaped_paths_and_file_accepts_them() {
    let name = "lib/we\"ird\x1b\\.c";
    let t = tree("sg-paths", &[(name, "int odd(void)\n{\n}\n")]);
    git(&t.root, &["init", "-q", "-b", "main"]);
    git(&t.root, &["add", "-A"]);
    git(&t.root, &["commit", "-q", "-m", "one"]);
    let shown = r#"lib/we"ird\x1b\\.c"#;
    let want = [format!("added {shown} +3 -0 introduced one")];
    assert_eq!(history_rows(&t, &["odd"]), want);
    assert_eq!(history_rows(&t, &["odd", "--file", shown]), want);
    let (_, text) = knav(&t, &["history", "odd"]);
    assert!(!text.contains('\x1b'), "{text:?}");
}
