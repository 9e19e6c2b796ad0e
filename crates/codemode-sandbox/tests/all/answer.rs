//! A [`CallAnswerer`]: calls answered at once resolve while the guest runs (no step ends for
//! them), kept calls are pending but only the answerer has them, left ones are taken as usual.

use codemode_sandbox::{AtOnce, CallAnswerer, Delivery, Sandbox, Step};

use super::{PRELUDE, completed, det_config, dispatch, sandbox, serial, soon};

/// Answers `add` and `echo` at once (as [`dispatch`] would), keeps `slow`, leaves `left`, and
/// answers `bad` at once with text that is not JSON. Records every call it saw.
#[derive(Default)]
struct Answerer {
    seen: Vec<u32>,
    kept: Vec<(u32, String)>,
}

impl CallAnswerer for Answerer {
    fn answer(&mut self, id: u32, payload: &str) -> AtOnce {
        self.seen.push(id);
        if payload.contains("\"op\":\"slow\"") {
            self.kept.push((id, payload.to_owned()));
            return AtOnce::Kept;
        }
        if payload.contains("\"op\":\"left\"") {
            return AtOnce::Left;
        }
        if payload.contains("\"op\":\"bad\"") {
            return AtOnce::Resolved("{nope".into());
        }
        match dispatch(payload) {
            Delivery::Resolve(json) => AtOnce::Resolved(json),
            Delivery::Reject { .. } => AtOnce::Left,
        }
    }
}

fn answerer(vm: &mut codemode_sandbox::Vm) -> &mut Answerer {
    let a = vm.answerer_mut().expect("an answerer is installed");
    (a as &mut dyn std::any::Any).downcast_mut::<Answerer>().expect("ours")
}

#[test]
fn calls_answered_at_once_finish_the_cell_in_one_step() {
    let _g = serial();
    let mut vm = sandbox().start().unwrap();
    assert!(vm.set_answerer(Some(Box::new(Answerer::default()))).is_none());
    let before = vm.abi_stats();
    let cell = "let s = 0; for (let i = 0; i < 10; i++) s += (await host('add', { a: i, b: 1 })).sum;\n\
                const p = host('echo', [1, 2]); const q = p.then((v) => v.length);\n\
                return [s, await q, p instanceof Promise];";
    // No `Pending` step: every call resolved before `host` returned.
    assert_eq!(vm.eval_cell(cell, "user.js", soon()).unwrap(), completed("[55,2,true]"));
    assert!(vm.take_host_calls().is_empty());
    assert!(vm.pending_host_calls().is_empty());
    let after = vm.abi_stats();
    assert_eq!(after.host_calls - before.host_calls, 11);
    assert_eq!(after.deliveries - before.deliveries, 11, "an answer at once counts as a delivery");
    assert_eq!(answerer(&mut vm).seen.len(), 11);
}

#[test]
fn a_call_answered_at_once_still_settles_in_a_later_job() {
    let _g = serial();
    let mut vm = sandbox().start().unwrap();
    vm.set_answerer(Some(Box::new(Answerer::default())));
    // As for any promise, reactions run after the synchronous code that made the call.
    let cell = "const order = []; host('echo', 1).then(() => order.push('then')); order.push('sync');\n\
                await null; await null; return order;";
    assert_eq!(vm.eval_cell(cell, "user.js", soon()).unwrap(), completed(r#"["sync","then"]"#));
}

#[test]
fn kept_calls_are_pending_for_the_host_and_left_calls_are_taken() {
    let _g = serial();
    let mut vm = sandbox().start().unwrap();
    vm.set_answerer(Some(Box::new(Answerer::default())));
    let cell = "const [a, b, c] = await Promise.all([host('slow', 1), host('left', 2), host('add', { a: 1, b: 2 })]);\n\
                return [a, b, c.sum];";
    assert!(matches!(vm.eval_cell(cell, "user.js", soon()).unwrap(), Step::Pending { pending_calls: 2 }));
    // The left call is taken as without an answerer; the kept one only the answerer has.
    let left = vm.take_host_calls();
    assert_eq!(left.len(), 1);
    assert!(left[0].payload.contains("\"op\":\"left\""));
    let kept = answerer(&mut vm).kept.clone();
    assert_eq!(kept.len(), 1);
    let mut pending: Vec<u32> = vm.pending_host_calls().iter().map(|c| c.id).collect();
    pending.sort();
    let mut expected = vec![kept[0].0, left[0].id];
    expected.sort();
    assert_eq!(pending, expected);
    let step = vm
        .deliver_and_run(
            [(kept[0].0, Delivery::Resolve("\"k\"".into())), (left[0].id, Delivery::Resolve("\"l\"".into()))],
            soon(),
        )
        .unwrap();
    assert_eq!(step, completed(r#"["k","l",3]"#));
}

#[test]
fn an_answer_at_once_that_is_not_json_rejects_the_call() {
    let _g = serial();
    let mut vm = sandbox().start().unwrap();
    vm.set_answerer(Some(Box::new(Answerer::default())));
    let cell = "try { return await host('bad', 1) } catch (e) { return [e.message, e.code] }";
    assert_eq!(
        vm.eval_cell(cell, "user.js", soon()).unwrap(),
        completed(r#"["host delivered invalid JSON","internal_error"]"#)
    );
}

#[test]
fn a_snapshot_holds_only_the_calls_still_pending_and_a_restored_or_recycled_vm_has_no_answerer() {
    let _g = serial();
    let sb = sandbox();
    let mut vm = sb.start().unwrap();
    vm.set_answerer(Some(Box::new(Answerer::default())));
    let cell =
        "const a = (await host('add', { a: 2, b: 3 })).sum; const b = await host('slow', 0); return [a, b];";
    assert!(matches!(vm.eval_cell(cell, "user.js", soon()).unwrap(), Step::Pending { pending_calls: 1 }));
    let kept = answerer(&mut vm).kept.clone();
    let snapshot = vm.snapshot().unwrap();
    let mut restored = sb.restore(&snapshot).unwrap();
    assert!(restored.answerer_mut().is_none());
    let pending = restored.pending_host_calls();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].id, kept[0].0);
    restored.deliver(kept[0].0, Delivery::Resolve("7".into()), soon()).unwrap();
    assert_eq!(restored.run_jobs(soon()).unwrap(), completed("[5,7]"));
    // A finished VM reset in place starts without the hook (recycling needs write tracking,
    // Linux >= 6.7, as in `recycle.rs`).
    let tracked = {
        let mut c = det_config();
        c.track_writes = true;
        Sandbox::new(c, PRELUDE).unwrap()
    };
    let mut done = tracked.start().unwrap();
    done.set_answerer(Some(Box::new(Answerer::default())));
    assert_eq!(done.eval_cell("return (await host('echo', 4))", "user.js", soon()).unwrap(), completed("4"));
    match tracked.recycle(done) {
        Some(mut recycled) => {
            assert!(recycled.answerer_mut().is_none());
            assert!(matches!(
                recycled.eval_cell("return await host('echo', 5)", "user.js", soon()).unwrap(),
                Step::Pending { pending_calls: 1 }
            ));
        }
        None => assert!(
            !cfg!(target_os = "linux") || std::env::var_os("CODEMODE_TEST_ALLOW_UNTRACKED").is_some(),
            "a write-tracked VM recycles on Linux"
        ),
    }
}

#[test]
fn removing_the_answerer_gives_it_back_and_calls_are_pending_again() {
    let _g = serial();
    let mut vm = sandbox().start().unwrap();
    vm.set_answerer(Some(Box::new(Answerer::default())));
    let back = vm.set_answerer(None).expect("the installed answerer comes back");
    let back: Box<dyn std::any::Any> = back;
    assert!(back.downcast::<Answerer>().is_ok());
    assert!(matches!(
        vm.eval_cell("return await host('echo', 1)", "user.js", soon()).unwrap(),
        Step::Pending { pending_calls: 1 }
    ));
    assert_eq!(vm.take_host_calls().len(), 1);
}

/// `__codemode_host_call_with`: the payload is the prefix, the plain value's JSON text and the
/// suffix, built by the guest; a value that is not plain data starts no call (undefined).
#[test]
fn a_host_call_with_a_plain_value_builds_its_payload_in_the_guest() {
    let _g = serial();
    let prelude = "globalThis.callWith = __codemode_host_call_with; globalThis.proto = Object.prototype;";
    let sb = Sandbox::new(det_config(), prelude).unwrap();
    let mut vm = sb.start().unwrap();
    let cell = "const b = callWith('x', new Date(0), 'y', proto);\n\
                class K {}; const c = callWith('x', new K(), 'y', proto);\n\
                const a = await callWith('{\"op\":\"echo\",\"args\":', { n: [1, 'two', null], s: 'é\\u2028' }, '}', proto);\n\
                return [a, b === undefined, c === undefined];";
    assert!(matches!(vm.eval_cell(cell, "user.js", soon()).unwrap(), Step::Pending { pending_calls: 1 }));
    let calls = vm.take_host_calls();
    assert_eq!(calls.len(), 1, "only the plain value started a call");
    assert_eq!(calls[0].payload, "{\"op\":\"echo\",\"args\":{\"n\":[1,\"two\",null],\"s\":\"é\u{2028}\"}}");
    let step = vm.deliver_and_run([(calls[0].id, Delivery::Resolve("1".into()))], soon()).unwrap();
    assert_eq!(step, completed("[1,true,true]"));
    // Answered at once like any host call.
    let mut vm = sb.start().unwrap();
    vm.set_answerer(Some(Box::new(Answerer::default())));
    let cell = "return (await callWith('{\"op\":\"add\",\"args\":', { a: 2, b: 5 }, '}', proto)).sum;";
    assert_eq!(vm.eval_cell(cell, "user.js", soon()).unwrap(), completed("7"));
}
