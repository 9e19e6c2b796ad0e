//! Errors: [`SandboxError`] is a host-side failure of a step; [`GuestError`] is what the guest
//! program threw (a normal [`crate::Step::Failed`] outcome, not a host failure).

use std::fmt;

/// Why a sandbox operation failed. Every variant maps to one of the spec's error codes; the
/// mapping is the runtime's (e.g. `Timeout` -> `timeout`, `Unavailable` -> `runtime_unavailable`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SandboxError {
    /// The wall-clock deadline passed while guest code was running. The VM is terminated.
    #[error("the run exceeded its time limit")]
    Timeout,
    /// The step was stopped through the VM's [`crate::InterruptHandle`] (the host cancelled the
    /// run). The VM is terminated.
    #[error("the run was interrupted")]
    Interrupted,
    /// Linear memory could not grow within the configured cap while the guest was outside
    /// QuickJS's own accounting (QuickJS itself raises a catchable `InternalError: out of memory`
    /// first). The VM is terminated.
    #[error("the run exceeded its memory limit")]
    MemoryExhausted,
    /// The wasm call stack was exhausted (recursion deep enough to get past QuickJS's own
    /// `RangeError` check). The VM is terminated.
    #[error("the run exhausted its call stack")]
    StackExhausted,
    /// Any other wasm trap. The VM is terminated.
    #[error("the guest trapped: {message}")]
    Trap {
        /// The trap description.
        message: String,
    },
    /// The module could not be compiled, loaded or instantiated.
    #[error("the sandbox is unavailable: {reason}")]
    Unavailable {
        /// What failed.
        reason: String,
    },
    /// Every VM slot of the instance pool is in use (`SandboxConfig::max_live_vms` VMs are live);
    /// starting or restoring one more waits for a VM to be dropped.
    #[error("all {slots} VM slots are in use; finish or drop a running VM and try again")]
    AllVmsInUse {
        /// The pool's size.
        slots: u32,
    },
    /// The prelude script threw while the sandbox was being created.
    #[error("the prelude failed: {error}")]
    Prelude {
        /// What the prelude threw.
        error: GuestError,
    },
    /// `snapshot` was called while QuickJS still had jobs queued (call `run_jobs` first).
    #[error("the VM is not at a quiescent point (jobs are queued)")]
    NotQuiescent,
    /// `eval_cell` was called while an earlier cell was still pending.
    #[error("a cell is already running in this VM")]
    Busy,
    /// An earlier step terminated this VM (timeout, trap, memory); it cannot run again.
    #[error("the VM was terminated by an earlier failure: {reason}")]
    Terminated {
        /// The failure that terminated it.
        reason: String,
    },
    /// `deliver` named a call id that is not pending.
    #[error("no pending host call has id {call_id}")]
    UnknownCall {
        /// The id that was delivered.
        call_id: u32,
    },
    /// `deliver` was given a resolve value that is not valid JSON (the call is rejected in the
    /// guest with an `internal_error` Error so the program cannot hang on it).
    #[error("the delivered value is not valid JSON")]
    InvalidJson,
    /// A snapshot could not be decoded or does not belong to this sandbox.
    #[error("invalid snapshot: {reason}")]
    Snapshot {
        /// What is wrong with it.
        reason: String,
    },
    /// The guest broke its own ABI contract (a bug, never caused by guest JavaScript).
    #[error("guest ABI violation: {reason}")]
    Abi {
        /// What went wrong.
        reason: String,
    },
}

/// A value thrown by guest code and not caught.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuestError {
    /// The error's `name` (`SyntaxError`, `TypeError`, ...), or empty when the thrown value is
    /// not an `Error` object (`throw "x"`, `throw {code: 1}`).
    pub name: String,
    /// The error's `message`. For a thrown non-Error value: strings as they are, other
    /// primitives by `String(v)`, objects as their native `JSON.stringify` (or `[object]`).
    pub message: String,
    /// The error's `stack` (QuickJS format, `    at f (user.js:3:5)` lines), possibly empty.
    pub stack: String,
}

impl fmt::Display for GuestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.name.is_empty() {
            write!(f, "Uncaught {}", self.message)
        } else if self.message.is_empty() {
            f.write_str(&self.name)
        } else {
            write!(f, "{}: {}", self.name, self.message)
        }
    }
}

impl std::error::Error for GuestError {}
