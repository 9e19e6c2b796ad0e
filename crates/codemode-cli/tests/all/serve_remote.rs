//! `codemode serve` in front of remote MCP servers: a FastMCP server from the official Python SDK
//! (`mcp<2`) on 127.0.0.1, over Streamable HTTP and over the legacy HTTP+SSE transport, each
//! checking a bearer token that the config takes from the environment (`${VAR}`); a server that
//! is killed and started again on the same port; servers that cannot be reached.
//!
//! The SDK comes from a venv `.ci/run` creates; `CODEMODE_TEST_MCP_PYTHON` names its python
//! (default `~/.cache/codemode-mcp-venv/bin/python`). The tests fail, saying how to create it, when
//! it is missing: they never skip.

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};

use crate::serve::{Scripted, eventually, scripted_server, temp_dir};

/// The python that has the MCP SDK.
pub(crate) fn mcp_python() -> String {
    let python = std::env::var("CODEMODE_TEST_MCP_PYTHON").unwrap_or_else(|_| {
        let home = std::env::var("HOME").unwrap_or_default();
        format!("{home}/.cache/codemode-mcp-venv/bin/python")
    });
    let ok = std::process::Command::new(&python)
        .args(["-c", "import mcp.server.fastmcp, uvicorn"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        ok,
        "{python} cannot import the Python MCP SDK (FastMCP); create the venv as .ci/run does: \
         python3 -m venv ~/.cache/codemode-mcp-venv && ~/.cache/codemode-mcp-venv/bin/pip install 'mcp<2' \
         (or set CODEMODE_TEST_MCP_PYTHON to a python that has it)"
    );
    python
}

/// A free TCP port on 127.0.0.1.
pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// `tests/fixtures/remote_server.py` running on a port.
pub(crate) struct RemoteServer {
    child: tokio::process::Child,
    pub(crate) port: u16,
}

impl RemoteServer {
    /// Starts the server (`transport`: "http" or "sse") on `port`, requiring `Bearer <token>` and,
    /// if given, `X-Tenant: <tenant>`; returns once it accepts connections.
    pub(crate) async fn start(
        transport: &str,
        port: u16,
        token: &str,
        tenant: Option<&str>,
        extra: bool,
    ) -> RemoteServer {
        let mut command = tokio::process::Command::new(mcp_python());
        command
            .arg(crate::fixture_path("remote_server.py"))
            .env("REMOTE_PORT", port.to_string())
            .env("REMOTE_TOKEN", token)
            .env("REMOTE_TRANSPORT", transport)
            .env("REMOTE_EXTRA", if extra { "1" } else { "0" })
            .kill_on_drop(true);
        if let Some(tenant) = tenant {
            command.env("REMOTE_TENANT", tenant);
        }
        let child = command.spawn().unwrap();
        for _ in 0..600 {
            if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
                return RemoteServer { child, port };
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("the FastMCP server did not listen on {port} within 30 s");
    }

    /// Kills the server and waits until it is gone.
    pub(crate) async fn kill(mut self) {
        let _ = self.child.kill().await;
        let _ = self.child.wait().await;
    }
}

/// The status entry of `name` in `upstreams.servers`.
fn server_entry(status: &Value, name: &str) -> Value {
    status["upstreams"]["servers"]
        .as_array()
        .and_then(|s| s.iter().find(|e| e["name"] == name))
        .cloned()
        .unwrap_or(Value::Null)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_remote_streamable_http_with_a_bearer_token_from_the_environment() {
    let server = RemoteServer::start("http", free_port(), "s3cret", Some("acme"), false).await;
    let port = server.port;
    let closed = free_port();
    let dir = temp_dir("remote-http");
    let url = format!("http://127.0.0.1:{port}/mcp");
    let config = json!({
        "codeMode": { "timeoutMs": 20000 },
        "mcpServers": {
            "remote": {
                "type": "http",
                "url": url,
                "headers": { "Authorization": "Bearer ${REMOTE_TEST_TOKEN}", "X-Tenant": "${env:REMOTE_TEST_TENANT}" },
                "timeoutMs": 1000
            },
            "wrongToken": { "url": url, "headers": { "Authorization": "Bearer nope", "X-Tenant": "acme" } },
            "wrongPath": { "url": format!("http://127.0.0.1:{port}/nope"), "headers": { "Authorization": "Bearer s3cret", "X-Tenant": "acme" } },
            "refused": { "url": format!("http://me:pw@127.0.0.1:{closed}/mcp?api_key=hunter2") }
        }
    });
    let envs = [("REMOTE_TEST_TOKEN", "s3cret"), ("REMOTE_TEST_TENANT", "acme")];
    let s = Scripted::with_config_text(dir, &config.to_string(), &envs).await;
    let value = s
        .value(
            r#"const sum = await MCP.remote.add({ a: 2, b: 3 });
const who = await MCP.remote.whoami({});
let slow;
try { await MCP.remote.sleep({ ms: 5000 }); slow = "answered"; } catch (e) { slow = { message: e.message, code: e.code }; }
return { sum: sum.structuredContent, who: who.structuredContent, slow, decl: (await API.read("mcp/remote.d.ts")).includes("add") };"#,
        )
        .await;
    assert_eq!(value["sum"], json!({ "result": 5 }), "{value}");
    assert_eq!(value["who"], json!({ "result": "acme" }), "the ${{env:VAR}} header arrived: {value}");
    assert_eq!(value["decl"], true, "{value}");
    assert_eq!(value["slow"]["code"], "timeout", "the server's timeoutMs bounds its calls: {value}");
    assert!(value["slow"]["message"].as_str().unwrap().contains("did not answer within 1000 ms"), "{value}");
    let status = s.status().await;
    assert_eq!(status["upstreams"]["running"], json!(["remote"]), "{status}");
    assert_eq!(
        server_entry(&status, "remote"),
        json!({ "name": "remote", "transport": "http", "state": "running", "url": url, "reconnects": 0 }),
        "{status}"
    );
    for (name, expected) in
        [("wrongToken", "refused the credentials"), ("wrongPath", "404"), ("refused", "onnection refused")]
    {
        let entry = server_entry(&status, name);
        assert_eq!(entry["state"], "failed", "{name}: {status}");
        assert_eq!(entry["transport"], "http", "{name}: {status}");
        let error = entry["error"].as_str().unwrap_or_default();
        assert!(error.contains(expected), "{name}: {error:?} should say {expected:?}");
        assert!(!error.contains("s3cret"), "no secret in errors: {error}");
    }
    let refused = server_entry(&status, "refused");
    assert_eq!(refused["url"], format!("http://127.0.0.1:{closed}/mcp"), "user info and query are not shown");
    assert!(!status.to_string().contains("hunter2"), "{status}");
    // The gateway's own log lines show the redacted URL too (rmcp's own error log may not).
    let ours: Vec<String> =
        s.stderr().lines().filter(|l| l.contains("codemode_cli")).map(str::to_owned).collect();
    assert!(!ours.iter().any(|l| l.contains("hunter2")), "{ours:?}");
    let value =
        s.value("try { await MCP.refused.x({}); return 'answered' } catch (e) { return e.message }").await;
    assert!(
        value.as_str().unwrap().contains("MCP has no server refused"),
        "a failed server has no tools: {value}"
    );
    assert_eq!(s.value("return 6 * 7").await, 42, "the gateway stays up");
    s.stop().await;
    server.kill().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_remote_legacy_sse_with_a_bearer_token_and_a_restart() {
    let server = RemoteServer::start("sse", free_port(), "t0ken", None, false).await;
    let port = server.port;
    let dir = temp_dir("remote-sse");
    let url = format!("http://127.0.0.1:{port}/sse");
    let config = json!({
        "codeMode": { "timeoutMs": 20000 },
        "mcpServers": {
            "old": { "type": "sse", "url": url, "headers": { "Authorization": "Bearer ${REMOTE_TEST_SSE_TOKEN}" } },
            "oldWrong": { "url": url, "headers": { "Authorization": "Bearer nope" } }
        }
    });
    let s = Scripted::with_config_text(dir, &config.to_string(), &[("REMOTE_TEST_SSE_TOKEN", "t0ken")]).await;
    let value = s
        .value(
            r#"const sum = await MCP.old.add({ a: 20, b: 22 });
const pid = await MCP.old.pid({});
return { sum: sum.structuredContent.result, pid: pid.structuredContent.result };"#,
        )
        .await;
    assert_eq!(value["sum"], 42, "{value}");
    let first = value["pid"].clone();
    let status = s.status().await;
    assert_eq!(
        server_entry(&status, "old"),
        json!({ "name": "old", "transport": "sse", "state": "running", "url": url, "reconnects": 0 }),
        "{status}"
    );
    let wrong = server_entry(&status, "oldWrong");
    assert_eq!(wrong["state"], "failed", "{status}");
    assert_eq!(wrong["transport"], "sse", "a url ending in /sse without a type is SSE: {status}");
    assert!(wrong["error"].as_str().unwrap().contains("HTTP 401"), "{status}");
    // The server goes away: its event stream ends, the gateway connects again with backoff.
    server.kill().await;
    let value = s
        .value("try { await MCP.old.add({ a: 1, b: 2 }); return 'answered' } catch (e) { return { message: e.message, code: e.code } }")
        .await;
    assert!(value["message"].as_str().unwrap().contains("MCP server \"old\""), "{value}");
    let server = RemoteServer::start("sse", port, "t0ken", None, true).await;
    eventually("list_changed after the SSE server came back", || {
        *s.heard.tool_list_changed.lock().unwrap() >= 1
    })
    .await;
    let value = s
        .value(
            r#"return { extra: (await MCP.old.extra({})).structuredContent.result, pid: (await MCP.old.pid({})).structuredContent.result };"#,
        )
        .await;
    assert_eq!(value["extra"], "extra", "the new process's tools are listed: {value}");
    assert_ne!(value["pid"], first, "{value}");
    let entry = server_entry(&s.status().await, "old");
    assert_eq!(entry["state"], "running", "{entry}");
    assert!(entry["reconnects"].as_u64().unwrap() >= 1, "{entry}");
    s.stop().await;
    server.kill().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_remote_a_dropped_http_session_comes_back_with_its_tools() {
    let server = RemoteServer::start("http", free_port(), "s3cret", None, false).await;
    let port = server.port;
    let dir = temp_dir("remote-drop");
    let url = format!("http://127.0.0.1:{port}/mcp");
    let config = json!({
        "codeMode": { "timeoutMs": 20000 },
        "mcpServers": { "remote": { "url": url, "headers": { "Authorization": "Bearer ${REMOTE_TEST_TOKEN}" } } }
    });
    let s = Scripted::with_config_text(dir, &config.to_string(), &[("REMOTE_TEST_TOKEN", "s3cret")]).await;
    let first = s.value("return (await MCP.remote.pid({})).structuredContent.result").await;
    server.kill().await;
    let value = s
        .value("try { await MCP.remote.add({ a: 1, b: 2 }); return 'answered' } catch (e) { return { message: e.message, code: e.code } }")
        .await;
    let message = value["message"].as_str().unwrap();
    assert!(message.contains(&format!("MCP server \"remote\" cannot be reached at {url}")), "{value}");
    assert!(message.contains("reconnects with backoff"), "{value}");
    assert_eq!(value["code"], "unavailable", "{value}");
    let entry = server_entry(&s.status().await, "remote");
    assert_eq!(entry["state"], "reconnecting", "{entry}");
    assert!(entry["error"].as_str().is_some_and(|e| !e.is_empty()), "{entry}");
    // Back on the same port, as a new process (with one more tool): the old session id is unknown
    // there (404), so the gateway initializes a new session and lists the tools again.
    let server = RemoteServer::start("http", port, "s3cret", None, true).await;
    eventually("list_changed after the session came back", || {
        *s.heard.tool_list_changed.lock().unwrap() >= 1
    })
    .await;
    let value = s
        .value(
            r#"return { extra: (await MCP.remote.extra({})).structuredContent.result, pid: (await MCP.remote.pid({})).structuredContent.result };"#,
        )
        .await;
    assert_eq!(value["extra"], "extra", "{value}");
    assert_ne!(value["pid"], first, "a new server process: {value}");
    let entry = server_entry(&s.status().await, "remote");
    assert_eq!(entry["state"], "running", "{entry}");
    assert_eq!(entry["reconnects"], 1, "{entry}");
    let stderr = s.stderr();
    assert!(stderr.contains("cannot be reached") && stderr.contains("lost the session"), "{stderr}");
    s.stop().await;
    server.kill().await;
}

/// A stdio upstream that crashes soon after every start: restarted with backoff, then given up on
/// (state `failed`); its calls fail with a message saying so; the gateway stays up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_remote_a_stdio_upstream_that_keeps_crashing_is_given_up_on() {
    let dir = temp_dir("give-up");
    let mut crashing = scripted_server(&dir);
    crashing["env"]["SCRIPTED_EXIT_AFTER_LIST_MS"] = json!("300");
    let config = json!({
        "codeMode": { "timeoutMs": 10000 },
        "mcpServers": { "crashing": crashing, "steady": scripted_server(&dir) }
    });
    let s = Scripted::with_config(dir, &config).await;
    let mut entry = Value::Null;
    for _ in 0..300 {
        entry = server_entry(&s.status().await, "crashing");
        if entry["state"] == "failed" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(entry["state"], "failed", "given up within 30 s: {entry}");
    assert_eq!(entry["restarts"], 5, "exactly MAX_RESTARTS restarts: {entry}");
    let error = entry["error"].as_str().unwrap();
    assert!(error.contains("exited 6 times in a row") && error.contains("stopped restarting it"), "{entry}");
    // It stays given up: no more restarts.
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(server_entry(&s.status().await, "crashing")["restarts"], 5);
    let value = s
        .value("try { await MCP.crashing.echo({}); return 'answered' } catch (e) { return { message: e.message, code: e.code } }")
        .await;
    assert_eq!(value["code"], "unavailable", "{value}");
    assert!(
        value["message"]
            .as_str()
            .unwrap()
            .contains("MCP server \"crashing\" is unavailable: it exited 6 times"),
        "{value}"
    );
    assert_eq!(
        s.value("return (await MCP.steady.echo({ v: 1 })).structuredContent").await,
        json!({ "v": 1 })
    );
    assert_eq!(server_entry(&s.status().await, "steady")["state"], "running");
    s.stop().await;
}

#[test]
fn serve_remote_config_errors_name_the_path() {
    let dir = temp_dir("remote-config");
    let config = dir.join("codemode.json");
    for (entry, expected) in [
        (
            r#"{ "url": "http://exa mple.com/mcp" }"#,
            "$.mcpServers.x.url: expected an http:// or https:// URL, got string \"http://exa mple.com/mcp\" (not a valid URL",
        ),
        (
            r#"{ "url": "ftp://example.com/mcp" }"#,
            "$.mcpServers.x.url: expected an http:// or https:// URL, got string \"ftp://example.com/mcp\"",
        ),
        (
            r#"{ "url": "https://example.com/mcp", "headers": { "Authorization": "Bearer ${CODEMODE_TEST_UNSET_TOKEN}" } }"#,
            "$.mcpServers.x.headers.Authorization: environment variable \"CODEMODE_TEST_UNSET_TOKEN\" is not set",
        ),
        (
            r#"{ "url": "https://${CODEMODE_TEST_UNSET_HOST}/mcp" }"#,
            "$.mcpServers.x.url: environment variable \"CODEMODE_TEST_UNSET_HOST\" is not set",
        ),
        (
            r#"{ "url": "https://example.com/mcp", "command": "npx" }"#,
            "$.mcpServers.x.url: give either command",
        ),
        (
            r#"{ "type": "ws", "url": "https://example.com/mcp" }"#,
            "$.mcpServers.x.type: unknown server type \"ws\";",
        ),
        (r#"{ "type": "sse" }"#, "$.mcpServers.x.url: missing required field \"url\""),
        (
            r#"{ "type": "http", "url": "https://example.com/mcp", "env": {} }"#,
            "$.mcpServers.x.env: unknown key; allowed keys are type, url, headers",
        ),
    ] {
        std::fs::write(&config, format!(r#"{{ "mcpServers": {{ "x": {entry} }} }}"#)).unwrap();
        let out = crate::serve::serve_once(&config);
        assert!(!out.status.success(), "{entry}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(expected), "{entry}: {stderr}");
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// A legacy SSE server answering with one event past the 16 MiB bound: the call fails, the stream
/// is dropped (nothing larger is buffered), the gateway connects again and the server's other
/// tools work.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_remote_an_sse_event_past_the_bound_fails_its_call_and_the_stream_is_reopened() {
    let port = free_port();
    let _server = tokio::process::Command::new("python3")
        .arg(crate::fixture_path("hostile_sse.py"))
        .env("HOSTILE_PORT", port.to_string())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    for _ in 0..200 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let dir = temp_dir("remote-sse-big");
    let config = json!({
        "codeMode": { "timeoutMs": 30000 },
        "mcpServers": { "hostile": { "url": format!("http://127.0.0.1:{port}/sse") } }
    });
    let s = Scripted::with_config(dir, &config).await;
    assert_eq!(s.value("return (await MCP.hostile.small({})).content[0].text").await, "small");
    let value = s
        .value("try { await MCP.hostile.big({}); return 'answered' } catch (e) { return { message: e.message, code: e.code } }")
        .await;
    assert_eq!(value["code"], "upstream_error", "{value}");
    assert!(
        value["message"].as_str().unwrap().contains("MCP server \"hostile\" exited or closed its connection"),
        "{value}"
    );
    eventually("the SSE stream reopened", || s.stderr().contains("exited; restarting it")).await;
    let mut back = Value::Null;
    for _ in 0..100 {
        back = s.exec("return (await MCP.hostile.small({})).content[0].text").await;
        if back["value"] == "small" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(back["value"], "small", "{back}");
    assert!(s.stderr().contains("an event is larger than 16 MiB"), "{}", s.stderr());
    let entry = server_entry(&s.status().await, "hostile");
    assert_eq!(entry["state"], "running", "{entry}");
    assert!(entry["reconnects"].as_u64().unwrap() >= 1, "{entry}");
    s.stop().await;
}
