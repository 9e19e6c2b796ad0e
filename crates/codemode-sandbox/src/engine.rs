//! Process-wide engine and compiled module (one per distinct engine configuration), the
//! optional on-disk module cache, and the epoch ticker thread.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::Thread;
use std::time::Duration;

use wasmtime::{
    Config, Enabled, Engine, InstanceAllocationStrategy, InstancePre, Module, PoolingAllocationConfig, Store,
};

use crate::abi::{ExportIndices, HostState, linker};
use crate::error::SandboxError;

/// The committed guest module (built by `cargo xtask guest`).
pub(crate) static GUEST_WASM: &[u8] = include_bytes!("../wasm/codemode_guest.wasm");

/// How often the ticker advances the epoch while a guest call is running.
const TICK: Duration = Duration::from_millis(1);

/// Ticks the ticker keeps going after the last guest call ends before it parks: guest calls
/// come in bursts (each step of a run, each nested call, runs a few ms apart), and a call that
/// finds the ticker parked pays a thread wake-up (a futex syscall and, on an idle core, an
/// inter-processor interrupt) on its own path.
const LINGER_TICKS: u32 = 50;

/// Everything derived once from the module for one engine configuration.
pub(crate) struct Compiled {
    pub engine: Engine,
    pub pre: InstancePre<HostState>,
    /// Linear memory of a fresh instance before any guest code runs.
    pub pristine: Arc<[u8]>,
    /// Hash of engine configuration + module, part of every snapshot's identity.
    pub module_hash: u64,
    /// The guest's exports, resolved once.
    pub exports: ExportIndices,
    /// Live instances allowed at once (`None`: on-demand allocation, no pool).
    pub pool_slots: Option<u32>,
}

#[derive(Clone, PartialEq, Eq, Hash)]
struct Key {
    max_wasm_stack: usize,
    cache_dir: Option<PathBuf>,
    pool_slots: u32,
}

fn unavailable(reason: impl std::fmt::Display) -> SandboxError {
    SandboxError::Unavailable { reason: reason.to_string() }
}

/// The compiled module for this configuration, compiling (or loading from the cache) at most
/// once per process.
pub(crate) fn compiled(
    max_wasm_stack: usize,
    cache_dir: Option<&Path>,
    pool_slots: u32,
) -> Result<Arc<Compiled>, SandboxError> {
    static ALL: OnceLock<Mutex<HashMap<Key, Arc<Compiled>>>> = OnceLock::new();
    let pool_slots = pool_slots.max(1);
    let key = Key { max_wasm_stack, cache_dir: cache_dir.map(Path::to_path_buf), pool_slots };
    let mut map = ALL.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    if let Some(c) = map.get(&key) {
        return Ok(c.clone());
    }
    let c = Arc::new(build(max_wasm_stack, cache_dir, pool_slots)?);
    map.insert(key, c.clone());
    Ok(c)
}

fn build(max_wasm_stack: usize, cache_dir: Option<&Path>, pool_slots: u32) -> Result<Compiled, SandboxError> {
    let mut cfg = Config::new();
    cfg.epoch_interruption(true);
    cfg.max_wasm_stack(max_wasm_stack);
    // Never used (no async), but wasmtime requires it to be at least max_wasm_stack.
    cfg.async_stack_size(max_wasm_stack + (1 << 20));
    // Deterministic NaN bits keep differential (snapshot vs straight) runs byte-identical.
    cfg.cranelift_nan_canonicalization(true);
    // Instances come from a pool whose linear memories stay mapped: a slot is reset by
    // rewriting only the pages the last VM dirtied (found with `PAGEMAP_SCAN` where the kernel
    // has it), so VM start, restore and teardown take no page faults or `mmap`/`munmap` for
    // the memory a run actually uses. Falls back to on-demand allocation if the pool cannot be
    // reserved (e.g. a limited address space).
    let mut pooled = cfg.clone();
    pooled.allocation_strategy(InstanceAllocationStrategy::Pooling(pooling_config(pool_slots)));
    let (engine, pool_slots) = match Engine::new(&pooled) {
        Ok(engine) => (engine, Some(pool_slots)),
        Err(_) => (Engine::new(&cfg).map_err(unavailable)?, None),
    };
    let module_hash = {
        let mut h = std::hash::DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut h);
        GUEST_WASM.hash(&mut h);
        h.finish()
    };
    let module = match cache_dir {
        Some(dir) => crate::cache::load_or_compile(&engine, dir, module_hash, GUEST_WASM)?,
        None => Module::new(&engine, GUEST_WASM).map_err(unavailable)?,
    };
    let exports = ExportIndices::new(&module).map_err(unavailable)?;
    let pre = linker(&engine).and_then(|l| l.instantiate_pre(&module)).map_err(unavailable)?;
    let pristine = {
        let mut store = Store::new(&engine, HostState::new(usize::MAX, None));
        let inst = pre.instantiate(&mut store).map_err(unavailable)?;
        let mem =
            inst.get_memory(&mut store, "memory").ok_or_else(|| unavailable("guest exports no memory"))?;
        Arc::from(mem.data(&store))
    };
    ticker()?.engines.lock().unwrap_or_else(|e| e.into_inner()).push(engine.clone());
    Ok(Compiled { engine, pre, pristine, module_hash, exports, pool_slots })
}

/// Bytes of each pooled linear memory kept resident (reset in place) between VMs.
const KEEP_RESIDENT: usize = 16 << 20;

/// The instance pool: `slots` live VMs (`SandboxConfig::max_live_vms`; each slot reserves
/// ~4 GiB of address space, not memory).
fn pooling_config(slots: u32) -> PoolingAllocationConfig {
    let mut p = PoolingAllocationConfig::new();
    p.total_core_instances(slots)
        .total_memories(slots)
        .total_tables(slots)
        .max_unused_warm_slots(16)
        .linear_memory_keep_resident(KEEP_RESIDENT)
        .table_keep_resident(64 << 10)
        .pagemap_scan(Enabled::Auto);
    p
}

/// One thread advances the epoch of every engine while any guest call runs (and briefly after),
/// and parks otherwise.
pub(crate) struct Ticker {
    engines: Mutex<Vec<Engine>>,
    active: AtomicUsize,
    thread: Thread,
}

/// The process's ticker, started by the first caller. A thread that cannot be spawned (the OS
/// refused: thread or memory limits) is [`SandboxError::Unavailable`], never a panic; the next
/// caller tries again.
pub(crate) fn ticker() -> Result<&'static Ticker, SandboxError> {
    static TICKER: OnceLock<Ticker> = OnceLock::new();
    static STARTING: Mutex<()> = Mutex::new(());
    ticker_in(&TICKER, &STARTING, |body| {
        std::thread::Builder::new().name("codemode-epoch".into()).spawn(body)
    })
}

/// A spawner of the ticker's thread (`std::thread::Builder::spawn`, or a failing one in tests).
type Spawn = fn(Box<dyn FnOnce() + Send>) -> std::io::Result<std::thread::JoinHandle<()>>;

/// [`ticker`] over its statics: the ticker in `cell`, started (under `starting`, so one thread
/// at most) with `spawn` when there is none yet.
fn ticker_in(
    cell: &'static OnceLock<Ticker>,
    starting: &'static Mutex<()>,
    spawn: Spawn,
) -> Result<&'static Ticker, SandboxError> {
    if let Some(t) = cell.get() {
        return Ok(t);
    }
    let _one = starting.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(t) = cell.get() {
        return Ok(t);
    }
    let handle = spawn(Box::new(move || tick(cell))).map_err(|e| SandboxError::Unavailable {
        reason: format!("cannot start the epoch ticker thread (the wall-clock limit needs it): {e}"),
    })?;
    Ok(cell.get_or_init(|| Ticker {
        engines: Mutex::new(Vec::new()),
        active: AtomicUsize::new(0),
        thread: handle.thread().clone(),
    }))
}

/// The ticker thread: advances every engine's epoch each [`TICK`] while a guest call runs, and
/// for [`LINGER_TICKS`] after the last one ends; then it parks until the next call.
fn tick(cell: &'static OnceLock<Ticker>) {
    // Wait until the cell is initialised (just after the spawn returns).
    let t = loop {
        if let Some(t) = cell.get() {
            break t;
        }
        std::thread::park_timeout(TICK);
    };
    let mut idle = 0u32;
    loop {
        if t.active.load(Ordering::Acquire) == 0 {
            if idle >= LINGER_TICKS {
                std::thread::park();
                idle = 0;
                continue;
            }
            idle += 1;
        } else {
            idle = 0;
        }
        std::thread::sleep(TICK);
        for e in t.engines.lock().unwrap_or_else(|e| e.into_inner()).iter() {
            e.increment_epoch();
        }
    }
}

/// Keeps the ticker running while alive.
pub(crate) struct Active(&'static Ticker);

impl Ticker {
    pub fn activate(&'static self) -> Active {
        if self.active.fetch_add(1, Ordering::AcqRel) == 0 {
            self.thread.unpark();
        }
        Active(self)
    }
}

impl Drop for Active {
    fn drop(&mut self) {
        self.0.active.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The OS refusing the ticker's thread is a typed error, not a panic, and leaves no ticker
    /// behind: the next attempt starts one.
    #[test]
    fn a_refused_ticker_thread_is_an_error_and_the_next_start_succeeds() {
        static CELL: OnceLock<Ticker> = OnceLock::new();
        static STARTING: Mutex<()> = Mutex::new(());
        let refused: Spawn = |_| Err(std::io::Error::new(std::io::ErrorKind::WouldBlock, "no more threads"));
        match ticker_in(&CELL, &STARTING, refused) {
            Err(SandboxError::Unavailable { reason }) => {
                assert!(reason.contains("epoch ticker") && reason.contains("no more threads"), "{reason}");
            }
            other => panic!("expected Unavailable, got {:?}", other.map(|_| ())),
        }
        assert!(CELL.get().is_none(), "a failed start leaves no ticker");
        let spawned: Spawn =
            |body| std::thread::Builder::new().name("codemode-epoch-test".into()).spawn(body);
        let ticker = ticker_in(&CELL, &STARTING, spawned).expect("the second start spawns the thread");
        assert_eq!(ticker.thread.name(), Some("codemode-epoch-test"));
        // Started once: a later call neither spawns nor fails, whatever its spawner would do.
        assert!(std::ptr::eq(ticker_in(&CELL, &STARTING, refused).expect("already started"), ticker));
    }
}
