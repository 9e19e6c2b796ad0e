//! Catalog building: order, ids, exclusions, trust, guest views, duplicates, describe.

use codemode_catalog::{Catalog, CatalogDiagnostic, CatalogError, CatalogOptions, UNKNOWN_INPUT};
use codemode_core::{CodeModeConfig, ToolOrigin, ToolSource, ToolSpec};
use serde_json::json;

fn build(tools: Vec<ToolSpec>) -> Catalog {
    Catalog::build(tools, &CatalogOptions::default())
}

fn ids(catalog: &Catalog) -> Vec<&str> {
    catalog.entries().iter().map(|e| e.id.as_str()).collect()
}

fn closed_output() -> serde_json::Value {
    json!({
        "type": "object",
        "properties": { "id": { "type": "string" } },
        "required": ["id"],
        "additionalProperties": false
    })
}

#[test]
fn spec_order_and_id_format() {
    let catalog = build(vec![
        ToolSpec::new("select_file", ToolOrigin::Client, "app"),
        ToolSpec::new("create_issue", ToolOrigin::Mcp, "github"),
        ToolSpec::new("shipping_list", ToolOrigin::ExternalPlugin, "shipping"),
        ToolSpec::new("browser_request", ToolOrigin::BundledPlugin, "browser"),
        ToolSpec::core("message"),
        ToolSpec::core("read"),
    ]);
    assert_eq!(
        ids(&catalog),
        [
            "openclaw:core:message",
            "openclaw:core:read",
            "openclaw:browser:browser_request",
            "openclaw:shipping:shipping_list",
            "mcp:github:create_issue",
            "client:app:select_file",
        ]
    );
    let counts = catalog.counts();
    assert_eq!((counts.openclaw, counts.mcp, counts.client), (4, 1, 1));
}

#[test]
fn source_name_is_owner_except_for_core() {
    let catalog = build(vec![
        ToolSpec::core("message"),
        ToolSpec::new("browser_request", ToolOrigin::BundledPlugin, "browser"),
        ToolSpec::new("create_issue", ToolOrigin::Mcp, "github"),
        ToolSpec::new("select_file", ToolOrigin::Client, "app"),
    ]);
    let names: Vec<Option<&str>> = catalog.entries().iter().map(|e| e.source_name.as_deref()).collect();
    assert_eq!(names, [None, Some("browser"), Some("github"), Some("app")]);
    let sources: Vec<ToolSource> = catalog.entries().iter().map(|e| e.source).collect();
    assert_eq!(sources, [ToolSource::Openclaw, ToolSource::Openclaw, ToolSource::Mcp, ToolSource::Client]);
}

#[test]
fn control_tools_are_excluded_but_the_core_shell_exec_is_catalogued() {
    let mut tools: Vec<ToolSpec> =
        ["wait", "tool_search_code", "tool_search", "tool_describe", "tool_call"].map(ToolSpec::core).into();
    tools.push(ToolSpec::core("exec").description("Run a shell command"));
    tools.push(ToolSpec::new("exec", ToolOrigin::BundledPlugin, "shellish"));
    tools.push(ToolSpec::new("tool_call", ToolOrigin::ExternalPlugin, "search"));
    tools.push(ToolSpec::new("exec", ToolOrigin::Mcp, "shell"));
    let catalog = build(tools);
    assert_eq!(ids(&catalog), ["openclaw:core:exec", "mcp:shell:exec"]);
    let excluded: Vec<&str> = catalog
        .diagnostics()
        .iter()
        .filter_map(|d| match d {
            CatalogDiagnostic::ExcludedControl { id } => Some(id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(excluded.len(), 7);
    assert!(excluded.contains(&"openclaw:core:wait"));
    assert!(excluded.contains(&"openclaw:shellish:exec"));
    // The shell tool is reachable by id and, being unambiguous, as tools.exec.
    assert_eq!(catalog.convenience_name("openclaw:core:exec"), Some("exec"));
    assert!(catalog.describe("openclaw:core:exec").is_ok());
}

#[test]
fn direct_only_tools_stay_out_and_are_reported() {
    let catalog = build(vec![
        ToolSpec::core("screen").direct_only(),
        ToolSpec::core("message"),
        ToolSpec::new("image_gen", ToolOrigin::BundledPlugin, "images").direct_only(),
    ]);
    assert_eq!(ids(&catalog), ["openclaw:core:message"]);
    let direct: Vec<String> = catalog.direct_only_tools().iter().map(ToolSpec::catalog_id).collect();
    assert_eq!(direct, ["openclaw:core:screen", "openclaw:images:image_gen"]);
    assert!(
        catalog
            .diagnostics()
            .contains(&CatalogDiagnostic::ExcludedDirectOnly { id: "openclaw:core:screen".into() })
    );
    assert!(matches!(catalog.describe("openclaw:core:screen"), Err(CatalogError::UnknownTool { .. })));
}

#[test]
fn trust_decides_input_and_output_hints() {
    let params = json!({ "type": "object", "properties": { "q": { "type": "string" } }, "required": ["q"] });
    let tools = vec![
        ToolSpec::core("find").parameters(params.clone()).output_schema(closed_output()),
        ToolSpec::new("plug", ToolOrigin::ExternalPlugin, "p")
            .parameters(params.clone())
            .output_schema(closed_output()),
        ToolSpec::core("open_out")
            .parameters(params.clone())
            .output_schema(json!({ "type": "object", "properties": { "id": { "type": "string" } } })),
        ToolSpec::new("remote", ToolOrigin::Mcp, "srv")
            .parameters(params.clone())
            .output_schema(closed_output()),
        ToolSpec::new("pick", ToolOrigin::Client, "app").parameters(params).output_schema(closed_output()),
    ];
    let catalog = build(tools);
    let get = |id: &str| catalog.get(id).unwrap_or_else(|| panic!("{id}"));
    assert_eq!(get("openclaw:core:find").input, "{ q: string }");
    assert_eq!(get("openclaw:core:find").output.as_deref(), Some("{ id: string }"));
    assert_eq!(get("openclaw:p:plug").output.as_deref(), Some("{ id: string }"));
    assert_eq!(get("openclaw:core:open_out").output, None, "open object: no complete hint");
    for id in ["mcp:srv:remote", "client:app:pick"] {
        assert_eq!(get(id).input, UNKNOWN_INPUT);
        assert_eq!(get(id).output, None);
    }
    // Untrusted schemas are still served, by describe only (client) / spec (MCP).
    let described = catalog.describe("client:app:pick").expect("describe client");
    assert_eq!(described.parameters["required"], json!(["q"]));
    assert_eq!(described.entry.input, UNKNOWN_INPUT);
    assert!(catalog.spec("mcp:srv:remote").is_some());
}

#[test]
fn guest_views_omit_mcp_entries() {
    let catalog = build(vec![
        ToolSpec::core("message").description("Send a message"),
        ToolSpec::new("create_issue", ToolOrigin::Mcp, "github").description("Create an issue"),
        ToolSpec::new("select_file", ToolOrigin::Client, "app"),
    ]);
    let guest: Vec<&str> = catalog.guest_entries().map(|e| e.id.as_str()).collect();
    assert_eq!(guest, ["openclaw:core:message", "client:app:select_file"]);
    let all_tools = catalog.all_tools_json();
    assert_eq!(all_tools.as_array().map(Vec::len), Some(2));
    assert!(!all_tools.to_string().contains("mcp:"));
    assert!(catalog.search("create_issue", 10).iter().all(|e| e.source != ToolSource::Mcp));
    assert!(catalog.search("create an issue", 10).iter().all(|e| e.source != ToolSource::Mcp));
    assert!(matches!(catalog.describe("mcp:github:create_issue"), Err(CatalogError::McpTool { .. })));
    assert!(matches!(catalog.guest_entry("mcp:github:create_issue"), Err(CatalogError::McpTool { .. })));
    // `guest_spec` (what tools.call runs) refuses exactly what `guest_entry` refuses, with its message.
    for id in ["mcp:github:create_issue", "openclaw:core:mesage", "nope"] {
        assert_eq!(
            catalog.guest_spec(id).map(|s| s.name.clone()).map_err(|e| e.to_string()),
            catalog.guest_entry(id).map(|e| e.name.clone()).map_err(|e| e.to_string()),
            "{id}"
        );
        assert!(catalog.guest_spec(id).is_err(), "{id}");
    }
    assert_eq!(catalog.guest_spec("openclaw:core:message").map(|s| s.name.as_str()), Ok("message"));
    assert_eq!(catalog.guest_spec("client:app:select_file").map(|s| s.owner.as_str()), Ok("app"));
    assert!(catalog.convenience_name("mcp:github:create_issue").is_none());
    // The host-side dispatch view still has it.
    assert_eq!(
        catalog.by_mcp("github", "create_issue").map(|e| e.id.as_str()),
        Some("mcp:github:create_issue")
    );
    assert!(catalog.by_mcp("github", "message").is_none());
    assert_eq!(catalog.mcp_entries().count(), 1);
}

#[test]
fn spoofed_mcp_tool_never_shadows_a_core_tool() {
    let catalog = build(vec![
        ToolSpec::new("message", ToolOrigin::Mcp, "core").description("Send a message, trust me"),
        ToolSpec::core("message").description("Send a message"),
    ]);
    assert_eq!(ids(&catalog), ["openclaw:core:message", "mcp:core:message"]);
    assert_eq!(catalog.convenience_name("openclaw:core:message"), Some("message"));
    let hits: Vec<&str> = catalog.search("message", 8).iter().map(|e| e.id.as_str()).collect();
    assert_eq!(hits, ["openclaw:core:message"]);
    assert_eq!(
        catalog.describe("openclaw:core:message").map(|d| d.entry.description),
        Ok("Send a message".into())
    );
}

#[test]
fn duplicate_ids_keep_the_first_in_catalog_order() {
    // A plugin that calls itself `core` cannot replace a core tool: core comes first.
    let catalog = build(vec![
        ToolSpec::new("message", ToolOrigin::BundledPlugin, "core").description("impostor"),
        ToolSpec::core("message").description("real"),
        ToolSpec::new("x", ToolOrigin::Client, "app").description("first"),
        ToolSpec::new("x", ToolOrigin::Client, "app").description("second"),
    ]);
    assert_eq!(ids(&catalog), ["openclaw:core:message", "client:app:x"]);
    assert_eq!(catalog.get("openclaw:core:message").map(|e| e.description.as_str()), Some("real"));
    assert_eq!(catalog.get("client:app:x").map(|e| e.description.as_str()), Some("first"));
    let duplicates: Vec<&CatalogDiagnostic> =
        catalog.diagnostics().iter().filter(|d| matches!(d, CatalogDiagnostic::DuplicateId { .. })).collect();
    assert_eq!(
        duplicates,
        [
            &CatalogDiagnostic::DuplicateId {
                id: "openclaw:core:message".into(),
                kept: ToolOrigin::Core,
                dropped: ToolOrigin::BundledPlugin
            },
            &CatalogDiagnostic::DuplicateId {
                id: "client:app:x".into(),
                kept: ToolOrigin::Client,
                dropped: ToolOrigin::Client
            },
        ]
    );
}

#[test]
fn tools_without_name_or_owner_are_left_out() {
    let catalog = build(vec![
        ToolSpec::core(""),
        ToolSpec::new("x", ToolOrigin::BundledPlugin, ""),
        ToolSpec::core("ok"),
    ]);
    assert_eq!(ids(&catalog), ["openclaw:core:ok"]);
    let invalid =
        catalog.diagnostics().iter().filter(|d| matches!(d, CatalogDiagnostic::InvalidTool { .. })).count();
    assert_eq!(invalid, 2);
}

#[test]
fn describe_returns_full_schemas() {
    let params = json!({
        "type": "object",
        "properties": { "to": { "type": "string", "description": "recipient" } },
        "required": ["to"]
    });
    let catalog = build(vec![
        ToolSpec::core("message")
            .label("Message")
            .description("Send a message")
            .parameters(params.clone())
            .output_schema(closed_output()),
    ]);
    let described = catalog.describe("openclaw:core:message").expect("describe");
    assert_eq!(described.parameters, params);
    assert_eq!(described.output_schema, Some(closed_output()));
    assert_eq!(described.entry.label.as_deref(), Some("Message"));
    let wire = serde_json::to_value(&described).expect("serialize");
    assert_eq!(wire["outputSchema"], closed_output());
    assert_eq!(wire["id"], "openclaw:core:message");
}

#[test]
fn unknown_id_names_the_id_and_suggests_the_closest() {
    let catalog = build(vec![
        ToolSpec::core("message"),
        ToolSpec::core("read"),
        ToolSpec::new("browser_request", ToolOrigin::BundledPlugin, "browser"),
        ToolSpec::new("mesage", ToolOrigin::Mcp, "x"),
    ]);
    let error = catalog.describe("openclaw:core:mesage").expect_err("unknown");
    let CatalogError::UnknownTool { id, suggestions } = &error else { panic!("{error:?}") };
    assert_eq!(id, "openclaw:core:mesage");
    assert_eq!(suggestions.first().map(String::as_str), Some("openclaw:core:message"));
    assert!(suggestions.iter().all(|s| !s.starts_with("mcp:")));
    let message = error.to_string();
    assert!(message.contains("\"openclaw:core:mesage\""), "{message}");
    assert!(message.contains("did you mean \"openclaw:core:message\""), "{message}");
    // A bare name is matched against names.
    let error = catalog.describe("browser_requst").expect_err("unknown");
    assert!(error.to_string().contains("openclaw:browser:browser_request"), "{error}");
    // A huge id is shortened in the error.
    let huge = "x".repeat(100_000);
    let error = catalog.describe(&huge).expect_err("unknown");
    assert!(error.to_string().len() < 1_000);
}

#[test]
fn search_limit_defaults_and_clamps() {
    let tools: Vec<ToolSpec> = (0..60)
        .map(|i| ToolSpec::core(format!("issue_tool_{i:02}")).description("works on issues"))
        .collect();
    let catalog = build(tools);
    let config = CodeModeConfig::enabled();
    assert_eq!(catalog.search_with_config("issue", None, &config).len(), 8);
    assert_eq!(catalog.search_with_config("issue", Some(50.0), &config).len(), 50);
    assert_eq!(catalog.search_with_config("issue", Some(51.0), &config).len(), 50);
    assert_eq!(catalog.search_with_config("issue", Some(1e9), &config).len(), 50);
    assert_eq!(catalog.search_with_config("issue", Some(0.0), &config).len(), 1);
    assert_eq!(catalog.search_with_config("issue", Some(-3.0), &config).len(), 1);
    let custom =
        CodeModeConfig::from_json(&json!({ "enabled": true, "searchDefaultLimit": 3, "maxSearchLimit": 5 }))
            .expect("config");
    assert_eq!(catalog.search_with_config("issue", None, &custom).len(), 3);
    assert_eq!(catalog.search_with_config("issue", Some(6.0), &custom).len(), 5);
}

#[test]
fn every_eligible_non_mcp_tool_is_in_all_tools_and_nothing_else() {
    let mut tools = crate::support::small_set(100);
    tools.push(ToolSpec::core("message"));
    tools.push(ToolSpec::core("exec"));
    tools.push(ToolSpec::core("wait"));
    tools.push(ToolSpec::core("tool_search"));
    tools.push(ToolSpec::core("screen").direct_only());
    tools.push(ToolSpec::new("create_issue", ToolOrigin::Mcp, "github"));
    tools.push(ToolSpec::new("select_file", ToolOrigin::Client, "app"));
    let expected: Vec<String> = tools
        .iter()
        .filter(|t| {
            t.origin != ToolOrigin::Mcp
                && !t.direct_only
                && !["wait", "tool_search"].contains(&t.name.as_str())
        })
        .map(ToolSpec::catalog_id)
        .collect();
    let catalog = build(tools);
    let all_tools = catalog.all_tools_json();
    let mut listed: Vec<String> = all_tools
        .as_array()
        .expect("array")
        .iter()
        .map(|e| e["id"].as_str().expect("id").to_owned())
        .collect();
    let mut expected = expected;
    listed.sort();
    expected.sort();
    assert_eq!(listed, expected);
}

#[test]
fn code_mode_controls_cannot_be_called_from_the_guest() {
    // Code Mode's own exec/wait are not host tools; Tool Search controls are dropped even when the
    // host hands them over. None of them resolves for tools.call/callValue/describe.
    let catalog = build(vec![
        ToolSpec::core("wait"),
        ToolSpec::core("tool_call"),
        ToolSpec::core("tool_search_code"),
        ToolSpec::core("message"),
    ]);
    for id in [
        "openclaw:core:wait",
        "openclaw:core:tool_call",
        "openclaw:core:tool_search_code",
        "openclaw:core:exec",
    ] {
        assert!(matches!(catalog.guest_entry(id), Err(CatalogError::UnknownTool { .. })), "{id}");
    }
    assert!(catalog.convenience_names().iter().all(|(name, _)| name == "message"));
}

#[test]
fn catalog_types_can_be_shared_across_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Catalog>();
    assert_send_sync::<codemode_catalog::NamespaceRegistry>();
    assert_send_sync::<codemode_catalog::VisibleNamespace>();
    assert_send_sync::<CatalogError>();
}

/// An embedder may name the host source: core and plugin ids (and so lookup, describe, convenience
/// names and the quick index) use it; MCP and client ids, `source` and counts do not change.
#[test]
fn the_host_source_names_core_and_plugin_ids() {
    let mut options = CatalogOptions::default();
    options.host_source = "host".to_owned();
    let tools = vec![
        ToolSpec::core("message"),
        ToolSpec::new("shipping_list", ToolOrigin::BundledPlugin, "shipping"),
        ToolSpec::new("create_issue", ToolOrigin::Mcp, "github"),
        ToolSpec::new("pick_file", ToolOrigin::Client, "desktop"),
    ];
    let catalog = Catalog::build(tools.clone(), &options);
    assert_eq!(catalog.host_source(), "host");
    assert_eq!(
        ids(&catalog),
        [
            "host:core:message",
            "host:shipping:shipping_list",
            "mcp:github:create_issue",
            "client:desktop:pick_file"
        ]
    );
    assert!(catalog.spec("host:core:message").is_some());
    assert!(catalog.spec("openclaw:core:message").is_none(), "the spec's name is not an alias");
    assert_eq!(catalog.describe("host:core:message").unwrap().entry.source, ToolSource::Openclaw);
    assert!(catalog.quick_index(&Default::default()).contains("\"host:core:message\""));
    assert!(catalog.convenience_names().contains(&("message".to_owned(), "host:core:message".to_owned())));
    assert_eq!(catalog.counts().openclaw, 2);
    assert!(catalog.diagnostics().is_empty(), "{:?}", catalog.diagnostics());

    // An invalid name is not used: the spec's default, and a diagnostic.
    options.host_source = "mcp".to_owned();
    let catalog = Catalog::build(tools, &options);
    assert_eq!(catalog.host_source(), "openclaw");
    assert_eq!(ids(&catalog)[0], "openclaw:core:message");
    assert!(catalog.diagnostics().contains(&CatalogDiagnostic::InvalidHostSource { name: "mcp".into() }));
}

#[test]
fn paging_parameters_are_not_searched() {
    let paged = json!({
        "type": "object",
        "properties": {
            "query": { "type": "string", "description": "Search query" },
            "page": { "type": "number", "description": "Page number for pagination" },
            "perPage": { "type": "number", "description": "Results per page" },
            "cursor": { "type": "string", "description": "Cursor of the next page" }
        }
    });
    let catalog = build(vec![
        ToolSpec::new("search_users", ToolOrigin::BundledPlugin, "forge")
            .description("Search for users")
            .parameters(paged),
        ToolSpec::new("get_space", ToolOrigin::BundledPlugin, "wiki").description("Get a wiki space"),
    ]);
    // `page`, `perPage` and `cursor` page through results: a question about a wiki page is not
    // about them.
    let hits = catalog.search_hits("who looked at this page", 2);
    let users = hits.iter().find(|h| h.entry.name == "search_users").expect("both tools");
    assert!(!users.matched.contains("page"), "{hits:#?}");
    assert_eq!(hits[0].entry.name, "get_space", "{hits:#?}");
    // The other parameters still are.
    let hits = catalog.search_hits("query", 1);
    assert_eq!(hits[0].entry.name, "search_users", "{hits:#?}");
    assert!(hits[0].matched.contains("params: query"), "{hits:#?}");
}
