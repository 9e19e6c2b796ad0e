//! Newline-delimited JSON-RPC over a byte stream (the MCP stdio transport) for both sides of the
//! gateway, with answers for every line it cannot use.
//!
//! rmcp's own stdio transport drops a line it cannot parse or that is too long without a word, so
//! the peer that sent it waits forever. Here:
//! - Lines are read with a bound ([`MAX_MESSAGE_BYTES`]); an oversized line is discarded as it
//!   streams, keeping only its first [`ENVELOPE_PREFIX_BYTES`] to find its `id`.
//! - [`ServerWire`] (the gateway's client on stdio): a request the gateway cannot use (too long,
//!   nested deeper than serde_json's limit, not JSON, not an MCP message) is answered with a
//!   JSON-RPC error carrying its `id`.
//! - [`ClientWire`] (an upstream child process): a reply the gateway cannot use (too long,
//!   unparsable, or with an `id` the gateway never sent) fails the requests it may belong to at
//!   once, as JSON-RPC errors rmcp hands to the callers, instead of letting them time out.
//!
//! The envelope of an unusable line is read by [`scan_envelope`], an iterative scanner (no
//! recursion, so no nesting depth can overflow a stack).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use rmcp::model::{ErrorCode, ErrorData, JsonRpcMessage, NumberOrString, RequestId, ServerJsonRpcMessage};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::{RoleClient, RoleServer};
use serde::de::DeserializeOwned;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, watch};

/// The largest JSON-RPC message (one line) either side accepts: 16 MiB, rmcp's own default.
pub const MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

/// How much of an oversized line is kept to find its `id`.
pub const ENVELOPE_PREFIX_BYTES: usize = 64 * 1024;

/// serde_json's nesting limit (it refuses deeper documents instead of recursing further).
pub const MAX_NESTING: usize = 128;

/// Request ids remembered per upstream (in flight, then recently cancelled) before the oldest is
/// forgotten.
const MAX_TRACKED_IDS: usize = 4096;

/// One line off the wire.
enum Line {
    /// A whole line (without its newline).
    Whole(Vec<u8>),
    /// A line longer than the limit: its first bytes and its length so far.
    Oversized(Vec<u8>),
}

/// Reads lines from `reader` into `lines` until end of input; then marks `closed`.
async fn read_lines(reader: impl AsyncRead + Unpin, lines: mpsc::Sender<Line>, closed: watch::Sender<bool>) {
    let mut reader = BufReader::with_capacity(64 * 1024, reader);
    let mut line = Vec::new();
    let mut oversized = false;
    loop {
        let available = match reader.fill_buf().await {
            Ok(available) => available,
            Err(e) => {
                tracing::debug!("reading the MCP stream failed: {e}");
                break;
            }
        };
        if available.is_empty() {
            break;
        }
        let newline = available.iter().position(|b| *b == b'\n');
        let take = newline.map_or(available.len(), |i| i + 1);
        let chunk = &available[..newline.unwrap_or(take)];
        if !oversized && line.len() + chunk.len() > MAX_MESSAGE_BYTES {
            oversized = true;
            line.truncate(ENVELOPE_PREFIX_BYTES);
        }
        if oversized {
            let room = ENVELOPE_PREFIX_BYTES.saturating_sub(line.len());
            line.extend_from_slice(&chunk[..room.min(chunk.len())]);
        } else {
            line.extend_from_slice(chunk);
        }
        reader.consume(take);
        if newline.is_some() {
            let whole = std::mem::take(&mut line);
            let item =
                if std::mem::take(&mut oversized) { Line::Oversized(whole) } else { Line::Whole(whole) };
            if lines.send(item).await.is_err() {
                break;
            }
        }
    }
    let _ = closed.send(true);
}

/// The reading half shared by both sides: a task feeding lines through a one-slot channel (so at
/// most two messages are held in memory), aborted when the transport is dropped.
struct Reader {
    lines: mpsc::Receiver<Line>,
    task: tokio::task::JoinHandle<()>,
}

impl Reader {
    fn spawn(reader: impl AsyncRead + Unpin + Send + 'static) -> (Reader, watch::Receiver<bool>) {
        let (sender, lines) = mpsc::channel(1);
        let (closed_tx, closed) = watch::channel(false);
        let task = tokio::spawn(read_lines(reader, sender, closed_tx));
        (Reader { lines, task }, closed)
    }
}

impl Drop for Reader {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The writing half: whole lines under one lock, so concurrent sends never interleave.
type Writer<W> = Arc<tokio::sync::Mutex<Option<W>>>;

fn write_line<W: AsyncWrite + Unpin + Send + 'static>(
    writer: &Writer<W>,
    bytes: std::io::Result<Vec<u8>>,
) -> impl std::future::Future<Output = std::io::Result<()>> + Send + 'static {
    let writer = writer.clone();
    async move {
        let mut bytes = bytes?;
        bytes.push(b'\n');
        let mut guard = writer.lock().await;
        let Some(out) = guard.as_mut() else {
            return Err(std::io::Error::new(std::io::ErrorKind::NotConnected, "the MCP stream is closed"));
        };
        out.write_all(&bytes).await?;
        out.flush().await
    }
}

fn encode(message: &impl serde::Serialize) -> std::io::Result<Vec<u8>> {
    serde_json::to_vec(message).map_err(std::io::Error::other)
}

/// What [`scan_envelope`] found at the top level of a JSON-RPC line.
#[derive(Debug, Default, PartialEq)]
pub struct Envelope {
    /// The `id` member, if it is a string or an integer.
    pub id: Option<RequestId>,
    /// Whether a `method` member is present (a request or notification, not a reply).
    pub has_method: bool,
}

/// Reads the top-level `id` and whether there is a `method` from a (possibly truncated or
/// invalid) JSON object, skipping every other value without recursion.
pub fn scan_envelope(bytes: &[u8]) -> Envelope {
    let mut out = Envelope::default();
    let mut s = Scanner { b: bytes, i: 0 };
    s.ws();
    if !s.eat(b'{') {
        return out;
    }
    loop {
        s.ws();
        match s.peek() {
            Some(b',') => {
                s.i += 1;
                continue;
            }
            Some(b'"') => {}
            _ => return out,
        }
        let Some(key) = s.string() else { return out };
        s.ws();
        if !s.eat(b':') {
            return out;
        }
        s.ws();
        match key {
            b"id" => {
                let start = s.i;
                if s.peek() == Some(b'"') {
                    match s.string() {
                        Some(raw) => {
                            let text = serde_json::from_slice::<String>(&s.b[start..s.i])
                                .unwrap_or_else(|_| String::from_utf8_lossy(raw).into_owned());
                            out.id = Some(NumberOrString::String(text.into()));
                        }
                        None => return out,
                    }
                } else {
                    s.scalar();
                    out.id = std::str::from_utf8(&s.b[start..s.i])
                        .ok()
                        .and_then(|t| t.trim().parse::<i64>().ok())
                        .map(NumberOrString::Number);
                }
                continue;
            }
            b"method" => out.has_method = true,
            _ => {}
        }
        if !s.skip_value() {
            return out;
        }
    }
}

struct Scanner<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Scanner<'a> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn eat(&mut self, byte: u8) -> bool {
        let hit = self.peek() == Some(byte);
        self.i += usize::from(hit);
        hit
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\r' | b'\n')) {
            self.i += 1;
        }
    }

    /// A string starting at `"`: its raw contents (escapes not decoded), or None if it never ends.
    fn string(&mut self) -> Option<&'a [u8]> {
        let start = self.i + 1;
        let mut j = start;
        while j < self.b.len() {
            match self.b[j] {
                b'\\' => j += 2,
                b'"' => {
                    self.i = j + 1;
                    return Some(&self.b[start..j]);
                }
                _ => j += 1,
            }
        }
        self.i = self.b.len();
        None
    }

    /// A number, literal or anything else up to the next delimiter.
    fn scalar(&mut self) {
        while !matches!(self.peek(), None | Some(b',' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n')) {
            self.i += 1;
        }
    }

    /// Any value, containers by counting brackets outside strings. False if the input ends first.
    fn skip_value(&mut self) -> bool {
        match self.peek() {
            None => false,
            Some(b'"') => self.string().is_some(),
            Some(b'{' | b'[') => {
                let mut depth = 0usize;
                while let Some(byte) = self.peek() {
                    match byte {
                        b'"' => {
                            if self.string().is_none() {
                                return false;
                            }
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                self.i += 1;
                                return true;
                            }
                        }
                        _ => {}
                    }
                    self.i += 1;
                }
                false
            }
            Some(_) => {
                self.scalar();
                true
            }
        }
    }
}

/// Why a line cannot be used.
#[derive(Debug)]
struct Unusable {
    envelope: Envelope,
    code: ErrorCode,
    reason: String,
}

/// Parses one line as a message for `M`. `Ok(None)`: nothing to deliver (an empty line, or a
/// notification that does not parse, which MCP peers ignore, like rmcp's own transport does).
fn parse<M: DeserializeOwned>(line: Line) -> Result<Option<M>, Unusable> {
    let bytes = match line {
        Line::Oversized(prefix) => {
            return Err(Unusable {
                envelope: scan_envelope(&prefix),
                code: ErrorCode::INVALID_REQUEST,
                reason: format!("the message is larger than {} MiB", MAX_MESSAGE_BYTES >> 20),
            });
        }
        Line::Whole(bytes) => bytes,
    };
    let mut text: &[u8] = &bytes;
    text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
    text = text.strip_suffix(b"\r").unwrap_or(text);
    if text.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    match serde_json::from_slice::<M>(text) {
        Ok(message) => Ok(Some(message)),
        Err(e) => {
            let envelope = scan_envelope(text);
            if envelope.has_method && envelope.id.is_none() {
                tracing::debug!("ignoring a notification that does not parse: {e}");
                return Ok(None);
            }
            let (code, reason) = if e.to_string().starts_with("recursion limit exceeded") {
                (
                    ErrorCode::INVALID_REQUEST,
                    format!("the message is nested deeper than {MAX_NESTING} levels"),
                )
            } else {
                match e.classify() {
                    serde_json::error::Category::Syntax | serde_json::error::Category::Eof => {
                        (ErrorCode::PARSE_ERROR, format!("the message is not valid JSON ({e})"))
                    }
                    _ => (
                        ErrorCode::INVALID_REQUEST,
                        "the message is not a valid MCP JSON-RPC message".to_owned(),
                    ),
                }
            };
            Err(Unusable { envelope, code, reason })
        }
    }
}

/// The gateway's side of its MCP client's stdio: answers every request line it cannot use.
pub struct ServerWire<W> {
    reader: Reader,
    writer: Writer<W>,
}

impl<W: AsyncWrite + Unpin + Send + 'static> ServerWire<W> {
    /// A transport over `read`/`write`, and a flag that turns true when `read` ends (so the
    /// gateway can stop even while nothing polls the transport, e.g. during start-up).
    pub fn new(
        read: impl AsyncRead + Unpin + Send + 'static,
        write: W,
    ) -> (ServerWire<W>, watch::Receiver<bool>) {
        let (reader, closed) = Reader::spawn(read);
        (ServerWire { reader, writer: Arc::new(tokio::sync::Mutex::new(Some(write))) }, closed)
    }
}

impl<W: AsyncWrite + Unpin + Send + 'static> Transport<RoleServer> for ServerWire<W> {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        write_line(&self.writer, encode(&item))
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            let line = self.reader.lines.recv().await?;
            match parse::<RxJsonRpcMessage<RoleServer>>(line) {
                Ok(Some(message)) => return Some(message),
                Ok(None) => {}
                Err(bad) => match bad.envelope.id {
                    Some(id) if bad.envelope.has_method => {
                        tracing::warn!(reason = %bad.reason, "answering an unusable request with an error");
                        let reply: ServerJsonRpcMessage =
                            JsonRpcMessage::error(ErrorData::new(bad.code, bad.reason, None), Some(id));
                        // Detached, so a cancelled receive cannot lose the answer.
                        tokio::spawn(write_line(&self.writer, encode(&reply)));
                    }
                    _ => {
                        tracing::warn!(reason = %bad.reason, "ignoring an unusable message without a request id")
                    }
                },
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        drop(self.writer.lock().await.take());
        Ok(())
    }
}

/// Request ids an upstream may still answer: in flight, or cancelled recently (a late answer to a
/// cancelled request is normal, not a wrong id).
#[derive(Default)]
struct Ids {
    in_flight: HashMap<RequestId, u64>,
    cancelled: VecDeque<RequestId>,
    next: u64,
}

impl Ids {
    fn sent(&mut self, id: RequestId) {
        if self.in_flight.len() >= MAX_TRACKED_IDS
            && let Some(oldest) = self.in_flight.iter().min_by_key(|(_, n)| **n).map(|(id, _)| id.clone())
        {
            self.in_flight.remove(&oldest);
        }
        self.next += 1;
        self.in_flight.insert(id, self.next);
    }

    fn cancel(&mut self, id: &RequestId) {
        if self.in_flight.remove(id).is_some() {
            if self.cancelled.len() >= MAX_TRACKED_IDS {
                self.cancelled.pop_front();
            }
            self.cancelled.push_back(id.clone());
        }
    }

    /// Whether a reply with `id` belongs to a request sent here (and forgets the request).
    fn answered(&mut self, id: &RequestId) -> bool {
        if self.in_flight.remove(id).is_some() {
            return true;
        }
        match self.cancelled.iter().position(|c| c == id) {
            Some(at) => {
                self.cancelled.remove(at);
                true
            }
            None => false,
        }
    }

    fn take_all(&mut self) -> Vec<RequestId> {
        let mut ids: Vec<(RequestId, u64)> = self.in_flight.drain().collect();
        ids.sort_by_key(|(_, n)| *n);
        ids.into_iter().map(|(id, _)| id).collect()
    }
}

/// The gateway's side of an upstream's stdio: replies it cannot use fail their requests at once.
pub struct ClientWire<W> {
    server: String,
    reader: Reader,
    writer: Writer<W>,
    ids: Arc<Mutex<Ids>>,
    queued: VecDeque<RxJsonRpcMessage<RoleClient>>,
}

impl<W: AsyncWrite + Unpin + Send + 'static> ClientWire<W> {
    /// A transport to upstream `server` reading its replies from `read`.
    pub fn new(server: &str, read: impl AsyncRead + Unpin + Send + 'static, write: W) -> ClientWire<W> {
        let (reader, _closed) = Reader::spawn(read);
        ClientWire {
            server: server.to_owned(),
            reader,
            writer: Arc::new(tokio::sync::Mutex::new(Some(write))),
            ids: Arc::default(),
            queued: VecDeque::new(),
        }
    }

    fn ids(&self) -> std::sync::MutexGuard<'_, Ids> {
        self.ids.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Fails every request in flight (a reply arrived that cannot be matched to one of them).
    fn fail_all(&mut self, reason: &str) {
        let ids = self.ids().take_all();
        tracing::warn!(server = %self.server, failed = ids.len(), "{reason}; failing the requests in flight");
        for id in ids {
            self.queued.push_back(failure(reason, id));
        }
    }
}

pub(crate) fn failure(reason: &str, id: RequestId) -> RxJsonRpcMessage<RoleClient> {
    JsonRpcMessage::error(
        ErrorData::new(ErrorCode::INTERNAL_ERROR, format!("its reply could not be used: {reason}"), None),
        Some(id),
    )
}

fn reply_id<Req, Resp, Not>(message: &JsonRpcMessage<Req, Resp, Not>) -> Option<Option<&RequestId>> {
    match message {
        JsonRpcMessage::Response(r) => Some(Some(&r.id)),
        JsonRpcMessage::Error(e) => Some(e.id.as_ref()),
        _ => None,
    }
}

impl<W: AsyncWrite + Unpin + Send + 'static> Transport<RoleClient> for ClientWire<W> {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        match &item {
            JsonRpcMessage::Request(request) => self.ids().sent(request.id.clone()),
            JsonRpcMessage::Notification(n) => {
                if let rmcp::model::ClientNotification::CancelledNotification(c) = &n.notification
                    && let Some(id) = &c.params.request_id
                {
                    self.ids().cancel(id);
                }
            }
            _ => {}
        }
        write_line(&self.writer, encode(&item))
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            if let Some(message) = self.queued.pop_front() {
                return Some(message);
            }
            let line = self.reader.lines.recv().await?;
            match parse::<RxJsonRpcMessage<RoleClient>>(line) {
                Ok(Some(message)) => match reply_id(&message) {
                    None => return Some(message),
                    Some(Some(id)) if self.ids().answered(id) => return Some(message),
                    Some(id) => {
                        let shown = id.map_or_else(|| "none".to_owned(), |id| id.to_string());
                        self.fail_all(&format!(
                            "it answered with id {shown}, which the gateway did not send"
                        ));
                    }
                },
                Ok(None) => {}
                Err(bad) => match bad.envelope.id {
                    Some(id) if bad.envelope.has_method => {
                        tracing::warn!(server = %self.server, reason = %bad.reason, "answering an unusable upstream request");
                        let reply: TxJsonRpcMessage<RoleClient> =
                            JsonRpcMessage::error(ErrorData::new(bad.code, bad.reason, None), Some(id));
                        tokio::spawn(write_line(&self.writer, encode(&reply)));
                    }
                    Some(id) if self.ids().answered(&id) => {
                        tracing::warn!(server = %self.server, reason = %bad.reason, "upstream reply could not be used");
                        self.queued.push_back(failure(&bad.reason, id));
                    }
                    _ if bad.envelope.has_method => {}
                    _ => self.fail_all(&format!("{} and its id could not be read", bad.reason)),
                },
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        drop(self.writer.lock().await.take());
        Ok(())
    }
}
