//! Shared run stores with a real Redis (`redis-server`, started by each test on 127.0.0.1 and a free
//! port, no persistence): the runtime's shared-run scenarios over Redis, and real `codemode serve`
//! processes sharing a Redis or a file store (restart, kill -9).

use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use codemode::store::{RedisRunStore, RunStore};
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

#[path = "../../../codemode/tests/all/shared_runs.rs"]
mod shared_runs;

/// A `redis-server` of this test, stopped (and its directory removed) when dropped.
pub struct Redis {
    child: std::process::Child,
    dir: std::path::PathBuf,
    pub url: String,
}

impl Redis {
    pub fn start(tag: &str) -> Redis {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let dir = std::env::temp_dir().join(format!("codemode-redis-{tag}-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let child = std::process::Command::new("redis-server")
            .args(["--bind", "127.0.0.1", "--port", &port.to_string(), "--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(&dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server must be installed (apt-get install redis-server; .ci/run does)");
        let redis = Redis { child, dir, url: format!("redis://127.0.0.1:{port}/0") };
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(std::time::Instant::now() < deadline, "redis-server did not start on port {port}");
            std::thread::sleep(Duration::from_millis(20));
        }
        redis
    }

    pub async fn store(&self) -> Arc<dyn RunStore> {
        Arc::new(RedisRunStore::connect(&self.url).await.unwrap())
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

macro_rules! over_redis {
    ($($name:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() {
                let redis = Redis::start(stringify!($name));
                shared_runs::$name(redis.store().await).await;
            }
        )*
    };
}

over_redis!(
    a_landed_result_is_delivered_by_the_other_replica,
    a_yielded_run_moves_and_output_is_delivered_once,
    a_call_of_a_stopped_replica_reaches_the_guest_as_interrupted,
    a_restart_safe_read_only_call_is_dispatched_again,
    a_parked_run_expires_after_its_ttl,
    concurrent_waits_on_two_replicas_let_exactly_one_win,
    foreign_and_tampered_runs_are_refused,
    cancelling_on_one_replica_stops_the_calls_on_the_other,
    a_thousand_cycles_keep_memory_flat,
);

/// The TTL is Redis key expiry: the keys of a parked run disappear by themselves.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_expires_the_keys_of_a_parked_run() {
    let redis = Redis::start("keys");
    let store = redis.store().await;
    let config = shared_runs::config(json!({ "snapshotTtlSeconds": 2 }));
    let a = shared_runs::replica_with(
        &store,
        "A",
        shared_runs::Mode::Answer,
        config,
        shared_runs::tools(),
        shared_runs::key(),
    );
    let run = shared_runs::waiting_id(&a.exec("await yield_control(); return 1;").await);
    let client = redis::Client::open(redis.url.as_str()).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    let ttl: i64 =
        redis::cmd("PTTL").arg(format!("codemode:run:{run}")).query_async(&mut conn).await.unwrap();
    assert!((1..=2000).contains(&ttl), "PTTL {ttl}");
    tokio::time::sleep(Duration::from_millis(2200)).await;
    let exists: i64 =
        redis::cmd("EXISTS").arg(format!("codemode:run:{run}")).query_async(&mut conn).await.unwrap();
    assert_eq!(exists, 0);
}

/// Bytes altered inside Redis are refused (and the run is kept).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_altered_in_redis_is_refused() {
    let redis = Redis::start("altered");
    let store = redis.store().await;
    let a = shared_runs::replica(&store, "A", shared_runs::Mode::Answer);
    let run = shared_runs::waiting_id(&a.exec("await yield_control(); return 1;").await);
    let client = redis::Client::open(redis.url.as_str()).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    let key = format!("codemode:run:{run}");
    let mut sealed: Vec<u8> =
        redis::cmd("HGET").arg(&key).arg("sealed").query_async(&mut conn).await.unwrap();
    let i = sealed.len() / 3;
    sealed[i] ^= 4;
    let () = redis::cmd("HSET").arg(&key).arg("sealed").arg(&sealed).query_async(&mut conn).await.unwrap();
    let (error, code) = shared_runs::failed(&a.wait(&run).await);
    assert_eq!(code.as_deref(), Some("invalid_input"));
    assert!(error.contains("integrity check"), "{error}");
    assert!(a.cm.contains_run(&run).await);
}

// ---- real `codemode serve` processes ----

const STATE_KEY: &str = "serve-test-state-key-0123456789";

struct Serve {
    child: tokio::process::Child,
    client: RunningService<RoleClient, ()>,
}

fn gateway_config(dir: &std::path::Path) -> std::path::PathBuf {
    let config = dir.join("codemode.json");
    std::fs::write(
        &config,
        json!({
            "codeMode": { "timeoutMs": 300 },
            "catalog": { "tools": [
                { "name": "slow_send", "behavior": { "kind": "delay", "ms": 600000, "details": "sent" } },
                { "name": "quick", "behavior": { "kind": "delay", "ms": 700, "details": "quick done" } }
            ] }
        })
        .to_string(),
    )
    .unwrap();
    config
}

async fn serve(dir: &std::path::Path, store: &str, log: &str) -> Serve {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_codemode"))
        .args(["serve", "--config"])
        .arg(gateway_config(dir))
        .args(["--run-store", store, "--state-key-env", "CODEMODE_TEST_STATE_KEY"])
        .env("CODEMODE_TEST_STATE_KEY", STATE_KEY)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(std::fs::File::create(dir.join(log)).unwrap()))
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let (stdout, stdin) = (child.stdout.take().unwrap(), child.stdin.take().unwrap());
    let client = ().serve((stdout, stdin)).await.unwrap();
    Serve { child, client }
}

impl Serve {
    async fn call(&self, tool: &str, arguments: Value) -> Value {
        let mut params = CallToolRequestParams::new(tool.to_owned());
        params.arguments = arguments.as_object().cloned();
        self.client.call_tool(params).await.unwrap().structured_content.unwrap()
    }

    async fn finish(&self, run: &str) -> Value {
        for _ in 0..60 {
            let r = self.call("wait", json!({ "runId": run })).await;
            if r["status"] != "waiting" {
                return r;
            }
        }
        panic!("run {run} still waiting");
    }
}

fn temp(tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("codemode-serve-store-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A waiting run survives a restart of `codemode serve` on a file store.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_file_store_keeps_a_waiting_run_across_a_serve_restart() {
    let dir = temp("restart");
    let store = format!("file://{}", dir.join("runs").display());
    let first = serve(&dir, &store, "first.log").await;
    let r = first
        .call(
            "exec",
            json!({ "code": "text('one'); await yield_control(); text('two'); return 'after restart';" }),
        )
        .await;
    assert_eq!(r["status"], "waiting", "{r}");
    let run = r["runId"].as_str().unwrap().to_owned();
    drop(first.client.cancel().await);
    let mut child = first.child;
    let exit = tokio::time::timeout(Duration::from_secs(20), child.wait()).await.unwrap().unwrap();
    assert!(exit.success());
    let second = serve(&dir, &store, "second.log").await;
    let r = second.call("wait", json!({ "runId": run })).await;
    assert_eq!(r["status"], "completed", "{r}");
    assert_eq!(r["value"], "after restart");
    assert_eq!(r["output"].as_array().map(Vec::len), Some(1), "{r}");
    drop(second.client.cancel().await);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Two gateways on one Redis: a run suspended on A with a slow call completes on B with A's landed
/// result; then A is killed (SIGKILL) with a call in flight, and B delivers it to the guest as a
/// catchable `interrupted` error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_gateways_on_redis_move_runs_and_settle_calls_of_a_killed_one() {
    let redis = Redis::start("serve");
    let dir = temp("redis");
    let a = serve(&dir, &redis.url, "a.log").await;
    let b = serve(&dir, &redis.url, "b.log").await;

    let r = a.call("exec", json!({ "code": "return await tools.quick({});" })).await;
    assert_eq!(r["status"], "waiting", "{r}");
    let run = r["runId"].as_str().unwrap().to_owned();
    let r = b.finish(&run).await;
    assert_eq!(r["status"], "completed", "{r}");
    assert_eq!(r["value"], "quick done");

    let code = "try { await tools.slow_send({}); return 'sent'; } catch (e) { return { code: e.code, message: e.message }; }";
    let r = a.call("exec", json!({ "code": code })).await;
    assert_eq!(r["status"], "waiting", "{r}");
    let run = r["runId"].as_str().unwrap().to_owned();
    let mut killed = a.child;
    let pid = killed.id().unwrap();
    let status = std::process::Command::new("kill").args(["-KILL", &pid.to_string()]).status().unwrap();
    assert!(status.success());
    let _ = killed.wait().await;
    let r = b.finish(&run).await;
    assert_eq!(r["status"], "completed", "{r}");
    assert_eq!(r["value"]["code"], "interrupted", "{r}");
    drop(b.client.cancel().await);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A shared store without a state key, or with a short one, is refused at start-up.
#[test]
fn serve_refuses_a_store_without_a_usable_state_key() {
    let dir = temp("nokey");
    let config = gateway_config(&dir);
    let store = format!("file://{}", dir.join("runs").display());
    let run = |args: &[&str], key: Option<&str>| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_codemode"));
        cmd.args(["serve", "--config"]).arg(&config).args(args).stdin(Stdio::null());
        cmd.env_remove("CODEMODE_TEST_STATE_KEY");
        if let Some(key) = key {
            cmd.env("CODEMODE_TEST_STATE_KEY", key);
        }
        let out = cmd.output().unwrap();
        assert!(!out.status.success());
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let stderr = run(&["--run-store", &store], None);
    assert!(stderr.contains("--state-key-env"), "{stderr}");
    let stderr = run(&["--run-store", &store, "--state-key-env", "CODEMODE_TEST_STATE_KEY"], None);
    assert!(stderr.contains("CODEMODE_TEST_STATE_KEY is not set"), "{stderr}");
    let stderr = run(&["--run-store", &store, "--state-key-env", "CODEMODE_TEST_STATE_KEY"], Some("short"));
    assert!(stderr.contains("at least 16"), "{stderr}");
    let stderr =
        run(&["--run-store", "s3://bucket", "--state-key-env", "CODEMODE_TEST_STATE_KEY"], Some(STATE_KEY));
    assert!(stderr.contains("expected file://DIR or redis://HOST:PORT/DB"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

// ---- two `codemode serve --http` replicas on one Redis, driven by the official Python MCP client ----

const AUTH_TOKEN: &str = "replica-test-bearer-token";

/// The python that has the MCP SDK (`mcp<2`, as `.ci/run` installs it).
fn mcp_python() -> String {
    let python = std::env::var("CODEMODE_TEST_MCP_PYTHON").unwrap_or_else(|_| "python3".to_owned());
    let ok = std::process::Command::new(&python)
        .args(["-c", "import mcp.client.streamable_http, httpx"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "{python} cannot import the MCP SDK; set CODEMODE_TEST_MCP_PYTHON as .ci/run does");
    python
}

/// `codemode serve --http 127.0.0.1:0 --run-store <store> --auth-token-env ...`.
struct HttpReplica {
    child: tokio::process::Child,
    url: String,
}

async fn http_replica(dir: &std::path::Path, store: &str, name: &str) -> HttpReplica {
    use tokio::io::{AsyncBufReadExt, BufReader};
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_codemode"))
        .args(["serve", "--config"])
        .arg(gateway_config(dir))
        .args(["--http", "127.0.0.1:0", "--auth-token-env", "CODEMODE_TEST_TOKEN"])
        .args(["--run-store", store, "--state-key-env", "CODEMODE_TEST_STATE_KEY"])
        .env("CODEMODE_TEST_STATE_KEY", STATE_KEY)
        .env("CODEMODE_TEST_TOKEN", AUTH_TOKEN)
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let mut seen = String::new();
    let url = loop {
        let line = tokio::time::timeout_at(deadline.into(), lines.next_line())
            .await
            .unwrap_or_else(|_| panic!("replica {name} did not listen within 60 s: {seen}"))
            .unwrap()
            .unwrap_or_else(|| panic!("replica {name} exited: {seen}"));
        seen.push_str(&line);
        seen.push('\n');
        if let Some(url) = line.strip_prefix("codemode serve: listening on ") {
            break url.trim().to_owned();
        }
    };
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    HttpReplica { child, url }
}

impl HttpReplica {
    /// One scenario of the Python client (a new MCP session each time), with `token`.
    async fn client(&self, scenario: &str, arg: &str, token: &str) -> Value {
        let out = tokio::time::timeout(
            Duration::from_secs(120),
            tokio::process::Command::new(mcp_python())
                .arg(crate::fixture_path("http_client.py"))
                .args([self.url.as_str(), scenario, arg])
                .env("HTTP_TOKEN", token)
                .stdin(Stdio::null())
                .kill_on_drop(true)
                .output(),
        )
        .await
        .expect("the Python client finishes within 120 s")
        .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{scenario}: {}\n{stdout}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_str(stdout.lines().last().unwrap_or_default())
            .unwrap_or_else(|e| panic!("{e}: {stdout}"))
    }
}

/// Replicas A and B (the test plays the load balancer): a run suspended on A (a slow call, then a
/// `yield_control` run) is continued by the same client, in a new MCP session, on B; killing A
/// (SIGKILL) mid-call gives B's `wait` an `interrupted` error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_http_replicas_share_runs_by_client_through_redis() {
    let redis = Redis::start("http");
    let dir = temp("http-replicas");
    let a = http_replica(&dir, &redis.url, "A").await;
    let b = http_replica(&dir, &redis.url, "B").await;

    let r = a.client("exec", "return await tools.quick({});", AUTH_TOKEN).await;
    assert_eq!(r["status"], "waiting", "{r}");
    let run = r["runId"].as_str().unwrap().to_owned();
    let r = b.client("finish", &run, AUTH_TOKEN).await;
    assert_eq!((r["status"].as_str(), r["value"].as_str()), (Some("completed"), Some("quick done")), "{r}");

    let r = a
        .client("exec", "text('on A'); await yield_control(); text('on B'); return 'moved';", AUTH_TOKEN)
        .await;
    assert_eq!(r["status"], "waiting", "{r}");
    let run = r["runId"].as_str().unwrap().to_owned();
    let r = b.client("finish", &run, AUTH_TOKEN).await;
    assert_eq!(r["value"], "moved", "{r}");
    assert_eq!(r["output"], json!([{ "type": "text", "text": "on B" }]), "{r}");

    let code = "try { await tools.slow_send({}); return 'sent'; } catch (e) { return { code: e.code }; }";
    let r = a.client("exec", code, AUTH_TOKEN).await;
    assert_eq!(r["status"], "waiting", "{r}");
    let run = r["runId"].as_str().unwrap().to_owned();
    let mut killed = a.child;
    let pid = killed.id().unwrap();
    assert!(std::process::Command::new("kill").args(["-KILL", &pid.to_string()]).status().unwrap().success());
    let _ = killed.wait().await;
    let r = b.client("finish", &run, AUTH_TOKEN).await;
    assert_eq!(r["status"], "completed", "{r}");
    assert_eq!(r["value"]["code"], "interrupted", "{r}");
    drop(b);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `serve --http` with a run store and no `--auth-token-env` refuses to start.
#[test]
fn serve_http_refuses_a_shared_store_without_authentication() {
    let dir = temp("http-noauth");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_codemode"))
        .args(["serve", "--config"])
        .arg(gateway_config(&dir))
        .args(["--http", "127.0.0.1:0", "--run-store"])
        .arg(format!("file://{}", dir.join("runs").display()))
        .args(["--state-key-env", "CODEMODE_TEST_STATE_KEY"])
        .env("CODEMODE_TEST_STATE_KEY", STATE_KEY)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("needs --auth-token-env"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}
