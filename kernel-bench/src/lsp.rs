//! `knav lsp` on the tree's existing index, timed from the client's side of the pipe as an
//! editor sees it: start (spawn, `initialize`, until the first `definition` is answered), then
//! each request over a fixed sample of call sites (read from knav's own `callers` answers),
//! and the server's resident memory beyond its mapped index (`VmRSS − RssFile`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::proc::median_p90;

/// Call sites taken from each symbol's callers.
const PER_SYMBOL: usize = 5;

/// Time one answer may take before the run gives up on the server.
const WAIT: Duration = Duration::from_secs(120);

/// Time the server is given to load or build its index before the first answer.
const START_WAIT: Duration = Duration::from_secs(900);

/// The requests timed, in the order they are asked at each position.
pub const REQUESTS: &[&str] = &[
    "definition",
    "references",
    "hover",
    "documentSymbol",
    "prepareCallHierarchy + incomingCalls",
];

/// Target median of every request.
pub const MEDIAN_GOAL: Duration = Duration::from_millis(2);
/// Target from spawn to the first definition answered.
pub const START_GOAL: Duration = Duration::from_millis(200);
/// Target of the server's memory beyond its mapped index, KiB.
pub const RSS_GOAL_KB: u64 = 100 * 1024;

/// One position of the sample: a call of `name` at `path:line` (0-based line, UTF-16 column).
#[derive(Clone, Debug)]
pub struct Position {
    pub name: String,
    pub path: String,
    pub line: u64,
    pub col: u64,
}

/// One request's timings over the sample.
#[derive(Clone, Debug, Default)]
pub struct Timing {
    pub request: &'static str,
    pub median: Duration,
    pub p90: Duration,
    pub max: Duration,
    /// Answers timed.
    pub n: usize,
    /// Answers that were errors (the first one's message kept).
    pub errors: usize,
    pub first_error: Option<String>,
    /// Where the slowest answer was asked (`path:line name`).
    pub slowest: Option<String>,
}

/// The whole LSP step.
#[derive(Clone, Debug, Default)]
pub struct Lsp {
    /// `initialize` answered, from spawn.
    pub initialize: Option<Duration>,
    /// The first definition answered from the index, from spawn.
    pub start: Option<Duration>,
    pub timings: Vec<Timing>,
    /// Positions in the sample.
    pub sample: usize,
    /// `VmRSS`, `RssFile` and `VmHWM` of the server after the sample, KiB.
    pub rss: Option<(u64, u64, u64)>,
    /// What could not be measured.
    pub notes: Vec<String>,
}

/// A client of `knav lsp` over its pipes.
struct Client {
    child: Child,
    stdin: ChildStdin,
    rx: Receiver<Value>,
    next_id: i64,
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Reads one framed message; `None` at the end of the stream or on a broken frame.
fn read_message(r: &mut impl BufRead) -> Option<Value> {
    let mut len = None;
    loop {
        let mut header = String::new();
        if r.read_line(&mut header).ok()? == 0 {
            return None;
        }
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some(v) = header.strip_prefix("Content-Length:") {
            len = v.trim().parse::<usize>().ok();
        }
    }
    let mut body = vec![0; len?];
    r.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}

impl Client {
    fn spawn(mut cmd: Command) -> Result<Client, String> {
        let what = format!("{cmd:?}");
        let mut child = cmd
            .arg("lsp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("{what}: {e}"))?;
        let stdout = child.stdout.take().ok_or("no stdout pipe")?;
        let stdin = child.stdin.take().ok_or("no stdin pipe")?;
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            while let Some(v) = read_message(&mut r) {
                if tx.send(v).is_err() {
                    return;
                }
            }
        });
        Ok(Client {
            child,
            stdin,
            rx,
            next_id: 1,
        })
    }

    fn write(&mut self, msg: &Value) -> Result<(), String> {
        let body = msg.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len())
            .and_then(|()| self.stdin.flush())
            .map_err(|e| format!("writing to knav lsp: {e}"))
    }

    fn notify(&mut self, method: &str, params: Value) -> Result<(), String> {
        self.write(&json!({"jsonrpc": "2.0", "method": method, "params": params}))
    }

    /// Sends a request and waits for its response (the server's own requests answered with
    /// null, its notifications dropped).
    fn request(&mut self, method: &str, params: Value) -> Result<Value, String> {
        let id = self.next_id;
        self.next_id += 1;
        self.write(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        let until = Instant::now() + WAIT;
        loop {
            let left = until.saturating_duration_since(Instant::now());
            let msg = match self.rx.recv_timeout(left) {
                Ok(m) => m,
                Err(RecvTimeoutError::Timeout) => {
                    return Err(format!("{method}: no answer in {WAIT:?}"))
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(format!("{method}: knav lsp exited"))
                }
            };
            if msg.get("method").is_some() {
                if let Some(sid) = msg.get("id") {
                    let reply = json!({"jsonrpc": "2.0", "id": sid, "result": null});
                    self.write(&reply)?;
                }
                continue;
            }
            if msg.get("id") == Some(&json!(id)) {
                return Ok(msg);
            }
        }
    }
}

fn uri(tree: &Path, path: &str) -> String {
    format!("file://{}", tree.join(path).display())
}

fn at(tree: &Path, p: &Position) -> Value {
    json!({"textDocument": {"uri": uri(tree, &p.path)},
        "position": {"line": p.line, "character": p.col}})
}

/// The sample: up to [`PER_SYMBOL`] call sites of each symbol, in the order `knav callers`
/// answers them, the column found in the call's line on disk. `callers` is the command that
/// answers `knav callers` (its name and `--format json` to be added).
pub fn sample(
    tree: &Path,
    symbols: &[&str],
    callers: &dyn Fn() -> Command,
) -> (Vec<Position>, Vec<String>) {
    let mut out = Vec::new();
    let mut notes = Vec::new();
    for &sym in symbols {
        let mut c = callers();
        c.args(["callers", sym, "--format", "json", "--limit", "50"]);
        let answer = match crate::proc::run(&mut c) {
            Ok(r) => serde_json::from_slice::<Value>(&r.stdout).unwrap_or(Value::Null),
            Err(e) => {
                notes.push(format!("callers {sym}: {e}"));
                continue;
            }
        };
        let rows = answer["results"].as_array().cloned().unwrap_or_default();
        let mut taken = 0;
        for row in rows {
            if taken == PER_SYMBOL {
                break;
            }
            let (Some(path), Some(line)) = (row["path"].as_str(), row["line"].as_u64()) else {
                continue;
            };
            let Ok(text) = std::fs::read_to_string(tree.join(path)) else {
                continue;
            };
            let Some(src) = text.lines().nth(line.saturating_sub(1) as usize) else {
                continue;
            };
            let Some(byte) = word_in(src, sym) else {
                continue;
            };
            out.push(Position {
                name: sym.to_string(),
                path: path.to_string(),
                line: line - 1,
                // On the name's second character, as a click inside it.
                col: src[..byte].encode_utf16().count() as u64 + 1,
            });
            taken += 1;
        }
    }
    (out, notes)
}

/// The byte offset of `word` in `line` as a whole identifier.
fn word_in(line: &str, word: &str) -> Option<usize> {
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let bytes = line.as_bytes();
    line.match_indices(word).map(|(i, _)| i).find(|&i| {
        let before = i == 0 || !ident(bytes[i - 1]);
        let after = bytes.get(i + word.len()).is_none_or(|&b| !ident(b));
        before && after
    })
}

/// `VmRSS`, `RssFile` and `VmHWM` of process `pid`, KiB.
fn rss(pid: u32) -> Option<(u64, u64, u64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |k: &str| -> Option<u64> {
        let l = status.lines().find(|l| l.starts_with(k))?;
        l[k.len()..].split_whitespace().next()?.parse().ok()
    };
    Some((field("VmRSS:")?, field("RssFile:")?, field("VmHWM:")?))
}

/// Starts the server (`server` is `knav … --root TREE --index-dir DIR`, `lsp` to be added),
/// times its start and the requests of [`REQUESTS`] at every position of `sample`.
pub fn measure(tree: &Path, server: Command, positions: &[Position]) -> Lsp {
    let mut out = Lsp {
        sample: positions.len(),
        ..Lsp::default()
    };
    let Some(first) = positions.first() else {
        out.notes.push("no call sites to ask about".into());
        return out;
    };
    let started = Instant::now();
    let mut client = match Client::spawn(server) {
        Ok(c) => c,
        Err(e) => {
            out.notes.push(e);
            return out;
        }
    };
    if let Err(e) = start(&mut client, tree, first, started, &mut out) {
        out.notes.push(e);
        return out;
    }
    let mut samples: BTreeMap<&'static str, Vec<Duration>> = BTreeMap::new();
    let mut timings: Vec<Timing> = REQUESTS
        .iter()
        .map(|r| Timing {
            request: r,
            ..Timing::default()
        })
        .collect();
    for p in positions {
        if let Err(e) = ask_at(&mut client, tree, p, &mut samples, &mut timings) {
            out.notes.push(e);
            break;
        }
    }
    out.rss = rss(client.child.id());
    for t in &mut timings {
        let s = samples.remove(t.request).unwrap_or_default();
        (t.median, t.p90) = median_p90(&s);
        t.max = s.iter().copied().max().unwrap_or_default();
        t.n = s.len();
    }
    out.timings = timings;
    let _ = client.request("shutdown", Value::Null);
    let _ = client.notify("exit", Value::Null);
    out
}

/// `initialize`, then the first definition retried while the index loads or builds.
fn start(
    client: &mut Client,
    tree: &Path,
    first: &Position,
    started: Instant,
    out: &mut Lsp,
) -> Result<(), String> {
    let init = client.request(
        "initialize",
        json!({"processId": std::process::id(), "rootUri": format!("file://{}", tree.display()),
            "capabilities": {"window": {"workDoneProgress": true}}}),
    )?;
    if init.get("result").is_none() {
        return Err(format!("initialize: {}", init["error"]));
    }
    out.initialize = Some(started.elapsed());
    client.notify("initialized", json!({}))?;
    loop {
        let r = client.request("textDocument/definition", at(tree, first))?;
        let msg = r["error"]["message"].as_str().unwrap_or_default();
        if r.get("error").is_none() {
            out.start = Some(started.elapsed());
            return Ok(());
        }
        if !(msg.contains("Retry") || msg.contains("build is running")) {
            return Err(format!("the first definition: {msg}"));
        }
        if started.elapsed() > START_WAIT {
            return Err(format!("no index within {START_WAIT:?}: {msg}"));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Opens `p`'s file, asks every request of [`REQUESTS`] at `p`, closes it.
fn ask_at(
    client: &mut Client,
    tree: &Path,
    p: &Position,
    samples: &mut BTreeMap<&'static str, Vec<Duration>>,
    timings: &mut [Timing],
) -> Result<(), String> {
    let file: PathBuf = tree.join(&p.path);
    let text = std::fs::read(&file).map_err(|e| format!("{}: {e}", file.display()))?;
    let doc = json!({"uri": uri(tree, &p.path)});
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": doc["uri"], "languageId": "c", "version": 1,
            "text": String::from_utf8_lossy(&text)}}),
    )?;
    let mut refs = at(tree, p);
    refs["context"] = json!({"includeDeclaration": false});
    for (i, t) in timings.iter_mut().enumerate() {
        let began = Instant::now();
        let r = match i {
            0 => client.request("textDocument/definition", at(tree, p))?,
            1 => client.request("textDocument/references", refs.clone())?,
            2 => client.request("textDocument/hover", at(tree, p))?,
            3 => client.request("textDocument/documentSymbol", json!({"textDocument": doc}))?,
            _ => {
                let items = client.request("textDocument/prepareCallHierarchy", at(tree, p))?;
                match items["result"].get(0) {
                    Some(item) => {
                        let item = item.clone();
                        client.request("callHierarchy/incomingCalls", json!({"item": item}))?
                    }
                    None => items,
                }
            }
        };
        let took = began.elapsed();
        match r.get("error") {
            Some(e) => {
                t.errors += 1;
                t.first_error.get_or_insert_with(|| {
                    format!("{}:{} {}: {}", p.path, p.line + 1, p.name, e["message"])
                });
            }
            None => {
                let s = samples.entry(t.request).or_default();
                if s.iter().all(|&d| d < took) {
                    t.slowest = Some(format!("{}:{} {}", p.path, p.line + 1, p.name));
                }
                s.push(took);
            }
        }
    }
    client.notify("textDocument/didClose", json!({"textDocument": doc}))
}

pub fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

pub fn mib(kb: u64) -> String {
    format!("{:.1} MiB", kb as f64 / 1024.0)
}

/// The report's section (nothing when the step did not run).
pub fn section(o: &mut String, l: &Lsp) {
    if l.start.is_none() && l.timings.is_empty() && l.notes.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "\n## knav lsp\n\nOne `knav lsp` on the existing index, timed by a client over its \
         pipes. Start: from spawn to `initialize` answered {}, to the first definition \
         answered {}. Then {} call sites (up to {PER_SYMBOL} per symbol, from `knav callers`), \
         each file opened, every request asked once at the call, the file closed.\n",
        l.initialize.map_or("(failed)".into(), ms),
        l.start.map_or("(failed)".into(), ms),
        l.sample
    );
    let _ = writeln!(
        o,
        "| request | answered | median | p90 | max | slowest at | errors |\n|---|---|---|---|---|---|---|"
    );
    for t in &l.timings {
        let errors = match &t.first_error {
            Some(e) => format!("{} (first: {})", t.errors, e.replace('|', "\\|")),
            None => "0".into(),
        };
        let shown = |d: Duration| if t.n == 0 { "—".into() } else { ms(d) };
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {} | {} | {errors} |",
            t.request,
            t.n,
            shown(t.median),
            shown(t.p90),
            shown(t.max),
            t.slowest.as_deref().unwrap_or("—")
        );
    }
    if let Some((r, f, hwm)) = l.rss {
        let _ = writeln!(
            o,
            "\nMemory after the sample: VmRSS {}, of which mapped files (the index and the program) {}; beyond \
             them {}; peak VmHWM {}.",
            mib(r),
            mib(f),
            mib(r - f.min(r)),
            mib(hwm)
        );
    }
    for n in &l.notes {
        let _ = writeln!(o, "\nNot measured: {n}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_found_as_a_whole_word() {
        assert_eq!(
            word_in("\tx = kmalloc_array(n, kmalloc(4));", "kmalloc"),
            Some(22)
        );
        assert_eq!(word_in("kfree(p);", "kfree"), Some(0));
        assert_eq!(word_in("my_kfree(p);", "kfree"), None);
    }

    #[test]
    fn a_framed_message_is_read_and_a_broken_one_ends_the_stream() {
        let body = r#"{"id":1}"#;
        let framed = format!("Content-Length: {}\r\n\r\n{body}", body.len());
        let mut r = BufReader::new(framed.as_bytes());
        assert_eq!(read_message(&mut r), Some(json!({"id": 1})));
        assert_eq!(read_message(&mut r), None);
        let mut r = BufReader::new(&b"Content-Length: 99\r\n\r\n{}"[..]);
        assert_eq!(read_message(&mut r), None);
    }
}
