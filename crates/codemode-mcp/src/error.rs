//! Errors: [`ApiPathError`] for `API.list` / `API.read`, [`McpApiError`] for `$api()` headers.

use crate::path::MAX_PATH_BYTES;

/// Why `API.list(prefix)` or `API.read(path)` refused a path. The message is written for the
/// guest program (and so for the model): it says what is wrong and what to do instead.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ApiPathError {
    /// `API.read("")`.
    #[error("API path is empty; API.list(\"mcp\") lists the declaration files")]
    Empty,
    /// More than [`MAX_PATH_BYTES`] bytes.
    #[error("API path is {bytes} bytes long; the limit is {MAX_PATH_BYTES}")]
    TooLong {
        /// Length of the refused path in UTF-8 bytes.
        bytes: usize,
    },
    /// Contains U+0000.
    #[error("API path contains a NUL character")]
    Nul,
    /// Contains `\`.
    #[error("API paths are separated by `/`, never `\\`")]
    Backslash,
    /// Starts with `/`.
    #[error("API paths are relative, without a leading `/` (e.g. \"mcp/index.d.ts\")")]
    Absolute,
    /// `//`, or a trailing `/` where a file is expected.
    #[error("API path has an empty segment (`//`, or a trailing `/` in API.read)")]
    EmptySegment,
    /// A `.` or `..` segment.
    #[error("API path has a `.` or `..` segment; paths name files directly (e.g. \"mcp/index.d.ts\")")]
    DotSegment,
    /// Well-formed, but no such file (or, for `API.list`, directory).
    #[error("no API file or directory {path:?}; API.list() lists every file")]
    NotFound {
        /// The refused path (already known to be at most [`MAX_PATH_BYTES`] bytes).
        path: String,
    },
}

/// Why a `$api()` header could not be built.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum McpApiError {
    /// No visible server has this identifier.
    #[error("no MCP server {server:?} in this run; API.read(\"mcp/index.d.ts\") lists the servers")]
    UnknownServer {
        /// The identifier asked for (cut to 120 characters).
        server: String,
    },
    /// The server has no tool with this identifier or exact name.
    #[error("MCP server {server:?} has no tool {tool:?}; MCP.{server}.$api() lists its tools")]
    UnknownTool {
        /// The server identifier.
        server: String,
        /// The tool asked for (cut to 120 characters).
        tool: String,
    },
    /// `{ schema: true }` without a tool name.
    #[error("$api(toolName, {{ schema: true }}) needs a tool name: schemas are served one tool at a time")]
    SchemaWithoutTool,
}
