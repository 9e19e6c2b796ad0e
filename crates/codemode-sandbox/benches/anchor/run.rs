#![allow(dead_code)] // Each bench that includes this file reads different fields.
//! Runs the anchor (`anchor.mjs`: the npm package `quickjs-wasi` on Node) and parses its lines.
//! Shared by the benches of codemode-sandbox and codemode (`#[path]` include), so both compare
//! against the same measurement.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One anchor measurement.
pub struct AnchorRow {
    pub median_us: f64,
    pub min_us: f64,
    pub bytes: Option<usize>,
}

/// `crates/codemode-sandbox/benches/anchor`, from either crate's bench.
pub fn source_dir() -> PathBuf {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    manifest.join("../codemode-sandbox/benches/anchor")
}

/// Installs `quickjs-wasi` (npm, into the target dir, once) and runs `anchor.mjs` with `iters`
/// iterations. `CODEMODE_BENCH_NO_ANCHOR=1` skips it.
#[allow(dead_code)] // each bench that includes this file uses one of the two
pub fn run(src: &Path, iters: usize) -> Result<HashMap<String, AnchorRow>, String> {
    run_with_env(src, iters, &[])
}

/// [`run`] with `env` set for `anchor.mjs` (the sandbox bench hands it the cell wrapper).
pub fn run_with_env(
    src: &Path,
    iters: usize,
    env: &[(&str, &str)],
) -> Result<HashMap<String, AnchorRow>, String> {
    if std::env::var_os("CODEMODE_BENCH_NO_ANCHOR").is_some() {
        return Err("skipped (CODEMODE_BENCH_NO_ANCHOR)".into());
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| src.join("../../../../target"));
    let dir = target.join("codemode-bench-anchor");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    for f in ["anchor.mjs", "package.json", "typical_cell.js"] {
        std::fs::copy(src.join(f), dir.join(f)).map_err(|e| format!("{}: {e}", src.join(f).display()))?;
    }
    if !dir.join("node_modules/quickjs-wasi/package.json").exists() {
        let st = Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--silent"])
            .current_dir(&dir)
            .status()
            .map_err(|e| format!("npm: {e}"))?;
        if !st.success() {
            return Err("npm install quickjs-wasi failed".into());
        }
    }
    let out = Command::new("node")
        .envs(env.iter().copied())
        .arg("anchor.mjs")
        .arg(iters.to_string())
        .current_dir(&dir)
        .output()
        .map_err(|e| format!("node: {e}"))?;
    if !out.status.success() {
        return Err(format!("anchor failed: {}", String::from_utf8_lossy(&out.stderr)));
    }
    let mut rows = HashMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let f: Vec<&str> = line.split('\t').collect();
        if f.len() >= 3 {
            let parse = |s: &str| s.parse::<f64>().unwrap_or(f64::NAN);
            rows.insert(
                f[0].to_owned(),
                AnchorRow {
                    median_us: parse(f[1]),
                    min_us: parse(f[2]),
                    bytes: f.get(3).and_then(|b| b.parse().ok()),
                },
            );
        }
    }
    Ok(rows)
}
