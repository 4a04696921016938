//! Checks on the real Linux 6.12 tree, `#[ignore]`d by default: run them with
//! `KNAV_KERNEL_TREE=<tree> cargo test --release --test kernel -- --ignored` (the tree is indexed
//! on first use, which takes about a minute). Run without the variable, or without Debian's
//! `config.amd64` next to the tree for the tests that need it, they fail and say why: a green
//! run means they ran. See the README for how to get the tree.

use std::process::Command;

fn kernel() -> String {
    match std::env::var("KNAV_KERNEL_TREE") {
        Ok(tree) if !tree.is_empty() => tree,
        _ => panic!(
            "KNAV_KERNEL_TREE is not set: set it to a Linux 6.12 source tree (see the README's \
             \"Kernel tests\") to run the kernel tests"
        ),
    }
}

/// The tree and Debian's config.amd64_none_amd64 next to it, as the README unpacks them.
fn kernel_and_config() -> (String, String) {
    let tree = kernel();
    let config = std::path::Path::new(&tree).join("../config.amd64");
    assert!(
        config.is_file(),
        "no {}: put Debian's config.amd64_none_amd64 there as config.amd64 (see the README's \
         \"Kernel tests\")",
        config.display()
    );
    (tree, config.display().to_string())
}

fn knav(tree: &str, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_knav"))
        .args(args)
        .args(["--root", tree])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
#[ignore = "needs KNAV_KERNEL_TREE=<Linux 6.12 tree>; run with --ignored"]
fn vfs_read_is_defined_in_read_write_c() {
    let tree = kernel();
    let out = knav(&tree, &["def", "vfs_read"]);
    assert!(
        out.contains("fs/read_write.c:549: ssize_t vfs_read("),
        "{out}"
    );
}

#[test]
#[ignore = "needs KNAV_KERNEL_TREE=<Linux 6.12 tree>; run with --ignored"]
fn callees_are_the_definitions_the_caller_sees_not_another_files_struct_or_define() {
    let tree = kernel();
    // md-linear.c's `struct dev_info` and crypto/jitterentropy.c's own `#define ARRAY_SIZE`
    // were given for every driver's calls; msm's subdirectories use msm_drv.h's `DBG`.
    let out = knav(&tree, &["callees", "cio2_vb2_start_streaming"]);
    assert!(
        out.contains("  dev_info  line 991 → include/linux/dev_printk.h:159\n"),
        "{out}"
    );
    let out = knav(&tree, &["callees", "da9062_i2c_probe"]);
    assert!(out.contains(" → include/linux/array_size.h:11\n"), "{out}");
    let out = knav(&tree, &["callees", "mdp4_crtc_atomic_begin"]);
    assert!(
        out.contains("  DBG  line ") && out.contains(" → drivers/gpu/drm/msm/msm_drv.h:522\n"),
        "{out}"
    );
    let out = knav(&tree, &["def", "container_of"]);
    assert!(
        out.lines()
            .nth(1)
            .is_some_and(|l| l.starts_with("include/linux/container_of.h:18:")),
        "{out}"
    );
}

#[test]
#[ignore = "needs KNAV_KERNEL_TREE=<Linux 6.12 tree>; run with --ignored"]
fn the_callee_audit_holds_73_of_80_judged_definitions_and_leaves_out_2_macros_making_the_caller() {
    let tree = kernel();
    let audit = include_str!("../kernel-bench/callee-audit.tsv");
    let rows: Vec<Vec<&str>> = audit
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("caller\t"))
        .map(|l| l.split('\t').collect())
        .collect();
    assert_eq!(rows.len(), 80);
    let (mut right, mut made_by) = (0, 0);
    for r in &rows {
        let (caller, callee, judged, verdict) = (r[0], r[2], r[4], r[5]);
        let out = knav(
            &tree,
            &["callees", caller, "--format", "json", "--limit", "40"],
        );
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        let got = v["results"]["callees"]
            .as_array()
            .and_then(|c| c.iter().find(|c| c["symbol"] == callee))
            .and_then(|c| c["defined_at"].as_str())
            .unwrap_or("none");
        if verdict == "right" {
            assert_eq!(got, judged, "{caller} calls {callee}");
            right += 1;
        }
        if verdict == "made-by" {
            assert_eq!(
                got, "none",
                "{caller} is made by {callee}, which it does not call"
            );
            made_by += 1;
        }
    }
    assert_eq!((right, made_by), (73, 2));
}

#[test]
#[ignore = "needs KNAV_KERNEL_TREE=<Linux 6.12 tree>; run with --ignored"]
fn kmap_has_highmem_and_no_highmem_variants() {
    let tree = kernel();
    let out = knav(&tree, &["def", "kmap"]);
    assert!(
        out.contains("include/linux/highmem-internal.h:40: static inline void *kmap(struct page *page)  [function; #if CONFIG_HIGHMEM]"),
        "{out}"
    );
    assert!(
        out.contains("include/linux/highmem-internal.h:162: static inline void *kmap(struct page *page)  [function; #if !CONFIG_HIGHMEM]"),
        "{out}"
    );
}

#[test]
#[ignore = "needs KNAV_KERNEL_TREE=<Linux 6.12 tree>; run with --ignored"]
fn callers_of_vfs_read_skip_the_string_in_localio() {
    let tree = kernel();
    let out = knav(&tree, &["callers", "vfs_read"]);
    assert!(out.contains("read_code  fs/exec.c:"), "{out}");
    assert!(out.contains("ksys_read  fs/read_write.c:"), "{out}");
    assert!(out.contains("ksys_pread64  fs/read_write.c:"), "{out}");
    assert!(!out.contains("fs/nfs/localio.c"), "{out}");
}

#[test]
#[ignore = "needs KNAV_KERNEL_TREE=<Linux 6.12 tree>; run with --ignored"]
fn names_made_by_macros_resolve_to_their_invocations() {
    let tree = kernel();
    for (name, want) in [
        ("sys_read", "fs/read_write.c:720: SYSCALL_DEFINE3(read, unsigned int, fd, char __user *, buf, size_t, count)  [function]  (resolved via macro:SYSCALL_DEFINE)"),
        ("trace_sched_switch", "include/trace/events/sched.h:222: TRACE_EVENT(sched_switch,"),
        ("runqueues", "kernel/sched/core.c:120: DEFINE_PER_CPU_SHARED_ALIGNED(struct rq, runqueues);  [variable]  (resolved via macro:DEFINE_PER_CPU)"),
        ("cgroup_mutex", "kernel/cgroup/cgroup.c:90: DEFINE_MUTEX(cgroup_mutex);  [variable]  (resolved via macro:DEFINE_MUTEX)"),
    ] {
        let out = knav(&tree, &["def", name]);
        let first = out.lines().nth(1).unwrap_or("");
        assert!(first.starts_with(want), "{name}: {out}");
    }
}

#[test]
#[ignore = "needs KNAV_KERNEL_TREE=<Linux 6.12 tree>; run with --ignored"]
fn export_status_of_kernel_read_and_vfs_read() {
    let tree = kernel();
    let out = knav(&tree, &["def", "kernel_read"]);
    assert!(
        out.lines()
            .next()
            .unwrap_or("")
            .ends_with(" · exported: EXPORT_SYMBOL (fs/read_write.c:547)"),
        "{out}"
    );
    let out = knav(&tree, &["def", "vfs_read"]);
    assert!(!out.contains("exported"), "{out}");
}

#[test]
#[ignore = "needs KNAV_KERNEL_TREE=<Linux 6.12 tree>; run with --ignored"]
fn debians_amd64_config_keeps_the_no_highmem_kmap_and_hides_arm64() {
    let (tree, config) = kernel_and_config();
    let out = knav(&tree, &["def", "kmap", "--active-config", &config]);
    assert!(
        out.contains("include/linux/highmem-internal.h:162: static inline void *kmap("),
        "{out}"
    );
    assert!(
        out.contains("hidden by the active config: 2 (include/linux/highmem-internal.h:40 — #if CONFIG_HIGHMEM: CONFIG_HIGHMEM is not set; drivers/gpu/drm/panthor/panthor_sched.c:446 — drivers/gpu/drm/Makefile:216 obj-$(CONFIG_DRM_PANTHOR) += panthor/: CONFIG_DRM_PANTHOR is not set)"),
        "{out}"
    );
    let out = knav(
        &tree,
        &["def", "cpu_enable_pan", "--active-config", &config],
    );
    assert!(
        out.contains("arch/arm64/kernel/cpufeature.c:2143 — arch/arm64 is not built: the config's architecture is x86"),
        "{out}"
    );
}

#[test]
#[ignore = "needs KNAV_KERNEL_TREE=<Linux 6.12 tree>; run with --ignored"]
fn debians_amd64_config_applies_makefiles_and_kconfig_defines_config_highmem() {
    let (tree, config) = kernel_and_config();
    // fs/Makefile:40 obj-$(CONFIG_BINFMT_FLAT) += binfmt_flat.o, and Debian leaves it unset.
    let out = knav(
        &tree,
        &["def", "load_flat_binary", "--active-config", &config],
    );
    assert!(
        out.contains("fs/binfmt_flat.c:855 — fs/Makefile:40 obj-$(CONFIG_BINFMT_FLAT) += binfmt_flat.o: CONFIG_BINFMT_FLAT is not set"),
        "{out}"
    );
    // A whole directory: fs/Makefile:71 obj-$(CONFIG_CRAMFS) += cramfs/.
    let out = knav(&tree, &["def", "cramfs_lookup", "--active-config", &config]);
    assert!(
        out.contains("fs/cramfs/inode.c:766 — fs/Makefile:71 obj-$(CONFIG_CRAMFS) += cramfs/: CONFIG_CRAMFS is not set"),
        "{out}"
    );
    // CONFIG_EXT4_FS=m: ext4 is built, as a module.
    let out = knav(
        &tree,
        &[
            "def",
            "ext4_fill_super",
            "--active-config",
            &config,
            "--format",
            "json",
        ],
    );
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["results"][0]["path"], "fs/ext4/super.c", "{out}");
    assert_eq!(v["results"][0]["line"], 5703);
    assert_eq!(v["results"][0]["active"], true);
    // Kconfig defines CONFIG_HIGHMEM in nine architectures; x86's is the one for this config.
    let out = knav(&tree, &["def", "CONFIG_HIGHMEM", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["definition_count"], 9, "{out}");
    let locs: Vec<String> = v["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| {
            format!(
                "{}:{} {}",
                r["path"].as_str().unwrap_or(""),
                r["line"],
                r["resolved_via"].as_str().unwrap_or("")
            )
        })
        .collect();
    assert!(
        locs.contains(&"arch/x86/Kconfig:1492 kconfig".to_string()),
        "{locs:?}"
    );
    assert!(
        locs.contains(&"arch/arm/Kconfig:1211 kconfig".to_string()),
        "{locs:?}"
    );
    let out = knav(
        &tree,
        &["def", "CONFIG_HIGHMEM", "--active-config", &config],
    );
    assert!(
        out.contains("arch/x86/Kconfig:1492: config HIGHMEM: bool; depends on X86_32 && (HIGHMEM64G || HIGHMEM4G)  [config]  (resolved via kconfig)"),
        "{out}"
    );
    assert!(
        out.contains("warning: active config: CONFIG_HIGHMEM is not set"),
        "{out}"
    );
    // References of a CONFIG_ symbol include Makefiles and Kconfig files.
    let out = knav(&tree, &["refs", "CONFIG_EXT4_FS", "--format", "json"]);
    assert!(out.contains("\"path\": \"fs/Makefile\""), "{out}");
    assert!(out.contains("\"role\": \"kconfig\""), "{out}");
}

#[test]
#[ignore = "needs KNAV_KERNEL_TREE=<Linux 6.12 tree>; run with --ignored"]
fn macro_made_functions_one_line_callers_declarations_and_tracepoint_exports_on_the_kernel() {
    let tree = kernel();
    // Learned from DEFINE_IDTENTRY_RAW_ERRORCODE's #define in arch/x86/include/asm/idtentry.h.
    let out = knav(&tree, &["def", "exc_page_fault"]);
    assert!(
        out.contains("arch/x86/mm/fault.c:1488: DEFINE_IDTENTRY_RAW_ERRORCODE(exc_page_fault)  [function]  (resolved via macro:DEFINE_IDTENTRY_RAW_ERRORCODE)"),
        "{out}"
    );
    // A one-line function is the caller of what it calls.
    let out = knav(&tree, &["callers", "idle_cpu"]);
    assert!(
        out.contains("sched_core_idle_cpu  include/linux/sched.h:2222:"),
        "{out}"
    );
    // INDIRECT_CALLABLE_DECLARE(int tcp_v4_rcv(struct sk_buff *)) declares, it does not call.
    let out = knav(&tree, &["callers", "tcp_v4_rcv"]);
    assert!(!out.contains("INDIRECT_CALLABLE_DECLARE"), "{out}");
    // EXPORT_TRACEPOINT_SYMBOL(kmalloc) exports trace_kmalloc's tracepoint, not kmalloc.
    let out = knav(&tree, &["def", "kmalloc"]);
    assert!(!out.contains("exported"), "{out}");
    let out = knav(&tree, &["def", "trace_kmalloc"]);
    assert!(
        out.contains("exported: EXPORT_TRACEPOINT_SYMBOL (mm/slab_common.c:1384)"),
        "{out}"
    );
}

#[test]
#[ignore = "needs KNAV_KERNEL_TREE=<Linux 6.12 tree>; run with --ignored"]
fn vfree_of_vmalloc_c_first_and_nommu_c_hidden_by_debians_amd64_config() {
    let (tree, config) = kernel_and_config();
    let out = knav(&tree, &["def", "vfree"]);
    let first = out.lines().nth(1).unwrap_or("");
    assert!(first.starts_with("mm/vmalloc.c:"), "{out}");
    let out = knav(&tree, &["def", "vfree", "--active-config", &config]);
    assert!(!out.contains("\nmm/nommu.c:"), "{out}");
    assert!(
        out.contains("mm/nommu.c:113 — mm/Makefile:36 mmu-y := nommu.o (replaced on line 37 when CONFIG_MMU is set): CONFIG_MMU=y"),
        "{out}"
    );
}

#[test]
#[ignore = "needs KNAV_KERNEL_TREE=<Linux 6.12 tree>; run with --ignored"]
fn search_finds_names_and_files_from_their_parts() {
    let tree = kernel();
    let out = knav(&tree, &["find", "ext4", "read", "iter"]);
    assert!(
        out.starts_with(
            "ext4_dax_read_iter  fs/ext4/file.c:102: static ssize_t ext4_dax_read_iter("
        ),
        "{out}"
    );
    assert!(
        out.contains(
            "\next4_file_read_iter  fs/ext4/file.c:130: static ssize_t ext4_file_read_iter("
        ),
        "{out}"
    );
    // The exact name first, then the longer ones.
    let out = knav(&tree, &["find", "vfs", "read", "--limit", "2"]);
    assert!(
        out.starts_with("vfs_read  fs/read_write.c:549: ssize_t vfs_read(")
            && out.contains("\nvfs_readv  fs/read_write.c:997: "),
        "{out}"
    );
    let out = knav(&tree, &["find", "oom", "kill", "process"]);
    assert!(
        out.starts_with("oom_kill_process  mm/oom_kill.c:1018: static void oom_kill_process("),
        "{out}"
    );
    let out = knav(&tree, &["find", "/ext4_.*_iter/", "--format", "json"]);
    assert!(out.contains("\"total\": 8,"), "{out}");
    let out = knav(&tree, &["files", "ext4", "inode"]);
    assert!(out.starts_with("fs/ext4/inode.c  ("), "{out}");
}

/// `rg -c ARGS` run in `tree`: matching lines per file.
fn rg_counts(tree: &str, args: &[&str]) -> std::collections::BTreeMap<String, u64> {
    let out = Command::new("rg")
        .args(["-c", "--no-heading", "--null", "--color", "never"])
        .args(args)
        .current_dir(tree)
        .output()
        .unwrap_or_else(|e| panic!("ripgrep is needed (apt-get install ripgrep): {e}"));
    let mut counts = std::collections::BTreeMap::new();
    for line in out.stdout.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let nul = line.iter().position(|&b| b == 0).expect("--null output");
        let n: u64 = std::str::from_utf8(&line[nul + 1..])
            .unwrap()
            .parse()
            .unwrap();
        counts.insert(String::from_utf8_lossy(&line[..nul]).into_owned(), n);
    }
    counts
}

/// `knav grep -c ARGS`, every page: matching lines per file.
fn knav_counts(tree: &str, args: &[&str]) -> std::collections::BTreeMap<String, u64> {
    let mut counts = std::collections::BTreeMap::new();
    loop {
        let offset = counts.len().to_string();
        let mut a = vec!["grep", "-c", "--format", "json", "--limit", "1000"];
        a.extend(["--offset", &offset]);
        a.extend(args);
        let v: serde_json::Value = serde_json::from_str(&knav(tree, &a)).unwrap();
        let rows = v["results"].as_array().cloned().unwrap_or_default();
        for r in &rows {
            counts.insert(
                r["path"].as_str().unwrap().to_string(),
                r["count"].as_u64().unwrap(),
            );
        }
        if rows.is_empty() || counts.len() as u64 >= v["total"].as_u64().unwrap() {
            return counts;
        }
    }
}

/// Patterns of every kind: selective, common, case-insensitive, anchored, without a usable
/// literal, Unicode, fixed strings, words, globs and paths.
pub const GREP_PATTERNS: &[&[&str]] = &[
    &["vfs_iter_read"],
    &[r"EXPORT_SYMBOL\(kmap"],
    &["sched_switch"],
    &["CONFIG_HIGHMEM"],
    &[r"compatible = .arm,cortex-a9"],
    &["-i", "use-after-free"],
    &["-i", "lockdep_assert_held"],
    &["-w", "kfree"],
    &["-F", "struct file_operations ext4"],
    &["Linus Torvalds"],
    &[r"^#define\s+PAGE_SHIFT"],
    &[r"\bmutex_lock_nested\b"],
    &["Ωmega|µs|–"],
    &["[A-Z_]{40,}"],
    &["zz"],
    &["-g", "*.rst", "kmalloc"],
    &["-g", "!drivers/**", "spin_lock_irqsave"],
    &["return", "fs/ext4"],
    &["TODO", "mm", "include/linux"],
];

#[test]
#[ignore = "needs KNAV_KERNEL_TREE=<Linux 6.12 tree>; run with --ignored"]
fn grep_counts_exactly_rgs_lines_in_every_file_of_the_kernel() {
    let tree = kernel();
    for args in GREP_PATTERNS {
        let want = rg_counts(&tree, args);
        let got = knav_counts(&tree, args);
        let differ: Vec<_> = want
            .iter()
            .filter(|(p, n)| got.get(*p) != Some(n))
            .chain(got.iter().filter(|(p, _)| !want.contains_key(*p)))
            .take(5)
            .collect();
        assert!(
            differ.is_empty(),
            "knav grep {args:?} differs from rg -c: {differ:?}"
        );
        assert!(!want.is_empty(), "{args:?} finds something");
    }
}

#[test]
#[ignore = "needs KNAV_KERNEL_TREE=<Linux 6.12 tree>; run with --ignored"]
fn the_outline_of_sched_core_pages_from_its_end_and_status_counts_the_tree() {
    let tree = kernel();
    let out = knav(
        &tree,
        &[
            "symbols",
            "kernel/sched/core.c",
            "--from",
            "end",
            "--limit",
            "2",
        ],
    );
    assert!(
        out.starts_with(
            "kernel/sched/core.c:10648-10658: void sched_enq_and_set_task(struct sched_enq_and_set_ctx *ctx)  [function; #if CONFIG_SCHED_CLASS_EXT]\n\
             kernel/sched/core.c:10627-10646: void sched_deq_and_put_task("
        ) && out.contains("[1-2 of 552 · --offset 2 for more]"),
        "{out}"
    );
    let out = knav(&tree, &["symbols", "fs/ext2/", "--limit", "2"]);
    assert!(
        out.starts_with(
            "fs/ext2/acl.c  (276 lines, 6 definitions)\n\
             fs/ext2/acl.h  (73 lines, 18 definitions)\n\
             [1-2 of 19 · --offset 2 for more]\n"
        ),
        "{out}"
    );
    let out = knav(&tree, &["status"]);
    assert!(
        out.contains(": 61264 C files indexed; ") && out.contains("  no build running\n"),
        "{out}"
    );
}

/// The symbols of the first `limit` results of `knav search QUESTION`.
fn searched(tree: &str, question: &str, limit: u32) -> Vec<String> {
    let limit = limit.to_string();
    let out = knav(
        tree,
        &["search", question, "--limit", &limit, "--format", "json"],
    );
    let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    v["results"]
        .as_array()
        .unwrap_or_else(|| panic!("{v}"))
        .iter()
        .map(|r| r["symbol"].as_str().unwrap_or("").to_string())
        .collect()
}

#[test]
#[ignore = "needs KNAV_KERNEL_TREE=<Linux 6.12 tree>; run with --ignored"]
fn impact_of_vfs_read_reaches_the_read_syscalls_through_ksys_read() {
    let tree = kernel();
    let out = knav(&tree, &["impact", "vfs_read", "--limit", "1000"]);
    let first = out.lines().next().unwrap_or("");
    assert!(
        first.starts_with("vfs_read: ")
            && first
                .contains(" · defined fs/read_write.c:549 (FILESYSTEMS (VFS and infrastructure))"),
        "{out}"
    );
    assert!(!first.contains("capped"), "{out}");
    assert!(
        out.contains(
            "\n1 ksys_read  fs/read_write.c:712  [FILESYSTEMS (VFS and infrastructure)]\n"
        ),
        "{out}"
    );
    assert!(out.contains("\n1 read_code  fs/exec.c:"), "{out}");
    assert!(
        out.contains("\n2   sys_read → ksys_read  fs/read_write.c:722"),
        "{out}"
    );
    assert!(out.contains("exported: EXPORT_SYMBOL"), "{out}");
}

/// A 10-hunk patch of three files of the tree, made with `diff -u` on copies: eight hunks in
/// fs/read_write.c (seven functions changed, one added), one in a struct of
/// include/linux/fs.h, one in a Kconfig entry's help.
fn kernel_patch(tree: &str) -> String {
    let edits: &[(&str, &[(&str, &str)])] = &[
        (
            "fs/read_write.c",
            &[
                ("\treturn vfs_setpos_cookie(file, offset, maxsize, NULL);\n",
                 "\treturn vfs_setpos_cookie(file, offset, maxsize, NULL); /* no cookie */\n"),
                ("\tint mask = read_write == READ ? MAY_READ : MAY_WRITE;\n",
                 "\tconst int mask = read_write == READ ? MAY_READ : MAY_WRITE;\n"),
                ("\treturn __kernel_read(file, buf, count, pos);\n",
                 "\tWARN_ON_ONCE(!count);\n\treturn __kernel_read(file, buf, count, pos);\n"),
                ("\t\tcount =  MAX_RW_COUNT;\n", "\t\tcount = MAX_RW_COUNT;\n"),
                ("\t\tret = vfs_read(fd_file(f), buf, count, ppos);\n",
                 "\t\tret = vfs_read(fd_file(f), buf, count, ppos);\n\t\tcond_resched();\n"),
                ("ssize_t ksys_write(unsigned int fd, const char __user *buf, size_t count)\n{\n",
                 "static bool ksys_io_allowed(unsigned int fd)\n{\n\treturn fd < NR_OPEN_DEFAULT;\n}\n\n\
                  ssize_t ksys_write(unsigned int fd, const char __user *buf, size_t count)\n{\n"),
            ],
        ),
        (
            "include/linux/fs.h",
            &[("\tfop_flags_t fop_flags;\n", "\tfop_flags_t fop_flags;\n\tunsigned int fop_spare;\n")],
        ),
        (
            "fs/Kconfig",
            &[("saves about 11k.\n", "saves about 12k.\n")],
        ),
    ];
    let dir = std::env::temp_dir().join(format!("knav-kernel-patch-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for (path, changes) in edits {
        let old = std::fs::read_to_string(std::path::Path::new(tree).join(path)).unwrap();
        let mut new = old.clone();
        for (from, to) in *changes {
            assert!(new.contains(from), "{path} has no {from:?}");
            new = new.replace(from, to);
        }
        for (side, text) in [("a", &old), ("b", &new)] {
            let p = dir.join(side).join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
    }
    let out = Command::new("diff")
        .args(["-ruN", "a", "b"])
        .current_dir(&dir)
        .output()
        .expect("diff (diffutils) makes the patch");
    let _ = std::fs::remove_dir_all(&dir);
    String::from_utf8(out.stdout).unwrap()
}

#[test]
#[ignore = "needs KNAV_KERNEL_TREE=<Linux 6.12 tree>; run with --ignored"]
fn callers_through_ops_tables_reach_vfs_and_network_implementations() {
    let tree = kernel();
    let out = knav(&tree, &["callers", "ext4_file_read_iter"]);
    assert!(
        out.contains(
            "new_sync_read  fs/read_write.c:488: ret = filp->f_op->read_iter(&kiocb, &iter);  \
             [via file_operations.read_iter, registered fs/ext4/file.c:933, type]"
        ),
        "{out}"
    );
    let out = knav(&tree, &["callers", "e1000_xmit_frame"]);
    assert!(
        out.contains(
            "__netdev_start_xmit  include/linux/netdevice.h:5015: return ops->ndo_start_xmit(skb, dev);  \
             [via net_device_ops.ndo_start_xmit, registered drivers/net/ethernet/intel/e1000/e1000_main.c:827, type]"
        ),
        "{out}"
    );
    // DEFINE_SCHED_CLASS(fair) = { … }: the struct type comes from the macro's #define.
    let out = knav(&tree, &["callers", "task_tick_fair"]);
    assert!(
        out.contains("sched_tick  kernel/sched/core.c:5641:")
            && out.contains(
                "[via sched_class.task_tick, registered kernel/sched/fair.c:13763, type]"
            ),
        "{out}"
    );
    let out = knav(&tree, &["refs", "ext4_file_read_iter"]);
    assert!(
        out.contains("fs/ext4/file.c:933: .read_iter\t= ext4_file_read_iter,  [register]"),
        "{out}"
    );
}

#[test]
#[ignore = "needs KNAV_KERNEL_TREE=<Linux 6.12 tree>; run with --ignored"]
fn search_docs_ranks_the_ksm_oom_killer_and_stable_patch_sections() {
    let tree = kernel();
    let out = knav(
        &tree,
        &["docs", "kernel", "samepage", "merging", "--limit", "2"],
    );
    assert!(
        out.starts_with("Documentation/admin-guide/mm/ksm.rst:2: Kernel Samepage Merging  [")
            && out.contains("\nDocumentation/mm/ksm.rst:2: Kernel Samepage Merging  ["),
        "{out}"
    );
    let out = knav(&tree, &["docs", "oom", "killer", "--limit", "10"]);
    assert!(
        out.starts_with("Documentation/admin-guide/mm/concepts.rst:211: OOM killer  ["),
        "{out}"
    );
    let question = "how do I submit a patch to the stable tree";
    let mut args = vec!["docs"];
    args.extend(question.split(' '));
    args.extend(["--limit", "3"]);
    let out = knav(&tree, &args);
    assert!(
        out.starts_with(
            "Documentation/process/stable-kernel-rules.rst:34: Procedure for submitting patches \
             to the -stable tree  ["
        ),
        "{out}"
    );
}

#[test]
#[ignore = "needs KNAV_KERNEL_TREE=<Linux 6.12 tree>; run with --ignored"]
fn the_read_syscall_reaches_ext4_through_file_operations() {
    let tree = kernel();
    let out = knav(&tree, &["reach", "sys_read", "ext4_file_read_iter"]);
    assert!(
        out.starts_with(
            "sys_read reaches ext4_file_read_iter in 4 calls: sys_read → ksys_read → vfs_read → \
             new_sync_read →[file_operations.read_iter] ext4_file_read_iter\n"
        ),
        "{out}"
    );
}

#[test]
#[ignore = "needs KNAV_KERNEL_TREE=<Linux 6.12 tree>; run with --ignored"]
fn a_ten_hunk_patch_maps_onto_functions_a_struct_and_a_kconfig_entry() {
    let tree = kernel();
    let patch = kernel_patch(&tree);
    assert_eq!(patch.matches("\n@@ ").count(), 10, "{patch}");
    let path = std::env::temp_dir().join(format!("knav-kernel-{}.diff", std::process::id()));
    std::fs::write(&path, &patch).unwrap();
    let out = knav(&tree, &["diff", path.to_str().unwrap()]);
    let _ = std::fs::remove_file(&path);
    assert!(out.starts_with("3 files, 10 hunks · "), "{out}");
    for want in [
        "    modified function vfs_setpos  line 83",
        "    modified function rw_verify_area  line 448",
        "    modified function kernel_read  line 538",
        "    modified function vfs_read  line 549",
        "    modified function vfs_write  line 663",
        "    modified function ksys_read  line 701",
        "    added function ksys_io_allowed  line ",
        "    modified function do_sendfile  line 1315",
        "    modified struct file_operations  line 2115",
        "    modified kconfig CONFIG_FILE_LOCKING  line 123",
    ] {
        assert!(out.contains(want), "{want}: {out}");
    }
    assert!(!out.contains(" no: "), "{out}");
}

#[test]
#[ignore = "needs KNAV_KERNEL_TREE=<Linux 6.12 tree>; run with --ignored"]
fn search_code_answers_questions_in_words() {
    let tree = kernel();
    for (question, answer) in [
        (
            "where does the kernel choose which process to kill when memory runs out",
            "select_bad_process",
        ),
        ("wait for an RCU grace period to end", "synchronize_rcu"),
        ("load a kernel module into memory", "load_module"),
        // crc32_le's work is done by crc32_le_generic (lib/crc32.c:146), which it calls.
        ("compute a CRC32 checksum", "crc32_le crc32_le_generic"),
    ] {
        let top = searched(&tree, question, 10);
        let answers: Vec<&str> = answer.split(' ').collect();
        assert!(
            top.iter().any(|s| answers.contains(&s.as_str())),
            "{question}: {top:?}"
        );
    }
}

/// The questions of kernel-bench/search-questions.tsv of half `half` asked, answered in the top
/// 1 and in the top 10; prints the score, and each miss of the tuning half (the held-out half is
/// only ever run, never studied).
fn scored_questions(tree: &str, half: &str) -> (usize, usize, usize) {
    let tsv = include_str!("../kernel-bench/search-questions.tsv");
    let (mut asked, mut top1, mut top10) = (0, 0, 0);
    for line in tsv.lines().filter(|l| !l.starts_with('#')).skip(1) {
        let cols: Vec<&str> = line.split('\t').collect();
        if cols[3] != half {
            continue;
        }
        let (question, answers) = (cols[0], cols[1].split_whitespace().collect::<Vec<_>>());
        let top = searched(tree, question, 10);
        asked += 1;
        match top.iter().position(|s| answers.contains(&s.as_str())) {
            Some(0) => {
                top1 += 1;
                top10 += 1;
            }
            Some(_) => top10 += 1,
            None if half == "tune" => println!("miss: {question} (want {answers:?}): {top:?}"),
            None => {}
        }
    }
    println!(
        "search_code, {half} half: {top10}/{asked} in the top 10, {top1}/{asked} in the top 1"
    );
    (asked, top1, top10)
}

/// Scores half `half` of the benchmark and holds at least `min_asked` questions, `min_top10`
/// answered in the top 10 and `min_top1` first.
fn holds_score(half: &str, min_asked: usize, min_top10: usize, min_top1: usize) {
    let (asked, top1, top10) = scored_questions(&kernel(), half);
    assert!(asked >= min_asked, "{asked} questions in the {half} half");
    assert!(
        top10 >= min_top10,
        "{top10}/{asked} of the {half} half in the top 10"
    );
    assert!(top1 >= min_top1, "{top1}/{asked} of the {half} half first");
}

/// The tuning half of kernel-bench/search-questions.tsv (issue 32): holds the score measured
/// when the ranking was last tuned (BENCHMARKS.md, "Code search").
#[test]
#[ignore = "needs KNAV_KERNEL_TREE=<Linux 6.12 tree>; run with --ignored"]
fn search_code_scores_the_benchmark_questions() {
    holds_score("tune", 140, 78, 28);
}

/// The held-out half of kernel-bench/search-questions.tsv, never tuned on: holds the score
/// measured with the same ranking (BENCHMARKS.md, "Code search"), so that a tuning fitted to
/// the tuning half alone shows here.
#[test]
#[ignore = "needs KNAV_KERNEL_TREE=<Linux 6.12 tree>; run with --ignored"]
fn search_code_scores_the_held_out_questions() {
    holds_score("held", 85, 35, 11);
}
