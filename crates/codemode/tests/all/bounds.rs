//! Process-level bounds: the returned value against `maxOutputBytes`, the admission budget of
//! concurrent VMs and guest memory, and the run's own monotonic clock.

use std::sync::Arc;
use std::time::Duration;

use codemode::{
    Admission, AdmissionLimits, CodeMode, CodeModeErrorCode, CodeModeOutput, CodeModeResult, ExecInput,
    NamespaceRegistry, RunScope, WaitInput,
};
use serde_json::{Value, json};

use crate::support::*;

fn failed(result: &CodeModeResult) -> (String, Option<CodeModeErrorCode>, Vec<CodeModeOutput>) {
    match result {
        CodeModeResult::Failed(f) => (f.error.clone(), f.code, f.output.clone()),
        other => panic!("expected failed, got {}", serde_json::to_string_pretty(&other.to_json()).unwrap()),
    }
}

#[track_caller]
fn assert_value_too_large(result: &CodeModeResult) -> Vec<CodeModeOutput> {
    let (message, code, output) = failed(result);
    assert_eq!(code, Some(CodeModeErrorCode::OutputLimitExceeded), "{message}");
    assert!(message.contains("maxOutputBytes"), "{message}");
    assert!(message.contains("Return less"), "{message}");
    output
}

// ---- the returned value ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_returned_value_alone_is_bounded_at_and_past_max_output_bytes() {
    let f = fixture(json!({ "maxOutputBytes": 1024 }));
    // `"x…x"` with 1,022 x's is exactly 1,024 bytes of JSON.
    assert_eq!(value(&f.run("return 'x'.repeat(1022);").await), json!("x".repeat(1022)));
    assert_value_too_large(&f.run("return 'x'.repeat(1023);").await);
    // UTF-8 bytes, not characters: 340 three-byte characters plus quotes = 1,022 bytes.
    assert_eq!(value(&f.run("return '€'.repeat(340);").await), json!("€".repeat(340)));
    assert_value_too_large(&f.run("return '€'.repeat(341);").await);
    assert_value_too_large(&f.run("return Array.from({ length: 1000 }, (_, i) => i);").await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_returned_value_counts_with_text_and_json_output() {
    let f = fixture(json!({ "maxOutputBytes": 1024 }));
    // 500 bytes of text + 524 bytes of value = 1,024.
    let ok = f.run("text('a'.repeat(500)); return 'x'.repeat(522);").await;
    assert_eq!(value(&ok), json!("x".repeat(522)));
    assert_eq!(ok.output().len(), 1);
    let over = f.run("text('a'.repeat(500)); return 'x'.repeat(523);").await;
    let output = assert_value_too_large(&over);
    assert_eq!(output, vec![CodeModeOutput::Text { text: "a".repeat(500) }], "earlier output is kept");
    // json(...) output counts too (its JSON text): [1,2,3] is 7 bytes.
    let ok = f.run("json([1,2,3]); return 'x'.repeat(1015);").await;
    assert_eq!(value(&ok), json!("x".repeat(1015)));
    assert_value_too_large(&f.run("json([1,2,3]); return 'x'.repeat(1016);").await);
    // Returning nothing adds nothing: output exactly at the limit still completes.
    assert_eq!(value(&f.run("text('a'.repeat(1024));").await), Value::Null);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_issue_cases_fail_with_output_limit_exceeded_under_the_default() {
    let f = fixture(json!({ "timeoutMs": 10000 }));
    assert_value_too_large(&f.run("return 'x'.repeat(200000);").await);
    // 5M lone surrogates: refused inside the guest, the host never sees the value.
    assert_value_too_large(&f.run("return '\\ud800'.repeat(5000000);").await);
    // 15 MiB.
    assert_value_too_large(&f.run("return 'y'.repeat(15 * 1024 * 1024);").await);
}

/// A value returned after a `wait` counts with the output of every step.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_returned_value_is_bounded_after_a_wait() {
    let f = fixture(json!({ "maxOutputBytes": 1024, "timeoutMs": 100 }));
    let first = f.run("text('a'.repeat(600)); await tools.slow({}); return 'x'.repeat(500);").await;
    let id = run_id(&first);
    assert_eq!(first.output().len(), 1);
    let (last, _) = f.finish(&id).await;
    assert_value_too_large(&last);
    let first = f.run("text('a'.repeat(600)); await tools.slow({}); return 'x'.repeat(400);").await;
    let (last, _) = f.finish(&run_id(&first)).await;
    assert_eq!(value(&last), json!("x".repeat(400)));
}

// ---- admission ----

fn admitted(limits: AdmissionLimits, extra: Value) -> (Fixture, Admission) {
    let admission = Admission::new(limits);
    let base = fixture_with(config(extra.clone()), fixture_tools(), NamespaceRegistry::new());
    let cm = CodeMode::builder(config(extra))
        .tools(fixture_tools())
        .host(base.host.clone())
        .admission(admission.clone())
        .build()
        .unwrap();
    (Fixture { cm, host: base.host, events: base.events }, admission)
}

#[track_caller]
fn assert_busy(result: &CodeModeResult) -> String {
    let (message, code, _) = failed(result);
    assert_eq!(code, Some(CodeModeErrorCode::RuntimeUnavailable), "{message}");
    assert!(message.starts_with("code mode is busy"), "{message}");
    assert!(message.contains("retry"), "{message}");
    assert!(!message.contains("::") && !message.contains("max_live_vms"), "no Rust names: {message}");
    message
}

async fn until(mut condition: impl FnMut() -> bool) {
    for _ in 0..500 {
        if condition() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("condition never held");
}

fn scoped(i: u32) -> RunScope {
    RunScope::new("session-1", "turn-1").with_call_id(format!("exec-{i}"))
}

/// One VM, a queue of one: the second exec waits, the third is refused at once; the queued one
/// runs as soon as the first finishes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_queue_bound_an_exec_is_refused_busy() {
    let limits = AdmissionLimits::new(1, 8 << 30).with_queue(1, Duration::from_secs(30));
    let (f, admission) = admitted(limits, json!({ "timeoutMs": 20000 }));
    let f = Arc::new(f);
    let holder = {
        let f = f.clone();
        tokio::spawn(async move {
            f.cm.exec(&scoped(1), ExecInput::code("return await tools.approve_me({});")).await
        })
    };
    until(|| admission.usage().vms == 1).await;
    let queued = {
        let f = f.clone();
        tokio::spawn(async move { f.cm.exec(&scoped(2), ExecInput::code("return 2;")).await })
    };
    until(|| admission.usage().queued == 1).await;
    let refused = f.cm.exec(&scoped(3), ExecInput::code("return 3;")).await;
    let message = assert_busy(&refused);
    assert!(message.contains("(1 running, 1 waiting to start)"), "{message}");
    f.host.approve("openclaw:core:approve_me");
    assert_eq!(value(&holder.await.unwrap()), json!({ "approved": true }));
    assert_eq!(value(&queued.await.unwrap()), json!(2));
    assert_eq!(admission.usage().vms, 0);
    assert_eq!(admission.usage().queued, 0);
    assert_eq!(value(&f.cm.exec(&scoped(4), ExecInput::code("return 4;")).await), json!(4));
}

/// A queued exec waits at most `max_queue_wait`, then is refused busy.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queued_exec_gives_up_after_max_queue_wait() {
    let limits = AdmissionLimits::new(1, 8 << 30).with_queue(8, Duration::from_millis(200));
    let (f, admission) = admitted(limits, json!({ "timeoutMs": 20000 }));
    let f = Arc::new(f);
    let holder = {
        let f = f.clone();
        tokio::spawn(async move {
            f.cm.exec(&scoped(1), ExecInput::code("return await tools.approve_me({});")).await
        })
    };
    until(|| admission.usage().vms == 1).await;
    let message = assert_busy(&f.cm.exec(&scoped(2), ExecInput::code("return 2;")).await);
    assert!(message.contains("within 200 ms"), "{message}");
    f.host.approve("openclaw:core:approve_me");
    value(&holder.await.unwrap());
}

/// Guest memory is budgeted too: with room for one `memoryLimitBytes`, a second VM waits even
/// though VM slots are free. No queue: it is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_guest_memory_budget_admits_one_vm_per_memory_limit() {
    let limits = AdmissionLimits::new(16, 64 << 20).with_queue(0, Duration::from_secs(1));
    let (f, admission) = admitted(limits, json!({ "timeoutMs": 20000, "memoryLimitBytes": 48 << 20 }));
    let f = Arc::new(f);
    let holder = {
        let f = f.clone();
        tokio::spawn(async move {
            f.cm.exec(&scoped(1), ExecInput::code("return await tools.approve_me({});")).await
        })
    };
    until(|| admission.usage().vms == 1).await;
    assert_busy(&f.cm.exec(&scoped(2), ExecInput::code("return 2;")).await);
    f.host.approve("openclaw:core:approve_me");
    value(&holder.await.unwrap());
    assert_eq!(value(&f.cm.exec(&scoped(3), ExecInput::code("return 3;")).await), json!(3));
}

/// A `wait` refused busy leaves its run parked: a later `wait` continues it. The VM is held by
/// another runtime sharing the same budget.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wait_refused_busy_loses_nothing() {
    let limits = AdmissionLimits::new(1, 8 << 30).with_queue(0, Duration::from_secs(1));
    let (f, admission) = admitted(limits, json!({ "timeoutMs": 100 }));
    let other = CodeMode::builder(config(json!({ "timeoutMs": 20000 })))
        .tools(fixture_tools())
        .host(f.host.clone())
        .admission(admission.clone())
        .build()
        .unwrap();
    let suspended = f.cm.exec(&scoped(1), ExecInput::code("const s = await tools.slow({}); return s;")).await;
    let id = run_id(&suspended);
    let holder = tokio::spawn(async move {
        other.exec(&scoped(2), ExecInput::code("return await tools.approve_me({});")).await
    });
    until(|| admission.usage().vms == 1).await;
    assert_busy(&f.cm.wait(&scoped(1), WaitInput::new(id.clone())).await);
    assert!(f.cm.has_run(&id), "the refused wait left the run parked");
    f.host.approve("openclaw:core:approve_me");
    value(&holder.await.unwrap());
    let mut r = f.cm.wait(&scoped(1), WaitInput::new(id.clone())).await;
    while let CodeModeResult::Waiting(w) = &r {
        r = f.cm.wait(&scoped(1), WaitInput::new(w.run_id.clone())).await;
    }
    assert_eq!(value(&r), json!("slow done"));
}

#[test]
fn admission_defaults_fit_a_24_gib_machine() {
    let limits = AdmissionLimits::default();
    assert_eq!(limits.max_vms, 128);
    assert_eq!(limits.max_guest_memory_bytes, 8 << 30);
    assert_eq!(limits.max_queued, 1024);
    assert_eq!(limits.max_queue_wait, Duration::from_secs(10));
    // Below the sandbox's pool (1,000 live VMs) with room for the warm spares (8 on idle VM
    // threads, 8 for `GuestThread::Caller` runs).
    assert!(limits.max_vms + 16 <= codemode::SandboxConfig::default().max_live_vms);
}

// ---- the run's clock ----

/// `performance.now()` counts from the run's start, not the process's (no uptime leak), and keeps
/// counting across a `wait`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn performance_now_counts_from_the_run_start() {
    let f = fixture(json!({ "timeoutMs": 100 }));
    let first = value(&f.run("return performance.now();").await);
    tokio::time::sleep(Duration::from_millis(400)).await;
    let second = value(&f.run("return performance.now();").await);
    let (first, second) = (first.as_f64().unwrap(), second.as_f64().unwrap());
    assert!(
        (0.0..400.0).contains(&second),
        "a run starts near 0, not at process uptime: {first} then {second}"
    );
    // Across a wait the clock does not go back.
    let suspended = f.run("globalThis.t0 = performance.now(); const s = await tools.slow({}); return [t0, performance.now()];").await;
    let (last, _) = f.finish(&run_id(&suspended)).await;
    let pair = value(&last);
    let (t0, t1) = (pair[0].as_f64().unwrap(), pair[1].as_f64().unwrap());
    // The slow tool takes 300 ms: suspended time counts.
    assert!(t1 >= t0 + 290.0, "the clock continues across the wait: {t0} -> {t1}");
}

/// An embedder whose sandbox pool is smaller than the admission budget: the VM that finds no free
/// slot fails busy too, in the same words, without naming any configuration type.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_sandbox_pool_is_busy_without_rust_names() {
    let factory: codemode::SandboxFactory = Arc::new(|config, prelude| {
        let mut c = codemode::SandboxConfig::default();
        c.memory_limit_bytes = config.memory_limit_bytes();
        c.max_live_vms = 2;
        codemode::Sandbox::new(c, prelude)
    });
    let host = ScriptedHost::new();
    host.set("openclaw:core:approve_me", Behavior::Gated(json!("approved")));
    let cm = CodeMode::builder(config(json!({ "timeoutMs": 20000 })))
        .tools(fixture_tools())
        .host(host.clone())
        .sandbox_factory(factory)
        .admission(Admission::new(AdmissionLimits::new(16, 8 << 30)))
        .build()
        .unwrap();
    let handles: Vec<_> = (0..4)
        .map(|i| {
            let cm = cm.clone();
            tokio::spawn(async move {
                cm.exec(&scoped(i), ExecInput::code("return await tools.approve_me({});")).await
            })
        })
        .collect();
    // Two VMs can be live; the others fail at once. Approving only once two calls hold both VMs
    // (and the other two execs have ended) keeps the outcome independent of scheduling.
    let waited = tokio::time::timeout(std::time::Duration::from_secs(30), async {
        while host.call_count() < 2 || handles.iter().filter(|h| h.is_finished()).count() < 2 {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    })
    .await;
    assert!(waited.is_ok(), "two calls held both VMs and the other execs ended");
    let mut busy = 0;
    for _ in 0..4 {
        host.approve("openclaw:core:approve_me");
    }
    for handle in handles {
        let result = handle.await.unwrap();
        if let CodeModeResult::Failed(_) = &result {
            let message = assert_busy(&result);
            assert!(message.contains("every sandbox slot is in use"), "{message}");
            busy += 1;
        }
    }
    assert_eq!(busy, 2, "two of four execs found the two-slot pool full");
}
