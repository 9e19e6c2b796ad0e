//! Scripted fake tools and fixtures shared by the test modules.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use codemode::{
    AbortSignal, CodeMode, CodeModeConfig, CodeModeEvent, CodeModeResult, EventSink, ExecInput, GuestThread,
    McpServer, NamespaceRegistry, NestedCall, RunScope, ToolAnnotations, ToolError, ToolHost, ToolOrigin,
    ToolOutcome, ToolSpec, WaitInput,
};
use serde_json::{Value, json};
use tokio::sync::Semaphore;

/// What a scripted tool does.
#[derive(Clone, Debug)]
pub enum Behavior {
    /// Returns this `details` value at once.
    Value(Value),
    /// Returns its input as `details`.
    Echo,
    /// Sleeps, then returns the value.
    Slow(u64, Value),
    /// Sleeps a pseudo-random 0..max ms (seeded by the call id), then echoes.
    Random(u64),
    /// Fails with this message.
    Fail(String),
    /// The host's policy denies it.
    Deny,
    /// Waits for an approval (see [`ScriptedHost::approve`]), then returns the value.
    Gated(Value),
    /// Returns `details` plus raw content blocks.
    Content(Value, Value),
    /// Panics after sleeping this many ms (0: at once, on the first poll).
    Panic(u64),
}

#[derive(Default)]
pub struct ScriptedHost {
    behaviors: Mutex<HashMap<String, Behavior>>,
    pub calls: Mutex<Vec<NestedCall>>,
    gates: Mutex<HashMap<String, Arc<Semaphore>>>,
    side_effects: Mutex<HashMap<String, bool>>,
}

impl ScriptedHost {
    pub fn new() -> Arc<ScriptedHost> {
        Arc::new(ScriptedHost::default())
    }

    pub fn set(&self, id: &str, behavior: Behavior) {
        self.behaviors.lock().unwrap().insert(id.to_owned(), behavior);
    }

    pub fn set_side_effecting(&self, id: &str, side_effecting: bool) {
        self.side_effects.lock().unwrap().insert(id.to_owned(), side_effecting);
    }

    fn gate(&self, id: &str) -> Arc<Semaphore> {
        self.gates.lock().unwrap().entry(id.to_owned()).or_insert_with(|| Arc::new(Semaphore::new(0))).clone()
    }

    /// Approves one pending (or future) call of the gated tool `id`.
    pub fn approve(&self, id: &str) {
        self.gate(id).add_permits(1);
    }

    pub fn call_ids(&self) -> Vec<String> {
        self.calls.lock().unwrap().iter().map(|c| c.catalog_id.clone()).collect()
    }

    pub fn call_count(&self) -> usize {
        self.calls.lock().unwrap().len()
    }
}

#[async_trait]
impl ToolHost for ScriptedHost {
    async fn call(&self, call: NestedCall) -> Result<ToolOutcome, ToolError> {
        self.calls.lock().unwrap().push(call.clone());
        let behavior =
            self.behaviors.lock().unwrap().get(&call.catalog_id).cloned().unwrap_or(Behavior::Echo);
        match behavior {
            Behavior::Value(v) => Ok(ToolOutcome::details(v)),
            Behavior::Echo => Ok(ToolOutcome::details(call.input)),
            Behavior::Slow(ms, v) => {
                tokio::time::sleep(Duration::from_millis(ms)).await;
                Ok(ToolOutcome::details(v))
            }
            Behavior::Random(max) => {
                let seed = call
                    .call_id
                    .bytes()
                    .fold(0xcbf29ce484222325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100000001b3));
                tokio::time::sleep(Duration::from_millis(seed % max.max(1))).await;
                Ok(ToolOutcome::details(call.input))
            }
            Behavior::Fail(message) => Err(ToolError::new(message)),
            Behavior::Deny => Err(ToolError::denied("denied by policy: messages need approval")),
            Behavior::Gated(v) => {
                let gate = self.gate(&call.catalog_id);
                let permit = gate.acquire().await.map_err(|_| ToolError::new("gate closed"))?;
                permit.forget();
                Ok(ToolOutcome::details(v))
            }
            Behavior::Content(details, content) => Ok(ToolOutcome::details(details).with_content(content)),
            Behavior::Panic(0) => panic!("the scripted host panics"),
            Behavior::Panic(ms) => {
                tokio::time::sleep(Duration::from_millis(ms)).await;
                panic!("the scripted host panics late")
            }
        }
    }

    fn is_side_effecting(&self, catalog_id: &str) -> Option<bool> {
        self.side_effects.lock().unwrap().get(catalog_id).copied()
    }

    async fn read_resource(&self, _scope: &RunScope, server: &str, uri: &str) -> Result<Value, ToolError> {
        Ok(json!({ "contents": [{ "uri": uri, "text": format!("resource of {server}") }] }))
    }
}

/// Records events.
#[derive(Default)]
pub struct Recorder {
    pub events: Mutex<Vec<CodeModeEvent>>,
}

impl EventSink for Recorder {
    fn emit(&self, event: CodeModeEvent) {
        self.events.lock().unwrap().push(event);
    }
}

pub fn read_only() -> ToolAnnotations {
    ToolAnnotations::default().with_read_only_hint(true)
}

/// The fixture catalog: core, plugin, MCP and client tools, a direct-only tool and a control tool.
pub fn fixture_tools() -> Vec<ToolSpec> {
    let shipment = json!({
        "type": "array",
        "items": {
            "type": "object",
            "properties": { "id": { "type": "string" }, "paid": { "type": "boolean" }, "tons": { "type": "number" } },
            "required": ["id", "paid", "tons"],
            "additionalProperties": false
        }
    });
    vec![
        ToolSpec::core("web_search")
            .description("Search the web for pages")
            .parameters(json!({
                "type": "object",
                "properties": { "query": { "type": "string" }, "count": { "type": "integer", "minimum": 1 } },
                "required": ["query"]
            }))
            .annotations(read_only()),
        ToolSpec::core("message").description("Send a message to a person").parameters(json!({
            "type": "object",
            "properties": { "to": { "type": "string" }, "text": { "type": "string" } },
            "required": ["to", "text"]
        })),
        ToolSpec::core("exec")
            .description("Run a shell command")
            .parameters(json!({ "type": "object", "properties": { "command": { "type": "string" } }, "required": ["command"] })),
        ToolSpec::core("slow").description("A slow lookup").annotations(read_only()),
        ToolSpec::core("flaky").description("Always fails"),
        ToolSpec::core("approve_me").description("Needs an approval"),
        ToolSpec::core("bad_output").description("Returns a value off its contract").output_schema(json!({
            "type": "object",
            "properties": { "n": { "type": "number" } },
            "required": ["n"],
            "additionalProperties": false
        })),
        ToolSpec::core("image").description("Load an image for vision").direct_only(),
        ToolSpec::core("tool_search").description("Tool Search control tool"),
        ToolSpec::new("shipping_list", ToolOrigin::BundledPlugin, "shipping")
            .description("List shipments")
            .output_schema(shipment)
            .annotations(read_only()),
        ToolSpec::new("github_list_issues", ToolOrigin::ExternalPlugin, "github")
            .description("List issues")
            .annotations(read_only()),
        ToolSpec::new("github_update_issue", ToolOrigin::ExternalPlugin, "github").description("Update an issue"),
        ToolSpec::new("create_issue", ToolOrigin::Mcp, "github").description("Create a GitHub issue.").parameters(json!({
            "type": "object",
            "properties": { "owner": { "type": "string" }, "repo": { "type": "string" }, "title": { "type": "string" } },
            "required": ["owner", "repo", "title"]
        })),
        ToolSpec::new("select_file", ToolOrigin::Client, "app").description("Pick a file in the client"),
    ]
}

pub fn config(extra: Value) -> CodeModeConfig {
    let mut object = json!({ "enabled": true, "timeoutMs": 2000 });
    if let (Some(o), Some(e)) = (object.as_object_mut(), extra.as_object()) {
        for (k, v) in e {
            o.insert(k.clone(), v.clone());
        }
    }
    CodeModeConfig::from_json(&object).unwrap()
}

pub struct Fixture {
    pub cm: CodeMode,
    pub host: Arc<ScriptedHost>,
    pub events: Arc<Recorder>,
}

pub fn fixture_with(config: CodeModeConfig, tools: Vec<ToolSpec>, registry: NamespaceRegistry) -> Fixture {
    fixture_on(config, tools, registry, GuestThread::Dedicated)
}

/// [`fixture`] whose guest steps run on `thread`.
pub fn fixture_thread(extra: Value, thread: GuestThread) -> Fixture {
    fixture_on(config(extra), fixture_tools(), NamespaceRegistry::new(), thread)
}

pub fn fixture_on(
    config: CodeModeConfig,
    tools: Vec<ToolSpec>,
    registry: NamespaceRegistry,
    thread: GuestThread,
) -> Fixture {
    let host = ScriptedHost::new();
    host.set(
        "openclaw:shipping:shipping_list",
        Behavior::Value(json!([
            { "id": "s1", "paid": false, "tons": 12 },
            { "id": "s2", "paid": true, "tons": 30 },
            { "id": "s3", "paid": false, "tons": 4 }
        ])),
    );
    host.set("openclaw:core:slow", Behavior::Slow(300, json!("slow done")));
    host.set(
        "openclaw:core:flaky",
        Behavior::Fail("upstream exploded at /home/alice/secret.txt token=abc123".into()),
    );
    host.set("openclaw:core:approve_me", Behavior::Gated(json!({ "approved": true })));
    host.set("openclaw:core:bad_output", Behavior::Value(json!({ "n": "not a number", "secret": "s3cr3t" })));
    let events = Arc::new(Recorder::default());
    let cm = CodeMode::builder(config)
        .tools(tools)
        .host(host.clone())
        .events(events.clone())
        .namespaces(registry)
        .guest_thread(thread)
        .mcp_servers(vec![{
            let mut server = McpServer::new("github", vec![]);
            server.has_resources = true;
            server
        }])
        .build()
        .unwrap();
    Fixture { cm, host, events }
}

pub fn fixture(extra: Value) -> Fixture {
    fixture_with(config(extra), fixture_tools(), NamespaceRegistry::new())
}

/// A signal that a spawned task aborts `ms` milliseconds from now.
pub fn abort_after(ms: u64) -> AbortSignal {
    let signal = AbortSignal::new();
    let trigger = signal.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(ms)).await;
        trigger.abort();
    });
    signal
}

pub fn scope() -> RunScope {
    RunScope::new("session-1", "turn-1").with_call_id("call-exec-1")
}

impl Fixture {
    pub async fn run(&self, code: &str) -> CodeModeResult {
        self.cm.exec(&scope(), ExecInput::code(code)).await
    }

    /// Waits until the run is no longer `waiting` (bounded), collecting output.
    pub async fn finish(&self, run_id: &str) -> (CodeModeResult, Vec<codemode::CodeModeOutput>) {
        let mut output = Vec::new();
        for _ in 0..20 {
            let r = self.wait(run_id).await;
            output.extend(r.output().iter().cloned());
            if !matches!(r, CodeModeResult::Waiting(_)) {
                return (r, output);
            }
        }
        panic!("run {run_id} never finished");
    }

    pub async fn wait(&self, run_id: &str) -> CodeModeResult {
        self.cm.wait(&scope().with_call_id("call-wait"), WaitInput::new(run_id.to_owned())).await
    }
}

/// The value of a completed result; panics with the result otherwise.
#[track_caller]
pub fn value(result: &CodeModeResult) -> Value {
    match result {
        CodeModeResult::Completed(c) => c.value.clone(),
        other => {
            panic!("expected completed, got {}", serde_json::to_string_pretty(&other.to_json()).unwrap())
        }
    }
}

/// The run id of a waiting result.
#[track_caller]
pub fn run_id(result: &CodeModeResult) -> String {
    match result {
        CodeModeResult::Waiting(w) => w.run_id.clone(),
        other => panic!("expected waiting, got {}", serde_json::to_string_pretty(&other.to_json()).unwrap()),
    }
}

/// The error of a failed result.
#[track_caller]
pub fn error(result: &CodeModeResult) -> String {
    match result {
        CodeModeResult::Failed(f) => f.error.clone(),
        other => panic!("expected failed, got {}", serde_json::to_string_pretty(&other.to_json()).unwrap()),
    }
}
