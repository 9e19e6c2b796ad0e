//! `codemode serve` in front of hostile upstreams (`tests/fixtures/hostile_upstream.py`) and a
//! hostile client: endless or huge `tools/list`, upstreams that never start, unusable replies,
//! `list_changed` storms, unusable request lines, and stopping at every moment.

use std::process::Stdio;
use std::time::Duration;

use codemode_cli::serve::wire::{Envelope, scan_envelope};
use rmcp::model::NumberOrString;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::serve::{Scripted, eventually, process_gone, scripted_server, temp_dir};

/// A `hostile_upstream.py` config entry in `mode` with extra environment.
fn hostile(mode: &str, env: Value) -> Value {
    let mut vars = json!({ "HOSTILE_MODE": mode, "HOSTILE_EXIT_ON_EOF": "1" });
    if let Value::Object(extra) = env {
        vars.as_object_mut().unwrap().extend(extra);
    }
    json!({ "command": "python3", "args": [crate::fixture_path("hostile_upstream.py")], "env": vars })
}

async fn gateway(name: &str, servers: Value, extra: Value) -> Scripted {
    let dir = temp_dir(name);
    let mut config = json!({ "codeMode": { "enabled": true, "timeoutMs": 20000 }, "mcpServers": servers });
    if let Value::Object(extra) = extra {
        config.as_object_mut().unwrap().extend(extra);
    }
    Scripted::with_config(dir, &config).await
}

fn warnings(status: &Value) -> Vec<String> {
    status["upstreams"]["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| format!("{}: {}", w["name"].as_str().unwrap(), w["warning"].as_str().unwrap()))
        .collect()
}

#[test]
fn the_envelope_of_unusable_lines_is_read_without_recursion() {
    let number = |n| Some(NumberOrString::Number(n));
    assert_eq!(
        scan_envelope(br#"{"jsonrpc":"2.0","id":7,"method":"x"}"#),
        Envelope { id: number(7), has_method: true }
    );
    let deep =
        format!(r#"{{"params":{}1{},"id":"a\"b","method":"m"}}"#, "[".repeat(100_000), "]".repeat(100_000));
    let scanned = scan_envelope(deep.as_bytes());
    assert_eq!(scanned.id, Some(NumberOrString::String("a\"b".into())));
    assert!(scanned.has_method);
    // Cut off inside a later value: what came before is read.
    assert_eq!(scan_envelope(br#"{"id": 3, "result": {"text": "abc"#).id, number(3));
    assert_eq!(
        scan_envelope(br#"{"result": {"id": 9}, "id": 4}"#).id,
        number(4),
        "only the top level counts"
    );
    assert_eq!(scan_envelope(b"not json"), Envelope::default());
    assert_eq!(scan_envelope(br#"{"id": null}"#).id, None);
}

/// Pages: at the bound (100 pages) everything is kept; an endless `nextCursor` stops there with a
/// warning on stderr and in the status, and the gateway answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn endless_tools_list_pages_are_cut_at_the_page_bound() {
    let servers = json!({
        "exact": hostile("pages", json!({ "HOSTILE_PAGES": "100", "HOSTILE_PAGE_TOOLS": "3" })),
        "endless": hostile("pages", json!({ "HOSTILE_PAGES": "0", "HOSTILE_PAGE_TOOLS": "3" })),
    });
    let s = gateway("endless-pages", servers, json!({})).await;
    let status = s.status().await;
    assert_eq!(status["catalogTools"], 600, "{status}");
    assert_eq!(
        warnings(&status),
        ["endless: tools/list truncated: it has more than 100 pages; kept the first 300 tools"],
        "{status}"
    );
    let counts = s
        .value("const n = (s) => Object.keys(MCP[s]).filter((k) => !k.startsWith('$')).length;\nreturn [n('exact'), n('endless'), typeof MCP.endless.p99t2, 'p100t0' in MCP.endless ? 'function' : 'undefined']")
        .await;
    assert_eq!(counts, json!([300, 300, "function", "undefined"]));
    assert!(s.stderr().contains("WARN") && s.stderr().contains("tools/list truncated"), "{}", s.stderr());
    s.stop().await;
}

/// Tools per server: 1,000 are kept, the 1,001st is cut with a warning.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_past_the_per_server_bound_are_cut() {
    let servers = json!({
        "exact": hostile("pages", json!({ "HOSTILE_PAGES": "1", "HOSTILE_PAGE_TOOLS": "1000" })),
        "over": hostile("pages", json!({ "HOSTILE_PAGES": "2", "HOSTILE_PAGE_TOOLS": "600" })),
    });
    let s = gateway("tool-bound", servers, json!({})).await;
    let status = s.status().await;
    assert_eq!(status["catalogTools"], 2000, "{status}");
    assert_eq!(
        warnings(&status),
        ["over: tools/list truncated: it lists more than 1000 tools; kept the first 1000"],
        "{status}"
    );
    s.stop().await;
}

/// Bytes per listing: 50 tools of 64 KiB fit in 4 MiB; 200 do not (cut at 63).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn huge_tool_definitions_are_cut_at_the_listing_byte_bound() {
    let env =
        |n: &str| json!({ "HOSTILE_PAGES": "1", "HOSTILE_PAGE_TOOLS": n, "HOSTILE_DESC_BYTES": "65536" });
    let servers = json!({ "fits": hostile("pages", env("50")), "huge": hostile("pages", env("200")) });
    let s = gateway("byte-bound", servers, json!({})).await;
    let status = s.status().await;
    let warnings = warnings(&status);
    assert_eq!(warnings.len(), 1, "{status}");
    assert!(
        warnings[0].starts_with(
            "huge: tools/list truncated: its tool definitions exceed 4 MiB; kept the first 63 tools"
        ),
        "{status}"
    );
    let kept: u64 = warnings[0].rsplit("first ").next().unwrap().trim_end_matches(" tools").parse().unwrap();
    assert_eq!(status["catalogTools"], 50 + kept, "{status}");
    s.stop().await;
}

/// An upstream that never answers initialize and one that never answers tools/list are left out
/// after their start-up time (per server and global) while a good one serves; their processes are
/// stopped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upstreams_that_do_not_start_in_time_are_left_out_and_stopped() {
    let dir = temp_dir("mute");
    let (mute_pid, listless_pid) = (dir.join("mute.pid"), dir.join("listless.pid"));
    let mut mute = hostile("mute", json!({ "HOSTILE_PID_FILE": mute_pid.to_str().unwrap() }));
    mute["startupTimeoutMs"] = json!(3000);
    let listless = hostile("no-list", json!({ "HOSTILE_PID_FILE": listless_pid.to_str().unwrap() }));
    let config = json!({
        "codeMode": { "enabled": true, "timeoutMs": 20000 },
        "mcpServers": { "mute": mute, "listless": listless, "scripted": scripted_server(&dir) },
        "startupTimeoutMs": 5000,
    });
    let s = Scripted::with_config(dir.clone(), &config).await;
    let status = s.status().await;
    assert_eq!(status["upstreams"]["running"], json!(["scripted"]), "{status}");
    assert_eq!(
        status["upstreams"]["failed"],
        json!([
            { "name": "mute", "error": "did not start within 3000 ms (no answer to initialize); raise startupTimeoutMs if it is just slow" },
            { "name": "listless", "error": "did not start within 5000 ms (no answer to tools/list); raise startupTimeoutMs if it is just slow" },
        ]),
        "{status}"
    );
    assert_eq!(
        s.value("return (await MCP.scripted.echo({ a: 1 })).structuredContent").await,
        json!({ "a": 1 })
    );
    assert_eq!(s.value("return 'mute' in MCP ? 'object' : 'undefined'").await, "undefined");
    for file in [mute_pid, listless_pid] {
        let pid: u64 = std::fs::read_to_string(&file).unwrap().trim().parse().unwrap();
        eventually(&format!("{} stopped", file.display()), || process_gone(pid)).await;
    }
    let stderr = s.stderr();
    assert!(stderr.contains("WARN") && stderr.contains("\"mute\": did not start within 3000 ms"), "{stderr}");
    s.stop().await;
}

/// Replies the gateway cannot use fail their nested call at once with `upstream_error` (the
/// upstream timeout is a minute and the exec's 20 s: waiting for either would not complete).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unusable_upstream_replies_fail_the_nested_call_at_once() {
    let s = gateway(
        "bad-replies",
        json!({ "bad": hostile("bad-replies", json!({})) }),
        json!({ "upstreamTimeoutMs": 60000 }),
    )
    .await;
    let value = s
        .value(
            r#"const out = {};
for (const name of ["garbage", "huge", "wrongid", "deep", "noid"]) {
  try { await MCP.bad[name]({}); out[name] = "answered"; } catch (e) { out[name] = [e.code, e.message]; }
}
out.ok = (await MCP.bad.ok({})).structuredContent;
return out;"#,
        )
        .await;
    let failed = |name: &str, text: &str| {
        assert!(value[name].is_array(), "{name}: {value}");
        assert_eq!(value[name][0], "upstream_error", "{name}: {value}");
        let message = value[name][1].as_str().unwrap();
        assert!(
            message.starts_with("MCP server \"bad\" failed: its reply could not be used: "),
            "{name}: {message}"
        );
        assert!(message.contains(text), "{name}: {message}");
    };
    failed("garbage", "not valid JSON");
    failed("huge", "larger than 16 MiB");
    failed("wrongid", "which the gateway did not send");
    failed("deep", "nested deeper than 128 levels");
    failed("noid", "its id could not be read");
    assert_eq!(value["ok"], json!({ "ok": true }));
    assert_eq!(s.status().await["upstreamCallsInFlight"], 0);
    s.stop().await;
}

/// Runs suspended before many rebuilds continue and complete; generations no run needs are
/// dropped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn suspended_runs_survive_many_rebuilds() {
    let dir = temp_dir("rebuilds");
    let config = json!({
        "codeMode": { "enabled": true, "timeoutMs": 300 },
        "mcpServers": { "scripted": scripted_server(&dir) },
        "upstreamTimeoutMs": 30000,
    });
    let s = Scripted::with_config(dir, &config).await;
    let mut runs = Vec::new();
    for ms in [2500, 3000, 3500] {
        let first =
            s.exec(&format!("return (await MCP.scripted.sleep({{ ms: {ms} }})).structuredContent")).await;
        assert_eq!(first["status"], "waiting", "{first}");
        runs.push(first["runId"].clone());
    }
    for i in 0..6u64 {
        s.value(&format!("return await MCP.scripted.grow({{ name: 'g{i}' }})")).await;
        let generation = 2 + i;
        for _ in 0..250 {
            if s.status().await["catalogGeneration"] == generation {
                break;
            }
            tokio::time::sleep(Duration::from_millis(40)).await;
        }
        assert_eq!(s.status().await["catalogGeneration"], generation);
    }
    let status = s.status().await;
    assert_eq!(status["suspendedRuns"], 3, "{status}");
    assert_eq!(s.value("return typeof MCP.scripted.g5").await, "function");
    for run in runs {
        let mut params = rmcp::model::CallToolRequestParams::new("wait");
        params.arguments = json!({ "runId": run }).as_object().cloned();
        let mut result = s.client.call_tool(params.clone()).await.unwrap().structured_content.unwrap();
        while result["status"] == "waiting" {
            result = s.client.call_tool(params.clone()).await.unwrap().structured_content.unwrap();
        }
        assert_eq!(result["status"], "completed", "{result}");
        assert_eq!(result["value"], json!({ "slept": true }));
    }
    let status = s.status().await;
    assert_eq!(status["suspendedRuns"], 0, "{status}");
    assert_eq!(status["catalogGenerationsKept"], 1, "{status}");
    s.stop().await;
}

/// A burst of 200 `list_changed` becomes one rebuild (or very few), and the client hears at most
/// one `list_changed` per rebuild.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_changed_bursts_are_coalesced() {
    let s = gateway("storm", json!({ "storm": hostile("list-storm", json!({})) }), json!({})).await;
    assert_eq!(s.value("return (await MCP.storm.storm({ n: 200 })).structuredContent.sent").await, 200);
    eventually("a rebuild", || *s.heard.tool_list_changed.lock().unwrap() >= 1).await;
    tokio::time::sleep(SETTLE).await;
    let generation = s.status().await["catalogGeneration"].as_u64().unwrap();
    assert!((2..=3).contains(&generation), "200 list_changed gave {generation} catalog builds");
    assert_eq!(*s.heard.tool_list_changed.lock().unwrap() as u64, generation - 1);
    s.stop().await;
}

/// Longer than the debounce's longest delay.
const SETTLE: Duration = Duration::from_millis(2500);

/// Request lines the gateway cannot use get a JSON-RPC error with their id, and it keeps serving.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unusable_request_lines_are_answered_with_errors() {
    let dir = temp_dir("bad-lines");
    let config = dir.join("codemode.json");
    std::fs::write(&config, "{}").unwrap();
    let mut serve = tokio::process::Command::new(env!("CARGO_BIN_EXE_codemode"))
        .args(["serve", "--config", config.to_str().unwrap()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = serve.stdin.take().unwrap();
    let mut stdout = BufReader::new(serve.stdout.take().unwrap()).lines();
    let mut send = async |line: String, answered: bool| -> Value {
        stdin.write_all(line.as_bytes()).await.unwrap();
        stdin.write_all(b"\n").await.unwrap();
        if !answered {
            return Value::Null;
        }
        let answer = tokio::time::timeout(Duration::from_secs(20), stdout.next_line()).await;
        serde_json::from_str(&answer.expect("an answer").unwrap().unwrap()).unwrap()
    };
    let init = send(
        json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } } })
        .to_string(),
        true,
    )
    .await;
    assert!(init["result"]["serverInfo"].is_object(), "{init}");
    send(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }).to_string(), false).await;
    let mut ask = async |line: String| send(line, true).await;
    let call = |id: u64, code: String| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"exec","arguments":{{"code":{code}}}}}}}"#
        )
    };
    let huge = ask(call(41, format!("\"{}\"", "x".repeat(20 << 20)))).await;
    assert_eq!(huge["id"], 41, "{huge}");
    assert_eq!(huge["error"]["code"], -32600, "{huge}");
    assert_eq!(huge["error"]["message"], "the message is larger than 16 MiB");
    let deep = ask(call(42, format!("{}1{}", "[".repeat(200), "]".repeat(200)))).await;
    assert_eq!(deep["id"], 42, "{deep}");
    assert_eq!(deep["error"]["message"], "the message is nested deeper than 128 levels", "{deep}");
    let broken = ask(r#"{"jsonrpc":"2.0","id":43,"method":"tools/list","params":{"#.to_owned()).await;
    assert_eq!(broken["id"], 43, "{broken}");
    assert_eq!(broken["error"]["code"], -32700, "{broken}");
    let listed = ask(json!({ "jsonrpc": "2.0", "id": 44, "method": "tools/list" }).to_string()).await;
    assert_eq!(listed["id"], 44, "{listed}");
    assert!(listed["result"]["tools"].is_array(), "{listed}");
    drop(stdin);
    let exit = tokio::time::timeout(Duration::from_secs(20), serve.wait()).await.unwrap().unwrap();
    assert!(exit.success(), "{exit:?}");
    let _ = std::fs::remove_dir_all(dir);
}

/// Stdin closing or SIGTERM while an upstream is still starting (it never answers initialize and
/// has a minute to do so): the gateway exits 0 and the upstream is stopped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stopping_during_start_up_exits_cleanly_and_stops_the_upstreams() {
    for how in ["stdin closed", "SIGTERM"] {
        let dir = temp_dir(&format!("startup-{}", how.replace(' ', "-")));
        let pid_file = dir.join("mute.pid");
        let mut mute = hostile("mute", json!({ "HOSTILE_PID_FILE": pid_file.to_str().unwrap() }));
        mute["env"].as_object_mut().unwrap().remove("HOSTILE_EXIT_ON_EOF");
        let config = dir.join("codemode.json");
        std::fs::write(
            &config,
            json!({ "mcpServers": { "mute": mute }, "startupTimeoutMs": 60000 }).to_string(),
        )
        .unwrap();
        let mut serve = tokio::process::Command::new(env!("CARGO_BIN_EXE_codemode"))
            .args(["serve", "--config", config.to_str().unwrap()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(std::fs::File::create(dir.join("stderr.log")).unwrap()))
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        eventually("the upstream's pid file", || {
            std::fs::read_to_string(&pid_file).is_ok_and(|t| t.trim().parse::<u64>().is_ok())
        })
        .await;
        let upstream: u64 = std::fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap();
        match how {
            "stdin closed" => drop(serve.stdin.take()),
            _ => {
                let pid = serve.id().unwrap().to_string();
                assert!(std::process::Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
            }
        }
        let exit = tokio::time::timeout(Duration::from_secs(20), serve.wait()).await;
        let stderr = std::fs::read_to_string(dir.join("stderr.log")).unwrap_or_default();
        let exit = exit.unwrap_or_else(|_| panic!("{how}: the gateway did not exit; {stderr}")).unwrap();
        assert!(exit.success(), "{how}: {exit:?}; {stderr}");
        eventually(&format!("{how}: upstream {upstream} stopped"), || process_gone(upstream)).await;
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// Resident set size of process `pid` in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// Soak (BENCHMARKS.md): the gateway's RSS under each hostile upstream for
/// `CODEMODE_SOAK_SECS` (default 60) seconds each, while the upstream misbehaves continuously
/// (list_changed every 50 ms re-reads an endless or huge listing; unusable replies in a loop; a
/// storm of list_changed; an upstream that never starts next to a good one). Prints one line per
/// upstream and fails if RSS ever passes 1 GiB or grows by more than 64 MiB between the middle of
/// the run and its end (the first half is warm-up: allocator arenas fill up to their working set). Run on a quiet machine:
/// `cargo test --release -p codemode-cli --test all soak -- --ignored --nocapture`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "soak: minutes of load; run by hand (BENCHMARKS.md)"]
async fn soak_rss_stays_bounded_under_hostile_upstreams() {
    let secs: u64 = std::env::var("CODEMODE_SOAK_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(60);
    let storm = json!({ "HOSTILE_STORM_MS": "50" });
    let with = |extra: Value| {
        let mut env = storm.clone();
        env.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        env
    };
    let only = std::env::var("CODEMODE_SOAK_ONLY").unwrap_or_default();
    let scenarios = [
        (
            "endless-cursor",
            hostile("pages", with(json!({ "HOSTILE_PAGES": "0", "HOSTILE_PAGE_TOOLS": "1" }))),
        ),
        (
            "huge-pages",
            hostile(
                "pages",
                with(
                    json!({ "HOSTILE_PAGES": "0", "HOSTILE_PAGE_TOOLS": "200", "HOSTILE_DESC_BYTES": "65536" }),
                ),
            ),
        ),
        ("bad-replies", hostile("bad-replies", json!({}))),
        ("list-storm", hostile("list-storm", json!({ "HOSTILE_STORM_MS": "1" }))),
        ("mute", hostile("mute", json!({}))),
    ];
    println!(
        "upstream | RSS at {}s (MiB) | RSS at end (MiB) | peak (MiB) | execs | catalog builds | generations kept",
        secs / 2
    );
    for (name, server) in scenarios.into_iter().filter(|(name, _)| only.is_empty() || only == *name) {
        let s = gateway(
            &format!("soak-{name}"),
            json!({ "hostile": server }),
            json!({ "startupTimeoutMs": 2000 }),
        )
        .await;
        let pid = s.serve.id().unwrap();
        let start = std::time::Instant::now();
        let (mut early, mut peak, mut execs) = (0u64, 0u64, 0u64);
        while start.elapsed() < Duration::from_secs(secs) {
            let code = match name {
                "bad-replies" => {
                    "for (const n of ['garbage','huge','wrongid','deep','noid','ok']) { try { await MCP.hostile[n]({}) } catch {} } return 1"
                }
                _ => "return 1",
            };
            let result = s.exec(code).await;
            assert_eq!(result["status"], "completed", "{name}: {result}");
            execs += 1;
            let rss = rss_kib(pid);
            peak = peak.max(rss);
            if early == 0 && start.elapsed() >= Duration::from_secs(secs / 2) {
                early = rss;
            }
            assert!(rss < 1 << 20, "{name}: RSS {rss} KiB");
        }
        let end = rss_kib(pid);
        let status = s.status().await;
        println!(
            "{name} | {} | {} | {} | {execs} | {} | {}",
            early >> 10,
            end >> 10,
            peak >> 10,
            status["catalogGeneration"],
            status["catalogGenerationsKept"]
        );
        assert!(end < early + (64 << 10), "{name}: RSS grew from {early} KiB to {end} KiB");
        s.stop().await;
    }
}
