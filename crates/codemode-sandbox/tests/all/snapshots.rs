//! Snapshot format, validation, size and resource behaviour.

use codemode_sandbox::{Sandbox, SandboxConfig, SandboxError, Snapshot, Step};

use crate::{PRELUDE, completed, cycle, dispatch, sandbox, serial, soon};

fn suspended(sb: &Sandbox) -> Snapshot {
    let mut vm = sb.start().unwrap();
    let step = vm
        .eval_cell(
            "globalThis.k = 'kept'; const r = await host('add', {a: 1, b: 2}); return [k, r.sum]",
            "user.js",
            soon(),
        )
        .unwrap();
    assert_eq!(step, Step::Pending { pending_calls: 1 });
    vm.snapshot().unwrap()
}

#[test]
fn snapshots_are_sparse_and_small() {
    let _g = serial();
    let snap = suspended(sandbox());
    // The base image holds QuickJS + prelude; a suspended cell adds a few pages.
    assert!(snap.stored_bytes() < 32 << 10, "stored {} bytes", snap.stored_bytes());
    let mut c = crate::det_config();
    c.compress_snapshots = false;
    let raw = suspended(&Sandbox::new(c, PRELUDE).unwrap());
    assert!(raw.stored_bytes() > snap.stored_bytes());
}

#[test]
fn from_bytes_rejects_corruption() {
    let _g = serial();
    let snap = suspended(sandbox());
    let bytes = snap.to_bytes();
    assert_eq!(Snapshot::from_bytes(&bytes).unwrap(), snap);
    for cut in [0, 1, 7, 8, 40, bytes.len() / 2, bytes.len() - 1] {
        assert!(
            matches!(Snapshot::from_bytes(&bytes[..cut]), Err(SandboxError::Snapshot { .. })),
            "cut {cut}"
        );
    }
    for i in [0, 9, 30, bytes.len() / 2, bytes.len() - 9, bytes.len() - 1] {
        let mut b = bytes.clone();
        b[i] ^= 0x40;
        assert!(matches!(Snapshot::from_bytes(&b), Err(SandboxError::Snapshot { .. })), "flip at {i}");
    }
}

#[test]
fn restore_into_another_sandbox_is_refused() {
    let _g = serial();
    let snap = suspended(sandbox());
    let other = Sandbox::new(crate::det_config(), "globalThis.other = 1;").unwrap();
    assert!(matches!(other.restore(&snap), Err(SandboxError::Snapshot { .. })));
    // The owner still restores it.
    let mut vm = sandbox().restore(&snap).unwrap();
    let c = vm.take_host_calls().remove(0);
    vm.deliver(c.id, dispatch(&c.payload), soon()).unwrap();
    assert_eq!(vm.run_jobs(soon()).unwrap(), completed(r#"["kept",3]"#));
}

#[test]
fn fuzz_snapshot_bytes() {
    let _g = serial();
    let good = suspended(sandbox()).to_bytes();
    let mut x: u64 = 0x1234_5678_9abc_def1;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for i in 0..3000 {
        let mut data = if i % 2 == 0 { good.clone() } else { vec![0u8; (next() % 512) as usize] };
        let n = (next() % 8) as usize;
        for _ in 0..=n {
            if data.is_empty() {
                break;
            }
            let at = (next() as usize) % data.len();
            data[at] = next() as u8;
        }
        if i % 7 == 0 {
            let len = (next() as usize) % (data.len() + 1);
            data.truncate(len);
        }
        codemode_sandbox::fuzz::check_snapshot_bytes(&data);
    }
    codemode_sandbox::fuzz::check_snapshot_bytes(&good);
}

#[test]
fn fuzz_lz4_block_decoder_matches_lz4_flex() {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    // XOR-page-like inputs: long zero runs, short repeating patterns, a few random bytes.
    for i in 0..2000 {
        let len = (next() % 20_000) as usize;
        let mut data = vec![0u8; len];
        let period = 1 + (next() % 9) as usize;
        for (k, b) in data.iter_mut().enumerate() {
            *b = match i % 3 {
                0 => 0,
                1 => (k % period) as u8,
                _ => (k / 97 % 2) as u8 * 7,
            };
        }
        for _ in 0..(next() % 16) {
            if len > 0 {
                let at = (next() as usize) % len;
                data[at] = next() as u8;
            }
        }
        codemode_sandbox::fuzz::check_lz4_block(&data);
        // The same bytes as a (corrupt) compressed block, and a mutated real block.
        let mut packed = lz4_flex::block::compress(&data);
        if !packed.is_empty() {
            let at = (next() as usize) % packed.len();
            packed[at] = next() as u8;
        }
        codemode_sandbox::fuzz::check_lz4_block(&packed);
    }
    codemode_sandbox::fuzz::check_lz4_block(&[]);
}

fn rss_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: u64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096
}

/// 1,000 snapshot/restore cycles of a suspended VM keep host memory flat.
#[test]
fn thousand_cycles_with_flat_host_memory() {
    let _g = serial();
    let sb = sandbox();
    let mut vm = sb.start().unwrap();
    let code =
        "globalThis.n = 0; for (;;) { n += (await host('add', {a: 1, b: 0})).sum; if (n >= 1100) return n; }";
    vm.eval_cell(code, "user.js", soon()).unwrap();
    let mut before = 0;
    for i in 0..1100 {
        if i == 100 {
            before = rss_bytes();
        }
        vm = cycle(sb, vm);
        let c = vm.take_host_calls().remove(0);
        vm.deliver(c.id, dispatch(&c.payload), soon()).unwrap();
        let step = vm.run_jobs(soon()).unwrap();
        if i == 1099 {
            assert_eq!(step, completed("1100"));
        }
    }
    let growth = rss_bytes().saturating_sub(before);
    assert!(growth < 24 << 20, "host RSS grew by {} KiB over 1000 cycles", growth >> 10);
}

#[test]
fn snapshot_of_a_terminated_vm_is_refused() {
    let _g = serial();
    let mut vm = sandbox().start().unwrap();
    let _ = vm.eval_cell("while (true) {}", "user.js", crate::deadline_ms(50));
    assert!(matches!(vm.snapshot(), Err(SandboxError::Terminated { .. })));
}

#[test]
fn output_and_stats_travel_with_the_snapshot() {
    let _g = serial();
    let sb = sandbox();
    let mut vm = sb.start().unwrap();
    vm.eval_cell("text('before'); await host('echo', 1); text('after'); return 1", "user.js", soon())
        .unwrap();
    let stats = vm.abi_stats();
    assert_eq!((stats.outputs, stats.host_calls), (1, 1));
    let mut vm = cycle(sb, vm);
    assert_eq!(vm.abi_stats(), stats);
    let c = vm.take_host_calls().remove(0);
    vm.deliver(c.id, dispatch(&c.payload), soon()).unwrap();
    assert_eq!(vm.run_jobs(soon()).unwrap(), completed("1"));
    let out: Vec<String> = vm.take_output().into_iter().map(|o| o.payload).collect();
    assert_eq!(out, ["before", "after"]);
    assert_eq!(vm.abi_stats().deliveries, 1);
}

/// Two sandboxes extended with the same script (as two processes over one catalog) have one
/// identity, and a snapshot of one restores into the other, its clock rebased by `recaptured`.
#[test]
fn extended_sandboxes_share_an_identity_and_snapshots_move_between_them() {
    let _g = serial();
    let base = Sandbox::new(SandboxConfig::default(), PRELUDE).unwrap();
    let script = "globalThis.catalog = { tools: ['a', 'b'], n: Math.random() };";
    let a = base.extend(script, "setup.js").unwrap();
    let b = base.extend(script, "setup.js").unwrap();
    assert!(!a.is_same(&b));
    assert_eq!(a.identity(), b.identity());
    let other = base.extend("globalThis.catalog = { tools: ['c'] };", "setup.js").unwrap();
    assert_ne!(a.identity(), other.identity());
    let mut vm = a.start().unwrap();
    let step = vm
        .eval_cell(
            "const t0 = performance.now(); const r = await host('add', {a: 1, b: 2}); return [catalog.tools, r.sum, performance.now() - t0 >= 250]",
            "user.js",
            soon(),
        )
        .unwrap();
    assert_eq!(step, Step::Pending { pending_calls: 1 });
    let snap = vm.snapshot().unwrap();
    drop(vm);
    assert!(snap.captured_ago().is_some());
    // As if it had been suspended 300 ms elsewhere.
    let moved = Snapshot::from_bytes(&snap.to_bytes())
        .unwrap()
        .recaptured(std::time::Duration::from_millis(300))
        .unwrap();
    assert!(moved.captured_ago().unwrap() >= std::time::Duration::from_millis(300));
    // Suspended for longer than this process has lived (a test process is young): still counted.
    let month = std::time::Duration::from_secs(30 * 24 * 3600);
    let old = snap.recaptured(month).unwrap();
    assert!(old.captured_ago().unwrap() >= month, "{:?}", old.captured_ago());
    let mut vm = b.restore(&moved).unwrap();
    for call in vm.pending_host_calls() {
        vm.deliver(call.id, dispatch(&call.payload), soon()).unwrap();
    }
    assert_eq!(vm.run_jobs(soon()).unwrap(), completed(r#"[["a","b"],3,true]"#));
    assert!(matches!(other.restore(&moved), Err(SandboxError::Snapshot { .. })));
}
