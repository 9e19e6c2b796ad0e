//! The `codemode` binary's library: fixture catalogs, the fixture [`ToolHost`](codemode::ToolHost),
//! the JSON-lines session protocol and the MCP gateway.
//!
//! ```
//! use codemode_cli::fixture::FixtureCatalog;
//! use std::path::Path;
//!
//! let catalog = FixtureCatalog::from_str_in(
//!     r#"{ "tools": [{ "name": "ping", "behavior": { "kind": "static", "details": "pong" } }] }"#,
//!     "inline.json",
//!     Path::new("."),
//! )
//! .unwrap();
//! assert_eq!(catalog.effective_tools()[0].catalog_id(), "openclaw:core:ping");
//! ```
#![deny(missing_docs)]

// The crate README (its crates.io page) is compiled and run as doc tests too.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

pub mod demo;
pub mod engine;
mod error;
pub mod fixture;
#[doc(hidden)]
pub mod fuzz;
pub mod host;
pub mod serve;
pub mod session;

pub use error::CliError;

/// Writes `text` to stdout and flushes it. A reader that went away (`codemode exec … | head`) is
/// not an error: the output is simply no longer wanted.
pub fn write_stdout(text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}
