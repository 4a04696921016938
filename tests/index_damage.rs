//! A damaged index: every file of a segment and of the build-file part truncated and
//! bit-flipped at several places. Each query gives the right answer or a clear error (never a
//! panic or an abort), `--verify` reports the damage, and the next `knav index` repairs it.

use std::path::{Path, PathBuf};

mod common;
use common::{copy_dir, fixture, Tree};

/// `knav ARGS` with `envs`; a query with `--no-refresh`: its scan of the tree would otherwise
/// repair the damage before answering (what is tested here is the answer from a damaged index
/// and the repair by `knav index`).
fn knav(t: &Tree, args: &[&str], envs: &[(&str, &str)]) -> (i32, String) {
    let mut args = args.to_vec();
    if args.first() != Some(&"index") {
        args.push("--no-refresh");
    }
    common::knav_env(t, &args, envs)
}

fn queries(t: &Tree) -> Vec<Vec<String>> {
    let config = t.root.join(".config").display().to_string();
    [
        "def kmap",
        "callers vfs_read",
        "symbols fs/read_write.c",
        "body vfs_read",
        "def CONFIG_HIGHMEM",
        "find vfs rea",
        "files ext2",
    ]
    .iter()
    .map(|q| q.split(' ').map(String::from).collect())
    .chain([vec![
        "def".into(),
        "latin1_probe".into(),
        "--active-config".into(),
        config,
    ]])
    .collect()
}

/// The files of the segment and of the build-file part, relative to the index directory.
fn index_files(index: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for d in std::fs::read_dir(index).unwrap().flatten() {
        let name = d.file_name().to_string_lossy().into_owned();
        if name.starts_with("seg-") || name.starts_with("kb-") {
            for f in std::fs::read_dir(d.path()).unwrap().flatten() {
                out.push(PathBuf::from(&name).join(f.file_name()));
            }
        }
    }
    out.sort();
    out
}

#[derive(Clone, Copy, Debug)]
enum Mutation {
    Truncate(usize),
    Flip(usize, u8),
}

fn mutations(len: usize) -> Vec<Mutation> {
    let mut m = vec![
        Mutation::Truncate(len / 2),
        Mutation::Flip(5, 0xff),
        Mutation::Flip(len / 3, 0x01),
        Mutation::Truncate(len.saturating_sub(1)),
        Mutation::Flip(len * 2 / 3, 0xff),
        Mutation::Flip(len.saturating_sub(1), 0x80),
    ];
    // An empty file (a segment's definer tables when no macro defines names) has nothing to damage.
    m.retain(|x| match x {
        Mutation::Flip(at, _) => *at < len,
        Mutation::Truncate(n) => *n < len,
    });
    m
}

fn apply(path: &Path, m: Mutation) {
    let mut bytes = std::fs::read(path).unwrap();
    match m {
        Mutation::Truncate(n) => bytes.truncate(n),
        Mutation::Flip(at, mask) => bytes[at] ^= mask,
    }
    std::fs::write(path, bytes).unwrap();
}

fn restore(index: &Path, good: &Path) {
    std::fs::remove_dir_all(index).unwrap();
    copy_dir(good, index);
}

/// No panic, no abort, no signal: an answer or an error.
fn assert_no_crash(code: i32, out: &str, what: &str) {
    assert!(
        (code == 0 || code == 1) && !out.contains("panicked"),
        "{what}: exit {code}\n{out}"
    );
}

/// A fixture with its index built, a pristine copy of the index beside it, and the answers
/// of the undamaged index.
struct Indexed {
    t: Tree,
    index: PathBuf,
    good: PathBuf,
    queries: Vec<Vec<String>>,
    expected: Vec<String>,
}

impl Indexed {
    fn new(name: &str) -> Indexed {
        let t = fixture(name);
        let (code, out) = knav(&t, &["index"], &[]);
        assert_eq!(code, 0, "{out}");
        let index = t.root.join(".knav");
        let good = t.root.with_extension("good");
        let _ = std::fs::remove_dir_all(&good);
        copy_dir(&index, &good);
        let queries = queries(&t);
        let expected = queries
            .iter()
            .map(|q| {
                let (code, out) = ask(&t, q, &[]);
                assert_eq!(code, 0, "{q:?}: {out}");
                out
            })
            .collect();
        Indexed {
            t,
            index,
            good,
            queries,
            expected,
        }
    }

    /// Damages each of `files` in turn and checks every answer; returns the repairs made.
    fn damage_each(&self, files: &[PathBuf]) -> usize {
        let (t, index, good) = (&self.t, &self.index, &self.good);
        let mut repaired = 0;
        for file in files {
            let len = std::fs::metadata(good.join(file)).unwrap().len() as usize;
            for (i, m) in mutations(len).into_iter().enumerate() {
                restore(index, good);
                apply(&index.join(file), m);
                let what = format!("{} {m:?}", file.display());
                // As a user gets it: the right answer or a clear error (or, for the build-file
                // part, a warning that it cannot be read beside an answer without it).
                for (q, want) in self.queries.iter().zip(&self.expected) {
                    let (code, out) = ask(t, q, &[]);
                    assert_no_crash(code, &out, &format!("{what}: {q:?}"));
                    assert!(
                        (code == 0 && out == *want) || out.contains("run `knav index"),
                        "{what}: {q:?} answered wrongly without an error (exit {code}):\n{out}\nexpected:\n{want}"
                    );
                }
                // With no checksum at open, the decoders meet the damage themselves: no crash.
                // (A truncation is caught by the length check either way.)
                if matches!(m, Mutation::Flip(..)) {
                    for q in &self.queries {
                        let (code, out) = ask(t, q, &[("KNAV_OPEN_CHECK_BYTES", "0")]);
                        assert_no_crash(code, &out, &format!("{what}, unchecked: {q:?}"));
                    }
                }
                let meta = file.file_name().is_some_and(|n| n == "meta.json");
                let (code, out) = knav(t, &["index", "--verify"], &[]);
                assert_no_crash(code, &out, &format!("{what}: --verify"));
                // meta.json's timings and counts are not checksummed: a flip there may be harmless.
                assert!(meta || code == 1, "{what}: --verify did not see it:\n{out}");
                if i % 3 == 0 {
                    let (code, out) = knav(t, &["index"], &[]);
                    assert_eq!(code, 0, "{what}: knav index did not repair it:\n{out}");
                    assert!(
                        meta || out.contains("rebuilt, not refreshed"),
                        "{what}: knav index did not see the damage:\n{out}"
                    );
                    for (q, want) in self.queries.iter().zip(&self.expected).step_by(3) {
                        let (code, out) = ask(t, q, &[]);
                        assert_eq!((code, &out), (0, want), "{what}: after repair, {q:?}");
                    }
                    let (code, out) = knav(t, &["index", "--verify"], &[]);
                    assert_eq!(code, 0, "{what}: after repair: {out}");
                    repaired += 1;
                }
            }
        }
        repaired
    }
}

impl Drop for Indexed {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.good);
    }
}

fn ask(t: &Tree, q: &[String], envs: &[(&str, &str)]) -> (i32, String) {
    let args: Vec<&str> = q.iter().map(String::as_str).collect();
    knav(t, &args, envs)
}

#[test]
fn every_index_file_truncated_or_flipped_gives_a_right_answer_or_a_clear_error_and_is_repaired() {
    // Two trees, each damaging half of the files: the runs take both cores.
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(|| Indexed::new("damage-a"));
        let b = s.spawn(|| Indexed::new("damage-b"));
        (a.join().unwrap(), b.join().unwrap())
    });
    let files = index_files(&a.index);
    assert_eq!(files.len(), index_files(&b.index).len());
    assert!(files.len() >= 11, "{files:?}");
    // The same file names in both (their directories' names differ).
    let names_b = index_files(&b.index);
    let half = files.len() / 2;
    let repaired = std::thread::scope(|s| {
        let ra = s.spawn(|| a.damage_each(&files[..half]));
        let rb = s.spawn(|| b.damage_each(&names_b[half..]));
        ra.join().unwrap() + rb.join().unwrap()
    });
    assert!(repaired >= 20, "{repaired}");
}

/// The directory of the index part whose name starts with `prefix` (`seg-`, `kb-`).
fn part_dir(t: &Tree, prefix: &str) -> PathBuf {
    std::fs::read_dir(t.root.join(".knav"))
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with(prefix))
        .unwrap()
        .path()
}

fn flip(path: &Path, at: usize) {
    let mut bytes = std::fs::read(path).unwrap();
    bytes[at] ^= 0xff;
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn a_truncated_build_file_fst_is_a_clear_warning_not_a_panic() {
    let t = fixture("kb-fst-truncated");
    assert_eq!(knav(&t, &["index"], &[]).0, 0);
    let fst = part_dir(&t, "kb-").join("symbols.fst");
    let len = std::fs::metadata(&fst).unwrap().len();
    std::fs::File::options()
        .write(true)
        .open(&fst)
        .unwrap()
        .set_len(len - 7)
        .unwrap();
    for envs in [&[][..], &[("KNAV_OPEN_CHECK_BYTES", "0")][..]] {
        let (code, out) = knav(&t, &["def", "CONFIG_HIGHMEM"], envs);
        assert_eq!(code, 0, "{out}");
        assert!(
            out.contains("symbols.fst") && out.contains("run `knav index"),
            "{out}"
        );
    }
}

#[test]
fn flipped_bytes_in_files_dat_are_an_error_and_the_next_index_rebuilds_without_duplicates() {
    let t = fixture("files-dat-flipped");
    assert_eq!(knav(&t, &["index"], &[]).0, 0);
    let (_, want) = knav(&t, &["refs", "vfs_read"], &[]);
    let files = part_dir(&t, "seg-").join("files.dat");
    let bytes = std::fs::read(&files).unwrap();
    let path = b"fs/read_write.c";
    let at = bytes.windows(path.len()).position(|w| w == path).unwrap();
    // Its path no longer UTF-8: this answered with an empty path, exit 0.
    flip(&files, at + 3);
    for envs in [&[][..], &[("KNAV_OPEN_CHECK_BYTES", "0")][..]] {
        let (code, out) = knav(&t, &["refs", "vfs_read"], envs);
        assert_eq!(code, 1, "{envs:?}: {out}");
        assert!(
            out.contains("files.dat is damaged") && out.contains("run `knav index"),
            "{out}"
        );
    }
    // Editing a file makes the next index an incremental one, were it to build on the damage.
    std::fs::write(t.root.join("fs/new.c"), "int vfs_read_more(void);\n").unwrap();
    let (code, out) = knav(&t, &["index"], &[]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("index full") && out.contains("files.dat is damaged"),
        "{out}"
    );
    assert_eq!(knav(&t, &["refs", "vfs_read"], &[]), (0, want));
}

#[test]
fn verify_checks_the_build_file_part_and_active_config_answers_do_not_change_silently() {
    let t = fixture("kb-data-flipped");
    assert_eq!(knav(&t, &["index"], &[]).0, 0);
    let config = t.root.join(".config").display().to_string();
    let q = ["def", "latin1_probe", "--active-config", &config];
    let (_, want) = knav(&t, &q, &[]);
    let data = part_dir(&t, "kb-").join("data.bin");
    let len = std::fs::metadata(&data).unwrap().len() as usize;
    flip(&data, len / 2);
    let (code, out) = knav(&t, &["index", "--verify"], &[]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("data.bin"), "{out}");
    let (_, out) = knav(&t, &q, &[]);
    assert!(out == want || out.contains("run `knav index"), "{out}");
    let (code, out) = knav(&t, &["index"], &[]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("rebuilt, not refreshed") && out.contains("data.bin"),
        "{out}"
    );
    assert_eq!(knav(&t, &q, &[]), (0, want));
    assert_eq!(knav(&t, &["index", "--verify"], &[]).0, 0);
}

#[test]
fn a_plain_index_over_a_damaged_segment_rebuilds_it_instead_of_saying_unchanged() {
    let t = fixture("plain-index-damaged");
    assert_eq!(knav(&t, &["index"], &[]).0, 0);
    // A no-change refresh first, as it is answered from the walk cache.
    let (_, out) = knav(&t, &["index"], &[]);
    assert!(out.contains("index unchanged"), "{out}");
    let names = part_dir(&t, "seg-").join("names-1.dat");
    let len = std::fs::metadata(&names).unwrap().len() as usize;
    flip(&names, len - 1);
    let (code, out) = knav(&t, &["index"], &[]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("index full") && out.contains("names-1.dat is damaged (checksum mismatch)"),
        "{out}"
    );
    let (_, out) = knav(&t, &["index"], &[]);
    assert!(out.contains("index unchanged"), "{out}");
}

#[test]
fn a_large_index_not_checksummed_at_open_is_still_checked_and_rebuilt_by_the_next_index() {
    // KNAV_OPEN_CHECK_BYTES=0 makes the fixture's index behave as a kernel-sized one: sizes
    // and headers at open, checksums only where a file (or its part's meta.json) moved.
    let large = [("KNAV_OPEN_CHECK_BYTES", "0")];
    let t = fixture("large-damaged");
    assert_eq!(knav(&t, &["index"], &large).0, 0);
    let seg = part_dir(&t, "seg-");
    let defs = seg.join("defs.dat");
    let len = std::fs::metadata(&defs).unwrap().len() as usize;
    flip(&defs, len - 2);
    let (code, out) = knav(&t, &["index"], &large);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("defs.dat is damaged (checksum mismatch)"),
        "{out}"
    );
    // A checksum changed in meta.json: the data no longer matches what the index says.
    let seg = part_dir(&t, "seg-");
    let meta_path = seg.join("meta.json");
    let mut meta: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&meta_path).unwrap()).unwrap();
    let sum = &mut meta["checksums"][0][1];
    *sum = (sum.as_u64().unwrap() ^ 1).into();
    std::fs::write(&meta_path, serde_json::to_vec(&meta).unwrap()).unwrap();
    let (code, out) = knav(&t, &["index"], &large);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("rebuilt, not refreshed"), "{out}");
    let (_, out) = knav(&t, &["index"], &large);
    assert!(out.contains("index unchanged"), "{out}");
}

/// The part directories the index's manifest names, by prefix (`seg`, `kb`, `tx`, `kd`, `hw`).
fn part_dirs(index: &Path) -> std::collections::BTreeMap<String, String> {
    let text = std::fs::read_to_string(index.join("CURRENT")).unwrap();
    let m: serde_json::Value = serde_json::from_str(&text).unwrap();
    let dir = |v: &serde_json::Value| v["dir"].as_str().unwrap().to_string();
    let segments = m["segments"].as_array().unwrap();
    assert_eq!(segments.len(), 1, "{text}");
    [
        ("seg", dir(&segments[0])),
        ("kb", dir(&m["build_files"])),
        ("tx", dir(&m["text"])),
        ("kd", dir(&m["docs"])),
        ("hw", dir(&m["hw"])),
    ]
    .into_iter()
    .map(|(k, d)| (k.to_string(), d))
    .collect()
}

#[test]
fn each_damaged_part_is_rebuilt_alone_and_a_damaged_segment_rebuilds_the_index() {
    let t = fixture("damage-parts");
    let index = t.root.join(".knav");
    let (code, out) = knav(&t, &["index"], &[]);
    assert_eq!(code, 0, "{out}");
    let before = part_dirs(&index);
    let kinds: Vec<&str> = before.keys().map(String::as_str).collect();
    assert_eq!(
        kinds,
        ["hw", "kb", "kd", "seg", "tx"],
        "the fixture has every part"
    );
    for (prefix, dir) in &before {
        let now = part_dirs(&index);
        let files: Vec<PathBuf> = std::fs::read_dir(index.join(&now[prefix]))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.file_name().is_some_and(|n| n != "meta.json"))
            .collect();
        let file = files
            .iter()
            .max_by_key(|p| p.metadata().unwrap().len())
            .unwrap();
        let len = file.metadata().unwrap().len() as usize;
        apply(file, Mutation::Flip(len / 2, 0x40));
        let (code, out) = knav(&t, &["index", "--verify"], &[]);
        assert_eq!(code, 1, "{dir}: --verify did not see it:\n{out}");
        assert!(
            out.contains(&now[prefix]),
            "{dir}: --verify names another file:\n{out}"
        );
        let (code, out) = knav(&t, &["index"], &[]);
        assert_eq!(code, 0, "{dir}: {out}");
        assert!(out.contains("rebuilt, not refreshed"), "{dir}: {out}");
        let after = part_dirs(&index);
        for (other, was) in &now {
            let rebuilt = after[other] != *was;
            // A segment's damage rebuilds the whole index; another part's, that part alone.
            let want = prefix == "seg" || other == prefix;
            assert_eq!(rebuilt, want, "{dir}: {other} {was} -> {}", after[other]);
        }
        let (code, out) = knav(&t, &["index", "--verify"], &[]);
        assert_eq!(code, 0, "{dir}: after the repair: {out}");
    }
}
