//! The loop an embedder writes, end to end, with a scripted "model" in place of an LLM:
//!
//! - the model is shown `model_surface()` (`exec`, `wait`) instead of the tools;
//! - it calls `exec` with a program that reads from an MCP server (routed by its `mcp:` id to the
//!   host's MCP client — an in-process stand-in here) and calls an approval-gated tool;
//! - the approval is just a slow call: the run suspends (`waiting`), a human approves later, and the
//!   model's `wait` picks the result up.
//!
//! ```sh
//! cargo run -p codemode --example embedder
//! ```
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use codemode::{
    CodeMode, CodeModeConfig, CodeModeResult, McpServer, NestedCall, RunOptions, RunScope, ToolError,
    ToolHost, ToolOrigin, ToolOutcome, ToolSpec,
};
use serde_json::{Value, json};
use tokio::sync::oneshot;

/// The host: runs core tools itself, routes `mcp:<server>:<tool>` ids to its MCP clients, and holds
/// approval-gated calls until a human decides.
#[derive(Default)]
struct Host {
    approvals: Mutex<HashMap<String, oneshot::Sender<bool>>>,
}

impl Host {
    /// What the host's approval UI calls.
    fn decide(&self, call_id: &str, approved: bool) {
        if let Some(decision) = self.approvals.lock().expect("approvals").remove(call_id) {
            let _ = decision.send(approved);
        }
    }

    fn pending_approvals(&self) -> Vec<String> {
        self.approvals.lock().expect("approvals").keys().cloned().collect()
    }
}

#[async_trait]
impl ToolHost for Host {
    async fn call(&self, call: NestedCall) -> Result<ToolOutcome, ToolError> {
        if let Some(rest) = call.catalog_id.strip_prefix("mcp:") {
            // A real host forwards this as `tools/call` to the MCP client of `server`.
            let (server, tool) = rest.split_once(':').unwrap_or((rest, ""));
            return mcp_call(server, tool, &call.input);
        }
        match call.catalog_id.as_str() {
            "openclaw:core:send_email" => {
                let (decide, decision) = oneshot::channel();
                self.approvals.lock().expect("approvals").insert(call.call_id.clone(), decide);
                println!("  [host] approval requested for send_email {}", call.input);
                match decision.await {
                    Ok(true) => Ok(ToolOutcome::details(json!({ "sent": true, "to": call.input["to"] }))),
                    _ => Err(ToolError::denied("the user declined to send this email")),
                }
            }
            other => Err(ToolError::with_code(format!("no tool {other}"), "not_found")),
        }
    }
}

/// The stand-in MCP server `weather`: an MCP `tools/call` result.
fn mcp_call(server: &str, tool: &str, input: &Value) -> Result<ToolOutcome, ToolError> {
    match (server, tool) {
        ("weather", "get_forecast") => {
            let forecast = json!({ "city": input["city"], "tempC": 21, "sky": "clear" });
            Ok(ToolOutcome::details(forecast.clone())
                .with_content(json!([{ "type": "text", "text": forecast.to_string() }])))
        }
        _ => Err(ToolError::with_code(format!("MCP server {server:?} has no tool {tool:?}"), "not_found")),
    }
}

/// The scripted model: what it "writes" after each tool result.
fn model_turn(last_result: Option<&Value>) -> Option<(&'static str, Value)> {
    match last_result {
        None => Some((
            "exec",
            json!({ "code": r#"
                const forecast = await MCP.weather.getForecast({ city: "Oslo" });
                text(`forecast: ${forecast.content[0].text}`);
                const receipt = await tools.send_email({ to: "ops@example.com", body: "Oslo is clear" });
                return { forecast: forecast.structuredContent, receipt };
            "# }),
        )),
        Some(result) if result["status"] == "waiting" => Some(("wait", json!({ "runId": result["runId"] }))),
        Some(_) => None,
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let host = Arc::new(Host::default());
    let cm = CodeMode::builder(CodeModeConfig::from_json(&json!({ "enabled": true, "timeoutMs": 1000 }))?)
        .tools(vec![
            ToolSpec::core("send_email")
                .description("Send an email (asks the user for approval first)")
                .parameters(json!({
                    "type": "object",
                    "properties": { "to": { "type": "string" }, "body": { "type": "string" } },
                    "required": ["to", "body"]
                })),
            ToolSpec::new("get_forecast", ToolOrigin::Mcp, "weather")
                .description("Weather forecast for a city"),
        ])
        .mcp_servers(vec![McpServer::new("weather", vec![])])
        .host(host.clone())
        .build()?;

    let surface = cm.model_surface(&RunOptions::default());
    println!("model sees: {:?}", surface.names());

    let scope = RunScope::new("session-1", "turn-1");
    let mut last: Option<Value> = None;
    let mut turn = 0;
    while let Some((tool, arguments)) = model_turn(last.as_ref()) {
        turn += 1;
        let scope = scope.clone().with_call_id(format!("call-{turn}"));
        println!("model -> {tool}");
        let result = match tool {
            "exec" => cm.exec_json(&scope, &arguments).await,
            _ => {
                // Meanwhile the human approves whatever is pending.
                for call_id in host.pending_approvals() {
                    println!("  [human] approves {call_id}");
                    host.decide(&call_id, true);
                }
                cm.wait_json(&scope, &arguments).await
            }
        };
        if let CodeModeResult::Waiting(waiting) = &result {
            println!("  waiting ({:?}), run {}", waiting.reason, waiting.run_id);
        }
        let json = result.to_json();
        println!("  result: {json}");
        last = Some(json);
    }
    let done = last.ok_or("the model never called a tool")?;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["value"]["receipt"]["sent"], true);
    Ok(())
}
