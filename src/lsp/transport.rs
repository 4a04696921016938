//! The LSP wire on stdio: `Content-Length` framed JSON-RPC messages, read on a thread of their
//! own and written under one lock. lsp-server's own stdio reader stops at the first malformed
//! message and reads any length a header claims; this one answers a message it cannot read with
//! a JSON-RPC error and goes on, and refuses (and skips) a body over [`MAX_MESSAGE`] bytes.

use std::io::{self, BufRead, Read, Write};
use std::sync::{Arc, Mutex};

use lsp_server::{ErrorCode, Message, RequestId};
use serde_json::Value;
use std::sync::mpsc::{Receiver, Sender};

/// Bytes a message's body may have: a whole file sent by `didOpen`/`didChange`, with room.
pub const MAX_MESSAGE: usize = 64 << 20;

/// What the reader got.
pub enum Incoming {
    /// A message.
    Message(Message),
    /// A message that could not be read, to answer with an error: the JSON-RPC error code,
    /// why, and its `id` when it had one.
    Malformed(i32, String, Option<Value>),
    /// A response (to one of the server's requests) that could not be read: why. It is
    /// logged, never answered: a response to a response would have no end.
    Unreadable(String),
}

/// Where answers go: one message at a time.
#[derive(Clone)]
pub struct Out {
    sink: Arc<Mutex<Box<dyn Write + Send>>>,
}

impl Out {
    /// Messages written to `w`.
    pub fn new(w: Box<dyn Write + Send>) -> Out {
        Out {
            sink: Arc::new(Mutex::new(w)),
        }
    }

    /// Sends `msg`; a closed output is the client gone, which the reader sees too.
    pub fn send(&self, msg: impl Into<Message>) {
        let Ok(text) = serde_json::to_string(&msg.into()) else {
            return;
        };
        self.raw(&text);
    }

    /// Sends a JSON-RPC error that answers no request the server could read (`id` null when
    /// the message had none).
    pub fn error_for(&self, id: Option<Value>, code: i32, message: &str) {
        let v = serde_json::json!({
            "jsonrpc": "2.0",
            "id": id.unwrap_or(Value::Null),
            "error": { "code": code, "message": message },
        });
        self.raw(&v.to_string());
    }

    fn raw(&self, text: &str) {
        let mut w = self.sink.lock().unwrap_or_else(|p| p.into_inner());
        let _ = write!(w, "Content-Length: {}\r\n\r\n{text}", text.len());
        let _ = w.flush();
    }
}

/// Reads messages from `input` on a thread of its own until it ends (or an `exit`
/// notification), handing each over on the returned channel.
pub fn reader(input: Box<dyn Read + Send>) -> Receiver<Incoming> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("knav-lsp-reader".into())
        .spawn(move || read_all(io::BufReader::new(input), &tx))
        .ok();
    rx
}

fn read_all(mut input: impl BufRead, tx: &Sender<Incoming>) {
    loop {
        let incoming = match frame(&mut input) {
            Ok(Some(Ok(body))) => parse(&body),
            Ok(Some(Err(why))) => Incoming::Malformed(ErrorCode::ParseError as i32, why, None),
            Ok(None) | Err(_) => return,
        };
        let exit =
            matches!(&incoming, Incoming::Message(Message::Notification(n)) if n.method == "exit");
        if tx.send(incoming).is_err() || exit {
            return;
        }
    }
}

/// The next message's body; `Ok(None)` at the end of the input; an inner error for a frame
/// that was skipped (bad header, too long, not UTF-8).
fn frame(input: &mut impl BufRead) -> io::Result<Option<Result<String, String>>> {
    let mut length: Option<Result<usize, String>> = None;
    let mut line = Vec::new();
    loop {
        line.clear();
        if input.take(8192).read_until(b'\n', &mut line)? == 0 {
            return Ok(None);
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            if length.is_some() {
                break;
            }
            continue; // stray blank lines between messages
        }
        let Some((name, value)) = text.split_once(':') else {
            length = Some(Err(format!("malformed header line {text:?}")));
            continue;
        };
        if name.trim().eq_ignore_ascii_case("content-length") {
            length = Some(
                value
                    .trim()
                    .parse::<usize>()
                    .map_err(|_| format!("Content-Length {:?} is no number", value.trim())),
            );
        }
    }
    let n = match length {
        Some(Ok(n)) => n,
        Some(Err(why)) => return Ok(Some(Err(why))),
        None => return Ok(Some(Err("a message without Content-Length".into()))),
    };
    if n > MAX_MESSAGE {
        io::copy(&mut input.take(n as u64), &mut io::sink())?;
        return Ok(Some(Err(format!(
            "a message of {n} bytes, over the {MAX_MESSAGE} bytes a message may have; skipped"
        ))));
    }
    let mut body = vec![0; n];
    input.read_exact(&mut body)?;
    Ok(Some(
        String::from_utf8(body).map_err(|_| "a message that is not UTF-8".to_string()),
    ))
}

/// A message from its JSON text: a request, a notification or a response. A batch (a JSON
/// array), which LSP does not have, and a request whose `id` is neither a string nor a 32-bit
/// integer (which lsp-server would read as a notification, leaving the client waiting) are
/// refused with `InvalidRequest`.
fn parse(body: &str) -> Incoming {
    let invalid = ErrorCode::InvalidRequest as i32;
    let value: Value = match serde_json::from_str(body) {
        Ok(v) => v,
        Err(e) => {
            let why = format!("malformed JSON: {e}");
            return Incoming::Malformed(ErrorCode::ParseError as i32, why, None);
        }
    };
    if value.is_array() {
        let why = "a batch (a JSON array of messages): LSP has none; send each message alone";
        return Incoming::Malformed(invalid, why.into(), None);
    }
    let id = value.get("id").cloned();
    let method = value.get("method");
    if !value.is_object() || method.is_some_and(|m| !m.is_string()) {
        let why = "not a JSON-RPC request or notification".to_string();
        return Incoming::Malformed(invalid, why, id);
    }
    if let (Some(_), Some(i)) = (method, &id) {
        if serde_json::from_value::<RequestId>(i.clone()).is_err() {
            let why = format!("a request id is a string or a 32-bit integer, not {i}");
            return Incoming::Malformed(invalid, why, id);
        }
    }
    let response = method.is_none();
    match serde_json::from_value::<Message>(value) {
        Ok(m) => Incoming::Message(m),
        Err(e) if response => Incoming::Unreadable(format!("a response: {e}")),
        Err(e) => Incoming::Malformed(invalid, format!("not a JSON-RPC message: {e}"), id),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(bytes: &str) -> Vec<Result<String, String>> {
        let mut input = io::Cursor::new(bytes.as_bytes().to_vec());
        let mut out = Vec::new();
        while let Ok(Some(f)) = frame(&mut input) {
            out.push(f);
        }
        out
    }

    #[test]
    fn frames_are_read_by_their_length_and_a_bad_header_is_skipped() {
        let got = read(
            "Content-Length: 2\r\n\r\n{}Content-Type: x\r\nContent-Length: 3\r\n\r\n[1]\
             Content-Length: zz\r\n\r\nContent-Length: 1\r\n\r\n1",
        );
        assert_eq!(
            got,
            vec![
                Ok("{}".to_string()),
                Ok("[1]".to_string()),
                Err("Content-Length \"zz\" is no number".to_string()),
                Ok("1".to_string()),
            ]
        );
    }

    #[test]
    fn a_request_with_a_bad_method_is_malformed_with_its_id() {
        match parse(r#"{"jsonrpc":"2.0","id":7,"method":3}"#) {
            Incoming::Malformed(_, _, id) => assert_eq!(id, Some(Value::from(7))),
            _ => panic!("not refused"),
        }
        assert!(matches!(
            parse("{\"a\":"),
            Incoming::Malformed(-32700, _, None)
        ));
    }

    #[test]
    fn a_batch_is_refused_as_an_invalid_request() {
        let batch = r#"[{"jsonrpc":"2.0","id":1,"method":"shutdown"}]"#;
        match parse(batch) {
            Incoming::Malformed(code, why, None) => {
                assert_eq!(code, -32600);
                assert!(why.contains("batch"), "{why}");
            }
            _ => panic!("a batch was not refused"),
        }
    }

    #[test]
    fn a_request_whose_id_is_no_i32_is_refused_not_taken_for_a_notification() {
        for id in ["4294967296", "1.5", "null", "true", "{}"] {
            let text = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"shutdown"}}"#);
            match parse(&text) {
                Incoming::Malformed(-32600, _, Some(got)) => {
                    assert_eq!(got.to_string(), id);
                }
                _ => panic!("id {id} was not refused"),
            }
        }
        let text = r#"{"jsonrpc":"2.0","id":"x-1","method":"shutdown"}"#;
        assert!(matches!(
            parse(text),
            Incoming::Message(Message::Request(_))
        ));
    }

    #[test]
    fn a_response_is_taken_or_dropped_never_answered() {
        let err =
            r#"{"jsonrpc":"2.0","id":"knav-progress-1","error":{"code":-32601,"message":"no"}}"#;
        assert!(matches!(
            parse(err),
            Incoming::Message(Message::Response(_))
        ));
        let null = r#"{"jsonrpc":"2.0","id":"t","result":null}"#;
        assert!(matches!(
            parse(null),
            Incoming::Message(Message::Response(_))
        ));
        let bad = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}"#;
        assert!(matches!(parse(bad), Incoming::Unreadable(_)));
    }
}
