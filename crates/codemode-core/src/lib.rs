//! The Code Mode vocabulary: everything the other codemode crates agree on, with no engine in it.
//!
//! - [`config`]: [`CodeModeConfig`], parsed from the `tools.codeMode` JSON shape (`true`, `false`, or an
//!   object), defaulted and clamped exactly as the spec's configuration table says.
//! - [`wire`]: the `exec`/`wait` inputs and the [`CodeModeResult`] union (`completed` | `waiting` |
//!   `failed`), error codes, output items, telemetry and pending tool calls, with serde shapes that match
//!   the spec byte for byte, plus the JSON Schemas the model sees for `exec` and `wait`.
//! - [`tool`]: tool descriptors ([`ToolSpec`]) as the host hands them over, and the guest-facing catalog
//!   entries ([`ToolCatalogEntry`], [`ToolCatalogEntryWithSchema`]).
//! - [`hint`]: JSON Schema -> compact TypeScript-style hints (bounded, deterministic, never panicking).
//! - [`ident`]: JavaScript identifier rules and deterministic normalization of unsafe names.
//! - [`namespace`]: internal namespace registrations and their per-run scopes (data + tool markers).
//! - [`text`]: character-bounded truncation of texts users and models see.
//! - [`validate`] (with [`suggest`]): the one validation style of every JSON file and config read:
//!   the JSON path, what is allowed, what was found, and did-you-mean for unknown keys and values.
//!
//! This crate depends on neither wasmtime, oxc, tokio nor rmcp.
//!
//! ```
//! use codemode_core::{CodeModeConfig, ExecInput, Language};
//! use serde_json::json;
//!
//! let config = CodeModeConfig::from_json(&json!({ "enabled": true, "timeoutMs": 5 })).unwrap();
//! assert!(config.enabled);
//! assert_eq!(config.timeout_ms, 100); // clamped to the table's lower bound
//!
//! let input = ExecInput::from_json(&json!({ "code": "return 1 + 1" })).unwrap();
//! let cell = input.validate(&config).unwrap();
//! assert_eq!(cell.language, Language::JavaScript);
//! ```
#![deny(missing_docs)]

// The crate README (its crates.io page) is compiled and run as doc tests too.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

pub mod config;
#[doc(hidden)]
pub mod fuzz;
pub mod guest;
pub mod hint;
pub mod ident;
pub mod namespace;
pub mod suggest;
pub mod text;
pub mod tool;
pub mod validate;
pub mod wire;

pub use config::{CodeModeConfig, ConfigError, Language};
pub use namespace::{
    NamespaceContext, NamespaceRegistration, ScopeValue, ToolMarker, namespace_tool, namespace_tool_with,
};
pub use tool::{
    DEFAULT_HOST_SOURCE, ToolAnnotations, ToolCatalogEntry, ToolCatalogEntryWithSchema, ToolOrigin,
    ToolSource, ToolSpec, is_valid_host_source,
};
pub use wire::{
    CodeModeErrorCode, CodeModeOutput, CodeModeResult, CodeModeTelemetry, CompletedResult, ExecCell,
    ExecInput, FailedResult, InputError, PendingToolCall, SourceCounts, WaitInput, WaitReason, WaitingResult,
};
