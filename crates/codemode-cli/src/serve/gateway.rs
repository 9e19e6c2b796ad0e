//! The gateway's MCP server side: the Code Mode surface over the catalog built from the upstreams,
//! catalog generations across rebuilds, and the status resource. Starting, rebuilding and
//! restarting upstreams live in `lifecycle`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};

use codemode::{AbortSignal, RunScope};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, ServerCapabilities, ServerConfig, Tool,
};
// MCP logging is deprecated by SEP-2577, but it is what clients show today (nested-call projection).
#[allow(deprecated)]
use rmcp::model::SetLevelRequestParams;
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, Peer, RoleServer, ServerHandler};
use serde_json::{Map, Value, json};

use super::STATUS_URI;
use super::config::*;
use super::lifecycle::{PROBE_TIMEOUT, Restarts};
use super::projection::*;
use super::upstream::*;
use crate::engine::Engine;
use crate::fixture::UpstreamTransport;

/// The gateway: Code Mode over the upstreams, rebuilt when an upstream's lists change.
#[derive(Clone)]
pub struct Gateway {
    pub(super) inner: Arc<GatewayInner>,
}

pub(super) struct GatewayInner {
    pub(super) config: GatewayConfig,
    pub(super) upstream: Arc<UpstreamHost>,
    pub(super) upstreams: tokio::sync::Mutex<Vec<Upstream>>,
    /// Current engine first; older generations are kept while they hold suspended runs.
    pub(super) engines: RwLock<Vec<Arc<Engine>>>,
    /// The catalog generation ([`Engine::generation`]) holding each suspended run.
    pub(super) run_owner: Mutex<HashMap<String, u64>>,
    pub(super) projection: Arc<Projection>,
    pub(super) changed: Arc<Changed>,
    /// Catalog builds so far (1 after start; +1 per rebuild after `list_changed`).
    pub(super) generation: std::sync::atomic::AtomicU64,
    /// Upstreams that did not start: (name, why), in config order.
    pub(super) failed: Vec<(String, String)>,
    /// Warnings about the current catalog (truncated listings): (server, warning).
    pub(super) warnings: Mutex<Vec<(String, String)>>,
    /// Pass-through mode (Code Mode disabled): upstream tools as listed, under unique names.
    pub(super) passthrough: RwLock<Vec<PassThrough>>,
    /// The task rebuilding the catalog after `list_changed`.
    pub(super) rebuilder: Mutex<Option<tokio::task::JoinHandle<()>>>,
    /// The task restarting crashed upstreams.
    pub(super) supervisor: Mutex<Option<tokio::task::JoinHandle<()>>>,
    /// Restarts of crashed upstreams, by server.
    pub(super) restarts: Mutex<HashMap<String, Restarts>>,
}

impl Gateway {
    /// The current engine.
    pub fn engine(&self) -> Arc<Engine> {
        self.inner.engines.read().unwrap_or_else(|p| p.into_inner())[0].clone()
    }

    pub(super) fn engine_for_run(&self, run_id: &str) -> Arc<Engine> {
        let generation = self.inner.run_owner.lock().unwrap_or_else(|p| p.into_inner()).get(run_id).copied();
        let engines = self.inner.engines.read().unwrap_or_else(|p| p.into_inner());
        match generation {
            Some(id) => {
                engines.iter().find(|e| e.generation() == id).cloned().unwrap_or_else(|| engines[0].clone())
            }
            None => engines[0].clone(),
        }
    }

    /// Records which engine generation holds a waiting run (keeping that generation, even if a
    /// rebuild while the run was executing let it go), drops generations that hold no runs any
    /// more, and forgets runs no engine holds (finished, cancelled or expired), so the map stays
    /// as small as the run stores.
    pub(super) fn remember(&self, engine: &Arc<Engine>, result: &Value) {
        let engines = {
            let mut engines = self.inner.engines.write().unwrap_or_else(|p| p.into_inner());
            let waiting = result.get("status").and_then(Value::as_str) == Some("waiting");
            if waiting && !engines.iter().any(|e| e.generation() == engine.generation()) {
                engines.push(engine.clone());
            }
            keep_generations(&mut engines);
            engines.clone()
        };
        let mut owners = self.inner.run_owner.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(run_id) = result.get("runId").and_then(Value::as_str) {
            owners.insert(run_id.to_owned(), engine.generation());
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
        let failed: Vec<Value> =
            self.inner.failed.iter().map(|(name, error)| json!({ "name": name, "error": error })).collect();
        let warnings: Vec<Value> = self
            .inner
            .warnings
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .map(|(name, warning)| json!({ "name": name, "warning": warning }))
            .collect();
        json!({
            "catalogGeneration": self.inner.generation.load(std::sync::atomic::Ordering::Relaxed),
            "catalogGenerationsKept": self.inner.engines.read().unwrap_or_else(|p| p.into_inner()).len(),
            "catalogTools": engine.tools().len(),
            "suspendedRuns": self.suspended_runs(),
            "trackedRuns": self.inner.run_owner.lock().unwrap_or_else(|p| p.into_inner()).len(),
            "clients": self.inner.projection.client_count(),
            "upstreamCallsInFlight": self.inner.upstream.calls_in_flight(),
            "upstreams": {
                "running": running,
                "exited": exited,
                "failed": failed,
                "disabled": self.inner.config.disabled_servers,
                "servers": self.server_states(),
                "warnings": warnings,
            },
        })
    }

    /// Each configured upstream's transport, state (`running`, `reconnecting` while a remote one
    /// cannot be reached, `restarting`, `failed` to start or given up on, `disabled`) and
    /// restart count (`reconnects` for a remote one), in config order.
    fn server_states(&self) -> Vec<Value> {
        let inner = &self.inner;
        let (running, _) = inner.upstream.servers_by_state();
        let restarts = inner.restarts.lock().unwrap_or_else(|p| p.into_inner());
        let given_up = inner.upstream.given_up.read().unwrap_or_else(|p| p.into_inner());
        let mut out = Vec::new();
        for (name, command) in &inner.config.servers {
            let r = restarts.get(name);
            let link = inner.upstream.links.get(name);
            let unreachable = link.and_then(|l| l.unreachable());
            let mut error = None;
            let state = if let Some(why) = given_up.get(name) {
                error = Some(why.clone());
                "failed"
            } else if running.contains(name) && unreachable.is_some() {
                error = unreachable;
                "reconnecting"
            } else if running.contains(name) {
                "running"
            } else if let Some((_, why)) = inner.failed.iter().find(|(n, _)| n == name)
                && r.is_none()
            {
                error = Some(why.clone());
                "failed"
            } else if command.transport == UpstreamTransport::Stdio {
                "restarting"
            } else {
                "reconnecting"
            };
            let total = r.map_or(0, |r| r.total);
            let mut entry = json!({ "name": name, "transport": command.transport.as_str(), "state": state });
            if command.transport == UpstreamTransport::Stdio {
                entry["restarts"] = json!(total);
            } else {
                let sessions = link.map_or(0, |l| l.reconnects.load(std::sync::atomic::Ordering::SeqCst));
                entry["url"] = json!(super::remote::redact_url(command.url.as_deref().unwrap_or_default()));
                entry["reconnects"] = json!(total + sessions);
            }
            if let Some(error) = error {
                entry["error"] = json!(error);
            }
            out.push(entry);
        }
        for name in &inner.config.disabled_servers {
            out.push(json!({ "name": name, "state": "disabled" }));
        }
        out
    }

    /// Pings each Streamable HTTP server that cannot be reached, with backoff
    /// ([`RESTART_BACKOFF_FIRST`] doubling up to [`RESTART_BACKOFF_MAX`]). A server that restarted
    /// lost the session: rmcp initializes a new one, and the server's tools are listed again.
    pub(super) fn probe_unreachable(&self) {
        for (name, link) in &self.inner.upstream.links {
            if !link.probe_due() {
                continue;
            }
            let Ok(peer) = self.inner.upstream.peer(name) else {
                link.probe_done(false);
                continue;
            };
            let link = link.clone();
            tokio::spawn(async move {
                let ping = peer.send_request(rmcp::model::ClientRequest::PingRequest(Default::default()));
                let ok = matches!(tokio::time::timeout(PROBE_TIMEOUT, ping).await, Ok(Ok(_)));
                link.probe_done(ok);
            });
        }
    }

    /// Stops every upstream server (stdin closed, then SIGTERM, then kill), all at once.
    pub async fn shutdown(&self) {
        for task in [&self.inner.supervisor, &self.inner.rebuilder] {
            let task = task.lock().unwrap_or_else(|p| p.into_inner()).take();
            if let Some(task) = task {
                task.abort();
                let _ = task.await;
            }
        }
        let engines: Vec<Arc<Engine>> = self.inner.engines.read().unwrap_or_else(|p| p.into_inner()).clone();
        for engine in engines {
            engine.code_mode().shutdown();
        }
        let upstreams = std::mem::take(&mut *self.inner.upstreams.lock().await);
        futures::future::join_all(upstreams.into_iter().map(Upstream::stop)).await;
    }

    /// Client `client` calls tool `name`: exec and wait run in the client's scope (its runs are
    /// its own: a wait from another client fails as the spec says for another session's run).
    pub(super) async fn call(
        &self,
        client: &str,
        name: &str,
        arguments: Value,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let call_id = format!("mcp-{}", request_id_text(&context.id));
        let scope = RunScope::new(client, "gateway").with_call_id(call_id.clone());
        let abort = AbortSignal::new();
        let cancel = context.ct.clone();
        let watcher = {
            let abort = abort.clone();
            tokio::spawn(async move {
                cancel.cancelled().await;
                abort.abort();
            })
        };
        let projection = &self.inner.projection;
        let mut open = OpenCall::new(projection, client, &call_id, context.meta.get_progress_token());
        let mut end = RunEnd { projection, client, exec_call_id: None, run_id: None, armed: false };
        let result = match name {
            "exec" => {
                end.exec_call_id = Some(call_id.clone());
                end.armed = true;
                let engine = self.engine();
                let result = engine.exec(&scope, &arguments, abort).await;
                self.remember(&engine, &result);
                Ok(code_mode_result(result))
            }
            "wait" => {
                let run_id = arguments.get("runId").and_then(Value::as_str).unwrap_or_default().to_owned();
                let engine = self.engine_for_run(&run_id);
                open.continues(&run_id);
                end.run_id = Some(run_id.clone());
                end.armed = true;
                let result = engine.wait(&scope, &arguments, abort).await;
                self.remember(&engine, &result);
                Ok(code_mode_result(result))
            }
            other => self.call_direct(other, arguments).await,
        };
        watcher.abort();
        end.armed &= !result.as_ref().is_ok_and(|done| {
            done.structured_content.as_ref().and_then(|v| v.get("status")).and_then(Value::as_str)
                == Some("waiting")
        });
        drop(end);
        drop(open);
        // Every notification of this call goes out before its answer.
        self.inner.projection.flush(client).await;
        result
    }

    /// Client `client`'s session ended: its suspended runs are discarded (their nested calls
    /// cancelled) and it hears nothing more.
    pub(super) fn end_client(&self, client: &str) {
        let engines: Vec<Arc<Engine>> = self.inner.engines.read().unwrap_or_else(|p| p.into_inner()).clone();
        // Runs in a shared store belong to the client, not to this session: they stay for the
        // client's next session (on this replica or another).
        let runs: usize = if self.inner.config.run_store.is_some() {
            0
        } else {
            engines.iter().map(|e| e.code_mode().end_session(client)).sum()
        };
        self.inner.projection.detach(client);
        self.remember_none();
        tracing::info!(client, runs, "MCP session ended; its suspended runs are discarded");
    }

    /// Drops generations and run owners no run needs any more.
    fn remember_none(&self) {
        let engines = {
            let mut engines = self.inner.engines.write().unwrap_or_else(|p| p.into_inner());
            keep_generations(&mut engines);
            engines.clone()
        };
        let mut owners = self.inner.run_owner.lock().unwrap_or_else(|p| p.into_inner());
        owners.retain(|run_id, _| engines.iter().any(|e| e.code_mode().has_run(run_id)));
    }

    /// Client `client` is connected through `peer` (it hears `list_changed` from now on).
    pub(super) fn client_attach(&self, client: &str, peer: &Peer<RoleServer>) {
        self.inner.projection.attach(client, peer, false);
    }

    /// `logging/setLevel` from client `client`.
    #[allow(deprecated)] // SEP-2577: see the import.
    pub(super) fn client_set_level(
        &self,
        client: &str,
        peer: &Peer<RoleServer>,
        per_request: bool,
        request: SetLevelRequestParams,
    ) {
        self.inner.projection.attach(client, peer, per_request);
        let name = serde_json::to_value(request.level).ok().and_then(|v| v.as_str().map(str::to_owned));
        self.inner.projection.set_level(client, level_rank(name.as_deref().unwrap_or("debug")));
    }

    /// `tools/list` from client `client`.
    pub(super) fn client_list_tools(
        &self,
        client: &str,
        peer: &Peer<RoleServer>,
        per_request: bool,
    ) -> ListToolsResult {
        self.inner.projection.attach(client, peer, per_request);
        if !self.inner.config.code_mode.is_enabled() {
            let tools: Vec<Tool> = self
                .inner
                .passthrough
                .read()
                .unwrap_or_else(|p| p.into_inner())
                .iter()
                .filter_map(|t| serde_json::from_value(t.definition.clone()).ok())
                .collect();
            return ListToolsResult::with_all_items(tools);
        }
        let surface = self.engine().surface_json();
        let tools: Vec<Tool> = surface["tools"]
            .as_array()
            .map(|defs| defs.iter().filter_map(|d| serde_json::from_value(d.clone()).ok()).collect())
            .unwrap_or_default();
        ListToolsResult::with_all_items(tools)
    }

    /// `tools/call` from client `client`.
    pub(super) async fn client_call_tool(
        &self,
        client: &str,
        per_request: bool,
        request: CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        self.inner.projection.attach(client, &context.peer, per_request);
        let arguments = request.arguments.map(Value::Object).unwrap_or_else(|| Value::Object(Map::new()));
        self.call(client, &request.name, arguments, context).await.map(CallToolResponse::from)
    }

    /// A tool on the model surface other than exec/wait (direct-only, or everything when Code Mode
    /// is disabled): call it without Code Mode.
    pub(super) async fn call_direct(&self, name: &str, arguments: Value) -> Result<CallToolResult, McpError> {
        let routed = self
            .inner
            .passthrough
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .find(|t| t.name == name)
            .and_then(|t| t.upstream.clone());
        if let Some((server, tool)) = routed {
            let outcome = self.inner.upstream.call_tool(&server, &tool, arguments, None).await;
            return Ok(direct_result(outcome));
        }
        let engine = self.engine();
        let surface = engine.surface_json();
        let visible = surface["tools"].as_array().is_some_and(|t| t.iter().any(|d| d["name"] == name));
        let spec = engine.tools().iter().find(|t| t.name == name).cloned();
        let (true, Some(spec)) = (visible, spec) else {
            return Err(McpError::invalid_params(format!("unknown tool {name:?}"), None));
        };
        let id = engine.catalog_id(&spec);
        let host = engine.fixture_host();
        let outcome = match host.call_direct(&id, arguments.clone()).await {
            Some(answer) => answer,
            None => self.inner.upstream.call_tool(&spec.owner, &spec.name, arguments, None).await,
        };
        Ok(direct_result(outcome))
    }
}

/// The scope key of the one client on stdio (the `session_id` of its runs' scope).
pub(super) const STDIO_CLIENT: &str = "mcp";

/// A direct tool call's outcome as an MCP tool result.
fn direct_result(outcome: Result<codemode::ToolOutcome, codemode::ToolError>) -> CallToolResult {
    {
        match outcome {
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
        }
    }
}

/// A tool of the pass-through surface: its definition and, for an upstream's, where it goes.
pub(super) struct PassThrough {
    pub(super) name: String,
    pub(super) definition: Value,
    /// (server, the tool's own name) for upstream tools; None for the gateway's own.
    pub(super) upstream: Option<(String, String)>,
}

/// The pass-through surface: the gateway's own tools, then each upstream's definitions as listed
/// (config order). A name that occurs once is kept; every upstream tool whose name occurs more
/// than once becomes `<server>_<name>` (then `_2`, `_3`, ... if that is taken too), and its
/// definition is otherwise unchanged.
pub(super) fn passthrough(own: Vec<Value>, upstream: Vec<(String, String, Value)>) -> Vec<PassThrough> {
    let mut count: HashMap<String, usize> = HashMap::new();
    for name in
        own.iter().filter_map(|d| d["name"].as_str()).chain(upstream.iter().map(|(_, n, _)| n.as_str()))
    {
        *count.entry(name.to_owned()).or_default() += 1;
    }
    let mut out: Vec<PassThrough> = own
        .into_iter()
        .map(|definition| PassThrough {
            name: definition["name"].as_str().unwrap_or_default().to_owned(),
            definition,
            upstream: None,
        })
        .collect();
    let mut taken: std::collections::HashSet<String> = count.keys().cloned().collect();
    for (server, tool, mut definition) in upstream {
        let name = if count.get(&tool).copied().unwrap_or(0) > 1 {
            let base = format!("{server}_{tool}");
            let mut name = base.clone();
            let mut n = 1;
            while !taken.insert(name.clone()) {
                n += 1;
                name = format!("{base}_{n}");
            }
            definition["name"] = Value::String(name.clone());
            name
        } else {
            tool.clone()
        };
        out.push(PassThrough { name, definition, upstream: Some((server, tool)) });
    }
    out
}

pub(super) fn request_id_text(id: &rmcp::model::RequestId) -> String {
    match serde_json::to_value(id) {
        Ok(Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => "?".into(),
    }
}

pub(super) fn text_result(text: &str, is_error: bool) -> CallToolResult {
    serde_json::from_value(json!({ "content": [{ "type": "text", "text": text }], "isError": is_error }))
        .unwrap_or_else(|_| CallToolResult::success(Vec::new()))
}

/// exec/wait results: the result JSON as text and as structured content; `failed` sets `isError`.
pub(super) fn code_mode_result(result: Value) -> CallToolResult {
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
         (API.search(query) ranks the MCP tools, API.search(query, { server }) those of one server or a list; \
         call them as MCP.<server>.<tool>(input)); continue `waiting` runs with `wait`.",
    );
    if !server_list.is_empty() {
        text.push_str("\n\n");
        text.push_str(server_list);
    }
    text
}

impl ServerHandler for Gateway {
    #[allow(deprecated)] // `enable_logging`, SEP-2577: see the import.
    fn get_info(&self) -> ServerConfig {
        let instructions = if self.inner.config.code_mode.is_enabled() {
            gateway_instructions(&self.engine().code_mode().mcp_server_list())
        } else {
            "MCP gateway: the upstream servers' tools, listed and called directly (Code Mode is disabled)."
                .to_owned()
        };
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .enable_resources()
                .enable_logging()
                .build(),
        )
        .with_server_info(Implementation::new("codemode", env!("CARGO_PKG_VERSION")))
        .with_instructions(instructions)
    }

    #[allow(deprecated)] // SEP-2577: see the import.
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.client_set_level(STDIO_CLIENT, &context.peer, false, request);
        Ok(())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(self.client_list_tools(STDIO_CLIENT, &context.peer, false))
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
        self.client_call_tool(STDIO_CLIENT, false, request, &context).await
    }
}

/// Keeps the current generation and every older one that still holds a suspended run (at most
/// [`MAX_GENERATIONS`]).
pub(super) fn keep_generations(engines: &mut Vec<Arc<Engine>>) {
    let mut first = true;
    engines.retain(|engine| std::mem::take(&mut first) || engine.code_mode().run_count() > 0);
    if engines.len() > MAX_GENERATIONS {
        tracing::warn!(
            kept = MAX_GENERATIONS,
            "more catalog generations hold suspended runs than are kept; runs of the oldest expire"
        );
        engines.truncate(MAX_GENERATIONS);
    }
}
