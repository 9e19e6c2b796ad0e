//! The public MCP catalogs: snapshots of every rendered file and identifier table, and the oxc
//! TypeScript parser as an oracle for every file and every single-tool header.

use codemode_mcp::fuzz::check_api;
use codemode_mcp::{HeaderOptions, McpApi, McpApiOptions, McpServer};
use serde_json::{Value, json};

use crate::support::{assert_valid_dts, catalogs};

fn all_servers() -> Vec<McpServer> {
    catalogs().into_iter().map(|(_, server)| server).collect()
}

#[test]
fn every_catalog_renders_to_snapshotted_valid_declarations() {
    for (stem, server) in catalogs() {
        let api = McpApi::build(std::slice::from_ref(&server), &McpApiOptions::default());
        check_api(&api, std::slice::from_ref(&server), &McpApiOptions::default());
        let files: Vec<(&str, &str)> = api.files().collect();
        assert_eq!(files.len(), 2);
        let (path, content) = files[1];
        assert_valid_dts(path, content);
        insta::assert_snapshot!(format!("catalog__{stem}"), content);
    }
}

#[test]
fn all_catalogs_together_have_a_valid_index() {
    let servers = all_servers();
    let api = McpApi::build(&servers, &McpApiOptions::default());
    check_api(&api, &servers, &McpApiOptions::default());
    for (path, content) in api.files() {
        assert_valid_dts(path, content);
    }
    let index = api.read("mcp/index.d.ts").unwrap();
    insta::assert_snapshot!("catalog_index", index);
}

#[test]
fn every_tool_header_is_valid_typescript_within_budget() {
    let servers = all_servers();
    let options = McpApiOptions::default();
    let api = McpApi::build(&servers, &options);
    let mut headers = 0;
    for (server_ident, _) in api.server_table().entries() {
        for (tool_ident, tool_name) in api.tool_table(server_ident).unwrap().entries() {
            let header = api.header(server_ident, Some(tool_ident), &HeaderOptions::default()).unwrap();
            assert_eq!(header.tool_name.as_deref(), Some(tool_name));
            assert!(header.declarations.len() <= options.max_tool_declaration_bytes + 64);
            assert_valid_dts(tool_ident, &header.declarations);
            headers += 1;
        }
    }
    assert_eq!(headers, servers.iter().map(|s| s.tools.len()).sum::<usize>());
}

/// Every server and tool identifier of every public catalog, as `{ server: { ident, tools: {
/// exactName: ident } } }` (only tools whose identifier differs from their name are listed, plus
/// their count).
#[test]
fn identifier_mapping_of_every_catalog() {
    let api = McpApi::build(&all_servers(), &McpApiOptions::default());
    let mut out = serde_json::Map::new();
    for (server_ident, server_name) in api.server_table().entries() {
        let tools = api.tool_table(server_ident).unwrap();
        let renamed: serde_json::Map<String, Value> =
            tools.entries().map(|(ident, name)| (name.to_owned(), Value::from(ident))).collect();
        out.insert(
            server_name.to_owned(),
            json!({ "ident": server_ident, "toolCount": tools.len(), "tools": renamed }),
        );
    }
    insta::assert_json_snapshot!("catalog_identifiers", out);
}

#[test]
fn reserved_property_names_from_catalogs_render_as_plain_keys() {
    let servers = all_servers();
    let api = McpApi::build(&servers, &McpApiOptions::default());
    let chrome = api.read("mcp/chromeDevtools.d.ts").unwrap();
    assert!(chrome.contains("\n    function?: string;"), "{chrome}");
    // A nested property named `delete` is a plain key inside the rendered type.
    let header = api.header("github", Some("set_issue_fields"), &HeaderOptions::default()).unwrap();
    assert!(header.declarations.contains(" delete?: "), "{}", header.declarations);
    let azure = api.read("mcp/azureAll.d.ts").unwrap();
    assert!(azure.contains("\n    \"resource-group\""), "{azure}");
}

#[test]
fn large_catalog_is_bounded_and_keeps_every_tool_reachable() {
    let servers = all_servers();
    let options = McpApiOptions::default();
    let api = McpApi::build(&servers, &options);
    let azure = api.read("mcp/azureAll.d.ts").unwrap();
    assert!(azure.len() <= options.max_server_file_bytes, "{}", azure.len());
    let header = api.header("azureAll", None, &HeaderOptions::default()).unwrap();
    assert_eq!(header.tools.as_ref().unwrap().len(), 235);
    // Every tool is callable by identifier, whether or not the file declares it in full.
    for tool in &header.tools.unwrap() {
        assert_eq!(api.resolve("azureAll", &tool.tool).unwrap().catalog_id, tool.id);
    }
}
