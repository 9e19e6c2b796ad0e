//! The host side of the guest ABI: the `codemode` imports, the deny-by-default WASI preview1
//! shim, and the per-store state they act on.

use std::collections::BTreeMap;
use std::time::Instant;

use wasmtime::{Caller, Engine, Linker, Memory, Module, ModuleExport, ResourceLimiter};

use crate::abi_names::{ANSWERED_AT_ONCE, GUEST_EXPORTS};
use crate::config::Deterministic;

/// Names of the globals the guest installs on `globalThis` for the bridge prelude, which
/// captures and deletes them. All private names share the `PRIVATE_PREFIX`.
pub mod globals {
    /// Prefix of every private global.
    pub const PRIVATE_PREFIX: &str = "__codemode";
    /// `__codemode_host_call(payload: string): Promise<any>` — starts a host call; the promise
    /// settles when the host delivers (resolve with JSON, or reject with a plain `Error` with
    /// `message` and optional `code`). Throws a plain `Error` if the policy refuses the call.
    pub const HOST_CALL: &str = "__codemode_host_call";
    /// `__codemode_host_call_with(prefix: string, value, suffix: string, objectPrototype):
    /// Promise<any> | undefined` — [`HOST_CALL`] with the payload `prefix` + the [`ENCODE`] text of
    /// `value` + `suffix`, built by the guest in one buffer; undefined (no call started) when
    /// [`ENCODE`] would give undefined.
    pub const HOST_CALL_WITH: &str = "__codemode_host_call_with";
    /// `__codemode_output(kind: "text" | "json", payload: string): undefined` — synchronous
    /// output. Throws a plain `Error` if the policy refuses it.
    pub const OUTPUT: &str = "__codemode_output";
    /// `__codemode_set_result_encoder(encode: (value) => string): undefined` — from then on a
    /// cell's resolved value `v` is reported as `JSON.stringify(encode(v))`, applied by the guest
    /// when the cell's promise settles (no `await` or promise lookup the cell could observe); an
    /// exception from `encode` fails the cell.
    pub const SET_RESULT_ENCODER: &str = "__codemode_set_result_encoder";
    /// `__codemode_encode(value, objectPrototype): string | undefined` — the restricted JSON
    /// text of plain data (strings, numbers, booleans, null; arrays whose elements are own data
    /// properties; objects of the ordinary class with prototype `objectPrototype` or null, own
    /// enumerable data properties only; at most 64 levels and 64 KiB of text), or undefined for
    /// anything else. It runs no guest code (no getter, trap or `toJSON`), so a caller that gets
    /// undefined can encode the value its own way with nothing observable having happened.
    pub const ENCODE: &str = "__codemode_encode";
    /// Every private global.
    pub const ALL: &[&str] = &[HOST_CALL, HOST_CALL_WITH, OUTPUT, SET_RESULT_ENCODER, ENCODE];
}

pub use crate::abi_names::IMPORT_ALLOWLIST;

/// Per-VM hook consulted by the guest's imports before they accept anything. A refusal makes
/// the JS call throw a plain `Error` carrying the message (catchable by the program). The
/// bridge implements this to enforce its budgets; the sandbox only counts ([`AbiStats`]).
pub trait GuestPolicy: Send {
    /// A host call with `payload` is about to be recorded.
    fn on_host_call(&mut self, payload: &str) -> Result<(), String>;
    /// Output of `kind` with `payload` was emitted. Accepted output is the policy's to keep: a VM
    /// with a policy keeps no copy ([`Vm::take_output`](crate::Vm::take_output) returns only output
    /// emitted while no policy was installed).
    fn on_output(&mut self, kind: OutputKind, payload: &str) -> Result<(), String>;
}

/// Per-VM hook that may answer a host call at once, while the guest that made it is still
/// running: its promise is then resolved before `host_call` returns, with no step ending and no
/// delivery. Consulted for each call the [`GuestPolicy`] accepted; installed for a step with
/// [`Vm::set_answerer`](crate::Vm::set_answerer).
pub trait CallAnswerer: std::any::Any + Send {
    /// Host call `id` with `payload` (accepted, not yet recorded) is starting.
    fn answer(&mut self, id: u32, payload: &str) -> AtOnce;
}

/// What a [`CallAnswerer`] made of a host call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AtOnce {
    /// Resolve the call's promise with this JSON text now. The call is never pending: it is not
    /// recorded, [`Vm::take_host_calls`](crate::Vm::take_host_calls) never returns it, and no
    /// snapshot holds it. Text the engine cannot parse rejects the promise (`internal_error`), as
    /// a delivery of it would.
    Resolved(String),
    /// The answerer keeps the call (it will be delivered later): recorded as pending, but not
    /// returned by [`Vm::take_host_calls`](crate::Vm::take_host_calls).
    Kept,
    /// Not answered: recorded as pending and returned by
    /// [`Vm::take_host_calls`](crate::Vm::take_host_calls), as without an answerer.
    Left,
}

/// How a host call ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delivery {
    /// Resolve the promise with this JSON text (parsed by the engine's native JSON parser).
    Resolve(String),
    /// Reject the promise with a plain intrinsic `Error` with `message` and optional `code`.
    Reject {
        /// The error's `message`.
        message: String,
        /// The error's `code` property, if any.
        code: Option<String>,
    },
}

/// A host call started by the guest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostCall {
    /// Call id, used with [`Vm::deliver`](crate::Vm::deliver).
    pub id: u32,
    /// The payload string the guest passed.
    pub payload: String,
}

/// The kind of a guest output record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OutputKind {
    /// `text`
    Text,
    /// `json`
    Json,
}

/// One accepted output record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuestOutput {
    /// `text` or `json`.
    pub kind: OutputKind,
    /// The payload string as the guest passed it.
    pub payload: String,
}

/// What crossed the ABI so far (cumulative over snapshots and restores of one run).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct AbiStats {
    /// Host calls accepted.
    pub host_calls: u64,
    /// Host calls attempted (accepted + refused).
    pub host_calls_attempted: u64,
    /// Payload bytes of accepted host calls.
    pub host_call_bytes: u64,
    /// Output records accepted.
    pub outputs: u64,
    /// Output records attempted.
    pub outputs_attempted: u64,
    /// Payload bytes of accepted output.
    pub output_bytes: u64,
    /// Calls refused by the policy.
    pub refusals: u64,
    /// Deliveries made.
    pub deliveries: u64,
    /// Bytes delivered (JSON text or message + code).
    pub delivered_bytes: u64,
    /// Source bytes evaluated (cells and scripts).
    pub eval_bytes: u64,
    /// Bytes the guest wrote to stdout/stderr (dropped).
    pub stdio_bytes_dropped: u64,
}

/// Message of the failure reported when a cell waits on nothing the host can settle.
pub const PENDING_WITHOUT_HOST_WORK: &str = "the run is pending without host work: it awaits a promise \
     that no pending host call can settle (e.g. `await new Promise(() => {})`)";

/// Export indices resolved once per module, so a new instance looks them up without hashing
/// names.
pub(crate) struct ExportIndices {
    pub(crate) memory: ModuleExport,
    pub(crate) funcs: [ModuleExport; 13],
}

impl ExportIndices {
    pub(crate) fn new(module: &Module) -> wasmtime::Result<ExportIndices> {
        let index = |name: &str| {
            module
                .get_export_index(name)
                .ok_or_else(|| wasmtime::Error::msg(format!("guest exports no `{name}`")))
        };
        let mut funcs = Vec::with_capacity(GUEST_EXPORTS.len());
        for name in GUEST_EXPORTS {
            funcs.push(index(name)?);
        }
        let funcs = funcs.try_into().map_err(|_| wasmtime::Error::msg("export count"))?;
        Ok(ExportIndices { memory: index("memory")?, funcs })
    }
}

const ERRNO_SUCCESS: i32 = 0;
const ERRNO_BADF: i32 = 8;
const ERRNO_FAULT: i32 = 21;
const ERRNO_INVAL: i32 = 28;

/// Longest refusal message passed back to the guest.
const MAX_REFUSAL_BYTES: usize = 4096;

/// A host call the guest started and the host has not delivered yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LedgerCall {
    pub payload: String,
    /// Returned by `take_host_calls` already.
    pub taken: bool,
}

/// Host-side state that travels with a snapshot.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Ledger {
    pub next_id: u32,
    pub calls: BTreeMap<u32, LedgerCall>,
    pub output: Vec<GuestOutput>,
    pub stats: AbiStats,
    /// State of the WASI `random_get` stream.
    pub rng: u64,
    /// The run's monotonic clock (`performance.now()`) at capture, in nanoseconds: a restored VM
    /// continues from here plus the time it spent suspended, so the clock never goes back within a
    /// run and counts real time.
    pub clock_ns: u64,
    /// When the snapshot was captured, on [`process_clock_ns`].
    pub captured_at_ns: u64,
}

/// Nanoseconds on a clock of this process (host-side only: capture times are comparable within
/// one process; a snapshot moved to another process is rebased there with
/// [`crate::Snapshot::recaptured`]). It reads [`PROCESS_CLOCK_START_NS`] when first read, so a
/// capture rebased to long before this process started (a run suspended elsewhere for hours) is
/// still a time on it, not clamped to its first tick.
pub(crate) fn process_clock_ns() -> u64 {
    static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    let elapsed = u64::try_from(EPOCH.get_or_init(Instant::now).elapsed().as_nanos()).unwrap_or(u64::MAX);
    elapsed.saturating_add(PROCESS_CLOCK_START_NS)
}

/// What [`process_clock_ns`] reads when first read: 2^62 ns, about 146 years, so any suspension
/// a snapshot can carry fits below it, and about 438 years of this process's life above it.
pub(crate) const PROCESS_CLOCK_START_NS: u64 = 1 << 62;

/// Memory cap that remembers whether it refused growth (to classify the trap that follows).
pub(crate) struct Limiter {
    pub cap: usize,
    pub denied: bool,
}

impl ResourceLimiter for Limiter {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _max: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let ok = desired <= self.cap;
        if !ok {
            self.denied = true;
        }
        Ok(ok)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _max: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= 1 << 16)
    }
}

/// Data of one wasmtime store (one VM).
pub(crate) struct HostState {
    pub limiter: Limiter,
    pub ledger: Ledger,
    pub policy: Option<Box<dyn GuestPolicy>>,
    pub answerer: Option<Box<dyn CallAnswerer>>,
    /// The JSON text of the call answered at once last, until the guest takes it.
    pub answer: String,
    pub refusal: String,
    pub memory: Option<Memory>,
    pub deterministic: Option<Deterministic>,
    pub deadline: Instant,
    pub timed_out: bool,
    /// Set by an [`crate::vm::InterruptHandle`]; checked at every epoch tick.
    pub interrupt: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// The running step was stopped by an interrupt.
    pub interrupted: bool,
    pub exited: Option<i32>,
    /// When the run's monotonic clock read 0: set when the first cell starts (a VM started ahead
    /// of its run does not count the time it waited), or from the snapshot on restore.
    pub clock_origin: Option<Instant>,
}

impl HostState {
    pub fn new(cap: usize, deterministic: Option<Deterministic>) -> HostState {
        HostState {
            limiter: Limiter { cap, denied: false },
            ledger: Ledger {
                rng: deterministic.map_or(0x2545_F491_4F6C_DD1D, |d| d.seed | 1),
                ..Ledger::default()
            },
            policy: None,
            answerer: None,
            answer: String::new(),
            refusal: String::new(),
            memory: None,
            deterministic,
            deadline: Instant::now(),
            timed_out: false,
            interrupt: Default::default(),
            interrupted: false,
            exited: None,
            clock_origin: None,
        }
    }

    /// Nanoseconds on the run's monotonic clock (0 before the first cell starts).
    pub fn clock_ns(&self) -> u64 {
        self.clock_origin.map_or(0, |origin| u64::try_from(origin.elapsed().as_nanos()).unwrap_or(u64::MAX))
    }

    fn refuse(&mut self, mut message: String) -> i64 {
        if message.len() > MAX_REFUSAL_BYTES {
            let mut end = MAX_REFUSAL_BYTES;
            while !message.is_char_boundary(end) {
                end -= 1;
            }
            message.truncate(end);
        }
        let n = message.len() as i64;
        self.refusal = message;
        -(n + 1)
    }
}

fn memory(caller: &Caller<'_, HostState>) -> wasmtime::Result<Memory> {
    caller.data().memory.ok_or_else(|| wasmtime::Error::msg("guest memory is not bound"))
}

fn read_bytes(caller: &Caller<'_, HostState>, ptr: u32, len: u32) -> wasmtime::Result<Vec<u8>> {
    let mem = memory(caller)?;
    let data = mem.data(caller);
    let (start, end) = (ptr as usize, ptr as usize + len as usize);
    data.get(start..end)
        .map(<[u8]>::to_vec)
        .ok_or_else(|| wasmtime::Error::msg("guest pointer out of bounds"))
}

fn read_string(caller: &Caller<'_, HostState>, ptr: u32, len: u32) -> wasmtime::Result<String> {
    String::from_utf8(read_bytes(caller, ptr, len)?)
        .map_err(|_| wasmtime::Error::msg("guest string is not UTF-8"))
}

fn write_bytes(caller: &mut Caller<'_, HostState>, ptr: u32, bytes: &[u8]) -> bool {
    let Ok(mem) = memory(caller) else { return false };
    mem.write(caller, ptr as usize, bytes).is_ok()
}

/// Copies (at most `len` bytes of) `text` the host kept for the guest to `ptr`.
fn copy_out(caller: &mut Caller<'_, HostState>, text: &str, ptr: u32, len: u32) -> wasmtime::Result<()> {
    let n = text.len().min(len as usize);
    if !write_bytes(caller, ptr, &text.as_bytes()[..n]) {
        return Err(wasmtime::Error::msg("guest pointer out of bounds"));
    }
    Ok(())
}

fn next_random(state: &mut u64) -> u64 {
    // splitmix64
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The linker with the `codemode` imports and the WASI shim; nothing else.
pub(crate) fn linker(engine: &Engine) -> wasmtime::Result<Linker<HostState>> {
    let mut l: Linker<HostState> = Linker::new(engine);

    l.func_wrap("codemode", "host_call", |mut caller: Caller<'_, HostState>, ptr: u32, len: u32| {
        let payload = read_string(&caller, ptr, len)?;
        let st = caller.data_mut();
        st.ledger.stats.host_calls_attempted += 1;
        if let Some(policy) = st.policy.as_mut()
            && let Err(message) = policy.on_host_call(&payload)
        {
            st.ledger.stats.refusals += 1;
            return Ok(st.refuse(message));
        }
        st.ledger.stats.host_calls += 1;
        st.ledger.stats.host_call_bytes += payload.len() as u64;
        let id = st.ledger.next_id;
        st.ledger.next_id = st.ledger.next_id.wrapping_add(1);
        let taken = match st.answerer.as_mut().map(|answerer| answerer.answer(id, &payload)) {
            Some(AtOnce::Resolved(json)) => {
                let Some(n) = i64::try_from(json.len()).ok().filter(|&n| n < ANSWERED_AT_ONCE) else {
                    return Err(wasmtime::Error::msg("an answer at once longer than 4 GiB"));
                };
                st.ledger.stats.deliveries += 1;
                st.ledger.stats.delivered_bytes += json.len() as u64;
                st.answer = json;
                return Ok(ANSWERED_AT_ONCE + n);
            }
            Some(AtOnce::Kept) => true,
            Some(AtOnce::Left) | None => false,
        };
        st.ledger.calls.insert(id, LedgerCall { payload, taken });
        Ok(i64::from(id))
    })?;

    l.func_wrap("codemode", "answer", |mut caller: Caller<'_, HostState>, ptr: u32, len: u32| {
        let answer = std::mem::take(&mut caller.data_mut().answer);
        copy_out(&mut caller, &answer, ptr, len)
    })?;

    l.func_wrap("codemode", "output", |mut caller: Caller<'_, HostState>, kind: i32, ptr: u32, len: u32| {
        let payload = read_string(&caller, ptr, len)?;
        let kind = if kind == 1 { OutputKind::Json } else { OutputKind::Text };
        let st = caller.data_mut();
        st.ledger.stats.outputs_attempted += 1;
        let kept_by_policy = match st.policy.as_mut().map(|policy| policy.on_output(kind, &payload)) {
            Some(Err(message)) => {
                st.ledger.stats.refusals += 1;
                return Ok(st.refuse(message) as i32);
            }
            Some(Ok(())) => true,
            None => false,
        };
        st.ledger.stats.outputs += 1;
        st.ledger.stats.output_bytes += payload.len() as u64;
        // Output a policy accepted is the policy's; the VM keeps no second copy.
        if !kept_by_policy {
            st.ledger.output.push(GuestOutput { kind, payload });
        }
        Ok(0i32)
    })?;

    l.func_wrap("codemode", "refusal", |mut caller: Caller<'_, HostState>, ptr: u32, len: u32| {
        let msg = std::mem::take(&mut caller.data_mut().refusal);
        copy_out(&mut caller, &msg, ptr, len)
    })?;

    const WASI: &str = "wasi_snapshot_preview1";
    l.func_wrap(
        WASI,
        "clock_time_get",
        |mut caller: Caller<'_, HostState>, id: i32, _prec: i64, out: u32| {
            let det = caller.data().deterministic;
            let run_clock = caller.data().clock_ns();
            let ns: u64 = match (id, det) {
                (0, Some(d)) => d.clock_ms.saturating_mul(1_000_000),
                (0, None) => std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos() as u64),
                (1..=3, Some(_)) => 0,
                // Monotonic clocks count from the run's start, not the process's (no uptime leak).
                (1..=3, None) => run_clock,
                _ => return Ok(ERRNO_INVAL),
            };
            Ok(if write_bytes(&mut caller, out, &ns.to_le_bytes()) { ERRNO_SUCCESS } else { ERRNO_FAULT })
        },
    )?;
    l.func_wrap(WASI, "environ_get", |_: Caller<'_, HostState>, _environ: u32, _buf: u32| Ok(ERRNO_SUCCESS))?;
    l.func_wrap(WASI, "environ_sizes_get", |mut caller: Caller<'_, HostState>, count: u32, size: u32| {
        let ok = write_bytes(&mut caller, count, &0u32.to_le_bytes())
            && write_bytes(&mut caller, size, &0u32.to_le_bytes());
        Ok(if ok { ERRNO_SUCCESS } else { ERRNO_FAULT })
    })?;
    l.func_wrap(WASI, "fd_close", |_: Caller<'_, HostState>, _fd: i32| Ok(ERRNO_BADF))?;
    l.func_wrap(WASI, "fd_fdstat_get", |_: Caller<'_, HostState>, _fd: i32, _out: u32| Ok(ERRNO_BADF))?;
    l.func_wrap(
        WASI,
        "fd_seek",
        |_: Caller<'_, HostState>, _fd: i32, _off: i64, _whence: i32, _out: u32| Ok(ERRNO_BADF),
    )?;
    l.func_wrap(
        WASI,
        "fd_write",
        |mut caller: Caller<'_, HostState>, fd: i32, iovs: u32, n: u32, out: u32| {
            if fd != 1 && fd != 2 {
                return Ok(ERRNO_BADF);
            }
            // stdout/stderr are dropped (counted): guest output goes through `codemode.output`.
            let Ok(table) = read_bytes(&caller, iovs, n.saturating_mul(8)) else { return Ok(ERRNO_FAULT) };
            let total: u64 =
                table.chunks_exact(8).map(|c| u64::from(u32::from_le_bytes([c[4], c[5], c[6], c[7]]))).sum();
            caller.data_mut().ledger.stats.stdio_bytes_dropped += total;
            let written = u32::try_from(total).unwrap_or(u32::MAX);
            Ok(if write_bytes(&mut caller, out, &written.to_le_bytes()) {
                ERRNO_SUCCESS
            } else {
                ERRNO_FAULT
            })
        },
    )?;
    l.func_wrap(WASI, "proc_exit", |mut caller: Caller<'_, HostState>, code: i32| -> wasmtime::Result<()> {
        caller.data_mut().exited = Some(code);
        Err(wasmtime::Error::msg(format!("guest called proc_exit({code})")))
    })?;
    l.func_wrap(WASI, "random_get", |mut caller: Caller<'_, HostState>, buf: u32, len: u32| {
        // Bounds first, then fill guest memory in place: a hostile `len` allocates nothing.
        let Ok(mem) = memory(&caller) else { return Ok(ERRNO_FAULT) };
        let (data, st) = mem.data_and_store_mut(&mut caller);
        let Some(target) =
            (buf as usize).checked_add(len as usize).and_then(|end| data.get_mut(buf as usize..end))
        else {
            return Ok(ERRNO_FAULT);
        };
        for chunk in target.chunks_mut(8) {
            let r = next_random(&mut st.ledger.rng).to_le_bytes();
            chunk.copy_from_slice(&r[..chunk.len()]);
        }
        Ok(ERRNO_SUCCESS)
    })?;
    Ok(l)
}

/// 64 random bits from the OS-seeded std hasher (no extra dependency).
pub(crate) fn os_random_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(Instant::now().elapsed().as_nanos());
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_encoder::{
        CodeSection, EntityType, ExportKind, ExportSection, Function, FunctionSection, ImportSection,
        Instruction, MemoryType, Module, TypeSection, ValType,
    };

    /// A module that imports `random_get` and exports `call(ptr, len) -> errno` and one page of memory.
    fn random_module() -> Vec<u8> {
        let mut types = TypeSection::new();
        types.ty().function([ValType::I32, ValType::I32], [ValType::I32]);
        let mut imports = ImportSection::new();
        imports.import("wasi_snapshot_preview1", "random_get", EntityType::Function(0));
        imports.import(
            "env",
            "memory",
            EntityType::Memory(MemoryType {
                minimum: 1,
                maximum: None,
                memory64: false,
                shared: false,
                page_size_log2: None,
            }),
        );
        let mut functions = FunctionSection::new();
        functions.function(0);
        let mut exports = ExportSection::new();
        exports.export("call", ExportKind::Func, 1);
        let mut code = CodeSection::new();
        let mut f = Function::new([]);
        f.instruction(&Instruction::LocalGet(0));
        f.instruction(&Instruction::LocalGet(1));
        f.instruction(&Instruction::Call(0));
        f.instruction(&Instruction::End);
        code.function(&f);
        let mut module = Module::new();
        module.section(&types).section(&imports).section(&functions).section(&exports).section(&code);
        module.finish()
    }

    /// `random_get` checks the range before touching (or allocating) anything: a hostile length
    /// is a fault, at once; an in-bounds request is filled in place.
    #[test]
    fn random_get_bounds_checks_before_it_allocates() {
        let engine = Engine::default();
        let module = wasmtime::Module::new(&engine, random_module()).unwrap();
        let mut store = wasmtime::Store::new(&engine, HostState::new(1 << 20, None));
        let memory = Memory::new(&mut store, wasmtime::MemoryType::new(1, None)).unwrap();
        store.data_mut().memory = Some(memory);
        let mut l = linker(&engine).unwrap();
        l.define(&store, "env", "memory", memory).unwrap();
        let instance = l.instantiate(&mut store, &module).unwrap();
        let call = instance.get_typed_func::<(u32, u32), i32>(&mut store, "call").unwrap();
        let started = Instant::now();
        assert_eq!(call.call(&mut store, (0, u32::MAX)).unwrap(), ERRNO_FAULT);
        assert_eq!(call.call(&mut store, (65_000, 1_000)).unwrap(), ERRNO_FAULT, "past the end");
        assert_eq!(call.call(&mut store, (u32::MAX, 2)).unwrap(), ERRNO_FAULT, "address overflow");
        assert!(started.elapsed() < std::time::Duration::from_secs(1), "nothing was filled");
        assert_eq!(call.call(&mut store, (100, 20)).unwrap(), ERRNO_SUCCESS);
        let data = memory.data(&store);
        assert!(data[100..120].iter().any(|b| *b != 0), "filled");
        assert!(data[..100].iter().chain(&data[120..]).all(|b| *b == 0), "only the range");
        assert_eq!(call.call(&mut store, (65_536, 0)).unwrap(), ERRNO_SUCCESS, "empty at the end");
    }

    #[test]
    fn the_run_clock_starts_at_zero_and_continues_from_a_snapshot() {
        let mut st = HostState::new(1 << 20, None);
        assert_eq!(st.clock_ns(), 0, "no cell has started");
        st.clock_origin = Some(Instant::now() - std::time::Duration::from_millis(250));
        let ns = st.clock_ns();
        assert!((250_000_000..10_000_000_000).contains(&ns), "{ns}");
    }
}
