//! Serving the guest's requests: catalog search and describe, `API.search`, and nested tool calls
//! (catalog, namespace and MCP) checked, dispatched to the host and shaped for the guest.
//! The pump serves here ([`CodeMode::dispatch`]); the common requests are first offered to the
//! run's [`Responder`](super::respond::Responder) on the guest's own thread, which shares the
//! checks and the tool start below.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Instant;

use codemode_bridge::{DeliveryExt, DeliveryLimits, HostRequest, call_envelope, decode_request};
use codemode_core::hint::{HintOptions, input_hint, output_hint};
use codemode_core::{PendingToolCall, ToolSource, ToolSpec};
use codemode_mcp::HeaderOptions;
use codemode_sandbox::{Delivery, HostCall};
use serde_json::{Map, Value, json};
use tokio::sync::Semaphore;

use super::CodeMode;
use crate::host::{CodeModeEvent, NestedCall, RunScope, ToolError, ToolOutcome};
use crate::run::{Counters, RunState};
use crate::schema::{self, Direction};
use crate::store::shared;

/// What a dispatched request became.
pub(super) enum Handled {
    Ready(Delivery),
    Async,
    Yield,
    Fatal(String),
}

/// A nested call's host work, ending in the reply for the guest.
pub(super) type Work = Pin<Box<dyn Future<Output = Delivery> + Send>>;

/// The shape a tool result is delivered in.
#[derive(Clone, Copy)]
pub(super) enum Shape {
    /// `tools.callValue`, convenience names, namespaces: `details`.
    Value,
    /// `tools.call`: `{ tool, result: { content, details } }`.
    Envelope,
    /// `MCP.<server>.<tool>`: the MCP result.
    Mcp,
}

impl Shape {
    pub(super) fn code(self) -> u8 {
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

/// What a nested call needs of its run: borrowed from the [`RunState`] by the pump, from the
/// [`Responder`] on the guest's thread.
pub(super) struct Site<'a> {
    pub run_id: &'a str,
    pub scope: &'a RunScope,
    pub parent_call_id: &'a Option<String>,
    pub restart_safe: bool,
    pub semaphore: &'a Arc<Semaphore>,
    pub counts: &'a Counters,
}

impl RunState {
    fn site(&self) -> Site<'_> {
        Site {
            run_id: &self.run_id,
            scope: &self.scope,
            parent_call_id: &self.parent_call_id,
            restart_safe: self.restart_safe,
            semaphore: &self.semaphore,
            counts: &self.counts,
        }
    }
}

/// A checked tool call: refused, or its host work (not polled yet) and what the run lists of it
/// while it is pending.
pub(super) enum Prepared {
    Refused(Delivery),
    Work { pending: PendingToolCall, work: Work },
}

/// Polls `work` once (no task switch, no waker): a host that answers at once (a fixture, a cache,
/// an in-process tool) is done here.
pub(super) fn poll_once(work: Work) -> Result<Delivery, Work> {
    let mut work = Caught(work);
    match Pin::new(&mut work).poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(reply) => Ok(reply),
        Poll::Pending => Err(work.0),
    }
}

/// A nested call's work with its panics caught: a host that panics fails that call (the guest
/// gets a catchable error), instead of taking the thread that polled it (a VM thread, or the
/// caller's task) down with it.
struct Caught(Work);

impl Future for Caught {
    type Output = Delivery;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Delivery> {
        let work = &mut self.0;
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work.as_mut().poll(cx))) {
            Ok(poll) => poll,
            Err(_) => Poll::Ready(Delivery::reject(
                "the tool host failed while running this call (it panicked)",
                Some("internal_error"),
            )),
        }
    }
}

impl CodeMode {
    /// Decodes and serves one guest request.
    pub(super) fn dispatch(&self, run: &mut RunState, call: HostCall) -> Handled {
        match decode_request(&call.payload) {
            Ok(request) => self.serve(run, call.id, request),
            Err(e) if e.is_fatal() => Handled::Fatal(e.to_string()),
            Err(e) => Handled::Ready(e.reply()),
        }
    }

    /// Serves one decoded guest request (call `call_id`).
    pub(super) fn serve(&self, run: &mut RunState, call_id: u32, request: HostRequest) -> Handled {
        let request = match self.lookup(&run.counts, request) {
            Ok(reply) => return Handled::Ready(reply),
            Err(request) => request,
        };
        let request = match self.prepare_call(&run.site(), request) {
            Ok(prepared) => return launch(run, call_id, prepared),
            Err(request) => request,
        };
        match request {
            HostRequest::Namespace { namespace, path, args } => {
                run.counts.called();
                let resolved = match run.namespaces.resolve(&namespace, &path) {
                    Ok(resolved) => resolved,
                    Err(message) => return Handled::Ready(Delivery::reject(message, Some("invalid_input"))),
                };
                let input = resolved.marker.map_input(&args);
                let tool_name = resolved.marker.tool_name.clone();
                let catalog_id =
                    run.namespace_tools.get(&namespace).and_then(|tools| tools.get(&tool_name)).cloned();
                match catalog_id {
                    Some(catalog_id) => {
                        let prepared = self.prepare_tool(&run.site(), catalog_id, input, Shape::Value);
                        launch(run, call_id, prepared)
                    }
                    None => Handled::Ready(Delivery::reject(
                        "namespace call: undeclared tool",
                        Some("invalid_input"),
                    )),
                }
            }
            HostRequest::ResourcesRead { server, input } => {
                let Some(uri) = input.get("uri").and_then(Value::as_str).map(str::to_owned) else {
                    return Handled::Ready(Delivery::reject(
                        format!("MCP.{}.resources.read: `uri` must be a string", cut(&server)),
                        Some("invalid_input"),
                    ));
                };
                self.start_mcp_extra(run, call_id, server, McpExtra::Resource { uri })
            }
            HostRequest::PromptsGet { server, input } => {
                let Some(name) = input.get("name").and_then(Value::as_str).map(str::to_owned) else {
                    return Handled::Ready(Delivery::reject(
                        format!("MCP.{}.prompts.get: `name` must be a string", cut(&server)),
                        Some("invalid_input"),
                    ));
                };
                let arguments = input.get("arguments").cloned().unwrap_or_else(empty_object);
                self.start_mcp_extra(run, call_id, server, McpExtra::Prompt { name, arguments })
            }
            HostRequest::Yield { .. } => {
                run.yields.push(call_id);
                Handled::Yield
            }
            _ => Handled::Ready(Delivery::reject(
                "code mode bridge: unsupported request",
                Some("invalid_input"),
            )),
        }
    }

    /// Checks the tool calls that need nothing of the run but its [`Site`] (catalog tools and MCP
    /// tools); `Err` gives any other request back.
    pub(super) fn prepare_call(
        &self,
        site: &Site<'_>,
        request: HostRequest,
    ) -> Result<(Prepared, Shape), HostRequest> {
        match request {
            HostRequest::Call { id, input } => Ok(self.prepare_guest_tool(site, id, input, Shape::Envelope)),
            HostRequest::CallValue { id, input } => {
                Ok(self.prepare_guest_tool(site, id, input, Shape::Value))
            }
            HostRequest::Mcp { server, tool, input } => Ok(self.prepare_mcp(site, &server, &tool, input)),
            other => Err(other),
        }
    }

    /// Serves the requests that only read the catalog (search, describe, `API.search`, `$api`),
    /// counting them; `Err` gives any other request back.
    pub(super) fn lookup(&self, counts: &Counters, request: HostRequest) -> Result<Delivery, HostRequest> {
        let inner = &self.inner;
        let limits = DeliveryLimits::default();
        match request {
            HostRequest::Search { query, limit } => {
                counts.searched();
                let hits = inner.catalog.search_with_config(&query, limit.map(|l| l as f64), &inner.config);
                Ok(Delivery::value(&serde_json::to_value(hits).unwrap_or(Value::Null), &limits))
            }
            HostRequest::ApiSearch { query, limit, servers } => {
                counts.searched();
                let limit = inner.config.search_limit(limit.map(|l| l as f64));
                Ok(match self.api_search(&query, limit, &servers) {
                    Ok(hits) => Delivery::value(&hits, &limits),
                    Err(message) => Delivery::reject(message, Some("unknown_tool")),
                })
            }
            HostRequest::Describe { id } => {
                counts.described();
                Ok(match inner.catalog.describe(&id) {
                    Ok(described) => {
                        Delivery::value(&serde_json::to_value(described).unwrap_or(Value::Null), &limits)
                    }
                    Err(e) => Delivery::reject(e.to_string(), Some("unknown_tool")),
                })
            }
            HostRequest::McpApi { server, tool, schema } => {
                let Some(api) = &inner.mcp else {
                    return Ok(Delivery::reject(
                        "no MCP servers are available in this run",
                        Some("unknown_tool"),
                    ));
                };
                let options = if schema { HeaderOptions::with_schema() } else { HeaderOptions::default() };
                Ok(match api.header(&server, tool.as_deref(), &options) {
                    Ok(header) => Delivery::value(&header.to_json(), &limits),
                    Err(e) => Delivery::reject(e.to_string(), Some("unknown_tool")),
                })
            }
            other => Err(other),
        }
    }

    /// `API.search(query, { limit, server })`: the run's MCP tools ranked by the catalog's engine,
    /// each as `{ server, tool, call, id, description, input, output?, score, match }` with bounded
    /// hints and the guest's identifiers (what `MCP.<server>.<tool>` takes); only the tools of
    /// `servers` when it names any (identifiers as in `MCP.<server>`, or exact server names). `[]`
    /// when no MCP tool is visible; a message naming the servers when one of `servers` is none.
    fn api_search(&self, query: &str, limit: usize, servers: &[String]) -> Result<Value, String> {
        let inner = &self.inner;
        let Some(api) = &inner.mcp else {
            return if servers.is_empty() {
                Ok(Value::Array(Vec::new()))
            } else {
                Err("API.search: no MCP servers are available in this run".to_owned())
            };
        };
        let table = api.server_table();
        let mut names: Vec<&str> = Vec::with_capacity(servers.len());
        for server in servers {
            let name = table.name(server).or_else(|| table.ident(server).map(|_| server.as_str()));
            let Some(name) = name else { return Err(unknown_search_server(server, table)) };
            names.push(name);
        }
        let input_options = HintOptions::input();
        let output_options = HintOptions::output();
        let hits = inner.catalog.search_mcp_in(query, limit, &names);
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
                codemode_core::text::truncate_chars(&spec.description, API_SEARCH_DESCRIPTION_CHARS).into(),
            );
            entry.insert("input".into(), input_hint(&spec.parameters, &input_options).into());
            if let Some(output) = spec.output_schema.as_ref().and_then(|o| output_hint(o, &output_options)) {
                entry.insert("output".into(), output.into());
            }
            entry.insert("score".into(), hit.score.into());
            entry.insert("match".into(), hit.matched.into());
            out.push(Value::Object(entry));
        }
        Ok(Value::Array(out))
    }

    /// Checks a catalog tool call (catalog, namespace or MCP) by catalog id.
    fn prepare_tool(
        &self,
        site: &Site<'_>,
        catalog_id: String,
        input: Value,
        shape: Shape,
    ) -> (Prepared, Shape) {
        let Some(spec) = self.inner.catalog.spec(&catalog_id) else {
            let reply =
                Delivery::reject(format!("unknown tool id {:?}", cut(&catalog_id)), Some("unknown_tool"));
            return (Prepared::Refused(reply), shape);
        };
        (self.prepare_spec(site, catalog_id, spec, input, shape), shape)
    }

    /// `tools.call` / `tools.callValue`: one catalog lookup decides whether the guest may call
    /// `id` (an unknown or MCP id is refused with the catalog's message) and finds its spec.
    fn prepare_guest_tool(
        &self,
        site: &Site<'_>,
        id: String,
        input: Option<Value>,
        shape: Shape,
    ) -> (Prepared, Shape) {
        site.counts.called();
        let prepared = match self.inner.catalog.guest_spec(&id) {
            Ok(spec) => self.prepare_spec(site, id, spec, input.unwrap_or_else(empty_object), shape),
            Err(e) => Prepared::Refused(Delivery::reject(e.to_string(), Some("unknown_tool"))),
        };
        (prepared, shape)
    }

    /// `MCP.<server>.<tool>(input)`.
    fn prepare_mcp(
        &self,
        site: &Site<'_>,
        server: &str,
        tool: &str,
        input: Map<String, Value>,
    ) -> (Prepared, Shape) {
        let inner = &self.inner;
        site.counts.called();
        let resolved = inner.mcp.as_ref().and_then(|api| api.resolve(server, tool)).map(|r| r.catalog_id);
        let prepared = match resolved.and_then(|id| inner.catalog.spec(&id).map(|spec| (id, spec))) {
            Some((catalog_id, spec)) => {
                self.prepare_spec(site, catalog_id, spec, Value::Object(input), Shape::Mcp)
            }
            None => Prepared::Refused(Delivery::reject(
                format!(
                    "MCP.{}.{} is not available in this run; see API.list(\"mcp\")",
                    cut(server),
                    cut(tool)
                ),
                Some("unknown_tool"),
            )),
        };
        (prepared, Shape::Mcp)
    }

    /// Checks a tool call whose spec the caller already looked up (restart-safety, input and
    /// declared output schemas, a host) and numbers it; its host work is not polled yet.
    fn prepare_spec(
        &self,
        site: &Site<'_>,
        catalog_id: String,
        spec: &ToolSpec,
        input: Value,
        shape: Shape,
    ) -> Prepared {
        let inner = &self.inner;
        let trusted = spec.origin.is_trusted();
        if site.restart_safe {
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
                return Prepared::Refused(Delivery::reject(
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
                    return Prepared::Refused(Delivery::reject(
                        format!("invalid input for {catalog_id}: {problems}"),
                        Some("invalid_input"),
                    ));
                }
            }
            Err(reason) if trusted => {
                return Prepared::Refused(Delivery::reject(
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
            return Prepared::Refused(Delivery::reject(
                format!("{catalog_id} cannot run: its declared output schema is invalid ({reason})"),
                Some("invalid_schema"),
            ));
        }
        let Some(host) = inner.host.clone() else {
            return Prepared::Refused(Delivery::reject("no tool host is configured", Some("unavailable")));
        };
        let call_id = format!("{}.{}", site.run_id, site.counts.number_call());
        let nested = NestedCall {
            scope: site.scope.clone(),
            run_id: site.run_id.to_owned(),
            parent_call_id: site.parent_call_id.clone(),
            call_id: call_id.clone(),
            catalog_id: catalog_id.clone(),
            input,
            restart_safe: site.restart_safe,
        };
        let pending = PendingToolCall::new(call_id, catalog_id.clone(), Some(nested.input.clone()));
        let this = self.clone();
        let semaphore = site.semaphore.clone();
        let work = Box::pin(async move {
            let _permit = semaphore.acquire_owned().await;
            let Some(events) = &this.inner.events else {
                return this.finish_tool(&catalog_id, shape, host.call(nested).await).0;
            };
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
            reply
        });
        Prepared::Work { pending, work }
    }

    /// Dispatches in-flight call `vm_id` of `run` again (its process stopped; the run is
    /// restart-safe, so the call is read-only). `Some` when it settled at once.
    pub(crate) fn redispatch(&self, run: &mut RunState, vm_id: u32) -> Option<Delivery> {
        let pending = run.in_flight.remove(&vm_id)?;
        let Some(shape) = run.shapes.get(&vm_id).copied().and_then(Shape::from_code) else {
            return Some(shared::interrupted_reply());
        };
        let input = pending.input.unwrap_or_else(empty_object);
        let prepared = self.prepare_tool(&run.site(), pending.tool_id, input, shape);
        match launch(run, vm_id, prepared) {
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
    ) -> (Delivery, Option<String>) {
        let limits = DeliveryLimits::default();
        let outcome = match result {
            Ok(outcome) => outcome,
            Err(e) => {
                let message = codemode_bridge::sanitize_error(&e.message);
                return (Delivery::reject(message.clone(), e.code.as_deref()), Some(message));
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
            return (Delivery::reject(message.clone(), Some("output_schema_mismatch")), Some(message));
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
        (Delivery::value(&value, &limits), None)
    }

    /// `MCP.<server>.resources.read` / `prompts.get`, served by the host.
    fn start_mcp_extra(&self, run: &mut RunState, vm_id: u32, server: String, extra: McpExtra) -> Handled {
        let inner = &self.inner;
        if run.restart_safe {
            return Handled::Ready(Delivery::reject(
                "MCP requests are refused in restart-safe runs (restartSafe)",
                Some("restart_safe"),
            ));
        }
        let Some(server_name) =
            inner.mcp.as_ref().and_then(|api| api.server_table().name(&server)).map(str::to_owned)
        else {
            return Handled::Ready(Delivery::reject(
                format!("MCP server {:?} is not available", cut(&server)),
                Some("unknown_tool"),
            ));
        };
        let Some(host) = inner.host.clone() else {
            return Handled::Ready(Delivery::reject("no tool host is configured", Some("unavailable")));
        };
        let call_id = format!("{}.{}", run.run_id, run.counts.number_call());
        let tool_id = match &extra {
            McpExtra::Resource { .. } => format!("mcp:{server_name}:resources/read"),
            McpExtra::Prompt { .. } => format!("mcp:{server_name}:prompts/get"),
        };
        run.in_flight.insert(vm_id, PendingToolCall::new(call_id, tool_id, None));
        let scope = run.scope.clone();
        let semaphore = run.semaphore.clone();
        let work: Work = Box::pin(async move {
            let _permit = semaphore.acquire_owned().await;
            let result = match extra {
                McpExtra::Resource { uri } => host.read_resource(&scope, &server_name, &uri).await,
                McpExtra::Prompt { name, arguments } => {
                    host.get_prompt(&scope, &server_name, &name, &arguments).await
                }
            };
            match result {
                Ok(value) => Delivery::value(&value, &DeliveryLimits::default()),
                Err(e) => Delivery::reject_sanitized(&e.message, e.code.as_deref()),
            }
        });
        start(run, vm_id, work)
    }
}

/// Starts a prepared tool call of the pump: its pending entry and shape are recorded, then
/// [`start`].
fn launch(run: &mut RunState, vm_id: u32, (prepared, shape): (Prepared, Shape)) -> Handled {
    match prepared {
        Prepared::Refused(reply) => Handled::Ready(reply),
        Prepared::Work { pending, work } => {
            track(run, vm_id, pending, shape);
            start(run, vm_id, work)
        }
    }
}

/// Lists a tool call as pending in the run, with the shape of its result (for `waiting` results
/// and a dispatch again from a shared store).
pub(super) fn track(run: &mut RunState, vm_id: u32, pending: PendingToolCall, shape: Shape) {
    run.in_flight.insert(vm_id, pending);
    run.shapes.insert(vm_id, shape.code());
}

/// Starts a nested call's work: polled once right here, so a host that answers at once costs no
/// task switch and its reply is delivered with this step's other ready replies
/// ([`Handled::Ready`], except in a restart-safe run); spawned, with its abort handle kept in the
/// run, only if it has to wait (its reply then lands in the run's mailbox).
fn start(run: &mut RunState, vm_id: u32, work: Work) -> Handled {
    match poll_once(work) {
        Ok(reply) if run.restart_safe => {
            // Never delivered within this call: every continuation of a restart-safe run is a
            // `wait`, which finds the reply in the mailbox.
            let _ = run.tx.send((vm_id, reply));
            Handled::Async
        }
        Ok(reply) => Handled::Ready(reply),
        Err(work) => spawn(run, vm_id, work),
    }
}

/// Spawns a nested call's work on the runtime; its reply lands in the run's mailbox.
pub(super) fn spawn(run: &mut RunState, vm_id: u32, work: Work) -> Handled {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        run.in_flight.remove(&vm_id);
        run.shapes.remove(&vm_id);
        return Handled::Ready(Delivery::reject("no async runtime to run the tool on", Some("unavailable")));
    };
    let tx = run.tx.clone();
    let task = runtime.spawn(async move {
        let reply = Caught(work).await;
        let _ = tx.send((vm_id, reply));
    });
    run.tasks.insert(vm_id, task.abort_handle());
    Handled::Async
}

enum McpExtra {
    Resource { uri: String },
    Prompt { name: String, arguments: Value },
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

/// Most server identifiers an unknown `API.search` server's message lists.
const LISTED_SEARCH_SERVERS: usize = 24;

/// Why `API.search(query, { server })` cannot search `server`: the run has no such server; the
/// message names the closest identifier when one is near and lists the servers it has (their
/// identifiers, at most [`LISTED_SEARCH_SERVERS`]).
fn unknown_search_server(server: &str, table: &codemode_mcp::NameTable) -> String {
    let idents: Vec<&str> = table.entries().map(|(ident, _)| ident).collect();
    let hint = codemode_core::suggest::closest(server, &idents)
        .map(|ident| format!(" did you mean {ident}?"))
        .unwrap_or_default();
    let listed = idents.iter().take(LISTED_SEARCH_SERVERS).copied().collect::<Vec<_>>().join(", ");
    let more = match idents.len().saturating_sub(LISTED_SEARCH_SERVERS) {
        0 => String::new(),
        n => format!(" and {n} more (API.read(\"mcp/index.d.ts\") lists them)"),
    };
    format!(
        "API.search: no MCP server {:?} in this run;{hint} Servers: {listed}{more}",
        codemode_core::text::truncate_chars(server, 120)
    )
}
