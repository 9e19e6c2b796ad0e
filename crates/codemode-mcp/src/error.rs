//! [`McpApiError`]: why a `$api()` header could not be built (path errors are
//! [`crate::ApiPathError`], beside the path rules).

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
