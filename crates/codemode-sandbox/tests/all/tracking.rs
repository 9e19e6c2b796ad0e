//! Write-tracked snapshots (`SandboxConfig::track_writes`): byte-identical to the full page
//! compare for random programs, across restores, memory growth, threads and pool-slot reuse.

use std::sync::OnceLock;

use codemode_sandbox::{Sandbox, SandboxConfig, Step, Vm};

use crate::{PRELUDE, det_config, dispatch, sandbox, serial, soon};

fn tracked_config() -> SandboxConfig {
    let mut c = det_config();
    c.track_writes = true;
    c
}

/// The deterministic sandbox of [`crate::sandbox`], with write tracking.
fn tracked() -> &'static Sandbox {
    static S: OnceLock<Sandbox> = OnceLock::new();
    S.get_or_init(|| Sandbox::new(tracked_config(), PRELUDE).expect("sandbox"))
}

/// Tracking must really be on where the kernel has it (Linux >= 6.7): a test that silently
/// compared the full compare against itself would prove nothing. On a machine known to lack
/// it, `CODEMODE_TEST_ALLOW_UNTRACKED=1` turns the failure into a warning on stderr.
fn assert_tracked(vm: &Vm) {
    if cfg!(target_os = "linux") && !vm.writes_tracked() {
        let msg = "write tracking is unavailable (needs Linux >= 6.7 userfaultfd WP_ASYNC and PAGEMAP_SCAN)";
        if std::env::var_os("CODEMODE_TEST_ALLOW_UNTRACKED").is_some() {
            eprintln!("WARNING: {msg}; the tracked tests only exercised the fallback");
        } else {
            panic!("{msg}; set CODEMODE_TEST_ALLOW_UNTRACKED=1 to run on such a machine");
        }
    }
}

struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A random cell: allocations of random sizes (some large enough to grow linear memory),
/// mutations, frees, and host calls (the quiescent points where snapshots are taken).
fn program(rng: &mut XorShift) -> String {
    let mut code = String::from("globalThis.keep = globalThis.keep || []; let acc = 0;\n");
    for step in 0..1 + rng.below(8) {
        match rng.below(7) {
            0 => code.push_str(&format!("keep.push('s{step}'.repeat({}));\n", 1 + rng.below(5000))),
            1 => code.push_str(&format!(
                "keep.push(new Array({}).fill(0).map((_, i) => i * {step}));\n",
                1 + rng.below(200_000)
            )),
            2 => code.push_str("keep.length = keep.length >> 1;\n"),
            3 => code.push_str(&format!(
                "acc += (await host('add', {{a: {}, b: {step}}})).sum;\n",
                rng.below(100)
            )),
            4 => code.push_str(&format!(
                "globalThis.o{} = {{x: {step}, y: 'v'.repeat({})}};\n",
                rng.below(20),
                rng.below(300)
            )),
            5 => code.push_str(&format!("acc += (await host('echo', {{t: 'e{step}'}})).t.length;\n")),
            _ => code.push_str(&format!(
                "new Uint8Array({}).fill({});\n",
                1 + rng.below(1 << 20),
                rng.below(256)
            )),
        }
    }
    code.push_str("return [acc, keep.length];");
    code
}

/// Run `code`, snapshotting at every quiescent point and continuing in a restore of it; the
/// snapshots' bytes and the final step.
fn run_snapshotting(sb: &Sandbox, code: &str, check_tracked: bool) -> (Vec<Vec<u8>>, Step) {
    let mut snaps = Vec::new();
    let mut vm = sb.start().expect("start");
    if check_tracked {
        assert_tracked(&vm);
    }
    let mut step = vm.eval_cell(code, "user.js", soon()).expect("eval");
    while let Step::Pending { .. } = step {
        // Twice on one VM: the second snapshot must not depend on the first.
        let snap = vm.snapshot().expect("snapshot");
        let image = snap.memory_image().expect("image");
        assert_eq!(vm.snapshot().expect("snapshot").memory_image().expect("image"), image);
        snaps.push(image);
        drop(vm);
        vm = sb.restore(&snap).expect("restore");
        if check_tracked {
            assert_tracked(&vm);
        }
        for call in vm.take_host_calls() {
            vm.deliver(call.id, dispatch(&call.payload), soon()).expect("deliver");
        }
        step = vm.run_jobs(soon()).expect("run_jobs");
    }
    snaps.push(vm.snapshot().expect("final snapshot").memory_image().expect("image"));
    (snaps, step)
}

#[test]
fn tracked_snapshots_equal_the_full_compare_for_random_programs() {
    let _g = serial();
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    let mut snapshots = 0;
    for _ in 0..40 {
        let code = program(&mut rng);
        let (full, full_step) = run_snapshotting(sandbox(), &code, false);
        let (fast, fast_step) = run_snapshotting(tracked(), &code, true);
        assert_eq!(fast_step, full_step, "{code}");
        assert!(matches!(full_step, Step::Completed { .. }), "{code}: {full_step:?}");
        assert_eq!(fast.len(), full.len(), "{code}");
        for (k, (a, b)) in fast.iter().zip(&full).enumerate() {
            assert!(a == b, "snapshot {k} of {code} differs between tracked and full compare");
        }
        snapshots += full.len();
    }
    assert!(snapshots > 60, "only {snapshots} snapshots compared");
}

#[test]
fn tracked_snapshot_sees_memory_growth_and_rewrites_of_restored_pages() {
    let _g = serial();
    // Grows linear memory between arm and snapshot, then overwrites (and restores to the
    // base contents) data that came from the restored snapshot.
    let code = "globalThis.big = 'x'.repeat(3 << 20); await host('echo', {}); \
                globalThis.big = null; globalThis.big2 = new Uint8Array(4 << 20).fill(7); \
                await host('echo', {}); globalThis.big2 = null; return 1";
    let (full, full_step) = run_snapshotting(sandbox(), code, false);
    let (fast, fast_step) = run_snapshotting(tracked(), code, true);
    assert_eq!(fast_step, full_step);
    assert_eq!(fast, full);
}

#[test]
fn tracked_vms_on_many_threads_give_the_full_compare_snapshots() {
    let _g = serial();
    let mut rng = XorShift(77);
    let programs: Vec<String> = (0..12).map(|_| program(&mut rng)).collect();
    let expected: Vec<_> = programs.iter().map(|p| run_snapshotting(sandbox(), p, false)).collect();
    let big_stack = 64 << 20;
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|t| {
                let programs = &programs;
                let expected = &expected;
                std::thread::Builder::new()
                    .stack_size(big_stack)
                    .spawn_scoped(s, move || {
                        for round in 0..3 {
                            for (i, p) in programs.iter().enumerate().skip(t).step_by(2) {
                                let got = run_snapshotting(tracked(), p, true);
                                assert!(got == expected[i], "thread {t} round {round} program {i} differs");
                            }
                        }
                    })
                    .expect("spawn")
            })
            .collect();
        for h in handles {
            h.join().expect("thread");
        }
    });
}

#[test]
fn a_dropped_tracked_vm_leaves_its_pool_slot_clean() {
    let _g = serial();
    // One pool slot shared by a tracked and an untracked sandbox (track_writes is not part of
    // the pool's key): each VM reuses the slot the previous one wrote.
    let mut one = det_config();
    one.max_live_vms = 1;
    let untracked = Sandbox::new(one.clone(), PRELUDE).expect("sandbox");
    one.track_writes = true;
    let tracked_plain = Sandbox::new(one.clone(), PRELUDE).expect("sandbox");
    // The tracked VMs start from a bigger base image: pages they wrote before tracking was
    // armed (the base copy) are pages the untracked sandbox's VMs never rewrite, so a slot
    // reset that missed them would show up in the untracked snapshots.
    let big_prelude = format!("{PRELUDE}\nglobalThis.baseJunk = 'b'.repeat(1 << 20) + Math.random();");
    let tracked = Sandbox::new(one, &big_prelude).expect("sandbox");
    let fresh = |sb: &Sandbox| {
        sb.start().expect("start").snapshot().expect("snapshot").memory_image().expect("image")
    };
    let clean = fresh(&untracked);
    for round in 0..3 {
        let mut vm = tracked.start().expect("start");
        assert_tracked(&vm);
        let step = vm
            .eval_cell(&format!("globalThis.junk = 'j{round}'.repeat(1 << 21); return 1"), "user.js", soon())
            .expect("eval");
        assert_eq!(step, crate::completed("1"));
        drop(vm);
        assert!(fresh(&untracked) == clean, "round {round}: the slot kept the tracked VM's pages");
        assert!(fresh(&tracked_plain) == clean, "round {round}: the slot kept the tracked VM's pages");
    }
}

#[test]
fn at_most_256_vms_are_tracked_at_once_and_the_rest_fall_back() {
    let _g = serial();
    let code = "globalThis.v = 'w'.repeat(9000); await host('echo', {}); return 1";
    let (expected, _) = run_snapshotting(sandbox(), code, false);
    let mut held: Vec<Vm> = (0..256).map(|_| tracked().start().expect("start")).collect();
    for vm in &held {
        assert_tracked(vm);
    }
    // Past the bound: untracked, and its snapshots are still exact.
    let (got, _) = run_snapshotting(tracked(), code, false);
    assert_eq!(got, expected);
    let extra = tracked().start().expect("start");
    assert!(!extra.writes_tracked(), "VM 257 is tracked");
    drop(extra);
    held.pop();
    let again = tracked().start().expect("start");
    assert_tracked(&again);
    drop(again);
    drop(held);
}
