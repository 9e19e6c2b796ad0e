//! `cargo xtask <task>`: repository automation. Each task lives in its own module.

use std::path::PathBuf;

use anyhow::{Result, bail};

mod bench;
mod dts_oracle;
mod e2e;
mod fuzz;
mod guest;
mod package;
#[cfg(test)]
mod tidy;
#[cfg(test)]
mod tidy_layers;
mod ts_gen;
mod ts_oracle;
mod typescript;

fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let task = args.next().unwrap_or_default();
    let rest: Vec<String> = args.collect();
    match task.as_str() {
        "bench" => bench::run(&rest),
        "e2e" => e2e::run(&rest),
        "guest" => guest::run(&rest),
        "fuzz" => fuzz::run(&rest),
        "ts-oracle" => ts_oracle::run(&rest),
        "dts-oracle" => dts_oracle::run(&rest),
        "package" => package::run(&rest),
        "semver" => package::semver(&rest),
        _ => {
            bail!(
                "usage: cargo xtask <bench|guest|e2e|ts-oracle|dts-oracle|fuzz|package|semver> [args]\n(unknown task {task:?})"
            )
        }
    }
}

/// The workspace root (the directory holding the root `Cargo.toml`).
pub fn project_root() -> PathBuf {
    PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"))
        .parent()
        .expect("xtask lives one level below the root")
        .to_path_buf()
}
