//! Search ranking, limits, determinism and the labelled quality contract.

use codemode_catalog::{Catalog, CatalogOptions};
use codemode_core::{CodeModeConfig, ToolOrigin, ToolSpec};

use crate::support::{hit_rates, labelled_queries, public_catalog, public_mcp_tools};

fn public() -> &'static Catalog {
    public_catalog()
}

#[test]
fn labelled_ids_exist() {
    let catalog = public();
    for q in labelled_queries() {
        for id in &q.expect {
            assert!(catalog.get(id).is_some(), "label {id:?} of {:?} is not in the catalog", q.query);
        }
    }
}

#[test]
fn labelled_set_top3_at_least_90_percent() {
    let catalog = public();
    let (total, top1, top3, misses) = hit_rates(catalog);
    assert!(total >= 60, "the labelled set must have at least 60 queries, has {total}");
    let rate = top3 as f64 / total as f64;
    assert!(rate >= 0.9, "top-3 {top3}/{total} ({rate:.3}), top-1 {top1}; misses: {misses:#?}");
}

fn ids<'a>(results: &[&'a codemode_core::ToolCatalogEntry]) -> Vec<&'a str> {
    results.iter().map(|e| e.id.as_str()).collect()
}

fn small() -> Catalog {
    Catalog::build(
        vec![
            ToolSpec::new("create_issue", ToolOrigin::BundledPlugin, "github")
                .description("Create a new issue"),
            ToolSpec::new("list_issues", ToolOrigin::BundledPlugin, "github").description("List issues"),
            ToolSpec::new("getFeatureFlag", ToolOrigin::BundledPlugin, "flags").description("Read one flag"),
            ToolSpec::new("browser-navigate", ToolOrigin::BundledPlugin, "browser")
                .description("Go to a URL"),
            ToolSpec::new("fs.readFile", ToolOrigin::BundledPlugin, "fs")
                .description("Read a file from disk"),
            ToolSpec::new("HTTPServerStart", ToolOrigin::BundledPlugin, "web").description("Boot it"),
            ToolSpec::core("message").description("Send a chat message; mentions issues in passing"),
            ToolSpec::new("select_file", ToolOrigin::Client, "app")
                .description("Ask the user to pick a file"),
        ],
        &CatalogOptions::default(),
    )
}

#[test]
fn names_outweigh_descriptions() {
    let catalog = small();
    let hits = catalog.search("issues", 8);
    assert_eq!(ids(&hits)[..2], ["openclaw:github:list_issues", "openclaw:github:create_issue"]);
    assert_eq!(hits.last().map(|e| e.id.as_str()), Some("openclaw:core:message"));
}

#[test]
fn names_split_on_case_kebab_and_dots() {
    let catalog = small();
    assert_eq!(ids(&catalog.search("feature flag", 1)), ["openclaw:flags:getFeatureFlag"]);
    assert_eq!(ids(&catalog.search("navigate", 1)), ["openclaw:browser:browser-navigate"]);
    assert_eq!(ids(&catalog.search("read file", 1)), ["openclaw:fs:fs.readFile"]);
    assert_eq!(ids(&catalog.search("http server", 1)), ["openclaw:web:HTTPServerStart"]);
    assert_eq!(ids(&catalog.search("start", 1)), ["openclaw:web:HTTPServerStart"]);
}

#[test]
fn tolerates_typos_and_plurals() {
    let catalog = small();
    assert_eq!(ids(&catalog.search("isue", 1)), ["openclaw:github:list_issues"]);
    assert_eq!(ids(&catalog.search("craete isue", 1)), ["openclaw:github:create_issue"]);
    assert_eq!(ids(&catalog.search("navigates", 1)), ["openclaw:browser:browser-navigate"]);
    assert_eq!(ids(&catalog.search("feature flags", 1)), ["openclaw:flags:getFeatureFlag"]);
    assert_eq!(ids(&catalog.search("created issue", 1)), ["openclaw:github:create_issue"]);
}

#[test]
fn exact_name_or_id_goes_first() {
    let catalog = small();
    assert_eq!(ids(&catalog.search("message", 8))[0], "openclaw:core:message");
    assert_eq!(ids(&catalog.search("openclaw:github:list_issues", 8))[0], "openclaw:github:list_issues");
}

#[test]
fn ties_break_by_catalog_order() {
    let tools: Vec<ToolSpec> = ["zeta", "alpha", "mid"]
        .iter()
        .map(|owner| ToolSpec::new("twin_tool", ToolOrigin::BundledPlugin, *owner).description("same"))
        .collect();
    let catalog = Catalog::build(tools, &CatalogOptions::default());
    assert_eq!(
        ids(&catalog.search("twin", 8)),
        ["openclaw:alpha:twin_tool", "openclaw:mid:twin_tool", "openclaw:zeta:twin_tool"]
    );
}

#[test]
fn limits_empty_and_nonsense_queries() {
    let catalog = small();
    assert!(catalog.search("issues", 0).is_empty());
    assert_eq!(catalog.search("issues", 1).len(), 1);
    // No usable token: the guest entries in catalog order.
    let listed: Vec<&str> = ids(&catalog.search("  the a ", 3));
    let first3: Vec<&str> = catalog.guest_entries().take(3).map(|e| e.id.as_str()).collect();
    assert_eq!(listed, first3);
    assert!(catalog.search("qqqqqqqq zzzzzzzz", 8).is_empty());
    // Fallback: no term matches, but the name is similar.
    assert_eq!(ids(&catalog.search("selectfil", 1)), ["client:app:select_file"]);
}

#[test]
fn hostile_queries_are_bounded_and_deterministic() {
    let catalog = public_catalog();
    let long = "issue ".repeat(100_000);
    let a = ids(&catalog.search(&long, 50));
    assert!(!a.is_empty() && a.len() <= 50);
    let weird = "\u{0}\u{1f}🙂 ünïcödé __proto__ constructor 💥".repeat(50);
    let b = ids(&catalog.search(&weird, 50));
    assert_eq!(b, ids(&catalog.search(&weird, 50)));
}

#[test]
fn mcp_catalogs_are_never_searched() {
    let mut tools = public_mcp_tools();
    tools.push(ToolSpec::core("message").description("Send a message"));
    let catalog = Catalog::build(tools, &CatalogOptions::default());
    assert!(ids(&catalog.search("create pull request", 50)).iter().all(|id| !id.starts_with("mcp:")));
    assert_eq!(ids(&catalog.search("send a message", 50)), ["openclaw:core:message"]);
}

#[test]
fn search_respects_config_defaults() {
    let catalog = public_catalog();
    let config = CodeModeConfig::enabled();
    assert_eq!(catalog.search_with_config("list", None, &config).len(), 8);
    assert_eq!(catalog.search_with_config("list", Some(500.0), &config).len(), 50);
}
