//! [`Vm`]: one guest instance, driven step by step.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use wasmtime::{Extern, Instance, Memory, Store, Trap, TypedFunc, UpdateDeadline};

use crate::abi::{
    AbiStats, CallAnswerer, ExportIndices, GuestOutput, GuestPolicy, HostState, PENDING_WITHOUT_HOST_WORK,
};
use crate::abi_names::GUEST_EXPORTS;
use crate::abi_names::status;
use crate::base::{PAGE, SandboxInner};
use crate::dirty::Tracker;
use crate::engine::ticker;
use crate::error::{GuestError, SandboxError};
use crate::snapshot::Snapshot;

mod calls;

/// What a step left the current cell at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// The cell returned. `value_json` is the value serialized by the engine's native
    /// `JSON.stringify`, or `None` when the value was `undefined` or has no JSON form
    /// (a function or a symbol). A value whose serialization throws (a `BigInt`, a cycle, a
    /// throwing `toJSON`) is a [`Step::Failed`] with that error instead.
    Completed {
        /// The value as JSON text, or `None` for `undefined`.
        value_json: Option<String>,
    },
    /// The cell threw (or, for `eval_script`, the script threw). Also used when the cell waits
    /// on a promise that no pending host call can settle (name `Error`, message starting
    /// with `"the run is pending without host work"`).
    Failed(GuestError),
    /// The cell awaits host calls; deliver results, then `run_jobs`.
    Pending {
        /// Host calls started and not delivered yet.
        pending_calls: usize,
    },
}

pub(crate) struct Exports {
    alloc: TypedFunc<u32, u32>,
    dealloc: TypedFunc<(u32, u32), ()>,
    pub init: TypedFunc<(u32, u32), i32>,
    pub seed: TypedFunc<u64, ()>,
    eval_script: TypedFunc<(u32, u32, u32, u32), i32>,
    eval_cell: TypedFunc<(u32, u32, u32, u32), i32>,
    run_jobs: TypedFunc<(), i32>,
    jobs_pending: TypedFunc<(), i32>,
    deliver: TypedFunc<(u32, i32, u32, u32, u32, u32), i32>,
    result_ptr: TypedFunc<(), u32>,
    result_len: TypedFunc<(), u32>,
    heap_used: TypedFunc<(), u64>,
    define_texts: TypedFunc<(u32, u32), i32>,
}

impl Exports {
    fn new(store: &mut Store<HostState>, inst: &Instance, idx: &ExportIndices) -> wasmtime::Result<Exports> {
        let mut k = 0;
        let mut next = || {
            let i = &idx.funcs[k];
            k += 1;
            inst.get_module_export(&mut *store, i).and_then(Extern::into_func).ok_or_else(|| {
                wasmtime::Error::msg(format!("guest exports no function `{}`", GUEST_EXPORTS[k - 1]))
            })
        };
        let (f0, f1, f2, f3, f4, f5) = (next()?, next()?, next()?, next()?, next()?, next()?);
        let (f6, f7, f8, f9, f10, f11) = (next()?, next()?, next()?, next()?, next()?, next()?);
        let f12 = next()?;
        Ok(Exports {
            alloc: f0.typed(&*store)?,
            dealloc: f1.typed(&*store)?,
            init: f2.typed(&*store)?,
            seed: f3.typed(&*store)?,
            eval_script: f4.typed(&*store)?,
            eval_cell: f5.typed(&*store)?,
            run_jobs: f6.typed(&*store)?,
            jobs_pending: f7.typed(&*store)?,
            deliver: f8.typed(&*store)?,
            result_ptr: f9.typed(&*store)?,
            result_len: f10.typed(&*store)?,
            heap_used: f11.typed(&*store)?,
            define_texts: f12.typed(&*store)?,
        })
    }
}

/// Stops a [`Vm`] from another thread (see [`Vm::interrupt_handle`]). Cheap to clone.
#[derive(Clone, Debug)]
pub struct InterruptHandle(Arc<AtomicBool>);

impl InterruptHandle {
    /// Interrupts the VM: its running step, or its next one, fails with
    /// [`SandboxError::Interrupted`], and the VM is terminated. Idempotent.
    pub fn interrupt(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// One QuickJS instance. `Send`; not shared. Every method that runs guest code takes a
/// deadline; a failure that leaves the guest in an unknown state (timeout, trap, memory
/// exhaustion) terminates the VM, and later calls return [`SandboxError::Terminated`].
///
/// Calls run wasm on the calling thread's stack, or, when less than `max_wasm_stack_bytes` +
/// 256 KiB remains, on a stack segment taken from a small process-wide pool of already-mapped
/// ones, so any thread works; a thread with a large enough stack (see
/// [`crate::Sandbox::thread_stack_bytes`]) needs no segment.
pub struct Vm {
    /// Write tracking since the VM was armed (start or restore); dropped before `store`.
    tracking: Option<Tracking>,
    pub(crate) sandbox: std::sync::Arc<SandboxInner>,
    pub(crate) store: Store<HostState>,
    pub(crate) memory: Memory,
    pub(crate) exports: Exports,
    terminated: Option<SandboxError>,
    cell_running: bool,
}

const STACK_MARGIN: usize = 256 << 10;

/// What a tracked VM knows about how its memory differs from its sandbox's base image.
struct Tracking {
    tracker: Tracker,
    /// Where linear memory was when armed (a moved memory voids the tracking).
    ptr: usize,
    /// Linear memory bytes when armed (pages past it are always compared).
    len: usize,
    /// Pages that already differed from the base image when armed (a restored snapshot's).
    differed: Vec<u32>,
    /// Pages the last recycle restored (ascending): the run before this one wrote them.
    last_run: Vec<u32>,
    /// Recycles since every page was last write-protected (see [`HOT_RELEARN_RECYCLES`]).
    recycles: u32,
}

/// Most pages a recycle leaves unprotected ("hot": written by the last two runs, so most likely
/// by the next one too). A hot page costs a 4 KiB copy at every recycle, off the run's path,
/// instead of a write-protect fault inside the next run; 256 pages are 1 MiB of copying.
const MAX_HOT_PAGES: usize = 256;

/// Every this many recycles, every page is write-protected again, so pages that stopped being
/// written leave the hot set.
const HOT_RELEARN_RECYCLES: u32 = 64;

impl Drop for Vm {
    fn drop(&mut self) {
        // Unregister the write tracking before the store frees (resets) the memory: the
        // pooling allocator's reset must see every page the VM wrote as written.
        self.tracking = None;
    }
}

impl std::fmt::Debug for Vm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Vm")
            .field("memory_bytes", &self.memory_bytes())
            .field("terminated", &self.terminated)
            .field("cell_running", &self.cell_running)
            .finish_non_exhaustive()
    }
}

impl Vm {
    pub(crate) fn instantiate(sandbox: std::sync::Arc<SandboxInner>) -> Result<Vm, SandboxError> {
        let unavailable = |e: wasmtime::Error| SandboxError::Unavailable { reason: e.to_string() };
        let c = &sandbox.compiled;
        let mut store = Store::new(
            &c.engine,
            HostState::new(sandbox.config.linear_memory_cap(), sandbox.config.deterministic),
        );
        store.limiter(|s| &mut s.limiter);
        store.epoch_deadline_callback(|mut ctx| {
            if ctx.data().interrupt.load(Ordering::Relaxed) {
                ctx.data_mut().interrupted = true;
                Ok(UpdateDeadline::Interrupt)
            } else if Instant::now() >= ctx.data().deadline {
                ctx.data_mut().timed_out = true;
                Ok(UpdateDeadline::Interrupt)
            } else {
                Ok(UpdateDeadline::Continue(1))
            }
        });
        let inst = c.pre.instantiate(&mut store).map_err(|e| match c.pool_slots {
            Some(slots) if e.downcast_ref::<wasmtime::PoolConcurrencyLimitError>().is_some() => {
                SandboxError::AllVmsInUse { slots }
            }
            _ => unavailable(e),
        })?;
        let memory = inst
            .get_module_export(&mut store, &c.exports.memory)
            .and_then(Extern::into_memory)
            .ok_or_else(|| SandboxError::Unavailable { reason: "guest exports no memory".into() })?;
        store.data_mut().memory = Some(memory);
        let exports = Exports::new(&mut store, &inst, &c.exports).map_err(unavailable)?;
        Ok(Vm { tracking: None, sandbox, store, memory, exports, terminated: None, cell_running: false })
    }

    /// Run guest code under the deadline, classifying failures.
    pub(crate) fn guarded<R>(
        &mut self,
        deadline: Instant,
        f: impl FnOnce(&mut Store<HostState>, &Exports) -> wasmtime::Result<R>,
    ) -> Result<R, SandboxError> {
        if let Some(e) = &self.terminated {
            return Err(SandboxError::Terminated { reason: e.to_string() });
        }
        if self.store.data().interrupt.load(Ordering::Relaxed) {
            self.terminated = Some(SandboxError::Interrupted);
            return Err(SandboxError::Interrupted);
        }
        if Instant::now() >= deadline {
            return Err(SandboxError::Timeout);
        }
        {
            let st = self.store.data_mut();
            st.deadline = deadline;
            st.timed_out = false;
            st.interrupted = false;
            st.limiter.denied = false;
        }
        self.store.set_epoch_deadline(1);
        let _active = ticker()?.activate();
        let red_zone = self.sandbox.config.max_wasm_stack_bytes + STACK_MARGIN;
        let (store, exports) = (&mut self.store, &self.exports);
        let r = crate::stack::with_stack(red_zone, red_zone + STACK_MARGIN, || f(store, exports));
        r.map_err(|e| {
            let err = self.classify(e);
            self.terminated = Some(err.clone());
            err
        })
    }

    fn classify(&self, e: wasmtime::Error) -> SandboxError {
        let st = self.store.data();
        if st.interrupted {
            return SandboxError::Interrupted;
        }
        if st.timed_out {
            return SandboxError::Timeout;
        }
        match e.downcast_ref::<Trap>() {
            Some(Trap::StackOverflow) => SandboxError::StackExhausted,
            _ if st.limiter.denied => SandboxError::MemoryExhausted,
            Some(t) => SandboxError::Trap { message: t.to_string() },
            None => SandboxError::Trap { message: e.to_string() },
        }
    }

    /// Copy `parts` into one guest allocation; returns (ptr, total_len).
    fn write_parts(
        store: &mut Store<HostState>,
        ex: &Exports,
        mem: Memory,
        parts: &[&[u8]],
    ) -> wasmtime::Result<(u32, u32)> {
        let total: usize = parts.iter().map(|p| p.len()).sum();
        let total = u32::try_from(total).map_err(|_| wasmtime::Error::msg("input larger than 4 GiB"))?;
        let ptr = ex.alloc.call(&mut *store, total)?;
        if ptr == 0 {
            store.data_mut().limiter.denied = true;
            return Err(wasmtime::Error::msg("guest allocation failed"));
        }
        let mut off = ptr as usize;
        for p in parts {
            mem.write(&mut *store, off, p)?;
            off += p.len();
        }
        Ok((ptr, total))
    }

    fn read_result(store: &mut Store<HostState>, ex: &Exports, mem: Memory) -> wasmtime::Result<Vec<u8>> {
        let ptr = ex.result_ptr.call(&mut *store, ())? as usize;
        let len = ex.result_len.call(&mut *store, ())? as usize;
        mem.data(&*store)
            .get(ptr..ptr + len)
            .map(<[u8]>::to_vec)
            .ok_or_else(|| wasmtime::Error::msg("guest result out of bounds"))
    }

    /// Turn a status code (+ result buffer) into a step.
    fn step(&mut self, cell: bool, code: i32, result: Vec<u8>) -> Result<Step, SandboxError> {
        let step = match code {
            status::IDLE => Step::Completed { value_json: None },
            status::PENDING => {
                let pending_calls = self.store.data().ledger.calls.len();
                if pending_calls == 0 {
                    Step::Failed(GuestError {
                        name: "Error".into(),
                        message: PENDING_WITHOUT_HOST_WORK.into(),
                        stack: String::new(),
                    })
                } else {
                    Step::Pending { pending_calls }
                }
            }
            status::COMPLETED => Step::Completed {
                value_json: Some(String::from_utf8(result).map_err(|_| abi("result is not UTF-8"))?),
            },
            status::COMPLETED_UNDEFINED => Step::Completed { value_json: None },
            status::FAILED => Step::Failed(decode_error(&result)?),
            status::INTERNAL => return Err(abi(&String::from_utf8_lossy(&result))),
            other => return Err(abi(&format!("unexpected status {other}"))),
        };
        if cell && !matches!(step, Step::Pending { .. }) {
            self.cell_running = false;
        }
        Ok(step)
    }

    fn eval(
        &mut self,
        cell: bool,
        source: &str,
        filename: &str,
        deadline: Instant,
    ) -> Result<Step, SandboxError> {
        let mem = self.memory;
        self.store.data_mut().ledger.stats.eval_bytes += source.len() as u64;
        let (code, result) = self.guarded(deadline, |store, ex| {
            let (ptr, len) = Self::write_parts(store, ex, mem, &[source.as_bytes(), filename.as_bytes()])?;
            let (sl, nl) = (source.len() as u32, filename.len() as u32);
            let f = if cell { &ex.eval_cell } else { &ex.eval_script };
            let code = f.call(&mut *store, (ptr, sl, ptr + sl, nl))?;
            ex.dealloc.call(&mut *store, (ptr, len))?;
            let result = Self::read_result(store, ex, mem)?;
            Ok((code, result))
        })?;
        self.step(cell, code, result)
    }

    /// Evaluate a classic global script (e.g. the runtime's per-run context). `var` and function
    /// declarations become globals. The completion value is reported like a cell's. Queued
    /// jobs are not run (the next `run_jobs` or `eval_cell` runs them).
    pub fn eval_script(&mut self, source: &str, deadline: Instant) -> Result<Step, SandboxError> {
        self.eval(false, source, "script.js", deadline)
    }

    /// Defines the guest global `__codemode_texts`, an array of `texts` (created directly, not
    /// parsed from literals), for the script evaluated next to take (and delete). The buffer that
    /// carried them is zeroed before it is freed, so pages that held only it read as untouched
    /// again (a base image captured after does not keep a copy).
    pub(crate) fn define_texts(&mut self, texts: &[&str], deadline: Instant) -> Result<(), SandboxError> {
        // Each text as its length (u32 LE) and its bytes, copied into the guest in one allocation.
        let lens = texts
            .iter()
            .map(|t| u32::try_from(t.len()).map(u32::to_le_bytes))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| abi("a text larger than 4 GiB"))?;
        let parts: Vec<&[u8]> =
            lens.iter().zip(texts).flat_map(|(len, t)| [&len[..], t.as_bytes()]).collect();
        let mem = self.memory;
        let code = self.guarded(deadline, |store, ex| {
            let (ptr, len) = Self::write_parts(store, ex, mem, &parts)?;
            let code = ex.define_texts.call(&mut *store, (ptr, len))?;
            if let Some(used) = mem.data_mut(&mut *store).get_mut(ptr as usize..ptr as usize + len as usize) {
                used.fill(0);
            }
            ex.dealloc.call(&mut *store, (ptr, len))?;
            Ok(code)
        })?;
        match code {
            0 => Ok(()),
            other => Err(abi(&format!("defining the texts failed ({other})"))),
        }
    }

    pub(crate) fn eval_script_named(
        &mut self,
        source: &str,
        filename: &str,
        deadline: Instant,
    ) -> Result<Step, SandboxError> {
        self.eval(false, source, filename, deadline)
    }

    /// Start a cell: `body` runs as the body of an async function, so top-level `await` and
    /// `return` work; jobs then run until the cell completes, fails or waits on host calls.
    /// Stacks name `filename`. The wrapper's header sits on a line of its own, so line `n` of
    /// `body` is line `n + `[`CELL_LINE_OFFSET`](crate::CELL_LINE_OFFSET) in errors and columns are
    /// `body`'s own.
    pub fn eval_cell(&mut self, body: &str, filename: &str, deadline: Instant) -> Result<Step, SandboxError> {
        if self.cell_running {
            return Err(SandboxError::Busy);
        }
        self.cell_running = true;
        // The run's monotonic clock starts with its first cell.
        let st = self.store.data_mut();
        st.clock_origin.get_or_insert_with(Instant::now);
        let step = self.eval(true, body, filename, deadline);
        if step.is_err() {
            self.cell_running = false;
        }
        step
    }

    /// Run queued jobs (promise reactions) and report the cell's state. With no cell running
    /// (none started, or the last one finished) it runs jobs and reports
    /// `Completed { value_json: None }`.
    pub fn run_jobs(&mut self, deadline: Instant) -> Result<Step, SandboxError> {
        let mem = self.memory;
        let (code, result) = self.guarded(deadline, |store, ex| {
            let code = ex.run_jobs.call(&mut *store, ())?;
            let result =
                if code == status::PENDING { Vec::new() } else { Self::read_result(store, ex, mem)? };
            Ok((code, result))
        })?;
        self.step(true, code, result)
    }

    /// Output accepted since the last take while no policy was installed (a policy keeps the output
    /// it accepts; see [`GuestPolicy::on_output`]).
    pub fn take_output(&mut self) -> Vec<GuestOutput> {
        std::mem::take(&mut self.store.data_mut().ledger.output)
    }

    /// Bytes and calls that crossed the ABI in this run.
    pub fn abi_stats(&self) -> AbiStats {
        self.store.data().ledger.stats
    }

    /// Install the policy consulted by the guest's imports (replaces any earlier one). Without
    /// a policy every host call and output is accepted.
    pub fn set_policy(&mut self, policy: Box<dyn GuestPolicy>) {
        self.store.data_mut().policy = Some(policy);
    }

    /// Install (or with `None` remove) the hook that may answer host calls at once, and return
    /// the one installed before. A recycled VM has none.
    pub fn set_answerer(&mut self, answerer: Option<Box<dyn CallAnswerer>>) -> Option<Box<dyn CallAnswerer>> {
        std::mem::replace(&mut self.store.data_mut().answerer, answerer)
    }

    /// The hook installed with [`Vm::set_answerer`], if any.
    pub fn answerer_mut(&mut self) -> Option<&mut dyn CallAnswerer> {
        self.store.data_mut().answerer.as_deref_mut()
    }

    /// Current size of the guest's linear memory in bytes.
    pub fn memory_bytes(&self) -> usize {
        self.memory.data_size(&self.store)
    }

    /// The guest's linear memory as it is now (read-only): what tests compare byte for byte,
    /// independently of the write tracking that snapshots and recycling rely on.
    pub fn linear_memory(&self) -> &[u8] {
        self.memory.data(&self.store)
    }

    /// Bytes QuickJS's allocator has in use (what the memory limit applies to).
    pub fn heap_bytes(&mut self) -> Result<u64, SandboxError> {
        self.guarded(Instant::now() + std::time::Duration::from_secs(1), |store, ex| {
            ex.heap_used.call(store, ())
        })
    }

    /// A handle that stops this VM from another thread: the running step (or the next one) fails
    /// with [`SandboxError::Interrupted`] within about a millisecond and the VM is terminated.
    pub fn interrupt_handle(&self) -> InterruptHandle {
        InterruptHandle(self.store.data().interrupt.clone())
    }

    /// Whether an earlier failure terminated this VM.
    pub fn is_terminated(&self) -> bool {
        self.terminated.is_some()
    }

    /// Snapshot the VM. Only at a quiescent point: no guest frame is ever live between calls,
    /// and QuickJS's job queue must be empty (call `run_jobs` first).
    pub fn snapshot(&mut self) -> Result<Snapshot, SandboxError> {
        let pending = self.guarded(Instant::now() + std::time::Duration::from_secs(1), |store, ex| {
            ex.jobs_pending.call(store, ())
        })?;
        if pending != 0 {
            return Err(SandboxError::NotQuiescent);
        }
        let st = self.store.data_mut();
        st.ledger.clock_ns = st.clock_ns();
        // 0: the run's clock has not started (no cell yet).
        st.ledger.captured_at_ns =
            if st.clock_origin.is_some() { crate::abi::process_clock_ns().max(1) } else { 0 };
        let candidates = self.candidate_pages();
        let data = self.memory.data(&self.store);
        Ok(Snapshot::capture(
            &self.sandbox,
            data,
            candidates.as_deref(),
            &self.store.data().ledger,
            self.cell_running,
        ))
    }

    /// Whether this VM tracks the pages it writes (see [`crate::SandboxConfig::track_writes`]),
    /// so its snapshots compare only those.
    pub fn writes_tracked(&self) -> bool {
        self.tracking.is_some()
    }

    /// Start tracking writes from the current state, in which exactly the pages `differed`
    /// (ascending) differ from the sandbox's base image. Without tracking available the VM
    /// stays untracked (snapshots compare every page).
    pub(crate) fn arm_tracking(&mut self, differed: Vec<u32>) {
        self.tracking = None;
        let len = self.memory.data_size(&self.store);
        let ptr = self.memory.data_ptr(&self.store);
        self.tracking = Tracker::arm(ptr, len).map(|tracker| Tracking {
            tracker,
            ptr: ptr as usize,
            len,
            differed,
            last_run: Vec::new(),
            recycles: 0,
        });
    }

    /// Ascending pages that may differ from the base image (`None`: any page may).
    fn candidate_pages(&self) -> Option<Vec<u32>> {
        let t = self.tracking.as_ref()?;
        let len = self.memory.data_size(&self.store);
        if self.memory.data_ptr(&self.store) as usize != t.ptr || len < t.len {
            return None;
        }
        let mut written = Vec::new();
        if !t.tracker.written(&mut written) {
            return None;
        }
        let grown = (t.len / PAGE) as u32..len.div_ceil(PAGE) as u32;
        let mut all = Vec::with_capacity(written.len() + t.differed.len() + grown.len());
        all.extend_from_slice(&written);
        all.extend_from_slice(&t.differed);
        all.extend(grown);
        all.sort_unstable();
        all.dedup();
        Some(all)
    }

    /// Resets a finished, write-tracked VM to its sandbox's base state in place (see
    /// [`crate::Sandbox::recycle`]; the caller seeds it). `false` when it cannot be (then it must
    /// be dropped, never used again).
    pub(crate) fn reset_to_base(&mut self) -> bool {
        if self.terminated.is_some() {
            return false;
        }
        let sandbox = self.sandbox.clone();
        let base = &sandbox.base;
        if self.memory.data_size(&self.store) != base.len {
            return false;
        }
        // Every page that may differ from the base image: written since armed, or differing when
        // armed (a restored snapshot's). `None` (no tracking, a moved memory, a failed scan):
        // unknown, so not recyclable.
        let Some(pages) = self.candidate_pages() else { return false };
        let pristine = &sandbox.compiled.pristine;
        let mem = self.memory.data_mut(&mut self.store);
        for &p in &pages {
            let off = p as usize * PAGE;
            let Some(dst) = mem.get_mut(off..off + PAGE) else { return false };
            dst.copy_from_slice(base.page(pristine, p as usize));
        }
        // Track those pages anew (the others are still protected: never written since armed),
        // except the hot ones: pages the last two runs both wrote stay writable, so the next run
        // takes no write-protect fault on them. A page left writable reads as written in every
        // scan, so each recycle (and snapshot) still sees it as a candidate and restores it:
        // nothing the next run writes there can survive.
        let Some(tracking) = self.tracking.as_mut() else { return false };
        tracking.recycles += 1;
        let relearn = tracking.recycles >= HOT_RELEARN_RECYCLES;
        if relearn {
            tracking.recycles = 0;
        }
        let last_run = std::mem::take(&mut tracking.last_run);
        let mut hot = 0usize;
        let protect: Vec<u32> = pages
            .iter()
            .copied()
            .filter(|p| {
                let keep = !relearn && hot < MAX_HOT_PAGES && last_run.binary_search(p).is_ok();
                hot += usize::from(keep);
                !keep
            })
            .collect();
        if !tracking.tracker.protect(&protect) {
            self.tracking = None;
            return false;
        }
        tracking.last_run = pages;
        tracking.differed.clear();
        // A new host state: no policy, ledger, output, clock or interrupt flag of the last run (an
        // interrupt handle given out for it no longer reaches this VM).
        let config = &sandbox.config;
        let mut state = HostState::new(config.linear_memory_cap(), config.deterministic);
        state.memory = Some(self.memory);
        state.ledger = base.ledger.clone();
        *self.store.data_mut() = state;
        self.cell_running = false;
        true
    }

    pub(crate) fn set_cell_running(&mut self, running: bool) {
        self.cell_running = running;
    }
}

fn abi(reason: &str) -> SandboxError {
    SandboxError::Abi { reason: reason.to_owned() }
}

/// Bytes kept of each field of a guest error record (name, message, stack).
const MAX_ERROR_FIELD_BYTES: usize = 64 << 10;

/// Decode the guest's error record: three u32-LE-length-prefixed UTF-8 strings.
fn decode_error(mut bytes: &[u8]) -> Result<GuestError, SandboxError> {
    let mut next = || -> Result<String, SandboxError> {
        let (len, rest) = bytes.split_at_checked(4).ok_or_else(|| abi("truncated error record"))?;
        let len = u32::from_le_bytes(len.try_into().map_err(|_| abi("bad length"))?) as usize;
        let (s, rest) = rest.split_at_checked(len).ok_or_else(|| abi("truncated error record"))?;
        bytes = rest;
        // A guest may throw a message as large as its heap; the host keeps a bounded prefix.
        let end = s.len().min(MAX_ERROR_FIELD_BYTES);
        Ok(String::from_utf8_lossy(&s[..end]).into_owned())
    };
    Ok(GuestError { name: next()?, message: next()?, stack: next()? })
}
