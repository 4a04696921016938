//! Checks on the real Linux 6.12 tree. They run when `KNAV_KERNEL_TREE` names a kernel source
//! tree (indexed already, or indexed on first use, which takes a few minutes), and are skipped
//! otherwise. See the README for how to get the tree.

use std::process::Command;

fn kernel() -> Option<String> {
    let tree = std::env::var("KNAV_KERNEL_TREE")
        .ok()
        .filter(|t| !t.is_empty());
    if tree.is_none() {
        eprintln!("skipped: set KNAV_KERNEL_TREE to a Linux 6.12 source tree");
    }
    tree
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
fn vfs_read_is_defined_in_read_write_c() {
    let Some(tree) = kernel() else { return };
    let out = knav(&tree, &["def", "vfs_read"]);
    assert!(
        out.contains("fs/read_write.c:549: ssize_t vfs_read("),
        "{out}"
    );
}

#[test]
fn kmap_has_highmem_and_no_highmem_variants() {
    let Some(tree) = kernel() else { return };
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
fn callers_of_vfs_read_skip_the_string_in_localio() {
    let Some(tree) = kernel() else { return };
    let out = knav(&tree, &["callers", "vfs_read"]);
    assert!(out.contains("read_code  fs/exec.c:"), "{out}");
    assert!(out.contains("ksys_read  fs/read_write.c:"), "{out}");
    assert!(out.contains("ksys_pread64  fs/read_write.c:"), "{out}");
    assert!(!out.contains("fs/nfs/localio.c"), "{out}");
}

#[test]
fn names_made_by_macros_resolve_to_their_invocations() {
    let Some(tree) = kernel() else { return };
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
fn export_status_of_kernel_read_and_vfs_read() {
    let Some(tree) = kernel() else { return };
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
fn debians_amd64_config_keeps_the_no_highmem_kmap_and_hides_arm64() {
    let Some(tree) = kernel() else { return };
    // Debian's config.amd64_none_amd64, next to the tree as DEVELOPERS.md unpacks it.
    let config = std::path::Path::new(&tree).join("../config.amd64");
    if !config.is_file() {
        eprintln!("skipped: no {}", config.display());
        return;
    }
    let config = config.display().to_string();
    let out = knav(&tree, &["def", "kmap", "--active-config", &config]);
    assert!(
        out.contains("include/linux/highmem-internal.h:162: static inline void *kmap("),
        "{out}"
    );
    assert!(
        out.contains("hidden by the active config: 1 (include/linux/highmem-internal.h:40 — #if CONFIG_HIGHMEM: CONFIG_HIGHMEM is not set)"),
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
