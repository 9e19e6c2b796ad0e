//! Build a catalog from MCP `tools/list` files (as one plugin per file) and search it.
//!
//! ```sh
//! cargo run -p codemode-catalog --example search -- "list the commits of a repository" data/mcp-catalogs/*.json
//! ```
//!
//! Prints the top 5 hits; `SEARCH_LIMIT=20` prints more.
use codemode_catalog::{Catalog, CatalogOptions, QuickIndexOptions};
use codemode_core::{ToolOrigin, ToolSpec};
use serde_json::Value;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let query = args.next().ok_or("usage: search <query> <tools/list JSON file>...")?;
    let mut tools = Vec::new();
    for path in args {
        let listing: Value = serde_json::from_str(&std::fs::read_to_string(&path)?)?;
        let owner =
            std::path::Path::new(&path).file_stem().and_then(|s| s.to_str()).unwrap_or("plugin").to_owned();
        for tool in listing.get("tools").and_then(Value::as_array).into_iter().flatten() {
            let Some(name) = tool.get("name").and_then(Value::as_str) else { continue };
            let mut spec = ToolSpec::new(name, ToolOrigin::ExternalPlugin, owner.as_str())
                .description(tool.get("description").and_then(Value::as_str).unwrap_or_default());
            if let Some(schema) = tool.get("inputSchema") {
                spec = spec.parameters(schema.clone());
            }
            tools.push(spec);
        }
    }
    let catalog = Catalog::build(tools, &CatalogOptions::default());
    println!(
        "{} tools; quick index is {} chars",
        catalog.len(),
        catalog.quick_index(&QuickIndexOptions::default()).len()
    );
    let limit = std::env::var("SEARCH_LIMIT").ok().and_then(|v| v.parse().ok()).unwrap_or(5);
    for (rank, hit) in catalog.search_hits(&query, limit).iter().enumerate() {
        let summary = hit.entry.description.lines().next().unwrap_or_default();
        println!("{}. {} ({:.3}; {})  {summary}", rank + 1, hit.entry.id, hit.score, hit.matched);
    }
    Ok(())
}
