//! Bridge limits at and past their bounds, in the real sandbox.

use std::time::{Duration, Instant};

use codemode_bridge::{BudgetLimits, DeliveryExt, HostRequest, TRUNCATION_MARKER_PREFIX};
use codemode_core::CodeModeOutput;
use codemode_sandbox::Delivery;
use codemode_sandbox::Step;
use serde_json::json;

use crate::boot::sample_context;
use crate::guest::{Ledger, booted_vm, drive, echo_host, run_with, sandbox};

fn deadline() -> Instant {
    Instant::now() + Duration::from_secs(20)
}

#[test]
fn the_257th_pending_registration_is_refused_before_dispatch() {
    let ledger = Ledger::new(BudgetLimits::default(), 65_536);
    let outcome = run_with(
        &sample_context(),
        &ledger,
        r#"
        const started = [];
        let refused = null;
        for (let i = 0; i < 257; i++) {
          const p = tools.callValue("x", { i });
          started.push(p.then((v) => v.input.i, (e) => { refused = [i, e.message]; return -1; }));
        }
        const done = await Promise.all(started);
        return { refused, ok: done.filter((i) => i >= 0).length };
        "#,
        &mut echo_host,
    );
    let v = outcome.result.unwrap();
    assert_eq!(
        v,
        json!({ "refused": [256, "code mode bridge: 256 calls are already pending; await some before starting more"], "ok": 256 })
    );
    assert_eq!(outcome.requests.len(), 256, "the refused call never reached the host");
}

#[test]
fn argument_bytes_exactly_8_mib_pass_across_a_resume() {
    const MIB8: usize = 8 * 1024 * 1024;
    let ledger = Ledger::new(BudgetLimits::default(), 65_536);
    let mut vm = booted_vm(&sample_context(), &ledger);
    // First call: half the budget; the run suspends waiting for it.
    let first = r#"{"v":1,"op":"callValue","id":"a","input":""}"#.len();
    let code = format!(
        r#"
        await tools.callValue("a", "x".repeat({half}));
        const second = "y".repeat({rest});
        await tools.callValue("a", second);
        try {{ await tools.callValue("a"); return "third passed"; }} catch (e) {{ return e.message; }}
        "#,
        half = MIB8 / 2 - first,
        rest = MIB8 / 2 - first,
    );
    let step = vm.eval_cell(&code, "user.js", deadline()).unwrap();
    assert_eq!(step, Step::Pending { pending_calls: 1 });
    let calls = vm.take_host_calls();
    assert_eq!(calls[0].payload.len(), MIB8 / 2);
    // Suspend: snapshot the VM, keep the budgets (the runtime stores them with the snapshot).
    let snapshot = vm.snapshot().unwrap();
    let saved = ledger.get().budgets.clone();
    drop(vm);
    let resumed = Ledger::new(BudgetLimits::default(), 65_536);
    resumed.get().budgets = saved;
    let mut vm = sandbox().restore(&snapshot).unwrap();
    vm.set_policy(codemode_bridge::RunLedger::policy(&resumed.0));
    resumed.get().budgets.on_delivered();
    vm.deliver(calls[0].id, Delivery::null(), deadline()).unwrap();
    let step = vm.run_jobs(deadline()).unwrap();
    let outcome = drive(&mut vm, step, &resumed, &mut |_| Delivery::null());
    assert_eq!(resumed.get().budgets.argument_bytes(), MIB8 as u64, "exactly 8 MiB passed");
    let message = outcome.result.unwrap();
    assert_eq!(
        message,
        json!(format!(
            "code mode bridge: this call would bring the run's bridge arguments to {} bytes; the limit is {MIB8} bytes per run",
            MIB8 + r#"{"v":1,"op":"callValue","id":"a"}"#.len()
        ))
    );
}

#[test]
fn output_at_and_past_max_output_bytes() {
    let ledger = Ledger::new(BudgetLimits::default(), 1024);
    let outcome = run_with(
        &sample_context(),
        &ledger,
        r#"
        text("a".repeat(1000));
        json("b".repeat(22)); // 24 bytes of JSON text: exactly 1024
        let caught = null;
        try { text("c"); } catch (e) { caught = e.message; }
        try { text("d"); } catch (e) {}
        return caught;
        "#,
        &mut echo_host,
    );
    assert_eq!(
        outcome.result.unwrap(),
        json!("output limit exceeded: the run's output would exceed maxOutputBytes (1024 bytes)")
    );
    assert_eq!(outcome.output.len(), 3);
    assert_eq!(outcome.output[1], CodeModeOutput::Json { value: json!("b".repeat(22)) });
    let CodeModeOutput::Text { text } = &outcome.output[2] else { panic!() };
    assert!(text.starts_with(TRUNCATION_MARKER_PREFIX));
    let guard = ledger.get();
    let output = &guard.output;
    assert!(output.limit_exceeded(), "the runtime fails the run with output_limit_exceeded");
    assert_eq!(output.used_bytes(), 1024);
}

#[test]
fn output_is_cumulative_across_a_wait_and_returned_once() {
    let ledger = Ledger::new(BudgetLimits::default(), 10);
    let mut vm = booted_vm(&sample_context(), &ledger);
    let code = r#"text("12345"); await yield_control(); text("6789"); try { text("01"); } catch (e) { return "limit"; } return "no limit";"#;
    let step = vm.eval_cell(code, "user.js", deadline()).unwrap();
    assert_eq!(step, Step::Pending { pending_calls: 1 });
    let first = ledger.get().output.take_new();
    assert_eq!(first, vec![CodeModeOutput::Text { text: "12345".into() }]);
    let calls = vm.take_host_calls();
    assert_eq!(
        codemode_bridge::decode_request(&calls[0].payload).unwrap(),
        HostRequest::Yield { reason: None }
    );
    ledger.get().budgets.on_delivered();
    vm.deliver(calls[0].id, Delivery::null(), deadline()).unwrap();
    let step = vm.run_jobs(deadline()).unwrap();
    let outcome = drive(&mut vm, step, &ledger, &mut echo_host);
    assert_eq!(outcome.result.unwrap(), json!("limit"));
    assert_eq!(outcome.output.len(), 2, "only new items, then the marker: {:?}", outcome.output);
    assert_eq!(outcome.output[0], CodeModeOutput::Text { text: "6789".into() });
}
