//! [`Engine`]: a Code Mode runtime over a fixture catalog (and optional upstream hosts), the backend
//! of `codemode exec`, `codemode session` and `codemode demo`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use codemode::{
    AbortSignal, CodeMode, CodeModeConfig, CodeModeEvent, EventSink, McpServer, ModelSurface,
    NamespaceRegistry, RunOptions, RunScope, ToolDefinition, ToolHost, ToolSpec,
};
use serde_json::{Value, json};

use crate::error::CliError;
use crate::fixture::FixtureCatalog;
use crate::host::{FixtureHost, ManualCalls};
use crate::session::{RequestError, SessionBackend};

/// Reads a Code Mode configuration file: the `tools.codeMode` shape (`true`, `false` or an object),
/// or a whole config holding it at `tools.codeMode` or `codeMode`. No file: Code Mode enabled with
/// defaults.
pub fn load_config(path: Option<&Path>) -> Result<CodeModeConfig, CliError> {
    let Some(path) = path else { return Ok(CodeModeConfig::enabled()) };
    let (value, file) = read_json_file(path)?;
    config_from_value(&value, &file)
}

/// Reads a JSON config file; errors name the file (and `$` for text that is not JSON). Returns the
/// document and the file name used in later error messages.
pub(crate) fn read_json_file(path: &Path) -> Result<(Value, String), CliError> {
    let file = path.display().to_string();
    let text =
        std::fs::read_to_string(path).map_err(|source| CliError::Read { path: file.clone(), source })?;
    let value: Value = serde_json::from_str(&text).map_err(|e| CliError::Config {
        file: file.clone(),
        path: "$".into(),
        message: format!("not valid JSON: {e}"),
    })?;
    Ok((value, file))
}

/// Picks the Code Mode config out of a document (see [`load_config`]).
pub fn config_from_value(value: &Value, file: &str) -> Result<CodeModeConfig, CliError> {
    let (shape, prefix) = if let Some(inner) = value.pointer("/tools/codeMode") {
        (inner, "$.tools.codeMode")
    } else if let Some(inner) = value.get("codeMode") {
        (inner, "$.codeMode")
    } else {
        (value, "$")
    };
    CodeModeConfig::from_json(shape).map_err(|e| {
        // Core reports paths relative to the spec's `tools.codeMode`; re-anchor them in this file.
        let inner = e.path.strip_prefix("tools.codeMode").unwrap_or(&e.path);
        CliError::Config { file: file.to_owned(), path: join_path(prefix, inner), message: e.message }
    })
}

fn join_path(prefix: &str, inner: &str) -> String {
    let inner = inner.trim_start_matches('$');
    if inner.is_empty() {
        prefix.to_owned()
    } else if inner.starts_with('.') || inner.starts_with('[') {
        format!("{prefix}{inner}")
    } else {
        format!("{prefix}.{inner}")
    }
}

/// Everything an [`Engine`] is built from.
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct EngineOptions {
    /// The Code Mode config. Default: [`CodeModeConfig::default`] (disabled); callers normally pass
    /// [`CodeModeConfig::enabled`] or a loaded file.
    pub config: CodeModeConfig,
    /// The fixture catalog. Default: empty.
    pub catalog: FixtureCatalog,
    /// Extra tools served by `fallback` (upstream MCP tools). Default: none.
    pub extra_tools: Vec<ToolSpec>,
    /// Extra MCP server metadata (upstream servers). Default: none.
    pub extra_mcp_servers: Vec<McpServer>,
    /// Host for calls the fixture does not know (upstream MCP servers). Default: none.
    pub fallback: Option<Arc<dyn ToolHost>>,
    /// Receives nested-call events in addition to the engine's own bookkeeping. Default: none.
    pub events: Option<Arc<dyn EventSink>>,
    /// Directory for the compiled guest module ([`default_module_cache`] in the binary). Default:
    /// none (compile once per process).
    pub module_cache: Option<PathBuf>,
    /// Where suspended runs are kept, and the key that seals them (`serve --run-store` and
    /// `--state-key-env`). Default: none (the runtime's own in-process map).
    pub run_store: Option<RunStoreChoice>,
}

/// A shared run store and the key that seals its records.
#[derive(Clone, Debug)]
pub struct RunStoreChoice {
    /// The store.
    pub store: Arc<dyn codemode::store::RunStore>,
    /// The state key.
    pub key: codemode::store::StateKey,
}

/// Where the `codemode` binary keeps the compiled guest module unless told otherwise:
/// `$CODEMODE_MODULE_CACHE` (`off` or empty: no cache), else `$XDG_CACHE_HOME/codemode`, else
/// `$HOME/.cache/codemode`.
pub fn default_module_cache() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("CODEMODE_MODULE_CACHE") {
        return (!dir.is_empty() && dir != "off").then(|| PathBuf::from(dir));
    }
    let base =
        std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()).map(PathBuf::from).or_else(|| {
            std::env::var_os("HOME").filter(|d| !d.is_empty()).map(|h| PathBuf::from(h).join(".cache"))
        })?;
    Some(base.join("codemode"))
}

impl std::fmt::Debug for EngineOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EngineOptions").field("tools", &self.catalog.tools.len()).finish_non_exhaustive()
    }
}

type RunListener = Arc<dyn Fn(Option<&str>, &str) + Send + Sync>;

/// Forwards events and tells the session which run an in-flight exec belongs to.
#[derive(Default)]
struct Events {
    forward: Option<Arc<dyn EventSink>>,
    on_run: Mutex<Option<RunListener>>,
}

impl EventSink for Events {
    fn emit(&self, event: CodeModeEvent) {
        if let CodeModeEvent::NestedCallStarted { parent_call_id, run_id, .. } = &event {
            let listener = self.on_run.lock().unwrap_or_else(|p| p.into_inner()).clone();
            if let Some(listener) = listener {
                listener(parent_call_id.as_deref(), run_id);
            }
        }
        if let Some(forward) = &self.forward {
            forward.emit(event);
        }
    }
}

/// A Code Mode runtime over a fixture catalog.
#[derive(Clone)]
pub struct Engine {
    code_mode: CodeMode,
    host: Arc<FixtureHost>,
    events: Arc<Events>,
    in_flight: Arc<Mutex<HashMap<String, (AbortSignal, u64)>>>,
    next_token: Arc<std::sync::atomic::AtomicU64>,
    tools: Vec<ToolSpec>,
    host_source: String,
    /// The catalog generation this engine is (`codemode serve` numbers its rebuilds from 1; 0
    /// elsewhere).
    generation: u64,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine").field("code_mode", &self.code_mode).finish_non_exhaustive()
    }
}

impl Engine {
    /// Builds the runtime.
    pub fn build(options: EngineOptions) -> Result<Engine, CliError> {
        let host = Arc::new(FixtureHost::new(&options.catalog, options.fallback.clone()));
        let events = Arc::new(Events { forward: options.events.clone(), on_run: Mutex::new(None) });
        let registry = NamespaceRegistry::new();
        for namespace in &options.catalog.namespaces {
            registry
                .register_for_plugin(&namespace.plugin, namespace.registration.clone())
                .map_err(|e| CliError::Runtime(format!("namespace {:?}: {e}", namespace.registration.id)))?;
        }
        let mut tools = options.catalog.effective_tools();
        tools.extend(options.extra_tools.iter().cloned());
        let mut servers = options.catalog.inline_mcp_servers();
        servers.extend(options.extra_mcp_servers.iter().cloned());
        let mut builder = CodeMode::builder(options.config.clone());
        if let Some(name) = &options.catalog.host_source {
            builder = builder.host_source(name.clone());
        }
        let builder = builder
            .tools(tools.clone())
            .host(host.clone())
            .events(events.clone())
            .namespaces(registry)
            .mcp_servers(servers)
            .module_cache(options.module_cache.clone());
        let builder = match &options.run_store {
            Some(choice) => builder.run_store(choice.store.clone(), choice.key.clone()),
            None => builder,
        };
        let code_mode = builder.build().map_err(|e| CliError::Runtime(e.to_string()))?;
        let host_source = options.catalog.host_source_name().to_owned();
        Ok(Engine {
            code_mode,
            host,
            events,
            in_flight: Arc::default(),
            next_token: Arc::default(),
            tools,
            host_source,
            generation: 0,
        })
    }

    /// The same engine as catalog generation `generation` (see [`Engine::generation`]).
    pub fn with_generation(mut self, generation: u64) -> Engine {
        self.generation = generation;
        self
    }

    /// The catalog generation this engine is: `codemode serve` numbers its catalog builds from 1
    /// and keys its suspended runs by it; 0 for an engine built outside the gateway.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The catalog id Code Mode gives `spec` (with the catalog's host source).
    pub fn catalog_id(&self, spec: &ToolSpec) -> String {
        spec.catalog_id_in(&self.host_source)
    }

    /// The runtime.
    pub fn code_mode(&self) -> &CodeMode {
        &self.code_mode
    }

    /// The effective tools handed to Code Mode.
    pub fn tools(&self) -> &[ToolSpec] {
        &self.tools
    }

    /// The fixture host.
    pub fn fixture_host(&self) -> Arc<FixtureHost> {
        self.host.clone()
    }

    /// The fixture host's manual calls.
    pub fn manual(&self) -> Arc<ManualCalls> {
        self.host.manual_calls()
    }

    /// The model surface as JSON: `{"codeMode": bool, "tools": [{name, description, inputSchema}]}`.
    pub fn surface_json(&self) -> Value {
        let surface = self.code_mode.model_surface(&RunOptions::default());
        let code_mode = matches!(surface, ModelSurface::CodeMode(_));
        json!({ "codeMode": code_mode, "tools": surface.tools().iter().map(definition_json).collect::<Vec<_>>() })
    }

    /// Runs one cell with raw `exec` arguments; `abort` cancels it.
    pub async fn exec(&self, scope: &RunScope, arguments: &Value, abort: AbortSignal) -> Value {
        let result = match codemode::ExecInput::from_json(arguments) {
            Ok(input) => self.code_mode.exec_with(scope, input, abort).await,
            Err(_) => self.code_mode.exec_json(scope, arguments).await,
        };
        result.to_json()
    }

    /// Continues a run with raw `wait` arguments.
    pub async fn wait(&self, scope: &RunScope, arguments: &Value, abort: AbortSignal) -> Value {
        let result = match codemode::WaitInput::from_json(arguments) {
            Ok(input) => self.code_mode.wait_with(scope, input, abort).await,
            Err(_) => self.code_mode.wait_json(scope, arguments).await,
        };
        result.to_json()
    }
}

/// Fills `input` into `pendingToolCalls` entries of pending `manual` calls when the runtime left it
/// out, so a session client has callId, tool id and input in one place.
fn with_manual_inputs(mut result: Value, manual: &ManualCalls) -> Value {
    if let Some(Value::Array(pending)) = result.get_mut("pendingToolCalls") {
        for entry in pending {
            let missing = entry.get("input").is_none_or(Value::is_null);
            if let (true, Some(call_id)) = (missing, entry.get("callId").and_then(Value::as_str))
                && let Some(input) = manual.input_of(call_id)
            {
                entry["input"] = input;
            }
        }
    }
    result
}

/// `{name, description, inputSchema}` of a model-visible tool.
pub fn definition_json(definition: &ToolDefinition) -> Value {
    json!({
        "name": definition.name,
        "description": definition.description,
        "inputSchema": definition.input_schema,
    })
}

impl Engine {
    /// Registers an in-flight request under `key` unless that key is taken (the request that
    /// registered first keeps it); returns this registration's token.
    fn register(&self, key: String, abort: &AbortSignal) -> u64 {
        let token = self.next_token.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        self.in_flight.lock().unwrap_or_else(|p| p.into_inner()).entry(key).or_insert((abort.clone(), token));
        token
    }

    /// Removes the entries of one registration (its key and the run ids it announced).
    fn deregister(&self, token: u64) {
        self.in_flight.lock().unwrap_or_else(|p| p.into_inner()).retain(|_, (_, owner)| *owner != token);
    }
}

/// The session's key for an in-flight exec/wait, used as the exec's call id when the client gave none.
fn request_call_id(scope: &RunScope) -> Option<String> {
    scope.call_id.clone()
}

#[async_trait]
impl SessionBackend for Engine {
    async fn surface(&self) -> Result<Value, RequestError> {
        Ok(self.surface_json())
    }

    async fn exec(&self, scope: RunScope, input: Value, abort: AbortSignal) -> Result<Value, RequestError> {
        let registration = request_call_id(&scope).map(|k| self.register(format!("call:{k}"), &abort));
        let result = Engine::exec(self, &scope, &input, abort).await;
        if let Some(token) = registration {
            self.deregister(token);
        }
        Ok(with_manual_inputs(result, &self.host.manual_calls()))
    }

    async fn wait(&self, scope: RunScope, input: Value, abort: AbortSignal) -> Result<Value, RequestError> {
        // A wait on a run that an exec (or another wait) is still driving does not take over its
        // entry: `cancel {runId}` keeps reaching the request that drives the run.
        let run_id = input.get("runId").and_then(Value::as_str).map(str::to_owned);
        let registration = run_id.map(|r| self.register(format!("run:{r}"), &abort));
        let result = Engine::wait(self, &scope, &input, abort).await;
        if let Some(token) = registration {
            self.deregister(token);
        }
        Ok(with_manual_inputs(result, &self.host.manual_calls()))
    }

    async fn cancel(&self, run_id: String) -> Result<Value, RequestError> {
        // A run being resumed by an in-flight `wait`, or an exec that announced this run id.
        let signal = self
            .in_flight
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&format!("run:{run_id}"))
            .map(|e| e.0.clone());
        if let Some(signal) = signal {
            signal.abort();
            return Ok(json!({ "runId": run_id, "cancelled": true, "state": "running" }));
        }
        let parked = self.code_mode.cancel(&run_id);
        Ok(
            json!({ "runId": run_id, "cancelled": parked, "state": if parked { "waiting" } else { "unknown" } }),
        )
    }

    async fn end_session(&self, session_id: String) -> Result<Value, RequestError> {
        let removed = self.code_mode.end_session(&session_id);
        Ok(json!({ "session": session_id, "removedRuns": removed }))
    }

    fn manual_calls(&self) -> Arc<ManualCalls> {
        self.host.manual_calls()
    }

    fn watch_runs(&self) {
        // Map "exec call id -> abort signal" to "run id -> abort signal" as soon as the run dispatches.
        let in_flight = self.in_flight.clone();
        let listener: RunListener = Arc::new(move |parent: Option<&str>, run_id: &str| {
            let Some(parent) = parent else { return };
            let mut map = in_flight.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(entry) = map.get(&format!("call:{parent}")).cloned() {
                // The exec drives the run: its entry wins over a wait that raced in first.
                map.insert(format!("run:{run_id}"), entry);
            }
        });
        *self.events.on_run.lock().unwrap_or_else(|p| p.into_inner()) = Some(listener);
    }
}
