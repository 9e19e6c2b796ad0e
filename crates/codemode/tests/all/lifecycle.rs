//! The exec/wait engine and the run store: draining, suspension, limits, cancellation, restartSafe.

use std::sync::Arc;
use std::time::Duration;

use codemode::{
    AbortSignal, Admission, AdmissionLimits, CodeMode, CodeModeErrorCode, CodeModeResult, ExecInput,
    RunScope, WaitInput, WaitReason,
};
use serde_json::json;

use crate::support::*;

#[tokio::test]
async fn sequential_awaits_promise_combinators_and_detached_calls_complete_in_one_exec() {
    let f = fixture(json!({ "timeoutMs": 3000 }));
    f.host.set("openclaw:core:slow", Behavior::Slow(60, json!("slow")));
    let r = f
        .run(
            r#"
const a = await tools.web_search({ query: "1" });
const b = await tools.web_search({ query: "2" });
const all = await Promise.all([tools.slow({}), tools.web_search({ query: "3" })]);
const race = await Promise.race([tools.slow({}), tools.web_search({ query: "fast" })]);
const any = await Promise.any([tools.flaky({}), tools.web_search({ query: "any" })]);
tools.slow({}); // detached: still drained before the run completes
return [a.query, b.query, all, race, any];"#,
        )
        .await;
    assert_eq!(
        value(&r),
        json!(["1", "2", ["slow", { "query": "3" }], { "query": "fast" }, { "query": "any" }])
    );
    assert_eq!(f.host.call_count(), 9, "race losers and detached calls ran to completion");
    assert_eq!(f.cm.run_count(), 0);
}

#[tokio::test]
async fn a_detached_call_past_the_deadline_keeps_the_run_waiting_until_it_settles() {
    let f = fixture(json!({ "timeoutMs": 150 }));
    let r = f.run("tools.slow({}); return 'value kept';").await;
    let id = run_id(&r);
    tokio::time::sleep(Duration::from_millis(250)).await;
    assert_eq!(value(&f.finish(&id).await.0), json!("value kept"));
}

#[tokio::test]
async fn host_calls_keep_running_while_suspended_and_wait_waits_for_more() {
    let f = fixture(json!({ "timeoutMs": 200 }));
    f.host.set("openclaw:core:slow", Behavior::Slow(300, json!("late")));
    let r = f.run("return await tools.slow({});").await;
    let id = run_id(&r);
    // The call lands during this wait's own deadline.
    assert_eq!(value(&f.wait(&id).await), json!("late"));
    assert_eq!(f.host.call_count(), 1, "the call was not repeated");
}

#[tokio::test]
async fn a_wait_with_nothing_landed_returns_waiting_again_with_the_same_run() {
    let f = fixture(json!({ "timeoutMs": 300 }));
    let r = f.run("text('once'); return await tools.approve_me({});").await;
    let id = run_id(&r);
    assert_eq!(r.output().len(), 1);
    let again = f.wait(&id).await;
    assert_eq!(run_id(&again), id);
    assert!(again.output().is_empty(), "output blocks are delivered exactly once");
    let CodeModeResult::Waiting(w) = &again else { unreachable!() };
    assert_eq!(w.reason, WaitReason::PendingTools);
    assert_eq!(w.pending_tool_calls.len(), 1);
    f.host.approve("openclaw:core:approve_me");
    assert_eq!(value(&f.wait(&id).await), json!({ "approved": true }));
}

#[tokio::test]
async fn a_second_concurrent_wait_is_refused() {
    let f = fixture(json!({ "timeoutMs": 300 }));
    let id = run_id(&f.run("return await tools.approve_me({});").await);
    let (first, second) = tokio::join!(f.wait(&id), async {
        tokio::time::sleep(Duration::from_millis(50)).await;
        let r = f.wait(&id).await;
        f.host.approve("openclaw:core:approve_me");
        r
    });
    assert_eq!(error(&second), "code mode run is already being resumed.");
    assert_eq!(second.code(), Some(CodeModeErrorCode::InvalidInput));
    assert_eq!(value(&first), json!({ "approved": true }));
}

#[tokio::test]
async fn yield_control_suspends_with_reason_yield_and_resumes_with_undefined() {
    let f = fixture(json!({}));
    let r = f
        .run("text('a'); const v = await yield_control('checkpoint'); text('b'); return v === undefined;")
        .await;
    let CodeModeResult::Waiting(w) = &r else { panic!("{r:?}") };
    assert_eq!(w.reason, WaitReason::Yield);
    assert!(w.pending_tool_calls.is_empty());
    let r = f.wait(&w.run_id).await;
    assert_eq!(value(&r), json!(true));
}

#[tokio::test]
async fn nested_calls_after_a_resume_keep_the_original_exec_call_identity() {
    let f = fixture(json!({}));
    let id =
        run_id(&f.run("await yield_control(); return await tools.web_search({ query: 'later' });").await);
    let r = f.wait(&id).await;
    assert_eq!(value(&r), json!({ "query": "later" }));
    let calls = f.host.calls.lock().unwrap();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].parent_call_id.as_deref(), Some("call-exec-1"));
    assert_eq!(calls[0].run_id, id);
}

fn sharing(admission: &Admission) -> CodeMode {
    CodeMode::builder(config(json!({})))
        .tools(fixture_tools())
        .host(ScriptedHost::new())
        .admission(admission.clone())
        .build()
        .unwrap()
}

#[tokio::test]
async fn at_most_64_runs_are_suspended_at_once_by_every_runtime_together() {
    // A budget of its own: the other tests of this binary park runs under the global one.
    let admission = Admission::new(AdmissionLimits::default());
    let (a, b) = (sharing(&admission), sharing(&admission));
    let park = "await yield_control(); return 1;";
    for i in 0..codemode::store::MAX_SUSPENDED_RUNS {
        let cm = if i % 2 == 0 { &a } else { &b };
        run_id(&cm.exec(&scope(), ExecInput::code(park)).await);
    }
    assert_eq!((a.run_count(), b.run_count()), (32, 32));
    assert_eq!(admission.usage().suspended_runs, 64);
    for cm in [&a, &b] {
        let r = cm.exec(&scope(), ExecInput::code("text('kept'); await yield_control(); return 1;")).await;
        assert_eq!(
            (r.code(), error(&r)),
            (Some(CodeModeErrorCode::InvalidInput), "too many suspended code mode runs.".into())
        );
        assert_eq!(r.output().len(), 1, "output produced before the refusal is kept");
    }
    assert_eq!(a.shutdown(), 32);
    assert_eq!(admission.usage().suspended_runs, 32);
    // A freed place is anyone's: b holds 33 now.
    run_id(&b.exec(&scope(), ExecInput::code(park)).await);
    assert_eq!((b.run_count(), admission.usage().suspended_runs), (33, 33));
    assert_eq!(b.shutdown(), 33);
    assert_eq!(admission.usage().suspended_runs, 0);
}

#[tokio::test]
async fn session_end_discards_its_runs_only() {
    let f = fixture(json!({}));
    let mine = run_id(&f.run("await yield_control(); return 1;").await);
    let other_scope = RunScope::new("session-2", "turn-1");
    let theirs = f.cm.exec(&other_scope, ExecInput::code("await yield_control(); return 2;")).await;
    let theirs = run_id(&theirs);
    assert_eq!(f.cm.end_session("session-1"), 1);
    assert_eq!(error(&f.wait(&mine).await), "code mode run is unavailable or expired.");
    assert_eq!(value(&f.cm.wait(&other_scope, WaitInput::new(theirs)).await), json!(2));
}

#[tokio::test]
async fn a_host_abort_fails_the_run_with_aborted_and_parks_nothing() {
    let f = fixture(json!({ "timeoutMs": 2000 }));
    let signal = AbortSignal::new();
    let trigger = signal.clone();
    let s = scope();
    let (r, _) = tokio::join!(
        f.cm.exec_with(&s, ExecInput::code("return await tools.approve_me({});"), signal),
        async {
            tokio::time::sleep(Duration::from_millis(100)).await;
            trigger.abort();
        }
    );
    assert_eq!(r.code(), Some(CodeModeErrorCode::Aborted));
    assert_eq!(f.cm.run_count(), 0);
    // Aborted before preparation: nothing is dispatched.
    let signal = AbortSignal::new();
    signal.abort();
    let r = f
        .cm
        .exec_with(&scope(), ExecInput::code("await tools.web_search({ query: 'x' }); return 1;"), signal)
        .await;
    assert_eq!(r.code(), Some(CodeModeErrorCode::Aborted));
    assert_eq!(f.host.call_count(), 1, "only the first run's call reached the host");
    // An abort during wait discards the run.
    let id = run_id(&f.run("await yield_control(); return await tools.approve_me({});").await);
    let signal = AbortSignal::new();
    let trigger = signal.clone();
    let (r, _) = tokio::join!(f.cm.wait_with(&s, WaitInput::new(id.clone()), signal), async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        trigger.abort();
    });
    assert_eq!(r.code(), Some(CodeModeErrorCode::Aborted));
    assert_eq!(f.cm.run_count(), 0);
    assert_eq!(error(&f.wait(&id).await), "code mode run is unavailable or expired.");
}

#[tokio::test]
async fn every_exec_and_wait_input_rule_fails_with_invalid_input() {
    let f = fixture(json!({}));
    let s = scope();
    for args in [
        json!({}),
        json!({ "code": "" }),
        json!({ "code": "   " }),
        json!({ "code": "return 1", "command": "return 2" }),
        json!({ "code": "return 1", "language": "python" }),
        json!({ "code": "return 1", "extra": true }),
        json!({ "code": 5 }),
        json!("return 1"),
    ] {
        let r = f.cm.exec_json(&s, &args).await;
        assert_eq!(r.code(), Some(CodeModeErrorCode::InvalidInput), "{args}");
    }
    assert_eq!(value(&f.cm.exec_json(&s, &json!({ "command": "return 3" })).await), json!(3));
    assert_eq!(
        value(&f.cm.exec_json(&s, &json!({ "code": "return 4", "command": "return 4" })).await),
        json!(4)
    );
    for args in [json!({}), json!({ "runId": "" }), json!({ "runId": 1 }), json!({ "runId": "x", "more": 1 })]
    {
        let r = f.cm.wait_json(&s, &args).await;
        assert_eq!(r.code(), Some(CodeModeErrorCode::InvalidInput), "{args}");
    }
    // Syntax errors are found before the sandbox.
    let r = f.run("return (;").await;
    assert_eq!(r.code(), Some(CodeModeErrorCode::InvalidInput));
}

#[tokio::test]
async fn tool_inputs_are_validated_before_dispatch_and_declared_outputs_before_delivery() {
    let f = fixture(json!({}));
    let r = f
        .run(
            r#"
const out = [];
try { await tools.web_search({ query: 42, count: 0, secret: "hunter2" }); } catch (e) { out.push(e.message, e.code); }
try { await tools.bad_output({}); } catch (e) { out.push(e.message, e.code); }
return out;"#,
        )
        .await;
    let v = value(&r);
    let input_error = v[0].as_str().unwrap();
    assert!(input_error.starts_with("invalid input for openclaw:core:web_search: "), "{input_error}");
    assert!(input_error.contains("input/query"), "{input_error}");
    assert!(input_error.contains("input/count"), "{input_error}");
    assert!(
        !input_error.contains("42") && !input_error.contains("hunter2"),
        "values are never echoed: {input_error}"
    );
    assert_eq!(v[1], "invalid_input");
    assert_eq!(
        v[2],
        "tool openclaw:core:bad_output returned a value that does not match its declared output schema"
    );
    assert_eq!(v[3], "output_schema_mismatch");
    assert_eq!(f.host.call_ids(), ["openclaw:core:bad_output"], "the invalid input never reached the host");
}

#[tokio::test]
async fn host_errors_reach_the_guest_sanitized_and_uncaught_errors_name_their_position() {
    let f = fixture(json!({}));
    let r = f.run("const x = 1;\nawait tools.flaky({});").await;
    let message = error(&r);
    assert!(message.starts_with("Error: upstream exploded at <path>"), "{message}");
    assert!(!message.contains("abc123") && !message.contains("alice"), "{message}");
    let r = f.run("const a = 1;\n  undefinedThing.call();").await;
    assert_eq!(error(&r), "ReferenceError: undefinedThing is not defined (at user.js:2:3)");
    assert_eq!(r.code(), None);
}

#[tokio::test]
async fn restart_safe_runs_refuse_side_effects_and_are_never_drained_automatically() {
    let f = fixture(json!({}));
    let s = scope();
    let code = r#"
const out = [];
for (const [name, input] of [["message", { to: "a", text: "b" }], ["exec", { command: "rm -rf /" }]]) {
  try { await tools[name](input); out.push("ran " + name); } catch (e) { out.push(e.code); }
}
try { await MCP.github.createIssue({ owner: "o", repo: "r", title: "t" }); } catch (e) { out.push("mcp " + e.code); }
const read = await tools.web_search({ query: "read-only is fine" });
out.push(read.query);
return out;"#;
    let input = ExecInput::from_json(&json!({ "code": code, "restartSafe": true })).unwrap();
    let r = f.cm.exec(&s, input).await;
    // The read-only call is dispatched but not drained: the run suspends, marked replay-safe.
    let CodeModeResult::Waiting(w) = &r else { panic!("{r:?}") };
    assert!(w.replay_safe);
    assert_eq!(w.pending_tool_calls[0].tool_id, "openclaw:core:web_search");
    assert_eq!(w.pending_tool_calls[0].input, Some(json!({ "query": "read-only is fine" })));
    let r = f.wait(&w.run_id).await;
    assert_eq!(value(&r), json!(["restart_safe", "restart_safe", "mcp restart_safe", "read-only is fine"]));
    assert_eq!(f.host.call_ids(), ["openclaw:core:web_search"], "side effects were refused before they ran");
    // Host policy can mark a tool replay-safe or side-effecting.
    f.host.set_side_effecting("openclaw:core:web_search", true);
    let input = ExecInput::from_json(&json!({ "code": "try { await tools.web_search({ query: 'x' }); } catch (e) { return e.code; }", "restartSafe": true })).unwrap();
    assert_eq!(value(&f.cm.exec(&s, input).await), json!("restart_safe"));
    // A host-forced policy cannot be cleared by the model.
    let forced = s.clone().with_restart_safe();
    let input = ExecInput::from_json(&json!({ "code": "try { await tools.message({ to: 'a', text: 'b' }); } catch (e) { return e.code; }", "restartSafe": false })).unwrap();
    assert_eq!(value(&f.cm.exec(&forced, input).await), json!("restart_safe"));
    let host_calls = f.host.call_count();
    assert_eq!(host_calls, 1);
}

#[tokio::test]
async fn max_pending_tool_calls_bounds_parallel_dispatch() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    struct Counting {
        now: AtomicUsize,
        max: AtomicUsize,
    }
    #[async_trait::async_trait]
    impl codemode::ToolHost for Counting {
        async fn call(
            &self,
            call: codemode::NestedCall,
        ) -> Result<codemode::ToolOutcome, codemode::ToolError> {
            let n = self.now.fetch_add(1, Ordering::SeqCst) + 1;
            self.max.fetch_max(n, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(30)).await;
            self.now.fetch_sub(1, Ordering::SeqCst);
            Ok(codemode::ToolOutcome::details(call.input))
        }
    }
    let host = Arc::new(Counting { now: AtomicUsize::new(0), max: AtomicUsize::new(0) });
    let cm = codemode::CodeMode::builder(config(json!({ "maxPendingToolCalls": 2 })))
        .tools(fixture_tools())
        .host(host.clone())
        .namespaces(codemode::NamespaceRegistry::new())
        .build()
        .unwrap();
    let r = cm
        .exec(&scope(), ExecInput::code("return (await Promise.all([1,2,3,4,5,6].map((i) => tools.web_search({ query: String(i) })))).length;"))
        .await;
    assert_eq!(value(&r), json!(6));
    assert_eq!(host.max.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn raw_content_travels_in_the_call_envelope_and_the_mcp_result() {
    let f = fixture(json!({}));
    let content = json!([{ "type": "text", "text": "hello" }]);
    f.host.set("openclaw:core:web_search", Behavior::Content(json!({ "n": 1 }), content.clone()));
    f.host.set("mcp:github:create_issue", Behavior::Content(json!({ "id": 7 }), content.clone()));
    let r = f
        .run(
            r#"
const raw = await tools.call("openclaw:core:web_search", { query: "x" });
const value = await tools.callValue("openclaw:core:web_search", { query: "x" });
const mcp = await MCP.github.createIssue({ owner: "o", repo: "r", title: "t" });
return { raw, value, mcp };"#,
        )
        .await;
    assert_eq!(
        value(&r),
        json!({
            "raw": { "tool": "openclaw:core:web_search", "result": { "content": content, "details": { "n": 1 } } },
            "value": { "n": 1 },
            "mcp": { "content": content, "structuredContent": { "id": 7 } },
        })
    );
}

#[tokio::test]
async fn dropping_an_exec_or_wait_future_leaves_nothing_behind() {
    let f = fixture(json!({ "timeoutMs": 2000 }));
    let dropped =
        tokio::time::timeout(Duration::from_millis(100), f.run("return await tools.approve_me({});")).await;
    assert!(dropped.is_err());
    assert_eq!(f.cm.run_count(), 0);
    let f = fixture(json!({ "timeoutMs": 2000 }));
    let id = run_id(&f.run("await yield_control(); return await tools.approve_me({});").await);
    assert_eq!(f.cm.run_count(), 1);
    let dropped = tokio::time::timeout(Duration::from_millis(100), f.wait(&id)).await;
    assert!(dropped.is_err());
    assert_eq!(f.cm.run_count(), 0, "a dropped wait discards the run instead of leaving it half-resumed");
    assert_eq!(error(&f.wait(&id).await), "code mode run is unavailable or expired.");
}

/// An embedder that is not OpenClaw names its host source: the ids the guest sees, the quick index,
/// namespace ownership and the host's `NestedCall::catalog_id` all use it; MCP ids and the entries'
/// `source` do not change. An invalid name fails the build.
#[tokio::test]
async fn an_embedder_names_the_host_source_of_catalog_ids() {
    let host = ScriptedHost::new();
    host.set(
        "host:shipping:shipping_list",
        Behavior::Value(json!([{ "id": "s1", "paid": false, "tons": 12 }])),
    );
    let registry = codemode::NamespaceRegistry::new();
    registry
        .register_for_plugin(
            "shipping",
            codemode::NamespaceRegistration::new(
                "shipping-desk",
                "Shipping",
                "Shipments.",
                ["shipping_list"],
                |_: &codemode::NamespaceContext| {
                    codemode::ScopeValue::object([("list", codemode::namespace_tool("shipping_list"))])
                },
            ),
        )
        .unwrap();
    let cm = codemode::CodeMode::builder(config(json!({})))
        .tools(fixture_tools())
        .host(host.clone())
        .namespaces(registry)
        .host_source("host")
        .build()
        .unwrap();
    let exec = cm.exec_definition();
    assert!(exec.description.contains("\"host:core:web_search\""), "quick index: {}", exec.description);
    assert!(!exec.description.contains("openclaw:core:"), "{}", exec.description);
    let r = cm
        .exec(
            &scope(),
            ExecInput::code(
                r#"const ids = ALL_TOOLS.map((t) => t.id);
const sources = [...new Set(ALL_TOOLS.map((t) => t.source))];
await tools.web_search({ query: "q" });
await tools.callValue("host:core:web_search", { query: "r" });
let old = "refused";
try { await tools.callValue("openclaw:core:web_search", { query: "s" }); old = "called"; } catch (e) {}
await Shipping.list({});
return { ids, sources, old };"#,
            ),
        )
        .await;
    let v = value(&r);
    let ids: Vec<&str> = v["ids"].as_array().unwrap().iter().map(|i| i.as_str().unwrap()).collect();
    assert!(ids.contains(&"host:core:web_search") && ids.contains(&"host:shipping:shipping_list"), "{ids:?}");
    assert!(ids.iter().all(|id| !id.starts_with("openclaw:")), "{ids:?}");
    assert_eq!(v["sources"][0], json!("openclaw"), "the source field keeps the spec's class");
    assert_eq!(v["old"], json!("refused"), "the spec's name is not an alias");
    assert_eq!(
        host.call_ids(),
        ["host:core:web_search", "host:core:web_search", "host:shipping:shipping_list"]
    );
    let host_ids = ids.iter().filter(|id| id.starts_with("host:")).count();
    assert_eq!(r.telemetry().catalog_by_source.openclaw, host_ids, "counts keep the spec's keys");

    let refused = codemode::CodeMode::builder(config(json!({})))
        .tools(fixture_tools())
        .host(host.clone())
        .host_source("client")
        .build()
        .map(|_| ())
        .unwrap_err();
    assert_eq!(refused, codemode::BuildError::InvalidHostSource { name: "client".into() });
}

/// `console.*` writes output items through the runtime like `text()`, and the exec guidance says so
/// in one line.
#[tokio::test]
async fn console_output_reaches_the_result() {
    let f = fixture(json!({}));
    let r = f.run(r#"console.log("n=%d", 3, { a: [1] }); console.error(new Error("bad")); return 1;"#).await;
    assert_eq!(value(&r), json!(1));
    assert_eq!(
        r.output(),
        [
            codemode::CodeModeOutput::Text { text: r#"n=3 {"a":[1]}"#.into() },
            codemode::CodeModeOutput::Text { text: "Error: bad".into() },
        ]
    );
    let guidance = codemode::exec_guidance();
    let lines: Vec<&str> = guidance.lines().filter(|l| l.contains("console")).collect();
    assert_eq!(lines.len(), 1, "{guidance}");
    assert!(lines[0].contains("console.log") && lines[0].contains("util.format"), "{}", lines[0]);
}
