//! End-to-end `exec` latency: a trivial cell (back to back, and paced like model turns), 10
//! sequential and 10 parallel nested calls, and a trivial cell with the 16 public MCP catalogs (677
//! tools) behind `MCP`. The anchor, the npm package `quickjs-wasi` on Node (create + eval `1+1` +
//! dispose), runs in the same invocation (`../codemode-sandbox/benches/anchor`, installed with npm
//! into the target dir on first run; `CODEMODE_BENCH_NO_ANCHOR=1` skips it).
//!
//! Run with `cargo bench -p codemode --bench exec`. Prints min/median per case and, with
//! `CODEMODE_BENCH_WRITE=1`, rewrites the table of the `## Runtime` section of `/work/main/BENCHMARKS.md`
//! (or the file named by `CODEMODE_BENCHMARKS_MD`), keeping the notes below it.

#[path = "../../codemode-sandbox/benches/anchor/run.rs"]
mod anchor;

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use codemode::{
    CodeMode, CodeModeConfig, ExecInput, McpServer, McpTool, NestedCall, RunScope, ToolError, ToolHost,
    ToolOutcome, ToolSpec,
};

struct Echo;

#[async_trait]
impl ToolHost for Echo {
    async fn call(&self, call: NestedCall) -> Result<ToolOutcome, ToolError> {
        Ok(ToolOutcome::details(call.input))
    }
}

const ITERATIONS: usize = 200;

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let cm = CodeMode::builder(CodeModeConfig::enabled())
        .tools(vec![ToolSpec::core("echo")])
        .host(Arc::new(Echo))
        .namespaces(codemode::NamespaceRegistry::new())
        .build()
        .unwrap();
    let scope = RunScope::new("bench", "bench");
    let cases = [
        ("trivial cell (`return 1 + 1`)", "return 1 + 1;"),
        (
            "10 sequential nested calls",
            "let n = 0; for (let i = 0; i < 10; i++) { n += (await tools.echo({ i })).i; } return n;",
        ),
        (
            "10 parallel nested calls",
            "const r = await Promise.all([0,1,2,3,4,5,6,7,8,9].map((i) => tools.echo({ i }))); return r.length;",
        ),
    ];
    // The 16 public MCP catalogs (677 tools) behind `MCP`, plus the host tool: what a gateway in
    // front of many servers boots for every run.
    let big = CodeMode::builder(CodeModeConfig::enabled())
        .tools(public_mcp_servers().iter().flat_map(|s| s.tool_specs()).chain([ToolSpec::core("echo")]))
        .mcp_servers(public_mcp_servers())
        .host(Arc::new(Echo))
        .namespaces(codemode::NamespaceRegistry::new())
        .build()
        .unwrap();
    // (name, runtime, code, pause between runs: VM threads prepare the next VM while idle, as they
    // would between model turns).
    let paced = Duration::from_millis(2);
    let runs: Vec<(&str, &CodeMode, &str, Duration)> = cases
        .iter()
        .map(|(name, code)| (*name, &cm, *code, Duration::ZERO))
        .chain([
            ("trivial cell, paced 2 ms apart", &cm, "return 1 + 1;", paced),
            ("trivial cell, 677 MCP tools in the catalog", &big, "return 1 + 1;", Duration::ZERO),
            ("trivial cell, 677 MCP tools, paced 2 ms apart", &big, "return 1 + 1;", paced),
        ])
        .collect();
    let anchor = anchor::run(&anchor::source_dir(), ITERATIONS);
    let anchor_median = match &anchor {
        Ok(rows) => rows.get("start_eval_teardown").map(|r| r.median_us),
        Err(e) => {
            eprintln!("anchor unavailable: {e}");
            None
        }
    };
    if let Some(a) = anchor_median {
        println!("anchor: quickjs-wasi create + eval `1+1` + dispose, median {a:.1} µs");
    }
    let mut rows = Vec::new();
    for (name, cm, code, pause) in runs {
        let mut samples: Vec<Duration> = Vec::with_capacity(ITERATIONS);
        for i in 0..ITERATIONS + 10 {
            std::thread::sleep(pause);
            let started = Instant::now();
            let result = runtime.block_on(cm.exec(&scope, ExecInput::code(code)));
            let elapsed = started.elapsed();
            assert_eq!(result.status(), "completed", "{name}: {:?}", result.to_json());
            if i >= 10 {
                samples.push(elapsed);
            }
        }
        samples.sort();
        let (min, median) = (samples[0], samples[samples.len() / 2]);
        let ratio = match anchor_median {
            Some(a) if code == "return 1 + 1;" => format!("{:.1}x", a / micros(median)),
            _ => String::new(),
        };
        println!("{name:<48} min {:>9.1} µs   median {:>9.1} µs   {ratio}", micros(min), micros(median));
        rows.push(format!("| {name} | {:.1} | {:.1} | {ratio} |", micros(min), micros(median)));
    }
    if let Some(a) = anchor_median {
        rows.push(format!("| anchor: quickjs-wasi create + eval + dispose | | {a:.1} | 1.0x |"));
    }
    if std::env::var_os("CODEMODE_BENCH_WRITE").is_some() {
        let path =
            std::env::var("CODEMODE_BENCHMARKS_MD").unwrap_or_else(|_| "/work/main/BENCHMARKS.md".into());
        write_section(&path, &rows);
    }
}

fn public_mcp_servers() -> Vec<McpServer> {
    let dir = std::path::PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"))
        .join("../../data/mcp-catalogs");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.strip_suffix(".json").map(str::to_owned))
        .filter(|n| n != "INDEX")
        .collect();
    names.sort();
    names
        .iter()
        .map(|name| {
            let text = std::fs::read_to_string(dir.join(format!("{name}.json"))).unwrap();
            let value: serde_json::Value = serde_json::from_str(&text).unwrap();
            let tools =
                value["tools"].as_array().unwrap().iter().filter_map(McpTool::from_value_lossy).collect();
            McpServer::new(name.replace('-', "_"), tools)
        })
        .collect()
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn write_section(path: &str, rows: &[String]) {
    let existing = std::fs::read_to_string(path).unwrap_or_default();
    let section = format!(
        "## Runtime\n\nEnd-to-end `CodeMode::exec` (validate, strip, VM thread, boot, evaluate, nested calls through an \
         immediate async `ToolHost`, result), {ITERATIONS} iterations after 10 warm-up runs, `cargo bench -p codemode --bench exec`.\n\n\
         | case | min µs | median µs | anchor / codemode (median) |\n| --- | --- | --- | --- |\n{}\n",
        rows.join("\n")
    );
    let updated = match existing.find("## Runtime") {
        Some(start) => {
            let rest = &existing[start + 2..];
            let end = rest.find("\n## ").map(|i| start + 2 + i + 1).unwrap_or(existing.len());
            // Notes written below the table are kept.
            let old = &existing[start..end];
            let notes = old
                .find("\n| ")
                .and_then(|t| old[t + 1..].find("\n\n").map(|n| &old[t + 1 + n + 1..]))
                .unwrap_or("");
            format!(
                "{}{}{}{}",
                &existing[..start],
                section,
                if notes.is_empty() { "\n" } else { notes },
                &existing[end..]
            )
        }
        None if existing.is_empty() => format!("# Benchmarks\n\n{section}"),
        None => format!("{}\n{section}", existing.trim_end_matches('\n').to_owned() + "\n"),
    };
    std::fs::write(path, updated).unwrap();
}
