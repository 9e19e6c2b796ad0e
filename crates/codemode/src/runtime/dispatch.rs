//! Serving the guest's requests: catalog search and describe, `API.search`, and nested tool calls
//! (catalog, namespace and MCP) checked, dispatched to the host and shaped for the guest.

use std::time::Instant;

use codemode_bridge::{DeliveryExt, DeliveryLimits, HostRequest, call_envelope, decode_request};
use codemode_core::hint::{HintOptions, input_hint, output_hint};
use codemode_core::{PendingToolCall, ToolSource, ToolSpec};
use codemode_mcp::HeaderOptions;
use codemode_sandbox::{Delivery, HostCall};
use serde_json::{Map, Value, json};

use super::CodeMode;
use crate::host::{CodeModeEvent, NestedCall, ToolError, ToolOutcome};
use crate::run::RunState;
use crate::schema::{self, Direction};
use crate::store::shared;

/// What a dispatched request became.
pub(super) enum Handled {
    Ready(Delivery),
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

/// Starts a nested call's work: polled once right here, so a host that answers at once (a fixture,
/// a cache, an in-process tool) costs no task switch and its reply is delivered with this step's
/// other ready replies ([`Handled::Ready`], except in a restart-safe run); spawned, with its abort handle kept in the run, only
/// if it has to wait (its reply then lands in the run's mailbox).
fn start_task(
    run: &mut RunState,
    runtime: &tokio::runtime::Handle,
    vm_id: u32,
    work: impl std::future::Future<Output = Delivery> + Send + 'static,
) -> Handled {
    let mut work = Box::pin(work);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    if let std::task::Poll::Ready(reply) = work.as_mut().poll(&mut cx) {
        if run.restart_safe {
            // Never delivered within this call: every continuation of a restart-safe run is a
            // `wait`, which finds the reply in the mailbox.
            let _ = run.tx.send((vm_id, reply));
            return Handled::Async;
        }
        return Handled::Ready(reply);
    }
    let tx = run.tx.clone();
    let task = runtime.spawn(async move {
        let reply = work.await;
        let _ = tx.send((vm_id, reply));
    });
    run.tasks.insert(vm_id, task.abort_handle());
    Handled::Async
}

impl CodeMode {
    /// Decodes and serves one guest request.
    pub(super) fn dispatch(&self, run: &mut RunState, call: HostCall) -> Handled {
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
                Handled::Ready(Delivery::value(&serde_json::to_value(hits).unwrap_or(Value::Null), &limits))
            }
            HostRequest::ApiSearch { query, limit } => {
                run.counts.search += 1;
                let limit = inner.config.search_limit(limit.map(|l| l as f64));
                Handled::Ready(Delivery::value(&self.api_search(&query, limit), &limits))
            }
            HostRequest::Describe { id } => {
                run.counts.describe += 1;
                match inner.catalog.describe(&id) {
                    Ok(described) => Handled::Ready(Delivery::value(
                        &serde_json::to_value(described).unwrap_or(Value::Null),
                        &limits,
                    )),
                    Err(e) => Handled::Ready(Delivery::reject(e.to_string(), Some("unknown_tool"))),
                }
            }
            HostRequest::Call { id, input } => self.call_guest_tool(run, call.id, id, input, Shape::Envelope),
            HostRequest::CallValue { id, input } => {
                self.call_guest_tool(run, call.id, id, input, Shape::Value)
            }
            HostRequest::Namespace { namespace, path, args } => {
                run.counts.call += 1;
                let resolved = match run.namespaces.resolve(&namespace, &path) {
                    Ok(resolved) => resolved,
                    Err(message) => return Handled::Ready(Delivery::reject(message, Some("invalid_input"))),
                };
                let input = resolved.marker.map_input(&args);
                let tool_name = resolved.marker.tool_name.clone();
                let catalog_id =
                    run.namespace_tools.get(&namespace).and_then(|tools| tools.get(&tool_name)).cloned();
                match catalog_id {
                    Some(catalog_id) => self.start_tool(run, call.id, catalog_id, input, Shape::Value),
                    None => Handled::Ready(Delivery::reject(
                        "namespace call: undeclared tool",
                        Some("invalid_input"),
                    )),
                }
            }
            HostRequest::Mcp { server, tool, input } => {
                run.counts.call += 1;
                let resolved =
                    inner.mcp.as_ref().and_then(|api| api.resolve(&server, &tool)).map(|r| r.catalog_id);
                match resolved.and_then(|id| inner.catalog.spec(&id).map(|spec| (id, spec))) {
                    Some((catalog_id, spec)) => {
                        self.start_spec(run, call.id, catalog_id, spec, Value::Object(input), Shape::Mcp)
                    }
                    None => Handled::Ready(Delivery::reject(
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
                    return Handled::Ready(Delivery::reject(
                        "no MCP servers are available in this run",
                        Some("unknown_tool"),
                    ));
                };
                let options = if schema { HeaderOptions::with_schema() } else { HeaderOptions::default() };
                match api.header(&server, tool.as_deref(), &options) {
                    Ok(header) => Handled::Ready(Delivery::value(&header.to_json(), &limits)),
                    Err(e) => Handled::Ready(Delivery::reject(e.to_string(), Some("unknown_tool"))),
                }
            }
            HostRequest::ResourcesRead { server, input } => {
                let Some(uri) = input.get("uri").and_then(Value::as_str).map(str::to_owned) else {
                    return Handled::Ready(Delivery::reject(
                        format!("MCP.{}.resources.read: `uri` must be a string", cut(&server)),
                        Some("invalid_input"),
                    ));
                };
                self.start_mcp_extra(run, call.id, server, McpExtra::Resource { uri })
            }
            HostRequest::PromptsGet { server, input } => {
                let Some(name) = input.get("name").and_then(Value::as_str).map(str::to_owned) else {
                    return Handled::Ready(Delivery::reject(
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
            _ => Handled::Ready(Delivery::reject(
                "code mode bridge: unsupported request",
                Some("invalid_input"),
            )),
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
        let Some(spec) = self.inner.catalog.spec(&catalog_id) else {
            return Handled::Ready(Delivery::reject(
                format!("unknown tool id {:?}", cut(&catalog_id)),
                Some("unknown_tool"),
            ));
        };
        self.start_spec(run, vm_id, catalog_id, spec, input, shape)
    }

    /// `tools.call` / `tools.callValue`: one catalog lookup decides whether the guest may call
    /// `id` (an unknown or MCP id is refused with the catalog's message) and finds its spec.
    fn call_guest_tool(
        &self,
        run: &mut RunState,
        vm_id: u32,
        id: String,
        input: Option<Value>,
        shape: Shape,
    ) -> Handled {
        run.counts.call += 1;
        match self.inner.catalog.guest_spec(&id) {
            Ok(spec) => self.start_spec(run, vm_id, id, spec, input.unwrap_or_else(empty_object), shape),
            Err(e) => Handled::Ready(Delivery::reject(e.to_string(), Some("unknown_tool"))),
        }
    }

    /// [`start_tool`](Self::start_tool) for a tool whose spec the caller already looked up.
    fn start_spec(
        &self,
        run: &mut RunState,
        vm_id: u32,
        catalog_id: String,
        spec: &ToolSpec,
        input: Value,
        shape: Shape,
    ) -> Handled {
        let inner = &self.inner;
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
                return Handled::Ready(Delivery::reject(
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
                    return Handled::Ready(Delivery::reject(
                        format!("invalid input for {catalog_id}: {problems}"),
                        Some("invalid_input"),
                    ));
                }
            }
            Err(reason) if trusted => {
                return Handled::Ready(Delivery::reject(
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
            return Handled::Ready(Delivery::reject(
                format!("{catalog_id} cannot run: its declared output schema is invalid ({reason})"),
                Some("invalid_schema"),
            ));
        }
        let Some(host) = inner.host.clone() else {
            return Handled::Ready(Delivery::reject("no tool host is configured", Some("unavailable")));
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return Handled::Ready(Delivery::reject(
                "no async runtime to run the tool on",
                Some("unavailable"),
            ));
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
        run.in_flight
            .insert(vm_id, PendingToolCall::new(call_id, catalog_id.clone(), Some(nested.input.clone())));
        run.shapes.insert(vm_id, shape.code());
        let this = self.clone();
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
            reply
        })
    }

    /// Dispatches in-flight call `vm_id` of `run` again (its process stopped; the run is
    /// restart-safe, so the call is read-only). `Some` when it settled at once.
    pub(crate) fn redispatch(&self, run: &mut RunState, vm_id: u32) -> Option<Delivery> {
        let pending = run.in_flight.remove(&vm_id)?;
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
        let (Some(host), Ok(runtime)) = (inner.host.clone(), tokio::runtime::Handle::try_current()) else {
            return Handled::Ready(Delivery::reject("no tool host is configured", Some("unavailable")));
        };
        run.next_call += 1;
        let call_id = format!("{}.{}", run.run_id, run.next_call);
        let tool_id = match &extra {
            McpExtra::Resource { .. } => format!("mcp:{server_name}:resources/read"),
            McpExtra::Prompt { .. } => format!("mcp:{server_name}:prompts/get"),
        };
        run.in_flight.insert(vm_id, PendingToolCall::new(call_id, tool_id, None));
        let scope = run.scope.clone();
        let semaphore = run.semaphore.clone();
        start_task(run, &runtime, vm_id, async move {
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
        })
    }
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
