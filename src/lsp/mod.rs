//! `knav lsp`: a Language Server (LSP 3.17 on stdio) over the index, for editors and for agents
//! whose client speaks LSP. The wire is read by [`transport`]; [`session`] holds the trees (one
//! index per workspace folder, built in the background with `$/progress` and refreshed as
//! `knav serve` refreshes them) and the open buffers ([`buffers`]); each request is answered by
//! its handler in [`HANDLERS`] from the same questions the CLI and MCP ask
//! ([`crate::request::answer`]). Requests run one at a time in the order they came; one the
//! client cancelled before it was reached is answered `RequestCancelled`.

pub mod buffers;
pub mod calls;
pub mod hover;
pub mod impls;
pub mod inactive;
pub mod nav;
pub mod notify;
pub mod outline;
pub mod position;
pub mod session;
pub mod transport;

use std::collections::{HashSet, VecDeque};
use std::path::PathBuf;
use std::time::Duration;

use lsp_server::{ErrorCode, Message, Notification, Request, RequestId, Response};
use serde_json::Value;

use session::{Failure, Session};
use transport::{Incoming, Out};

/// How `knav lsp` was started.
#[derive(Clone, Debug, Default)]
pub struct LspOptions {
    /// `--root`: the tree served when the client names no workspace folder.
    pub root: Option<PathBuf>,
    /// `--index-dir`: where the (first folder's) index lives.
    pub index_dir: Option<PathBuf>,
}

/// A request's handler: its parameters in, its result out.
pub type Handler = fn(&mut Session, Value) -> Result<Value, Failure>;

/// The request groups a client may choose (`groups` in the options), each with its methods.
pub const GROUPS: &[(&str, &[&str])] = &[
    (
        "navigate",
        &[
            "textDocument/definition",
            "textDocument/declaration",
            "textDocument/references",
            "textDocument/implementation",
        ],
    ),
    (
        "symbols",
        &[
            "textDocument/hover",
            "textDocument/documentSymbol",
            "workspace/symbol",
        ],
    ),
    ("calls", calls::METHODS),
    // A notification the server sends, not a request: the group only gates sending it.
    (inactive::GROUP, &[inactive::METHOD]),
];

/// The requests served, by method.
pub const HANDLERS: &[(&str, Handler)] = &[
    ("textDocument/definition", nav::definition),
    ("textDocument/declaration", nav::declaration),
    ("textDocument/references", nav::references),
    ("textDocument/implementation", impls::implementation),
    ("textDocument/hover", hover::hover),
    ("textDocument/documentSymbol", outline::document_symbol),
    ("workspace/symbol", outline::workspace_symbol),
    ("textDocument/prepareCallHierarchy", calls::prepare),
    ("callHierarchy/incomingCalls", calls::incoming),
    ("callHierarchy/outgoingCalls", calls::outgoing),
];

/// Serves the client on stdin/stdout until it exits; the exit code (0 after `shutdown`).
pub fn run(opts: &LspOptions) -> i32 {
    let rx = transport::reader(Box::new(std::io::stdin()));
    let out = Out::new(Box::new(std::io::stdout()));
    serve(opts, &rx, out)
}

/// Serves the messages of `rx`, answering on `out`.
pub fn serve(opts: &LspOptions, rx: &std::sync::mpsc::Receiver<Incoming>, out: Out) -> i32 {
    let Some(mut session) = notify::handshake(opts, rx, &out) else {
        return 1;
    };
    let mut queue: VecDeque<Message> = VecDeque::new();
    let mut cancelled: HashSet<RequestId> = HashSet::new();
    let mut shut_down = false;
    loop {
        if queue.is_empty() {
            let wait = if notify::building(&session) {
                Duration::from_millis(250)
            } else {
                Duration::from_secs(3600)
            };
            match rx.recv_timeout(wait) {
                Ok(i) => take(i, &mut queue, &mut cancelled, &out),
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return 1,
            }
        }
        // Everything that has arrived, so that a cancellation is seen before its request.
        while let Ok(i) = rx.try_recv() {
            take(i, &mut queue, &mut cancelled, &out);
        }
        notify::progress(&mut session);
        let Some(msg) = queue.pop_front() else {
            continue;
        };
        match msg {
            Message::Request(req) if shut_down => out.send(Response::new_err(
                req.id,
                ErrorCode::InvalidRequest as i32,
                "the server is shut down; only exit is taken".into(),
            )),
            Message::Request(req) if cancelled.remove(&req.id) => out.send(Response::new_err(
                req.id,
                ErrorCode::RequestCanceled as i32,
                "cancelled".into(),
            )),
            Message::Request(req) if req.method == "shutdown" => {
                shut_down = true;
                out.send(Response::new_ok(req.id, Value::Null));
            }
            Message::Request(req) => answer(&mut session, req),
            Message::Notification(n) if n.method == "exit" => return if shut_down { 0 } else { 1 },
            Message::Notification(n) => notify::notification(&mut session, n),
            Message::Response(_) => {} // to the server's own requests (progress tokens)
        }
    }
}

/// Files `i`: a message to the queue (a cancellation to the set), a malformed one answered.
fn take(i: Incoming, queue: &mut VecDeque<Message>, cancelled: &mut HashSet<RequestId>, out: &Out) {
    match i {
        Incoming::Message(Message::Notification(n)) if n.method == "$/cancelRequest" => {
            if let Some(id) = n.params.get("id").cloned() {
                if let Ok(id) = serde_json::from_value::<RequestId>(id) {
                    cancelled.insert(id);
                }
            }
        }
        Incoming::Message(m) => queue.push_back(m),
        Incoming::Malformed(why, id) => {
            let code = if id.is_some() {
                ErrorCode::InvalidRequest
            } else {
                ErrorCode::ParseError
            };
            out.error_for(id, code as i32, &why);
        }
    }
}

/// Answers `req` with its handler, the request's warnings logged or shown just before.
fn answer(session: &mut Session, req: Request) {
    let Some((_, handler)) = HANDLERS.iter().find(|(m, _)| *m == req.method) else {
        let resp = match req.method.starts_with("$/") {
            true => Response::new_ok(req.id, Value::Null),
            false => Response::new_err(
                req.id,
                ErrorCode::MethodNotFound as i32,
                format!("knav lsp does not answer {}", req.method),
            ),
        };
        session.out.send(resp);
        return;
    };
    if !notify::served(session, &req.method) {
        session.out.send(Response::new_err(
            req.id,
            ErrorCode::MethodNotFound as i32,
            format!("{} is in a group the options leave out", req.method),
        ));
        return;
    }
    session.notes.clear();
    session.alerts.clear();
    let resp = match handler(session, req.params) {
        Ok(v) => Response::new_ok(req.id, v),
        Err(f) => Response::new_err(req.id, f.code, f.message),
    };
    let notes = std::mem::take(&mut session.notes);
    if !notes.is_empty() {
        notify::log(&session.out, &notes.join("\n"));
    }
    let alerts = std::mem::take(&mut session.alerts);
    if !alerts.is_empty() {
        notify::show(&session.out, 2, &alerts.join("\n"));
    }
    session.out.send(resp);
}

/// A notification to the client.
pub fn notification(method: &str, params: Value) -> Notification {
    Notification::new(method.to_string(), params)
}
