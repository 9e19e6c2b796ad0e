//! `cargo xtask e2e`: the spec's E2E test plan against real MCP servers.
//!
//! Installs `@modelcontextprotocol/server-everything`, `server-memory` and `server-filesystem` from npm
//! into `$HOME/.cache/codemode-e2e` (the only network use; skipped when already installed, forced with
//! `--reinstall`), builds `codemode` and the rmcp-client driver (`crates/codemode-cli/examples/e2e_driver.rs`),
//! and runs the driver, which prints one PASS/FAIL line per step and `N passed, M failed` (the spec's
//! 16 steps over stdio, then step 17 over Streamable HTTP, `codemode serve --http`).

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
    let cache = PathBuf::from(home).join(".cache/codemode-e2e");
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
    let status =
        Command::new(&driver).arg("--codemode").arg(&codemode).arg("--servers").arg(&cache).status()?;
    if !status.success() {
        bail!("e2e failed");
    }
    Ok(())
}
