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
use serde_json::{Value, json};
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
    let (tx, mut rx) = mpsc::unbounded_channel::<Value>();
    let writer = tokio::spawn(async move {
        let mut output = output;
        while let Some(line) = rx.recv().await {
            let mut text = line.to_string();
            text.push('\n');
            output.write_all(text.as_bytes()).await?;
            output.flush().await?;
        }
        Ok::<(), std::io::Error>(())
    });
    {
        let events = tx.clone();
        backend.manual_calls().on_call(move |call| {
            let _ = events.send(call.to_event_json());
        });
    }
    let in_flight: InFlight = Arc::default();
    backend.watch_runs();
    let mut lines = LineReader { input, buffer: Vec::new() };
    while let Some(line) = lines.next().await? {
        let line = match line {
            Ok(line) => line,
            Err(error) => {
                let _ = tx.send(json!({ "id": null, "error": error.to_json() }));
                continue;
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        let request: Value = match serde_json::from_str(&line) {
            Ok(v) => v,
            Err(e) => {
                let id = salvage_id(&line);
                let error = RequestError::new("parse_error", format!("the line is not valid JSON: {e}"));
                let _ = tx.send(json!({ "id": id, "error": error.to_json() }));
                continue;
            }
        };
        let id = request.get("id").cloned().unwrap_or(Value::Null);
        let op = match parse_op(&request) {
            Ok(op) => op,
            Err(error) => {
                let _ = tx.send(json!({ "id": id, "error": error.to_json() }));
                continue;
            }
        };
        // `cancel` of an in-flight request by id: abort its task and answer it as cancelled.
        if let Op::CancelRequest(target) = &op {
            let key = target.to_string();
            let signal = in_flight.lock().unwrap_or_else(|p| p.into_inner()).get(&key).map(|e| e.0.clone());
            let answer = match signal {
                Some(signal) => {
                    // The request answers itself (a `failed` result with code `aborted`).
                    signal.abort();
                    json!({ "id": id, "result": { "requestId": target, "cancelled": true } })
                }
                None => {
                    json!({ "id": id, "error": RequestError::new("unknown_request", format!("no request with id {key} is in flight")).to_json() })
                }
            };
            let _ = tx.send(answer);
            continue;
        }
        let key = id.to_string();
        if in_flight.lock().unwrap_or_else(|p| p.into_inner()).contains_key(&key) {
            let error = RequestError::bad_request(format!(
                "a request with id {key} is still in flight; use unique ids"
            ));
            let _ = tx.send(json!({ "id": id, "error": error.to_json() }));
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
                    Ok(value) => json!({ "id": answer_id, "result": value }),
                    Err(error) => json!({ "id": answer_id, "error": error.to_json() }),
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

/// Best effort: read `"id": <number or string>` from a line that is not valid JSON.
pub(crate) fn salvage_id(line: &str) -> Value {
    let Some(at) = line.find("\"id\"") else { return Value::Null };
    let rest = line[at + 4..].trim_start();
    let Some(rest) = rest.strip_prefix(':') else { return Value::Null };
    let rest = rest.trim_start();
    if let Some(string) = rest.strip_prefix('"') {
        return match string.find('"') {
            Some(end) if !string[..end].contains('\\') => Value::String(string[..end].to_owned()),
            _ => Value::Null,
        };
    }
    let number: String = rest.chars().take_while(|c| c.is_ascii_digit() || *c == '-').collect();
    number.parse::<i64>().map(Value::from).unwrap_or(Value::Null)
}

/// Parses a request without running it (for the fuzz check).
pub(crate) fn check_request(request: &Value) -> Result<(), RequestError> {
    parse_op(request).map(|_| ())
}

enum Op {
    Surface,
    Exec(RunScope, Value),
    Wait(RunScope, Value),
    Resolve(String, Value),
    Cancel(String),
    CancelRequest(Value),
    EndSession(String),
}

const OPS: &str = "surface, exec, wait, resolve, cancel, endSession";

fn parse_op(request: &Value) -> Result<Op, RequestError> {
    let Value::Object(map) = request else {
        return Err(RequestError::bad_request("a request must be a JSON object: {\"id\", \"op\", ...}"));
    };
    match map.get("id") {
        Some(Value::Number(_)) | Some(Value::String(_)) => {}
        None => {
            return Err(RequestError::bad_request("missing `id` (a number or string the answer will carry)"));
        }
        Some(_) => return Err(RequestError::bad_request("`id` must be a number or a string")),
    }
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
            if let Some(target) = map.get("requestId") {
                return Ok(Op::CancelRequest(target.clone()));
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
fn with_default_call_id(op: Op, id: &Value) -> Op {
    match op {
        Op::Exec(scope, input) if scope.call_id.is_none() => {
            let suffix = match id {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            Op::Exec(scope.with_call_id(format!("req-{suffix}")), input)
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
        assert_eq!(salvage_id(r#"{"id": 7, "op": "exec", "#), json!(7));
        assert_eq!(salvage_id(r#"{"id":"a-1","op":}"#), json!("a-1"));
        assert_eq!(salvage_id("garbage"), Value::Null);
    }
}
