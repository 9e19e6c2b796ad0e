//! [`BridgeError`]: what can go wrong while the host prepares a run's bridge.

/// A host-side error while building a run's boot context or namespace table. These are defects of
/// the host's inputs (a namespace scope, catalog names, the MCP table), never of guest code; the
/// runtime fails the run with `internal_error` or drops the offending namespace.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BridgeError {
    /// A namespace `globalName` is not a JS identifier, is a Code Mode global, or uses a private
    /// prefix.
    #[error("namespace {id:?}: invalid globalName {global_name:?}: {reason}")]
    InvalidGlobalName {
        /// Namespace id.
        id: String,
        /// The rejected name.
        global_name: String,
        /// Why.
        reason: &'static str,
    },
    /// Two namespaces share an id or a global name.
    #[error("namespace {id:?}: {what} {name:?} is already taken by another namespace")]
    DuplicateNamespace {
        /// Namespace id.
        id: String,
        /// `"id"` or `"globalName"`.
        what: &'static str,
        /// The duplicated value.
        name: String,
    },
    /// A scope object key cannot be a path segment.
    #[error("namespace {id:?}: unsafe path segment {segment:?} at {path:?}")]
    UnsafeSegment {
        /// Namespace id.
        id: String,
        /// The key.
        segment: String,
        /// Where (segments joined with `.`).
        path: String,
    },
    /// A scope object has the same key twice.
    #[error("namespace {id:?}: duplicate key {segment:?} at {path:?}")]
    DuplicateKey {
        /// Namespace id.
        id: String,
        /// The key.
        segment: String,
        /// Where.
        path: String,
    },
    /// A callable marker targets a tool outside the registration's `requiredToolNames`.
    #[error("namespace {id:?}: {path:?} targets undeclared tool {tool:?}")]
    UndeclaredTool {
        /// Namespace id.
        id: String,
        /// Where.
        path: String,
        /// The tool name.
        tool: String,
    },
    /// The scope root is not an object.
    #[error("namespace {id:?}: the scope must be an object")]
    ScopeNotObject {
        /// Namespace id.
        id: String,
    },
    /// The scope nests deeper than [`crate::MAX_VALUE_DEPTH`].
    #[error("namespace {id:?}: the scope nests deeper than {limit} levels")]
    ScopeTooDeep {
        /// Namespace id.
        id: String,
        /// The limit.
        limit: usize,
    },
    /// The boot context is inconsistent (a bad convenience name, a malformed MCP table, ...).
    #[error("code mode boot context: {0}")]
    InvalidContext(String),
}
