//! Render the `.d.ts` a Code Mode guest reads for one MCP server, from its `tools/list` file.
//!
//! ```sh
//! cargo run -p codemode-mcp --example dts -- data/mcp-catalogs/git.json [server-name]
//! ```
use codemode_mcp::{McpApi, McpApiOptions, McpServer};
use serde_json::Value;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: dts <tools/list JSON file> [server name]")?;
    let name = args.next().unwrap_or_else(|| {
        std::path::Path::new(&path).file_stem().and_then(|s| s.to_str()).unwrap_or("server").to_owned()
    });
    let listing: Value = serde_json::from_str(&std::fs::read_to_string(&path)?)?;
    let server = McpServer::from_tools_list(name, &listing);
    let api = McpApi::build(&[server], &McpApiOptions::default());
    for (file, text) in api.files() {
        println!("// ===== {file} ({} bytes)\n{text}", text.len());
    }
    Ok(())
}
