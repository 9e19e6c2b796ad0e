//! Costs as the catalog grows: synthetic catalogs of 100, 1,000 and 10,000 MCP tools built from the
//! 16 public catalogs' shapes (`support/synthetic.rs`), beside a 1-tool runtime. Per size:
//! `CodeMode` build time, a trivial exec (paced 2 ms apart, like model turns) and its ratio to the
//! 1-tool case (measured in alternating blocks beside it, so both see the same machine), `API.search`'s host-side ranking (`Catalog::search_mcp`, limit 8) per query of
//! `data/search-intents.json`, and the first search (which builds the index), the resident memory
//! a built `CodeMode` adds, and the model-visible sizes (surface, quick index, `.d.ts` files). It also
//! prints how much of a build is `Catalog::build` and `McpApi::build` (the rest is the guest API's
//! boot into the base image).
//!
//! `cargo bench -p codemode --bench scale` (`-- --write` rewrites the `scale` table of
//! `BENCHMARKS.md`; `CODEMODE_SCALE_SIZES=100,1000` picks sizes).

#[path = "support/synthetic.rs"]
mod synthetic;
#[path = "../../codemode-core/benches/support/tables.rs"]
mod tables;

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use codemode::{
    CodeMode, CodeModeConfig, ExecInput, McpServer, NamespaceRegistry, NestedCall, RunOptions, RunScope,
    Sandbox, SandboxConfig, SandboxFactory, ToolError, ToolHost, ToolOutcome, ToolSpec, definition_chars,
};
use codemode_catalog::{Catalog, CatalogOptions, QuickIndexOptions};
use codemode_mcp::{McpApi, McpApiOptions};

struct Echo;

#[async_trait]
impl ToolHost for Echo {
    async fn call(&self, call: NestedCall) -> Result<ToolOutcome, ToolError> {
        Ok(ToolOutcome::details(call.input))
    }
}

fn build(tools: Vec<ToolSpec>, servers: Vec<McpServer>) -> CodeMode {
    CodeMode::builder(CodeModeConfig::enabled())
        .tools(tools)
        .mcp_servers(servers)
        .host(Arc::new(Echo))
        .namespaces(NamespaceRegistry::new())
        .build()
        .unwrap()
}

/// The same runtime with VM recycling off (`SandboxConfig::recycle_min_base_bytes`): every fresh
/// VM restores the whole base image, as before recycling (the A/B column).
fn build_without_recycling(tools: Vec<ToolSpec>, servers: Vec<McpServer>) -> CodeMode {
    let factory: SandboxFactory = Arc::new(|config: &CodeModeConfig, prelude: &str| {
        let mut sandbox = SandboxConfig::default();
        sandbox.memory_limit_bytes = config.memory_limit_bytes();
        sandbox.recycle_min_base_bytes = usize::MAX;
        Sandbox::new(sandbox, prelude)
    });
    CodeMode::builder(CodeModeConfig::enabled())
        .tools(tools)
        .mcp_servers(servers)
        .host(Arc::new(Echo))
        .namespaces(NamespaceRegistry::new())
        .sandbox_factory(factory)
        .build()
        .unwrap()
}

/// Resident set size of this process, bytes (Linux; 0 elsewhere).
fn rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |pages| pages * 4096)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn queries() -> Vec<String> {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/search-intents.json");
    let text = std::fs::read_to_string(path).unwrap();
    let intents: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
    intents.iter().filter_map(|i| i["query"].as_str().map(str::to_owned)).collect()
}

const EXECS: usize = 200;

/// `count` trivial execs paced 2 ms apart (after `warm_up` more that are not kept).
fn trivial_samples(
    runtime: &tokio::runtime::Runtime,
    cm: &CodeMode,
    warm_up: usize,
    count: usize,
) -> Vec<Duration> {
    let scope = RunScope::new("bench", "bench");
    let mut samples = Vec::with_capacity(count);
    for i in 0..warm_up + count {
        std::thread::sleep(Duration::from_millis(2));
        let started = Instant::now();
        let r = runtime.block_on(cm.exec(&scope, ExecInput::code("return 1 + 1;")));
        let took = started.elapsed();
        assert_eq!(r.status(), "completed", "{:?}", r.to_json());
        if i >= warm_up {
            samples.push(took);
        }
    }
    samples
}

/// Median of `EXECS` trivial execs paced 2 ms apart (after 10 warm-up runs).
fn trivial_exec(runtime: &tokio::runtime::Runtime, cm: &CodeMode) -> Duration {
    median(trivial_samples(runtime, cm, 10, EXECS))
}

/// Blocks of trivial execs on the 1-tool runtime and on `cm`, alternating (4 blocks of
/// `EXECS / 4` each, after 10 warm-up runs each): the medians of both, measured under the same
/// conditions, for the "vs 1 tool" ratio.
fn paired_trivial_exec(
    runtime: &tokio::runtime::Runtime,
    one: &CodeMode,
    cm: &CodeMode,
) -> (Duration, Duration) {
    trivial_samples(runtime, one, 10, 0);
    trivial_samples(runtime, cm, 10, 0);
    let (mut a, mut b) = (Vec::with_capacity(EXECS), Vec::with_capacity(EXECS));
    for _ in 0..4 {
        a.extend(trivial_samples(runtime, one, 0, EXECS / 4));
        b.extend(trivial_samples(runtime, cm, 0, EXECS / 4));
    }
    (median(a), median(b))
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let sizes: Vec<usize> = std::env::var("CODEMODE_SCALE_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|n| n.trim().replace('_', "").parse().ok()).collect())
        .unwrap_or_else(|| vec![100, 1_000, 10_000]);
    let queries = queries();
    // The process-wide sandbox (module compile + prelude) is created by the first build.
    let one_tool = || build(vec![ToolSpec::core("echo")], Vec::new());
    drop(one_tool());
    let one = one_tool();
    let baseline = trivial_exec(&runtime, &one);
    let one_base_kib = one.base_image_bytes() / 1024;
    println!("1 tool: trivial exec median {:.1} µs, base image {one_base_kib} KiB", micros(baseline));
    let mut table = tables::Table::new(
        "scale",
        "Scale",
        &[
            "catalog",
            "build median ms",
            "trivial exec median µs",
            "vs 1 tool",
            "without recycling µs",
            "base image KiB",
            "search median µs",
            "first search ms",
            "memory per CodeMode MiB",
            "surface chars",
            "quick index chars",
            ".d.ts total KiB",
        ],
    );
    table.row(vec![
        "1 tool".into(),
        String::new(),
        format!("{:.1}", micros(baseline)),
        "1.00x".into(),
        String::new(),
        one_base_kib.to_string(),
        String::new(),
        String::new(),
        String::new(),
        String::new(),
        String::new(),
        String::new(),
    ]);
    for n in sizes {
        let servers = synthetic::synthetic_servers(n);
        let specs = synthetic::specs(&servers);
        // Build time (inputs cloned outside the clock).
        let rounds = if n >= 10_000 { 5 } else { 10 };
        let mut builds = Vec::new();
        for _ in 0..rounds {
            let (tools, servers) = (specs.clone(), servers.clone());
            let started = Instant::now();
            let cm = build(tools, servers);
            builds.push(started.elapsed());
            drop(cm);
        }
        // Where the build goes: the catalog (hints, names, search documents) and the MCP API (every
        // `.d.ts`); the rest is the guest API's boot into the base image.
        let started = Instant::now();
        std::hint::black_box(Catalog::build(specs.clone(), &CatalogOptions::default()).len());
        let catalog_ms = started.elapsed().as_secs_f64() * 1e3;
        let started = Instant::now();
        std::hint::black_box(McpApi::build(&servers, &McpApiOptions::default()).files().len());
        let mcp_ms = started.elapsed().as_secs_f64() * 1e3;
        let build_ms = median(builds.clone()).as_secs_f64() * 1e3;
        println!(
            "{n} tools: build median {build_ms:.1} ms: Catalog::build {catalog_ms:.1} ms, McpApi::build {mcp_ms:.1} ms, \
             the rest (boot script, its run into the base image, capture) {:.1} ms",
            build_ms - catalog_ms - mcp_ms
        );
        // Memory: what three more built (and once-run) runtimes hold, per runtime.
        let before = rss_bytes();
        let held: Vec<CodeMode> = (0..3).map(|_| build(specs.clone(), servers.clone())).collect();
        for cm in &held {
            let r = runtime.block_on(cm.exec(&RunScope::new("m", "m"), ExecInput::code("return 1;")));
            assert_eq!(r.status(), "completed");
        }
        let per = rss_bytes().saturating_sub(before) as f64 / 3.0 / (1 << 20) as f64;
        drop(held);
        let cm = build(specs.clone(), servers.clone());
        let (one_beside, exec) = paired_trivial_exec(&runtime, &one, &cm);
        println!(
            "{n} tools: trivial exec median {:.1} µs, the 1-tool runtime in alternating blocks beside it {:.1} µs",
            micros(exec),
            micros(one_beside)
        );
        let without = {
            let cm = build_without_recycling(specs.clone(), servers.clone());
            trivial_exec(&runtime, &cm)
        };
        // Search: the first query builds the index.
        let fresh = build(specs.clone(), servers.clone());
        let started = Instant::now();
        std::hint::black_box(fresh.catalog().search_mcp(&queries[0], 8).len());
        let first = started.elapsed();
        let mut searches = Vec::with_capacity(queries.len());
        for q in &queries {
            let started = Instant::now();
            std::hint::black_box(cm.catalog().search_mcp(q, 8).len());
            searches.push(started.elapsed());
        }
        let surface: usize =
            cm.model_surface(&RunOptions::default()).tools().iter().map(definition_chars).sum();
        let quick = cm.catalog().quick_index(&QuickIndexOptions::default()).chars().count();
        let dts: usize = cm.mcp_api().map_or(0, |api| api.files().map(|(_, c)| c.len()).sum());
        let name = format!("{} tools", group(n));
        let row = vec![
            name.clone(),
            format!("{:.1}", median(builds).as_secs_f64() * 1e3),
            format!("{:.1}", micros(exec)),
            format!("{:.2}x", micros(exec) / micros(one_beside)),
            format!("{:.1}", micros(without)),
            (cm.base_image_bytes() / 1024).to_string(),
            format!("{:.1}", micros(median(searches))),
            format!("{:.2}", first.as_secs_f64() * 1e3),
            format!("{per:.1}"),
            surface.to_string(),
            quick.to_string(),
            format!("{:.0}", dts as f64 / 1024.0),
        ];
        println!("{}", row.join("  "));
        table.row(row);
    }
    tables::publish(&[table]);
}

/// `10000` as `10,000`.
fn group(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
