//! `codemode serve` as an MCP client sees it: config errors, and upstreams that fail or hang.

use std::process::Stdio;

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("codemode-serve-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn config_errors_name_the_file_the_path_and_the_fix() {
    let dir = temp_dir("config");
    let config = dir.join("codemode.json");
    std::fs::write(&config, r#"{ "mcpServers": { "everything": { "command": "npx", "args": ["-y", 7] } } }"#)
        .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_codemode"))
        .args(["serve", "--config", config.to_str().unwrap()])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("codemode.json: $.mcpServers.everything.args[1]: must be a string"), "{stderr}");
    std::fs::write(&config, r#"{ "mcpServer": {} }"#).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_codemode"))
        .args(["serve", "--config", config.to_str().unwrap()])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("codemode.json: $.mcpServer: unknown field; allowed: "), "{stderr}");
    let _ = std::fs::remove_dir_all(dir);
}

/// The upstream is another `codemode serve` with Code Mode disabled, so its fixture tools are plain
/// MCP tools: one answers, one hangs past `upstreamTimeoutMs`. A second upstream cannot start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failing_and_hanging_upstreams_become_guest_errors() {
    let dir = temp_dir("upstream");
    let inner = dir.join("inner.json");
    std::fs::write(
        &inner,
        json!({
            "codeMode": { "enabled": false },
            "catalog": { "tools": [
                { "name": "ok", "behavior": { "kind": "static", "details": { "v": 1 } } },
                { "name": "hang", "behavior": { "kind": "delay", "ms": 20000 } }
            ] }
        })
        .to_string(),
    )
    .unwrap();
    let outer = dir.join("outer.json");
    std::fs::write(
        &outer,
        json!({
            "codeMode": { "enabled": true, "timeoutMs": 5000 },
            "mcpServers": {
                "inner": { "command": env!("CARGO_BIN_EXE_codemode"), "args": ["serve", "--config", inner.to_str().unwrap()] },
                "broken": { "command": dir.join("no-such-binary").to_str().unwrap() }
            },
            "upstreamTimeoutMs": 500
        })
        .to_string(),
    )
    .unwrap();
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_codemode"));
    command.args(["serve", "--config", outer.to_str().unwrap()]).kill_on_drop(true);
    let (transport, _) = TokioChildProcess::builder(command).stderr(Stdio::null()).spawn().unwrap();
    let client = ().serve(transport).await.unwrap();
    let names: Vec<String> =
        client.list_all_tools().await.unwrap().into_iter().map(|t| t.name.to_string()).collect();
    assert_eq!(names, ["exec", "wait"]);
    let mut params = CallToolRequestParams::new("exec");
    params.arguments = json!({ "code": r#"const out = {};
try { await MCP.inner.hang({}); out.hang = "answered"; } catch (e) { out.hang = e.message; }
out.ok = await MCP.inner.ok({});
out.files = (await API.list("mcp")).map((f) => f.path);
return out;"# })
    .as_object()
    .cloned();
    let result = client.call_tool(params).await.unwrap();
    let value: Value = result.structured_content.clone().unwrap();
    assert_eq!(value["status"], json!("completed"), "{value}");
    let value = &value["value"];
    assert!(value["hang"].as_str().unwrap().contains("did not answer within 500 ms"), "{value}");
    assert_eq!(value["ok"]["structuredContent"], json!({ "v": 1 }), "{value}");
    assert_eq!(value["files"], json!(["mcp/index.d.ts", "mcp/inner.d.ts"]), "the broken server is left out");
    let _ = client.cancel().await;
    let _ = std::fs::remove_dir_all(dir);
}
