//! `cargo xtask fuzz [TARGET] [--seconds N]`: run the cargo-fuzz targets in `fuzz/`.
//!
//! The checks live in the libraries (`<crate>::fuzz::check_*`) and also run on stable as ordinary
//! tests; this task adds coverage-guided fuzzing with libFuzzer. cargo-fuzz needs nightly flags
//! (`-Zsanitizer`); this machine has only stable Rust, so the task sets `RUSTC_BOOTSTRAP=1`, which lets
//! the stable compiler accept them. With no TARGET, every target runs for `--seconds` (default 30).
//!
//! The `ts_oracle` target is not a libFuzzer target: it runs `cargo xtask ts-oracle` on
//! [`TS_ORACLE_PROGRAMS`] generated TypeScript programs from a seed taken from the clock (printed, so a
//! failure can be replayed with `cargo xtask ts-oracle --generated N --seed S`).

use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::project_root;

const TARGETS: &[&str] = &[
    "schema_hint",
    "search",
    "strip",
    "prepare",
    "render_dts",
    "bridge_decode",
    "fixture",
    "session_line",
    "snapshot_bytes",
    "ts_oracle",
];

/// Generated programs the `ts_oracle` fuzz target compares with typescript@5.
const TS_ORACLE_PROGRAMS: usize = 40_000;

pub fn run(args: &[String]) -> Result<()> {
    let mut seconds = 30u64;
    let mut targets = Vec::new();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--seconds" => {
                seconds = it.next().context("--seconds needs a value")?.parse().context("--seconds N")?
            }
            t if TARGETS.contains(&t) => targets.push(t),
            other => bail!("unknown fuzz argument {other:?}; targets: {}", TARGETS.join(", ")),
        }
    }
    if targets.is_empty() {
        targets = TARGETS.to_vec();
    }
    if let Some(at) = targets.iter().position(|t| *t == "ts_oracle") {
        targets.remove(at);
        let seed =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_secs());
        println!("== ts_oracle: {TS_ORACLE_PROGRAMS} generated programs from seed {seed}");
        crate::ts_oracle::compare(TS_ORACLE_PROGRAMS, seed, 40)?;
        if targets.is_empty() {
            return Ok(());
        }
    }
    let has_cargo_fuzz = Command::new("cargo")
        .args(["fuzz", "--version"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !has_cargo_fuzz {
        let status = Command::new("cargo").args(["install", "cargo-fuzz", "--locked"]).status()?;
        if !status.success() {
            bail!("cargo install cargo-fuzz failed");
        }
    }
    for target in targets {
        println!("== fuzz {target} for {seconds}s");
        let status = Command::new("cargo")
            .current_dir(project_root().join("fuzz"))
            .env("RUSTC_BOOTSTRAP", "1")
            .args(["fuzz", "run", target, "--", &format!("-max_total_time={seconds}")])
            .status()?;
        if !status.success() {
            bail!("fuzz target {target} failed");
        }
    }
    Ok(())
}
