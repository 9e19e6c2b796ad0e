//! One test per item of the spec's Validation checklist, named after it.

use std::time::{Duration, Instant};

use codemode::{
    CodeMode, CodeModeConfig, CodeModeErrorCode, CodeModeEvent, CodeModeOutput, CodeModeResult, ExecInput,
    Language, NamespaceRegistry, RunOptions, SurfaceError, ToolSpec, WaitInput,
};
use serde_json::{Value, json};

use crate::support::*;

fn all_tool_ids(result: &CodeModeResult) -> Vec<String> {
    value(result).as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_owned()).collect()
}

#[test]
fn disabled_config_leaves_the_current_tool_exposure_unchanged() {
    let f = fixture_with(
        CodeModeConfig::from_json(&json!(false)).unwrap(),
        fixture_tools(),
        NamespaceRegistry::new(),
    );
    let surface = f.cm.model_surface(&RunOptions::default());
    assert!(!surface.is_code_mode());
    let expected: Vec<String> = fixture_tools().iter().map(|t| t.name.clone()).collect();
    assert_eq!(surface.names(), expected);
    // Definitions are the host's, unchanged.
    assert_eq!(surface.tools()[0].input_schema, *fixture_tools()[0].parameters);
    assert!(f.cm.check_provider_payload(&expected).is_ok(), "no enforcement when disabled");
}

#[test]
fn object_config_without_enabled_true_keeps_code_mode_disabled() {
    for config in
        [json!({}), json!({ "timeoutMs": 5000 }), json!({ "enabled": false, "languages": ["javascript"] })]
    {
        let config = CodeModeConfig::from_json(&config).unwrap();
        assert!(!config.is_enabled());
        let f = fixture_with(config, fixture_tools(), NamespaceRegistry::new());
        assert!(!f.cm.model_surface(&RunOptions::default()).is_code_mode());
    }
}

#[test]
fn enabled_config_exposes_exec_wait_and_only_the_required_direct_only_tools() {
    let f = fixture(json!({}));
    let surface = f.cm.model_surface(&RunOptions::default());
    assert!(surface.is_code_mode());
    assert_eq!(surface.names(), ["exec", "wait", "image"]);
    let exec = &surface.tools()[0];
    assert_eq!(
        exec.input_schema["properties"]["language"],
        json!({ "type": "string", "enum": ["javascript", "typescript"], "description": exec.input_schema["properties"]["language"]["description"] })
    );
    assert!(exec.input_schema["properties"]["language"].get("oneOf").is_none());
    assert!(codemode::exec_guidance().len() < 2400, "guidance is {} chars", codemode::exec_guidance().len());
    assert!(exec.description.contains("-> ?"));
    assert!(exec.description.contains("\"openclaw:core:web_search\""), "quick index present");
    assert!(exec.description.contains("API.read(\"mcp/<server>.d.ts\")"), "MCP guidance when MCP is visible");
    assert!(!exec.description.contains("create_issue"), "no MCP names on the surface");
    assert!(!exec.description.contains("Search the web"), "no tool descriptions on the surface");
    assert_eq!(surface.tools()[1].input_schema["required"], json!(["runId"]));
    // The guard.
    assert!(f.cm.check_provider_payload(&["exec", "wait", "image"]).is_ok());
    assert_eq!(f.cm.check_provider_payload(&["exec", "image"]), Err(SurfaceError::WaitCount { count: 0 }));
    assert_eq!(
        f.cm.check_provider_payload(&["exec", "exec", "wait"]),
        Err(SurfaceError::ExecCount { count: 2 })
    );
    assert_eq!(
        f.cm.check_provider_payload(&["exec", "wait", "web_search"]),
        Err(SurfaceError::Unapproved { name: "web_search".into() })
    );
    // Only enabled languages are listed; MCP guidance is absent without MCP servers.
    let ts_only =
        CodeModeConfig::from_json(&json!({ "enabled": true, "languages": ["typescript"] })).unwrap();
    let tools: Vec<ToolSpec> = fixture_tools().into_iter().filter(|t| t.owner != "github").collect();
    let g = CodeMode::builder(ts_only).tools(tools).host(ScriptedHost::new()).build().unwrap();
    let exec = g.exec_definition();
    assert_eq!(exec.input_schema["properties"]["language"]["enum"], json!(["typescript"]));
    assert!(!exec.description.contains("API.read"));
    // Hook metadata.
    assert_eq!(
        codemode::exec_hook_metadata(&ExecInput::code("1").with_language(Language::TypeScript)),
        json!({ "toolKind": "code_mode_exec", "toolInputKind": "typescript" })
    );
    assert_eq!(codemode::exec_hook_metadata(&ExecInput::code("1"))["toolInputKind"], "javascript");
}

#[test]
fn raw_no_tool_runs_disable_tools_and_empty_allowlists_do_not_trigger_code_mode_payload_enforcement() {
    let f = fixture(json!({}));
    for options in [RunOptions::new().tools_disabled(), RunOptions::new().raw_model_call()] {
        assert!(!f.cm.model_surface(&options).is_code_mode());
        assert!(f.cm.check_provider_payload_for(&options, &[] as &[&str]).is_ok());
    }
    // An empty allow list: the host hands over no tools.
    let empty = fixture_with(config(json!({})), vec![], NamespaceRegistry::new());
    let surface = empty.cm.model_surface(&RunOptions::default());
    assert!(!surface.is_code_mode());
    assert!(surface.tools().is_empty());
    assert!(empty.cm.check_provider_payload(&[] as &[&str]).is_ok());
}

#[tokio::test]
async fn all_catalog_eligible_effective_non_mcp_tools_appear_in_all_tools() {
    let f = fixture(json!({}));
    let ids = all_tool_ids(&f.run("return ALL_TOOLS.map((t) => t.id);").await);
    assert_eq!(
        ids,
        [
            "openclaw:core:approve_me",
            "openclaw:core:bad_output",
            "openclaw:core:exec",
            "openclaw:core:flaky",
            "openclaw:core:message",
            "openclaw:core:slow",
            "openclaw:core:web_search",
            "openclaw:shipping:shipping_list",
            "openclaw:github:github_list_issues",
            "openclaw:github:github_update_issue",
            "client:app:select_file",
        ]
    );
    let entry = value(&f.run("return ALL_TOOLS.find((t) => t.name === 'select_file');").await);
    assert_eq!(entry["input"], "unknown", "client schemas stay deferred");
    assert!(entry.get("parameters").is_none(), "no full schemas in ALL_TOOLS");
}

#[tokio::test]
async fn direct_only_tools_remain_visible_to_the_model_and_do_not_appear_in_all_tools() {
    let f = fixture(json!({}));
    assert!(f.cm.model_surface(&RunOptions::default()).names().contains(&"image"));
    let r = f.run("return [ALL_TOOLS.some((t) => t.name === 'image'), typeof tools.image];").await;
    assert_eq!(value(&r), json!([false, "undefined"]));
    let r =
        f.run("try { await tools.call('openclaw:core:image', {}); } catch (e) { return e.message; }").await;
    assert!(value(&r).as_str().unwrap().contains("unknown tool id"));
}

#[tokio::test]
async fn denied_tools_do_not_appear_in_all_tools() {
    // The host's policy denied `message`: it is not among the effective tools.
    let tools: Vec<ToolSpec> = fixture_tools().into_iter().filter(|t| t.name != "message").collect();
    let f = fixture_with(config(json!({})), tools, NamespaceRegistry::new());
    let r = f.run("return ALL_TOOLS.some((t) => t.name === 'message');").await;
    assert_eq!(value(&r), json!(false));
    let r = f
        .run("try { await tools.callValue('openclaw:core:message', { to: 'a', text: 'b' }); return 'called'; } catch (e) { return e.message; }")
        .await;
    let message = value(&r);
    assert!(message.as_str().unwrap().starts_with("unknown tool id \"openclaw:core:message\""), "{message}");
    assert_eq!(f.host.call_count(), 0, "a guessed id never reaches the host");
}

#[tokio::test]
async fn tools_search_describe_call_value_and_call_work_with_openclaw_tools() {
    let f = fixture(json!({}));
    let r = f
        .run(
            r#"
const [shipmentTool] = await tools.search("list shipments");
const described = await tools.describe(shipmentTool.id);
const shipments = await tools.callValue(shipmentTool.id, {});
const raw = await tools.call("openclaw:core:web_search", { query: "code mode" });
const viaName = await tools.web_search({ query: "convenience" });
return {
  id: shipmentTool.id,
  output: described.outputSchema.type,
  heavy: shipments.filter((s) => !s.paid && s.tons > 10).map((s) => s.id),
  raw,
  viaName,
};"#,
        )
        .await;
    assert_eq!(
        value(&r),
        json!({
            "id": "openclaw:shipping:shipping_list",
            "output": "array",
            "heavy": ["s1"],
            "raw": { "tool": "openclaw:core:web_search", "result": { "content": [], "details": { "query": "code mode" } } },
            "viaName": { "query": "convenience" },
        })
    );
    let t = r.telemetry();
    assert_eq!((t.search_count, t.describe_count, t.call_count), (1, 1, 3));
}

#[tokio::test]
async fn api_list_and_api_read_expose_typescript_style_mcp_declarations_without_any_bridge_or_tool_call() {
    let f = fixture(json!({}));
    let r = f
        .run(r#"const files = await API.list("mcp"); const gh = await API.read("mcp/github.d.ts"); return { files: files.map((x) => x.path), gh };"#)
        .await;
    let v = value(&r);
    assert_eq!(v["files"], json!(["mcp/github.d.ts", "mcp/index.d.ts"]));
    let gh = v["gh"].as_str().unwrap();
    assert!(gh.contains("declare namespace MCP.github"), "{gh}");
    assert!(gh.contains("function createIssue(input: {"), "{gh}");
    let t = r.telemetry();
    assert_eq!((t.search_count, t.describe_count, t.call_count), (0, 0, 0));
    assert_eq!(f.host.call_count(), 0);
    let r = f.run(r#"try { await API.read("mcp/../secrets"); } catch (e) { return e.message; }"#).await;
    assert!(value(&r).as_str().unwrap().contains(". or .."));
}

#[tokio::test]
async fn the_mcp_namespace_api_remains_available_as_an_inline_fallback_for_schemas() {
    let f = fixture(json!({}));
    let r = f.run(r#"return await MCP.github.$api("createIssue", { schema: true });"#).await;
    let v = value(&r);
    assert_eq!(v["id"], "mcp:github:create_issue");
    assert_eq!(v["inputSchema"]["required"], json!(["owner", "repo", "title"]));
    assert!(v["declarations"].as_str().unwrap().contains("createIssue"));
    let r = f.run(r#"return (await MCP.github.$api()).tools.map((t) => t.tool);"#).await;
    assert_eq!(value(&r), json!(["createIssue"]));
}

#[tokio::test]
async fn mcp_namespace_calls_work_for_visible_mcp_tools_while_direct_mcp_entries_are_absent_from_tools() {
    let f = fixture(json!({}));
    let r = f
        .run(
            r#"
const issue = await MCP.github.createIssue({ owner: "o", repo: "r", title: "t" });
const inAll = ALL_TOOLS.some((t) => t.source === "mcp");
const found = (await tools.search("create a github issue")).some((t) => t.id.startsWith("mcp:"));
let viaTools;
try { await tools.callValue("mcp:github:create_issue", { owner: "o", repo: "r", title: "t" }); } catch (e) { viaTools = e.message; }
let bad;
try { await MCP.github.createIssue({ owner: "o" }); } catch (e) { bad = e.message; }
const resource = await MCP.github.resources.read({ uri: "memo://one" });
return { issue, inAll, found, viaTools, bad, resource, convenience: typeof tools.create_issue };"#,
        )
        .await;
    let v = value(&r);
    assert_eq!(v["issue"], json!({ "owner": "o", "repo": "r", "title": "t" }));
    assert_eq!(v["inAll"], false);
    assert_eq!(v["found"], false);
    assert!(v["viaTools"].as_str().unwrap().contains("is an MCP tool"), "{v}");
    assert!(v["bad"].as_str().unwrap().contains("missing required property \"repo\""), "{v}");
    assert_eq!(v["resource"]["contents"][0]["uri"], "memo://one");
    assert_eq!(v["convenience"], "undefined");
    assert_eq!(
        f.host.call_ids(),
        ["mcp:github:create_issue"],
        "exact catalog id; the invalid call never ran"
    );
}

#[tokio::test]
async fn tool_search_control_tools_are_hidden_both_from_the_model_surface_and_from_the_hidden_catalog() {
    let f = fixture(json!({}));
    assert!(!f.cm.model_surface(&RunOptions::default()).names().contains(&"tool_search"));
    assert!(f.cm.catalog().get("openclaw:core:tool_search").is_none());
    let r =
        f.run("return [ALL_TOOLS.some((t) => t.name === 'tool_search'), typeof tools.tool_search];").await;
    assert_eq!(value(&r), json!([false, "undefined"]));
}

#[tokio::test]
async fn nested_calls_preserve_approval_and_hook_behavior() {
    let f = fixture(json!({ "timeoutMs": 300 }));
    f.host.set("openclaw:core:message", Behavior::Deny);
    // A denial is a catchable guest error carrying the host's code.
    let r = f
        .run("try { await tools.message({ to: 'a', text: 'b' }); } catch (e) { return [e.message, e.code]; }")
        .await;
    assert_eq!(value(&r), json!(["denied by policy: messages need approval", "denied"]));
    // An approval that outlasts the deadline suspends the run; wait picks it up.
    let r = f.run("const r = await tools.approve_me({}); text('after approval'); return r;").await;
    let id = run_id(&r);
    let CodeModeResult::Waiting(w) = &r else { unreachable!() };
    assert_eq!(w.pending_tool_calls[0].tool_id, "openclaw:core:approve_me");
    f.host.approve("openclaw:core:approve_me");
    let r = f.wait(&id).await;
    assert_eq!(value(&r), json!({ "approved": true }));
    assert_eq!(r.output(), [CodeModeOutput::Text { text: "after approval".into() }]);
    // The host saw the run scope and the parent exec call on every nested call.
    for call in f.host.calls.lock().unwrap().iter() {
        assert_eq!(call.scope.session_id, "session-1");
        assert_eq!(call.parent_call_id.as_deref(), Some("call-exec-1"));
    }
}

#[tokio::test]
async fn shell_exec_is_hidden_from_the_model_but_can_be_called_by_catalog_id_when_allowed() {
    let f = fixture(json!({}));
    let surface = f.cm.model_surface(&RunOptions::default());
    let exec = surface.tools().iter().find(|t| t.name == "exec").unwrap();
    assert!(exec.description.contains("JavaScript"), "the visible exec is Code Mode's");
    assert_eq!(surface.names().iter().filter(|n| **n == "exec").count(), 1);
    let r = f.run(r#"return await tools.callValue("openclaw:core:exec", { command: "ls" });"#).await;
    assert_eq!(value(&r), json!({ "command": "ls" }));
    assert_eq!(f.host.call_ids(), ["openclaw:core:exec"]);
}

#[tokio::test]
async fn recursive_code_mode_exec_and_wait_cannot_be_called_from_guest_code() {
    let f = fixture(json!({}));
    let r = f
        .run(
            r#"
const out = [];
for (const id of ["exec", "wait", "openclaw:core:wait", "openclaw:core:tool_call"]) {
  try { await tools.callValue(id, { code: "1" }); out.push("called " + id); } catch (e) { out.push(e.message.slice(0, 15)); }
}
out.push(typeof tools.wait, typeof globalThis.exec, typeof globalThis.wait);
return out;"#,
        )
        .await;
    assert_eq!(
        value(&r),
        json!([
            "unknown tool id",
            "unknown tool id",
            "unknown tool id",
            "unknown tool id",
            "undefined",
            "undefined",
            "undefined"
        ])
    );
    assert_eq!(f.host.call_count(), 0);
}

#[tokio::test]
async fn typescript_input_is_transformed_and_evaluated_without_loading_typescript_on_disabled_or_javascript_only_paths()
 {
    let f = fixture(json!({}));
    let r = f.run("const x = 20; return x + 1;").await;
    assert_eq!(value(&r), json!(21));
    let disabled = fixture_with(CodeModeConfig::default(), fixture_tools(), NamespaceRegistry::new());
    let r = disabled
        .cm
        .exec(&scope(), ExecInput::code("return 1 as number;").with_language(Language::TypeScript))
        .await;
    assert_eq!(r.code(), Some(CodeModeErrorCode::InvalidInput));
    // Other tests may run TypeScript cells concurrently; this one checks its own cells by value.
    let ts = r#"
interface Shipment { id: string; paid: boolean; tons: number }
enum Kind { Heavy = "heavy" }
const list: Shipment[] = await tools.callValue("openclaw:shipping:shipping_list", {});
return list.filter((s): boolean => s.tons > 10).map((s) => `${s.id}:${Kind.Heavy}`);"#;
    let r = f.cm.exec(&scope(), ExecInput::code(ts).with_language(Language::TypeScript)).await;
    assert_eq!(value(&r), json!(["s1:heavy", "s2:heavy"]));
    // A JavaScript-only config rejects TypeScript.
    let js_only = fixture_with(
        CodeModeConfig::from_json(&json!({ "enabled": true, "languages": ["javascript"] })).unwrap(),
        fixture_tools(),
        NamespaceRegistry::new(),
    );
    let r = js_only.cm.exec(&scope(), ExecInput::code("return 1;").with_language(Language::TypeScript)).await;
    assert!(error(&r).contains("disabled"), "{r:?}");
    // A TypeScript error is reported at the user's position.
    let r = f
        .cm
        .exec(&scope(), ExecInput::code("const a: number = 1;\nnull.x;").with_language(Language::TypeScript))
        .await;
    assert!(error(&r).contains("(at user.ts:2:"), "{}", error(&r));
}

#[tokio::test]
async fn access_to_import_require_the_filesystem_the_network_and_the_environment_fails() {
    let f = fixture(json!({}));
    for code in ["import fs from 'node:fs';", "const fs = require('fs');", "const m = await import('os');"] {
        let r = f.run(code).await;
        assert_eq!(r.code(), Some(CodeModeErrorCode::InvalidInput), "{code}: {r:?}");
    }
    let r = f
        .run(
            r#"
const probes = {
  require: typeof require, process: typeof process, fetch: typeof fetch, XMLHttpRequest: typeof XMLHttpRequest,
  std: typeof std, os: typeof os, Deno: typeof Deno, Bun: typeof Bun,
};
let dyn;
try { await (0, eval)("import('fs')"); dyn = "loaded"; } catch (e) { dyn = "refused"; }
return { probes, dyn };"#,
        )
        .await;
    let v = value(&r);
    for (name, kind) in v["probes"].as_object().unwrap() {
        assert_eq!(kind, "undefined", "{name}");
    }
    assert_eq!(v["dyn"], "refused");
    let r = f.run("ls -la /etc").await;
    assert_eq!(r.code(), Some(CodeModeErrorCode::InvalidInput));
    assert!(error(&r).contains("shell"));
}

#[tokio::test]
async fn infinite_loops_time_out_and_cannot_block_the_gateway() {
    let f = fixture(json!({ "timeoutMs": 300 }));
    let started = Instant::now();
    let (looping, other) = tokio::join!(f.run("while (true) {}"), async {
        tokio::time::sleep(Duration::from_millis(50)).await;
        f.run("return 'still responsive';").await
    });
    assert_eq!(looping.code(), Some(CodeModeErrorCode::Timeout), "{looping:?}");
    assert!(started.elapsed() < Duration::from_secs(3));
    assert_eq!(value(&other), json!("still responsive"));
    // A guest error that merely says "interrupted" is not a timeout.
    let r = f.run("throw new Error('interrupted');").await;
    assert_eq!(r.code(), None);
    assert_eq!(error(&r), "Error: interrupted (at user.js:1:11)");
    assert_eq!(f.cm.run_count(), 0);
}

#[tokio::test]
async fn memory_limit_failures_terminate_the_guest_vm() {
    let f = fixture(json!({ "memoryLimitBytes": 8388608 }));
    let r = f.run("const a = []; while (true) { a.push('x'.repeat(1 << 16) + a.length); }").await;
    let CodeModeResult::Failed(failed) = &r else { panic!("{r:?}") };
    assert!(
        failed.error.contains("out of memory") || failed.error.contains("memoryLimitBytes"),
        "{}",
        failed.error
    );
    // The next run starts from a clean VM.
    assert_eq!(value(&f.run("return 40 + 2;").await), json!(42));
}

#[tokio::test]
async fn output_and_snapshot_limits_are_enforced_for_completed_and_suspended_calls() {
    // Completed: exactly maxOutputBytes passes, one byte more fails. The returned value counts
    // too: `"ok"` is 4 bytes of JSON.
    let f = fixture(json!({ "maxOutputBytes": 1024 }));
    let r = f.run("text('x'.repeat(1020)); return 'ok';").await;
    assert_eq!(value(&r), json!("ok"));
    let r = f.run("text('x'.repeat(1021)); return 'ok';").await;
    assert_eq!(r.code(), Some(CodeModeErrorCode::OutputLimitExceeded));
    let r = f.run("text('x'.repeat(1024));").await;
    assert_eq!(value(&r), json!(null), "returning nothing counts nothing");
    let r = f.run("text('x'.repeat(1024)); text('y'); return 'ok';").await;
    assert_eq!(r.code(), Some(CodeModeErrorCode::OutputLimitExceeded));
    let r = f.run("try { text('x'.repeat(1025)); } catch (e) {} return 'caught';").await;
    assert_eq!(r.code(), Some(CodeModeErrorCode::OutputLimitExceeded), "catching does not help");
    // Suspended: the output budget is cumulative across exec and wait.
    let r = f.run("text('a'.repeat(1000)); await yield_control(); text('b'.repeat(24)); await yield_control(); text('c'); return 1;").await;
    let id = run_id(&r);
    let r = f.wait(&id).await;
    let id2 = run_id(&r);
    assert_eq!(id, id2);
    let r = f.wait(&id).await;
    assert_eq!(r.code(), Some(CodeModeErrorCode::OutputLimitExceeded));
    assert_eq!(f.cm.run_count(), 0);
    // Snapshot limit: a run that suspends with maxSnapshotBytes at its floor cannot be stored.
    let f = fixture(json!({ "maxSnapshotBytes": 1024 }));
    let r = f.run("await yield_control(); return 1;").await;
    assert_eq!(r.code(), Some(CodeModeErrorCode::SnapshotLimitExceeded), "{r:?}");
    assert_eq!(f.cm.run_count(), 0);
}

#[tokio::test]
async fn wait_resumes_a_suspended_snapshot_and_returns_the_final_value() {
    let f = fixture(json!({ "timeoutMs": 400 }));
    f.host.set("openclaw:core:slow", Behavior::Slow(600, json!("slow done")));
    let r = f.run("const x = { before: 1 }; text('before'); const s = await tools.slow({}); text('after'); return { ...x, s };").await;
    let id = run_id(&r);
    assert_eq!(r.output(), [CodeModeOutput::Text { text: "before".into() }]);
    assert_eq!(f.cm.run_count(), 1);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let r = f.wait(&id).await;
    assert_eq!(value(&r), json!({ "before": 1, "s": "slow done" }));
    assert_eq!(
        r.output(),
        [CodeModeOutput::Text { text: "after".into() }],
        "output is delivered exactly once"
    );
    assert_eq!(f.cm.run_count(), 0);
}

#[tokio::test]
async fn expired_aborted_wrong_session_and_unknown_run_ids_fail() {
    let f = fixture(json!({ "snapshotTtlSeconds": 1 }));
    let unknown = f.wait("cm_nope").await;
    assert_eq!(
        (unknown.code(), error(&unknown)),
        (Some(CodeModeErrorCode::InvalidInput), "code mode run is unavailable or expired.".into())
    );
    // Wrong session / wrong agent run.
    let id = run_id(&f.run("await yield_control(); return 'resumed';").await);
    let other = codemode::RunScope::new("session-2", "turn-1");
    let r = f.cm.wait(&other, WaitInput::new(id.clone())).await;
    assert_eq!(error(&r), "code mode run belongs to a different session.");
    let r = f.cm.wait(&codemode::RunScope::new("session-1", "turn-9"), WaitInput::new(id.clone())).await;
    assert_eq!(error(&r), "code mode run belongs to a different agent run.");
    assert_eq!(value(&f.wait(&id).await), json!("resumed"), "failed waits leave the run intact");
    // Aborted: cancel a suspended run.
    let id = run_id(&f.run("await yield_control(); return 1;").await);
    assert!(f.cm.cancel(&id));
    assert_eq!(error(&f.wait(&id).await), "code mode run is unavailable or expired.");
    // Expired.
    let id = run_id(&f.run("await yield_control(); return 1;").await);
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let r = f.wait(&id).await;
    assert_eq!(
        (r.code(), error(&r)),
        (Some(CodeModeErrorCode::InvalidInput), "code mode run is unavailable or expired.".into())
    );
    assert_eq!(f.cm.run_count(), 0);
}

#[tokio::test]
async fn transcript_replay_and_persistence_preserve_code_mode_control_calls() {
    // Results are plain wire data: they serialize and replay byte for byte, and a suspended run
    // keeps the identity of the exec call that started it.
    let f = fixture(json!({ "timeoutMs": 150 }));
    let r = f.run("text('one'); const s = await tools.slow({}); json({ s }); return s;").await;
    let replayed: CodeModeResult = serde_json::from_value(r.to_json()).unwrap();
    assert_eq!(replayed, r);
    assert_eq!(r.to_json()["status"], "waiting");
    assert_eq!(r.to_json()["reason"], "pending_tools");
    let id = run_id(&r);
    tokio::time::sleep(Duration::from_millis(250)).await;
    let mut done = f.wait(&id).await;
    let mut output = done.output().to_vec();
    for _ in 0..20 {
        if !matches!(done, CodeModeResult::Waiting(_)) {
            break;
        }
        done = f.wait(&id).await;
        output.extend(done.output().iter().cloned());
    }
    let replayed: CodeModeResult = serde_json::from_value(done.to_json()).unwrap();
    assert_eq!(replayed, done);
    assert_eq!(value(&done), json!("slow done"));
    assert_eq!(
        serde_json::to_value(&output).unwrap(),
        json!([{ "type": "json", "value": { "s": "slow done" } }])
    );
    let calls = f.host.calls.lock().unwrap();
    assert_eq!(calls[0].parent_call_id.as_deref(), Some("call-exec-1"));
}

#[tokio::test]
async fn the_transcript_and_telemetry_clearly_show_nested_tool_calls() {
    let f = fixture(json!({}));
    let r = f
        .run("await tools.web_search({ query: 'a' }); try { await tools.flaky({}); } catch {} return 1;")
        .await;
    let t = r.telemetry();
    assert_eq!(t.call_count, 2);
    assert_eq!(t.model_visible_tools, ["exec", "wait", "image"]);
    assert_eq!(t.catalog_size, 12);
    assert_eq!(
        (t.catalog_by_source.openclaw, t.catalog_by_source.mcp, t.catalog_by_source.client),
        (10, 1, 1)
    );
    let events = f.events.events.lock().unwrap();
    let summary: Vec<(String, String, Option<String>)> = events
        .iter()
        .map(|e| match e {
            CodeModeEvent::NestedCallStarted { catalog_id, parent_call_id, .. } => {
                ("started".into(), catalog_id.clone(), parent_call_id.clone())
            }
            CodeModeEvent::NestedCallFinished { catalog_id, parent_call_id, ok, error, .. } => {
                let state =
                    if *ok { "ok".to_owned() } else { format!("failed: {}", error.as_deref().unwrap_or("")) };
                (state, catalog_id.clone(), parent_call_id.clone())
            }
            _ => ("other".into(), String::new(), None),
        })
        .collect();
    let parent = Some("call-exec-1".to_owned());
    assert_eq!(summary[0], ("started".into(), "openclaw:core:web_search".into(), parent.clone()));
    assert_eq!(summary[1], ("ok".into(), "openclaw:core:web_search".into(), parent.clone()));
    assert_eq!(summary[2].1, "openclaw:core:flaky");
    assert!(summary[3].0.starts_with("failed: upstream exploded at <path>"), "{:?}", summary[3]);
    assert!(!summary[3].0.contains("abc123"), "secrets never reach events");
    let _ = Value::Null;
}

#[tokio::test]
async fn fail_closed_when_the_sandbox_cannot_be_created() {
    let host = ScriptedHost::new();
    let factory: codemode::SandboxFactory = std::sync::Arc::new(|_: &CodeModeConfig, _: &str| {
        Err(codemode::SandboxError::Unavailable { reason: "no wasm today".into() })
    });
    let cm = CodeMode::builder(config(json!({})))
        .tools(fixture_tools())
        .host(host.clone())
        .sandbox_factory(factory)
        .build()
        .unwrap();
    // The surface stays Code Mode (never a silent fallback to direct tools) ...
    assert_eq!(cm.model_surface(&RunOptions::default()).names(), ["exec", "wait", "image"]);
    // ... and every exec fails closed.
    let r = cm.exec(&scope(), ExecInput::code("return 1;")).await;
    assert_eq!(r.code(), Some(CodeModeErrorCode::RuntimeUnavailable));
    assert!(error(&r).contains("no wasm today"));
    assert_eq!(host.call_count(), 0);
}
