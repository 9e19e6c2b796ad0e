//! [`CodeMode`]: the runtime of one effective tool set. Building it and its base image is
//! [`build`], driving `exec`/`wait` (pump, suspend, resume) is [`drive`], serving the guest's
//! nested calls is [`dispatch`], and shaping results and telemetry is [`report`].

mod build;
mod dispatch;
mod drive;
mod report;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use codemode_catalog::{Catalog, NamespaceRegistry};
use codemode_core::{CodeModeConfig, ToolSpec};
use codemode_mcp::McpApi;
use codemode_sandbox::Sandbox;

use crate::admission::Admission;
use crate::host::{EventSink, ToolHost};
use crate::schema::Validators;
use crate::store::RunStore;

pub use build::{CodeModeBuilder, SandboxFactory};

static TS_TRANSFORMS: AtomicU64 = AtomicU64::new(0);

#[doc(hidden)]
/// How many TypeScript cells this process has transformed (JavaScript cells and disabled Code Mode
/// never reach the transformer).
pub fn typescript_transform_count() -> u64 {
    TS_TRANSFORMS.load(Ordering::Relaxed)
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
    pub store: RunStore,
    pub visible_tools: Vec<String>,
    pub next_run: AtomicU64,
    pub salt: u64,
    pub admission: Admission,
    pub guest_thread: crate::vm::GuestThread,
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

impl CodeMode {
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

    /// Suspended runs in the store (parked or being resumed).
    pub fn run_count(&self) -> usize {
        self.inner.store.len()
    }

    /// Whether `run_id` is a suspended run in the store (parked or being resumed, not expired).
    pub fn has_run(&self, run_id: &str) -> bool {
        self.inner.store.contains(run_id)
    }

    /// Cancels a suspended run: its snapshot is discarded and its nested calls are cancelled.
    /// Returns whether a parked run was found.
    pub fn cancel(&self, run_id: &str) -> bool {
        self.inner.store.cancel(run_id)
    }

    /// Discards every run of a session (session end). Returns how many were removed.
    pub fn end_session(&self, session_id: &str) -> usize {
        self.inner.store.end_session(session_id)
    }

    /// Discards every run (process shutdown). Returns how many were removed.
    pub fn shutdown(&self) -> usize {
        self.inner.store.clear()
    }
}
