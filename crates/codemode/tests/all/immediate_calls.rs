//! Nested calls a host answers at once are served where the guest runs (on its VM thread, or on
//! the calling thread), and the VM runs on without a trip to the async side. The run keeps what
//! the pump would give it: counts, call ids, events, budgets, limits, aborts, and calls that have
//! to wait mixed in.

use std::time::{Duration, Instant};

use codemode::{CodeModeErrorCode, CodeModeEvent, CodeModeResult, ExecInput, GuestThread};
use serde_json::json;

use crate::support::*;

const THREADS: [GuestThread; 2] = [GuestThread::Dedicated, GuestThread::Caller];

/// Fifty sequential calls: the value, the call count, call ids `<run>.1` … `<run>.50` in order,
/// and a started and a finished event per call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_loop_of_immediate_calls_is_counted_numbered_and_reported() {
    for thread in THREADS {
        let f = fixture_thread(json!({}), thread);
        let code = "let n = 0; for (let i = 0; i < 50; i++) { n += (await tools.web_search({ query: String(i) })).query.length; } \
                    const found = await tools.search('web', { limit: 1 }); return [n, found.length];";
        let r = f.run(code).await;
        assert_eq!(value(&r), json!([90, 1]), "{thread:?}");
        assert_eq!(r.telemetry().call_count, 50, "{thread:?}");
        assert_eq!(r.telemetry().search_count, 1, "{thread:?}");
        let calls = f.host.calls.lock().unwrap().clone();
        assert_eq!(calls.len(), 50, "{thread:?}");
        let run = calls[0].run_id.clone();
        for (i, call) in calls.iter().enumerate() {
            assert_eq!(call.call_id, format!("{run}.{}", i + 1), "{thread:?}");
            assert_eq!(call.input, json!({ "query": i.to_string() }), "{thread:?}");
            assert_eq!(call.parent_call_id.as_deref(), Some("call-exec-1"));
        }
        let events = f.events.events.lock().unwrap();
        let started = events.iter().filter(|e| matches!(e, CodeModeEvent::NestedCallStarted { .. })).count();
        let finished: Vec<bool> = events
            .iter()
            .filter_map(|e| match e {
                CodeModeEvent::NestedCallFinished { ok, .. } => Some(*ok),
                _ => None,
            })
            .collect();
        assert_eq!((started, finished.len()), (50, 50), "{thread:?}");
        assert!(finished.iter().all(|ok| *ok));
    }
}

/// A call the host answers at once resolves while the guest is still running: its reaction runs
/// among the cell's own microtasks, before the guest has to go idle for a step to end (through
/// a step's end it would run only after the cell returned).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_answered_at_once_resolves_before_the_guest_goes_idle() {
    for thread in THREADS {
        let f = fixture_thread(json!({}), thread);
        let code = "let got = null; tools.web_search({ query: 'early' }).then((r) => { got = r.query; });                     for (let i = 0; i < 100; i++) await null; return got;";
        assert_eq!(value(&f.run(code).await), json!("early"), "{thread:?}");
    }
}

/// A step whose calls are partly answered at once and partly waiting (a 300 ms tool between
/// two immediate ones), then more immediate calls after the slow one landed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn immediate_and_waiting_calls_of_one_step_both_land() {
    for thread in THREADS {
        let f = fixture_thread(json!({}), thread);
        let code = "const r = await Promise.all([tools.web_search({ query: 'a' }), tools.slow({}), tools.web_search({ query: 'b' })]); \
                    const after = []; for (let i = 0; i < 5; i++) after.push((await tools.web_search({ query: 'c' + i })).query); \
                    return [r[0].query, r[1], r[2].query, after.join(',')];";
        let r = f.run(code).await;
        assert_eq!(value(&r), json!(["a", "slow done", "b", "c0,c1,c2,c3,c4"]), "{thread:?}");
        assert_eq!(r.telemetry().call_count, 8, "{thread:?}");
        let mut ids: Vec<String> = f.host.calls.lock().unwrap().iter().map(|c| c.call_id.clone()).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), 8, "call ids are unique: {ids:?}");
    }
}

/// A host that uses the async runtime while it answers (a timer) works where the guest runs:
/// the responder enters the runtime for it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_may_use_the_runtime_while_answering() {
    for thread in THREADS {
        let f = fixture_thread(json!({}), thread);
        f.host.set("openclaw:core:exec", Behavior::Slow(0, json!("timer done")));
        let code = "const out = []; for (let i = 0; i < 3; i++) out.push(await tools.exec({ command: 'x' })); return out;";
        assert_eq!(
            value(&f.run(code).await),
            json!(["timer done", "timer done", "timer done"]),
            "{thread:?}"
        );
    }
}

/// An abort stops an endless loop of immediate calls: the call ends `aborted` at once, and the
/// guest makes no more calls afterwards (the VM stops serving them too).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_abort_stops_a_loop_of_immediate_calls() {
    for thread in THREADS {
        let f = fixture_thread(json!({ "timeoutMs": 20000 }), thread);
        let signal = abort_after(150);
        let started = Instant::now();
        let code = "for (;;) await tools.web_search({ query: 'again' });";
        let r = f.cm.exec_with(&scope(), ExecInput::code(code), signal).await;
        assert_eq!(r.code(), Some(CodeModeErrorCode::Aborted), "{thread:?}: {:?}", r.to_json());
        assert!(started.elapsed() < Duration::from_secs(5), "{thread:?}: {:?}", started.elapsed());
        assert!(f.host.call_count() > 10, "the loop ran: {}", f.host.call_count());
        tokio::time::sleep(Duration::from_millis(100)).await;
        let settled = f.host.call_count();
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(f.host.call_count(), settled, "{thread:?}: calls went on after the abort");
        assert_eq!(f.cm.run_count(), 0);
        assert_eq!(value(&f.run("return 'next';").await), json!("next"));
    }
}

/// Output past `maxOutputBytes` inside a loop of immediate calls fails the run as
/// `output_limit_exceeded`, and the loop stops there (it does not run on to its end).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_past_the_limit_in_a_loop_of_immediate_calls_fails_the_run() {
    for thread in THREADS {
        let f = fixture_thread(json!({ "maxOutputBytes": 1024 }), thread);
        let code = "for (let i = 0; i < 100000; i++) { try { text('x'.repeat(100)); } catch {} \
                    await tools.web_search({ query: 'q' }); } return 'end';";
        let r = f.run(code).await;
        assert_eq!(r.code(), Some(CodeModeErrorCode::OutputLimitExceeded), "{thread:?}: {:?}", r.to_json());
        assert!(f.host.call_count() < 100, "{thread:?}: the loop went on: {} calls", f.host.call_count());
    }
}

/// An endless loop of immediate calls does not hold the call past its deadline: it comes back
/// within `timeoutMs` (as `waiting`, its last replies kept for `wait`, or as a timeout when the
/// deadline passed inside a guest step), and the run can be cancelled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endless_loop_of_immediate_calls_returns_at_the_deadline() {
    for thread in THREADS {
        let f = fixture_thread(json!({ "timeoutMs": 300 }), thread);
        let started = Instant::now();
        let r = f.run("for (;;) await tools.web_search({ query: 'again' });").await;
        let elapsed = started.elapsed();
        assert!(
            elapsed >= Duration::from_millis(300) && elapsed < Duration::from_secs(3),
            "{thread:?}: {elapsed:?}"
        );
        match &r {
            CodeModeResult::Waiting(w) => {
                assert!(f.cm.cancel(&w.run_id), "{thread:?}: the parked run is cancelled");
            }
            other => assert_eq!(
                other.code(),
                Some(CodeModeErrorCode::Timeout),
                "{thread:?}: {:?}",
                other.to_json()
            ),
        }
        assert_eq!(value(&f.run("return 'next';").await), json!("next"));
    }
}

/// A host that panics, on the first poll or later, fails that call with a catchable error; the
/// run goes on, and so do the next runs (the VM thread is not lost).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_host_fails_only_that_call() {
    for thread in THREADS {
        let f = fixture_thread(json!({}), thread);
        f.host.set("openclaw:core:exec", Behavior::Panic(0));
        f.host.set("openclaw:core:flaky", Behavior::Panic(20));
        let code = "const out = []; for (const t of [tools.exec, tools.flaky]) { \
                    try { await t({ command: 'x' }); out.push('no error'); } catch (e) { out.push(e.message); } } \
                    out.push((await tools.web_search({ query: 'after' })).query); return out;";
        let panicked = "the tool host failed while running this call (it panicked)";
        assert_eq!(value(&f.run(code).await), json!([panicked, panicked, "after"]), "{thread:?}");
        for _ in 0..3 {
            assert_eq!(value(&f.run("return 'next';").await), json!("next"), "{thread:?}");
        }
    }
}
