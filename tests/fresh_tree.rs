//! Answers fresh for the whole tree, with no `knav index` in between (issue 46, item 3): a
//! definition, caller or grep hit added or removed anywhere is answered by the next query,
//! through the watcher daemon or the scan that stands in for it; `knav status` names what
//! changed; and the tree found from below (item 4): run in a subdirectory, knav answers for
//! the tree above and builds no `.knav` there.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::client::Client;
use common::{fixture, Tree};
use serde_json::Value;

/// `(exit code, stdout, stderr)` of `knav ARGS --root TREE` with `env` set.
fn run(tree: &Tree, args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_knav"));
    cmd.args(args)
        .arg("--root")
        .arg(&tree.root)
        .env_remove("KNAV_INDEX_DIR")
        .env_remove("KNAV_WATCH")
        .env("KNAV_CACHE_DIR", "off");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr,
    )
}

/// `(exit code, stdout)` of `knav ARGS` run in directory `cwd`, with no `--root`.
fn run_in(cwd: &Path, args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_knav"))
        .args(args)
        .current_dir(cwd)
        .env_remove("KNAV_INDEX_DIR")
        .env("KNAV_CACHE_DIR", "off")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn json(tree: &Tree, args: &[&str], env: &[(&str, &str)]) -> Value {
    let mut a = args.to_vec();
    a.extend(["--format", "json"]);
    let (_, out, err) = run(tree, &a, env);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out} {err}"))
}

/// Appends `text` to `path`, as an editor that rewrites the file would.
fn append(path: &Path, text: &str) {
    let mut now = std::fs::read_to_string(path).unwrap();
    now.push_str(text);
    std::fs::write(path, now).unwrap();
}

const NEW_READER: &str =
    "\nssize_t fresh_tree_reader(struct file *f, char *buf)\n{\n\treturn vfs_read(f, buf, 1, 0);\n}\n";

/// The root and index directory as the CLI names them (real paths).
fn root_and_dir(tree: &Tree) -> (PathBuf, PathBuf) {
    let root = tree.root.canonicalize().unwrap();
    let dir = root.join(".knav");
    (root, dir)
}

/// The lines `def`, `callers` and `grep` give for the function appended to fs/read_write.c.
fn the_new_reader_is_answered(tree: &Tree, env: &[(&str, &str)]) {
    let (code, out, err) = run(tree, &["def", "fresh_tree_reader"], env);
    assert_eq!(code, 0, "{out} {err}");
    assert!(out.contains("fs/read_write.c:55"), "{out}");
    let v = json(tree, &["callers", "vfs_read"], env);
    let callers: Vec<&str> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["caller"].as_str().or(r["name"].as_str()))
        .collect();
    assert!(callers.contains(&"fresh_tree_reader"), "{v}");
    let (code, out, _) = run(tree, &["grep", "fresh_tree_reader"], env);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("fs/read_write.c"), "{out}");
    assert!(out.contains("55"), "{out}");
}

#[test]
fn a_function_appended_to_a_file_is_found_by_def_callers_and_grep_without_knav_index() {
    let t = fixture("fresh-appended");
    assert_eq!(run(&t, &["index"], &[]).0, 0);
    assert_eq!(run(&t, &["def", "fresh_tree_reader"], &[]).0, 1);
    append(&t.root.join("fs/read_write.c"), NEW_READER);
    the_new_reader_is_answered(&t, &[]);
}

#[test]
fn with_knav_watch_0_the_scan_answers_fresh_and_no_daemon_starts() {
    let t = fixture("fresh-watch-off");
    let off = [("KNAV_WATCH", "0")];
    assert_eq!(run(&t, &["index"], &off).0, 0);
    assert_eq!(run(&t, &["def", "vfs_read"], &off).0, 0);
    append(&t.root.join("fs/read_write.c"), NEW_READER);
    the_new_reader_is_answered(&t, &off);
    let (root, dir) = root_and_dir(&t);
    let socket = knav::watchd::socket_of(&root, &dir, Path::new(env!("CARGO_BIN_EXE_knav")))
        .expect("a private directory");
    // A daemon started by mistake would bind its socket within a moment.
    let deadline = Instant::now() + Duration::from_secs(1);
    while Instant::now() < deadline {
        assert!(!socket.exists(), "{} exists", socket.display());
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_query_whose_shell_hands_down_a_pipe_ends_without_waiting_for_the_daemon() {
    let t = fixture("fresh-fd-pipe");
    assert_eq!(run(&t, &["index"], &[]).0, 0);
    let (root, dir) = root_and_dir(&t);
    let exe = Path::new(env!("CARGO_BIN_EXE_knav"));
    let socket = knav::watchd::socket_of(&root, &dir, exe).expect("a private directory");
    assert!(!socket.exists(), "no daemon yet");
    // `3>&1`: the query, and any process it starts that keeps descriptor 3, holds cat's pipe.
    let script = format!(
        "'{}' def vfs_read --root '{}' 3>&1 | cat",
        exe.display(),
        root.display()
    );
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(&script)
        .current_dir(&root)
        .env("KNAV_CACHE_DIR", "off")
        .env_remove("KNAV_WATCH")
        .env_remove("KNAV_INDEX_DIR")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            // The daemon ends within a second of its tree going.
            drop(t);
            let _ = child.kill();
            panic!("the pipeline waited for the watcher daemon");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("fs/read_write.c:20"), "{text}");
    // The query did start the daemon (in `/`, its own session).
    let client = knav::watchd::Client::of_binary(&root, &dir, exe).unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while client.check(0) == knav::watchd::Said::Absent {
        assert!(Instant::now() < deadline, "no daemon started");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_deleted_definition_disappears_without_knav_index() {
    let t = fixture("fresh-deleted");
    assert_eq!(run(&t, &["index"], &[]).0, 0);
    assert_eq!(run(&t, &["def", "ext2_file_read"], &[]).0, 0);
    let file = t.root.join("fs/ext2/file.c");
    let text = std::fs::read_to_string(&file).unwrap();
    let cut = text.replace(
        "static ssize_t ext2_file_read(struct file *file, char *buf, size_t count, loff_t *pos)\n{\n\treturn vfs_read(file, buf, count, pos);\n}\n",
        "",
    );
    assert_ne!(cut, text);
    std::fs::write(&file, cut).unwrap();
    let (_, out, _) = run(&t, &["def", "ext2_file_read"], &[]);
    assert!(
        out.starts_with("ext2_file_read: 0 definitions · 1 refs in 1 files"),
        "{out}"
    );
}

/// Waits (up to a minute: a loaded machine starts processes slowly) until the daemon of `t`
/// says `want` for the index's generation, asking it again through `knav def` between tries.
fn wait_for_daemon(t: &Tree, want: knav::watchd::Said) {
    let (root, dir) = root_and_dir(t);
    let client =
        knav::watchd::Client::of_binary(&root, &dir, Path::new(env!("CARGO_BIN_EXE_knav")))
            .expect("the watcher is on");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let generation = knav::index::store::read_manifest(&dir)
            .unwrap()
            .unwrap()
            .generation;
        if client.check(generation) == want {
            return;
        }
        assert!(Instant::now() < deadline, "the daemon never said {want:?}");
        assert_eq!(run(t, &["def", "vfs_read"], &[]).0, 0);
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn the_watcher_says_clean_until_a_file_changes_and_the_next_query_sees_the_change() {
    let t = fixture("fresh-daemon");
    assert_eq!(run(&t, &["index"], &[]).0, 0);
    wait_for_daemon(&t, knav::watchd::Said::Clean);
    append(&t.root.join("fs/read_write.c"), NEW_READER);
    // The daemon saw the write: not clean any more, before any query asked.
    let (root, dir) = root_and_dir(&t);
    let client =
        knav::watchd::Client::of_binary(&root, &dir, Path::new(env!("CARGO_BIN_EXE_knav")))
            .unwrap();
    let generation = knav::index::store::read_manifest(&dir)
        .unwrap()
        .unwrap()
        .generation;
    // (A loaded machine may keep the daemon from answering within its few milliseconds: the
    // query would scan; here, ask again.)
    let said = (0..100)
        .map(|_| client.check(generation))
        .find(|s| *s != knav::watchd::Said::Failed);
    assert_eq!(said, Some(knav::watchd::Said::Dirty));
    // It names the file, so the refresh stats only that (an arm that no mark follows loses
    // nothing: the next one names it again).
    let (_, hint) = (0..10)
        .find_map(|_| client.arm())
        .expect("the daemon answers arm");
    let hint = hint.expect("the daemon knows exactly what changed");
    assert_eq!(
        (hint.files.into_iter().collect::<Vec<_>>(), hint.dirs.len()),
        (vec!["fs/read_write.c".to_string()], 0)
    );
    the_new_reader_is_answered(&t, &[]);
    // A file in a directory made after the watches were set, and a definition deleted.
    wait_for_daemon(&t, knav::watchd::Said::Clean);
    std::fs::create_dir_all(t.root.join("fs/freshdir/deeper")).unwrap();
    std::fs::write(
        t.root.join("fs/freshdir/deeper/new.c"),
        "int fresh_tree_deep(void)\n{\n\treturn 0;\n}\n",
    )
    .unwrap();
    std::fs::remove_file(t.root.join("fs/ext2/file.c")).unwrap();
    let (code, out, _) = run(&t, &["def", "fresh_tree_deep"], &[]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("fs/freshdir/deeper/new.c:1"), "{out}");
    let (_, out, _) = run(&t, &["def", "ext2_file_read"], &[]);
    assert!(
        out.starts_with("Error: no symbol named 'ext2_file_read'"),
        "{out}"
    );
    wait_for_daemon(&t, knav::watchd::Said::Clean);
    std::fs::write(
        t.root.join("fs/freshdir/deeper/new.c"),
        "int fresh_tree_deeper(void)\n{\n\treturn 0;\n}\n",
    )
    .unwrap();
    let (code, out, _) = run(&t, &["def", "fresh_tree_deeper"], &[]);
    assert_eq!(code, 0, "{out}");
    // A new text file (not C) is a change too: grep finds it.
    std::fs::write(
        t.root.join("Documentation/fresh-notes.txt"),
        "fresh_tree_note\n",
    )
    .unwrap();
    let (code, out, _) = run(&t, &["grep", "fresh_tree_note"], &[]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("Documentation/fresh-notes.txt"), "{out}");
}

#[test]
fn a_directory_made_where_a_watched_one_was_moved_away_is_watched_by_the_daemon() {
    let t = fixture("fresh-moved-dir");
    std::fs::create_dir_all(t.root.join("d/a")).unwrap();
    std::fs::write(
        t.root.join("d/a/x.c"),
        "int moved_x(void)\n{\n\treturn 0;\n}\n",
    )
    .unwrap();
    assert_eq!(run(&t, &["index"], &[]).0, 0);
    wait_for_daemon(&t, knav::watchd::Said::Clean);
    std::fs::rename(t.root.join("d/a"), t.root.join("d/b")).unwrap();
    std::fs::create_dir(t.root.join("d/a")).unwrap();
    let first = "int moved_first(void)\n{\n\treturn 1;\n}\n";
    std::fs::write(t.root.join("d/a/n.c"), first).unwrap();
    let (code, out, _) = run(&t, &["def", "moved_first"], &[]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("d/a/n.c:1"), "{out}");
    wait_for_daemon(&t, knav::watchd::Said::Clean);
    let second = format!("{first}\nint moved_second(void)\n{{\n\treturn 2;\n}}\n");
    std::fs::write(t.root.join("d/a/n.c"), second).unwrap();
    let (code, out, _) = run(&t, &["def", "moved_second"], &[]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("d/a/n.c:6"), "{out}");
}

#[test]
fn files_named_like_build_products_that_grep_searches_are_seen_by_the_daemon() {
    let t = fixture("fresh-product-names");
    assert_eq!(run(&t, &["index"], &[]).0, 0);
    wait_for_daemon(&t, knav::watchd::Said::Clean);
    for name in ["fresh.d", "x.o.txt~", "other.tmp"] {
        std::fs::write(t.root.join("fs").join(name), "fresh_product_word\n").unwrap();
    }
    let (code, out, _) = run(&t, &["grep", "-l", "fresh_product_word"], &[]);
    assert_eq!(code, 0, "{out}");
    for name in ["fs/fresh.d", "fs/x.o.txt~", "fs/other.tmp"] {
        assert!(out.contains(name), "{name}: {out}");
    }
}

#[test]
fn a_dead_socket_and_a_daemon_that_never_answers_fall_back_to_the_scan() {
    let t = fixture("fresh-dead-socket");
    assert_eq!(run(&t, &["index"], &[]).0, 0);
    let (root, dir) = root_and_dir(&t);
    let socket = knav::watchd::socket_of(&root, &dir, Path::new(env!("CARGO_BIN_EXE_knav")))
        .expect("a private directory");
    // A listener that never accepts: the query's question times out, it scans instead.
    let _ = std::fs::remove_file(&socket);
    let silent = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    append(&t.root.join("fs/read_write.c"), NEW_READER);
    the_new_reader_is_answered(&t, &[]);
    // No listener at all behind the socket file: a daemon is started, and the scan answers.
    drop(silent);
    assert!(socket.exists());
    append(
        &t.root.join("fs/ext2/file.c"),
        "\nint fresh_tree_second(void)\n{\n\treturn 2;\n}\n",
    );
    let (code, out, _) = run(&t, &["def", "fresh_tree_second"], &[]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("fs/ext2/file.c:17"), "{out}");
}

#[test]
fn status_names_what_changed_since_the_index_was_built_and_refreshes_nothing() {
    let t = fixture("fresh-status");
    let off = [("KNAV_WATCH", "0")];
    assert_eq!(run(&t, &["index"], &off).0, 0);
    let v = json(&t, &["status"], &off);
    let since = &v["results"]["since_indexed"];
    assert_eq!(
        (
            since["added"].as_u64(),
            since["changed"].as_u64(),
            since["deleted"].as_u64()
        ),
        (Some(0), Some(0), Some(0)),
        "{v}"
    );
    append(&t.root.join("fs/read_write.c"), NEW_READER);
    std::fs::write(t.root.join("fs/fresh_new.c"), "int fresh_new;\n").unwrap();
    std::fs::remove_file(t.root.join("fs/ext2/file.c")).unwrap();
    for _ in 0..2 {
        let v = json(&t, &["status"], &off);
        let since = &v["results"]["since_indexed"];
        assert_eq!(since["by"], "scan", "{v}");
        assert_eq!(
            since["files"],
            serde_json::json!([
                "added fs/fresh_new.c",
                "changed fs/read_write.c",
                "deleted fs/ext2/file.c"
            ]),
            "{v}"
        );
    }
    let (_, text, _) = run(&t, &["status"], &off);
    assert!(
        text.contains(
            "changed since the index was built (by a scan): 1 added, 1 changed, 1 deleted: \
             added fs/fresh_new.c, changed fs/read_write.c, deleted fs/ext2/file.c"
        ),
        "{text}"
    );
}

#[test]
fn status_of_a_tree_without_an_index_says_so_before_anything_about_builds() {
    let t = fixture("fresh-status-none");
    let (_, text, _) = run(&t, &["status"], &[]);
    assert!(text.contains("has no index yet"), "{text}");
    assert!(!text.contains("no build running"), "{text}");
}

#[test]
fn run_from_a_subdirectory_knav_finds_the_indexed_root_and_builds_no_knav_there() {
    let t = fixture("fresh-below");
    assert_eq!(run(&t, &["index"], &[]).0, 0);
    let sub = t.root.join("fs/ext2");
    let (code, out) = run_in(&sub, &["def", "vfs_read"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("fs/read_write.c:20"), "{out}");
    assert!(!sub.join(".knav").exists());
    // grep searches the subdirectory it runs in, as rg does, with root-relative paths.
    let (code, out) = run_in(&sub, &["grep", "vfs_read", "--format", "json"]);
    assert_eq!(code, 0, "{out}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let text = v["results"].to_string();
    assert!(text.contains("fs/ext2/file.c"), "{v}");
    assert!(!text.contains("fs/read_write.c"), "{v}");
    assert!(!sub.join(".knav").exists());
    // A path given there is taken from there (piped, printed as rg prints it: one file, no
    // path).
    let (code, out) = run_in(
        &sub,
        &["grep", "vfs_read", "../read_write.c", "--format", "json"],
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("fs/read_write.c"), "{out}");
    let (code, out) = run_in(&sub, &["grep", "vfs_read", "../read_write.c"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.starts_with("3: * Reading files. vfs_read"), "{out}");
}

#[test]
fn run_below_the_top_of_an_unindexed_kernel_tree_knav_indexes_the_top() {
    let t = fixture("fresh-kernel-top");
    std::fs::write(t.root.join("Kbuild"), "obj-y += fs/\n").unwrap();
    let sub = t.root.join("fs/ext2");
    let (code, out) = run_in(&sub, &["def", "vfs_read"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("fs/read_write.c:20"), "{out}");
    assert!(t.root.join(".knav/CURRENT").is_file());
    assert!(!sub.join(".knav").exists());
    // --root still wins.
    let (_, out) = run_in(&sub, &["def", "vfs_read", "--root", "."]);
    assert!(out.starts_with("vfs_read: 0 definitions"), "{out}");
}

#[test]
fn run_in_arch_x86_of_an_indexed_kernel_tree_knav_answers_for_the_top() {
    let t = fixture("fresh-arch-top");
    std::fs::write(t.root.join("Kbuild"), "obj-y += fs/\n").unwrap();
    // As in the kernel: arch/x86 has a Kbuild, a Kconfig and a Makefile of its own.
    let x86 = t.root.join("arch/x86");
    for name in ["Kbuild", "Kconfig", "Makefile"] {
        std::fs::write(x86.join(name), "# arch\n").unwrap();
    }
    std::fs::create_dir_all(x86.join("kernel")).unwrap();
    assert_eq!(run(&t, &["index"], &[]).0, 0);
    for dir in [x86.join("kernel"), x86.clone()] {
        let (code, out) = run_in(&dir, &["def", "vfs_read"]);
        assert_eq!(code, 0, "{out}");
        assert!(out.contains("fs/read_write.c:20"), "{out}");
    }
    assert!(!x86.join(".knav").exists());
    // Unindexed, the top is still the kernel tree's.
    std::fs::remove_dir_all(t.root.join(".knav")).unwrap();
    let (code, out) = run_in(&x86.join("kernel"), &["def", "vfs_read"]);
    assert_eq!(code, 0, "{out}");
    assert!(t.root.join(".knav/CURRENT").is_file());
    assert!(!x86.join(".knav").exists());
}

/// A hard-linked copy of the kernel tree `KNAV_KERNEL_TREE` names, without its index (whose
/// files would be shared with the tree's): files are changed in it only by replacing them.
fn kernel_copy(name: &str) -> Option<Tree> {
    let kernel = std::env::var_os("KNAV_KERNEL_TREE")?;
    let root = std::env::temp_dir().join(format!("knav-kernel-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let copied = Command::new("cp")
        .arg("-al")
        .arg(&kernel)
        .arg(&root)
        .status()
        .unwrap();
    assert!(copied.success());
    let _ = std::fs::remove_dir_all(root.join(".knav"));
    Some(Tree { root })
}

/// Replaces `path` with its text and `more` appended (never a write into the shared file).
fn replace_appending(path: &Path, more: &str) {
    let mut text = std::fs::read(path).unwrap();
    text.extend_from_slice(more.as_bytes());
    let tmp = path.with_extension("knav-new");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

#[test]
#[ignore = "needs KNAV_KERNEL_TREE"]
fn kernel_a_function_appended_to_fs_open_c_is_answered_without_knav_index() {
    let t = kernel_copy("fresh-open").expect("KNAV_KERNEL_TREE names the kernel tree");
    assert_eq!(run(&t, &["index"], &[]).0, 0);
    let open_c = t.root.join("fs/open.c");
    let lines = std::fs::read_to_string(&open_c).unwrap().lines().count();
    replace_appending(
        &open_c,
        "\nssize_t fresh_tree_probe(struct file *file, char __user *buf, size_t count, loff_t *pos)\n{\n\treturn vfs_read(file, buf, count, pos);\n}\n",
    );
    let (code, out, _) = run(&t, &["def", "fresh_tree_probe"], &[]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains(&format!("fs/open.c:{}", lines + 2)), "{out}");
    let (_, out, _) = run(&t, &["callers", "vfs_read", "--limit", "1000"], &[]);
    assert!(out.contains("fresh_tree_probe"), "{out}");
    let (code, out, _) = run(&t, &["grep", "fresh_tree_probe"], &[]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("fs/open.c"), "{out}");
}

#[test]
#[ignore = "needs KNAV_KERNEL_TREE"]
fn kernel_run_in_fs_ext4_answers_for_the_whole_tree_and_builds_nothing_there() {
    let t = kernel_copy("fresh-ext4").expect("KNAV_KERNEL_TREE names the kernel tree");
    assert_eq!(run(&t, &["index"], &[]).0, 0);
    let ext4 = t.root.join("fs/ext4");
    let (code, out) = run_in(&ext4, &["def", "vfs_read"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("fs/read_write.c:"), "{out}");
    assert!(!ext4.join(".knav").exists());
}

#[test]
fn knav_serve_without_root_in_a_subdirectory_serves_the_indexed_tree_above_read_only() {
    let t = fixture("fresh-serve-below");
    assert_eq!(run(&t, &["index"], &[]).0, 0);
    let sub = t.root.join("fs/ext2");
    let mut c = Client::start(&[], &sub, &[("KNAV_CACHE_DIR", "off")]);
    let (text, err) = c.call("find_definition", serde_json::json!({"symbol": "vfs_read"}));
    assert!(!err, "{text}");
    assert!(text.contains("fs/read_write.c:20"), "{text}");
    assert!(!sub.join(".knav").exists());
}

#[test]
fn a_file_touched_but_not_edited_is_not_called_stale() {
    let t = fixture("fresh-touched");
    assert_eq!(run(&t, &["index"], &[]).0, 0);
    let file = t.root.join("fs/read_write.c");
    let later = std::time::SystemTime::now() + Duration::from_secs(60);
    std::fs::File::open(&file)
        .unwrap()
        .set_modified(later)
        .unwrap();
    for env in [&[][..], &[("KNAV_WATCH", "0")][..]] {
        for extra in [&[][..], &["--no-refresh"][..]] {
            let mut args = vec!["def", "vfs_read", "--path-prefix", "fs/"];
            args.extend(extra);
            let v = json(&t, &args, env);
            assert_eq!(v["results"][0]["path"], "fs/read_write.c", "{v}");
            assert!(v["warning"].is_null(), "{env:?} {extra:?}: {v}");
        }
    }
    // The same size and other bytes under a new time is an edit, and said so.
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, text.replacen("vfs_read", "vfs_reae", 1)).unwrap();
    let v = json(
        &t,
        &["def", "vfs_read", "--path-prefix", "fs/", "--no-refresh"],
        &[],
    );
    let w = v["warning"].as_str().unwrap_or_default();
    assert!(w.ends_with("changed since they were indexed: the lines shown may be stale (without --no-refresh knav refreshes first; or run `knav index`): fs/read_write.c"), "{v}");
}
