//! `cargo xtask dts-oracle`: type-checks the committed MCP declaration snapshots with the official
//! TypeScript compiler.
//!
//! The snapshots of `crates/codemode-mcp/tests/all/snapshots/` that hold `.d.ts` text (the public
//! catalogs, the API examples and the hostile cases; `cargo test -p codemode-mcp` keeps them equal
//! to what the renderer produces) are written out as files; each server file is compiled together
//! with the rendered `mcp/index.d.ts` (which declares `McpToolResult`, `McpApiHeader`, ...) by
//! `typescript@5` with `strict`, `noEmit`, `lib: es2022`, and every syntactic or semantic diagnostic
//! is a failure. The index is checked on its own. Prints a table; exits non-zero on any diagnostic.
//!
//! `typescript@5` is installed with npm into `$HOME/.cache/codemode-npm` on first use (override
//! with `CODEMODE_NPM_CACHE`), the same place `cargo xtask ts-oracle` uses. Needs `node` and `npm`.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail, ensure};

use crate::{project_root, typescript};

const RUNNER: &str = r#"
const fs = require("fs");
const path = require("path");
const [, , tsDir, workDir, casesPath] = process.argv;
const ts = require(tsDir + "/node_modules/typescript");
const cases = JSON.parse(fs.readFileSync(casesPath, "utf8"));
const options = { strict: true, noEmit: true, lib: ["lib.es2022.d.ts"], types: [], skipLibCheck: false };
const results = [];
for (const c of cases) {
  const files = c.files.map((f) => path.join(workDir, f));
  const program = ts.createProgram(files, options);
  const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => {
    const where = d.file ? path.basename(d.file.fileName) + ":" + (d.file.getLineAndCharacterOfPosition(d.start).line + 1) : "";
    return where + " " + ts.flattenDiagnosticMessageText(d.messageText, " ");
  });
  results.push({ name: c.name, diagnostics, version: ts.version });
}
process.stdout.write(JSON.stringify(results));
"#;

/// The prefix of snapshot names that hold `.d.ts` text (JSON snapshots are left out).
const DTS_SNAPSHOTS: &[&str] = &["all__catalogs__catalog__", "all__api__api_", "all__hostile__hostile_"];
const INDEX_SNAPSHOT: &str = "all__catalogs__catalog_index.snap";
const JSON_SNAPSHOTS: &[&str] =
    &["all__api__api_guest_table.snap", "all__api__api_tool_header.snap", "all__api__api_server_header.snap"];

pub fn run(args: &[String]) -> Result<()> {
    ensure!(args.is_empty(), "usage: cargo xtask dts-oracle");
    let npm_dir = typescript::install()?;

    let snapshots = project_root().join("crates/codemode-mcp/tests/all/snapshots");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&snapshots)
        .with_context(|| format!("reading {}", snapshots.display()))?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    paths.sort();
    let work = std::env::temp_dir().join(format!("codemode-dts-oracle-{}", std::process::id()));
    std::fs::create_dir_all(&work)?;
    let index = snapshot_body(&snapshots.join(INDEX_SNAPSHOT))?;
    std::fs::write(work.join("index.d.ts"), index)?;
    let mut cases = vec![serde_json::json!({ "name": "index", "files": ["index.d.ts"] })];
    for path in &paths {
        let file_name = path.file_name().unwrap_or_default().to_string_lossy().into_owned();
        if !file_name.ends_with(".snap")
            || !DTS_SNAPSHOTS.iter().any(|p| file_name.starts_with(p))
            || JSON_SNAPSHOTS.contains(&file_name.as_str())
        {
            continue;
        }
        let name = file_name.trim_end_matches(".snap").to_owned();
        std::fs::write(work.join(format!("{name}.d.ts")), snapshot_body(path)?)?;
        // Another index stands alone; a server file needs the index's shared types.
        let files = if name.ends_with("_index") {
            vec![format!("{name}.d.ts")]
        } else {
            vec!["index.d.ts".to_owned(), format!("{name}.d.ts")]
        };
        cases.push(serde_json::json!({ "name": name, "files": files }));
    }
    ensure!(cases.len() > 16, "expected the catalog snapshots in {}", snapshots.display());
    let results = typescript::run_node(RUNNER, &npm_dir, &work, &[&work], &cases)?;

    let version = results.first().and_then(|r| r["version"].as_str()).unwrap_or("?").to_owned();
    let mut failures = 0;
    println!("{:<56} tsc", "declaration file");
    for r in &results {
        let diagnostics = r["diagnostics"].as_array().map(Vec::as_slice).unwrap_or_default();
        println!(
            "{:<56} {}",
            r["name"].as_str().unwrap_or("?"),
            if diagnostics.is_empty() { "ok" } else { "ERRORS" }
        );
        for d in diagnostics {
            println!("    {}", d.as_str().unwrap_or("?"));
        }
        failures += usize::from(!diagnostics.is_empty());
    }
    println!("\n{} files, {failures} with diagnostics (typescript {version})", results.len());
    if failures > 0 {
        bail!("{failures} declaration file(s) have diagnostics");
    }
    Ok(())
}

/// The text of an insta snapshot: everything after the second `---` line.
fn snapshot_body(path: &Path) -> Result<String> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut parts = text.splitn(3, "---\n");
    let (Some(""), Some(_header), Some(body)) = (parts.next(), parts.next(), parts.next()) else {
        bail!("{} is not an insta snapshot", path.display());
    };
    Ok(body.to_owned())
}
