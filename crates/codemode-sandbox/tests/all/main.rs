//! Integration tests of codemode-sandbox: one module per area.

mod answer;
mod api;
mod hostile;
mod limits;
mod recycle;
mod roundtrip;
mod snapshots;
mod tracking;

use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use codemode_sandbox::{Delivery, Deterministic, GuestOutput, Sandbox, SandboxConfig, Step, Vm};

/// A small stand-in for the bridge's prelude: captures the private imports (and the JSON
/// functions, so user code overwriting `JSON` does not matter), deletes them from globalThis.
pub const PRELUDE: &str = r#"
(() => {
  const hostCall = globalThis.__codemode_host_call;
  const output = globalThis.__codemode_output;
  delete globalThis.__codemode_host_call;
  delete globalThis.__codemode_host_call_with;
  delete globalThis.__codemode_output;
  delete globalThis.__codemode_set_result_encoder;
  delete globalThis.__codemode_encode;
  const stringify = JSON.stringify;
  globalThis.host = (op, args) => hostCall(stringify({ op, args }));
  globalThis.text = (s) => output("text", String(s));
  globalThis.json = (v) => output("json", stringify(v));
})();
"#;

/// Tests run one at a time: some measure process memory or timing.
pub fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

pub fn det_config() -> SandboxConfig {
    let mut c = SandboxConfig::default();
    c.deterministic = Some(Deterministic { clock_ms: 1_700_000_000_000, seed: 42 });
    c
}

/// The shared deterministic sandbox with [`PRELUDE`].
pub fn sandbox() -> &'static Sandbox {
    static S: OnceLock<Sandbox> = OnceLock::new();
    S.get_or_init(|| Sandbox::new(det_config(), PRELUDE).expect("sandbox"))
}

pub fn deadline_ms(ms: u64) -> Instant {
    Instant::now() + Duration::from_millis(ms)
}

pub fn soon() -> Instant {
    deadline_ms(5_000)
}

/// The test "host": `{op, args}` payloads; `add` sums `args.a + args.b`, `echo` returns
/// `args`, `fail` rejects with a code.
pub fn dispatch(payload: &str) -> Delivery {
    // Tiny parser for the shapes the tests use; no serde dependency needed.
    let op = payload.split("\"op\":\"").nth(1).and_then(|s| s.split('"').next()).unwrap_or("");
    let args = payload.split("\"args\":").nth(1).and_then(|s| s.strip_suffix('}')).unwrap_or("null");
    let num = |k: &str| -> f64 {
        args.split(&format!("\"{k}\":"))
            .nth(1)
            .and_then(|s| s.split([',', '}']).next())
            .and_then(|s| s.parse().ok())
            .unwrap_or(0.0)
    };
    match op {
        "add" => Delivery::Resolve(format!("{{\"sum\":{}}}", num("a") + num("b"))),
        "echo" => Delivery::Resolve(args.to_owned()),
        "fail" => Delivery::Reject { message: "tool failed".into(), code: Some("E_TOOL".into()) },
        _ => Delivery::Reject { message: format!("unknown op {op}"), code: None },
    }
}

/// Outcome of a full run: the final step and every output record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub step: Step,
    pub output: Vec<GuestOutput>,
}

/// Run `code` to the end, delivering host calls in order, optionally snapshotting and
/// restoring at every quiescent point.
pub fn run_with(sb: &Sandbox, code: &str, restore_every_step: bool) -> Outcome {
    let mut vm = sb.start().expect("start");
    let mut output = Vec::new();
    let mut step = vm.eval_cell(code, "user.js", soon()).expect("eval");
    loop {
        output.extend(vm.take_output());
        let Step::Pending { .. } = step else { break };
        // Every Pending step is a quiescent point (jobs drained): snapshot + restore there.
        if restore_every_step {
            vm = cycle(sb, vm);
        }
        for call in vm.take_host_calls() {
            vm.deliver(call.id, dispatch(&call.payload), soon()).expect("deliver");
        }
        step = vm.run_jobs(soon()).expect("run_jobs");
    }
    Outcome { step, output }
}

/// Snapshot (through bytes), drop, restore.
pub fn cycle(sb: &Sandbox, mut vm: Vm) -> Vm {
    let snap = vm.snapshot().expect("snapshot");
    drop(vm);
    let snap = codemode_sandbox::Snapshot::from_bytes(&snap.to_bytes()).expect("from_bytes");
    sb.restore(&snap).expect("restore")
}

pub fn run(code: &str) -> Outcome {
    run_with(sandbox(), code, false)
}

pub fn completed(json: &str) -> Step {
    Step::Completed { value_json: Some(json.to_owned()) }
}

pub fn failed(step: &Step) -> &codemode_sandbox::GuestError {
    match step {
        Step::Failed(e) => e,
        other => panic!("expected a failure, got {other:?}"),
    }
}
