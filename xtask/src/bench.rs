//! `cargo xtask bench [--out FILE] [--only NAME,...] [--list]`: runs every benchmark in release
//! and rewrites the tables of `BENCHMARKS.md` (at the workspace root unless `--out` names another
//! file). Each bench writes its own tables (see `crates/codemode-core/benches/support/tables.rs`)
//! into the file named by `CODEMODE_BENCHMARKS_MD`, which this task sets; notes around the tables
//! are kept. Benchmarks need a quiet machine: run nothing else meanwhile.

use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::project_root;

/// (name, package, bench target, what it measures). Bench target names are unique in the workspace.
const BENCHES: &[(&str, &str, &str, &str)] = &[
    ("sandbox", "codemode-sandbox", "sandbox", "VM start/eval/snapshot/restore beside quickjs-wasi"),
    ("bridge", "codemode-bridge", "bridge", "nested-call round trip through the prelude"),
    ("exec", "codemode", "exec", "full CodeMode::exec beside the anchor"),
    ("scale", "codemode", "scale", "100 / 1,000 / 10,000 tools"),
    ("throughput", "codemode", "throughput", "execs/s at 1, 4, 12 sessions"),
    ("gateway", "codemode-cli", "gateway", "execs/s through codemode serve with an MCP client"),
    ("strip", "codemode-ts", "strip", "TypeScript strip"),
    ("render", "codemode-mcp", "render", "MCP declarations"),
    ("hint", "codemode-core", "hint", "JSON Schema hints"),
    ("search", "codemode-catalog", "search_quality", "catalog search quality and speed"),
];

pub fn run(args: &[String]) -> Result<()> {
    let mut out: Option<PathBuf> = None;
    let mut only: Option<Vec<String>> = None;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--out" => out = Some(PathBuf::from(args.next().context("--out needs a file")?)),
            "--only" => {
                only =
                    Some(args.next().context("--only needs names")?.split(',').map(str::to_owned).collect())
            }
            "--list" => {
                for (name, package, bench, what) in BENCHES {
                    println!("{name:<11} cargo bench -p {package} --bench {bench}   ({what})");
                }
                return Ok(());
            }
            other => {
                bail!("usage: cargo xtask bench [--out FILE] [--only NAME,...] [--list] (unknown {other:?})")
            }
        }
    }
    let root = project_root();
    let out = out.unwrap_or_else(|| root.join("BENCHMARKS.md"));
    let out = if out.is_absolute() { out } else { std::env::current_dir()?.join(out) };
    if let Some(unknown) = only.iter().flatten().find(|n| !BENCHES.iter().any(|(name, ..)| name == n)) {
        bail!("unknown bench {unknown:?} (see `cargo xtask bench --list`)");
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    // Every bench is built and run with `--workspace` (bench names are unique in the workspace):
    // one feature resolution, so the release dependencies are built once, not once per package.
    eprintln!("=== building the benches (release)");
    let status = Command::new(&cargo)
        .current_dir(&root)
        .args(["bench", "--workspace", "--no-run"])
        .status()
        .context("building the benches")?;
    if !status.success() {
        bail!("building the benches failed");
    }
    let mut failed = Vec::new();
    for (name, _package, bench, what) in BENCHES {
        if only.as_ref().is_some_and(|o| !o.iter().any(|n| n == name)) {
            continue;
        }
        eprintln!("\n=== bench {name}: {what}");
        let status = Command::new(&cargo)
            .current_dir(&root)
            .args(["bench", "--workspace", "--bench", bench])
            .env("CODEMODE_BENCHMARKS_MD", &out)
            .status()
            .with_context(|| format!("running the {name} bench"))?;
        if !status.success() {
            failed.push(*name);
        }
    }
    if !failed.is_empty() {
        bail!("benches failed: {}", failed.join(", "));
    }
    eprintln!("\ntables written to {}", out.display());
    Ok(())
}

#[cfg(test)]
#[path = "../../crates/codemode-core/benches/support/tables.rs"]
mod tables;

#[cfg(test)]
mod tests {
    use super::tables::{Table, place};

    fn table(key: &'static str, heading: &'static str, v: &str) -> Table {
        let mut t = Table::new(key, heading, &["case", "µs"]);
        t.row(vec!["a".into(), v.into()]);
        t
    }

    /// A table goes at the end of its section the first time, then only its marked block is
    /// replaced: the notes around it and the other sections stay as they were.
    #[test]
    fn tables_replace_only_their_marked_block() {
        let doc = "# Benchmarks\n\n## Runtime\n\nIntro.\n\n## Other\n\nKept.\n";
        let once = place(doc, &table("exec", "Runtime", "1.0"));
        assert_eq!(
            once,
            "# Benchmarks\n\n## Runtime\n\nIntro.\n\n<!-- bench-table: exec -->\n| case | µs |\n| --- | ---: |\n| a | 1.0 |\n<!-- /bench-table -->\n\n## Other\n\nKept.\n"
        );
        let notes = once.replace("<!-- /bench-table -->\n", "<!-- /bench-table -->\n\nNotes.\n");
        let twice = place(&notes, &table("exec", "Runtime", "2.0"));
        assert_eq!(twice, notes.replace("| a | 1.0 |", "| a | 2.0 |"));
        // A new section at the end when the heading is not there.
        let new = place(&twice, &table("scale", "Scale", "3.0"));
        assert!(new.starts_with(&twice.trim_end_matches('\n').to_owned()));
        assert!(new.ends_with("## Scale\n\n<!-- bench-table: scale -->\n| case | µs |\n| --- | ---: |\n| a | 3.0 |\n<!-- /bench-table -->\n"), "{new}");
    }
}
