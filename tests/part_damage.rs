//! A damaged part file, checksums off at open: a record's or a header's count overwritten with
//! `0xFFFF_FFFF`, a header of another kind or version, and every file of every part (segment
//! with its code search and name tables, build files, text, docs, restat, history) with bytes
//! flipped and cut to half, every tool asked; the fact store's packs and proofs so damaged
//! under a build. Each gives an answer or a clear error naming the part or file, never an
//! abort: knav runs under an address-space limit, so a reservation sized by a damaged count
//! (up to 16 GiB) fails the test instead of swapping.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::{fixture, Tree};

/// The address space knav may take, in KiB: 1 GiB, the most any allocation may ask for, far
/// above what the fixture needs and far below what a count of `0xFFFF_FFFF` records asks for.
/// glibc's arenas are capped ([`ARENAS`]) so that the space reserved does not grow with the
/// machine's cores.
const LIMIT_KIB: u64 = 1 << 20;

/// glibc's malloc arenas under the limit: each reserves 64 MiB of address space, one per core
/// by default.
const ARENAS: (&str, &str) = ("MALLOC_ARENA_MAX", "2");

/// Checksums are not checked at open: the decoders meet the damage.
const UNCHECKED: (&str, &str) = ("KNAV_OPEN_CHECK_BYTES", "0");

/// `(exit code, stdout + stderr)` of `knav ARGS --root TREE --no-refresh` under [`LIMIT_KIB`];
/// a signal is -1 (the shell is replaced by knav).
fn limited(t: &Tree, args: &[&str]) -> (i32, String) {
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {LIMIT_KIB} && exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_knav"))
        .args(args)
        .arg("--no-refresh")
        .arg("--root")
        .arg(&t.root)
        .env_remove("KNAV_INDEX_DIR")
        .env("KNAV_CACHE_DIR", "off")
        .env(UNCHECKED.0, UNCHECKED.1)
        .env(ARENAS.0, ARENAS.1)
        .output()
        .expect("sh runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let code = out.status.code().unwrap_or(-1);
    (code, text)
}

/// No abort, no signal, no panic, no failed allocation: an answer or an error.
fn assert_no_abort(code: i32, out: &str, what: &str) {
    assert!(
        (0..=2).contains(&code) && !out.contains("panicked") && !out.contains("memory allocation"),
        "{what}: exit {code}\n{out}"
    );
}

/// The fixture indexed, with its directory of the part whose name starts with `prefix`.
fn indexed(name: &str, prefix: &str) -> (Tree, PathBuf) {
    let t = fixture(name);
    let (code, out) = common::knav_env(&t, &["index"], &[("KNAV_CACHE_DIR", "off")]);
    assert_eq!(code, 0, "{out}");
    let dir = part_dirs(&t)
        .into_iter()
        .find(|d| d.file_name().unwrap().to_string_lossy().starts_with(prefix))
        .unwrap_or_else(|| panic!("no {prefix} part"));
    (t, dir)
}

/// The part directories of `t`'s index.
fn part_dirs(t: &Tree) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(t.root.join(".knav"))
        .unwrap()
        .flatten()
        .filter(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            ["seg-", "kb-", "tx-", "kd-", "hw-"]
                .iter()
                .any(|p| n.starts_with(p))
        })
        .map(|e| e.path())
        .collect();
    out.sort();
    out
}

fn varint(v: u64) -> Vec<u8> {
    let (mut v, mut out) = (v, Vec::new());
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
    out
}

/// Where the varint at `at` of `b` ends.
fn skip_varint(b: &[u8], at: usize) -> usize {
    at + b[at..].iter().position(|x| x & 0x80 == 0).unwrap() + 1
}

/// `value` as a varint of exactly `len` bytes (continuation bytes of zero bits as padding).
fn varint_of_len(value: u64, len: usize) -> Vec<u8> {
    let mut v = varint(value);
    assert!(v.len() <= len, "{value} does not fit {len} bytes");
    while v.len() < len {
        let last = v.len() - 1;
        v[last] |= 0x80;
        v.push(0);
    }
    v
}

/// Rewrites the record of `path` in `files.dat` so that its definition count reads
/// `0xFFFF_FFFF`, keeping the record's length: its modification time (nine bytes) becomes 0
/// (one byte) and its definitions' offset is padded with the bytes left.
fn damage_defs_count(files_dat: &Path, path: &str) {
    let mut b = std::fs::read(files_dat).unwrap();
    let mut key = varint(path.len() as u64);
    key.extend_from_slice(path.as_bytes());
    let start = b.windows(key.len()).position(|w| w == key).unwrap() + key.len();
    let size_end = skip_varint(&b, start);
    let mtime_end = skip_varint(&b, size_end);
    let lines_end = skip_varint(&b, mtime_end + 8);
    let status_end = lines_end + 1;
    let note_len = varint_decode(&b[status_end..]);
    let note_end = skip_varint(&b, status_end) + note_len.saturating_sub(1) as usize;
    let defs_start = varint_decode(&b[note_end..]);
    let count_end = skip_varint(&b, skip_varint(&b, note_end));
    let mut tail = vec![0u8];
    tail.extend_from_slice(&b[mtime_end..note_end]);
    let count = varint(0xFFFF_FFFF);
    let room = count_end - size_end - tail.len() - count.len();
    tail.extend(varint_of_len(defs_start, room));
    tail.extend(count);
    assert_eq!(tail.len(), count_end - size_end);
    b[size_end..count_end].copy_from_slice(&tail);
    std::fs::write(files_dat, b).unwrap();
}

fn varint_decode(b: &[u8]) -> u64 {
    let mut v = 0u64;
    for (i, x) in b.iter().enumerate() {
        v |= u64::from(x & 0x7f) << (7 * i);
        if x & 0x80 == 0 {
            break;
        }
    }
    v
}

#[test]
fn a_damaged_definition_count_in_files_dat_is_an_error_not_an_abort() {
    let (t, seg) = indexed("defs-count", "seg-");
    let (code, want) = limited(&t, &["symbols", "fs/read_write.c"]);
    assert_eq!(code, 0, "{want}");
    damage_defs_count(&seg.join("files.dat"), "fs/read_write.c");
    for q in [
        &["symbols", "fs/read_write.c"][..],
        &["refs", "vfs_read"],
        &["body", "vfs_read"],
    ] {
        let (code, out) = limited(&t, q);
        assert_no_abort(code, &out, &format!("{q:?}"));
    }
    let (code, out) = limited(&t, &["symbols", "fs/read_write.c"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("defs.dat") && out.contains("knav index"),
        "{out}"
    );
    let (code, out) = common::knav_env(&t, &["index"], &[("KNAV_CACHE_DIR", "off")]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(limited(&t, &["symbols", "fs/read_write.c"]), (0, want));
}

#[test]
fn a_damaged_posting_count_in_grams_bin_is_an_error_not_an_abort() {
    let (t, tx) = indexed("grams-count", "tx-");
    let grams = tx.join("grams.bin");
    let mut b = std::fs::read(&grams).unwrap();
    // After the 16-byte header and the list count (8 bytes), entries of 16 bytes: trigram,
    // count, offset.
    for e in b[24..].chunks_exact_mut(16) {
        e[4..8].copy_from_slice(&0xFFFF_FFFFu32.to_le_bytes());
    }
    std::fs::write(&grams, b).unwrap();
    let (code, out) = limited(&t, &["grep", "vfs_read"]);
    assert_no_abort(code, &out, "grep");
    assert!(out.contains("damaged"), "{out}");
}

#[test]
fn a_count_of_every_part_file_overwritten_is_never_an_abort() {
    let (t, _) = indexed("every-count", "seg-");
    let queries: [&[&str]; 6] = [
        &["symbols", "fs/read_write.c"],
        &["def", "CONFIG_HIGHMEM"],
        &["grep", "vfs_read"],
        &["docs", "memory"],
        &["search", "read a file"],
        &["device", "fsl,imx21-i2c"],
    ];
    for dir in part_dirs(&t) {
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        files.sort();
        for file in files {
            let bytes = std::fs::read(&file).unwrap();
            // Header counts and a first record's count lie in the first words.
            for at in [8usize, 12, 16, 20] {
                if at + 4 > bytes.len() {
                    continue;
                }
                let mut damaged = bytes.clone();
                damaged[at..at + 4].copy_from_slice(&[0xff; 4]);
                std::fs::write(&file, &damaged).unwrap();
                for q in queries {
                    let (code, out) = limited(&t, q);
                    assert_no_abort(code, &out, &format!("{} at {at}: {q:?}", file.display()));
                }
                std::fs::write(&file, &bytes).unwrap();
            }
        }
    }
}

#[test]
fn a_foreign_header_of_a_text_part_file_is_an_error_naming_the_file() {
    let (t, tx) = indexed("text-headers", "tx-");
    for name in ["files.bin", "docs.bin", "grams.bin", "post.bin"] {
        let path = tx.join(name);
        let bytes = std::fs::read(&path).unwrap();
        // Another kind of file, another format version, no header at all.
        for (at, with) in [(8usize, &b"XXXX"[..]), (4, &[0xee; 4]), (0, b"GIT!")] {
            let mut bad = bytes.clone();
            bad[at..at + with.len()].copy_from_slice(with);
            std::fs::write(&path, &bad).unwrap();
            let (code, out) = limited(&t, &["grep", "vfs_read"]);
            assert_no_abort(code, &out, name);
            assert!(
                code != 0 && out.contains("text index") && out.contains(name),
                "{name} at {at}: {out}"
            );
        }
        std::fs::write(&path, &bytes).unwrap();
    }
}

/// How one file is damaged.
#[derive(Clone, Copy, Debug)]
enum Damage {
    /// Its byte at this place (from the start; past the end: the last byte) flipped.
    Flip(usize),
    /// Its byte at the middle flipped.
    FlipMiddle,
    /// Cut to half its length.
    Halve,
}

impl Damage {
    /// Byte 5 is in a headed file's header (its version); byte 21 is the first record's fifth,
    /// past the 16-byte header, where a decoder meets the damage.
    const ALL: [Damage; 4] = [
        Damage::Flip(5),
        Damage::Flip(21),
        Damage::FlipMiddle,
        Damage::Halve,
    ];

    fn apply(self, bytes: &[u8]) -> Vec<u8> {
        let mut b = bytes.to_vec();
        let flip = |b: &mut Vec<u8>, at: usize| {
            if let Some(last) = b.len().checked_sub(1) {
                b[at.min(last)] ^= 0xff;
            }
        };
        match self {
            Damage::Flip(at) => flip(&mut b, at),
            Damage::FlipMiddle => flip(&mut b, bytes.len() / 2),
            Damage::Halve => b.truncate(bytes.len() / 2),
        }
        b
    }
}

/// Every file below `dir`, its subdirectories' too.
fn files_below(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(files_below(&p));
        } else {
            out.push(p);
        }
    }
    out.sort();
    out
}

/// Every tool's question of the fixture (`diff` reads `patch`; `compare` and `history` the
/// tree's one commit).
fn every_tool(patch: &str) -> Vec<Vec<String>> {
    [
        "status",
        "def vfs_read",
        "def CONFIG_HIGHMEM",
        "refs vfs_read",
        "callers vfs_read",
        "callees vfs_read",
        "body vfs_read",
        "reach sys_read vfs_read",
        "symbols fs/read_write.c",
        "find vfs rea",
        "files ext2",
        "impact vfs_read",
        "compare vfs_read HEAD",
        "history vfs_read",
        "grep vfs_read",
        "docs memory",
        "search read a file",
        "device fsl,imx21-i2c",
        "device acme,*",
    ]
    .iter()
    .map(|q| q.split(' ').map(String::from).collect())
    .chain([vec!["diff".to_string(), patch.to_string()]])
    .collect()
}

/// A tree whose index has every part: built from another tree's index and fact store (its
/// segment, build-file, text and documentation parts, and the restat part of the files it
/// found under other times), with a git history indexed. Returns the tree and the store.
fn every_part(name: &str) -> (Tree, common::Outside) {
    let store = common::scratch(&format!("{name}-store"));
    let cache = store.0.to_str().unwrap().to_string();
    let a = fixture(&format!("{name}-a"));
    let (code, out) = common::knav_env(&a, &["index"], &[("KNAV_CACHE_DIR", &cache)]);
    assert_eq!(code, 0, "{out}");
    let b = fixture(&format!("{name}-b"));
    let (code, out) = common::knav_env(&b, &["index"], &[("KNAV_CACHE_DIR", &cache)]);
    assert!(code == 0 && out.contains("started from the index"), "{out}");
    for args in [
        &["init", "-q", "-b", "main"][..],
        &["add", "-A"],
        &["commit", "-q", "-m", "one"],
    ] {
        common::git::git(&b.root, args);
    }
    let (code, out) = common::knav_env(&b, &["index", "--history"], &[("KNAV_CACHE_DIR", "off")]);
    assert_eq!(code, 0, "{out}");
    (b, store)
}

#[test]
fn every_file_of_every_part_flipped_or_cut_is_never_an_abort() {
    let (t, store) = every_part("every-file");
    let index = t.root.join(".knav");
    let patch = t.root.with_extension("patch");
    std::fs::write(
        &patch,
        "--- a/fs/read_write.c\n+++ b/fs/read_write.c\n@@ -1,1 +1,2 @@\n+/* new */\n #include <linux/fs.h>\n",
    )
    .unwrap();
    let tools = every_tool(patch.to_str().unwrap());
    let mut files = Vec::new();
    for d in std::fs::read_dir(&index).unwrap().flatten() {
        let n = d.file_name().to_string_lossy().into_owned();
        if ["seg-", "kb-", "tx-", "kd-", "rs-", "hw-"]
            .iter()
            .any(|p| n.starts_with(p))
            || n == "history"
        {
            files.extend(files_below(&d.path()));
        }
    }
    for prefix in ["seg-", "kb-", "tx-", "kd-", "rs-", "hw-", "history"] {
        let p = index.join(prefix);
        let p = p.to_string_lossy();
        assert!(
            files.iter().any(|f| f.to_string_lossy().starts_with(&*p)),
            "no {prefix} files"
        );
    }
    // The first answers (compare's revision index is built once, here).
    for q in &tools {
        let q: Vec<&str> = q.iter().map(String::as_str).collect();
        let (code, out) = limited(&t, &q);
        assert_no_abort(code, &out, &format!("undamaged: {q:?}"));
    }
    for file in &files {
        let bytes = std::fs::read(file).unwrap();
        // The part's directory below the index directory, or the file: what an error names.
        let part = file
            .strip_prefix(&index)
            .unwrap()
            .components()
            .next()
            .unwrap();
        let part = part.as_os_str().to_string_lossy();
        let name = file.file_name().unwrap().to_string_lossy();
        for damage in Damage::ALL {
            std::fs::write(file, damage.apply(&bytes)).unwrap();
            for q in &tools {
                let q: Vec<&str> = q.iter().map(String::as_str).collect();
                let (code, out) = limited(&t, &q);
                let what = format!("{} {damage:?}: {q:?}", file.display());
                assert_no_abort(code, &out, &what);
                assert!(
                    !out.contains("damaged") || out.contains(&*part) || out.contains(&*name),
                    "{what}: the error names neither {part} nor {name}\n{out}"
                );
            }
        }
        std::fs::write(file, &bytes).unwrap();
    }
    // The fact store's packs and proofs: a build reads them, and builds all the same.
    let cache = store.0.to_str().unwrap();
    let stored = files_below(&store.0);
    assert!(stored
        .iter()
        .any(|f| f.extension().is_some_and(|e| e == "kpack")));
    assert!(stored
        .iter()
        .any(|f| f.to_string_lossy().contains("/proofs/")));
    let (_, want) = limited(&t, &["def", "vfs_read"]);
    for file in stored.iter().filter(|f| !f.ends_with("last-build.json")) {
        let bytes = std::fs::read(file).unwrap();
        for damage in Damage::ALL {
            std::fs::write(file, damage.apply(&bytes)).unwrap();
            let fresh = fixture("every-file-store");
            let (code, out) = common::knav_env(&fresh, &["index"], &[("KNAV_CACHE_DIR", cache)]);
            assert_eq!(code, 0, "{} {damage:?}: {out}", file.display());
            assert_eq!(limited(&fresh, &["def", "vfs_read"]), (0, want.clone()));
            let (code, out) = common::knav_env(&t, &["cache"], &[("KNAV_CACHE_DIR", cache)]);
            assert_no_abort(code, &out, &format!("{} {damage:?}: cache", file.display()));
            if file.exists() {
                std::fs::write(file, &bytes).unwrap();
            }
        }
    }
    let _ = std::fs::remove_file(&patch);
}
