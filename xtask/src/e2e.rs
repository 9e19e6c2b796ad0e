//! `cargo xtask e2e`: the spec's E2E test plan against real MCP servers.
//!
//! Installs `@modelcontextprotocol/server-everything`, `server-memory` and `server-filesystem` from npm
//! into `$HOME/.cache/codemode-e2e` (the only network use; skipped when already installed, forced with
//! `--reinstall`), builds `codemode` and the rmcp-client driver (`crates/codemode-cli/examples/e2e_driver.rs`),
//! and runs the driver, which prints one PASS/FAIL line per step and `N passed, M failed` (the spec's
//! 16 steps over stdio, step 17 over Streamable HTTP with `codemode serve --http`, and step 18 with a
//! remote upstream). The remote step runs `crates/codemode-cli/tests/fixtures/remote_server.py`
//! (FastMCP) with the python named by `CODEMODE_TEST_MCP_PYTHON`, or one in a venv at
//! `$HOME/.cache/codemode-mcp-venv` that it creates (`pip install 'mcp<2'`) when missing.

use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::project_root;

const PACKAGES: &[&str] = &[
    "@modelcontextprotocol/server-everything",
    "@modelcontextprotocol/server-memory",
    "@modelcontextprotocol/server-filesystem",
];

pub fn run(args: &[String]) -> Result<()> {
    let reinstall = args.iter().any(|a| a == "--reinstall");
    if let Some(unknown) = args.iter().find(|a| *a != "--reinstall") {
        bail!("usage: cargo xtask e2e [--reinstall] (unknown argument {unknown:?})");
    }
    let home = std::env::var_os("HOME").context("HOME is not set")?;
    let cache = PathBuf::from(&home).join(".cache/codemode-e2e");
    std::fs::create_dir_all(&cache)?;
    let installed = PACKAGES.iter().all(|p| cache.join("node_modules").join(p).join("package.json").exists());
    if reinstall || !installed {
        eprintln!("e2e: installing {} into {}", PACKAGES.join(", "), cache.display());
        let status = Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--loglevel=error", "--prefix"])
            .arg(&cache)
            .args(PACKAGES)
            .status()
            .context("running npm (is Node.js installed?)")?;
        if !status.success() {
            bail!("npm install failed ({status})");
        }
    }
    let python = mcp_python(&PathBuf::from(&home))?;
    let root = project_root();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(&cargo)
        .current_dir(&root)
        .args(["build", "-p", "codemode-cli", "--bin", "codemode", "--example", "e2e_driver"])
        .status()?;
    if !status.success() {
        bail!("building codemode failed");
    }
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| root.join("target"));
    let target = if target.is_absolute() { target } else { root.join(target) };
    let codemode = target.join("debug/codemode");
    let driver = target.join("debug/examples/e2e_driver");
    let status = Command::new(&driver)
        .arg("--codemode")
        .arg(&codemode)
        .arg("--servers")
        .arg(&cache)
        .arg("--python")
        .arg(&python)
        .arg("--remote-server")
        .arg(root.join("crates/codemode-cli/tests/fixtures/remote_server.py"))
        .status()?;
    if !status.success() {
        bail!("e2e failed");
    }
    Ok(())
}

/// A python that has the MCP SDK: `CODEMODE_TEST_MCP_PYTHON`, or the venv's, created when missing.
fn mcp_python(home: &std::path::Path) -> Result<PathBuf> {
    let has_sdk = |python: &std::path::Path| {
        Command::new(python)
            .args(["-c", "import mcp.server.fastmcp, uvicorn"])
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if let Some(python) = std::env::var_os("CODEMODE_TEST_MCP_PYTHON") {
        let python = PathBuf::from(python);
        if !has_sdk(&python) {
            bail!(
                "CODEMODE_TEST_MCP_PYTHON={} cannot import the MCP SDK (pip install 'mcp<2')",
                python.display()
            );
        }
        return Ok(python);
    }
    let venv = home.join(".cache/codemode-mcp-venv");
    let python = venv.join("bin/python");
    if !has_sdk(&python) {
        eprintln!("e2e: creating {} with the Python MCP SDK (mcp<2)", venv.display());
        let status = Command::new("python3").arg("-m").arg("venv").arg(&venv).status()?;
        if !status.success() {
            bail!("python3 -m venv {} failed (is python3-venv installed?)", venv.display());
        }
        let status = Command::new(venv.join("bin/pip")).args(["install", "-q", "mcp<2"]).status()?;
        if !status.success() {
            bail!("pip install 'mcp<2' failed");
        }
    }
    Ok(python)
}
