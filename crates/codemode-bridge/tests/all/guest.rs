//! The prelude in the real sandbox: the guest API, the adapter, errors, limits and robustness.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use codemode_bridge::{
    BootContext, BudgetLimits, DeliveryExt, DeliveryLimits, HostRequest, PRELUDE, RunLedger, SharedLedger,
    call_envelope, decode_cell_value, decode_request,
};
use codemode_core::CodeModeOutput;
use codemode_core::guest::{McpGuestServer, McpGuestTable};
use codemode_sandbox::{Delivery, Sandbox, SandboxConfig, Step, Vm};
use serde_json::{Value, json};

use crate::boot::sample_context;

pub fn sandbox() -> &'static Sandbox {
    static SANDBOX: OnceLock<Sandbox> = OnceLock::new();
    SANDBOX.get_or_init(|| Sandbox::new(sandbox_config(), PRELUDE).expect("the prelude loads"))
}

/// The sandbox's defaults, except a 2 MiB wasm stack: wasmtime 48 refuses a `max_wasm_stack` above
/// its `async_stack_size` (2 MiB) even without the async feature, so the sandbox's 16 MiB default
/// cannot start an engine yet. The prelude needs far less.
pub fn sandbox_config() -> SandboxConfig {
    let mut config = SandboxConfig::default();
    config.max_wasm_stack_bytes = 2 << 20;
    config
}

fn deadline() -> Instant {
    Instant::now() + Duration::from_secs(10)
}

/// The run's ledger, shared between the bridge's policy (inside the VM) and the test's host loop.
#[derive(Clone)]
pub struct Ledger(pub SharedLedger);

impl Ledger {
    pub fn new(limits: BudgetLimits, max_output_bytes: u64) -> Ledger {
        Ledger(RunLedger::shared(limits, max_output_bytes))
    }

    pub fn get(&self) -> std::sync::MutexGuard<'_, RunLedger> {
        codemode_bridge::lock(&self.0)
    }
}

/// What a cell did.
#[derive(Debug)]
pub struct Outcome {
    /// Completed value (JSON), or `Err(message)` when the cell failed.
    pub result: Result<Value, String>,
    /// Every decoded request, in order.
    pub requests: Vec<HostRequest>,
    /// Output items.
    pub output: Vec<CodeModeOutput>,
}

pub fn booted_vm(ctx: &BootContext, ledger: &Ledger) -> Vm {
    let mut vm = sandbox().start().unwrap();
    vm.set_policy(RunLedger::policy(&ledger.0));
    let step = vm.eval_script(&ctx.boot_script().unwrap(), deadline()).unwrap();
    assert!(matches!(step, Step::Completed { .. }), "boot failed: {step:?}");
    vm
}

/// Drives `vm` from `step` until it completes or fails, answering requests with `host`.
pub fn drive(
    vm: &mut Vm,
    mut step: Step,
    ledger: &Ledger,
    host: &mut dyn FnMut(&HostRequest) -> Delivery,
) -> Outcome {
    let mut requests = Vec::new();
    let result = loop {
        match step {
            Step::Completed { value_json } => {
                break Ok(decode_cell_value(value_json.as_deref()).expect("the prelude encodes cell values"));
            }
            Step::Failed(e) => break Err(e.to_string()),
            Step::Pending { .. } => {
                for call in vm.take_host_calls() {
                    let reply = match decode_request(&call.payload) {
                        Ok(request) => {
                            let reply = host(&request);
                            requests.push(request);
                            reply
                        }
                        Err(e) => {
                            assert!(!e.is_fatal(), "fatal decode error: {e}");
                            e.reply()
                        }
                    };
                    ledger.get().budgets.on_delivered();
                    vm.deliver(call.id, reply, deadline()).unwrap();
                }
                step = vm.run_jobs(deadline()).unwrap();
            }
        }
    };
    let output = ledger.get().output.take_new();
    Outcome { result, requests, output }
}

pub fn run_with(
    ctx: &BootContext,
    ledger: &Ledger,
    code: &str,
    host: &mut dyn FnMut(&HostRequest) -> Delivery,
) -> Outcome {
    let mut vm = booted_vm(ctx, ledger);
    let step = vm.eval_cell(code, "user.js", deadline()).unwrap();
    drive(&mut vm, step, ledger, host)
}

/// A host that answers every op with a fixed, recognizable value.
pub fn echo_host(request: &HostRequest) -> Delivery {
    let limits = DeliveryLimits::default();
    match request {
        HostRequest::Search { query, limit } => Delivery::value(
            &json!([{ "id": "openclaw:core:web_search", "query": query, "limit": limit }]),
            &limits,
        ),
        HostRequest::Describe { id } => {
            Delivery::value(&json!({ "id": id, "parameters": { "type": "object" } }), &limits)
        }
        HostRequest::Call { id, input } => {
            Delivery::value(&call_envelope(id, json!({ "details": input })), &limits)
        }
        HostRequest::CallValue { id, input } => {
            Delivery::value(&json!({ "id": id, "input": input }), &limits)
        }
        HostRequest::Namespace { namespace, path, args } => {
            Delivery::value(&json!({ "namespace": namespace, "path": path, "args": args }), &limits)
        }
        HostRequest::Mcp { server, tool, input } => Delivery::value(
            &json!({ "content": [], "structuredContent": { "server": server, "tool": tool, "input": input } }),
            &limits,
        ),
        HostRequest::Yield { .. } => Delivery::null(),
        other => Delivery::value(&json!({ "op": other.op() }), &limits),
    }
}

pub fn run(code: &str) -> Outcome {
    let ledger = Ledger::new(BudgetLimits::default(), 65_536);
    run_with(&sample_context(), &ledger, code, &mut echo_host)
}

fn value(code: &str) -> Value {
    let outcome = run(code);
    match outcome.result {
        Ok(v) => v,
        Err(e) => panic!("cell failed: {e}\n{code}"),
    }
}

#[test]
fn globals_are_defined_locked_and_private_imports_are_gone() {
    let v = value(
        r#"
        const names = ["ALL_TOOLS", "tools", "MCP", "API", "namespaces", "text", "json", "console", "yield_control", "Issues"];
        const out = {};
        for (const n of names) {
          const d = Object.getOwnPropertyDescriptor(globalThis, n);
          out[n] = [typeof globalThis[n], d.writable, d.configurable];
        }
        tools = 1; MCP = 2;
        out.afterAssign = [typeof tools, typeof MCP, delete globalThis.tools];
        out.private = [typeof __codemode_host_call, typeof __codemode_output, typeof __codemode_boot, typeof __codemode_encode, typeof __codemode_host_call_with];
        out.frozen = [Object.isFrozen(tools), Object.isFrozen(MCP), Object.isFrozen(API), Object.isFrozen(Issues)];
        return out;
        "#,
    );
    assert_eq!(
        v,
        json!({
            "ALL_TOOLS": ["object", false, false], "tools": ["object", false, false], "MCP": ["object", false, false],
            "API": ["object", false, false], "namespaces": ["object", false, false], "text": ["function", false, false],
            "json": ["function", false, false], "console": ["object", false, false],
            "yield_control": ["function", false, false],
            "Issues": ["object", false, false],
            "afterAssign": ["object", "object", false],
            "private": ["undefined", "undefined", "undefined", "undefined", "undefined"],
            "frozen": [true, true, true, true]
        })
    );
}

#[test]
fn all_tools_omits_mcp_and_tools_helpers_reach_the_host() {
    let outcome = run(r#"
        const ids = ALL_TOOLS.map((t) => t.id);
        const found = await tools.search("list shipments", { limit: 3 });
        const described = await tools.describe(found[0].id);
        const value = await tools.callValue("openclaw:shipping:shipping_list", { paid: false });
        const raw = await tools.call("openclaw:shipping:shipping_list");
        const convenience = await tools.web_search({ query: "code mode" });
        return { ids, found, described, value, raw, convenience, keys: Object.keys(tools) };
        "#);
    let v = outcome.result.unwrap();
    assert_eq!(
        v["ids"],
        json!(["openclaw:core:web_search", "openclaw:shipping:shipping_list", "client:app:select_file"])
    );
    assert_eq!(v["found"][0]["limit"], 3);
    assert_eq!(v["described"]["id"], "openclaw:core:web_search");
    assert_eq!(v["value"], json!({ "id": "openclaw:shipping:shipping_list", "input": { "paid": false } }));
    assert_eq!(v["raw"], json!({ "tool": "openclaw:shipping:shipping_list", "result": { "details": null } }));
    assert_eq!(
        v["convenience"],
        json!({ "id": "openclaw:core:web_search", "input": { "query": "code mode" } })
    );
    assert_eq!(v["keys"], json!(["search", "describe", "callValue", "call", "web_search"]));
    assert_eq!(
        outcome.requests,
        vec![
            HostRequest::Search { query: "list shipments".into(), limit: Some(3) },
            HostRequest::Describe { id: "openclaw:core:web_search".into() },
            HostRequest::CallValue {
                id: "openclaw:shipping:shipping_list".into(),
                input: Some(json!({ "paid": false }))
            },
            HostRequest::Call { id: "openclaw:shipping:shipping_list".into(), input: None },
            HostRequest::CallValue {
                id: "openclaw:core:web_search".into(),
                input: Some(json!({ "query": "code mode" }))
            },
        ]
    );
}

#[test]
fn the_prelude_installs_exactly_the_vocabulary_helpers() {
    let v = value(
        r#"
        return {
          tools: Object.keys(tools).filter((k) => k !== "web_search"),
          docs: Object.keys(MCP.docs).filter((k) => k !== "search"),
        };
        "#,
    );
    let sorted = |v: &Value| {
        let mut names: Vec<String> =
            v.as_array().unwrap().iter().map(|n| n.as_str().unwrap().to_owned()).collect();
        names.sort();
        names
    };
    let expected = |names: &[&str]| {
        let mut names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
        names.sort();
        names
    };
    assert_eq!(sorted(&v["tools"]), expected(codemode_core::guest::TOOLS_HELPERS));
    assert_eq!(sorted(&v["docs"]), expected(codemode_core::guest::MCP_SERVER_MEMBERS));
}

#[test]
fn mcp_namespace_api_and_resources() {
    let outcome = run(r#"
        const issue = await MCP.github.createIssue({ owner: "openclaw", title: "x" });
        const api = await MCP.github.$api("createIssue", { schema: true });
        const all = await MCP.github.$api();
        const res = await MCP.docs.resources.read({ uri: "memo://one" });
        const prompt = await MCP.docs.prompts.get({ name: "brief", arguments: { topic: "release" } });
        let bad;
        try { await MCP.github.listIssues([1, 2]); } catch (e) { bad = [e instanceof TypeError, e.message]; }
        return {
          issue, api, all, res, prompt, bad,
          servers: Object.keys(MCP), githubKeys: Object.keys(MCP.github),
          githubResources: typeof MCP.github.resources,
        };
        "#);
    let v = outcome.result.unwrap();
    assert_eq!(
        v["issue"]["structuredContent"],
        json!({ "server": "github", "tool": "createIssue", "input": { "owner": "openclaw", "title": "x" } })
    );
    assert_eq!(v["bad"], json!([true, "MCP.github.listIssues: input must be an object"]));
    assert_eq!(v["servers"], json!(["github", "docs"]));
    assert_eq!(v["githubKeys"], json!(["createIssue", "listIssues", "$api"]));
    assert_eq!(v["githubResources"], "undefined");
    let mut input = serde_json::Map::new();
    input.insert("uri".into(), json!("memo://one"));
    assert_eq!(
        outcome.requests[1],
        HostRequest::McpApi { server: "github".into(), tool: Some("createIssue".into()), schema: true }
    );
    assert_eq!(
        outcome.requests[2],
        HostRequest::McpApi { server: "github".into(), tool: None, schema: false }
    );
    assert_eq!(outcome.requests[3], HostRequest::ResourcesRead { server: "docs".into(), input });
    assert_eq!(outcome.requests[4].op(), "promptsGet");
    assert_eq!(outcome.requests.len(), 5, "the rejected call never reached the host");
}

#[test]
fn api_files_are_served_without_bridge_calls() {
    let outcome = run(r#"
        const all = await API.list();
        const mcp = await API.list("mcp");
        const slash = await API.list("mcp/");
        const none = await API.list("nothing");
        const github = await API.read("mcp/github.d.ts");
        const errors = [];
        for (const p of ["mcp/../x", "/mcp/index.d.ts", "mcp\\index.d.ts", "mcp/missing.d.ts", "mcp//index.d.ts", 42]) {
          try { await API.read(p); errors.push("no error"); } catch (e) { errors.push(e.message); }
        }
        return { all, mcp: mcp.map((f) => f.path), slash: slash.length, none, github, errors };
        "#);
    assert!(outcome.requests.is_empty(), "API must not use the bridge: {:?}", outcome.requests);
    let v = outcome.result.unwrap();
    assert_eq!(v["mcp"], json!(["mcp/docs.d.ts", "mcp/github.d.ts", "mcp/index.d.ts"]));
    assert_eq!(v["slash"], 3);
    assert_eq!(v["none"], json!([]));
    assert_eq!(v["github"], "declare namespace MCP.github { /* é */ }\n");
    let bytes = "declare namespace MCP.github { /* é */ }\n".len();
    assert_eq!(v["all"][1], json!({ "path": "mcp/github.d.ts", "bytes": bytes }));
    assert_eq!(
        v["errors"],
        json!([
            "API.read: path has a . or .. segment",
            "API.read: path must be relative, like \"mcp/index.d.ts\"",
            "API.read: path contains a backslash; use /",
            "API.read: unknown file; API.list() shows the available files",
            "API.read: path has an empty segment",
            "API.read: path must be a string"
        ])
    );
}

#[test]
fn api_path_rules_match_the_rust_reference() {
    let cases = crate::boot::api_path_cases();
    let inputs: Vec<&str> = cases.iter().map(|(i, _)| i.as_str()).collect();
    let code = format!(
        r#"
        const out = [];
        for (const p of {inputs}) {{
          try {{ out.push({{ ok: (await API.list(p)).length }}); }} catch (e) {{ out.push({{ err: e.message }}); }}
        }}
        return out;
        "#,
        inputs = serde_json::to_string(&inputs).unwrap()
    );
    let v = value(&code);
    for ((input, expected), got) in cases.iter().zip(v.as_array().unwrap()) {
        match expected {
            Ok(_) => assert!(got.get("ok").is_some(), "{input:?}: {got}"),
            Err(e) => assert_eq!(got["err"], format!("API.list: {e}"), "{input:?}"),
        }
    }
}

#[test]
fn namespaces_call_through_the_bridge_without_leaking_markers() {
    let outcome = run(r#"
        const a = await Issues.list({ state: "open" });
        const b = await namespaces.Issues.list();
        json(Issues);
        json({ tools, MCP, API, namespaces });
        return { a, b, same: Issues === namespaces.Issues, repo: Issues.repository, proto: Object.getPrototypeOf(Issues.repository) === Object.prototype };
        "#);
    let v = outcome.result.unwrap();
    assert_eq!(
        v["a"],
        json!({ "namespace": "github-issues", "path": "list", "args": [{ "state": "open" }] })
    );
    assert_eq!(v["b"]["args"], json!([]));
    assert_eq!(v["same"], true);
    assert_eq!(v["repo"], json!({ "owner": "openclaw", "__proto__": "data" }));
    assert_eq!(v["proto"], true, "a `__proto__` data key stays an own property");
    let repository = json!({ "owner": "openclaw", "__proto__": "data" });
    assert_eq!(
        outcome.output,
        vec![
            CodeModeOutput::Json { value: json!({ "repository": repository }) },
            CodeModeOutput::Json {
                value: json!({
                    "tools": {}, "MCP": { "github": {}, "docs": { "resources": {}, "prompts": {} } }, "API": {},
                    "namespaces": { "Issues": { "repository": repository } }
                })
            },
        ],
        "handles serialize without internal ids or markers"
    );
}

#[test]
fn adapter_restricts_values_both_ways() {
    let outcome = run(r#"
        let toJsonCalls = 0;
        const shared = { s: 1 };
        const input = {
          u: undefined, f() {}, sym: Symbol("x"), [Symbol("k")]: 1,
          arr: [undefined, () => 1, Symbol("y"), NaN, Infinity, -Infinity, 1.5],
          big: 12345678901234567890n, date: new Date(0), bad: new Date(NaN),
          lone: "a\ud800b", boxed: [new Number(3), new String("s"), new Boolean(false)],
          err: new RangeError("nope"),
          withToJSON: { toJSON() { toJsonCalls++; return "replaced"; }, kept: true },
          a: shared, b: shared,
        };
        const echoed = await tools.callValue("x", input);
        json(input);
        return { echoed: echoed.input, toJsonCalls };
        "#);
    let v = outcome.result.unwrap();
    let expected = json!({
        "arr": [null, null, null, null, null, null, 1.5],
        "big": "12345678901234567890", "date": "1970-01-01T00:00:00.000Z", "bad": null,
        "lone": "a\u{fffd}b", "boxed": [3, "s", false],
        "err": { "name": "RangeError", "message": "nope" },
        "withToJSON": { "kept": true },
        "a": { "s": 1 }, "b": { "s": 1 },
    });
    assert_eq!(v["echoed"], expected);
    assert_eq!(v["toJsonCalls"], 0, "toJSON is never invoked");
    assert_eq!(outcome.output, vec![CodeModeOutput::Json { value: expected }]);
}

#[test]
fn adapter_rejects_cycles_depth_binary_and_throwing_getters_catchably() {
    let v = value(
        r#"
        const nest = (n) => { let v = 0; for (let i = 0; i < n; i++) v = [v]; return v; };
        const cyc = { name: "c" }; cyc.self = cyc;
        const getter = { get boom() { throw new Error("kaboom"); } };
        const out = {};
        const cases = { cyc, deep: nest(65), buf: new ArrayBuffer(4), u8: new Uint8Array(2), view: new DataView(new ArrayBuffer(1)), getter };
        for (const [k, v] of Object.entries(cases)) {
          try { await tools.callValue("x", v); out[k] = "passed"; } catch (e) { out[k] = [e.name, e.message]; }
        }
        out.ok64 = (await tools.callValue("x", nest(64))).id;
        try { json(cyc); } catch (e) { out.json = e.message; }
        return out;
        "#,
    );
    assert_eq!(
        v["cyc"],
        json!([
            "TypeError",
            "tools.callValue: value is circular; the Code Mode bridge accepts JSON-compatible values only"
        ])
    );
    assert_eq!(
        v["deep"][1],
        "tools.callValue: value nests deeper than 64 levels; the Code Mode bridge accepts at most 64"
    );
    for k in ["buf", "u8", "view"] {
        assert_eq!(
            v[k][1],
            "tools.callValue: binary values (ArrayBuffer, typed arrays, DataView) cannot cross the Code Mode bridge"
        );
    }
    assert_eq!(v["getter"], json!(["TypeError", "tools.callValue: reading property \"boom\" threw: kaboom"]));
    assert_eq!(v["ok64"], "x");
    assert_eq!(
        v["json"],
        "json: value is circular; the Code Mode bridge accepts JSON-compatible values only"
    );
}

/// A tool call's request is assembled on the hot path: inputs the native encoder gives up on
/// take the walk, refusals name the helper (the convenience name too), a bad id is refused after
/// the input, and a convenience tool's quoted id is reused from its first call on.
#[test]
fn tool_call_requests_and_refusals_name_the_helper() {
    let outcome = run(r#"
        const out = {};
        const attempt = async (k, f) => { try { out[k] = await f(); } catch (e) { out[k] = [e.name, e.message]; } };
        const cyc = {}; cyc.self = cyc;
        await attempt("fn", () => tools.call("x", () => 1));
        await attempt("sym", () => tools.callValue("x", Symbol("s")));
        await attempt("id", () => tools.callValue(5, { a: 1 }));
        await attempt("both", () => tools.call(5, () => 1));
        await attempt("conv", () => tools.web_search(cyc));
        await attempt("convFn", () => tools.web_search(() => 1));
        await attempt("date", () => tools.callValue("x", { at: new Date(0) }));
        await attempt("first", () => tools.web_search({ q: 1 }));
        await attempt("again", () => tools.web_search());
        await attempt("mcpBad", () => MCP.github.createIssue(() => 1));
        return out;
        "#);
    let v = outcome.result.expect("cell completes");
    let err = |m: &str| json!(["TypeError", m]);
    assert_eq!(v["fn"], err("tools.call: input must be JSON-compatible, not a function"));
    assert_eq!(v["sym"], err("tools.callValue: input must be JSON-compatible, not a symbol"));
    assert_eq!(v["id"], err("tools.callValue: id must be a string"));
    assert_eq!(v["both"], err("tools.call: input must be JSON-compatible, not a function"));
    assert_eq!(
        v["conv"],
        err("tools.web_search: value is circular; the Code Mode bridge accepts JSON-compatible values only")
    );
    assert_eq!(v["convFn"], err("tools.web_search: input must be JSON-compatible, not a function"));
    assert_eq!(v["date"], json!({ "id": "x", "input": { "at": "1970-01-01T00:00:00.000Z" } }));
    assert_eq!(v["first"], json!({ "id": "openclaw:core:web_search", "input": { "q": 1 } }));
    assert_eq!(v["again"], json!({ "id": "openclaw:core:web_search", "input": null }));
    assert_eq!(v["mcpBad"], err("MCP.github.createIssue: input must be JSON-compatible, not a function"));
    assert_eq!(
        outcome.requests,
        vec![
            HostRequest::CallValue {
                id: "x".into(),
                input: Some(json!({ "at": "1970-01-01T00:00:00.000Z" }))
            },
            HostRequest::CallValue { id: "openclaw:core:web_search".into(), input: Some(json!({ "q": 1 })) },
            HostRequest::CallValue { id: "openclaw:core:web_search".into(), input: None },
        ]
    );
}

/// The encoder's fast paths: a cycle back to the root or to a deeper ancestor is caught, shared
/// (non-circular) references are fine, a getter that calls a tool while its object is being
/// encoded gets a consistent encoding (re-entrant), and quoted keys are reused correctly.
#[test]
fn adapter_fast_paths_keep_their_guarantees() {
    let outcome = run(r#"
        const out = {};
        const root = { a: { b: {} } }; root.a.b.back = root;
        const inner = { a: { b: {} } }; inner.a.b.back = inner.a;
        const shared = { x: 1 }; const twice = { l: shared, r: shared, arr: [shared, shared] };
        for (const [k, v] of Object.entries({ root, inner, twice })) {
          try { out[k] = (await tools.callValue("x", v)).input; } catch (e) { out[k] = e.message; }
        }
        const reentrant = { get g() { tools.callValue("inner", { depth: 2, list: [1, { k: "v" }] }); return "got"; }, n: 1 };
        out.reentrant = (await tools.callValue("outer", { obj: reentrant, after: [true, null] })).input;
        out.keys = [];
        // JSON.parse makes `__proto__` an own data key (an object literal would set the prototype).
        const own = JSON.parse('{"__proto__": 1}');
        for (const v of [own, { "é\ud800": 2 }, { "é\ud800": 3, "\"q": 4 }, { constructor: 5 }, own]) {
          out.keys.push((await tools.callValue("x", v)).input);
        }
        return out;
        "#);
    let v = outcome.result.expect("cell completes");
    let circular =
        "tools.callValue: value is circular; the Code Mode bridge accepts JSON-compatible values only";
    assert_eq!(v["root"], circular);
    assert_eq!(v["inner"], circular);
    assert_eq!(v["twice"], json!({ "l": { "x": 1 }, "r": { "x": 1 }, "arr": [{ "x": 1 }, { "x": 1 }] }));
    assert_eq!(v["reentrant"], json!({ "obj": { "g": "got", "n": 1 }, "after": [true, null] }));
    let inner =
        outcome.requests.iter().find(|r| matches!(r, HostRequest::CallValue { id, .. } if id == "inner"));
    let Some(HostRequest::CallValue { input, .. }) = inner else { panic!("{:?}", outcome.requests) };
    assert_eq!(input, &Some(json!({ "depth": 2, "list": [1, { "k": "v" }] })));
    assert_eq!(
        v["keys"],
        json!([{ "__proto__": 1 }, { "é\u{fffd}": 2 }, { "é\u{fffd}": 3, "\"q": 4 }, { "constructor": 5 }, { "__proto__": 1 }])
    );
}

#[test]
fn host_errors_are_plain_catchable_errors() {
    let ledger = Ledger::new(BudgetLimits::default(), 65_536);
    let outcome = run_with(
        &sample_context(),
        &ledger,
        r#"
        const out = [];
        try { await tools.callValue("openclaw:core:web_search", {}); }
        catch (e) { out.push([e instanceof Error, e.constructor === Error, e.message, e.code, Object.getOwnPropertyNames(e).filter((k) => k !== "stack").sort(), String(e.stack ?? "").includes(".rs")]); }
        try { await tools.describe("ghost"); } catch (e) { out.push([e.message, e.code === undefined]); }
        return out;
        "#,
        &mut |request| match request {
            HostRequest::CallValue { .. } => Delivery::reject_sanitized(
                "upstream failed at /srv/app/secret.rs\nCaused by:\n  token=abc",
                Some("tool_error"),
            ),
            _ => Delivery::reject("unknown tool id", None),
        },
    );
    assert_eq!(
        outcome.result.unwrap(),
        json!([
            [true, true, "upstream failed at <path>", "tool_error", ["code", "message"], false],
            ["unknown tool id", true]
        ])
    );
}

#[test]
fn oversized_results_reach_the_guest_as_a_placeholder() {
    let ledger = Ledger::new(BudgetLimits::default(), 65_536);
    let limits = DeliveryLimits { max_result_bytes: 100, preview_chars: 10 };
    let outcome = run_with(&sample_context(), &ledger, r#"return await tools.callValue("x");"#, &mut |_| {
        Delivery::value(&json!({ "rows": "r".repeat(200) }), &limits)
    });
    assert_eq!(
        outcome.result.unwrap(),
        json!({ "truncated": true, "bytes": 211, "preview": "{\"rows\":\"r" })
    );
}

#[test]
fn cell_results_go_through_the_adapter() {
    assert_eq!(
        value("return { n: 10n, f() {}, x: NaN, toJSON() { return 'no'; } };"),
        json!({ "n": "10", "x": null })
    );
    assert_eq!(value("return undefined;"), Value::Null);
    assert_eq!(value("return () => 1;"), Value::Null);
    let failed = run("const a = []; a.push(a); return a;").result.unwrap_err();
    assert!(failed.contains("the cell's return value: value is circular"), "{failed}");
    // Line numbers of user code are unchanged by the wrapper.
    let failed = run("\n\nnull.x;").result.unwrap_err();
    assert!(failed.contains("TypeError"), "{failed}");
}

#[test]
fn text_and_json_output() {
    let outcome = run(r#"
        text("hello"); text(42); text(undefined); text(null); text({ a: [1, 2] }); text(new Date(0)); text(Symbol("s")); text(() => 1); text(5n);
        json({ a: 1 }); json(undefined); json(() => 1); json("s"); json(NaN);
        return null;
        "#);
    let texts: Vec<Value> = outcome.output.iter().map(|o| serde_json::to_value(o).unwrap()).collect();
    assert_eq!(
        texts,
        vec![
            json!({ "type": "text", "text": "hello" }),
            json!({ "type": "text", "text": "42" }),
            json!({ "type": "text", "text": "undefined" }),
            json!({ "type": "text", "text": "null" }),
            json!({ "type": "text", "text": "{\"a\":[1,2]}" }),
            json!({ "type": "text", "text": "1970-01-01T00:00:00.000Z" }),
            json!({ "type": "text", "text": "Symbol(s)" }),
            json!({ "type": "text", "text": "[function]" }),
            json!({ "type": "text", "text": "5" }),
            json!({ "type": "json", "value": { "a": 1 } }),
            json!({ "type": "json", "value": null }),
            json!({ "type": "json", "value": "[function]" }),
            json!({ "type": "json", "value": "s" }),
            json!({ "type": "json", "value": null }),
        ]
    );
}

#[test]
fn yield_control_round_trips() {
    let outcome =
        run(r#"const r = await yield_control("checkpoint"); await yield_control(); return r === undefined;"#);
    assert_eq!(outcome.result.unwrap(), json!(true));
    assert_eq!(
        outcome.requests,
        vec![HostRequest::Yield { reason: Some("checkpoint".into()) }, HostRequest::Yield { reason: None }]
    );
    let failed = run("await yield_control(5); return 1;").result.unwrap_err();
    assert!(failed.contains("yield_control: reason must be a string"), "{failed}");
}

#[test]
fn delivery_survives_overwritten_intrinsics() {
    let outcome = run(r#"
        Object.prototype.toJSON = function () { return "hijacked"; };
        Object.defineProperty(Object.prototype, "get", { value: () => 1, configurable: true, writable: true });
        Object.defineProperty(Array.prototype, "0", { set(v) { throw new Error("setter ran"); }, configurable: true });
        Array.prototype.push = () => { throw new Error("push ran"); };
        Promise.prototype.then = function () { throw new Error("then ran"); };
        String.prototype.slice = () => { throw new Error("slice ran"); };
        String.prototype.charCodeAt = () => { throw new Error("charCodeAt ran"); };
        String.prototype.toWellFormed = () => { throw new Error("toWellFormed ran"); };
        globalThis.JSON = { stringify() { throw new Error("stringify ran"); }, parse() { throw new Error("parse ran"); } };
        globalThis.Promise = function () { throw new Error("Promise ran"); };
        globalThis.String = null; globalThis.Map = null; globalThis.Reflect = null;
        Object.keys = null; Object.defineProperty = null; Object.create = null; Array.isArray = null;
        const v = await tools.callValue("x", { list: [1, "two"], at: new Date(0) });
        json({ ok: [1] });
        text("still works");
        const files = await API.list("mcp");
        const issues = await Issues.list({ s: 1 });
        return { v, files: files.length, issues: issues.path };
        "#);
    let v = outcome.result.unwrap();
    assert_eq!(
        v["v"],
        json!({ "id": "x", "input": { "list": [1, "two"], "at": "1970-01-01T00:00:00.000Z" } })
    );
    assert_eq!(v["files"], 3);
    assert_eq!(v["issues"], "list");
    assert_eq!(
        outcome.output,
        vec![
            CodeModeOutput::Json { value: json!({ "ok": [1] }) },
            CodeModeOutput::Text { text: "still works".into() }
        ]
    );
}

#[test]
fn boot_runs_once_and_refuses_another_protocol() {
    let ledger = Ledger::new(BudgetLimits::default(), 65_536);
    let mut vm = booted_vm(&sample_context(), &ledger);
    let again = vm.eval_script(&sample_context().boot_script().unwrap(), deadline()).unwrap();
    assert!(matches!(&again, Step::Failed(e) if e.name == "ReferenceError"), "{again:?}");

    let mut vm = sandbox().start().unwrap();
    let mut boot = sample_context().boot_json().unwrap();
    boot["protocol"] = json!(2);
    let script = format!("__codemode_boot({});", serde_json::to_string(&boot.to_string()).unwrap());
    let step = vm.eval_script(&script, deadline()).unwrap();
    let Step::Failed(e) = step else { panic!("{step:?}") };
    assert_eq!(e.message, "code mode bridge protocol mismatch: prelude speaks 1, host speaks 2");
}

#[test]
fn shared_scope_references_stay_shared_in_the_guest() {
    use codemode_core::{NamespaceRegistration, ScopeValue, namespace_tool};
    use std::sync::Arc as StdArc;
    let shared = StdArc::new(ScopeValue::object([
        ("list", namespace_tool("t1")),
        ("meta", ScopeValue::Data(json!({ "n": 1 }))),
    ]));
    let scope = ScopeValue::object([
        ("a", ScopeValue::Shared(shared.clone())),
        ("b", ScopeValue::Shared(shared)),
        ("items", ScopeValue::Array(vec![namespace_tool("t1"), ScopeValue::Data(json!("plain"))])),
    ]);
    let reg = NamespaceRegistration::new("ns-id", "Shared", "", ["t1"], move |_| scope.clone());
    let mut ctx = BootContext::new();
    ctx.namespaces.add(&reg, &(reg.create_scope)(&Default::default())).unwrap();
    let ledger = Ledger::new(BudgetLimits::default(), 65_536);
    let outcome = run_with(
        &ctx,
        &ledger,
        r#"
        const x = await Shared.b.list(1, undefined, () => 2);
        const y = await Shared.items[0]();
        return { same: Shared.a === Shared.b, sameFn: Shared.a.list === Shared.b.list, meta: Shared.b.meta, x, y, item: Shared.items[1] };
        "#,
        &mut echo_host,
    );
    let v = outcome.result.unwrap();
    assert_eq!(v["same"], true);
    assert_eq!(v["sameFn"], true);
    assert_eq!(v["meta"], json!({ "n": 1 }));
    assert_eq!(v["x"], json!({ "namespace": "ns-id", "path": "a\u{1f}list", "args": [1, null, null] }));
    assert_eq!(v["y"]["path"], "items\u{1f}0");
    assert_eq!(v["item"], "plain");
    // Every path the guest sent resolves on the host.
    for request in &outcome.requests {
        let HostRequest::Namespace { namespace, path, .. } = request else { panic!("{request:?}") };
        assert_eq!(ctx.namespaces.resolve(namespace, path).unwrap().marker.tool_name, "t1");
    }
}

/// A two-stage boot (the API baked into a base image with `Sandbox::extend`, the namespaces added
/// per run) gives the cell exactly what the one-stage boot gives, and leaves no hook behind.
#[test]
fn two_stage_boot_matches_one_stage() {
    let probe = r#"
        const names = Object.getOwnPropertyNames(globalThis).filter((n) => /^(ALL_TOOLS|tools|MCP|API|namespaces|text|json|console|yield_control|Issues|__codemode_.*)$/.test(n));
        const described = names.map((n) => { const d = Object.getOwnPropertyDescriptor(globalThis, n); return [n, typeof d.value, d.writable, d.enumerable, d.configurable]; });
        return {
          described: described.sort((a, b) => (a[0] < b[0] ? -1 : 1)),
          hooks: [typeof __codemode_boot, typeof __codemode_namespaces],
          tools: ALL_TOOLS.map((t) => t.id),
          convenience: Object.keys(tools),
          mcp: Object.keys(MCP),
          files: (await API.list("mcp")).map((f) => f.path),
          issues: [Object.keys(namespaces), Issues.repository, await Issues.list({ state: "open" })],
        };
    "#;
    let ctx = sample_context();
    let one = run(probe).result.expect("one-stage boot");

    let baked = sandbox().extend(&ctx.api_script().unwrap(), "boot.js").unwrap();
    let ledger = Ledger::new(BudgetLimits::default(), 65_536);
    let mut vm = baked.start().unwrap();
    vm.set_policy(RunLedger::policy(&ledger.0));
    let step = vm.eval_script(&ctx.namespaces_script(), deadline()).unwrap();
    assert!(matches!(step, Step::Completed { .. }), "namespaces boot failed: {step:?}");
    let step = vm.eval_cell(probe, "user.js", deadline()).unwrap();
    let two = drive(&mut vm, step, &ledger, &mut echo_host).result.expect("two-stage boot");
    assert_eq!(one, two);
    assert_eq!(two["hooks"], json!(["undefined", "undefined"]));
    assert_eq!(two["issues"][0], json!(["Issues"]));

    // Without the second stage, the API is there and the hook is still waiting (the runtime always
    // runs it before the cell); with it twice, the second call finds no hook.
    let mut vm = baked.start().unwrap();
    vm.set_policy(RunLedger::policy(&ledger.0));
    let step = vm
        .eval_cell(
            "return [typeof tools, typeof __codemode_namespaces, typeof namespaces]",
            "user.js",
            deadline(),
        )
        .unwrap();
    assert_eq!(
        drive(&mut vm, step, &ledger, &mut echo_host).result.unwrap(),
        json!(["object", "function", "undefined"])
    );
    let mut vm = baked.start().unwrap();
    vm.eval_script(&ctx.namespaces_script(), deadline()).unwrap();
    assert!(matches!(vm.eval_script(&ctx.namespaces_script(), deadline()).unwrap(), Step::Failed(_)));
}

/// The API files' contents as bulk text (`api_script_and_texts` + `Sandbox::extend_with_texts`)
/// boot exactly the API the string-literal form boots: the same globals (no `__codemode_texts`
/// left behind), files, sizes and contents, non-ASCII included.
#[test]
fn bulk_text_boot_matches_the_literal_boot() {
    let probe = r#"
        const names = Object.getOwnPropertyNames(globalThis).filter((n) => /^(ALL_TOOLS|tools|MCP|API|text|json|console|yield_control|__codemode_.*)$/.test(n));
        const files = await API.list();
        const contents = [];
        for (const f of files) contents.push(await API.read(f.path));
        return { names: names.sort(), files, contents, mcp: Object.keys(MCP), texts: typeof __codemode_texts };
    "#;
    let mut ctx = sample_context();
    let mut mcp = ctx.mcp.clone().unwrap_or_default();
    mcp.add_file("mcp/extra.d.ts", "/* é, 💡, \u{2028} and \"quotes\" */\n".repeat(50));
    mcp.add_file("mcp/empty.d.ts", "");
    ctx.mcp = Some(mcp);
    let boot_with = |sb: Sandbox| {
        let ledger = Ledger::new(BudgetLimits::default(), 65_536);
        let mut vm = sb.start().unwrap();
        vm.set_policy(RunLedger::policy(&ledger.0));
        vm.eval_script(&ctx.namespaces_script(), deadline()).unwrap();
        let step = vm.eval_cell(probe, "user.js", deadline()).unwrap();
        drive(&mut vm, step, &ledger, &mut echo_host).result.expect("boot")
    };
    let literal = boot_with(sandbox().extend(&ctx.api_script().unwrap(), "boot.js").unwrap());
    let (script, texts) = ctx.api_script_and_texts().unwrap();
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    assert_eq!(texts.len(), ctx.mcp.as_ref().unwrap().files().len());
    let bulk = boot_with(sandbox().extend_with_texts(&script, &texts, "boot.js").unwrap());
    assert_eq!(literal, bulk);
    assert_eq!(bulk["texts"], "undefined");
    let contents = bulk["contents"].as_array().unwrap();
    assert!(contents.iter().any(|c| c.as_str().unwrap().contains("💡")), "{contents:?}");
    assert!(contents.iter().any(|c| c == ""), "{contents:?}");
}

fn aliased_context() -> BootContext {
    let mut ctx = BootContext::new();
    let mut mcp = McpGuestTable::default();
    let mut git = McpGuestServer::new("git", "git").unwrap();
    git.add_tool("gitLog", "git_log").unwrap();
    git.add_tool("gitStatus", "git_status").unwrap();
    let mut azure = McpGuestServer::new("azureMcp", "azure-mcp").unwrap().with_resources(true);
    azure.add_tool("listGroups", "list-groups").unwrap();
    for server in [git, azure, McpGuestServer::new("empty", "empty").unwrap()] {
        mcp.add_server(server).unwrap();
    }
    ctx.mcp = Some(mcp);
    ctx
}

fn run_aliased(code: &str) -> Outcome {
    let ledger = Ledger::new(BudgetLimits::default(), 65_536);
    run_with(&aliased_context(), &ledger, code, &mut echo_host)
}

#[test]
fn mcp_exact_names_resolve_as_aliases() {
    let outcome = run_aliased(
        r#"
        const a = await MCP.git.git_log({ n: 1 });
        const b = await MCP["azure-mcp"]["list-groups"]();
        const c = await MCP["azure-mcp"].listGroups({});
        return {
          a: a.structuredContent, b: b.structuredContent, c: c.structuredContent,
          same: [MCP.git.git_log === MCP.git.gitLog, MCP["azure-mcp"] === MCP.azureMcp],
          has: ["git_log" in MCP.git, "azure-mcp" in MCP, "nope" in MCP.git],
          keys: [Object.keys(MCP), Object.keys(MCP.git)],
          quiet: [typeof MCP.git.then, typeof MCP.git.resources, typeof MCP.then, typeof MCP.git.toJSON,
                  typeof MCP.git[Symbol.iterator], typeof MCP.git.toString],
          frozen: [Object.isFrozen(MCP), Object.isFrozen(MCP.git)],
          awaited: (await MCP.git) === MCP.git,
        };
        "#,
    );
    let v = outcome.result.unwrap();
    assert_eq!(
        v["a"],
        json!({ "server": "git", "tool": "gitLog", "input": { "n": 1 } }),
        "requests carry the identifier"
    );
    assert_eq!(v["b"], json!({ "server": "azureMcp", "tool": "listGroups", "input": {} }));
    assert_eq!(v["c"], v["b"]);
    assert_eq!(v["same"], json!([true, true]));
    assert_eq!(v["has"], json!([true, true, false]));
    assert_eq!(
        v["keys"],
        json!([["git", "azureMcp", "empty"], ["gitLog", "gitStatus", "$api"]]),
        "aliases are not keys"
    );
    assert_eq!(
        v["quiet"],
        json!(["undefined", "undefined", "undefined", "undefined", "undefined", "function"])
    );
    assert_eq!(v["frozen"], json!([true, true]));
    assert_eq!(v["awaited"], json!(true));
}

#[test]
fn missing_mcp_members_and_servers_say_what_exists() {
    let outcome = run_aliased(
        r#"
        const errors = [];
        const probes = [
          () => MCP.git.gitlog, () => MCP.git.log_git, () => MCP.git.git_logs, () => MCP.git.status,
          () => MCP.git.deleteEverything, () => MCP.empty.anything, () => MCP.gti, () => MCP.azure,
          () => MCP.slack, () => MCP.git.x.y,
        ];
        for (const probe of probes) {
          try { probe(); errors.push("no error"); } catch (e) { errors.push([e instanceof TypeError, e.message]); }
        }
        return errors;
        "#,
    );
    assert!(outcome.requests.is_empty(), "{:?}", outcome.requests);
    let v = outcome.result.unwrap();
    let messages: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            assert_eq!(e[0], json!(true), "{e}");
            e[1].as_str().unwrap()
        })
        .collect();
    assert_eq!(
        messages,
        [
            "MCP.git has no gitlog; did you mean gitLog?",
            "MCP.git has no log_git; its tools: gitLog, gitStatus. MCP.git.$api() lists them",
            "MCP.git has no git_logs; did you mean gitLog?",
            "MCP.git has no status; did you mean gitStatus?",
            "MCP.git has no deleteEverything; its tools: gitLog, gitStatus. MCP.git.$api() lists them",
            "MCP.empty has no anything; the server has no tools",
            "MCP has no server gti; did you mean git? Servers: git, azureMcp, empty",
            "MCP has no server azure; did you mean azureMcp? Servers: git, azureMcp, empty",
            "MCP has no server slack; servers: git, azureMcp, empty",
            "MCP.git has no x; its tools: gitLog, gitStatus. MCP.git.$api() lists them",
        ]
    );
}

#[test]
fn missing_member_errors_are_bounded_on_large_servers_and_long_keys() {
    let tools: Vec<String> = (0..300).map(|i| format!("tool{i}")).collect();
    let mut ctx = BootContext::new();
    let tools: Vec<&str> = tools.iter().map(String::as_str).collect();
    ctx.mcp = Some(crate::boot::mcp_table(&[("big", "big", &tools, false)]));
    let ledger = Ledger::new(BudgetLimits::default(), 65_536);
    let outcome = run_with(
        &ctx,
        &ledger,
        r#"
        const out = [];
        for (const key of ["zzz", "x".repeat(1000000), "tool299", "tool_299"]) {
          try { out.push(typeof MCP.big[key]); } catch (e) { out.push(e.message); }
        }
        return out;
        "#,
        &mut echo_host,
    );
    let v = outcome.result.unwrap();
    assert_eq!(
        v[0],
        "MCP.big has no zzz; its tools: tool0, tool1, tool2, tool3, tool4, tool5, tool6, tool7, tool8, tool9, tool10, tool11, … (288 more). MCP.big.$api() lists them"
    );
    let long = v[1].as_str().unwrap();
    assert!(long.len() < 400, "{long}");
    assert!(long.starts_with("MCP.big has no xxxxxxxx"), "{long}");
    assert_eq!(v[2], "function");
    assert_eq!(v[3], "MCP.big has no tool_299; did you mean tool299?");
}

/// Plain data takes the sandbox's native encoder; its text is exactly what the prelude's walk
/// (and, for well-formed strings, `JSON.stringify`) produces: escapes, number forms, dropped and
/// nulled members, key order, null prototypes. Values the native encoder gives up on (over 64 KiB
/// of text, a getter or proxy inside, holes, a prototype of another class) take the walk and
/// encode the same way; getters and proxy traps run exactly once, from the walk.
#[test]
fn native_plain_encoding_matches_the_walk() {
    let ledger = Ledger::new(BudgetLimits::default(), 4 << 20);
    let outcome = run_with(
        &sample_context(),
        &ledger,
        r#"
        const big = []; for (let i = 0; i < 20000; i++) big.push({ i, s: "v" + i });
        const bare = Object.create(null); bare.z = 1; bare.a = [true, false, null];
        const plain = [
          0, -0, 1, -1, 2147483647, -2147483648, 2147483648, 1.5, -2.25e-7, 1e21, 123456789012345680000,
          0.1 + 0.2, 5e-324, Number.MAX_VALUE, 2 ** 53, -(2 ** 53) - 2, 1e15, 999999999999999.9,
          "", "plain", "q\"b\\s/\n\r\t\b\f\u0000\u001f\u007f", "é€𝄞", "ÿ", "\u2028\u2029",
          [], {}, [1, [2, [3, []]]], { b: 1, a: 2, 10: "ten", 2: "two", "x y": [null] },
          { u: undefined, f() {}, s: Symbol("s"), kept: 1 }, [undefined, function () {}, Symbol("t")],
          bare, big,
        ];
        const lines = [];
        // Wrapped in an array: text() prints a top-level string without quotes.
        for (const v of plain) { text([v]); lines.push(JSON.stringify([v])); }
        // Lone surrogates become U+FFFD (JSON.stringify would escape them).
        text(["a\ud800b\udc00c\ud83d"]); text(["\udfff", { "k\ud800": "\ud800\ud800" }]);
        // Given up natively, encoded by the walk.
        let reads = 0;
        const getter = { a: 1, get g() { reads++; return [2]; } };
        const holes = [1, , 3];
        const dated = { d: new Date(0), n: new Number(4) };
        const proxied = { p: new Proxy({ x: 1 }, { get(t, k) { reads++; return t[k]; } }) };
        class K { constructor() { this.k = 1; } }
        for (const v of [getter, holes, dated, proxied, [new K()], 12n]) text(v);
        return { lines, reads };
        "#,
        &mut echo_host,
    );
    let v = outcome.result.expect("cell completes");
    let texts: Vec<String> = outcome
        .output
        .iter()
        .map(|o| match o {
            CodeModeOutput::Text { text } => text.clone(),
            other => panic!("{other:?}"),
        })
        .collect();
    let lines: Vec<String> =
        v["lines"].as_array().unwrap().iter().map(|l| l.as_str().unwrap().to_owned()).collect();
    for (text, line) in texts.iter().zip(&lines) {
        assert!(text == line, "plain data encodes exactly as JSON.stringify: {:.200} vs {:.200}", text, line);
    }
    assert!(lines.last().unwrap().len() > 64 * 1024, "the large value is past the native bound");
    let rest = &texts[lines.len()..];
    assert_eq!(rest[0], "[\"a\u{fffd}b\u{fffd}c\u{fffd}\"]");
    assert_eq!(rest[1], "[\"\u{fffd}\",{\"k\u{fffd}\":\"\u{fffd}\u{fffd}\"}]");
    assert_eq!(
        rest[2..],
        [
            r#"{"a":1,"g":[2]}"#,
            "[1,null,3]",
            r#"{"d":"1970-01-01T00:00:00.000Z","n":4}"#,
            r#"{"p":{"x":1}}"#,
            r#"[{"k":1}]"#,
            "12",
        ]
    );
    assert_eq!(v["reads"], 2, "the getter and the proxy trap ran once each");
}

/// The request prefixes `tools.call` / `tools.callValue` keep per id are bounded (4,096): ids past
/// the bound, odd ids (`__proto__`, quotes, lone surrogates, long ones) and repeats all build the
/// right request, with plain input (one native step) and with input only the walk encodes.
#[test]
fn tool_call_request_prefixes_are_right_past_their_bound() {
    let v = value(
        r#"
        let wrong = 0;
        for (let i = 0; i < 4200; i++) {
          const id = "t" + i;
          const r = await tools.callValue(id, { i });
          if (r.id !== id || r.input.i !== i) wrong++;
        }
        const odd = ["__proto__", "constructor", 'q"u\\o', "é\ud800", "x".repeat(300), "t5", "t4199"];
        const got = [];
        for (const id of odd) {
          got.push((await tools.callValue(id, { n: 1 })).id === id.toWellFormed());
          got.push((await tools.callValue(id, { d: new Date(0) })).input.d);
          got.push((await tools.call(id, { n: 2 })).result.details.n);
        }
        return [wrong, got];
        "#,
    );
    let mut expected = Vec::new();
    for _ in 0..7 {
        expected.extend([json!(true), json!("1970-01-01T00:00:00.000Z"), json!(2)]);
    }
    assert_eq!(v, json!([0, expected]));
}
