//! The model-facing surface: activation, the `exec`/`wait` definitions, the provider-payload guard
//! and the hook metadata of `exec` calls.

use codemode_catalog::{QUICK_INDEX_MAX_CHARS, QuickIndexOptions, VisibleNamespace};
use codemode_core::hint::string_literal;
use codemode_core::{ExecInput, Language, NamespaceContext, ToolSpec};
use codemode_core::{exec_input_schema, wait_input_schema};
use codemode_mcp::{McpServerSummary, SERVER_TITLE_MAX_CHARS};
use serde_json::{Value, json};

use crate::error::SurfaceError;
use crate::runtime::CodeMode;

/// Name of the Code Mode `exec` tool.
pub const EXEC_TOOL: &str = "exec";
/// Name of the Code Mode `wait` tool.
pub const WAIT_TOOL: &str = "wait";

/// A tool definition as a provider payload carries it.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ToolDefinition {
    /// The tool name.
    pub name: String,
    /// The description shown to the model.
    pub description: String,
    /// JSON Schema of the input.
    pub input_schema: Value,
}

impl ToolDefinition {
    fn from_spec(spec: &ToolSpec) -> ToolDefinition {
        ToolDefinition {
            name: spec.name.clone(),
            description: spec.description.clone(),
            input_schema: Value::clone(&spec.parameters),
        }
    }
}

/// What the model sees for one run.
#[derive(Clone, Debug, PartialEq)]
pub enum ModelSurface {
    /// Code Mode is not active for this run: the host's tools, unchanged.
    Direct(Vec<ToolDefinition>),
    /// Code Mode is active: `exec`, `wait`, then the direct-only tools.
    CodeMode(Vec<ToolDefinition>),
}

impl ModelSurface {
    /// The tool definitions, whichever variant.
    pub fn tools(&self) -> &[ToolDefinition] {
        match self {
            ModelSurface::Direct(tools) | ModelSurface::CodeMode(tools) => tools,
        }
    }

    /// The tool names, in order.
    pub fn names(&self) -> Vec<&str> {
        self.tools().iter().map(|t| t.name.as_str()).collect()
    }

    /// Whether the Code Mode surface is active.
    pub fn is_code_mode(&self) -> bool {
        matches!(self, ModelSurface::CodeMode(_))
    }
}

/// Per-run facts that decide activation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RunOptions {
    /// The run has tools disabled (`disableTools: true`). Default: `false`.
    pub tools_disabled: bool,
    /// A raw model call with no tool loop. Default: `false`.
    pub raw_model_call: bool,
}

impl RunOptions {
    /// Options for a normal run with tools.
    pub fn new() -> RunOptions {
        RunOptions::default()
    }

    /// The same options with tools disabled.
    pub fn tools_disabled(mut self) -> RunOptions {
        self.tools_disabled = true;
        self
    }

    /// The same options for a raw model call.
    pub fn raw_model_call(mut self) -> RunOptions {
        self.raw_model_call = true;
        self
    }
}

/// Hook metadata of an outer `exec` call, so that policies can tell Code Mode cells from shell
/// `exec` calls: `{ "toolKind": "code_mode_exec", "toolInputKind": "javascript" | "typescript" }`
/// (`toolInputKind` only when the language is known).
pub fn exec_hook_metadata(input: &ExecInput) -> Value {
    let mut meta = json!({ "toolKind": "code_mode_exec" });
    let language = match input.language.as_deref() {
        None => Some(Language::JavaScript),
        Some(name) => Language::parse(name),
    };
    if let Some(language) = language {
        meta["toolInputKind"] = Value::from(language.as_str());
    }
    meta
}

const GUIDANCE: &str = "Run a short JavaScript or TypeScript program against a hidden tool catalog. The code is the body \
of an async function: top-level `await` and `return` work; the returned value comes back as JSON.

Globals:
- ALL_TOOLS: compact catalog entries { id, name, description, source, input, output? }.
- tools.search(query, { limit }) -> entries, best first; tools.describe(id) -> the entry with its full `parameters` \
(and `outputSchema`).
- tools.callValue(id, input) -> the tool's result value; tools.call(id, input) -> the raw { tool, result } envelope. \
tools.<name>(input) exists for unambiguous tool names.
- text(value), json(value): append output items. yield_control(reason?): suspend; continue later with `wait`.
- console.log/info/warn/error/debug(...args) append one text item per call, formatted like Node's util.format.
- namespaces.<Name> and each namespace global listed below, when present.
Run independent calls in parallel with Promise.all. A failing tool call throws an ordinary Error you can catch.

Quick index lines read `\"id\" input -> output`, where the arrow describes the tools.callValue(...) value. `-> ?` \
means the output shape is unknown: first `return await tools.callValue(id, input)` unchanged (also when a declared \
read feeds that final call), inspect the value, and transform it in a later exec instead of guessing field names. \
When a tool is not listed, read ALL_TOOLS or call tools.search(...).

There is no import/require, filesystem, network, environment or shell here. When the result is `waiting`, call \
`wait` with its runId; use `wait` only then.";

const MCP_GUIDANCE: &str = "MCP tools are not in tools.*; call them as MCP.<server>.<tool>({ ...input }) (exact names \
work too: MCP[\"server-name\"][\"tool_name\"]). Find one with await API.search(query, { limit, server? }) -> [{ server, \
tool, call, id, description, input, output?, score, match }], best first (server: one server or a list, to search \
only those). Their TypeScript declarations are virtual files: await \
API.list(\"mcp\"), then await API.read(\"mcp/<server>.d.ts\"); MCP.<server>.$api() lists a server's tools, \
MCP.<server>.$api(tool, { schema: true }) returns one tool's full schemas.";

/// The guidance when the catalog has no tools for `tools.*` (every tool is an MCP tool, as in a
/// gateway): nothing about `ALL_TOOLS`, `tools.*` or a quick index.
const MCP_ONLY_GUIDANCE: &str = "Run a short JavaScript or TypeScript program that calls MCP tools. The code is the body \
of an async function: top-level `await` and `return` work; the returned value comes back as JSON.

Find a tool: await API.search(\"what you need\", { limit: 5 }) -> [{ server, tool, call, description, input, \
output? }], best first; add server: \"<server>\" (or a list) to search only the servers below that fit. Call it \
as MCP.<server>.<tool>({ ...input }), as `call` spells it (exact names work too: \
MCP[\"server-name\"][\"tool_name\"]). The TypeScript declarations are virtual files: await API.list(\"mcp\"), then \
await API.read(\"mcp/<server>.d.ts\"); MCP.<server>.$api() lists a server's tools with one sentence each, \
MCP.<server>.$api(tool, { schema: true }) returns one tool's full schemas.
A call resolves to the MCP result { content, structuredContent?, isError? }. When you do not know its shape, first \
return it unchanged, inspect it, and transform it in a later exec instead of guessing field names.

Globals: MCP, API; text(value), json(value): append output items; yield_control(reason?): suspend, continue later \
with `wait`; namespaces.<Name> and each namespace global listed below, when present.
Run independent calls in parallel with Promise.all. A failing tool call throws an ordinary Error you can catch.

There is no import/require, filesystem, network, environment or shell here. When the result is `waiting`, call \
`wait` with its runId; use `wait` only then.";

const QUICK_INDEX_HEADING: &str = "\n\nQuick index:\n";

/// Most characters of the `exec` and `wait` definitions together (each definition's name,
/// description and input schema as JSON text), as long as the namespace prompts leave room: the
/// quick index gets what the rest leaves, at most [`QUICK_INDEX_MAX_CHARS`].
pub const SURFACE_MAX_CHARS: usize = 10_400;

/// Most characters of the MCP server lines in the `exec` description; the servers past it are
/// counted (`- and N more ...`).
pub const MCP_SERVER_LIST_MAX_CHARS: usize = 1_200;

/// The guidance part of the `exec` description (before the quick index) when the catalog has
/// tools for `tools.*`.
pub fn exec_guidance() -> &'static str {
    GUIDANCE
}

/// The list of visible MCP servers as the `exec` description and a gateway's `instructions` show
/// it: one line per server (`- MCP.<server> ("<exact name>"): N tools, resources. <title>`), at most
/// [`MCP_SERVER_LIST_MAX_CHARS`] characters of them, then `- and N more ...` for the rest. Server
/// titles are untrusted server text and appear only as one plain line of at most
/// [`SERVER_TITLE_MAX_CHARS`] characters. Empty without servers.
pub fn mcp_server_list(servers: &[McpServerSummary]) -> String {
    if servers.is_empty() {
        return String::new();
    }
    let total_tools: usize = servers.iter().map(|s| s.tools).sum();
    let mut out = format!(
        "MCP servers ({} server{}, {total_tools} tool{}):",
        servers.len(),
        plural(servers.len()),
        plural(total_tools)
    );
    let mut used = 0usize;
    let mut listed = 0usize;
    for server in servers {
        let line = server_line(server);
        let cost = line.chars().count() + 1;
        if used + cost > MCP_SERVER_LIST_MAX_CHARS {
            break;
        }
        used += cost;
        listed += 1;
        out.push('\n');
        out.push_str(&line);
    }
    if listed < servers.len() {
        let rest = servers.len() - listed;
        out.push_str(&format!(
            "\n- and {rest} more server{}: API.read(\"mcp/index.d.ts\") lists every server; API.search(query) searches all of them.",
            plural(rest)
        ));
    }
    out
}

fn server_line(server: &McpServerSummary) -> String {
    let mut line = format!("- MCP.{}", server.ident);
    if server.name != server.ident {
        let name: String = server.name.chars().take(SERVER_TITLE_MAX_CHARS).collect();
        line.push_str(&format!(" ({})", string_literal(&name)));
    }
    line.push_str(&format!(": {} tool{}", server.tools, plural(server.tools)));
    if server.has_resources {
        line.push_str(", resources");
    }
    if server.has_prompts {
        line.push_str(", prompts");
    }
    if let Some(title) = &server.title {
        line.push_str(". ");
        line.push_str(title);
    }
    line
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Everything of the `exec` description except the quick index.
pub(crate) struct DescriptionParts<'a> {
    /// The catalog has tools for `tools.*` (`ALL_TOOLS` is not empty).
    pub catalog_tools: bool,
    /// Visible MCP servers, if any.
    pub mcp_servers: Option<&'a [McpServerSummary]>,
    pub namespaces: &'a [VisibleNamespace],
}

pub(crate) fn exec_description(quick_index: &str, parts: &DescriptionParts<'_>) -> String {
    let mut out = String::from(if parts.catalog_tools || parts.mcp_servers.is_none() {
        GUIDANCE
    } else {
        MCP_ONLY_GUIDANCE
    });
    if let Some(servers) = parts.mcp_servers {
        if parts.catalog_tools {
            out.push_str("\n\n");
            out.push_str(MCP_GUIDANCE);
        }
        let list = mcp_server_list(servers);
        if !list.is_empty() {
            out.push_str("\n\n");
            out.push_str(&list);
        }
    }
    if !quick_index.is_empty() {
        out.push_str(QUICK_INDEX_HEADING);
        out.push_str(quick_index);
    }
    for ns in parts.namespaces {
        out.push_str(&format!("\n\nNamespace {}: {}", ns.global_name, one_line(&ns.description)));
        if let Some(prompt) = &ns.prompt {
            out.push('\n');
            out.push_str(prompt.trim());
        }
    }
    out
}

/// Characters a tool definition takes on the surface: name, description and input schema (as
/// JSON text).
pub fn definition_chars(definition: &ToolDefinition) -> usize {
    definition.name.chars().count()
        + definition.description.chars().count()
        + definition.input_schema.to_string().chars().count()
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

impl CodeMode {
    /// Whether the Code Mode surface activates for a run with `options`: Code Mode is enabled, the
    /// run has tools (not disabled, not a raw model call) and the host handed over at least one tool.
    pub fn is_active(&self, options: &RunOptions) -> bool {
        let inner = &self.inner;
        inner.config.is_enabled()
            && !options.tools_disabled
            && !options.raw_model_call
            && !inner.tools.is_empty()
    }

    /// The tools the model sees for a run with `options`.
    pub fn model_surface(&self, options: &RunOptions) -> ModelSurface {
        if !self.is_active(options) {
            return ModelSurface::Direct(self.inner.tools.iter().map(ToolDefinition::from_spec).collect());
        }
        let mut tools = vec![self.exec_definition(), self.wait_definition()];
        tools.extend(self.inner.catalog.direct_only_tools().iter().map(ToolDefinition::from_spec));
        ModelSurface::CodeMode(tools)
    }

    /// The `exec` definition: flat input schema (enabled languages only), guidance (without
    /// `ALL_TOOLS`/`tools.*` when every tool is an MCP tool), MCP guidance and the server list when
    /// MCP servers are visible, the quick index, and the prompts of visible namespaces. The quick
    /// index gets the room the rest leaves of [`SURFACE_MAX_CHARS`] (`exec` and `wait` together),
    /// at most [`QUICK_INDEX_MAX_CHARS`]; when it cannot list every tool, its footer says how many
    /// are left and how to find them.
    pub fn exec_definition(&self) -> ToolDefinition {
        let inner = &self.inner;
        let namespaces = inner.namespaces.visible_for(&inner.catalog, &NamespaceContext::default());
        let servers = inner.mcp.as_ref().map(|api| api.server_summaries());
        let parts = DescriptionParts {
            catalog_tools: inner.catalog.guest_entries().len() > 0,
            mcp_servers: servers.as_deref(),
            namespaces: &namespaces,
        };
        let input_schema = exec_input_schema(inner.config.languages());
        let mut definition = ToolDefinition {
            name: EXEC_TOOL.into(),
            description: exec_description("", &parts),
            input_schema,
        };
        let fixed = definition_chars(&definition) + definition_chars(&self.wait_definition());
        let room = SURFACE_MAX_CHARS
            .saturating_sub(fixed + QUICK_INDEX_HEADING.chars().count())
            .min(QUICK_INDEX_MAX_CHARS);
        let quick_index = inner.catalog.quick_index(&QuickIndexOptions::default().with_max_chars(room));
        if !quick_index.is_empty() {
            definition.description = exec_description(&quick_index, &parts);
        }
        definition
    }

    /// The visible MCP servers as the `exec` description lists them ([`mcp_server_list`]); empty
    /// without MCP servers. A gateway can repeat it in its `instructions`.
    pub fn mcp_server_list(&self) -> String {
        self.inner.mcp.as_ref().map(|api| mcp_server_list(&api.server_summaries())).unwrap_or_default()
    }

    /// The `wait` definition.
    pub fn wait_definition(&self) -> ToolDefinition {
        ToolDefinition {
            name: WAIT_TOOL.into(),
            description:
                "Continue a suspended Code Mode run. Call it only with the runId of a `waiting` exec or wait \
                          result; it returns the same kind of result as exec."
                    .into(),
            input_schema: wait_input_schema(),
        }
    }

    /// The model-visible tool names when the surface is active: `exec`, `wait`, direct-only tools.
    pub fn model_visible_tool_names(&self) -> Vec<String> {
        self.inner.visible_tools.clone()
    }

    /// The fail-closed guard for a normal run with tools ([`RunOptions::default`]); see
    /// [`CodeMode::check_provider_payload_for`].
    pub fn check_provider_payload<S: AsRef<str>>(&self, names: &[S]) -> Result<(), SurfaceError> {
        self.check_provider_payload_for(&RunOptions::default(), names)
    }

    /// The fail-closed guard: once the surface is active for `options`, the final provider payload
    /// (`names`) must contain exactly one `exec`, one `wait`, and otherwise only approved direct-only
    /// tools (each once). When the surface is not active, every payload passes.
    pub fn check_provider_payload_for<S: AsRef<str>>(
        &self,
        options: &RunOptions,
        names: &[S],
    ) -> Result<(), SurfaceError> {
        if !self.is_active(options) {
            return Ok(());
        }
        let count = |n: &str| names.iter().filter(|s| s.as_ref() == n).count();
        let exec = count(EXEC_TOOL);
        if exec != 1 {
            return Err(SurfaceError::ExecCount { count: exec });
        }
        let wait = count(WAIT_TOOL);
        if wait != 1 {
            return Err(SurfaceError::WaitCount { count: wait });
        }
        let direct: Vec<&str> =
            self.inner.catalog.direct_only_tools().iter().map(|t| t.name.as_str()).collect();
        for name in names.iter().map(AsRef::as_ref).filter(|n| *n != EXEC_TOOL && *n != WAIT_TOOL) {
            if !direct.contains(&name) {
                return Err(SurfaceError::Unapproved { name: name.to_owned() });
            }
            if count(name) > 1 {
                return Err(SurfaceError::Duplicate { name: name.to_owned() });
            }
        }
        Ok(())
    }
}
