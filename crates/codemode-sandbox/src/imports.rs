//! The guest's imports. A file of its own, with no dependencies, so that `cargo xtask guest`
//! (which checks the built module against it) includes the same list with `#[path]` instead of
//! keeping a copy.

/// The guest's imports `(module, name)`; the linker defines exactly these, and `cargo xtask
/// guest` refuses a built module whose imports differ.
pub const IMPORT_ALLOWLIST: &[(&str, &str)] = &[
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
