//! The names of the guest's ABI: its imports, the exports the host calls and the status codes
//! they return. A file of its own, with no dependencies, so that the guest (which returns the
//! codes) and `cargo xtask guest` (which checks the built module against the lists) include it
//! with `#[path]` instead of keeping copies.

/// The guest's imports `(module, name)`; the linker defines exactly these, and `cargo xtask
/// guest` refuses a built module whose imports differ.
pub const IMPORT_ALLOWLIST: &[(&str, &str)] = &[
    ("codemode", "answer"),
    ("codemode", "host_call"),
    ("codemode", "output"),
    ("codemode", "refusal"),
    ("wasi_snapshot_preview1", "clock_time_get"),
    ("wasi_snapshot_preview1", "environ_get"),
    ("wasi_snapshot_preview1", "environ_sizes_get"),
    ("wasi_snapshot_preview1", "fd_close"),
    ("wasi_snapshot_preview1", "fd_fdstat_get"),
    ("wasi_snapshot_preview1", "fd_seek"),
    ("wasi_snapshot_preview1", "fd_write"),
    ("wasi_snapshot_preview1", "proc_exit"),
    ("wasi_snapshot_preview1", "random_get"),
];

/// `host_call` returned at least this: the host answered the call at once, and the JSON text to
/// resolve its promise with (`r - ANSWERED_AT_ONCE` bytes) is waiting for the `answer` import.
pub const ANSWERED_AT_ONCE: i64 = 1 << 32;

/// The guest functions the host calls, in the order the host resolves them (besides `memory`);
/// `cargo xtask guest` refuses a built module that lacks one.
pub const GUEST_EXPORTS: [&str; 13] = [
    "cm_alloc",
    "cm_dealloc",
    "cm_init",
    "cm_seed",
    "cm_eval_script",
    "cm_eval_cell",
    "cm_run_jobs",
    "cm_jobs_pending",
    "cm_deliver",
    "cm_result_ptr",
    "cm_result_len",
    "cm_heap_used",
    "cm_define_texts",
];

/// The code `cm_eval_cell` places before a cell's body (the header has a line of its own) and
/// after it: the body runs as the body of an async function expression, called at once, whose
/// promise is the script's completion value. The header starts with `0,` rather than `(`: QuickJS
/// scans a parenthesized expression to its end before it parses it (to tell an arrow function's
/// parameters from an expression), so `(async function () { ... })()` tokenized the whole cell
/// twice. `codemode-ts` checks cells inside the same wrapper (a tidy test of xtask holds the two
/// in step).
pub const CELL_PREFIX: &str = "0, async function () {\n";
/// See [`CELL_PREFIX`].
pub const CELL_SUFFIX: &str = "\n}()";

/// Status codes returned by `cm_eval_cell`, `cm_eval_script` and `cm_run_jobs`.
pub mod status {
    /// No cell is running (none started, or the last one finished and was reported).
    pub const IDLE: i32 = 0;
    /// The cell awaits host calls.
    pub const PENDING: i32 = 1;
    /// Completed; the result buffer holds the value as JSON.
    pub const COMPLETED: i32 = 2;
    /// Failed; the result buffer holds the error record.
    pub const FAILED: i32 = 3;
    /// Completed with `undefined` or a value JSON cannot represent (function, symbol).
    pub const COMPLETED_UNDEFINED: i32 = 4;
    /// An internal failure of the guest itself (message in the result buffer).
    pub const INTERNAL: i32 = -1;
}
