//! [`McpApi`]: the per-run table of declaration files, identifiers and `$api()` headers.

use std::collections::HashMap;
use std::sync::Arc;

use codemode_core::guest::{MCP_SERVER_MEMBERS, McpGuestServer, McpGuestTable};
use serde::Serialize;
use serde_json::Value;

use crate::error::McpApiError;
use crate::model::{McpServer, McpTool};
use crate::names::NameTable;
use crate::path::{ApiPathError, check_file_path, check_list_prefix};
use crate::render::{self, COMPACT_SUMMARY_MAX_CHARS, FileBudget};
use crate::text::{first_sentence, plain_line};

/// Default [`McpApiOptions::max_server_file_bytes`]: 64 KiB.
pub const MAX_SERVER_FILE_BYTES: usize = 64 * 1024;
/// Default [`McpApiOptions::max_tool_declaration_bytes`]: 4 KiB.
pub const MAX_TOOL_DECLARATION_BYTES: usize = 4 * 1024;
/// Default [`McpApiOptions::max_index_file_bytes`]: 64 KiB.
pub const MAX_INDEX_FILE_BYTES: usize = 64 * 1024;
/// Default [`McpApiOptions::max_total_bytes`]: 4 MiB.
pub const MAX_TOTAL_BYTES: usize = 4 * 1024 * 1024;

/// Most characters of tool descriptions in one server `$api()` header, all tools together; the
/// tools past it are listed without one.
pub const MAX_HEADER_SUMMARY_CHARS: usize = 16_000;

/// Path of the index file.
pub const INDEX_PATH: &str = "mcp/index.d.ts";

/// Budgets of the rendered files.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct McpApiOptions {
    /// Most bytes of one `mcp/<server>.d.ts`. Full declarations use up to three quarters of it,
    /// then tools get open declarations with the first sentence of their description, then a note counts the tools left out (all of
    /// them stay callable and listed by `$api()`). A budget smaller than the file's fixed frame
    /// (about 1 KiB: header comment, `$api`, `resources`, `prompts`) yields just the frame. Default: [`MAX_SERVER_FILE_BYTES`].
    pub max_server_file_bytes: usize,
    /// Most bytes of one tool's declaration (JSDoc + signature). Over it, the declaration degrades
    /// (shorter parameter docs and types, then required properties only) and finally becomes
    /// `function t(input: { [key: string]: unknown })` with a pointer to `$api("t", { schema:
    /// true })`, which is returned even when it is longer than a tiny budget.
    /// Default: [`MAX_TOOL_DECLARATION_BYTES`].
    pub max_tool_declaration_bytes: usize,
    /// Most bytes of `mcp/index.d.ts`; servers beyond it are counted, not listed (a budget under
    /// the shared types, about 2.5 KiB, yields the types and the count). Default: [`MAX_INDEX_FILE_BYTES`].
    pub max_index_file_bytes: usize,
    /// Once the server files of a run reach this many bytes, later servers get files without tool
    /// declarations (their tools stay callable and `$api()` still describes them).
    /// Default: [`MAX_TOTAL_BYTES`].
    pub max_total_bytes: usize,
}

impl Default for McpApiOptions {
    fn default() -> Self {
        McpApiOptions {
            max_server_file_bytes: MAX_SERVER_FILE_BYTES,
            max_tool_declaration_bytes: MAX_TOOL_DECLARATION_BYTES,
            max_index_file_bytes: MAX_INDEX_FILE_BYTES,
            max_total_bytes: MAX_TOTAL_BYTES,
        }
    }
}

impl McpApiOptions {
    /// The same options with another server file budget.
    pub const fn with_max_server_file_bytes(mut self, bytes: usize) -> Self {
        self.max_server_file_bytes = bytes;
        self
    }

    /// The same options with another tool declaration budget.
    pub const fn with_max_tool_declaration_bytes(mut self, bytes: usize) -> Self {
        self.max_tool_declaration_bytes = bytes;
        self
    }

    /// The same options with another index file budget.
    pub const fn with_max_index_file_bytes(mut self, bytes: usize) -> Self {
        self.max_index_file_bytes = bytes;
        self
    }

    /// The same options with another total budget.
    pub const fn with_max_total_bytes(mut self, bytes: usize) -> Self {
        self.max_total_bytes = bytes;
        self
    }
}

/// Options of [`McpApi::header`] (the second argument of `$api()`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct HeaderOptions {
    /// Add the tool's full `inputSchema` and `outputSchema`, and its unmodified `title`,
    /// `description` and `annotations` (needs a tool). Default: `false`.
    pub schema: bool,
}

impl HeaderOptions {
    /// Options with `schema: true`.
    pub const fn with_schema() -> Self {
        HeaderOptions { schema: true }
    }
}

/// One entry of `API.list(prefix)`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ApiFileEntry {
    /// The file path, e.g. `mcp/github.d.ts`.
    pub path: String,
    /// The content's length in UTF-8 bytes.
    pub bytes: usize,
}

/// What `MCP.<server>.$api(toolName?, options?)` returns (the `McpApiHeader` type of
/// `mcp/index.d.ts`).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct McpApiHeader {
    /// Identifier of the server under `MCP`.
    pub server: String,
    /// Exact server name.
    pub server_name: String,
    /// Declaration file of the server.
    pub path: String,
    /// The declaration of the one tool wrapped in its namespace; for a server header, a short
    /// comment saying where the declarations are (the whole file is `API.read(path)`).
    pub declarations: String,
    /// Every tool of the server, each with the first sentence of its description (server header
    /// only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<McpToolRef>>,
    /// Identifier of the tool (tool header only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// Exact tool name (tool header only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    /// Exact catalog id (tool header only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Full input schema (`schema: true` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_schema: Option<Value>,
    /// Declared output schema, if any (`schema: true` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// The tool's title, unmodified (`schema: true` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool's full description, unmodified (`schema: true` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The tool's annotations, unmodified (`schema: true` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
}

impl McpApiHeader {
    /// The header as JSON, the value `$api()` resolves to.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// A tool as listed in a server header and in the guest table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct McpToolRef {
    /// Identifier under `MCP.<server>`.
    pub tool: String,
    /// Exact MCP tool name.
    pub tool_name: String,
    /// Exact catalog id, `mcp:<serverName>:<toolName>`.
    pub id: String,
    /// First sentence of the tool's description (neutralized, at most
    /// [`COMPACT_SUMMARY_MAX_CHARS`] characters; server headers only, within
    /// [`MAX_HEADER_SUMMARY_CHARS`] for all tools together).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// Longest server title in a [`McpServerSummary`], in characters.
pub const SERVER_TITLE_MAX_CHARS: usize = 60;

/// One visible server in a short, model-facing list (an `exec` description, a gateway's
/// `instructions`).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct McpServerSummary {
    /// Identifier under `MCP`.
    pub ident: String,
    /// Exact server name (the host's name for it).
    pub name: String,
    /// The server's title (untrusted server text): one line without control, invisible or
    /// direction-changing characters, at most [`SERVER_TITLE_MAX_CHARS`] characters.
    pub title: Option<String>,
    /// Number of tools.
    pub tools: usize,
    /// The server offers resources.
    pub has_resources: bool,
    /// The server offers prompts.
    pub has_prompts: bool,
}

/// An `MCP.<server>.<tool>` call resolved to the exact names the runtime dispatches by.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ResolvedTool<'a> {
    /// Exact server name.
    pub server_name: &'a str,
    /// Exact tool name.
    pub tool_name: &'a str,
    /// The catalog id, `mcp:<serverName>:<toolName>`.
    pub catalog_id: String,
}

struct ServerEntry {
    server: Arc<McpServer>,
    ident: String,
    path: String,
    tools: NameTable,
    /// Exact tool name -> position in `server.tools` (first occurrence).
    tool_at: HashMap<String, usize>,
}

/// The virtual, read-only MCP API of one run: `mcp/index.d.ts`, one `mcp/<server>.d.ts` per visible
/// server, the identifier tables, and `$api()` headers. Built in memory; never written anywhere.
pub struct McpApi {
    servers: Vec<ServerEntry>,
    server_names: NameTable,
    files: Vec<(String, String)>,
    file_at: HashMap<String, usize>,
    options: McpApiOptions,
}

impl std::fmt::Debug for McpApi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpApi")
            .field("servers", &self.server_names)
            .field("files", &self.files.iter().map(|(p, c)| (p, c.len())).collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl McpApi {
    /// Renders the files for the visible `servers` (in the given order; a server name given twice
    /// keeps its first occurrence, as does a tool name listed twice by one server). Copies the
    /// servers it keeps; [`McpApi::build_shared`] does not.
    pub fn build(servers: &[McpServer], options: &McpApiOptions) -> McpApi {
        let shared: Vec<Arc<McpServer>> = servers.iter().map(|s| Arc::new(s.clone())).collect();
        McpApi::build_shared(&shared, options)
    }

    /// [`McpApi::build`] over shared servers: the API keeps references to them (no copy of the
    /// schemas), which is what a host that builds one API per run wants.
    pub fn build_shared(servers: &[Arc<McpServer>], options: &McpApiOptions) -> McpApi {
        let server_names = NameTable::build(servers.iter().map(|s| s.name.as_str()), &[]);
        let mut first: HashMap<&str, &Arc<McpServer>> = HashMap::new();
        for server in servers {
            first.entry(server.name.as_str()).or_insert(server);
        }
        let mut entries = Vec::with_capacity(server_names.len());
        let mut server_files = Vec::with_capacity(server_names.len());
        let mut index_lines = Vec::with_capacity(server_names.len());
        let mut total = 0usize;
        for (ident, name) in server_names.entries() {
            let Some(server) = first.get(name) else { continue };
            let tools = NameTable::build(server.tools.iter().map(|t| t.name.as_str()), MCP_SERVER_MEMBERS);
            let path = format!("mcp/{ident}.d.ts");
            let budget = FileBudget {
                max_file_bytes: options.max_server_file_bytes,
                max_tool_bytes: options.max_tool_declaration_bytes,
                minimal: total >= options.max_total_bytes,
            };
            let content = render::server_file(server, ident, &tools, budget);
            total += content.len();
            index_lines.push((ident.to_owned(), render::index_line(server, ident, &path, tools.len())));
            let mut tool_at = HashMap::with_capacity(server.tools.len());
            for (i, tool) in server.tools.iter().enumerate() {
                tool_at.entry(tool.name.clone()).or_insert(i);
            }
            server_files.push((path.clone(), content));
            entries.push(ServerEntry {
                server: (*server).clone(),
                ident: ident.to_owned(),
                path,
                tools,
                tool_at,
            });
        }
        let mut files = Vec::with_capacity(server_files.len() + 1);
        files.push((INDEX_PATH.to_owned(), render::index_file(&index_lines, options.max_index_file_bytes)));
        files.extend(server_files);
        let file_at = files.iter().enumerate().map(|(i, (path, _))| (path.clone(), i)).collect();
        McpApi { servers: entries, server_names, files, file_at, options: options.clone() }
    }

    /// Every file as `(path, content)`: `mcp/index.d.ts` first, then one per server in order.
    pub fn files(&self) -> impl ExactSizeIterator<Item = (&str, &str)> {
        self.files.iter().map(|(path, content)| (path.as_str(), content.as_str()))
    }

    /// `API.list(prefix)`: see [`ApiPathError`](crate::ApiPathError) for the rules.
    pub fn list(&self, prefix: Option<&str>) -> Result<Vec<ApiFileEntry>, ApiPathError> {
        let entry =
            |(path, content): &(String, String)| ApiFileEntry { path: path.clone(), bytes: content.len() };
        let as_directory = prefix.is_some_and(|p| p.ends_with('/'));
        let Some(prefix) = check_list_prefix(prefix)? else {
            return Ok(self.files.iter().map(entry).collect());
        };
        if let Some(&i) = self.file_at.get(prefix) {
            if as_directory {
                return Err(ApiPathError::NotFound { path: prefix.to_owned() });
            }
            return Ok(vec![entry(&self.files[i])]);
        }
        let below: Vec<ApiFileEntry> = self
            .files
            .iter()
            .filter(|(path, _)| path.strip_prefix(prefix).is_some_and(|rest| rest.starts_with('/')))
            .map(entry)
            .collect();
        if below.is_empty() {
            return Err(ApiPathError::NotFound { path: prefix.to_owned() });
        }
        Ok(below)
    }

    /// `API.read(path)`: the content of one file; see [`ApiPathError`](crate::ApiPathError) for the rules.
    pub fn read(&self, path: &str) -> Result<&str, ApiPathError> {
        let path = check_file_path(path)?;
        self.file_at
            .get(path)
            .map(|&i| self.files[i].1.as_str())
            .ok_or_else(|| ApiPathError::NotFound { path: path.to_owned() })
    }

    /// Server identifiers <-> exact server names.
    pub fn server_table(&self) -> &NameTable {
        &self.server_names
    }

    /// Tool identifiers <-> exact tool names of the server with identifier `server_ident`.
    pub fn tool_table(&self, server_ident: &str) -> Option<&NameTable> {
        self.entry(server_ident).map(|e| &e.tools)
    }

    /// Resolves `MCP.<server_ident>.<tool_ident>` to the exact names and catalog id.
    pub fn resolve(&self, server_ident: &str, tool_ident: &str) -> Option<ResolvedTool<'_>> {
        let entry = self.entry(server_ident)?;
        let tool_name = entry.tools.name(tool_ident)?;
        Some(ResolvedTool {
            server_name: &entry.server.name,
            tool_name,
            catalog_id: format!("mcp:{}:{tool_name}", entry.server.name),
        })
    }

    /// What `MCP.<server_ident>.$api(tool, options)` returns. `tool` is a tool identifier or, failing
    /// that, an exact tool name.
    pub fn header(
        &self,
        server_ident: &str,
        tool: Option<&str>,
        options: &HeaderOptions,
    ) -> Result<McpApiHeader, McpApiError> {
        let entry = self
            .entry(server_ident)
            .ok_or_else(|| McpApiError::UnknownServer { server: cut(server_ident) })?;
        let mut header = McpApiHeader {
            server: entry.ident.clone(),
            server_name: entry.server.name.clone(),
            path: entry.path.clone(),
            declarations: String::new(),
            tools: None,
            tool: None,
            tool_name: None,
            id: None,
            input_schema: None,
            output_schema: None,
            title: None,
            description: None,
            annotations: None,
        };
        let Some(tool) = tool else {
            if options.schema {
                return Err(McpApiError::SchemaWithoutTool);
            }
            let mut tools = self.tool_refs(entry);
            let mut left = MAX_HEADER_SUMMARY_CHARS;
            let mut without = 0usize;
            for tool in &mut tools {
                let summary = entry
                    .tool_at
                    .get(&tool.tool_name)
                    .map(|&i| &entry.server.tools[i])
                    .and_then(|t| t.description.as_deref().or(t.title.as_deref()))
                    .map(|d| first_sentence(d, COMPACT_SUMMARY_MAX_CHARS))
                    .filter(|d| !d.is_empty());
                let Some(summary) = summary else { continue };
                let cost = summary.chars().count();
                if cost > left {
                    without += 1;
                    left = 0;
                    continue;
                }
                left -= cost;
                tool.description = Some(summary);
            }
            header.declarations = server_overview(entry, tools.len(), without);
            header.tools = Some(tools);
            return Ok(header);
        };
        let at = entry
            .tools
            .index_of_ident(tool)
            .or_else(|| entry.tools.index_of_name(tool))
            .ok_or_else(|| McpApiError::UnknownTool { server: entry.ident.clone(), tool: cut(tool) })?;
        let (tool_ident, tool_name) = entry.tools.entry_at(at).unwrap_or_default();
        let mcp_tool = entry.tool_at.get(tool_name).map(|&i| &entry.server.tools[i]);
        let declaration = mcp_tool.map_or_else(
            || render::fallback_declaration(tool_ident),
            |t| render::tool_declaration(t, tool_ident, self.options.max_tool_declaration_bytes),
        );
        header.declarations = format!("declare namespace MCP.{} {{\n{declaration}}}\n", entry.ident);
        header.tool = Some(tool_ident.to_owned());
        header.tool_name = Some(tool_name.to_owned());
        header.id = Some(format!("mcp:{}:{tool_name}", entry.server.name));
        if options.schema {
            header.input_schema = mcp_tool.map(|t| Value::clone(&t.input_schema));
            header.output_schema = mcp_tool.and_then(|t| t.output_schema.as_deref().cloned());
            header.title = mcp_tool.and_then(|t| t.title.clone());
            header.description = mcp_tool.and_then(|t| t.description.clone());
            header.annotations = mcp_tool.and_then(|t| t.annotations.clone());
        }
        Ok(header)
    }

    /// The run's MCP guest table: every visible server with its tool identifiers and exact names,
    /// and the `API` files, in order. Identifiers come from the [`NameTable`]s, which never produce
    /// one the table refuses (the fuzz check holds every server and tool to it).
    pub fn guest_table(&self) -> McpGuestTable {
        let mut table = McpGuestTable::default();
        for (path, content) in &self.files {
            table.add_file(path.clone(), content.clone());
        }
        for e in &self.servers {
            let Ok(server) = McpGuestServer::new(e.ident.clone(), e.server.name.clone()) else { continue };
            let mut server = server.with_resources(e.server.has_resources).with_prompts(e.server.has_prompts);
            for (tool, tool_name) in e.tools.entries() {
                let _ = server.add_tool(tool, tool_name);
            }
            let _ = table.add_server(server);
        }
        table
    }

    /// The visible servers in order, as a model-facing list may show them (see
    /// [`McpServerSummary`]).
    pub fn server_summaries(&self) -> Vec<McpServerSummary> {
        self.servers
            .iter()
            .map(|e| McpServerSummary {
                ident: e.ident.clone(),
                name: e.server.name.clone(),
                title: e
                    .server
                    .title
                    .as_deref()
                    .map(|t| plain_line(t, SERVER_TITLE_MAX_CHARS))
                    .filter(|t| !t.is_empty()),
                tools: e.tools.len(),
                has_resources: e.server.has_resources,
                has_prompts: e.server.has_prompts,
            })
            .collect()
    }

    /// The exact tool behind `MCP.<server_ident>.<tool_ident>`, with its schemas.
    pub fn tool(&self, server_ident: &str, tool_ident: &str) -> Option<&McpTool> {
        let entry = self.entry(server_ident)?;
        let name = entry.tools.name(tool_ident)?;
        entry.tool_at.get(name).map(|&i| &entry.server.tools[i])
    }

    fn entry(&self, server_ident: &str) -> Option<&ServerEntry> {
        self.server_names.index_of_ident(server_ident).and_then(|i| self.servers.get(i))
    }

    fn tool_refs(&self, entry: &ServerEntry) -> Vec<McpToolRef> {
        entry
            .tools
            .entries()
            .map(|(tool, tool_name)| McpToolRef {
                tool: tool.to_owned(),
                tool_name: tool_name.to_owned(),
                id: format!("mcp:{}:{tool_name}", entry.server.name),
                description: None,
            })
            .collect()
    }
}

/// The `declarations` of a server header: where the declarations are and how to get one tool's.
fn server_overview(entry: &ServerEntry, tools: usize, without_description: usize) -> String {
    let ident = &entry.ident;
    let mut out = format!(
        "/* MCP.{ident}: {tools} tool{}, listed in `tools` with the first sentence of each description. \
         All declarations: API.read(\"{}\"). One tool: MCP.{ident}.$api(\"<tool>\"); its JSON Schemas: \
         MCP.{ident}.$api(\"<tool>\", {{ schema: true }}).",
        if tools == 1 { "" } else { "s" },
        entry.path,
    );
    if without_description > 0 {
        out.push_str(&format!(
            " The last {without_description} descriptions are left out (size bound); $api(\"<tool>\") has each."
        ));
    }
    out.push_str(" */\n");
    out
}

fn cut(text: &str) -> String {
    text.chars().take(120).collect()
}
