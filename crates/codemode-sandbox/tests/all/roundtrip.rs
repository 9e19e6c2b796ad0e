//! Suspend, snapshot, drop, restore, deliver, complete.

use codemode_sandbox::{Delivery, Step};

use crate::{completed, dispatch, run, run_with, sandbox, serial, soon};

const TWO_CALLS: &str = r#"
const [a, b] = await Promise.all([host("add", {a: 1, b: 2}), host("add", {a: 10, b: 20})]);
text(`a=${a.sum} b=${b.sum}`);
return a.sum * 100 + b.sum;
"#;

fn two_parallel_calls(reverse: bool) {
    let _g = serial();
    let sb = sandbox();
    let mut vm = sb.start().unwrap();
    assert_eq!(vm.eval_cell(TWO_CALLS, "user.js", soon()).unwrap(), Step::Pending { pending_calls: 2 });
    let snap = vm.snapshot().unwrap();
    drop(vm);
    let mut vm = sb.restore(&snap).unwrap();
    let mut calls = vm.take_host_calls();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].payload, r#"{"op":"add","args":{"a":1,"b":2}}"#);
    if reverse {
        calls.reverse();
    }
    vm.deliver(calls[0].id, dispatch(&calls[0].payload), soon()).unwrap();
    assert_eq!(vm.run_jobs(soon()).unwrap(), Step::Pending { pending_calls: 1 });
    vm.deliver(calls[1].id, dispatch(&calls[1].payload), soon()).unwrap();
    assert_eq!(vm.run_jobs(soon()).unwrap(), completed("330"));
    let out = vm.take_output();
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].payload, "a=3 b=30");
}

#[test]
fn two_parallel_calls_delivered_in_order() {
    two_parallel_calls(false);
}

#[test]
fn two_parallel_calls_delivered_in_reverse() {
    two_parallel_calls(true);
}

#[test]
fn calls_taken_before_a_snapshot_are_not_returned_again_after_restore() {
    let _g = serial();
    let sb = sandbox();
    let mut vm = sb.start().unwrap();
    vm.eval_cell(TWO_CALLS, "user.js", soon()).unwrap();
    let taken = vm.take_host_calls();
    assert_eq!(taken.len(), 2);
    let snap = vm.snapshot().unwrap();
    let mut vm = sb.restore(&snap).unwrap();
    assert!(vm.take_host_calls().is_empty());
    assert_eq!(vm.pending_host_calls(), taken);
}

#[test]
fn snapshot_and_restore_at_every_await() {
    let _g = serial();
    let code = r#"
let acc = 0;
for (let i = 0; i < 6; i++) {
  const r = await host("add", {a: acc, b: i});
  acc = r.sum;
  text(`step ${i}: ${acc}`);
}
return {acc, rnd: Math.random() < 1, now: Date.now()};
"#;
    let out = run_with(sandbox(), code, true);
    assert_eq!(out.step, completed(r#"{"acc":15,"rnd":true,"now":1700000000000}"#));
    assert_eq!(out.output.len(), 6);
    assert_eq!(out.output[5].payload, "step 5: 15");
}

#[test]
fn rejection_arrives_as_a_plain_error_with_code() {
    let _g = serial();
    let out = run(r#"
const ErrorProto = Error.prototype;
try { await host("fail", {}); return "no"; }
catch (e) { return [e.message, e.code, Object.getPrototypeOf(e) === ErrorProto, e instanceof Error, Object.keys(e)]; }
"#);
    assert_eq!(out.step, completed(r#"["tool failed","E_TOOL",true,true,[]]"#));
}

/// The same programs run straight and with a snapshot + restore at every quiescent point give
/// identical results and output.
#[test]
fn differential_straight_vs_snapshot_at_every_step() {
    let _g = serial();
    let programs = [
        "return 1 + 1",
        "text('hi'); json({a: [1, 2]}); return null",
        r#"const xs = []; for (let i = 0; i < 4; i++) xs.push(await host("echo", {i, s: "x".repeat(i)})); return xs"#,
        r#"const m = new Map(); for (const k of ["a","b","c"]) m.set(k, (await host("add", {a: k.charCodeAt(0), b: 1})).sum); return [...m]"#,
        r#"try { await host("nope", {}) } catch (e) { text(e.message); } return Math.random()"#,
        r#"const big = "y".repeat(100000); const r = await host("echo", {n: big.length}); return r.n + big.length"#,
        r#"let p = Promise.all([1,2,3].map(i => host("add", {a: i, b: i}))); const rs = await p; json(rs); return rs.map(r => r.sum)"#,
        "class A { #x = 1; get x() { return this.#x } } const a = new A(); await host('echo', {}); return a.x",
        r#"function* g() { yield 1; yield 2 } const it = g(); it.next(); await host("echo", 1); return [...it]"#,
        "throw new TypeError('bad ' + (await host('echo', {v: 1})).v)",
        "await host('echo', 1); return new Date().toISOString()",
    ];
    for p in programs {
        let straight = run_with(sandbox(), p, false);
        let cycled = run_with(sandbox(), p, true);
        assert_eq!(straight, cycled, "program: {p}");
    }
}

#[test]
fn a_restored_vm_continues_the_random_sequence() {
    let _g = serial();
    let sb = sandbox();
    let code = "const a = Math.random(); await host('echo', 1); return [a, Math.random()]";
    let straight = run_with(sb, code, false);
    let cycled = run_with(sb, code, true);
    assert_eq!(straight, cycled);
    let Step::Completed { value_json: Some(v) } = &straight.step else { panic!("{straight:?}") };
    let (a, b) = v.trim_matches(['[', ']']).split_once(',').unwrap();
    assert_ne!(a, b);
}

#[test]
fn deliver_before_run_jobs_then_snapshot_needs_run_jobs() {
    let _g = serial();
    let sb = sandbox();
    let mut vm = sb.start().unwrap();
    vm.eval_cell("return (await host('add', {a: 2, b: 3})).sum", "user.js", soon()).unwrap();
    let c = vm.take_host_calls().remove(0);
    vm.deliver(c.id, Delivery::Resolve(r#"{"sum":5}"#.into()), soon()).unwrap();
    assert_eq!(vm.snapshot().unwrap_err(), codemode_sandbox::SandboxError::NotQuiescent);
    assert_eq!(vm.run_jobs(soon()).unwrap(), completed("5"));
}
