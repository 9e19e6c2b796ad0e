//! Upstream MCP servers: starting them (bounded in time), listing them (bounded in size), routing
//! nested calls to them, and watching their list changes.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use codemode::{McpServer, McpTool, NestedCall, RunScope, ToolError, ToolHost, ToolOutcome, ToolSpec};
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotificationParam, ClientRequest,
    GetPromptRequestParams, JsonRpcMessage, PaginatedRequestParams, ProgressNotificationParam, ProgressToken,
    ReadResourceRequestParams, RequestId, ServerNotification, ServerResult, Tool,
};
use rmcp::service::{
    NotificationContext, PeerRequestOptions, RunningService, RxJsonRpcMessage, TxJsonRpcMessage,
};
use rmcp::transport::Transport;
use rmcp::{ClientHandler, Peer, RoleClient, ServiceExt};
use serde_json::Value;
use tokio::sync::Notify;

use super::child;
use super::config::*;
use super::projection::*;
use super::remote::{self, RemoteLink};
use super::wire;
use crate::fixture::{UpstreamCommand, UpstreamTransport};

/// Upstreams whose lists changed since the last rebuild, and the signal that wakes the rebuilder.
#[derive(Default)]
pub(super) struct Changed {
    pub(super) servers: Mutex<BTreeSet<String>>,
    pub(super) notify: Notify,
}

impl Changed {
    pub(super) fn mark(&self, server: &str) {
        self.servers.lock().unwrap_or_else(|p| p.into_inner()).insert(server.to_owned());
        self.notify.notify_one();
    }

    pub(super) fn take(&self) -> BTreeSet<String> {
        std::mem::take(&mut *self.servers.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Waits for a change, then for the burst to end (no change for [`LIST_CHANGED_DEBOUNCE`], or
    /// [`LIST_CHANGED_MAX_DELAY`] after the first).
    pub(super) async fn settled(&self) {
        self.notify.notified().await;
        let first = Instant::now();
        loop {
            let left = LIST_CHANGED_MAX_DELAY.saturating_sub(first.elapsed());
            if left.is_zero()
                || tokio::time::timeout(LIST_CHANGED_DEBOUNCE.min(left), self.notify.notified())
                    .await
                    .is_err()
            {
                return;
            }
        }
    }
}

/// Watches upstream notifications: list changes rebuild the catalog (progress is read by
/// [`ProgressTap`]).
#[derive(Clone)]
pub(super) struct UpstreamHandler {
    pub(super) name: String,
    pub(super) changed: Arc<Changed>,
}

impl ClientHandler for UpstreamHandler {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        tracing::info!(server = %self.name, "upstream tool list changed; rebuilding the catalog");
        self.changed.mark(&self.name);
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        tracing::info!(server = %self.name, "upstream resource list changed; rebuilding the catalog");
        self.changed.mark(&self.name);
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        tracing::info!(server = %self.name, "upstream prompt list changed; rebuilding the catalog");
        self.changed.mark(&self.name);
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
pub(super) struct ProgressTap<T> {
    pub(super) inner: T,
    pub(super) server: String,
    pub(super) projection: Arc<Projection>,
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

pub(super) type Client = RunningService<RoleClient, UpstreamHandler>;

/// One connected upstream server and what it lists.
pub(super) struct Upstream {
    pub(super) name: String,
    pub(super) client: Client,
    pub(super) child: Option<child::Child>,
    pub(super) described: Described,
    /// This server's start-up (and re-listing) time limit.
    pub(super) startup_timeout: Duration,
}

impl Upstream {
    /// Closes the connection (the child's stdin), then stops the process.
    pub(super) async fn stop(mut self) {
        let _ = self.client.cancel().await;
        if let Some(child) = &mut self.child {
            child.stop().await;
        }
    }
}

/// An upstream's listing as Code Mode metadata, and why it was truncated (if it was).
#[derive(Clone)]
pub(super) struct Described {
    pub(super) server: McpServer,
    pub(super) specs: Vec<ToolSpec>,
    pub(super) warnings: Vec<String>,
    /// The tool definitions exactly as the upstream listed them (pass-through mode shows these).
    pub(super) raw: Vec<Value>,
}

/// Routes nested calls with catalog id `mcp:<server>:<tool>` to the upstream server by exact name.
pub struct UpstreamHost {
    pub(super) peers: RwLock<HashMap<String, Peer<RoleClient>>>,
    pub(super) timeout: Duration,
    /// Per-server `timeoutMs`, overriding `timeout`.
    pub(super) timeouts: HashMap<String, Duration>,
    pub(super) projection: Arc<Projection>,
    /// Streamable HTTP servers' connection state, by server.
    pub(super) links: HashMap<String, Arc<RemoteLink>>,
    /// Servers the gateway stopped restarting, and why.
    pub(super) given_up: RwLock<HashMap<String, String>>,
}

impl std::fmt::Debug for UpstreamHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UpstreamHost").field("timeout", &self.timeout).finish_non_exhaustive()
    }
}

impl UpstreamHost {
    pub(super) fn peer(&self, server: &str) -> Result<Peer<RoleClient>, ToolError> {
        if let Some(why) = self.given_up.read().unwrap_or_else(|p| p.into_inner()).get(server) {
            return Err(ToolError::with_code(
                format!("MCP server {server:?} is unavailable: {why}"),
                "unavailable",
            ));
        }
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

    /// How long one request to `server` may take.
    pub(super) fn timeout_for(&self, server: &str) -> Duration {
        self.timeouts.get(server).copied().unwrap_or(self.timeout)
    }

    pub(super) fn is_closed(&self, server: &str) -> bool {
        self.peers
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(server)
            .is_some_and(|p| p.is_transport_closed())
    }

    pub(super) async fn bounded<T>(
        &self,
        server: &str,
        what: &str,
        future: impl std::future::Future<Output = Result<T, rmcp::ServiceError>>,
    ) -> Result<T, ToolError> {
        let answer = tokio::time::timeout(self.timeout_for(server), future).await;
        self.classify(server, what, answer)
    }

    pub(super) fn classify<T>(
        &self,
        server: &str,
        what: &str,
        answer: Result<Result<T, rmcp::ServiceError>, tokio::time::error::Elapsed>,
    ) -> Result<T, ToolError> {
        match answer {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(rmcp::ServiceError::McpError(e))) if !self.is_closed(server) => {
                tracing::warn!(server, what, error = %e.message, "upstream MCP call failed");
                Err(ToolError::with_code(
                    format!("MCP server {server:?} failed: {}", short(&e.message)),
                    "upstream_error",
                ))
            }
            Ok(Err(e)) if self.links.get(server).and_then(|l| l.unreachable()).is_some() => {
                let link = &self.links[server];
                let why = link.unreachable().unwrap_or_default();
                tracing::warn!(server, what, error = %e, "upstream MCP server cannot be reached");
                Err(ToolError::with_code(
                    format!(
                        "MCP server {server:?} cannot be reached at {} ({}); the gateway reconnects with backoff and \
                         its tools work again once it answers",
                        link.url,
                        short(&why)
                    ),
                    "unavailable",
                ))
            }
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
                let why = remote::error_text(&e);
                tracing::warn!(server, what, error = %why, "upstream MCP call failed");
                Err(ToolError::with_code(
                    format!("MCP server {server:?} failed: {}", short(&why)),
                    "upstream_error",
                ))
            }
            Err(_) => {
                tracing::warn!(
                    server,
                    what,
                    timeout_ms = self.timeout_for(server).as_millis() as u64,
                    "upstream MCP call timed out"
                );
                Err(ToolError::with_code(
                    format!(
                        "MCP server {server:?} did not answer within {} ms",
                        self.timeout_for(server).as_millis()
                    ),
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
        let answer = tokio::time::timeout(self.timeout_for(server), handle.await_response()).await;
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
            return Err(crate::host::mcp_tool_error(&content));
        }
        Ok(ToolOutcome::details(result.structured_content.unwrap_or(Value::Null)).with_content(content))
    }
}

pub(super) fn exited(server: &str) -> String {
    format!(
        "MCP server {server:?} exited or closed its connection; its tools are unavailable until the gateway \
         restarts it"
    )
}

/// Where an upstream call's progress goes: the client (scope key) whose run made it, the run and
/// the exec call.
#[derive(Clone, Debug)]
pub struct ProgressRoute {
    pub(super) client: String,
    pub(super) run_id: String,
    pub(super) parent_call_id: Option<String>,
    pub(super) catalog_id: String,
}

/// One upstream `tools/call` waiting for its answer.
pub(super) struct InFlight {
    pub(super) projection: Arc<Projection>,
    pub(super) key: (String, ProgressToken),
    pub(super) peer: Peer<RoleClient>,
    pub(super) id: RequestId,
    pub(super) settled: bool,
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

pub(super) fn short(text: &str) -> String {
    codemode_core::text::char_prefix(text, 500)
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
            client: call.scope.session_id.clone(),
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

pub(super) async fn connect(
    name: &str,
    command: &UpstreamCommand,
    changed: Arc<Changed>,
    projection: Arc<Projection>,
    link: Option<Arc<RemoteLink>>,
) -> Result<(Client, Option<child::Child>), String> {
    let handler = UpstreamHandler { name: name.to_owned(), changed };
    fn tap<T>(inner: T, server: &str, projection: &Arc<Projection>) -> ProgressTap<T> {
        ProgressTap { inner, server: server.to_owned(), projection: projection.clone() }
    }
    let url = command.url.as_deref().unwrap_or_default();
    match command.transport {
        UpstreamTransport::Http => {
            let link = link.unwrap_or_else(|| RemoteLink::new(name, url, Arc::new(Changed::default())));
            link.new_transport();
            let transport = remote::http_transport(url, &command.headers, link.clone())?;
            match handler.serve(tap(transport, name, &projection)).await {
                Ok(client) => Ok((client, None)),
                Err(e) => {
                    let why =
                        link.last_failure().unwrap_or_else(|| remote::scrub(&remote::error_text(&e), url));
                    Err(format!("initialize failed: {}", short(&why)))
                }
            }
        }
        UpstreamTransport::Sse => {
            let transport = super::sse::SseTransport::connect(name, url, &command.headers).await?;
            match handler.serve(tap(transport, name, &projection)).await {
                Ok(client) => Ok((client, None)),
                Err(e) => Err(format!("initialize failed: {}", short(&remote::error_text(&e)))),
            }
        }
        _ => {
            let (child, stdout, stdin) = child::Child::spawn(command)
                .map_err(|e| format!("cannot start {:?}: {e}", command.command))?;
            let transport = wire::ClientWire::new(name, stdout, stdin);
            match handler.serve(tap(transport, name, &projection)).await {
                Ok(client) => Ok((client, Some(child))),
                Err(e) => Err(format!("initialize failed: {}", short(&remote::error_text(&e)))),
            }
        }
    }
}

/// Starts one upstream: spawn, initialize, first listing, all within `timeout`. The error says
/// which step did not finish.
pub(super) async fn start_upstream(
    name: String,
    command: UpstreamCommand,
    timeout: Duration,
    changed: Arc<Changed>,
    projection: Arc<Projection>,
    link: Option<Arc<RemoteLink>>,
) -> Result<Upstream, String> {
    let step = Mutex::new("initialize");
    let work = async {
        let (client, child) = connect(&name, &command, changed, projection, link).await?;
        *step.lock().unwrap_or_else(|p| p.into_inner()) = "tools/list";
        let described = describe(&name, client.peer()).await;
        Ok(Upstream { name: name.clone(), client, child, described, startup_timeout: timeout })
    };
    match tokio::time::timeout(timeout, work).await {
        Ok(result) => result,
        Err(_) => Err(format!(
            "did not start within {} ms (no answer to {}); raise startupTimeoutMs if it is just slow",
            timeout.as_millis(),
            step.lock().unwrap_or_else(|p| p.into_inner())
        )),
    }
}

/// Lists an upstream's tools (bounded: [`MAX_LIST_PAGES`], [`MAX_TOOLS_PER_SERVER`],
/// [`MAX_LISTING_BYTES`]; past a bound the listing is truncated with a warning), and checks
/// whether it serves resources and prompts.
pub(super) async fn describe(name: &str, peer: &Peer<RoleClient>) -> Described {
    let info = peer.peer_info();
    let capabilities = info.as_ref().map(|i| serde_json::to_value(&i.capabilities).unwrap_or(Value::Null));
    let has = |key: &str| capabilities.as_ref().is_some_and(|c| c.get(key).is_some_and(|v| !v.is_null()));
    let mut warnings = Vec::new();
    let tools = match list_tools_bounded(peer).await {
        Ok((tools, truncated)) => {
            if let Some(why) = truncated {
                tracing::warn!(server = %name, "tools/list truncated: {why}");
                warnings.push(format!("tools/list truncated: {why}"));
            }
            tools
        }
        Err(e) => {
            tracing::warn!(server = %name, error = %e, "tools/list failed; the server contributes no tools");
            warnings.push(format!("tools/list failed: {}", short(&e.to_string())));
            Vec::new()
        }
    };
    let raw: Vec<Value> = tools.iter().filter_map(|t| serde_json::to_value(t).ok()).collect();
    let tools: Vec<McpTool> = raw.iter().filter_map(McpTool::from_value_lossy).collect();
    let mut server = McpServer::new(name.to_owned(), tools);
    // One page is enough to know the server serves them (the guest reads and lists them live).
    if has("resources") && peer.list_resources(None).await.is_ok() {
        server = server.with_resources();
    }
    if has("prompts") && peer.list_prompts(None).await.is_ok() {
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
    Described { server, specs, warnings, raw }
}

/// Reads `tools/list` page by page within the listing bounds. The second value says why the
/// listing was cut short, if it was.
pub(super) async fn list_tools_bounded(
    peer: &Peer<RoleClient>,
) -> Result<(Vec<Tool>, Option<String>), rmcp::ServiceError> {
    let mut tools = Vec::new();
    let mut bytes = 0usize;
    let mut cursor: Option<String> = None;
    let mut seen = HashSet::new();
    for pages in 0.. {
        if pages == MAX_LIST_PAGES {
            let why =
                format!("it has more than {MAX_LIST_PAGES} pages; kept the first {} tools", tools.len());
            return Ok((tools, Some(why)));
        }
        let params = cursor.take().map(|c| PaginatedRequestParams::default().with_cursor(Some(c)));
        let page = peer.list_tools(params).await?;
        for tool in page.tools {
            if tools.len() == MAX_TOOLS_PER_SERVER {
                let why = format!(
                    "it lists more than {MAX_TOOLS_PER_SERVER} tools; kept the first {MAX_TOOLS_PER_SERVER}"
                );
                return Ok((tools, Some(why)));
            }
            let size = serde_json::to_vec(&tool).map_or(0, |v| v.len());
            if bytes + size > MAX_LISTING_BYTES {
                let why = format!(
                    "its tool definitions exceed {} MiB; kept the first {} tools",
                    MAX_LISTING_BYTES >> 20,
                    tools.len()
                );
                return Ok((tools, Some(why)));
            }
            bytes += size;
            tools.push(tool);
        }
        match page.next_cursor {
            None => break,
            Some(next) if !seen.insert(next.clone()) => {
                let why = format!(
                    "it repeated the cursor {:?}; kept the first {} tools",
                    short(&next),
                    tools.len()
                );
                return Ok((tools, Some(why)));
            }
            Some(next) => cursor = Some(next),
        }
    }
    Ok((tools, None))
}
