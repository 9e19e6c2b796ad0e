//! Throughput: trivial execs per second with 1, 4 and 12 concurrent sessions on one runtime (a
//! multi-thread tokio runtime with 2 workers, as on the 2-core reference machine), each session a
//! task running `return 1 + 1;` back to back for `CODEMODE_THROUGHPUT_SECS` seconds (default 3);
//! once with guest steps on the dedicated VM threads (the default) and once on the calling thread
//! (`GuestThread::Caller`). The gateway's figure (a real MCP client through `codemode serve`) is
//! `cargo bench -p codemode-cli --bench gateway`.
//!
//! `cargo bench -p codemode --bench throughput` (`-- --write` rewrites the `throughput` table of
//! `BENCHMARKS.md`).

#[path = "../../codemode-core/benches/support/tables.rs"]
mod tables;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use codemode::{
    CodeMode, CodeModeConfig, ExecInput, GuestThread, NamespaceRegistry, NestedCall, RunScope, ToolError,
    ToolHost, ToolOutcome, ToolSpec,
};

struct Echo;

#[async_trait]
impl ToolHost for Echo {
    async fn call(&self, call: NestedCall) -> Result<ToolOutcome, ToolError> {
        Ok(ToolOutcome::details(call.input))
    }
}

fn build(thread: GuestThread) -> CodeMode {
    CodeMode::builder(CodeModeConfig::enabled())
        .tools(vec![ToolSpec::core("echo")])
        .host(Arc::new(Echo))
        .namespaces(NamespaceRegistry::new())
        .guest_thread(thread)
        .build()
        .unwrap()
}

/// Execs per second of `sessions` tasks running trivial cells back to back for `secs`.
fn measure(runtime: &tokio::runtime::Runtime, cm: &CodeMode, sessions: usize, secs: Duration) -> f64 {
    let done = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let end = started + secs;
    runtime.block_on(async {
        let tasks: Vec<_> = (0..sessions)
            .map(|i| {
                let (cm, done) = (cm.clone(), done.clone());
                tokio::spawn(async move {
                    let scope = RunScope::new(format!("session-{i}"), "turn");
                    while Instant::now() < end {
                        let r = cm.exec(&scope, ExecInput::code("return 1 + 1;")).await;
                        assert_eq!(r.status(), "completed", "{:?}", r.to_json());
                        done.fetch_add(1, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
    });
    done.load(Ordering::Relaxed) as f64 / started.elapsed().as_secs_f64()
}

fn main() {
    let secs = Duration::from_secs_f64(
        std::env::var("CODEMODE_THROUGHPUT_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(3.0),
    );
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let modes =
        [("dedicated VM threads", GuestThread::Dedicated), ("on the calling thread", GuestThread::Caller)];
    let mut table = tables::Table::new(
        "throughput",
        "Throughput",
        &["sessions", "execs/s, dedicated VM threads", "execs/s, on the calling thread"],
    );
    let mut results = vec![Vec::new(); 2];
    for (m, (label, thread)) in modes.iter().enumerate() {
        let cm = build(*thread);
        // Warm-up: VM threads, spare VMs, the prepared sandbox.
        measure(&runtime, &cm, 12, Duration::from_millis(300));
        for sessions in [1, 4, 12] {
            let rate = measure(&runtime, &cm, sessions, secs);
            println!("{sessions:>2} sessions, {label:<24} {rate:>8.0} execs/s");
            results[m].push(rate);
        }
    }
    for (i, sessions) in [1, 4, 12].iter().enumerate() {
        table.row(vec![
            sessions.to_string(),
            format!("{:.0}", results[0][i]),
            format!("{:.0}", results[1][i]),
        ]);
    }
    tables::publish(&[table]);
}
