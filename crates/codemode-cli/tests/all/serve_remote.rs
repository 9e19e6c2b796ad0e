//! `codemode serve` in front of a remote MCP server: a FastMCP server from the official Python SDK
//! (`mcp<2`) over Streamable HTTP on 127.0.0.1, requiring a bearer token and a `${VAR}` header.
//!
//! The SDK comes from a venv `.ci/run` creates; `CODEMODE_TEST_MCP_PYTHON` names its python (the
//! test fails with the setup command when it is missing, rather than skipping).

use std::time::Duration;

use serde_json::json;

use crate::serve::{Scripted, temp_dir};

/// The python that has the MCP SDK.
fn mcp_python() -> String {
    let python = std::env::var("CODEMODE_TEST_MCP_PYTHON").unwrap_or_else(|_| "python3".to_owned());
    let ok = std::process::Command::new(&python)
        .args(["-c", "import mcp.server.fastmcp, uvicorn"])
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        ok,
        "{python} cannot import the MCP SDK; create it as .ci/run does: \
         python3 -m venv ~/.cache/codemode-mcp-venv && ~/.cache/codemode-mcp-venv/bin/pip install 'mcp<2', \
         then export CODEMODE_TEST_MCP_PYTHON=~/.cache/codemode-mcp-venv/bin/python"
    );
    python
}

/// Starts `remote_server.py` on a free port; returns the process and the port once it accepts.
async fn remote_server(token: &str, tenant: &str) -> (tokio::process::Child, u16) {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let child = tokio::process::Command::new(mcp_python())
        .arg(crate::fixture_path("remote_server.py"))
        .env("REMOTE_PORT", port.to_string())
        .env("REMOTE_TOKEN", token)
        .env("REMOTE_TENANT", tenant)
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    for _ in 0..300 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
            return (child, port);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the FastMCP server did not listen on {port}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_streamable_http_server_with_a_bearer_token_and_a_variable_header() {
    let (_server, port) = remote_server("s3cret", "acme").await;
    let dir = temp_dir("remote");
    let config = json!({
        "codeMode": { "timeoutMs": 20000 },
        "mcpServers": {
            "remote": {
                "type": "http",
                "url": format!("http://127.0.0.1:{port}/mcp"),
                "headers": { "Authorization": "Bearer ${REMOTE_TEST_TOKEN}", "X-Tenant": "${env:REMOTE_TEST_TENANT}" }
            },
            "wrong": { "url": format!("http://127.0.0.1:{port}/mcp"), "headers": { "Authorization": "Bearer nope" } }
        }
    });
    let envs = [("REMOTE_TEST_TOKEN", "s3cret"), ("REMOTE_TEST_TENANT", "acme")];
    let s = Scripted::with_config_text(dir, &config.to_string(), &envs).await;
    let value = s
        .value(
            r#"const sum = await MCP.remote.add({ a: 2, b: 3 });
const who = await MCP.remote.whoami({});
return { sum: sum.structuredContent, who: who.structuredContent, decl: (await API.read("mcp/remote.d.ts")).includes("add") };"#,
        )
        .await;
    assert_eq!(value["sum"], json!({ "result": 5 }), "{value}");
    assert_eq!(value["who"], json!({ "result": "acme" }), "{value}");
    assert_eq!(value["decl"], true, "{value}");
    let status = s.status().await;
    assert_eq!(status["upstreams"]["running"], json!(["remote"]), "{status}");
    let failed = status["upstreams"]["failed"].as_array().unwrap();
    assert_eq!(failed.len(), 1, "{status}");
    assert_eq!(failed[0]["name"], "wrong", "{status}");
    let servers = status["upstreams"]["servers"].as_array().unwrap();
    assert_eq!(servers[0], json!({ "name": "remote", "transport": "http", "state": "running", "restarts": 0 }), "{status}");
    s.stop().await;
}

#[test]
fn sse_entries_are_refused_with_what_to_do_instead() {
    let dir = temp_dir("remote-sse");
    let config = dir.join("codemode.json");
    std::fs::write(&config, r#"{ "mcpServers": { "old": { "type": "sse", "url": "http://127.0.0.1:1/sse" } } }"#).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_codemode"))
        .args(["serve", "--config", config.to_str().unwrap()])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("$.mcpServers.old.type: legacy SSE servers are not supported yet"), "{stderr}");
    let _ = std::fs::remove_dir_all(dir);
}
