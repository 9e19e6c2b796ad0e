//! Hint throughput on the real MCP catalogs: `cargo bench -p codemode-core --bench hint`.
//!
//! Prints min / median over repeated passes; no assertion (numbers, not a test).

use std::time::{Duration, Instant};

use codemode_core::hint::{HintOptions, RenderOptions, input_hint, output_hint, render_type};
use codemode_core::ident::to_camel_identifier;
use serde_json::Value;

fn main() {
    let dir = std::path::PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"))
        .join("../../data/mcp-catalogs");
    let mut tools: Vec<Value> = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json") && !p.ends_with("INDEX.json"))
        .collect();
    files.sort();
    for path in files {
        let catalog: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        tools.extend(catalog["tools"].as_array().unwrap().iter().cloned());
    }
    let n = tools.len();
    println!("{n} tools from the real catalogs; per-tool times are the pass time / {n}");
    println!("{:<34} {:>12} {:>12} {:>12}", "operation (whole catalog pass)", "min", "median", "per tool");
    row("input_hint (240 chars)", n, || {
        tools.iter().map(|t| input_hint(&t["inputSchema"], &HintOptions::input()).len()).sum()
    });
    row("output_hint (400 chars)", n, || {
        tools
            .iter()
            .filter_map(|t| t.get("outputSchema"))
            .map(|s| output_hint(s, &HintOptions::output()).map_or(0, |h| h.len()))
            .sum()
    });
    row("render_type (4000 chars)", n, || {
        tools
            .iter()
            .map(|t| render_type(&t["inputSchema"], &t["inputSchema"], &RenderOptions::default()).text.len())
            .sum()
    });
    row("input_hint (60 chars, degraded)", n, || {
        tools
            .iter()
            .map(|t| input_hint(&t["inputSchema"], &HintOptions::input().with_max_chars(60)).len())
            .sum()
    });
    row("to_camel_identifier (tool names)", n, || {
        tools.iter().map(|t| to_camel_identifier(t["name"].as_str().unwrap_or_default()).len()).sum()
    });
}

fn row(name: &str, tools: usize, mut pass: impl FnMut() -> usize) {
    const PASSES: usize = 31;
    let mut times: Vec<Duration> = (0..PASSES)
        .map(|_| {
            let start = Instant::now();
            std::hint::black_box(pass());
            start.elapsed()
        })
        .collect();
    times.sort();
    let median = times[PASSES / 2];
    println!("{name:<34} {:>12.2?} {:>12.2?} {:>12.2?}", times[0], median, median / tools as u32);
}
