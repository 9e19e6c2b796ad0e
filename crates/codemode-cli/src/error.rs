//! [`CliError`]: everything the `codemode` binary reports about its inputs.

/// A problem with the binary's inputs (files, config, protocol requests) or its upstream servers.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CliError {
    /// A file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A file is not valid: `path` is the JSON path of the problem.
    #[error("{file}: {path}: {message}")]
    Invalid {
        /// The file (or `<embedded>`).
        file: String,
        /// JSON path, e.g. `$.tools[2].behavior.kind`.
        path: String,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// The Code Mode configuration is not valid.
    #[error("{file}: {path}: {message}")]
    Config {
        /// The file the configuration came from.
        file: String,
        /// JSON path of the problem.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// `resolve` named a call that is not pending.
    #[error(
        "no pending manual tool call with callId {0:?} (already resolved, cancelled, or never dispatched)"
    )]
    UnknownCall(String),
    /// An upstream MCP server failed.
    #[error("MCP server {server:?}: {message}")]
    Upstream {
        /// The server name.
        server: String,
        /// What happened.
        message: String,
    },
    /// The runtime refused to start.
    #[error("code mode: {0}")]
    Runtime(String),
}
