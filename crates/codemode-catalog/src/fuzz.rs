//! Fuzz checks (called by the `fuzz/` targets and by a stable-Rust test over pseudo-random inputs).

use std::sync::OnceLock;

use codemode_core::{ToolOrigin, ToolSpec};
use serde_json::json;

use crate::{Catalog, CatalogOptions};

fn fixture() -> &'static Catalog {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    CATALOG.get_or_init(|| {
        let mut tools = Vec::new();
        let names = [
            "create_issue",
            "list_issues",
            "get-feature-flag",
            "browser_navigate",
            "readFile",
            "HTTPServer.start",
            "search_code",
            "2fa_verify",
            "delete",
            "web_search",
            "message",
        ];
        for (i, name) in names.iter().enumerate() {
            let origin = match i % 4 {
                0 => ToolOrigin::Core,
                1 => ToolOrigin::BundledPlugin,
                2 => ToolOrigin::Mcp,
                _ => ToolOrigin::Client,
            };
            let owner = if origin == ToolOrigin::Core { "core" } else { "owner" };
            tools.push(
                ToolSpec::new(*name, origin, owner)
                    .description(format!("Tool number {i}: {name} does things with issues and files"))
                    .parameters(json!({ "type": "object", "properties": { "query": { "type": "string" } } })),
            );
        }
        Catalog::build(tools, &CatalogOptions::default())
    })
}

/// Runs search, describe and the id resolver on arbitrary input and checks their invariants:
/// no panic, results within the limit, no MCP entry, no duplicates, deterministic.
pub fn check_search(data: &[u8]) {
    let catalog = fixture();
    let query = String::from_utf8_lossy(data);
    let limit = data.first().map_or(8, |b| usize::from(*b % 60));
    let first = catalog.search(&query, limit);
    assert!(first.len() <= limit);
    assert!(first.iter().all(|e| e.source != codemode_core::ToolSource::Mcp));
    let mut ids: Vec<&str> = first.iter().map(|e| e.id.as_str()).collect();
    let again: Vec<&str> = catalog.search(&query, limit).iter().map(|e| e.id.as_str()).collect();
    assert_eq!(ids, again, "search is not deterministic");
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), first.len(), "duplicate search results");
    if let Err(error) = catalog.describe(&query) {
        let message = error.to_string();
        assert!(message.chars().count() < 2_000, "error message too long");
    }
}
