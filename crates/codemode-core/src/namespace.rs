//! Internal namespaces: the data a trusted loader registers, and the scope it builds per run.
//!
//! A scope is plain data plus tool-call markers ([`ScopeValue`]). There is no variant that can hold a
//! host function, a handle or a class instance, so "raw host functions are rejected" holds by
//! construction; and because nodes are immutable `Arc`s, a scope can share a subtree (a shared reference)
//! but can never be circular. The registry (codemode-catalog) decides visibility; the bridge
//! (codemode-bridge) serializes a visible scope into a guest descriptor and resolves guest calls back
//! to the marker's tool.

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

/// Maps the guest's call arguments (JSON values) to the input object of the underlying catalog tool.
pub type InputMapper = Arc<dyn Fn(&[Value]) -> Value + Send + Sync>;

/// Builds a namespace's scope for one run.
pub type ScopeFactory = Arc<dyn Fn(&NamespaceContext) -> ScopeValue + Send + Sync>;

/// Run context handed to [`ScopeFactory`]: who is running, and the namespace's config.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct NamespaceContext {
    /// The agent running the cell.
    pub agent_id: Option<String>,
    /// The session key.
    pub session_key: Option<String>,
    /// The session id.
    pub session_id: Option<String>,
    /// The agent run id.
    pub run_id: Option<String>,
    /// Host-provided configuration for the namespace (plain JSON).
    pub config: Value,
}

impl NamespaceContext {
    /// A context for `session_id` / `run_id` with no config.
    pub fn new(session_id: impl Into<String>, run_id: impl Into<String>) -> NamespaceContext {
        NamespaceContext {
            session_id: Some(session_id.into()),
            run_id: Some(run_id.into()),
            ..NamespaceContext::default()
        }
    }
}

/// A callable scope member: calling it from the guest calls the catalog tool `tool_name`.
#[derive(Clone)]
pub struct ToolMarker {
    /// Name of a tool listed in the registration's `required_tool_names`.
    pub tool_name: String,
    /// Maps guest arguments to the tool input; when `None`, the first argument is the input, or `{}`.
    pub input_mapper: Option<InputMapper>,
}

impl ToolMarker {
    /// Maps the guest's arguments to the tool input.
    pub fn map_input(&self, args: &[Value]) -> Value {
        match &self.input_mapper {
            Some(mapper) => mapper(args),
            None => match args.first() {
                Some(Value::Null) | None => Value::Object(Default::default()),
                Some(first) => first.clone(),
            },
        }
    }
}

impl fmt::Debug for ToolMarker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolMarker")
            .field("tool_name", &self.tool_name)
            .field("input_mapper", &self.input_mapper.as_ref().map(|_| ".."))
            .finish()
    }
}

/// `createCodeModeNamespaceTool(toolName, inputMapper)`: a callable scope member.
pub fn namespace_tool(tool_name: impl Into<String>) -> ScopeValue {
    ScopeValue::Tool(ToolMarker { tool_name: tool_name.into(), input_mapper: None })
}

/// A callable scope member with an input mapper.
pub fn namespace_tool_with(
    tool_name: impl Into<String>,
    mapper: impl Fn(&[Value]) -> Value + Send + Sync + 'static,
) -> ScopeValue {
    ScopeValue::Tool(ToolMarker { tool_name: tool_name.into(), input_mapper: Some(Arc::new(mapper)) })
}

/// A namespace scope: JSON-compatible data and tool-call markers, nothing else.
#[derive(Clone, Debug)]
pub enum ScopeValue {
    /// Plain JSON data (numbers that are not finite are not representable in `Value`).
    Data(Value),
    /// An array whose items may contain markers.
    Array(Vec<ScopeValue>),
    /// An object whose members may contain markers; keys keep their order.
    Object(Vec<(String, ScopeValue)>),
    /// A subtree shared with other places in the scope (a shared reference, never a cycle).
    Shared(Arc<ScopeValue>),
    /// A callable marker.
    Tool(ToolMarker),
}

impl ScopeValue {
    /// An object from `(key, value)` pairs.
    pub fn object<K: Into<String>>(members: impl IntoIterator<Item = (K, ScopeValue)>) -> ScopeValue {
        ScopeValue::Object(members.into_iter().map(|(k, v)| (k.into(), v)).collect())
    }
}

impl From<Value> for ScopeValue {
    fn from(value: Value) -> Self {
        ScopeValue::Data(value)
    }
}

/// What a trusted loader registers for a plugin (`registerCodeModeNamespaceForPlugin`).
#[derive(Clone)]
#[non_exhaustive]
pub struct NamespaceRegistration {
    /// Namespace id, unique in the registry, e.g. `github-issues`.
    pub id: String,
    /// The guest global, e.g. `Issues`; must be a JS identifier and not a Code Mode global.
    pub global_name: String,
    /// One line for the `exec` description (shown only while the namespace is visible).
    pub description: String,
    /// Tools that must all be in the run's catalog and owned by the registering plugin; the only tools
    /// callable paths may target.
    pub required_tool_names: Vec<String>,
    /// Optional usage prompt appended to the `exec` description while visible.
    pub prompt: Option<String>,
    /// Builds the per-run scope.
    pub create_scope: ScopeFactory,
}

impl NamespaceRegistration {
    /// A registration with no prompt.
    pub fn new(
        id: impl Into<String>,
        global_name: impl Into<String>,
        description: impl Into<String>,
        required_tool_names: impl IntoIterator<Item = impl Into<String>>,
        create_scope: impl Fn(&NamespaceContext) -> ScopeValue + Send + Sync + 'static,
    ) -> NamespaceRegistration {
        NamespaceRegistration {
            id: id.into(),
            global_name: global_name.into(),
            description: description.into(),
            required_tool_names: required_tool_names.into_iter().map(Into::into).collect(),
            prompt: None,
            create_scope: Arc::new(create_scope),
        }
    }

    /// Sets the prompt.
    pub fn prompt(mut self, prompt: impl Into<String>) -> NamespaceRegistration {
        self.prompt = Some(prompt.into());
        self
    }
}

impl fmt::Debug for NamespaceRegistration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NamespaceRegistration")
            .field("id", &self.id)
            .field("global_name", &self.global_name)
            .field("required_tool_names", &self.required_tool_names)
            .finish_non_exhaustive()
    }
}

/// The separator used in internal namespace paths (`Issues\u{1f}list`); a key containing it is unsafe.
pub const PATH_SEPARATOR: char = '\u{1f}';
