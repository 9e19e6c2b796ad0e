//! `codemode._native`: the Rust half of the `codemode` Python package (PyO3, abi3 for CPython >= 3.9).
//!
//! The Python package (`python/codemode`) owns everything Pythonic: schemas from type hints and
//! docstrings, asyncio integration, provider formats. This module owns the runtime: one
//! [`codemode::CodeMode`] per Python `CodeMode` object, driven on a process-wide tokio runtime so that
//! the guest never runs on a Python thread and never holds the GIL.
//!
//! Everything crosses the boundary as JSON text (the contract's own shapes):
//!
//! - `CodeMode.start(kind, scope_json, arguments_json, on_done)` spawns one `exec` or `wait` on the
//!   runtime and returns a [`Run`] whose `abort()` aborts it; `on_done(result_json)` is called (with
//!   the GIL, from a runtime thread) exactly once with the spec's result.
//! - Nested calls reach Python through the `dispatcher(kind, target, input_json, info_json,
//!   responder)` given at construction; it returns a callable that cancels the Python side, and the
//!   work answers through the [`Responder`]. If the run is aborted, times out or is discarded, the
//!   Rust side drops the call and invokes that cancel callable; if Python drops the responder
//!   unanswered, the call fails in the guest with a plain error.
// The crate is a Python extension, not a Rust API: its docs are for maintainers and name private items.
#![allow(rustdoc::private_intra_doc_links)]
#![deny(missing_docs)]

use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use async_trait::async_trait;
use codemode::{
    AbortSignal, CodeMode, CodeModeConfig, CodeModeResult, ExecInput, McpServer, NamespaceRegistration,
    NamespaceRegistry, NestedCall, RunOptions, RunScope, ScopeValue, ToolError, ToolHost, ToolOutcome,
    ToolSpec, WaitInput, namespace_tool, namespace_tool_with,
};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use serde_json::{Map, Value, json};
use tokio::sync::oneshot;

/// The process-wide runtime every `exec`/`wait` and nested call runs on. Two worker threads: the
/// guest itself runs on the sandbox's VM threads, these only shuttle JSON and timers.
fn runtime() -> PyResult<&'static tokio::runtime::Runtime> {
    static RUNTIME: OnceLock<Result<tokio::runtime::Runtime, String>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .thread_name("codemode-runtime")
                .enable_time()
                .build()
                .map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| PyRuntimeError::new_err(format!("codemode could not start its runtime: {e}")))
}

fn parse_json(what: &str, text: &str) -> PyResult<Value> {
    serde_json::from_str(text).map_err(|e| PyValueError::new_err(format!("{what} is not valid JSON: {e}")))
}

type Answer = Result<ToolOutcome, ToolError>;

/// The answer slot of one nested call, handed to the Python dispatcher. Answering twice, or after
/// the run stopped waiting for it, is a no-op that returns `False`.
#[pyclass(frozen, module = "codemode._native")]
struct Responder {
    tx: Mutex<Option<oneshot::Sender<Answer>>>,
}

impl Responder {
    fn send(&self, answer: Answer) -> bool {
        let tx = self.tx.lock().unwrap_or_else(|p| p.into_inner()).take();
        tx.is_some_and(|tx| tx.send(answer).is_ok())
    }
}

#[pymethods]
impl Responder {
    /// Answers with a result: `details_json` is the structured value, `content_json` optional raw
    /// content blocks (MCP `content`). Returns whether the run was still waiting for it.
    #[pyo3(signature = (details_json, content_json = None))]
    fn resolve(&self, details_json: &str, content_json: Option<&str>) -> PyResult<bool> {
        let details = parse_json("the tool result", details_json)?;
        let mut outcome = ToolOutcome::details(details);
        if let Some(content) = content_json {
            outcome = outcome.with_content(parse_json("the tool content", content)?);
        }
        Ok(self.send(Ok(outcome)))
    }

    /// Answers with an error the guest receives as a plain `Error` (`message`, optional `code`).
    #[pyo3(signature = (message, code = None))]
    fn reject(&self, message: &str, code: Option<&str>) -> bool {
        let error = match code {
            Some(code) => ToolError::with_code(message, code),
            None => ToolError::new(message),
        };
        self.send(Err(error))
    }

    /// Whether the run still waits for this answer.
    #[getter]
    fn open(&self) -> bool {
        self.tx.lock().unwrap_or_else(|p| p.into_inner()).as_ref().is_some_and(|tx| !tx.is_closed())
    }
}

/// Calls the Python cancel callable of a nested call when the Rust side stops waiting for it.
struct CancelOnDrop(Option<Py<PyAny>>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(cancel) = self.0.take() {
            Python::attach(|py| {
                if let Err(e) = cancel.call0(py) {
                    e.print(py);
                }
            });
        }
    }
}

/// The [`ToolHost`] of a Python `CodeMode`: every nested call goes to its dispatcher.
struct PyHost {
    dispatcher: Py<PyAny>,
}

impl PyHost {
    async fn dispatch(&self, kind: &str, target: &str, input: &Value, info: Value) -> Answer {
        let (tx, rx) = oneshot::channel();
        let responder = Responder { tx: Mutex::new(Some(tx)) };
        let (input_json, info_json) = (input.to_string(), info.to_string());
        let started = Python::attach(|py| -> PyResult<Py<PyAny>> {
            let responder = Py::new(py, responder)?;
            self.dispatcher.call1(py, (kind, target, input_json, info_json, responder))
        });
        let mut cancel = match started {
            Ok(cancel) => CancelOnDrop(Some(cancel)),
            Err(e) => {
                Python::attach(|py| e.print(py));
                return Err(ToolError::with_code("the host could not start this tool call", "unavailable"));
            }
        };
        let answer = rx.await;
        cancel.0 = None;
        answer.unwrap_or_else(|_| {
            Err(ToolError::with_code("the tool call ended without a result", "unavailable"))
        })
    }
}

#[async_trait]
impl ToolHost for PyHost {
    async fn call(&self, call: NestedCall) -> Answer {
        let info = json!({
            "runId": call.run_id,
            "callId": call.call_id,
            "catalogId": call.catalog_id,
            "parentCallId": call.parent_call_id,
            "sessionId": call.scope.session_id,
            "agentRunId": call.scope.agent_run_id,
            "restartSafe": call.restart_safe,
        });
        self.dispatch("tool", &call.catalog_id, &call.input, info).await
    }

    async fn read_resource(&self, scope: &RunScope, server: &str, uri: &str) -> Result<Value, ToolError> {
        let info = json!({ "sessionId": scope.session_id, "agentRunId": scope.agent_run_id });
        self.dispatch("resource", server, &json!({ "uri": uri }), info).await.map(|o| o.details)
    }

    async fn get_prompt(
        &self,
        scope: &RunScope,
        server: &str,
        name: &str,
        arguments: &Value,
    ) -> Result<Value, ToolError> {
        let info = json!({ "sessionId": scope.session_id, "agentRunId": scope.agent_run_id });
        let input = json!({ "name": name, "arguments": arguments });
        self.dispatch("prompt", server, &input, info).await.map(|o| o.details)
    }
}

/// One `exec` or `wait` in flight.
#[pyclass(frozen, module = "codemode._native")]
struct Run {
    abort: AbortSignal,
}

#[pymethods]
impl Run {
    /// Aborts the call: in-flight nested calls are cancelled, the run is never parked, and the
    /// result is `failed` with code `aborted` (unless it had already finished).
    fn abort(&self) {
        self.abort.abort();
    }

    /// Whether `abort()` was called.
    #[getter]
    fn aborted(&self) -> bool {
        self.abort.is_aborted()
    }
}

fn scope_from_json(value: &Value) -> PyResult<RunScope> {
    let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
    let (Some(session), Some(agent_run)) = (text("sessionId"), text("agentRunId")) else {
        return Err(PyValueError::new_err("a run scope needs sessionId and agentRunId strings"));
    };
    let mut scope = RunScope::new(session, agent_run);
    if let Some(call_id) = text("callId") {
        scope = scope.with_call_id(call_id);
    }
    if let Some(agent) = text("agentId") {
        scope = scope.with_agent(agent);
    }
    if let Some(key) = text("sessionKey") {
        scope = scope.with_session_key(key);
    }
    if value.get("restartSafe").and_then(Value::as_bool) == Some(true) {
        scope = scope.with_restart_safe();
    }
    Ok(scope)
}

/// `{"$codemodeTool": name, "args": [field, ...]?}` is a tool marker; everything else is data.
fn scope_value(value: &Value, tools: &mut Vec<String>) -> PyResult<ScopeValue> {
    Ok(match value {
        Value::Object(map) if map.contains_key("$codemodeTool") => {
            let Some(name) = map.get("$codemodeTool").and_then(Value::as_str) else {
                return Err(PyValueError::new_err("a namespace tool marker needs a tool name"));
            };
            if !tools.iter().any(|t| t == name) {
                tools.push(name.to_owned());
            }
            match map.get("args") {
                None | Some(Value::Null) => namespace_tool(name),
                Some(Value::Array(fields)) => {
                    let fields: Vec<String> = fields
                        .iter()
                        .map(|f| f.as_str().map(str::to_owned))
                        .collect::<Option<_>>()
                        .ok_or_else(|| {
                            PyValueError::new_err("namespace tool `args` must be a list of field names")
                        })?;
                    namespace_tool_with(name, move |args: &[Value]| {
                        let mut input = Map::new();
                        for (field, arg) in fields.iter().zip(args) {
                            input.insert(field.clone(), arg.clone());
                        }
                        Value::Object(input)
                    })
                }
                Some(_) => {
                    return Err(PyValueError::new_err("namespace tool `args` must be a list of field names"));
                }
            }
        }
        Value::Object(map) => ScopeValue::Object(
            map.iter().map(|(k, v)| Ok((k.clone(), scope_value(v, tools)?))).collect::<PyResult<_>>()?,
        ),
        Value::Array(items) => {
            ScopeValue::Array(items.iter().map(|v| scope_value(v, tools)).collect::<PyResult<_>>()?)
        }
        other => ScopeValue::Data(other.clone()),
    })
}

fn namespace_registry(namespaces: &Value) -> PyResult<NamespaceRegistry> {
    let registry = NamespaceRegistry::new();
    for ns in namespaces.as_array().into_iter().flatten() {
        let text = |key: &str| ns.get(key).and_then(Value::as_str).map(str::to_owned);
        let (Some(id), Some(global_name), Some(plugin)) = (text("id"), text("globalName"), text("plugin"))
        else {
            return Err(PyValueError::new_err("a namespace needs id, global_name and plugin strings"));
        };
        let mut tools = Vec::new();
        let scope = scope_value(ns.get("scope").unwrap_or(&Value::Null), &mut tools)?;
        let mut registration = NamespaceRegistration::new(
            id,
            global_name,
            text("description").unwrap_or_default(),
            tools,
            move |_| scope.clone(),
        );
        if let Some(prompt) = text("prompt") {
            registration = registration.prompt(prompt);
        }
        registry
            .register_for_plugin(&plugin, registration)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
    }
    Ok(registry)
}

/// The native runtime of one Python `codemode.CodeMode`.
#[pyclass(frozen, name = "CodeMode", module = "codemode._native")]
struct NativeCodeMode {
    cm: CodeMode,
}

#[pymethods]
impl NativeCodeMode {
    /// Builds the runtime (compiles the guest once per process; the GIL is released meanwhile).
    #[new]
    #[pyo3(signature = (config_json, tools_json, mcp_servers_json, namespaces_json, dispatcher, module_cache = None))]
    fn new(
        py: Python<'_>,
        config_json: &str,
        tools_json: &str,
        mcp_servers_json: &str,
        namespaces_json: &str,
        dispatcher: Py<PyAny>,
        module_cache: Option<PathBuf>,
    ) -> PyResult<NativeCodeMode> {
        let config = CodeModeConfig::from_json(&parse_json("config", config_json)?)
            .map_err(|e| PyValueError::new_err(format!("invalid config: {e}")))?;
        let tools: Vec<ToolSpec> = serde_json::from_str(tools_json)
            .map_err(|e| PyValueError::new_err(format!("invalid tool list: {e}")))?;
        let servers: Vec<McpServer> = serde_json::from_str(mcp_servers_json)
            .map_err(|e| PyValueError::new_err(format!("invalid MCP server list: {e}")))?;
        let registry = namespace_registry(&parse_json("namespaces", namespaces_json)?)?;
        let host = Arc::new(PyHost { dispatcher });
        let built = py.detach(|| {
            CodeMode::builder(config)
                .tools(tools)
                .host(host)
                .mcp_servers(servers)
                .namespaces(registry)
                .module_cache(module_cache)
                .build()
        });
        let cm = built.map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(NativeCodeMode { cm })
    }

    /// Starts `exec` or `wait` (`kind`) with the model's raw arguments; `on_done(result_json)` is
    /// called once with the result.
    fn start(&self, kind: &str, scope_json: &str, arguments_json: &str, on_done: Py<PyAny>) -> PyResult<Run> {
        let wait = match kind {
            "exec" => false,
            "wait" => true,
            other => return Err(PyValueError::new_err(format!("unknown call kind {other:?}"))),
        };
        let scope = scope_from_json(&parse_json("scope", scope_json)?)?;
        let arguments = parse_json("arguments", arguments_json)?;
        let abort = AbortSignal::new();
        let (cm, signal) = (self.cm.clone(), abort.clone());
        runtime()?.spawn(async move {
            // Bad arguments take the plain path, which answers with the spec's `failed` result.
            let result: CodeModeResult = if wait {
                match WaitInput::from_json(&arguments) {
                    Ok(input) => cm.wait_with(&scope, input, signal).await,
                    Err(_) => cm.wait_json(&scope, &arguments).await,
                }
            } else {
                match ExecInput::from_json(&arguments) {
                    Ok(input) => cm.exec_with(&scope, input, signal).await,
                    Err(_) => cm.exec_json(&scope, &arguments).await,
                }
            };
            let text = result.to_json().to_string();
            Python::attach(|py| {
                if let Err(e) = on_done.call1(py, (text,)) {
                    e.print(py);
                }
            });
        });
        Ok(Run { abort })
    }

    /// The model-visible surface as JSON: `{"codeMode": bool, "tools": [{name, description,
    /// inputSchema}]}`.
    fn surface_json(&self) -> String {
        let surface = self.cm.model_surface(&RunOptions::default());
        let tools: Vec<Value> = surface
            .tools()
            .iter()
            .map(|t| json!({ "name": t.name, "description": t.description, "inputSchema": t.input_schema }))
            .collect();
        json!({ "codeMode": surface.is_code_mode(), "tools": tools }).to_string()
    }

    /// The guest's `ALL_TOOLS` entries as JSON.
    fn catalog_json(&self) -> String {
        let entries: Vec<&codemode::ToolCatalogEntry> = self.cm.catalog().guest_entries().collect();
        serde_json::to_string(&entries).unwrap_or_else(|_| "[]".to_owned())
    }

    /// The fail-closed guard over a final provider payload's tool names.
    fn check_provider_payload(&self, names: Vec<String>) -> PyResult<()> {
        self.cm.check_provider_payload(&names).map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// Why the sandbox is unavailable, if it is.
    fn runtime_unavailable_reason(&self) -> Option<String> {
        self.cm.runtime_unavailable_reason().map(str::to_owned)
    }

    /// Suspended runs in the store.
    fn run_count(&self, py: Python<'_>) -> usize {
        py.detach(|| self.cm.run_count())
    }

    /// Whether `run_id` is a live suspended run.
    fn has_run(&self, py: Python<'_>, run_id: &str) -> bool {
        py.detach(|| self.cm.has_run(run_id))
    }

    /// Cancels a parked run (its nested calls are cancelled). Returns whether one was found.
    fn cancel(&self, py: Python<'_>, run_id: &str) -> bool {
        py.detach(|| self.cm.cancel(run_id))
    }

    /// Discards every run of a session.
    fn end_session(&self, py: Python<'_>, session_id: &str) -> usize {
        py.detach(|| self.cm.end_session(session_id))
    }

    /// Discards every run.
    fn shutdown(&self, py: Python<'_>) -> usize {
        py.detach(|| self.cm.shutdown())
    }
}

/// The native half of the `codemode` package.
#[pymodule]
mod _native {
    #[pymodule_export]
    use super::{NativeCodeMode, Responder, Run};
}
