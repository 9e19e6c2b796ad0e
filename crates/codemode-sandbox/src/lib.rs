//! wasmtime host for the QuickJS guest of Code Mode: engine, precompiled module, limits
//! (memory, wall clock, stack), sparse snapshots and restore.
//!
//! The guest is QuickJS (quickjs-ng, through `rquickjs`) compiled to `wasm32-wasip1`; its
//! `.wasm` is committed beside this crate (`wasm/codemode_guest.wasm`, built by
//! `cargo xtask guest`) and embedded with `include_bytes!`, so building needs only Rust.
//!
//! ```
//! use std::time::{Duration, Instant};
//! use codemode_sandbox::{Delivery, Sandbox, SandboxConfig, Step};
//!
//! // The prelude (the bridge's, in production) captures the private imports.
//! let prelude = "globalThis.callHost = __codemode_host_call; delete globalThis.__codemode_host_call;";
//! let sandbox = Sandbox::new(SandboxConfig::default(), prelude)?;
//! let mut vm = sandbox.start()?;
//! let deadline = Instant::now() + Duration::from_secs(5);
//! let step = vm.eval_cell("const r = await callHost('{\"op\":\"add\"}'); return r.sum * 10;", "user.js", deadline)?;
//! assert_eq!(step, Step::Pending { pending_calls: 1 });
//!
//! // Suspend: snapshot, drop the instance, restore later in a fresh one.
//! let snapshot = vm.snapshot()?;
//! drop(vm);
//! let mut vm = sandbox.restore(&snapshot)?;
//! vm.deliver(0, Delivery::Resolve(r#"{"sum":3}"#.into()), deadline)?;
//! assert_eq!(vm.run_jobs(deadline)?, Step::Completed { value_json: Some("30".into()) });
//! # Ok::<(), codemode_sandbox::SandboxError>(())
//! ```
//!
//! # What the guest can reach
//!
//! Standard ECMAScript built-ins only (QuickJS's full intrinsic set, including `eval` of its
//! own strings), plus the two private globals in [`globals`]. No `require`, `module`,
//! `process`, `std`, `os`, module loader (`import()` rejects), file descriptors, environment,
//! arguments or sockets: its WASI preview1 imports are a deny-by-default shim (no env, no args,
//! every fd is `EBADF` except stdout/stderr, whose writes are dropped and counted). `Date.now()`
//! reads the host clock and `Math.random()` a guest PRNG the host seeds per VM; in
//! [`Deterministic`] mode both are fixed.
//!
//! # Guest ABI
//!
//! Synchronous. The host calls exports; when an export returns no guest frame is live and the
//! shadow stack pointer (the module's only mutable global, checked at build time) is back at
//! its initial value, so linear memory alone is the VM's state: that is a quiescent point.
//!
//! Exports (`ptr`/`len` are guest addresses; inputs are written into a `cm_alloc` buffer):
//! - `cm_alloc(len) -> ptr`, `cm_dealloc(ptr, len)`
//! - `cm_init(heap_limit, max_stack) -> 0 | -1` — QuickJS runtime + context, private globals
//! - `cm_seed(u64)` — seed `Math.random`
//! - `cm_eval_script(src, src_len, name, name_len) -> status` — classic global script
//! - `cm_eval_cell(src, src_len, name, name_len) -> status` — [`CELL_PREFIX`] (`0, async
//!   function () {\n`) + body + [`CELL_SUFFIX`] (`\n}()`) evaluated as a global script named
//!   `name`, then jobs run (the header has its own line: see [`CELL_LINE_OFFSET`])
//! - `cm_run_jobs() -> status`, `cm_status() -> status`, `cm_jobs_pending() -> 0 | 1`
//! - `cm_deliver(id, kind, text, text_len, code, code_len) -> 0 | -1 unknown | -2 bad JSON | -3`
//!   (`kind` 0 resolves with JSON parsed by `JS_ParseJSON`; 1 rejects with an intrinsic
//!   `Error` whose `message` and optional `code` are own data properties)
//! - `cm_result_ptr()`, `cm_result_len()` — the value JSON, or the error record (three
//!   u32-LE-length-prefixed strings: name, message, stack)
//! - `cm_pending_calls()`, `cm_heap_used()`
//!
//! Status: 0 idle, 1 pending, 2 completed (JSON in the result), 3 failed (error record),
//! 4 completed with `undefined`, -1 internal guest failure.
//!
//! Imports, module `codemode` (exactly [`IMPORT_ALLOWLIST`] with the WASI shim):
//! - `host_call(ptr, len) -> i64`: the call id (>= 0), or `-(n + 1)` when the [`GuestPolicy`]
//!   refused with an `n`-byte message, or `ANSWERED_AT_ONCE + n` when the [`CallAnswerer`]
//!   answered it at once with `n` bytes of JSON
//! - `answer(ptr, len)`: copy the JSON text of the call answered at once into the guest
//! - `output(kind, ptr, len) -> i32`: 0, or `-(n + 1)` on refusal (`kind` 0 text, 1 json)
//! - `refusal(ptr, len)`: copy the last refusal message into the guest
//!
//! # Limits
//!
//! - Memory: QuickJS's heap limit is [`SandboxConfig::memory_limit_bytes`] (catchable
//!   `InternalError: out of memory`, a real error object even at the exact limit: the guest
//!   build patches quickjs-ng, which would otherwise throw `null` when it cannot allocate the
//!   error); linear memory has a hard cap above it ([`SandboxError::MemoryExhausted`] if it is
//!   ever hit).
//! - Live VMs: at most [`SandboxConfig::max_live_vms`] per engine configuration (the instance
//!   pool); one more is [`SandboxError::AllVmsInUse`] until a VM is dropped.
//! - Wall clock: every step takes a deadline, enforced by epoch interruption from one ticker
//!   thread; past it the step fails with [`SandboxError::Timeout`] and the VM is terminated.
//! - Stack: the guest is built with quickjs-ng's stack check enabled under WASI (patched at
//!   build time by `cargo xtask guest`) with a 2 MiB budget in a 4 MiB shadow stack, so deep recursion is a
//!   catchable `RangeError`; the wasm stack limit ([`SandboxConfig::max_wasm_stack_bytes`]) is
//!   sized so that check fires first, and exhausting it anyway is
//!   [`SandboxError::StackExhausted`].
//! - The sandbox counts what crosses the ABI ([`AbiStats`]); budgets on it are the policy's.
//!
//! # Snapshots
//!
//! [`Vm::snapshot`] stores the 4 KiB pages that differ from the sandbox's base image (XOR
//! against it, lz4-compressed), the memory size and the host ledger (undelivered calls, next
//! id, undrained output, stats, RNG state). [`Sandbox::restore`] instantiates a fresh module
//! instance (copy-on-write pristine memory), writes the base pages and the snapshot pages, and
//! continues exactly where the original would have.
//!
//! Finding those pages compares every page of linear memory, unless
//! [`SandboxConfig::track_writes`] is set: then (Linux ≥ 6.7) each VM's memory is
//! write-protected through a userfaultfd of its own when it starts or is restored, and a
//! snapshot compares only the pages written since ([`Vm::writes_tracked`] tells whether a VM
//! got tracking; without it, it compares every page). The bytes are identical either way.
//!
//! # Recycling
//!
//! [`Sandbox::recycle`] turns a finished VM back into a fresh one in place: the pages it wrote
//! get the base image's contents back and its host state is new, so a large base image (a big
//! catalog's guest API) is not copied in for every run. VMs of a base image of at least
//! [`SandboxConfig::recycle_min_base_bytes`] are write-tracked for that from their start; a VM
//! that was terminated, grew its memory or is untracked is refused (dropped).

#![deny(missing_docs)]

// The crate README (its crates.io page) is compiled and run as doc tests too.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

mod abi;
mod abi_names;
mod base;
mod cache;
mod config;
mod dirty;
mod engine;
mod error;
mod sandbox;
mod snapshot;
mod stack;
mod vm;

#[doc(hidden)]
pub mod fuzz;

pub use abi::{IMPORT_ALLOWLIST, globals};

/// Lines the cell wrapper puts before a cell's body: line `n` of the body passed to
/// [`Vm::eval_cell`] is line `n + CELL_LINE_OFFSET` of the script the engine reports positions
/// in, at the same column. The wrapper ([`CELL_PREFIX`] on a line of its own, and [`CELL_SUFFIX`]
/// after the body) is the only code placed around a cell.
pub const CELL_LINE_OFFSET: u32 = newlines(CELL_PREFIX);

/// The line breaks in `text`.
const fn newlines(text: &str) -> u32 {
    let bytes = text.as_bytes();
    let (mut i, mut n) = (0, 0);
    while i < bytes.len() {
        if bytes[i] == b'\n' {
            n += 1;
        }
        i += 1;
    }
    n
}

pub use abi::{
    AbiStats, AtOnce, CallAnswerer, Delivery, GuestOutput, GuestPolicy, HostCall, OutputKind,
    PENDING_WITHOUT_HOST_WORK,
};
pub use abi_names::{CELL_PREFIX, CELL_SUFFIX};
pub use config::{Deterministic, SandboxConfig};
pub use error::{GuestError, SandboxError};
pub use sandbox::Sandbox;
pub use snapshot::Snapshot;
pub use vm::{InterruptHandle, Step, Vm};

/// The committed guest module's bytes (for inspection and tests).
pub fn guest_wasm() -> &'static [u8] {
    engine::GUEST_WASM
}
