//! Soak: resident memory under many concurrent memory-heavy cells.
//!
//! Each round starts `CODEMODE_SOAK_CONCURRENCY` (default 40) execs at once, each filling ~48 MiB
//! of its guest heap (`memoryLimitBytes` 64 MiB) and then returning a small value. Rounds run
//! `CODEMODE_SOAK_ROUNDS` (default 20) times per admission budget. RSS (`/proc/self/statm`) is
//! sampled every 20 ms; the bench prints the peak and the RSS after each round, and fails if the
//! peak passes the budget's bound or the RSS after the last round is more than 10% above the RSS
//! after the first round (growth without bound).
//!
//! Budgets (see `codemode::AdmissionLimits`): the default one (8 GiB of guest memory, 128 VMs: all
//! 40 cells run at once) and a tight one (1 GiB: 16 cells at a time, the rest queued). The bound
//! checked for a budget of B bytes admitting V VMs of 64 MiB is
//! `base + min(V, concurrency) * (64 MiB * 1.25 + 12 MiB) + 256 MiB`, where `base` is the RSS before
//! the first round: a VM's linear memory is capped at 1.25 times its heap limit plus 12 MiB.
//!
//! Run with `cargo bench -p codemode --bench soak` (Linux; release). `CODEMODE_SOAK_BUDGETS=tight`
//! runs only the tight budget.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use codemode::{
    Admission, AdmissionLimits, CodeMode, CodeModeConfig, CodeModeResult, ExecInput, NestedCall, RunScope,
    ToolError, ToolHost, ToolOutcome, ToolSpec,
};
use serde_json::json;

struct Echo;

#[async_trait]
impl ToolHost for Echo {
    async fn call(&self, call: NestedCall) -> Result<ToolOutcome, ToolError> {
        Ok(ToolOutcome::details(call.input))
    }
}

const MIB: u64 = 1 << 20;
const HEAP_LIMIT: u64 = 64 * MIB;

/// Fills ~48 MiB of the guest heap (48 typed arrays of 1 MiB, touched), then returns a checksum.
const HEAVY_CELL: &str = r#"
const blocks = [];
for (let i = 0; i < 48; i++) blocks.push(new Uint8Array(1 << 20).fill(i + 1));
await tools.echo({ blocks: blocks.length });
let sum = 0;
for (const b of blocks) sum += b[b.length - 1];
return sum;
"#;

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn rss_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

fn main() {
    let concurrency = env_u64("CODEMODE_SOAK_CONCURRENCY", 40) as usize;
    let rounds = env_u64("CODEMODE_SOAK_ROUNDS", 20);
    let which = std::env::var("CODEMODE_SOAK_BUDGETS").unwrap_or_else(|_| "default,tight".into());
    if rss_bytes().is_none() {
        eprintln!("soak: /proc/self/statm is not readable; this bench needs Linux");
        return;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let mut failures = Vec::new();
    for (name, limits) in [
        ("default", AdmissionLimits::default()),
        ("tight", AdmissionLimits::new(128, 1 << 30).with_queue(1024, Duration::from_secs(120))),
    ] {
        if !which.split(',').any(|w| w == name) {
            continue;
        }
        let admission = Admission::new(limits);
        let config = CodeModeConfig::from_json(&json!({
            "enabled": true,
            "timeoutMs": 60000,
            "memoryLimitBytes": HEAP_LIMIT,
        }))
        .unwrap();
        let cm = CodeMode::builder(config)
            .tools(vec![ToolSpec::core("echo")])
            .host(Arc::new(Echo))
            .namespaces(codemode::NamespaceRegistry::new())
            .admission(admission.clone())
            .build()
            .unwrap();
        let admitted = (limits.max_vms as u64).min(limits.max_guest_memory_bytes / HEAP_LIMIT).max(1);
        let vms = admitted.min(concurrency as u64);
        let base = rss_bytes().unwrap_or(0);
        let bound = base + vms * (HEAP_LIMIT + HEAP_LIMIT / 4 + 12 * MIB) + 256 * MIB;
        let peak = Arc::new(AtomicU64::new(base));
        let stop = Arc::new(AtomicBool::new(false));
        let sampler = {
            let (peak, stop) = (peak.clone(), stop.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    if let Some(rss) = rss_bytes() {
                        peak.fetch_max(rss, Ordering::Relaxed);
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
            })
        };
        println!(
            "budget {name}: {} MiB guest memory, {} VMs; {concurrency} cells per round, {rounds} rounds; \
             base RSS {} MiB, bound {} MiB",
            limits.max_guest_memory_bytes / MIB,
            limits.max_vms,
            base / MIB,
            bound / MIB
        );
        let mut after_rounds = Vec::new();
        for round in 0..rounds {
            let started = Instant::now();
            let results: Vec<CodeModeResult> = runtime.block_on(async {
                let handles: Vec<_> = (0..concurrency)
                    .map(|i| {
                        let cm = cm.clone();
                        tokio::spawn(async move {
                            let scope = RunScope::new(format!("soak-{i}"), "soak");
                            cm.exec(&scope, ExecInput::code(HEAVY_CELL)).await
                        })
                    })
                    .collect();
                let mut out = Vec::new();
                for h in handles {
                    out.push(h.await.expect("exec task"));
                }
                out
            });
            let completed = results.iter().filter(|r| matches!(r, CodeModeResult::Completed(_))).count();
            if completed != concurrency {
                let first = results.iter().find(|r| !matches!(r, CodeModeResult::Completed(_)));
                failures.push(format!(
                    "{name} round {round}: {completed}/{concurrency} completed; e.g. {}",
                    first.map(|r| r.to_json().to_string()).unwrap_or_default()
                ));
            }
            let rss = rss_bytes().unwrap_or(0);
            after_rounds.push(rss);
            println!(
                "  round {round:>3}: {completed}/{concurrency} completed in {:>6} ms, RSS after {:>6} MiB, peak so far {:>6} MiB",
                started.elapsed().as_millis(),
                rss / MIB,
                peak.load(Ordering::Relaxed) / MIB
            );
        }
        stop.store(true, Ordering::Relaxed);
        let _ = sampler.join();
        let peak = peak.load(Ordering::Relaxed);
        println!("budget {name}: peak RSS {} MiB (bound {} MiB)", peak / MIB, bound / MIB);
        if peak > bound {
            failures.push(format!("{name}: peak RSS {} MiB over the bound {} MiB", peak / MIB, bound / MIB));
        }
        if let (Some(first), Some(last)) = (after_rounds.first(), after_rounds.last())
            && *last > first + first / 10
        {
            failures.push(format!(
                "{name}: RSS grew from {} MiB after round 0 to {} MiB after the last round",
                first / MIB,
                last / MIB
            ));
        }
    }
    if !failures.is_empty() {
        for failure in &failures {
            eprintln!("soak FAILED: {failure}");
        }
        std::process::exit(1);
    }
    println!("soak passed");
}
