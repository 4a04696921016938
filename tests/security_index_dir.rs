//! The index directory is untrusted input: files planted in `.knav/` (links, records naming
//! paths, another user's directory) make knav refuse or leave them alone, never write, read or
//! delete outside; revisions kept are bounded; a failed revision leaves nothing behind. Each
//! test is named after the finding it pins (issue 45).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::client::Client;
use common::{knav_env, knav_output, tree, Tree};
use serde_json::json;

/// Runs git in `dir`; its stdout, trimmed.
fn git(dir: &Path, args: &[&str]) -> String {
    common::git::git(dir, args).trim().to_string()
}

/// A repository with `n` commits tagged `r1`..`rN`, each a tree of its own.
fn repo(name: &str, n: usize) -> Tree {
    let t = tree(name, &[("lib/a.c", "int foo(void)\n{\n\treturn 0;\n}\n")]);
    git(&t.root, &["init", "-q", "-b", "main"]);
    for i in 1..=n {
        let text = format!("int foo(void)\n{{\n\treturn {i};\n}}\n");
        std::fs::write(t.root.join("lib/a.c"), text).unwrap();
        git(&t.root, &["add", "-A"]);
        git(&t.root, &["commit", "-q", "-m", &format!("r{i}")]);
        git(&t.root, &["tag", &format!("r{i}")]);
    }
    t
}

/// `knav index --rev rK` for K in `revs`; each must succeed.
fn index_revisions(t: &Tree, revs: std::ops::RangeInclusive<usize>) {
    for i in revs {
        let rev = format!("r{i}");
        let (code, out, err) = knav_output(t, &["index", "--rev", &rev]);
        assert_eq!(code, 0, "{rev}: {out}{err}");
    }
}

/// A directory outside the tree, beside it, with one file: what no planted file may reach.
fn outside(t: &Tree, name: &str) -> PathBuf {
    let dir = t.root.with_file_name(format!(
        "{}-{name}",
        t.root.file_name().unwrap().to_str().unwrap()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("kept.txt"), "outside\n").unwrap();
    dir
}

/// A revision directory planted under `revs` for tree `tree` with `record_tree` in its record,
/// last used two hours ago.
fn plant_revision(revs: &Path, tree: &str, record_tree: &str) -> PathBuf {
    let dir = revs.join(format!("t-{tree}"));
    std::fs::create_dir_all(dir.join("tree")).unwrap();
    let record = json!({"tree": record_tree, "commit": tree, "asked": "planted",
        "files": 0, "skipped": 0, "made_unix": 0});
    std::fs::write(dir.join("rev.json"), record.to_string()).unwrap();
    let when = std::time::SystemTime::now() - std::time::Duration::from_secs(7200);
    std::fs::File::options()
        .append(true)
        .open(dir.join("rev.json"))
        .unwrap()
        .set_modified(when)
        .unwrap();
    dir
}

fn revision_dirs(t: &Tree) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(t.root.join(".knav/revs"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("t-"))
        .collect();
    names.sort();
    names
}

fn blob_files(t: &Tree) -> usize {
    std::fs::read_dir(t.root.join(".knav/revs/blobs"))
        .map(|d| {
            d.flatten()
                .map(|s| std::fs::read_dir(s.path()).map_or(0, |f| f.count()))
                .sum()
        })
        .unwrap_or(0)
}

#[test]
fn a_planted_rev_json_tree_with_dotdot_deletes_nothing_outside() {
    let t = repo("sec-idx-dotdot", 8);
    let victim = outside(&t, "victim");
    let revs = t.root.join(".knav/revs");
    // revs/t-x/.. is revs; three more `..` reach the tree's parent, where the victim is.
    std::fs::create_dir_all(revs.join("t-x")).unwrap();
    let name = victim.file_name().unwrap().to_str().unwrap();
    let planted = plant_revision(&revs, &"e".repeat(40), &format!("x/../../../../{name}"));
    // Eight revisions and the planted one: one over what is kept, the planted one oldest.
    index_revisions(&t, 1..=8);
    assert_eq!(
        std::fs::read(victim.join("kept.txt")).unwrap(),
        b"outside\n"
    );
    // Not listed as a revision, so left alone.
    assert!(planted.join("rev.json").is_file());
    let _ = std::fs::remove_dir_all(&victim);
}

#[test]
fn a_blobs_entry_linked_to_a_directory_loses_none_of_its_files() {
    let t = repo("sec-idx-bloblink", 8);
    let victim = outside(&t, "blobs-victim");
    let revs = t.root.join(".knav/revs");
    std::fs::create_dir_all(revs.join("blobs")).unwrap();
    std::os::unix::fs::symlink(&victim, revs.join("blobs/zz")).unwrap();
    // An old revision to evict, so that the blobs are swept.
    let old = "f".repeat(40);
    plant_revision(&revs, &old, &old);
    index_revisions(&t, 1..=8);
    assert!(
        !revs.join(format!("t-{old}")).exists(),
        "the old one evicted"
    );
    assert_eq!(
        std::fs::read(victim.join("kept.txt")).unwrap(),
        b"outside\n"
    );
    // The link itself, knav's own scratch, is removed as a link.
    assert!(std::fs::symlink_metadata(revs.join("blobs/zz")).is_err());
    let _ = std::fs::remove_dir_all(&victim);
}

#[test]
fn ten_quick_revisions_leave_at_most_eight_on_disk() {
    let t = repo("sec-idx-bound", 10);
    index_revisions(&t, 1..=10);
    let dirs = revision_dirs(&t);
    assert_eq!(dirs.len(), 8, "{dirs:?}");
    // The two least recently used went: r1's and r2's trees.
    for gone in ["r1", "r2"] {
        let tree = git(&t.root, &["rev-parse", &format!("{gone}^{{tree}}")]);
        assert!(!dirs.contains(&format!("t-{tree}")), "{gone} kept");
    }
    // Their blobs went with them: one a.c per kept revision.
    assert_eq!(blob_files(&t), 8);
}

/// A file outside the tree that a planted link names; what it holds after knav ran.
fn link_victim(t: &Tree, link: &str) -> PathBuf {
    let dir = outside(t, "lock-victim");
    let link = t.root.join(link);
    std::fs::create_dir_all(link.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(dir.join("kept.txt"), &link).unwrap();
    dir
}

#[test]
fn a_revs_lock_link_leaves_its_target_untouched() {
    let t = repo("sec-idx-revslock", 1);
    let victim = link_victim(&t, ".knav/revs/lock");
    let (code, out, err) = knav_output(&t, &["index", "--rev", "r1"]);
    assert_ne!(code, 0, "{out}");
    assert!(
        out.contains("revs/lock: a symbolic link where knav keeps"),
        "{out}{err}"
    );
    assert_eq!(
        std::fs::read(victim.join("kept.txt")).unwrap(),
        b"outside\n"
    );
    let _ = std::fs::remove_dir_all(&victim);
}

#[test]
fn a_history_lock_link_leaves_its_target_untouched() {
    let t = repo("sec-idx-histlock", 1);
    let victim = link_victim(&t, ".knav/history/lock");
    let (code, out, err) = knav_output(&t, &["index", "--history"]);
    assert_ne!(code, 0, "{out}");
    assert!(
        out.contains("history/lock: a symbolic link where knav keeps"),
        "{out}{err}"
    );
    assert_eq!(
        std::fs::read(victim.join("kept.txt")).unwrap(),
        b"outside\n"
    );
    let _ = std::fs::remove_dir_all(&victim);
}

#[test]
fn an_index_lock_link_leaves_its_target_untouched() {
    let t = repo("sec-idx-lock", 1);
    let victim = link_victim(&t, ".knav/lock");
    let (code, out, err) = knav_output(&t, &["index"]);
    assert_ne!(code, 0, "{out}");
    assert!(
        out.contains(".knav/lock: a symbolic link where knav keeps"),
        "{out}{err}"
    );
    assert_eq!(
        std::fs::read(victim.join("kept.txt")).unwrap(),
        b"outside\n"
    );
    let _ = std::fs::remove_dir_all(&victim);
}

#[test]
fn a_knav_dir_that_is_a_link_is_refused_and_its_target_untouched() {
    use std::os::unix::fs::PermissionsExt;
    let t = repo("sec-idx-knavlink", 1);
    let target = outside(&t, "knav-target");
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&t.root, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::os::unix::fs::symlink(&target, t.root.join(".knav")).unwrap();
    let (code, out, err) = knav_output(&t, &["index"]);
    assert_ne!(code, 0, "{out}");
    assert!(
        out.contains(".knav: a symbolic link where knav keeps its own files"),
        "{out}{err}"
    );
    let names: Vec<_> = std::fs::read_dir(&target).unwrap().flatten().collect();
    assert_eq!(names.len(), 1, "only kept.txt: {names:?}");
    let mode = std::fs::metadata(&target).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o755);
    // A query does not read an index there either.
    let (code, out, err) = knav_output(&t, &["def", "foo", "--no-refresh"]);
    assert_ne!(code, 0);
    assert!(out.contains(".knav: a symbolic link"), "{out}{err}");
    let _ = std::fs::remove_dir_all(&target);
}

#[test]
fn a_dangling_gitignore_link_creates_nothing() {
    let t = repo("sec-idx-gitignore", 1);
    let dir = outside(&t, "gitignore-victim");
    std::fs::create_dir_all(t.root.join(".knav")).unwrap();
    std::os::unix::fs::symlink(dir.join("made"), t.root.join(".knav/.gitignore")).unwrap();
    let (code, out, err) = knav_output(&t, &["index", "--rev", "r1"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(!dir.join("made").exists());
    assert!(std::fs::symlink_metadata(t.root.join(".knav/.gitignore"))
        .unwrap()
        .file_type()
        .is_symlink());
    let _ = std::fs::remove_dir_all(&dir);
}

/// A repository whose r1 is planted in `.knav/revs` with its `tree` a link to a private
/// directory defining `secret_fn`; the private directory.
fn planted_private_tree(name: &str) -> (Tree, PathBuf) {
    let t = repo(name, 1);
    let private = outside(&t, "private");
    std::fs::write(
        private.join("secret.c"),
        "int secret_fn(void)\n{\n\treturn 4242;\n}\n",
    )
    .unwrap();
    let tree_id = git(&t.root, &["rev-parse", "r1^{tree}"]);
    let dir = plant_revision(&t.root.join(".knav/revs"), &tree_id, &tree_id);
    std::fs::remove_dir(dir.join("tree")).unwrap();
    std::os::unix::fs::symlink(&private, dir.join("tree")).unwrap();
    (t, private)
}

#[test]
fn a_planted_revision_tree_linked_to_a_private_directory_is_not_served() {
    let (t, private) = planted_private_tree("sec-idx-privtree");
    let (code, out, err) = knav_output(&t, &["body", "secret_fn", "--rev", "r1"]);
    assert_ne!(code, 0, "{out}");
    assert!(!out.contains("4242") && !err.contains("4242"), "{out}{err}");
    assert!(out.contains("/tree: a symbolic link"), "{out}{err}");
    let _ = std::fs::remove_dir_all(&private);
}

#[test]
fn a_planted_revision_tree_is_not_served_over_mcp_read_only_tools() {
    let (t, private) = planted_private_tree("sec-idx-privmcp");
    let root = t.root.display().to_string();
    let mut c = Client::start(&["--root", &root], &t.root, &[]);
    for tool in ["get_symbol_body", "find_definition"] {
        let (text, err) = c.call_when_built(tool, json!({"symbol": "secret_fn", "rev": "r1"}));
        assert!(err, "{tool}: {text}");
        assert!(
            !text.contains("4242") && !text.contains("secret.c"),
            "{text}"
        );
        assert!(text.contains("/tree: a symbolic link"), "{tool}: {text}");
    }
    let _ = std::fs::remove_dir_all(&private);
}

#[test]
fn a_foreign_index_directory_is_refused_unless_allowed() {
    let t = repo("sec-idx-foreign", 1);
    let knav_dir = t.root.join(".knav");
    std::fs::create_dir_all(&knav_dir).unwrap();
    if std::os::unix::fs::chown(&knav_dir, Some(65534), None).is_err() {
        // Only root can give a directory away; indexdir's unit test covers the rule itself.
        eprintln!("not root: the foreign-owner case is covered by indexdir's unit test");
        return;
    }
    let (code, text) = knav_env(&t, &["index"], &[]);
    assert_ne!(code, 0, "{text}");
    assert!(
        text.contains("owned by user 65534 and not by you")
            && text.contains("KNAV_ALLOW_FOREIGN_INDEX=1"),
        "{text}"
    );
    assert!(!knav_dir.join("CURRENT").exists());
    let (code, text) = knav_env(&t, &["index"], &[("KNAV_ALLOW_FOREIGN_INDEX", "1")]);
    assert_eq!(code, 0, "{text}");
    assert!(knav_dir.join("CURRENT").is_file());
}

#[test]
fn a_rev_leaves_binary_blobs_out() {
    let t = repo("sec-idx-binary", 0);
    let mut bin = b"ELF".to_vec();
    bin.extend([0u8; 64]);
    std::fs::write(t.root.join("lib/blob.bin"), &bin).unwrap();
    git(&t.root, &["add", "-A"]);
    git(&t.root, &["commit", "-q", "-m", "bin"]);
    git(&t.root, &["tag", "r1"]);
    index_revisions(&t, 1..=1);
    // Only a.c's blob is written, and the revision's tree holds a.c alone.
    assert_eq!(blob_files(&t), 1);
    let dirs = revision_dirs(&t);
    let lib = t.root.join(".knav/revs").join(&dirs[0]).join("tree/lib");
    let files: Vec<_> = std::fs::read_dir(lib)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(files, ["a.c"]);
}

#[test]
fn a_failed_revision_removes_its_temporary_directory_and_blobs() {
    let t = repo("sec-idx-failed", 1);
    // A tree with one entry twice (git writes none; a repository may hold one): linking the
    // second fails.
    let blob = git(&t.root, &["hash-object", "-w", "lib/a.c"]);
    let raw: Vec<u8> = (0..blob.len() / 2)
        .map(|i| u8::from_str_radix(&blob[2 * i..2 * i + 2], 16).unwrap())
        .collect();
    let mut tree_bytes = Vec::new();
    for _ in 0..2 {
        tree_bytes.extend(b"100644 a.c\0");
        tree_bytes.extend(&raw);
    }
    let tree_id = common::git::git_in(
        &t.root,
        &["hash-object", "-t", "tree", "-w", "--literally", "--stdin"],
        Some(&tree_bytes),
    )
    .trim()
    .to_string();
    let commit = git(&t.root, &["commit-tree", &tree_id, "-m", "dup"]);
    let (code, out, err) = knav_output(&t, &["index", "--rev", &commit]);
    assert_ne!(code, 0, "{out}");
    assert!(out.contains("cannot link"), "{out}{err}");
    let left: Vec<String> = std::fs::read_dir(t.root.join(".knav/revs"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp-") || n.starts_with("t-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    assert_eq!(blob_files(&t), 0);
}

#[test]
fn ten_revisions_asked_over_mcp_at_once_leave_at_most_eight_on_disk() {
    let t = repo("sec-idx-mcpbound", 10);
    let root = t.root.display().to_string();
    let mut c = Client::start(&["--root", &root], &t.root, &[]);
    // Asked all at once (each starts its build), then waited for one by one.
    for i in 1..=10 {
        c.call(
            "find_definition",
            json!({"symbol": "foo", "rev": format!("r{i}")}),
        );
    }
    for i in 1..=10 {
        c.call_when_built(
            "find_definition",
            json!({"symbol": "foo", "rev": format!("r{i}")}),
        );
    }
    let recorded: Vec<String> = revision_dirs(&t)
        .into_iter()
        .filter(|d| t.root.join(".knav/revs").join(d).join("rev.json").is_file())
        .collect();
    assert!(recorded.len() <= 8, "{recorded:?}");
    // One more made removes what builds of evicted revisions left.
    assert_eq!(knav_output(&t, &["index", "--rev", "r10"]).0, 0);
    let dirs = revision_dirs(&t);
    assert!(dirs.len() <= 8, "{dirs:?}");
}

#[test]
fn a_fifo_planted_as_an_index_cache_does_not_block_the_next_index() {
    let t = repo("sec-idx-fifo", 1);
    assert_eq!(knav_output(&t, &["index"]).0, 0);
    for name in ["walk.cache", "checked"] {
        let path = t.root.join(".knav").join(name);
        let _ = std::fs::remove_file(&path);
        let made = Command::new("mkfifo").arg(&path).status().unwrap();
        assert!(made.success());
    }
    std::fs::write(t.root.join("lib/b.c"), "int bar(void)\n{\n\treturn 1;\n}\n").unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_knav"))
        .args(["index", "--root"])
        .arg(&t.root)
        .env_remove("KNAV_INDEX_DIR")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let status = status.expect("knav index blocked on a FIFO in the index directory");
    assert!(status.success());
    let (code, out, _) = knav_output(&t, &["def", "bar", "--no-refresh"]);
    assert_eq!(code, 0);
    assert!(out.contains("lib/b.c:1"), "{out}");
}

#[test]
fn an_index_dir_the_user_names_through_a_link_is_used() {
    let t = repo("sec-idx-explicit", 1);
    let real = outside(&t, "explicit-index");
    let link = real.with_extension("link");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let (code, text) = knav_env(&t, &["index", "--index-dir", link.to_str().unwrap()], &[]);
    assert_eq!(code, 0, "{text}");
    assert!(real.join("CURRENT").is_file());
    let _ = std::fs::remove_file(&link);
    let _ = std::fs::remove_dir_all(&real);
}

#[test]
fn a_fifo_planted_as_the_lock_does_not_block_status() {
    let t = repo("sec-idx-fifo-lock", 1);
    assert_eq!(knav_output(&t, &["index"]).0, 0);
    let path = t.root.join(".knav").join("lock");
    let _ = std::fs::remove_file(&path);
    assert!(Command::new("mkfifo")
        .arg(&path)
        .status()
        .unwrap()
        .success());
    let mut child = Command::new(env!("CARGO_BIN_EXE_knav"))
        .args(["status", "--root"])
        .arg(&t.root)
        .env_remove("KNAV_INDEX_DIR")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("knav status blocked on a FIFO planted as .knav/lock");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("no build running"), "{text}");
}

/// A tree indexed with the watcher off (every refresh a scan of its own), and a directory
/// beside it holding a C definition and a line of text no answer may show.
fn tree_and_outside_sources(name: &str) -> (Tree, PathBuf) {
    let t = tree(
        name,
        &[("lib/a.c", "int inside_fn(void)\n{\n\treturn 0;\n}\n")],
    );
    let out = outside(&t, "listed");
    std::fs::write(
        out.join("evil.c"),
        "int outside_fn(void)\n{\n\treturn 1;\n}\n",
    )
    .unwrap();
    std::fs::write(out.join("notes.txt"), "outside_word\n").unwrap();
    let (code, text) = knav_env(&t, &["index"], &[("KNAV_WATCH", "0")]);
    assert_eq!(code, 0, "{text}");
    (t, out)
}

/// `../NAME` of directory `out` beside the tree.
fn dotdot(out: &Path) -> String {
    format!("../{}", out.file_name().unwrap().to_str().unwrap())
}

/// `(size, mtime_ns)` of `p`, as a walk cache keeps them.
fn stat(p: &Path) -> (u64, i64) {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::symlink_metadata(p).unwrap();
    (m.size(), m.mtime() * 1_000_000_000 + m.mtime_nsec())
}

/// Runs `f` and says whether directory `dir` was opened (listed or stat'ed through a
/// descriptor) meanwhile, as inotify saw it.
fn opened_during(dir: &Path, f: impl FnOnce()) -> bool {
    use std::os::unix::ffi::OsStrExt;
    // SAFETY: plain syscalls on a descriptor this function owns and closes.
    unsafe {
        let fd = libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC);
        assert!(fd >= 0);
        let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).unwrap();
        assert!(libc::inotify_add_watch(fd, c.as_ptr(), libc::IN_OPEN) >= 0);
        f();
        let mut buf = [0u8; 4096];
        let n = libc::read(fd, buf.as_mut_ptr().cast(), buf.len());
        libc::close(fd);
        n > 0
    }
}

#[test]
fn a_forged_walk_cache_naming_a_directory_outside_is_not_walked() {
    let (t, out) = tree_and_outside_sources("forged-walk-cache");
    let dir = t.root.join(".knav");
    let mut cache = knav::index::store::read_walk_cache(&dir).expect("a walk cache");
    cache.dirs.push(knav::walk::DirListing {
        path: dotdot(&out),
        ..Default::default()
    });
    knav::index::store::write_walk_cache(&dir, &cache).unwrap();
    let opened = opened_during(&out, || {
        let (_, text) = knav_env(&t, &["def", "outside_fn"], &[("KNAV_WATCH", "0")]);
        assert!(text.contains("no symbol named 'outside_fn'"), "{text}");
    });
    assert!(!opened, "{} was listed", out.display());
    // The cache was taken as damaged and written anew from the tree.
    let cache = knav::index::store::read_walk_cache(&dir).expect("a new walk cache");
    assert!(
        cache.dirs.iter().all(|d| !d.path.contains("..")),
        "{cache:?}"
    );
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_forged_text_walk_cache_naming_a_directory_outside_is_not_listed() {
    let (t, out) = tree_and_outside_sources("forged-text-walk");
    let dir = t.root.join(".knav");
    let (mut cache, part) = knav::index::text::read_cache(&dir).expect("a text walk cache");
    let mut names = knav::walk::Names::default();
    names.push("notes.txt");
    cache.dirs.push(knav::index::text::walk::TextDir {
        path: dotdot(&out),
        names,
        stats: vec![stat(&out.join("notes.txt"))],
        ..Default::default()
    });
    knav::index::text::write_cache(&dir, &cache, &part).unwrap();
    let opened = opened_during(&out, || {
        let (code, text) = knav_env(&t, &["grep", "outside_word"], &[("KNAV_WATCH", "0")]);
        assert_eq!(code, 1, "{text}");
    });
    assert!(!opened, "{} was listed", out.display());
    let (_, text) = knav_env(&t, &["grep", "inside_fn"], &[("KNAV_WATCH", "0")]);
    assert!(text.contains("lib/a.c"), "{text}");
    let _ = std::fs::remove_dir_all(&out);
}
