//! Definitions that were missing (issue 46, item 1) and counters that grew on a refresh
//! (item 12), each test named after what broke.

mod common;

use common::{fixture, json, knav, tree};
use serde_json::Value;

/// `path:line` of each definition of `name`.
fn defs(t: &common::Tree, name: &str) -> Vec<String> {
    let (code, v) = json(t, &["def", name]);
    assert_eq!(code, 0, "{v}");
    v["results"]
        .as_array()
        .map(|rs| {
            rs.iter()
                .map(|r| format!("{}:{}", r["path"].as_str().unwrap_or(""), r["line"]))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn def_finds_a_static_inline_after_a_macro_invocation_without_a_semicolon() {
    let t = fixture("defs-pageflags");
    // include/linux/page-flags.h: ctags read `CLEARPAGEFLAG(Head, head, PF_ANY)` and the
    // function after it as one old-style function named CLEARPAGEFLAG.
    assert_eq!(
        defs(&t, "folio_test_large"),
        ["include/linux/pageflags_defs.h:26"]
    );
    assert_eq!(
        defs(&t, "folio_mapping_flags"),
        ["include/linux/pageflags_defs.h:15"]
    );
    assert_eq!(defs(&t, "PageSlab"), ["include/linux/pageflags_defs.h:33"]);
    let (_, v) = json(&t, &["def", "folio_test_large"]);
    let r = &v["results"][0];
    assert_eq!(r["kind"], "function");
    // ctags's own answer, with its types and parameters.
    assert_eq!(r["typeref"], "bool");
    assert_eq!(r["signature"], "(const struct folio * folio)");
    let (_, v) = json(&t, &["body", "folio_test_large"]);
    assert_eq!(v["results"][0]["end_line"], 29, "{v}");
    // The invocations stay what the macro table makes of them, and are no functions.
    assert_eq!(defs(&t, "CLEARPAGEFLAG"), Vec::<String>::new());
    assert_eq!(
        defs(&t, "folio_test_waiters"),
        ["include/linux/pageflags_defs.h:12"]
    );
}

#[test]
fn def_bool_finds_the_typedef_ctags_names_after_its_type() {
    let t = fixture("defs-bool");
    assert_eq!(defs(&t, "bool"), ["include/linux/pageflags_defs.h:46"]);
    let (_, v) = json(&t, &["def", "bool"]);
    assert_eq!(v["results"][0]["kind"], "typedef", "{v}");
    assert_eq!(v["results"][0]["typeref"], "_Bool", "{v}");
    assert_eq!(v["results"][0]["symbol"], "bool", "{v}");
}

#[test]
fn a_function_in_an_if_0_block_is_not_a_definition() {
    let t = fixture("defs-if0");
    assert_eq!(defs(&t, "pageflags_never_built"), Vec::<String>::new());
}

#[test]
fn def_finds_a_function_ctags_misses_by_the_scanners_braces() {
    // ctags reads `static MY_ATTR(hot) int helper(int a) {` as an old-style function named
    // MY_ATTR (no `;` can help: the invocation does not begin the declaration): the scanner's
    // `TYPE name(…) {` is the definition.
    let t = tree(
        "defs-net",
        &[(
            "lib/net.c",
            "static int before;\nstatic MY_ATTR(hot) int helper(int a)\n{\n\treturn a;\n}\n\nint after(void)\n{\n\treturn helper(1);\n}\n",
        )],
    );
    let (_, v) = json(&t, &["def", "helper"]);
    assert_eq!(v["definition_count"], 1, "{v}");
    assert_eq!(v["results"][0]["kind"], "function");
    let (_, v) = json(&t, &["body", "helper"]);
    let r = &v["results"][0];
    assert_eq!(
        (r["line"].as_u64(), r["end_line"].as_u64()),
        (Some(2), Some(5))
    );
    assert_eq!(defs(&t, "after"), ["lib/net.c:7"]);
    // Its calls have a caller.
    let (_, out) = knav(&t, &["callers", "helper"]);
    assert!(out.starts_with("after  lib/net.c:9:"), "{out}");
}

/// The per-family counts `knav status` gives.
fn family_counts(t: &common::Tree) -> Value {
    let (code, v) = json(t, &["status"]);
    assert_eq!(code, 0, "{v}");
    v["results"]["macro_definitions"].clone()
}

#[test]
fn status_family_counts_do_not_grow_when_a_refresh_reads_a_comment() {
    let t = fixture("defs-status");
    knav(&t, &["index"]);
    let before = family_counts(&t);
    assert_eq!(before["SYSCALL_DEFINE"], 6, "{before}");
    // A comment added to the file with the SYSCALL_DEFINE3: refreshed into a delta segment.
    let path = t.root.join("fs/read_write.c");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, format!("/* a comment */\n{text}")).unwrap();
    let (code, v) = json(&t, &["index"]);
    assert_eq!(code, 0, "{v}");
    assert_ne!(v["results"]["mode"], "full", "{v}");
    assert_eq!(family_counts(&t), before);
    // A file deleted takes its names with it.
    std::fs::remove_file(&path).unwrap();
    knav(&t, &["index"]);
    let after = family_counts(&t);
    assert_eq!(after["SYSCALL_DEFINE"], Value::Null, "{after}");
}

/// `knav ARGS` on the tree of `KNAV_KERNEL_TREE`, with the index of `KNAV_INDEX_DIR` when set.
fn on_kernel(args: &[&str]) -> String {
    let tree = match std::env::var("KNAV_KERNEL_TREE") {
        Ok(tree) if !tree.is_empty() => tree,
        _ => panic!("KNAV_KERNEL_TREE is not set: set it to a Linux 6.12 source tree"),
    };
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_knav"))
        .args(args)
        .args(["--root", &tree])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
#[ignore = "needs KNAV_KERNEL_TREE"]
fn kernel_page_flags_functions_after_invocations_are_defined() {
    for (name, at) in [
        ("folio_test_large", "include/linux/page-flags.h:848:"),
        ("folio_mapping_flags", "include/linux/page-flags.h:684:"),
        ("PageSlab", "include/linux/page-flags.h:1073:"),
        ("PageHuge", "include/linux/page-flags.h:1101:"),
        ("PageTransHuge", "include/linux/page-flags.h:887:"),
        ("folio_test_swapcache", "include/linux/page-flags.h:584:"),
    ] {
        let out = on_kernel(&["def", name]);
        assert!(out.contains(at), "{name}: {out}");
    }
}
