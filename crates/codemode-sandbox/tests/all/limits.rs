//! Limits at and past their bounds.

use std::time::{Duration, Instant};

use codemode_sandbox::{Sandbox, SandboxConfig, SandboxError, Step};

use crate::hostile::small_sandbox;
use crate::{completed, failed, sandbox, serial, soon};

/// The QuickJS heap limit: an allocation that fits under it succeeds, one that does not raise a
/// catchable out-of-memory error, and the VM goes on working.
#[test]
fn memory_limit_at_and_past_the_bound() {
    let _g = serial();
    let sb = small_sandbox();
    let limit = sb.config().memory_limit_bytes;
    let mut vm = sb.start().unwrap();
    let used = vm.heap_bytes().unwrap();
    assert!(used > 0 && used < limit, "heap in use {used}");
    // Just under: the remaining budget minus 64 KiB of allocator slack.
    let fits = limit - used - (64 << 10);
    let step =
        vm.eval_cell(&format!("return new ArrayBuffer({fits}).byteLength"), "user.js", soon()).unwrap();
    assert_eq!(step, completed(&fits.to_string()));
    // Past: one byte more than the remaining budget (the buffer above is garbage now).
    let past = limit - used + 1;
    let code =
        format!("try {{ new ArrayBuffer({past}); return 'allocated' }} catch (e) {{ return String(e) }}");
    assert_eq!(
        vm.eval_cell(&code, "user.js", soon()).unwrap(),
        completed("\"InternalError: out of memory\"")
    );
    assert_eq!(
        vm.eval_cell("return [1, 2, 3].map(x => x * 2)", "user.js", soon()).unwrap(),
        completed("[2,4,6]")
    );
}

#[test]
fn linear_memory_stays_under_its_cap_during_a_memory_bomb() {
    let _g = serial();
    let sb = small_sandbox();
    let mut vm = sb.start().unwrap();
    let step = vm
        .eval_cell("let n = 1; while (true) { globalThis.s = 'x'.repeat(n); n *= 2 }", "user.js", soon())
        .unwrap();
    assert_eq!(failed(&step).name, "InternalError");
    // 16 MiB heap + a quarter + 4 MiB shadow stack + 8 MiB fixed overhead.
    assert!(vm.memory_bytes() <= (16 << 20) + (4 << 20) + (12 << 20), "{}", vm.memory_bytes());
}

/// A loop that ends before the deadline completes; the same loop past it times out.
#[test]
fn deadline_at_and_past_the_bound() {
    let _g = serial();
    let mut vm = sandbox().start().unwrap();
    let code = "let n = 0; const end = Date.now() + 0; for (let i = 0; i < 2e5; i++) n += i; return n";
    let t = Instant::now();
    vm.eval_cell(code, "user.js", soon()).unwrap();
    let cost = t.elapsed();
    // Well within: completes.
    let mut vm = sandbox().start().unwrap();
    let step = vm.eval_cell(code, "user.js", Instant::now() + cost * 20 + Duration::from_millis(50)).unwrap();
    assert_eq!(step, completed("19999900000"));
    // A deadline already passed: nothing runs, the VM is intact.
    let mut vm = sandbox().start().unwrap();
    assert_eq!(vm.eval_cell(code, "user.js", Instant::now()), Err(SandboxError::Timeout));
    assert!(!vm.is_terminated());
    assert_eq!(vm.eval_cell("return 1", "user.js", soon()).unwrap(), completed("1"));
    // Past the bound while running: a timeout close to the deadline.
    let mut vm = sandbox().start().unwrap();
    let t = Instant::now();
    let r = vm.eval_cell("while (true) {}", "user.js", t + Duration::from_millis(100));
    assert_eq!(r, Err(SandboxError::Timeout));
    let took = t.elapsed();
    assert!(took >= Duration::from_millis(100) && took < Duration::from_millis(400), "{took:?}");
}

#[test]
fn recursion_depth_5000_and_past_the_stack() {
    let _g = serial();
    let mut vm = sandbox().start().unwrap();
    let code = "function f(n) { return n === 0 ? 0 : 1 + f(n - 1) } return f(5000)";
    assert_eq!(vm.eval_cell(code, "user.js", soon()).unwrap(), completed("5000"));
    let code =
        "let d = 0; function f() { d++; f() } try { f() } catch (e) { return [e.name, e.message, d > 5000] }";
    assert_eq!(
        vm.eval_cell(code, "user.js", soon()).unwrap(),
        completed(r#"["RangeError","Maximum call stack size exceeded",true]"#)
    );
}

/// Deep nesting that QuickJS parses itself (`eval`, `Function`, `JSON.parse`) hits QuickJS's own
/// stack check before the wasm stack limit: a catchable error, like deep recursion, with the
/// default `max_wasm_stack_bytes` (at 24 MiB, 100,000 parentheses in `eval` trapped instead).
#[test]
fn deep_nesting_parsed_by_the_guest_is_catchable() {
    let _g = serial();
    let mut vm = sandbox().start().unwrap();
    for case in [
        "eval('('.repeat(100000) + '1' + ')'.repeat(100000))",
        "new Function('return ' + '['.repeat(100000) + ']'.repeat(100000))",
        "eval('`${'.repeat(50000) + '1' + '}`'.repeat(50000))",
        "JSON.parse('['.repeat(200000) + ']'.repeat(200000))",
    ] {
        let code = format!("try {{ {case}; return 'no error' }} catch (e) {{ return e.name }}");
        let step = vm.eval_cell(&code, "user.js", soon());
        assert!(
            matches!(&step, Ok(s) if *s == completed("\"RangeError\"") || *s == completed("\"SyntaxError\"")),
            "{case}: {step:?}"
        );
    }
    assert_eq!(vm.eval_cell("return 1 + 1", "user.js", soon()).unwrap(), completed("2"));
}

/// A wasm stack too small for QuickJS's check to fire first: the trap is a clean
/// `StackExhausted`, and the sandbox survives.
#[test]
fn wasm_stack_exhaustion_is_a_typed_error() {
    let _g = serial();
    let mut c = crate::det_config();
    c.max_wasm_stack_bytes = 256 << 10;
    let sb = Sandbox::new(c, "").unwrap();
    let mut vm = sb.start().unwrap();
    let r = vm.eval_cell(
        "function f(n) { return n === 0 ? 0 : 1 + f(n - 1) } return f(100000)",
        "user.js",
        soon(),
    );
    assert_eq!(r, Err(SandboxError::StackExhausted));
    let mut vm = sb.start().unwrap();
    assert_eq!(vm.eval_cell("return 2", "user.js", soon()).unwrap(), completed("2"));
}

/// VM calls made from a thread with a small native stack still get the configured wasm stack.
#[test]
fn small_stack_threads_work() {
    let _g = serial();
    let r = std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(|| {
            let mut vm = sandbox().start().unwrap();
            vm.eval_cell(
                "function f(n) { return n === 0 ? 0 : 1 + f(n - 1) } return f(5000)",
                "user.js",
                soon(),
            )
        })
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(r.unwrap(), completed("5000"));
}

#[test]
fn step_reports_pending_host_calls() {
    let _g = serial();
    let mut vm = sandbox().start().unwrap();
    let step =
        vm.eval_cell("host('echo', 1); host('echo', 2); await host('echo', 3)", "user.js", soon()).unwrap();
    assert_eq!(step, Step::Pending { pending_calls: 3 });
}

fn slots_in_use(e: SandboxError, slots: u32) {
    assert_eq!(e, SandboxError::AllVmsInUse { slots });
    let message = e.to_string();
    assert!(message.contains(&format!("all {slots} VM slots are in use")), "{message}");
    assert!(!message.contains("::"), "no Rust names: {message}");
}

/// `max_live_vms` VMs run at once; one more (started or restored) is refused with a reason that
/// says what to do, and a slot frees up as soon as a VM is dropped.
#[test]
fn live_vms_past_max_live_vms_are_unavailable_until_one_is_dropped() {
    let _g = serial();
    let mut c = crate::det_config();
    c.max_live_vms = 3;
    let sb = Sandbox::new(c, crate::PRELUDE).unwrap();
    let mut vms: Vec<_> = (0..3).map(|_| sb.start().unwrap()).collect();
    let step = vms[0].eval_cell("const r = await host('echo', 5); return r", "user.js", soon()).unwrap();
    assert!(matches!(step, Step::Pending { .. }), "{step:?}");
    let snap = vms[0].snapshot().unwrap();
    slots_in_use(sb.start().unwrap_err(), 3);
    slots_in_use(sb.restore(&snap).unwrap_err(), 3);
    // The live VMs are unaffected.
    assert_eq!(vms[1].eval_cell("return 1 + 1", "user.js", soon()).unwrap(), completed("2"));
    drop(vms.remove(0));
    let mut restored = sb.restore(&snap).unwrap();
    let call = restored.take_host_calls().pop().expect("the echo call");
    restored.deliver(call.id, crate::dispatch(&call.payload), soon()).unwrap();
    assert_eq!(restored.run_jobs(soon()).unwrap(), completed("5"));
    slots_in_use(sb.start().unwrap_err(), 3);
    drop(restored);
    assert_eq!(sb.start().unwrap().eval_cell("return 3", "user.js", soon()).unwrap(), completed("3"));
}

/// The default pool: 1,000 VMs live at once, the 1,001st is refused.
#[test]
fn a_thousand_live_vms_by_default() {
    let _g = serial();
    let mut c = crate::det_config();
    assert_eq!(c.max_live_vms, 1000);
    // A pool of its own (a different engine configuration), so VMs that other tests hold at
    // the same time do not count.
    c.max_wasm_stack_bytes += 64 << 10;
    let sb = Sandbox::new(c, crate::PRELUDE).unwrap();
    let vms: Vec<_> = (0..1000).map(|i| sb.start().unwrap_or_else(|e| panic!("VM {i}: {e}"))).collect();
    slots_in_use(sb.start().unwrap_err(), 1000);
    drop(vms);
    assert_eq!(sb.start().unwrap().eval_cell("return 4", "user.js", soon()).unwrap(), completed("4"));
}

/// `performance.now()` counts from the run's first cell (a VM started ahead of its run does not
/// count its idle time, and nothing shows the process's uptime), and counts on across a snapshot
/// and restore, time spent suspended included.
#[test]
fn the_monotonic_clock_counts_from_the_first_cell_and_across_a_restore() {
    let _g = serial();
    let sb = Sandbox::new(SandboxConfig::default(), crate::PRELUDE).unwrap();
    let mut vm = sb.start().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let step = vm
        .eval_cell(
            "globalThis.t0 = performance.now(); await host('echo', 1); return [t0, performance.now()]",
            "user.js",
            soon(),
        )
        .unwrap();
    assert!(matches!(step, Step::Pending { .. }), "{step:?}");
    let snap = vm.snapshot().unwrap();
    drop(vm);
    std::thread::sleep(Duration::from_millis(200));
    let mut restored = sb.restore(&snap).unwrap();
    let call = restored.take_host_calls().pop().expect("the echo call");
    restored.deliver(call.id, crate::dispatch(&call.payload), soon()).unwrap();
    let Step::Completed { value_json: Some(pair) } = restored.run_jobs(soon()).unwrap() else {
        panic!("the cell completes")
    };
    let times: Vec<f64> =
        pair.trim_matches(|c| c == '[' || c == ']').split(',').map(|t| t.parse().unwrap()).collect();
    assert!(times[0] < 250.0, "starts near 0, not at the VM's start or process uptime: {pair}");
    assert!(times[1] >= times[0] + 200.0, "suspended time counts: {pair}");
}

/// An interrupt from another thread stops an endless loop well before its deadline, terminates
/// the VM, and leaves the sandbox working; an interrupt sent before a step stops that step.
#[test]
fn an_interrupt_stops_a_running_step_and_terminates_the_vm() {
    let _g = serial();
    let sb = sandbox();
    let mut vm = sb.start().unwrap();
    let handle = vm.interrupt_handle();
    let stopper = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        handle.interrupt();
    });
    let started = Instant::now();
    let r = vm.eval_cell("for (;;) {}", "user.js", Instant::now() + Duration::from_secs(30));
    assert_eq!(r, Err(SandboxError::Interrupted));
    assert!(started.elapsed() < Duration::from_secs(10), "stopped after {:?}", started.elapsed());
    stopper.join().unwrap();
    assert!(matches!(vm.eval_cell("return 1", "user.js", soon()), Err(SandboxError::Terminated { .. })));
    let mut other = sb.start().unwrap();
    other.interrupt_handle().interrupt();
    assert_eq!(other.eval_cell("return 1", "user.js", soon()), Err(SandboxError::Interrupted));
    let mut fresh = sb.start().unwrap();
    assert_eq!(fresh.eval_cell("return 1 + 1", "user.js", soon()).unwrap(), completed("2"));
}

/// A guest call from a thread with a small native stack (an async worker's 2 MiB, here 512 KiB)
/// runs on a pooled stack segment: deep guest recursion still ends in a catchable RangeError.
#[test]
fn guest_calls_on_a_small_stack_thread_work() {
    let _g = serial();
    let sb = sandbox();
    let out = std::thread::Builder::new()
        .stack_size(512 << 10)
        .spawn(move || {
            let mut vm = sb.start().unwrap();
            let deep = vm
                .eval_cell(
                    "function f(n) { return f(n + 1) + 1 } try { f(0) } catch (e) { return e.name }",
                    "user.js",
                    soon(),
                )
                .unwrap();
            let again = vm.eval_cell("return 6 * 7", "user.js", soon()).unwrap();
            (deep, again)
        })
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(out, (completed("\"RangeError\""), completed("42")));
}
