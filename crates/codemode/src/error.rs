//! [`BuildError`] (a [`crate::CodeMode`] cannot be built) and [`SurfaceError`] (the provider-payload
//! guard refused a tool list). Run failures are never Rust errors: they are `failed` results.

/// Why [`crate::CodeModeBuilder::build`] failed. These are defects of the host's inputs, never of
/// model code.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// Code Mode is enabled but no [`crate::ToolHost`] was given.
    #[error("code mode is enabled but no ToolHost was configured (CodeModeBuilder::host)")]
    MissingHost,
    /// The guest boot context could not be built from the catalog and MCP metadata.
    #[error("code mode boot context: {0}")]
    BootContext(String),
    /// [`crate::CodeModeBuilder::host_source`] is not a valid source name.
    #[error(
        "the host source name {name:?} is not valid (1-32 lowercase letters, digits, `_` or `-`, starting with a letter; not `mcp` or `client`)"
    )]
    InvalidHostSource {
        /// The refused name.
        name: String,
    },
}

/// The final provider payload does not match the active Code Mode surface (the fail-closed guard).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SurfaceError {
    /// `exec` is missing or appears more than once.
    #[error(
        "code mode is active but the provider payload has {count} `exec` tools (exactly one is required)"
    )]
    ExecCount {
        /// How many there were.
        count: usize,
    },
    /// `wait` is missing or appears more than once.
    #[error(
        "code mode is active but the provider payload has {count} `wait` tools (exactly one is required)"
    )]
    WaitCount {
        /// How many there were.
        count: usize,
    },
    /// A tool that is neither a control tool nor an approved direct-only tool.
    #[error(
        "code mode is active but the provider payload exposes {name:?}, which is not an approved direct-only tool"
    )]
    Unapproved {
        /// The tool name.
        name: String,
    },
    /// An approved direct-only tool appears more than once.
    #[error("code mode is active but the provider payload exposes {name:?} more than once")]
    Duplicate {
        /// The tool name.
        name: String,
    },
}
