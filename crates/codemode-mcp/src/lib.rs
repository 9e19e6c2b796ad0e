//! The MCP side of Code Mode's guest API: TypeScript declaration files for the visible MCP servers,
//! JavaScript identifiers for servers and tools, and the virtual read-only `API` file table.
//!
//! Input is MCP metadata as servers report it ([`McpServer`], [`McpTool`]: `tools/list` entries with
//! `inputSchema`, `outputSchema`, ...). [`McpApi::build`] turns the visible servers of one run into:
//!
//! - `mcp/index.d.ts`: the shared `McpToolResult` / `McpApiHeader` types and the list of servers;
//! - `mcp/<server>.d.ts`: `declare namespace MCP.<server> { ... }` with `$api()`, one function per
//!   tool (JSDoc from the description, one `@param` per property) and `resources` / `prompts`
//!   when the server offers them;
//! - identifier tables ([`NameTable`]) that map `MCP.<server>.<tool>` back to exact names and
//!   catalog ids (`mcp:<server>:<tool>`), the way the runtime dispatches;
//! - `$api()` headers ([`McpApi::header`]) and the run's MCP guest table, the typed table the
//!   bridge boots the guest from ([`McpApi::guest_table`]).
//!
//! Everything a server sends is untrusted data: descriptions only ever appear neutralized inside
//! comments (see [`text`](crate#untrusted-text)), names only as generated identifiers or quoted
//! keys, schemas only through `codemode_core::hint::render_type`; every file and declaration has a
//! byte budget ([`McpApiOptions`]). Nothing is written to disk.
//!
//! ```
//! use codemode_mcp::{McpApi, McpApiOptions, McpServer, McpTool};
//! use serde_json::json;
//!
//! let tool = McpTool::new("create_issue")
//!     .with_description("Create a GitHub issue.\nMore details here.")
//!     .with_input_schema(json!({
//!         "type": "object",
//!         "properties": {
//!             "owner": { "type": "string", "description": "Repository owner" },
//!             "title": { "type": "string" },
//!             "body": { "type": "string" }
//!         },
//!         "required": ["owner", "title"]
//!     }));
//! let api = McpApi::build(&[McpServer::new("github", vec![tool])], &McpApiOptions::default());
//!
//! let file = api.read("mcp/github.d.ts").unwrap();
//! assert!(file.contains("declare namespace MCP.github {"));
//! assert!(file.contains("   * Create a GitHub issue.\n   * @param owner Repository owner\n"));
//! assert!(file.contains("  function createIssue(input: {\n    owner: string;\n    title: string;\n    body?: string;\n  }): Promise<McpToolResult>;"));
//!
//! let listed: Vec<String> = api.list(Some("mcp/")).unwrap().into_iter().map(|e| e.path).collect();
//! assert_eq!(listed, ["mcp/index.d.ts", "mcp/github.d.ts"]);
//! assert!(api.read("mcp/../etc/passwd").is_err());
//!
//! let call = api.resolve("github", "createIssue").unwrap();
//! assert_eq!(call.catalog_id, "mcp:github:create_issue");
//! ```
//!
//! # Untrusted text
//!
//! Descriptions and titles are flattened to one line, stripped of control, invisible and
//! direction-changing characters and of markdown block markers and code fences; `*/`, `/*` and `@`
//! are escaped so text can neither close its comment nor add a JSDoc tag; each piece is cut to a
//! character budget. Property keys that are not identifier names are string literals.
//!
//! # Identifiers
//!
//! See [`NameTable`] for the exact rules (camelCase via `codemode_core::ident`, reserved and dangerous
//! names suffixed with `2`, collisions numbered deterministically, nothing dropped).
//!
//! # Paths
//!
//! See [`ApiPathError`] for the exact rules of `API.list` / `API.read`, which the guest prelude mirrors.
#![deny(missing_docs)]

// The crate README (its crates.io page) is compiled and run as doc tests too.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

mod api;
mod error;
#[doc(hidden)]
pub mod fuzz;
mod model;
mod names;
mod path;
mod render;
mod text;

// One public path per item: the private modules' surface is re-exported here.
pub use api::{
    ApiFileEntry, HeaderOptions, INDEX_PATH, MAX_HEADER_SUMMARY_CHARS, MAX_INDEX_FILE_BYTES,
    MAX_SERVER_FILE_BYTES, MAX_TOOL_DECLARATION_BYTES, MAX_TOTAL_BYTES, McpApi, McpApiHeader, McpApiOptions,
    McpServerSummary, McpToolRef, ResolvedTool, SERVER_TITLE_MAX_CHARS,
};
pub use error::McpApiError;
pub use model::{McpServer, McpTool};
pub use names::{MAX_IDENT_CHARS, NameTable};
pub use path::{ApiPathError, MAX_PATH_BYTES};
pub use render::{COMPACT_SUMMARY_MAX_CHARS, SHARED_TYPES};
