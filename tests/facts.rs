//! The fact store (issue "Facts kept by file content"): an index built from kept facts is the
//! index built without them, byte for byte; what the definer table says is checked per file;
//! damage, a killed build and builds sharing the store at once cost recomputation, never a
//! wrong answer.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{fixture, tree, Tree};

/// A store of its own for one test, removed when dropped.
struct Store(PathBuf);

impl Store {
    fn new(name: &str) -> Store {
        let dir = std::env::temp_dir().join(format!("knav-facts-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        Store(dir)
    }

    fn packs(&self) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(self.0.join("packs"))
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        v.sort();
        v
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `knav index --full` of `tree` with the store at `cache` (`off`: none); its output.
fn index(tree: &Tree, cache: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_knav"))
        .args(["index", "--full", "--root"])
        .arg(&tree.root)
        .env_remove("KNAV_INDEX_DIR")
        .env("KNAV_CACHE_DIR", cache)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "knav index: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// `knav index` of `tree` (a refresh, or a first build) with the store at `cache`; its output.
fn refresh(tree: &Tree, cache: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_knav"))
        .args(["index", "--root"])
        .arg(&tree.root)
        .env_remove("KNAV_INDEX_DIR")
        .env("KNAV_CACHE_DIR", cache)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Every file of the tree's symbol segment by name (its `meta.json` without the build's
/// timings).
fn segment(tree: &Tree) -> BTreeMap<String, Vec<u8>> {
    let index = tree.root.join(".knav");
    let current: serde_json::Value =
        serde_json::from_slice(&std::fs::read(index.join("CURRENT")).unwrap()).unwrap();
    let seg = current["segments"][0]["dir"].as_str().unwrap().to_string();
    let mut files = BTreeMap::new();
    for e in std::fs::read_dir(index.join(seg)).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let mut bytes = std::fs::read(e.path()).unwrap();
        if name == "meta.json" {
            let mut meta: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
            meta.as_object_mut().unwrap().remove("phase_ms");
            bytes = serde_json::to_vec(&meta).unwrap();
        }
        files.insert(name, bytes);
    }
    files
}

fn assert_same(a: &BTreeMap<String, Vec<u8>>, b: &BTreeMap<String, Vec<u8>>, what: &str) {
    assert_eq!(
        a.keys().collect::<Vec<_>>(),
        b.keys().collect::<Vec<_>>(),
        "{what}"
    );
    for (name, bytes) in a {
        assert!(bytes == &b[name], "{what}: {name} differs");
    }
}

/// The `fact store:` line of an index report.
fn facts_line(report: &str) -> &str {
    report
        .lines()
        .find(|l| l.trim_start().starts_with("fact store:"))
        .unwrap_or_else(|| panic!("no fact store line in {report}"))
}

#[test]
fn an_index_built_from_the_store_is_byte_identical_to_one_built_without_it() {
    let t = fixture("facts-identical");
    let store = Store::new("identical");
    let cache = store.0.to_str().unwrap();
    let off = index(&t, "off");
    assert!(!off.contains("fact store:"), "{off}");
    let without = segment(&t);
    let first = index(&t, cache);
    assert!(
        facts_line(&first)
            .contains("0 of 14 files' facts from the store (0%), 14 analyzed, 14 kept"),
        "{first}"
    );
    assert_same(&without, &segment(&t), "a build that filled the store");
    let second = index(&t, cache);
    assert!(
        facts_line(&second).contains("14 of 14 files' facts from the store (100%), 0 analyzed"),
        "{second}"
    );
    assert_same(&without, &segment(&t), "a build from the store");
    // Another tree holding the same files at the same paths: the same facts.
    let other = fixture("facts-identical-copy");
    let copy = index(&other, cache);
    assert!(facts_line(&copy).contains("14 of 14"), "{copy}");
    // Its files' modification times are its own: compared with its own index.
    let from_store = segment(&other);
    index(&other, "off");
    assert_same(&segment(&other), &from_store, "another tree from the store");
    let (code, out) = common::knav(&other, &["def", "sys_read"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("fs/read_write.c:"), "{out}");
}

#[test]
fn a_header_edit_that_changes_a_definer_recomputes_the_files_that_use_it() {
    let t = tree(
        "facts-definer",
        &[
            ("include/thing.h", "#define DEFINE_THING(n) int thing_##n\n"),
            (
                "a.c",
                "#include \"thing.h\"\nDEFINE_THING(x);\nint a(void) { return 0; }\n",
            ),
            ("b.c", "int b(void) { return 1; }\n"),
        ],
    );
    let store = Store::new("definer");
    let cache = store.0.to_str().unwrap();
    index(&t, cache);
    let (_, out) = common::knav(&t, &["def", "thing_x"]);
    assert!(out.contains("a.c:2"), "{out}");
    std::fs::write(
        t.root.join("include/thing.h"),
        "#define DEFINE_THING(n) int other_##n\n",
    )
    .unwrap();
    let report = index(&t, cache);
    // The header is new content; a.c is kept, but under what the old table said of
    // DEFINE_THING; b.c reads nothing of the table.
    assert!(
        facts_line(&report).contains("1 of 3 files' facts from the store (33%), 2 analyzed"),
        "{report}"
    );
    let (_, out) = common::knav(&t, &["def", "other_x"]);
    assert!(out.contains("a.c:2"), "{out}");
    let (code, out) = common::knav(&t, &["def", "thing_x"]);
    assert_ne!(code, 0, "{out}");
    let with = segment(&t);
    index(&t, "off");
    assert_same(&with, &segment(&t), "after a definer changed");
}

/// A fixture copy indexed without a store, then with `store` (which it fills): the tree, the
/// segment built without the store, and the store's pack.
fn filled(name: &str, store: &Store) -> (Tree, BTreeMap<String, Vec<u8>>, PathBuf) {
    let t = fixture(name);
    index(&t, "off");
    let without = segment(&t);
    index(&t, store.0.to_str().unwrap());
    let pack = store.packs().pop().unwrap();
    (t, without, pack)
}

#[test]
fn a_flipped_store_entry_is_recomputed_and_the_index_is_unchanged() {
    let store = Store::new("flipped");
    let cache = store.0.to_str().unwrap();
    let (t, without, pack) = filled("facts-flipped", &store);
    let mut bytes = std::fs::read(&pack).unwrap();
    // A byte inside the entries, past the pack's magic and first entry's head.
    bytes[200] ^= 0x55;
    std::fs::write(&pack, &bytes).unwrap();
    let report = index(&t, cache);
    let line = facts_line(&report);
    assert!(
        line.contains("13 of 14") && line.contains("1 damaged entries not trusted"),
        "{line}"
    );
    assert_same(&without, &segment(&t), "after a flipped entry");
}

#[test]
fn a_pack_cut_short_is_removed_and_the_build_still_answers() {
    let store = Store::new("cut");
    let cache = store.0.to_str().unwrap();
    let (t, without, pack) = filled("facts-cut", &store);
    let bytes = std::fs::read(&pack).unwrap();
    std::fs::write(&pack, &bytes[..bytes.len() / 2]).unwrap();
    let report = index(&t, cache);
    assert!(facts_line(&report).contains("0 of 14"), "{report}");
    assert!(!pack.exists());
    assert_same(&without, &segment(&t), "after a cut pack");
}

#[test]
fn an_unwritable_store_says_what_it_could_not_keep_and_the_build_still_answers() {
    let t = fixture("facts-unwritable");
    let store = Store::new("unwritable");
    std::fs::create_dir_all(&store.0).unwrap();
    // The packs directory is a file: nothing can be kept.
    std::fs::write(store.0.join("packs"), b"").unwrap();
    let report = index(&t, store.0.to_str().unwrap());
    assert!(
        facts_line(&report).contains("cannot open the store"),
        "{report}"
    );
    let (code, out) = common::knav(&t, &["def", "sys_read"]);
    assert_eq!(code, 0, "{out}");
}

/// A tree big enough that its build takes a while: `n` C files.
fn big_tree(name: &str, n: usize) -> Tree {
    let files: Vec<(String, String)> = (0..n)
        .map(|i| {
            let mut body = String::new();
            for f in 0..40 {
                body.push_str(&format!(
                    "static int helper_{i}_{f}(int x)\n{{\n\treturn x + {f};\n}}\n\
                     int caller_{i}_{f}(int y)\n{{\n\treturn helper_{i}_{f}(y) * 2;\n}}\n"
                ));
            }
            (format!("d{}/f{i}.c", i % 16), body)
        })
        .collect();
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, b)| (p.as_str(), b.as_str()))
        .collect();
    tree(name, &refs)
}

#[test]
fn two_builds_sharing_a_store_one_killed_midway_leave_it_whole() {
    let a = big_tree("facts-kill-a", 1500);
    let b = big_tree("facts-kill-b", 1500);
    let store = Store::new("kill");
    let cache = store.0.to_str().unwrap();
    let spawn = |t: &Tree| {
        Command::new(env!("CARGO_BIN_EXE_knav"))
            .args(["index", "--full", "--root"])
            .arg(&t.root)
            .env_remove("KNAV_INDEX_DIR")
            .env("KNAV_CACHE_DIR", cache)
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap()
    };
    let mut killed = spawn(&a);
    let mut done = spawn(&b);
    std::thread::sleep(std::time::Duration::from_millis(400));
    killed.kill().unwrap();
    let _ = killed.wait();
    assert!(done.wait().unwrap().success());
    // What the killed build left is removed; the finished build's pack is whole.
    let report = index(&a, cache);
    let line = facts_line(&report);
    assert!(line.contains("1500 of 1500"), "{line}");
    assert!(
        store.packs().iter().all(|p| !p
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with(".tmp-")),
        "{:?}",
        store.packs()
    );
    let from_store = segment(&a);
    index(&a, "off");
    assert_same(&from_store, &segment(&a), "after a killed build");
}

#[test]
fn knav_cache_prints_the_store_and_prune_trims_it() {
    let t = fixture("facts-cache-cmd");
    let store = Store::new("cache-cmd");
    let cache = store.0.to_str().unwrap();
    index(&t, cache);
    index(&t, cache);
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_knav"))
            .args(args)
            .env("KNAV_CACHE_DIR", cache)
            .output()
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned()
                + &String::from_utf8_lossy(&out.stderr),
        )
    };
    let (code, out) = run(&["cache"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains(&format!("fact store {cache}: 14 entries in 1 packs")),
        "{out}"
    );
    assert!(
        out.contains("last build: 14 of 14 files' facts from the store (100%)"),
        "{out}"
    );
    let (code, out) = run(&["cache", "prune", "--max-size", "0"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("pruned 1 packs"), "{out}");
    assert!(store.packs().is_empty());
    let (code, out) = run(&["cache", "prune", "--max-size", "lots"]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("not a size"), "{out}");
    let _ = Path::new(cache);
}

/// The answer of `knav ARGS --format json` on `tree` with the index in `index_dir` (the
/// default when `None`), without what differs between two builds of one tree (timings, the
/// index's own facts, grep's count of files read).
fn answer(tree: &Tree, index_dir: Option<&Path>, cache: &str, args: &[&str]) -> serde_json::Value {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_knav"));
    cmd.args(args)
        .args(["--format", "json", "--root"])
        .arg(&tree.root)
        .env_remove("KNAV_INDEX_DIR")
        .env("KNAV_CACHE_DIR", cache);
    if let Some(d) = index_dir {
        cmd.arg("--index-dir").arg(d);
    }
    let out = cmd.output().unwrap();
    let mut v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    if let Some(o) = v.as_object_mut() {
        for k in ["elapsed_ms", "index"] {
            o.remove(k);
        }
        // The text part's overlay is read, not looked up: more files read, the same hits.
        if let Some(s) = o.get_mut("search").and_then(|s| s.as_object_mut()) {
            s.remove("files_read");
        }
    }
    v
}

#[test]
fn a_copy_of_an_indexed_tree_starts_from_its_index_and_answers_as_a_build_of_its_own() {
    let a = fixture("facts-seed-a");
    let store = Store::new("seed");
    let cache = store.0.to_str().unwrap();
    index(&a, cache);
    let b = fixture("facts-seed-b");
    let edited = b.root.join("fs/read_write.c");
    let mut text = std::fs::read_to_string(&edited).unwrap();
    text.push_str("int seeded_addition(void) { return 7; }\n");
    std::fs::write(&edited, text).unwrap();
    let report = refresh(&b, cache);
    assert!(report.starts_with("index incremental:"), "{report}");
    assert!(report.contains("1 changed"), "{report}");
    assert!(
        report.contains(&format!(
            "started from the index in {}",
            a.root.join(".knav").display()
        )),
        "{report}"
    );
    // The same questions of an index of B built whole, without the store.
    let whole = b.root.with_extension("whole-index");
    let _ = std::fs::remove_dir_all(&whole);
    let built = Command::new(env!("CARGO_BIN_EXE_knav"))
        .args(["index", "--full", "--root"])
        .arg(&b.root)
        .arg("--index-dir")
        .arg(&whole)
        .env("KNAV_CACHE_DIR", "off")
        .status()
        .unwrap();
    assert!(built.success());
    for q in [
        &["def", "seeded_addition"][..],
        &["def", "vfs_read"],
        &["refs", "vfs_read"],
        &["callers", "vfs_read"],
        &["callees", "vfs_read"],
        &["body", "sys_read"],
        &["symbols", "fs/read_write.c"],
        &["files", "read"],
        &["grep", "kmap"],
        &["docs", "highmem"],
        &["impact", "vfs_read"],
    ] {
        assert_eq!(
            answer(&b, None, cache, q),
            answer(&b, Some(&whole), "off", q),
            "{q:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&whole);
    // Its refreshes hash nothing again: a file touched is unchanged, one edited is a delta.
    common::age(&b.root);
    refresh(&b, cache);
    let mut more = std::fs::read_to_string(b.root.join("mm/highmem.c")).unwrap();
    more.push_str("int after_seed(void) { return 8; }\n");
    std::fs::write(b.root.join("mm/highmem.c"), more).unwrap();
    let report = refresh(&b, cache);
    assert!(
        report.starts_with("index incremental:") && report.contains("1 changed"),
        "{report}"
    );
    let (_, out) = common::knav(&b, &["def", "after_seed"]);
    assert!(out.contains("mm/highmem.c:"), "{out}");
}

#[test]
fn a_tree_sharing_too_little_is_built_whole() {
    let a = fixture("facts-noseed-a");
    let store = Store::new("noseed");
    let cache = store.0.to_str().unwrap();
    index(&a, cache);
    let files: Vec<(String, String)> = (0..20)
        .map(|i| {
            (
                format!("x{i}.c"),
                format!("int x{i}(void) {{ return {i}; }}\n"),
            )
        })
        .collect();
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, b)| (p.as_str(), b.as_str()))
        .collect();
    let other = tree("facts-noseed-b", &refs);
    let report = refresh(&other, cache);
    assert!(report.starts_with("index full:"), "{report}");
    assert!(!report.contains("started from"), "{report}");
}

/// Every file under `dir`, root-relative, with its modification time.
fn mtimes(dir: &Path, base: &Path, out: &mut Vec<(PathBuf, std::time::SystemTime)>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let ft = e.file_type().unwrap();
        if e.file_name() == ".knav" {
            continue;
        }
        if ft.is_dir() {
            mtimes(&e.path(), base, out);
        } else if ft.is_file() {
            let rel = e.path().strip_prefix(base).unwrap().to_path_buf();
            out.push((rel, e.metadata().unwrap().modified().unwrap()));
        }
    }
}

#[test]
fn a_file_changed_under_the_same_size_and_mtime_is_not_taken_from_another_tree() {
    let a = fixture("facts-samestat-a");
    let store = Store::new("samestat");
    let cache = store.0.to_str().unwrap();
    index(&a, cache);
    // B: the same files with A's modification times (an archive unpacked twice), one of them
    // changed in place without changing its size or its time.
    let b = fixture("facts-samestat-b");
    let path = b.root.join("fs/read_write.c");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("vfs_read("), "the fixture changed");
    std::fs::write(&path, text.replacen("vfs_read(", "vfs_reed(", 1)).unwrap();
    let mut times = Vec::new();
    mtimes(&a.root, &a.root, &mut times);
    for (rel, t) in times {
        if let Ok(f) = std::fs::File::options().write(true).open(b.root.join(&rel)) {
            f.set_modified(t).unwrap();
        }
    }
    let report = refresh(&b, cache);
    assert!(report.starts_with("index full:"), "{report}");
    let (code, out) = common::knav(&b, &["def", "vfs_reed"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("fs/read_write.c:"), "{out}");
}
