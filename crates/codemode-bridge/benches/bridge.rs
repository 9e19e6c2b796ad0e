//! Bridge micro-benchmarks: `cargo bench -p codemode-bridge`.
//!
//! Prints min and median per operation: decoding a typical request, encoding a reply, building the
//! boot script, and a full nested-call round trip through the prelude in the real sandbox (guest
//! adapter + host call + decode + reply + delivery + job run): delivered at a step's end, and
//! answered at once inside the host call (what the runtime does for a host that answers on its
//! first poll). `-- --write` (or
//! `CODEMODE_BENCHMARKS_MD=<path>`, as `cargo xtask bench` sets) rewrites the `bridge` table of
//! `BENCHMARKS.md`.

#[path = "../../codemode-core/benches/support/tables.rs"]
mod tables;

use std::hint::black_box;
use std::time::{Duration, Instant};

use codemode_bridge::{BootContext, DeliveryExt, DeliveryLimits, PRELUDE, decode_cell_value, decode_request};
use codemode_sandbox::{AtOnce, CallAnswerer, Delivery, Sandbox, SandboxConfig, Step};
use serde_json::json;

/// Rows of the `bridge` table: (operation, min, median).
static ROWS: std::sync::Mutex<Vec<(String, Duration, Duration)>> = std::sync::Mutex::new(Vec::new());

fn row(name: &str, min: Duration, median: Duration) {
    println!("{name:<44} {min:>12.2?} {median:>12.2?}");
    ROWS.lock().unwrap().push((name.to_owned(), min, median));
}

fn fmt(d: Duration) -> String {
    let ns = d.as_nanos();
    if ns < 1_000 { format!("{ns} ns") } else { format!("{:.2} µs", ns as f64 / 1e3) }
}

fn measure(name: &str, iterations: u32, rounds: usize, mut f: impl FnMut()) {
    let mut samples: Vec<Duration> = (0..rounds)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..iterations {
                f();
            }
            start.elapsed() / iterations
        })
        .collect();
    samples.sort();
    row(name, samples[0], samples[samples.len() / 2]);
}

/// A row of the min and median of per-call `samples` (one per VM).
fn per_call_row(name: &str, mut samples: Vec<Duration>) {
    samples.sort();
    row(name, samples[0], samples[samples.len() / 2]);
}

/// Decodes each request and answers it at once with the same reply.
struct AnswerAtOnce(String);

impl CallAnswerer for AnswerAtOnce {
    fn answer(&mut self, _id: u32, payload: &str) -> AtOnce {
        black_box(decode_request(payload).unwrap());
        AtOnce::Resolved(self.0.clone())
    }
}

fn main() {
    println!("{:<44} {:>12} {:>12}", "operation", "min", "median");
    let payload = r#"{"v":1,"op":"callValue","id":"openclaw:shipping:shipping_list","input":{"paid":false,"minTons":10,"tags":["a","b"]}}"#;
    measure("decode_request (typical callValue)", 10_000, 15, || {
        black_box(decode_request(black_box(payload)).unwrap());
    });
    let value = json!([{ "id": "s1", "paid": false, "tons": 12.5 }, { "id": "s2", "paid": true, "tons": 3 }]);
    let limits = DeliveryLimits::default();
    measure("DeliveryExt::value (small result)", 10_000, 15, || {
        black_box(Delivery::value(black_box(&value), &limits));
    });
    let ctx = BootContext::new();
    measure("BootContext::boot_script (empty)", 10_000, 15, || {
        black_box(ctx.boot_script().unwrap());
    });

    // 2 MiB wasm stack: see `sandbox_config` in tests/all/guest.rs.
    let mut config = SandboxConfig::default();
    config.max_wasm_stack_bytes = 2 << 20;
    let sandbox = Sandbox::new(config.clone(), PRELUDE).expect("prelude loads");
    let script = ctx.boot_script().unwrap();
    const CALLS: u32 = 200;
    let code = format!(
        "let s = 0; for (let i = 0; i < {CALLS}; i++) s += (await tools.callValue('x', {{ i }})).n; return s;"
    );
    let reply = Delivery::value(&json!({ "n": 1 }), &limits);
    let Delivery::Resolve(reply_json) = reply else { unreachable!() };
    let deadline = || Instant::now() + Duration::from_secs(30);
    let mut samples = Vec::new();
    for _ in 0..15 {
        let mut vm = sandbox.start().unwrap();
        vm.eval_script(&script, deadline()).unwrap();
        let start = Instant::now();
        let mut step = vm.eval_cell(&code, "user.js", deadline()).unwrap();
        while let Step::Pending { .. } = step {
            for call in vm.take_host_calls() {
                black_box(decode_request(&call.payload).unwrap());
                vm.deliver(call.id, Delivery::Resolve(reply_json.clone()), deadline()).unwrap();
            }
            step = vm.run_jobs(deadline()).unwrap();
        }
        let Step::Completed { value_json } = step else { panic!("{step:?}") };
        assert_eq!(decode_cell_value(value_json.as_deref()).unwrap(), json!(CALLS));
        samples.push(start.elapsed() / CALLS);
    }
    per_call_row("nested-call round trip through the prelude (incl. decode/encode)", samples);
    // The same loop with every call answered inside the host call: no step ends per call.
    let mut samples = Vec::new();
    for _ in 0..15 {
        let mut vm = sandbox.start().unwrap();
        vm.eval_script(&script, deadline()).unwrap();
        vm.set_answerer(Some(Box::new(AnswerAtOnce(reply_json.clone()))));
        let start = Instant::now();
        let step = vm.eval_cell(&code, "user.js", deadline()).unwrap();
        let Step::Completed { value_json } = step else { panic!("{step:?}") };
        assert_eq!(decode_cell_value(value_json.as_deref()).unwrap(), json!(CALLS));
        samples.push(start.elapsed() / CALLS);
    }
    per_call_row(
        "nested-call round trip through the prelude, answered at once (incl. decode/encode)",
        samples,
    );
    // Baseline: the same loop on the bare sandbox import (no prelude, no adapter, no decode).
    let raw = Sandbox::new(config, "globalThis.callHost = __codemode_host_call;").unwrap();
    let raw_code = format!(
        "let s = 0; for (let i = 0; i < {CALLS}; i++) s += (await callHost('{{\"i\":' + i + '}}')).n; return s;"
    );
    let mut samples = Vec::new();
    for _ in 0..15 {
        let mut vm = raw.start().unwrap();
        let start = Instant::now();
        let mut step = vm.eval_cell(&raw_code, "user.js", deadline()).unwrap();
        while let Step::Pending { .. } = step {
            for call in vm.take_host_calls() {
                vm.deliver(call.id, Delivery::Resolve(reply_json.clone()), deadline()).unwrap();
            }
            step = vm.run_jobs(deadline()).unwrap();
        }
        assert_eq!(step, Step::Completed { value_json: Some(CALLS.to_string()) });
        samples.push(start.elapsed() / CALLS);
    }
    per_call_row("baseline: the same loop on the bare sandbox import", samples);
    let mut table = tables::Table::new("bridge", "Bridge", &["operation", "min", "median"]);
    for (name, min, median) in ROWS.lock().unwrap().iter() {
        table.row(vec![name.clone(), fmt(*min), fmt(*median)]);
    }
    tables::publish(&[table]);
}
