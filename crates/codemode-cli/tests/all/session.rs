//! `codemode session` driven as a child process over stdin/stdout.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::fixture_path;

struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Value>,
    /// Lines read but not yet matched by `expect`.
    backlog: Vec<Value>,
}

impl Session {
    fn start(config: Option<&str>) -> Session {
        let mut command = Command::new(env!("CARGO_BIN_EXE_codemode"));
        command.arg("session").arg("--catalog").arg(fixture_path("session.json"));
        if let Some(config) = config {
            command.arg("--config").arg(fixture_path(config));
        }
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start codemode session");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let value: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("non-JSON output line {line:?}: {e}"));
                if tx.send(value).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Session { child, stdin, lines, backlog: Vec::new() }
    }

    fn send_raw(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    fn send(&mut self, request: Value) {
        self.send_raw(&request.to_string());
    }

    /// The first line (in arrival order) matching `pred`; other lines stay in the backlog.
    fn expect(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        if let Some(at) = self.backlog.iter().position(&pred) {
            return self.backlog.remove(at);
        }
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) if pred(&line) => return line,
                Ok(line) => self.backlog.push(line),
                Err(RecvTimeoutError::Timeout) => {
                    panic!("timed out waiting for {what}; backlog: {:?}", self.backlog)
                }
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("session ended while waiting for {what}; backlog: {:?}", self.backlog)
                }
            }
        }
    }

    fn answer(&mut self, id: Value) -> Value {
        self.expect(&format!("answer {id}"), |l| l.get("id") == Some(&id) && l.get("event").is_none())
    }

    fn next_line(&mut self) -> Value {
        if !self.backlog.is_empty() {
            return self.backlog.remove(0);
        }
        self.lines.recv_timeout(Duration::from_secs(20)).expect("a line")
    }

    fn close(mut self) {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(status.success(), "session exited with {status}");
                return;
            }
            assert!(Instant::now() < deadline, "session did not exit after stdin closed");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn exec(id: u64, code: &str) -> Value {
    json!({ "id": id, "op": "exec", "scope": { "session": "s1", "run": "r1" }, "input": { "code": code } })
}

#[test]
fn surface_shows_exec_wait_and_direct_only_tools() {
    let mut s = Session::start(None);
    s.send(json!({ "id": 1, "op": "surface" }));
    let answer = s.answer(json!(1));
    let names: Vec<&str> =
        answer["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["exec", "wait", "snapshot"]);
    assert_eq!(answer["result"]["codeMode"], json!(true));
    s.close();
}

#[test]
fn requests_run_concurrently_and_answers_carry_their_id() {
    let mut s = Session::start(None);
    s.send(exec(1, "return await tools.callValue('openclaw:core:slow', {});"));
    s.send(exec(2, "return 1 + 1;"));
    let first = s.next_line();
    assert_eq!(first["id"], json!(2), "the fast exec answers first: {first}");
    assert_eq!(first["result"]["status"], json!("completed"));
    assert_eq!(first["result"]["value"], json!(2));
    let second = s.answer(json!(1));
    assert_eq!(second["result"]["value"], json!({ "slow": true }), "{second}");
    s.close();
}

#[test]
fn manual_calls_are_announced_and_resolved_while_exec_runs() {
    let mut s = Session::start(None);
    s.send(exec(1, "const r = await tools.approve({ what: 'deploy' }); return { approved: r };"));
    let event = s.expect("toolCall event", |l| l["event"] == "toolCall");
    assert_eq!(event["toolId"], json!("openclaw:core:approve"));
    assert_eq!(event["input"], json!({ "what": "deploy" }));
    assert!(event["runId"].as_str().is_some_and(|r| !r.is_empty()));
    let call_id = event["callId"].clone();
    s.send(json!({ "id": 2, "op": "resolve", "callId": call_id, "result": { "ok": true } }));
    assert_eq!(s.answer(json!(2))["result"]["resolved"], json!(true));
    let done = s.answer(json!(1));
    assert_eq!(done["result"]["status"], json!("completed"), "{done}");
    assert_eq!(done["result"]["value"], json!({ "approved": { "ok": true } }));
    // The same call cannot be resolved twice.
    s.send(json!({ "id": 3, "op": "resolve", "callId": call_id, "result": 1 }));
    assert_eq!(s.answer(json!(3))["error"]["code"], json!("unknown_call"));
    s.close();
}

#[test]
fn manual_call_resolved_after_waiting_then_wait_completes() {
    let mut s = Session::start(Some("fast-config.json"));
    s.send(exec(1, "text('before'); const r = await tools.approve({ what: 'x' }); text('after'); return r;"));
    let event = s.expect("toolCall event", |l| l["event"] == "toolCall");
    let waiting = s.answer(json!(1));
    assert_eq!(waiting["result"]["status"], json!("waiting"), "{waiting}");
    let pending = &waiting["result"]["pendingToolCalls"][0];
    assert_eq!(pending["callId"], event["callId"]);
    assert_eq!(pending["toolId"], json!("openclaw:core:approve"));
    assert_eq!(pending["input"], json!({ "what": "x" }));
    let run_id = waiting["result"]["runId"].clone();
    assert_eq!(run_id, event["runId"]);
    s.send(json!({ "id": 2, "op": "resolve", "callId": event["callId"], "result": "approved" }));
    s.answer(json!(2));
    s.send(json!({ "id": 3, "op": "wait", "scope": { "session": "s1", "run": "r1" }, "input": { "runId": run_id } }));
    let done = s.answer(json!(3));
    assert_eq!(done["result"]["status"], json!("completed"), "{done}");
    assert_eq!(done["result"]["value"], json!("approved"));
    assert!(done["result"]["output"].to_string().contains("after"), "{done}");
    s.close();
}

#[test]
fn malformed_lines_get_errors_and_the_session_continues() {
    let mut s = Session::start(None);
    s.send_raw("this is not json");
    let e = s.next_line();
    assert_eq!(e["id"], Value::Null);
    assert_eq!(e["error"]["code"], json!("parse_error"));
    s.send_raw(r#"{"id": 5, "op": "exec", "input": {"code": }"#);
    let e = s.next_line();
    assert_eq!((e["id"].clone(), e["error"]["code"].clone()), (json!(5), json!("parse_error")));
    s.send(json!({ "id": "x", "op": "bogus" }));
    let e = s.next_line();
    assert_eq!((e["id"].clone(), e["error"]["code"].clone()), (json!("x"), json!("unknown_op")));
    s.send(json!({ "op": "surface" }));
    assert_eq!(s.next_line()["error"]["code"], json!("bad_request"));
    s.send(json!({ "id": 6, "op": "exec", "scope": "nope", "input": {} }));
    assert_eq!(s.answer(json!(6))["error"]["code"], json!("bad_request"));
    s.send(json!({ "id": 7, "op": "exec", "input": { "code": 42 } }));
    let invalid = s.answer(json!(7));
    assert_eq!(invalid["result"]["status"], json!("failed"));
    assert_eq!(invalid["result"]["code"], json!("invalid_input"));
    s.send(json!({ "id": 8, "op": "surface" }));
    assert!(s.answer(json!(8))["result"]["tools"].is_array());
    s.close();
}

#[test]
fn cancel_an_in_flight_exec_by_request_id() {
    let mut s = Session::start(None);
    s.send(exec(1, "await tools.approve({ what: 'never' }); return 'unreachable';"));
    s.expect("toolCall event", |l| l["event"] == "toolCall");
    s.send(json!({ "id": 2, "op": "cancel", "requestId": 1 }));
    assert_eq!(s.answer(json!(2))["result"]["cancelled"], json!(true));
    let aborted = s.answer(json!(1));
    assert_eq!(aborted["result"]["status"], json!("failed"), "{aborted}");
    assert_eq!(aborted["result"]["code"], json!("aborted"));
    s.close();
}

#[test]
fn cancel_an_in_flight_exec_by_run_id() {
    let mut s = Session::start(None);
    s.send(exec(1, "await tools.approve({ what: 'never' }); return 'unreachable';"));
    let event = s.expect("toolCall event", |l| l["event"] == "toolCall");
    s.send(json!({ "id": 2, "op": "cancel", "runId": event["runId"] }));
    assert_eq!(s.answer(json!(2))["result"]["cancelled"], json!(true));
    assert_eq!(s.answer(json!(1))["result"]["code"], json!("aborted"));
    s.close();
}

#[test]
fn cancel_a_waiting_run_and_end_the_session() {
    let mut s = Session::start(Some("fast-config.json"));
    s.send(exec(1, "return await tools.approve({ what: 'a' });"));
    let waiting = s.answer(json!(1));
    let run_id = waiting["result"]["runId"].clone();
    s.send(json!({ "id": 2, "op": "cancel", "runId": run_id }));
    let cancelled = s.answer(json!(2));
    assert_eq!(cancelled["result"]["cancelled"], json!(true), "{cancelled}");
    s.send(json!({ "id": 3, "op": "wait", "scope": { "session": "s1", "run": "r1" }, "input": { "runId": run_id } }));
    assert_eq!(s.answer(json!(3))["result"]["status"], json!("failed"));

    s.send(exec(4, "return await tools.approve({ what: 'b' });"));
    let waiting = s.answer(json!(4));
    let run_id = waiting["result"]["runId"].clone();
    s.send(json!({ "id": 5, "op": "endSession", "scope": { "session": "s1" } }));
    assert_eq!(s.answer(json!(5))["result"]["removedRuns"], json!(1));
    s.send(json!({ "id": 6, "op": "wait", "scope": { "session": "s1", "run": "r1" }, "input": { "runId": run_id } }));
    assert_eq!(s.answer(json!(6))["result"]["status"], json!("failed"));
    s.close();
}

#[test]
fn behaviors_errors_sequences_mcp_and_denied_tools() {
    let mut s = Session::start(None);
    s.send(exec(
        1,
        r#"const out = {};
try { await tools.callValue("openclaw:core:broken", {}); } catch (e) { out.broken = String(e.message); }
out.counts = [await tools.callValue("openclaw:core:counter", {}), await tools.callValue("openclaw:core:counter", {})];
try { await tools.callValue("openclaw:core:counter", {}); } catch (e) { out.third = String(e.message); }
out.echo = await tools.callValue("openclaw:core:echo_back", { x: 3 });
out.mcp = await MCP.notes.listNotes({});
out.ids = ALL_TOOLS.map((t) => t.id);
try { await tools.callValue("openclaw:core:secret_export", {}); out.denied = "called"; } catch (e) { out.denied = "refused"; }
return out;"#,
    ));
    let answer = s.answer(json!(1));
    let value = &answer["result"]["value"];
    assert_eq!(answer["result"]["status"], json!("completed"), "{answer}");
    assert!(value["broken"].as_str().unwrap().contains("backend down"), "{value}");
    assert_eq!(value["counts"], json!([1, 2]));
    assert!(value["third"].as_str().unwrap().contains("exhausted"));
    assert_eq!(value["echo"], json!({ "x": 3 }));
    assert_eq!(value["mcp"]["structuredContent"], json!({ "notes": ["a", "b"] }));
    let ids: Vec<&str> = value["ids"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert!(
        !ids.iter()
            .any(|id| id.contains("secret_export") || id.starts_with("mcp:") || id.contains("snapshot")),
        "{ids:?}"
    );
    assert!(ids.contains(&"openclaw:core:approve"));
    assert_eq!(value["denied"], json!("refused"));
    s.close();
}

/// Ids come back exactly as the client wrote them (the raw JSON token), even where a JSON number
/// would lose them: `1e400`, integers past 64 bits, `1.50`.
#[test]
fn ids_are_echoed_exactly_as_written() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_codemode"))
        .arg("session")
        .arg("--catalog")
        .arg(fixture_path("session.json"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start codemode session");
    let lines = [
        r#"{"id":1e400,"op":"surface"}"#,
        r#"{"id": 123456789012345678901234567890, "op": "exec", "input": {"code": "return 1"}}"#,
        r#"{"id":1.50,"op":"bogus"}"#,
        r#"{"id":-0,"op":"cancel","requestId":98765432109876543210}"#,
        r#"{"id": 7e999, "op": "exec", "input": {"code": }"#,
    ];
    let mut stdin = child.stdin.take().unwrap();
    for line in lines {
        writeln!(stdin, "{line}").unwrap();
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for prefix in [
        r#"{"id":1e400,"result":{"codeMode":true"#,
        r#"{"id":123456789012345678901234567890,"result":{"#,
        r#"{"id":1.50,"error":{"code":"unknown_op""#,
        r#"{"id":-0,"error":{"code":"unknown_request","message":"no request with id 98765432109876543210 is in flight"}}"#,
        r#"{"id":7e999,"error":{"code":"parse_error""#,
    ] {
        assert!(text.lines().any(|l| l.starts_with(prefix)), "no line starts with {prefix}:\n{text}");
    }
    let exec = text.lines().find(|l| l.starts_with(r#"{"id":1234567890"#)).unwrap();
    assert!(exec.contains(r#""status":"completed""#), "{exec}");
}

/// A `wait` on a run that an exec is still driving (from another session, or too early from the
/// same one) fails on its own and leaves `cancel {runId}` aimed at the exec.
#[test]
fn a_foreign_or_premature_wait_does_not_break_cancel_by_run_id() {
    let mut s = Session::start(None);
    s.send(exec(1, "await tools.approve({ what: 'never' }); return 'unreachable';"));
    let event = s.expect("toolCall event", |l| l["event"] == "toolCall");
    let run_id = event["runId"].clone();
    s.send(json!({ "id": 2, "op": "wait", "scope": { "session": "intruder", "run": "r9" }, "input": { "runId": run_id } }));
    let foreign = s.answer(json!(2));
    assert_eq!(foreign["result"]["status"], json!("failed"), "{foreign}");
    s.send(json!({ "id": 3, "op": "wait", "scope": { "session": "s1", "run": "r1" }, "input": { "runId": run_id } }));
    let premature = s.answer(json!(3));
    assert_eq!(premature["result"]["status"], json!("failed"), "{premature}");
    s.send(json!({ "id": 4, "op": "cancel", "runId": run_id }));
    let cancelled = s.answer(json!(4));
    assert_eq!(cancelled["result"]["cancelled"], json!(true), "{cancelled}");
    assert_eq!(cancelled["result"]["state"], json!("running"));
    assert_eq!(s.answer(json!(1))["result"]["code"], json!("aborted"));
    s.close();
}
