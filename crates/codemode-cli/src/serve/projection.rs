//! Projection of Code Mode events to the MCP client: nested-call events as log messages and
//! progress notifications under the exec or wait call they belong to.

use std::collections::HashMap;
use std::sync::Mutex;

use codemode::{CodeModeEvent, EventSink};
use rmcp::model::{LoggingMessageNotificationParam, ProgressNotificationParam, ProgressToken};
use rmcp::{Peer, RoleServer};
use serde_json::{Value, json};

use super::upstream::*;

/// What the MCP client hears besides answers: nested-call events as `notifications/message`
/// (logger `codemode`) and, when the exec or wait call carried a progress token, progress
/// notifications (one per nested-call event and per upstream progress notification). Everything
/// goes through one queue drained by one task, so the client sees progress values in order.
#[derive(Default)]
pub(super) struct Projection {
    pub(super) peer: Mutex<Option<Peer<RoleServer>>>,
    pub(super) outbox: Mutex<Option<tokio::sync::mpsc::UnboundedSender<Outgoing>>>,
    /// Client progress token and the last progress value sent, by gateway call id.
    pub(super) progress: Mutex<HashMap<String, (ProgressToken, u32)>>,
    /// The `wait` call currently continuing a run, by run id.
    pub(super) waits: Mutex<HashMap<String, String>>,
    /// Routes of upstream calls in flight, by server and the upstream progress token.
    pub(super) routes: Mutex<HashMap<(String, ProgressToken), ProgressRoute>>,
}

pub(super) enum Outgoing {
    Log(LoggingMessageNotificationParam),
    Progress(ProgressNotificationParam),
}

impl Projection {
    /// Remembers the client (first request) and starts the task that sends to it.
    pub(super) fn attach(&self, peer: &Peer<RoleServer>) {
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
    pub(super) fn send(
        &self,
        run_id: &str,
        parent_call_id: Option<&str>,
        log: Option<Value>,
        message: String,
    ) {
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

/// A client call open on the gateway, as the projection knows it: its progress token (if the
/// request carried one) and, for `wait`, the run it continues (whose progress then goes to it).
/// Unregistered when the call ends, even if its future is dropped.
pub(super) struct OpenCall<'a> {
    pub(super) projection: &'a Projection,
    pub(super) call_id: String,
    pub(super) run_id: Option<String>,
}

impl<'a> OpenCall<'a> {
    pub(super) fn new(
        projection: &'a Projection,
        call_id: &str,
        token: Option<ProgressToken>,
    ) -> OpenCall<'a> {
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
    pub(super) fn continues(&mut self, run_id: &str) {
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
