//! An MCP client session with one `knav serve` process, for the tests that drive the real
//! binary over stdio (JSON-RPC, one message per line).
#![allow(dead_code)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::{fixture, Tree};

/// An MCP client session with one `knav serve` process.
pub struct Client {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    next_id: u64,
    early: HashMap<u64, Value>,
    /// The answer to `initialize`.
    pub init: Value,
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Client {
    /// Starts `knav serve ARGS` and initializes the session.
    pub fn start(args: &[&str], cwd: &Path, env: &[(&str, &str)]) -> Client {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_knav"));
        cmd.arg("serve")
            .args(args)
            .current_dir(cwd)
            .env_remove("KNAV_INDEX_DIR")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("knav serve starts");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut c = Client {
            child,
            stdin,
            lines,
            next_id: 0,
            early: HashMap::new(),
            init: Value::Null,
        };
        let init = c.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "knav-test", "version": "1"}}),
        );
        assert_eq!(init["result"]["serverInfo"]["name"], "knav", "{init}");
        assert!(
            init["result"]["capabilities"]["tools"].is_object(),
            "{init}"
        );
        c.write(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        c.init = init;
        c
    }

    pub fn write(&mut self, msg: &Value) {
        writeln!(self.stdin, "{msg}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Writes one raw line.
    pub fn write_raw(&mut self, line: &str) {
        self.write_bytes(line.as_bytes());
    }

    /// Writes one raw line of bytes (they need not be UTF-8).
    pub fn write_bytes(&mut self, line: &[u8]) {
        self.stdin.write_all(line).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
    }

    /// The next message that carries an id (null included), in the order they come.
    pub fn next_reply(&mut self) -> Value {
        loop {
            let line = self
                .lines
                .recv_timeout(Duration::from_secs(60))
                .expect("a reply within a minute");
            let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
            if v.get("id").is_some() {
                return v;
            }
        }
    }

    /// The next message whose id is null (an error about a line whose id could not be read);
    /// replies with a number as id that come first are kept for [`Client::response`].
    pub fn null_id_message(&mut self) -> Value {
        loop {
            let v = self.next_reply();
            if v["id"].is_null() {
                return v;
            }
            if let Some(got) = v["id"].as_u64() {
                self.early.insert(got, v);
            }
        }
    }

    /// Sends a request without waiting; returns its id.
    pub fn send(&mut self, method: &str, params: Value) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        self.write(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// The response to request `id`.
    pub fn response(&mut self, id: u64) -> Value {
        if let Some(v) = self.early.remove(&id) {
            return v;
        }
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self
                .lines
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no response to request {id}"));
            let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
            match v["id"].as_u64() {
                Some(got) if got == id => return v,
                Some(got) => {
                    self.early.insert(got, v);
                }
                None => {} // a notification
            }
        }
    }

    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.send(method, params);
        self.response(id)
    }

    /// Calls a tool; returns `(text, isError)`.
    pub fn call(&mut self, tool: &str, args: Value) -> (String, bool) {
        let v = self.request("tools/call", json!({"name": tool, "arguments": args}));
        result_of(&v)
    }

    /// Calls a tool until it is not answered with the transient first-build message.
    pub fn call_when_built(&mut self, tool: &str, args: Value) -> (String, bool) {
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let (text, err) = self.call(tool, args.clone());
            if !(err && text.contains("Retry this call shortly")) {
                return (text, err);
            }
            assert!(Instant::now() < deadline, "the first build never finished");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

pub fn result_of(v: &Value) -> (String, bool) {
    let r = &v["result"];
    assert!(r.is_object(), "not a tool result: {v}");
    assert!(
        r.get("structuredContent").is_none(),
        "the answer is carried once: {v}"
    );
    let content = r["content"].as_array().unwrap();
    assert_eq!(content.len(), 1, "{v}");
    (
        content[0]["text"].as_str().unwrap().to_string(),
        r["isError"].as_bool().unwrap_or(false),
    )
}

pub fn root_arg(t: &Tree) -> String {
    t.root.display().to_string()
}

/// A served fixture with its index built.
pub fn served(name: &str, extra: &[(&str, &str)]) -> (Tree, Client) {
    let t = fixture(name);
    let root = root_arg(&t);
    let mut c = Client::start(&["--root", &root], &t.root, extra);
    let (text, err) = c.call_when_built("find_definition", json!({"symbol": "kmap"}));
    assert!(!err, "{text}");
    (t, c)
}
