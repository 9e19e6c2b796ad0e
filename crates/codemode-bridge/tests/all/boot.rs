//! The boot context: validation, JSON shape, and the API path rules (Rust reference).

use codemode_bridge::api_files::{ApiFile, ApiFileTable, ApiPathError, normalize_api_path};
use codemode_bridge::{BootContext, BridgeError, NamespaceTable};
use codemode_core::{NamespaceRegistration, ScopeValue, ToolCatalogEntry, ToolSource, namespace_tool};
use serde_json::{Value, json};

pub fn entry(id: &str, source: ToolSource) -> ToolCatalogEntry {
    let name = id.rsplit(':').next().unwrap_or(id).to_owned();
    ToolCatalogEntry {
        id: id.into(),
        name,
        label: None,
        description: format!("The {id} tool."),
        source,
        source_name: None,
        input: "{ query: string }".into(),
        output: None,
    }
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
    ctx.mcp = json!({
        "servers": {
            "github": { "tools": ["createIssue", "listIssues"], "resources": false, "prompts": false },
            "docs": { "tools": ["search"], "resources": true, "prompts": true }
        },
        "files": [
            { "path": "mcp/index.d.ts", "content": "declare namespace MCP {}\n" },
            { "path": "mcp/github.d.ts", "content": "declare namespace MCP.github { /* é */ }\n" },
            { "path": "mcp/docs.d.ts", "content": "declare namespace MCP.docs {}\n" }
        ]
    });
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
fn malformed_mcp_tables_are_rejected() {
    let cases = [
        (json!([1]), "must be an object"),
        (json!({ "servers": {}, "other": 1 }), "unknown member"),
        (json!({ "servers": { "chrome-devtools": { "tools": [] } } }), "not an identifier"),
        (json!({ "servers": { "gh": { "tools": ["$api"] } } }), "collides with a built-in member"),
        (json!({ "servers": { "gh": { "tools": ["resources"] } } }), "collides with a built-in member"),
        (json!({ "servers": { "gh": { "tools": ["__proto__"] } } }), "not a safe identifier"),
        (json!({ "servers": { "gh": { "tools": ["a", "a"] } } }), "appears twice"),
        (json!({ "servers": { "gh": { "tools": [1] } } }), "must be strings"),
        (json!({ "servers": { "gh": { "tools": [], "resources": "yes" } } }), "must be a boolean"),
        (json!({ "servers": { "gh": { "tools": ["a"], "toolNames": [] } } }), "one per tool"),
        (json!({ "servers": { "gh": { "tools": ["a"], "toolNames": [1] } } }), "one per tool"),
        (json!({ "servers": { "gh": { "tools": [], "name": 7 } } }), "`name` must be a string"),
        (json!({ "files": [{ "path": "/abs.d.ts", "content": "" }] }), "not a normalized relative path"),
        (json!({ "files": [{ "path": "mcp/", "content": "" }] }), "not a normalized relative path"),
        (
            json!({ "files": [{ "path": "a", "content": "" }, { "path": "a", "content": "" }] }),
            "appears twice",
        ),
        (json!({ "files": [{ "path": "a" }] }), "path: string, content: string"),
    ];
    for (mcp, needle) in cases {
        let mut ctx = BootContext::new();
        ctx.mcp = mcp.clone();
        let err = ctx.boot_json().unwrap_err();
        assert!(matches!(err, BridgeError::InvalidContext(_)));
        assert!(err.to_string().contains(needle), "{mcp}: {err}");
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
