//! `Sandbox::recycle`: a finished VM reset in place is exactly a freshly started one (every byte of
//! memory, the host state), and VMs whose state cannot be vouched for are refused.

use std::sync::OnceLock;

use codemode_sandbox::{Sandbox, SandboxConfig, Step, Vm};

use crate::{PRELUDE, completed, deadline_ms, det_config, dispatch, serial, soon};

/// A base image of a few MiB (like a large catalog's guest API), so VMs are recyclable by default.
fn big_prelude() -> String {
    format!(
        "{PRELUDE}\nglobalThis.api = []; for (let i = 0; i < 400; i++) api.push({{ i, d: 'tool ' + i + ' '.repeat(i % 50) + 'x'.repeat(4000) }});"
    )
}

fn big() -> &'static Sandbox {
    static S: OnceLock<Sandbox> = OnceLock::new();
    S.get_or_init(|| Sandbox::new(det_config(), &big_prelude()).expect("sandbox"))
}

/// The same base image with every VM write-tracked (restored VMs too).
fn big_tracked() -> &'static Sandbox {
    static S: OnceLock<Sandbox> = OnceLock::new();
    S.get_or_init(|| {
        let mut c = det_config();
        c.track_writes = true;
        Sandbox::new(c, &big_prelude()).expect("sandbox")
    })
}

/// Everything a VM's state is made of that a test can see: its full snapshot (memory image,
/// ledger, cell state) as bytes.
fn state(vm: &mut Vm) -> Vec<u8> {
    vm.snapshot().expect("snapshot").to_bytes()
}

/// Recycling needs write tracking (Linux >= 6.7); see `tracking::assert_tracked`.
fn tracking_expected() -> bool {
    cfg!(target_os = "linux") && std::env::var_os("CODEMODE_TEST_ALLOW_UNTRACKED").is_none()
}

/// Cells that write all over the heap without growing memory past the base image: globals,
/// strings, arrays, deletions of base objects, host calls delivered or left pending, output.
const PROGRAMS: &[&str] = &[
    "globalThis.leak = 'secret'; return 1;",
    "api[3].d = 'overwritten'; api.length = 10; globalThis.k = []; for (let i = 0; i < 2000; i++) k.push({ i }); return k.length;",
    "text('hello'); json({ a: 1 }); const r = await host('add', { a: 1, b: 2 }); return r.sum;",
    "host('echo', { pending: true }); host('add', { a: 5, b: 6 }); return 'left pending';",
    "Object.prototype.polluted = 1; Array.prototype.push = null; delete globalThis.host; return Math.random();",
    "globalThis.s = 'y'.repeat(10000); throw new Error('failed cell');",
];

/// Runs `code` on `vm`: delivers host calls while the cell awaits them, except that a cell whose
/// calls are meant to stay pending is left so.
fn run_on(vm: &mut Vm, code: &str) -> Step {
    let mut step = vm.eval_cell(code, "user.js", soon()).expect("eval");
    while let Step::Pending { .. } = step {
        if code.contains("left pending") {
            break;
        }
        for call in vm.take_host_calls() {
            vm.deliver(call.id, dispatch(&call.payload), soon()).expect("deliver");
        }
        step = vm.run_jobs(soon()).expect("run_jobs");
    }
    step
}

#[test]
fn a_recycled_vm_is_byte_identical_to_a_fresh_one() {
    let _g = serial();
    let sb = big();
    assert!(
        sb.base_image_bytes() >= SandboxConfig::default().recycle_min_base_bytes,
        "{}",
        sb.base_image_bytes()
    );
    let fresh = state(&mut sb.start().expect("start"));
    let mut vm = sb.start().expect("start");
    let mut recycled = 0;
    for round in 0..3 {
        for code in PROGRAMS {
            let _ = run_on(&mut vm, code);
            let before = vm.memory_bytes();
            vm = match sb.recycle(vm) {
                Some(vm) => vm,
                None if !tracking_expected() => sb.start().expect("start"),
                None => panic!("round {round}: {code} left a VM of {before} bytes that was not recycled"),
            };
            recycled += 1;
            assert_eq!(vm.abi_stats(), sb.start().expect("start").abi_stats(), "{code}");
            assert!(vm.take_output().is_empty(), "{code}");
            assert!(vm.pending_host_calls().is_empty(), "{code}");
            assert!(
                state(&mut vm) == fresh,
                "round {round}: the VM recycled after {code} differs from a fresh one"
            );
        }
    }
    // And it runs like a fresh one: nothing of the earlier runs is visible.
    let step = run_on(
        &mut vm,
        "return [typeof leak, typeof k, typeof s, ({}).polluted, api.length, api[3].d.length, typeof host];",
    );
    assert_eq!(step, completed(r#"["undefined","undefined","undefined",null,400,4009,"function"]"#));
    assert_eq!(recycled, 3 * PROGRAMS.len());
}

/// Pages the last two runs both wrote stay writable after a recycle (no write-protect fault in
/// the next run); the next recycle must still reset them. Checked on the raw memory, not through
/// a snapshot (which sees pages through the same tracking), across the periodic re-protection of
/// every page.
#[test]
fn pages_left_writable_by_a_recycle_are_still_reset() {
    let _g = serial();
    let sb = big();
    let fresh = sb.start().expect("start");
    let mut vm = sb.start().expect("start");
    for i in 0..80 {
        // The same pages every run (so they turn hot), each time with other contents.
        let code = format!(
            "globalThis.leak = 'secret-{i}'; api[{}].d = 'run {i}'; const a = []; for (let j = 0; j < {}; j++) a.push({{ j }}); return a.length;",
            i % 3,
            200 + (i % 5) * 20,
        );
        assert_eq!(run_on(&mut vm, &code), completed(&(200 + (i % 5) * 20).to_string()), "run {i}");
        vm = match sb.recycle(vm) {
            Some(vm) => vm,
            None if !tracking_expected() => sb.start().expect("start"),
            None => panic!("run {i}: not recycled"),
        };
        assert!(vm.linear_memory() == fresh.linear_memory(), "run {i}: the recycled VM's memory differs");
    }
    let step = run_on(&mut vm, "return [typeof leak, api[0].d.length, api[1].d.length, api[2].d.length];");
    assert_eq!(step, completed("[\"undefined\",4006,4007,4008]"));
}

#[test]
fn recycled_vms_draw_fresh_random_seeds() {
    let _g = serial();
    let mut config = SandboxConfig::default();
    config.deterministic = None;
    let sb = Sandbox::new(config, &big_prelude()).expect("sandbox");
    let mut vm = sb.start().expect("start");
    let mut seen = Vec::new();
    for _ in 0..4 {
        seen.push(run_on(&mut vm, "return Math.random();"));
        vm = match sb.recycle(vm) {
            Some(vm) => vm,
            None if !tracking_expected() => sb.start().expect("start"),
            None => panic!("not recycled"),
        };
    }
    let mut unique = seen.clone();
    unique.sort_by_key(|s| format!("{s:?}"));
    unique.dedup();
    assert_eq!(unique.len(), seen.len(), "{seen:?}");
}

#[test]
fn a_recycled_restored_vm_is_byte_identical_to_a_fresh_one() {
    let _g = serial();
    let sb = big_tracked();
    let fresh = state(&mut sb.start().expect("start"));
    let mut vm = sb.start().expect("start");
    let step = vm
        .eval_cell("globalThis.mid = 'z'.repeat(5000); api[7].d = 'changed'; return (await host('add', { a: 2, b: 3 })).sum;", "user.js", soon())
        .expect("eval");
    assert!(matches!(step, Step::Pending { .. }), "{step:?}");
    let snap = vm.snapshot().expect("snapshot");
    drop(vm);
    // A restored VM carries the snapshot's pages (differing from the base image when it was armed)
    // besides what it writes after: both are reset.
    let mut vm = sb.restore(&snap).expect("restore");
    for call in vm.take_host_calls() {
        vm.deliver(call.id, dispatch(&call.payload), soon()).expect("deliver");
    }
    assert_eq!(vm.run_jobs(soon()).expect("run_jobs"), completed("5"));
    match sb.recycle(vm) {
        Some(mut vm) => assert!(state(&mut vm) == fresh, "the recycled restored VM differs from a fresh one"),
        None => assert!(!tracking_expected(), "a restored tracked VM was not recycled"),
    }
}

#[test]
fn vms_whose_state_cannot_be_vouched_for_are_not_recycled() {
    let _g = serial();
    let sb = big();
    // Memory grown past the base image.
    let mut vm = sb.start().expect("start");
    let grown = vm.memory_bytes();
    assert_eq!(
        run_on(&mut vm, "globalThis.big = new Uint8Array(48 << 20).fill(1); return big.length;"),
        completed("50331648")
    );
    assert!(vm.memory_bytes() > grown);
    assert!(sb.recycle(vm).is_none(), "a grown VM was recycled");
    // Terminated by a timeout.
    let mut vm = sb.start().expect("start");
    assert!(vm.eval_cell("for (;;) {}", "user.js", deadline_ms(50)).is_err());
    assert!(vm.is_terminated());
    assert!(sb.recycle(vm).is_none(), "a terminated VM was recycled");
    // Another sandbox's VM.
    let other = Sandbox::new(det_config(), &big_prelude()).expect("sandbox");
    assert!(sb.recycle(other.start().expect("start")).is_none(), "another sandbox's VM was recycled");
    // Not write-tracked: recycling is off for this sandbox (its base image is under the threshold).
    let mut config = det_config();
    config.recycle_min_base_bytes = usize::MAX;
    let untracked = Sandbox::new(config, &big_prelude()).expect("sandbox");
    let vm = untracked.start().expect("start");
    assert!(!vm.writes_tracked());
    assert!(untracked.recycle(vm).is_none(), "an untracked VM was recycled");
    // By default small base images are recycled too (tracked wherever the kernel can).
    let small = Sandbox::new(det_config(), PRELUDE).expect("sandbox");
    assert_eq!(SandboxConfig::default().recycle_min_base_bytes, 0);
    assert_eq!(small.start().expect("start").writes_tracked(), tracking_expected());
}

#[test]
fn an_interrupt_handle_of_the_last_run_does_not_reach_the_recycled_vm() {
    let _g = serial();
    let sb = big();
    let mut vm = sb.start().expect("start");
    let handle = vm.interrupt_handle();
    assert_eq!(run_on(&mut vm, "return 1;"), completed("1"));
    let Some(mut vm) = sb.recycle(vm) else {
        assert!(!tracking_expected(), "not recycled");
        return;
    };
    handle.interrupt();
    assert_eq!(run_on(&mut vm, "return 2;"), completed("2"));
    // Its own handle still works.
    vm.interrupt_handle().interrupt();
    assert!(vm.eval_cell("return 3;", "user.js", soon()).is_err());
    assert!(sb.recycle(vm).is_none(), "an interrupted VM was recycled");
}
