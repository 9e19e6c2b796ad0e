//! `codemode demo`: a guided tour on an embedded demo catalog.

use std::fmt::Write as _;
use std::path::Path;

use codemode::{AbortSignal, CodeModeConfig, RunScope};
use serde_json::{Value, json};

use crate::engine::{Engine, EngineOptions};
use crate::fixture::FixtureCatalog;

/// The embedded demo catalog (a fixture catalog file).
pub const DEMO_CATALOG: &str = include_str!("catalog.json");

/// A real `tools/list` snapshot (the legacy npm GitHub MCP server, 26 tools) added to the demo as the
/// inline MCP server `github`, so the prompt-size comparison has a realistic catalog behind it.
pub const GITHUB_TOOLS: &str = include_str!("github-tools.json");

/// The demo catalog with the GitHub snapshot merged in.
pub fn demo_catalog() -> anyhow::Result<FixtureCatalog> {
    let mut document: Value = serde_json::from_str(DEMO_CATALOG)?;
    let github: Value = serde_json::from_str(GITHUB_TOOLS)?;
    document["mcpServers"]["github"] =
        json!({ "title": "GitHub", "behavior": "echo", "tools": github["tools"] });
    FixtureCatalog::from_value(&document, Path::new(".")).map_err(|e| anyhow::anyhow!("demo catalog: {e}"))
}

/// One demo cell.
struct Cell {
    title: &'static str,
    language: &'static str,
    code: &'static str,
}

const CELLS: &[Cell] = &[
    Cell {
        title: "Discover, inspect, call, filter (tools.search -> describe -> callValue)",
        language: "javascript",
        code: r#"const hits = await tools.search("list shipments", { limit: 3 });
const tool = await tools.describe(hits[0].id);
const shipments = await tools.callValue(tool.id, {});
return {
  found: hits.map((h) => h.id),
  output: tool.output,
  unpaidTons: shipments.filter((s) => !s.paid).reduce((sum, s) => sum + s.tons, 0),
};"#,
    },
    Cell {
        title: "A `-> ?` tool: no declared output, so return it raw and look before filtering",
        language: "typescript",
        code: r#"const quote: unknown = await tools.callValue("openclaw:shipping:shipping_quote", { id: "SH-2" });
return quote;"#,
    },
    Cell {
        title: "A namespace registered by the shipping plugin",
        language: "javascript",
        code: r#"const all = await Shipping.list();
text(`currency: ${Shipping.currency}`);
return { count: all.length, quoted: await Shipping.quote("SH-3") };"#,
    },
    Cell {
        title: "An MCP server: API.list / API.read, then MCP.<server>.<tool>()",
        language: "typescript",
        code: r#"const files = await API.list("mcp");
const dts: string = await API.read("mcp/weather.d.ts");
const forecast = await MCP.weather.getForecast({ city: "Rotterdam", days: 2 });
return { files: files.map((f: { path: string }) => f.path), declaration: dts.split("\n").filter((l) => l.includes("function")), forecast };"#,
    },
];

const SUSPEND_CELL: &str = r#"text("asking the carrier...");
const status = await tools.callValue("openclaw:shipping:shipping_track", { id: "SH-3" });
text(`restored after the wait: ${status.status}`);
return { id: "SH-3", ...status };"#;

/// Runs the tour and prints it to stdout; `color` enables headings and JSON highlighting.
pub async fn run(color: bool, module_cache: Option<std::path::PathBuf>) -> anyhow::Result<()> {
    let text = tour(color, module_cache).await?;
    crate::write_stdout(&text)?;
    Ok(())
}

/// The tour as text (so tests can check it).
pub async fn tour(color: bool, module_cache: Option<std::path::PathBuf>) -> anyhow::Result<String> {
    let catalog = demo_catalog()?;
    let config = CodeModeConfig::from_json(&json!({ "enabled": true, "timeoutMs": 800 }))
        .map_err(|e| anyhow::anyhow!("demo config: {}", e.message))?;
    let engine = Engine::build(EngineOptions { config, catalog, module_cache, ..EngineOptions::default() })?;
    let style = Style { color };
    let mut out = String::new();

    style.heading(&mut out, "1. What the model sees");
    let surface = engine.surface_json();
    let tools = surface["tools"].as_array().cloned().unwrap_or_default();
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    let _ = writeln!(out, "Model-visible tools: {}\n", names.join(", "));
    if let Some(description) = tools.first().and_then(|t| t["description"].as_str()) {
        let _ = writeln!(out, "The `exec` description (guidance + quick index):\n");
        for line in description.lines() {
            let _ = writeln!(out, "    {line}");
        }
        out.push('\n');
    }

    let mut last_telemetry = Value::Null;
    for (i, cell) in CELLS.iter().enumerate() {
        style.heading(&mut out, &format!("{}. {}", i + 2, cell.title));
        style.code(&mut out, cell.language, cell.code);
        let scope = RunScope::new("demo", "tour").with_call_id(format!("demo-{i}"));
        let result = engine
            .exec(&scope, &json!({ "code": cell.code, "language": cell.language }), AbortSignal::new())
            .await;
        last_telemetry = result["telemetry"].clone();
        style.json(&mut out, &without_telemetry(&result));
    }

    let n = CELLS.len() + 2;
    style.heading(&mut out, &format!("{n}. A slow tool: exec returns `waiting`, `wait` finishes the run"));
    style.code(&mut out, "javascript", SUSPEND_CELL);
    let scope = RunScope::new("demo", "tour").with_call_id("demo-suspend");
    let first = engine.exec(&scope, &json!({ "code": SUSPEND_CELL }), AbortSignal::new()).await;
    style.json(&mut out, &without_telemetry(&first));
    let mut current = first;
    // Each wait may itself return `waiting` while the slow call is still running; the run id is stable.
    for _ in 0..10 {
        let Some(run_id) = current["runId"].as_str().map(str::to_owned) else { break };
        if current["status"] != "waiting" {
            break;
        }
        let _ = writeln!(out, "wait({{ runId: {run_id:?} }}) ->");
        current = engine.wait(&scope, &json!({ "runId": run_id }), AbortSignal::new()).await;
        last_telemetry = current["telemetry"].clone();
        style.json(&mut out, &without_telemetry(&current));
    }

    style.heading(&mut out, &format!("{}. Telemetry of the last run", n + 1));
    style.json(&mut out, &last_telemetry);

    style.heading(&mut out, &format!("{}. Prompt size: Code Mode versus direct exposure", n + 2));
    let code_mode_bytes = serde_json::to_string(&surface["tools"])?.len();
    let direct: Vec<Value> = engine
        .tools()
        .iter()
        .map(|t| json!({ "name": t.name, "description": t.description, "inputSchema": t.parameters }))
        .collect();
    let direct_bytes = serde_json::to_string(&direct)?.len();
    let _ = writeln!(
        out,
        "Code Mode : {:>2} tools, {:>6} bytes, ~{:>5} tokens",
        names.len(),
        code_mode_bytes,
        code_mode_bytes.div_ceil(4)
    );
    let _ = writeln!(
        out,
        "Direct    : {:>2} tools, {:>6} bytes, ~{:>5} tokens",
        direct.len(),
        direct_bytes,
        direct_bytes.div_ceil(4)
    );
    let _ = writeln!(
        out,
        "\nThe Code Mode surface is constant in the number of hidden tools (the quick index is capped at\n\
         8,000 characters); direct exposure grows with every tool schema. Tokens are approximated as bytes/4."
    );
    style.heading(&mut out, &format!("{}. Put Code Mode in front of your own MCP servers", n + 3));
    let _ = writeln!(
        out,
        "Write codemode.json with your servers in the usual shape (comments allowed):\n\n\
         {{\n  \"mcpServers\": {{\n    \"everything\": {{ \"command\": \"npx\", \"args\": [\"-y\", \"@modelcontextprotocol/server-everything\"] }}\n  }},\n  \"codeMode\": {{ \"timeoutMs\": 10000 }}\n}}\n\n\
         and give your MCP client `codemode serve` instead of the servers themselves:\n\n\
         {{ \"mcpServers\": {{ \"codemode\": {{ \"command\": \"codemode\", \"args\": [\"serve\", \"--config\", \"/path/to/codemode.json\"] }} }} }}\n"
    );
    let _ = writeln!(out, "The model then sees exec and wait; docs/serve.md has the whole config reference.");
    Ok(out)
}

/// Results are shown without `telemetry`; the tour prints it once, in its own section.
fn without_telemetry(result: &Value) -> Value {
    let mut shown = result.clone();
    if let Some(map) = shown.as_object_mut() {
        map.remove("telemetry");
    }
    shown
}

struct Style {
    color: bool,
}

impl Style {
    fn heading(&self, out: &mut String, title: &str) {
        if self.color {
            let _ = writeln!(out, "\n\x1b[1;34m== {title}\x1b[0m\n");
        } else {
            let _ = writeln!(out, "\n== {title}\n");
        }
    }

    fn code(&self, out: &mut String, language: &str, code: &str) {
        let _ = writeln!(out, "exec ({language}):");
        for line in code.lines() {
            if self.color {
                let _ = writeln!(out, "  \x1b[2m|\x1b[0m {line}");
            } else {
                let _ = writeln!(out, "  | {line}");
            }
        }
        let _ = writeln!(out, "->");
    }

    fn json(&self, out: &mut String, value: &Value) {
        if self.color {
            highlight(out, value, 0);
            out.push('\n');
        } else {
            let _ = writeln!(out, "{}", serde_json::to_string_pretty(value).unwrap_or_default());
        }
    }
}

/// Pretty-prints JSON with ANSI colors: keys cyan, strings green, numbers yellow, literals magenta.
pub fn highlight(out: &mut String, value: &Value, indent: usize) {
    let pad = "  ".repeat(indent + 1);
    let end = "  ".repeat(indent);
    match value {
        Value::Null | Value::Bool(_) => {
            let _ = write!(out, "\x1b[35m{value}\x1b[0m");
        }
        Value::Number(n) => {
            let _ = write!(out, "\x1b[33m{n}\x1b[0m");
        }
        Value::String(_) => {
            let _ = write!(out, "\x1b[32m{value}\x1b[0m");
        }
        Value::Array(items) if items.is_empty() => out.push_str("[]"),
        Value::Object(map) if map.is_empty() => out.push_str("{}"),
        Value::Array(items) => {
            out.push_str("[\n");
            for (i, item) in items.iter().enumerate() {
                out.push_str(&pad);
                highlight(out, item, indent + 1);
                out.push_str(if i + 1 < items.len() { ",\n" } else { "\n" });
            }
            let _ = write!(out, "{end}]");
        }
        Value::Object(map) => {
            out.push_str("{\n");
            for (i, (key, item)) in map.iter().enumerate() {
                let _ = write!(out, "{pad}\x1b[36m{}\x1b[0m: ", Value::from(key.as_str()));
                highlight(out, item, indent + 1);
                out.push_str(if i + 1 < map.len() { ",\n" } else { "\n" });
            }
            let _ = write!(out, "{end}}}");
        }
    }
}
