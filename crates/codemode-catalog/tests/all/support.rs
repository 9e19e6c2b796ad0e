//! Shared fixtures: the public MCP catalogs (`tools/list` results) loaded as tool specs, and the
//! labelled search queries. Also used by `benches/search_quality.rs` through `#[path]`.
#![allow(dead_code)]

use std::path::PathBuf;

use codemode_core::{ToolAnnotations, ToolOrigin, ToolSpec};
use serde_json::Value;

/// The catalog files in a fixed order (the order of the 72/100-tool subsets matters).
pub const SMALL_SET_FILES: &[&str] = &[
    "chrome-devtools",
    "filesystem",
    "git",
    "memory",
    "time",
    "fetch",
    "sequential-thinking",
    "slack-legacy",
    "playwright",
];

/// Directory of the public catalogs: `$CODEMODE_MCP_CATALOGS`, else `data/mcp-catalogs` at the workspace root
/// next to the repository.
pub fn catalogs_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("CODEMODE_MCP_CATALOGS") {
        return PathBuf::from(dir);
    }
    PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"))
        .join("../../data/mcp-catalogs")
}

/// Every catalog file stem, sorted.
pub fn catalog_names() -> Vec<String> {
    let dir = catalogs_dir();
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read the public MCP catalogs at {}: {e}", dir.display()))
        .filter_map(|entry| {
            let name = entry.ok()?.file_name().into_string().ok()?;
            let stem = name.strip_suffix(".json")?.to_owned();
            (stem != "INDEX").then_some(stem)
        })
        .collect();
    names.sort();
    names
}

/// The raw MCP tools of one catalog file.
pub fn raw_tools(name: &str) -> Vec<Value> {
    let path = catalogs_dir().join(format!("{name}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let value: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    value["tools"].as_array().cloned().unwrap_or_else(|| panic!("{}: no tools array", path.display()))
}

/// One MCP tool JSON as a tool spec with the given origin and owner.
pub fn spec_from_mcp(tool: &Value, origin: ToolOrigin, owner: &str) -> ToolSpec {
    let name = tool["name"].as_str().expect("tool name");
    let mut spec = ToolSpec::new(name, origin, owner)
        .description(tool["description"].as_str().unwrap_or_default())
        .parameters(tool.get("inputSchema").cloned().unwrap_or(serde_json::json!({ "type": "object" })));
    if let Some(title) = tool.get("title").and_then(Value::as_str) {
        spec = spec.label(title);
    }
    if let Some(output) = tool.get("outputSchema") {
        spec = spec.output_schema(output.clone());
    }
    if let Some(annotations) = tool.get("annotations") {
        let annotations: ToolAnnotations = serde_json::from_value(annotations.clone()).unwrap_or_default();
        spec = spec.annotations(annotations);
    }
    spec
}

/// One catalog file as tools of `origin`, owned by `owner`.
pub fn load(name: &str, origin: ToolOrigin, owner: &str) -> Vec<ToolSpec> {
    raw_tools(name).iter().map(|t| spec_from_mcp(t, origin, owner)).collect()
}

/// All public catalogs as bundled plugin tools, owner = file stem (677 tools).
pub fn public_plugin_tools() -> Vec<ToolSpec> {
    catalog_names().iter().flat_map(|n| load(n, ToolOrigin::BundledPlugin, n)).collect()
}

/// The catalog of [`public_plugin_tools`], built once per test binary.
pub fn public_catalog() -> &'static codemode_catalog::Catalog {
    static CATALOG: std::sync::OnceLock<codemode_catalog::Catalog> = std::sync::OnceLock::new();
    CATALOG.get_or_init(|| {
        codemode_catalog::Catalog::build(public_plugin_tools(), &codemode_catalog::CatalogOptions::default())
    })
}

/// All public catalogs as MCP tools, server = file stem.
pub fn public_mcp_tools() -> Vec<ToolSpec> {
    catalog_names().iter().flat_map(|n| load(n, ToolOrigin::Mcp, n)).collect()
}

/// The first `n` plugin tools of [`SMALL_SET_FILES`] (72 and 100 are used).
pub fn small_set(n: usize) -> Vec<ToolSpec> {
    let tools: Vec<ToolSpec> =
        SMALL_SET_FILES.iter().flat_map(|f| load(f, ToolOrigin::BundledPlugin, f)).take(n).collect();
    assert_eq!(tools.len(), n, "not enough tools in the small set");
    tools
}

/// `n` plugin tools: the public catalogs repeated with owners `<stem>`, `<stem>-2`, ... until `n`.
pub fn repeated_set(n: usize) -> Vec<ToolSpec> {
    let base: Vec<(String, Value)> = catalog_names()
        .iter()
        .flat_map(|name| raw_tools(name).into_iter().map(move |t| (name.clone(), t)))
        .collect();
    let mut out = Vec::with_capacity(n);
    let mut round = 1;
    while out.len() < n {
        for (name, tool) in &base {
            if out.len() == n {
                break;
            }
            let owner = if round == 1 { name.clone() } else { format!("{name}-{round}") };
            out.push(spec_from_mcp(tool, ToolOrigin::BundledPlugin, &owner));
        }
        round += 1;
    }
    out
}

/// A labelled search query.
pub struct LabelledQuery {
    /// The natural-language query.
    pub query: String,
    /// Ids any of which counts as a hit.
    pub expect: Vec<String>,
}

/// The labelled search set (`tests/data/search_queries.json`).
pub fn labelled_queries() -> Vec<LabelledQuery> {
    let text = include_str!("../data/search_queries.json");
    let value: Value = serde_json::from_str(text).expect("search_queries.json");
    value
        .as_array()
        .expect("array")
        .iter()
        .map(|q| LabelledQuery {
            query: q["query"].as_str().expect("query").to_owned(),
            expect: q["expect"]
                .as_array()
                .expect("expect")
                .iter()
                .map(|v| v.as_str().expect("id").to_owned())
                .collect(),
        })
        .collect()
}

/// Top-1 and top-3 hits of the labelled set over `catalog`, plus the misses (query, top 3 ids).
pub fn hit_rates(catalog: &codemode_catalog::Catalog) -> (usize, usize, usize, Vec<(String, Vec<String>)>) {
    let queries = labelled_queries();
    let (mut top1, mut top3) = (0, 0);
    let mut misses = Vec::new();
    for q in &queries {
        let results: Vec<String> = catalog.search(&q.query, 3).iter().map(|e| e.id.clone()).collect();
        if results.first().is_some_and(|id| q.expect.contains(id)) {
            top1 += 1;
        }
        if results.iter().any(|id| q.expect.contains(id)) {
            top3 += 1;
        } else {
            misses.push((q.query.clone(), results));
        }
    }
    (queries.len(), top1, top3, misses)
}

/// A catalog of `(owner, name, description)` bundled-plugin tools, for the small ranking tests.
pub fn small_catalog(tools: &[(&str, &str, &str)]) -> codemode_catalog::Catalog {
    codemode_catalog::Catalog::build(
        tools
            .iter()
            .map(|&(owner, name, description)| {
                ToolSpec::new(name, ToolOrigin::BundledPlugin, owner).description(description)
            })
            .collect::<Vec<_>>(),
        &codemode_catalog::CatalogOptions::default(),
    )
}

/// The `owner:name` of the top hit of `query` (the id without its origin).
pub fn top_local_id(catalog: &codemode_catalog::Catalog, query: &str) -> String {
    catalog.search(query, 1)[0].id.split(':').skip(1).collect::<Vec<_>>().join(":")
}

/// Asserts that `tool` is in the top 3 for each query over one real public catalog alone.
pub fn in_top3_of_public(catalog: &str, tool: &str, queries: &[&str]) {
    let tools = public_one(catalog);
    for query in queries {
        assert_any_in_top3(tools, catalog, &[tool], query);
    }
}

/// Asserts that one of `tools` is in the top 3 for `query` over one real public catalog alone.
pub fn any_in_top3_of_public(catalog: &str, tools: &[&str], query: &str) {
    assert_any_in_top3(public_one(catalog), catalog, tools, query);
}

/// One real public catalog alone, as bundled plugin tools (each built once per process).
fn public_one(catalog: &str) -> &'static codemode_catalog::Catalog {
    static CATALOGS: std::sync::OnceLock<std::collections::HashMap<String, codemode_catalog::Catalog>> =
        std::sync::OnceLock::new();
    let catalogs = CATALOGS.get_or_init(|| {
        catalog_names()
            .into_iter()
            .map(|name| {
                let tools = load(&name, ToolOrigin::BundledPlugin, &name);
                (name, codemode_catalog::Catalog::build(tools, &codemode_catalog::CatalogOptions::default()))
            })
            .collect()
    });
    &catalogs[catalog]
}

/// Asserts that one of `tools` (of the public catalog `name`) is in the top 3 of `catalog` for
/// `query`.
fn assert_any_in_top3(catalog: &codemode_catalog::Catalog, name: &str, tools: &[&str], query: &str) {
    let hits: Vec<&str> = catalog.search(query, 3).iter().map(|e| e.id.as_str()).collect();
    assert!(
        tools.iter().any(|t| hits.contains(&format!("openclaw:{name}:{t}").as_str())),
        "{query}: {hits:?}"
    );
}
