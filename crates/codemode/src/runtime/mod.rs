//! [`CodeMode`]: the runtime of one effective tool set. Building it and its base image is
//! [`build`], driving `exec`/`wait` (pump, suspend, resume) is [`drive`], serving the guest's
//! nested calls is [`dispatch`] (on the async side) and [`respond`] (on the guest's own thread),
//! and shaping results and telemetry is [`report`].

mod build;
mod dispatch;
pub(crate) mod drive;
mod report;
mod respond;

use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use codemode_catalog::{Catalog, NamespaceRegistry};
use codemode_core::{CodeModeConfig, ToolSpec};
use codemode_mcp::McpApi;
use codemode_sandbox::Sandbox;

use crate::admission::Admission;
use crate::host::{EventSink, ToolHost};
use crate::schema::Validators;
use crate::store::local::RunStore as LocalRuns;
use crate::store::shared::Shared;

pub use build::{CodeModeBuilder, SandboxFactory};
pub(crate) use respond::{Outcome, Responder};

pub(crate) struct Inner {
    pub config: CodeModeConfig,
    pub tools: Vec<ToolSpec>,
    pub catalog: Catalog,
    pub host: Option<Arc<dyn ToolHost>>,
    /// Where nested-call events go (`None`: nowhere, and they are not even built).
    pub events: Option<Arc<dyn EventSink>>,
    pub namespaces: NamespaceRegistry,
    pub mcp: Option<McpApi>,
    /// The sandbox whose base image holds this catalog's guest API (runs add their namespaces).
    pub sandbox: Result<Sandbox, String>,
    /// `sandbox` extended with the namespaces of a run that has none (its base image shares every
    /// other page with `sandbox`'s): such a run evaluates no boot script. `None` without a
    /// sandbox, or if it could not be made (runs then boot their empty namespaces themselves).
    pub without_namespaces: Option<Sandbox>,
    pub validators: Validators,
    pub store: LocalRuns,
    /// The shared run store, when one is configured (then `store` stays empty).
    pub shared: Option<Arc<Shared>>,
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
            .field("enabled", &self.inner.config.is_enabled())
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

    /// Bytes of this runtime's base image (the guest API of its catalog, booted once; every fresh VM
    /// starts from it), or 0 without a sandbox.
    pub fn base_image_bytes(&self) -> usize {
        let own = self.inner.without_namespaces.as_ref().map_or(0, Sandbox::base_image_own_bytes);
        self.inner.sandbox.as_ref().map_or(0, Sandbox::base_image_bytes) + own
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
}
