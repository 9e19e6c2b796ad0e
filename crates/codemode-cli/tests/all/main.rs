//! Integration tests for the `codemode` binary and its library.

mod cli;
mod fixture;
mod fuzz;
mod serve;
mod session;

/// A file under `tests/fixtures`.
pub fn fixture_path(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}
