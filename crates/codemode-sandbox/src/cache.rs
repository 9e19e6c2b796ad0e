//! On-disk cache of the compiled guest, opened with cap-std so the sandbox touches nothing
//! outside the cache directory. An entry is `MAGIC | checksum(payload) | payload` where the
//! payload is wasmtime's serialized module; the file name carries the engine+module hash. A
//! corrupt, truncated or foreign entry fails the checks (ours, then wasmtime's own header
//! check) and is recompiled and rewritten, never trusted.
//!
//! The checksum catches corruption, not an attacker: the directory must be writable only by
//! the process's own user, like any code cache.

use std::hash::Hasher;
use std::io::Write;
use std::path::Path;

use cap_std::ambient_authority;
use cap_std::fs::Dir;
use wasmtime::{Engine, Module};

use crate::error::SandboxError;

const MAGIC: &[u8; 8] = b"CMWASM01";

fn checksum(bytes: &[u8]) -> u64 {
    let mut h = std::hash::DefaultHasher::new();
    h.write(bytes);
    h.finish()
}

/// File name of the entry for `module_hash`.
pub(crate) fn entry_name(module_hash: u64) -> String {
    format!("codemode-guest-{module_hash:016x}.cwasm")
}

/// The module from the cache in `dir`, or compiled (and then stored there). A directory that
/// cannot be created or opened is no cache: the module is compiled as without one.
pub(crate) fn load_or_compile(
    engine: &Engine,
    dir: &Path,
    module_hash: u64,
    wasm: &[u8],
) -> Result<Module, SandboxError> {
    let unavailable = |e: &dyn std::fmt::Display| SandboxError::Unavailable { reason: e.to_string() };
    let opened = std::fs::create_dir_all(dir).and_then(|()| Dir::open_ambient_dir(dir, ambient_authority()));
    let Ok(dir) = opened else {
        return Module::new(engine, wasm).map_err(|e| unavailable(&e));
    };
    let name = entry_name(module_hash);
    if let Ok(bytes) = dir.read(&name)
        && let Some(module) = decode(engine, &bytes)
    {
        return Ok(module);
    }
    let module = Module::new(engine, wasm).map_err(|e| unavailable(&e))?;
    // Best effort: a cache that cannot be written only costs the next process a compile.
    if let Ok(payload) = module.serialize() {
        let tmp = format!("{name}.tmp{}", std::process::id());
        let written = dir.create(&tmp).and_then(|mut f| {
            f.write_all(MAGIC)?;
            f.write_all(&checksum(&payload).to_le_bytes())?;
            f.write_all(&payload)?;
            f.sync_all()
        });
        if written.is_ok() {
            let _ = dir.rename(&tmp, &dir, &name);
        } else {
            let _ = dir.remove_file(&tmp);
        }
    }
    Ok(module)
}

fn decode(engine: &Engine, bytes: &[u8]) -> Option<Module> {
    let rest = bytes.strip_prefix(MAGIC)?;
    let (sum, payload) = rest.split_at_checked(8)?;
    if u64::from_le_bytes(sum.try_into().ok()?) != checksum(payload) {
        return None;
    }
    // SAFETY: the payload is byte-for-byte what `Module::serialize` wrote for this engine and
    // module (file name = engine+module hash, checksum verified); wasmtime additionally checks
    // its header for engine compatibility.
    unsafe { Module::deserialize(engine, payload) }.ok()
}
