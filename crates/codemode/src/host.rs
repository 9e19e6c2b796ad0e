//! What the embedding host provides: [`ToolHost`] executes nested calls (policy, approvals and hooks
//! are the host's), [`EventSink`] receives the nested-call projection for transcripts and trajectories.

use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;

/// Who is running a cell. Every `wait` must come from the same session and agent run as the `exec`
/// that suspended; nested calls carry this scope to the host.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RunScope {
    /// The agent id, when the host has one.
    pub agent_id: Option<String>,
    /// The session id (required to scope suspended runs).
    pub session_id: String,
    /// The session key, when the host has one.
    pub session_key: Option<String>,
    /// The agent run (turn) id.
    pub agent_run_id: String,
    /// The id of the model's `exec`/`wait` tool call; nested calls are projected under it.
    pub call_id: Option<String>,
    /// Host-forced restart safety: every run in this scope is restart-safe whatever the model sends
    /// (`restartSafe: false` cannot clear it). Default: `false`.
    pub restart_safe: bool,
}

impl RunScope {
    /// A scope for `session_id` and `agent_run_id`.
    pub fn new(session_id: impl Into<String>, agent_run_id: impl Into<String>) -> RunScope {
        RunScope { session_id: session_id.into(), agent_run_id: agent_run_id.into(), ..RunScope::default() }
    }

    /// The same scope with the model's tool-call id set.
    pub fn with_call_id(mut self, call_id: impl Into<String>) -> RunScope {
        self.call_id = Some(call_id.into());
        self
    }

    /// The same scope with an agent id.
    pub fn with_agent(mut self, agent_id: impl Into<String>) -> RunScope {
        self.agent_id = Some(agent_id.into());
        self
    }

    /// The same scope with a session key.
    pub fn with_session_key(mut self, session_key: impl Into<String>) -> RunScope {
        self.session_key = Some(session_key.into());
        self
    }

    /// The same scope with host-forced restart safety (see [`RunScope::restart_safe`]).
    pub fn with_restart_safe(mut self) -> RunScope {
        self.restart_safe = true;
        self
    }
}

/// One nested tool call, handed to [`ToolHost::call`] after input validation.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct NestedCall {
    /// The scope of the run making the call.
    pub scope: RunScope,
    /// The Code Mode run id (stable across waits).
    pub run_id: String,
    /// The id of the model's `exec` call that started the run (kept across resumes).
    pub parent_call_id: Option<String>,
    /// Host-unique id of this nested call.
    pub call_id: String,
    /// Exact catalog id, e.g. `openclaw:core:message` or `mcp:github:create_issue`.
    pub catalog_id: String,
    /// The input, validated against the tool's input schema.
    pub input: Value,
    /// The run is restart-safe: the host must refuse side-effecting work it knows of by policy.
    pub restart_safe: bool,
}

/// A successful tool result.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct ToolOutcome {
    /// The structured `details` value (what `tools.callValue` returns).
    pub details: Value,
    /// Raw result blocks (e.g. MCP `content`), returned by `tools.call` in `{ tool, result }`.
    pub content: Option<Value>,
}

impl ToolOutcome {
    /// An outcome with `details` only.
    pub fn details(details: Value) -> ToolOutcome {
        ToolOutcome { details, content: None }
    }

    /// The same outcome with raw content.
    pub fn with_content(mut self, content: Value) -> ToolOutcome {
        self.content = Some(content);
        self
    }
}

/// A failed tool call. The guest receives a plain `Error` with the (sanitized) message and code.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
#[non_exhaustive]
pub struct ToolError {
    /// What went wrong, safe to show to the model (no secrets, no host paths).
    pub message: String,
    /// A short machine code, e.g. `denied`, `not_found`.
    pub code: Option<String>,
}

impl ToolError {
    /// An error with a message.
    pub fn new(message: impl Into<String>) -> ToolError {
        ToolError { message: message.into(), code: None }
    }

    /// An error with a message and a code.
    pub fn with_code(message: impl Into<String>, code: impl Into<String>) -> ToolError {
        ToolError { message: message.into(), code: Some(code.into()) }
    }

    /// A policy denial (`code: "denied"`).
    pub fn denied(message: impl Into<String>) -> ToolError {
        ToolError::with_code(message, "denied")
    }
}

/// Executes nested calls. Policy, approvals and hooks are the host's; a call may take as long as it
/// likes (an approval is just a slow call): past the exec deadline the run suspends and `wait` picks
/// the result up.
///
/// A call's future is first polled on the thread that runs the guest (a VM thread, or the caller's
/// thread with `GuestThread::Caller`), inside the tokio runtime's context: one that is ready at
/// once is delivered without a task or a thread hand-off; one that is pending is then spawned on
/// the runtime. So do blocking work after an `.await` (or in `spawn_blocking`), not before the
/// first one.
///
/// A call whose future panics fails with the catchable guest error "the tool host failed while
/// running this call (it panicked)" (code `internal_error`); the run and the runtime go on.
#[async_trait]
pub trait ToolHost: Send + Sync + 'static {
    /// Runs the catalog tool `call.catalog_id` (core, plugin, MCP or client).
    async fn call(&self, call: NestedCall) -> Result<ToolOutcome, ToolError>;

    /// Host policy on side effects, consulted for restart-safe runs before a call runs: `Some(true)`
    /// when the tool `catalog_id` has side effects, `Some(false)` when it is replay-safe, `None` to
    /// go by the tool's trusted `readOnlyHint` annotation (MCP and client annotations are never
    /// trusted). Default: `None`.
    fn is_side_effecting(&self, catalog_id: &str) -> Option<bool> {
        let _ = catalog_id;
        None
    }

    /// `MCP.<server>.resources.read({ uri })`. Default: unsupported.
    async fn read_resource(&self, scope: &RunScope, server: &str, uri: &str) -> Result<Value, ToolError> {
        let _ = (scope, uri);
        Err(ToolError::with_code(
            format!("MCP server {server:?} does not serve resources here"),
            "unsupported",
        ))
    }

    /// `MCP.<server>.prompts.get({ name, arguments })`. Default: unsupported.
    async fn get_prompt(
        &self,
        scope: &RunScope,
        server: &str,
        name: &str,
        arguments: &Value,
    ) -> Result<Value, ToolError> {
        let _ = (scope, name, arguments);
        Err(ToolError::with_code(format!("MCP server {server:?} does not serve prompts here"), "unsupported"))
    }
}

/// Nested-call projection for transcripts and trajectories. Events never carry secrets; inputs are
/// included only as the host's trajectory policy allows (the host decides what to keep).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum CodeModeEvent {
    /// A nested call was dispatched.
    NestedCallStarted {
        /// The run's scope.
        scope: RunScope,
        /// Code Mode run id.
        run_id: String,
        /// The parent `exec` call id.
        parent_call_id: Option<String>,
        /// Nested call id.
        call_id: String,
        /// Exact catalog id.
        catalog_id: String,
        /// The validated input.
        input: Value,
    },
    /// A nested call finished.
    NestedCallFinished {
        /// The run's scope.
        scope: RunScope,
        /// Code Mode run id.
        run_id: String,
        /// The parent `exec` call id.
        parent_call_id: Option<String>,
        /// Nested call id.
        call_id: String,
        /// Exact catalog id.
        catalog_id: String,
        /// Whether it succeeded.
        ok: bool,
        /// The error message (sanitized) when it failed.
        error: Option<String>,
        /// How long it took.
        duration: Duration,
    },
}

/// Receives [`CodeModeEvent`]s.
pub trait EventSink: Send + Sync + 'static {
    /// Called for each event, in order per run.
    fn emit(&self, event: CodeModeEvent);
}

/// An [`EventSink`] that drops everything.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoEvents;

impl EventSink for NoEvents {
    fn emit(&self, _event: CodeModeEvent) {}
}

impl<F: Fn(CodeModeEvent) + Send + Sync + 'static> EventSink for F {
    fn emit(&self, event: CodeModeEvent) {
        self(event)
    }
}
