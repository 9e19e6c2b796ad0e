//! Code Mode for LLM agent runtimes: the model sees two tools, `exec` and `wait`, and writes a short
//! JavaScript or TypeScript program that searches, describes and calls a hidden tool catalog inside
//! a QuickJS guest (wasm32-wasip1 in wasmtime).
//!
//! This is the crate embedders depend on. It composes the vocabulary ([`codemode_core`]: the items an embedder
//! needs are re-exported by name),
//! the catalog, the TypeScript stripper, the MCP declaration files, the bridge protocol and the
//! sandbox, and adds:
//!
//! - **activation and the model surface** ([`CodeMode::model_surface`], [`ModelSurface`],
//!   [`CodeMode::check_provider_payload`], [`exec_hook_metadata`]);
//! - **the exec/wait engine** ([`CodeMode::exec`], [`CodeMode::wait`]): each call drives its VM on a
//!   dedicated thread; nested calls run on the async runtime, in parallel up to
//!   `maxPendingToolCalls`, validated against their schemas; a deadline with calls pending (or
//!   `yield_control`) snapshots the VM and returns `waiting`;
//! - **the run store**: in-process by default, TTL `snapshotTtlSeconds`, at most
//!   [`store::MAX_SUSPENDED_RUNS`] suspended runs, scoped to session and agent run; or a shared
//!   [`store::RunStore`] ([`store::MemoryRunStore`], [`store::FileRunStore`], `store::RedisRunStore`
//!   with the `redis` feature) that several runtimes and processes continue each other's runs
//!   through ([`store`]);
//! - **admission**: a process-wide budget of VMs and guest memory ([`Admission`]; defaults in
//!   [`AdmissionLimits`]) with a bounded queue; past it `exec`/`wait` fail `runtime_unavailable`
//!   with a "busy, retry" message;
//! - **host integration**: [`ToolHost`] runs nested calls (policy, approvals and hooks are the
//!   host's), [`EventSink`] receives the nested-call projection.
//!
//! ```no_run
//! use std::sync::Arc;
//! use async_trait::async_trait;
//! use codemode::{CodeMode, CodeModeConfig, ExecInput, NestedCall, RunOptions, RunScope, ToolError, ToolHost,
//!                ToolOutcome, ToolSpec};
//! use serde_json::json;
//!
//! struct Host;
//! #[async_trait]
//! impl ToolHost for Host {
//!     async fn call(&self, call: NestedCall) -> Result<ToolOutcome, ToolError> {
//!         Ok(ToolOutcome::details(json!({ "echo": call.input })))
//!     }
//! }
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let cm = CodeMode::builder(CodeModeConfig::enabled())
//!     .tools(vec![ToolSpec::core("echo")])
//!     .host(Arc::new(Host))
//!     .build()?;
//! assert_eq!(cm.model_surface(&RunOptions::default()).names(), ["exec", "wait"]);
//! let scope = RunScope::new("session-1", "turn-1").with_call_id("call-1");
//! let result = cm.exec(&scope, ExecInput::code("return await tools.echo({ x: 1 });")).await;
//! assert_eq!(result.status(), "completed");
//! # Ok(()) }
//! ```
//!
//! Every failure is a `failed` result with a spec error code; `exec`/`wait` never panic or return a
//! Rust error.
#![deny(missing_docs)]

// The crate README (its crates.io page) is compiled and run as doc tests too.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

mod abort;
mod admission;
mod error;
mod host;
mod prepare;
mod run;
mod runtime;
mod schema;
pub mod store;
mod surface;
mod vm;

// One public path per item: the runtime's own items and the vocabulary an embedder needs are
// re-exported here by name (never by glob: `cargo test -p xtask` fails on a glob re-export of a
// crate); run storage is the `store` module.
pub use abort::AbortSignal;
pub use admission::{Admission, AdmissionLimits, AdmissionUsage};
pub use codemode_catalog::{Catalog, NamespaceRegistry};
pub use codemode_core::{
    CodeModeConfig, CodeModeErrorCode, CodeModeOutput, CodeModeResult, CodeModeTelemetry, CompletedResult,
    ConfigError, DEFAULT_HOST_SOURCE, ExecCell, ExecInput, FailedResult, InputError, Language,
    NamespaceContext, NamespaceRegistration, PendingToolCall, ScopeValue, SourceCounts, ToolAnnotations,
    ToolCatalogEntry, ToolCatalogEntryWithSchema, ToolMarker, ToolOrigin, ToolSource, ToolSpec, WaitInput,
    WaitReason, WaitingResult, is_valid_host_source, namespace_tool, namespace_tool_with,
};
pub use codemode_mcp::{McpServer, McpTool};
pub use codemode_sandbox::{Sandbox, SandboxConfig, SandboxError};
pub use error::{BuildError, SurfaceError};
pub use host::{CodeModeEvent, EventSink, NestedCall, NoEvents, RunScope, ToolError, ToolHost, ToolOutcome};
pub use runtime::{CodeMode, CodeModeBuilder, SandboxFactory};
pub use surface::{
    EXEC_TOOL, MCP_SERVER_LIST_MAX_CHARS, ModelSurface, RunOptions, SURFACE_MAX_CHARS, ToolDefinition,
    WAIT_TOOL, definition_chars, exec_guidance, exec_hook_metadata, mcp_server_list,
};
pub use vm::GuestThread;
