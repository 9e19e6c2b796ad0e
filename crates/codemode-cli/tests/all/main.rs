//! Integration tests for the `codemode` binary and its library.

mod cli;
mod deep_cells;
mod fixture;
mod fuzz;
mod serve;
mod serve_hostile;
mod serve_http;
mod serve_protocol;
mod serve_remote;
mod session;
mod stores;

/// A file under `tests/fixtures`.
pub fn fixture_path(name: &str) -> std::path::PathBuf {
    std::path::PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"))
        .join("tests/fixtures")
        .join(name)
}
