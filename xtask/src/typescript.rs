//! The official TypeScript compiler for the oracle tasks (`ts-oracle`, `dts-oracle`): installed
//! with npm into one shared cache directory and driven by a small Node runner script.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, ensure};

/// The npm prefix that holds `typescript@5`, installed there on first use:
/// `$CODEMODE_NPM_CACHE`, else `$HOME/.cache/codemode-npm`. Needs `npm` on `PATH`.
pub fn install() -> Result<PathBuf> {
    let dir = std::env::var_os("CODEMODE_NPM_CACHE").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/codemode-npm")
    });
    if dir.join("node_modules/typescript/package.json").exists() {
        return Ok(dir);
    }
    std::fs::create_dir_all(&dir)?;
    if !dir.join("package.json").exists() {
        std::fs::write(dir.join("package.json"), "{\"private\":true}\n")?;
    }
    let status = Command::new("npm")
        .args(["install", "--no-audit", "--no-fund", "--prefix"])
        .arg(&dir)
        .arg("typescript@5")
        .status()
        .context("running npm (is it installed?)")?;
    ensure!(status.success(), "npm install typescript@5 failed");
    Ok(dir)
}

/// Writes `runner` and `cases` into `work` as `runner.js` and `cases.json`, runs
/// `node runner.js <ts_dir> <args>... <cases.json>`, removes `work`, and returns the JSON array
/// the runner printed.
pub fn run_node(
    runner: &str,
    ts_dir: &Path,
    work: &Path,
    args: &[&Path],
    cases: &[serde_json::Value],
) -> Result<Vec<serde_json::Value>> {
    let cases_path = work.join("cases.json");
    let runner_path = work.join("runner.js");
    std::fs::write(&cases_path, serde_json::to_vec(cases)?)?;
    std::fs::write(&runner_path, runner)?;
    let output = Command::new("node")
        .arg(&runner_path)
        .arg(ts_dir)
        .args(args)
        .arg(&cases_path)
        .output()
        .context("running node (is it installed?)")?;
    let _ = std::fs::remove_dir_all(work);
    ensure!(output.status.success(), "node failed: {}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).context("runner output")
}
