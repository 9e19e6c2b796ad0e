//! The spec's 16-step E2E test plan against real MCP servers, driven with rmcp's client.
//!
//! Run it through `cargo xtask e2e` (which installs the npm servers first), or directly:
//! `cargo run -p codemode-cli --example e2e_driver -- --codemode target/debug/codemode --servers ~/.cache/codemode-e2e`.
//! Prints one `PASS`/`FAIL` line per step and a final `N passed, M failed` line; exits 1 on failure.
// The gateway projects nested calls as MCP logging messages (deprecated by SEP-2577, still what
// clients display).
#![allow(deprecated)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail, ensure};
use rmcp::model::{
    CallToolRequestParams, LoggingMessageNotificationParam, ProgressNotificationParam,
    ReadResourceRequestParams,
};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};

#[derive(Clone, Default)]
struct Recorder {
    logs: Arc<Mutex<Vec<Value>>>,
    /// Progress notification messages, in arrival order.
    progress: Arc<Mutex<Vec<String>>>,
}

impl ClientHandler for Recorder {
    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.logs.lock().unwrap_or_else(|p| p.into_inner()).push(params.data);
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.lock().unwrap_or_else(|p| p.into_inner()).push(params.message.unwrap_or_default());
    }
}

type Client = RunningService<RoleClient, Recorder>;

struct Paths {
    codemode: PathBuf,
    servers: PathBuf,
    work: PathBuf,
}

impl Paths {
    /// `node <entry>` for an installed npm package, the entry read from its package.json `bin`.
    fn server(&self, package: &str, extra: &[&str]) -> Result<Value> {
        let dir = self.servers.join("node_modules").join(package);
        let manifest: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("package.json")).with_context(|| {
                format!("{package} is not installed in {} (run `cargo xtask e2e`)", self.servers.display())
            })?)?;
        let bin = match &manifest["bin"] {
            Value::String(s) => s.clone(),
            Value::Object(map) => map.values().find_map(Value::as_str).unwrap_or_default().to_owned(),
            _ => String::new(),
        };
        ensure!(!bin.is_empty(), "{package}: no `bin` in package.json");
        let mut args = vec![dir.join(bin).display().to_string()];
        args.extend(extra.iter().map(|s| s.to_string()));
        Ok(json!({ "command": "node", "args": args }))
    }
}

async fn connect(command: &str, args: &[String]) -> Result<(Client, Recorder)> {
    let mut cmd = tokio::process::Command::new(command);
    cmd.args(args).kill_on_drop(true);
    let (transport, _) = TokioChildProcess::builder(cmd).stderr(std::process::Stdio::inherit()).spawn()?;
    let recorder = Recorder::default();
    let client = recorder.clone().serve(transport).await.context("MCP initialize")?;
    Ok((client, recorder))
}

async fn gateway(paths: &Paths, name: &str, config: &Value) -> Result<(Client, Recorder)> {
    let file = paths.work.join(format!("{name}.json"));
    std::fs::write(&file, serde_json::to_string_pretty(config)?)?;
    connect(
        &paths.codemode.display().to_string(),
        &["serve".into(), "--config".into(), file.display().to_string()],
    )
    .await
}

async fn tool_names(client: &Client) -> Result<Vec<String>> {
    Ok(client.list_all_tools().await?.into_iter().map(|t| t.name.to_string()).collect())
}

async fn call(client: &Client, name: &str, arguments: Value) -> Result<Value> {
    let mut params = CallToolRequestParams::new(name.to_owned());
    params.arguments = arguments.as_object().cloned();
    let result = client.call_tool(params).await?;
    Ok(result
        .structured_content
        .clone()
        .unwrap_or_else(|| serde_json::to_value(&result.content).unwrap_or_default()))
}

async fn exec(client: &Client, code: &str) -> Result<Value> {
    call(client, "exec", json!({ "code": code })).await
}

/// The gateway's `codemode://status` resource.
async fn gateway_status(client: &Client) -> Result<Value> {
    let read = client.read_resource(ReadResourceRequestParams::new("codemode://status")).await?;
    let text = serde_json::to_value(&read)?["contents"][0]["text"].as_str().unwrap_or_default().to_owned();
    serde_json::from_str(&text).with_context(|| format!("status is not JSON: {text}"))
}

fn completed(result: &Value) -> Result<&Value> {
    ensure!(result["status"] == "completed", "expected completed, got {result}");
    Ok(&result["value"])
}

struct Report {
    passed: usize,
    failed: usize,
}

impl Report {
    fn record(&mut self, step: &str, outcome: Result<String>) {
        match outcome {
            Ok(note) => {
                self.passed += 1;
                println!("PASS {step}: {note}");
            }
            Err(e) => {
                self.failed += 1;
                println!("FAIL {step}: {e:#}");
            }
        }
    }
}

const FIXTURE_TOOLS: &str = r#"[
  { "name": "message", "description": "Send a chat message.", "parameters": { "type": "object", "properties": { "to": { "type": "string" }, "text": { "type": "string" } }, "required": ["to", "text"] }, "behavior": "echo" },
  { "name": "shipping_list", "origin": "bundledPlugin", "owner": "shipping", "description": "List shipments.", "outputSchema": { "type": "array", "items": { "type": "object", "properties": { "id": { "type": "string" }, "paid": { "type": "boolean" } }, "required": ["id", "paid"], "additionalProperties": false } }, "behavior": { "kind": "static", "details": [{ "id": "SH-1", "paid": false }, { "id": "SH-2", "paid": true }] } },
  { "name": "pick_file", "origin": "client", "owner": "desktop", "description": "Let the user pick a file.", "behavior": { "kind": "static", "details": { "path": "/tmp/x.txt" } } },
  { "name": "snapshot", "origin": "externalPlugin", "owner": "camera", "directOnly": true, "description": "Take a picture.", "behavior": { "kind": "static", "details": null, "content": [{ "type": "text", "text": "(image)" }] } },
  { "name": "secret_export", "description": "Export all secrets.", "denied": true, "behavior": { "kind": "static", "details": "leaked" } }
]"#;

#[tokio::main]
async fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let mut codemode = None;
    let mut servers = None;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--codemode" => codemode = args.next().map(PathBuf::from),
            "--servers" => servers = args.next().map(PathBuf::from),
            other => bail!("unknown argument {other:?}; usage: e2e_driver --codemode BIN --servers DIR"),
        }
    }
    let work = std::env::temp_dir().join(format!("codemode-e2e-{}", std::process::id()));
    std::fs::create_dir_all(work.join("files"))?;
    std::fs::write(work.join("files/hello.txt"), "hello from e2e")?;
    let paths = Paths {
        codemode: codemode.ok_or_else(|| anyhow!("--codemode BIN is required"))?,
        servers: servers.ok_or_else(|| anyhow!("--servers DIR is required"))?,
        work: work.clone(),
    };
    let mut report = Report { passed: 0, failed: 0 };
    let outcome = run(&paths, &mut report).await;
    if let Err(e) = outcome {
        report.record("setup", Err(e));
    }
    let _ = std::fs::remove_dir_all(&work);
    println!("{} passed, {} failed", report.passed, report.failed);
    if report.failed > 0 {
        std::process::exit(1);
    }
    Ok(())
}

async fn run(paths: &Paths, report: &mut Report) -> Result<()> {
    let tools: Value = serde_json::from_str(FIXTURE_TOOLS)?;
    let fixture_direct: Vec<String> = tools
        .as_array()
        .unwrap_or(&Vec::new())
        .iter()
        .filter(|t| t["denied"] != true)
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect();

    // Steps 1-3: Code Mode disabled: the model-visible tools are the host's, unchanged.
    {
        let config = json!({ "codeMode": { "enabled": false }, "catalog": { "tools": tools } });
        let started = gateway(paths, "disabled", &config).await;
        let (client, _) = match started {
            Ok(connected) => {
                report.record("01 start the gateway with codeMode.enabled: false", Ok("initialized".into()));
                connected
            }
            Err(e) => {
                report.record("01 start the gateway with codeMode.enabled: false", Err(e));
                return Ok(());
            }
        };
        let turn = async {
            let sent = call(&client, "message", json!({ "to": "ops", "text": "hi" })).await?;
            // The fixture's echo names the tool that ran (the catalog id) beside its input.
            let expected = json!({ "tool": "openclaw:core:message", "input": { "to": "ops", "text": "hi" } });
            ensure!(sent == expected, "direct call returned {sent}");
            Ok("the direct tool `message` answered".to_owned())
        };
        report.record("02 agent turn with a small set of direct tools", turn.await);
        let names = tool_names(&client).await?;
        report.record(
            "03 model-visible tools are unchanged",
            (|| {
                ensure!(names == fixture_direct, "tools {names:?}, expected {fixture_direct:?}");
                Ok(names.join(", "))
            })(),
        );
        let _ = client.cancel().await;
    }

    // Discover the everything server's tool names (the env tool is denied by policy below).
    let everything = paths.server("@modelcontextprotocol/server-everything", &["stdio"])?;
    let everything_args: Vec<String> = everything["args"]
        .as_array()
        .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect())
        .unwrap_or_default();
    let (direct, _) = connect("node", &everything_args).await.context("starting server-everything")?;
    let upstream_names = tool_names(&direct).await?;
    let _ = direct.cancel().await;
    let env_tool = upstream_names
        .iter()
        .find(|n| n.to_lowercase().contains("env"))
        .cloned()
        .ok_or_else(|| anyhow!("server-everything lists no env tool: {upstream_names:?}"))?;

    let files = paths.work.join("files");
    let mut memory = paths.server("@modelcontextprotocol/server-memory", &[])?;
    memory["env"] = json!({ "MEMORY_FILE_PATH": paths.work.join("memory.json").display().to_string() });
    let config = json!({
        "codeMode": { "enabled": true, "timeoutMs": 1500, "snapshotTtlSeconds": 2 },
        "mcpServers": {
            "everything": everything,
            "memory": memory,
            "filesystem": paths.server("@modelcontextprotocol/server-filesystem", &[&files.display().to_string()])?,
        },
        "catalog": { "tools": tools, "deny": [format!("mcp:everything:{env_tool}")] },
        "upstreamTimeoutMs": 30000
    });
    let (client, recorder) = match gateway(paths, "enabled", &config).await {
        Ok(connected) => {
            report.record(
                "04 restart with codeMode.enabled: true",
                Ok("initialized with 3 upstream servers".into()),
            );
            connected
        }
        Err(e) => {
            report.record("04 restart with codeMode.enabled: true", Err(e));
            return Ok(());
        }
    };

    // Step 5.
    let step5 = async {
        let code = r#"const sources = {};
for (const t of ALL_TOOLS) sources[t.source + ":" + (t.sourceName || "")] = true;
return { sources: Object.keys(sources).sort(), servers: (await API.list("mcp")).length - 1 };"#;
        let result = exec(&client, code).await?;
        let value = completed(&result)?;
        let sources = value["sources"].to_string();
        for needle in ["openclaw:", "openclaw:shipping", "client:desktop"] {
            ensure!(sources.contains(needle), "no {needle} tool in the turn: {value}");
        }
        ensure!(value["servers"] == 3, "expected 3 MCP servers: {value}");
        Ok(format!("sources {sources}, 3 MCP servers"))
    };
    report.record("05 agent turn with OpenClaw, plugin, MCP and client tools", step5.await);

    // Step 6.
    let names = tool_names(&client).await?;
    report.record(
        "06 model-visible tools are exactly exec, wait and the direct-only tools",
        (|| {
            ensure!(names == ["exec", "wait", "snapshot"], "tools {names:?}");
            Ok(names.join(", "))
        })(),
    );

    // Step 7.
    let step7 = async {
        let result = exec(&client, "return ALL_TOOLS.map((t) => t.id);").await?;
        let ids: Vec<String> = serde_json::from_value(completed(&result)?.clone())?;
        for id in ["openclaw:core:message", "openclaw:shipping:shipping_list", "client:desktop:pick_file"] {
            ensure!(ids.iter().any(|i| i == id), "{id} missing from ALL_TOOLS {ids:?}");
        }
        ensure!(!ids.iter().any(|i| i.contains("snapshot")), "direct-only tool in ALL_TOOLS: {ids:?}");
        Ok(format!("{} entries", ids.len()))
    };
    report.record("07 ALL_TOOLS has the catalog tools and no direct-only ones", step7.await);

    // Step 8.
    let step8 = async {
        let code = r#"const hits = await tools.search("list shipments");
const described = await tools.describe(hits[0].id);
const unpaid = (await tools.callValue(described.id, {})).filter((s) => !s.paid).map((s) => s.id);
const sent = await tools.callValue("openclaw:core:message", { to: "ops", text: `unpaid: ${unpaid}` });
const raw = await tools.call("client:desktop:pick_file", {});
return { first: hits[0].id, output: described.output, unpaid, sent, raw };"#;
        let result = exec(&client, code).await?;
        let value = completed(&result)?;
        ensure!(value["first"] == "openclaw:shipping:shipping_list", "search ranked {}", value["first"]);
        ensure!(value["unpaid"] == json!(["SH-1"]), "{value}");
        ensure!(
            value["sent"]
                == json!({ "tool": "openclaw:core:message", "input": { "to": "ops", "text": "unpaid: SH-1" } }),
            "{value}"
        );
        ensure!(value["raw"].to_string().contains("/tmp/x.txt"), "{value}");
        Ok("search -> describe -> callValue -> call".into())
    };
    report.record("08 host tools through tools.search/describe/callValue/call", step8.await);

    // Step 9.
    let step9 = async {
        let code = r#"const files = (await API.list("mcp")).map((f) => f.path);
const dts = await API.read("mcp/everything.d.ts");
return { files, hasNamespace: dts.includes("declare namespace MCP.everything"), functions: (dts.match(/function /g) || []).length };"#;
        let result = exec(&client, code).await?;
        let value = completed(&result)?;
        for f in ["mcp/index.d.ts", "mcp/everything.d.ts", "mcp/memory.d.ts", "mcp/filesystem.d.ts"] {
            ensure!(
                value["files"].as_array().is_some_and(|a| a.iter().any(|p| p == f)),
                "{f} missing: {value}"
            );
        }
        ensure!(value["hasNamespace"] == true && value["functions"].as_u64().unwrap_or(0) >= 3, "{value}");
        Ok(format!("{} files", value["files"].as_array().map_or(0, Vec::len)))
    };
    report.record("09 API.list(\"mcp\") / API.read declare the MCP tools", step9.await);

    // Step 10.
    let step10 = async {
        let code = r#"const e = MCP.everything;
const echoKey = Object.keys(e).find((k) => /^echo/i.test(k));
const echoed = await e[echoKey]({ message: "hi from code mode" });
const graph = await MCP.memory.readGraph({});
const listKey = Object.keys(MCP.filesystem).find((k) => /^listDirectory$/i.test(k));
const listing = await MCP.filesystem[listKey]({ path: FILES });
const search = await tools.search("echo");
return { echoed: JSON.stringify(echoed), graph: typeof graph, listing: JSON.stringify(listing),
         mcpInAllTools: ALL_TOOLS.filter((t) => t.id.startsWith("mcp:")).length,
         mcpInSearch: search.filter((t) => t.id.startsWith("mcp:")).length };"#
            .replace("FILES", &serde_json::to_string(&paths.work.join("files").display().to_string())?);
        let result = exec(&client, &code).await?;
        let value = completed(&result)?;
        ensure!(value["echoed"].as_str().is_some_and(|s| s.contains("hi from code mode")), "{value}");
        ensure!(value["listing"].as_str().is_some_and(|s| s.contains("hello.txt")), "{value}");
        ensure!(value["mcpInAllTools"] == 0 && value["mcpInSearch"] == 0, "{value}");
        Ok("everything.echo, memory.readGraph, filesystem.listDirectory".into())
    };
    report.record("10 MCP.<server>.<tool>() calls; MCP entries absent from ALL_TOOLS/tools", step10.await);

    // Step 11.
    let step11 = async {
        let code = format!(
            r#"const out = {{}};
out.inAll = ALL_TOOLS.some((t) => t.id.includes("secret_export"));
try {{ await tools.callValue("openclaw:core:secret_export", {{}}); out.core = "called"; }} catch (e) {{ out.core = "refused"; }}
out.envVisible = Object.keys(MCP.everything).some((k) => /env/i.test(k));
out.envInDts = (await API.read("mcp/everything.d.ts")).includes({env:?});
return out;"#,
            env = env_tool
        );
        let result = exec(&client, &code).await?;
        let value = completed(&result)?;
        ensure!(
            value == &json!({ "inAll": false, "core": "refused", "envVisible": false, "envInDts": false }),
            "{value}"
        );
        Ok(format!("openclaw:core:secret_export and mcp:everything:{env_tool} denied"))
    };
    report.record("11 denied tools are absent and not callable by a guessed id", step11.await);

    // Steps 12-14.
    let code = r#"const key = Object.keys(MCP.everything).find((k) => /long/i.test(k));
text("before the long call");
const r = await MCP.everything[key]({ duration: 3, steps: 3 });
text("after the restore");
return { result: r };"#;
    let first = exec(&client, code).await;
    let run_id = match &first {
        Ok(first)
            if first["status"] == "waiting"
                && first["pendingToolCalls"].as_array().is_some_and(|p| !p.is_empty()) =>
        {
            let run_id = first["runId"].as_str().unwrap_or_default().to_owned();
            report.record(
                "12 a nested call resolves after exec returns waiting",
                Ok(format!("run {run_id} waiting")),
            );
            Some(run_id)
        }
        Ok(other) => {
            report.record(
                "12 a nested call resolves after exec returns waiting",
                Err(anyhow!("expected waiting, got {other}")),
            );
            None
        }
        Err(e) => {
            report.record("12 a nested call resolves after exec returns waiting", Err(anyhow!("{e:#}")));
            None
        }
    };
    let finished = async {
        let run_id = run_id.ok_or_else(|| anyhow!("no waiting run from step 12"))?;
        let mut result = call(&client, "wait", json!({ "runId": run_id })).await?;
        while result["status"] == "waiting" {
            result = call(&client, "wait", json!({ "runId": run_id })).await?;
        }
        Ok::<Value, anyhow::Error>(result)
    }
    .await;
    let step13 = match &finished {
        Ok(result) => (|| {
            let value = completed(result)?;
            ensure!(
                value["result"]["content"].to_string().to_lowercase().contains("long"),
                "no tool result in {value}"
            );
            // The upstream's own progress notifications reached this client, named by tool id.
            let progress = recorder.progress.lock().unwrap_or_else(|p| p.into_inner()).clone();
            let upstream =
                progress.iter().filter(|m| m.starts_with("mcp:everything:") && m.contains("/3")).count();
            ensure!(upstream >= 1, "no upstream progress forwarded: {progress:?}");
            Ok(format!(
                "the restored VM received the long-running operation's result; {upstream} upstream progress \
                 notifications forwarded"
            ))
        })(),
        Err(e) => Err(anyhow!("{e:#}")),
    };
    report.record("13 wait restores the VM and it receives the tool result", step13);
    let step14 = match &finished {
        Ok(result) => (|| {
            let output = result["output"].to_string();
            ensure!(output.contains("after the restore"), "final output lacks post-restore text: {output}");
            Ok("\"after the restore\" is in the final output".to_owned())
        })(),
        Err(e) => Err(anyhow!("{e:#}")),
    };
    report.record("14 the final answer contains output produced after the restore", step14);

    // Step 15.
    let step15 = async {
        let timeout = exec(&client, "while (true) {}").await?;
        ensure!(timeout["status"] == "failed" && timeout["code"] == "timeout", "{timeout}");
        // Abort: drop the exec call (rmcp sends notifications/cancelled), then the gateway still serves.
        let slow = r#"const key = Object.keys(MCP.everything).find((k) => /long/i.test(k));
return await MCP.everything[key]({ duration: 1, steps: 1 });"#;
        let aborted = tokio::time::timeout(Duration::from_millis(300), exec(&client, slow)).await;
        ensure!(aborted.is_err(), "the exec finished before it could be cancelled");
        // Expiry: a suspended run is gone after snapshotTtlSeconds (2 s).
        let parked = exec(&client, slow.replace("duration: 1", "duration: 4").as_str()).await?;
        ensure!(parked["status"] == "waiting", "{parked}");
        tokio::time::sleep(Duration::from_millis(2600)).await;
        let expired = call(&client, "wait", json!({ "runId": parked["runId"] })).await?;
        ensure!(expired["status"] == "failed", "expected the expired run to fail: {expired}");
        let after = exec(&client, "return 40 + 2").await?;
        ensure!(completed(&after)? == &json!(42), "{after}");
        // Nothing is left inside the gateway: no suspended run, no upstream call in flight.
        let status = gateway_status(&client).await?;
        ensure!(
            status["suspendedRuns"] == 0
                && status["trackedRuns"] == 0
                && status["upstreamCallsInFlight"] == 0,
            "the gateway still holds work: {status}"
        );
        Ok(format!("timeout -> failed/timeout; abort; expiry -> {}; status {status}", expired["code"]))
    };
    report.record("15 timeout, abort and snapshot expiry clean up", step15.await);

    // Step 16.
    let step16 = async {
        recorder.logs.lock().unwrap_or_else(|p| p.into_inner()).clear();
        exec(&client, "return await tools.callValue('openclaw:core:message', { to: 'a', text: 'b' });")
            .await?;
        tokio::time::sleep(Duration::from_millis(300)).await;
        let logs = recorder.logs.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let mut by_kind = BTreeMap::new();
        for log in &logs {
            if log["toolId"] == "openclaw:core:message" {
                ensure!(
                    log["parentCallId"].as_str().is_some_and(|p| p.starts_with("mcp-")),
                    "no parent exec call id: {log}"
                );
                *by_kind.entry(log["event"].as_str().unwrap_or("?").to_owned()).or_insert(0) += 1;
            }
        }
        ensure!(
            by_kind.get("nestedCallStarted") == Some(&1) && by_kind.get("nestedCallFinished") == Some(&1),
            "events: {logs:?}"
        );
        Ok("nestedCallStarted/Finished under the exec call id".into())
    };
    report.record("16 nested calls visible under the parent exec call", step16.await);

    let _ = client.cancel().await;

    // Step 17 (beyond the spec's plan): the same gateway over Streamable HTTP.
    report.record("17 serve --http: two rmcp Streamable HTTP clients", http_step(paths, &config).await);
    Ok(())
}

/// `codemode serve --http 127.0.0.1:0` with the step-4 config, two rmcp Streamable HTTP clients
/// at once: exec with progress, a run suspended by one that the other cannot continue, status,
/// then SIGTERM and exit status 0.
async fn http_step(paths: &Paths, config: &Value) -> Result<String> {
    use tokio::io::AsyncBufReadExt;
    let file = paths.work.join("http.json");
    std::fs::write(&file, serde_json::to_string_pretty(config)?)?;
    let mut serve = tokio::process::Command::new(&paths.codemode)
        .arg("serve")
        .arg("--config")
        .arg(&file)
        .args(["--http", "127.0.0.1:0"])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()?;
    let mut stderr = tokio::io::BufReader::new(serve.stderr.take().context("stderr")?).lines();
    let url = loop {
        let line = tokio::time::timeout(Duration::from_secs(60), stderr.next_line())
            .await
            .context("the gateway did not say where it listens within 60 s")??
            .context("the gateway exited before listening")?;
        eprintln!("{line}");
        if let Some(url) = line.strip_prefix("codemode serve: listening on ") {
            break url.trim().to_owned();
        }
    };
    tokio::spawn(async move {
        while let Ok(Some(line)) = stderr.next_line().await {
            eprintln!("{line}");
        }
    });
    let connect = |url: String| async move {
        let transport = rmcp::transport::StreamableHttpClientTransport::from_uri(url);
        let recorder = Recorder::default();
        let client = recorder.clone().serve(transport).await.context("MCP initialize over HTTP")?;
        anyhow::Ok((client, recorder))
    };
    let ((a, a_heard), (b, _)) = tokio::try_join!(connect(url.clone()), connect(url.clone()))?;
    let message = "return await tools.callValue('openclaw:core:message', { to: 'http', text: 'hi' });";
    let (from_a, from_b) = tokio::try_join!(exec(&a, message), exec(&b, message))?;
    ensure!(completed(&from_a)?["input"]["to"] == "http", "{from_a}");
    ensure!(completed(&from_b)?["input"]["to"] == "http", "{from_b}");
    let slow = r#"const key = Object.keys(MCP.everything).find((k) => /long/i.test(k));
await MCP.everything[key]({ duration: 3, steps: 3 }); return "slow done";"#;
    let parked = exec(&a, slow).await?;
    ensure!(parked["status"] == "waiting", "{parked}");
    let foreign = call(&b, "wait", json!({ "runId": parked["runId"] })).await?;
    ensure!(
        foreign["status"] == "failed" && foreign["code"] == "invalid_input" && foreign.get("value").is_none(),
        "another session continued the run: {foreign}"
    );
    let mut finished = parked;
    while finished["status"] == "waiting" {
        finished = call(&a, "wait", json!({ "runId": finished["runId"] })).await?;
    }
    ensure!(completed(&finished)? == "slow done", "{finished}");
    let logs = a_heard.logs.lock().unwrap_or_else(|p| p.into_inner()).len();
    let status = gateway_status(&a).await?;
    ensure!(status["clients"] == 2 && status["suspendedRuns"] == 0, "{status}");
    let _ = a.cancel().await;
    let _ = b.cancel().await;
    let pid = serve.id().context("no pid")?.to_string();
    std::process::Command::new("kill").args(["-TERM", &pid]).status()?;
    let exit = tokio::time::timeout(Duration::from_secs(20), serve.wait())
        .await
        .context("the gateway did not exit within 20 s of SIGTERM")??;
    ensure!(exit.success(), "the gateway exited with {exit}");
    Ok(format!("{url}: two sessions, a foreign wait refused, {logs} trajectory messages, exit 0 on SIGTERM"))
}
