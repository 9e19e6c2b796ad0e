//! `cargo bench -p codemode-mcp`: time to build the virtual MCP API (every `.d.ts` file and the
//! identifier tables) from the public catalogs in `data/mcp-catalogs` (or
//! `$MCP_CATALOGS`), and to answer `$api()` / `API.read` from it. Prints min and median.

use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use codemode_mcp::{HeaderOptions, McpApi, McpApiOptions, McpServer};

fn catalogs() -> Vec<McpServer> {
    let dir = std::env::var("MCP_CATALOGS").map(PathBuf::from).unwrap_or_else(|_| {
        PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"))
            .join("../../data/mcp-catalogs")
    });
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json") && p.file_stem().is_some_and(|s| s != "INDEX"))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| {
            let value: serde_json::Value =
                serde_json::from_slice(&std::fs::read(p).expect("read")).expect("json");
            McpServer::from_tools_list(p.file_stem().and_then(|s| s.to_str()).expect("stem"), &value)
        })
        .collect()
}

fn measure(name: &str, iterations: usize, mut f: impl FnMut()) {
    f();
    let mut times: Vec<Duration> = (0..iterations)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    times.sort();
    println!("{name:<44} {:>12.1?} {:>12.1?}", times[0], times[times.len() / 2]);
}

fn main() {
    let servers = catalogs();
    let options = McpApiOptions::default();
    let tools: usize = servers.iter().map(|s| s.tools.len()).sum();
    println!(
        "{:<44} {:>12} {:>12}",
        format!("case ({} servers, {tools} tools)", servers.len()),
        "min",
        "median"
    );
    measure("build: all catalogs", 20, || {
        black_box(McpApi::build(black_box(&servers), &options));
    });
    let shared: Vec<std::sync::Arc<McpServer>> = servers.iter().cloned().map(std::sync::Arc::new).collect();
    measure("build_shared: all catalogs", 20, || {
        black_box(McpApi::build_shared(black_box(&shared), &options));
    });
    let github: Vec<McpServer> = servers.iter().filter(|s| s.name == "github").cloned().collect();
    measure("build: github (117 tools)", 50, || {
        black_box(McpApi::build(black_box(&github), &options));
    });
    let time: Vec<McpServer> = servers.iter().filter(|s| s.name == "time").cloned().collect();
    measure("build: time (2 tools)", 1_000, || {
        black_box(McpApi::build(black_box(&time), &options));
    });
    let api = McpApi::build(&servers, &options);
    measure("$api(\"issueWrite\") on github", 1_000, || {
        black_box(api.header("github", Some("issueWrite"), &HeaderOptions::default()).ok());
    });
    measure("API.read(\"mcp/github.d.ts\")", 10_000, || {
        black_box(api.read(black_box("mcp/github.d.ts")).ok());
    });
    measure("guest_table: all catalogs", 20, || {
        black_box(api.guest_table());
    });
    let bytes: usize = api.files().map(|(_, c)| c.len()).sum();
    println!("\nfiles: {} totalling {bytes} bytes", api.files().count());
}
