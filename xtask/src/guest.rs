//! `cargo xtask guest [--check]`: build the QuickJS guest of codemode-sandbox.
//!
//! Steps:
//! 1. Copy `rquickjs-sys =0.14.0` from the cargo registry into the guest's target dir and patch
//!    quickjs-ng so that its stack check stays on under WASI when `QJS_WASI_STACK_CHECK` is
//!    defined (upstream forces "no limit" there; with the check, deep recursion is a catchable
//!    `RangeError` instead of a wasm stack-exhaustion trap), and so that an out-of-memory error
//!    is a real `InternalError: out of memory` even at the exact heap limit (upstream throws
//!    `null` when it cannot allocate the error object; the patch lends the error a little room
//!    above the limit for the time it takes to build it). Nothing is downloaded; the copy is a
//!    build artifact, never committed.
//! 2. `cargo build --release` in `crates/codemode-sandbox/guest` with the Debian clang-19 /
//!    wasi-libc toolchain, the patched crate wired in with `--config patch...`, path prefixes
//!    remapped (Rust and C) so the bytes do not depend on where the repository lives.
//! 3. Check the module with wasmparser: imports equal [`IMPORT_ALLOWLIST`], exactly
//!    [`EXPECTED_MUTABLE_GLOBALS`] mutable globals (the shadow stack pointer, back at its initial
//!    value whenever an export returns, which is what makes memory-only snapshots sound), and
//!    every export the host calls is present.
//! 4. Copy it to `crates/codemode-sandbox/wasm/codemode_guest.wasm` (committed), or with
//!    `--check`, fail if the committed file differs.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail, ensure};

use crate::project_root;

/// The guest's imports and the exports the host calls: the host's own lists
/// (`crates/codemode-sandbox/src/abi_names.rs`); the cell wrapper for a tidy test.
#[path = "../../crates/codemode-sandbox/src/abi_names.rs"]
#[allow(dead_code)] // the status codes are the guest's and the host's, not xtask's
pub(crate) mod abi_names;
use abi_names::{GUEST_EXPORTS, IMPORT_ALLOWLIST};

/// Mutable globals allowed in the module: only `__stack_pointer`.
const EXPECTED_MUTABLE_GLOBALS: usize = 1;

/// Shadow stack (in linear memory) for the C and Rust code of the guest. QuickJS's own stack
/// limit is set by the host below this (see `codemode-sandbox`'s `GUEST_SHADOW_STACK_BYTES`).
pub const SHADOW_STACK_BYTES: usize = 4 << 20;

const RQUICKJS_SYS: &str = "rquickjs-sys-0.14.0";

/// `(from, to)` replacements applied to `quickjs/quickjs.c`; each must match exactly once.
const QUICKJS_PATCHES: &[(&str, &str)] = &[
    (
        "#ifdef __wasi__\n    rt->stack_size = 0;\n#endif",
        "#if defined(__wasi__) && !defined(QJS_WASI_STACK_CHECK)\n    rt->stack_size = 0;\n#endif",
    ),
    (
        "#if defined(__wasi__)\n    rt->stack_limit = 0; /* no limit */\n#else",
        "#if defined(__wasi__) && !defined(QJS_WASI_STACK_CHECK)\n    rt->stack_limit = 0; /* no limit */\n#else",
    ),
    // Out of memory at the exact limit: without room for the error object QuickJS throws `null`.
    // The object is small (64 KiB of room is plenty) and the host's linear-memory cap sits well
    // above the heap limit.
    (
        "    if (!rt->in_out_of_memory) {\n        rt->in_out_of_memory = true;\n        JS_ThrowInternalError(ctx, \"out of memory\");\n        rt->in_out_of_memory = false;\n    }",
        "    if (!rt->in_out_of_memory) {\n        size_t limit = rt->malloc_state.malloc_limit;\n        rt->in_out_of_memory = true;\n        if (limit != 0)\n            rt->malloc_state.malloc_limit = limit + 64 * 1024;\n        JS_ThrowInternalError(ctx, \"out of memory\");\n        rt->malloc_state.malloc_limit = limit;\n        rt->in_out_of_memory = false;\n    }",
    ),
];

pub fn run(args: &[String]) -> Result<()> {
    let check = match args {
        [] => false,
        [a] if a == "--check" => true,
        _ => bail!("usage: cargo xtask guest [--check]"),
    };
    let root = project_root();
    let guest_dir = root.join("crates/codemode-sandbox/guest");
    let committed = root.join("crates/codemode-sandbox/wasm/codemode_guest.wasm");
    let built = build(&root, &guest_dir)?;
    let bytes = std::fs::read(&built).with_context(|| built.display().to_string())?;
    verify(&bytes)?;
    if check {
        let old = std::fs::read(&committed)
            .with_context(|| format!("{} is missing: run `cargo xtask guest`", committed.display()))?;
        ensure!(
            old == bytes,
            "{} differs from what the sources build ({} vs {} bytes): run `cargo xtask guest` and commit",
            committed.display(),
            old.len(),
            bytes.len()
        );
        println!("guest: {} is up to date ({} bytes)", committed.display(), bytes.len());
    } else {
        std::fs::create_dir_all(committed.parent().expect("has a parent"))?;
        std::fs::write(&committed, &bytes)?;
        println!("guest: wrote {} ({} bytes)", committed.display(), bytes.len());
    }
    Ok(())
}

fn cargo_home() -> PathBuf {
    std::env::var_os("CARGO_HOME").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(std::env::var_os("HOME").unwrap_or_else(|| "/root".into())).join(".cargo")
    })
}

/// Find `rquickjs-sys-0.14.0` in the registry, fetching it with cargo if needed.
fn find_rquickjs_sys(guest_dir: &Path) -> Result<PathBuf> {
    let find = || -> Option<PathBuf> {
        let src = cargo_home().join("registry/src");
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(src).ok()?.flatten().map(|e| e.path()).collect();
        dirs.sort();
        dirs.into_iter().map(|d| d.join(RQUICKJS_SYS)).find(|p| p.join("Cargo.toml").is_file())
    };
    if let Some(p) = find() {
        return Ok(p);
    }
    let st = Command::new("cargo").arg("fetch").current_dir(guest_dir).status()?;
    ensure!(st.success(), "cargo fetch failed in {}", guest_dir.display());
    find().with_context(|| format!("{RQUICKJS_SYS} not found in the cargo registry"))
}

fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        if entry.file_type()?.is_dir() {
            copy_dir(&src, &dst)?;
        } else {
            std::fs::copy(&src, &dst)?;
        }
    }
    Ok(())
}

/// A patched copy of rquickjs-sys under the guest's target dir.
fn patched_rquickjs_sys(guest_dir: &Path) -> Result<PathBuf> {
    let registry_copy = find_rquickjs_sys(guest_dir)?;
    let dst = guest_dir.join("target/patched").join(RQUICKJS_SYS);
    if dst.exists() {
        std::fs::remove_dir_all(&dst)?;
    }
    copy_dir(&registry_copy, &dst)?;
    let file = dst.join("quickjs/quickjs.c");
    let mut text = std::fs::read_to_string(&file)?;
    for (from, to) in QUICKJS_PATCHES {
        ensure!(
            text.matches(from).count() == 1,
            "quickjs patch does not apply to {}: {from:?}",
            file.display()
        );
        text = text.replace(from, to);
    }
    std::fs::write(&file, text)?;
    Ok(dst)
}

fn build(root: &Path, guest_dir: &Path) -> Result<PathBuf> {
    let patched = patched_rquickjs_sys(guest_dir)?;
    let root_s = root.display().to_string();
    let home_s = cargo_home().display().to_string();
    let rustflags = [
        format!("--remap-path-prefix={root_s}=/codemode"),
        format!("--remap-path-prefix={home_s}=/cargo"),
        format!("-Clink-arg=-zstack-size={SHADOW_STACK_BYTES}"),
    ]
    .join("\x1f");
    let cflags = format!(
        "-nostdlibinc -isystem /usr/include/wasm32-wasi -DQJS_WASI_STACK_CHECK \
         -ffile-prefix-map={root_s}=/codemode -ffile-prefix-map={home_s}=/cargo"
    );
    let patch = format!("patch.crates-io.rquickjs-sys.path={:?}", patched.display().to_string());
    let status = Command::new("cargo")
        .args(["build", "--release", "--target", "wasm32-wasip1", "--config", &patch])
        .current_dir(guest_dir)
        .env("CARGO_ENCODED_RUSTFLAGS", rustflags)
        .env("CFLAGS_wasm32_wasip1", cflags)
        .env("RQUICKJS_SYS_NO_WASI_SDK", "1")
        .env("CC_wasm32_wasip1", "clang-19")
        .env("AR_wasm32_wasip1", "llvm-ar-19")
        .env("CARGO_TARGET_DIR", guest_dir.join("target"))
        .env("SOURCE_DATE_EPOCH", "0")
        .status()
        .context("running cargo for the guest")?;
    ensure!(status.success(), "guest build failed");
    Ok(guest_dir.join("target/wasm32-wasip1/release/codemode_guest.wasm"))
}

/// Check imports, mutable globals and exports.
pub fn verify(bytes: &[u8]) -> Result<()> {
    use wasmparser::{Parser, Payload, TypeRef};
    wasmparser::Validator::new().validate_all(bytes).context("guest module does not validate")?;
    let mut imports = Vec::new();
    let mut exports = Vec::new();
    let mut mutable_globals = 0usize;
    for payload in Parser::new(0).parse_all(bytes) {
        match payload? {
            Payload::ImportSection(reader) => {
                for imp in reader.into_imports() {
                    let imp = imp?;
                    if let TypeRef::Global(g) = imp.ty
                        && g.mutable
                    {
                        mutable_globals += 1;
                    }
                    imports.push((imp.module.to_owned(), imp.name.to_owned()));
                }
            }
            Payload::GlobalSection(reader) => {
                for g in reader {
                    if g?.ty.mutable {
                        mutable_globals += 1;
                    }
                }
            }
            Payload::ExportSection(reader) => {
                for e in reader {
                    exports.push(e?.name.to_owned());
                }
            }
            _ => {}
        }
    }
    imports.sort();
    imports.dedup();
    let mut allow: Vec<(String, String)> =
        IMPORT_ALLOWLIST.iter().map(|(m, n)| ((*m).to_owned(), (*n).to_owned())).collect();
    allow.sort();
    ensure!(
        imports == allow,
        "guest imports differ from the allowlist:\n  got:   {imports:?}\n  allow: {allow:?}"
    );
    ensure!(
        mutable_globals == EXPECTED_MUTABLE_GLOBALS,
        "guest has {mutable_globals} mutable globals, expected {EXPECTED_MUTABLE_GLOBALS} (__stack_pointer): \
         snapshots copy linear memory only"
    );
    for name in std::iter::once(&"memory").chain(&GUEST_EXPORTS) {
        ensure!(exports.iter().any(|e| e == name), "guest does not export {name}");
    }
    Ok(())
}
