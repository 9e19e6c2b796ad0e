//! MCP metadata as servers report it (`tools/list` entries), the input of everything else here.

use std::sync::Arc;

use codemode_core::{ToolAnnotations, ToolOrigin, ToolSpec};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One visible MCP server: its name in the host's configuration and the tools it lists.
///
/// Deserializes from `{ "name", "title"?, "instructions"?, "tools": [MCP Tool JSON], "hasResources"?,
/// "hasPrompts"? }`. Every string in it is untrusted data.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct McpServer {
    /// The server's name as the host knows it (the owner in catalog ids `mcp:<name>:<tool>`).
    pub name: String,
    /// A human title (MCP `serverInfo.title`), used for the one-line summary in `mcp/index.d.ts`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The server's `instructions`; its first line is the summary when there is no title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// The tools, in the order the server listed them.
    #[serde(default)]
    pub tools: Vec<McpTool>,
    /// The server offers resources (`MCP.<server>.resources.read`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub has_resources: bool,
    /// The server offers prompts (`MCP.<server>.prompts.get`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub has_prompts: bool,
}

/// One MCP tool, in the shape of a `tools/list` entry (`inputSchema`, `outputSchema` in camelCase).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct McpTool {
    /// The exact tool name; calls dispatch by it.
    pub name: String,
    /// A human title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The description (untrusted; shown only inside declaration comments, neutralized).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema of the input (default `{ "type": "object" }`). Shared with the tool's
    /// [`ToolSpec`] (see [`McpTool::to_tool_spec`]), not copied.
    #[serde(default = "empty_object_schema")]
    pub input_schema: Arc<Value>,
    /// JSON Schema of `structuredContent`, when declared (an untrusted claim; shared like
    /// `input_schema`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Arc<Value>>,
    /// MCP annotations (`readOnlyHint`, ...), untrusted hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
}

fn empty_object_schema() -> Arc<Value> {
    Arc::new(serde_json::json!({ "type": "object" }))
}

impl McpServer {
    /// A server with a name and tools, no resources, no prompts.
    pub fn new(name: impl Into<String>, tools: Vec<McpTool>) -> McpServer {
        McpServer { name: name.into(), tools, ..McpServer::default() }
    }

    /// Builds a server from a raw `tools/list` result (`{ "tools": [...] }`) or a bare array of tools,
    /// leniently: entries without a string `name` are skipped, fields of the wrong type are ignored.
    /// Never fails, whatever the server sent.
    pub fn from_tools_list(name: impl Into<String>, tools_list: &Value) -> McpServer {
        let entries = match tools_list {
            Value::Array(entries) => entries.as_slice(),
            Value::Object(map) => map.get("tools").and_then(Value::as_array).map_or(&[][..], Vec::as_slice),
            _ => &[],
        };
        McpServer::new(name, entries.iter().filter_map(McpTool::from_value_lossy).collect())
    }

    /// Sets the title.
    pub fn with_title(mut self, title: impl Into<String>) -> McpServer {
        self.title = Some(title.into());
        self
    }

    /// Sets the instructions.
    pub fn with_instructions(mut self, instructions: impl Into<String>) -> McpServer {
        self.instructions = Some(instructions.into());
        self
    }

    /// Marks the server as offering resources.
    pub fn with_resources(mut self) -> McpServer {
        self.has_resources = true;
        self
    }

    /// Marks the server as offering prompts.
    pub fn with_prompts(mut self) -> McpServer {
        self.has_prompts = true;
        self
    }

    /// The catalog entries of this server's tools (`mcp:<server>:<tool>`), in listing order.
    pub fn tool_specs(&self) -> Vec<ToolSpec> {
        self.tools.iter().map(|tool| tool.to_tool_spec(&self.name)).collect()
    }
}

impl McpTool {
    /// A tool with a name and the empty object input schema.
    pub fn new(name: impl Into<String>) -> McpTool {
        McpTool {
            name: name.into(),
            title: None,
            description: None,
            input_schema: empty_object_schema(),
            output_schema: None,
            annotations: None,
        }
    }

    /// Reads one `tools/list` entry leniently: `None` without a string `name`; fields of the wrong
    /// type are treated as absent (a non-object `inputSchema` is kept: it renders as `unknown`).
    pub fn from_value_lossy(value: &Value) -> Option<McpTool> {
        let map = value.as_object()?;
        let text = |key: &str| map.get(key).and_then(Value::as_str).map(str::to_owned);
        Some(McpTool {
            name: text("name")?,
            title: text("title"),
            description: text("description"),
            input_schema: map.get("inputSchema").cloned().map_or_else(empty_object_schema, Arc::new),
            output_schema: map.get("outputSchema").filter(|v| !v.is_null()).cloned().map(Arc::new),
            annotations: map.get("annotations").filter(|v| v.is_object()).cloned(),
        })
    }

    /// Sets the description.
    pub fn with_description(mut self, description: impl Into<String>) -> McpTool {
        self.description = Some(description.into());
        self
    }

    /// Sets the title.
    pub fn with_title(mut self, title: impl Into<String>) -> McpTool {
        self.title = Some(title.into());
        self
    }

    /// Sets the input schema (a [`Value`], or an [`Arc`] of one to share it).
    pub fn with_input_schema(mut self, schema: impl Into<Arc<Value>>) -> McpTool {
        self.input_schema = schema.into();
        self
    }

    /// Sets the output schema (a [`Value`], or an [`Arc`] of one to share it).
    pub fn with_output_schema(mut self, schema: impl Into<Arc<Value>>) -> McpTool {
        self.output_schema = Some(schema.into());
        self
    }

    /// The exact catalog id of this tool on `server`: `mcp:<server>:<tool-name>`.
    pub fn catalog_id(&self, server: &str) -> String {
        format!("mcp:{server}:{}", self.name)
    }

    /// The host-side catalog descriptor of this tool (origin MCP, owner `server`); annotations of
    /// the wrong shape are ignored.
    pub fn to_tool_spec(&self, server: &str) -> ToolSpec {
        let mut spec = ToolSpec::new(self.name.clone(), ToolOrigin::Mcp, server)
            .description(self.description.clone().unwrap_or_default())
            .parameters(self.input_schema.clone());
        if let Some(title) = &self.title {
            spec = spec.label(title.clone());
        }
        if let Some(output) = &self.output_schema {
            spec = spec.output_schema(output.clone());
        }
        if let Some(annotations) = &self.annotations {
            let annotations: ToolAnnotations =
                serde_json::from_value(annotations.clone()).unwrap_or_default();
            spec = spec.annotations(annotations);
        }
        spec
    }
}
