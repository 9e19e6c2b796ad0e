//! `cargo bench -p codemode-sandbox`: the sandbox's hot
//! operations side by side with the anchor, the npm package `quickjs-wasi` on Node, measured
//! in the same invocation by `benches/anchor/anchor.mjs` (installed with npm into the target
//! dir on first run). Set `CODEMODE_BENCH_NO_ANCHOR=1` to skip the anchor, `BENCH_ITERS=n`
//! to change the iteration count; `-- --write` (or `CODEMODE_BENCHMARKS_MD=<path>`, as `cargo
//! xtask bench` sets) rewrites the `sandbox` table of `BENCHMARKS.md`.

#[path = "anchor/run.rs"]
mod anchor;
#[path = "../../codemode-core/benches/support/tables.rs"]
mod tables;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use codemode_sandbox::{CELL_PREFIX, CELL_SUFFIX, Delivery, Sandbox, SandboxConfig, Step};

const PRELUDE: &str = r#"
(() => {
  const hostCall = globalThis.__codemode_host_call;
  delete globalThis.__codemode_host_call;
  delete globalThis.__codemode_host_call_with;
  delete globalThis.__codemode_output;
  delete globalThis.__codemode_set_result_encoder;
  delete globalThis.__codemode_encode;
  globalThis.host = (payload) => hostCall(payload);
})();
"#;

/// A typical 35-line cell (its stripped JavaScript), defined but not called: the cost of parsing
/// and compiling a model's cell.
const TYPICAL_CELL: &str = include_str!("anchor/typical_cell.js");

struct Row {
    name: &'static str,
    median_us: f64,
    min_us: f64,
    bytes: Option<usize>,
}

fn measure(name: &'static str, n: usize, mut f: impl FnMut()) -> Row {
    for _ in 0..n / 10 + 1 {
        f();
    }
    let mut v: Vec<Duration> = (0..n)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    v.sort();
    Row { name, median_us: v[n / 2].as_secs_f64() * 1e6, min_us: v[0].as_secs_f64() * 1e6, bytes: None }
}

/// A VM's start alone, and a trivial eval plus teardown of a VM already started: where a VM
/// started ahead of time (a spare, as the runtime keeps) pays write tracking's arming, and where
/// the run itself pays its first-write faults and the teardown's unprotect.
fn split(sb: &Sandbox, n: usize, names: [&'static str; 2]) -> [Row; 2] {
    let mut starts = Vec::with_capacity(n);
    let mut rests = Vec::with_capacity(n);
    for i in 0..n + n / 10 + 1 {
        let t = Instant::now();
        let mut vm = sb.start().unwrap();
        let started = t.elapsed();
        let t = Instant::now();
        vm.eval_cell("return 1+1", "user.js", far()).unwrap();
        drop(vm);
        let rest = t.elapsed();
        if i > n / 10 {
            starts.push(started);
            rests.push(rest);
        }
    }
    [(names[0], starts), (names[1], rests)].map(|(name, mut v)| {
        v.sort();
        Row { name, median_us: v[n / 2].as_secs_f64() * 1e6, min_us: v[0].as_secs_f64() * 1e6, bytes: None }
    })
}

fn far() -> Instant {
    Instant::now() + Duration::from_secs(10)
}

fn ours(iters: usize) -> Vec<Row> {
    let t = Instant::now();
    // The plain rows are VMs without write tracking (the runtime tracks every VM by default, to
    // recycle it in place; the "(write-tracked)" rows below measure that).
    let mut config = SandboxConfig::default();
    config.recycle_min_base_bytes = usize::MAX;
    let sb = Sandbox::new(config, PRELUDE).expect("sandbox");
    eprintln!("sandbox set-up (compile + init + prelude): {:?}", t.elapsed());
    let mut rows = Vec::new();
    rows.push(measure("start_eval_teardown", iters, || {
        let mut vm = sb.start().unwrap();
        let step = vm.eval_cell("return 1+1", "user.js", far()).unwrap();
        assert_eq!(step, Step::Completed { value_json: Some("2".into()) });
    }));
    rows.extend(split(&sb, iters, ["start (VM only)", "eval + teardown of a started VM"]));
    let mut vm = sb.start().unwrap();
    rows.push(measure("warm_eval", iters * 5, || {
        vm.eval_cell("return 1+1", "user.js", far()).unwrap();
    }));
    // The anchor evaluates the same file, wrapped as the guest wraps a cell.
    let mut vm = sb.start().unwrap();
    rows.push(measure("warm_eval_typical_cell", iters * 5, || {
        let step = vm.eval_cell(TYPICAL_CELL, "user.js", far()).unwrap();
        debug_assert_eq!(step, Step::Completed { value_json: Some("\"function\"".into()) });
    }));
    let mut vm = sb.start().unwrap();
    let step = vm
        .eval_cell("globalThis.result = null; const r = await host('{}'); return r * 10;", "user.js", far())
        .unwrap();
    assert_eq!(step, Step::Pending { pending_calls: 1 });
    let mut snap = None;
    let mut row = measure("snapshot", iters, || snap = Some(vm.snapshot().unwrap()));
    let snap = snap.unwrap();
    row.bytes = Some(snap.stored_bytes());
    rows.push(row);
    rows.push(measure("restore", iters, || {
        sb.restore(&snap).unwrap();
    }));
    // Check the restored VM really continues.
    let mut r = sb.restore(&snap).unwrap();
    r.deliver(0, Delivery::Resolve("3".into()), far()).unwrap();
    assert_eq!(r.run_jobs(far()).unwrap(), Step::Completed { value_json: Some("30".into()) });

    rows.extend(tracked(iters));

    let mut vm = sb.start().unwrap();
    vm.eval_cell("for (;;) await host('{}');", "user.js", far()).unwrap();
    let mut id = vm.take_host_calls()[0].id;
    rows.push(measure("bridge_round_trip", iters * 5, || {
        vm.deliver(id, Delivery::Resolve("1".into()), far()).unwrap();
        let step = vm.run_jobs(far()).unwrap();
        debug_assert!(matches!(step, Step::Pending { .. }));
        id = vm.take_host_calls()[0].id;
    }));
    rows
}

/// The same operations with `SandboxConfig::track_writes` (snapshot capture compares only the
/// pages written since start/restore; arming costs at start and restore, unprotecting at drop).
fn tracked(iters: usize) -> Vec<Row> {
    let mut config = SandboxConfig::default();
    config.track_writes = true;
    let sb = Sandbox::new(config, PRELUDE).expect("sandbox");
    let mut rows = Vec::new();
    rows.push(measure("start_eval_teardown (write-tracked)", iters, || {
        let mut vm = sb.start().unwrap();
        vm.eval_cell("return 1+1", "user.js", far()).unwrap();
    }));
    rows.extend(split(
        &sb,
        iters,
        ["start (VM only, write-tracked)", "eval + teardown of a started VM (write-tracked)"],
    ));
    let mut vm = sb.start().unwrap();
    if !vm.writes_tracked() {
        eprintln!("write tracking unavailable here: the write-tracked rows measure the full compare");
    }
    let step = vm
        .eval_cell("globalThis.result = null; const r = await host('{}'); return r * 10;", "user.js", far())
        .unwrap();
    assert_eq!(step, Step::Pending { pending_calls: 1 });
    let mut snap = None;
    rows.push(measure("snapshot (write-tracked)", iters, || snap = Some(vm.snapshot().unwrap())));
    let snap = snap.unwrap();
    rows.push(measure("restore (write-tracked)", iters, || {
        sb.restore(&snap).unwrap();
    }));
    // A restored VM suspended again: what a multi-step run's second `wait` captures.
    let mut r = sb.restore(&snap).unwrap();
    let mut second = None;
    rows.push(measure("snapshot after restore (write-tracked)", iters, || {
        second = Some(r.snapshot().unwrap())
    }));
    // Same memory (the ledger's capture clock differs between two captures).
    assert_eq!(second.unwrap().memory_image().unwrap(), snap.memory_image().unwrap());
    r.deliver(0, Delivery::Resolve("3".into()), far()).unwrap();
    assert_eq!(r.run_jobs(far()).unwrap(), Step::Completed { value_json: Some("30".into()) });
    rows
}

fn main() {
    // Big native stack so wasm calls never need the on-demand stack segment.
    let h = std::thread::Builder::new().stack_size(64 << 20).spawn(real_main).unwrap();
    h.join().unwrap();
}

fn real_main() {
    let iters: usize = std::env::var("BENCH_ITERS").ok().and_then(|s| s.parse().ok()).unwrap_or(200);
    let rows = ours(iters);
    let wrapper = [("CODEMODE_CELL_PREFIX", CELL_PREFIX), ("CODEMODE_CELL_SUFFIX", CELL_SUFFIX)];
    let anchor = anchor::run_with_env(&anchor::source_dir(), iters, &wrapper);
    if let Err(e) = &anchor {
        eprintln!("anchor unavailable: {e}");
    }
    let targets: HashMap<&str, &str> = [
        ("start_eval_teardown", ">= 10x faster"),
        ("restore", ">= 10x faster"),
        ("snapshot", "stored >= 20x smaller"),
        ("snapshot (write-tracked)", "<= 30 us"),
        ("bridge_round_trip", "< 10 us"),
    ]
    .into();
    let mut table = tables::Table::new(
        "sandbox",
        "Sandbox",
        &[
            "operation",
            "codemode median (min)",
            "quickjs-wasi median (min)",
            "ratio (anchor / codemode)",
            "target",
        ],
    );
    for r in &rows {
        let a = anchor.as_ref().ok().and_then(|a| a.get(r.name));
        let ours = format!("{:.1} µs ({:.1})", r.median_us, r.min_us);
        let theirs = a.map_or("n/a".to_owned(), |a| format!("{:.1} µs ({:.1})", a.median_us, a.min_us));
        let ratio = a.map_or("n/a".to_owned(), |a| format!("{:.1}x", a.median_us / r.median_us));
        let target = targets.get(r.name).unwrap_or(&"").to_string();
        table.row(vec![r.name.to_owned(), ours, theirs, ratio, target]);
        if let Some(b) = r.bytes {
            let ab = a.and_then(|a| a.bytes);
            let ratio = ab.map_or("n/a".to_owned(), |ab| format!("{:.1}x", ab as f64 / b as f64));
            let theirs = ab.map_or("n/a".to_owned(), |ab| format!("{ab} B"));
            let name = if r.name == "snapshot" {
                "snapshot stored bytes".to_owned()
            } else {
                format!("{} stored bytes", r.name)
            };
            table.row(vec![name, format!("{b} B"), theirs, ratio, ">= 20x smaller".into()]);
        }
    }
    tables::publish(&[table]);
}
