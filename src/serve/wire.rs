//! The stdio transport: one JSON-RPC message per line in, one per line out.
//!
//! rmcp's own stdio transport drops what it cannot parse without a word (an unparseable line,
//! params nested deeper than serde_json's recursion limit, an oversized line), answers an
//! invalid request without its id (so the client waiting on that id hangs) and takes a
//! `tools/call` whose params do not fit for an unknown method. This one answers every request
//! it reads: -32700 for what is not JSON (saying what is wrong: bytes that are not UTF-8, a lone
//! surrogate escape, …), -32600 for what is not a JSON-RPC request or is nested too deep to take,
//! -32602 for a known method with bad params; each with the request's id when one can be read.
//! Parsing never recurses deeper than serde_json's limit, so no input can overflow a stack.

use std::borrow::Cow;
use std::future::Future;

use rmcp::model::{ClientRequest, JsonRpcMessage};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::RoleServer;
use serde_json::{json, Value};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

/// The longest message read (bytes, as rmcp's own transport); longer lines are answered with an
/// error and skipped.
pub const MAX_MESSAGE: usize = 16 << 20;

/// Bytes of an oversized line kept to find its id in.
const HEAD: usize = 4096;

/// Characters of an error message kept: room for the reason and a short quote of the input.
const MAX_ERROR_CHARS: usize = 300;

/// Messages queued for the writer before a sender waits.
const QUEUE: usize = 64;

/// A JSON-RPC error code and message.
const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const INVALID_PARAMS: i64 = -32602;

/// The transport over a reader and a writer (stdin and stdout in the server).
pub struct Wire<R> {
    read: R,
    line: Vec<u8>,
    /// Dropping the tail of an oversized line up to its newline.
    discarding: bool,
    out: mpsc::Sender<Vec<u8>>,
    /// An error reply not yet queued (the queue was full when it was made).
    pending: Option<Vec<u8>>,
    writer: Option<tokio::task::JoinHandle<()>>,
}

impl<R: AsyncBufRead + Unpin + Send> Wire<R> {
    /// A transport reading `read` and writing `write`; the writer runs as its own task, fed in
    /// order, so a cancelled receive or send never leaves half a line on the wire.
    pub fn new<W: AsyncWrite + Unpin + Send + 'static>(read: R, mut write: W) -> Wire<R> {
        let (out, mut rx) = mpsc::channel::<Vec<u8>>(QUEUE);
        let writer = tokio::spawn(async move {
            while let Some(msg) = rx.recv().await {
                if write.write_all(&msg).await.is_err() || write.flush().await.is_err() {
                    break;
                }
            }
        });
        Wire {
            read,
            line: Vec::new(),
            discarding: false,
            out,
            pending: None,
            writer: Some(writer),
        }
    }

    /// Reads one line into `self.line`, never holding more than [`MAX_MESSAGE`] bytes of it;
    /// `Ok(false)` for an oversized line (dropped), `Err` at the end of input. Cancel-safe: bytes
    /// are consumed only together with their copy.
    async fn read_line(&mut self) -> Result<bool, ()> {
        loop {
            let (used, done) = {
                let buf = self.read.fill_buf().await.map_err(|_| ())?;
                if buf.is_empty() {
                    return Err(());
                }
                let nl = memchr::memchr(b'\n', buf);
                let take = nl.map_or(buf.len(), |i| i + 1);
                if self.discarding {
                    if nl.is_some() {
                        self.discarding = false;
                    }
                    (take, None)
                } else if self.line.len() + take > MAX_MESSAGE {
                    // The head stays, to answer with the id it names.
                    let room = HEAD.saturating_sub(self.line.len());
                    self.line.extend_from_slice(&buf[..take.min(room)]);
                    self.line.truncate(HEAD);
                    self.discarding = nl.is_none();
                    (take, Some(false))
                } else {
                    self.line.extend_from_slice(&buf[..take]);
                    (take, nl.map(|_| true))
                }
            };
            self.read.consume(used);
            if let Some(whole) = done {
                return Ok(whole);
            }
        }
    }
}

/// A JSON-RPC error line for request `id` (`null` when it cannot be read).
fn error_line(id: &Value, code: i64, message: &str) -> Vec<u8> {
    // serde's messages quote what was sent (`invalid type: string "…"`): a 10 MB argument must
    // not come back as a 10 MB error.
    let message = match message.char_indices().nth(MAX_ERROR_CHARS) {
        None => message.to_string(),
        Some((cut, _)) => format!("{}… ({} bytes)", &message[..cut], message.len()),
    };
    let mut v = serde_json::to_vec(&json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": code, "message": message},
    }))
    .unwrap_or_default();
    v.push(b'\n');
    v
}

/// The id of a message, when it is one JSON-RPC allows (a string or a number).
fn id_of(id: Option<&Value>) -> Value {
    match id {
        Some(v @ (Value::String(_) | Value::Number(_))) => v.clone(),
        _ => Value::Null,
    }
}

/// The id member of the top-level object that `head` (the start of a message) begins, if it
/// is there; `null` otherwise.
fn head_id(head: &[u8]) -> Value {
    let (mut depth, mut i) = (0usize, 0usize);
    while i < head.len() {
        match head[i] {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            b'"' => {
                let start = i + 1;
                i = start;
                while i < head.len() && head[i] != b'"' {
                    i += if head[i] == b'\\' { 2 } else { 1 };
                }
                let key = &head[start..i.min(head.len())];
                let rest = head.get(i + 1..).unwrap_or_default();
                let rest = rest.trim_ascii_start();
                if depth == 1 && key == b"id" && rest.first() == Some(&b':') {
                    let mut values = serde_json::Deserializer::from_slice(&rest[1..]).into_iter();
                    return id_of(values.next().and_then(Result::ok).as_ref());
                }
            }
            _ => {}
        }
        i += 1;
    }
    Value::Null
}

/// Just the id of a message whose JSON is nested too deep to be held as a [`Value`]: serde
/// skips the other members without recursing.
#[derive(serde::Deserialize)]
struct IdOnly {
    id: Option<Value>,
}

/// What one line is: a message for rmcp, nothing (a notification rmcp would ignore), or the
/// error line to answer it with.
pub enum Read {
    /// A message for the service.
    Message(Box<RxJsonRpcMessage<RoleServer>>),
    /// Nothing to do.
    Skip,
    /// Answer with this line.
    Reply(Vec<u8>),
}

/// Methods of client requests rmcp knows: a request for one of them whose params do not fit
/// is a params error, not an unknown method.
fn known_request_method(method: &str) -> bool {
    use rmcp::model::*;
    [
        PingRequestMethod::VALUE,
        InitializeResultMethod::VALUE,
        CompleteRequestMethod::VALUE,
        SetLevelRequestMethod::VALUE,
        GetPromptRequestMethod::VALUE,
        ListPromptsRequestMethod::VALUE,
        ListResourcesRequestMethod::VALUE,
        ListResourceTemplatesRequestMethod::VALUE,
        ReadResourceRequestMethod::VALUE,
        SubscribeRequestMethod::VALUE,
        UnsubscribeRequestMethod::VALUE,
        CallToolRequestMethod::VALUE,
        ListToolsRequestMethod::VALUE,
    ]
    .contains(&method)
}

/// Parses one line (without its newline).
pub fn parse(line: &[u8]) -> Read {
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    let value: Value = match serde_json::from_slice(line) {
        Ok(v) => v,
        Err(e) => return Read::Reply(unparsed(line, &e)),
    };
    if !value.is_object() {
        // A batch (MCP dropped them) or a bare value: nothing to take an id from.
        return Read::Reply(error_line(
            &Value::Null,
            INVALID_REQUEST,
            "Invalid Request: a message is one JSON object (batches are not supported)",
        ));
    }
    let id = id_of(value.get("id"));
    let method = value
        .get("method")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let is_request = value.get("id").is_some();
    match serde_json::from_value::<RxJsonRpcMessage<RoleServer>>(value) {
        Ok(JsonRpcMessage::Request(r)) => match &r.request {
            ClientRequest::CustomRequest(c) if known_request_method(c.method.as_str()) => {
                Read::Reply(error_line(
                    &id,
                    INVALID_PARAMS,
                    &format!(
                        "Invalid params for '{}': {}",
                        c.method,
                        params_error(c.method.as_str(), c.params.as_ref())
                    ),
                ))
            }
            _ => Read::Message(Box::new(JsonRpcMessage::Request(r))),
        },
        Ok(msg) => Read::Message(Box::new(msg)),
        // A notification is never answered; one rmcp does not know is dropped as it would be.
        Err(_) if !is_request => Read::Skip,
        Err(e) => Read::Reply(error_line(
            &id,
            INVALID_REQUEST,
            &format!(
                "Invalid Request{}: {e}",
                method
                    .map(|m| format!(" {}", crate::envelope::quote(&m)))
                    .unwrap_or_default()
            ),
        )),
    }
}

/// The reply to a line serde_json cannot hold as a [`Value`], saying what is wrong with it:
/// bytes that are not UTF-8 (-32700, at the first such byte), JSON nested past serde_json's 128
/// levels (-32600: the message is JSON, just too deep to take), or what the parser found (-32700:
/// a lone surrogate escape, a missing bracket, …, at its line and column). The id is kept when
/// the line can be read for it (serde skips what it does not keep without holding it), so a
/// client waiting on it hears back.
fn unparsed(line: &[u8], e: &serde_json::Error) -> Vec<u8> {
    let head = serde_json::from_slice::<IdOnly>(line);
    let id = head.as_ref().map_or(Value::Null, |h| id_of(h.id.as_ref()));
    if let Err(u) = std::str::from_utf8(line) {
        let at = u.valid_up_to();
        return error_line(
            &id,
            PARSE_ERROR,
            &format!(
                "Parse error: the message is not UTF-8: byte {at} is 0x{:02x}; send JSON text as \
                 UTF-8",
                line[at]
            ),
        );
    }
    let too_deep = e.to_string().starts_with("recursion limit exceeded");
    match head {
        Ok(_) if too_deep => error_line(
            &id,
            INVALID_REQUEST,
            "Invalid Request: the message is nested more than 128 levels deep",
        ),
        // Too deep and not JSON either: what is wrong past the depth is what to fix.
        Err(h) if too_deep => error_line(&id, PARSE_ERROR, &format!("Parse error: {h}")),
        // serde_json says of `"\ud800"` only that the escape after it is missing.
        _ if e.to_string().contains("hex escape") => error_line(
            &id,
            PARSE_ERROR,
            &format!(
                "Parse error: a \\u escape that is not a character (a UTF-16 surrogate must come \
                 in a pair): {e}"
            ),
        ),
        _ => error_line(&id, PARSE_ERROR, &format!("Parse error: {e}")),
    }
}

/// Why `params` do not fit `method`, as far as serde says.
fn params_error(method: &str, params: Option<&Value>) -> String {
    use rmcp::model::*;
    let params = params.cloned().unwrap_or(Value::Null);
    let err = if method == CallToolRequestMethod::VALUE {
        serde_json::from_value::<CallToolRequestParams>(params).err()
    } else {
        None
    };
    err.map_or_else(|| "they do not fit the method".into(), |e| e.to_string())
}

impl<R: AsyncBufRead + Unpin + Send> Transport<RoleServer> for Wire<R> {
    type Error = std::io::Error;

    fn name() -> Cow<'static, str> {
        "knav-stdio".into()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let out = self.out.clone();
        let msg = serde_json::to_vec(&item).map(|mut v| {
            v.push(b'\n');
            v
        });
        async move {
            let msg = msg.map_err(std::io::Error::other)?;
            out.send(msg)
                .await
                .map_err(|_| std::io::Error::new(std::io::ErrorKind::BrokenPipe, "stdout closed"))
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            if self.pending.is_some() {
                // Reserving is cancel-safe; the reply is handed over only with a permit.
                let permit = self.out.reserve().await.ok()?;
                permit.send(self.pending.take()?);
            }
            let whole = self.read_line().await.ok()?;
            if !whole {
                let id = head_id(&self.line);
                self.line.clear();
                self.pending = Some(error_line(
                    &id,
                    INVALID_REQUEST,
                    &format!("Invalid Request: a message is longer than {MAX_MESSAGE} bytes"),
                ));
                continue;
            }
            let line = self.line.strip_suffix(b"\n").unwrap_or(&self.line);
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            let read = if line.iter().all(u8::is_ascii_whitespace) {
                Read::Skip
            } else {
                parse(line)
            };
            self.line.clear();
            match read {
                Read::Message(m) => return Some(*m),
                Read::Skip => {}
                Read::Reply(r) => self.pending = Some(r),
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        // Every queued line is written before the writer ends.
        let (closed, _) = mpsc::channel(1);
        drop(std::mem::replace(&mut self.out, closed));
        if let Some(w) = self.writer.take() {
            let _ = w.await;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(line: &str) -> Value {
        reply_bytes(line.as_bytes())
    }

    fn reply_bytes(line: &[u8]) -> Value {
        match parse(line) {
            Read::Reply(r) => serde_json::from_slice(&r).unwrap(),
            Read::Message(m) => panic!("taken as a message: {m:?}"),
            Read::Skip => panic!("skipped"),
        }
    }

    #[test]
    fn an_unparseable_line_is_answered_with_a_parse_error_and_id_null() {
        let r = reply("{\"jsonrpc\": \"2.0\", \"id\": 3, \"method\": ");
        assert_eq!(r["error"]["code"], -32700, "{r}");
        assert!(r["id"].is_null() && r.get("id").is_some(), "{r}");
    }

    #[test]
    fn an_invalid_request_with_an_id_is_answered_with_that_id() {
        let r = reply(r#"{"id": 7, "method": "tools/list"}"#);
        assert_eq!(
            (r["id"].as_i64(), r["error"]["code"].as_i64()),
            (Some(7), Some(-32600)),
            "{r}"
        );
        let r = reply(r#"[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]"#);
        assert_eq!(r["error"]["code"], -32600, "a batch: {r}");
        let r = reply(r#"{"jsonrpc": "2.0", "id": "a", "method": 5}"#);
        assert_eq!(
            (r["id"].as_str(), r["error"]["code"].as_i64()),
            (Some("a"), Some(-32600)),
            "{r}"
        );
    }

    #[test]
    fn params_nested_100000_deep_are_answered_without_overflowing_the_stack() {
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{}{}}}"#,
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        let r = reply(&deep);
        assert_eq!(
            (r["id"].as_i64(), r["error"]["code"].as_i64()),
            (Some(9), Some(-32600)),
            "{r}"
        );
        assert_eq!(
            r["error"]["message"],
            "Invalid Request: the message is nested more than 128 levels deep"
        );
        // Unbalanced, it is not JSON at all: the parse error is the end of the line, not depth.
        let r = reply(&deep[..deep.len() - 1000]);
        assert_eq!(r["error"]["code"], -32700, "{r}");
        let message = r["error"]["message"].as_str().unwrap();
        assert!(
            message.starts_with("Parse error: EOF while parsing"),
            "{message}"
        );
    }

    #[test]
    fn a_lone_surrogate_escape_is_a_parse_error_at_its_column_not_nesting() {
        let line = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"\ud800"}}"#;
        let r = reply(line);
        assert_eq!(
            r["error"],
            json!({"code": -32700,
                   "message": "Parse error: a \\u escape that is not a character (a UTF-16 \
                               surrogate must come in a pair): unexpected end of hex escape at \
                               line 1 column 71"}),
            "{r}"
        );
        assert_eq!(r["id"], 7, "the id is read past the bad escape: {r}");
    }

    #[test]
    fn raw_0xff_bytes_are_a_parse_error_naming_the_byte_not_nesting() {
        let mut line =
            br#"{"jsonrpc":"2.0","id":"q","method":"tools/call","params":{"name":"a"#.to_vec();
        let at = line.len();
        line.extend_from_slice(b"\xff\"}}");
        let Read::Reply(r) = parse(&line) else {
            panic!("not answered with an error");
        };
        let r: Value = serde_json::from_slice(&r).unwrap();
        assert_eq!(
            r["error"],
            json!({"code": -32700,
                   "message": format!("Parse error: the message is not UTF-8: byte {at} is 0xff; send JSON text as UTF-8")}),
            "{r}"
        );
        assert_eq!(r["id"], "q", "{r}");
        // Outside a string the id cannot be read past it: null.
        let r = reply_bytes(b"{\"id\": 3, \xff}");
        assert_eq!(
            (r["id"].clone(), r["error"]["code"].clone()),
            (Value::Null, json!(-32700)),
            "{r}"
        );
        assert!(
            r["error"]["message"]
                .as_str()
                .unwrap()
                .contains("byte 10 is 0xff"),
            "{r}"
        );
    }

    #[test]
    fn tool_arguments_that_are_not_an_object_are_invalid_params() {
        let r = reply(
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"find_definition","arguments":"x"}}"#,
        );
        assert_eq!(
            (r["id"].as_i64(), r["error"]["code"].as_i64()),
            (Some(4), Some(-32602)),
            "{r}"
        );
        assert!(
            r["error"]["message"]
                .as_str()
                .unwrap()
                .contains("tools/call"),
            "{r}"
        );
    }

    #[test]
    fn an_error_about_a_huge_argument_quotes_a_short_prefix_once() {
        let huge = "x".repeat(10 << 20);
        let r = reply(&format!(
            r#"{{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{{"name":"find_definition","arguments":"{huge}"}}}}"#
        ));
        let message = r["error"]["message"].as_str().unwrap();
        assert_eq!(r["error"]["code"], -32602, "{message}");
        assert!(message.len() < 400, "{} bytes", message.len());
        // A method name is quoted once, not as `''x''`.
        let r = reply(r#"{"id":6,"method":"tools/list"}"#);
        let message = r["error"]["message"].as_str().unwrap();
        assert!(
            message.starts_with("Invalid Request 'tools/list': "),
            "{message}"
        );
    }

    #[test]
    fn the_id_of_an_oversized_message_is_read_from_its_head() {
        let id = |s: &str| head_id(s.as_bytes());
        assert_eq!(
            id(r#"{"jsonrpc":"2.0", "id" : 12, "params": {"x": "aaaa"#),
            json!(12)
        );
        assert_eq!(
            id(r#"{"params": {"id": 3, "s": "a\"id\": 4"}, "id": "k", "x": "#),
            json!("k")
        );
        assert_eq!(id(r#"{"params": {"id": 3, "symbol": "aaaaaa"#), Value::Null);
    }

    #[test]
    fn good_messages_and_unknown_notifications_pass_as_before() {
        let ok = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"f","arguments":{}}}"#;
        assert!(matches!(parse(ok.as_bytes()), Read::Message(_)));
        let unknown = r#"{"jsonrpc":"2.0","id":1,"method":"frob/nicate","params":{}}"#;
        assert!(
            matches!(parse(unknown.as_bytes()), Read::Message(_)),
            "rmcp answers -32601"
        );
        let note = r#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}"#;
        assert!(matches!(
            parse(note.as_bytes()),
            Read::Skip | Read::Message(_)
        ));
    }
}
