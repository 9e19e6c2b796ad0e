//! `cargo xtask package`: every publishable crate is packaged and built from its package, in
//! dependency order, offline; `cargo xtask semver`: `cargo semver-checks` against the last release.
//!
//! Packaging proves what a downstream project gets from crates.io: the manifests have real metadata,
//! path dependencies carry versions, the committed guest `.wasm` is inside codemode-sandbox's package
//! (and the WordNet table inside codemode-catalog's), and building a packaged crate needs no network
//! and no guest toolchain.

use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::project_root;

/// The publishable crates, in dependency order (each depends only on crates before it).
pub const PUBLISHED: &[&str] = &[
    "codemode-core",
    "codemode-catalog",
    "codemode-ts",
    "codemode-mcp",
    "codemode-sandbox",
    "codemode-bridge",
    "codemode",
    "codemode-cli",
];

/// Files a package must contain, beyond `src/`.
const REQUIRED_FILES: &[(&str, &str)] = &[
    ("codemode-catalog", "src/search/wordnet.txt"),
    ("codemode-sandbox", "wasm/codemode_guest.wasm"),
    ("codemode-sandbox", "README.md"),
    ("codemode-bridge", "src/prelude.js"),
];

/// The workspace's own profile settings, so the packaged builds reuse the workspace's artifacts of
/// the heavy dependencies instead of compiling them again unoptimized.
const PROFILE: &[&str] = &["profile.dev.package.\"*\".opt-level=2", "profile.dev.debug=\"line-tables-only\""];

pub fn run(args: &[String]) -> Result<()> {
    if !args.is_empty() {
        bail!("usage: cargo xtask package");
    }
    let root = project_root();
    for name in PUBLISHED {
        let out = cargo().current_dir(&root).args(["package", "--list", "--locked", "-p", name]).output()?;
        if !out.status.success() {
            bail!("cargo package --list -p {name} failed:\n{}", String::from_utf8_lossy(&out.stderr));
        }
        let files = String::from_utf8(out.stdout).context("file list is UTF-8")?;
        let files: Vec<&str> = files.lines().collect();
        for required in ["Cargo.toml", "README.md", "src/lib.rs"] {
            if !files.contains(&required) {
                bail!("the package of {name} lacks {required}");
            }
        }
        for (_, file) in REQUIRED_FILES.iter().filter(|(krate, _)| krate == name) {
            if !files.contains(file) {
                bail!("the package of {name} lacks {file}");
            }
        }
        println!("{name}: {} files", files.len());
    }
    forget_unpacked_packages()?;
    forget_builds_of_packages(&root)?;
    // One invocation packages them all in dependency order (unpublished siblings resolve from the
    // packages just made) and builds each from its unpacked package, offline.
    let mut package = cargo();
    package.current_dir(&root).args(["package", "--locked", "--offline", "--allow-dirty"]);
    for name in PUBLISHED {
        package.args(["-p", name]);
    }
    for setting in PROFILE {
        package.args(["--config", setting]);
    }
    let status = package.status()?;
    if !status.success() {
        bail!("cargo package failed");
    }
    println!("all {} crates package and build from their packages", PUBLISHED.len());
    Ok(())
}

/// `cargo xtask semver [--baseline-version X.Y.Z]`: API compatibility of every published crate against
/// its last release on crates.io (installs `cargo-semver-checks` when missing). For release time.
pub fn semver(args: &[String]) -> Result<()> {
    let have =
        Command::new("cargo").args(["semver-checks", "--version"]).output().is_ok_and(|o| o.status.success());
    if !have {
        let status = Command::new("cargo").args(["install", "--locked", "cargo-semver-checks"]).status()?;
        if !status.success() {
            bail!("could not install cargo-semver-checks");
        }
    }
    let mut check = Command::new("cargo");
    check.current_dir(project_root()).args(["semver-checks", "check-release"]);
    for name in PUBLISHED {
        check.args(["-p", name]);
    }
    check.args(args);
    let status = check.status()?;
    if !status.success() {
        bail!("cargo semver-checks found breaking changes (bump the minor version, or fix them)");
    }
    Ok(())
}

/// Cargo unpacks the packages of the local registry it builds the unpublished siblings from into
/// `$CARGO_HOME/registry/src/-<hash>/<crate>-<version>` and never unpacks a name and version again,
/// so a second run with changed sources (same version) would build the first run's sources. Remove
/// those unpacked copies (and their cached `.crate` files) of our crates before packaging.
fn forget_unpacked_packages() -> Result<()> {
    let home = std::env::var_os("CARGO_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".cargo")))
        .context("neither CARGO_HOME nor HOME is set")?;
    for kind in ["src", "cache"] {
        let Ok(registries) = std::fs::read_dir(home.join("registry").join(kind)) else { continue };
        for registry in registries.flatten() {
            // Local registries have no host name in their directory name: `-<hash>`.
            if !registry.file_name().to_string_lossy().starts_with('-') {
                continue;
            }
            for entry in std::fs::read_dir(registry.path())?.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                let ours = PUBLISHED.iter().any(|krate| {
                    name.strip_prefix(krate)
                        .and_then(|rest| rest.strip_prefix('-'))
                        .is_some_and(|version| version.starts_with(|c: char| c.is_ascii_digit()))
                });
                if ours {
                    let path = entry.path();
                    if path.is_dir() { std::fs::remove_dir_all(&path)? } else { std::fs::remove_file(&path)? }
                }
            }
        }
    }
    Ok(())
}

/// Cargo takes a registry package's build as fresh by its name, version and source alone (registry
/// sources are meant to be immutable), so the build of a previous run's package of one of our crates
/// (same version, older sources) would be linked again. Forget those builds: each unit whose dep-info
/// names a file under a local registry (`registry/src/-<hash>/`) loses its fingerprint and is
/// compiled again from the package just made. The workspace's own builds of our crates are kept.
fn forget_builds_of_packages(root: &std::path::Path) -> Result<()> {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let debug = target.join("debug");
    let Ok(entries) = std::fs::read_dir(debug.join("deps")) else { return Ok(()) };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(unit) = name.strip_suffix(".d") else { continue };
        let Some((krate, hash)) = unit.rsplit_once('-') else { continue };
        let package = krate.replace('_', "-");
        if !PUBLISHED.contains(&package.as_str()) {
            continue;
        }
        let info = std::fs::read_to_string(entry.path()).unwrap_or_default();
        if info.contains("/registry/src/-") {
            let fingerprint = debug.join(".fingerprint").join(format!("{package}-{hash}"));
            if fingerprint.is_dir() {
                std::fs::remove_dir_all(&fingerprint)?;
            }
        }
    }
    Ok(())
}

fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}
