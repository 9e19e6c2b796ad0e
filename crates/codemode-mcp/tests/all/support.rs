//! Shared helpers: the public MCP catalogs and the TypeScript parser oracle.

use std::path::PathBuf;

use codemode_mcp::McpServer;
use oxc_allocator::Allocator;
use oxc_parser::Parser;
use oxc_span::SourceType;
use serde_json::Value;

/// `data/mcp-catalogs` relative to the workspace (or `$MCP_CATALOGS`).
pub fn catalog_dir() -> PathBuf {
    if let Ok(dir) = std::env::var("MCP_CATALOGS") {
        return PathBuf::from(dir);
    }
    PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"))
        .join("../../data/mcp-catalogs")
}

/// Every public catalog as `(file stem, server)`, sorted by file name; the server is named after
/// the file stem (`chrome-devtools`), as a host configuration would name it.
pub fn catalogs() -> Vec<(String, McpServer)> {
    let dir = catalog_dir();
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|entry| entry.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json") && p.file_stem().is_some_and(|s| s != "INDEX"))
        .collect();
    paths.sort();
    assert!(paths.len() >= 16, "expected the public catalogs in {}", dir.display());
    paths
        .into_iter()
        .map(|path| {
            let stem = path.file_stem().and_then(|s| s.to_str()).expect("stem").to_owned();
            let value: Value = serde_json::from_slice(&std::fs::read(&path).expect("read")).expect("json");
            let server = McpServer::from_tools_list(stem.clone(), &value);
            assert_eq!(
                server.tools.len(),
                value["tools"].as_array().expect("tools").len(),
                "{stem}: lenient parse lost tools"
            );
            (stem, server)
        })
        .collect()
}

/// Parses `source` as a `.d.ts` file with oxc and returns its diagnostics (empty = valid).
pub fn dts_errors(source: &str) -> Vec<String> {
    let allocator = Allocator::default();
    let ret = Parser::new(&allocator, source, SourceType::d_ts()).parse();
    let mut errors: Vec<String> = ret.diagnostics.iter().map(|d| d.to_string()).collect();
    if ret.panicked && errors.is_empty() {
        errors.push("parser panicked".to_owned());
    }
    errors
}

/// Asserts that `source` parses as TypeScript declarations without any diagnostic.
#[track_caller]
pub fn assert_valid_dts(path: &str, source: &str) {
    let errors = dts_errors(source);
    assert!(errors.is_empty(), "{path} is not valid TypeScript: {errors:?}\n{source}");
}

/// Spans of the comments of a `.d.ts` file, and the number of top-level statements.
pub fn comments_and_statements(source: &str) -> (Vec<(usize, usize)>, usize) {
    let allocator = Allocator::default();
    let ret = Parser::new(&allocator, source, SourceType::d_ts()).parse();
    let spans = ret.program.comments.iter().map(|c| (c.span.start as usize, c.span.end as usize)).collect();
    (spans, ret.program.body.len())
}
