//! Fuzz checks (thin `fuzz/fuzz_targets` glue calls these).

use std::sync::OnceLock;

use crate::{Sandbox, SandboxConfig, Snapshot};

fn sandbox() -> &'static Sandbox {
    static S: OnceLock<Sandbox> = OnceLock::new();
    S.get_or_init(|| Sandbox::new(SandboxConfig::default(), "").expect("sandbox"))
}

/// Decoding arbitrary bytes as a snapshot, and restoring whatever decodes, never panics.
pub fn check_snapshot_bytes(data: &[u8]) {
    if let Ok(snap) = Snapshot::from_bytes(data) {
        let _ = sandbox().restore(&snap);
    }
}
