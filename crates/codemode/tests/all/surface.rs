//! The `exec` description tells the truth: MCP-only catalogs get MCP guidance and the server list
//! (no `ALL_TOOLS` / quick-index text), the server list is bounded, and the whole `exec` + `wait`
//! surface stays within [`SURFACE_MAX_CHARS`] for any catalog size, the quick index saying how many
//! tools it left out.

use std::path::PathBuf;

use codemode::{
    CodeMode, MCP_SERVER_LIST_MAX_CHARS, McpServer, NamespaceRegistry, RunOptions, SURFACE_MAX_CHARS,
    ToolOrigin, ToolSpec, definition_chars,
};
use serde_json::{Value, json};

use crate::support::{ScriptedHost, config, fixture_tools};

fn catalogs_dir() -> PathBuf {
    PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"))
        .join("../../data/mcp-catalogs")
}

/// Every public catalog (677 tools) as tools of `origin`, owner = file stem.
fn catalog_tools(origin: ToolOrigin) -> Vec<ToolSpec> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(catalogs_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json") && !p.ends_with("INDEX.json"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for path in files {
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        let value: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        for tool in value["tools"].as_array().unwrap() {
            let mut spec = ToolSpec::new(tool["name"].as_str().unwrap(), origin, &stem)
                .description(tool["description"].as_str().unwrap_or_default())
                .parameters(tool.get("inputSchema").cloned().unwrap_or(json!({ "type": "object" })));
            if let Some(output) = tool.get("outputSchema") {
                spec = spec.output_schema(output.clone());
            }
            out.push(spec);
        }
    }
    assert_eq!(out.len(), 677, "the 16 public catalogs");
    out
}

fn build(tools: Vec<ToolSpec>, servers: Vec<McpServer>) -> CodeMode {
    CodeMode::builder(config(json!({})))
        .tools(tools)
        .host(ScriptedHost::new())
        .namespaces(NamespaceRegistry::new())
        .mcp_servers(servers)
        .build()
        .unwrap()
}

/// Characters of `exec` and `wait` together, as a provider payload carries them.
fn surface_chars(cm: &CodeMode) -> usize {
    definition_chars(&cm.exec_definition()) + definition_chars(&cm.wait_definition())
}

fn quick_index_lines(description: &str) -> Vec<&str> {
    description.split_once("\n\nQuick index:\n").map(|(_, index)| index.lines().collect()).unwrap_or_default()
}

#[test]
fn an_mcp_only_catalog_gets_mcp_guidance_and_the_server_list_only() {
    let tools = vec![
        ToolSpec::new("create_issue", ToolOrigin::Mcp, "github").description("Create a GitHub issue."),
        ToolSpec::new("list_issues", ToolOrigin::Mcp, "github"),
        ToolSpec::new("read_graph", ToolOrigin::Mcp, "memory"),
        ToolSpec::new("list-groups", ToolOrigin::Mcp, "azure-mcp"),
    ];
    let servers = vec![
        McpServer::new("github", vec![]).with_title("GitHub\u{202e}\nMCP"),
        McpServer::new("memory", vec![]).with_resources(),
    ];
    let cm = build(tools, servers);
    let exec = cm.exec_definition();
    let d = &exec.description;
    for absent in ["ALL_TOOLS", "tools.search", "tools.callValue", "Quick index", "quick index"] {
        assert!(!d.contains(absent), "{absent:?} in an MCP-only description:\n{d}");
    }
    for present in [
        "API.search(",
        "API.read(\"mcp/<server>.d.ts\")",
        "MCP.<server>.<tool>(",
        "MCP.<server>.$api()",
        "MCP[\"server-name\"][\"tool_name\"]",
        "`wait`",
    ] {
        assert!(d.contains(present), "{present:?} missing:\n{d}");
    }
    let list = cm.mcp_server_list();
    assert_eq!(
        list,
        "MCP servers (3 servers, 4 tools):\n- MCP.azureMcp (\"azure-mcp\"): 1 tool\n- MCP.github: 2 tools. GitHub MCP\n- MCP.memory: 1 tool, resources"
    );
    assert!(d.contains(&format!("\n\n{list}")), "the description carries the list:\n{d}");
    assert!(
        !d.contains("create_issue") && !d.contains("Create a GitHub issue"),
        "no tool names or descriptions"
    );
    assert!(surface_chars(&cm) <= SURFACE_MAX_CHARS);
}

#[test]
fn a_mixed_catalog_keeps_the_catalog_guidance_and_adds_the_mcp_part() {
    let cm = build(fixture_tools(), vec![]);
    let d = cm.exec_definition().description;
    assert!(d.starts_with(codemode::exec_guidance()), "catalog guidance first");
    assert!(d.contains("API.search(") && d.contains("API.read(\"mcp/<server>.d.ts\")"));
    assert!(d.contains("MCP servers (1 server, 1 tool):\n- MCP.github: 1 tool"), "{d}");
    assert!(d.contains("\n\nQuick index:\n\"openclaw:core:"), "{d}");
    assert!(d.contains("\n\"openclaw:core:web_search\" "), "{d}");
    // Without MCP: neither MCP guidance nor a server list.
    let tools: Vec<ToolSpec> = fixture_tools().into_iter().filter(|t| t.origin != ToolOrigin::Mcp).collect();
    let d = build(tools, vec![]).exec_definition().description;
    assert!(!d.contains("API.") && !d.contains("MCP servers"), "{d}");
}

#[test]
fn the_server_list_is_bounded_and_counts_the_rest() {
    let tools: Vec<ToolSpec> =
        (0..300).map(|i| ToolSpec::new("t", ToolOrigin::Mcp, format!("server-number-{i:03}"))).collect();
    let servers: Vec<McpServer> = (0..300)
        .map(|i| McpServer::new(format!("server-number-{i:03}"), vec![]).with_title("T".repeat(500)))
        .collect();
    let cm = build(tools, servers);
    let list = cm.mcp_server_list();
    let mut lines = list.lines();
    assert_eq!(lines.next(), Some("MCP servers (300 servers, 300 tools):"));
    let rest: Vec<&str> = lines.collect();
    let (last, servers) = rest.split_last().unwrap();
    let listed_chars: usize = servers.iter().map(|l| l.chars().count() + 1).sum();
    assert!(listed_chars <= MCP_SERVER_LIST_MAX_CHARS, "{listed_chars}");
    assert!(listed_chars > MCP_SERVER_LIST_MAX_CHARS - 120, "the list uses its room: {listed_chars}");
    assert!(servers.iter().all(|l| l.starts_with("- MCP.serverNumber")), "{servers:?}");
    assert!(servers.iter().all(|l| l.chars().count() < 130), "titles are cut: {servers:?}");
    assert_eq!(
        *last,
        format!(
            "- and {} more servers: API.read(\"mcp/index.d.ts\") lists every server; API.search(query) searches all of them.",
            300 - servers.len()
        )
    );
    assert!(surface_chars(&cm) <= SURFACE_MAX_CHARS, "{}", surface_chars(&cm));
}

#[test]
fn the_surface_stays_within_its_bound_at_every_catalog_size() {
    let all = catalog_tools(ToolOrigin::ExternalPlugin);
    for size in [1, 9, 40, 120, 300, 677] {
        let cm = build(all[..size].to_vec(), vec![]);
        let exec = cm.exec_definition();
        let chars = surface_chars(&cm);
        assert!(chars <= SURFACE_MAX_CHARS, "{size} tools: surface is {chars} chars");
        let lines = quick_index_lines(&exec.description);
        assert!(!lines.is_empty(), "{size} tools: a quick index");
        match lines.last().unwrap().strip_prefix('(') {
            Some(footer) => {
                let omitted: usize = footer.split(' ').next().unwrap().parse().unwrap();
                assert_eq!(lines.len() - 1 + omitted, size, "{size} tools: listed + omitted");
                assert!(
                    footer.ends_with(
                        "more tools not listed here; find them with tools.search(query) or ALL_TOOLS)"
                    ),
                    "{footer}"
                );
                // Truncating: the index uses its room (within one typical line of the bound).
                assert!(chars > SURFACE_MAX_CHARS - 400, "{size} tools: only {chars} chars used");
            }
            None => assert_eq!(lines.len(), size, "{size} tools: every tool listed"),
        }
    }
    // The 677 tools as MCP tools: no quick index at all, the server list instead.
    let cm = build(catalog_tools(ToolOrigin::Mcp), vec![]);
    let exec = cm.exec_definition();
    assert!(quick_index_lines(&exec.description).is_empty());
    assert!(exec.description.contains("MCP servers (16 servers, 677 tools):"), "{}", exec.description);
    assert!(surface_chars(&cm) <= SURFACE_MAX_CHARS);
    assert!(cm.model_surface(&RunOptions::default()).is_code_mode());
}
