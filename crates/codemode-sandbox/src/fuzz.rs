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

/// The snapshot payload decoder agrees with `lz4_flex`: `data` compressed round-trips exactly,
/// and `data` taken as a compressed block either fails in both decoders or (when `lz4_flex`
/// fills the same buffer) decodes to the same bytes. Never panics.
pub fn check_lz4_block(data: &[u8]) {
    let packed = lz4_flex::block::compress(data);
    let mut out = vec![0u8; data.len()];
    crate::snapshot::lz4_block_decode(&packed, &mut out).expect("own compressed block decodes");
    assert_eq!(out, data, "round trip");
    for want in [0, 1, 64, 4096, 3 * data.len()] {
        let mut ours = vec![0u8; want];
        let mut theirs = vec![0u8; want];
        let a = crate::snapshot::lz4_block_decode(data, &mut ours);
        let b = lz4_flex::block::decompress_into(data, &mut theirs);
        if let Ok(n) = b
            && n == want
        {
            assert!(a.is_ok(), "lz4_flex accepts a block this decoder refuses");
            assert_eq!(ours, theirs, "decoders disagree");
        }
    }
}
