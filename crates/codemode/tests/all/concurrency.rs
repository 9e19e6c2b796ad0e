//! Many runs at once: random latencies, a third of them suspending.

use std::time::Duration;

use codemode::{CodeModeResult, ExecInput, RunScope, WaitInput};
use serde_json::json;

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_parallel_runs_end_completed_or_failed_and_leave_the_store_empty() {
    let f = fixture(json!({ "timeoutMs": 250 }));
    f.host.set("openclaw:core:web_search", Behavior::Random(120));
    f.host.set("openclaw:core:slow", Behavior::Slow(400, json!("slow")));
    let f = std::sync::Arc::new(f);
    let mut handles = Vec::new();
    for i in 0..50u32 {
        let f = f.clone();
        handles.push(tokio::spawn(async move {
            let scope = RunScope::new(format!("session-{i}"), "turn").with_call_id(format!("exec-{i}"));
            let code = match i % 3 {
                0 => "const s = await tools.slow({}); const w = await tools.web_search({ query: 'after' }); return [s, w.query];",
                1 => "const r = await Promise.all([1, 2, 3].map((n) => tools.web_search({ query: String(n) }))); return r.map((x) => x.query);",
                _ => "const a = await tools.web_search({ query: 'a' }); if (a.query !== 'a') throw new Error('bad'); return [a.query];",
            };
            let mut result = f.cm.exec(&scope, ExecInput::code(code)).await;
            let mut waits = 0;
            while let CodeModeResult::Waiting(w) = &result {
                waits += 1;
                assert!(waits < 20, "run {i} never finished");
                result = f.cm.wait(&scope, WaitInput::new(w.run_id.clone())).await;
            }
            (i, waits, result)
        }));
    }
    let mut suspended = 0;
    for handle in handles {
        let (i, waits, result) = handle.await.unwrap();
        if waits > 0 {
            suspended += 1;
        }
        match &result {
            CodeModeResult::Completed(c) => {
                let expected = match i % 3 {
                    0 => json!(["slow", "after"]),
                    1 => json!(["1", "2", "3"]),
                    _ => json!(["a"]),
                };
                assert_eq!(c.value, expected, "run {i}");
            }
            CodeModeResult::Failed(failed) => assert!(failed.code.is_some(), "run {i}: {failed:?}"),
            other => panic!("run {i} ended {}", other.status()),
        }
    }
    assert!(suspended >= 17, "a third of the runs suspend ({suspended})");
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert_eq!(f.cm.run_count(), 0);
}
