//! [`CodeMode`]: the builder, `exec`, `wait`, the pump that drives a run, and nested-call dispatch.

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use codemode_bridge::{
    BootContext, CellValueError, DeliveryLimits, HostRequest, PRELUDE, Reply, call_envelope, decode_request,
};
use codemode_catalog::{Catalog, CatalogOptions, NamespaceRegistry};
use codemode_core::hint::{HintOptions, input_hint, output_hint};
use codemode_core::{
    CodeModeConfig, CodeModeErrorCode, CodeModeResult, CodeModeTelemetry, CompletedResult, ExecInput,
    FailedResult, Language, NamespaceContext, NamespaceRegistration, PendingToolCall, ScopeValue, ToolSource,
    ToolSpec, WaitInput, WaitReason, WaitingResult,
};
use codemode_mcp::{HeaderOptions, McpApi, McpApiOptions, McpServer, McpTool};
use codemode_sandbox::{
    Delivery, GuestError, HostCall, PENDING_WITHOUT_HOST_WORK, Sandbox, SandboxConfig, SandboxError, Step,
};
use serde_json::{Map, Value, json};

use crate::abort::AbortSignal;
use crate::admission::{Admission, Refusal};
use crate::error::BuildError;
use crate::host::{
    CodeModeEvent, EventSink, NestedCall, NoEvents, RunScope, ToolError, ToolHost, ToolOutcome,
};
use crate::prepare::{self, NotPrepared};
use crate::run::{Counts, Landed, RunState};
use crate::schema::{self, Direction, Validators};
use crate::store::envelope::{self, StateKey};
use crate::store::local::{RunStore as LocalRuns, TOO_MANY};
use crate::store::shared::{self, Shared};
use crate::surface::{EXEC_TOOL, WAIT_TOOL};
use crate::vm::{Origin, StepAnswer, VmThread, lock};

/// Creates the sandbox of a [`CodeMode`] from the Code Mode config and the bridge prelude.
pub type SandboxFactory = Arc<dyn Fn(&CodeModeConfig, &str) -> Result<Sandbox, SandboxError> + Send + Sync>;

static TS_TRANSFORMS: AtomicU64 = AtomicU64::new(0);

/// How many TypeScript cells this process has transformed (JavaScript cells and disabled Code Mode
/// never reach the transformer).
pub fn typescript_transform_count() -> u64 {
    TS_TRANSFORMS.load(Ordering::Relaxed)
}

/// Builds a [`CodeMode`]; see [`CodeMode::builder`].
#[must_use]
pub struct CodeModeBuilder {
    config: CodeModeConfig,
    tools: Vec<ToolSpec>,
    host: Option<Arc<dyn ToolHost>>,
    events: Arc<dyn EventSink>,
    namespaces: NamespaceRegistry,
    mcp_servers: Vec<McpServer>,
    sandbox_factory: Option<SandboxFactory>,
    module_cache: Option<PathBuf>,
    host_source: Option<String>,
    admission: Option<Admission>,
    run_store: Option<(Arc<dyn crate::store::RunStore>, StateKey)>,
}

impl CodeModeBuilder {
    /// Keeps suspended runs in `store` (shared with other runtimes and processes) instead of this
    /// runtime's own in-process map, sealed with `key` (see [`crate::store`]). Default: none.
    pub fn run_store(mut self, store: Arc<dyn crate::store::RunStore>, key: StateKey) -> Self {
        self.run_store = Some((store, key));
        self
    }

    /// The budget of VMs and guest memory this runtime's `exec` and `wait` calls draw from (see
    /// [`Admission`]). Default: [`Admission::global`], shared by every runtime of the process.
    pub fn admission(mut self, admission: Admission) -> Self {
        self.admission = Some(admission);
        self
    }

    /// The effective tools of the run, after the host's policy. Default: none.
    pub fn tools(mut self, tools: impl IntoIterator<Item = ToolSpec>) -> Self {
        self.tools = tools.into_iter().collect();
        self
    }

    /// Executes nested calls. Required when Code Mode is enabled.
    pub fn host(mut self, host: Arc<dyn ToolHost>) -> Self {
        self.host = Some(host);
        self
    }

    /// Receives nested-call events. Default: [`NoEvents`].
    pub fn events(mut self, events: Arc<dyn EventSink>) -> Self {
        self.events = events;
        self
    }

    /// The namespace registry. Default: [`NamespaceRegistry::global`].
    pub fn namespaces(mut self, registry: NamespaceRegistry) -> Self {
        self.namespaces = registry;
        self
    }

    /// Metadata of the MCP servers behind the run's MCP tools: title, instructions and whether they
    /// serve resources and prompts. Their tools come from [`CodeModeBuilder::tools`] (MCP origin, owner
    /// = server name); the `tools` field of these values is ignored. Default: none.
    pub fn mcp_servers(mut self, servers: impl IntoIterator<Item = McpServer>) -> Self {
        self.mcp_servers = servers.into_iter().collect();
        self
    }

    /// Keeps the compiled guest module in `dir` (created if missing) so the next process loads it
    /// instead of compiling (about a second of CPU). Corrupt or foreign entries are recompiled; a
    /// directory that cannot be used only costs the compile. Ignored with a
    /// [`CodeModeBuilder::sandbox_factory`]. Default: none (compile once per process).
    pub fn module_cache(mut self, dir: Option<PathBuf>) -> Self {
        self.module_cache = dir;
        self
    }

    /// Names the `<source>` of core and plugin tool ids: `host` gives `host:core:message` instead
    /// of the spec's `openclaw:core:message`. MCP (`mcp:`) and client (`client:`) ids, the entries'
    /// `source` field and telemetry keys are unchanged. The name must pass
    /// [`codemode_core::is_valid_host_source`] (else [`CodeModeBuilder::build`] fails). Default:
    /// `openclaw`, for spec conformance.
    pub fn host_source(mut self, name: impl Into<String>) -> Self {
        self.host_source = Some(name.into());
        self
    }

    /// Replaces how the sandbox is created (tests, custom sandbox settings). Default: one sandbox per
    /// `memoryLimitBytes` and module cache per process, with the bridge prelude.
    pub fn sandbox_factory(mut self, factory: SandboxFactory) -> Self {
        self.sandbox_factory = Some(factory);
        self
    }

    /// Builds the catalog, the MCP API and the guest boot context, and obtains the sandbox. A sandbox
    /// that cannot be created does not fail the build: every `exec` then fails with
    /// `runtime_unavailable` (fail closed).
    pub fn build(self) -> Result<CodeMode, BuildError> {
        let config = self.config;
        if config.enabled && self.host.is_none() {
            return Err(BuildError::MissingHost);
        }
        let mut catalog_options = CatalogOptions::default();
        if let Some(name) = self.host_source {
            if !codemode_core::is_valid_host_source(&name) {
                return Err(BuildError::InvalidHostSource { name });
            }
            catalog_options.host_source = name;
        }
        let catalog = Catalog::build(self.tools.clone(), &catalog_options);
        let mcp = build_mcp(&catalog, &self.mcp_servers);
        let mut boot = BootContext::new();
        boot.all_tools = catalog.guest_entries().cloned().collect();
        boot.convenience = catalog.convenience_names().to_vec();
        boot.mcp = mcp.as_ref().map(mcp_boot_json).unwrap_or(Value::Null);
        boot.max_result_chars = Some(config.max_output_bytes);
        let api_script = boot.api_script().map_err(|e| BuildError::BootContext(e.to_string()))?;
        let sandbox = if config.enabled {
            match &self.sandbox_factory {
                Some(factory) => factory(&config, PRELUDE),
                None => shared_sandbox(&config, self.module_cache.as_deref()),
            }
            // The guest API of this catalog is built once, into this runtime's base image: a run
            // only adds its namespaces. (Booting it per run cost ~7 ms with 677 MCP tools.)
            .and_then(|sandbox| sandbox.extend(&api_script, "codemode-boot.js"))
            .map_err(|e| e.to_string())
        } else {
            Err("code mode is disabled".to_owned())
        };
        if let Err(reason) = &sandbox
            && config.enabled
        {
            tracing::error!(%reason, "code mode sandbox unavailable; every exec will fail closed");
        }
        let mut visible_tools = vec![EXEC_TOOL.to_owned(), WAIT_TOOL.to_owned()];
        visible_tools.extend(catalog.direct_only_tools().iter().map(|t| t.name.clone()));
        let salt = RandomState::new().hash_one(std::process::id());
        let shared = match (self.run_store, &sandbox) {
            (Some((store, key)), Ok(sandbox)) => {
                let (module_hash, base_id) = sandbox.identity();
                let module = envelope::identity(&[b"guest-module", &module_hash.to_le_bytes()]);
                let tools = serde_json::to_vec(&self.tools).unwrap_or_default();
                let servers = serde_json::to_vec(&self.mcp_servers).unwrap_or_default();
                let config_text = format!("{config:?}");
                let catalog = envelope::identity(&[
                    b"catalog",
                    &base_id.to_le_bytes(),
                    &tools,
                    &servers,
                    config_text.as_bytes(),
                ]);
                Some(Arc::new(Shared::new(store, key, module, catalog)))
            }
            _ => None,
        };
        Ok(CodeMode {
            inner: Arc::new(Inner {
                config,
                tools: self.tools,
                catalog,
                host: self.host,
                events: self.events,
                namespaces: self.namespaces,
                mcp,
                sandbox,
                validators: Validators::default(),
                store: LocalRuns::default(),
                shared,
                visible_tools,
                next_run: AtomicU64::new(1),
                salt,
                admission: self.admission.unwrap_or_else(|| Admission::global().clone()),
            }),
        })
    }
}

/// Starts a nested call's work: polled once right here, so a host that answers at once (a fixture,
/// a cache, an in-process tool) costs no task switch; spawned, with its abort handle kept in the
/// run, only if it has to wait.
fn start_task(
    run: &mut RunState,
    runtime: &tokio::runtime::Handle,
    vm_id: u32,
    work: impl std::future::Future<Output = ()> + Send + 'static,
) {
    let mut work = Box::pin(work);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    if work.as_mut().poll(&mut cx).is_pending() {
        let task = runtime.spawn(work);
        run.tasks.insert(vm_id, task.abort_handle());
    }
}

fn shared_sandbox(config: &CodeModeConfig, module_cache: Option<&Path>) -> Result<Sandbox, SandboxError> {
    type Key = (u64, Option<PathBuf>);
    static SANDBOXES: OnceLock<Mutex<HashMap<Key, Sandbox>>> = OnceLock::new();
    let cache = SANDBOXES.get_or_init(Default::default);
    let mut cache = cache.lock().unwrap_or_else(|p| p.into_inner());
    let key = (config.memory_limit_bytes, module_cache.map(Path::to_path_buf));
    if let Some(sandbox) = cache.get(&key) {
        return Ok(sandbox.clone());
    }
    let mut sandbox_config = SandboxConfig::default();
    sandbox_config.memory_limit_bytes = config.memory_limit_bytes;
    sandbox_config.cache_dir = key.1.clone();
    let sandbox = Sandbox::new(sandbox_config, PRELUDE)?;
    cache.insert(key, sandbox.clone());
    Ok(sandbox)
}

/// The MCP API of the catalog's MCP entries (grouped by server, in catalog order), plus listed
/// servers that serve resources or prompts without tools. `None` when no MCP server is visible.
fn build_mcp(catalog: &Catalog, servers: &[McpServer]) -> Option<McpApi> {
    let mut order: Vec<String> = Vec::new();
    let mut tools: HashMap<String, Vec<McpTool>> = HashMap::new();
    for entry in catalog.mcp_entries() {
        let Some(spec) = catalog.spec(&entry.id) else { continue };
        let mut tool = McpTool::new(spec.name.clone())
            .with_description(spec.description.clone())
            .with_input_schema(spec.parameters.clone());
        if let Some(label) = &spec.label {
            tool = tool.with_title(label.clone());
        }
        if let Some(output) = &spec.output_schema {
            tool = tool.with_output_schema(output.clone());
        }
        if !tools.contains_key(&spec.owner) {
            order.push(spec.owner.clone());
        }
        tools.entry(spec.owner.clone()).or_default().push(tool);
    }
    for server in servers {
        if (server.has_resources || server.has_prompts) && !order.contains(&server.name) {
            order.push(server.name.clone());
        }
    }
    if order.is_empty() {
        return None;
    }
    let list: Vec<McpServer> = order
        .iter()
        .map(|name| {
            let mut server = McpServer::new(name.clone(), tools.remove(name).unwrap_or_default());
            if let Some(meta) = servers.iter().find(|s| &s.name == name) {
                server.title = meta.title.clone();
                server.instructions = meta.instructions.clone();
                server.has_resources = meta.has_resources;
                server.has_prompts = meta.has_prompts;
            }
            server
        })
        .collect();
    Some(McpApi::build(&list, &McpApiOptions::default()))
}

/// The MCP table in the bridge's boot shape.
fn mcp_boot_json(api: &McpApi) -> Value {
    let guest = api.to_guest_json();
    let mut servers = Map::new();
    for server in guest["servers"].as_array().into_iter().flatten() {
        let ident = server["server"].as_str().unwrap_or_default().to_owned();
        let tools: Vec<Value> =
            server["tools"].as_array().into_iter().flatten().map(|t| t["tool"].clone()).collect();
        let tool_names: Vec<Value> =
            server["tools"].as_array().into_iter().flatten().map(|t| t["toolName"].clone()).collect();
        servers.insert(
            ident,
            json!({
                "tools": tools,
                "toolNames": tool_names,
                "name": server["serverName"],
                "resources": server["hasResources"],
                "prompts": server["hasPrompts"],
            }),
        );
    }
    let files: Vec<Value> =
        api.files().map(|(path, content)| json!({ "path": path, "content": content })).collect();
    json!({ "servers": servers, "files": files })
}

pub(crate) struct Inner {
    pub config: CodeModeConfig,
    pub tools: Vec<ToolSpec>,
    pub catalog: Catalog,
    pub host: Option<Arc<dyn ToolHost>>,
    pub events: Arc<dyn EventSink>,
    pub namespaces: NamespaceRegistry,
    pub mcp: Option<McpApi>,
    /// The sandbox whose base image holds this catalog's guest API (runs add their namespaces).
    pub sandbox: Result<Sandbox, String>,
    pub validators: Validators,
    pub store: LocalRuns,
    /// The shared run store, when one is configured (then `store` stays empty).
    pub shared: Option<Arc<Shared>>,
    pub visible_tools: Vec<String>,
    pub next_run: AtomicU64,
    pub salt: u64,
    pub admission: Admission,
}

/// The Code Mode runtime of one effective tool set: model surface, `exec`, `wait` and the run store.
/// Cheap to clone (clones share everything); `Send + Sync`.
#[derive(Clone)]
pub struct CodeMode {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for CodeMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CodeMode")
            .field("enabled", &self.inner.config.enabled)
            .field("catalog", &self.inner.catalog.len())
            .field("runs", &self.inner.store.len())
            .field("sandbox", &self.inner.sandbox.as_ref().ok())
            .finish_non_exhaustive()
    }
}

/// How the pump left a run.
pub(crate) enum Flow {
    Done(CodeModeResult),
    Suspend(WaitReason),
}

/// What a dispatched request became.
enum Handled {
    Ready(Reply),
    Async,
    Yield,
    Fatal(String),
}

/// The shape a tool result is delivered in.
#[derive(Clone, Copy)]
enum Shape {
    /// `tools.callValue`, convenience names, namespaces: `details`.
    Value,
    /// `tools.call`: `{ tool, result: { content, details } }`.
    Envelope,
    /// `MCP.<server>.<tool>`: the MCP result.
    Mcp,
}

impl Shape {
    fn code(self) -> u8 {
        match self {
            Shape::Value => 0,
            Shape::Envelope => 1,
            Shape::Mcp => 2,
        }
    }

    fn from_code(code: u8) -> Option<Shape> {
        match code {
            0 => Some(Shape::Value),
            1 => Some(Shape::Envelope),
            2 => Some(Shape::Mcp),
            _ => None,
        }
    }
}

/// Most description characters per `API.search` hit.
const API_SEARCH_DESCRIPTION_CHARS: usize = 300;

/// `text` cut to `max` characters (with `…` when cut).
fn bounded(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max - 1).collect();
    out.push('…');
    out
}

impl CodeMode {
    /// Starts building a runtime for `config`.
    pub fn builder(config: CodeModeConfig) -> CodeModeBuilder {
        CodeModeBuilder {
            config,
            tools: Vec::new(),
            host: None,
            events: Arc::new(NoEvents),
            namespaces: NamespaceRegistry::global().clone(),
            mcp_servers: Vec::new(),
            sandbox_factory: None,
            module_cache: None,
            host_source: None,
            admission: None,
            run_store: None,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &CodeModeConfig {
        &self.inner.config
    }

    /// The run-scoped catalog.
    pub fn catalog(&self) -> &Catalog {
        &self.inner.catalog
    }

    /// The virtual MCP API, when MCP servers are visible.
    pub fn mcp_api(&self) -> Option<&McpApi> {
        self.inner.mcp.as_ref()
    }

    /// Why the sandbox is unavailable, if it is (then every `exec` fails with `runtime_unavailable`).
    pub fn runtime_unavailable_reason(&self) -> Option<&str> {
        self.inner.sandbox.as_ref().err().map(String::as_str)
    }

    /// Suspended runs in the store (parked or being resumed). With a shared store: the runs this
    /// runtime parked and has not seen end (a run finished by another process counts until its TTL
    /// passes); [`CodeMode::stored_run_count`] asks the store.
    pub fn run_count(&self) -> usize {
        match &self.inner.shared {
            Some(shared) => shared.parked_here_count(),
            None => self.inner.store.len(),
        }
    }

    /// Whether `run_id` is a suspended run in the store (parked or being resumed, not expired).
    /// With a shared store: whether this runtime parked it and has not seen it end, or runs nested
    /// calls for it; [`CodeMode::contains_run`] asks the store.
    pub fn has_run(&self, run_id: &str) -> bool {
        match &self.inner.shared {
            Some(shared) => shared.parked_here(run_id) || shared.runs_calls_for(run_id),
            None => self.inner.store.contains(run_id),
        }
    }

    /// Cancels a suspended run: its snapshot is discarded and its nested calls are cancelled.
    /// Returns whether a parked run was found. With a shared store this process's calls for the
    /// run stop at once and the store removes it in the background (the result says whether this
    /// process ran calls for it); [`CodeMode::cancel_run`] waits for the store's answer.
    pub fn cancel(&self, run_id: &str) -> bool {
        match &self.inner.shared {
            Some(shared) => {
                let known = shared.parked_here(run_id) || shared.runs_calls_for(run_id);
                shared.abort_local(run_id);
                shared.note_gone(run_id);
                let (shared, run_id) = (shared.clone(), run_id.to_owned());
                if let Ok(rt) = tokio::runtime::Handle::try_current() {
                    rt.spawn(async move { shared.store.cancel(&run_id).await });
                }
                known
            }
            None => self.inner.store.cancel(run_id),
        }
    }

    /// Discards every run of a session (session end). Returns how many were removed. With a
    /// shared store the removal runs in the background and 0 is returned;
    /// [`CodeMode::end_session_runs`] waits for it.
    pub fn end_session(&self, session_id: &str) -> usize {
        match &self.inner.shared {
            Some(shared) => {
                let (shared, session_id) = (shared.clone(), session_id.to_owned());
                if let Ok(rt) = tokio::runtime::Handle::try_current() {
                    rt.spawn(async move { shared.store.end_session(&session_id).await });
                }
                0
            }
            None => self.inner.store.end_session(session_id),
        }
    }

    /// Discards every run (process shutdown). Returns how many were removed. With a shared store
    /// nothing is removed (the runs outlive the process): this process stops renewing its lease and
    /// cancels its nested calls, which the next `wait` (in any process) settles as interrupted.
    pub fn shutdown(&self) -> usize {
        match &self.inner.shared {
            Some(shared) => {
                shared.stop();
                0
            }
            None => self.inner.store.clear(),
        }
    }

    /// Cancels a suspended run in whichever store holds it: the snapshot is discarded and nested
    /// calls stop (in another process: at its next lease renewal). Returns whether a parked run was
    /// found; a run that a `wait` holds is not cancelled.
    pub async fn cancel_run(&self, run_id: &str) -> bool {
        match &self.inner.shared {
            Some(shared) => {
                shared.abort_local(run_id);
                shared.note_gone(run_id);
                shared.store.cancel(run_id).await.unwrap_or(false)
            }
            None => self.inner.store.cancel(run_id),
        }
    }

    /// Discards every run of a session, in whichever store holds them. Returns how many.
    pub async fn end_session_runs(&self, session_id: &str) -> usize {
        match &self.inner.shared {
            Some(shared) => shared.store.end_session(session_id).await.unwrap_or(0),
            None => self.inner.store.end_session(session_id),
        }
    }

    /// Suspended runs in the store now (for a shared store: of every process using it).
    pub async fn stored_run_count(&self) -> usize {
        match &self.inner.shared {
            Some(shared) => shared.store.count().await.unwrap_or(0),
            None => self.inner.store.len(),
        }
    }

    /// Whether the store holds `run_id` now (parked or being resumed, not expired).
    pub async fn contains_run(&self, run_id: &str) -> bool {
        match &self.inner.shared {
            Some(shared) => shared.store.contains(run_id).await.unwrap_or(false),
            None => self.inner.store.contains(run_id),
        }
    }

    /// `exec` with raw JSON arguments, as the model sent them.
    pub async fn exec_json(&self, scope: &RunScope, arguments: &Value) -> CodeModeResult {
        match ExecInput::from_json(arguments) {
            Ok(input) => self.exec(scope, input).await,
            Err(e) => self.fail(None, CodeModeErrorCode::InvalidInput, e.message),
        }
    }

    /// `wait` with raw JSON arguments.
    pub async fn wait_json(&self, scope: &RunScope, arguments: &Value) -> CodeModeResult {
        match WaitInput::from_json(arguments) {
            Ok(input) => self.wait(scope, input).await,
            Err(e) => self.fail(None, CodeModeErrorCode::InvalidInput, e.message),
        }
    }

    /// Runs a cell. Never panics and never errors: every failure is a `failed` result.
    pub async fn exec(&self, scope: &RunScope, input: ExecInput) -> CodeModeResult {
        self.exec_with(scope, input, AbortSignal::new()).await
    }

    /// Continues a suspended run.
    pub async fn wait(&self, scope: &RunScope, input: WaitInput) -> CodeModeResult {
        self.wait_with(scope, input, AbortSignal::new()).await
    }

    /// [`CodeMode::exec`] with a cancellation signal.
    pub async fn exec_with(&self, scope: &RunScope, input: ExecInput, abort: AbortSignal) -> CodeModeResult {
        let inner = &self.inner;
        if let Some(refused) = self.refuse_if_disabled() {
            return refused;
        }
        let cell = match input.validate(&inner.config) {
            Ok(cell) => cell,
            Err(e) => return self.fail(None, CodeModeErrorCode::InvalidInput, e.message),
        };
        let sandbox = match &inner.sandbox {
            Ok(sandbox) => sandbox.clone(),
            Err(reason) => {
                return self.fail(
                    None,
                    CodeModeErrorCode::RuntimeUnavailable,
                    format!("code mode runtime is unavailable: {reason}"),
                );
            }
        };
        if abort.is_aborted() {
            return self.aborted(None);
        }
        let language = match cell.language {
            Language::Typescript => {
                TS_TRANSFORMS.fetch_add(1, Ordering::Relaxed);
                codemode_ts::Language::TypeScript
            }
            _ => codemode_ts::Language::JavaScript,
        };
        // Preparation counts against the run's time budget, off the async workers.
        let deadline = Instant::now() + Duration::from_millis(inner.config.timeout_ms);
        let source = inner.shared.is_some().then(|| (cell.code.clone(), shared::is_typescript(cell.language)));
        let stripped = match prepare::prepare(cell.code, language, deadline, &abort).await {
            Ok(stripped) => stripped,
            Err(NotPrepared::Aborted) => return self.aborted(None),
            Err(NotPrepared::Timeout) => {
                let message = format!(
                    "code mode run timed out: preparing the cell (parsing{}) took longer than timeoutMs ({} ms). \
                     Send a smaller cell.",
                    if language == codemode_ts::Language::TypeScript {
                        " and TypeScript stripping"
                    } else {
                        ""
                    },
                    inner.config.timeout_ms
                );
                return self.fail(None, CodeModeErrorCode::Timeout, message);
            }
            Err(NotPrepared::Unavailable(reason)) => {
                return self.fail(
                    None,
                    CodeModeErrorCode::RuntimeUnavailable,
                    format!("code mode runtime is unavailable: {reason}"),
                );
            }
        };
        if !stripped.is_ok() {
            return self.fail(None, CodeModeErrorCode::InvalidInput, stripped.error_message());
        }
        if abort.is_aborted() {
            return self.aborted(None);
        }
        let run_id = self.new_run_id();
        let restart_safe = cell.restart_safe || scope.restart_safe;
        let file = stripped.file_name();
        let body = stripped.code.clone();
        let mut run =
            Box::new(RunState::new(run_id, scope.clone(), restart_safe, &inner.config, Arc::new(stripped)));
        run.cell = source;
        self.add_namespaces(&mut run, scope);
        let mut boot = BootContext::new();
        boot.namespaces = run.namespaces.clone();
        let script = boot.namespaces_script();
        // A VM slot and its memory from the process-wide budget, held until this call returns. Time
        // spent queued for it does not count against timeoutMs (preparation does).
        let remaining = deadline.saturating_duration_since(Instant::now());
        let _ticket = match self.admit(&abort).await {
            Ok(ticket) => ticket,
            Err(refused) => return self.refused(Some(&*run), refused),
        };
        let deadline = Instant::now() + remaining;
        let started = tokio::select! {
            biased;
            _ = abort.aborted() => return self.aborted(Some(&*run)),
            started = VmThread::start_and_boot(sandbox, run.ledger.clone(), deadline, script, body, file) => started,
        };
        let (vm, answer) = match started {
            Ok(started) => started,
            Err(e) => return self.fail(Some(&*run), CodeModeErrorCode::RuntimeUnavailable, unavailable(&e)),
        };
        let flow = self.pump(&mut run, &vm, answer, deadline, &abort).await;
        match flow {
            Flow::Done(result) => result,
            Flow::Suspend(reason) => self.suspend(run, vm, reason).await,
        }
    }

    /// [`CodeMode::wait`] with a cancellation signal.
    pub async fn wait_with(&self, scope: &RunScope, input: WaitInput, abort: AbortSignal) -> CodeModeResult {
        let inner = &self.inner;
        if let Some(refused) = self.refuse_if_disabled() {
            return refused;
        }
        // Admitted before the run is taken: a refusal leaves it parked for a later `wait`.
        let _ticket = match self.admit(&abort).await {
            Ok(ticket) => ticket,
            Err(refused) => return self.refused(None, refused),
        };
        if let Some(shared) = &inner.shared {
            return shared::wait(self, shared, scope, input, &abort).await;
        }
        let mut run = match inner.store.take_for_wait(&input.run_id, scope) {
            Ok(run) => run,
            Err(message) => return self.fail(None, CodeModeErrorCode::InvalidInput, message),
        };
        // If this future is dropped mid-resume, the run is discarded rather than left "being resumed".
        let mut guard = ResumeGuard { store: &inner.store, run_id: Some(run.run_id.clone()) };
        let result = self.resume(&mut run, &abort).await;
        let result = match result {
            Ok(Flow::Suspend(_)) => unreachable_flow(),
            Ok(Flow::Done(result)) => result,
            Err((vm, reason)) => {
                guard.run_id = None;
                self.suspend(run, vm, reason).await
            }
        };
        drop(guard);
        result
    }

    /// Restores and drives a run. `Err` carries a VM to suspend (the run goes back to the store).
    pub(crate) async fn resume(&self, run: &mut RunState, abort: &AbortSignal) -> Result<Flow, (VmThread, WaitReason)> {
        let inner = &self.inner;
        let sandbox = match &inner.sandbox {
            Ok(sandbox) => sandbox.clone(),
            Err(reason) => {
                return Ok(Flow::Done(self.fail(
                    Some(&*run),
                    CodeModeErrorCode::RuntimeUnavailable,
                    format!("code mode runtime is unavailable: {reason}"),
                )));
            }
        };
        let deadline = Instant::now() + Duration::from_millis(inner.config.timeout_ms);
        let Some(snapshot) = run.snapshot.take() else {
            return Ok(Flow::Done(self.fail(
                Some(&*run),
                CodeModeErrorCode::InternalError,
                "the run has no snapshot",
            )));
        };
        let vm = match VmThread::start(sandbox, Origin::Restore(snapshot), run.ledger.clone(), deadline).await
        {
            Ok(vm) => vm,
            Err(e) => {
                return Ok(Flow::Done(self.fail(
                    Some(&*run),
                    CodeModeErrorCode::InvalidInput,
                    format!("code mode run could not be restored: {e}"),
                )));
            }
        };
        let mut deliveries: Vec<Landed> = run.yields.drain(..).map(|id| (id, Reply::null())).collect();
        if deliveries.is_empty() && run.landed.is_empty() && !run.in_flight.is_empty() {
            match self.next_landed(run, deadline, abort).await {
                Wake::Landed => {}
                Wake::Deadline => return Err((vm, WaitReason::PendingTools)),
                Wake::Aborted => return Ok(Flow::Done(self.aborted(Some(&*run)))),
            }
        }
        deliveries.append(&mut run.landed);
        if Instant::now() >= deadline {
            run.landed = deliveries;
            return Err((vm, WaitReason::PendingTools));
        }
        let answer = tokio::select! {
            biased;
            _ = abort.aborted() => return Ok(Flow::Done(self.aborted(Some(&*run)))),
            answer = self.deliver(run, &vm, deliveries) => answer,
        };
        match self.pump(run, &vm, answer, deadline, abort).await {
            Flow::Done(result) => Ok(Flow::Done(result)),
            Flow::Suspend(reason) => Err((vm, reason)),
        }
    }

    /// Drives the guest: dispatch its calls, deliver results as they land, run jobs; until it
    /// completes, fails, yields, or reaches the deadline with calls pending.
    async fn pump(
        &self,
        run: &mut RunState,
        vm: &VmThread,
        mut answer: StepAnswer,
        deadline: Instant,
        abort: &AbortSignal,
    ) -> Flow {
        loop {
            // Past maxOutputBytes the run fails, even if the guest caught the refusal or died of it.
            if lock(&run.ledger).output.limit_exceeded() {
                let message = format!(
                    "output limit exceeded: the run's output went past maxOutputBytes ({} bytes).",
                    self.inner.config.max_output_bytes
                );
                return Flow::Done(self.fail(Some(&*run), CodeModeErrorCode::OutputLimitExceeded, message));
            }
            match answer.step {
                Err(e) => return Flow::Done(self.sandbox_failure(run, e)),
                Ok(Step::Failed(e)) => {
                    let message = guest_error_message(&e, &run.source);
                    return Flow::Done(self.fail(Some(&*run), None::<CodeModeErrorCode>, message));
                }
                Ok(Step::Completed { value_json }) => {
                    if run.value.is_none() {
                        let max = self.inner.config.max_output_bytes;
                        match codemode_bridge::decode_cell_value_within(value_json.as_deref(), max) {
                            Ok(cell) => {
                                run.value = Some(cell.value);
                                run.value_bytes = cell.bytes;
                            }
                            Err(CellValueError::TooLarge { bytes, .. }) => {
                                return Flow::Done(self.value_too_large(run, bytes));
                            }
                            Err(e) => {
                                let message = format!("the cell's value could not be decoded: {e}");
                                return Flow::Done(self.fail(
                                    Some(&*run),
                                    CodeModeErrorCode::InternalError,
                                    message,
                                ));
                            }
                        }
                    }
                }
                Ok(Step::Pending { .. }) => {}
            }
            let mut ready: Vec<Landed> = Vec::new();
            for call in answer.calls {
                let id = call.id;
                match self.dispatch(run, call) {
                    Handled::Ready(reply) => ready.push((id, reply)),
                    Handled::Async | Handled::Yield => {}
                    Handled::Fatal(message) => {
                        return Flow::Done(self.fail(
                            Some(&*run),
                            CodeModeErrorCode::RuntimeUnavailable,
                            message,
                        ));
                    }
                }
            }
            if abort.is_aborted() {
                return Flow::Done(self.aborted(Some(&*run)));
            }
            if !ready.is_empty() && Instant::now() >= deadline {
                // Out of time before the guest could take the replies: keep them for `wait`.
                run.landed.extend(ready);
                return Flow::Suspend(WaitReason::PendingTools);
            }
            if !ready.is_empty() {
                answer = tokio::select! {
                    biased;
                    _ = abort.aborted() => return Flow::Done(self.aborted(Some(&*run))),
                    answer = self.deliver(run, vm, ready) => answer,
                };
                continue;
            }
            if let Some(value) = &run.value
                && run.in_flight.is_empty()
                && run.yields.is_empty()
            {
                let value = value.clone();
                return Flow::Done(self.completed(run, value));
            }
            if !run.yields.is_empty() {
                return Flow::Suspend(WaitReason::Yield);
            }
            if run.in_flight.is_empty() {
                return Flow::Done(self.fail(
                    Some(&*run),
                    CodeModeErrorCode::InternalError,
                    "the guest is pending without host work",
                ));
            }
            if run.restart_safe {
                // Restart-safe runs are never drained automatically: every continuation is a `wait`.
                return Flow::Suspend(WaitReason::PendingTools);
            }
            match self.next_landed(run, deadline, abort).await {
                Wake::Landed => {}
                Wake::Deadline => return Flow::Suspend(WaitReason::PendingTools),
                Wake::Aborted => return Flow::Done(self.aborted(Some(&*run))),
            }
            if Instant::now() >= deadline {
                return Flow::Suspend(WaitReason::PendingTools);
            }
            let landed = std::mem::take(&mut run.landed);
            answer = tokio::select! {
                biased;
                _ = abort.aborted() => return Flow::Done(self.aborted(Some(&*run))),
                answer = self.deliver(run, vm, landed) => answer,
            };
        }
    }

    /// Waits until at least one call has landed (collecting every landed one), the deadline, or an
    /// abort.
    async fn next_landed(&self, run: &mut RunState, deadline: Instant, abort: &AbortSignal) -> Wake {
        if !run.landed.is_empty() {
            return Wake::Landed;
        }
        if let Some(shared) = &self.inner.shared
            && !run.remote.is_empty()
        {
            return shared::next_landed(self, shared, run, deadline, abort).await;
        }
        let first = tokio::select! {
            biased;
            _ = abort.aborted() => return Wake::Aborted,
            landed = run.rx.recv() => landed,
            _ = tokio::time::sleep_until(deadline.into()) => return Wake::Deadline,
        };
        run.landed.extend(first);
        while let Ok(more) = run.rx.try_recv() {
            run.landed.push(more);
        }
        if run.landed.is_empty() { Wake::Deadline } else { Wake::Landed }
    }

    /// Delivers replies, releasing their budgets and in-flight bookkeeping, then runs jobs.
    async fn deliver(&self, run: &mut RunState, vm: &VmThread, landed: Vec<Landed>) -> StepAnswer {
        let mut deliveries = Vec::with_capacity(landed.len());
        {
            let mut ledger = lock(&run.ledger);
            for (id, reply) in landed {
                ledger.budgets.on_delivered();
                run.in_flight.remove(&id);
                run.tasks.remove(&id);
                run.remote.remove(&id);
                run.shapes.remove(&id);
                deliveries.push((id, to_delivery(reply)));
            }
        }
        vm.deliver(deliveries).await
    }

    /// Takes a VM slot and `memoryLimitBytes` from the admission budget (queueing if needed).
    async fn admit(&self, abort: &AbortSignal) -> Result<crate::admission::Ticket, Refusal> {
        self.inner.admission.admit(self.inner.config.memory_limit_bytes, abort).await
    }

    fn refused(&self, run: Option<&RunState>, refusal: Refusal) -> CodeModeResult {
        match refusal {
            Refusal::Aborted => self.aborted(run),
            Refusal::Busy(message) => self.fail(run, CodeModeErrorCode::RuntimeUnavailable, message),
        }
    }

    /// Forgets a run that ends without being parked (also in a shared store).
    fn forget(&self, run: &RunState) {
        match &self.inner.shared {
            Some(shared) if run.claimed => shared.forget(&run.run_id),
            Some(_) => {}
            None => self.inner.store.remove(&run.run_id),
        }
    }

    /// Snapshots and parks a run, returning `waiting` (or `failed` when a limit refuses it).
    pub(crate) async fn suspend(&self, mut run: Box<RunState>, vm: VmThread, reason: WaitReason) -> CodeModeResult {
        let inner = &self.inner;
        let snapshot = vm.snapshot().await;
        drop(vm);
        let snapshot = match snapshot {
            Ok(snapshot) => snapshot,
            Err(e) => {
                self.forget(&run);
                return self.sandbox_failure(&mut run, e);
            }
        };
        let bytes = snapshot.stored_bytes() as u64;
        if bytes > inner.config.max_snapshot_bytes {
            self.forget(&run);
            let message = format!(
                "snapshot limit exceeded: the suspended run needs {bytes} bytes; maxSnapshotBytes is {}.",
                inner.config.max_snapshot_bytes
            );
            return self.fail(Some(&*run), CodeModeErrorCode::SnapshotLimitExceeded, message);
        }
        run.snapshot = Some(snapshot);
        let output = lock(&run.ledger).output.take_new();
        let waiting = WaitingResult {
            run_id: run.run_id.clone(),
            reason,
            pending_tool_calls: run.pending_calls(),
            output,
            replay_safe: run.restart_safe,
            telemetry: self.telemetry(&run.counts),
        };
        let ttl = Duration::from_secs(inner.config.snapshot_ttl_seconds);
        if let Some(shared) = &inner.shared
            && let Some(snapshot) = run.snapshot.take()
        {
            return shared::park(self, shared, run, snapshot, waiting, ttl).await;
        }
        match inner.store.park(run, ttl) {
            Ok(()) => CodeModeResult::Waiting(waiting),
            Err(run) => CodeModeResult::Failed(FailedResult {
                error: TOO_MANY.into(),
                code: Some(CodeModeErrorCode::InvalidInput),
                output: waiting.output,
                telemetry: self.telemetry(&run.counts),
            }),
        }
    }

    /// Decodes and serves one guest request.
    fn dispatch(&self, run: &mut RunState, call: HostCall) -> Handled {
        let inner = &self.inner;
        let limits = DeliveryLimits::default();
        let request = match decode_request(&call.payload) {
            Ok(request) => request,
            Err(e) if e.is_fatal() => return Handled::Fatal(e.to_string()),
            Err(e) => return Handled::Ready(e.reply()),
        };
        match request {
            HostRequest::Search { query, limit } => {
                run.counts.search += 1;
                let hits = inner.catalog.search_with_config(&query, limit.map(|l| l as f64), &inner.config);
                Handled::Ready(Reply::value(&serde_json::to_value(hits).unwrap_or(Value::Null), &limits))
            }
            HostRequest::ApiSearch { query, limit } => {
                run.counts.search += 1;
                let limit = inner.config.search_limit(limit.map(|l| l as f64));
                Handled::Ready(Reply::value(&self.api_search(&query, limit), &limits))
            }
            HostRequest::Describe { id } => {
                run.counts.describe += 1;
                match inner.catalog.describe(&id) {
                    Ok(described) => Handled::Ready(Reply::value(
                        &serde_json::to_value(described).unwrap_or(Value::Null),
                        &limits,
                    )),
                    Err(e) => Handled::Ready(Reply::reject(e.to_string(), Some("unknown_tool"))),
                }
            }
            HostRequest::Call { id, input } | HostRequest::CallValue { id, input }
                if inner.catalog.guest_entry(&id).is_err() =>
            {
                run.counts.call += 1;
                let message = inner.catalog.guest_entry(&id).err().map(|e| e.to_string()).unwrap_or_default();
                let _ = input;
                Handled::Ready(Reply::reject(message, Some("unknown_tool")))
            }
            HostRequest::Call { id, input } => {
                run.counts.call += 1;
                self.start_tool(run, call.id, id, input.unwrap_or_else(empty_object), Shape::Envelope)
            }
            HostRequest::CallValue { id, input } => {
                run.counts.call += 1;
                self.start_tool(run, call.id, id, input.unwrap_or_else(empty_object), Shape::Value)
            }
            HostRequest::Namespace { namespace, path, args } => {
                run.counts.call += 1;
                let resolved = match run.namespaces.resolve(&namespace, &path) {
                    Ok(resolved) => resolved,
                    Err(message) => return Handled::Ready(Reply::reject(message, Some("invalid_input"))),
                };
                let input = resolved.marker.map_input(&args);
                let tool_name = resolved.marker.tool_name.clone();
                let catalog_id =
                    run.namespace_tools.get(&namespace).and_then(|tools| tools.get(&tool_name)).cloned();
                match catalog_id {
                    Some(catalog_id) => self.start_tool(run, call.id, catalog_id, input, Shape::Value),
                    None => Handled::Ready(Reply::reject(
                        "namespace call: undeclared tool",
                        Some("invalid_input"),
                    )),
                }
            }
            HostRequest::Mcp { server, tool, input } => {
                run.counts.call += 1;
                let resolved =
                    inner.mcp.as_ref().and_then(|api| api.resolve(&server, &tool)).map(|r| r.catalog_id);
                match resolved.filter(|id| inner.catalog.get(id).is_some()) {
                    Some(catalog_id) => {
                        self.start_tool(run, call.id, catalog_id, Value::Object(input), Shape::Mcp)
                    }
                    None => Handled::Ready(Reply::reject(
                        format!(
                            "MCP.{}.{} is not available in this run; see API.list(\"mcp\")",
                            cut(&server),
                            cut(&tool)
                        ),
                        Some("unknown_tool"),
                    )),
                }
            }
            HostRequest::McpApi { server, tool, schema } => {
                let Some(api) = &inner.mcp else {
                    return Handled::Ready(Reply::reject(
                        "no MCP servers are available in this run",
                        Some("unknown_tool"),
                    ));
                };
                let options = if schema { HeaderOptions::with_schema() } else { HeaderOptions::default() };
                match api.header(&server, tool.as_deref(), &options) {
                    Ok(header) => Handled::Ready(Reply::value(&header.to_json(), &limits)),
                    Err(e) => Handled::Ready(Reply::reject(e.to_string(), Some("unknown_tool"))),
                }
            }
            HostRequest::ResourcesRead { server, input } => {
                let Some(uri) = input.get("uri").and_then(Value::as_str).map(str::to_owned) else {
                    return Handled::Ready(Reply::reject(
                        format!("MCP.{}.resources.read: `uri` must be a string", cut(&server)),
                        Some("invalid_input"),
                    ));
                };
                self.start_mcp_extra(run, call.id, server, McpExtra::Resource { uri })
            }
            HostRequest::PromptsGet { server, input } => {
                let Some(name) = input.get("name").and_then(Value::as_str).map(str::to_owned) else {
                    return Handled::Ready(Reply::reject(
                        format!("MCP.{}.prompts.get: `name` must be a string", cut(&server)),
                        Some("invalid_input"),
                    ));
                };
                let arguments = input.get("arguments").cloned().unwrap_or_else(empty_object);
                self.start_mcp_extra(run, call.id, server, McpExtra::Prompt { name, arguments })
            }
            HostRequest::Yield { .. } => {
                run.yields.push(call.id);
                Handled::Yield
            }
            _ => {
                Handled::Ready(Reply::reject("code mode bridge: unsupported request", Some("invalid_input")))
            }
        }
    }

    /// `API.search(query, { limit })`: the run's MCP tools ranked by the catalog's engine, each as
    /// `{ server, tool, call, id, description, input, output?, score, match }` with bounded hints and
    /// the guest's identifiers (what `MCP.<server>.<tool>` takes). `[]` when no MCP tool is visible.
    fn api_search(&self, query: &str, limit: usize) -> Value {
        let inner = &self.inner;
        let Some(api) = &inner.mcp else { return Value::Array(Vec::new()) };
        let input_options = HintOptions::input();
        let output_options = HintOptions::output();
        let hits = inner.catalog.search_mcp(query, limit);
        let mut out = Vec::with_capacity(hits.len());
        for hit in hits {
            let Some(spec) = inner.catalog.spec(&hit.entry.id) else { continue };
            let Some(server) = api.server_table().ident(&spec.owner) else { continue };
            let Some(tool) = api.tool_table(server).and_then(|t| t.ident(&spec.name)) else { continue };
            let mut entry = Map::new();
            entry.insert("server".into(), server.into());
            entry.insert("tool".into(), tool.into());
            entry.insert("call".into(), format!("MCP.{server}.{tool}").into());
            entry.insert("id".into(), hit.entry.id.as_str().into());
            entry.insert(
                "description".into(),
                bounded(&spec.description, API_SEARCH_DESCRIPTION_CHARS).into(),
            );
            entry.insert("input".into(), input_hint(&spec.parameters, &input_options).into());
            if let Some(output) = spec.output_schema.as_ref().and_then(|o| output_hint(o, &output_options)) {
                entry.insert("output".into(), output.into());
            }
            entry.insert("score".into(), hit.score.into());
            entry.insert("match".into(), hit.matched.into());
            out.push(Value::Object(entry));
        }
        Value::Array(out)
    }

    /// Checks and dispatches one catalog tool call (catalog, namespace or MCP) to the host.
    fn start_tool(
        &self,
        run: &mut RunState,
        vm_id: u32,
        catalog_id: String,
        input: Value,
        shape: Shape,
    ) -> Handled {
        let inner = &self.inner;
        let Some(spec) = inner.catalog.spec(&catalog_id) else {
            return Handled::Ready(Reply::reject(
                format!("unknown tool id {:?}", cut(&catalog_id)),
                Some("unknown_tool"),
            ));
        };
        let trusted = spec.origin.is_trusted();
        if run.restart_safe {
            let side_effecting = if spec.source() == ToolSource::Mcp {
                true
            } else {
                inner
                    .host
                    .as_ref()
                    .and_then(|h| h.is_side_effecting(&catalog_id))
                    .unwrap_or_else(|| !(trusted && spec.annotations.is_read_only()))
            };
            if side_effecting {
                return Handled::Ready(Reply::reject(
                    format!(
                        "{catalog_id} was refused before it ran: this run is restart-safe (restartSafe) and the tool \
                         may have side effects"
                    ),
                    Some("restart_safe"),
                ));
            }
        }
        match &*inner.validators.get(&catalog_id, Direction::Input, &spec.parameters) {
            Ok(validator) => {
                if let Err(problems) = schema::check(validator, &spec.parameters, &input) {
                    return Handled::Ready(Reply::reject(
                        format!("invalid input for {catalog_id}: {problems}"),
                        Some("invalid_input"),
                    ));
                }
            }
            Err(reason) if trusted => {
                return Handled::Ready(Reply::reject(
                    format!("{catalog_id} cannot run: its input schema is invalid ({reason})"),
                    Some("invalid_schema"),
                ));
            }
            // Untrusted (MCP/client) schemas that do not compile are left to the tool's owner.
            Err(_) => {}
        }
        if trusted
            && let Some(output_schema) = &spec.output_schema
            && let Err(reason) = &*inner.validators.get(&catalog_id, Direction::Output, output_schema)
        {
            return Handled::Ready(Reply::reject(
                format!("{catalog_id} cannot run: its declared output schema is invalid ({reason})"),
                Some("invalid_schema"),
            ));
        }
        let Some(host) = inner.host.clone() else {
            return Handled::Ready(Reply::reject("no tool host is configured", Some("unavailable")));
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return Handled::Ready(Reply::reject("no async runtime to run the tool on", Some("unavailable")));
        };
        run.next_call += 1;
        let call_id = format!("{}.{}", run.run_id, run.next_call);
        let nested = NestedCall {
            scope: run.scope.clone(),
            run_id: run.run_id.clone(),
            parent_call_id: run.parent_call_id.clone(),
            call_id: call_id.clone(),
            catalog_id: catalog_id.clone(),
            input,
            restart_safe: run.restart_safe,
        };
        run.in_flight.insert(
            vm_id,
            PendingToolCall { call_id, tool_id: catalog_id.clone(), input: Some(nested.input.clone()) },
        );
        run.shapes.insert(vm_id, shape.code());
        let this = self.clone();
        let tx = run.tx.clone();
        let semaphore = run.semaphore.clone();
        start_task(run, &runtime, vm_id, async move {
            let _permit = semaphore.acquire_owned().await;
            let events = &this.inner.events;
            events.emit(CodeModeEvent::NestedCallStarted {
                scope: nested.scope.clone(),
                run_id: nested.run_id.clone(),
                parent_call_id: nested.parent_call_id.clone(),
                call_id: nested.call_id.clone(),
                catalog_id: nested.catalog_id.clone(),
                input: nested.input.clone(),
            });
            let started = Instant::now();
            let (scope, run_id, parent_call_id, call_id) = (
                nested.scope.clone(),
                nested.run_id.clone(),
                nested.parent_call_id.clone(),
                nested.call_id.clone(),
            );
            let result = host.call(nested).await;
            let (reply, error) = this.finish_tool(&catalog_id, shape, result);
            events.emit(CodeModeEvent::NestedCallFinished {
                scope,
                run_id,
                parent_call_id,
                call_id,
                catalog_id,
                ok: error.is_none(),
                error,
                duration: started.elapsed(),
            });
            let _ = tx.send((vm_id, reply));
        });
        Handled::Async
    }

    /// Dispatches in-flight call `vm_id` of `run` again (its process stopped; the run is
    /// restart-safe, so the call is read-only). `Some` when it settled at once.
    pub(crate) fn redispatch(&self, run: &mut RunState, vm_id: u32) -> Option<Reply> {
        let Some(pending) = run.in_flight.remove(&vm_id) else { return None };
        let Some(shape) = run.shapes.get(&vm_id).copied().and_then(Shape::from_code) else {
            return Some(shared::interrupted_reply());
        };
        let input = pending.input.unwrap_or_else(empty_object);
        match self.start_tool(run, vm_id, pending.tool_id, input, shape) {
            Handled::Ready(reply) => Some(reply),
            Handled::Async => None,
            Handled::Yield | Handled::Fatal(_) => Some(shared::interrupted_reply()),
        }
    }

    /// Validates a declared output and shapes the reply.
    fn finish_tool(
        &self,
        catalog_id: &str,
        shape: Shape,
        result: Result<ToolOutcome, ToolError>,
    ) -> (Reply, Option<String>) {
        let limits = DeliveryLimits::default();
        let outcome = match result {
            Ok(outcome) => outcome,
            Err(e) => {
                let message = codemode_bridge::sanitize_error(&e.message);
                return (Reply::reject(message.clone(), e.code.as_deref()), Some(message));
            }
        };
        if let Some(spec) = self.inner.catalog.spec(catalog_id)
            && spec.origin.is_trusted()
            && let Some(output_schema) = &spec.output_schema
            && let Ok(validator) = &*self.inner.validators.get(catalog_id, Direction::Output, output_schema)
            && schema::check(validator, output_schema, &outcome.details).is_err()
        {
            let message =
                format!("tool {catalog_id} returned a value that does not match its declared output schema");
            return (Reply::reject(message.clone(), Some("output_schema_mismatch")), Some(message));
        }
        let value = match shape {
            Shape::Value => outcome.details,
            Shape::Envelope => call_envelope(
                catalog_id,
                json!({ "content": outcome.content.unwrap_or_else(|| json!([])), "details": outcome.details }),
            ),
            Shape::Mcp => match outcome.content {
                Some(content) => {
                    let mut result = json!({ "content": content });
                    if !outcome.details.is_null() {
                        result["structuredContent"] = outcome.details;
                    }
                    result
                }
                None => outcome.details,
            },
        };
        (Reply::value(&value, &limits), None)
    }

    /// `MCP.<server>.resources.read` / `prompts.get`, served by the host.
    fn start_mcp_extra(&self, run: &mut RunState, vm_id: u32, server: String, extra: McpExtra) -> Handled {
        let inner = &self.inner;
        if run.restart_safe {
            return Handled::Ready(Reply::reject(
                "MCP requests are refused in restart-safe runs (restartSafe)",
                Some("restart_safe"),
            ));
        }
        let Some(server_name) =
            inner.mcp.as_ref().and_then(|api| api.server_table().name(&server)).map(str::to_owned)
        else {
            return Handled::Ready(Reply::reject(
                format!("MCP server {:?} is not available", cut(&server)),
                Some("unknown_tool"),
            ));
        };
        let (Some(host), Ok(runtime)) = (inner.host.clone(), tokio::runtime::Handle::try_current()) else {
            return Handled::Ready(Reply::reject("no tool host is configured", Some("unavailable")));
        };
        run.next_call += 1;
        let call_id = format!("{}.{}", run.run_id, run.next_call);
        let tool_id = match &extra {
            McpExtra::Resource { .. } => format!("mcp:{server_name}:resources/read"),
            McpExtra::Prompt { .. } => format!("mcp:{server_name}:prompts/get"),
        };
        run.in_flight.insert(vm_id, PendingToolCall { call_id, tool_id, input: None });
        let scope = run.scope.clone();
        let tx = run.tx.clone();
        let semaphore = run.semaphore.clone();
        start_task(run, &runtime, vm_id, async move {
            let _permit = semaphore.acquire_owned().await;
            let result = match extra {
                McpExtra::Resource { uri } => host.read_resource(&scope, &server_name, &uri).await,
                McpExtra::Prompt { name, arguments } => {
                    host.get_prompt(&scope, &server_name, &name, &arguments).await
                }
            };
            let reply = match result {
                Ok(value) => Reply::value(&value, &DeliveryLimits::default()),
                Err(e) => Reply::reject_sanitized(&e.message, e.code.as_deref()),
            };
            let _ = tx.send((vm_id, reply));
        });
        Handled::Async
    }

    pub(crate) fn add_namespaces(&self, run: &mut RunState, scope: &RunScope) {
        let mut ctx = NamespaceContext::new(scope.session_id.clone(), scope.agent_run_id.clone());
        ctx.agent_id = scope.agent_id.clone();
        ctx.session_key = scope.session_key.clone();
        let resolution = self.inner.namespaces.resolve_for(&self.inner.catalog, &ctx);
        for ns in resolution.visible {
            let registration = NamespaceRegistration::new(
                ns.id.clone(),
                ns.global_name.clone(),
                ns.description.clone(),
                ns.tool_ids.keys().cloned(),
                |_| ScopeValue::Data(Value::Null),
            );
            match run.namespaces.add(&registration, &ns.scope) {
                Ok(()) => {
                    run.namespace_tools.insert(ns.id.clone(), ns.tool_ids.clone());
                }
                Err(e) => tracing::warn!(namespace = %ns.id, error = %e, "namespace hidden for this run"),
            }
        }
        for (id, reason) in resolution.hidden {
            tracing::debug!(namespace = %id, %reason, "namespace not visible");
        }
    }

    fn new_run_id(&self) -> String {
        let n = self.inner.next_run.fetch_add(1, Ordering::Relaxed);
        let mixed = RandomState::new().hash_one((self.inner.salt, n));
        format!("cm_{mixed:016x}{n:x}")
    }

    fn telemetry(&self, counts: &Counts) -> CodeModeTelemetry {
        let catalog = &self.inner.catalog;
        CodeModeTelemetry {
            catalog_size: catalog.len(),
            catalog_by_source: catalog.counts(),
            search_count: counts.search,
            describe_count: counts.describe,
            call_count: counts.call,
            model_visible_tools: self.inner.visible_tools.clone(),
        }
    }

    fn completed(&self, run: &mut RunState, value: Value) -> CodeModeResult {
        let used = lock(&run.ledger).output.used_bytes();
        if used.saturating_add(run.value_bytes) > self.inner.config.max_output_bytes {
            return self.value_too_large(run, run.value_bytes);
        }
        let output = lock(&run.ledger).output.take_new();
        CodeModeResult::Completed(CompletedResult { value, output, telemetry: self.telemetry(&run.counts) })
    }

    /// `output_limit_exceeded` for a returned value of `value_bytes` (at least) that does not fit in
    /// `maxOutputBytes` next to the run's output.
    fn value_too_large(&self, run: &RunState, value_bytes: u64) -> CodeModeResult {
        let used = lock(&run.ledger).output.used_bytes();
        let max = self.inner.config.max_output_bytes;
        let value = if value_bytes > max {
            format!("the returned value alone ({value_bytes} bytes or more)")
        } else {
            format!("the returned value ({value_bytes} bytes) plus the run's output ({used} bytes)")
        };
        let message = format!(
            "output limit exceeded: {value} would go past maxOutputBytes ({max} bytes). Return less: a summary, \
             a count, or a slice of the data (text() and json() output counts against the same limit)."
        );
        self.fail(Some(run), CodeModeErrorCode::OutputLimitExceeded, message)
    }

    /// A `failed` result (with the run's new output and telemetry when there is a run).
    pub(crate) fn fail(
        &self,
        run: Option<&RunState>,
        code: impl Into<Option<CodeModeErrorCode>>,
        message: impl Into<String>,
    ) -> CodeModeResult {
        let (output, counts) = match run {
            Some(run) => (lock(&run.ledger).output.take_new(), run.counts),
            None => (Vec::new(), Counts::default()),
        };
        CodeModeResult::Failed(FailedResult {
            error: message.into(),
            code: code.into(),
            output,
            telemetry: self.telemetry(&counts),
        })
    }

    /// The `failed` result for exec/wait when Code Mode is off for this runtime.
    fn refuse_if_disabled(&self) -> Option<CodeModeResult> {
        (!self.inner.config.enabled).then(|| {
            self.fail(None, CodeModeErrorCode::InvalidInput, "code mode is not enabled for this run.")
        })
    }

    fn aborted(&self, run: Option<&RunState>) -> CodeModeResult {
        self.fail(run, CodeModeErrorCode::Aborted, "code mode run was aborted.")
    }

    fn sandbox_failure(&self, run: &mut RunState, error: SandboxError) -> CodeModeResult {
        let (code, message) = match &error {
            SandboxError::Timeout => (
                CodeModeErrorCode::Timeout,
                format!(
                    "code mode run timed out: the guest ran past timeoutMs ({} ms). Keep CPU work small, or split it \
                     across cells.",
                    self.inner.config.timeout_ms
                ),
            ),
            SandboxError::MemoryExhausted => (
                CodeModeErrorCode::RuntimeUnavailable,
                "the guest VM was terminated: it exceeded memoryLimitBytes.".to_owned(),
            ),
            SandboxError::StackExhausted => (
                CodeModeErrorCode::RuntimeUnavailable,
                "the guest VM was terminated: it exhausted its call stack.".to_owned(),
            ),
            SandboxError::AllVmsInUse { .. } => (
                CodeModeErrorCode::RuntimeUnavailable,
                "code mode is busy: every sandbox slot is in use; retry in a few seconds.".to_owned(),
            ),
            _ => (CodeModeErrorCode::RuntimeUnavailable, unavailable(&error)),
        };
        self.fail(Some(&*run), code, message)
    }
}

/// Removes a run from the store when a `wait` ends without parking it again (terminal result, or the
/// `wait` future was dropped).
struct ResumeGuard<'a> {
    store: &'a LocalRuns,
    run_id: Option<String>,
}

impl Drop for ResumeGuard<'_> {
    fn drop(&mut self) {
        if let Some(run_id) = self.run_id.take() {
            self.store.remove(&run_id);
        }
    }
}

enum McpExtra {
    Resource { uri: String },
    Prompt { name: String, arguments: Value },
}

pub(crate) enum Wake {
    Landed,
    Deadline,
    Aborted,
}

fn unreachable_flow() -> CodeModeResult {
    CodeModeResult::failed(
        CodeModeErrorCode::InternalError,
        "internal error: unexpected suspension",
        CodeModeTelemetry::default(),
    )
}

fn unavailable(error: &SandboxError) -> String {
    match error {
        SandboxError::AllVmsInUse { .. } => {
            "code mode is busy: every sandbox slot is in use; retry in a few seconds.".to_owned()
        }
        _ => format!("code mode runtime is unavailable: {error}"),
    }
}

fn empty_object() -> Value {
    Value::Object(Map::new())
}

fn cut(text: &str) -> String {
    let mut out: String = text.chars().take(80).collect();
    if out.len() < text.len() {
        out.push('…');
    }
    out
}

fn to_delivery(reply: Reply) -> Delivery {
    match reply {
        Reply::Resolve(json) => Delivery::Resolve(json),
        Reply::Reject { message, code } => Delivery::Reject { message, code },
    }
}

/// Texts of the guest's embedding layer (its Rust bindings of QuickJS) that name internals: the
/// message a guest error carries when such a conversion fails, and what a model reads instead.
const ENGINE_INTERNAL_TEXTS: &[(&str, &str)] = &[
    (
        "Conversion from string failed",
        "a string with unpaired surrogates (not valid Unicode) could not cross the sandbox boundary",
    ),
    ("Error converting from js", "a value could not cross the sandbox boundary"),
    ("Error converting into js", "a value could not cross the sandbox boundary"),
    (
        "String contained internal null bytes",
        "a string with NUL characters could not cross the sandbox boundary",
    ),
    ("CStr didn't end in a null byte", "a string could not cross the sandbox boundary"),
    ("Exception generated by quickjs", "the sandbox engine failed internally"),
    ("quickjs library created a unknown error", "the sandbox engine failed internally"),
];

/// The plain replacement of an engine-internal message (see [`ENGINE_INTERNAL_TEXTS`]).
fn engine_internal_text(message: &str) -> Option<&'static str> {
    ENGINE_INTERNAL_TEXTS.iter().find(|(internal, _)| message.starts_with(internal)).map(|(_, plain)| *plain)
}

/// Characters of a thrown error's `Name: message` kept in the `failed` result.
const MAX_GUEST_ERROR_CHARS: usize = 4096;

/// `Name: message` plus the position in `user.js`/`user.ts` (mapped back to the user's source).
fn guest_error_message(error: &GuestError, source: &codemode_ts::StripReturn) -> String {
    let mut message = match engine_internal_text(&error.message) {
        Some(plain) => format!("{}: {plain}", if error.name.is_empty() { "Error" } else { &error.name }),
        None => error.to_string(),
    };
    if let Some((cut_at, _)) = message.char_indices().nth(MAX_GUEST_ERROR_CHARS) {
        let bytes = message.len();
        message.truncate(cut_at);
        message.push_str(&format!("… (message cut, {bytes} bytes)"));
    }
    if error.message.starts_with(PENDING_WITHOUT_HOST_WORK) {
        return message;
    }
    let file = source.file_name();
    if let Some((line, column)) = stack_position(&error.stack, file) {
        // The sandbox's cell wrapper has its own line before the code; columns are the code's.
        let mapped = line
            .checked_sub(codemode_sandbox::CELL_LINE_OFFSET)
            .filter(|l| *l > 0)
            .and_then(|l| source.map_position(l, column.max(1)));
        match mapped {
            Some((l, c)) if column > 0 => message.push_str(&format!(" (at {file}:{l}:{c})")),
            Some((l, _)) => message.push_str(&format!(" (at {file}:{l})")),
            // A position in the wrapper itself says nothing about the user's code.
            None => {}
        }
    }
    message
}

/// The first `file:line:column` in a QuickJS stack.
fn stack_position(stack: &str, file: &str) -> Option<(u32, u32)> {
    let needle = format!("{file}:");
    let start = stack.find(&needle)? + needle.len();
    let rest = &stack[start..];
    let mut parts = rest.splitn(3, |c: char| !c.is_ascii_digit());
    let line: u32 = parts.next()?.parse().ok()?;
    let column: u32 = parts.next().and_then(|c| c.parse().ok()).unwrap_or(0);
    Some((line, column))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_internal_texts_are_replaced() {
        let source =
            codemode_ts::strip("throw 1", &codemode_ts::StripOptions::new(codemode_ts::Language::JavaScript));
        let error = GuestError {
            name: "InternalError".into(),
            message: "Conversion from string failed: invalid utf-8 sequence of 1 bytes from index 9".into(),
            stack: String::new(),
        };
        let message = guest_error_message(&error, &source);
        assert_eq!(
            message,
            "InternalError: a string with unpaired surrogates (not valid Unicode) could not cross the sandbox boundary"
        );
        for (internal, _) in ENGINE_INTERNAL_TEXTS {
            let error =
                GuestError { name: String::new(), message: format!("{internal}: x"), stack: String::new() };
            let message = guest_error_message(&error, &source);
            assert!(!message.contains(internal), "{message}");
            assert!(message.starts_with("Error: "), "{message}");
        }
        // Ordinary messages stay.
        let error = GuestError {
            name: "TypeError".into(),
            message: "x is not a function".into(),
            stack: String::new(),
        };
        assert_eq!(guest_error_message(&error, &source), "TypeError: x is not a function");
        // Huge messages are cut.
        let error = GuestError { name: "Error".into(), message: "m".repeat(100_000), stack: String::new() };
        let message = guest_error_message(&error, &source);
        assert!(
            message.len() < 4200 && message.ends_with("(message cut, 100007 bytes)"),
            "{}",
            &message[4000..]
        );
    }

    #[test]
    fn stack_positions_parse() {
        assert_eq!(stack_position("    at f (user.js:3:7)\n", "user.js"), Some((3, 7)));
        assert_eq!(stack_position("    at <eval> (user.ts:12:1)", "user.ts"), Some((12, 1)));
        assert_eq!(stack_position("    at native", "user.js"), None);
    }
}
