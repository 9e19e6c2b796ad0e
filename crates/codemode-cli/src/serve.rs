//! `codemode serve`: an MCP server on stdio that puts Code Mode in front of upstream MCP servers
//! (docs/serve.md). Upstream servers are child processes; their tools, resources and prompts become
//! the hidden catalog; the client sees `exec`, `wait` and direct-only tools.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use async_trait::async_trait;
use codemode::{
    AbortSignal, CodeModeConfig, CodeModeEvent, EventSink, McpServer, McpTool, NestedCall, RunScope,
    ToolError, ToolHost, ToolOutcome, ToolSpec,
};
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResponse, CallToolResult, CancelledNotificationParam,
    ClientRequest, GetPromptRequestParams, JsonRpcMessage, ListResourcesResult, ListToolsResult,
    LoggingMessageNotificationParam, PaginatedRequestParams, ProgressNotificationParam, ProgressToken,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, RequestId, ServerCapabilities,
    ServerConfig, ServerNotification, ServerResult, Tool,
};
use rmcp::service::{
    NotificationContext, PeerRequestOptions, RequestContext, RunningService, RxJsonRpcMessage,
    TxJsonRpcMessage,
};
use rmcp::transport::{TokioChildProcess, Transport};
use rmcp::{ClientHandler, ErrorData as McpError, Peer, RoleClient, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Map, Value, json};
use tokio::sync::Notify;

use crate::engine::{Engine, EngineOptions, config_from_value};
use crate::error::CliError;
use crate::fixture::{FixtureCatalog, UpstreamCommand};

/// The gateway's one resource: its state as JSON ([`Gateway::status`]).
pub const STATUS_URI: &str = "codemode://status";

/// Default time an upstream call may take before it fails with code `timeout`.
pub const DEFAULT_UPSTREAM_TIMEOUT_MS: u64 = 120_000;

/// The gateway configuration file.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct GatewayConfig {
    /// Code Mode settings (`codeMode`, default: enabled).
    pub code_mode: CodeModeConfig,
    /// Upstream servers (`mcpServers`), in file order.
    pub servers: Vec<(String, UpstreamCommand)>,
    /// The optional fixture catalog (`catalog`: a path, or an inline fixture object).
    pub catalog: FixtureCatalog,
    /// Per-call upstream timeout (`upstreamTimeoutMs`).
    pub upstream_timeout: Duration,
    /// Directory for the compiled guest module (not in the file: `--module-cache`). Default: none.
    pub module_cache: Option<std::path::PathBuf>,
}

impl GatewayConfig {
    /// Reads and validates a gateway config file. Errors name the file, the JSON path and the fix.
    pub fn load(path: &Path) -> Result<GatewayConfig, CliError> {
        let (value, file) = crate::engine::read_json_file(path)?;
        GatewayConfig::from_value(&value, &file, path.parent().unwrap_or(Path::new(".")))
    }

    /// Validates a gateway config document.
    pub fn from_value(value: &Value, file: &str, base: &Path) -> Result<GatewayConfig, CliError> {
        let invalid = |path: &str, message: String| CliError::Config {
            file: file.to_owned(),
            path: path.to_owned(),
            message,
        };
        let Value::Object(map) = value else {
            return Err(invalid(
                "$",
                "must be an object: {\"mcpServers\": {...}, \"codeMode\": {...}}".into(),
            ));
        };
        const FIELDS: &[&str] =
            &["$schema", "mcpServers", "codeMode", "tools", "catalog", "upstreamTimeoutMs"];
        if let Some(key) = map.keys().find(|k| !FIELDS.contains(&k.as_str())) {
            return Err(invalid(
                &format!("$.{key}"),
                format!("unknown field; allowed: {}", FIELDS.join(", ")),
            ));
        }
        let code_mode = if map.contains_key("codeMode") || value.pointer("/tools/codeMode").is_some() {
            config_from_value(value, file)?
        } else {
            CodeModeConfig::enabled()
        };
        // `mcpServers` uses exactly the fixture format's command shape: validate it through it.
        let servers_doc =
            json!({ "mcpServers": map.get("mcpServers").cloned().unwrap_or_else(|| json!({})) });
        let servers_only = FixtureCatalog::from_value(&servers_doc, base)
            .map_err(|(path, message)| invalid(&path, message))?;
        let mut servers = servers_only.upstream_servers();
        let mut catalog = match map.get("catalog") {
            None => FixtureCatalog::default(),
            Some(Value::String(path)) => FixtureCatalog::load(&base.join(path))?,
            Some(inline @ Value::Object(_)) => FixtureCatalog::from_value(inline, base)
                .map_err(|(path, message)| invalid(&path.replacen('$', "$.catalog", 1), message))?,
            Some(_) => {
                return Err(invalid(
                    "$.catalog",
                    "must be a fixture file path or an inline fixture object".into(),
                ));
            }
        };
        // Inline servers written directly under mcpServers join the fixture catalog.
        catalog.mcp_servers.extend(
            servers_only
                .mcp_servers
                .into_iter()
                .filter(|s| matches!(s, crate::fixture::FixtureMcpServer::Inline(_))),
        );
        servers.extend(catalog.upstream_servers());
        let upstream_timeout = match map.get("upstreamTimeoutMs") {
            None => Duration::from_millis(DEFAULT_UPSTREAM_TIMEOUT_MS),
            Some(v) => Duration::from_millis(v.as_u64().filter(|ms| *ms >= 1).ok_or_else(|| {
                invalid("$.upstreamTimeoutMs", "must be a positive whole number of milliseconds".into())
            })?),
        };
        Ok(GatewayConfig { code_mode, servers, catalog, upstream_timeout, module_cache: None })
    }
}

/// Watches upstream notifications: list changes rebuild the catalog (progress is read by
/// [`ProgressTap`]).
#[derive(Clone)]
struct UpstreamHandler {
    name: String,
    changed: Arc<Notify>,
}

impl ClientHandler for UpstreamHandler {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        tracing::info!(server = %self.name, "upstream tool list changed; rebuilding the catalog");
        self.changed.notify_one();
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        tracing::info!(server = %self.name, "upstream resource list changed; rebuilding the catalog");
        self.changed.notify_one();
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        tracing::info!(server = %self.name, "upstream prompt list changed; rebuilding the catalog");
        self.changed.notify_one();
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        // Already forwarded by `ProgressTap`, in order with the answers.
        tracing::debug!(server = %self.name, progress = params.progress, "upstream progress");
    }
}

/// An upstream's transport, handing its progress notifications to the projection as they are
/// read. rmcp runs notification handlers as separate tasks, so a progress notification sent just
/// before an answer could be handled after it (when the call's route is gone); read here, it is
/// queued for the client before the answer reaches the caller.
struct ProgressTap<T> {
    inner: T,
    server: String,
    projection: Arc<Projection>,
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for ProgressTap<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let message = self.inner.receive().await?;
        if let JsonRpcMessage::Notification(n) = &message
            && let ServerNotification::ProgressNotification(progress) = &n.notification
        {
            self.projection.upstream_progress(&self.server, progress.params.clone());
        }
        Some(message)
    }

    fn close(&mut self) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

type Client = RunningService<RoleClient, UpstreamHandler>;

/// One connected upstream server.
struct Upstream {
    name: String,
    client: Client,
}

/// Routes nested calls with catalog id `mcp:<server>:<tool>` to the upstream server by exact name.
pub struct UpstreamHost {
    peers: RwLock<HashMap<String, Peer<RoleClient>>>,
    timeout: Duration,
    projection: Arc<Projection>,
}

impl std::fmt::Debug for UpstreamHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UpstreamHost").field("timeout", &self.timeout).finish_non_exhaustive()
    }
}

impl UpstreamHost {
    fn peer(&self, server: &str) -> Result<Peer<RoleClient>, ToolError> {
        let peer =
            self.peers.read().unwrap_or_else(|p| p.into_inner()).get(server).cloned().ok_or_else(|| {
                ToolError::with_code(format!("MCP server {server:?} is not connected"), "unavailable")
            })?;
        if peer.is_transport_closed() {
            return Err(ToolError::with_code(exited(server), "unavailable"));
        }
        Ok(peer)
    }

    /// Upstream calls currently waiting for an answer (nested tool calls with a progress route).
    pub fn calls_in_flight(&self) -> usize {
        self.projection.routes.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// Connected servers by name, split into (running, exited or crashed), each sorted.
    pub fn servers_by_state(&self) -> (Vec<String>, Vec<String>) {
        let peers = self.peers.read().unwrap_or_else(|p| p.into_inner());
        let mut names: Vec<(&String, bool)> =
            peers.iter().map(|(n, p)| (n, p.is_transport_closed())).collect();
        names.sort();
        let (exited, running): (Vec<_>, Vec<_>) = names.into_iter().partition(|(_, closed)| *closed);
        let names = |list: Vec<(&String, bool)>| list.into_iter().map(|(n, _)| n.clone()).collect();
        (names(running), names(exited))
    }

    async fn bounded<T>(
        &self,
        server: &str,
        what: &str,
        future: impl std::future::Future<Output = Result<T, rmcp::ServiceError>>,
    ) -> Result<T, ToolError> {
        let answer = tokio::time::timeout(self.timeout, future).await;
        self.classify(server, what, answer)
    }

    fn classify<T>(
        &self,
        server: &str,
        what: &str,
        answer: Result<Result<T, rmcp::ServiceError>, tokio::time::error::Elapsed>,
    ) -> Result<T, ToolError> {
        match answer {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) => {
                let closed = matches!(e, rmcp::ServiceError::TransportClosed)
                    || self
                        .peers
                        .read()
                        .unwrap_or_else(|p| p.into_inner())
                        .get(server)
                        .is_some_and(|p| p.is_transport_closed());
                if closed {
                    tracing::warn!(server, what, "upstream MCP server exited during the call");
                    return Err(ToolError::with_code(exited(server), "upstream_error"));
                }
                tracing::warn!(server, what, error = %e, "upstream MCP call failed");
                Err(ToolError::with_code(
                    format!("MCP server {server:?} failed: {}", short(&e.to_string())),
                    "upstream_error",
                ))
            }
            Err(_) => {
                tracing::warn!(
                    server,
                    what,
                    timeout_ms = self.timeout.as_millis() as u64,
                    "upstream MCP call timed out"
                );
                Err(ToolError::with_code(
                    format!("MCP server {server:?} did not answer within {} ms", self.timeout.as_millis()),
                    "timeout",
                ))
            }
        }
    }

    /// Calls `tool` on `server` with `arguments` (an object). With a `route`, the upstream's
    /// progress notifications for this call reach the MCP client under the exec (or wait) call
    /// that made it. A call dropped before its answer (the run was aborted) or timed out is
    /// cancelled upstream with `notifications/cancelled`.
    pub async fn call_tool(
        &self,
        server: &str,
        tool: &str,
        arguments: Value,
        route: Option<ProgressRoute>,
    ) -> Result<ToolOutcome, ToolError> {
        let peer = self.peer(server)?;
        let mut params = CallToolRequestParams::new(tool.to_owned());
        params.arguments = match arguments {
            Value::Object(map) => Some(map),
            Value::Null => None,
            _ => return Err(ToolError::with_code("MCP tool input must be an object", "invalid_input")),
        };
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let handle = self
            .bounded(server, tool, peer.send_cancellable_request(request, PeerRequestOptions::no_options()))
            .await?;
        let mut in_flight = InFlight {
            projection: self.projection.clone(),
            key: (server.to_owned(), handle.progress_token.clone()),
            peer: peer.clone(),
            id: handle.id.clone(),
            settled: false,
        };
        if let Some(route) = route {
            in_flight
                .projection
                .routes
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(in_flight.key.clone(), route);
        }
        let answer = tokio::time::timeout(self.timeout, handle.await_response()).await;
        in_flight.settled = answer.is_ok();
        let result = match self.classify(server, tool, answer)? {
            ServerResult::CallToolResult(result) => result,
            _ => {
                return Err(ToolError::with_code(
                    format!(
                        "MCP server {server:?} answered tools/call with something other than a tool result"
                    ),
                    "upstream_error",
                ));
            }
        };
        let content = serde_json::to_value(&result.content).unwrap_or(Value::Array(Vec::new()));
        if result.is_error == Some(true) {
            let message = content_text(&content).unwrap_or_else(|| "the MCP tool reported an error".into());
            return Err(ToolError::with_code(short(&message), "tool_error"));
        }
        Ok(ToolOutcome::details(result.structured_content.unwrap_or(Value::Null)).with_content(content))
    }
}

fn exited(server: &str) -> String {
    format!(
        "MCP server {server:?} exited or closed its connection; its tools are unavailable until `codemode serve` \
         restarts"
    )
}

/// Where an upstream call's progress goes: the run and exec call that made it.
#[derive(Clone, Debug)]
pub struct ProgressRoute {
    run_id: String,
    parent_call_id: Option<String>,
    catalog_id: String,
}

/// One upstream `tools/call` waiting for its answer.
struct InFlight {
    projection: Arc<Projection>,
    key: (String, ProgressToken),
    peer: Peer<RoleClient>,
    id: RequestId,
    settled: bool,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.projection.routes.lock().unwrap_or_else(|p| p.into_inner()).remove(&self.key);
        if self.settled {
            return;
        }
        // Dropped unanswered (the run was aborted or the call timed out): tell the upstream.
        let (peer, id) = (self.peer.clone(), self.id.clone());
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let reason = Some("the Code Mode run no longer needs this call".to_owned());
                let _ = peer.notify_cancelled(CancelledNotificationParam::new(Some(id), reason)).await;
            });
        }
    }
}

fn short(text: &str) -> String {
    let mut out: String = text.chars().take(500).collect();
    if out.len() < text.len() {
        out.push('…');
    }
    out
}

fn content_text(content: &Value) -> Option<String> {
    let texts: Vec<&str> =
        content.as_array()?.iter().filter_map(|b| b.get("text").and_then(Value::as_str)).collect();
    (!texts.is_empty()).then(|| texts.join("\n"))
}

#[async_trait]
impl ToolHost for UpstreamHost {
    async fn call(&self, call: NestedCall) -> Result<ToolOutcome, ToolError> {
        let Some(rest) = call.catalog_id.strip_prefix("mcp:") else {
            return Err(ToolError::with_code(format!("unknown tool {:?}", call.catalog_id), "not_found"));
        };
        let Some((server, tool)) = rest.split_once(':') else {
            return Err(ToolError::with_code(format!("unknown tool {:?}", call.catalog_id), "not_found"));
        };
        let route = ProgressRoute {
            run_id: call.run_id.clone(),
            parent_call_id: call.parent_call_id.clone(),
            catalog_id: call.catalog_id.clone(),
        };
        self.call_tool(server, tool, call.input, Some(route)).await
    }

    async fn read_resource(&self, _scope: &RunScope, server: &str, uri: &str) -> Result<Value, ToolError> {
        let peer = self.peer(server)?;
        let result = self
            .bounded(server, "resources/read", peer.read_resource(ReadResourceRequestParams::new(uri)))
            .await?;
        Ok(serde_json::to_value(result).unwrap_or(Value::Null))
    }

    async fn get_prompt(
        &self,
        _scope: &RunScope,
        server: &str,
        name: &str,
        arguments: &Value,
    ) -> Result<Value, ToolError> {
        let peer = self.peer(server)?;
        let mut params = GetPromptRequestParams::new(name);
        if let Value::Object(map) = arguments {
            params.arguments = Some(map.clone());
        }
        let result = self.bounded(server, "prompts/get", peer.get_prompt(params)).await?;
        Ok(serde_json::to_value(result).unwrap_or(Value::Null))
    }
}

async fn connect(
    name: &str,
    command: &UpstreamCommand,
    changed: Arc<Notify>,
    projection: Arc<Projection>,
) -> Result<Client, CliError> {
    let mut cmd = tokio::process::Command::new(&command.command);
    cmd.args(&command.args).envs(&command.env).kill_on_drop(true);
    if let Some(cwd) = &command.cwd {
        cmd.current_dir(cwd);
    }
    let upstream = |message: String| CliError::Upstream { server: name.to_owned(), message };
    let (transport, _stderr) = TokioChildProcess::builder(cmd)
        .stderr(std::process::Stdio::inherit())
        .spawn()
        .map_err(|e| upstream(format!("cannot start {:?}: {e}", command.command)))?;
    let transport = ProgressTap { inner: transport, server: name.to_owned(), projection: projection.clone() };
    let handler = UpstreamHandler { name: name.to_owned(), changed };
    handler.serve(transport).await.map_err(|e| upstream(format!("initialize failed: {e}")))
}

/// Lists an upstream's tools, resources and prompts (all pages) as Code Mode metadata.
async fn describe(upstream: &Upstream) -> (McpServer, Vec<ToolSpec>) {
    let peer = upstream.client.peer();
    let info = peer.peer_info();
    let capabilities = info.as_ref().map(|i| serde_json::to_value(&i.capabilities).unwrap_or(Value::Null));
    let has = |key: &str| capabilities.as_ref().is_some_and(|c| c.get(key).is_some_and(|v| !v.is_null()));
    let tools = match peer.list_all_tools().await {
        Ok(tools) => tools,
        Err(e) => {
            tracing::warn!(server = %upstream.name, error = %e, "tools/list failed; the server contributes no tools");
            Vec::new()
        }
    };
    let tools: Vec<McpTool> = tools
        .iter()
        .filter_map(|t| serde_json::to_value(t).ok())
        .filter_map(|v| McpTool::from_value_lossy(&v))
        .collect();
    let mut server = McpServer::new(upstream.name.clone(), tools);
    if has("resources") && peer.list_all_resources().await.is_ok() {
        server = server.with_resources();
    }
    if has("prompts") && peer.list_all_prompts().await.is_ok() {
        server = server.with_prompts();
    }
    if let Some(info) = info {
        if let Some(title) = info.server_info.as_ref().and_then(|i| i.title.clone()) {
            server = server.with_title(title);
        }
        if let Some(instructions) = info.instructions.clone() {
            server = server.with_instructions(instructions);
        }
    }
    let specs = server.tool_specs();
    (server, specs)
}

/// What the MCP client hears besides answers: nested-call events as `notifications/message`
/// (logger `codemode`) and, when the exec or wait call carried a progress token, progress
/// notifications (one per nested-call event and per upstream progress notification). Everything
/// goes through one queue drained by one task, so the client sees progress values in order.
#[derive(Default)]
struct Projection {
    peer: Mutex<Option<Peer<RoleServer>>>,
    outbox: Mutex<Option<tokio::sync::mpsc::UnboundedSender<Outgoing>>>,
    /// Client progress token and the last progress value sent, by gateway call id.
    progress: Mutex<HashMap<String, (ProgressToken, u32)>>,
    /// The `wait` call currently continuing a run, by run id.
    waits: Mutex<HashMap<String, String>>,
    /// Routes of upstream calls in flight, by server and the upstream progress token.
    routes: Mutex<HashMap<(String, ProgressToken), ProgressRoute>>,
}

enum Outgoing {
    Log(LoggingMessageNotificationParam),
    Progress(ProgressNotificationParam),
}

impl Projection {
    /// Remembers the client (first request) and starts the task that sends to it.
    fn attach(&self, peer: &Peer<RoleServer>) {
        self.peer.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert_with(|| peer.clone());
        let mut outbox = self.outbox.lock().unwrap_or_else(|p| p.into_inner());
        if outbox.is_some() {
            return;
        }
        let (sender, mut queue) = tokio::sync::mpsc::unbounded_channel();
        let peer = peer.clone();
        tokio::spawn(async move {
            while let Some(message) = queue.recv().await {
                let _ = match message {
                    Outgoing::Log(log) => peer.notify_logging_message(log).await,
                    Outgoing::Progress(progress) => peer.notify_progress(progress).await,
                };
            }
        });
        *outbox = Some(sender);
    }

    /// Queues an optional log message, then a progress notification for work of `run_id`
    /// (started under `parent_call_id`) if a client call with a progress token is open for it:
    /// the exec call if it still is, else the wait continuing the run. The progress value is
    /// assigned and queued under one lock, so values reach the client in increasing order.
    fn send(&self, run_id: &str, parent_call_id: Option<&str>, log: Option<Value>, message: String) {
        let outbox = self.outbox.lock().unwrap_or_else(|p| p.into_inner());
        let Some(outbox) = outbox.as_ref() else { return };
        if let Some(data) = log
            && let Ok(log) = serde_json::from_value::<LoggingMessageNotificationParam>(
                json!({ "level": "info", "logger": "codemode", "data": data }),
            )
        {
            let _ = outbox.send(Outgoing::Log(log));
        }
        let mut progress = self.progress.lock().unwrap_or_else(|p| p.into_inner());
        let wait = self.waits.lock().unwrap_or_else(|p| p.into_inner()).get(run_id).cloned();
        let key = parent_call_id.filter(|p| progress.contains_key(*p)).map(str::to_owned).or(wait);
        let Some((token, n)) = key.and_then(|k| progress.get_mut(&k)) else { return };
        *n += 1;
        if let Ok(param) = serde_json::from_value::<ProgressNotificationParam>(
            json!({ "progressToken": token, "progress": *n, "message": message }),
        ) {
            let _ = outbox.send(Outgoing::Progress(param));
        }
    }

    fn upstream_progress(&self, server: &str, params: ProgressNotificationParam) {
        let route = self
            .routes
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&(server.to_owned(), params.progress_token.clone()))
            .cloned();
        let Some(route) = route else { return };
        let amount = match params.total {
            Some(total) => format!("{}/{}", params.progress, total),
            None => params.progress.to_string(),
        };
        let message = match params.message {
            Some(m) => format!("{}: {amount} {m}", route.catalog_id),
            None => format!("{}: {amount}", route.catalog_id),
        };
        self.send(&route.run_id, route.parent_call_id.as_deref(), None, message);
    }
}

impl EventSink for Projection {
    fn emit(&self, event: CodeModeEvent) {
        let (data, run_id, parent, message) = match &event {
            CodeModeEvent::NestedCallStarted { run_id, parent_call_id, call_id, catalog_id, .. } => (
                json!({ "event": "nestedCallStarted", "runId": run_id, "parentCallId": parent_call_id, "callId": call_id, "toolId": catalog_id }),
                run_id,
                parent_call_id,
                format!("calling {catalog_id}"),
            ),
            CodeModeEvent::NestedCallFinished {
                run_id,
                parent_call_id,
                call_id,
                catalog_id,
                ok,
                error,
                duration,
                ..
            } => (
                json!({ "event": "nestedCallFinished", "runId": run_id, "parentCallId": parent_call_id, "callId": call_id, "toolId": catalog_id, "ok": ok, "error": error, "durationMs": duration.as_millis() as u64 }),
                run_id,
                parent_call_id,
                format!("{catalog_id} {}", if *ok { "finished" } else { "failed" }),
            ),
            _ => return,
        };
        self.send(run_id, parent.as_deref(), Some(data), message);
    }
}

/// The gateway: Code Mode over the upstreams, rebuilt when an upstream's lists change.
#[derive(Clone)]
pub struct Gateway {
    inner: Arc<GatewayInner>,
}

struct GatewayInner {
    config: GatewayConfig,
    upstream: Arc<UpstreamHost>,
    upstreams: tokio::sync::Mutex<Vec<Upstream>>,
    /// Current engine first; older generations keep serving `wait` for their suspended runs.
    engines: RwLock<Vec<Arc<Engine>>>,
    run_owner: Mutex<HashMap<String, usize>>,
    projection: Arc<Projection>,
    changed: Arc<Notify>,
    /// Catalog builds so far (1 after start; +1 per `list_changed` rebuild).
    generation: std::sync::atomic::AtomicU64,
}

impl Gateway {
    /// Starts the upstream servers and builds the first catalog. An upstream that cannot start is
    /// logged and left out (the gateway stays up).
    pub async fn start(config: GatewayConfig) -> Result<Gateway, CliError> {
        let changed = Arc::new(Notify::new());
        let projection = Arc::new(Projection::default());
        let upstream = Arc::new(UpstreamHost {
            peers: RwLock::default(),
            timeout: config.upstream_timeout,
            projection: projection.clone(),
        });
        let mut upstreams = Vec::new();
        for (name, command) in &config.servers {
            match connect(name, command, changed.clone(), projection.clone()).await {
                Ok(client) => {
                    upstream
                        .peers
                        .write()
                        .unwrap_or_else(|p| p.into_inner())
                        .insert(name.clone(), client.peer().clone());
                    upstreams.push(Upstream { name: name.clone(), client });
                }
                Err(e) => tracing::warn!("{e}; continuing without it"),
            }
        }
        let gateway = Gateway {
            inner: Arc::new(GatewayInner {
                config,
                upstream,
                upstreams: tokio::sync::Mutex::new(upstreams),
                engines: RwLock::default(),
                run_owner: Mutex::default(),
                projection,
                changed,
                generation: Default::default(),
            }),
        };
        gateway.rebuild().await?;
        let weak = Arc::downgrade(&gateway.inner);
        tokio::spawn(async move {
            loop {
                let Some(changed) = weak.upgrade().map(|i| i.changed.clone()) else { return };
                changed.notified().await;
                let Some(inner) = weak.upgrade() else { return };
                if let Err(e) = (Gateway { inner }).rebuild().await {
                    tracing::warn!("catalog rebuild failed: {e}");
                }
            }
        });
        Ok(gateway)
    }

    async fn rebuild(&self) -> Result<(), CliError> {
        let inner = &self.inner;
        let upstreams = inner.upstreams.lock().await;
        let mut servers = Vec::new();
        let mut tools = Vec::new();
        for upstream in upstreams.iter() {
            let (server, specs) = describe(upstream).await;
            servers.push(server);
            tools.extend(specs);
        }
        drop(upstreams);
        let catalog = &inner.config.catalog;
        tools.retain(|spec| !catalog.is_denied(spec));
        for server in &mut servers {
            let name = server.name.clone();
            server.tools.retain(|t| !catalog.is_denied(&t.to_tool_spec(&name)));
        }
        let options = EngineOptions {
            config: inner.config.code_mode.clone(),
            catalog: catalog.clone(),
            extra_tools: tools,
            extra_mcp_servers: servers,
            fallback: Some(inner.upstream.clone()),
            events: Some(inner.projection.clone()),
            module_cache: inner.config.module_cache.clone(),
        };
        let engine = Arc::new(Engine::build(options)?);
        {
            let mut engines = inner.engines.write().unwrap_or_else(|p| p.into_inner());
            engines.insert(0, engine);
            inner.generation.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            // Keep a few generations for suspended runs; older ones are dropped (their runs expire).
            engines.truncate(4);
        }
        let peer = inner.projection.peer.lock().unwrap_or_else(|p| p.into_inner()).clone();
        if let Some(peer) = peer {
            let _ = peer.notify_tool_list_changed().await;
        }
        Ok(())
    }

    /// The current engine.
    pub fn engine(&self) -> Arc<Engine> {
        self.inner.engines.read().unwrap_or_else(|p| p.into_inner())[0].clone()
    }

    fn engine_for_run(&self, run_id: &str) -> Arc<Engine> {
        let generation = self.inner.run_owner.lock().unwrap_or_else(|p| p.into_inner()).get(run_id).copied();
        let engines = self.inner.engines.read().unwrap_or_else(|p| p.into_inner());
        match generation {
            Some(id) => engines
                .iter()
                .find(|e| Arc::as_ptr(e) as usize == id)
                .cloned()
                .unwrap_or_else(|| engines[0].clone()),
            None => engines[0].clone(),
        }
    }

    /// Records which engine generation holds a waiting run, and forgets runs no engine holds
    /// any more (finished, cancelled or expired), so the map stays as small as the run stores.
    fn remember(&self, engine: &Arc<Engine>, result: &Value) {
        let engines = self.inner.engines.read().unwrap_or_else(|p| p.into_inner()).clone();
        let mut owners = self.inner.run_owner.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(run_id) = result.get("runId").and_then(Value::as_str) {
            owners.insert(run_id.to_owned(), Arc::as_ptr(engine) as usize);
        }
        owners.retain(|run_id, _| engines.iter().any(|e| e.code_mode().has_run(run_id)));
    }

    /// Suspended runs across the engine generations still kept.
    pub fn suspended_runs(&self) -> usize {
        let engines = self.inner.engines.read().unwrap_or_else(|p| p.into_inner()).clone();
        engines.iter().map(|e| e.code_mode().run_count()).sum()
    }

    /// The gateway's state as the `codemode://status` resource shows it.
    pub fn status(&self) -> Value {
        let engine = self.engine();
        let (running, exited) = self.inner.upstream.servers_by_state();
        json!({
            "catalogGeneration": self.inner.generation.load(std::sync::atomic::Ordering::Relaxed),
            "catalogTools": engine.tools().len(),
            "suspendedRuns": self.suspended_runs(),
            "trackedRuns": self.inner.run_owner.lock().unwrap_or_else(|p| p.into_inner()).len(),
            "upstreamCallsInFlight": self.inner.upstream.calls_in_flight(),
            "upstreams": { "running": running, "exited": exited },
        })
    }

    /// Stops every upstream server (graceful close, then kill).
    pub async fn shutdown(&self) {
        let engines: Vec<Arc<Engine>> = self.inner.engines.read().unwrap_or_else(|p| p.into_inner()).clone();
        for engine in engines {
            engine.code_mode().shutdown();
        }
        let mut upstreams = self.inner.upstreams.lock().await;
        for upstream in upstreams.drain(..) {
            let _ = upstream.client.cancel().await;
        }
    }

    async fn call(
        &self,
        name: &str,
        arguments: Value,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let call_id = format!("mcp-{}", request_id_text(&context.id));
        let scope = RunScope::new("mcp", "gateway").with_call_id(call_id.clone());
        let abort = AbortSignal::new();
        let cancel = context.ct.clone();
        let watcher = {
            let abort = abort.clone();
            tokio::spawn(async move {
                cancel.cancelled().await;
                abort.abort();
            })
        };
        let mut open = OpenCall::new(&self.inner.projection, &call_id, context.meta.get_progress_token());
        let result = match name {
            "exec" => {
                let engine = self.engine();
                let result = engine.exec(&scope, &arguments, abort).await;
                self.remember(&engine, &result);
                Ok(code_mode_result(result))
            }
            "wait" => {
                let run_id = arguments.get("runId").and_then(Value::as_str).unwrap_or_default().to_owned();
                let engine = self.engine_for_run(&run_id);
                open.continues(&run_id);
                let result = engine.wait(&scope, &arguments, abort).await;
                self.remember(&engine, &result);
                Ok(code_mode_result(result))
            }
            other => self.call_direct(other, arguments).await,
        };
        watcher.abort();
        drop(open);
        result
    }

    /// A tool on the model surface other than exec/wait (direct-only, or everything when Code Mode
    /// is disabled): call it without Code Mode.
    async fn call_direct(&self, name: &str, arguments: Value) -> Result<CallToolResult, McpError> {
        let engine = self.engine();
        let surface = engine.surface_json();
        let visible = surface["tools"].as_array().is_some_and(|t| t.iter().any(|d| d["name"] == name));
        let spec = engine.tools().iter().find(|t| t.name == name).cloned();
        let (true, Some(spec)) = (visible, spec) else {
            return Err(McpError::invalid_params(format!("unknown tool {name:?}"), None));
        };
        let id = spec.catalog_id();
        let host = engine.fixture_host();
        let outcome = match host.call_direct(&id, arguments.clone()).await {
            Some(answer) => answer,
            None => self.inner.upstream.call_tool(&spec.owner, &spec.name, arguments, None).await,
        };
        Ok(match outcome {
            Ok(outcome) => {
                let content = outcome
                    .content
                    .unwrap_or_else(|| json!([{ "type": "text", "text": outcome.details.to_string() }]));
                let mut result = json!({ "content": content });
                if !outcome.details.is_null() {
                    result["structuredContent"] = outcome.details;
                }
                serde_json::from_value(result)
                    .unwrap_or_else(|_| text_result("unrepresentable tool result", true))
            }
            Err(e) => text_result(&e.message, true),
        })
    }
}

/// A client call open on the gateway, as the projection knows it: its progress token (if the
/// request carried one) and, for `wait`, the run it continues (whose progress then goes to it).
/// Unregistered when the call ends, even if its future is dropped.
struct OpenCall<'a> {
    projection: &'a Projection,
    call_id: String,
    run_id: Option<String>,
}

impl<'a> OpenCall<'a> {
    fn new(projection: &'a Projection, call_id: &str, token: Option<ProgressToken>) -> OpenCall<'a> {
        if let Some(token) = token {
            projection
                .progress
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(call_id.to_owned(), (token, 0));
        }
        OpenCall { projection, call_id: call_id.to_owned(), run_id: None }
    }

    /// This call continues `run_id` (a `wait`).
    fn continues(&mut self, run_id: &str) {
        let mut waits = self.projection.waits.lock().unwrap_or_else(|p| p.into_inner());
        waits.insert(run_id.to_owned(), self.call_id.clone());
        self.run_id = Some(run_id.to_owned());
    }
}

impl Drop for OpenCall<'_> {
    fn drop(&mut self) {
        self.projection.progress.lock().unwrap_or_else(|p| p.into_inner()).remove(&self.call_id);
        if let Some(run_id) = &self.run_id {
            let mut waits = self.projection.waits.lock().unwrap_or_else(|p| p.into_inner());
            if waits.get(run_id) == Some(&self.call_id) {
                waits.remove(run_id);
            }
        }
    }
}

fn request_id_text(id: &rmcp::model::RequestId) -> String {
    match serde_json::to_value(id) {
        Ok(Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => "?".into(),
    }
}

fn text_result(text: &str, is_error: bool) -> CallToolResult {
    serde_json::from_value(json!({ "content": [{ "type": "text", "text": text }], "isError": is_error }))
        .unwrap_or_else(|_| CallToolResult::success(Vec::new()))
}

/// exec/wait results: the result JSON as text and as structured content; `failed` sets `isError`.
fn code_mode_result(result: Value) -> CallToolResult {
    let failed = result.get("status").and_then(Value::as_str) == Some("failed");
    let text = serde_json::to_string(&result).unwrap_or_default();
    serde_json::from_value(json!({
        "content": [{ "type": "text", "text": text }],
        "structuredContent": result,
        "isError": failed,
    }))
    .unwrap_or_else(|_| text_result(&text, failed))
}

/// The gateway's `instructions`: what `exec` and `wait` are for, then the MCP server list of the
/// `exec` description (at initialize; `tools/list` carries the current one after a rebuild).
fn gateway_instructions(server_list: &str) -> String {
    let mut text = String::from(
        "Code Mode gateway: write JavaScript or TypeScript for `exec` to find and call the hidden tools \
         (API.search(query) ranks the MCP tools; call them as MCP.<server>.<tool>(input)); continue `waiting` \
         runs with `wait`.",
    );
    if !server_list.is_empty() {
        text.push_str("\n\n");
        text.push_str(server_list);
    }
    text
}

impl ServerHandler for Gateway {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .enable_resources()
                .enable_logging()
                .build(),
        )
        .with_instructions(gateway_instructions(&self.engine().code_mode().mcp_server_list()))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        self.inner.projection.attach(&context.peer);
        let surface = self.engine().surface_json();
        let tools: Vec<Tool> = surface["tools"]
            .as_array()
            .map(|defs| defs.iter().filter_map(|d| serde_json::from_value(d.clone()).ok()).collect())
            .unwrap_or_default();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        serde_json::from_value(json!({ "resources": [{
            "uri": STATUS_URI,
            "name": "status",
            "title": "Code Mode gateway status",
            "description": "Catalog generation and size, suspended runs, upstream calls in flight, upstream servers running or exited.",
            "mimeType": "application/json",
        }] }))
        .map_err(|e| McpError::internal_error(e.to_string(), None))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        if request.uri != STATUS_URI {
            return Err(McpError::resource_not_found(
                format!("unknown resource {:?}; the gateway has one: {STATUS_URI}", request.uri),
                None,
            ));
        }
        let text = self.status().to_string();
        serde_json::from_value::<ReadResourceResult>(json!({
            "contents": [{ "uri": STATUS_URI, "mimeType": "application/json", "text": text }]
        }))
        .map(ReadResourceResponse::from)
        .map_err(|e| McpError::internal_error(e.to_string(), None))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        self.inner.projection.attach(&context.peer);
        let arguments = request.arguments.map(Value::Object).unwrap_or_else(|| Value::Object(Map::new()));
        self.call(&request.name, arguments, &context).await.map(CallToolResponse::from)
    }
}

/// `codemode serve --config F`: serve until stdin closes or a signal arrives.
pub async fn run(config_path: &Path, module_cache: Option<std::path::PathBuf>) -> anyhow::Result<()> {
    let mut config = GatewayConfig::load(config_path)?;
    config.module_cache = module_cache;
    let gateway = Gateway::start(config).await?;
    tracing::info!(tools = gateway.engine().tools().len(), "codemode serve: catalog ready");
    let service = gateway.clone().serve(rmcp::transport::stdio()).await?;
    tokio::select! {
        result = service.waiting() => { result?; }
        _ = tokio::signal::ctrl_c() => { tracing::info!("interrupted"); }
        _ = terminated() => { tracing::info!("terminated"); }
    }
    gateway.shutdown().await;
    tracing::info!("codemode serve: upstream servers stopped");
    Ok(())
}

/// Resolves on SIGTERM (what MCP clients and process managers send to stop a server).
async fn terminated() {
    #[cfg(unix)]
    if let Ok(mut signal) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        signal.recv().await;
        return;
    }
    std::future::pending::<()>().await
}
