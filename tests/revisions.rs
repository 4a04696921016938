//! Answers at a git revision (`--rev`, MCP `rev`): the answer a checkout of that revision
//! gives, read from git's objects without touching the work tree; named in the answer; an
//! unknown revision or a tree outside git said plainly.

mod common;
use common::git::git;

use std::path::Path;
use std::process::Command;

use common::client::Client;
use common::{json, knav, knav_output, tree, Tree};
use serde_json::{json, Value};

/// Writes `files` under `root` (an empty text removes the file).
fn write(root: &Path, files: &[(&str, &str)]) {
    for (path, text) in files {
        let p = root.join(path);
        if text.is_empty() {
            std::fs::remove_file(&p).unwrap();
        } else {
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, text).unwrap();
        }
    }
}

const V1_A: &str = "int helper(int x)\n{\n\treturn x + 1;\n}\n\nint foo(int a)\n{\n\treturn helper(a);\n}\n\nint gone(void)\n{\n\treturn foo(1);\n}\n";
const V1_B: &str = "int foo(int a);\n\nint mover(void)\n{\n\treturn foo(2);\n}\n";
const V2_A: &str = "int helper(int x)\n{\n\treturn x + 2;\n}\n\nint added(void)\n{\n\treturn 3;\n}\n\n/* foo now calls added too */\nint foo(int a)\n{\n\treturn helper(a) + added();\n}\n";
const V2_B: &str = "int foo(int a);\n";
const V2_C: &str = "int foo(int a);\n\nint mover(void)\n{\n\treturn foo(2);\n}\n";

/// A repository with tags v1 and v2: v2 changes foo, adds `added`, moves `mover` from b.c to
/// c.c and deletes `gone`; then an uncommitted edit adds `wip` to the work tree.
fn repo(name: &str) -> Tree {
    let t = tree(name, &[("lib/a.c", V1_A), ("lib/b.c", V1_B)]);
    git(&t.root, &["init", "-q", "-b", "main"]);
    git(&t.root, &["add", "-A"]);
    git(&t.root, &["commit", "-q", "-m", "one"]);
    git(&t.root, &["tag", "v1"]);
    write(
        &t.root,
        &[("lib/a.c", V2_A), ("lib/b.c", V2_B), ("lib/c.c", V2_C)],
    );
    git(&t.root, &["add", "-A"]);
    git(&t.root, &["commit", "-q", "-m", "two"]);
    git(&t.root, &["tag", "v2"]);
    write(
        &t.root,
        &[("lib/d.c", "int wip(void)\n{\n\treturn foo(4);\n}\n")],
    );
    t
}

/// A checkout of `rev` of `t` in a directory of its own (`git archive`, not a worktree).
fn checkout(t: &Tree, rev: &str, name: &str) -> Tree {
    let c = tree(name, &[] as &[(&str, &str)]);
    let archive = Command::new("git")
        .args(["archive", "--format=tar", rev])
        .current_dir(&t.root)
        .output()
        .unwrap();
    assert!(archive.status.success());
    let mut tar = Command::new("tar")
        .args(["-xf", "-"])
        .current_dir(&c.root)
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    tar.stdin
        .take()
        .unwrap()
        .write_all(&archive.stdout)
        .unwrap();
    assert!(tar.wait().unwrap().success());
    c
}

/// The results of a JSON answer, without what names the tree or the revision.
fn results(v: &Value) -> Value {
    json!({"results": v["results"], "total": v["total"], "error": v["error"]})
}

#[test]
fn answers_at_a_revision_are_those_of_a_checkout_of_it() {
    let t = repo("rev-checkout");
    for rev in ["v1", "v2"] {
        let c = checkout(&t, rev, &format!("rev-checkout-{rev}"));
        let asks: &[&[&str]] = &[
            &["def", "foo"],
            &["def", "mover"],
            &["refs", "foo"],
            &["callers", "foo"],
            &["callees", "foo"],
            &["body", "foo"],
            &["symbols", "lib/a.c"],
            &["grep", "return"],
            &["files", "lib"],
        ];
        for ask in asks {
            let mut at = ask.to_vec();
            at.extend(["--rev", rev]);
            let (code_rev, v_rev) = json(&t, &at);
            let (code_co, v_co) = json(&c, ask);
            assert_eq!(code_rev, code_co, "{ask:?} at {rev}");
            assert_eq!(results(&v_rev), results(&v_co), "{ask:?} at {rev}");
            assert!(
                v_rev["total"].as_u64().unwrap() > 0,
                "{ask:?} at {rev}: {v_rev}"
            );
        }
    }
}

#[test]
fn each_revision_sees_its_own_definitions() {
    let t = repo("rev-own");
    let paths = |args: &[&str]| -> Vec<String> {
        let (_, v) = json(&t, args);
        v["results"]
            .as_array()
            .map(|rs| {
                rs.iter()
                    .map(|r| format!("{}:{}", r["path"].as_str().unwrap(), r["line"]))
                    .collect()
            })
            .unwrap_or_default()
    };
    // Moved: b.c at v1, c.c at v2.
    assert_eq!(paths(&["def", "mover", "--rev", "v1"]), ["lib/b.c:3"]);
    assert_eq!(paths(&["def", "mover", "--rev", "v2"]), ["lib/c.c:3"]);
    // Deleted at v2, added at v2.
    assert_eq!(paths(&["def", "gone", "--rev", "v1"]), ["lib/a.c:11"]);
    assert!(paths(&["def", "gone", "--rev", "v2"]).is_empty());
    assert!(paths(&["def", "added", "--rev", "v1"]).is_empty());
    assert_eq!(paths(&["def", "added", "--rev", "v2"]), ["lib/a.c:6"]);
    // Changed: foo's line moved in a.c.
    assert!(paths(&["def", "foo", "--rev", "v1"]).contains(&"lib/a.c:6".to_string()));
    assert!(paths(&["def", "foo", "--rev", "HEAD"]).contains(&"lib/a.c:12".to_string()));
    // The uncommitted edit is in the work tree only.
    assert_eq!(paths(&["def", "wip"]), ["lib/d.c:1"]);
    assert!(paths(&["def", "wip", "--rev", "HEAD"]).is_empty());
    // The work tree was not touched: the edit is still there, uncommitted.
    let status = Command::new("git")
        .args(["status", "--porcelain"])
        .current_dir(&t.root)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&status.stdout), "?? lib/d.c\n");
}

#[test]
fn a_ref_that_moved_is_answered_at_its_new_commit_not_the_remembered_one() {
    let t = repo("rev-moved");
    let def = |rev: &str, name: &str| -> Vec<String> {
        let (_, v) = json(&t, &["def", name, "--rev", rev]);
        v["results"]
            .as_array()
            .map(|rs| rs.iter().map(|r| r["path"].to_string()).collect())
            .unwrap_or_default()
    };
    git(&t.root, &["branch", "topic", "v1"]);
    assert_eq!(def("topic", "gone"), [r#""lib/a.c""#]);
    // Moved (a loose ref rewritten).
    git(&t.root, &["branch", "-f", "topic", "v2"]);
    assert!(def("topic", "gone").is_empty());
    // Packed, then moved again (a loose ref shadowing the packed one).
    git(&t.root, &["pack-refs", "--all"]);
    assert!(def("topic", "gone").is_empty());
    git(&t.root, &["branch", "-f", "topic", "v1"]);
    assert_eq!(def("topic", "gone"), [r#""lib/a.c""#]);
    // HEAD's branch moved by a commit: HEAD itself is unchanged, its target is not.
    assert!(def("HEAD", "wip").is_empty());
    git(&t.root, &["add", "-A"]);
    git(&t.root, &["commit", "-q", "-m", "wip"]);
    assert_eq!(def("HEAD", "wip"), [r#""lib/d.c""#]);
    assert!(def("HEAD~1", "wip").is_empty());
}

#[test]
fn an_answer_names_its_revision_in_text_and_json() {
    let t = repo("rev-named");
    let commit = Command::new("git")
        .args(["rev-parse", "v1^{commit}"])
        .current_dir(&t.root)
        .output()
        .unwrap();
    let commit = String::from_utf8_lossy(&commit.stdout).trim().to_string();
    let (code, text) = knav(&t, &["def", "foo", "--rev", "v1"]);
    assert_eq!(code, 0);
    assert!(
        text.starts_with(&format!("at v1 ({})\n", &commit[..12])),
        "{text}"
    );
    let (_, v) = json(&t, &["def", "foo", "--rev", "v1"]);
    assert_eq!(v["rev"], json!({"name": "v1", "commit": commit}));
    assert_eq!(v["root"], json!(t.root.display().to_string()));
    // Without --rev, no revision is named.
    let (_, v) = json(&t, &["def", "foo"]);
    assert!(v.get("rev").is_none(), "{v}");
}

#[test]
fn an_unknown_revision_is_an_error_naming_the_nearest_refs_with_exit_2() {
    let t = repo("rev-unknown");
    let (code, out, _) = knav_output(&t, &["def", "foo", "--rev", "v3"]);
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("no revision 'v3' in this repository; nearest refs: v1, v2"),
        "{out}"
    );
    // A name git would take for an option is no revision either.
    let (code, out, _) = knav_output(&t, &["def", "foo", "--rev=--all"]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("no revision '--all'"), "{out}");
}

#[test]
fn rev_outside_a_git_repository_says_so_and_creates_nothing() {
    let t = tree("rev-nogit", &[("a.c", "int foo(void) { return 0; }\n")]);
    let (code, out, _) = knav_output(&t, &["def", "foo", "--rev", "v1"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("is not in a git repository"), "{out}");
    assert!(!t.root.join(".knav").exists());
}

#[test]
fn revisions_share_the_blobs_of_the_files_they_share() {
    let t = repo("rev-blobs");
    assert_eq!(knav(&t, &["index", "--rev", "v1"]).0, 0);
    assert_eq!(knav(&t, &["index", "--rev", "v2"]).0, 0);
    let blobs: usize = std::fs::read_dir(t.root.join(".knav/revs/blobs"))
        .unwrap()
        .flatten()
        .map(|d| std::fs::read_dir(d.path()).unwrap().count())
        .sum();
    // v1: a.c, b.c; v2: a.c and b.c changed, c.c the same bytes as v1's b.c.
    assert_eq!(blobs, 4);
    let (_, v) = json(&t, &["status"]);
    let revs = v["results"]["revisions"]
        .as_array()
        .expect("status lists revisions");
    assert_eq!(revs.len(), 2, "{v}");
}

#[test]
fn mcp_rev_builds_the_revision_on_first_use_then_answers_it() {
    let t = repo("rev-mcp");
    let root = t.root.display().to_string();
    let mut c = Client::start(&["--root", &root], &t.root, &[]);
    let (text, err) = c.call_when_built("find_definition", json!({"symbol": "mover", "rev": "v1"}));
    assert!(!err, "{text}");
    assert!(text.starts_with("at v1 ("), "{text}");
    assert!(text.contains("lib/b.c:3:"), "{text}");
    let (text, err) = c.call_when_built("find_definition", json!({"symbol": "mover"}));
    assert!(!err, "{text}");
    assert!(text.contains("lib/c.c:3:"), "{text}");
    let (text, err) = c.call("find_definition", json!({"symbol": "mover", "rev": "nope"}));
    assert!(err);
    assert!(text.contains("no revision 'nope'"), "{text}");
}

/// compare_versions' JSON results for `args`.
fn compared(t: &Tree, args: &[&str]) -> Value {
    let mut a = vec!["compare"];
    a.extend(args);
    let (code, v) = json(t, &a);
    assert_eq!(code, 0, "{v}");
    v["results"].clone()
}

fn statuses(c: &Value) -> Vec<String> {
    c["definitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            let loc = |s: &Value| {
                if s.is_null() {
                    "-".to_string()
                } else {
                    format!("{}:{}", s["path"].as_str().unwrap(), s["line"])
                }
            };
            format!(
                "{} {} {} {}",
                d["status"].as_str().unwrap(),
                d["a"]["kind"].as_str().or(d["b"]["kind"].as_str()).unwrap(),
                loc(&d["a"]),
                loc(&d["b"])
            )
        })
        .collect()
}

fn callers(list: &Value) -> Vec<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|c| {
            format!(
                "{} {}",
                c["caller"].as_str().unwrap_or("-"),
                c["path"].as_str().unwrap()
            )
        })
        .collect()
}

#[test]
fn compare_pairs_definitions_changed_moved_added_and_removed() {
    let t = repo("rev-compare");
    let foo = compared(&t, &["foo", "v1", "v2"]);
    assert_eq!(
        statuses(&foo),
        [
            "changed function lib/a.c:6 lib/a.c:12",
            "same prototype lib/b.c:1 lib/b.c:1",
            "added prototype - lib/c.c:1"
        ]
    );
    let changed = &foo["definitions"][0];
    assert_eq!(changed["changed"], json!(["body"]));
    let diff = changed["diff"].as_str().unwrap();
    assert!(diff.contains("@@ -6,4 +12,4 @@"), "{diff}");
    assert!(
        diff.contains("-\treturn helper(a);\n+\treturn helper(a) + added();\n"),
        "{diff}"
    );
    // Callers by function and file: gone went, mover moved from b.c to c.c.
    assert_eq!(
        callers(&foo["callers"]["removed"]),
        ["gone lib/a.c", "mover lib/b.c"]
    );
    assert_eq!(callers(&foo["callers"]["added"]), ["mover lib/c.c"]);
    assert_eq!(
        (
            foo["callers"]["a_total"].as_u64(),
            foo["callers"]["b_total"].as_u64()
        ),
        (Some(2), Some(1))
    );
    // Against the working tree, the uncommitted caller is added.
    let now = compared(&t, &["foo", "v2"]);
    assert!(now["b"].is_null());
    assert_eq!(callers(&now["callers"]["added"]), ["wip lib/d.c"]);
    assert_eq!(
        statuses(&compared(&t, &["mover", "v1", "v2"])),
        ["moved function lib/b.c:3 lib/c.c:3"]
    );
    assert_eq!(
        statuses(&compared(&t, &["gone", "v1", "v2"])),
        ["removed function lib/a.c:11 -"]
    );
    assert_eq!(
        statuses(&compared(&t, &["added", "v1", "v2"])),
        ["added function - lib/a.c:6"]
    );
    let (code, text) = knav(&t, &["compare", "foo", "v1", "v2"]);
    assert_eq!(code, 0);
    assert!(text.starts_with("foo: v1 ("), "{text}");
    assert!(
        text.contains("changed  function lib/a.c:6 → lib/a.c:12  changed: body\n"),
        "{text}"
    );
    assert!(
        text.contains("callers: 2 → 1 call sites; 1 callers added, 2 removed\n"),
        "{text}"
    );
}

#[test]
fn compare_of_a_name_in_neither_version_or_at_an_unknown_revision_is_an_error() {
    let t = repo("rev-compare-missing");
    let (code, out) = knav(&t, &["compare", "nothing_here", "v1", "v2"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("no symbol 'nothing_here' in v1 ("), "{out}");
    let (code, out) = knav(&t, &["compare", "foo", "v9"]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("no revision 'v9'"), "{out}");
}

#[test]
fn mcp_compare_versions_answers_after_building_both_revisions() {
    let t = repo("rev-mcp-compare");
    let root = t.root.display().to_string();
    let mut c = Client::start(&["--root", &root], &t.root, &[]);
    let args = json!({"symbol": "mover", "rev_a": "v1", "rev_b": "v2", "format": "json"});
    let (text, err) = c.call_when_built("compare_versions", args);
    assert!(!err, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        statuses(&v["results"]),
        ["moved function lib/b.c:3 lib/c.c:3"]
    );
    assert_eq!(v["root"], json!(root));
}

#[test]
fn diff_of_a_range_reviews_what_git_diff_gives_at_its_second_revision() {
    let t = repo("rev-range");
    let (code, v) = json(&t, &["diff", "v1..v2"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["rev"]["name"], json!("v2"));
    // The same review as of the patch git writes for the range, at v2.
    let patch = Command::new("git")
        .args(["diff", "v1", "v2"])
        .current_dir(&t.root)
        .output()
        .unwrap();
    let file = t.root.join(".knav/range.patch");
    std::fs::write(&file, &patch.stdout).unwrap();
    let (_, w) = json(&t, &["diff", file.to_str().unwrap(), "--rev", "v2"]);
    assert_eq!(results(&v), results(&w));
    let touched = v.to_string();
    for name in ["\"added\"", "\"foo\"", "\"helper\""] {
        assert!(touched.contains(name), "{name} in {v}");
    }
    // A range with --rev, a bad range, an unknown revision.
    let (code, out) = knav(&t, &["diff", "v1..v2", "--rev", "v1"]);
    assert_eq!(code, 2, "{out}");
    let (code, out) = knav(&t, &["diff", "v1..v9"]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("no revision 'v9'"), "{out}");
}

#[test]
fn mcp_review_diff_takes_a_range() {
    let t = repo("rev-mcp-range");
    let root = t.root.display().to_string();
    let mut c = Client::start(&["--root", &root], &t.root, &[]);
    let (text, err) = c.call_when_built("review_diff", json!({"range": "v1..v2"}));
    assert!(!err, "{text}");
    assert!(text.starts_with("at v2 ("), "{text}");
    assert!(text.contains("removed function gone  line 11"), "{text}");
    assert!(text.contains("added function mover  line 3"), "{text}");
    let (text, err) = c.call("review_diff", json!({"range": "v1"}));
    assert!(err);
    assert!(text.contains("is not REV_A..REV_B"), "{text}");
    let (text, err) = c.call("review_diff", json!({}));
    assert!(err);
    assert!(text.contains("'diff' (or 'range') is required"), "{text}");
}

/// `knav history` rows as `CHANGE PATH +A -R [from] [introduced] SUBJECT`.
fn history_rows(t: &Tree, args: &[&str]) -> Vec<String> {
    let mut a = vec!["history"];
    a.extend(args);
    let (code, v) = json(t, &a);
    assert_eq!(code, 0, "{v}");
    v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            format!(
                "{} {} +{} -{}{}{} {}",
                e["change"].as_str().unwrap(),
                e["path"].as_str().unwrap(),
                e["added"],
                e["removed"],
                e["from"]
                    .as_str()
                    .map(|f| format!(" from {f}"))
                    .unwrap_or_default(),
                if e["introduced"] == json!(true) {
                    " introduced"
                } else {
                    ""
                },
                e["subject"].as_str().unwrap()
            )
        })
        .collect()
}

#[test]
fn history_lists_the_commits_that_changed_a_definition_newest_first() {
    let t = repo("rev-history");
    // The definition's lines diffed with its previous text: only foo's return line changed
    // (git's whole-file diff pairs foo's lines with gone's and counts two each way).
    assert_eq!(
        history_rows(&t, &["foo"]),
        [
            "changed lib/a.c +1 -1 two",
            "added lib/a.c +4 -0 introduced one"
        ]
    );
    assert_eq!(
        history_rows(&t, &["helper"]),
        [
            "changed lib/a.c +1 -1 two",
            "added lib/a.c +4 -0 introduced one"
        ]
    );
    assert_eq!(
        history_rows(&t, &["gone"]),
        [
            "removed lib/a.c +0 -4 two",
            "added lib/a.c +4 -0 introduced one"
        ]
    );
    // A move with its text unchanged is one entry, not a change; --file follows it.
    assert_eq!(
        history_rows(&t, &["mover"]),
        [
            "moved lib/c.c +0 -0 from lib/b.c two",
            "added lib/b.c +4 -0 introduced one"
        ]
    );
    assert_eq!(
        history_rows(&t, &["mover", "--file", "lib/c.c"]),
        [
            "moved lib/c.c +0 -0 from lib/b.c two",
            "added lib/b.c +4 -0 introduced one"
        ]
    );
    // --rev bounds the commits.
    assert_eq!(
        history_rows(&t, &["foo", "--rev", "v1..v2"]),
        ["changed lib/a.c +1 -1 two"]
    );
    assert_eq!(
        history_rows(&t, &["foo", "--rev", "v1"]),
        ["added lib/a.c +4 -0 introduced one"]
    );
    let (code, text) = knav(&t, &["history", "mover"]);
    assert_eq!(code, 0);
    assert!(text.contains("moved lib/b.c → lib/c.c  two\n"), "{text}");
    assert!(
        text.contains("added lib/b.c (4 lines)  one  [introduced]\n"),
        "{text}"
    );
    let (code, text) = knav(&t, &["history", "nothing_here"]);
    assert_eq!(code, 1);
    assert!(text.contains("no commit of the 2 in the history"), "{text}");
}

#[test]
fn the_history_index_grows_by_the_new_commits_only() {
    let t = repo("rev-history-grow");
    let (code, out) = knav(&t, &["index", "--history"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("history: 2 commits read now, 2 in all"),
        "{out}"
    );
    write(&t.root, &[("lib/a.c", &V2_A.replace("x + 2", "x + 3"))]);
    git(&t.root, &["commit", "-q", "-a", "-m", "three"]);
    let (_, out) = knav(&t, &["index", "--history"]);
    assert!(
        out.contains("history: 1 commits read now, 3 in all"),
        "{out}"
    );
    let (_, out) = knav(&t, &["index", "--history"]);
    assert!(
        out.contains("history: 0 commits read now, 3 in all"),
        "{out}"
    );
    // A query reads a new commit before answering.
    write(&t.root, &[("lib/a.c", &V2_A.replace("x + 2", "x + 4"))]);
    git(&t.root, &["commit", "-q", "-a", "-m", "four"]);
    assert_eq!(
        history_rows(&t, &["helper"])[..2],
        ["changed lib/a.c +1 -1 four", "changed lib/a.c +1 -1 three"]
    );
}

#[test]
fn mcp_symbol_history_answers_from_the_history_index() {
    let t = repo("rev-mcp-history");
    let root = t.root.display().to_string();
    let mut c = Client::start(&["--root", &root], &t.root, &[]);
    // The first call starts the history's build in the background and says so.
    let (text, err) = c.call("symbol_history", json!({"symbol": "mover"}));
    assert!(
        err && text.contains("Reading the git history of "),
        "{text}"
    );
    let (text, err) = c.call_when_built("symbol_history", json!({"symbol": "mover"}));
    assert!(!err, "{text}");
    assert!(text.contains("moved lib/b.c → lib/c.c  two"), "{text}");
    let (text, err) = c.call("symbol_history", json!({"symbol": "foo", "rev": "v1..v2"}));
    assert!(!err, "{text}");
    assert_eq!(
        text.lines().filter(|l| l.contains(" two")).count(),
        1,
        "{text}"
    );
    assert!(!text.contains(" one"), "{text}");
}

#[test]
fn a_history_tip_rewritten_away_and_collected_does_not_break_the_next_build() {
    let t = repo("rev-history-gone-tip");
    assert_eq!(knav(&t, &["index", "--history"]).0, 0);
    // Rewrite the tip the history read, and let git forget it.
    git(&t.root, &["reset", "-q", "--hard", "v1"]);
    git(&t.root, &["tag", "-d", "v2"]);
    write(
        &t.root,
        &[(
            "lib/b.c",
            "int foo(int a);\n\nint other(void)\n{\n\treturn 5;\n}\n",
        )],
    );
    git(&t.root, &["commit", "-q", "-a", "-m", "rewritten"]);
    git(&t.root, &["reflog", "expire", "--expire=now", "--all"]);
    git(&t.root, &["gc", "-q", "--prune=now"]);
    let (code, out) = knav(&t, &["index", "--history"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        history_rows(&t, &["other"]),
        ["added lib/b.c +4 -0 introduced rewritten"]
    );
}

#[test]
fn history_of_a_range_reads_the_commits_of_its_end_not_head() {
    let t = repo("rev-history-range-end");
    git(&t.root, &["checkout", "-q", "-b", "side", "v1"]);
    write(&t.root, &[("lib/a.c", &V1_A.replace("x + 1", "x + 9"))]);
    git(&t.root, &["commit", "-q", "-a", "-m", "side change"]);
    git(&t.root, &["checkout", "-q", "main"]);
    assert_eq!(
        history_rows(&t, &["helper", "--rev", "v1..side"]),
        ["changed lib/a.c +1 -1 side change"]
    );
}

#[test]
fn a_history_updated_after_every_commit_stays_a_few_segments_and_answers_the_same() {
    let t = repo("rev-history-segments");
    assert_eq!(knav(&t, &["index", "--history"]).0, 0);
    for k in 3..15 {
        write(
            &t.root,
            &[("lib/a.c", &V2_A.replace("x + 2", &format!("x + {k}")))],
        );
        git(&t.root, &["commit", "-q", "-a", "-m", &format!("c{k}")]);
        assert_eq!(knav(&t, &["index", "--history"]).0, 0);
    }
    let segments = || {
        std::fs::read_dir(t.root.join(".knav/history"))
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("seg-"))
            .count()
    };
    // Merged ones are removed by the next update.
    assert_eq!(knav(&t, &["index", "--history"]).0, 0);
    assert!(segments() <= 8, "{} segments", segments());
    let updated = history_rows(&t, &["helper"]);
    assert_eq!(updated.len(), 14, "{updated:?}");
    // The same as a history read in one go.
    let (code, out, _) = knav_output(
        &t,
        &[
            "index",
            "--history",
            "--index-dir",
            &t.root.join("fresh").display().to_string(),
        ],
    );
    assert_eq!(code, 0, "{out}");
    let (_, v) = json(
        &t,
        &[
            "history",
            "helper",
            "--index-dir",
            &t.root.join("fresh").display().to_string(),
        ],
    );
    assert_eq!(v["results"], json(&t, &["history", "helper"]).1["results"]);
}
