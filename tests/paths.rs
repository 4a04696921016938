//! File and directory names of any bytes are indexed, and shown escaped: a name that is not
//! UTF-8 as `\xNN` per byte, a backslash doubled.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::ffi::OsStrExt;
use std::process::{Command, Stdio};

use serde_json::{json, Value};

mod common;
use common::{json, knav, tree, Tree};

/// The file `d\xfe/caf\xff.c` (both names not UTF-8), which defines `helper` and `bad`.
const ODD: &[u8] = b"d\xfe/caf\xff.c";
/// How knav shows it.
const ODD_SHOWN: &str = r"d\xfe/caf\xff.c";

const ODD_TEXT: &str =
    "int helper(int x)\n{\n\treturn x + 1;\n}\n\nint bad(int y)\n{\n\treturn helper(y) * 2;\n}\n";

/// A tree with `ok.c` calling `bad`, and `bad` in [`ODD`].
fn odd_tree(name: &str) -> Tree {
    let t = tree(
        name,
        &[(
            "ok.c",
            "int bad(int y);\nint main(void)\n{\n\treturn bad(3);\n}\n",
        )],
    );
    let odd = t.root.join(OsStr::from_bytes(ODD));
    std::fs::create_dir_all(odd.parent().unwrap()).unwrap();
    std::fs::write(&odd, ODD_TEXT).unwrap();
    t
}

/// `(path:line)` of every result.
fn locs(v: &Value) -> Vec<String> {
    v["results"]
        .as_array()
        .unwrap_or_else(|| panic!("no results: {v}"))
        .iter()
        .map(|r| format!("{}:{}", r["path"].as_str().unwrap(), r["line"]))
        .collect()
}

/// stdout of `knav ARGS --root TREE` with raw-byte arguments and the environment `env`.
fn knav_os(t: &Tree, args: &[&OsStr], env: &[(&str, &str)]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_knav"))
        .args(args)
        .arg("--root")
        .arg(&t.root)
        .env_remove("KNAV_INDEX_DIR")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "knav {args:?}: {stderr}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn names_that_are_not_utf8_are_indexed_not_skipped() {
    let t = odd_tree("paths-odd");
    let out = knav(&t, &["index"]).1;
    assert!(out.starts_with("index full: 2 C files indexed;"), "{out}");
    assert!(!out.contains("skipped"), "{out}");
    let (code, v) = json(&t, &["def", "bad"]);
    assert_eq!(code, 0);
    assert_eq!(locs(&v), [format!("{ODD_SHOWN}:6"), "ok.c:1".into()]);
    assert_eq!(v["results"][0]["signature"], "(int y)");
    let (_, v) = json(&t, &["refs", "helper"]);
    assert_eq!(
        locs(&v),
        [format!("{ODD_SHOWN}:1"), format!("{ODD_SHOWN}:8")]
    );
    let (_, v) = json(&t, &["callers", "helper"]);
    assert_eq!(locs(&v), [format!("{ODD_SHOWN}:8")]);
    assert_eq!(v["results"][0]["caller"], "bad");
    let (_, v) = json(&t, &["callers", "bad"]);
    assert_eq!(locs(&v), ["ok.c:4"]);
    let (_, v) = json(&t, &["body", "bad"]);
    assert_eq!(
        v["results"][0]["body"],
        "int bad(int y)\n{\n\treturn helper(y) * 2;\n}"
    );
    // The text form shows the escaped path too.
    let (_, text) = knav(&t, &["def", "helper"]);
    assert!(
        text.contains(&format!("\n{ODD_SHOWN}:1: int helper(int x)  [function]\n")),
        "{text}"
    );
    // The file is named as shown, or by its bytes (a shell's completion).
    let (_, v) = json(&t, &["symbols", ODD_SHOWN]);
    assert_eq!(
        locs(&v),
        [format!("{ODD_SHOWN}:1"), format!("{ODD_SHOWN}:6")]
    );
    let raw = knav_os(
        &t,
        &[
            "symbols".as_ref(),
            OsStr::from_bytes(ODD),
            "--format".as_ref(),
            "json".as_ref(),
        ],
        &[],
    );
    assert_eq!(serde_json::from_str::<Value>(&raw).unwrap(), v);
    let raw = knav_os(
        &t,
        &[
            "refs".as_ref(),
            "helper".as_ref(),
            "--path-prefix".as_ref(),
            OsStr::from_bytes(b"d\xfe/"),
        ],
        &[],
    );
    assert!(
        raw.contains(&format!("{ODD_SHOWN}:8: return helper(y) * 2;  [call]")),
        "{raw}"
    );
}

#[test]
fn ctags_reading_the_tree_itself_finds_definitions_in_a_file_whose_name_is_not_utf8() {
    // Without scratch space ctags is given the tree's own paths rather than copies.
    let t = odd_tree("paths-odd-no-scratch");
    let out = knav_os(&t, &["index".as_ref()], &[("KNAV_SCRATCH_DIR", "")]);
    assert!(out.contains("2 C files indexed;"), "{out}");
    let (_, v) = json(&t, &["def", "helper"]);
    assert_eq!(locs(&v), [format!("{ODD_SHOWN}:1")]);
    assert_eq!(v["results"][0]["kind"], "function");
}

#[test]
fn an_edited_or_deleted_file_whose_name_is_not_utf8_is_indexed_again() {
    let t = odd_tree("paths-odd-edit");
    knav(&t, &["index"]);
    let odd = t.root.join(OsStr::from_bytes(ODD));
    std::fs::write(&odd, ODD_TEXT.replace("bad", "worse")).unwrap();
    let out = knav(&t, &["index"]).1;
    assert!(
        out.starts_with("index incremental: 2 C files indexed; 1 changed, 0 added, 0 deleted"),
        "{out}"
    );
    let (_, v) = json(&t, &["def", "worse"]);
    assert_eq!(locs(&v), [format!("{ODD_SHOWN}:6")]);
    let (_, v) = json(&t, &["def", "bad"]);
    assert_eq!(locs(&v), ["ok.c:1"]);
    std::fs::remove_file(&odd).unwrap();
    let out = knav(&t, &["index"]).1;
    assert!(
        out.contains("1 C files indexed; 0 changed, 0 added, 1 deleted"),
        "{out}"
    );
    let (code, _) = json(&t, &["def", "worse"]);
    assert_eq!(code, 1);
    // Nothing changed: the walk cache holds the escaped names as they are.
    let out = knav(&t, &["index"]).1;
    assert!(
        out.starts_with("index unchanged: 1 C files indexed"),
        "{out}"
    );
}

#[test]
fn a_backslash_in_a_name_is_doubled_and_the_name_can_be_typed_either_way() {
    let t = tree(
        "paths-backslash",
        &[
            (r"back\slash.c", "int bs(void) { return 1; }\n"),
            // Would be taken for the escape of `a\xff.c` if backslashes were not doubled.
            (r"a\xff.c", "int literal(void) { return 2; }\n"),
        ],
    );
    std::fs::write(
        t.root.join(OsStr::from_bytes(b"a\xff.c")),
        "int byte(void) { return 3; }\n",
    )
    .unwrap();
    let (_, v) = json(&t, &["def", "bs"]);
    assert_eq!(locs(&v), [r"back\\slash.c:1"]);
    let (_, v) = json(&t, &["def", "literal"]);
    assert_eq!(locs(&v), [r"a\\xff.c:1"]);
    let (_, v) = json(&t, &["def", "byte"]);
    assert_eq!(locs(&v), [r"a\xff.c:1"]);
    for typed in [r"back\slash.c", r"back\\slash.c"] {
        let (code, v) = json(&t, &["symbols", typed]);
        assert_eq!(code, 0, "{typed}: {v}");
        assert_eq!(locs(&v), [r"back\\slash.c:1"], "{typed}");
    }
}

#[test]
fn a_name_with_a_newline_is_shown_escaped_and_its_definitions_are_its_own() {
    // Listed to ctags, `a\nb.c` was read as `a` and `b.c`: b.c's definitions came twice.
    let t = tree(
        "paths-newline",
        &[
            ("a\nb.c", "int nl(void) { return 0; }\n"),
            ("b.c", "int bee(void) { return 0; }\n"),
        ],
    );
    let (_, v) = json(&t, &["def", "bee"]);
    assert_eq!(locs(&v), ["b.c:1"]);
    let (_, v) = json(&t, &["def", "nl"]);
    assert_eq!(locs(&v), [r"a\x0ab.c:1"]);
    assert_eq!(v["results"][0]["kind"], "function");
    let (_, text) = knav(&t, &["symbols", "a\nb.c"]);
    assert_eq!(
        text,
        "a\\x0ab.c:1: int nl(void) { return 0; }  [function]\nnext: knav body nl, knav refs nl\n"
    );
}

/// An MCP session with `knav serve --root TREE`: calls answered one at a time.
struct Mcp {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    lines: std::io::Lines<BufReader<std::process::ChildStdout>>,
    id: u64,
}

impl Mcp {
    fn start(t: &Tree) -> Mcp {
        let mut child = Command::new(env!("CARGO_BIN_EXE_knav"))
            .arg("serve")
            .arg("--root")
            .arg(&t.root)
            .env_remove("KNAV_INDEX_DIR")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut m = Mcp {
            child,
            stdin,
            lines,
            id: 0,
        };
        m.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "knav-test", "version": "1"}}),
        );
        m.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        m
    }

    fn send(&mut self, msg: &Value) {
        writeln!(self.stdin, "{msg}").unwrap();
        self.stdin.flush().unwrap();
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.id += 1;
        let id = self.id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let line = self.lines.next().expect("the server answers").unwrap();
            let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
            if v["id"] == id {
                return v;
            }
        }
    }

    /// The answer's envelope (JSON format) of tool `tool`, once the first build is done.
    fn call(&mut self, tool: &str, mut args: Value) -> Value {
        args["format"] = json!("json");
        for _ in 0..600 {
            let v = self.request("tools/call", json!({"name": tool, "arguments": args}));
            let text = v["result"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .to_string();
            if !text.contains("Retry this call shortly") {
                return serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        panic!("the first build never finished");
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn mcp_answers_for_a_file_whose_name_is_not_utf8_and_sees_its_edit() {
    let t = odd_tree("paths-odd-mcp");
    std::fs::write(t.root.join(".knav.toml"), "[serve]\ndebounce_s = 0\n").unwrap();
    let mut m = Mcp::start(&t);
    let v = m.call("find_definition", json!({"symbol": "bad"}));
    assert_eq!(locs(&v), [format!("{ODD_SHOWN}:6"), "ok.c:1".into()]);
    let v = m.call("find_callers", json!({"symbol": "helper"}));
    assert_eq!(locs(&v), [format!("{ODD_SHOWN}:8")]);
    let v = m.call(
        "find_references",
        json!({"symbol": "helper", "path_prefix": r"d\xfe/"}),
    );
    assert_eq!(
        locs(&v),
        [format!("{ODD_SHOWN}:1"), format!("{ODD_SHOWN}:8")]
    );
    let v = m.call("get_symbol_body", json!({"symbol": "helper"}));
    assert_eq!(
        v["results"][0]["body"],
        "int helper(int x)\n{\n\treturn x + 1;\n}"
    );
    let v = m.call("list_file_symbols", json!({"file_path": ODD_SHOWN}));
    assert_eq!(
        locs(&v),
        [format!("{ODD_SHOWN}:1"), format!("{ODD_SHOWN}:6")]
    );
    // The server's refresh (its walk and its directory watches) sees an edit of the file.
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(
        t.root.join(OsStr::from_bytes(ODD)),
        ODD_TEXT.replace("helper", "helps"),
    )
    .unwrap();
    let v = m.call("find_definition", json!({"symbol": "helps"}));
    assert_eq!(locs(&v), [format!("{ODD_SHOWN}:1")]);
}
