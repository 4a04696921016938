//! search_symbols (`knav find`) and search_files (`knav files`): token matching, order, filters,
//! paging and a refreshed index, with exact answers on the fixture and on small trees.

mod common;
use common::{fixture, hits, json, knav, names, rows, tree, Tree};

fn paths(t: &Tree, args: &[&str]) -> Vec<String> {
    let (code, v) = json(t, args);
    assert_eq!(code, 0, "{v}");
    common::paths(&v)
}

#[test]
fn every_token_must_start_a_part_of_the_name() {
    let t = fixture("find-and");
    assert_eq!(
        hits(&t, &["find", "vfs", "read"]),
        [("vfs_read".to_string(), "fs/read_write.c:20".to_string())]
    );
    // Prefixes of parts, in any order, any case.
    assert_eq!(names(&t, &["find", "REA", "ker"]), ["kernel_read"]);
    assert_eq!(
        names(&t, &["find", "ext2", "fi", "rea"]),
        ["ext2_file_read"]
    );
    // A token inside a part matches nothing: `ead` starts no part.
    let (code, v) = json(&t, &["find", "ead"]);
    assert_eq!((code, v["total"].as_u64()), (0, Some(0)));
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .contains("no defined name matches 'ead'"),
        "{v}"
    );
    assert_eq!(v["next_tools"][0], "find_references");
}

#[test]
fn a_token_spanning_parts_must_appear_from_a_part_boundary() {
    let t = fixture("find-span");
    assert_eq!(names(&t, &["find", "ext2_file_r"]), ["ext2_file_read"]);
    assert_eq!(names(&t, &["find", "file_read"]), ["ext2_file_read"]);
    assert!(names(&t, &["find", "2_file"]).is_empty());
}

#[test]
fn the_exact_name_comes_first_then_the_definition_ranking() {
    let t = fixture("find-exact");
    let all = names(&t, &["find", "read"]);
    // `read` itself (a member of struct file_operations) first; then the functions the kernel
    // defines, shorter names first; the SYSCALL_DEFINE wrappers carry their family's rank.
    assert_eq!(
        all,
        [
            "read",
            "sys_read",
            "vfs_read",
            "ksys_read",
            "compat_read",
            "kernel_read",
            "__do_sys_read",
            "__se_sys_read",
            "__x64_sys_read",
            "ext2_file_read",
            "__ia32_sys_read",
            "__arm64_sys_read",
        ]
    );
    // Names, not definitions: `vfs_read` (a body and a prototype) counts once.
    let (_, v) = json(&t, &["find", "read"]);
    assert_eq!(v["total"], 12);
}

#[test]
fn kernel_code_ranks_before_tools_and_samples_and_arch_um() {
    let t = tree(
        "find-rank",
        &[
            (
                "tools/lib/slab.c",
                "void *kmalloc_track(int n) { return 0; }\n",
            ),
            (
                "samples/kmalloc_demo.c",
                "int kmalloc_demo(void) { return 0; }\n",
            ),
            (
                "arch/um/kernel/mem.c",
                "void *kmalloc_um(int n) { return 0; }\n",
            ),
            (
                "arch/x86/mm/init.c",
                "void *kmalloc_x86(int n) { return 0; }\n",
            ),
            ("mm/slab.h", "#define kmalloc_flags(f) (f)\n"),
            (
                "mm/slub.c",
                "void *kmalloc_node(int n, int node) { return 0; }\n",
            ),
        ],
    );
    assert_eq!(
        names(&t, &["find", "kmalloc"]),
        [
            "kmalloc_node",
            "kmalloc_x86",
            "kmalloc_flags",
            "kmalloc_um",
            "kmalloc_demo",
            "kmalloc_track"
        ]
    );
    assert_eq!(
        names(&t, &["find", "kmalloc", "--kind", "macro"]),
        ["kmalloc_flags"]
    );
    assert_eq!(
        names(&t, &["find", "kmalloc", "--path-prefix", "arch/"]),
        ["kmalloc_x86", "kmalloc_um"]
    );
}

#[test]
fn a_regex_is_matched_against_whole_defined_names() {
    let t = fixture("find-regex");
    assert_eq!(
        names(&t, &["find", "/.*_read/"]),
        [
            "sys_read",
            "vfs_read",
            "ksys_read",
            "compat_read",
            "kernel_read",
            "__do_sys_read",
            "__se_sys_read",
            "__x64_sys_read",
            "ext2_file_read",
            "__ia32_sys_read",
            "__arm64_sys_read",
        ]
    );
    assert_eq!(
        names(&t, &["find", "/(vfs|ksys)_rea./"]),
        ["vfs_read", "ksys_read"]
    );
    // A name that is only used, never defined, is not found.
    assert!(names(&t, &["find", "/count/"]).is_empty());
    let (code, out) = knav(&t, &["find", "/(/"]);
    assert_eq!(code, 1);
    assert!(
        out.starts_with("Error: bad regular expression /(/"),
        "{out}"
    );
}

#[test]
fn kinds_filter_and_unknown_kinds_are_refused() {
    let t = fixture("find-kind");
    assert_eq!(names(&t, &["find", "read", "--kind", "member"]), ["read"]);
    assert_eq!(
        names(&t, &["find", "file", "--kind", "struct"]),
        ["file", "file_operations"]
    );
    let (code, out) = knav(&t, &["find", "read", "--kind", "fn"]);
    assert_eq!(code, 2, "{out}");
}

#[test]
fn pages_carry_the_exact_total_and_the_next_offset() {
    let t = fixture("find-page");
    let (_, v) = json(&t, &["find", "read", "--limit", "5", "--offset", "5"]);
    assert_eq!(
        (v["total"].as_u64(), v["truncated"].as_bool()),
        (Some(12), Some(true))
    );
    let got: Vec<String> = rows(&v).into_iter().map(|(n, _)| n).collect();
    assert_eq!(
        got,
        [
            "kernel_read",
            "__do_sys_read",
            "__se_sys_read",
            "__x64_sys_read",
            "ext2_file_read"
        ]
    );
    let (_, text) = knav(&t, &["find", "read", "--limit", "5", "--offset", "5"]);
    assert!(
        text.contains("[6-10 of 12 · --offset 10 for more]"),
        "{text}"
    );
    assert!(
        text.starts_with("kernel_read  fs/read_write.c:29: ssize_t kernel_read("),
        "{text}"
    );
    assert!(
        text.ends_with(
            "next: knav body kernel_read, knav callers kernel_read, knav def kernel_read\n"
        ),
        "{text}"
    );
}

#[test]
fn a_refreshed_index_finds_new_names_and_forgets_removed_ones() {
    let t = fixture("find-delta");
    assert_eq!(names(&t, &["find", "rw", "verify"]), ["rw_verify_area"]);
    let path = t.root.join("fs/read_write.c");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        text.replace("rw_verify_area(", "rw_check_area(") + "int rw_verify(void) { return 0; }\n",
    )
    .unwrap();
    let (code, out) = knav(&t, &["index"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.starts_with("index incremental"), "{out}");
    assert_eq!(names(&t, &["find", "rw", "ch"]), ["rw_check_area"]);
    // The names of the re-indexed file are in both segments: each is listed once.
    let (_, v) = json(&t, &["find", "read"]);
    assert_eq!(v["total"], 12, "{v}");
    assert_eq!(
        hits(&t, &["find", "rw", "verify"]),
        [("rw_verify".to_string(), "fs/read_write.c:54".to_string())]
    );
    // A name whose body went keeps its prototype.
    assert_eq!(
        hits(&t, &["find", "kernel", "read"]),
        [("kernel_read".to_string(), "fs/read_write.c:29".to_string())]
    );
    std::fs::write(&path, text.replace("kernel_read(", "kernel_read_file(")).unwrap();
    knav(&t, &["index"]);
    assert_eq!(
        hits(&t, &["find", "kernel", "read"]),
        [
            (
                "kernel_read".to_string(),
                "include/linux/fs.h:20".to_string()
            ),
            (
                "kernel_read_file".to_string(),
                "fs/read_write.c:29".to_string()
            )
        ]
    );
}

#[test]
fn files_match_path_parts_with_the_exact_file_name_first() {
    let t = fixture("files");
    assert_eq!(paths(&t, &["files", "ext2", "fi"]), ["fs/ext2/file.c"]);
    assert_eq!(paths(&t, &["files", "read_wr"]), ["fs/read_write.c"]);
    assert_eq!(paths(&t, &["files", "write"]), ["fs/read_write.c"]);
    assert!(paths(&t, &["files", "rite"]).is_empty());
    // `highmem.h` is the exact name; mm/highmem.c shares only the stem.
    assert_eq!(
        paths(&t, &["files", "highmem.h"]),
        ["include/linux/highmem.h"]
    );
    // Both are exact by stem; the shallower first.
    assert_eq!(
        paths(&t, &["files", "highmem"]),
        ["mm/highmem.c", "include/linux/highmem.h"]
    );
    assert_eq!(
        paths(&t, &["files", "high", "--path-prefix", "include"]),
        ["include/linux/highmem.h"]
    );
    assert_eq!(paths(&t, &["files", "linux", "h"]).len(), 3);

    let (_, text) = knav(&t, &["files", "ext2"]);
    assert_eq!(
        text,
        "fs/ext2/file.c  (15 lines, 2 definitions)\nnext: knav symbols fs/ext2/file.c\n"
    );
    let (code, v) = json(&t, &["files", "nothing_here"]);
    assert_eq!((code, v["total"].as_u64()), (0, Some(0)));
    assert!(v["message"]
        .as_str()
        .unwrap()
        .starts_with("no indexed file"));
}

#[test]
fn a_file_named_by_one_of_the_tokens_comes_before_the_others() {
    let t = tree(
        "files-token",
        &[
            ("fs/ext4/inode-test.c", "int t;\n"),
            ("fs/ext4/inode.c", "int i;\n"),
            ("tools/fs/ext4/inode.c", "int j;\n"),
        ],
    );
    assert_eq!(
        paths(&t, &["files", "ext4", "inode"]),
        [
            "fs/ext4/inode.c",
            "tools/fs/ext4/inode.c",
            "fs/ext4/inode-test.c"
        ]
    );
}
