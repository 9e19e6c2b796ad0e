//! ARCHITECTURE.md's dependency invariants and the `unsafe` rule, as tests (`cargo test -p xtask`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::project_root;

/// Layer of every workspace crate (ARCHITECTURE.md, "Layers").
const LAYERS: &[(&str, u8)] = &[
    ("codemode-core", 0),
    ("codemode-catalog", 1),
    ("codemode-ts", 1),
    ("codemode-mcp", 1),
    ("codemode-bridge", 1),
    ("codemode-sandbox", 1),
    ("codemode", 2),
    ("codemode-cli", 3),
    ("codemode-python", 3),
];

/// The only edges between two crates of one layer: the bridge owns the host side of the guest ABI.
const SAME_LAYER_EDGES: &[(&str, &str)] = &[("codemode-bridge", "codemode-sandbox")];

/// The only crates that may name these dependencies (a prefix matches `oxc_*` too).
const OWNERS: &[(&str, &[&str])] = &[
    ("wasmtime", &["codemode-sandbox"]),
    ("oxc", &["codemode-ts"]),
    ("rmcp", &["codemode-cli"]),
    ("clap", &["codemode-cli"]),
    ("pyo3", &["codemode-python"]),
    ("tokio", &["codemode", "codemode-cli", "codemode-python"]),
];

/// A member's manifest: its name and the dependencies of its normal (non-dev, non-build)
/// `[dependencies]` tables, target-specific ones included.
struct Manifest {
    name: String,
    deps: Vec<String>,
    text: String,
    /// The member's directory (set by [`manifests`]).
    dir: PathBuf,
}

fn manifests() -> Vec<Manifest> {
    let root = project_root();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root.join("crates"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("Cargo.toml").is_file())
        .collect();
    dirs.push(root.join("bindings/python"));
    dirs.sort();
    dirs.into_iter()
        .map(|dir| Manifest {
            dir: dir.clone(),
            ..parse(&std::fs::read_to_string(dir.join("Cargo.toml")).unwrap())
        })
        .collect()
}

/// A line-based reading of a manifest: enough for the flat `name.workspace = true` /
/// `name = { ... }` lines this workspace uses.
fn parse(text: &str) -> Manifest {
    let mut name = String::new();
    let mut deps = Vec::new();
    let mut section = String::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line.trim_matches(|c| c == '[' || c == ']').to_owned();
            continue;
        }
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let key = line.split(['=', '.', ' ']).next().unwrap_or_default().trim_matches('"').to_owned();
        if section == "package" && key == "name" {
            name = line.split('"').nth(1).unwrap_or_default().to_owned();
        }
        if section == "dependencies" || (section.starts_with("target.") && section.ends_with(".dependencies"))
        {
            deps.push(key);
        }
    }
    Manifest { name, deps, text: text.to_owned(), dir: PathBuf::new() }
}

#[test]
fn dependencies_point_down_the_layers() {
    let layers: BTreeMap<&str, u8> = LAYERS.iter().copied().collect();
    let mut problems = Vec::new();
    let manifests = manifests();
    for m in &manifests {
        let Some(&from) = layers.get(m.name.as_str()) else {
            problems.push(format!("{} has no layer in ARCHITECTURE.md (add it to LAYERS)", m.name));
            continue;
        };
        for dep in &m.deps {
            let Some(&to) = layers.get(dep.as_str()) else { continue };
            let same_layer_allowed = SAME_LAYER_EDGES.contains(&(m.name.as_str(), dep.as_str()));
            if to > from || (to == from && !same_layer_allowed) {
                problems.push(format!("{} (L{from}) depends on {dep} (L{to})", m.name));
            }
        }
    }
    // Above L2 a crate goes through the runtime: L3 names no L1 crate.
    for m in manifests.iter().filter(|m| layers.get(m.name.as_str()) == Some(&3)) {
        for dep in m.deps.iter().filter(|d| layers.get(d.as_str()) == Some(&1)) {
            problems.push(format!("{} (L3) depends on {dep} (L1) instead of the runtime", m.name));
        }
    }
    assert!(problems.is_empty(), "layer rule broken:\n{}", problems.join("\n"));
}

#[test]
fn only_the_owning_crate_names_a_heavy_dependency() {
    let mut problems = Vec::new();
    for m in manifests() {
        for dep in &m.deps {
            for (owned, owners) in OWNERS {
                if dep.starts_with(owned) && !owners.contains(&m.name.as_str()) {
                    problems.push(format!("{} depends on {dep}; only {owners:?} may", m.name));
                }
            }
        }
    }
    assert!(problems.is_empty(), "dependency ownership broken:\n{}", problems.join("\n"));
}

#[test]
fn every_crate_takes_the_workspace_lints() {
    let mut problems = Vec::new();
    for m in manifests() {
        if !m.text.contains("[lints]\nworkspace = true") {
            problems.push(m.name);
        }
    }
    let guest =
        std::fs::read_to_string(project_root().join("crates/codemode-sandbox/guest/Cargo.toml")).unwrap();
    if !guest.contains("[lints.rust]") {
        problems.push("codemode-guest (its own [lints.rust], outside the workspace)".into());
    }
    assert!(problems.is_empty(), "crates without the lint posture: {problems:?}");
}

/// Every `unsafe` block and `unsafe impl` in library code (the guest included) is preceded by a
/// `// SAFETY:` comment saying why it holds (on one of the five lines before it, or the same line).
#[test]
fn every_unsafe_block_says_why_it_is_sound() {
    let root = project_root();
    let mut files = Vec::new();
    for krate in std::fs::read_dir(root.join("crates")).unwrap().flatten() {
        rust_files(&krate.path().join("src"), &mut files);
    }
    rust_files(&root.join("crates/codemode-sandbox/guest/src"), &mut files);
    rust_files(&root.join("bindings/python/src"), &mut files);
    assert!(files.len() > 20, "the walk found the sources");
    let mut offenders = Vec::new();
    let mut blocks = 0;
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let code = line.split("//").next().unwrap_or_default();
            if !(code.contains("unsafe {") || code.contains("unsafe impl")) {
                continue;
            }
            blocks += 1;
            let said = lines[i.saturating_sub(5)..=i].iter().any(|l| l.contains("// SAFETY:"));
            if !said {
                offenders.push(format!("{}:{}", file.strip_prefix(&root).unwrap_or(file).display(), i + 1));
            }
        }
    }
    assert!(blocks > 10, "the scan found the unsafe blocks ({blocks})");
    assert!(offenders.is_empty(), "unsafe without a `// SAFETY:` comment:\n{}", offenders.join("\n"));
}

/// A glob re-export of another crate (`pub use codemode_core::*;`) gives every item of that crate
/// a second public path here, and grows this crate's API whenever that one grows: each crate
/// re-exports what it means to, by name (ARCHITECTURE.md, the API Boundary notes).
#[test]
fn no_crate_glob_re_exports_another_crate() {
    let mut problems = Vec::new();
    let mut scanned = 0;
    for m in manifests() {
        let externs: Vec<String> = m.deps.iter().map(|d| d.replace('-', "_")).collect();
        let mut files = Vec::new();
        rust_files(&m.dir.join("src"), &mut files);
        for file in &files {
            scanned += 1;
            let text = std::fs::read_to_string(file).unwrap();
            for (line, path) in glob_re_exports(&text, &externs) {
                problems.push(format!(
                    "{}:{line}: pub use {path}::*",
                    file.strip_prefix(project_root()).unwrap_or(file).display()
                ));
            }
        }
    }
    assert!(scanned > 50, "the walk found the sources ({scanned})");
    assert!(
        problems.is_empty(),
        "glob re-exports of another crate (list the items instead):\n{}",
        problems.join("\n")
    );
}

/// The `pub use <extern crate>...::*` lines of `text` (1-based line, path), for the crates `externs`
/// (or any `::`-rooted path).
fn glob_re_exports(text: &str, externs: &[String]) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or_default().trim();
        let Some(rest) = code.strip_prefix("pub use ") else { continue };
        let Some(path) = rest.trim_end_matches(';').trim().strip_suffix("::*") else { continue };
        let path = path.trim_start_matches("::");
        let first = path.split("::").next().unwrap_or_default();
        if rest.starts_with("::") || externs.iter().any(|e| e == first) {
            found.push((i + 1, path.to_owned()));
        }
    }
    found
}

#[test]
fn the_glob_re_export_check_finds_one() {
    let externs = vec!["codemode_core".to_owned(), "serde".to_owned()];
    let text = "pub use codemode_core::*;\npub use config::*;\n// pub use serde::*;\npub use ::serde::de::*;\npub use codemode_core::{A, B};\n";
    assert_eq!(
        glob_re_exports(text, &externs),
        [(1, "codemode_core".to_owned()), (4, "serde::de".to_owned())]
    );
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}
