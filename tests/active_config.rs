//! End-to-end tests of `--active-config` on hostile input: `#if` expressions and config files
//! that once crashed or hung knav. Each test indexes its own copy of the fixture tree.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

mod common;
use common::{fixture, knav_output as knav, Tree};

/// The answer of `knav ARGS --format json` on `tree`, which must succeed.
fn json(tree: &Tree, args: &[&str]) -> Value {
    let (code, v) = common::json(tree, args);
    assert_eq!(code, 0, "knav {args:?} exited {code}: {v}");
    v
}

#[test]
fn deeply_nested_parentheses_do_not_overflow_the_stack() {
    let t = fixture("deep-if");
    let deep = |n: usize| format!("{}CONFIG_X86{}", "(".repeat(n), ")".repeat(n));
    let bangs = format!("{}CONFIG_X86", "!".repeat(4_000));
    let huge_bangs = format!("{}CONFIG_X86", "!".repeat(100_000));
    let text = format!(
        "#if {}\nint deep_parens(void) {{ return 0; }}\n#endif\n\
         #if {bangs}\nint many_bangs(void) {{ return 0; }}\n#endif\n\
         #if {huge_bangs}\nint huge_bangs(void) {{ return 0; }}\n#endif\n\
         #if {}\nint shallow_parens(void) {{ return 0; }}\n#endif\n",
        deep(8_000),
        deep(3)
    );
    std::fs::write(t.root.join("include/linux/deep.h"), text).unwrap();
    let active = |name: &str| {
        let v = json(&t, &["def", name, "--active-config", "CONFIG_X86=y"]);
        assert_eq!(v["definition_count"], 1, "{v}");
        v["results"][0]["active"].clone()
    };
    // Too deep to evaluate: unknown, not a crash.
    assert_eq!(active("deep_parens"), Value::Null);
    // An even count of `!` over a set symbol: true, evaluated without recursion.
    assert_eq!(active("many_bangs"), Value::Bool(true));
    // A 100 KB condition is cut when indexed (the scanner's 4 KB bound): unknown, not a crash.
    assert_eq!(active("huge_bangs"), Value::Null);
    assert_eq!(active("shallow_parens"), Value::Bool(true));
}

/// The JSON answers of `knav serve --root TREE` to `calls` (tool name, arguments), in order; an
/// answer missing after a minute (the server died or hung) fails the test.
fn serve(tree: &Tree, calls: &[(&str, Value)]) -> Vec<Value> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_knav"))
        .arg("serve")
        .arg("--root")
        .arg(&tree.root)
        .env_remove("KNAV_INDEX_DIR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let init = serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "knav-test", "version": "1"}}});
    writeln!(stdin, "{init}").unwrap();
    writeln!(
        stdin,
        r#"{{"jsonrpc": "2.0", "method": "notifications/initialized"}}"#
    )
    .unwrap();
    for (i, (tool, args)) in calls.iter().enumerate() {
        let call = serde_json::json!({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
            "params": {"name": tool, "arguments": args}});
        writeln!(stdin, "{call}").unwrap();
    }
    let mut answers = vec![Value::Null; calls.len()];
    while answers.iter().any(Value::is_null) {
        let line = rx.recv_timeout(Duration::from_secs(60));
        let Ok(line) = line else {
            let status = child.try_wait();
            let _ = child.kill();
            panic!("knav serve stopped answering ({status:?}); answers so far: {answers:?}");
        };
        let v: Value = serde_json::from_str(&line).unwrap();
        if let Some(id) = v["id"]
            .as_u64()
            .filter(|id| (1..=calls.len() as u64).contains(id))
        {
            let text = v["result"]["content"][0]["text"].as_str().unwrap_or("{}");
            answers[id as usize - 1] = serde_json::from_str(text).unwrap_or(Value::from(text));
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    answers
}

#[test]
fn deeply_nested_parentheses_do_not_kill_the_server() {
    let t = fixture("deep-if-serve");
    // 2,000 levels: a 4 KB line once overflowed the stack of the server's worker thread.
    let text = format!(
        "#if {}CONFIG_X86{}\nint deep_parens(void) {{ return 0; }}\n#endif\n",
        "(".repeat(2_000),
        ")".repeat(2_000)
    );
    std::fs::write(t.root.join("include/linux/deep.h"), text).unwrap();
    let (code, _, err) = knav(&t, &["index"]);
    assert_eq!(code, 0, "{err}");
    let args = |symbol: &str| serde_json::json!({"symbol": symbol, "active_config": "CONFIG_X86=y", "format": "json"});
    let answers = serve(
        &t,
        &[
            ("find_definition", args("deep_parens")),
            ("find_definition", args("kmap")),
        ],
    );
    assert_eq!(answers[0]["definition_count"], 1, "{}", answers[0]);
    assert_eq!(answers[0]["results"][0]["active"], Value::Null);
    assert_eq!(
        answers[1]["symbol"], "kmap",
        "still serving: {}",
        answers[1]
    );
}

/// `(exit code, stdout)` of knav run on `tree`, killed and failed if it runs over 30 s.
fn knav_within_30s(tree: &Tree, args: &[&str]) -> (i32, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_knav"))
        .args(args)
        .arg("--root")
        .arg(&tree.root)
        .env_remove("KNAV_INDEX_DIR")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("knav {args:?} still running after 30 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn a_config_that_is_a_device_a_fifo_or_huge_is_a_clear_error_not_a_hang() {
    let t = fixture("config-files");
    let (code, _, err) = knav(&t, &["index"]);
    assert_eq!(code, 0, "{err}");
    let fifo = t.root.join("config.fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    // Sparse: 17 MiB of file, no disk.
    let huge = t.root.join("config.huge");
    std::fs::File::create(&huge)
        .unwrap()
        .set_len(17 << 20)
        .unwrap();
    let fifo = fifo.display().to_string();
    let huge = huge.display().to_string();
    for (config, what) in [
        ("/dev/zero", "a character device, not a regular file"),
        ("/dev/urandom", "a character device, not a regular file"),
        (fifo.as_str(), "a FIFO, not a regular file"),
        (huge.as_str(), "larger than 16 MiB, the most knav reads"),
    ] {
        let (code, out) = knav_within_30s(&t, &["def", "kmap", "--active-config", config]);
        assert_eq!(code, 1, "{config}: {out}");
        assert_eq!(
            out.lines().next(),
            Some(
                format!(
                    "Error: --active-config {config}: {what}; give a .config file or \
                     CONFIG_A=y,CONFIG_B=m"
                )
                .as_str()
            ),
            "{out}"
        );
    }
}

#[test]
fn a_config_parse_error_names_the_file_and_line_but_never_quotes_it() {
    // Over MCP, `active_config: "/etc/shadow"` answered `line 1: 'root:*:…' is not NAME=value`.
    let t = fixture("config-quote");
    let secret = t.root.join("secret");
    std::fs::write(&secret, "# fine\nroot:*:19000:0:99999:7:::\n").unwrap();
    let secret = secret.display().to_string();
    let (code, out, _) = knav(&t, &["def", "kmap", "--active-config", &secret]);
    assert_eq!(code, 1, "{out}");
    assert_eq!(
        out.lines().next(),
        Some(
            format!(
                "Error: --active-config {secret}: line 2: expected CONFIG_NAME=value, \
                 `# CONFIG_NAME is not set`, a # comment or nothing"
            )
            .as_str()
        )
    );
    assert!(!out.contains("root:"), "{out}");
    let answers = serve(
        &t,
        &[(
            "find_definition",
            serde_json::json!({"symbol": "kmap", "active_config": secret}),
        )],
    );
    let text = answers[0].as_str().unwrap_or_default();
    assert!(
        text.contains(": line 2: expected CONFIG_NAME=value"),
        "{text}"
    );
    assert!(!text.contains("root:"), "{text}");
    // A macro list is the caller's own text: the failing item is quoted, cut short.
    let list = format!("CONFIG_X86=y,CONFIG_{}=maybe", "A".repeat(10_000));
    let (code, out, _) = knav(&t, &["def", "kmap", "--active-config", &list]);
    assert_eq!(code, 1);
    let first = out.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("Error: --active-config 'CONFIG_AAA"),
        "{first}"
    );
    assert!(first.len() < 200, "{first}");
}

#[test]
fn a_config_that_is_not_utf8_is_read_lossily_by_the_server_as_by_the_cli() {
    // The server refused a Latin-1 .config ("is not UTF-8 text") that the CLI read.
    let t = fixture("config-latin1");
    let config = t.root.join("latin1.config");
    std::fs::write(
        &config,
        b"# Caf\xe9 build\nCONFIG_X86=y\nCONFIG_HIGHMEM=y\nCONFIG_CMDLINE=\"caf\xe9\"\n",
    )
    .unwrap();
    let config = config.display().to_string();
    let cli = json(&t, &["def", "kmap", "--active-config", &config]);
    assert_eq!(
        cli["hidden"],
        serde_json::json!([{"path": "include/linux/highmem.h", "line": 25,
                "reason": "#if !CONFIG_HIGHMEM: CONFIG_HIGHMEM=y"}])
    );
    // A backslash in its name is a backslash, not the start of an escape.
    let backslash = t.root.join(r"caf\xe9.config");
    std::fs::copy(&config, &backslash).unwrap();
    let ask = |config: &str| {
        let args = serde_json::json!({"symbol": "kmap", "active_config": config, "format": "json"});
        ("find_definition", args)
    };
    let answers = serve(&t, &[ask(&config), ask(&backslash.display().to_string())]);
    for mut a in answers {
        // Answered side by side, one may say that the other's refresh runs.
        a["warning"] = Value::Null;
        assert_eq!(a, cli);
    }
}
