//! The guest API's vocabulary, owned here once: the names the prelude installs on `tools` and on
//! each `MCP.<server>`, the names no tool or server identifier may take, the guest globals and
//! private prefixes, and the typed MCP table a run's guest API is built from ([`McpGuestTable`]).
//!
//! The catalog (convenience names), codemode-mcp (identifier tables), the namespace registry and
//! the bridge (boot context, prelude) all read these; none keeps a copy.
//!
//! ```
//! use codemode_core::guest::{McpGuestServer, McpGuestTable, TOOLS_HELPERS};
//!
//! assert!(TOOLS_HELPERS.contains(&"callValue"));
//! let mut server = McpGuestServer::new("github", "github").unwrap();
//! server.add_tool("createIssue", "create_issue").unwrap();
//! assert!(server.add_tool("$api", "$api").is_err(), "a server's own member");
//! let mut table = McpGuestTable::default();
//! table.add_server(server).unwrap();
//! assert_eq!(table.servers()[0].tools()[0].name(), "create_issue");
//! ```

use std::collections::BTreeSet;

use crate::ident::{is_identifier, is_identifier_name};

/// The catalog helpers on `tools`: a convenience name never takes one.
pub const TOOLS_HELPERS: &[&str] = &["search", "describe", "call", "callValue"];

/// The members each `MCP.<server>` object has itself: a tool identifier never takes one.
pub const MCP_SERVER_MEMBERS: &[&str] = &["$api", "prompts", "resources"];

/// `Object.prototype` members and `then` (a `then` member would make an object a thenable, so
/// `await` on it would call a tool): names no guest object member derived from a tool may take.
pub const OBJECT_MEMBER_NAMES: &[&str] = &[
    "__defineGetter__",
    "__defineSetter__",
    "__lookupGetter__",
    "__lookupSetter__",
    "hasOwnProperty",
    "isPrototypeOf",
    "propertyIsEnumerable",
    "then",
    "toJSON",
    "toLocaleString",
    "toString",
    "valueOf",
];

/// `Function.prototype` members guest code may reach through a namespace object: MCP server and
/// tool identifiers do not take them as they are (nor [`OBJECT_MEMBER_NAMES`]).
pub const FUNCTION_MEMBER_NAMES: &[&str] = &["apply", "bind", "call", "caller", "length", "name"];

/// Guest globals a namespace may never take.
pub const RESERVED_GLOBALS: &[&str] =
    &["tools", "namespaces", "text", "json", "console", "yield_control", "MCP", "API", "ALL_TOOLS"];

/// Prefix of internal guest globals (`__codemode*`); `__openclaw*` is reserved as well for
/// compatibility with the spec's wording.
pub const PRIVATE_PREFIXES: &[&str] = &["__codemode", "__openclaw"];

/// Whether `name` starts with one of the [`PRIVATE_PREFIXES`].
pub fn is_private(name: &str) -> bool {
    PRIVATE_PREFIXES.iter().any(|p| name.starts_with(p))
}

/// Why an entry of an [`McpGuestTable`] was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GuestTableError {
    /// A server identifier that is not a JavaScript identifier.
    #[error("MCP server identifier {0:?} is not an identifier")]
    ServerIdent(String),
    /// A server identifier given twice.
    #[error("MCP server {0:?} appears twice")]
    DuplicateServer(String),
    /// A tool identifier that is not an identifier name or not a safe path segment.
    #[error("MCP server {server:?}: tool identifier {tool:?} is not a safe identifier")]
    ToolIdent {
        /// The server identifier.
        server: String,
        /// The refused tool identifier.
        tool: String,
    },
    /// A tool identifier that is one of [`MCP_SERVER_MEMBERS`].
    #[error("MCP server {server:?}: tool identifier {tool:?} collides with a built-in member")]
    ServerMember {
        /// The server identifier.
        server: String,
        /// The refused tool identifier.
        tool: String,
    },
    /// A tool identifier given twice for one server.
    #[error("MCP server {server:?}: tool {tool:?} appears twice")]
    DuplicateTool {
        /// The server identifier.
        server: String,
        /// The repeated tool identifier.
        tool: String,
    },
}

/// The MCP part of a run's guest API: the servers `MCP.<server>.<tool>` reaches and the files
/// `API.list` / `API.read` serve. Every entry is checked when it is added, so whoever boots a
/// guest from it (the bridge) takes it as it is.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct McpGuestTable {
    servers: Vec<McpGuestServer>,
    files: Vec<McpGuestFile>,
}

impl McpGuestTable {
    /// Adds a server; its identifier must be new.
    pub fn add_server(&mut self, server: McpGuestServer) -> Result<(), GuestTableError> {
        if self.servers.iter().any(|s| s.ident == server.ident) {
            return Err(GuestTableError::DuplicateServer(server.ident));
        }
        self.servers.push(server);
        Ok(())
    }

    /// Adds a file of the `API` table (its path rules are the bridge's file table's).
    pub fn add_file(&mut self, path: impl Into<String>, content: impl Into<String>) {
        self.files.push(McpGuestFile { path: path.into(), content: content.into() });
    }

    /// The servers, in the order they were added.
    pub fn servers(&self) -> &[McpGuestServer] {
        &self.servers
    }

    /// The files, in the order they were added.
    pub fn files(&self) -> &[McpGuestFile] {
        &self.files
    }

    /// Whether the table has neither servers nor files.
    pub fn is_empty(&self) -> bool {
        self.servers.is_empty() && self.files.is_empty()
    }
}

/// One server of an [`McpGuestTable`]: `MCP.<ident>`, also reachable as `MCP["<name>"]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct McpGuestServer {
    ident: String,
    name: String,
    tools: Vec<McpGuestTool>,
    resources: bool,
    prompts: bool,
}

impl McpGuestServer {
    /// A server with identifier `ident` (a JavaScript identifier) and exact name `name`, with no
    /// tools, resources or prompts yet.
    pub fn new(ident: impl Into<String>, name: impl Into<String>) -> Result<McpGuestServer, GuestTableError> {
        let ident = ident.into();
        if !is_identifier(&ident) {
            return Err(GuestTableError::ServerIdent(ident));
        }
        Ok(McpGuestServer { ident, name: name.into(), tools: Vec::new(), resources: false, prompts: false })
    }

    /// Whether the server serves resources (`MCP.<server>.resources.read`).
    pub fn with_resources(mut self, resources: bool) -> Self {
        self.resources = resources;
        self
    }

    /// Whether the server serves prompts (`MCP.<server>.prompts.get`).
    pub fn with_prompts(mut self, prompts: bool) -> Self {
        self.prompts = prompts;
        self
    }

    /// Adds tool `MCP.<server>.<ident>`, also reachable as `MCP.<server>["<name>"]`. The
    /// identifier must be an identifier name and a safe path segment, not one of
    /// [`MCP_SERVER_MEMBERS`], and new for this server.
    pub fn add_tool(
        &mut self,
        ident: impl Into<String>,
        name: impl Into<String>,
    ) -> Result<(), GuestTableError> {
        let ident = ident.into();
        let refuse = |tool: String| (self.ident.clone(), tool);
        if !is_identifier_name(&ident) || matches!(ident.as_str(), "__proto__" | "constructor" | "prototype")
        {
            let (server, tool) = refuse(ident);
            return Err(GuestTableError::ToolIdent { server, tool });
        }
        if MCP_SERVER_MEMBERS.contains(&ident.as_str()) {
            let (server, tool) = refuse(ident);
            return Err(GuestTableError::ServerMember { server, tool });
        }
        let seen: BTreeSet<&str> = self.tools.iter().map(|t| t.ident.as_str()).collect();
        if seen.contains(ident.as_str()) {
            let (server, tool) = refuse(ident);
            return Err(GuestTableError::DuplicateTool { server, tool });
        }
        self.tools.push(McpGuestTool { ident, name: name.into() });
        Ok(())
    }

    /// The identifier (`MCP.<ident>`).
    pub fn ident(&self) -> &str {
        &self.ident
    }

    /// The exact server name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The tools, in the order they were added.
    pub fn tools(&self) -> &[McpGuestTool] {
        &self.tools
    }

    /// Whether it serves resources.
    pub fn resources(&self) -> bool {
        self.resources
    }

    /// Whether it serves prompts.
    pub fn prompts(&self) -> bool {
        self.prompts
    }
}

/// One tool of an [`McpGuestServer`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct McpGuestTool {
    ident: String,
    name: String,
}

impl McpGuestTool {
    /// The identifier (`MCP.<server>.<ident>`).
    pub fn ident(&self) -> &str {
        &self.ident
    }

    /// The exact tool name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// One file of an [`McpGuestTable`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct McpGuestFile {
    path: String,
    content: String,
}

impl McpGuestFile {
    /// The path, e.g. `mcp/github.d.ts`.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The content.
    pub fn content(&self) -> &str {
        &self.content
    }
}
