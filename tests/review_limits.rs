//! review_diff's bounds (issue 28, finding 6) and the stdio transport's parse errors (finding
//! 7): a diff past its files or hunks is refused while it is read; `limit`/`offset` page the
//! whole answer (hunks, files without hunks, definitions) with the totals of every page; a
//! rename shows both its paths; a path that leaves the root is refused as such, for its file
//! alone; a hunk header's line number past `u32::MAX / 2` is refused, not an overflow; a line that is not UTF-8 or has a lone surrogate escape is a parse error with its id.

mod common;

use common::client::Client;
use common::{fixture, index_with_cli, json, knav, Tree};
use serde_json::{json, Value};

/// `text` written beside the tree `t` (not in it: it would be indexed), as `ROOT-NAME.diff`.
fn diff_file(t: &Tree, name: &str, text: &str) -> String {
    let p = t.root.with_file_name(format!(
        "{}-{name}.diff",
        t.root.file_name().unwrap().to_string_lossy()
    ));
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

/// `n` files of one hunk each that the tree does not have (`diff -u`'s form, five lines each).
fn one_hunk_files(n: usize) -> String {
    (0..n)
        .map(|i| format!("--- a/gone/{i}.c\n+++ b/gone/{i}.c\n@@ -1 +1 @@\n-x\n+y\n"))
        .collect()
}

#[test]
fn a_diff_past_50000_hunks_is_refused_naming_the_limit() {
    let t = fixture("review-hunks");
    let mut d = String::from("--- a/fs/read_write.c\n+++ b/fs/read_write.c\n");
    d.push_str(&"@@ -1 +1 @@\n-x\n+y\n".repeat(knav::diff::MAX_DIFF_HUNKS + 1));
    let p = diff_file(&t, "hunks", &d);
    let (code, out) = knav(&t, &["diff", &p]);
    assert_eq!(code, 1, "{out}");
    assert_eq!(
        out,
        "Error: the diff has more than 50000 hunks (the most knav diff reads; diff line 150003 \
         starts one more): split the patch (one commit or one directory at a time) and review each \
         part\nnext: knav diff\n"
    );
    let _ = std::fs::remove_file(&p);
}

#[test]
fn a_diff_past_10000_files_is_refused_naming_the_limit() {
    let t = fixture("review-files");
    let p = diff_file(&t, "files", &one_hunk_files(knav::diff::MAX_DIFF_FILES + 1));
    let (code, v) = json(&t, &["diff", &p]);
    assert_eq!(code, 1, "{v}");
    assert_eq!(
        v["error"],
        "the diff has more than 10000 files (the most review_diff reads; diff line 50001 starts \
         one more): split the patch (one commit or one directory at a time) and review each part"
    );
    assert!(v.get("results").is_none(), "{v}");
    let _ = std::fs::remove_file(&p);
}

#[test]
fn a_hunk_header_past_u32_max_over_2_is_refused_not_an_overflow() {
    let t = fixture("review-overflow");
    // main panicked "attempt to add with overflow" (a release build wrapped to line 0).
    for (side, header, line) in [
        ("old", "@@ -4294967295,0 +1,1 @@", "+int x;"),
        ("new", "@@ -1,1 +4294967295,0 @@", "-int x;"),
        ("count", "@@ -1,2147483648 +1,1 @@", " int x;"),
    ] {
        let text = format!("--- a/fs/read_write.c\n+++ b/fs/read_write.c\n{header}\n{line}\n");
        let p = diff_file(&t, side, &text);
        let (code, v) = json(&t, &["diff", &p]);
        assert_eq!(code, 1, "{side}: {v}");
        let e = v["error"].as_str().unwrap_or_default();
        assert!(
            e.starts_with(&format!("diff line 3: hunk header {header:?} has ")),
            "{side}: {v}"
        );
        assert!(
            e.contains("past 2147483647: no file has that many lines"),
            "{e}"
        );
        let _ = std::fs::remove_file(&p);
    }
}

#[test]
fn limit_5_of_2000_one_hunk_files_answers_five_rows_and_the_totals_not_every_file() {
    let t = fixture("review-many");
    let p = diff_file(&t, "many", &one_hunk_files(2000));
    let (code, out) = knav(&t, &["diff", &p, "--limit", "5", "--format", "json"]);
    assert_eq!(code, 0, "{out}");
    // Every file was listed, whatever the limit: 2000 entries, some 300 KB.
    assert!(out.len() < 3000, "{} bytes: {out}", out.len());
    let v: Value = serde_json::from_str(&out).unwrap();
    let r = &v["results"];
    let paths: Vec<&str> = r["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        ["gone/0.c", "gone/1.c", "gone/2.c", "gone/3.c", "gone/4.c"]
    );
    assert_eq!(
        r["files"][4],
        json!({"path": "gone/4.c", "old_path": null, "status": "modified", "binary": false,
               "subsystem": "THE REST", "hunks_total": 1, "error": null,
               "hunks": [{"hunk": "-1,1 +1,1", "applies": "no", "offset": 0,
                          "note": "gone/4.c is not in the tree"}]})
    );
    assert_eq!(
        (
            &r["files_total"],
            &r["hunks"],
            &r["hunks_not_applied"],
            &r["definitions_total"]
        ),
        (&json!(2000), &json!(2000), &json!(2000), &json!(0))
    );
    assert_eq!(
        (&v["total"], &v["truncated"], &v["limit"]),
        (&json!(2000), &json!(true), &json!(5))
    );
    // The last page: two rows.
    let (_, out) = knav(&t, &["diff", &p, "--limit", "5", "--offset", "1998"]);
    assert_eq!(
        out,
        "2000 files, 2000 hunks (2000 do not apply) · 0 definitions touched\n\
         modified gone/1998.c  [THE REST]\n\
         \x20 @@ -1,1 +1,1 @@ no: gone/1998.c is not in the tree\n\
         modified gone/1999.c  [THE REST]\n\
         \x20 @@ -1,1 +1,1 @@ no: gone/1999.c is not in the tree\n\
         cut: this page has 2 of 2000 hunks and 0 of 0 definitions, in 2 of 2000 files\n\
         [1999-2000 of 2000]\n\
         warning: 2000 of 2000 hunks do not apply to the indexed tree: their definitions are not listed\n"
    );
    let _ = std::fs::remove_file(&p);
}

#[test]
fn a_page_cut_between_a_hunk_and_its_definitions_shows_them_under_that_hunk() {
    let t = fixture("review-page");
    let p = diff_file(&t, "page", common::PATCH);
    // Rows 4-6: ksys_read and kernel_read_all (their hunk was row 3), then fs.h's first hunk.
    let (code, out) = knav(&t, &["diff", &p, "--limit", "3", "--offset", "3"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        out,
        "3 files, 5 hunks (1 do not apply) · 5 definitions touched\n\
         modified fs/read_write.c  [FILESYSTEMS (VFS and infrastructure)]\n\
         \x20 @@ -32,10 +32,18 @@ (on an earlier page)\n\
         \x20   modified function ksys_read  line 35  [2 callers; FILESYSTEMS (VFS and infrastructure)]\n\
         \x20   added function kernel_read_all  line 35  [0 callers; FILESYSTEMS (VFS and infrastructure)]\n\
         modified include/linux/fs.h  [FILESYSTEMS (VFS and infrastructure)]\n\
         \x20 @@ -9,6 +9,7 @@ yes\n\
         cut: this page has 1 of 5 hunks and 2 of 5 definitions, in 2 of 3 files\n\
         [4-6 of 10 · --offset 6 for more]\n\
         warning: 1 of 5 hunks do not apply to the indexed tree: their definitions are not listed\n\
         next: knav body ksys_read, knav callers ksys_read, knav impact ksys_read\n"
    );
    let (_, v) = json(&t, &["diff", &p, "--limit", "3", "--offset", "3"]);
    let r = &v["results"];
    assert_eq!(r["files"][0]["hunks"], json!([]));
    assert_eq!(r["files"][0]["hunks_total"], 2);
    assert_eq!(r["files"][1]["hunks"][0]["hunk"], "-9,6 +9,7");
    let names: Vec<&str> = r["definitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["symbol"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["ksys_read", "kernel_read_all"]);
    assert_eq!(
        (
            &r["files_total"],
            &r["hunks"],
            &r["definitions_total"],
            &v["total"]
        ),
        (&json!(3), &json!(5), &json!(5), &json!(10))
    );
    let _ = std::fs::remove_file(&p);
}

/// Renames of fs/read_write.c: one in the tree, one out of the root.
const RENAMES: &str = "\
diff --git a/fs/read_write.c b/fs/rw.c
similarity index 98%
rename from fs/read_write.c
rename to fs/rw.c
--- a/fs/read_write.c
+++ b/fs/rw.c
@@ -8,3 +8,3 @@
 static int check_count(size_t count)
 {
-\treturn count > MAX_RW_COUNT ? -22 : 0;
+\treturn count > MAX_RW_COUNT ? -75 : 0;
diff --git a/fs/read_write.c b/../../outside/evil.c
similarity index 100%
rename from fs/read_write.c
rename to ../../outside/evil.c
";

#[test]
fn a_rename_shows_both_paths_and_one_out_of_the_root_is_refused() {
    let t = fixture("review-rename");
    let p = diff_file(&t, "rename", RENAMES);
    let (code, out) = knav(&t, &["diff", &p]);
    assert_eq!(code, 0, "{out}");
    // Both printed `renamed fs/read_write.c (from fs/read_write.c)`.
    assert_eq!(
        out,
        "2 files, 1 hunks · 1 definitions touched\n\
         renamed fs/rw.c (from fs/read_write.c)  [FILESYSTEMS (VFS and infrastructure)]\n\
         \x20 @@ -8,3 +8,3 @@ yes\n\
         \x20   modified function check_count  line 8  [1 callers; FILESYSTEMS (VFS and infrastructure)]\n\
         renamed ../../outside/evil.c (from fs/read_write.c)\n\
         \x20 not reviewed: '../../outside/evil.c' leaves the root; fix the patch's paths (relative to the tree's root, as git diff writes them)\n\
         warning: not reviewed: '../../outside/evil.c' leaves the root; fix the patch's paths (relative to the tree's root, as git diff writes them)\n\
         next: knav body check_count, knav callers check_count, knav impact check_count\n"
    );
    let (_, v) = json(&t, &["diff", &p]);
    let f = &v["results"]["files"];
    assert_eq!(
        (&f[0]["path"], &f[0]["old_path"], &f[0]["status"]),
        (
            &json!("fs/rw.c"),
            &json!("fs/read_write.c"),
            &json!("renamed")
        )
    );
    assert_eq!(
        (&f[1]["path"], &f[1]["old_path"], &f[1]["hunks_total"]),
        (
            &json!("../../outside/evil.c"),
            &json!("fs/read_write.c"),
            &json!(0)
        )
    );
    // The definition is where the tree has it: the old path, until the patch is applied.
    assert_eq!(v["results"]["definitions"][0]["path"], "fs/read_write.c");
    let _ = std::fs::remove_file(&p);
}

#[test]
fn paths_that_leave_the_root_are_refused_not_changed_since_indexing() {
    let t = fixture("review-escape");
    let root = t.root.display().to_string();
    let d = format!(
        "--- a/../../etc/passwd\n+++ b/../../etc/passwd\n@@ -1 +1 @@\n-root:x:0:0\n+root::0:0\n\
         --- /etc/shadow\n+++ /etc/shadow\n@@ -1 +1 @@\n-a\n+b\n\
         --- a/fs/../../x.c\n+++ b/fs/../../x.c\n@@ -1 +1 @@\n-a\n+b\n\
         --- {root}/fs/read_write.c\n+++ {root}/fs/read_write.c\n@@ -8,3 +8,3 @@\n \
         static int check_count(size_t count)\n {{\n-\treturn count > MAX_RW_COUNT ? -22 : 0;\n\
         +\treturn count > MAX_RW_COUNT ? -75 : 0;\n"
    );
    let p = diff_file(&t, "escape", &d);
    let (code, v) = json(&t, &["diff", &p]);
    assert_eq!(code, 0, "{v}");
    let r = &v["results"];
    let errors: Vec<&Value> = r["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| &f["error"])
        .collect();
    let leaves = |p: &str| {
        json!(format!(
            "'{p}' leaves the root; fix the patch's paths (relative to the tree's root, as git \
             diff writes them)"
        ))
    };
    assert_eq!(
        errors,
        [
            &leaves("../../etc/passwd"),
            &leaves("/etc/shadow"),
            &leaves("fs/../../x.c"),
            &Value::Null
        ]
    );
    // The file inside the root, named by its absolute path, is reviewed as the others are.
    assert_eq!(r["files"][3]["path"], "fs/read_write.c");
    assert_eq!(r["definitions"][0]["symbol"], "check_count");
    assert_eq!(
        (&r["hunks"], &r["hunks_not_applied"]),
        (&json!(4), &json!(0))
    );
    // One warning, and not "… changed since indexing … run `knav index`".
    assert_eq!(
        v["warning"],
        "not reviewed: '../../etc/passwd' leaves the root; fix the patch's paths (relative to the \
         tree's root, as git diff writes them) (and 2 more files)"
    );
    let _ = std::fs::remove_file(&p);
}

/// The replies of `knav serve` on `t` (indexed first, so that no call waits for a build) to
/// `lines`, sent after the handshake, until it has answered `n` of them.
fn served_replies(t: &Tree, lines: &[&[u8]], n: usize) -> Vec<Value> {
    index_with_cli(&t.root);
    let root = t.root.display().to_string();
    let mut c = Client::start(&["--root", &root], &t.root, &[]);
    for l in lines {
        c.write_bytes(l);
    }
    (0..n).map(|_| c.next_reply()).collect()
}

#[test]
fn a_lone_surrogate_or_a_0xff_byte_is_a_parse_error_with_its_id_not_nesting() {
    let t = fixture("review-wire");
    let surrogate = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"review_diff","arguments":{"diff":"\ud800"}}}"#;
    let mut raw = br#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"review_diff","arguments":{"diff":""#.to_vec();
    let at = raw.len();
    raw.extend_from_slice(b"\xff\"}}}");
    // Both were "-32600 Invalid Request: the message is nested more than 128 levels deep".
    // The column after the escape, where serde_json finds the pair's second half missing.
    let column = surrogate.windows(6).position(|w| w == br"\ud800").unwrap() + 7;
    let replies = served_replies(&t, &[surrogate, &raw], 2);
    assert_eq!(
        replies[0],
        json!({"jsonrpc": "2.0", "id": 7, "error": {"code": -32700,
               "message": format!("Parse error: a \\u escape that is not a character (a UTF-16 \
                                   surrogate must come in a pair): unexpected end of hex escape \
                                   at line 1 column {column}")}})
    );
    assert_eq!(
        replies[1],
        json!({"jsonrpc": "2.0", "id": 8, "error": {"code": -32700,
               "message": format!("Parse error: the message is not UTF-8: byte {at} is 0xff; \
                                   send JSON text as UTF-8")}})
    );
}

#[test]
fn review_diff_over_the_wire_is_paged_and_refused_past_its_limits() {
    let t = fixture("review-wire-page");
    let call = |id: u64, args: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": "review_diff", "arguments": args}})
        .to_string()
    };
    let page = call(
        1,
        json!({"diff": one_hunk_files(2000), "limit": 5, "format": "json"}),
    );
    let past = call(
        2,
        json!({"diff": one_hunk_files(knav::diff::MAX_DIFF_FILES + 1)}),
    );
    let replies = served_replies(&t, &[page.as_bytes(), past.as_bytes()], 2);
    let text = |v: &Value| {
        v["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("not a tool result: {v}"))
            .to_string()
    };
    let first = replies.iter().find(|v| v["id"] == 1).unwrap();
    let answer: Value = serde_json::from_str(&text(first)).unwrap();
    assert_eq!(answer["results"]["files"].as_array().unwrap().len(), 5);
    assert_eq!(
        (&answer["results"]["files_total"], &answer["total"]),
        (&json!(2000), &json!(2000))
    );
    let second = replies.iter().find(|v| v["id"] == 2).unwrap();
    assert_eq!(second["result"]["isError"], true, "{second}");
    assert!(
        text(second).starts_with("Error: the diff has more than 10000 files"),
        "{second}"
    );
}
