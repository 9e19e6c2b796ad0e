//! `codemode serve` as a well-kept MCP server, checked on the wire (raw JSON-RPC lines): server
//! info, notifications before their response, `logging/setLevel`, instructions per mode, exit
//! status.

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout};

use crate::serve::{scripted_server, temp_dir};

/// `codemode serve` driven by hand over its stdio.
struct Raw {
    serve: Child,
    stdin: Option<ChildStdin>,
    lines: Lines<BufReader<ChildStdout>>,
    dir: std::path::PathBuf,
}

impl Raw {
    fn start(name: &str, config: impl FnOnce(&std::path::Path) -> Value) -> Raw {
        let dir = temp_dir(name);
        let path = dir.join("codemode.json");
        std::fs::write(&path, config(&dir).to_string()).unwrap();
        let mut serve = tokio::process::Command::new(env!("CARGO_BIN_EXE_codemode"))
            .args(["serve", "--config", path.to_str().unwrap()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(std::fs::File::create(dir.join("stderr.log")).unwrap()))
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let stdin = serve.stdin.take();
        let lines = BufReader::new(serve.stdout.take().unwrap()).lines();
        Raw { serve, stdin, lines, dir }
    }

    async fn send(&mut self, message: Value) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(format!("{message}\n").as_bytes()).await.unwrap();
    }

    async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(30), self.lines.next_line()).await;
        serde_json::from_str(&line.expect("a message within 30 s").unwrap().expect("open stdout")).unwrap()
    }

    /// Sends request `id` and reads until its response: (notifications before it, the response).
    async fn request(&mut self, id: u64, method: &str, params: Value) -> (Vec<Value>, Value) {
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })).await;
        let mut before = Vec::new();
        loop {
            let message = self.next().await;
            if message.get("id") == Some(&json!(id)) && message.get("method").is_none() {
                return (before, message);
            }
            before.push(message);
        }
    }

    async fn initialize(&mut self) -> Value {
        let params = json!({ "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "raw", "version": "1" } });
        let (_, init) = self.request(0, "initialize", params).await;
        self.send(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" })).await;
        init
    }

    async fn exec(&mut self, id: u64, code: &str, token: Option<u64>) -> (Vec<Value>, Value) {
        let mut params = json!({ "name": "exec", "arguments": { "code": code } });
        if let Some(token) = token {
            params["_meta"] = json!({ "progressToken": token });
        }
        self.request(id, "tools/call", params).await
    }

    async fn exit(mut self) -> std::process::ExitStatus {
        drop(self.stdin.take());
        let status = tokio::time::timeout(Duration::from_secs(20), self.serve.wait()).await.unwrap().unwrap();
        let _ = std::fs::remove_dir_all(&self.dir);
        status
    }
}

fn scripted(dir: &std::path::Path, enabled: bool) -> Value {
    json!({ "codeMode": { "enabled": enabled, "timeoutMs": 20000 }, "mcpServers": { "scripted": scripted_server(dir) } })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_info_and_instructions_match_the_gateway_and_its_mode() {
    for enabled in [true, false] {
        let mut raw = Raw::start(&format!("info-{enabled}"), |dir| scripted(dir, enabled));
        let init = raw.initialize().await;
        let result = &init["result"];
        assert_eq!(result["serverInfo"]["name"], "codemode", "{init}");
        assert_eq!(result["serverInfo"]["version"], env!("CARGO_PKG_VERSION"), "{init}");
        let instructions = result["instructions"].as_str().unwrap();
        assert_eq!(instructions.contains("exec"), enabled, "{instructions}");
        assert!(raw.exit().await.success());
    }
}

/// 50 exec calls with progress tokens, each making nested calls that report progress: on the wire,
/// every notification about a call comes before its response, never after.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notifications_of_a_call_come_before_its_response() {
    let mut raw = Raw::start("ordering", |dir| scripted(dir, true));
    raw.initialize().await;
    let mut answered = Vec::new();
    for id in 1..=50u64 {
        let (before, response) = raw
            .exec(id, "return (await MCP.scripted.progress({ steps: 2 })).structuredContent", Some(id))
            .await;
        assert_eq!(response["result"]["structuredContent"]["status"], "completed", "{response}");
        let progress: Vec<&Value> =
            before.iter().filter(|m| m["method"] == "notifications/progress").collect();
        assert!(progress.len() >= 4, "call {id}: {before:?}");
        for message in &progress {
            let token = message["params"]["progressToken"].as_u64().unwrap();
            assert!(!answered.contains(&token), "progress for call {token} after its response: {message}");
            assert_eq!(token, id, "{message}");
        }
        answered.push(id);
    }
    let (before, _) = raw.request(99, "tools/list", json!({})).await;
    assert!(before.iter().all(|m| m["method"] != "notifications/progress"), "{before:?}");
    assert!(raw.exit().await.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logging_set_level_is_honoured() {
    let mut raw = Raw::start("set-level", |dir| scripted(dir, true));
    raw.initialize().await;
    let code = "return (await MCP.scripted.echo({ a: 1 })).structuredContent";
    let logs = |before: &[Value]| before.iter().filter(|m| m["method"] == "notifications/message").count();
    let (before, _) = raw.exec(1, code, None).await;
    assert_eq!(logs(&before), 2, "started and finished by default: {before:?}");
    let (_, set) = raw.request(2, "logging/setLevel", json!({ "level": "warning" })).await;
    assert_eq!(set["result"], json!({}), "{set}");
    let (before, _) = raw.exec(3, code, None).await;
    assert_eq!(logs(&before), 0, "info events are below warning: {before:?}");
    raw.request(4, "logging/setLevel", json!({ "level": "debug" })).await;
    let (before, _) = raw.exec(5, code, None).await;
    assert_eq!(logs(&before), 2, "{before:?}");
    assert!(raw.exit().await.success());
}

/// Stdin closing before initialize (or right after it) is a normal exit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdin_closing_before_or_after_initialize_exits_zero() {
    let raw = Raw::start("exit-early", |dir| scripted(dir, true));
    let status = raw.exit().await;
    assert!(status.success(), "{status:?}");
    let mut raw = Raw::start("exit-after-init", |dir| scripted(dir, true));
    raw.initialize().await;
    let status = raw.exit().await;
    assert!(status.success(), "{status:?}");
}

/// Pass-through (Code Mode disabled) in front of two copies of the same upstream: each tool's
/// definition is the upstream's own (title, annotations, outputSchema, _meta), and duplicate names
/// become `<server>_<name>`, each routed to its server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pass_through_keeps_definitions_and_disambiguates_duplicates() {
    let dir = temp_dir("pass-through");
    let config = json!({
        "codeMode": { "enabled": false },
        "mcpServers": { "left": scripted_server(&dir.join("left")), "right": scripted_server(&dir.join("right")) },
        "catalog": { "tools": [{ "name": "own", "behavior": { "kind": "static", "details": { "own": true } } }] },
    });
    for side in ["left", "right"] {
        std::fs::create_dir_all(dir.join(side)).unwrap();
    }
    let s = crate::serve::Scripted::with_config(dir, &config).await;
    let tools = s.client.list_all_tools().await.unwrap();
    let names: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
    assert!(names.contains(&"own".to_owned()), "{names:?}");
    assert!(names.contains(&"left_pid".to_owned()) && names.contains(&"right_pid".to_owned()), "{names:?}");
    assert!(!names.contains(&"pid".to_owned()), "{names:?}");
    let mut sorted = names.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), names.len(), "names are unique: {names:?}");
    let pid = serde_json::to_value(tools.iter().find(|t| t.name == "left_pid").unwrap()).unwrap();
    assert_eq!(pid["title"], "Process id", "{pid}");
    assert_eq!(pid["annotations"], json!({ "readOnlyHint": true, "idempotentHint": true }), "{pid}");
    assert_eq!(
        pid["outputSchema"],
        json!({ "type": "object", "properties": { "pid": { "type": "integer" } }, "required": ["pid"] }),
        "{pid}"
    );
    assert_eq!(pid["_meta"], json!({ "example.com/origin": "scripted" }), "{pid}");
    assert_eq!(pid["description"], "scripted tool pid", "{pid}");
    // Each duplicate goes to its own server: two different processes.
    let mut pids = Vec::new();
    for name in ["left_pid", "right_pid"] {
        let result = s.client.call_tool(rmcp::model::CallToolRequestParams::new(name)).await.unwrap();
        pids.push(result.structured_content.unwrap()["pid"].as_u64().unwrap());
    }
    assert_ne!(pids[0], pids[1]);
    let init = s.client.peer_info().unwrap();
    assert!(!init.instructions.clone().unwrap_or_default().contains("exec"));
    s.stop().await;
}

/// A config as clients write it: JSONC with comments and trailing commas, VS Code's `servers`,
/// `${VAR}` / `${env:VAR}`, `envFile`, `disabled`, `autoApprove` and `timeout` (accepted, one
/// warning each), per-server `timeoutMs`, a `codeMode` object without `enabled` (enabled), a
/// deny entry that matches nothing (warned, in the status), and the environment allowlist.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn configs_copied_from_clients_are_accepted() {
    let dir = temp_dir("client-config");
    std::fs::write(dir.join("vars.env"), "# from a file\nFROM_FILE=yes\nexport QUOTED=\"a b\"\n").unwrap();
    let script = crate::fixture_path("scripted_upstream.py");
    let text = r#"// copied from an editor's mcp.json
{
  "servers": { // VS Code's key
    "scripted": {
      "command": "python3",
      "args": ["${SCRIPT}"],
      "env": { "SCRIPTED_LOG": "${env:LOG_DIR}/upstream.log", },
      "envFile": "vars.env",
      "autoApprove": ["echo"],
      "timeout": 60,
      "timeoutMs": 400,
    },
    "inherits": { "command": "python3", "args": ["${SCRIPT}"], "inheritEnv": true },
    "off": { "command": "no-such-program", "disabled": true },
  },
  /* no "enabled": a gateway is for Code Mode */
  "codeMode": { "timeoutMs": 20000 },
  "catalog": { "deny": ["mcp:scripted:crash", "mcp:scripted:printEnv"] },
}"#;
    let envs = [
        ("SCRIPT", script.to_str().unwrap()),
        ("LOG_DIR", dir.to_str().unwrap()),
        ("CODEMODE_TEST_MARKER", "leaked"),
    ];
    let s = crate::serve::Scripted::with_config_text(dir.clone(), text, &envs).await;
    let value = s
        .value(
            r#"const env = async (server, name) => (await MCP[server].env({ name })).structuredContent.value;
const out = {
  fromFile: await env("scripted", "FROM_FILE"), quoted: await env("scripted", "QUOTED"),
  marker: await env("scripted", "CODEMODE_TEST_MARKER"), path: typeof (await env("scripted", "PATH")),
  inherited: await env("inherits", "CODEMODE_TEST_MARKER"), crash: 'crash' in MCP.scripted ? 'function' : 'undefined',
};
try { await MCP.scripted.sleep({ ms: 5000 }); out.sleep = "answered"; } catch (e) { out.sleep = e.message; }
return out;"#,
        )
        .await;
    assert_eq!(value["fromFile"], "yes", "{value}");
    assert_eq!(value["quoted"], "a b", "{value}");
    assert_eq!(value["marker"], Value::Null, "not in the allowlist: {value}");
    assert_eq!(value["path"], "string", "{value}");
    assert_eq!(value["inherited"], "leaked", "inheritEnv: {value}");
    assert_eq!(value["crash"], "undefined", "denied: {value}");
    assert!(value["sleep"].as_str().unwrap().contains("did not answer within 400 ms"), "{value}");
    assert!(dir.join("upstream.log").exists(), "${{env:LOG_DIR}} was expanded");
    let status = s.status().await;
    assert_eq!(status["upstreams"]["disabled"], json!(["off"]), "{status}");
    assert_eq!(
        status["upstreams"]["warnings"],
        json!([{ "name": "deny", "warning": "deny entry \"mcp:scripted:printEnv\" matches no tool, so it denies nothing" }]),
        "{status}"
    );
    let stderr = s.stderr();
    for text in [
        "$.mcpServers.scripted.timeout is not used",
        "$.mcpServers.scripted.autoApprove is not used",
        "deny entry \"mcp:scripted:printEnv\" matches no tool",
        "\"off\" is disabled",
    ] {
        assert!(stderr.contains(text), "{text}: {stderr}");
    }
    s.stop().await;
}
