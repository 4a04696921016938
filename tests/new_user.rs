//! What a new user trips on (issue 33), each named after what broke: grep on a path that does
//! not exist, a query where there are no C sources, an index more readable than its tree,
//! typos in long names, the CLI naming MCP tools, and counts that read as failures.

mod common;

use std::os::unix::fs::PermissionsExt;

use common::{fixture, json, knav, knav_output, tree};

#[test]
fn grep_on_a_path_that_does_not_exist_is_an_error_with_exit_2_as_in_rg() {
    let t = fixture("new-user-grep-missing");
    let (code, out) = knav(&t, &["grep", "--heading", "vfs_read", "fs/ext44"]);
    assert_eq!(code, 2, "{out}");
    assert!(
        out.starts_with("Error: 'fs/ext44': no such file or directory under the root "),
        "{out}"
    );
    // A prefix no file starts with, and one outside the root, alike.
    let (code, out) = knav(
        &t,
        &["grep", "--heading", "vfs_read", "--path-prefix", "fs/ext44"],
    );
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("no file or directory under the root"), "{out}");
    let (code, out) = knav(
        &t,
        &["grep", "--heading", "vfs_read", "--path-prefix", "/etc"],
    );
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("is outside the root"), "{out}");
    // A prefix of file names (not a directory) still searches what it covers.
    let (code, out) = knav(&t, &["grep", "-c", "vfs_read", "--path-prefix", "fs/read_"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("fs/read_write.c:"), "{out}");
}

#[test]
fn a_query_where_there_are_no_c_sources_creates_nothing_and_names_the_indexed_tree_above() {
    let t = tree("new-user-no-sources", &[("README", "notes\n")]);
    let (code, out) = knav(&t, &["def", "main"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.starts_with("Error: there are no C sources (.c, .h, .S) under "),
        "{out}"
    );
    assert!(!t.root.join(".knav").exists());
    // Below an indexed tree, the error says which --root to give.
    let k = fixture("new-user-below");
    knav(&k, &["index"]);
    let notes = k.root.join("notes");
    std::fs::create_dir_all(&notes).unwrap();
    let sub = common::Tree { root: notes };
    let (code, out) = knav(&sub, &["def", "vfs_read"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(&format!("is indexed: --root {}", k.root.display())),
        "{out}"
    );
    assert!(!sub.root.join(".knav").exists());
    std::mem::forget(sub);
    // `knav index` is asked for it: done.
    let (code, _) = knav(&t, &["index"]);
    assert_eq!(code, 0);
}

#[test]
fn the_index_is_no_more_readable_than_the_tree() {
    let t = fixture("new-user-private");
    std::fs::set_permissions(&t.root, std::fs::Permissions::from_mode(0o700)).unwrap();
    knav(&t, &["index"]);
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&t.root.join(".knav")) & 0o077, 0);
    // An index made wider before (by an older knav, or a umask of 0) is narrowed by a build.
    std::fs::set_permissions(&t.root, std::fs::Permissions::from_mode(0o750)).unwrap();
    std::fs::set_permissions(t.root.join(".knav"), std::fs::Permissions::from_mode(0o777)).unwrap();
    knav(&t, &["index"]);
    assert_eq!(mode(&t.root.join(".knav")), 0o750);
}

#[test]
fn transposed_letters_in_a_long_name_find_the_name_not_alphabetical_junk() {
    let t = fixture("new-user-typos");
    // One transposition is one edit, whatever the name's length.
    let (code, v) = json(&t, &["def", "ext2_file_raed"]);
    assert_eq!(code, 1, "a near match: {v}");
    assert_eq!(v["results"][0]["symbol"], "ext2_file_read", "{v}");
    let (_, out) = knav(&t, &["def", "ext2_fiel_raed"]);
    assert!(
        out.contains("showing 'ext2_file_read' (two edits away)"),
        "{out}"
    );
    // callers resolves a misspelling as def does: the near match, said, exit 1.
    let (code, v) = json(&t, &["callers", "kernel_raed"]);
    assert_eq!(code, 1, "{v}");
    assert_eq!(v["subject"], "kernel_read", "{v}");
    assert_eq!(v["near_match"], true, "{v}");
}

#[test]
fn the_cli_names_commands_and_flags_where_mcp_names_tools() {
    let t = fixture("new-user-words");
    let (_, out) = knav(&t, &["def", "vfs_read"]);
    assert!(
        out.ends_with("next: knav body vfs_read, knav callers vfs_read, knav refs vfs_read\n"),
        "{out}"
    );
    let (_, out) = knav(&t, &["reach", "ksys_read", "vfs_read", "--max-depth", "99"]);
    assert!(out.starts_with("Error: --max-depth must be 1..12"), "{out}");
    // The JSON envelope keeps the tools' names.
    let (_, v) = json(&t, &["def", "vfs_read"]);
    assert_eq!(
        v["next_tools"],
        serde_json::json!(["get_symbol_body", "find_callers", "find_references"])
    );
}

#[test]
fn index_counts_say_c_files_indexed_and_other_files_not_a_failure_rate() {
    let t = fixture("new-user-counts");
    let (code, out, _) = knav_output(&t, &["index"]);
    assert_eq!(code, 0);
    let first = out.lines().next().unwrap();
    assert!(first.starts_with("index full: "), "{first}");
    assert!(
        first.contains(" C files indexed, 1 not indexed (`knav status` says why); ")
            && first.contains(" other files (grep only)"),
        "{first}"
    );
    assert!(!first.contains("unindexed"), "{first}");
}

#[test]
fn an_edit_above_a_definition_never_leaves_a_stale_line_in_the_answer() {
    let t = fixture("new-user-stale");
    knav(&t, &["index"]);
    let file = t.root.join("fs/read_write.c");
    let text = std::fs::read_to_string(&file).unwrap();
    let line_of = |text: &str| {
        text.lines()
            .position(|l| l.starts_with("ssize_t vfs_read("))
            .unwrap()
            + 1
    };
    let before = line_of(&text);
    let edited = format!(
        "/* one */\n/* two */\n/* three */\n{text}int brand_new(void)\n{{\n\treturn 0;\n}}\n"
    );
    std::fs::write(&file, &edited).unwrap();
    // Without --no-refresh: refreshed first, the line where it now is.
    let (_, v) = json(&t, &["def", "vfs_read", "--path-prefix", "fs/"]);
    assert_eq!(v["results"][0]["line"], before + 3, "{v}");
    assert!(v["warning"].is_null(), "{v}");
    // With it: the old line, and a warning naming the changed file.
    std::fs::write(&file, format!("/* four */\n{edited}")).unwrap();
    let (_, v) = json(
        &t,
        &["def", "vfs_read", "--path-prefix", "fs/", "--no-refresh"],
    );
    assert_eq!(v["results"][0]["line"], before + 3, "{v}");
    let w = v["warning"].as_str().unwrap_or_default();
    assert!(
        w.contains("1 file cited here changed since they were indexed")
            && w.ends_with(": fs/read_write.c"),
        "{w}"
    );
    let (_, v) = json(&t, &["def", "vfs_read", "--path-prefix", "fs/"]);
    assert_eq!(v["results"][0]["line"], before + 4, "{v}");
    // The function added with the refresh is found.
    let (code, v) = json(&t, &["def", "brand_new"]);
    assert_eq!(code, 0, "{v}");
}

#[test]
fn struct_members_of_a_name_come_after_its_function_and_prototypes_and_the_counts_say_they_mix() {
    let t = tree(
        "new-user-kmap",
        &[
            (
                "drivers/gpu/a.h",
                "struct a_obj {\n\tint kmap;\n};\nstruct b_obj {\n\tint kmap;\n};\n",
            ),
            ("include/linux/highmem.h", "void *kmap(struct page *page);\n"),
            (
                "mm/highmem.c",
                "void *kmap(struct page *page)\n{\n\treturn page;\n}\n\nvoid use(void)\n{\n\tkmap(0);\n}\n",
            ),
        ],
    );
    let (_, v) = json(&t, &["def", "kmap"]);
    let kinds: Vec<&str> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["function", "prototype", "member", "member"], "{v}");
    assert_eq!(
        v["counts_mix"],
        serde_json::json!(["function or macro", "struct member"])
    );
    let (_, out) = knav(&t, &["def", "kmap"]);
    assert!(
        out.contains("of every entity named kmap (function or macro, struct member)"),
        "{out}"
    );
}

#[test]
fn callers_inside_arch_syscall_wrappers_name_the_syscall_not_file_scope() {
    let t = tree(
        "new-user-syscall-wrappers",
        &[
            (
                "fs/read_write.c",
                "long ksys_pread64(int fd)\n{\n\treturn fd;\n}\n",
            ),
            (
                // mips: a name that starts with a digit, pasted after `sys_`.
                "arch/mips/kernel/linux32.c",
                "SYSCALL_DEFINE6(32_pread, unsigned long, fd, char *, buf, size_t, count,\n\
                 \tunsigned long, unused, unsigned long, a4, unsigned long, a5)\n{\n\
                 \treturn ksys_pread64(fd);\n}\n",
            ),
            (
                // powerpc: an object-like alias of a definer macro.
                "arch/powerpc/kernel/sys_ppc32.c",
                "#define PPC32_SYSCALL_DEFINE6\tSYSCALL_DEFINE6\n\n\
                 PPC32_SYSCALL_DEFINE6(ppc_pread64, unsigned int, fd, char *, ubuf,\n\
                 \tcompat_size_t, count, u32, reg6, u32, pos1, u32, pos2)\n{\n\
                 \treturn ksys_pread64(fd);\n}\n",
            ),
        ],
    );
    let (_, v) = json(&t, &["callers", "ksys_pread64"]);
    let mut callers: Vec<String> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["caller"].as_str().unwrap_or("(file scope)").to_string())
        .collect();
    callers.sort();
    assert_eq!(callers, ["sys_32_pread", "sys_ppc_pread64"], "{v}");
}

#[test]
fn an_alias_defined_in_both_branches_of_an_ifdef_makes_the_names_of_both() {
    // powerpc's sys_ppc32.c: the 32-bit build's syscall, the 64-bit build's compat syscall.
    let t = tree(
        "new-user-alias-branches",
        &[
            (
                "fs/read_write.c",
                "long ksys_pread64(int fd)\n{\n\treturn fd;\n}\n",
            ),
            (
                "arch/powerpc/kernel/sys_ppc32.c",
                "#ifdef CONFIG_PPC32\n#define PPC32_SYSCALL_DEFINE6\tSYSCALL_DEFINE6\n#else\n\
                 #define PPC32_SYSCALL_DEFINE6\tCOMPAT_SYSCALL_DEFINE6\n#endif\n\n\
                 PPC32_SYSCALL_DEFINE6(ppc_pread64, unsigned int, fd, char *, ubuf,\n\
                 \tcompat_size_t, count, u32, reg6, u32, pos1, u32, pos2)\n{\n\
                 \treturn ksys_pread64(fd);\n}\n",
            ),
        ],
    );
    for name in ["sys_ppc_pread64", "compat_sys_ppc_pread64"] {
        let (code, v) = json(&t, &["def", name]);
        assert_eq!(code, 0, "{name}: {v}");
        let r = &v["results"][0];
        assert_eq!(r["path"], "arch/powerpc/kernel/sys_ppc32.c", "{name}: {v}");
        assert_eq!(r["line"], 7, "{name}: {v}");
        assert_eq!(r["kind"], "function", "{name}: {v}");
    }
    let (_, v) = json(&t, &["callers", "ksys_pread64"]);
    let callers: Vec<&str> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["caller"].as_str().unwrap_or("(file scope)"))
        .collect();
    assert!(
        !callers.is_empty() && callers.iter().all(|c| c.ends_with("sys_ppc_pread64")),
        "{v}"
    );
}

#[test]
fn ctrl_c_during_a_build_removes_its_scratch_and_unpublished_parts_at_once() {
    use std::os::unix::process::ExitStatusExt;
    let t = fixture("new-user-interrupt");
    std::fs::write(t.root.join("fs/hang.c"), "int hang_here;\n").unwrap();
    // A stand-in for ctags that stalls the build on one file, so it can be interrupted there.
    let fake = t.root.join("fake-ctags");
    std::fs::write(
        &fake,
        "#!/bin/sh\ncase \"$*\" in\n\
         \x20 *--version*) echo 'Universal Ctags 6.0.0, Copyright (C) 2015 Universal Ctags Team'; exit 0;;\n\
         \x20 *--list-features*) printf 'json\\ninteractive\\n'; exit 0;;\n\
         esac\nexec sleep 30\n",
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let scratch = t.root.join("scratch");
    std::fs::create_dir_all(&scratch).unwrap();
    let index = t.root.join("index");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_knav"))
        .args(["index", "--root"])
        .arg(&t.root)
        .arg("--index-dir")
        .arg(&index)
        .env("KNAV_CTAGS", &fake)
        .env("KNAV_SCRATCH_DIR", &scratch)
        .env("KNAV_CACHE_DIR", "off")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait until the build is in its ctags phase: its scratch directory exists.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while std::fs::read_dir(&scratch).unwrap().count() == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the build never started ctags"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // SAFETY: a signal to the child this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(status.signal(), Some(libc::SIGINT), "{status:?}");
    assert_eq!(std::fs::read_dir(&scratch).unwrap().count(), 0);
    let left: Vec<String> = std::fs::read_dir(&index)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != "lock" && n != ".gitignore")
        .collect();
    assert!(left.is_empty(), "{left:?}");
}
