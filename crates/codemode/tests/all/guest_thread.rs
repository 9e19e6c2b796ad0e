//! `GuestThread::Caller`: guest steps on the thread that polls `exec`/`wait`, on a current-thread
//! and on a multi-thread runtime. Results, timeouts, suspension and aborts are those of the
//! dedicated VM thread; a long step does not hold up the runtime's other tasks.

use std::sync::Arc;
use std::time::{Duration, Instant};

use codemode::{
    AbortSignal, CodeMode, CodeModeErrorCode, CodeModeResult, ExecInput, GuestThread, Language, RunScope,
    SandboxFactory,
};
use serde_json::json;

use crate::support::*;

async fn cells_nested_calls_and_errors(thread: GuestThread) {
    let f = fixture_thread(json!({}), thread);
    assert_eq!(value(&f.run("return 1 + 1;").await), json!(2));
    assert_eq!(
        value(&f.run("const r = await tools.web_search({ query: 'q' }); return r.query;").await),
        json!("q")
    );
    let parallel = "const r = await Promise.all([0,1,2,3,4,5,6,7,8,9].map((i) => tools.web_search({ query: String(i) }))); \
                    return r.map((x) => x.query).join('');";
    assert_eq!(value(&f.run(parallel).await), json!("0123456789"));
    let slow = "return await tools.slow({});";
    assert_eq!(value(&f.run(slow).await), json!("slow done"));
    let r = f.run("const x = 1;\nnull.boom;").await;
    assert!(error(&r).starts_with("TypeError") && error(&r).contains("(at user.js:2"), "{}", error(&r));
    let ts = ExecInput::code("const n: number = 6; return n * 7;").with_language(Language::TypeScript);
    assert_eq!(value(&f.cm.exec(&scope(), ts).await), json!(42));
}

#[tokio::test]
async fn caller_thread_runs_cells_on_a_current_thread_runtime() {
    cells_nested_calls_and_errors(GuestThread::Caller).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn caller_thread_runs_cells_on_a_multi_thread_runtime() {
    cells_nested_calls_and_errors(GuestThread::Caller).await;
}

/// The same cells on the dedicated VM thread give the same results (the reference).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dedicated_thread_runs_the_same_cells() {
    cells_nested_calls_and_errors(GuestThread::Dedicated).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn caller_thread_times_out_at_timeout_ms_and_runs_the_next_cell() {
    let f = fixture_thread(json!({ "timeoutMs": 300 }), GuestThread::Caller);
    let started = Instant::now();
    let r = f.run("for (;;) {}").await;
    assert_eq!(r.code(), Some(CodeModeErrorCode::Timeout), "{:?}", r.to_json());
    assert!(started.elapsed() >= Duration::from_millis(300), "{:?}", started.elapsed());
    assert_eq!(value(&f.run("return 'next';").await), json!("next"));
}

#[tokio::test]
async fn caller_thread_suspends_and_resumes_through_wait() {
    let f = fixture_thread(json!({}), GuestThread::Caller);
    let r = f
        .run("text('a'); const v = await yield_control('checkpoint'); text('b'); return v === undefined;")
        .await;
    let CodeModeResult::Waiting(w) = &r else { panic!("{:?}", r.to_json()) };
    let r = f.wait(&w.run_id).await;
    assert_eq!(value(&r), json!(true));
    // A call still running at the deadline parks the run; `wait` delivers it.
    let f = fixture_thread(json!({ "timeoutMs": 100 }), GuestThread::Caller);
    let id = run_id(&f.run("return await tools.slow({});").await);
    let (r, _) = f.finish(&id).await;
    assert_eq!(value(&r), json!("slow done"));
}

/// An abort stops a step that is running on the caller's thread (here an endless loop with a
/// 20 s budget) within moments, from another task or from another OS thread.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_abort_interrupts_a_step_on_the_caller_thread() {
    let f = fixture_thread(json!({ "timeoutMs": 20000 }), GuestThread::Caller);
    let signal = abort_after(100);
    let started = Instant::now();
    let r = f.cm.exec_with(&scope(), ExecInput::code("for (;;) {}"), signal).await;
    assert_eq!(r.code(), Some(CodeModeErrorCode::Aborted), "{:?}", r.to_json());
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    assert_eq!(f.cm.run_count(), 0);
    assert_eq!(value(&f.run("return 'next';").await), json!("next"));
}

#[tokio::test]
async fn an_abort_from_another_thread_interrupts_a_current_thread_runtime_step() {
    let f = fixture_thread(json!({ "timeoutMs": 20000 }), GuestThread::Caller);
    let signal = AbortSignal::new();
    let trigger = signal.clone();
    let stopper = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        trigger.abort();
    });
    let started = Instant::now();
    let r = f.cm.exec_with(&scope(), ExecInput::code("let n = 0; for (;;) { n++ }"), signal).await;
    assert_eq!(r.code(), Some(CodeModeErrorCode::Aborted), "{:?}", r.to_json());
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    stopper.join().unwrap();
    // A signal aborted before the call starts: nothing runs.
    let signal = AbortSignal::new();
    signal.abort();
    let r = f.cm.exec_with(&scope(), ExecInput::code("return 1;"), signal).await;
    assert_eq!(r.code(), Some(CodeModeErrorCode::Aborted));
}

/// On a multi-thread runtime with one worker, a cell busy for 400 ms on the caller's thread does
/// not hold up another task: its timer fires and it finishes while the cell still runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn a_long_step_does_not_hold_up_other_tasks() {
    let f = fixture_thread(json!({ "timeoutMs": 5000 }), GuestThread::Caller);
    let exec = tokio::spawn(async move {
        let r = f.run("const end = Date.now() + 400; while (Date.now() < end) {} return 'done';").await;
        (value(&r), Instant::now())
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    let other = tokio::spawn(async {
        tokio::time::sleep(Duration::from_millis(10)).await;
        Instant::now()
    });
    let other_done = other.await.unwrap();
    let (v, exec_done) = exec.await.unwrap();
    assert_eq!(v, json!("done"));
    assert!(other_done < exec_done, "the other task finished after the busy cell");
}

/// Runs that finish faster than the background thread can drop and start VMs do not pile VMs up
/// (each holds a slot of the sandbox's instance pool): 8 sessions of 150 trivial cells each, on a
/// sandbox whose pool has 24 slots, all complete.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn caller_thread_runs_never_pile_up_vms() {
    let factory: SandboxFactory = Arc::new(|config, prelude| {
        let mut c = codemode::SandboxConfig::default();
        c.memory_limit_bytes = config.memory_limit_bytes();
        c.max_live_vms = 24;
        codemode::Sandbox::new(c, prelude)
    });
    let cm = CodeMode::builder(config(json!({})))
        .tools(fixture_tools())
        .host(ScriptedHost::new())
        .sandbox_factory(factory)
        .guest_thread(GuestThread::Caller)
        .build()
        .unwrap();
    let sessions: Vec<_> = (0..8)
        .map(|i| {
            let cm = cm.clone();
            tokio::spawn(async move {
                let scope = RunScope::new(format!("session-{i}"), "turn");
                for n in 0..150 {
                    let r = cm.exec(&scope, ExecInput::code("return 1 + 1;")).await;
                    assert_eq!(value(&r), json!(2), "session {i}, run {n}");
                }
            })
        })
        .collect();
    for session in sessions {
        session.await.unwrap();
    }
}

/// Waiting for a tool call is not charged to the guest: a result that lands 600 ms into a 1,000 ms
/// call still gets the guest's budget for 500 ms of work after it (charged for the wait, the guest
/// would wake with 400 ms left and the run fail as a timeout; the margin either way is wide enough
/// for a loaded machine). In `exec` and in `wait` (a restored VM), on both threads.
async fn waiting_is_not_charged_to_the_guest(thread: GuestThread) {
    let f = fixture_thread(json!({ "timeoutMs": 1000 }), thread);
    let cell = "const r = await tools.approve_me({}); \
                const end = Date.now() + 500; while (Date.now() < end) {} \
                return r.approved;";
    let approve_after = |delay: u64| {
        let host = f.host.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(delay)).await;
            host.approve("openclaw:core:approve_me");
        })
    };
    // In `exec`.
    let approval = approve_after(600);
    let r = f.run(cell).await;
    approval.await.unwrap();
    let r = match &r {
        CodeModeResult::Waiting(w) => f.finish(&w.run_id).await.0,
        _ => r,
    };
    assert_eq!(value(&r), json!(true));
    // In `wait`: the first call parks the run (no approval), the `wait` gets it 600 ms in.
    let id = run_id(&f.run(cell).await);
    let approval = approve_after(600);
    let (r, _) = f.finish(&id).await;
    approval.await.unwrap();
    assert_eq!(value(&r), json!(true));
    // The guest's own running time is still bounded.
    let r = f.run("await tools.web_search({ query: 'q' }); for (;;) {}").await;
    assert_eq!(r.code(), Some(CodeModeErrorCode::Timeout), "{:?}", r.to_json());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiting_is_not_charged_to_the_guest_on_a_vm_thread() {
    waiting_is_not_charged_to_the_guest(GuestThread::Dedicated).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiting_is_not_charged_to_the_guest_on_the_caller_thread() {
    waiting_is_not_charged_to_the_guest(GuestThread::Caller).await;
}
