//! Every fixture cell strips without diagnostics, keeps its lines, and matches its snapshot (a
//! fixture expecting `"rejected"` is rejected, and its message matches the snapshot).
//! `cargo xtask ts-oracle` evaluates the same fixtures against `typescript`'s `transpileModule`.

use std::path::PathBuf;

use crate::ts;

fn fixtures() -> Vec<(String, String)> {
    let dir =
        PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo")).join("tests/fixtures");
    let mut out: Vec<(String, String)> = std::fs::read_dir(&dir)
        .expect("fixtures dir")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "ts"))
        .map(|p| {
            let name = p.file_stem().expect("stem").to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&p).expect("fixture"))
        })
        .collect();
    out.sort();
    out
}

#[test]
fn there_are_at_least_80_fixtures_each_with_an_expected_value() {
    let all = fixtures();
    assert!(all.len() >= 80, "only {} fixtures", all.len());
    for (name, source) in &all {
        assert!(source.starts_with("// expect: "), "{name} lacks its `// expect: <json>` header");
    }
}

/// A fixture whose expected value is `"rejected"`: tsc emits it, the engine refuses it.
fn expects_rejection(source: &str) -> bool {
    source.lines().next() == Some("// expect: \"rejected\"")
}

#[test]
fn fixtures_strip_to_their_snapshots() {
    for (name, source) in fixtures() {
        let out = ts(&source);
        if expects_rejection(&source) {
            assert!(!out.is_ok(), "{name}: expected to be rejected");
            insta::assert_snapshot!(name, out.error_message());
            continue;
        }
        assert!(out.is_ok(), "{name}: {}", out.error_message());
        assert_eq!(out.code.lines().count(), source.lines().count(), "{name}: line count changed");
        insta::assert_snapshot!(name, out.code);
    }
}

#[test]
fn fixtures_are_valid_javascript_after_stripping() {
    // The stripped output must itself pass the JavaScript path unchanged.
    for (name, source) in fixtures().into_iter().filter(|(_, s)| !expects_rejection(s)) {
        let stripped = ts(&source).code;
        let again = crate::js(&stripped);
        assert!(again.is_ok(), "{name}: stripped output is not JavaScript: {}", again.error_message());
        assert_eq!(again.code, stripped, "{name}");
    }
}
