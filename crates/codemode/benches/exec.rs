//! End-to-end `exec` latency: a trivial cell (back to back, and paced like model turns), 10
//! sequential and 10 parallel nested calls, 100 sequential nested calls (a call's cost inside an
//! exec), and a trivial cell with the 16 public MCP catalogs (677
//! tools) behind `MCP`; each on the dedicated VM thread (the default) and on the calling thread
//! (`GuestThread::Caller`). The anchor, the npm package `quickjs-wasi` on Node (create + eval `1+1` +
//! dispose), runs in the same invocation (`../codemode-sandbox/benches/anchor`, installed with npm
//! into the target dir on first run; `CODEMODE_BENCH_NO_ANCHOR=1` skips it).
//!
//! Run with `cargo bench -p codemode --bench exec`. Prints min/median per case; with `-- --write`
//! (or `CODEMODE_BENCHMARKS_MD=<path>`, as `cargo xtask bench` sets) it rewrites the `exec` table of
//! `BENCHMARKS.md` (see `codemode-core/benches/support/tables.rs`). `BENCH_ITERS=n` changes the
//! iteration count (200), `BENCH_FILTER=text` runs only the cases whose name contains it.

#[path = "../../codemode-sandbox/benches/anchor/run.rs"]
mod anchor;
#[path = "../../codemode-core/benches/support/tables.rs"]
mod tables;

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use codemode::{
    CodeMode, CodeModeConfig, ExecInput, GuestThread, McpServer, McpTool, NestedCall, RunScope, ToolError,
    ToolHost, ToolOutcome, ToolSpec,
};

struct Echo;

#[async_trait]
impl ToolHost for Echo {
    async fn call(&self, call: NestedCall) -> Result<ToolOutcome, ToolError> {
        Ok(ToolOutcome::details(call.input))
    }
}

/// Iterations per case (`BENCH_ITERS` overrides).
fn iterations() -> usize {
    std::env::var("BENCH_ITERS").ok().and_then(|s| s.parse().ok()).unwrap_or(200)
}

fn runtime_with(thread: GuestThread, tools: Vec<ToolSpec>, servers: Vec<McpServer>) -> CodeMode {
    CodeMode::builder(CodeModeConfig::enabled())
        .tools(tools)
        .mcp_servers(servers)
        .host(Arc::new(Echo))
        .namespaces(codemode::NamespaceRegistry::new())
        .guest_thread(thread)
        .build()
        .unwrap()
}

const TRIVIAL: &str = "return 1 + 1;";

fn main() {
    let iterations = iterations();
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let small = || vec![ToolSpec::core("echo")];
    // The 16 public MCP catalogs (677 tools) behind `MCP`, plus the host tool: what a gateway in
    // front of many servers boots for every run.
    let big =
        || public_mcp_servers().iter().flat_map(|s| s.tool_specs()).chain([ToolSpec::core("echo")]).collect();
    let cm = runtime_with(GuestThread::Dedicated, small(), Vec::new());
    let cm_caller = runtime_with(GuestThread::Caller, small(), Vec::new());
    let big_cm = runtime_with(GuestThread::Dedicated, big(), public_mcp_servers());
    let big_caller = runtime_with(GuestThread::Caller, big(), public_mcp_servers());
    let scope = RunScope::new("bench", "bench");
    let sequential =
        "let n = 0; for (let i = 0; i < 10; i++) { n += (await tools.echo({ i })).i; } return n;";
    // Per-call cost inside a whole exec: (this row - the trivial cell) / 100.
    let hundred = "let n = 0; for (let i = 0; i < 100; i++) { n += (await tools.echo({ i })).i; } return n;";
    let parallel =
        "const r = await Promise.all([0,1,2,3,4,5,6,7,8,9].map((i) => tools.echo({ i }))); return r.length;";
    // (name, runtime, code, pause between runs: VM threads prepare the next VM while idle, as they
    // would between model turns).
    let paced = Duration::from_millis(2);
    let zero = Duration::ZERO;
    let runs: Vec<(&str, &CodeMode, &str, Duration)> = vec![
        ("trivial cell (`return 1 + 1`)", &cm, TRIVIAL, zero),
        ("10 sequential nested calls", &cm, sequential, zero),
        ("10 parallel nested calls", &cm, parallel, zero),
        ("100 sequential nested calls", &cm, hundred, zero),
        ("trivial cell, paced 2 ms apart", &cm, TRIVIAL, paced),
        ("trivial cell, 677 MCP tools in the catalog", &big_cm, TRIVIAL, zero),
        ("trivial cell, 677 MCP tools, paced 2 ms apart", &big_cm, TRIVIAL, paced),
        ("trivial cell, on the calling thread", &cm_caller, TRIVIAL, zero),
        ("trivial cell, on the calling thread, paced 2 ms apart", &cm_caller, TRIVIAL, paced),
        ("10 sequential nested calls, on the calling thread", &cm_caller, sequential, zero),
        ("10 parallel nested calls, on the calling thread", &cm_caller, parallel, zero),
        ("100 sequential nested calls, on the calling thread", &cm_caller, hundred, zero),
        ("trivial cell, 677 MCP tools, on the calling thread", &big_caller, TRIVIAL, zero),
        ("trivial cell, 677 MCP tools, on the calling thread, paced 2 ms apart", &big_caller, TRIVIAL, paced),
    ];
    let anchor = anchor::run(&anchor::source_dir(), iterations);
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
    let mut table =
        tables::Table::new("exec", "Runtime", &["case", "min µs", "median µs", "anchor / codemode (median)"]);
    // `BENCH_FILTER=<text>`: only the cases whose name contains it.
    let filter = std::env::var("BENCH_FILTER").unwrap_or_default();
    for (name, cm, code, pause) in runs.into_iter().filter(|(name, ..)| name.contains(filter.as_str())) {
        let mut samples: Vec<Duration> = Vec::with_capacity(iterations);
        for i in 0..iterations + 10 {
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
            Some(a) if code == TRIVIAL => format!("{:.1}x", a / micros(median)),
            _ => String::new(),
        };
        println!("{name:<68} min {:>9.1} µs   median {:>9.1} µs   {ratio}", micros(min), micros(median));
        table.row(vec![
            name.to_owned(),
            format!("{:.1}", micros(min)),
            format!("{:.1}", micros(median)),
            ratio,
        ]);
    }
    if let Some(a) = anchor_median {
        table.row(vec![
            "anchor: quickjs-wasi create + eval + dispose".into(),
            String::new(),
            format!("{a:.1}"),
            "1.0x".into(),
        ]);
    }
    tables::publish(&[table]);
}

fn public_mcp_servers() -> Vec<McpServer> {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/mcp-catalogs");
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
