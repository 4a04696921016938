//! The messages around the requests: the `initialize` handshake (folders, encoding, options,
//! the capabilities the chosen groups serve), the document notifications that keep the buffers
//! and the index fresh (a saved file is re-indexed at once), settings changes, and the
//! server's own messages: `$/progress` while a first index builds, `window/showMessage`.

use std::path::{Path, PathBuf};

use lsp_server::{ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types::{
    DidChangeTextDocumentParams, DidCloseTextDocumentParams, DidOpenTextDocumentParams,
    DidSaveTextDocumentParams, InitializeParams,
};
use serde_json::{json, Value};

use super::buffers::{Buffers, Doc};
use super::position::Encoding;
use super::session::{path_of, Alias, ClientCaps, Options, Session};
use super::transport::{Incoming, Out};
use super::{LspOptions, GROUPS};
use crate::serve::state::{NotReady, ServeOptions, Server};

/// The progress token of the first builds.
const BUILD_TOKEN: &str = "knav/index";

/// Waits for `initialize` (answering any other request `ServerNotInitialized`), answers it and
/// returns the session; `None` when the client left or the folders cannot be served.
pub fn handshake(
    opts: &LspOptions,
    rx: &std::sync::mpsc::Receiver<Incoming>,
    out: &Out,
) -> Option<Session> {
    loop {
        let req = match rx.recv().ok()? {
            Incoming::Message(Message::Request(r)) if r.method == "initialize" => r,
            Incoming::Message(Message::Request(r)) => {
                out.send(Response::new_err(
                    r.id,
                    ErrorCode::ServerNotInitialized as i32,
                    format!("{} before initialize", r.method),
                ));
                continue;
            }
            Incoming::Message(Message::Notification(n)) if n.method == "exit" => return None,
            // Notifications before initialize are dropped (exit excepted), responses too.
            Incoming::Message(_) | Incoming::Unreadable(_) => continue,
            Incoming::Malformed(code, why, id) => {
                out.error_for(id, code, &why);
                continue;
            }
        };
        match start(opts, req.params, out) {
            Ok((session, result)) => {
                out.send(Response::new_ok(req.id, result));
                return Some(session);
            }
            Err(e) => {
                out.send(Response::new_err(
                    req.id,
                    ErrorCode::RequestFailed as i32,
                    e,
                ));
            }
        }
    }
}

/// The session `initialize`'s parameters ask for, and the result to answer it with.
fn start(opts: &LspOptions, params: Value, out: &Out) -> Result<(Session, Value), String> {
    let init: InitializeParams =
        serde_json::from_value(params.clone()).map_err(|e| format!("initialize: {e}"))?;
    let options = Options::default().merged(&init.initialization_options.unwrap_or(Value::Null))?;
    if let Some(groups) = &options.groups {
        if let Some(bad) = groups.iter().find(|g| !GROUPS.iter().any(|(n, _)| n == g)) {
            return Err(format!(
                "unknown group {bad:?}; the groups are {}",
                GROUPS
                    .iter()
                    .map(|(n, _)| *n)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    let (folders, aliases) = folders(opts, &params)?;
    let server = Server::new(&ServeOptions {
        root: folders.first().cloned(),
        index_dir: opts.index_dir.clone(),
        debounce: None,
        allow_roots: folders.iter().skip(1).cloned().collect(),
        tools: None,
    })?;
    let general = params.pointer("/capabilities/general/positionEncodings");
    let utf8 = general
        .and_then(Value::as_array)
        .is_some_and(|a| a.iter().any(|e| e == "utf-8"));
    let enc = if utf8 {
        Encoding::Utf8
    } else {
        Encoding::Utf16
    };
    let flag = |p: &str| params.pointer(p).and_then(Value::as_bool) == Some(true);
    let caps = ClientCaps {
        progress: flag("/capabilities/window/workDoneProgress"),
        inactive_regions: flag(
            "/capabilities/textDocument/inactiveRegionsCapabilities/inactiveRegions",
        ),
        hierarchical_symbols: flag(
            "/capabilities/textDocument/documentSymbol/hierarchicalDocumentSymbolSupport",
        ),
    };
    let session = Session {
        server: std::sync::Arc::new(server),
        folders,
        docs: Buffers::default(),
        enc,
        options,
        caps,
        out: out.clone(),
        notes: Vec::new(),
        alerts: Vec::new(),
        building: Vec::new(),
        aliases,
    };
    let result = json!({
        "capabilities": capabilities(&session, utf8),
        "serverInfo": { "name": "knav", "version": env!("CARGO_PKG_VERSION") },
    });
    Ok((session, result))
}

/// The workspace folders (resolved, each raised to the tree above it as the CLI finds trees):
/// `workspaceFolders`, else `rootUri`, else `rootPath`, else `--root`, else the current
/// directory; and each folder named through a symbolic link as the client named it, with the
/// path it resolves to.
fn folders(opts: &LspOptions, params: &Value) -> Result<(Vec<PathBuf>, Vec<Alias>), String> {
    let mut given: Vec<PathBuf> = Vec::new();
    if let Some(list) = params.get("workspaceFolders").and_then(Value::as_array) {
        for f in list {
            let uri = f.get("uri").and_then(Value::as_str).unwrap_or_default();
            given.push(uri_path(uri)?);
        }
    }
    if given.is_empty() {
        if let Some(uri) = params.get("rootUri").and_then(Value::as_str) {
            given.push(uri_path(uri)?);
        } else if let Some(p) = params.get("rootPath").and_then(Value::as_str) {
            given.push(PathBuf::from(p));
        }
    }
    if given.is_empty() {
        given.push(opts.root.clone().unwrap_or_else(|| PathBuf::from(".")));
    }
    let named = opts.index_dir.is_some()
        || std::env::var_os("KNAV_INDEX_DIR").is_some_and(|d| !d.is_empty());
    let mut roots = Vec::new();
    let mut aliases = Vec::new();
    for g in given {
        let r = crate::beneath::resolve_root(&g)?;
        if g.is_absolute() && g != r {
            aliases.push((g.clone(), r.clone()));
        }
        let r = crate::discover::root_above(&r, named).map_or(r, |f| f.root);
        if !roots.contains(&r) {
            roots.push(r);
        }
    }
    Ok((roots, aliases))
}

fn uri_path(uri: &str) -> Result<PathBuf, String> {
    let uri = uri
        .parse()
        .map_err(|_| format!("workspace folder {uri:?} is no URI"))?;
    path_of(&uri).map_err(|f| f.message)
}

/// The server's capabilities: the requests of the groups the options choose.
fn capabilities(s: &Session, utf8: bool) -> Value {
    let mut caps = json!({
        "positionEncoding": if utf8 { "utf-8" } else { "utf-16" },
        "textDocumentSync": { "openClose": true, "change": 2, "save": { "includeText": true } },
        "workspace": { "workspaceFolders": { "supported": true, "changeNotifications": false } },
    });
    let provider = |method: &str| -> Option<&'static str> {
        Some(match method {
            "textDocument/definition" => "definitionProvider",
            "textDocument/declaration" => "declarationProvider",
            "textDocument/references" => "referencesProvider",
            "textDocument/implementation" => "implementationProvider",
            "textDocument/hover" => "hoverProvider",
            "textDocument/documentSymbol" => "documentSymbolProvider",
            "workspace/symbol" => "workspaceSymbolProvider",
            "textDocument/prepareCallHierarchy" => "callHierarchyProvider",
            _ => return None,
        })
    };
    for (_, methods) in GROUPS.iter().filter(|(g, _)| group_on(s, g)) {
        for m in *methods {
            if let (Some(p), Some(obj)) = (provider(m), caps.as_object_mut()) {
                obj.insert(p.into(), Value::Bool(true));
            }
        }
    }
    caps
}

/// True when the options serve `group`.
pub fn group_on(s: &Session, group: &str) -> bool {
    s.options
        .groups
        .as_ref()
        .is_none_or(|g| g.iter().any(|x| x == group))
}

/// True when `method` is of a group the options serve (or of none).
pub fn served(s: &Session, method: &str) -> bool {
    match GROUPS.iter().find(|(_, ms)| ms.contains(&method)) {
        Some((g, _)) => group_on(s, g),
        None => true,
    }
}

/// Takes notification `n`.
pub fn notification(s: &mut Session, n: Notification) {
    let r = match n.method.as_str() {
        "initialized" => {
            start_builds(s);
            Ok(())
        }
        "textDocument/didOpen" => open(s, n.params),
        "textDocument/didChange" => change(s, n.params),
        "textDocument/didSave" => save(s, n.params),
        "textDocument/didClose" => serde_json::from_value::<DidCloseTextDocumentParams>(n.params)
            .map(|p| s.docs.close(&p.text_document.uri))
            .map_err(|e| e.to_string()),
        "workspace/didChangeConfiguration" => {
            let settings = n.params.get("settings").cloned().unwrap_or(Value::Null);
            let before = s.options.clone();
            let r = s.options.merged(&settings).map(|o| s.options = o);
            super::inactive::settings_changed(s, &before);
            r
        }
        _ => Ok(()),
    };
    if let Err(e) = r {
        show(&s.out, 1, &format!("knav: {}: {e}", n.method));
    }
}

fn open(s: &mut Session, params: Value) -> Result<(), String> {
    let p: DidOpenTextDocumentParams = serde_json::from_value(params).map_err(|e| e.to_string())?;
    let path = s.file_of(&p.text_document.uri).map_err(|f| f.message)?;
    let disk = disk_text(s, &path);
    let doc = Doc::new(path, p.text_document.text, p.text_document.version, disk);
    s.docs.open(&p.text_document.uri, doc);
    super::inactive::send(s, &p.text_document.uri);
    Ok(())
}

fn change(s: &mut Session, params: Value) -> Result<(), String> {
    let p: DidChangeTextDocumentParams =
        serde_json::from_value(params).map_err(|e| e.to_string())?;
    let enc = s.enc;
    let Some(doc) = s.docs.get_mut(&p.text_document.uri) else {
        return Err(format!("{} is not open", p.text_document.uri.as_str()));
    };
    doc.change(p.text_document.version, p.content_changes, enc);
    Ok(())
}

/// A saved file: the tree is refreshed (the file re-indexed) before the next request.
fn save(s: &mut Session, params: Value) -> Result<(), String> {
    let p: DidSaveTextDocumentParams = serde_json::from_value(params).map_err(|e| e.to_string())?;
    let path = s.file_of(&p.text_document.uri).map_err(|f| f.message)?;
    let Some(root) = s.folder_of(&path).cloned() else {
        return Ok(());
    };
    let tree = s.server.tree(Some(&root.display().to_string()))?;
    if let Err(NotReady::Failed(e)) = s.server.refresh_now(&tree) {
        return Err(format!("{} not re-indexed: {e}", path.display()));
    }
    let disk = disk_text(s, &path);
    if let Some(doc) = s.docs.get_mut(&p.text_document.uri) {
        doc.saved(disk);
    }
    super::inactive::send(s, &p.text_document.uri);
    Ok(())
}

/// The text of `path` on disk, read beneath its folder.
fn disk_text(s: &mut Session, path: &Path) -> Option<String> {
    let root = s.folder_of(path)?.clone();
    let rel = crate::pathname::encode_os(path.strip_prefix(&root).ok()?.as_os_str()).into_owned();
    let tree = s.server.tree(Some(&root.display().to_string())).ok()?;
    super::session::read_text(&tree, &rel)
}

/// True when `tree` has an index to answer from.
fn tree_has_index(tree: &crate::serve::state::Tree) -> bool {
    tree.index_dir().join(crate::index::store::CURRENT).exists()
}

/// Starts the first build of every folder without an index, each with a progress report, and
/// the refresh of every other.
fn start_builds(s: &mut Session) {
    for root in s.folders.clone() {
        let Ok(tree) = s.server.tree(Some(&root.display().to_string())) else {
            continue;
        };
        if tree_has_index(&tree) {
            // Brought up to date on a thread of its own, so the first request is answered at
            // once from the index as it is (a file changed since is left out of answers).
            let server = s.server.clone();
            std::thread::spawn(move || server.snapshot(&tree).map(|_| ()));
            continue;
        }
        if let Err(NotReady::Building(m)) = s.server.snapshot(&tree) {
            let token = format!("{BUILD_TOKEN}/{}", s.building.len());
            if s.caps.progress {
                let create = Request::new(
                    RequestId::from(format!("knav-progress-{token}")),
                    "window/workDoneProgress/create".into(),
                    json!({ "token": token }),
                );
                s.out.send(create);
                progress_msg(
                    &s.out,
                    &token,
                    json!({"kind": "begin", "title": "knav: indexing", "message": m}),
                );
            }
            s.building.push((tree, token));
        }
    }
}

/// True while a first build runs.
pub fn building(s: &Session) -> bool {
    !s.building.is_empty()
}

/// Ends the progress of the builds that are done.
pub fn progress(s: &mut Session) {
    let mut still = Vec::new();
    let mut ready = false;
    for (tree, token) in std::mem::take(&mut s.building) {
        match s.server.snapshot(&tree) {
            Err(NotReady::Building(_)) => still.push((tree, token)),
            r => {
                let message = match r {
                    Ok(_) => "index ready".to_string(),
                    Err(NotReady::Failed(e) | NotReady::Building(e)) => e,
                };
                if s.caps.progress {
                    progress_msg(&s.out, &token, json!({"kind": "end", "message": message}));
                }
                ready = true;
            }
        }
    }
    s.building = still;
    if ready {
        super::inactive::send_all(s);
    }
}

fn progress_msg(out: &Out, token: &str, value: Value) {
    out.send(super::notification(
        "$/progress",
        json!({"token": token, "value": value}),
    ));
}

/// Shows `message` to the user (`typ`: 1 error, 2 warning, 3 info).
pub fn show(out: &Out, typ: u8, message: &str) {
    out.send(super::notification(
        "window/showMessage",
        json!({ "type": typ, "message": message }),
    ));
}

/// Logs `message` in the client's log.
pub fn log(out: &Out, message: &str) {
    out.send(super::notification(
        "window/logMessage",
        json!({ "type": 3, "message": message }),
    ));
}
