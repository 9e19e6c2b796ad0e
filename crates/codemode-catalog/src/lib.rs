//! The Code Mode tool catalog: the host's effective tools in, the run-scoped catalog out.
//!
//! - [`Catalog::build`] orders tools as the spec says (core, bundled plugin, external plugin, MCP,
//!   client; within one origin by owner, then name), gives each the id
//!   `<source>:<owner>:<tool-name>` (`openclaw:core:message`, `openclaw:browser:browser_request`,
//!   `mcp:github:create_issue`, `client:app:select_file`), leaves out control tools
//!   ([`CONTROL_TOOL_NAMES`]; a core `exec` is the host's shell tool and stays) and direct-only
//!   tools, keeps the first of two tools with the same id, and derives compact hints: trusted (core
//!   and plugin) entries get a TypeScript-style `input` and, for a complete closed `outputSchema`,
//!   an `output`; MCP and client entries get `input: "unknown"` and never an `output`.
//! - Guest views ([`Catalog::guest_entries`] = `ALL_TOOLS`, [`Catalog::search`],
//!   [`Catalog::describe`], [`Catalog::guest_entry`] for calls) omit MCP entries; those stay in the
//!   catalog for exact-id dispatch from the `MCP` namespace ([`Catalog::by_mcp`], [`Catalog::get`]).
//! - [`safe_tool_name`]: safe convenience names (`tools.web_search(...)`), only when unambiguous.
//! - [`search`]: a BM25F ranker with stemming, a synonym / verb-class vocabulary kept as data, typo
//!   tolerance and an action-verb prior; deterministic, never empty. [`Catalog::search_mcp`] runs it
//!   over the MCP entries for the gateway's `API.search`.
//! - [`QuickIndexOptions`]: the bounded (8,000 characters) id + hint list for the `exec` description.
//! - [`NamespaceRegistry`]: the internal namespace registry and per-run visibility.
//!
//! Building never fails: everything the build decided is in [`Catalog::diagnostics`].
//!
//! ```
//! use codemode_catalog::{Catalog, CatalogOptions, QuickIndexOptions};
//! use codemode_core::{ToolOrigin, ToolSpec};
//! use serde_json::json;
//!
//! let tools = vec![
//!     ToolSpec::new("create_issue", ToolOrigin::Mcp, "github").description("Create an issue"),
//!     ToolSpec::core("message")
//!         .description("Send a message")
//!         .parameters(json!({
//!             "type": "object",
//!             "properties": { "to": { "type": "string" }, "text": { "type": "string" } },
//!             "required": ["to", "text"]
//!         })),
//!     ToolSpec::core("wait"), // a control tool: never catalogued
//! ];
//! let catalog = Catalog::build(tools, &CatalogOptions::default());
//! let ids: Vec<&str> = catalog.entries().iter().map(|e| e.id.as_str()).collect();
//! assert_eq!(ids, ["openclaw:core:message", "mcp:github:create_issue"]);
//!
//! // The guest never sees MCP entries through tools.*.
//! assert_eq!(catalog.guest_entries().count(), 1);
//! assert_eq!(catalog.search("send a message", 8)[0].id, "openclaw:core:message");
//! assert_eq!(catalog.convenience_names(), [("message".to_owned(), "openclaw:core:message".to_owned())]);
//! assert_eq!(
//!     catalog.quick_index(&QuickIndexOptions::default()),
//!     r#""openclaw:core:message" { to: string; text: string } -> ?"#
//! );
//! ```
#![deny(missing_docs)]

// The crate README (its crates.io page) is compiled and run as doc tests too.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

mod catalog;
mod error;
#[doc(hidden)]
pub mod fuzz;
mod names;
mod namespace;
mod quick_index;
pub mod search;

// One public path per item: the private modules' surface is re-exported here.

pub use catalog::{
    CONTROL_TOOL_NAMES, Catalog, CatalogDiagnostic, CatalogOptions, SearchHit, UNKNOWN_INPUT, is_control_tool,
};
pub use error::{CatalogError, NamespaceError};
pub use names::{RefusedName, normalize_tool_name, safe_tool_name};
pub use namespace::{
    MAX_SCOPE_DEPTH, NamespaceRegistry, NamespaceResolution, ResolvedNamespaceCall, VisibleNamespace,
};
pub use quick_index::{
    INPUT_HINT_STEPS, QUICK_INDEX_MAX_CHARS, QuickIndexOptions, omitted_footer, quick_index_line,
};
