//! Names as people write them (`struct file_operations`, `vfs_read()`, a system call's name, a
//! misspelling answered the same way by every tool), popular names answered a page at a time,
//! which definition comes first (the kernel before user-space programs, a function before a
//! member of its name, the common build's file, the active config's architecture), hints
//! that are whole commands, and a diff's hunk labels read alike. Each test writes its own tree
//! and is named after what broke; the `kernel_` tests (`#[ignore]`d) check the same on Linux
//! 6.12 (`KNAV_KERNEL_TREE`, Debian's `config.amd64` beside it).

use serde_json::Value;

mod common;
use common::{knav, paths, tree, Tree};

/// `(exit code, answer)` of `knav ARGS --format json` on `tree`.
fn json(tree: &Tree, args: &[&str]) -> (i32, Value) {
    common::json(tree, args)
}

/// The `next:` line of a text answer.
fn next_line(out: &str) -> &str {
    out.lines()
        .find(|l| l.starts_with("next:"))
        .unwrap_or_else(|| panic!("no next line in:\n{out}"))
}

fn vfs_tree(name: &str) -> Tree {
    tree(
        name,
        &[
            (
                "include/linux/fs.h",
                "struct file_operations {\n\tint (*read)(int);\n};\n\
                 extern int vfs_read(int fd);\n",
            ),
            (
                "fs/read_write.c",
                "int vfs_read(int fd)\n{\n\treturn fd;\n}\n\n\
                 int ksys_read(int fd)\n{\n\treturn vfs_read(fd);\n}\n",
            ),
            (
                "fs/open.c",
                "SYSCALL_DEFINE4(openat, int, dfd, const char __user *, filename, int, flags,\n\
                 \t\tumode_t, mode)\n{\n\treturn ksys_read(dfd);\n}\n",
            ),
            (
                "kernel/audit.h",
                "struct audit_context {\n\tstruct open_how openat2;\n};\n",
            ),
        ],
    )
}

#[test]
fn def_of_struct_file_operations_as_written_is_the_struct_tag() {
    let t = vfs_tree("names-struct");
    let (code, v) = json(&t, &["def", "struct file_operations"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(paths(&v), ["include/linux/fs.h"], "{v}");
    assert_eq!(v["results"][0]["kind"], "struct", "{v}");
    assert_eq!(v["subject"], "file_operations", "{v}");
    // The hint names the tag, a command that parses.
    let (code, out) = knav(&t, &["def", "struct file_operations"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        next_line(&out),
        "next: knav body file_operations, knav callers file_operations, knav refs file_operations"
    );
    // A call as written, and a name with `&`.
    for asked in ["vfs_read()", "vfs_read(", "&vfs_read", "vfs_read(fd)"] {
        let (code, v) = json(&t, &["def", asked]);
        assert_eq!(code, 0, "{asked}: {v}");
        assert_eq!(
            paths(&v),
            ["fs/read_write.c", "include/linux/fs.h"],
            "{asked}: {v}"
        );
    }
    let (code, v) = json(&t, &["callers", "vfs_read()"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["results"][0]["caller"], "ksys_read", "{v}");
}

#[test]
fn def_openat_answers_the_syscall_not_a_member_one_edit_away() {
    let t = vfs_tree("names-openat");
    let (code, v) = json(&t, &["def", "openat"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(paths(&v), ["fs/open.c"], "{v}");
    assert_eq!(v["symbol"], "sys_openat", "{v}");
    assert_eq!(v["subject"], "sys_openat", "{v}");
    assert!(v.get("near_match").is_none(), "{v}");
    // body and callees take a syscall's name too.
    let (code, v) = json(&t, &["callees", "openat"]);
    assert_eq!(code, 0, "{v}");
    assert!(v.to_string().contains("ksys_read"), "{v}");
}

#[test]
fn refs_of_kill_a_parameter_and_a_system_call_lists_the_parameter_not_sys_kill() {
    let t = tree(
        "names-kill",
        &[
            (
                "kernel/signal.c",
                "SYSCALL_DEFINE2(kill, pid_t, pid, int, sig)\n{\n\treturn sig;\n}\n",
            ),
            (
                "lib/send.c",
                "int a(int kill) { return 0; }\nint b(int kill) { return 0; }\n\
                 int c(int kill) { return 0; }\nint d(int kill) { return 0; }\n\
                 int e(int kill) { return 0; }\n",
            ),
        ],
    );
    // main answered for sys_kill: "no symbol named 'sys_kill'", exit 1, the 5 never shown.
    let (code, v) = json(&t, &["refs", "kill"]);
    assert_eq!(code, 0, "{v}");
    assert!(v.get("error").is_none(), "{v}");
    assert!(v.get("warning").is_none_or(Value::is_null), "{v}");
    let in_lib = v["results"]
        .as_array()
        .unwrap_or_else(|| panic!("{v}"))
        .iter()
        .filter(|r| r["path"] == "lib/send.c")
        .count();
    assert_eq!(in_lib, 5, "{v}");
    let (code, v) = json(&t, &["callers", "kill"]);
    assert_eq!(code, 0, "{v}");
    assert!(!v.to_string().contains("sys_kill"), "{v}");
    // A tool answered from definitions still takes the system call's name.
    let (code, v) = json(&t, &["body", "kill"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["subject"], "sys_kill", "{v}");
}

#[test]
fn refs_of_a_system_call_nothing_names_is_no_error_about_its_sys_function() {
    let t = vfs_tree("names-syscall-refs");
    // `openat` is named only by its SYSCALL_DEFINE4: refs shows that line; callers and impact
    // answer for sys_openat, as before.
    let (code, v) = json(&t, &["refs", "openat"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(paths(&v), ["fs/open.c"], "{v}");
    assert_eq!(v["results"][0]["caller"], "sys_openat", "{v}");
    for tool in ["callers", "impact"] {
        let (code, v) = json(&t, &[tool, "openat"]);
        assert_eq!(code, 0, "{tool}: {v}");
        assert_eq!(v["subject"], "sys_openat", "{tool}: {v}");
    }
    // A wrapper's name resolves to sys_openat, which nothing names: no references, no error
    // about a name never typed (main: "no symbol named 'sys_openat'", exit 1).
    let (code, v) = json(&t, &["refs", "__riscv_sys_openat"]);
    assert_eq!(code, 0, "{v}");
    assert!(v.get("error").is_none(), "{v}");
    assert_eq!(v["results"], serde_json::json!([]), "{v}");
    assert!(
        v["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("no references to 'sys_openat': it is defined")),
        "{v}"
    );
    // Any other failure is answered for the name as typed.
    let (code, v) = json(&t, &["body", "openat", "--path-prefix", "kernel/"]);
    assert_eq!(code, 1, "{v}");
    let e = v["error"].as_str().unwrap_or_default();
    assert!(e.starts_with("no symbol named 'openat' "), "{v}");
}

#[test]
fn a_misspelled_name_is_answered_alike_by_every_tool_and_exits_1() {
    let t = vfs_tree("names-typo");
    for tool in ["def", "callers", "refs", "body"] {
        let (code, v) = json(&t, &[tool, "vfs_raed"]);
        assert_eq!(code, 1, "{tool}: {v}");
        assert_eq!(v["subject"], "vfs_read", "{tool}: {v}");
        assert_eq!(v["near_match"], true, "{tool}: {v}");
        assert!(v.get("error").is_none(), "{tool}: {v}");
        let w = v["warning"].as_str().unwrap_or_default();
        assert!(
            w.contains("'vfs_raed' has no definition; showing 'vfs_read'"),
            "{tool}: {v}"
        );
        assert!(!v["results"].as_array().unwrap().is_empty(), "{tool}: {v}");
    }
    // The hint names the name answered, not the misspelling.
    let (code, out) = knav(&t, &["callers", "vfs_raed"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("ksys_read"), "{out}");
    assert!(
        next_line(&out).starts_with("next: knav body vfs_read"),
        "{out}"
    );
}

#[test]
fn callers_of_a_name_called_from_more_than_500_files_pages_them() {
    let mut files: Vec<(String, String)> = vec![(
        "net/core/skbuff.c".into(),
        "void kfree_skb(int *skb)\n{\n}\n".into(),
    )];
    for i in 0..520 {
        let dir = if i < 400 { "net/ipv4" } else { "drivers/net" };
        files.push((
            format!("{dir}/f{i}.c"),
            format!("void use{i}(int *skb)\n{{\n\tkfree_skb(skb);\n}}\n"),
        ));
    }
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let t = tree("names-popular", &refs);
    let (code, v) = json(&t, &["callers", "kfree_skb", "--limit", "10"]);
    assert_eq!(code, 0, "{v}");
    assert!(v.get("error").is_none(), "{v}");
    assert_eq!(v["total"], 520, "{v}");
    assert_eq!(v["truncated"], true, "{v}");
    assert_eq!(v["results"].as_array().unwrap().len(), 10, "{v}");
    let (code, out) = knav(&t, &["callers", "kfree_skb", "--limit", "10"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("520 direct calls in 520 files; --path-prefix net/ narrows them to its 400"),
        "{out}"
    );
    assert!(out.contains("--offset 10 for more"), "{out}");
    // The narrowing it names works, and narrows one level further down.
    let (code, v) = json(
        &t,
        &[
            "callers",
            "kfree_skb",
            "--path-prefix",
            "net/",
            "--limit",
            "5",
        ],
    );
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["total"], 400, "{v}");
    assert!(
        v["message"]
            .as_str()
            .unwrap_or_default()
            .contains("path_prefix=net/ipv4/"),
        "{v}"
    );
}

#[test]
fn def_current_ranks_the_kernels_define_before_a_scripts_programs_variable() {
    let t = tree(
        "names-current",
        &[
            ("scripts/kconfig/gconf.c", "static struct menu *current;\n"),
            (
                "include/asm-generic/current.h",
                "#define current get_current()\n",
            ),
            ("usr/gen_init_cpio.c", "static int current;\n"),
        ],
    );
    let (code, v) = json(&t, &["def", "current"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(
        paths(&v),
        [
            "include/asm-generic/current.h",
            "scripts/kconfig/gconf.c",
            "usr/gen_init_cpio.c"
        ],
        "{v}"
    );
}

#[test]
fn def_kmalloc_lists_a_same_named_struct_member_after_the_functions_definitions() {
    let t = tree(
        "names-kmalloc",
        &[
            (
                "include/linux/slab.h",
                "#define kmalloc(...) alloc_hooks(kmalloc_noprof(__VA_ARGS__))\n",
            ),
            (
                "fs/bcachefs/io_read.h",
                "struct bch_read_bio {\n\tunsigned kmalloc:1;\n};\n",
            ),
            (
                "tools/lib/slab.c",
                "void *kmalloc(unsigned long size, int gfp)\n{\n\treturn 0;\n}\n",
            ),
        ],
    );
    let (code, v) = json(&t, &["def", "kmalloc"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(
        paths(&v),
        [
            "include/linux/slab.h",
            "tools/lib/slab.c",
            "fs/bcachefs/io_read.h"
        ],
        "{v}"
    );
}

#[test]
fn synchronize_rcu_ranks_tree_c_before_the_uniprocessor_tiny_c() {
    let body = "void synchronize_rcu(void)\n{\n}\nEXPORT_SYMBOL_GPL(synchronize_rcu);\n";
    let t = tree(
        "names-rcu",
        &[
            ("Kbuild", "obj-y += kernel/\n"),
            ("kernel/Makefile", "obj-y += rcu/\n"),
            (
                "kernel/rcu/Makefile",
                "obj-$(CONFIG_TREE_RCU) += tree.o\nobj-$(CONFIG_TINY_RCU) += tiny.o\n",
            ),
            (
                "kernel/rcu/Kconfig",
                "config TREE_RCU\n\tbool\n\tdefault y if SMP\n\n\
                 config TINY_RCU\n\tbool\n\tdefault y if !PREEMPT_RCU && !SMP\n",
            ),
            ("kernel/rcu/tiny.c", body),
            ("kernel/rcu/tree.c", body),
        ],
    );
    let (code, v) = json(&t, &["def", "synchronize_rcu"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(paths(&v), ["kernel/rcu/tree.c", "kernel/rcu/tiny.c"], "{v}");
    assert_eq!(v["exported"]["path"], "kernel/rcu/tree.c", "{v}");
}

#[test]
fn under_a_config_callees_resolve_access_ok_to_its_architectures_header() {
    let t = tree(
        "names-access-ok",
        &[
            (
                "arch/arm64/include/asm/uaccess.h",
                "#define access_ok(addr, size) arm64_ok(addr, size)\n",
            ),
            (
                "arch/x86/include/asm/uaccess.h",
                "#define access_ok(addr, size) x86_ok(addr, size)\n",
            ),
            (
                "fs/read_write.c",
                "int vfs_read(char *buf, int count)\n{\n\tif (!access_ok(buf, count))\n\
                 \t\treturn -1;\n\treturn 0;\n}\n",
            ),
        ],
    );
    let (code, v) = json(
        &t,
        &["callees", "vfs_read", "--active-config", "CONFIG_X86=y"],
    );
    assert_eq!(code, 0, "{v}");
    let s = v.to_string();
    assert!(s.contains("arch/x86/include/asm/uaccess.h"), "{v}");
    assert!(!s.contains("arch/arm64/include/asm/uaccess.h"), "{v}");
    // And def ranks the config's architecture first, the other hidden.
    let (_, v) = json(
        &t,
        &["def", "access_ok", "--active-config", "CONFIG_ARM64=y"],
    );
    assert_eq!(paths(&v), ["arch/arm64/include/asm/uaccess.h"], "{v}");
}

#[test]
fn hints_after_grep_reach_and_a_missing_file_are_whole_commands() {
    let t = vfs_tree("names-hints");
    let (_, out) = knav(&t, &["grep", "--heading", "return fd"]);
    assert_eq!(
        next_line(&out),
        "next: knav body vfs_read, knav refs vfs_read",
        "{out}"
    );
    let (_, out) = knav(&t, &["grep", "--heading", "vfs_read"]);
    assert_eq!(
        next_line(&out),
        "next: knav body vfs_read, knav refs vfs_read",
        "{out}"
    );
    let (_, out) = knav(&t, &["reach", "ksys_read", "vfs_read"]);
    assert_eq!(
        next_line(&out),
        "next: knav callees ksys_read, knav callers vfs_read",
        "{out}"
    );
    let (code, out) = knav(&t, &["symbols", "fs/no_such.c"]);
    assert_eq!(code, 1, "{out}");
    assert_eq!(next_line(&out), "next: knav files no_such.c", "{out}");
}

#[test]
fn a_path_prefix_that_matches_no_file_is_said_not_answered_as_0_definitions() {
    let t = vfs_tree("names-prefix");
    let (code, out) = knav(&t, &["def", "vfs_read", "--path-prefix", "no/such/"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(
            "--path-prefix 'no/such/' names nothing: no indexed file's path starts with it"
        ),
        "{out}"
    );
    // A prefix of a path's name (not a whole directory) still matches.
    let (code, v) = json(&t, &["def", "vfs_read", "--path-prefix", "fs/read"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(paths(&v), ["fs/read_write.c"], "{v}");
}

#[test]
fn diff_labels_a_hunk_whose_both_sides_match_as_the_files_other_hunks() {
    // The tree has the patch: the first hunk's old side (`a x x`) is also at its line, the
    // second's is not. main labelled the first "yes", the second "already applied".
    let t = tree(
        "names-diff-labels",
        &[(
            "fs/a.c",
            "a\nx\nx\nx\nb\np\nq\nr\nc\nnew\nd\nint f(void)\n{\n\treturn 0;\n}\n",
        )],
    );
    let patch = t.root.join("p.diff");
    std::fs::write(
        &patch,
        "--- a/fs/a.c\n+++ b/fs/a.c\n@@ -1,3 +1,4 @@\n a\n x\n+x\n x\n\
         @@ -8,3 +9,3 @@\n c\n-old\n+new\n d\n",
    )
    .unwrap();
    let (code, v) = json(&t, &["diff", patch.to_str().unwrap()]);
    assert_eq!(code, 0, "{v}");
    let labels: Vec<&str> = v["results"]["files"][0]["hunks"]
        .as_array()
        .unwrap_or_else(|| panic!("{v}"))
        .iter()
        .map(|h| h["applies"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["already applied", "already applied"], "{v}");
}

/// The Linux 6.12 tree `KNAV_KERNEL_TREE` names (indexed where `KNAV_INDEX_DIR` says).
fn kernel() -> String {
    match std::env::var("KNAV_KERNEL_TREE") {
        Ok(tree) if !tree.is_empty() => tree,
        _ => panic!("KNAV_KERNEL_TREE is not set: set it to a Linux 6.12 source tree"),
    }
}

/// `(exit code, stdout)` of `knav ARGS --root TREE`.
fn on_kernel(tree: &str, args: &[&str]) -> (i32, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_knav"))
        .args(args)
        .args(["--root", tree])
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
#[ignore = "needs KNAV_KERNEL_TREE"]
fn kernel_names_as_written_syscalls_and_near_matches() {
    let tree = kernel();
    let (code, out) = on_kernel(&tree, &["def", "struct file_operations"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("include/linux/fs.h:2115: struct file_operations {  [struct]"),
        "{out}"
    );
    assert!(out.contains("next: knav body file_operations,"), "{out}");
    let (code, out) = on_kernel(&tree, &["def", "openat"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.starts_with("sys_openat: "), "{out}");
    assert!(
        out.contains("\nfs/open.c:1447: SYSCALL_DEFINE4(openat,"),
        "{out}"
    );
    for tool in ["def", "callers"] {
        let (code, out) = on_kernel(&tree, &[tool, "vfs_raed"]);
        assert_eq!(code, 1, "{tool}: {out}");
        assert!(
            out.contains("showing 'vfs_read' (one edit away), a near match"),
            "{out}"
        );
    }
}

#[test]
#[ignore = "needs KNAV_KERNEL_TREE"]
fn kernel_callers_of_kfree_skb_are_paged_with_a_narrowing() {
    let tree = kernel();
    let (code, out) = on_kernel(&tree, &["callers", "kfree_skb", "--limit", "3"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("direct calls in 702 files; --path-prefix net/ narrows them to its "),
        "{out}"
    );
    assert!(out.contains("[1-3 of "), "{out}");
}

#[test]
#[ignore = "needs KNAV_KERNEL_TREE"]
fn kernel_ranking_of_current_kmalloc_synchronize_rcu_and_access_ok() {
    let tree = kernel();
    let first = |args: &[&str]| {
        let (_, out) = on_kernel(&tree, args);
        out.lines().nth(1).unwrap_or_default().to_string()
    };
    assert!(
        first(&["def", "current"]).starts_with("include/asm-generic/current.h:9:"),
        "def current"
    );
    assert!(
        first(&["def", "synchronize_rcu"]).starts_with("kernel/rcu/tree.c:4108:"),
        "def synchronize_rcu"
    );
    let (_, out) = on_kernel(&tree, &["def", "kmalloc"]);
    let lines: Vec<&str> = out.lines().collect();
    let member = lines.iter().position(|l| l.contains("[member]")).unwrap();
    assert!(
        lines[..member]
            .iter()
            .filter(|l| l.contains("[function]"))
            .count()
            >= 4,
        "{out}"
    );
    let config = std::path::Path::new(&tree).join("../config.amd64");
    let config = config.to_str().unwrap();
    let (_, out) = on_kernel(&tree, &["callees", "vfs_read", "--active-config", config]);
    assert!(
        out.contains("  access_ok  line 557 → include/asm-generic/access_ok.h:45\n"),
        "{out}"
    );
}
