//! The stdio transport under `promptinclude mcp`: newline-delimited
//! JSON-RPC messages on stdin and stdout (MCP "Transports", stdio,
//! <https://modelcontextprotocol.io/specification/2025-06-18/basic/transports#stdio>).
//!
//! It replaces rmcp's `AsyncRwTransport` (same framing, same 16 MiB cap on
//! a line) because that one drops what it cannot parse without a word
//! (rust-sdk issue #938), which leaves a client waiting for an answer that
//! never comes. Here every line that is not a message gets the response
//! JSON-RPC 2.0 prescribes (<https://www.jsonrpc.org/specification>,
//! "Error object"):
//!
//! * not JSON: `-32700` Parse error, `"id": null`;
//! * a batch (a JSON array, which MCP 2025-06-18 removed): one `-32600`
//!   Invalid Request, `"id": null`, whatever the array holds;
//! * JSON but not a message (wrong shape, `"jsonrpc"` missing):
//!   `-32600` Invalid Request, with the line's `"id"` when it is an integer
//!   or a string, else `null`. A notification (a `"method"` and no `"id"`)
//!   is never answered, as JSON-RPC says;
//! * longer than [`MAX_LINE`]: `-32600`, with the `"id"` found while the
//!   line is skipped (it is never held in memory whole), else `null`.
//!
//! A message is then handed to rmcp only if the session's rules admit it
//! ([`Session`]: no request id used twice, nothing but `ping` before
//! `initialize`); a request they refuse gets its `-32600` here too.
//!
//! A last line without its newline before end of input is read as a line.
//! Writes go through one task in order, so a reply queued while a read is
//! cancelled (rmcp polls `receive` in a `select!`) is neither lost nor
//! interleaved; [`Transport::close`] waits (at most [`CLOSE_WAIT`]) until
//! everything queued is written.

use std::future::Future;
use std::io;
use std::time::Duration;

use rmcp::model::ErrorCode;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::RoleServer;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::session::{Admit, Session};

/// The longest line read as a message (rmcp's `DEFAULT_MAX_LINE_LENGTH`).
pub const MAX_LINE: usize = 16 * 1024 * 1024;

/// How long closing waits for the queued lines to be written (a client
/// that stopped reading stdout must not keep the server alive).
pub const CLOSE_WAIT: Duration = Duration::from_secs(5);

/// The UTF-8 byte order mark, which JSON parsers may ignore (RFC 8259 §8.1).
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Messages in from `R`, out through a writer task.
pub struct LineTransport<R> {
    read: BufReader<R>,
    /// The line read so far (reads resume here after a cancelled `receive`).
    line: Vec<u8>,
    /// Set while the rest of a line over [`MAX_LINE`] is skipped.
    skipping: Option<IdScan>,
    out: Option<mpsc::UnboundedSender<Vec<u8>>>,
    writer: Option<JoinHandle<()>>,
    session: Session,
}

/// What one read gave.
enum Read {
    /// A whole line is in `line`.
    Line,
    /// A line over [`MAX_LINE`] was skipped; its id, if one was seen.
    Oversized(Value),
}

impl<R: AsyncRead + Send + Unpin> LineTransport<R> {
    /// Reads from `read`, writes to `write` (a task on the current runtime).
    pub fn new(read: R, write: impl AsyncWrite + Send + Unpin + 'static) -> Self {
        let (out, lines) = mpsc::unbounded_channel();
        LineTransport {
            read: BufReader::new(read),
            line: Vec::new(),
            skipping: None,
            out: Some(out),
            writer: Some(tokio::spawn(write_lines(write, lines))),
            session: Session::default(),
        }
    }

    /// Queues one line (without its newline) for the writer.
    fn queue(&self, mut line: Vec<u8>) -> io::Result<()> {
        line.push(b'\n');
        match &self.out {
            Some(out) if out.send(line).is_ok() => Ok(()),
            _ => Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "the MCP output is closed",
            )),
        }
    }

    /// Reads the next line into `line`, or skips one over [`MAX_LINE`];
    /// `None` at end of input or on a read error. Cancel-safe: bytes are
    /// taken from the buffer only together with their effect on `self`.
    async fn read_line(&mut self) -> Option<Read> {
        loop {
            let available = self.read.fill_buf().await.ok()?;
            if available.is_empty() {
                if let Some(skipped) = self.skipping.take() {
                    return Some(Read::Oversized(skipped.id()));
                }
                return (!self.line.is_empty()).then_some(Read::Line);
            }
            let newline = available.iter().position(|&b| b == b'\n');
            let take = newline.map_or(available.len(), |i| i + 1);
            let chunk = &available[..take];
            let mut read = None;
            if let Some(skipping) = &mut self.skipping {
                skipping.feed(chunk);
            } else if self.line.len() + take > MAX_LINE {
                let mut skipping = IdScan::default();
                skipping.feed(&self.line);
                skipping.feed(chunk);
                self.line = Vec::new();
                self.skipping = Some(skipping);
            } else {
                self.line.extend_from_slice(chunk);
                if newline.is_some() {
                    read = Some(Read::Line);
                }
            }
            if newline.is_some() {
                if let Some(skipped) = self.skipping.take() {
                    read = Some(Read::Oversized(skipped.id()));
                }
            }
            self.read.consume(take);
            if read.is_some() {
                return read;
            }
        }
    }
}

/// Writes each queued line, flushing when the queue is empty; stops at the
/// first write error (later sends then fail).
async fn write_lines(
    mut write: impl AsyncWrite + Unpin,
    mut lines: mpsc::UnboundedReceiver<Vec<u8>>,
) {
    while let Some(line) = lines.recv().await {
        if write.write_all(&line).await.is_err() {
            return;
        }
        if lines.is_empty() && write.flush().await.is_err() {
            return;
        }
    }
}

/// What a line asks of the transport.
enum Parsed {
    Message(Box<RxJsonRpcMessage<RoleServer>>),
    /// An error response to write back.
    Reply(Vec<u8>),
    /// Nothing: a blank line, or a notification that is not one.
    Nothing,
}

/// Reads one line (newline, `\r`, a leading BOM and blank lines allowed).
fn parse(line: &[u8]) -> Parsed {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(BOM).unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Parsed::Nothing;
    }
    let shape_error = match serde_json::from_slice(line) {
        Ok(message) => return Parsed::Message(Box::new(message)),
        Err(e) => e,
    };
    let value: Value = match serde_json::from_slice(line) {
        Ok(value) => value,
        Err(e) => {
            return Parsed::Reply(error_response(
                &Value::Null,
                ErrorCode::PARSE_ERROR,
                &format!("Parse error: {e}"),
            ))
        }
    };
    if value.is_array() {
        return Parsed::Reply(error_response(
            &Value::Null,
            ErrorCode::INVALID_REQUEST,
            "Invalid Request: a batch (a JSON array); MCP 2025-06-18 has no batching: \
             send each message on its own line",
        ));
    }
    let is_notification = value
        .as_object()
        .is_some_and(|m| m.get("method").is_some_and(Value::is_string) && !m.contains_key("id"));
    if is_notification {
        return Parsed::Nothing;
    }
    let id = value.get("id").map_or(Value::Null, usable_id);
    Parsed::Reply(error_response(
        &id,
        ErrorCode::INVALID_REQUEST,
        &format!("Invalid Request: {shape_error}"),
    ))
}

/// `id` when it can name a request (an integer or a string), else null.
fn usable_id(id: &Value) -> Value {
    match id {
        Value::String(_) => id.clone(),
        Value::Number(n) if n.is_i64() || n.is_u64() => id.clone(),
        _ => Value::Null,
    }
}

/// A JSON-RPC error response, as one line without its newline.
fn error_response(id: &Value, code: ErrorCode, message: &str) -> Vec<u8> {
    format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"error\":{{\"code\":{},\"message\":{}}}}}",
        code.0,
        Value::from(message)
    )
    .into_bytes()
}

impl<R: AsyncRead + Send + Unpin> Transport<RoleServer> for LineTransport<R> {
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = io::Result<()>> + Send + 'static {
        let queued = serde_json::to_vec(&item)
            .map_err(io::Error::other)
            .and_then(|line| self.queue(line));
        std::future::ready(queued)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            let reply = match self.read_line().await? {
                Read::Oversized(id) => error_response(
                    &id,
                    ErrorCode::INVALID_REQUEST,
                    &format!("Invalid Request: a message longer than {MAX_LINE} bytes, not read"),
                ),
                Read::Line => {
                    let parsed = parse(&self.line);
                    self.line.clear();
                    match parsed {
                        Parsed::Message(message) => match self.session.admit(&message) {
                            Admit::Pass => return Some(*message),
                            Admit::Drop => continue,
                            Admit::Refuse { id, message } => {
                                error_response(&id, ErrorCode::INVALID_REQUEST, &message)
                            }
                        },
                        Parsed::Reply(reply) => reply,
                        Parsed::Nothing => continue,
                    }
                }
            };
            // A closed output shows at the next send; reading goes on.
            let _ = self.queue(reply);
        }
    }

    async fn close(&mut self) -> io::Result<()> {
        drop(self.out.take());
        if let Some(writer) = self.writer.take() {
            let _ = tokio::time::timeout(CLOSE_WAIT, writer).await;
        }
        Ok(())
    }
}

/// Finds the top-level `"id"` of a JSON object fed to it in pieces, without
/// keeping it: for a line too long to read, so its error can name it.
#[derive(Default)]
struct IdScan {
    /// Bytes fed so far that were not whitespace.
    started: bool,
    /// Not an object, or the id was unusable: give up.
    lost: bool,
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// At depth 1, the next string is a key.
    at_key: bool,
    /// The key being read (its first bytes).
    key: Vec<u8>,
    /// Whether the value being read is the id's.
    in_id: bool,
    /// The id's text so far.
    id_text: Vec<u8>,
    /// The id, once read.
    found: Option<Value>,
}

/// The longest key and id text [`IdScan`] keeps.
const ID_TEXT_MAX: usize = 256;

impl IdScan {
    /// Takes the next bytes of the line.
    fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if self.lost || self.found.is_some() {
                return;
            }
            self.byte(b);
        }
    }

    fn byte(&mut self, b: u8) {
        if !self.started {
            match b {
                b' ' | b'\t' | b'\r' | b'\n' => return,
                b'{' => {
                    self.started = true;
                    self.depth = 1;
                    self.at_key = true;
                    return;
                }
                _ => {
                    self.lost = true;
                    return;
                }
            }
        }
        if self.in_id {
            self.id_byte(b);
        }
        if self.in_string {
            if self.escaped {
                self.escaped = false;
            } else if b == b'\\' {
                self.escaped = true;
            } else if b == b'"' {
                self.in_string = false;
                return;
            }
            if self.depth == 1 && self.at_key && self.key.len() < ID_TEXT_MAX {
                self.key.push(b);
            }
            return;
        }
        match b {
            b'"' => {
                self.in_string = true;
                if self.depth == 1 && self.at_key {
                    self.key.clear();
                }
            }
            b':' if self.depth == 1 && self.at_key => {
                self.at_key = false;
                self.in_id = self.key == b"id";
            }
            b',' if self.depth == 1 => self.at_key = true,
            b'{' | b'[' => self.depth += 1,
            b'}' | b']' => self.depth = self.depth.saturating_sub(1),
            _ => {}
        }
    }

    /// One byte of the id's value; `,` or `}` at depth 1 ends it.
    fn id_byte(&mut self, b: u8) {
        let ends = !self.in_string && self.depth == 1 && (b == b',' || b == b'}');
        if !ends {
            if self.id_text.len() >= ID_TEXT_MAX {
                self.lost = true;
            } else {
                self.id_text.push(b);
            }
            return;
        }
        self.in_id = false;
        match serde_json::from_slice::<Value>(&self.id_text) {
            Ok(id) if !usable_id(&id).is_null() => self.found = Some(id),
            _ => self.lost = true,
        }
    }

    /// The id, if one was read.
    fn id(self) -> Value {
        self.found.unwrap_or(Value::Null)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id_of(pieces: &[&str]) -> Value {
        let mut scan = IdScan::default();
        for piece in pieces {
            scan.feed(piece.as_bytes());
        }
        scan.id()
    }

    #[test]
    fn the_id_of_a_skipped_line_is_found_anywhere_at_the_top() {
        let params = format!(
            "{{\"a\": [\"x\\\"id\\\": 9\", {{\"id\": 8}}], \"b\": \"{}\"}}",
            "y".repeat(1000)
        );
        let first = format!("{{\"jsonrpc\": \"2.0\", \"id\": 7, \"params\": {params}");
        assert_eq!(id_of(&[&first]), serde_json::json!(7));
        let last = format!("{{\"method\":\"tools/call\",\"params\":{params},\"id\":\"a,}}\"}}");
        assert_eq!(id_of(&[&last]), serde_json::json!("a,}"));
        // Cut anywhere: the same id.
        for cut in 1..last.len() {
            let (a, b) = last.split_at(cut);
            assert_eq!(id_of(&[a, b]), serde_json::json!("a,}"), "{cut}");
        }
    }

    #[test]
    fn no_id_is_made_up() {
        for line in [
            "[{\"id\": 1}]",
            "{\"params\": {\"id\": 1}}",
            "{\"id\": 1.5, \"x\": 1}",
            "{\"id\": null}",
            "{\"id\": 12",
            "{\"xid\": 3}",
            "7",
        ] {
            assert_eq!(id_of(&[line]), Value::Null, "{line}");
        }
    }

    fn reply(line: &str) -> Value {
        match parse(line.as_bytes()) {
            Parsed::Reply(reply) => serde_json::from_slice(&reply).unwrap(),
            Parsed::Message(m) => panic!("a message: {m:?}"),
            Parsed::Nothing => panic!("nothing"),
        }
    }

    #[test]
    fn lines_that_are_not_messages_get_an_error_response() {
        let r = reply("{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"ping\"");
        assert_eq!(r["error"]["code"], -32700);
        assert_eq!(r["id"], Value::Null);
        assert!(r.as_object().unwrap().contains_key("id"));
        let r = reply("{\"id\": 3, \"method\": \"ping\"}\r\n");
        assert_eq!(
            (r["error"]["code"].clone(), r["id"].clone()),
            (serde_json::json!(-32600), serde_json::json!(3))
        );
        let r = reply("[]");
        assert_eq!(r["error"]["code"], -32600);
        let r = reply("{\"jsonrpc\": \"2.0\", \"id\": 1.5, \"method\": \"tools/list\"}");
        assert_eq!(
            (r["error"]["code"].clone(), r["id"].clone()),
            (serde_json::json!(-32600), Value::Null)
        );
    }

    #[test]
    fn messages_blank_lines_and_notifications_pass() {
        let ping = "\u{feff}{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"ping\"}\r\n";
        assert!(matches!(parse(ping.as_bytes()), Parsed::Message(_)));
        assert!(matches!(parse(b" \t\r\n"), Parsed::Nothing));
        let odd = "{\"method\": \"notifications/initialized\", \"params\": 5}";
        assert!(matches!(parse(odd.as_bytes()), Parsed::Nothing));
    }
}
