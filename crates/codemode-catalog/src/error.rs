//! The crate's error types: [`CatalogError`] (guest-facing catalog look-ups) and [`NamespaceError`]
//! (namespace registration and per-run visibility).

/// A catalog look-up that cannot be served. Messages are written for the model: they name the id
/// (shortened when it is long) and say what to do instead.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CatalogError {
    /// No guest-visible entry has this id.
    #[error("unknown tool id {id:?}{}", suggestion_text(.suggestions))]
    UnknownTool {
        /// The requested id (at most 200 characters of it).
        id: String,
        /// Up to three guest-visible ids closest to the requested one, best first.
        suggestions: Vec<String>,
    },
    /// The id names an MCP entry, which the guest reaches only through the `MCP` namespace.
    #[error(
        "{id:?} is an MCP tool; MCP tools are not available through tools.*; call MCP.<server>.<tool>(input) \
         instead (see API.list(\"mcp\"))"
    )]
    McpTool {
        /// The requested id.
        id: String,
    },
}

fn suggestion_text(suggestions: &[String]) -> String {
    if suggestions.is_empty() {
        "; use tools.search(query) or ALL_TOOLS to find tool ids".to_owned()
    } else {
        let list: Vec<String> = suggestions.iter().map(|s| format!("{s:?}")).collect();
        format!("; did you mean {}?", list.join(", "))
    }
}

/// A namespace registration that is refused, or a namespace hidden for one run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NamespaceError {
    /// The plugin id is empty.
    #[error("namespace {id:?}: the plugin id must not be empty")]
    EmptyPluginId {
        /// The namespace id.
        id: String,
    },
    /// The namespace id is empty or contains characters outside `[A-Za-z0-9_.-]`.
    #[error("namespace id {id:?} is invalid: use 1-128 characters from A-Z a-z 0-9 _ . -")]
    InvalidId {
        /// The namespace id.
        id: String,
    },
    /// `globalName` is not a JavaScript identifier (ASCII, not a reserved word).
    #[error("namespace {id:?}: globalName {global_name:?} is not a JavaScript identifier")]
    InvalidGlobalName {
        /// The namespace id.
        id: String,
        /// The refused global name.
        global_name: String,
    },
    /// `globalName` collides with a Code Mode global, a private prefix or a JavaScript built-in.
    #[error("namespace {id:?}: globalName {global_name:?} is reserved ({reason})")]
    ReservedGlobalName {
        /// The namespace id.
        id: String,
        /// The refused global name.
        global_name: String,
        /// Which reserved set it collides with.
        reason: &'static str,
    },
    /// `requiredToolNames` is empty, so nothing would gate visibility.
    #[error("namespace {id:?}: requiredToolNames must list at least one tool (it gates visibility)")]
    NoRequiredTools {
        /// The namespace id.
        id: String,
    },
    /// A required tool name is empty or listed twice.
    #[error("namespace {id:?}: required tool name {tool_name:?} is empty or listed twice")]
    InvalidRequiredTool {
        /// The namespace id.
        id: String,
        /// The offending name.
        tool_name: String,
    },
    /// Another registration already uses this namespace id.
    #[error("namespace {id:?} is already registered by plugin {existing_plugin:?}")]
    DuplicateId {
        /// The namespace id.
        id: String,
        /// The plugin that registered it first.
        existing_plugin: String,
    },
    /// Another registration already uses this global name.
    #[error("namespace {id:?}: globalName {global_name:?} is already used by namespace {existing_id:?}")]
    DuplicateGlobalName {
        /// The namespace id.
        id: String,
        /// The global name.
        global_name: String,
        /// The namespace that uses it.
        existing_id: String,
    },
    /// A required tool is not in the run's catalog (the namespace is hidden for the run).
    #[error("namespace {id:?} is hidden: required tool {tool_name:?} is not in this run's catalog")]
    MissingTool {
        /// The namespace id.
        id: String,
        /// The missing tool name.
        tool_name: String,
    },
    /// A required tool exists only under another owner (the namespace is hidden for the run).
    #[error(
        "namespace {id:?} is hidden: required tool {tool_name:?} is not owned by plugin {plugin_id:?} \
         (found {found:?})"
    )]
    ForeignTool {
        /// The namespace id.
        id: String,
        /// The tool name.
        tool_name: String,
        /// The registering plugin.
        plugin_id: String,
        /// The catalog ids that carry that name under other owners.
        found: Vec<String>,
    },
    /// The scope factory panicked (the namespace is hidden for the run).
    #[error("namespace {id:?} is hidden: its scope factory panicked")]
    ScopePanicked {
        /// The namespace id.
        id: String,
    },
    /// The scope is not an object at its root.
    #[error("namespace {id:?} is hidden: the scope must be an object")]
    ScopeNotObject {
        /// The namespace id.
        id: String,
    },
    /// A scope key is unsafe as a path segment.
    #[error(
        "namespace {id:?} is hidden: unsafe scope key {key:?} at {path:?} (keys must not be empty, \
         __proto__, constructor, prototype, or contain the path separator)"
    )]
    UnsafeKey {
        /// The namespace id.
        id: String,
        /// The path of the object holding the key, segments joined with `.`.
        path: String,
        /// The refused key.
        key: String,
    },
    /// A scope object has the same key twice.
    #[error("namespace {id:?} is hidden: duplicate scope key {key:?} at {path:?}")]
    DuplicateKey {
        /// The namespace id.
        id: String,
        /// The path of the object holding the key.
        path: String,
        /// The duplicated key.
        key: String,
    },
    /// A callable path targets a tool that is not in `requiredToolNames`.
    #[error(
        "namespace {id:?} is hidden: callable {path:?} targets {tool_name:?}, which is not in requiredToolNames"
    )]
    UndeclaredTool {
        /// The namespace id.
        id: String,
        /// The callable path, segments joined with `.`.
        path: String,
        /// The undeclared tool name.
        tool_name: String,
    },
    /// The scope nests deeper than [`MAX_SCOPE_DEPTH`](crate::namespace::MAX_SCOPE_DEPTH).
    #[error("namespace {id:?} is hidden: the scope nests deeper than {max} levels")]
    ScopeTooDeep {
        /// The namespace id.
        id: String,
        /// The limit.
        max: usize,
    },
    /// A guest call named a namespace that is not visible in this run.
    #[error("unknown namespace {namespace:?}")]
    UnknownNamespace {
        /// The requested namespace (at most 200 characters of it).
        namespace: String,
    },
    /// A guest call named a path that is not a callable member of the namespace.
    #[error("namespace {namespace:?} has no callable {path:?}")]
    UnknownPath {
        /// The namespace.
        namespace: String,
        /// The requested path, segments joined with `.` (at most 200 characters).
        path: String,
    },
}
