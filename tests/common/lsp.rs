//! A small LSP client for the tests: `knav lsp` started on a tree, framed JSON-RPC messages
//! written and read, the server's own notifications (progress, messages) kept aside.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// Time a test waits for one answer.
const WAIT: Duration = Duration::from_secs(60);

/// `knav lsp` on a tree.
pub struct Lsp {
    child: Child,
    stdin: Option<ChildStdin>,
    rx: Receiver<Value>,
    next_id: i64,
    /// Notifications and requests from the server, in order.
    pub from_server: Vec<Value>,
}

impl Drop for Lsp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `file://` URI of `path`.
pub fn uri(path: &Path) -> String {
    format!("file://{}", path.display())
}

impl Lsp {
    /// `knav lsp` started in `root` (the fact store off), not yet initialized.
    pub fn spawn(root: &Path, env: &[(&str, &str)]) -> Lsp {
        let mut child = Command::new(env!("CARGO_BIN_EXE_knav"))
            .arg("lsp")
            .current_dir(root)
            .env("KNAV_CACHE_DIR", "off")
            .env_remove("KNAV_INDEX_DIR")
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("knav lsp starts");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            while let Some(v) = read_message(&mut r) {
                if tx.send(v).is_err() {
                    return;
                }
            }
        });
        let stdin = child.stdin.take();
        Lsp {
            child,
            stdin,
            rx,
            next_id: 1,
            from_server: Vec::new(),
        }
    }

    /// `knav lsp` on `root`, initialized with it as the workspace folder and `options`, its
    /// index built (the first requests wait for it).
    pub fn start(root: &Path, options: Value) -> Lsp {
        let mut lsp = Lsp::spawn(root, &[]);
        let caps = json!({"window": {"workDoneProgress": true},
            "textDocument": {"inactiveRegionsCapabilities": {"inactiveRegions": true},
                "documentSymbol": {"hierarchicalDocumentSymbolSupport": true}}});
        let init = lsp.request(
            "initialize",
            json!({"processId": null, "rootUri": uri(root), "capabilities": caps,
                "initializationOptions": options}),
        );
        assert!(init.get("result").is_some(), "initialize: {init}");
        lsp.notify("initialized", json!({}));
        lsp.wait_ready(root);
        lsp
    }

    /// Waits until a request on the tree is answered from an index.
    pub fn wait_ready(&mut self, root: &Path) {
        let until = Instant::now() + WAIT;
        loop {
            let r = self.request("textDocument/definition", at(root, "knav-probe.c", 0, 0));
            let building = r
                .pointer("/error/message")
                .and_then(Value::as_str)
                .is_some_and(|m| m.contains("Retry") || m.contains("build is running"));
            if !building {
                return;
            }
            assert!(
                Instant::now() < until,
                "no index of {} in time",
                root.display()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Writes `msg`, framed.
    pub fn write(&mut self, msg: &Value) {
        self.write_raw(msg.to_string().as_bytes());
    }

    /// Writes `body` framed as it is (no JSON check).
    pub fn write_raw(&mut self, body: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        write!(stdin, "Content-Length: {}\r\n\r\n", body.len()).unwrap();
        stdin.write_all(body).unwrap();
        stdin.flush().unwrap();
    }

    /// Writes bytes as they are, unframed.
    pub fn write_bytes(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    /// Sends request `method` and returns its id.
    pub fn send(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        self.write(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// Sends notification `method`.
    pub fn notify(&mut self, method: &str, params: Value) {
        self.write(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// The next message from the server (`None` when it closed its output or WAIT passed).
    pub fn next(&mut self) -> Option<Value> {
        match self.rx.recv_timeout(WAIT) {
            Ok(v) => Some(v),
            Err(RecvTimeoutError::Timeout) => panic!("no message from knav lsp in {WAIT:?}"),
            Err(RecvTimeoutError::Disconnected) => None,
        }
    }

    /// The response to request `id`, the messages before it kept in `from_server`.
    pub fn response(&mut self, id: i64) -> Value {
        loop {
            let v = self.next().expect("knav lsp answers");
            if v.get("id") == Some(&json!(id)) && v.get("method").is_none() {
                return v;
            }
            self.from_server.push(v);
        }
    }

    /// Request `method` and its response.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.send(method, params);
        self.response(id)
    }

    /// The result of request `method`, which must succeed.
    pub fn result(&mut self, method: &str, params: Value) -> Value {
        let r = self.request(method, params);
        match r.get("result") {
            Some(v) => v.clone(),
            None => panic!("{method} failed: {r}"),
        }
    }

    /// Opens `path` of `root` with `text` (its file's text when `None`).
    pub fn open(&mut self, root: &Path, path: &str, text: Option<&str>) {
        let file = root.join(path);
        let text = match text {
            Some(t) => t.to_string(),
            None => std::fs::read_to_string(&file).unwrap(),
        };
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri(&file), "languageId": "c", "version": 1, "text": text}}),
        );
    }

    /// Replaces the range `(start line, start character, end line, end character)` of open
    /// `file` with `text`, as version `version` (unsaved).
    pub fn edit(&mut self, file: &Path, version: i32, range: (u32, u32, u32, u32), text: &str) {
        let (l0, c0, l1, c1) = range;
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri(file), "version": version},
                "contentChanges": [{"range": {"start": {"line": l0, "character": c0},
                    "end": {"line": l1, "character": c1}}, "text": text}]}),
        );
    }

    /// Closes stdin and waits for the exit code.
    pub fn exit_code(mut self) -> Option<i32> {
        self.stdin.take();
        let until = Instant::now() + WAIT;
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                return s.code();
            }
            assert!(Instant::now() < until, "knav lsp did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// `{textDocument, position}` of line and character (0-based) of `path` under `root`.
pub fn at(root: &Path, path: &str, line: u32, character: u32) -> Value {
    json!({"textDocument": {"uri": uri(&root.join(path))},
        "position": {"line": line, "character": character}})
}

/// `(root-relative path, 0-based line)` of each location of `v`.
pub fn places(root: &Path, v: &Value) -> Vec<(String, u64)> {
    let prefix = uri(root) + "/";
    v.as_array()
        .map(|a| {
            a.iter()
                .map(|l| {
                    let u = l["uri"].as_str().unwrap_or_default();
                    let p = u.strip_prefix(&prefix).unwrap_or(u).to_string();
                    (p, l["range"]["start"]["line"].as_u64().unwrap_or(u64::MAX))
                })
                .collect()
        })
        .unwrap_or_default()
}

fn read_message(r: &mut impl BufRead) -> Option<Value> {
    let mut len = None;
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(v) = line.strip_prefix("Content-Length:") {
            len = v.trim().parse::<usize>().ok();
        }
    }
    let mut body = vec![0; len?];
    r.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}
