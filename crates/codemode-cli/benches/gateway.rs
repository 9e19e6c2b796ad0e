//! Throughput through the gateway: `codemode serve` (the binary of this crate) driven over stdio
//! by a real MCP client (rmcp, as in `examples/e2e_driver.rs`), with 1, 4 and 12 `exec` calls in
//! flight at once on one connection, each `return 1 + 1;`, back to back for
//! `CODEMODE_THROUGHPUT_SECS` seconds (default 3). The catalog is one echo tool.
//!
//! `cargo bench -p codemode-cli --bench gateway` (`-- --write` rewrites the `gateway-throughput`
//! table of `BENCHMARKS.md`).

#[path = "../../codemode-core/benches/support/tables.rs"]
mod tables;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, ensure};
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::json;

type Client = Arc<RunningService<RoleClient, ()>>;

async fn exec(client: &Client) -> Result<()> {
    let mut params = CallToolRequestParams::new("exec".to_owned());
    params.arguments = json!({ "code": "return 1 + 1;" }).as_object().cloned();
    let result = client.call_tool(params).await?;
    let value = result.structured_content.unwrap_or_default();
    ensure!(value["status"] == "completed", "exec through the gateway: {value}");
    Ok(())
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<()> {
    let secs = Duration::from_secs_f64(
        std::env::var("CODEMODE_THROUGHPUT_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(3.0),
    );
    let dir = std::env::temp_dir().join(format!("codemode-gateway-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let config = dir.join("config.json");
    let tools = json!([{ "name": "echo", "description": "Echo the input.", "behavior": "echo" }]);
    let text = json!({ "codeMode": { "enabled": true }, "catalog": { "tools": tools } });
    std::fs::write(&config, serde_json::to_string(&text)?)?;
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_codemode"));
    cmd.arg("serve").arg("--config").arg(&config).kill_on_drop(true);
    let (transport, _) = TokioChildProcess::builder(cmd).stderr(std::process::Stdio::inherit()).spawn()?;
    let client: Client = Arc::new(().serve(transport).await.context("MCP initialize")?);
    // Warm-up: the gateway's VM threads and spare VMs.
    for _ in 0..50 {
        exec(&client).await?;
    }
    let mut table = tables::Table::new(
        "gateway-throughput",
        "Throughput",
        &["calls in flight (one MCP client, `codemode serve`)", "execs/s"],
    );
    for in_flight in [1usize, 4, 12] {
        let done = Arc::new(AtomicU64::new(0));
        let started = Instant::now();
        let end = started + secs;
        let tasks: Vec<_> = (0..in_flight)
            .map(|_| {
                let (client, done) = (client.clone(), done.clone());
                tokio::spawn(async move {
                    while Instant::now() < end {
                        exec(&client).await?;
                        done.fetch_add(1, Ordering::Relaxed);
                    }
                    Ok::<(), anyhow::Error>(())
                })
            })
            .collect();
        for t in tasks {
            t.await??;
        }
        let rate = done.load(Ordering::Relaxed) as f64 / started.elapsed().as_secs_f64();
        println!("{in_flight:>2} calls in flight through the gateway: {rate:>8.0} execs/s");
        table.row(vec![in_flight.to_string(), format!("{rate:.0}")]);
    }
    drop(client);
    let _ = std::fs::remove_dir_all(&dir);
    tables::publish(&[table]);
    Ok(())
}
