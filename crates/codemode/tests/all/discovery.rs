//! Discovery beyond the spec's guest API: the gateway's `API.search` over the run's MCP tools.

use codemode::{ToolOrigin, ToolSpec};
use serde_json::json;

use crate::support::*;

/// `API.search` (the gateway's MCP-side search, beyond the spec's guest API) ranks the run's MCP
/// tools with the catalog's engine; `tools.search` still never returns them.
#[tokio::test]
async fn api_search_ranks_mcp_tools_beside_host_tools_and_tools_search_still_omits_them() {
    let f = fixture(json!({}));
    let r = f
        .run(
            r#"const hits = await API.search("open a new github ticket", { limit: 3 });
const catalog = await tools.search("open a new github ticket", { limit: 50 });
const none = await API.search("qqqq zzzz");
let bad = null;
try { await API.search(7); } catch (e) { bad = e.message; }
let badLimit = null;
try { await API.search("x", { limit: 0 }); } catch (e) { badLimit = e.message; }
return { hits, mcpInCatalog: catalog.filter((e) => e.id.startsWith("mcp:")).length, none: none.length, bad, badLimit };"#,
        )
        .await;
    let v = value(&r);
    assert_eq!(v["hits"].as_array().unwrap().len(), 1, "one MCP tool in this run: {v}");
    let hit = &v["hits"][0];
    assert_eq!(hit["server"], "github");
    assert_eq!(hit["tool"], "createIssue");
    assert_eq!(hit["call"], "MCP.github.createIssue");
    assert_eq!(hit["id"], "mcp:github:create_issue");
    assert_eq!(hit["description"], "Create a GitHub issue.");
    assert_eq!(hit["input"], "{ owner: string; repo: string; title: string }");
    assert!(hit.get("output").is_none(), "{hit}");
    assert!(hit["score"].as_f64().unwrap() > 0.0, "{hit}");
    assert!(hit["match"].as_str().unwrap().contains("name"), "{hit}");
    assert_eq!(v["mcpInCatalog"], 0, "MCP entries stay out of tools.search");
    assert_eq!(v["none"], 1, "never empty while MCP tools exist");
    assert_eq!(v["bad"], "API.search: query must be a string");
    assert_eq!(v["badLimit"], "API.search: `options.limit` must be a positive integer");
    assert_eq!(r.telemetry().search_count, 3);
    assert_eq!(f.host.call_count(), 0);
}

#[tokio::test]
async fn api_search_without_mcp_tools_is_empty() {
    let tools: Vec<ToolSpec> = fixture_tools().into_iter().filter(|t| t.origin != ToolOrigin::Mcp).collect();
    let f = fixture_with(config(json!({})), tools, codemode::NamespaceRegistry::new());
    let r = f.run(r#"return await API.search("create issue");"#).await;
    assert_eq!(value(&r), json!([]));
}
