//! [`SandboxConfig`]: the knobs of a [`crate::Sandbox`].

use std::path::PathBuf;

/// Shadow stack the guest was linked with (`cargo xtask guest`, `-zstack-size`), in linear memory.
pub(crate) const GUEST_SHADOW_STACK_BYTES: u64 = 4 << 20;

/// QuickJS's recursion budget inside the shadow stack: about 7,700 frames of a simple recursive
/// function (measured at ~272 bytes each), leaving 2 MiB for Rust/C frames past the last check.
pub(crate) const QUICKJS_STACK_BYTES: u32 = 2 << 20;

/// Configuration of a [`crate::Sandbox`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SandboxConfig {
    /// QuickJS heap limit in bytes: allocations past it raise a catchable
    /// `InternalError: out of memory` in the guest. Linear memory is additionally capped at
    /// this plus the guest's fixed overhead (shadow stack, static data) plus a quarter for
    /// allocator slack; growth past that cap ends the run with
    /// [`crate::SandboxError::MemoryExhausted`]. Default: 64 MiB (the spec's `memoryLimitBytes`).
    pub memory_limit_bytes: u64,
    /// Native stack wasm code may use, in bytes (wasmtime's `max_wasm_stack`). VM calls run on a
    /// stack large enough for it even from a small-stack thread (they grow the stack on demand).
    /// Default: 64 MiB, enough that QuickJS's catchable stack-overflow error (at 2 MiB of guest
    /// shadow stack) comes first both for JS recursion (~7,700 simple frames, each ~1 KiB of wasm
    /// stack) and for its parser, whose frames use far more wasm stack per shadow-stack byte:
    /// `eval` of 100,000 nested parentheses needed between 28 and 36 MiB (24 MiB trapped).
    pub max_wasm_stack_bytes: usize,
    /// Fixed clock and seeded randomness, for tests and reproducible runs. Default: `None`
    /// (wall clock, OS-seeded randomness per VM start).
    pub deterministic: Option<Deterministic>,
    /// Directory for the compiled module (keyed by engine and module hash; corrupt or foreign
    /// entries are recompiled). A directory that cannot be created or opened is ignored (the
    /// module is compiled as without a cache). Default: `None` (compile once per process, in
    /// memory).
    pub cache_dir: Option<PathBuf>,
    /// Compress stored snapshots (lz4). Default: `true`.
    pub compress_snapshots: bool,
    /// Live VMs at once for every sandbox sharing this engine configuration (the size of the
    /// instance pool; each slot reserves address space, not memory). Starting or restoring a VM
    /// past it fails with [`crate::SandboxError::AllVmsInUse`] until one is dropped. Sandboxes
    /// with equal `max_wasm_stack_bytes`, `cache_dir` and `max_live_vms` share one pool.
    /// Default: 1,000.
    pub max_live_vms: u32,
    /// Track the pages each VM writes (Linux ≥ 6.7: a userfaultfd in asynchronous
    /// write-protect mode per VM, read with `PAGEMAP_SCAN`), so [`crate::Vm::snapshot`]
    /// compares only the pages written since the VM started or was restored instead of every
    /// page of linear memory. Costs a write-protect of the memory when a VM starts or is
    /// restored, one kernel-resolved fault on the first write to each page, and an unprotect
    /// when the VM is dropped; each tracked VM holds a file descriptor, and at most 256 are
    /// tracked at once. Where tracking is unavailable a VM compares every page, as
    /// without it ([`crate::Vm::writes_tracked`] tells which). Snapshots are byte-identical
    /// either way. Default: `false`.
    pub track_writes: bool,
    /// VMs of a sandbox whose base image has at least this many bytes are write-tracked from their
    /// start, so that [`crate::Sandbox::recycle`] can reset a finished VM in place (rewriting only
    /// the pages its run wrote) instead of dropping it and restoring the whole base image into a
    /// fresh instance: a large base image (a catalog's guest API) then costs nothing per run.
    /// `usize::MAX` turns recycling off (except with [`SandboxConfig::track_writes`], which tracks
    /// every VM anyway). Default: 0, every VM: recycling a small image (rewriting the ~80 pages a
    /// trivial run writes) also beats dropping the VM and starting one anew.
    pub recycle_min_base_bytes: usize,
}

impl Default for SandboxConfig {
    fn default() -> Self {
        SandboxConfig {
            memory_limit_bytes: 64 << 20,
            max_wasm_stack_bytes: 64 << 20,
            deterministic: None,
            cache_dir: None,
            compress_snapshots: true,
            max_live_vms: 1000,
            track_writes: false,
            recycle_min_base_bytes: 0,
        }
    }
}

impl SandboxConfig {
    /// Cap on linear memory derived from [`SandboxConfig::memory_limit_bytes`].
    pub(crate) fn linear_memory_cap(&self) -> usize {
        let limit = self.memory_limit_bytes;
        let cap = limit.saturating_add(limit / 4).saturating_add(GUEST_SHADOW_STACK_BYTES + (8 << 20));
        usize::try_from(cap.min(4 << 30)).unwrap_or(usize::MAX)
    }

    /// QuickJS's stack budget inside the shadow stack (leaves room for the Rust/C frames that
    /// run past the last check).
    pub(crate) fn quickjs_stack_bytes(&self) -> u32 {
        QUICKJS_STACK_BYTES
    }
}

/// Deterministic mode: every VM sees the same clock and the same random sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deterministic {
    /// What `Date.now()` returns (milliseconds since the Unix epoch); the clock does not move.
    /// `performance.now()` is always 0.
    pub clock_ms: u64,
    /// Seed of `Math.random()` (and of the WASI `random_get` stream).
    pub seed: u64,
}
