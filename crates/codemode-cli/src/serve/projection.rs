//! Projection of Code Mode events to the MCP clients: nested-call events as log messages and
//! progress notifications under the exec or wait call they belong to, each sent to the client
//! whose session scope ran it (one client on stdio; one per MCP session over HTTP).

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Instant;

use codemode::{CodeModeEvent, EventSink};
// MCP logging is deprecated by SEP-2577, but it is what clients show today (nested-call projection).
#[allow(deprecated)]
use rmcp::model::LoggingMessageNotificationParam;
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::{Peer, RoleServer};
use serde_json::{Value, json};

use super::upstream::*;

/// What the MCP clients hear besides answers: nested-call events as `notifications/message`
/// (logger `codemode`) and, when the exec or wait call carried a progress token, progress
/// notifications (one per nested-call event and per upstream progress notification).
///
/// Every client is known by its scope key, the `session_id` of the [`RunScope`](codemode::RunScope)
/// its runs get (`mcp` on stdio, the principal's scope over HTTP). Events carry their run's scope,
/// so each goes to the client that owns the run and to no other. A client's messages go through
/// one queue drained by one task, so it sees progress values in order.
#[derive(Default)]
pub(super) struct Projection {
    /// The connected clients, by scope key.
    pub(super) clients: Mutex<HashMap<String, ClientOut>>,
    /// Client progress token and the last progress value sent, by (client, gateway call id).
    pub(super) progress: Mutex<HashMap<(String, String), (ProgressToken, u32)>>,
    /// The `wait` call currently continuing a run, by (client, run id).
    pub(super) waits: Mutex<HashMap<(String, String), String>>,
    /// Routes of upstream calls in flight, by server and the upstream progress token.
    pub(super) routes: Mutex<HashMap<(String, ProgressToken), ProgressRoute>>,
    /// Nested calls started and not finished, by call id, so a run that ends without finishing
    /// them (cancelled, aborted, timed out) still reports each as finished.
    pub(super) open_nested: Mutex<HashMap<String, OpenNested>>,
}

/// One client: its connection and what it asked to hear.
pub(super) struct ClientOut {
    pub(super) peer: Peer<RoleServer>,
    outbox: tokio::sync::mpsc::UnboundedSender<Outgoing>,
    /// The client's `logging/setLevel` as a severity rank (0 = debug, the default: everything).
    min_level: AtomicU8,
}

/// A nested call the client heard start and not yet finish.
pub(super) struct OpenNested {
    client: String,
    run_id: String,
    parent_call_id: Option<String>,
    catalog_id: String,
    started: Instant,
}

/// Nested calls tracked as open at most (runs abandoned without ending are forgotten oldest first).
const MAX_OPEN_NESTED: usize = 4096;

/// The severity rank of the projection's own log messages (`info`).
const INFO: u8 = 1;

/// The severity rank of an MCP logging level name (`debug` 0 ... `emergency` 7).
pub(super) fn level_rank(level: &str) -> u8 {
    let levels = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];
    levels.iter().position(|l| *l == level).unwrap_or(0) as u8
}

#[allow(deprecated)] // `Log` carries the SEP-2577-deprecated logging type: see the import.
pub(super) enum Outgoing {
    Log(LoggingMessageNotificationParam),
    Progress(ProgressNotificationParam),
    /// Answered once everything queued before it was handed to the client's connection.
    Flush(tokio::sync::oneshot::Sender<()>),
}

impl Projection {
    /// Remembers client `client` (its first request) and starts the task that sends to it. With
    /// `replace`, a different connection replaces the one known (a client without a session:
    /// every request has its own).
    #[allow(deprecated)] // `notify_logging_message`, SEP-2577: see the import.
    pub(super) fn attach(&self, client: &str, peer: &Peer<RoleServer>, replace: bool) {
        let mut clients = self.clients.lock().unwrap_or_else(|p| p.into_inner());
        let level = match clients.get(client) {
            Some(_) if !replace => return,
            Some(known) => known.min_level.load(Ordering::Relaxed),
            None => 0,
        };
        let (sender, mut queue) = tokio::sync::mpsc::unbounded_channel();
        let task_peer = peer.clone();
        tokio::spawn(async move {
            let peer = task_peer;
            while let Some(message) = queue.recv().await {
                let _ = match message {
                    Outgoing::Log(log) => peer.notify_logging_message(log).await,
                    Outgoing::Progress(progress) => peer.notify_progress(progress).await,
                    Outgoing::Flush(done) => {
                        let _ = done.send(());
                        Ok(())
                    }
                };
            }
        });
        let out = ClientOut { peer: peer.clone(), outbox: sender, min_level: AtomicU8::new(level) };
        clients.insert(client.to_owned(), out);
    }

    /// Forgets client `client` (its session ended): its queue ends once drained, and nested calls
    /// of its runs are no longer tracked.
    pub(super) fn detach(&self, client: &str) {
        let removed = self.clients.lock().unwrap_or_else(|p| p.into_inner()).remove(client);
        drop(removed);
        self.open_nested.lock().unwrap_or_else(|p| p.into_inner()).retain(|_, c| c.client != client);
    }

    /// Clients known (connected sessions, or the stdio client).
    pub(super) fn client_count(&self) -> usize {
        self.clients.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// Every known client's connection (to tell each that the tool list changed).
    pub(super) fn peers(&self) -> Vec<Peer<RoleServer>> {
        self.clients.lock().unwrap_or_else(|p| p.into_inner()).values().map(|c| c.peer.clone()).collect()
    }

    /// Client `client`'s `logging/setLevel` (a severity rank, see [`level_rank`]).
    pub(super) fn set_level(&self, client: &str, rank: u8) {
        if let Some(out) = self.clients.lock().unwrap_or_else(|p| p.into_inner()).get(client) {
            out.min_level.store(rank, Ordering::Relaxed);
        }
    }

    /// Queues for client `client` (the run's owner) an optional log message, then a progress
    /// notification for work of `run_id` (started under `parent_call_id`) if a call of that client
    /// with a progress token is open for it: the exec call if it still is, else the wait
    /// continuing the run. The progress value is assigned and queued under one lock, so values
    /// reach the client in increasing order.
    #[allow(deprecated)] // a logging message, SEP-2577: see the import.
    pub(super) fn send(
        &self,
        client: &str,
        run_id: &str,
        parent_call_id: Option<&str>,
        log: Option<Value>,
        message: String,
    ) {
        let clients = self.clients.lock().unwrap_or_else(|p| p.into_inner());
        let Some(out) = clients.get(client) else { return };
        let outbox = &out.outbox;
        if let Some(data) = log
            && INFO >= out.min_level.load(Ordering::Relaxed)
            && let Ok(log) = serde_json::from_value::<LoggingMessageNotificationParam>(
                json!({ "level": "info", "logger": "codemode", "data": data }),
            )
        {
            let _ = outbox.send(Outgoing::Log(log));
        }
        let mut progress = self.progress.lock().unwrap_or_else(|p| p.into_inner());
        let wait = self
            .waits
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&(client.to_owned(), run_id.to_owned()))
            .cloned();
        let exec = parent_call_id.map(|p| (client.to_owned(), p.to_owned()));
        let key = exec.filter(|k| progress.contains_key(k)).or(wait.map(|w| (client.to_owned(), w)));
        let Some((token, n)) = key.and_then(|k| progress.get_mut(&k)) else { return };
        *n += 1;
        if let Ok(param) = serde_json::from_value::<ProgressNotificationParam>(
            json!({ "progressToken": token, "progress": *n, "message": message }),
        ) {
            let _ = outbox.send(Outgoing::Progress(param));
        }
    }

    /// Waits until every notification queued so far for client `client` was handed to its
    /// connection, so a call's notifications go out before its answer.
    pub(super) async fn flush(&self, client: &str) {
        let (done, flushed) = tokio::sync::oneshot::channel();
        let sent = self
            .clients
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(client)
            .is_some_and(|out| out.outbox.send(Outgoing::Flush(done)).is_ok());
        if sent {
            let _ = flushed.await;
        }
    }

    /// A run of client `client` has ended (`run_id`, or the run the exec call `parent_call_id`
    /// started): reports every nested call of it still open as finished (failed).
    pub(super) fn run_ended(&self, client: &str, run_id: Option<&str>, parent_call_id: Option<&str>) {
        let ended: Vec<(String, OpenNested)> = {
            let mut open = self.open_nested.lock().unwrap_or_else(|p| p.into_inner());
            let ids: Vec<String> = open
                .iter()
                .filter(|(_, c)| {
                    c.client == client
                        && (Some(c.run_id.as_str()) == run_id
                            || (parent_call_id.is_some() && c.parent_call_id.as_deref() == parent_call_id))
                })
                .map(|(id, _)| id.clone())
                .collect();
            ids.into_iter().filter_map(|id| open.remove(&id).map(|c| (id, c))).collect()
        };
        for (call_id, call) in ended {
            let error = "cancelled: the run ended before the call finished";
            let data = json!({ "event": "nestedCallFinished", "runId": call.run_id, "parentCallId": call.parent_call_id,
                "callId": call_id, "toolId": call.catalog_id, "ok": false, "error": error,
                "durationMs": call.started.elapsed().as_millis() as u64 });
            let message = format!("{} cancelled", call.catalog_id);
            self.send(&call.client, &call.run_id, call.parent_call_id.as_deref(), Some(data), message);
        }
    }

    fn track(&self, event: &CodeModeEvent) {
        let mut open = self.open_nested.lock().unwrap_or_else(|p| p.into_inner());
        match event {
            CodeModeEvent::NestedCallStarted {
                scope, run_id, parent_call_id, call_id, catalog_id, ..
            } => {
                if open.len() >= MAX_OPEN_NESTED
                    && let Some(oldest) = open.iter().min_by_key(|(_, c)| c.started).map(|(id, _)| id.clone())
                {
                    open.remove(&oldest);
                }
                open.insert(
                    call_id.clone(),
                    OpenNested {
                        client: scope.session_id.clone(),
                        run_id: run_id.clone(),
                        parent_call_id: parent_call_id.clone(),
                        catalog_id: catalog_id.clone(),
                        started: Instant::now(),
                    },
                );
            }
            CodeModeEvent::NestedCallFinished { call_id, .. } => {
                open.remove(call_id);
            }
            _ => {}
        }
    }

    pub(super) fn upstream_progress(&self, server: &str, params: ProgressNotificationParam) {
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
        self.send(&route.client, &route.run_id, route.parent_call_id.as_deref(), None, message);
    }
}

impl EventSink for Projection {
    fn emit(&self, event: CodeModeEvent) {
        self.track(&event);
        let (scope, data, run_id, parent, message) = match &event {
            CodeModeEvent::NestedCallStarted {
                scope, run_id, parent_call_id, call_id, catalog_id, ..
            } => (
                scope,
                json!({ "event": "nestedCallStarted", "runId": run_id, "parentCallId": parent_call_id, "callId": call_id, "toolId": catalog_id }),
                run_id,
                parent_call_id,
                format!("calling {catalog_id}"),
            ),
            CodeModeEvent::NestedCallFinished {
                scope,
                run_id,
                parent_call_id,
                call_id,
                catalog_id,
                ok,
                error,
                duration,
                ..
            } => (
                scope,
                json!({ "event": "nestedCallFinished", "runId": run_id, "parentCallId": parent_call_id, "callId": call_id, "toolId": catalog_id, "ok": ok, "error": error, "durationMs": duration.as_millis() as u64 }),
                run_id,
                parent_call_id,
                format!("{catalog_id} {}", if *ok { "finished" } else { "failed" }),
            ),
            _ => return,
        };
        self.send(&scope.session_id, run_id, parent.as_deref(), Some(data), message);
    }
}

/// A client call open on the gateway, as the projection knows it: its client, its progress
/// token (if the request carried one) and, for `wait`, the run it continues (whose progress then
/// goes to it; only a run of the same client is ever routed to it). Unregistered when the call
/// ends, even if its future is dropped.
pub(super) struct OpenCall<'a> {
    pub(super) projection: &'a Projection,
    pub(super) client: String,
    pub(super) call_id: String,
    pub(super) run_id: Option<String>,
}

impl<'a> OpenCall<'a> {
    pub(super) fn new(
        projection: &'a Projection,
        client: &str,
        call_id: &str,
        token: Option<ProgressToken>,
    ) -> OpenCall<'a> {
        if let Some(token) = token {
            projection
                .progress
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert((client.to_owned(), call_id.to_owned()), (token, 0));
        }
        OpenCall { projection, client: client.to_owned(), call_id: call_id.to_owned(), run_id: None }
    }

    /// This call continues `run_id` (a `wait`).
    pub(super) fn continues(&mut self, run_id: &str) {
        let mut waits = self.projection.waits.lock().unwrap_or_else(|p| p.into_inner());
        waits.insert((self.client.clone(), run_id.to_owned()), self.call_id.clone());
        self.run_id = Some(run_id.to_owned());
    }
}

impl Drop for OpenCall<'_> {
    fn drop(&mut self) {
        let key = (self.client.clone(), self.call_id.clone());
        self.projection.progress.lock().unwrap_or_else(|p| p.into_inner()).remove(&key);
        if let Some(run_id) = &self.run_id {
            let mut waits = self.projection.waits.lock().unwrap_or_else(|p| p.into_inner());
            let key = (self.client.clone(), run_id.clone());
            if waits.get(&key) == Some(&self.call_id) {
                waits.remove(&key);
            }
        }
    }
}

/// Reports the nested calls of a run still open as finished when the client call that ran it ends
/// without the run waiting (completed, failed, aborted, or the call's future dropped on cancel).
pub(super) struct RunEnd<'a> {
    pub(super) projection: &'a Projection,
    /// The client whose call ran it.
    pub(super) client: &'a str,
    /// The exec call id (its run's nested calls carry it as parent).
    pub(super) exec_call_id: Option<String>,
    /// The run a `wait` continues.
    pub(super) run_id: Option<String>,
    /// False once the run is known to be waiting (its calls go on).
    pub(super) armed: bool,
}

impl Drop for RunEnd<'_> {
    fn drop(&mut self) {
        if self.armed {
            self.projection.run_ended(self.client, self.run_id.as_deref(), self.exec_call_id.as_deref());
        }
    }
}
