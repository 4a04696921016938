//! End-to-end tests of the `knav` binary on the committed fixture tree `tests/fixtures/minikernel`.
//! Each test indexes its own copy of the fixture in a temporary directory.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

mod common;
use common::{age, fixture, json, knav, Tree};

/// `(mode, changed, added, deleted)` of an update_index answer.
fn update_counts(v: &Value) -> (String, u64, u64, u64) {
    let r = &v["results"];
    let n = |k: &str| r[k].as_u64().unwrap_or(u64::MAX);
    (
        r["mode"].as_str().unwrap_or("").to_string(),
        n("changed"),
        n("added"),
        n("deleted"),
    )
}

/// The (only) segment directory of a tree's index.
fn segment_dir(t: &Tree) -> PathBuf {
    std::fs::read_dir(t.root.join(".knav"))
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with("seg-"))
        .unwrap()
        .path()
}

/// One field of every result record.
fn field(v: &Value, key: &str) -> Vec<Value> {
    v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r[key].clone())
        .collect()
}

fn locs(v: &Value) -> Vec<String> {
    v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| format!("{}:{}", r["path"].as_str().unwrap(), r["line"]))
        .collect()
}

/// `LINE:ROLE` of each row of a refs answer grouped by line.
fn line_roles(v: &Value) -> Vec<String> {
    v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| format!("{}:{}", r["line"], r["role"].as_str().unwrap()))
        .collect()
}

#[test]
fn def_kmap_has_two_guard_variants() {
    let t = fixture("def-kmap");
    let (code, v) = json(&t, &["def", "kmap"]);
    assert_eq!(code, 0);
    assert_eq!(v["tool"], "find_definition");
    assert_eq!(
        locs(&v),
        ["include/linux/highmem.h:20", "include/linux/highmem.h:25"]
    );
    let r = &v["results"];
    assert_eq!(r[0]["guard"], serde_json::json!(["CONFIG_HIGHMEM"]));
    assert_eq!(r[1]["guard"], serde_json::json!(["!CONFIG_HIGHMEM"]));
    assert_eq!(r[0]["kind"], "function");
    assert_eq!(r[0]["col"], 21);
    assert_eq!(r[0]["typeref"], "void *");
    assert_eq!(r[0]["signature"], "(struct page * page)");
    assert_eq!(
        r[0]["snippet"],
        "static inline void *kmap(struct page *page)"
    );
    assert_eq!(v["definition_count"], 2);
    assert_eq!(v["guard_variants"], 2);
    assert_eq!(v["reference_count"], 2);
    assert_eq!(v["file_count"], 1);
    assert_eq!(
        v["top_files"],
        serde_json::json!([{"path": "mm/highmem.c", "count": 2}])
    );
    assert_eq!(v["exported"], Value::Null);
    assert_eq!(v["truncated"], false);
    for key in ["total", "offset", "next_tools", "warning", "root"] {
        assert!(v.get(key).is_some(), "envelope lacks {key}");
    }
    assert_eq!(v["index"]["files_scanned"], 14);
}

#[test]
fn def_text_format_matches_the_contract() {
    let t = fixture("def-text");
    let (code, out) = knav(&t, &["def", "kmap"]);
    assert_eq!(code, 0);
    assert_eq!(
        out,
        "kmap: 2 definitions under 2 #if variants · 2 refs in 1 files\n\
         include/linux/highmem.h:20: static inline void *kmap(struct page *page)  [function; #if CONFIG_HIGHMEM]\n\
         include/linux/highmem.h:25: static inline void *kmap(struct page *page)  [function; #if !CONFIG_HIGHMEM]\n\
         next: knav body kmap, knav callers kmap, knav refs kmap\n"
    );
}

#[test]
fn def_ranks_bodies_before_prototypes_and_reports_exports() {
    let t = fixture("def-export");
    let (_, v) = json(&t, &["def", "kernel_read"]);
    assert_eq!(locs(&v), ["fs/read_write.c:29", "include/linux/fs.h:20"]);
    assert_eq!(v["results"][1]["kind"], "prototype");
    assert_eq!(
        v["exported"],
        serde_json::json!({"macro": "EXPORT_SYMBOL", "path": "fs/read_write.c", "line": 33})
    );
    let (_, v) = json(&t, &["def", "compat_read"]);
    assert_eq!(v["exported"]["macro"], "EXPORT_SYMBOL_GPL");
    assert_eq!(
        v["results"][0]["guard"],
        serde_json::json!(["CONFIG_COMPAT"])
    );
    let (_, v) = json(&t, &["def", "vfs_read"]);
    assert_eq!(v["exported"], Value::Null);
}

#[test]
fn elif_chains_and_nested_guards_render_as_the_contract_says() {
    let t = fixture("elif");
    let (_, v) = json(&t, &["def", "ARCH_KMAP_SLOTS"]);
    assert_eq!(
        locs(&v),
        [
            "include/linux/highmem.h:32",
            "include/linux/highmem.h:35",
            "include/linux/highmem.h:37",
            "include/linux/highmem.h:40"
        ]
    );
    let g = field(&v, "guard");
    assert_eq!(g[0], serde_json::json!(["defined(CONFIG_X86)"]));
    assert_eq!(
        g[1],
        serde_json::json!([
            "!(defined(CONFIG_X86)) && (defined(CONFIG_ARM64))",
            "CONFIG_ARM64_64K_PAGES"
        ])
    );
    assert_eq!(
        g[2],
        serde_json::json!([
            "!(defined(CONFIG_X86)) && (defined(CONFIG_ARM64))",
            "!CONFIG_ARM64_64K_PAGES"
        ])
    );
    assert_eq!(
        g[3],
        serde_json::json!(["!(defined(CONFIG_X86)) && !(defined(CONFIG_ARM64))"])
    );
    assert_eq!(v["guard_variants"], 4);
    assert_eq!(v["results"][0]["kind"], "macro");
}

#[test]
fn refs_have_roles_and_skip_strings_and_comments() {
    let t = fixture("refs");
    let (code, v) = json(&t, &["refs", "vfs_read"]);
    assert_eq!(code, 0);
    let rows: Vec<(String, String, Option<String>)> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                format!("{}:{}:{}", r["path"].as_str().unwrap(), r["line"], r["col"]),
                r["role"].as_str().unwrap().to_string(),
                r["caller"].as_str().map(str::to_string),
            )
        })
        .collect();
    let expect = [
        ("fs/ext2/file.c:6:9", "call", Some("ext2_file_read")),
        ("fs/read_write.c:20:9", "def", Some("vfs_read")),
        ("fs/read_write.c:31:9", "call", Some("kernel_read")),
        ("fs/read_write.c:39:9", "call", Some("ksys_read")),
        ("include/linux/fs.h:19:16", "decl", None),
    ];
    let expect: Vec<_> = expect
        .iter()
        .map(|(a, b, c)| (a.to_string(), b.to_string(), c.map(str::to_string)))
        .collect();
    assert_eq!(
        rows, expect,
        "the comment (line 3) and the string (line 25) are not references"
    );
    assert_eq!(v["total"], 5);
    let (_, v) = json(&t, &["refs", "kernel_read"]);
    let roles = field(&v, "role");
    assert_eq!(roles, ["def", "export", "decl"]);
}

#[test]
fn refs_group_by_file_and_path_prefix() {
    let t = fixture("group");
    let (_, v) = json(&t, &["refs", "vfs_read", "--group-by", "file"]);
    assert_eq!(
        v["results"],
        serde_json::json!([
            {"path": "fs/ext2/file.c", "count": 1, "lines": [6]},
            {"path": "fs/read_write.c", "count": 3, "lines": [20, 31, 39]},
            {"path": "include/linux/fs.h", "count": 1, "lines": [19]}
        ])
    );
    let (_, v) = json(&t, &["refs", "vfs_read", "--path-prefix", "fs/ext2"]);
    assert_eq!(locs(&v), ["fs/ext2/file.c:6"]);
}

#[test]
fn pagination_footer_and_limits() {
    let t = fixture("page");
    let (_, out) = knav(&t, &["refs", "vfs_read", "--limit", "2"]);
    assert!(out.contains("[1-2 of 5 · --offset 2 for more]"), "{out}");
    let (_, v) = json(&t, &["refs", "vfs_read", "--limit", "2", "--offset", "4"]);
    assert_eq!(locs(&v), ["include/linux/fs.h:19"]);
    assert_eq!(
        (v["total"].as_u64(), v["truncated"].as_bool()),
        (Some(5), Some(false))
    );
    let (_, v) = json(&t, &["refs", "vfs_read", "--limit", "0"]);
    assert_eq!(v["limit"], 100);
    let (code, v) = json(&t, &["refs", "vfs_read", "--limit", "99999999"]);
    assert_eq!(code, 0);
    assert_eq!(v["limit"], 1000);
    assert!(v["warning"].as_str().unwrap().contains("clamped"), "{v}");
    let (code, _) = knav(&t, &["refs", "vfs_read", "--limit", "-3"]);
    assert_eq!(code, 2, "a negative limit is a usage error");
}

#[test]
fn callers_list_enclosing_functions_and_lines() {
    let t = fixture("callers");
    let (code, v) = json(&t, &["callers", "vfs_read"]);
    assert_eq!(code, 0);
    assert_eq!(
        v["results"],
        serde_json::json!([
            {"caller": "ext2_file_read", "path": "fs/ext2/file.c", "line": 6,
             "snippet": "return vfs_read(file, buf, count, pos);", "guard": []},
            {"caller": "kernel_read", "path": "fs/read_write.c", "line": 31,
             "snippet": "return vfs_read(file, buf, count, pos);", "guard": []},
            {"caller": "ksys_read", "path": "fs/read_write.c", "line": 39,
             "snippet": "return vfs_read(f, buf, count, &f->f_pos);", "guard": []}
        ])
    );
    let (_, out) = knav(&t, &["callers", "ksys_read"]);
    assert!(
        out.contains("compat_read  fs/read_write.c:50: return ksys_read(fd, buf, count);  [#if CONFIG_COMPAT]"),
        "{out}"
    );
    // The body of `SYSCALL_DEFINE3(read, …)` belongs to sys_read (it showed "(file scope)").
    assert!(out.contains("sys_read  fs/read_write.c:44:"), "{out}");
}

#[test]
fn callees_and_reachability_follow_the_call_chain() {
    let t = fixture("callees");
    let (_, v) = json(&t, &["callees", "vfs_read"]);
    assert_eq!(
        v["results"],
        serde_json::json!({"symbol": "vfs_read", "path": "fs/read_write.c", "line": 20, "callees": [
            {"symbol": "rw_verify_area", "line": 22, "defined_at": "fs/read_write.c:13"},
            {"symbol": "pr_warn", "line": 25, "defined_at": null}
        ]})
    );
    let (code, v) = json(&t, &["reach", "ksys_read", "check_count"]);
    assert_eq!(code, 0);
    assert_eq!(
        v["results"]["chain"],
        serde_json::json!(["ksys_read", "vfs_read", "rw_verify_area", "check_count"])
    );
    assert_eq!(v["results"]["reachable"], true);
    let (_, v) = json(&t, &["reach", "check_count", "ksys_read"]);
    assert_eq!(v["results"]["reachable"], false);
    assert!(v["message"].as_str().unwrap().contains("no call chain"));
    let (code, v) = json(
        &t,
        &["reach", "ksys_read", "check_count", "--max-depth", "2"],
    );
    assert_eq!(
        (code, v["results"]["reachable"].as_bool()),
        (0, Some(false))
    );
    let (code, _) = json(
        &t,
        &["reach", "ksys_read", "check_count", "--max-depth", "13"],
    );
    assert_eq!(code, 1);
}

#[test]
fn a_callee_named_like_another_files_struct_or_static_is_the_one_the_caller_sees() {
    // md-linear.c's `struct dev_info` was given as where a media driver's `dev_info(…)` is
    // defined, and crypto/jitterentropy.c's own `#define ARRAY_SIZE` as every file's; another
    // file's `static` helper is not the caller's either (and an 80-callee sample judged against
    // the source had the EFI stub's `memset` for ACPI and powerpc's `longjmp` for UML).
    let size = "#define ARRAY_SIZE(arr) (sizeof(arr) / sizeof((arr)[0]))\n";
    let t = common::tree(
        "callee-kinds",
        &[
            (
                "drivers/md/md-linear.c",
                "struct dev_info {\n\tint end;\n};\nstatic int setup(void)\n{\n\treturn 0;\n}\n#define report(x) (x)\n",
            ),
            (
                "include/linux/dev_printk.h",
                "#define dev_info(dev, fmt, ...) \\\n\t_dev_info(dev, fmt, ##__VA_ARGS__)\n",
            ),
            ("lib/report.h", "int report(int x);\n"),
            ("crypto/jitterentropy.c", size),
            ("include/linux/array_size.h", size),
            ("drivers/hid/bpf/progs/hid_bpf_helpers.h", size),
            (
                "drivers/hid/bpf/progs/prog.c",
                "int prog(void)\n{\n\treturn ARRAY_SIZE(x);\n}\n",
            ),
            ("drivers/media/a800.h", "#define deb_rc(x) (x)\n"),
            (
                "drivers/firmware/efi/libstub/intrinsics.c",
                "void *memset(void *s, int c, long n)\n{\n\treturn s;\n}\n",
            ),
            ("lib/string.c", "void *memset(void *s, int c, long n)\n{\n\treturn s;\n}\n"),
            (
                "drivers/acpi/exstorob.c",
                "void store(char *s)\n{\n\tmemset(s, 0, 1);\n}\n",
            ),
            (
                "include/linux/slab.h",
                "static inline void *kzalloc(long s)\n{\n\treturn 0;\n}\n",
            ),
            (
                "tools/include/linux/slab.h",
                "static inline void *kzalloc(long s)\n{\n\treturn 0;\n}\n",
            ),
            (
                "drivers/gpu/i915/selftests/sync.c",
                "int sync_test(void)\n{\n\treturn kzalloc(1) != 0;\n}\n",
            ),
            ("lib/radix-tree.c", "void radix_tree_init(void)\n{\n}\n"),
            (
                "init/main.c",
                "extern void radix_tree_init(void);\nvoid start_kernel(void)\n{\n\tradix_tree_init();\n}\n",
            ),
            (
                "fs/ext4/mballoc.c",
                "static void mb_mark_used(int x)\n{\n}\n#include \"mballoc-test.c\"\n",
            ),
            (
                "fs/ext4/mballoc-test.c",
                "static void test_used(void)\n{\n\tmb_mark_used(1);\n}\n",
            ),
            ("arch/powerpc/include/asm/setjmp.h", "extern void longjmp(long *b, long v);\n"),
            ("arch/um/include/shared/longjmp.h", "extern void longjmp(long *b, long v);\n"),
            (
                "arch/x86/um/bugs_32.c",
                "void handler(long *b)\n{\n\tlongjmp(b, 1);\n}\n",
            ),
            ("drivers/media/cinergyT2.h", "#define deb_rc(x) (x)\n"),
            (
                "drivers/media/cio2.c",
                "#include <linux/dev_printk.h>\n#include \"cinergyT2.h\"\nint setup(void);\nint cio2_start(void *dev)\n{\n\tdev_info(dev, \"start\");\n\tsetup();\n\tdeb_rc(ARRAY_SIZE(dev));\n\treturn report(1);\n}\n",
            ),
        ],
    );
    let (_, v) = json(&t, &["callees", "cio2_start"]);
    assert_eq!(
        v["results"]["callees"],
        serde_json::json!([
            {"symbol": "dev_info", "line": 6, "defined_at": "include/linux/dev_printk.h:1"},
            {"symbol": "setup", "line": 7, "defined_at": "drivers/media/cio2.c:3"},
            {"symbol": "deb_rc", "line": 8, "defined_at": "drivers/media/cinergyT2.h:1"},
            {"symbol": "ARRAY_SIZE", "line": 8, "defined_at": "include/linux/array_size.h:1"},
            {"symbol": "report", "line": 9, "defined_at": "lib/report.h:1"}
        ])
    );
    let (_, v) = json(&t, &["callees", "prog"]);
    assert_eq!(
        v["results"]["callees"],
        serde_json::json!([{"symbol": "ARRAY_SIZE", "line": 3,
                            "defined_at": "drivers/hid/bpf/progs/hid_bpf_helpers.h:1"}])
    );
    // The EFI stub's `memset` is its own, not the kernel's; User-mode Linux's `longjmp` is
    // arch/um's for arch/x86/um, not powerpc's.
    let (_, v) = json(&t, &["callees", "store"]);
    assert_eq!(v["results"]["callees"][0]["defined_at"], "lib/string.c:1");
    let (_, v) = json(&t, &["callees", "handler"]);
    assert_eq!(
        v["results"]["callees"][0]["defined_at"],
        "arch/um/include/shared/longjmp.h:1"
    );
    // A review's cases: an in-kernel selftest is kernel code, not a tools/ copy; a file's own
    // `extern` declaration is not where the function is; a KUnit test `#include`d by the file
    // it tests calls that file's `static` functions.
    for (caller, at) in [
        ("sync_test", "include/linux/slab.h:1"),
        ("start_kernel", "lib/radix-tree.c:1"),
        ("test_used", "fs/ext4/mballoc.c:1"),
    ] {
        let (_, v) = json(&t, &["callees", caller]);
        assert_eq!(v["results"]["callees"][0]["defined_at"], at, "{caller}");
    }
    // `knav def` lists the shared header's `#define` first, a `.c` file's own last.
    let (_, v) = json(&t, &["def", "ARRAY_SIZE"]);
    let paths: Vec<&str> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        [
            "include/linux/array_size.h",
            "drivers/hid/bpf/progs/hid_bpf_helpers.h",
            "crypto/jitterentropy.c"
        ]
    );
}

#[test]
fn body_returns_source_text() {
    let t = fixture("body");
    let (_, v) = json(&t, &["body", "rw_verify_area"]);
    let r = &v["results"][0];
    assert_eq!(
        (r["line"].as_u64(), r["end_line"].as_u64()),
        (Some(13), Some(18))
    );
    assert_eq!(
        r["body"],
        "static int rw_verify_area(struct file *file, loff_t *pos, size_t count)\n{\n\tif (!file)\n\t\treturn -9;\n\treturn check_count(count);\n}"
    );
    let (_, v) = json(&t, &["body", "kmap", "--max-definitions", "1"]);
    assert_eq!(v["results"].as_array().unwrap().len(), 1);
    assert_eq!(
        (v["total"].as_u64(), v["truncated"].as_bool()),
        (Some(2), Some(true))
    );
}

#[test]
fn symbols_of_a_file_and_struct_members() {
    let t = fixture("symbols");
    let (_, v) = json(&t, &["symbols", "include/linux/fs.h"]);
    let names: Vec<String> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            format!(
                "{}:{}:{}",
                r["symbol"].as_str().unwrap(),
                r["line"],
                r["kind"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        names,
        [
            "_LINUX_FS_H:3:macro",
            "ssize_t:5:typedef",
            "size_t:6:typedef",
            "loff_t:7:typedef",
            "file:9:struct",
            "f_pos:10:member",
            "f_flags:11:member",
            "file_operations:14:struct",
            "read:15:member",
            "write:16:member",
            "vfs_read:19:prototype",
            "kernel_read:20:prototype",
            "ksys_read:21:prototype",
            "MAX_RW_COUNT:23:macro",
        ]
    );
    assert_eq!(v["results"][5]["scope"], "file");
    let (code, v) = json(&t, &["symbols", "no/such.c"]);
    assert_eq!(code, 1);
    assert!(v["error"].as_str().unwrap().contains("no file no/such.c"));
}

#[test]
fn missing_symbol_is_an_error_with_near_misses() {
    let t = fixture("missing");
    // Too far for fuzzy resolution, near enough to suggest.
    let (code, v) = json(&t, &["def", "vfs_readahead_all"]);
    assert_eq!(code, 1);
    assert!(v.get("results").is_none());
    assert!(v["error"].as_str().unwrap().contains("vfs_readahead_all"));
    assert_eq!(v["near_misses"][0], "~vfs_read");
    let (code, out) = knav(&t, &["def", "vfs_readahead_all"]);
    assert_eq!(code, 1);
    assert!(
        out.starts_with("Error: no symbol named 'vfs_readahead_all'"),
        "{out}"
    );
    assert!(out.contains("did you mean: ~vfs_read"), "{out}");
    let (code, _) = knav(&t, &["def", "not an identifier"]);
    assert_eq!(code, 1);
}

#[test]
fn ops_initializer_and_macro_pseudo_definitions() {
    let t = fixture("ops");
    let (_, v) = json(&t, &["refs", "ext2_file_read", "--group-by", "line"]);
    let roles = line_roles(&v);
    // `.read = ext2_file_read` stores it in file_operations.read.
    assert_eq!(roles, ["4:def", "10:register"]);
    // ctags's pseudo-definition `SYSCALL_DEFINE3` is dropped.
    let (code, v) = json(&t, &["def", "SYSCALL_DEFINE3"]);
    assert_eq!(code, 0);
    assert_eq!(v["definition_count"], 0);
    assert!(v["message"].as_str().unwrap().contains("no definition"));
}

#[test]
fn walk_counts_unindexed_and_skips_symlinks_and_binaries() {
    let t = fixture("walk");
    let (code, v) = json(&t, &["index"]);
    assert_eq!(code, 0);
    let r = &v["results"];
    assert_eq!(r["mode"], "full");
    // 13 .c/.h files and one .S.
    assert_eq!(r["files_scanned"], 14);
    // A full build counts the definitions each macro family made.
    let m = &r["macro_definitions"];
    assert_eq!(m["SYSCALL_DEFINE"], 6, "{m}");
    assert_eq!(m["PAGEFLAG"], 6, "{m}");
    assert_eq!(m["TESTSCFLAG"], 4, "{m}");
    assert_eq!(m["DEFINE_MUTEX"], 1, "{m}");
    assert_eq!(m["module_init"], 1, "{m}");
    assert_eq!(m["SYM_CODE_START"], 1, "{m}");
    // 30 non-C files (8 Makefiles and Kconfig files, .config, MAINTAINERS, the device trees
    // and binding schema, the text files grep searches and the hidden and ignored ones it does
    // not) and the binary blob.h.
    assert_eq!(r["files_unindexed"], 33);
    // The symlink include/linux/highmem-alias.h is not indexed twice.
    let (_, v) = json(&t, &["def", "kmap"]);
    assert_eq!(v["definition_count"], 2);
    let (code, v) = json(&t, &["symbols", "drivers/misc/blob.h"]);
    assert_eq!(code, 0);
    assert!(v["warning"].as_str().unwrap().contains("binary"), "{v}");
}

#[test]
fn snippets_deep_in_a_long_file_are_right_and_a_file_changed_since_indexing_is_read_whole() {
    let t = fixture("longfile");
    let mut text = String::new();
    for n in 1..300 {
        text.push_str(&format!("int filler_{n}(void) {{ return {n}; }}\n"));
    }
    text.push_str("int deep_fn(void)\n{\n\treturn filler_7();\n}\n");
    std::fs::write(t.root.join("mm/long.c"), &text).unwrap();
    json(&t, &["index"]);
    let (_, v) = json(&t, &["def", "deep_fn"]);
    assert_eq!(locs(&v), ["mm/long.c:300"]);
    assert_eq!(field(&v, "snippet"), ["int deep_fn(void)"]);
    let (_, v) = json(&t, &["refs", "filler_7"]);
    assert_eq!(locs(&v), ["mm/long.c:7", "mm/long.c:302"]);
    assert_eq!(
        field(&v, "snippet"),
        ["int filler_7(void) { return 7; }", "return filler_7();"]
    );
    assert_eq!(field(&v, "col"), [5, 9]);
    // Lines added at the top without re-indexing, answered with --no-refresh: the index's
    // line marks no longer fit the file, so the snippet comes from the file as it is now
    // (what line 300 holds now), and the answer says the file changed.
    std::fs::write(t.root.join("mm/long.c"), format!("/* new */\n{text}")).unwrap();
    let (_, v) = json(&t, &["def", "deep_fn", "--no-refresh"]);
    assert_eq!(locs(&v), ["mm/long.c:300"]);
    assert_eq!(
        field(&v, "snippet"),
        ["int filler_299(void) { return 299; }"]
    );
    assert!(
        v["warning"].as_str().unwrap().ends_with(": mm/long.c"),
        "{v}"
    );
    // Without it, the index is refreshed first.
    let (_, v) = json(&t, &["def", "deep_fn"]);
    assert_eq!(locs(&v), ["mm/long.c:301"]);
    assert_eq!(field(&v, "snippet"), ["int deep_fn(void)"]);
}

/// Writes `mm/hot_N.c` with `calls` calls of `hot_fn`, one a line.
fn write_hot_callers(t: &Tree, n: usize, calls: usize) {
    let mut text = format!("void user_{n}(void)\n{{\n");
    for _ in 0..calls {
        text.push_str("\thot_fn();\n");
    }
    text.push_str("}\n");
    std::fs::write(t.root.join(format!("mm/hot_{n}.c")), text).unwrap();
}

/// `(definitions, reference_count, file_count, top files, exported)` of `def hot_fn`.
fn hot_summary(t: &Tree) -> (Vec<String>, u64, u64, Vec<String>, String) {
    let (_, v) = json(t, &["def", "hot_fn"]);
    let top = v["top_files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| format!("{} {}", f["path"].as_str().unwrap(), f["count"]))
        .collect();
    (
        locs(&v),
        v["reference_count"].as_u64().unwrap(),
        v["file_count"].as_u64().unwrap(),
        top,
        format!("{}", v["exported"]),
    )
}

#[test]
fn a_hot_names_stored_counts_match_its_postings_and_leave_out_replaced_files() {
    let t = fixture("hotname");
    std::fs::write(
        t.root.join("mm/hot.c"),
        "void hot_fn(void)\n{\n}\nEXPORT_SYMBOL(hot_fn);\n",
    )
    .unwrap();
    std::fs::write(
        t.root.join("include/linux/hot.h"),
        "void hot_fn(void);\n#ifdef CONFIG_HOT_STUB\n#define hot_fn() do { } while (0)\n#endif\n",
    )
    .unwrap();
    write_hot_callers(&t, 1, 1200);
    write_hot_callers(&t, 2, 700);
    write_hot_callers(&t, 3, 300);
    // 70 files with one call each: more files than the stored top list holds.
    for n in 10..80 {
        write_hot_callers(&t, n, 1);
    }
    json(&t, &["index"]);
    // 2,274 occurrences: over the threshold, so the segment stores the name's counts.
    let snap = knav::index::store::Snapshot::open(&t.root, &t.root.join(".knav"))
        .unwrap()
        .unwrap();
    let entry = snap.segments[0].lookup(b"hot_fn").unwrap();
    assert_eq!(entry.occurrences, 2274);
    let stats = entry.stats.expect("stored counts for a hot name");
    assert_eq!((stats.refs, stats.files, stats.top.len()), (2271, 74, 64));
    assert_eq!(
        stats.per_file().count(),
        75,
        "the header holds no reference"
    );
    drop(snap);
    let defs = vec![
        "mm/hot.c:1".to_string(),
        "include/linux/hot.h:3".into(),
        "include/linux/hot.h:1".into(),
    ];
    let exported = r#"{"line":4,"macro":"EXPORT_SYMBOL","path":"mm/hot.c"}"#.to_string();
    let top = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    // The definition line, the prototype and the #define are not references; the export is.
    assert_eq!(
        hot_summary(&t),
        (
            defs.clone(),
            2271,
            74,
            top(&[
                "mm/hot_1.c 1200",
                "mm/hot_2.c 700",
                "mm/hot_3.c 300",
                "mm/hot.c 1",
                "mm/hot_10.c 1"
            ]),
            exported.clone(),
        )
    );
    // hot_2.c, one of the top files, loses 600 calls: its new copy lives in a later segment,
    // and the first segment's counts of the old copy are left out.
    write_hot_callers(&t, 2, 100);
    let (_, v) = json(&t, &["index"]);
    assert_eq!(update_counts(&v), ("incremental".into(), 1, 0, 0));
    let after = (
        defs.clone(),
        1671,
        74,
        top(&[
            "mm/hot_1.c 1200",
            "mm/hot_3.c 300",
            "mm/hot_2.c 100",
            "mm/hot.c 1",
            "mm/hot_10.c 1",
        ]),
        exported.clone(),
    );
    assert_eq!(hot_summary(&t), after);
    json(&t, &["index", "--full"]);
    assert_eq!(hot_summary(&t), after, "a full rebuild agrees");
    // hot_79.c, outside the stored top list, gains two calls: the list still holds, the totals
    // leave out its old copy.
    write_hot_callers(&t, 79, 3);
    let (_, v) = json(&t, &["index"]);
    assert_eq!(update_counts(&v), ("incremental".into(), 1, 0, 0));
    let last = (
        defs,
        1673,
        74,
        top(&[
            "mm/hot_1.c 1200",
            "mm/hot_3.c 300",
            "mm/hot_2.c 100",
            "mm/hot_79.c 3",
            "mm/hot.c 1",
        ]),
        exported,
    );
    assert_eq!(hot_summary(&t), last);
    json(&t, &["index", "--full"]);
    assert_eq!(hot_summary(&t), last, "a full rebuild agrees");
}

#[test]
fn incremental_refresh_redoes_changed_files_and_drops_deleted_ones() {
    let t = fixture("refresh");
    let (_, v) = json(&t, &["index"]);
    assert_eq!(v["results"]["mode"], "full");
    let (_, v) = json(&t, &["index"]);
    assert_eq!(v["results"]["mode"], "unchanged");
    // Append a function, delete a file, add one.
    let rw = t.root.join("fs/read_write.c");
    let mut text = std::fs::read_to_string(&rw).unwrap();
    text.push_str("\nint added_fn(void)\n{\n\treturn check_count(1);\n}\n");
    std::fs::write(&rw, text).unwrap();
    std::fs::remove_file(t.root.join("fs/ext2/file.c")).unwrap();
    std::fs::write(
        t.root.join("mm/new.c"),
        "int new_fn(void)\n{\n\treturn kmap(0) != 0;\n}\n",
    )
    .unwrap();
    let (_, v) = json(&t, &["index"]);
    let r = &v["results"];
    assert_eq!(update_counts(&v), ("incremental".into(), 1, 1, 1));
    assert_eq!(r["files_scanned"], 14);
    let (_, v) = json(&t, &["def", "added_fn"]);
    assert_eq!(locs(&v), ["fs/read_write.c:55"]);
    let (_, v) = json(&t, &["callers", "vfs_read"]);
    let callers = field(&v, "caller");
    assert_eq!(
        callers,
        ["kernel_read", "ksys_read"],
        "the deleted ext2 caller is gone"
    );
    let (_, v) = json(&t, &["callers", "kmap"]);
    let callers = field(&v, "caller");
    assert_eq!(callers, ["copy_page_data", "copy_page_data", "new_fn"]);
    // Touching a file without changing it re-indexes nothing.
    let f = std::fs::File::options().append(true).open(&rw).unwrap();
    f.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(5))
        .unwrap();
    drop(f);
    let (_, v) = json(&t, &["index"]);
    assert_eq!(v["results"]["mode"], "unchanged");
    // A full rebuild agrees with the incremental result.
    let (_, v) = json(&t, &["index", "--full"]);
    assert_eq!(v["results"]["mode"], "full");
    let (_, v) = json(&t, &["def", "added_fn"]);
    assert_eq!(locs(&v), ["fs/read_write.c:55"]);
}

#[test]
fn unbalanced_directives_are_reported_not_fatal() {
    let t = fixture("unbalanced");
    let (code, v) = json(&t, &["symbols", "kernel/config.c"]);
    assert_eq!(code, 0);
    assert!(
        v["warning"]
            .as_str()
            .unwrap()
            .contains("7: #endif without #if"),
        "{v}"
    );
    assert_eq!(
        v["results"][0]["guard"],
        serde_json::json!(["ARCH_KMAP_SLOTS > 8"])
    );
    assert_eq!(v["results"][1]["guard"], serde_json::json!([]));
}

#[test]
fn bad_roots_are_clear_errors() {
    let t = fixture("badroot");
    let out = Command::new(env!("CARGO_BIN_EXE_knav"))
        .args(["def", "kmap", "--root", "/nonexistent/knav-root"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(
        s.contains("Error: root /nonexistent/knav-root cannot be read"),
        "{s}"
    );
    let file_root = t.root.join("Makefile");
    let out = Command::new(env!("CARGO_BIN_EXE_knav"))
        .args(["def", "kmap", "--root"])
        .arg(&file_root)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("is not a directory"));
    let out = Command::new(env!("CARGO_BIN_EXE_knav"))
        .args(["nonsense"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn index_dir_override_and_small_memory_budget_give_the_same_answers() {
    let t = fixture("spill");
    let dir = t.root.join("elsewhere-index");
    let out = Command::new(env!("CARGO_BIN_EXE_knav"))
        .args(["refs", "vfs_read", "--format", "json", "--root"])
        .arg(&t.root)
        .arg("--index-dir")
        .arg(&dir)
        // A zero budget spills a run after every file: the merge path on a small tree.
        .env("KNAV_MEM_BUDGET_MB", "0")
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["total"], 5);
    assert!(dir.join("CURRENT").is_file());
    assert!(!t.root.join(".knav").exists());
    let (_, v2) = json(&t, &["refs", "vfs_read"]);
    assert_eq!(locs(&v), locs(&v2));
}

#[test]
fn a_missing_ctags_is_a_clear_error_naming_the_install_command() {
    let t = fixture("noctags");
    let out = Command::new(env!("CARGO_BIN_EXE_knav"))
        .args(["index", "--root"])
        .arg(&t.root)
        .env("KNAV_CTAGS", "/nonexistent/ctags")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains("cannot run ctags (/nonexistent/ctags)"), "{s}");
    assert!(s.contains("apt-get install universal-ctags"), "{s}");
    assert!(
        !t.root.join(".knav/CURRENT").exists(),
        "no index is published"
    );
}

#[test]
fn a_closed_stdout_pipe_does_not_panic() {
    use std::process::Stdio;
    let t = fixture("pipe");
    let _ = json(&t, &["index"]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_knav"))
        .args(["refs", "vfs_read", "--format", "json", "--root"])
        .arg(&t.root)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn a_latin1_file_is_indexed_and_shown_lossily() {
    let t = fixture("latin1");
    let (code, v) = json(&t, &["def", "latin1_probe"]);
    assert_eq!(code, 0);
    assert_eq!(locs(&v), ["drivers/misc/latin1.c:5"]);
    assert_eq!(v["results"][0]["signature"], "(int x)");
    let (_, v) = json(&t, &["refs", "who"]);
    assert_eq!(
        v["results"][0]["snippet"],
        "static const char *who = \"Ren\u{fffd}\";"
    );
}

#[test]
fn a_path_that_escapes_the_root_is_refused() {
    let t = fixture("escape");
    let (code, v) = json(&t, &["symbols", "../../etc/passwd"]);
    assert_eq!(code, 1);
    assert!(
        v["error"].as_str().unwrap().contains("outside the root"),
        "{v}"
    );
}

#[test]
fn a_truncated_index_is_a_clear_error_and_the_next_index_rebuilds_it() {
    let t = fixture("truncated");
    let _ = json(&t, &["index"]);
    let seg = segment_dir(&t);
    let names = seg.join("names-0.dat");
    let len = std::fs::metadata(&names).unwrap().len();
    std::fs::File::options()
        .write(true)
        .open(&names)
        .unwrap()
        .set_len(len / 2)
        .unwrap();
    let (code, v) = json(&t, &["def", "kmap"]);
    assert_eq!(code, 1);
    let err = v["error"].as_str().unwrap();
    assert!(
        err.contains("truncated") && err.contains("knav index --full"),
        "{err}"
    );
    let (code, v) = json(&t, &["index"]);
    assert_eq!(code, 0);
    assert_eq!(v["results"]["mode"], "full");
    let (code, v) = json(&t, &["def", "kmap"]);
    assert_eq!((code, v["definition_count"].as_u64()), (0, Some(2)));
}

#[test]
fn concurrent_index_runs_serialize_and_leave_one_good_index() {
    let t = fixture("concurrent");
    let spawn = || {
        Command::new(env!("CARGO_BIN_EXE_knav"))
            .args(["index", "--full", "--root"])
            .arg(&t.root)
            .output()
    };
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(spawn);
        let b = s.spawn(spawn);
        (a.join().unwrap().unwrap(), b.join().unwrap().unwrap())
    });
    assert_eq!((a.status.code(), b.status.code()), (Some(0), Some(0)));
    let segs = std::fs::read_dir(t.root.join(".knav"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("seg-"))
        .count();
    assert!(segs <= 2, "old segments are collected: {segs}");
    let (code, v) = json(&t, &["callers", "vfs_read"]);
    assert_eq!((code, v["total"].as_u64()), (0, Some(3)));
}

#[test]
fn verify_catches_a_flipped_byte_that_keeps_the_length() {
    let t = fixture("verify");
    let _ = json(&t, &["index"]);
    let (code, v) = json(&t, &["index", "--verify"]);
    assert_eq!((code, v["results"]["mode"].as_str()), (0, Some("verified")));
    let seg = segment_dir(&t);
    let defs = seg.join("defs.dat");
    let mut bytes = std::fs::read(&defs).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x55;
    std::fs::write(&defs, bytes).unwrap();
    let (code, v) = json(&t, &["index", "--verify"]);
    assert_eq!(code, 1);
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .contains("defs.dat is damaged (checksum mismatch)"),
        "{v}"
    );
}

#[test]
fn in_place_edits_after_a_refresh_answered_from_the_walk_cache_are_seen() {
    let t = fixture("walkcache-stats");
    age(&t.root);
    json(&t, &["index"]);
    age(&t.root);
    json(&t, &["index"]);
    let (_, v) = json(&t, &["index"]);
    assert_eq!(v["results"]["mode"], "unchanged");
    assert_eq!(v["results"]["dirs_read"], 0);
    // Same size, new content and mtime, directory untouched.
    let rw = t.root.join("fs/read_write.c");
    let text = std::fs::read_to_string(&rw).unwrap();
    assert!(text.contains("vfs_read"));
    std::fs::write(&rw, text.replacen("vfs_read", "vfs_reed", 1)).unwrap();
    let (_, v) = json(&t, &["index"]);
    assert_eq!(update_counts(&v), ("incremental".into(), 1, 0, 0));
    // (The edit is in a comment: the name is answered by its near match, exit 1.)
    let (code, v) = json(&t, &["def", "vfs_reed"]);
    assert_eq!(
        (code, &v["near_match"]),
        (1, &serde_json::json!(true)),
        "{v}"
    );
    // Nothing more: answered from the cache again.
    let (_, v) = json(&t, &["index"]);
    assert_eq!(v["results"]["mode"], "unchanged");
    // A Makefile edited in place.
    std::fs::write(
        t.root.join("drivers/misc/Makefile"),
        "obj-$(CONFIG_MISC_DRIVER) += blob.o latin1.o\n",
    )
    .unwrap();
    let (_, v) = json(&t, &["index"]);
    assert!(v["results"]["build_files"].is_string(), "{v}");
    let (_, v) = json(&t, &["index"]);
    assert_eq!(v["results"]["mode"], "unchanged");
    // A touch without a change: unchanged, and then answered from the cache.
    let f = std::fs::File::open(&rw).unwrap();
    f.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(600))
        .unwrap();
    let (_, v) = json(&t, &["index"]);
    assert_eq!(v["results"]["mode"], "unchanged");
    let (_, v) = json(&t, &["index"]);
    assert_eq!(v["results"]["mode"], "unchanged");
}

#[test]
fn the_walk_cache_skips_unchanged_directories_and_still_sees_every_change() {
    let t = fixture("walkcache");
    age(&t.root);
    let (_, v) = json(&t, &["index"]);
    assert_eq!(v["results"]["mode"], "full");
    age(&t.root);
    let (_, v) = json(&t, &["index"]);
    assert_eq!(v["results"]["mode"], "unchanged");
    let (_, v) = json(&t, &["index"]);
    assert_eq!(
        (
            v["results"]["mode"].as_str(),
            v["results"]["dirs_read"].as_u64()
        ),
        (Some("unchanged"), Some(0)),
        "every directory came from the cache"
    );
    // A content edit in a cached directory (its mtime does not move).
    let rw = t.root.join("fs/read_write.c");
    let mut text = std::fs::read_to_string(&rw).unwrap();
    text.push_str("int cached_dir_edit;\n");
    std::fs::write(&rw, text).unwrap();
    // A new file, a new subdirectory with a file, and a deleted file.
    std::fs::write(
        t.root.join("mm/fresh.c"),
        "int fresh_fn(void)\n{\n\treturn 0;\n}\n",
    )
    .unwrap();
    std::fs::create_dir(t.root.join("mm/sub")).unwrap();
    std::fs::write(
        t.root.join("mm/sub/deep.c"),
        "int deep_fn(void)\n{\n\treturn 1;\n}\n",
    )
    .unwrap();
    std::fs::remove_file(t.root.join("fs/ext2/file.c")).unwrap();
    let (_, v) = json(&t, &["index"]);
    assert_eq!(update_counts(&v), ("incremental".into(), 1, 2, 1));
    for (sym, at) in [
        ("cached_dir_edit", "fs/read_write.c:54"),
        ("fresh_fn", "mm/fresh.c:1"),
        ("deep_fn", "mm/sub/deep.c:1"),
    ] {
        let (_, v) = json(&t, &["def", sym]);
        assert_eq!(locs(&v), [at], "{sym}");
    }
    let (code, _) = json(&t, &["def", "ext2_file_read"]);
    assert_eq!(code, 1, "the deleted file's function is gone");
}

#[test]
fn a_file_that_hangs_ctags_times_out_and_is_reported_unindexed() {
    let t = fixture("hang");
    std::fs::write(t.root.join("fs/hang.c"), "int hang_here;\n").unwrap();
    // A stand-in for ctags that hangs on one file, in batch and in interactive mode.
    let fake = t.root.join("fake-ctags");
    std::fs::write(
        &fake,
        r#"#!/bin/sh
case "$*" in
  *--version*) echo "Universal Ctags 6.0.0, Copyright (C) 2015 Universal Ctags Team"; exit 0;;
  *--list-features*) printf 'json\ninteractive\n'; exit 0;;
  *--_interactive*)
    while read line; do
      case "$line" in *hang*) exec sleep 100;; esac
      f=$(echo "$line" | sed 's/.*"filename": *"\([^"]*\)".*/\1/')
      size=$(echo "$line" | sed -n 's/.*"size": *\([0-9]*\).*/\1/p')
      [ -n "$size" ] && head -c "$size" >/dev/null
      echo "{\"_type\": \"tag\", \"name\": \"fake_def\", \"path\": \"$f\", \"line\": 1, \"kind\": \"variable\", \"typeref\": \"typename:int\"}"
      echo '{"_type": "completed", "command": "generate-tags"}'
    done;;
  *)
    while read f; do
      case "$f" in *hang*) exec sleep 100;; esac
      printf 'fake_def\t%s\t1;"\tvariable\tline:1\ttyperef:typename:int\n' "$f"
    done;;
esac
"#,
    )
    .unwrap();
    let made = Command::new("chmod").arg("+x").arg(&fake).status().unwrap();
    assert!(made.success());
    let started = std::time::Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_knav"))
        .args(["index", "--format", "json", "--root"])
        .arg(&t.root)
        .env("KNAV_CTAGS", &fake)
        .env("KNAV_CTAGS_TIMEOUT", "1")
        .output()
        .unwrap();
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "the build did not hang"
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let why: Vec<&str> = v["results"]["unindexed_sources"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w.as_str())
        .filter(|w| !w.starts_with("drivers/misc/blob.h"))
        .collect();
    assert_eq!(why, ["fs/hang.c: ctags timed out after 1 s"]);
    // The other files of the timed-out chunk were retried one by one and have definitions.
    let (_, v) = json(&t, &["def", "fake_def"]);
    assert!(v["definition_count"].as_u64().unwrap() >= 6, "{v}");
    // The hung file's references are still indexed.
    let (_, v) = json(&t, &["refs", "hang_here"]);
    assert_eq!(locs(&v), ["fs/hang.c:1"]);
}

/// Makes a directory immutable (even for root) until dropped.
struct Immutable(PathBuf);

impl Drop for Immutable {
    fn drop(&mut self) {
        let _ = Command::new("chattr").arg("-i").arg(&self.0).status();
    }
}

#[test]
#[ignore = "needs `chattr +i` (root, e2fsprogs, a filesystem with the immutable flag): .ci/run runs it as root with --ignored"]
fn a_root_that_cannot_be_written_indexes_into_the_cache_directory() {
    let t = fixture("readonly");
    let cache = t.root.with_extension("cache");
    let _ = std::fs::remove_dir_all(&cache);
    let locked = Command::new("chattr").arg("+i").arg(&t.root).status();
    assert!(
        matches!(locked, Ok(s) if s.success()),
        "`chattr +i {}` failed ({locked:?}): run this test as root, with e2fsprogs installed \
         (apt-get install e2fsprogs), on a filesystem with the immutable flag",
        t.root.display()
    );
    let _guard = Immutable(t.root.clone());
    let out = Command::new(env!("CARGO_BIN_EXE_knav"))
        .args(["def", "kmap", "--format", "json", "--root"])
        .arg(&t.root)
        .env_remove("KNAV_INDEX_DIR")
        .env("XDG_CACHE_HOME", &cache)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["definition_count"], 2);
    assert!(!t.root.join(".knav").exists());
    let dirs: Vec<_> = std::fs::read_dir(cache.join("knav"))
        .unwrap()
        .flatten()
        .filter(|d| d.file_name() != "facts")
        .collect();
    assert_eq!(dirs.len(), 1);
    let name = dirs[0].file_name().to_string_lossy().into_owned();
    assert!(name.starts_with("knav-test-readonly-"), "{name}");
    assert!(dirs[0].path().join("CURRENT").is_file());
    let _ = std::fs::remove_dir_all(&cache);
}

#[test]
fn knav_toml_ignore_patterns_leave_paths_out_and_a_change_rebuilds() {
    let t = fixture("ignore");
    let (code, _) = json(&t, &["def", "ext2_file_read"]);
    assert_eq!(code, 0);
    std::fs::write(
        t.root.join(".knav.toml"),
        "[index]\nignore = [\"fs/ext2/\", \"latin1.c\"]\n",
    )
    .unwrap();
    // New patterns mean other options: the refresh is a full rebuild, not a delta.
    let (code, v) = json(&t, &["index"]);
    assert_eq!(code, 0);
    assert_eq!(v["results"]["mode"], "full");
    let (code, v) = json(&t, &["def", "ext2_file_read"]);
    assert_eq!(code, 1, "{v}");
    let (code, _) = json(&t, &["def", "latin1_probe"]);
    assert_eq!(code, 1);
    // A bad settings file is an error naming the file and line, and nothing is rebuilt.
    std::fs::write(t.root.join(".knav.toml"), "[index]\nignored = []\n").unwrap();
    let (code, out) = knav(&t, &["index"]);
    assert_eq!(code, 1);
    assert!(
        out.contains(".knav.toml: line 2:") && out.contains("ignored"),
        "{out}"
    );
    std::fs::remove_file(t.root.join(".knav.toml")).unwrap();
    let (_, v) = json(&t, &["index"]);
    assert_eq!(v["results"]["mode"], "full");
    let (code, v) = json(&t, &["def", "ext2_file_read"]);
    assert_eq!(code, 0);
    assert_eq!(locs(&v), ["fs/ext2/file.c:4"]);
}

#[test]
fn near_misses_include_macros_and_long_names_one_edit_away() {
    let t = fixture("missing-macro");
    // A `#define` is a definition too: it was left out of near-misses.
    let (code, v) = json(&t, &["def", "MAX_RW_COUNTER_LIMIT"]);
    assert_eq!(code, 1);
    assert_eq!(v["near_misses"][0], "~MAX_RW_COUNT", "{v}");
    let (_, v) = json(&t, &["def", "page_address_of_it"]);
    assert_eq!(v["near_misses"][0], "~page_address", "{v}");
}

#[test]
fn fuzzy_resolution_says_it_was_not_an_exact_match() {
    let t = fixture("fuzzy");
    // Two edits (a transposition), a macro one edit away, a long name one edit away, a
    // case-insensitive match, a syscall wrapper prefix.
    for (asked, found, line) in [
        ("vfs_raed", "vfs_read", "fs/read_write.c:20"),
        ("MAX_RW_COUN", "MAX_RW_COUNT", "include/linux/fs.h:23"),
        ("rw_verify_areaa", "rw_verify_area", "fs/read_write.c:13"),
        ("KSYS_READ", "ksys_read", "fs/read_write.c:35"),
        ("__riscv_sys_read", "sys_read", "fs/read_write.c:42"),
    ] {
        let (code, v) = json(&t, &["def", asked]);
        // A near match exits 1 (a script must not take it for the name asked); a syscall
        // wrapper's prefix is the same name, spelled another way.
        let guess = !asked.starts_with("__riscv");
        assert_eq!(code, i32::from(guess), "{asked}: {v}");
        assert_eq!(locs(&v)[0], line, "{asked}");
        assert_eq!(
            v["results"][0]["resolved_via"],
            format!("fuzzy:{found}"),
            "{asked}"
        );
        let w = v["warning"].as_str().unwrap();
        assert!(
            w.contains("a near match") == guess && w.contains(found),
            "{w}"
        );
    }
    // The text form says so too.
    let (_, out) = knav(&t, &["def", "vfs_raed"]);
    assert!(out.contains("(resolved via fuzzy:vfs_read)"), "{out}");
    assert!(out.contains("a near match, not the name asked"), "{out}");
    // Several equally close names are listed, not guessed.
    let (code, v) = json(&t, &["def", "dev_idx"]);
    assert_eq!(code, 1, "{v}");
    assert!(
        v["error"].as_str().unwrap().contains("equally close"),
        "{v}"
    );
    assert!(v["near_misses"].as_array().unwrap().len() >= 2, "{v}");
    // A member asked as struct.member.
    let (code, v) = json(&t, &["def", "file_operations.read"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["results"][0]["kind"], "member");
    assert_eq!(v["results"][0]["scope"], "file_operations");
    assert_eq!(locs(&v), ["include/linux/fs.h:15"]);
    let (code, _) = json(&t, &["def", "file_operations.no_such_member"]);
    assert_eq!(code, 1);
    // get_symbol_body resolves the same way.
    let (code, v) = json(&t, &["body", "vfs_raed", "--max-definitions", "1"]);
    assert_eq!(code, 1);
    assert_eq!(v["results"][0]["resolved_via"], "fuzzy:vfs_read");
}

/// `(path:line, kind, resolved_via)` of the first definition of `name`.
fn first_def(t: &Tree, name: &str) -> (String, String, String) {
    let (code, v) = json(t, &["def", name]);
    assert_eq!(code, 0, "{name}: {v}");
    let r = &v["results"][0];
    (
        format!("{}:{}", r["path"].as_str().unwrap(), r["line"]),
        r["kind"].as_str().unwrap_or("").to_string(),
        r["resolved_via"].as_str().unwrap_or("").to_string(),
    )
}

#[test]
fn names_made_by_kernel_macros_are_definitions_with_their_family() {
    let t = fixture("families");
    let f = "kernel/families.c";
    let cases: &[(&str, String, &str, &str)] = &[
        (
            "sys_read",
            "fs/read_write.c:42".into(),
            "function",
            "SYSCALL_DEFINE",
        ),
        (
            "__x64_sys_read",
            "fs/read_write.c:42".into(),
            "function",
            "SYSCALL_DEFINE",
        ),
        (
            "__do_sys_read",
            "fs/read_write.c:42".into(),
            "function",
            "SYSCALL_DEFINE",
        ),
        (
            "compat_sys_settimeofday",
            format!("{f}:20"),
            "function",
            "COMPAT_SYSCALL_DEFINE",
        ),
        ("bpf_map_lookup", format!("{f}:24"), "function", "BPF_CALL"),
        ("cgroup_mutex", format!("{f}:5"), "variable", "DEFINE_MUTEX"),
        (
            "tasklist_lock",
            format!("{f}:6"),
            "variable",
            "DEFINE_SPINLOCK",
        ),
        (
            "raw_lock",
            format!("{f}:7"),
            "variable",
            "DEFINE_RAW_SPINLOCK",
        ),
        ("pool_rwlock", format!("{f}:8"), "variable", "DEFINE_RWLOCK"),
        (
            "console_sem",
            format!("{f}:9"),
            "variable",
            "DEFINE_SEMAPHORE",
        ),
        (
            "sched_key",
            format!("{f}:10"),
            "variable",
            "DEFINE_STATIC_KEY",
        ),
        ("dev_ida", format!("{f}:11"), "variable", "DEFINE_IDA"),
        ("dev_idr", format!("{f}:12"), "variable", "DEFINE_IDR"),
        ("all_devices", format!("{f}:13"), "variable", "LIST_HEAD"),
        ("cpu_bits", format!("{f}:14"), "variable", "DECLARE_BITMAP"),
        (
            "log_wait",
            format!("{f}:15"),
            "variable",
            "DECLARE_WAIT_QUEUE_HEAD",
        ),
        (
            "watchdog_timer",
            format!("{f}:16"),
            "variable",
            "DEFINE_TIMER",
        ),
        ("runqueues", format!("{f}:17"), "variable", "DEFINE_PER_CPU"),
        // The DEFINE ranks before the DECLARE (an extern declaration) of the same name.
        ("irq_count", format!("{f}:18"), "variable", "DEFINE_PER_CPU"),
        ("PageDirty", format!("{f}:28"), "function", "PAGEFLAG"),
        ("SetPageDirty", format!("{f}:28"), "function", "PAGEFLAG"),
        (
            "folio_clear_dirty",
            format!("{f}:28"),
            "function",
            "PAGEFLAG",
        ),
        (
            "TestClearPageDirty",
            format!("{f}:28"),
            "function",
            "TESTSCFLAG",
        ),
        (
            "dev_attr_serial",
            format!("{f}:29"),
            "variable",
            "DEVICE_ATTR",
        ),
        (
            "driver_attr_bind_mode",
            format!("{f}:30"),
            "variable",
            "DRIVER_ATTR",
        ),
        ("bus_attr_rescan", format!("{f}:31"), "variable", "BUS_ATTR"),
        (
            "trace_sched_switch",
            "include/trace/events/sched.h:5".into(),
            "function",
            "TRACE_EVENT",
        ),
        (
            "register_trace_sched_switch",
            "include/trace/events/sched.h:5".into(),
            "function",
            "TRACE_EVENT",
        ),
        (
            "trace_sched_switch_enabled",
            "include/trace/events/sched.h:5".into(),
            "function",
            "TRACE_EVENT",
        ),
        (
            "trace_sched_waking",
            "include/trace/events/sched.h:30".into(),
            "function",
            "DEFINE_EVENT",
        ),
        (
            "unregister_trace_sched_waking",
            "include/trace/events/sched.h:30".into(),
            "function",
            "DEFINE_EVENT",
        ),
        (
            "entry_SYSCALL_64",
            "arch/x86/entry/entry_64.S:4".into(),
            "function",
            "SYM_CODE_START",
        ),
        (
            "__memcpy_knav",
            "arch/x86/entry/entry_64.S:9".into(),
            "function",
            "SYM_FUNC_START",
        ),
        (
            "old_style_entry",
            "arch/x86/entry/entry_64.S:14".into(),
            "function",
            "ENTRY",
        ),
    ];
    for (name, loc, kind, family) in cases {
        let got = first_def(&t, name);
        assert_eq!(
            got,
            (loc.clone(), kind.to_string(), format!("macro:{family}")),
            "{name}"
        );
    }
    // DECLARE_PER_CPU is an extern declaration, listed after the definition.
    let (_, v) = json(&t, &["def", "irq_count"]);
    assert_eq!(v["results"][1]["kind"], "externvar");
    assert_eq!(v["results"][1]["line"], 19);
    // A macro-made variable inside a function is a local of that function.
    let (_, v) = json(&t, &["def", "wait"]);
    assert_eq!(v["results"][0]["kind"], "local");
    assert_eq!(v["results"][0]["scope"], "wait_for_it");
    assert_eq!(v["results"][0]["line"], 35);
    // module_init and the initcalls mark entry points; they are not definitions.
    let (_, v) = json(&t, &["def", "families_init"]);
    assert_eq!(locs(&v), [format!("{f}:40")]);
    assert_eq!(
        v["entry_point"],
        serde_json::json!({"macro": "module_init", "path": f, "line": 44})
    );
    // The module_init line mentions the function; it does not define it.
    let (_, v) = json(&t, &["refs", "families_init"]);
    assert_eq!(field(&v, "role"), [Value::from("def"), Value::from("ref")]);
    let (_, out) = knav(&t, &["def", "wait_for_it"]);
    assert!(
        out.contains(" · entry point: late_initcall (kernel/families.c:45)"),
        "{out}"
    );
    // A directive's body makes nothing: `#define SYSCALL_DEFINE…` lines name no syscall.
    let (code, _) = json(&t, &["def", "sys_name"]);
    assert_eq!(code, 1);
    // The asm file's references are indexed too.
    let (_, v) = json(&t, &["refs", "do_syscall_64"]);
    assert_eq!(locs(&v), ["arch/x86/entry/entry_64.S:6"]);
}

#[test]
fn every_export_variant_fills_the_exported_field() {
    let t = fixture("exports");
    for (name, macro_name, line) in [
        ("exported_plain", "EXPORT_SYMBOL", 48),
        ("exported_gpl", "EXPORT_SYMBOL_GPL", 50),
        ("exported_ns", "EXPORT_SYMBOL_NS", 52),
        ("exported_ns_gpl", "EXPORT_SYMBOL_NS_GPL", 54),
        ("kernel_read", "EXPORT_SYMBOL", 33),
    ] {
        let (_, v) = json(&t, &["def", name]);
        assert_eq!(v["exported"]["macro"], macro_name, "{name}");
        assert_eq!(v["exported"]["line"], line, "{name}");
        let (_, r) = json(&t, &["refs", name]);
        let roles = field(&r, "role");
        assert!(roles.contains(&Value::from("export")), "{name}: {roles:?}");
    }
    let (_, v) = json(&t, &["def", "vfs_read"]);
    assert_eq!(v["exported"], Value::Null);
    let (_, out) = knav(&t, &["def", "exported_ns_gpl"]);
    assert!(
        out.contains(" · exported: EXPORT_SYMBOL_NS_GPL (kernel/families.c:54)"),
        "{out}"
    );
}

#[test]
fn an_outline_pages_from_the_end_with_line_ranges_and_a_directory_lists_its_files() {
    let t = fixture("outline-end");
    let rows = |v: &Value| -> Vec<String> {
        v["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                format!(
                    "{}:{}-{}",
                    r["symbol"].as_str().unwrap(),
                    r["line"],
                    r["end_line"]
                )
            })
            .collect()
    };
    let (_, v) = json(
        &t,
        &[
            "symbols",
            "fs/read_write.c",
            "--from",
            "end",
            "--limit",
            "3",
        ],
    );
    assert_eq!(
        rows(&v),
        ["compat_read:48-51", "sys_read:42-45", "ksys_read:35-40"]
    );
    assert_eq!(
        (v["total"].as_u64(), v["truncated"].as_bool()),
        (Some(7), Some(true))
    );
    let (_, v) = json(
        &t,
        &[
            "symbols",
            "fs/read_write.c",
            "--from",
            "end",
            "--limit",
            "3",
            "--offset",
            "6",
        ],
    );
    assert_eq!(rows(&v), ["check_count:8-11"]);
    // A multi-line #define ends where its continuation does; a struct at its closing brace.
    let (_, v) = json(
        &t,
        &[
            "symbols",
            "include/linux/fs.h",
            "--from",
            "end",
            "--limit",
            "1",
        ],
    );
    assert_eq!(rows(&v), ["MAX_RW_COUNT:23-23"]);
    let (_, v) = json(&t, &["symbols", "include/linux/fs.h", "--limit", "5"]);
    assert_eq!(rows(&v)[4], "file:9-12");
    let (_, text) = knav(
        &t,
        &[
            "symbols",
            "fs/read_write.c",
            "--from",
            "end",
            "--limit",
            "1",
        ],
    );
    assert!(
        text.starts_with("fs/read_write.c:48-51: ssize_t compat_read("),
        "{text}"
    );
    let (code, v) = json(&t, &["symbols", "fs/"]);
    assert_eq!(code, 0);
    let files: Vec<String> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            format!(
                "{} {} {}",
                f["path"].as_str().unwrap(),
                f["lines"],
                f["definitions"]
            )
        })
        .collect();
    assert_eq!(
        files,
        [
            "fs/ext2/file.c 15 2",
            "fs/read_write.c 53 12",
            "fs/streams/core.c 39 7",
            "fs/streams/impl.c 72 14",
            "fs/streams/stream.h 26 9"
        ]
    );
    let (_, text) = knav(&t, &["symbols", "fs"]);
    assert!(
        text.starts_with("fs/ext2/file.c  (15 lines, 2 definitions)\n"),
        "{text}"
    );
}

#[test]
fn status_reports_the_index_and_a_build_holding_its_lock_without_building() {
    let t = fixture("status");
    let (code, v) = json(&t, &["status"]);
    assert_eq!(code, 0);
    assert_eq!(v["results"]["indexed"], false);
    assert!(!t.root.join(".knav").exists(), "status built nothing");
    knav(&t, &["index"]);
    let (_, v) = json(&t, &["status"]);
    let s = &v["results"];
    assert_eq!(
        (s["indexed"].as_bool(), s["generation"].as_u64()),
        (Some(true), Some(1))
    );
    assert_eq!(
        (s["files_scanned"].as_u64(), s["files_unindexed"].as_u64()),
        (Some(14), Some(33))
    );
    assert_eq!(
        s["unindexed"],
        serde_json::json!({"not_c": 32, "no_definitions": 0, "binary": 1, "too_big": 0, "unreadable": 0})
    );
    assert!(s["size_bytes"].as_u64().unwrap() > 10_000, "{s}");
    assert_eq!(s["build"], Value::Null);
    // A build holds the lock with its pid in it.
    let lock = std::fs::File::options()
        .write(true)
        .open(t.root.join(".knav/lock"))
        .unwrap();
    lock.lock().unwrap();
    std::fs::write(t.root.join(".knav/lock"), "4242").unwrap();
    let (_, v) = json(&t, &["status"]);
    assert_eq!(v["results"]["build"]["pid"], 4242);
    let (_, text) = knav(&t, &["status"]);
    assert!(
        text.contains("a build is running (held by pid 4242)"),
        "{text}"
    );
    drop(lock);
}

#[test]
fn a_file_lists_one_row_per_macro_invocation() {
    let t = fixture("symbols-macros");
    let (_, v) = json(&t, &["symbols", "fs/read_write.c"]);
    let at_42: Vec<_> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["line"] == 42)
        .map(|r| (r["symbol"].clone(), r["resolved_via"].clone()))
        .collect();
    assert_eq!(
        at_42,
        [(Value::from("sys_read"), Value::from("macro:SYSCALL_DEFINE"))]
    );
}

#[test]
fn a_function_ranks_before_a_macro_override_and_a_real_export_before_a_tracepoint() {
    let t = fixture("rank-macro");
    // fs/ext2/file.c sorts before kernel/families.c, but its `#define` is only an override.
    let (_, v) = json(&t, &["def", "wait_for_it"]);
    assert_eq!(locs(&v), ["kernel/families.c:33", "fs/ext2/file.c:15"]);
    // EXPORT_TRACEPOINT_SYMBOL exports the tracepoint; the function's export comes after it.
    let (_, v) = json(&t, &["def", "exported_traced"]);
    assert_eq!(v["exported"]["macro"], "EXPORT_SYMBOL_GPL");
    assert_eq!(v["exported"]["line"], 57);
}

#[test]
fn active_config_applies_kbuild_makefiles_and_kconfig_defines_config_symbols() {
    let t = fixture("kbuild");
    let config = t.root.join(".config").display().to_string();
    // drivers/misc/ is built only under CONFIG_MISC_DRIVER, which the .config leaves unset.
    let (_, v) = json(&t, &["def", "latin1_probe", "--active-config", &config]);
    assert_eq!(v["definition_count"], 0, "{v}");
    assert_eq!(
        v["hidden"],
        serde_json::json!([{"path": "drivers/misc/latin1.c", "line": 5,
            "reason": "Makefile:3 obj-$(CONFIG_MISC_DRIVER) += drivers/misc/: CONFIG_MISC_DRIVER is not set"}])
    );
    let (_, v) = json(
        &t,
        &[
            "def",
            "latin1_probe",
            "--active-config",
            "CONFIG_X86=y,CONFIG_MISC_DRIVER=y",
        ],
    );
    assert_eq!(locs(&v), ["drivers/misc/latin1.c:5"]);
    // Built directory, but its Makefile names only blob.o: latin1.c may be #included
    // somewhere, so it is not decided.
    assert_eq!(v["results"][0]["active"], Value::Null);
    // fs/ext2/file.c is part of the composite ext2.o, built as a module (CONFIG_EXT2_FS=m).
    let (_, v) = json(&t, &["def", "ext2_file_read", "--active-config", &config]);
    assert_eq!(locs(&v), ["fs/ext2/file.c:4"]);
    assert_eq!(v["results"][0]["active"], true);
    // A list that does not name CONFIG_EXT2_FS cannot decide it.
    let (_, v) = json(
        &t,
        &["def", "ext2_file_read", "--active-config", "CONFIG_X86=y"],
    );
    assert_eq!(v["results"][0]["active"], Value::Null);
    let (_, v) = json(
        &t,
        &[
            "def",
            "ext2_file_read",
            "--active-config",
            "CONFIG_EXT2_FS=n",
        ],
    );
    assert_eq!(
        v["hidden"][0]["reason"],
        "fs/Makefile:2 obj-$(CONFIG_EXT2_FS) += ext2/: CONFIG_EXT2_FS is not set"
    );
    // Kconfig entries define CONFIG_ symbols.
    let (_, v) = json(&t, &["def", "CONFIG_HIGHMEM"]);
    assert_eq!(locs(&v), ["Kconfig:1"]);
    let r = &v["results"][0];
    assert_eq!(
        (
            r["kind"].as_str(),
            r["resolved_via"].as_str(),
            r["signature"].as_str(),
            r["col"].as_u64()
        ),
        (
            Some("config"),
            Some("kconfig"),
            Some("bool \"High memory support\""),
            Some(8)
        )
    );
    assert_eq!(
        r["snippet"],
        "config HIGHMEM: bool \"High memory support\"; depends on X86_32"
    );
    assert_eq!(v["reference_count"], 3, "three #ifdef lines");
    // The Kconfig name without its prefix finds the same entry.
    let (_, v) = json(&t, &["def", "MISC_DRIVER"]);
    assert_eq!(locs(&v), ["Kconfig:8"]);
    assert_eq!(v["symbol"], "CONFIG_MISC_DRIVER");
    assert!(v["warning"]
        .as_str()
        .unwrap()
        .contains("Kconfig symbol CONFIG_MISC_DRIVER"));
    let (_, out) = knav(&t, &["def", "CONFIG_EXT2_FS", "--active-config", &config]);
    assert!(
        out.contains("warning: active config: CONFIG_EXT2_FS=m"),
        "{out}"
    );
    // References of a CONFIG_ symbol: its Kconfig entry, Makefile lines and C.
    let (_, v) = json(&t, &["refs", "CONFIG_EXT2_FS"]);
    assert_eq!(
        locs(&v),
        ["Kconfig:5", "fs/Makefile:2", "fs/ext2/Makefile:1"]
    );
    assert_eq!(field(&v, "role"), ["def", "makefile", "makefile"]);
    let (_, v) = json(&t, &["refs", "CONFIG_HIGHMEM"]);
    assert_eq!(
        locs(&v),
        [
            "Kconfig:1",
            "fs/streams/impl.c:63",
            "include/linux/highmem.h:17",
            "mm/highmem.c:4"
        ]
    );
    // The index report says what the build files gave.
    let (_, out) = knav(&t, &["index", "--full"]);
    assert!(
        out.contains("8 build files: 7 Makefiles followed, 14 objects and directories with a condition, 3 Kconfig entries"),
        "{out}"
    );
}

#[test]
fn a_kconfig_entry_is_the_body_of_its_config_symbol() {
    let t = fixture("kconfig-body");
    let (_, v) = json(&t, &["body", "CONFIG_EXT2_FS"]);
    assert_eq!(locs(&v), ["Kconfig:5"]);
    assert_eq!(v["results"][0]["end_line"], 6);
    assert_eq!(
        v["results"][0]["body"],
        "config EXT2_FS\n\ttristate \"Second extended fs support\""
    );
}

#[test]
fn a_makefile_edit_rebuilds_only_the_build_file_part() {
    let t = fixture("kbuild-edit");
    let list = "CONFIG_X86=y,CONFIG_MISC_DRIVER=y";
    let (_, v) = json(&t, &["def", "latin1_probe", "--active-config", list]);
    assert_eq!(v["results"][0]["active"], Value::Null);
    std::fs::write(
        t.root.join("drivers/misc/Makefile"),
        "obj-$(CONFIG_MISC_DRIVER) += blob.o latin1.o\n",
    )
    .unwrap();
    let (_, v) = json(&t, &["index"]);
    let r = &v["results"];
    assert_eq!(
        (r["mode"].as_str(), r["changed"].as_u64()),
        (Some("incremental"), Some(0))
    );
    assert!(
        r["build_files"]
            .as_str()
            .unwrap()
            .starts_with("8 build files"),
        "{r}"
    );
    let (_, v) = json(&t, &["def", "latin1_probe", "--active-config", list]);
    assert_eq!(v["results"][0]["active"], true);
    // Touched but not changed: nothing to rebuild.
    let f = std::fs::File::open(t.root.join("drivers/misc/Makefile")).unwrap();
    f.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(5))
        .unwrap();
    let (_, v) = json(&t, &["index"]);
    assert_eq!(v["results"]["mode"], "unchanged", "{v}");
}

#[test]
fn an_unreadable_build_file_part_is_reported_and_rebuilt_alone() {
    let t = fixture("kbuild-corrupt");
    let (_, v) = json(&t, &["index"]);
    assert_eq!(v["results"]["mode"], "full");
    let kb = std::fs::read_dir(t.root.join(".knav"))
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with("kb-"))
        .expect("a build-file part");
    std::fs::write(kb.path().join("data.bin"), b"garbage").unwrap();
    // --no-refresh: a query's scan of the tree would rebuild the part before answering.
    let (_, v) = json(&t, &["def", "CONFIG_HIGHMEM", "--no-refresh"]);
    assert!(
        v["warning"]
            .as_str()
            .unwrap()
            .contains("Kbuild and Kconfig part cannot be read"),
        "{v}"
    );
    let (_, v) = json(&t, &["index"]);
    let r = &v["results"];
    assert_eq!(
        (
            r["mode"].as_str(),
            r["changed"].as_u64(),
            r["added"].as_u64()
        ),
        (Some("incremental"), Some(0), Some(0)),
        "the segments stay: {v}"
    );
    assert!(r["build_files"].is_string(), "{v}");
    assert!(r["index_bytes"].as_u64().unwrap() > 0, "{v}");
    let (_, v) = json(&t, &["def", "CONFIG_HIGHMEM"]);
    assert_eq!(locs(&v), ["Kconfig:1"], "{v}");
}

#[test]
fn active_config_hides_what_the_config_does_not_build_and_says_why() {
    let t = fixture("active-config");
    let config = t.root.join(".config").display().to_string();
    // The fixture's .config leaves CONFIG_HIGHMEM unset: the !CONFIG_HIGHMEM kmap is built.
    let (code, v) = json(&t, &["def", "kmap", "--active-config", &config]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(locs(&v), ["include/linux/highmem.h:25"]);
    assert_eq!(v["results"][0]["active"], true);
    assert_eq!(v["definition_count"], 1);
    assert_eq!(
        v["hidden"],
        serde_json::json!([{"path": "include/linux/highmem.h", "line": 20,
                            "reason": "#if CONFIG_HIGHMEM: CONFIG_HIGHMEM is not set"}])
    );
    let (_, out) = knav(&t, &["def", "kmap", "--active-config", &config]);
    assert!(
        out.contains("hidden by the active config: 1 (include/linux/highmem.h:20 — #if CONFIG_HIGHMEM: CONFIG_HIGHMEM is not set)"),
        "{out}"
    );
    // A macro list decides only what it names: the CONFIG_COMPAT call stays, marked null.
    let (_, v) = json(
        &t,
        &["callers", "ksys_read", "--active-config", "CONFIG_X86=y"],
    );
    assert_eq!(field(&v, "line"), [Value::from(44), Value::from(50)]);
    assert_eq!(field(&v, "active"), [Value::from(true), Value::Null]);
    // The macro-list form; a call under an unset symbol is hidden.
    let (_, v) = json(&t, &["callers", "ksys_read", "--active-config", &config]);
    assert_eq!(v["hidden"][0]["line"], 50, "{v}");
    assert_eq!(
        v["hidden"][0]["reason"],
        "#if CONFIG_COMPAT: CONFIG_COMPAT is not set"
    );
    // References too.
    let (_, v) = json(&t, &["refs", "kmap", "--active-config", &config]);
    assert_eq!(
        locs(&v),
        [
            "include/linux/highmem.h:25",
            "mm/highmem.c:14",
            "mm/highmem.c:15"
        ]
    );
    assert_eq!(v["hidden"][0]["line"], 20);
    // Only the configured architecture's arch/ tree is built.
    let (_, v) = json(&t, &["def", "entry_SYSCALL_64", "--active-config", &config]);
    assert_eq!(locs(&v), ["arch/x86/entry/entry_64.S:4"]);
    let (_, v) = json(
        &t,
        &[
            "def",
            "entry_SYSCALL_64",
            "--active-config",
            "CONFIG_ARM64=y",
        ],
    );
    assert_eq!(v["definition_count"], 0, "{v}");
    assert_eq!(
        v["hidden"][0]["reason"],
        "arch/x86 is not built: the config's architecture is arm64"
    );
    // Without a config, no `active` key at all.
    let (_, v) = json(&t, &["def", "kmap"]);
    assert!(v["results"][0].get("active").is_none());
    // A missing file is a clear error.
    let (code, out) = knav(&t, &["def", "kmap", "--active-config", "/nope/.config"]);
    assert_eq!(code, 1);
    assert!(
        out.starts_with("Error: --active-config file not found: /nope/.config"),
        "{out}"
    );
}

#[test]
fn ctags_reads_shortened_texts_and_finds_the_same_definitions() {
    let t = fixture("shorten");
    let scratch = t.root.with_extension("scratch");
    std::fs::create_dir_all(&scratch).unwrap();
    let build = |suffix: &str, scratch: &Path| {
        let dir = t.root.with_extension(suffix);
        let _ = std::fs::remove_dir_all(&dir);
        let out = Command::new(env!("CARGO_BIN_EXE_knav"))
            .args(["index", "--root"])
            .arg(&t.root)
            .arg("--index-dir")
            .arg(&dir)
            .env("KNAV_SCRATCH_DIR", scratch)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let seg = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .find(|e| e.file_name().to_string_lossy().starts_with("seg-"))
            .unwrap()
            .path();
        let meta: Value =
            serde_json::from_slice(&std::fs::read(seg.join("meta.json")).unwrap()).unwrap();
        let defs = std::fs::read(seg.join("defs.dat")).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        (
            meta["ctags_bytes"].as_u64().unwrap(),
            meta["source_bytes"].as_u64().unwrap(),
            defs,
        )
    };
    let (short_bytes, source_bytes, short_defs) = build("short", &scratch);
    let (full_bytes, _, full_defs) = build("full", Path::new(""));
    assert!(
        std::fs::read_dir(&scratch).unwrap().next().is_none(),
        "the scratch directory was left behind"
    );
    let _ = std::fs::remove_dir_all(&scratch);
    // ctags read less than the files it was given, which are most of the tree.
    assert!(
        full_bytes > source_bytes / 2,
        "{full_bytes} of {source_bytes}"
    );
    assert!(
        short_bytes * 10 < full_bytes * 9,
        "{short_bytes} vs {full_bytes}"
    );
    assert!(
        short_defs == full_defs,
        "definitions differ with shortened texts"
    );
}

#[test]
fn a_query_on_an_index_of_an_older_format_rebuilds_it() {
    let t = fixture("oldformat");
    let (code, _) = json(&t, &["def", "kmap"]);
    assert_eq!(code, 0);
    let current = t.root.join(".knav/CURRENT");
    let mut manifest: Value = serde_json::from_slice(&std::fs::read(&current).unwrap()).unwrap();
    let version = manifest["version"].as_u64().unwrap();
    manifest["version"] = (version - 1).into();
    std::fs::write(&current, serde_json::to_vec(&manifest).unwrap()).unwrap();
    let (code, v) = json(&t, &["def", "kmap"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["definition_count"], 2);
    let rebuilt: Value = serde_json::from_slice(&std::fs::read(&current).unwrap()).unwrap();
    assert_eq!(rebuilt["version"].as_u64(), Some(version));
}

#[test]
fn a_one_line_function_and_a_huge_syscall_are_callers_and_a_prototype_in_a_macro_is_not_a_call() {
    let t = fixture("oneline");
    std::fs::write(
        t.root.join("kernel/oneline.c"),
        "INDIRECT_CALLABLE_DECLARE(ssize_t vfs_read(struct file *, char *, size_t, loff_t *));\n\
         int sched_core_idle_cpu(int cpu) { return vfs_read(0, 0, 0, 0); }\n",
    )
    .unwrap();
    let args: Vec<String> = (0..9000).map(|i| format!("int, a{i}")).collect();
    std::fs::write(
        t.root.join("kernel/big.c"),
        format!(
            "SYSCALL_DEFINE3(bigcall, {})\n{{\n\treturn vfs_read(0, 0, 0, 0);\n}}\n",
            args.join(", ")
        ),
    )
    .unwrap();
    let (code, v) = json(&t, &["callers", "vfs_read"]);
    assert_eq!(code, 0, "{v}");
    let sites: Vec<String> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| format!("{} {}:{}", r["caller"], r["path"], r["line"]))
        .collect();
    assert!(
        sites.contains(&r#""sched_core_idle_cpu" "kernel/oneline.c":2"#.to_string()),
        "{sites:?}"
    );
    assert!(
        sites.contains(&r#""sys_bigcall" "kernel/big.c":3"#.to_string()),
        "{sites:?}"
    );
    assert!(
        !sites.iter().any(|s| s.contains("oneline.c\":1")),
        "a declaration is not a call: {sites:?}"
    );
}

#[test]
fn a_tracepoint_export_marks_the_trace_function_not_its_argument() {
    let t = fixture("tracepoint-export");
    std::fs::write(
        t.root.join("kernel/slab.c"),
        "TRACE_EVENT(kmalloc, TP_PROTO(int n), TP_ARGS(n), TP_STRUCT__entry(), \
         TP_fast_assign(), TP_printk(\"x\"));\n\
         void *kmalloc(int n)\n{\n\treturn 0;\n}\n\
         EXPORT_TRACEPOINT_SYMBOL(kmalloc);\n",
    )
    .unwrap();
    let (_, v) = json(&t, &["def", "kmalloc"]);
    assert!(
        v["exported"].is_null() && !v.to_string().contains("EXPORT_TRACEPOINT"),
        "{v}"
    );
    let (_, v) = json(&t, &["def", "trace_kmalloc"]);
    assert_eq!(
        v["exported"],
        serde_json::json!({"macro": "EXPORT_TRACEPOINT_SYMBOL", "path": "kernel/slab.c", "line": 6}),
        "{v}"
    );
    let (_, v) = json(&t, &["refs", "trace_kmalloc", "--group-by", "line"]);
    let roles = line_roles(&v);
    assert_eq!(
        roles,
        ["6:export"],
        "the made name has no occurrence of its own"
    );
}

#[test]
fn a_function_made_by_a_macro_learned_from_a_header_is_defined_and_owns_its_body() {
    let t = fixture("learned-definers");
    std::fs::create_dir_all(t.root.join("arch/x86/include/asm")).unwrap();
    std::fs::create_dir_all(t.root.join("arch/x86/mm")).unwrap();
    std::fs::write(
        t.root.join("arch/x86/include/asm/idtentry.h"),
        "#define DEFINE_IDTENTRY_RAW_ERRORCODE(func)\t\t\t\\\n\
         __visible noinstr void func(struct pt_regs *regs, unsigned long error_code)\n\
         #define DEFINE_IDTENTRY_NMI(func) DEFINE_IDTENTRY_RAW_ERRORCODE(func)\n\
         #define DECLARE_IDTENTRY(func) asmlinkage void asm_##func(void)\n",
    )
    .unwrap();
    std::fs::write(
        t.root.join("arch/x86/mm/fault.c"),
        "#include <asm/idtentry.h>\n\
         DECLARE_IDTENTRY(exc_page_fault);\n\
         DEFINE_IDTENTRY_RAW_ERRORCODE(exc_page_fault)\n{\n\tvfs_read(0, 0, 0, 0);\n}\n\
         DEFINE_IDTENTRY_NMI(exc_nmi)\n{\n}\n\
         static int f(void) { return DEFINE_IDTENTRY_NMI(not_a_definition); }\n",
    )
    .unwrap();
    let (_, v) = json(&t, &["def", "exc_page_fault"]);
    assert_eq!(locs(&v), ["arch/x86/mm/fault.c:3"], "{v}");
    assert_eq!(
        v["results"][0]["resolved_via"],
        "macro:DEFINE_IDTENTRY_RAW_ERRORCODE"
    );
    let (_, v) = json(&t, &["def", "exc_nmi"]);
    assert_eq!(locs(&v), ["arch/x86/mm/fault.c:7"], "{v}");
    let (_, v) = json(&t, &["def", "asm_exc_page_fault"]);
    assert_eq!(locs(&v), ["arch/x86/mm/fault.c:2"], "{v}");
    assert_eq!(v["results"][0]["kind"], "prototype");
    let (_, v) = json(&t, &["def", "not_a_definition"]);
    assert_eq!(
        v["definition_count"], 0,
        "a use inside an expression defines nothing: {v}"
    );
    let (_, out) = knav(&t, &["callers", "vfs_read"]);
    assert!(
        out.contains("exc_page_fault  arch/x86/mm/fault.c:5:"),
        "{out}"
    );
    // A delta uses the table its base resolved (checksummed with the segment: a table edited
    // by hand is damage, see tests/index_damage.rs); the base's record of the headers'
    // #defines is what a header edit is compared with.
    let saved = segment_dir(&t).join("defines.txt");
    let record = std::fs::read_to_string(&saved).unwrap();
    let line = "arch/x86/include/asm/idtentry.h\tDEFINE_IDTENTRY_RAW_ERRORCODE(func)";
    assert!(record.contains(line), "{record}");
    let table = segment_dir(&t).join("definers.txt");
    let text = std::fs::read_to_string(&table).unwrap();
    assert!(
        text.contains("DEFINE_IDTENTRY_RAW_ERRORCODE\tf\t1\t{0}\n"),
        "{text}"
    );
    let fault = t.root.join("arch/x86/mm/fault.c");
    let text = std::fs::read_to_string(&fault).unwrap();
    std::fs::write(
        &fault,
        format!("{text}DEFINE_IDTENTRY_NMI(exc_debug) {{\n}}\n"),
    )
    .unwrap();
    let (_, v) = json(&t, &["index"]);
    assert_eq!(update_counts(&v).0, "incremental", "{v}");
    let (_, v) = json(&t, &["def", "exc_debug"]);
    assert_eq!(locs(&v), ["arch/x86/mm/fault.c:11"], "{v}");
    // A header whose macro now defines another name changes the files that invoke it, which
    // the delta would not hold: the index is rebuilt.
    let header = t.root.join("arch/x86/include/asm/idtentry.h");
    let text = std::fs::read_to_string(&header).unwrap();
    std::fs::write(&header, text.replace("void func(", "void func##_v2(")).unwrap();
    let (_, v) = json(&t, &["index"]);
    assert_eq!(update_counts(&v).0, "full", "{v}");
    let (_, v) = json(&t, &["def", "exc_page_fault_v2"]);
    assert_eq!(locs(&v), ["arch/x86/mm/fault.c:3"], "{v}");
    // An edit that leaves the macros alone stays a delta.
    let text = std::fs::read_to_string(&header).unwrap();
    std::fs::write(&header, format!("{text}/* a comment */\n")).unwrap();
    let (_, v) = json(&t, &["index"]);
    assert_eq!(update_counts(&v).0, "incremental", "{v}");
}

#[test]
fn no_next_hint_names_a_command_without_the_name_it_needs() {
    let t = fixture("cli-bare-hints");
    let dir = common::outside("cli-bare-hints");
    let diff = dir.0.join("bare-hints.diff");
    std::fs::write(
        &diff,
        "--- a/fs/read_write.c\n+++ b/fs/read_write.c\n@@ -21,1 +21,2 @@\n \treturn 0;\n+\t/* x */\n",
    )
    .unwrap();
    let diff = diff.display().to_string();
    let asks: &[&[&str]] = &[
        &["callees", "vfs_read"],
        &["callers", "vfs_read"],
        &["impact", "vfs_read"],
        &["docs", "allocating"],
        &["diff", &diff],
        &["grep", "--heading", "kmap"],
        &["search", "read", "a", "file"],
        &["symbols", "fs/read_write.c"],
        &["reach", "ksys_read", "vfs_read"],
    ];
    for args in asks {
        let (_, out) = knav(&t, args);
        let Some(next) = out.lines().find_map(|l| l.strip_prefix("next: ")) else {
            continue;
        };
        for hint in next.split(", ") {
            let words: Vec<&str> = hint.split(' ').collect();
            let wants = match words.get(1) {
                Some(&"reach") => 4,
                Some(&("body" | "callers" | "callees" | "refs" | "def" | "impact" | "find")) => 3,
                _ => 2,
            };
            assert!(
                words.len() >= wants,
                "{args:?}: bare hint '{hint}' in {out}"
            );
        }
    }
    // A chain from the name asked needs the other end: said as a placeholder.
    let (_, out) = knav(&t, &["callees", "vfs_read"]);
    assert!(out.ends_with("knav reach vfs_read TARGET\n"), "{out}");
}
