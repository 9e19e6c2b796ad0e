//! The `codemode session` JSON-lines protocol (docs/session-protocol.md).
//!
//! One request per line on the input, one answer or event per line on the output. Every request runs
//! in its own task, so a long `exec` never blocks the next line and answers may arrive out of order;
//! they carry the request `id`. A malformed line gets an error answer (with the `id` when one can be
//! read) and the session continues. `manual` tool dispatches are announced as `toolCall` events.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use codemode::{AbortSignal, RunScope};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::host::{ManualCalls, answer_from_json};

/// Longest accepted request line (bytes); longer lines are answered with `line_too_long`.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// A request that could not be served: `{"code", "message"}` in the answer's `error`.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RequestError {
    /// Machine code: `parse_error`, `bad_request`, `unknown_op`, `unknown_call`, `cancelled`, ...
    pub code: String,
    /// What went wrong.
    pub message: String,
}

impl RequestError {
    /// An error with a code and message.
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> RequestError {
        RequestError { code: code.into(), message: message.into() }
    }

    fn bad_request(message: impl Into<String>) -> RequestError {
        RequestError::new("bad_request", message)
    }

    fn to_json(&self) -> Value {
        json!({ "code": self.code, "message": self.message })
    }
}

/// What the session drives: the Code Mode runtime over a fixture catalog (or a test double).
#[async_trait]
pub trait SessionBackend: Send + Sync + 'static {
    /// The model-visible surface (`surface`).
    async fn surface(&self) -> Result<Value, RequestError>;
    /// One `exec` cell; the answer is the Code Mode result JSON. `abort` cancels it.
    async fn exec(&self, scope: RunScope, input: Value, abort: AbortSignal) -> Result<Value, RequestError>;
    /// One `wait`; the answer is the Code Mode result JSON. `abort` cancels it.
    async fn wait(&self, scope: RunScope, input: Value, abort: AbortSignal) -> Result<Value, RequestError>;
    /// Cancels a suspended or running run.
    async fn cancel(&self, run_id: String) -> Result<Value, RequestError>;
    /// Drops every run of a session.
    async fn end_session(&self, session_id: String) -> Result<Value, RequestError>;
    /// Where `manual` calls are parked.
    fn manual_calls(&self) -> Arc<ManualCalls>;
    /// Starts tracking which run each in-flight exec belongs to (for `cancel` by `runId`).
    fn watch_runs(&self) {}
}

/// In-flight requests by JSON-encoded id: their abort signal and task.
type InFlight = Arc<Mutex<HashMap<String, (AbortSignal, JoinHandle<()>)>>>;

/// Runs the protocol until `input` ends and every request has been answered.
pub async fn run_session<R, W>(backend: Arc<dyn SessionBackend>, input: R, output: W) -> std::io::Result<()>
where
    R: AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (tx, mut rx) = mpsc::unbounded_channel::<Line>();
    let writer = tokio::spawn(async move {
        let mut output = output;
        while let Some(line) = rx.recv().await {
            let mut text = line.to_text();
            text.push('\n');
            output.write_all(text.as_bytes()).await?;
            output.flush().await?;
        }
        Ok::<(), std::io::Error>(())
    });
    {
        let events = tx.clone();
        backend.manual_calls().on_call(move |call| {
            let _ = events.send(Line::Event(call.to_event_json()));
        });
    }
    let in_flight: InFlight = Arc::default();
    backend.watch_runs();
    let mut lines = LineReader { input, buffer: Vec::new() };
    while let Some(line) = lines.next().await? {
        let line = match line {
            Ok(line) => line,
            Err(error) => {
                let _ = tx.send(Line::error(RawId::null(), &error));
                continue;
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        let (id, op) = match parse_line(&line) {
            Ok(request) => request,
            Err((id, error)) => {
                let _ = tx.send(Line::error(id, &error));
                continue;
            }
        };
        // `cancel` of an in-flight request by id: abort its task and answer it as cancelled.
        if let Op::CancelRequest(target) = &op {
            let key = target.key();
            let signal = in_flight.lock().unwrap_or_else(|p| p.into_inner()).get(&key).map(|e| e.0.clone());
            let answer = match signal {
                Some(signal) => {
                    // The request answers itself (a `failed` result with code `aborted`).
                    signal.abort();
                    Line::Text(format!(
                        r#"{{"id":{},"result":{{"requestId":{},"cancelled":true}}}}"#,
                        id.as_str(),
                        target.as_str()
                    ))
                }
                None => Line::error(
                    id,
                    &RequestError::new(
                        "unknown_request",
                        format!("no request with id {} is in flight", target.as_str()),
                    ),
                ),
            };
            let _ = tx.send(answer);
            continue;
        }
        let key = id.key();
        if in_flight.lock().unwrap_or_else(|p| p.into_inner()).contains_key(&key) {
            let error = RequestError::bad_request(format!(
                "a request with id {} is still in flight; use unique ids",
                id.as_str()
            ));
            let _ = tx.send(Line::error(id, &error));
            continue;
        }
        let op = with_default_call_id(op, &id);
        let abort = AbortSignal::new();
        let backend = backend.clone();
        let answers = tx.clone();
        let registry = in_flight.clone();
        let answer_id = id.clone();
        // Hold the registry lock while spawning so the task cannot finish (and deregister) before it
        // is registered.
        let mut guard = in_flight.lock().unwrap_or_else(|p| p.into_inner());
        let handle = tokio::spawn({
            let key = key.clone();
            let abort_for_task = abort.clone();
            async move {
                let result = dispatch(&*backend, op, abort_for_task).await;
                registry.lock().unwrap_or_else(|p| p.into_inner()).remove(&key);
                let line = match result {
                    Ok(value) => Line::answer(answer_id, json!({ "result": value })),
                    Err(error) => Line::error(answer_id, &error),
                };
                let _ = answers.send(line);
            }
        });
        guard.insert(key, (abort, handle));
        drop(guard);
    }
    // Input ended: answer what is in flight, then stop writing.
    let remaining: Vec<JoinHandle<()>> =
        in_flight.lock().unwrap_or_else(|p| p.into_inner()).drain().map(|(_, (_, h))| h).collect();
    for handle in remaining {
        let _ = handle.await;
    }
    drop(tx);
    backend.manual_calls().on_call(|_| {});
    writer.await.unwrap_or_else(|e| Err(std::io::Error::other(e)))
}

/// Reads lines of at most [`MAX_LINE_BYTES`]; an over-long line yields an error and is skipped.
struct LineReader<R> {
    input: R,
    buffer: Vec<u8>,
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    async fn next(&mut self) -> std::io::Result<Option<Result<String, RequestError>>> {
        self.buffer.clear();
        let mut too_long = false;
        loop {
            let available = self.input.fill_buf().await?;
            if available.is_empty() {
                if self.buffer.is_empty() && !too_long {
                    return Ok(None);
                }
                break;
            }
            let (chunk, done) = match available.iter().position(|b| *b == b'\n') {
                Some(at) => (&available[..=at], true),
                None => (available, false),
            };
            let consumed = chunk.len();
            if !too_long {
                if self.buffer.len() + chunk.len() > MAX_LINE_BYTES + 1 {
                    too_long = true;
                    self.buffer.clear();
                } else {
                    self.buffer.extend_from_slice(chunk);
                }
            }
            self.input.consume(consumed);
            if done {
                break;
            }
        }
        if too_long {
            return Ok(Some(Err(RequestError::new(
                "line_too_long",
                format!("request lines are limited to {MAX_LINE_BYTES} bytes"),
            ))));
        }
        if self.buffer.last() == Some(&b'\n') {
            self.buffer.pop();
        }
        if self.buffer.last() == Some(&b'\r') {
            self.buffer.pop();
        }
        Ok(Some(
            String::from_utf8(std::mem::take(&mut self.buffer))
                .map_err(|_| RequestError::new("parse_error", "the line is not valid UTF-8")),
        ))
    }
}

/// An answer's `id`: the request's `id` exactly as the client wrote it (its raw JSON text, so
/// `1e400` and integers past 64 bits come back unchanged), or `null`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RawId(String);

impl RawId {
    fn null() -> RawId {
        RawId("null".into())
    }

    fn of(raw: &RawValue) -> RawId {
        RawId(raw.get().to_owned())
    }

    /// The raw JSON text.
    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }

    fn is_string(&self) -> bool {
        self.0.starts_with('"')
    }

    fn is_number(&self) -> bool {
        self.0.starts_with(|c: char| c == '-' || c.is_ascii_digit())
    }

    /// The in-flight key: a string id by its content (escapes do not matter), a number by its text.
    fn key(&self) -> String {
        match serde_json::from_str::<String>(&self.0) {
            Ok(text) if self.is_string() => Value::String(text).to_string(),
            _ => self.0.clone(),
        }
    }

    /// A string id's content, or the number's text (for `req-<id>` call ids).
    fn label(&self) -> String {
        if self.is_string() {
            serde_json::from_str::<String>(&self.0).unwrap_or_else(|_| self.0.clone())
        } else {
            self.0.clone()
        }
    }
}

/// One output line: an event (no id) or an answer to a request.
enum Line {
    Event(Value),
    /// `{"id": <raw>, ...body}`; `body` is an object (`result` or `error`).
    Answer {
        id: RawId,
        body: Value,
    },
    /// A line assembled already.
    Text(String),
}

impl Line {
    fn answer(id: RawId, body: Value) -> Line {
        Line::Answer { id, body }
    }

    fn error(id: RawId, error: &RequestError) -> Line {
        Line::Answer { id, body: json!({ "error": error.to_json() }) }
    }

    fn to_text(&self) -> String {
        match self {
            Line::Event(value) => value.to_string(),
            Line::Text(text) => text.clone(),
            Line::Answer { id, body } => {
                let rest = body.to_string();
                match rest.strip_prefix('{') {
                    Some("}") | None => format!("{{\"id\":{}}}", id.as_str()),
                    Some(members) => format!("{{\"id\":{},{members}", id.as_str()),
                }
            }
        }
    }
}

/// Best effort: read `"id": <number or string>` from a line that is not valid JSON, as raw text.
pub(crate) fn salvage_id(line: &str) -> RawId {
    let Some(at) = line.find("\"id\"") else { return RawId::null() };
    let rest = line[at + 4..].trim_start();
    let Some(rest) = rest.strip_prefix(':') else { return RawId::null() };
    let rest = rest.trim_start();
    let token = if let Some(string) = rest.strip_prefix('"') {
        match string.find('"') {
            Some(end) if !string[..end].contains('\\') => &rest[..end + 2],
            _ => return RawId::null(),
        }
    } else {
        let end = rest
            .find(|c: char| !(c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E')))
            .unwrap_or(rest.len());
        &rest[..end]
    };
    // Only a complete JSON string or number is echoed.
    match serde_json::from_str::<&RawValue>(token) {
        Ok(raw) if raw.get().starts_with(|c: char| c == '"' || c == '-' || c.is_ascii_digit()) => {
            RawId::of(raw)
        }
        _ => RawId::null(),
    }
}

/// Parses one request line: the raw `id` and the operation, or the error answer's id and error.
/// Members other than `id` and `requestId` are read as ordinary JSON values.
pub(crate) fn parse_line(line: &str) -> Result<(RawId, Op), (RawId, RequestError)> {
    let members: Vec<(String, &RawValue)> = match serde_json::from_str::<Members<'_>>(line) {
        Ok(members) => members.0,
        Err(e) => {
            return Err(match serde_json::from_str::<&RawValue>(line) {
                Ok(_) => (RawId::null(), not_an_object()),
                Err(_) => (
                    salvage_id(line),
                    RequestError::new("parse_error", format!("the line is not valid JSON: {e}")),
                ),
            });
        }
    };
    // Like a JSON parser, the last of duplicate members wins.
    let raw_member =
        |name: &str| members.iter().rev().find(|(k, _)| k == name).map(|(_, raw)| RawId::of(raw));
    let (id, request_id) = (raw_member("id"), raw_member("requestId"));
    let mut map = Map::new();
    for (key, raw) in members.iter().filter(|(k, _)| k != "id" && k != "requestId") {
        let value = serde_json::from_str::<Value>(raw.get()).map_err(|e| {
            let error = RequestError::new("parse_error", format!("the line is not valid JSON: {e}"));
            (id.clone().unwrap_or_else(RawId::null), error)
        })?;
        map.insert(key.clone(), value);
    }
    let Some(id) = id else {
        return Err((
            RawId::null(),
            RequestError::bad_request("missing `id` (a number or string the answer will carry)"),
        ));
    };
    if !(id.is_number() || id.is_string()) {
        return Err((id, RequestError::bad_request("`id` must be a number or a string")));
    }
    match parse_op(&Value::Object(map), request_id) {
        Ok(op) => Ok((id, op)),
        Err(error) => Err((id, error)),
    }
}

fn not_an_object() -> RequestError {
    RequestError::bad_request("a request must be a JSON object: {\"id\", \"op\", ...}")
}

/// A JSON object's members in order, values kept as raw text.
struct Members<'a>(Vec<(String, &'a RawValue)>);

impl<'de> serde::Deserialize<'de> for Members<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Members<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Members<'de>, A::Error> {
                let mut out = Vec::new();
                while let Some((key, value)) = map.next_entry::<String, &'de RawValue>()? {
                    out.push((key, value));
                }
                Ok(Members(out))
            }
        }
        deserializer.deserialize_map(Visit)
    }
}

/// Parses a request line without running it (for the fuzz check).
pub(crate) fn check_line(line: &str) -> Result<RawId, RawId> {
    match parse_line(line) {
        Ok((id, _)) => Ok(id),
        Err((id, _)) => Err(id),
    }
}

pub(crate) enum Op {
    Surface,
    Exec(RunScope, Value),
    Wait(RunScope, Value),
    Resolve(String, Value),
    Cancel(String),
    CancelRequest(RawId),
    EndSession(String),
}

const OPS: &str = "surface, exec, wait, resolve, cancel, endSession";

/// The operation of a request whose `id` was read already (`requestId`, raw, read apart too).
fn parse_op(request: &Value, request_id: Option<RawId>) -> Result<Op, RequestError> {
    let Value::Object(map) = request else {
        return Err(not_an_object());
    };
    let op = map
        .get("op")
        .and_then(Value::as_str)
        .ok_or_else(|| RequestError::bad_request(format!("missing `op`; one of {OPS}")))?;
    let input = || map.get("input").cloned().unwrap_or(Value::Null);
    match op {
        "surface" => Ok(Op::Surface),
        "exec" => Ok(Op::Exec(parse_scope(map.get("scope"))?, input())),
        "wait" => Ok(Op::Wait(parse_scope(map.get("scope"))?, input())),
        "resolve" => {
            let call_id = map
                .get("callId")
                .and_then(Value::as_str)
                .ok_or_else(|| RequestError::bad_request("resolve needs `callId` (from a toolCall event)"))?;
            Ok(Op::Resolve(call_id.to_owned(), request.clone()))
        }
        "cancel" => {
            if let Some(target) = request_id {
                return Ok(Op::CancelRequest(target));
            }
            let run_id = map
                .get("runId")
                .or_else(|| map.get("input").and_then(|i| i.get("runId")))
                .and_then(Value::as_str)
                .ok_or_else(|| {
                    RequestError::bad_request(
                        "cancel needs `runId` (a run) or `requestId` (an in-flight request)",
                    )
                })?;
            Ok(Op::Cancel(run_id.to_owned()))
        }
        "endSession" => {
            let session = map
                .get("scope")
                .and_then(|s| s.get("session"))
                .or_else(|| map.get("session"))
                .and_then(Value::as_str)
                .ok_or_else(|| RequestError::bad_request("endSession needs `scope.session`"))?;
            Ok(Op::EndSession(session.to_owned()))
        }
        other => Err(RequestError::new("unknown_op", format!("unknown op {other:?}; one of {OPS}"))),
    }
}

/// `{"session", "run", "agent"?, "callId"?}`; defaults: session `default`, run `default`.
fn parse_scope(scope: Option<&Value>) -> Result<RunScope, RequestError> {
    let Some(scope) = scope else { return Ok(RunScope::new("default", "default")) };
    let Value::Object(map) = scope else {
        return Err(RequestError::bad_request(
            "`scope` must be an object {\"session\", \"run\", \"agent\"?, \"callId\"?}",
        ));
    };
    if let Some(key) = map.keys().find(|k| !["session", "run", "agent", "callId"].contains(&k.as_str())) {
        return Err(RequestError::bad_request(format!(
            "unknown scope field {key:?}; allowed: session, run, agent, callId"
        )));
    }
    let text = |key: &str| -> Result<Option<String>, RequestError> {
        match map.get(key) {
            None => Ok(None),
            Some(Value::String(s)) if !s.is_empty() => Ok(Some(s.clone())),
            Some(_) => Err(RequestError::bad_request(format!("`scope.{key}` must be a non-empty string"))),
        }
    };
    let mut out = RunScope::new(
        text("session")?.unwrap_or_else(|| "default".into()),
        text("run")?.unwrap_or_else(|| "default".into()),
    );
    if let Some(agent) = text("agent")? {
        out = out.with_agent(agent);
    }
    if let Some(call_id) = text("callId")? {
        out = out.with_call_id(call_id);
    }
    Ok(out)
}

/// An exec without `scope.callId` gets `req-<id>`, so its nested calls (and `cancel` by `runId`) can
/// be traced back to the request.
fn with_default_call_id(op: Op, id: &RawId) -> Op {
    match op {
        Op::Exec(scope, input) if scope.call_id.is_none() => {
            Op::Exec(scope.with_call_id(format!("req-{}", id.label())), input)
        }
        other => other,
    }
}

async fn dispatch(backend: &dyn SessionBackend, op: Op, abort: AbortSignal) -> Result<Value, RequestError> {
    match op {
        Op::Surface => backend.surface().await,
        Op::Exec(scope, input) => backend.exec(scope, input, abort).await,
        Op::Wait(scope, input) => backend.wait(scope, input, abort).await,
        Op::Resolve(call_id, request) => {
            let answer = answer_from_json(&request).map_err(RequestError::bad_request)?;
            backend
                .manual_calls()
                .resolve(&call_id, answer)
                .map_err(|e| RequestError::new("unknown_call", e.to_string()))?;
            Ok(json!({ "callId": call_id, "resolved": true }))
        }
        Op::Cancel(run_id) => backend.cancel(run_id).await,
        Op::CancelRequest(_) => {
            Err(RequestError::bad_request("cancel by requestId is handled by the reader"))
        }
        Op::EndSession(session) => backend.end_session(session).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn salvages_ids_from_broken_lines() {
        assert_eq!(salvage_id(r#"{"id": 7, "op": "exec", "#).as_str(), "7");
        assert_eq!(salvage_id(r#"{"id":"a-1","op":}"#).as_str(), r#""a-1""#);
        assert_eq!(salvage_id(r#"{"id": 1e400, "op": "#).as_str(), "1e400");
        assert_eq!(salvage_id(r#"{"id": 12345678901234567890123, "#).as_str(), "12345678901234567890123");
        assert_eq!(salvage_id(r#"{"id": 1e, "#).as_str(), "null");
        assert_eq!(salvage_id("garbage").as_str(), "null");
    }

    #[test]
    fn ids_are_echoed_as_written() {
        for raw in ["1e400", "12345678901234567890123", "-0", "1.50", r#""a\u0041""#] {
            let line = format!(r#"{{"id": {raw}, "op": "surface"}}"#);
            let (id, op) = parse_line(&line).unwrap_or_else(|(_, e)| panic!("{raw}: {e:?}"));
            assert!(matches!(op, Op::Surface));
            assert_eq!(id.as_str(), raw);
            let text = Line::answer(id, json!({ "result": 1 })).to_text();
            assert_eq!(text, format!(r#"{{"id":{raw},"result":1}}"#));
        }
        let (id, _) = parse_line(r#"{"id": [1], "op": "surface"}"#).err().unwrap();
        assert_eq!(id.as_str(), "[1]");
        let (id, e) = parse_line(r#"[1]"#).err().unwrap();
        assert_eq!((id.as_str(), e.code.as_str()), ("null", "bad_request"));
        // Same string id, different escapes: one in-flight key.
        assert_eq!(RawId(r#""aA""#.into()).key(), RawId(r#""a\u0041""#.into()).key());
    }
}
