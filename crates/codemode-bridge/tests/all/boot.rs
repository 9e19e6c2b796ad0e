//! The boot context: validation, JSON shape, and the API path rules (Rust reference).

use codemode_bridge::{
    ApiFile, ApiFileTable, ApiPathError, BootContext, BridgeError, NamespaceTable, normalize_api_path,
};
use codemode_core::guest::{McpGuestServer, McpGuestTable};
use codemode_core::{NamespaceRegistration, ScopeValue, ToolCatalogEntry, ToolSource, namespace_tool};
use serde_json::{Value, json};

pub fn entry(id: &str, source: ToolSource) -> ToolCatalogEntry {
    let name = id.rsplit(':').next().unwrap_or(id).to_owned();
    ToolCatalogEntry::new(id, name, format!("The {id} tool."), source, "{ query: string }")
}

/// An MCP guest table of `(identifier, exact name, tool identifiers, resources and prompts)`; each
/// tool's exact name is its identifier.
pub fn mcp_table(servers: &[(&str, &str, &[&str], bool)]) -> McpGuestTable {
    let mut table = McpGuestTable::default();
    for (ident, name, tools, extras) in servers {
        let mut server =
            McpGuestServer::new(*ident, *name).unwrap().with_resources(*extras).with_prompts(*extras);
        for tool in *tools {
            server.add_tool(*tool, *tool).unwrap();
        }
        table.add_server(server).unwrap();
    }
    table
}

pub fn sample_context() -> BootContext {
    let mut ctx = BootContext::new();
    ctx.all_tools = vec![
        entry("openclaw:core:web_search", ToolSource::Openclaw),
        entry("openclaw:shipping:shipping_list", ToolSource::Openclaw),
        entry("mcp:github:create_issue", ToolSource::Mcp),
        entry("client:app:select_file", ToolSource::Client),
    ];
    ctx.convenience = vec![("web_search".into(), "openclaw:core:web_search".into())];
    let mut mcp = mcp_table(&[
        ("github", "github", &["createIssue", "listIssues"], false),
        ("docs", "docs", &["search"], true),
    ]);
    mcp.add_file("mcp/index.d.ts", "declare namespace MCP {}\n");
    mcp.add_file("mcp/github.d.ts", "declare namespace MCP.github { /* é */ }\n");
    mcp.add_file("mcp/docs.d.ts", "declare namespace MCP.docs {}\n");
    ctx.mcp = Some(mcp);
    let reg = NamespaceRegistration::new("github-issues", "Issues", "Issues", ["github_list_issues"], |_| {
        ScopeValue::object([
            ("repository", ScopeValue::Data(json!({ "owner": "openclaw", "__proto__": "data" }))),
            ("list", namespace_tool("github_list_issues")),
        ])
    });
    let mut table = NamespaceTable::new();
    table.add(&reg, &(reg.create_scope)(&Default::default())).unwrap();
    ctx.namespaces = table;
    ctx
}

#[test]
fn boot_json_shape() {
    let json = sample_context().boot_json().unwrap();
    insta::assert_json_snapshot!("boot_json", json);
    let ids: Vec<&str> =
        json["allTools"].as_array().unwrap().iter().map(|e| e["id"].as_str().unwrap()).collect();
    assert!(!ids.iter().any(|id| id.starts_with("mcp:")), "ALL_TOOLS omits MCP entries: {ids:?}");
    // Files are sorted and carry their UTF-8 size.
    let files = json["files"].as_array().unwrap();
    assert_eq!(files[1]["path"], "mcp/github.d.ts");
    assert_eq!(files[1]["bytes"], "declare namespace MCP.github { /* é */ }\n".len());
}

#[test]
fn boot_script_passes_json_as_a_string_literal() {
    let script = sample_context().boot_script().unwrap();
    let inner = script.strip_prefix("__codemode_boot(").unwrap().strip_suffix(");").unwrap();
    let literal: String = serde_json::from_str(inner).unwrap();
    let parsed: Value = serde_json::from_str(&literal).unwrap();
    assert_eq!(parsed, sample_context().boot_json().unwrap());
    assert!(!script.contains('\n'));
}

#[test]
fn convenience_names_never_shadow_helpers() {
    let cases = [
        ("search", "openclaw:core:web_search", "would shadow a tools helper"),
        ("callValue", "openclaw:core:web_search", "would shadow a tools helper"),
        ("delete", "openclaw:core:web_search", "not a safe identifier"),
        ("__codemode_x", "openclaw:core:web_search", "not a safe identifier"),
        ("web-search", "openclaw:core:web_search", "not a safe identifier"),
        ("create_issue", "mcp:github:create_issue", "not in ALL_TOOLS"),
        ("ghost", "openclaw:core:ghost", "not in ALL_TOOLS"),
    ];
    for (name, id, needle) in cases {
        let mut ctx = sample_context();
        ctx.convenience = vec![(name.into(), id.into())];
        let err = ctx.boot_json().unwrap_err().to_string();
        assert!(err.contains(needle), "{name}: {err}");
    }
    let mut ctx = sample_context();
    ctx.convenience.push(("web_search".into(), "openclaw:shipping:shipping_list".into()));
    assert!(ctx.boot_json().unwrap_err().to_string().contains("appears twice"));
}

#[test]
fn malformed_api_file_tables_are_rejected() {
    let cases: [(&[(&str, &str)], &str); 3] = [
        (&[("/abs.d.ts", "")], "not a normalized relative path"),
        (&[("mcp/", "")], "not a normalized relative path"),
        (&[("a", ""), ("a", "")], "appears twice"),
    ];
    for (files, needle) in cases {
        let mut mcp = McpGuestTable::default();
        for (path, content) in files {
            mcp.add_file(*path, *content);
        }
        let mut ctx = BootContext::new();
        ctx.mcp = Some(mcp);
        let err = ctx.boot_json().unwrap_err();
        assert!(matches!(err, BridgeError::InvalidContext(_)));
        assert!(err.to_string().contains(needle), "{files:?}: {err}");
    }
}

/// `(input, expected)` for the API path rules; shared with the prelude parity test.
pub fn api_path_cases() -> Vec<(String, Result<&'static str, ApiPathError>)> {
    let long_ok = "a".repeat(256);
    let long_bad = "a".repeat(257);
    let long_wide = "é".repeat(256);
    let leaked: &'static str = Box::leak(long_ok.clone().into_boxed_str());
    let leaked_wide: &'static str = Box::leak(long_wide.clone().into_boxed_str());
    vec![
        ("mcp".into(), Ok("mcp")),
        ("mcp/".into(), Ok("mcp")),
        ("mcp/github.d.ts".into(), Ok("mcp/github.d.ts")),
        ("".into(), Ok("")),
        ("/".into(), Err(ApiPathError::Absolute)),
        ("/mcp".into(), Err(ApiPathError::Absolute)),
        ("mcp//x".into(), Err(ApiPathError::EmptySegment)),
        ("mcp//".into(), Err(ApiPathError::EmptySegment)),
        ("./mcp".into(), Err(ApiPathError::DotSegment)),
        ("mcp/..".into(), Err(ApiPathError::DotSegment)),
        ("mcp/../secret".into(), Err(ApiPathError::DotSegment)),
        ("mcp\\github.d.ts".into(), Err(ApiPathError::Backslash)),
        ("mcp/\0".into(), Err(ApiPathError::Nul)),
        (long_ok, Ok(leaked)),
        (long_wide, Ok(leaked_wide)),
        (long_bad, Err(ApiPathError::TooLong)),
        ("..".into(), Err(ApiPathError::DotSegment)),
        ("mcp/.hidden".into(), Ok("mcp/.hidden")),
    ]
}

#[test]
fn api_path_rules() {
    for (input, expected) in api_path_cases() {
        assert_eq!(normalize_api_path(&input), expected, "{input:?}");
    }
    let table = ApiFileTable::new(vec![
        ApiFile { path: "mcp/index.d.ts".into(), content: "i".into() },
        ApiFile { path: "mcp/github.d.ts".into(), content: "gh".into() },
        ApiFile { path: "mcpx/other.d.ts".into(), content: "o".into() },
    ])
    .unwrap();
    let paths = |prefix| -> Vec<String> {
        table.list(prefix).unwrap().iter().map(|f| f["path"].as_str().unwrap().to_owned()).collect()
    };
    assert_eq!(paths(Some("mcp")), ["mcp/github.d.ts", "mcp/index.d.ts"]);
    assert_eq!(paths(Some("mcp/")), paths(Some("mcp")));
    assert_eq!(paths(None).len(), 3);
    assert!(paths(Some("nothing")).is_empty());
    assert_eq!(table.list(Some("mcp")).unwrap()[0], json!({ "path": "mcp/github.d.ts", "bytes": 2 }));
    assert_eq!(table.read("mcp/github.d.ts"), Ok("gh"));
    assert_eq!(table.read("mcp"), Err(ApiPathError::Unknown));
    assert_eq!(table.read("mcp/../mcp/github.d.ts"), Err(ApiPathError::DotSegment));
}
