//! The model-facing surface: activation, the `exec`/`wait` definitions, the provider-payload guard
//! and the hook metadata of `exec` calls.

use codemode_catalog::{QuickIndexOptions, VisibleNamespace};
use codemode_core::wire::{exec_input_schema, wait_input_schema};
use codemode_core::{ExecInput, Language, NamespaceContext, ToolSpec};
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
            input_schema: spec.parameters.clone(),
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
        None => Some(Language::Javascript),
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

const MCP_GUIDANCE: &str = "MCP tools are not in tools.*; call them as MCP.<server>.<tool>({ ...input }). Their \
TypeScript declarations are virtual files: await API.list(\"mcp\"), then await API.read(\"mcp/<server>.d.ts\"); \
MCP.<server>.$api(tool?) returns one header inline. To find an MCP tool by what it does, await API.search(\"what \
you need\", { limit: 5 }) ranks them: [{ server, tool, call, id, description, input, output?, score, match }].";

/// The guidance part of the `exec` description (before the quick index).
pub fn exec_guidance() -> &'static str {
    GUIDANCE
}

pub(crate) fn exec_description(
    quick_index: &str,
    mcp_visible: bool,
    namespaces: &[VisibleNamespace],
) -> String {
    let mut out = String::from(GUIDANCE);
    if mcp_visible {
        out.push_str("\n\n");
        out.push_str(MCP_GUIDANCE);
    }
    if !quick_index.is_empty() {
        out.push_str("\n\nQuick index:\n");
        out.push_str(quick_index);
    }
    for ns in namespaces {
        out.push_str(&format!("\n\nNamespace {}: {}", ns.global_name, one_line(&ns.description)));
        if let Some(prompt) = &ns.prompt {
            out.push('\n');
            out.push_str(prompt.trim());
        }
    }
    out
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

impl CodeMode {
    /// Whether the Code Mode surface activates for a run with `options`: Code Mode is enabled, the
    /// run has tools (not disabled, not a raw model call) and the host handed over at least one tool.
    pub fn is_active(&self, options: &RunOptions) -> bool {
        let inner = &self.inner;
        inner.config.enabled && !options.tools_disabled && !options.raw_model_call && !inner.tools.is_empty()
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

    /// The `exec` definition: flat input schema (enabled languages only), guidance, quick index, MCP
    /// guidance when MCP servers are visible, and the prompts of visible namespaces.
    pub fn exec_definition(&self) -> ToolDefinition {
        let inner = &self.inner;
        let quick_index = inner.catalog.quick_index(&QuickIndexOptions::default());
        let namespaces = inner.namespaces.visible_for(&inner.catalog, &NamespaceContext::default());
        ToolDefinition {
            name: EXEC_TOOL.into(),
            description: exec_description(&quick_index, inner.mcp.is_some(), &namespaces),
            input_schema: exec_input_schema(&inner.config.languages),
        }
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
