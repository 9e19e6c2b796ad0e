//! Tool descriptors: what the host hands over ([`ToolSpec`]) and what the guest sees
//! ([`ToolCatalogEntry`], [`ToolCatalogEntryWithSchema`]).

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The `source` of a catalog entry, as the guest and the spec see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolSource {
    /// The host's own tools: core and plugins (trusted).
    Openclaw,
    /// Tools from MCP servers (untrusted metadata).
    Mcp,
    /// Tools provided by the client for this run (untrusted metadata).
    Client,
}

impl ToolSource {
    /// The wire name, e.g. `"openclaw"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolSource::Openclaw => "openclaw",
            ToolSource::Mcp => "mcp",
            ToolSource::Client => "client",
        }
    }
}

/// The spec's name for the host's own source in catalog ids (`openclaw:core:message`). An embedder
/// that is not OpenClaw may name it otherwise (see [`is_valid_host_source`] and
/// [`ToolSpec::catalog_id_in`]); MCP and client ids never change.
pub const DEFAULT_HOST_SOURCE: &str = "openclaw";

/// Whether `name` can name the host source in catalog ids: 1 to 32 characters of lowercase ASCII
/// letters, digits, `_` and `-`, starting with a letter, and not `mcp` or `client` (whose ids it
/// would then collide with).
pub fn is_valid_host_source(name: &str) -> bool {
    let bytes = name.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 32
        && bytes[0].is_ascii_lowercase()
        && bytes.iter().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'_' | b'-'))
        && name != ToolSource::Mcp.as_str()
        && name != ToolSource::Client.as_str()
}

/// Where a tool comes from. Determines its [`ToolSource`], its trust, and its place in catalog order
/// (core, bundled plugins, external plugins, MCP, client).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ToolOrigin {
    /// A core host tool (owner `core`).
    Core,
    /// A plugin shipped with the host (owner: the plugin id).
    BundledPlugin,
    /// A plugin installed separately (owner: the plugin id).
    ExternalPlugin,
    /// A tool of an MCP server (owner: the server name).
    Mcp,
    /// A tool the client provided for this run (owner: the client app id).
    Client,
}

impl ToolOrigin {
    /// The spec's source for this origin.
    pub fn source(self) -> ToolSource {
        match self {
            ToolOrigin::Core | ToolOrigin::BundledPlugin | ToolOrigin::ExternalPlugin => ToolSource::Openclaw,
            ToolOrigin::Mcp => ToolSource::Mcp,
            ToolOrigin::Client => ToolSource::Client,
        }
    }

    /// Whether metadata from this origin is trusted (core and plugins are installed host code).
    pub fn is_trusted(self) -> bool {
        self.source() == ToolSource::Openclaw
    }
}

/// Behaviour hints for a tool, in MCP's vocabulary. Untrusted for MCP/client tools.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolAnnotations {
    /// The tool does not modify its environment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// The tool may perform destructive updates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Repeating a call with the same arguments has no additional effect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// The tool interacts with an open world of external entities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

impl ToolAnnotations {
    /// The same hints with `readOnlyHint` set.
    pub fn with_read_only_hint(mut self, hint: bool) -> ToolAnnotations {
        self.read_only_hint = Some(hint);
        self
    }

    /// The same hints with `destructiveHint` set.
    pub fn with_destructive_hint(mut self, hint: bool) -> ToolAnnotations {
        self.destructive_hint = Some(hint);
        self
    }

    /// The same hints with `idempotentHint` set.
    pub fn with_idempotent_hint(mut self, hint: bool) -> ToolAnnotations {
        self.idempotent_hint = Some(hint);
        self
    }

    /// The same hints with `openWorldHint` set.
    pub fn with_open_world_hint(mut self, hint: bool) -> ToolAnnotations {
        self.open_world_hint = Some(hint);
        self
    }

    /// Read-only by annotation (`readOnlyHint: true`). Everything else counts as side-effecting.
    pub fn is_read_only(&self) -> bool {
        self.read_only_hint == Some(true)
    }
}

/// One effective tool, as the host hands it to Code Mode (after the host's policy).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolSpec {
    /// The tool's name as the host knows it, e.g. `message` or `create_issue`.
    pub name: String,
    /// A human label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The tool's description (never shown in the model-visible surface).
    #[serde(default)]
    pub description: String,
    /// JSON Schema of the input. Shared, not copied, by the catalog, the MCP API and the runtime
    /// that hold this tool.
    #[serde(default = "empty_object_schema")]
    pub parameters: Arc<Value>,
    /// JSON Schema of the structured `details` value, when declared (shared like `parameters`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Arc<Value>>,
    /// Where the tool comes from.
    pub origin: ToolOrigin,
    /// `core`, the plugin id, the MCP server name, or the client app id.
    pub owner: String,
    /// Stays visible to the model because its result cannot cross the JSON bridge (e.g. images).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub direct_only: bool,
    /// Behaviour hints.
    #[serde(default, skip_serializing_if = "is_default")]
    pub annotations: ToolAnnotations,
}

fn is_default(a: &ToolAnnotations) -> bool {
    *a == ToolAnnotations::default()
}

fn empty_object_schema() -> Arc<Value> {
    Arc::new(serde_json::json!({ "type": "object" }))
}

impl ToolSpec {
    /// A tool with the given name, origin and owner, an empty object input and no description.
    pub fn new(name: impl Into<String>, origin: ToolOrigin, owner: impl Into<String>) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            label: None,
            description: String::new(),
            parameters: empty_object_schema(),
            output_schema: None,
            origin,
            owner: owner.into(),
            direct_only: false,
            annotations: ToolAnnotations::default(),
        }
    }

    /// A core host tool.
    pub fn core(name: impl Into<String>) -> ToolSpec {
        ToolSpec::new(name, ToolOrigin::Core, "core")
    }

    /// Sets the description.
    pub fn description(mut self, description: impl Into<String>) -> ToolSpec {
        self.description = description.into();
        self
    }

    /// Sets the label.
    pub fn label(mut self, label: impl Into<String>) -> ToolSpec {
        self.label = Some(label.into());
        self
    }

    /// Sets the input schema (a [`Value`], or an [`Arc`] of one to share it).
    pub fn parameters(mut self, schema: impl Into<Arc<Value>>) -> ToolSpec {
        self.parameters = schema.into();
        self
    }

    /// Sets the output schema (a [`Value`], or an [`Arc`] of one to share it).
    pub fn output_schema(mut self, schema: impl Into<Arc<Value>>) -> ToolSpec {
        self.output_schema = Some(schema.into());
        self
    }

    /// Marks the tool direct-only.
    pub fn direct_only(mut self) -> ToolSpec {
        self.direct_only = true;
        self
    }

    /// Sets the annotations.
    pub fn annotations(mut self, annotations: ToolAnnotations) -> ToolSpec {
        self.annotations = annotations;
        self
    }

    /// The spec source of this tool.
    pub fn source(&self) -> ToolSource {
        self.origin.source()
    }

    /// The catalog id `<source>:<owner>:<tool-name>` with the spec's host source name
    /// ([`DEFAULT_HOST_SOURCE`]): `openclaw:core:message`, `mcp:github:create_issue`.
    pub fn catalog_id(&self) -> String {
        self.catalog_id_in(DEFAULT_HOST_SOURCE)
    }

    /// The catalog id when the host source is named `host_source`: core and plugin tools get
    /// `<host_source>:<owner>:<name>` (`host:core:message`); MCP and client ids are unchanged.
    pub fn catalog_id_in(&self, host_source: &str) -> String {
        let source = match self.source() {
            ToolSource::Openclaw => host_source,
            other => other.as_str(),
        };
        format!("{source}:{}:{}", self.owner, self.name)
    }
}

/// Compact guest-facing metadata for one catalog entry (the spec's `ToolCatalogEntry`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolCatalogEntry {
    /// Exact catalog id.
    pub id: String,
    /// The tool name.
    pub name: String,
    /// The label, when the tool has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The description.
    pub description: String,
    /// The source.
    pub source: ToolSource,
    /// The plugin id, server name or client app id; absent for core tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_name: Option<String>,
    /// Compact TypeScript-style input signature, or `"unknown"` for untrusted sources.
    pub input: String,
    /// Compact trusted output hint; present only when complete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
}

/// A catalog entry with its full schemas (the spec's `ToolCatalogEntryWithSchema`), served by `describe`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolCatalogEntryWithSchema {
    /// The compact entry.
    #[serde(flatten)]
    pub entry: ToolCatalogEntry,
    /// The full input schema.
    pub parameters: Value,
    /// The full output schema, when declared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
}

impl ToolCatalogEntry {
    /// An entry with no label, no source name and no output hint (see the `with_*` methods).
    pub fn new(
        id: impl Into<String>,
        name: impl Into<String>,
        description: impl Into<String>,
        source: ToolSource,
        input: impl Into<String>,
    ) -> ToolCatalogEntry {
        ToolCatalogEntry {
            id: id.into(),
            name: name.into(),
            label: None,
            description: description.into(),
            source,
            source_name: None,
            input: input.into(),
            output: None,
        }
    }

    /// The same entry with a label.
    pub fn with_label(mut self, label: Option<String>) -> ToolCatalogEntry {
        self.label = label;
        self
    }

    /// The same entry with a source name (plugin id, server name or client app id).
    pub fn with_source_name(mut self, source_name: Option<String>) -> ToolCatalogEntry {
        self.source_name = source_name;
        self
    }

    /// The same entry with a trusted output hint.
    pub fn with_output(mut self, output: Option<String>) -> ToolCatalogEntry {
        self.output = output;
        self
    }
}

impl ToolCatalogEntryWithSchema {
    /// `entry` with its full input schema and, when declared, its output schema.
    pub fn new(
        entry: ToolCatalogEntry,
        parameters: Value,
        output_schema: Option<Value>,
    ) -> ToolCatalogEntryWithSchema {
        ToolCatalogEntryWithSchema { entry, parameters, output_schema }
    }
}
