//! Synthetic catalogs of any size built from the shapes of the 16 public MCP `tools/list`
//! catalogs in `data/mcp-catalogs/` (677 tools): the real tools (names, titles, descriptions,
//! input and output schemas, annotations) repeated server by server. Copy `r` of a server is
//! named `<server>_<r>` (copy 0 keeps its name), so ids stay unique; the last server is cut to
//! reach the exact count. Shared by the `scale` and `throughput` benches and the `scale` tests
//! (included with `#[path]`).

#![allow(dead_code)]

use std::path::PathBuf;

use codemode::{McpServer, McpTool, ToolSpec};

/// The 16 public catalogs, sorted by name (server names with `-` as `_`).
pub fn public_mcp_servers() -> Vec<McpServer> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/mcp-catalogs");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("data/mcp-catalogs")
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.strip_suffix(".json").map(str::to_owned))
        .filter(|n| n != "INDEX")
        .collect();
    names.sort();
    names
        .iter()
        .map(|name| {
            let text = std::fs::read_to_string(dir.join(format!("{name}.json"))).expect("catalog file");
            let value: serde_json::Value = serde_json::from_str(&text).expect("catalog JSON");
            let tools = value["tools"]
                .as_array()
                .expect("a tools array")
                .iter()
                .filter_map(McpTool::from_value_lossy)
                .collect();
            McpServer::new(name.replace('-', "_"), tools)
        })
        .collect()
}

/// Servers holding exactly `tools` tools in all (see the module docs).
pub fn synthetic_servers(tools: usize) -> Vec<McpServer> {
    let real = public_mcp_servers();
    let mut out = Vec::new();
    let mut left = tools;
    let mut copy = 0;
    while left > 0 {
        for server in &real {
            if left == 0 {
                break;
            }
            let take = server.tools.len().min(left);
            let name = if copy == 0 { server.name.clone() } else { format!("{}_{copy}", server.name) };
            out.push(McpServer::new(name, server.tools[..take].to_vec()));
            left -= take;
        }
        copy += 1;
    }
    out
}

/// The catalog entries of `servers`' tools.
pub fn specs(servers: &[McpServer]) -> Vec<ToolSpec> {
    servers.iter().flat_map(|s| s.tool_specs()).collect()
}
