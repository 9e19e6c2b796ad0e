//! The Code Mode vocabulary: everything the other codemode crates agree on, with no engine in it.
//!
//! At the crate root (one path each):
//!
//! - configuration: [`CodeModeConfig`], parsed from the `tools.codeMode` JSON shape (`true`, `false`, or an
//!   object), defaulted and clamped exactly as the spec's configuration table says ([`limits`]);
//! - the wire types: the `exec`/`wait` inputs and the [`CodeModeResult`] union (`completed` |
//!   `waiting` | `failed`), error codes, output items, telemetry and pending tool calls, with serde
//!   shapes that match the spec byte for byte (all `#[non_exhaustive]`, built with constructors),
//!   plus the JSON Schemas the model sees ([`exec_input_schema`], [`wait_input_schema`]);
//! - tools: tool descriptors ([`ToolSpec`]) as the host hands them over, and the guest-facing catalog
//!   entries ([`ToolCatalogEntry`], [`ToolCatalogEntryWithSchema`]);
//! - namespaces: internal namespace registrations and their per-run scopes (data + tool markers:
//!   [`NamespaceRegistration`], [`ScopeValue`]).
//!
//! Modules:
//!
//! - [`hint`]: JSON Schema -> compact TypeScript-style hints (bounded, deterministic, never panicking).
//! - [`ident`]: JavaScript identifier rules and deterministic normalization of unsafe names.
//! - [`guest`]: the guest API's vocabulary (helper and member names, reserved names, the MCP guest table).
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
//! assert!(config.is_enabled());
//! assert_eq!(config.timeout_ms(), 100); // clamped to the table's lower bound
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

mod config;
#[doc(hidden)]
pub mod fuzz;
pub mod guest;
pub mod hint;
pub mod ident;
mod namespace;
pub mod suggest;
pub mod text;
mod tool;
pub mod validate;
mod wire;

// One public path per item: the modules above whose items are re-exported here are private.
pub use config::{Bounds, CodeModeConfig, ConfigError, Language, limits};
pub use namespace::{
    InputMapper, NamespaceContext, NamespaceRegistration, PATH_SEPARATOR, ScopeFactory, ScopeValue,
    ToolMarker, namespace_tool, namespace_tool_with,
};
pub use tool::{
    DEFAULT_HOST_SOURCE, ToolAnnotations, ToolCatalogEntry, ToolCatalogEntryWithSchema, ToolOrigin,
    ToolSource, ToolSpec, is_valid_host_source,
};
pub use wire::{
    CodeModeErrorCode, CodeModeOutput, CodeModeResult, CodeModeTelemetry, CompletedResult, ExecCell,
    ExecInput, FailedResult, InputError, PendingToolCall, SourceCounts, WaitInput, WaitReason, WaitingResult,
    exec_input_schema, wait_input_schema,
};
