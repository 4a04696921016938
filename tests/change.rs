//! change_impact (`knav impact`) and review_diff (`knav diff`) on the fixture, whose
//! `MAINTAINERS` puts fs/'s own files under FILESYSTEMS, fs/ext2/ under EXT2 FILE SYSTEM and
//! the rest under THE REST.

mod common;

use common::{fixture, json, knav, knav_output, tree};
use serde_json::json;

#[test]
fn impact_groups_callers_by_subsystem_and_top_directory() {
    let t = fixture("impact");
    let (code, out) = knav(&t, &["impact", "vfs_read"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        out,
        "vfs_read: 3 direct callers, 2 more within depth 2 · 5 call sites · defined fs/read_write.c:20 (FILESYSTEMS (VFS and infrastructure))\n\
         subsystems (functions): FILESYSTEMS (VFS and infrastructure) 4, EXT2 FILE SYSTEM 1\n\
         top dirs (functions): fs 5\n\
         1 ext2_file_read  fs/ext2/file.c:6  [EXT2 FILE SYSTEM]\n\
         1 kernel_read  fs/read_write.c:31  [FILESYSTEMS (VFS and infrastructure); exported: EXPORT_SYMBOL]\n\
         1 ksys_read  fs/read_write.c:39  [FILESYSTEMS (VFS and infrastructure)]\n\
         2   sys_read → ksys_read  fs/read_write.c:44  [FILESYSTEMS (VFS and infrastructure)]\n\
         2   compat_read → ksys_read  fs/read_write.c:50  [FILESYSTEMS (VFS and infrastructure); exported: EXPORT_SYMBOL_GPL; #if CONFIG_COMPAT]\n\
         next: knav callers vfs_read, knav body vfs_read, knav reach vfs_read TARGET\n"
    );
    let (_, v) = json(&t, &["impact", "vfs_read", "--depth", "1"]);
    let r = &v["results"];
    assert_eq!(
        (
            &r["direct_callers"],
            &r["transitive_callers"],
            &r["call_sites"],
            &r["counts_capped"]
        ),
        (&json!(3), &json!(0), &json!(3), &json!(false))
    );
    assert_eq!(
        r["subsystems"],
        json!([
            {"name": "FILESYSTEMS (VFS and infrastructure)", "functions": 2, "call_sites": 2},
            {"name": "EXT2 FILE SYSTEM", "functions": 1, "call_sites": 1}
        ])
    );
    assert_eq!(
        r["top_dirs"],
        json!([{"name": "fs", "functions": 3, "call_sites": 3}])
    );
    assert_eq!(v["total"], 3);
    // A page of the callers; the groups still count them all.
    let (_, v) = json(&t, &["impact", "vfs_read", "--limit", "1", "--offset", "1"]);
    assert_eq!(v["results"]["callers"][0]["function"], "kernel_read");
    assert_eq!(v["results"]["top_dirs"][0]["functions"], 5);
    assert_eq!((&v["total"], &v["truncated"]), (&json!(5), &json!(true)));
}

#[test]
fn impact_leaves_out_callers_the_active_config_does_not_build() {
    let t = fixture("impact-config");
    let (_, v) = json(
        &t,
        &["impact", "ksys_read", "--active-config", "CONFIG_COMPAT=n"],
    );
    let r = &v["results"];
    let callers: Vec<&str> = r["callers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["function"].as_str().unwrap())
        .collect();
    assert_eq!(callers, ["sys_read"]);
    assert_eq!(
        v["hidden"],
        json!([{"path": "fs/read_write.c", "line": 50,
                "reason": "#if CONFIG_COMPAT: CONFIG_COMPAT is not set"}])
    );
}

#[test]
fn impact_checks_its_depth_and_its_symbol() {
    let t = fixture("impact-args");
    let (code, out) = knav(&t, &["impact", "vfs_read", "--depth", "11"]);
    assert_eq!(code, 1);
    assert!(
        out.starts_with("Error: depth must be 0..10, not 11"),
        "{out}"
    );
    // A misspelling is answered for its near match, said, exit 1.
    let (code, out) = knav(&t, &["impact", "vfs_reed"]);
    assert_eq!(code, 1);
    assert!(
        out.contains("'vfs_reed' has no definition; showing 'vfs_read'"),
        "{out}"
    );
    let (_, v) = json(&t, &["impact", "kernel_read", "--depth", "0"]);
    assert_eq!(v["results"]["exported"], "EXPORT_SYMBOL");
    assert_eq!(v["results"]["callers"], json!([]));
}

#[test]
fn impact_counts_past_the_cap_are_floors() {
    // 10,005 callers of `hub`, one call each: the walk reads 10,000 call sites and stops.
    let mut files: Vec<(String, String)> = vec![(
        "MAINTAINERS".into(),
        "HUB\nF:\tlib/\n\nDRIVERS\nF:\tdrivers/\n".into(),
    )];
    files.push(("lib/hub.c".into(), "void hub(void)\n{\n}\n".into()));
    for f in 0..5 {
        let body: String = (0..2001)
            .map(|i| format!("void c{f}_{i}(void)\n{{\n\thub();\n}}\n"))
            .collect();
        files.push((format!("drivers/d{f}.c"), body));
    }
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    let t = tree("impact-cap", &files);
    let (code, v) = json(&t, &["impact", "hub", "--depth", "1", "--limit", "1"]);
    assert_eq!(code, 0, "{v}");
    let r = &v["results"];
    assert_eq!(r["counts_capped"], true);
    assert_eq!(r["direct_callers"], 10_000);
    assert_eq!(r["call_sites"], 10_000);
    assert_eq!(
        r["subsystems"],
        json!([{"name": "DRIVERS", "functions": 10_000, "call_sites": 10_000}])
    );
    assert!(
        v["warning"]
            .as_str()
            .unwrap()
            .contains("stopped after 10000 call sites: every count is a floor"),
        "{v}"
    );
    let (_, out) = knav(&t, &["impact", "hub", "--depth", "1", "--limit", "1"]);
    assert!(
        out.starts_with("hub: ≥10000 direct callers, ≥0 more within depth 1 · ≥10000 call sites"),
        "{out}"
    );
    assert!(
        out.contains("subsystems (functions): DRIVERS ≥10000\n"),
        "{out}"
    );
}

/// [`common::PATCH`] written beside the tree (not in it: it would be indexed).
fn patch_file(t: &common::Tree) -> String {
    let mut name = t.root.file_name().unwrap().to_os_string();
    name.push(".diff");
    let p = t.root.with_file_name(name);
    std::fs::write(&p, common::PATCH).unwrap();
    p.display().to_string()
}

#[test]
fn a_diff_maps_onto_the_definitions_it_touches() {
    let t = fixture("review");
    let patch = patch_file(&t);
    let (code, out) = knav(&t, &["diff", &patch]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        out,
        "3 files, 5 hunks (1 do not apply) · 5 definitions touched\n\
         modified fs/read_write.c  [FILESYSTEMS (VFS and infrastructure)]\n\
         \x20 @@ -21,7 +21,7 @@ yes\n\
         \x20   modified function vfs_read  line 20  [3 callers; FILESYSTEMS (VFS and infrastructure), EXT2 FILE SYSTEM]\n\
         \x20 @@ -32,10 +32,18 @@ yes\n\
         \x20   modified function ksys_read  line 35  [2 callers; FILESYSTEMS (VFS and infrastructure)]\n\
         \x20   added function kernel_read_all  line 35  [0 callers; FILESYSTEMS (VFS and infrastructure)]\n\
         modified include/linux/fs.h  [FILESYSTEMS (VFS and infrastructure)]\n\
         \x20 @@ -9,6 +9,7 @@ yes\n\
         \x20   modified struct file  line 9  [FILESYSTEMS (VFS and infrastructure)]\n\
         \x20 @@ -20,6 +21,6 @@ yes\n\
         \x20   modified macro MAX_RW_COUNT  line 23  [0 callers; FILESYSTEMS (VFS and infrastructure)]\n\
         modified mm/highmem.c  [HIGHMEM]\n\
         \x20 @@ -12,4 +12,4 @@ no: neither side of the hunk is in mm/highmem.c (near line 12)\n\
         warning: 1 of 5 hunks do not apply to the indexed tree: their definitions are not listed\n\
         next: knav body vfs_read, knav callers vfs_read, knav impact vfs_read\n"
    );
    let (_, v) = json(&t, &["diff", &patch]);
    let defs = &v["results"]["definitions"];
    assert_eq!(
        defs[0],
        json!({"symbol": "vfs_read", "kind": "function", "change": "modified",
               "path": "fs/read_write.c", "line": 20, "hunk": "-21,7 +21,7", "guard": [],
               "callers": 3,
               "subsystems": ["FILESYSTEMS (VFS and infrastructure)", "EXT2 FILE SYSTEM"]})
    );
    // A new function's guard is where it goes; a struct has no callers.
    assert_eq!(defs[2]["guard"], json!([]));
    assert_eq!(defs[3]["callers"], json!(null));
    assert_eq!(
        v["results"]["files"][2]["hunks"],
        json!([{"hunk": "-12,4 +12,4", "applies": "no", "offset": 0,
                "note": "neither side of the hunk is in mm/highmem.c (near line 12)"}])
    );
    let _ = std::fs::remove_file(&patch);
}

#[test]
fn a_diff_on_a_tree_that_has_it_is_already_applied_and_a_shifted_hunk_gives_its_offset() {
    let t = fixture("review-applied");
    let rw = t.root.join("fs/read_write.c");
    let text = std::fs::read_to_string(&rw).unwrap();
    // Two lines more at the top shift every hunk of the patch by +2; vfs_read's change is in.
    let text = format!(
        "/* one */\n/* two */\n{}",
        text.replace("\tif (ret)\n", "\tif (ret < 0)\n")
    );
    std::fs::write(&rw, text).unwrap();
    let patch = patch_file(&t);
    let (_, v) = json(&t, &["diff", &patch, "--path-prefix", "fs/"]);
    let r = &v["results"];
    assert_eq!(r["files"].as_array().unwrap().len(), 1);
    assert_eq!(
        r["files"][0]["hunks"],
        json!([
            {"hunk": "-21,7 +21,7", "applies": "already applied", "offset": 2, "note": null},
            {"hunk": "-32,10 +32,18", "applies": "yes", "offset": 2, "note": null}
        ])
    );
    let names: Vec<(&str, &str, u64)> = r["definitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["symbol"].as_str().unwrap(),
                d["change"].as_str().unwrap(),
                d["line"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        names,
        [
            ("vfs_read", "modified", 22),
            ("ksys_read", "modified", 37),
            ("kernel_read_all", "added", 37)
        ]
    );
    let _ = std::fs::remove_file(&patch);
}

#[test]
fn a_diff_that_is_not_one_is_a_clear_error() {
    let t = fixture("review-bad");
    let p = t.root.join("not-a-diff.txt");
    std::fs::write(&p, "just words\n").unwrap();
    let (code, out, _) = knav_output(&t, &["diff", p.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(out.starts_with("Error: no file in the diff"), "{out}");
    std::fs::write(&p, "--- a/x.c\n+++ b/x.c\n@@ -1,3 +1,3 @@\n a\n").unwrap();
    let (code, out) = knav(&t, &["diff", p.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(
        out.starts_with("Error: diff line 3: hunk -1,3 +1,3 ends early"),
        "{out}"
    );
    let (code, out) = knav(&t, &["diff", "/nonexistent/knav.diff"]);
    assert_eq!(code, 1);
    assert!(
        out.contains("cannot read the diff from /nonexistent/knav.diff"),
        "{out}"
    );
}
