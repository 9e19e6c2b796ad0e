//! `codemode session` driven as a child process over stdin/stdout.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::fixture_path;

/// A `codemode session` child speaking JSON lines (shared by the session-driven test modules).
pub(crate) struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Value>,
    /// Lines read but not yet matched by `expect`.
    backlog: Vec<Value>,
}

impl Session {
    pub(crate) fn start(config: Option<&str>) -> Session {
        Session::start_with(config, &[])
    }

    pub(crate) fn start_with(config: Option<&str>, args: &[&str]) -> Session {
        let mut command = Command::new(env!("CARGO_BIN_EXE_codemode"));
        command.arg("session").arg("--catalog").arg(fixture_path("session.json")).args(args);
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

    pub(crate) fn send(&mut self, request: Value) {
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

    pub(crate) fn answer(&mut self, id: Value) -> Value {
        self.expect(&format!("answer {id}"), |l| l.get("id") == Some(&id) && l.get("event").is_none())
    }

    fn next_line(&mut self) -> Value {
        if !self.backlog.is_empty() {
            return self.backlog.remove(0);
        }
        self.lines.recv_timeout(Duration::from_secs(20)).expect("a line")
    }

    pub(crate) fn close(mut self) {
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
    assert_eq!(value["echo"], json!({ "tool": "openclaw:core:echo_back", "input": { "x": 3 } }));
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

fn output_texts(result: &Value) -> Vec<String> {
    result["output"]
        .as_array()
        .unwrap_or_else(|| panic!("no output in {result}"))
        .iter()
        .map(|item| {
            assert_eq!(item["type"], json!("text"), "{item}");
            item["text"].as_str().unwrap().to_owned()
        })
        .collect()
}

/// Models write `console.log` by habit: every console method appends one text item, formatted like
/// Node's util.format, in call order with `text()`.
#[test]
fn console_output_is_captured_in_order_with_node_formatting() {
    let mut s = Session::start(None);
    s.send(exec(
        1,
        r#"console.log("hello", { a: 1 }, [2], 3n);
text("between");
console.error("%s failed after %d tries", "sync", 3);
console.warn(new TypeError("careful"));
console.info("%j|%o|%i|%f|%%", { b: null }, ["x"], "12.7px", "0.5");
console.debug();
console.log("%s and %s", "one");
return typeof console.log;"#,
    ));
    let answer = s.answer(json!(1));
    let result = &answer["result"];
    assert_eq!(result["status"], json!("completed"), "{answer}");
    assert_eq!(result["value"], json!("function"));
    assert_eq!(
        output_texts(result),
        [
            r#"hello {"a":1} [2] 3n"#,
            "between",
            "sync failed after 3 tries",
            "TypeError: careful",
            r#"{"b":null}|["x"]|12|0.5|%"#,
            "",
            "one and %s",
        ]
    );
    s.close();
}

/// Console output is output: it counts against `maxOutputBytes` (1,024 here) exactly like `text()`,
/// and crossing the limit fails the run with `output_limit_exceeded`, keeping what came before.
#[test]
fn console_output_counts_against_max_output_bytes() {
    let mut s = Session::start(Some("small-output-config.json"));
    s.send(exec(
        1,
        r#"console.log("a".repeat(1000));
console.log("b".repeat(24));
let caught = "none";
try { console.warn("c"); } catch (e) { caught = e.message; }
return caught;"#,
    ));
    let answer = s.answer(json!(1));
    let result = &answer["result"];
    assert_eq!(result["status"], json!("failed"), "{answer}");
    assert_eq!(result["code"], json!("output_limit_exceeded"));
    let texts = output_texts(result);
    assert_eq!(texts.len(), 3, "{texts:?}");
    assert_eq!(texts[0], "a".repeat(1000));
    assert_eq!(texts[1], "b".repeat(24), "exactly 1024 bytes pass");
    assert!(
        texts[2].starts_with("[output truncated: maxOutputBytes (1024 bytes) exceeded"),
        "the item past the limit is dropped whole, one marker follows: {}",
        texts[2]
    );

    // Console cannot be replaced or unlocked by the cell.
    s.send(exec(
        2,
        r#"console = null; try { console.log = () => "hijacked"; } catch (e) {}
globalThis.JSON = null; Array.prototype.join = () => { throw new Error("join ran"); };
console.log("still", { works: true });
return Object.isFrozen(console);"#,
    ));
    let answer = s.answer(json!(2));
    assert_eq!(answer["result"]["value"], json!(true), "{answer}");
    assert_eq!(output_texts(&answer["result"]), [r#"still {"works":true}"#]);
    s.close();
}

/// An `echo` tool answers with the identity of the tool that ran: `{tool: <catalog id>, input}` for
/// host tools, `{server, tool, input}` as `structuredContent` (plus a text block) for MCP tools.
#[test]
fn fixture_echo_reports_the_tool_that_ran() {
    let mut s = Session::start(None);
    s.send(exec(
        1,
        r#"return {
  byId: await tools.callValue("openclaw:core:echo_back", { x: 1 }),
  byName: await tools.echo_back({ x: 2 }),
  plugin: await tools.callValue("openclaw:github:github_list_issues", { state: "open" }),
  raw: await tools.call("openclaw:core:echo_back", { x: 3 }),
  mcp: await MCP.notes.echoNote({ id: 7 }),
};"#,
    ));
    let answer = s.answer(json!(1));
    let value = &answer["result"]["value"];
    assert_eq!(answer["result"]["status"], json!("completed"), "{answer}");
    assert_eq!(value["byId"], json!({ "tool": "openclaw:core:echo_back", "input": { "x": 1 } }));
    assert_eq!(value["byName"], json!({ "tool": "openclaw:core:echo_back", "input": { "x": 2 } }));
    assert_eq!(
        value["plugin"],
        json!({ "tool": "openclaw:github:github_list_issues", "input": { "state": "open" } })
    );
    assert_eq!(value["raw"]["tool"], json!("openclaw:core:echo_back"));
    assert_eq!(
        value["raw"]["result"]["details"],
        json!({ "tool": "openclaw:core:echo_back", "input": { "x": 3 } })
    );
    let identity = json!({ "server": "notes", "tool": "echo_note", "input": { "id": 7 } });
    assert_eq!(value["mcp"]["structuredContent"], identity);
    assert_eq!(value["mcp"]["content"][0]["type"], json!("text"));
    let text: Value = serde_json::from_str(value["mcp"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(text, identity, "the text block carries the same JSON");
    s.close();
}

/// Scripted MCP error results and tools without a behavior fail visibly: never a faked success.
#[test]
fn fixture_mcp_error_results_and_unscripted_tools_fail_clearly() {
    let mut s = Session::start(None);
    s.send(exec(
        1,
        r#"const out = {};
try { out.fail = await MCP.notes.failNote({}); } catch (e) { out.fail = [e.message, e.code]; }
try { out.host = await tools.callValue("openclaw:core:unscripted", {}); } catch (e) { out.host = [e.message, e.code]; }
try { out.mcp = await MCP.notes.unscriptedNote({}); } catch (e) { out.mcp = [e.message, e.code]; }
return out;"#,
    ));
    let answer = s.answer(json!(1));
    let value = &answer["result"]["value"];
    assert_eq!(value["fail"], json!(["note store offline", "tool_error"]), "{answer}");
    assert_eq!(value["host"][1], json!("no_behavior"), "{answer}");
    let message = value["host"][0].as_str().unwrap();
    assert!(message.contains("openclaw:core:unscripted") && message.contains("\"behavior\""), "{message}");
    assert_eq!(value["mcp"][1], json!("no_behavior"));
    assert!(value["mcp"][0].as_str().unwrap().contains("mcp:notes:unscripted_note"), "{answer}");
    s.close();
}

/// The spec's `Issues.update(number, patch)`: positional mappers (`"args": ["number", "patch"]`)
/// name each argument, `"args": "all"` passes every argument; the default passes the first.
#[test]
fn namespace_positional_mappers_build_the_tool_input() {
    let mut s = Session::start(None);
    s.send(json!({ "id": 1, "op": "surface" }));
    let surface = s.answer(json!(1));
    let description = surface["result"]["tools"][0]["description"].as_str().unwrap();
    assert!(description.contains("Issues.update(number, patch)"), "the namespace prompt is shown");
    s.send(exec(
        2,
        r#"return {
  updated: await Issues.update(42, { state: "closed" }),
  partial: await Issues.update(7),
  extra: await Issues.update(3, { a: 1 }, "ignored"),
  labels: await Issues.label(42, "bug", "p1"),
  noLabels: await Issues.label(),
  listed: await Issues.list({ state: "open" }),
  listedDefault: await Issues.list(),
  repository: Issues.repository,
};"#,
    ));
    let answer = s.answer(json!(2));
    let value = &answer["result"]["value"];
    assert_eq!(answer["result"]["status"], json!("completed"), "{answer}");
    assert_eq!(
        value["updated"],
        json!({ "tool": "openclaw:github:github_update_issue", "input": { "number": 42, "patch": { "state": "closed" } } })
    );
    assert_eq!(value["partial"]["input"], json!({ "number": 7 }), "missing arguments are left out");
    assert_eq!(
        value["extra"]["input"],
        json!({ "number": 3, "patch": { "a": 1 } }),
        "extra ones are ignored"
    );
    assert_eq!(
        value["labels"],
        json!({ "tool": "openclaw:github:github_add_labels", "input": { "args": [42, "bug", "p1"] } })
    );
    assert_eq!(value["noLabels"]["input"], json!({ "args": [] }));
    assert_eq!(value["listed"]["input"], json!({ "state": "open" }));
    assert_eq!(value["listedDefault"]["input"], json!({}));
    assert_eq!(value["repository"], json!("openclaw/openclaw"));
    s.close();
}

/// `toolCall` events carry the id in parts: `source`, `owner`, `tool`, and `server` for MCP tools.
#[test]
fn tool_call_events_name_source_owner_tool_and_server() {
    let mut s = Session::start(None);
    s.send(exec(
        1,
        "const a = await tools.approve({ what: 'x' }); const b = await MCP.notes.approveNote({ n: 1 }); \
         const c = await tools.callValue('openclaw:github:github_approve_merge', { pr: 5 }); return [a, b.structuredContent, c];",
    ));
    let host = s.expect("host toolCall", |l| l["event"] == "toolCall");
    assert_eq!(host["toolId"], json!("openclaw:core:approve"));
    assert_eq!(
        (&host["source"], &host["owner"], &host["tool"]),
        (&json!("openclaw"), &json!("core"), &json!("approve"))
    );
    assert!(host.get("server").is_none(), "{host}");
    s.send(json!({ "id": 2, "op": "resolve", "callId": host["callId"], "result": "ok-a" }));
    s.answer(json!(2));
    let mcp = s.expect("MCP toolCall", |l| l["event"] == "toolCall");
    assert_eq!(mcp["toolId"], json!("mcp:notes:approve_note"));
    assert_eq!(
        (&mcp["source"], &mcp["owner"], &mcp["tool"], &mcp["server"]),
        (&json!("mcp"), &json!("notes"), &json!("approve_note"), &json!("notes"))
    );
    assert_eq!(mcp["input"], json!({ "n": 1 }));
    s.send(json!({ "id": 3, "op": "resolve", "callId": mcp["callId"], "result": { "ok": "b" } }));
    s.answer(json!(3));
    let plugin = s.expect("plugin toolCall", |l| l["event"] == "toolCall");
    assert_eq!(
        (&plugin["source"], &plugin["owner"], &plugin["tool"]),
        (&json!("openclaw"), &json!("github"), &json!("github_approve_merge"))
    );
    s.send(json!({ "id": 4, "op": "resolve", "callId": plugin["callId"], "result": "ok-c" }));
    s.answer(json!(4));
    let done = s.answer(json!(1));
    assert_eq!(done["result"]["value"], json!(["ok-a", { "ok": "b" }, "ok-c"]), "{done}");
    s.close();
}

/// Replaces every `callId` / `runId` value in `line` by the doc's placeholders, recording them.
fn with_placeholders(line: &Value, ids: &mut Vec<(String, String)>) -> Value {
    match line {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let placeholder = match k.as_str() {
                        "callId" => Some("<call id>"),
                        "runId" => Some("<run id>"),
                        _ => None,
                    };
                    match (placeholder, v) {
                        (Some(p), Value::String(actual)) => {
                            if !ids.iter().any(|(_, a)| a == actual) {
                                ids.push((p.to_owned(), actual.clone()));
                            }
                            (k.clone(), json!(p))
                        }
                        _ => (k.clone(), with_placeholders(v, ids)),
                    }
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(|v| with_placeholders(v, ids)).collect()),
        other => other.clone(),
    }
}

/// docs/session-protocol.md's example, replayed: every `>` line is sent (placeholders replaced by
/// the ids seen so far) once every `<` line before it has arrived, and each answer must equal the
/// documented one in full (ids replaced by placeholders).
#[test]
fn the_documented_example_is_what_the_session_writes() {
    let doc = std::fs::read_to_string(
        std::path::PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap())
            .join("../../docs/session-protocol.md"),
    )
    .unwrap();
    let example = doc.split("## Example").nth(1).unwrap();
    let block = example.split("```").nth(1).unwrap();
    // Each exchange: '>' or '<', then the line with its wrapped continuation lines joined.
    let mut exchanges: Vec<(char, String)> = Vec::new();
    for line in block.lines() {
        if let Some(rest) = line.strip_prefix("> ") {
            exchanges.push(('>', rest.to_owned()));
        } else if let Some(rest) = line.strip_prefix("< ") {
            exchanges.push(('<', rest.to_owned()));
        } else if let Some(rest) = line.strip_prefix("   ")
            && let Some(last) = exchanges.last_mut()
        {
            last.1.push_str(rest);
        }
    }
    assert!(exchanges.len() >= 10, "the example block was not found: {exchanges:?}");
    let mut s = Session::start(Some("fast-config.json"));
    let mut ids: Vec<(String, String)> = Vec::new();
    for (direction, text) in exchanges {
        if direction == '>' {
            let mut line = text.clone();
            for (placeholder, actual) in &ids {
                line = line.replace(placeholder.as_str(), actual);
            }
            s.send_raw(&line);
            continue;
        }
        let expected: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("doc line {text}: {e}"));
        let mut seen = ids.clone();
        let got = s.expect(&text, |l| with_placeholders(l, &mut seen.clone()) == expected);
        with_placeholders(&got, &mut seen);
        ids = seen;
        // Distinct ids must stay distinct placeholders' values: one call id, one run id here.
        assert!(ids.len() <= 2, "more ids than the example shows: {ids:?}");
    }
    s.close();
}

/// `--host-source host`: host tool ids, echoes and events say `host:`; MCP ids and `deny` by name
/// are unchanged.
#[test]
fn a_named_host_source_renames_host_ids_everywhere() {
    let mut s = Session::start_with(None, &["--host-source", "host"]);
    s.send(exec(
        1,
        "const ids = ALL_TOOLS.map((t) => t.id); const e = await tools.callValue('host:core:echo_back', { x: 1 }); \
         const a = await tools.approve({ what: 'y' }); const m = await MCP.notes.echoNote({}); \
         const i = await Issues.update(1, {}); return { ids, e, a, m: m.structuredContent, i };",
    ));
    let event = s.expect("toolCall event", |l| l["event"] == "toolCall");
    assert_eq!(event["toolId"], json!("host:core:approve"));
    assert_eq!((&event["source"], &event["owner"]), (&json!("host"), &json!("core")));
    s.send(json!({ "id": 2, "op": "resolve", "callId": event["callId"], "result": "yes" }));
    s.answer(json!(2));
    let answer = s.answer(json!(1));
    let value = &answer["result"]["value"];
    assert_eq!(answer["result"]["status"], json!("completed"), "{answer}");
    let ids: Vec<&str> = value["ids"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert!(
        ids.contains(&"host:core:echo_back") && ids.contains(&"host:github:github_update_issue"),
        "{ids:?}"
    );
    assert!(ids.iter().all(|id| !id.starts_with("openclaw:") && !id.contains("secret_export")), "{ids:?}");
    assert_eq!(value["e"], json!({ "tool": "host:core:echo_back", "input": { "x": 1 } }));
    assert_eq!(value["a"], json!("yes"));
    assert_eq!(value["m"]["server"], json!("notes"), "MCP ids unchanged");
    assert_eq!(value["i"]["tool"], json!("host:github:github_update_issue"), "namespaces resolve under host");
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
