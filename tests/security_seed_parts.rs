//! Issue 45, the seed's text, build-file and documentation parts: a copy of an indexed tree
//! starts with those parts of the other index linked when the store's proofs of them hold
//! every file's digest, and builds a part whole (answering from its own bytes) when one of
//! its files was forged with the other's path, length and hash64.

mod common;
use common::scratch;

use std::os::unix::fs::MetadataExt;

use common::{tree, Tree};
use knav_index::store::Manifest;

/// `knav ARGS` in `t` with the fact store at `store`; its exit code and output.
fn knav(t: &Tree, args: &[&str], store: &str) -> (i32, String) {
    common::knav_env(t, args, &[("KNAV_CACHE_DIR", store)])
}

const K: u64 = 0x9E37_79B9_7F4A_7C15;
const LANES: [u64; 4] = [
    0,
    0x1319_8A2E_0370_7344,
    0xA409_3822_299F_31D0,
    0x082E_FA98_EC4E_6C89,
];

fn mix(h: u64, v: u64) -> u64 {
    (h ^ v).wrapping_mul(K).rotate_left(29)
}

fn word(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

/// `real` with its 8 bytes at `at` replaced by four letters or digits (of `prefix`'s case)
/// then `prefix`, and the 8 bytes at `fix` (`at` plus a multiple of 32: the same lane of
/// hash64) set to letters, digits or spaces so that the lane ends as it did: the same path,
/// length and hash64, other words. hash64 is invertible step by step; this is the forgery of
/// the finding. (The varied bytes are the word's low ones: a multiplication carries them to
/// every bit.)
fn forge(real: &[u8], at: usize, fix: usize, prefix: &[u8; 4]) -> Vec<u8> {
    assert!(
        at.is_multiple_of(8)
            && fix > at
            && (fix - at).is_multiple_of(32)
            && fix + 8 <= real.len() / 32 * 32
    );
    let lane = at % 32 / 8;
    let start = (0x243F_6A88_85A3_08D3 ^ (real.len() as u64).wrapping_mul(K)) ^ LANES[lane];
    let state = |b: &[u8]| {
        (lane * 8..fix)
            .step_by(32)
            .fold(start, |h, i| mix(h, word(b, i)))
    };
    let target = state(real) ^ word(real, fix);
    let digits: &[u8; 36] = if prefix[0].is_ascii_uppercase() {
        b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    } else {
        b"abcdefghijklmnopqrstuvwxyz0123456789"
    };
    let mut f = real.to_vec();
    for n in 0..36u32.pow(4) {
        for j in 0..4 {
            f[at + j] = digits[(n / 36u32.pow(j as u32) % 36) as usize];
        }
        f[at + 4..at + 8].copy_from_slice(prefix);
        let w = (state(&f) ^ target).to_le_bytes();
        if w.iter().all(|b| b.is_ascii_alphanumeric() || *b == b' ') {
            f[fix..fix + 8].copy_from_slice(&w);
            assert_eq!(knav_index::hash64(&f), knav_index::hash64(real));
            assert_eq!(f.len(), real.len());
            assert_ne!(f, real);
            return f;
        }
    }
    panic!("no forgery found");
}

/// A Kconfig entry whose symbol is the 8 bytes at 8, a comment 64 bytes on.
const KCONFIG: &[u8] = b"config  REALOPTN\n\tbool \"The real option\"\n# padding padding padding padding padding padding padding padding\n";
/// A documentation section whose body word `realdocs` is the 8 bytes at 32.
const DOC: &[u8] = b"Memory\n======\n\nThe section on:  realdocs is the word of this section and nothing else at all here\n";
/// A text file (neither C, build file nor documentation) whose word is the 8 bytes at 16.
const NOTES: &[u8] =
    b"notes of a tree realnote and more words after it to fill the blocks of hash64 up\n";

/// The files of both trees: C sources for the seed, then a Kconfig, a Makefile, a document
/// and a text file, `edit` applied to those last.
fn files(edit: &dyn Fn(&str, &[u8]) -> Vec<u8>) -> Vec<(&'static str, Vec<u8>)> {
    let mut v: Vec<(&str, Vec<u8>)> = vec![
        (
            "fs/read_write.c",
            b"int vfs_read(int fd)\n{\n\treturn fd + 1;\n}\n".to_vec(),
        ),
        ("mm/a.c", b"int a_one(void)\n{\n\treturn 1;\n}\n".to_vec()),
        ("mm/b.c", b"int b_two(void)\n{\n\treturn 2;\n}\n".to_vec()),
        (
            "mm/c.c",
            b"int c_three(void)\n{\n\treturn vfs_read(3);\n}\n".to_vec(),
        ),
        ("include/d.h", b"int vfs_read(int fd);\n".to_vec()),
        ("Makefile", b"obj-y += mm/\n".to_vec()),
        ("mm/Makefile", b"obj-$(CONFIG_REALOPTN) += a.o\n".to_vec()),
    ];
    for (p, b) in [
        ("Kconfig", KCONFIG),
        ("Documentation/mm.rst", DOC),
        ("tools/notes.txt", NOTES),
    ] {
        v.push((p, edit(p, b)));
    }
    v
}

/// The manifest of the index of `t`.
fn manifest(t: &Tree) -> Manifest {
    knav_index::store::read_manifest(&t.root.join(".knav"))
        .unwrap()
        .expect("an index")
}

/// The directories of the text, build-file and documentation parts of `m`.
fn part_dirs(m: &Manifest) -> [String; 3] {
    [
        m.text.as_ref().map(|t| t.dir.clone()),
        m.build_files.as_ref().map(|b| b.dir.clone()),
        m.docs.as_ref().map(|d| d.dir.clone()),
    ]
    .map(|d| d.expect("the part"))
}

/// The inode of each file of the part directory `dir` of the index of `t`, by name.
fn inodes(t: &Tree, dir: &str) -> Vec<(String, u64)> {
    let mut v: Vec<(String, u64)> = std::fs::read_dir(t.root.join(".knav").join(dir))
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let name = e.file_name().to_string_lossy().into_owned();
            (name, e.metadata().unwrap().ino())
        })
        .collect();
    v.sort();
    v
}

/// Indexes `other` (holding `other_files`) then a tree of `mine_files`, which starts from it;
/// returns both trees and which of the text, build-file and documentation parts `mine`
/// linked from `other`'s index (the same directory, hard-linked).
fn seed_from(
    name: &str,
    store: &common::Outside,
    other_files: &[(&str, Vec<u8>)],
    mine_files: &[(&str, Vec<u8>)],
) -> (Tree, Tree, [bool; 3]) {
    let other = tree(&format!("ssp-{name}-other"), other_files);
    let (code, out) = knav(&other, &["index"], store.path());
    assert_eq!(code, 0, "{out}");
    let mine = tree(&format!("ssp-{name}-mine"), mine_files);
    let (code, out) = knav(&mine, &["index"], store.path());
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("started from the index in"), "{out}");
    let (theirs, ours) = (part_dirs(&manifest(&other)), part_dirs(&manifest(&mine)));
    let linked = [0, 1, 2].map(|i| {
        let same = theirs[i] == ours[i];
        if same {
            assert_eq!(inodes(&other, &theirs[i]), inodes(&mine, &ours[i]));
        }
        same
    });
    (other, mine, linked)
}

fn same(_: &str, b: &[u8]) -> Vec<u8> {
    b.to_vec()
}

#[test]
fn a_true_copy_starts_with_the_text_build_file_and_docs_parts_of_the_other_index_linked() {
    let store = scratch("copy");
    let files = files(&same);
    let (_, mine, linked) = seed_from("copy", &store, &files, &files);
    assert_eq!(linked, [true, true, true]);
    // Each part's proof is in the store, under the part's directory.
    for dir in part_dirs(&manifest(&mine)) {
        assert!(store.0.join("proofs").join(&dir).is_file(), "{dir}");
    }
    let (code, out) = knav(&mine, &["grep", "--heading", "realnote"], store.path());
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("tools/notes.txt\n  1: notes of a tree realnote and more"),
        "{out}"
    );
    let (_, out) = knav(&mine, &["def", "CONFIG_REALOPTN"], store.path());
    assert!(out.contains("Kconfig:1"), "{out}");
    let (_, out) = knav(&mine, &["docs", "realdocs"], store.path());
    assert!(out.contains("Documentation/mm.rst"), "{out}");
}

#[test]
fn a_kconfig_forged_with_the_same_path_length_and_hash64_gets_its_parts_built_whole() {
    let store = scratch("kconfig");
    let forged = |p: &str, b: &[u8]| {
        if p == "Kconfig" {
            forge(b, 8, 72, b"EVIL")
        } else {
            b.to_vec()
        }
    };
    let bad = forge(KCONFIG, 8, 72, b"EVIL");
    let evil = String::from_utf8(bad[8..16].to_vec()).unwrap();
    let (_, mine, linked) = seed_from("kconfig", &store, &files(&forged), &files(&same));
    let (_, out) = knav(&mine, &["def", "CONFIG_REALOPTN"], store.path());
    assert!(out.contains("Kconfig:1"), "{out}");
    let (_, out) = knav(&mine, &["def", &format!("CONFIG_{evil}")], store.path());
    assert!(!out.contains("Kconfig"), "{out}");
    let (code, out) = knav(&mine, &["grep", "--heading", "REALOPTN"], store.path());
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("Kconfig\n  1: config  REALOPTN\n"), "{out}");
    let (code, out) = knav(&mine, &["grep", "--heading", &evil], store.path());
    assert_eq!(code, 1, "{out}");
    // Answered from its own bytes, by parts built again: the Kconfig is in the text and build-file parts; the documentation part is linked.
    assert_eq!(linked, [false, false, true]);
}

#[test]
fn a_document_forged_with_the_same_path_length_and_hash64_gets_its_parts_built_whole() {
    let store = scratch("doc");
    let forged = |p: &str, b: &[u8]| {
        if p == "Documentation/mm.rst" {
            forge(b, 32, 64, b"evil")
        } else {
            b.to_vec()
        }
    };
    let bad = forge(DOC, 32, 64, b"evil");
    let evil = String::from_utf8(bad[32..40].to_vec()).unwrap();
    let (_, mine, linked) = seed_from("doc", &store, &files(&forged), &files(&same));
    let (_, out) = knav(&mine, &["docs", "realdocs"], store.path());
    assert!(out.contains("Documentation/mm.rst"), "{out}");
    let (_, out) = knav(&mine, &["docs", &evil], store.path());
    assert!(!out.contains("Documentation/mm.rst"), "{out}");
    let (code, out) = knav(&mine, &["grep", "--heading", "realdocs"], store.path());
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("Documentation/mm.rst\n  4: The section on:  realdocs is"),
        "{out}"
    );
    assert_eq!(linked, [false, true, false]);
}

#[test]
fn a_text_file_forged_with_the_same_path_length_and_hash64_gets_the_text_part_built_whole() {
    let store = scratch("notes");
    let forged = |p: &str, b: &[u8]| {
        if p == "tools/notes.txt" {
            forge(b, 16, 48, b"evil")
        } else {
            b.to_vec()
        }
    };
    let bad = forge(NOTES, 16, 48, b"evil");
    let evil = String::from_utf8(bad[16..24].to_vec()).unwrap();
    let (_, mine, linked) = seed_from("notes", &store, &files(&forged), &files(&same));
    let (code, out) = knav(&mine, &["grep", "--heading", "realnote"], store.path());
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("tools/notes.txt\n  1: notes of a tree realnote and more"),
        "{out}"
    );
    let (code, out) = knav(&mine, &["grep", "--heading", &evil], store.path());
    assert_eq!(code, 1, "{out}");
    assert_eq!(linked, [false, true, true]);
}

#[test]
fn a_part_whose_proof_is_gone_is_built_whole_and_the_others_linked() {
    let store = scratch("gone");
    let files = files(&same);
    let other = tree("ssp-gone-other", &files);
    let (code, out) = knav(&other, &["index"], store.path());
    assert_eq!(code, 0, "{out}");
    let [_, _, docs] = part_dirs(&manifest(&other));
    std::fs::remove_file(store.0.join("proofs").join(&docs)).unwrap();
    let mine = tree("ssp-gone-mine", &files);
    let (code, out) = knav(&mine, &["index"], store.path());
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("started from the index in"), "{out}");
    let (theirs, ours) = (part_dirs(&manifest(&other)), part_dirs(&manifest(&mine)));
    assert_eq!(theirs[..2], ours[..2]);
    assert_ne!(theirs[2], ours[2]);
    let (_, out) = knav(&mine, &["docs", "realdocs"], store.path());
    assert!(out.contains("Documentation/mm.rst"), "{out}");
}
