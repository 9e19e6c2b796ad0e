//! `codemode serve --http` against the official Python MCP client (`mcp<2`, Streamable HTTP):
//! exec and wait, two sessions at once with their own runs, the bearer token, Origin and Host
//! checks, progress ordering, `logging/setLevel`, cancellation, graceful shutdown.
//!
//! The client is `tests/fixtures/http_client.py`, run with the python of the venv `.ci/run`
//! creates (`CODEMODE_TEST_MCP_PYTHON`); the tests fail with the setup command when it is missing.

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::serve::{scripted_server, temp_dir};

/// The python that has the MCP SDK.
fn mcp_python() -> String {
    let python = std::env::var("CODEMODE_TEST_MCP_PYTHON").unwrap_or_else(|_| "python3".to_owned());
    let ok = std::process::Command::new(&python)
        .args(["-c", "import mcp.client.streamable_http, httpx"])
        .stderr(Stdio::null())
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

/// `codemode serve --http 127.0.0.1:0` in front of the scripted upstream.
struct HttpGateway {
    serve: tokio::process::Child,
    url: String,
    dir: std::path::PathBuf,
    stderr: std::sync::Arc<std::sync::Mutex<String>>,
}

impl HttpGateway {
    async fn start(name: &str, timeout_ms: u64, args: &[&str], envs: &[(&str, &str)]) -> HttpGateway {
        let dir = temp_dir(&format!("http-{name}"));
        let config = json!({
            "codeMode": { "enabled": true, "timeoutMs": timeout_ms },
            "mcpServers": { "scripted": scripted_server(&dir) },
            "upstreamTimeoutMs": 30000
        });
        let path = dir.join("codemode.json");
        std::fs::write(&path, config.to_string()).unwrap();
        let mut serve = tokio::process::Command::new(env!("CARGO_BIN_EXE_codemode"))
            .args(["serve", "--config", path.to_str().unwrap(), "--http", "127.0.0.1:0"])
            .args(args)
            .envs(envs.iter().copied())
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(serve.stderr.take().unwrap()).lines();
        let stderr = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let deadline = Instant::now() + Duration::from_secs(60);
        let url = loop {
            let line = tokio::time::timeout_at(deadline.into(), lines.next_line())
                .await
                .expect("the gateway says where it listens within 60 s")
                .unwrap()
                .unwrap_or_else(|| panic!("the gateway exited: {}", stderr.lock().unwrap()));
            stderr.lock().unwrap().push_str(&format!("{line}\n"));
            if let Some(url) = line.strip_prefix("codemode serve: listening on ") {
                break url.trim().to_owned();
            }
        };
        let keep = stderr.clone();
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                keep.lock().unwrap().push_str(&format!("{line}\n"));
            }
        });
        HttpGateway { serve, url, dir, stderr }
    }

    fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    fn client_command(
        &self,
        scenario: &str,
        arg: Option<&str>,
        envs: &[(&str, &str)],
    ) -> tokio::process::Command {
        let mut command = tokio::process::Command::new(mcp_python());
        command
            .arg(crate::fixture_path("http_client.py"))
            .args([self.url.as_str(), scenario])
            .args(arg)
            .envs(envs.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        command
    }

    /// Runs a scenario of the Python client to its end; what it printed.
    async fn client(&self, scenario: &str, arg: Option<&str>, envs: &[(&str, &str)]) -> Value {
        let out =
            tokio::time::timeout(Duration::from_secs(180), self.client_command(scenario, arg, envs).output())
                .await
                .expect("the Python client finishes within 180 s")
                .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{scenario}: {}\nstdout: {stdout}\ngateway: {}",
            String::from_utf8_lossy(&out.stderr),
            self.stderr()
        );
        serde_json::from_str(stdout.lines().last().unwrap_or_default())
            .unwrap_or_else(|e| panic!("{scenario}: {e}: {stdout}"))
    }

    /// What the upstream received, one JSON-RPC message per entry.
    fn upstream_log(&self) -> Vec<Value> {
        std::fs::read_to_string(self.dir.join("upstream.log"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    fn signal(&self, signal: &str) {
        let pid = self.serve.id().unwrap().to_string();
        assert!(std::process::Command::new("kill").args([signal, &pid]).status().unwrap().success());
    }

    async fn exit_status(&mut self, within: Duration) -> std::process::ExitStatus {
        tokio::time::timeout(within, self.serve.wait())
            .await
            .unwrap_or_else(|_| panic!("the gateway did not exit within {within:?}: {}", self.stderr()))
            .unwrap()
    }

    async fn stop(mut self) {
        self.signal("-TERM");
        let status = self.exit_status(Duration::from_secs(20)).await;
        assert!(status.success(), "{status}: {}", self.stderr());
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_http_exec_and_wait_with_the_python_client() {
    let gateway = HttpGateway::start("exec-wait", 300, &[], &[]).await;
    assert!(gateway.url.starts_with("http://127.0.0.1:") && gateway.url.ends_with("/mcp"), "{}", gateway.url);
    let out = gateway.client("exec-wait", None, &[]).await;
    assert_eq!(out["serverInfo"]["name"], "codemode", "{out}");
    assert_eq!(out["serverInfo"]["version"], env!("CARGO_PKG_VERSION"), "{out}");
    assert!(out["instructions"].as_str().unwrap().contains("exec"), "{out}");
    assert!(out["sessionId"].as_str().is_some_and(|s| !s.is_empty()), "stateful session: {out}");
    assert_eq!(out["tools"], json!(["exec", "wait"]), "{out}");
    assert_eq!(out["first"]["status"], "waiting", "{out}");
    assert_eq!(out["final"]["status"], "completed", "{out}");
    assert_eq!(out["final"]["value"], json!({ "slept": true }), "{out}");
    assert_eq!(out["status"]["suspendedRuns"], 0, "{out}");
    assert_eq!(out["status"]["clients"], 1, "{out}");
    // The session ended (the client sent DELETE): nothing of it is left (reading the status
    // alone does not make a session a client that hears messages).
    let status = gateway.client("status", None, &[]).await;
    assert_eq!(status["clients"], 0, "{status}");
    assert_eq!(status["trackedRuns"], 0, "{status}");
    gateway.stop().await;
}

/// Two sessions at once, each with a suspended run: each one's `wait` on the other's run id gets
/// the spec's failed result and does not disturb it; each finishes its own run with its own result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_http_two_clients_have_separate_runs() {
    let gateway = HttpGateway::start("two", 300, &[], &[]).await;
    let out = gateway.client("two-clients", None, &[]).await;
    let sessions = out["sessions"].as_array().unwrap();
    assert_ne!(sessions[0], sessions[1], "{out}");
    assert_eq!(out["clientsDuring"], 2, "{out}");
    for first in out["first"].as_array().unwrap() {
        assert_eq!(first["status"], "waiting", "{out}");
    }
    for foreign in out["foreign"].as_array().unwrap() {
        assert_eq!(foreign["status"], "failed", "{out}");
        assert_eq!(foreign["code"], "invalid_input", "{out}");
        assert_eq!(foreign["error"], "code mode run belongs to a different session.", "{out}");
        assert!(foreign.get("value").is_none(), "never another client's result: {out}");
    }
    assert_eq!(out["final"][0]["status"], "completed", "{out}");
    assert_eq!(out["final"][0]["value"], r#"A:{"slept":true}"#, "{out}");
    assert_eq!(out["final"][1]["status"], "completed", "{out}");
    assert_eq!(out["final"][1]["value"], r#"B:{"slept":true}"#, "{out}");
    assert_eq!(out["status"]["suspendedRuns"], 0, "{out}");
    // The upstream is shared: one connection (one initialize) served both sessions.
    let initializes = gateway.upstream_log().iter().filter(|m| m["method"] == "initialize").count();
    assert_eq!(initializes, 1);
    gateway.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_http_requires_the_bearer_token() {
    let token = "s3cret-token-for-the-test";
    let envs = [("CODEMODE_TEST_HTTP_TOKEN", token)];
    let gateway =
        HttpGateway::start("auth", 20000, &["--auth-token-env", "CODEMODE_TEST_HTTP_TOKEN"], &envs).await;
    let raw = gateway.client("raw", None, &[("RAW_TOKEN", token)]).await;
    for case in ["plain", "wrongToken", "otherScheme", "badOrigin"] {
        assert_eq!(raw[case]["status"], 401, "{case}: {raw}");
        assert_eq!(raw[case]["wwwAuthenticate"], "Bearer", "{case}: {raw}");
        assert!(raw[case]["sessionId"].is_null(), "{case}: {raw}");
    }
    for case in ["token", "lowercaseScheme", "loopbackOrigin"] {
        assert_eq!(raw[case]["status"], 200, "{case}: {raw}");
        assert!(raw[case]["sessionId"].is_string(), "{case}: {raw}");
    }
    assert_eq!(raw["badOriginWithToken"]["status"], 403, "{raw}");
    assert_eq!(raw["badHost"]["status"], 403, "{raw}");
    // Without the token the MCP client cannot even start; with it, it works.
    let out = gateway.client_command("exec-wait", None, &[]).output().await.unwrap();
    assert!(!out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    assert!(String::from_utf8_lossy(&out.stderr).contains("401"), "{}", String::from_utf8_lossy(&out.stderr));
    let out = gateway.client("exec-wait", None, &[("HTTP_TOKEN", token)]).await;
    assert_eq!(out["final"]["status"], "completed", "{out}");
    assert!(!gateway.stderr().contains(token), "the token is never logged");
    gateway.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_http_token_variable_missing_or_empty_is_a_start_up_error() {
    let dir = temp_dir("http-token-missing");
    let path = dir.join("codemode.json");
    std::fs::write(&path, json!({ "mcpServers": {} }).to_string()).unwrap();
    for value in [None, Some(""), Some("  ")] {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_codemode"));
        command.args(["serve", "--config", path.to_str().unwrap(), "--http", "127.0.0.1:0"]);
        command.args(["--auth-token-env", "CODEMODE_TEST_HTTP_TOKEN_UNSET"]).stdin(Stdio::null());
        command.env_remove("CODEMODE_TEST_HTTP_TOKEN_UNSET");
        if let Some(value) = value {
            command.env("CODEMODE_TEST_HTTP_TOKEN_UNSET", value);
        }
        let out = command.output().unwrap();
        assert!(!out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("--auth-token-env CODEMODE_TEST_HTTP_TOKEN_UNSET: the environment variable CODEMODE_TEST_HTTP_TOKEN_UNSET is not set or empty"),
            "{stderr}"
        );
        assert!(!stderr.contains("listening on"), "{stderr}");
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_http_refuses_foreign_origins_and_hosts_on_loopback() {
    let gateway =
        HttpGateway::start("origin", 20000, &["--allowed-origin", "https://app.example.com:443"], &[]).await;
    let raw = gateway.client("raw", None, &[]).await;
    assert_eq!(raw["plain"]["status"], 200, "no Origin (not a browser): {raw}");
    assert_eq!(raw["plain"]["deleteStatus"], 204, "DELETE ends the session: {raw}");
    assert_eq!(raw["loopbackOrigin"]["status"], 200, "{raw}");
    assert_eq!(raw["badOrigin"]["status"], 403, "{raw}");
    assert!(raw["badOrigin"]["body"].as_str().unwrap().contains("Origin"), "{raw}");
    assert!(raw["badOrigin"]["sessionId"].is_null(), "{raw}");
    assert_eq!(raw["badHost"]["status"], 403, "{raw}");
    assert!(raw["badHost"]["body"].as_str().unwrap().contains("Host"), "{raw}");
    gateway.stop().await;
}

/// 50 exec calls with progress tokens, one after another: every progress notification of a call
/// reaches the client before the call's response (on the POST's SSE stream), none after.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_http_progress_comes_before_the_response() {
    let gateway = HttpGateway::start("progress", 20000, &[], &[]).await;
    let out = gateway.client("progress", Some("50"), &[]).await;
    let calls = out["calls"].as_array().unwrap();
    assert_eq!(calls.len(), 50);
    for (i, call) in calls.iter().enumerate() {
        assert_eq!(call["result"]["status"], "completed", "call {i}: {call}");
        let progress: Vec<&str> =
            call["progress"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
        assert_eq!(
            progress,
            [
                "calling mcp:scripted:progress",
                "mcp:scripted:progress: 1/2 step 1",
                "mcp:scripted:progress: 2/2 step 2",
                "mcp:scripted:progress finished"
            ],
            "call {i}: all of its progress, in order, before its response"
        );
        assert_eq!(call["values"], json!([1.0, 2.0, 3.0, 4.0]), "call {i}: {call}");
    }
    // Every progress notification the client received, wherever it came from, came before the
    // response of its call: none was left for after.
    let mut answered = std::collections::HashSet::new();
    let mut notifications = 0;
    for event in out["events"].as_array().unwrap() {
        match event[0].as_str().unwrap() {
            "response" => {
                answered.insert(event[1].as_u64().unwrap());
            }
            _ => {
                notifications += 1;
                // The Python client's progress token is its request id: 0 is initialize, exec i is i + 1.
                let call = event[1].as_u64().unwrap() - 1;
                assert!(!answered.contains(&call), "progress after the response of call {call}: {event}");
            }
        }
    }
    assert_eq!(notifications, 200, "{}", out["events"]);
    gateway.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_http_logging_set_level_is_honoured_per_session() {
    let gateway = HttpGateway::start("set-level", 20000, &[], &[]).await;
    let out = gateway.client("set-level", None, &[]).await;
    let events = |key: &str| -> Vec<String> {
        out[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["event"].as_str().unwrap_or_default().to_owned())
            .collect()
    };
    assert_eq!(events("default"), ["nestedCallStarted", "nestedCallFinished"], "{out}");
    assert!(events("warning").is_empty(), "{out}");
    assert_eq!(events("info"), ["nestedCallStarted", "nestedCallFinished"], "{out}");
    gateway.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_http_cancelled_exec_cancels_the_upstream_call() {
    let gateway = HttpGateway::start("cancel", 30000, &[], &[]).await;
    let out = gateway.client("cancel", None, &[]).await;
    assert_eq!(out["during"]["upstreamCallsInFlight"], 1, "{out}");
    assert_eq!(out["after"]["upstreamCallsInFlight"], 0, "{out}");
    assert_eq!(out["after"]["suspendedRuns"], 0, "{out}");
    let cancelled = gateway.upstream_log().iter().any(|m| m["method"] == "notifications/cancelled");
    assert!(cancelled, "the upstream heard the cancellation: {:?}", gateway.upstream_log());
    gateway.stop().await;
}

/// SIGTERM while a call is in flight: the call finishes and its client gets the result, then the
/// gateway exits 0 and stops its upstreams.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_http_graceful_shutdown_finishes_the_call_in_flight() {
    let mut gateway = HttpGateway::start("shutdown", 30000, &[], &[]).await;
    let mut client = gateway.client_command("in-flight", Some("2500"), &[]).spawn().unwrap();
    let mut client_err = BufReader::new(client.stderr.take().unwrap()).lines();
    loop {
        let line =
            tokio::time::timeout(Duration::from_secs(60), client_err.next_line()).await.unwrap().unwrap();
        if line.expect("the client reports its call in flight").contains("in flight") {
            break;
        }
    }
    gateway.signal("-TERM");
    let out =
        tokio::time::timeout(Duration::from_secs(60), client.wait_with_output()).await.unwrap().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let result: Value = serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{e}: {stdout}\n{}", gateway.stderr()));
    assert_eq!(result["result"]["status"], "completed", "{result}\n{}", gateway.stderr());
    assert_eq!(result["result"]["value"], json!({ "slept": true }), "{result}");
    let status = gateway.exit_status(Duration::from_secs(20)).await;
    assert!(status.success(), "{status}: {}", gateway.stderr());
    assert!(gateway.stderr().contains("upstream servers stopped"), "{}", gateway.stderr());
    let _ = std::fs::remove_dir_all(&gateway.dir);
}

/// A call that outlives the grace period does not hold the gateway: it exits 0 soon after.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_http_shutdown_grace_is_bounded() {
    let mut gateway = HttpGateway::start("grace", 30000, &["--shutdown-grace-ms", "500"], &[]).await;
    let mut client = gateway.client_command("in-flight", Some("25000"), &[]).spawn().unwrap();
    let mut client_err = BufReader::new(client.stderr.take().unwrap()).lines();
    loop {
        let line =
            tokio::time::timeout(Duration::from_secs(60), client_err.next_line()).await.unwrap().unwrap();
        if line.expect("the client reports its call in flight").contains("in flight") {
            break;
        }
    }
    let signalled = Instant::now();
    gateway.signal("-TERM");
    let status = gateway.exit_status(Duration::from_secs(15)).await;
    assert!(status.success(), "{status}: {}", gateway.stderr());
    assert!(signalled.elapsed() < Duration::from_secs(10), "{:?}", signalled.elapsed());
    assert!(gateway.stderr().contains("requests still in flight after 500 ms"), "{}", gateway.stderr());
    let _ = client.kill().await;
    let _ = std::fs::remove_dir_all(&gateway.dir);
}
