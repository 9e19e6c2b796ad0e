//! Render the compact TypeScript input/output hints for every tool of an MCP `tools/list` file.
//!
//! ```sh
//! cargo run -p codemode-core --example hints -- data/mcp-catalogs/time.json
//! ```
use codemode_core::hint::{HintOptions, input_hint, output_hint};
use serde_json::Value;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: hints <tools/list JSON file>")?;
    let listing: Value = serde_json::from_str(&std::fs::read_to_string(&path)?)?;
    let tools = match &listing {
        Value::Array(tools) => tools.as_slice(),
        other => other.get("tools").and_then(Value::as_array).map_or(&[][..], Vec::as_slice),
    };
    for tool in tools {
        let name = tool.get("name").and_then(Value::as_str).unwrap_or("?");
        let input = input_hint(tool.get("inputSchema").unwrap_or(&Value::Null), &HintOptions::input());
        let output = tool
            .get("outputSchema")
            .and_then(|schema| output_hint(schema, &HintOptions::output()))
            .unwrap_or_else(|| "?".to_owned());
        println!("{name}: {input} -> {output}");
    }
    Ok(())
}
