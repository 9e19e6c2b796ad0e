//! `codemode exec` and `codemode demo` as a user runs them.

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::fixture_path;

fn codemode(args: &[&str], stdin: Option<&str>) -> (bool, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_codemode"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    if let Some(text) = stdin {
        input.write_all(text.as_bytes()).unwrap();
    }
    drop(input);
    let out = child.wait_with_output().unwrap();
    (out.status.success(), String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
}

#[test]
fn exec_prints_the_result_json() {
    let catalog = fixture_path("session.json");
    let (ok, stdout, stderr) = codemode(
        &[
            "exec",
            "--catalog",
            catalog.to_str().unwrap(),
            "return await tools.callValue('openclaw:core:echo_back', { x: 2 });",
        ],
        None,
    );
    assert!(ok, "{stderr}");
    let result: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(result["status"], json!("completed"));
    assert_eq!(result["value"], json!({ "tool": "openclaw:core:echo_back", "input": { "x": 2 } }));
}

/// `codemode exec --catalog` starts the catalog's command servers (and stops them afterwards);
/// one that cannot start is an error naming it, never silently dropped.
#[test]
fn exec_starts_command_servers_or_refuses_clearly() {
    let dir = std::env::temp_dir().join(format!("codemode-cli-cmd-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = fixture_path("scripted_upstream.py");
    let catalog = dir.join("with-server.json");
    let doc = json!({
        "tools": [{ "name": "local", "behavior": "echo" }],
        "mcpServers": { "scripted": { "command": "python3", "args": [script] } }
    });
    std::fs::write(&catalog, doc.to_string()).unwrap();
    let (ok, stdout, stderr) = codemode(
        &[
            "exec",
            "--catalog",
            catalog.to_str().unwrap(),
            "const r = await MCP.scripted.echo({ a: 1 }); const l = await tools.local({}); \
             return { mcp: r.structuredContent, local: l.tool, files: (await API.list('mcp')).map((f) => f.path) };",
        ],
        None,
    );
    assert!(ok, "{stderr}");
    let result: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(result["status"], json!("completed"), "{result}");
    assert_eq!(result["value"]["mcp"], json!({ "a": 1 }));
    assert_eq!(result["value"]["local"], json!("openclaw:core:local"));
    assert!(result["value"]["files"].to_string().contains("mcp/scripted.d.ts"), "{result}");

    let missing = dir.join("missing-server.json");
    let doc = json!({ "mcpServers": { "ghost": { "command": "codemode-test-no-such-program" } } });
    std::fs::write(&missing, doc.to_string()).unwrap();
    let (ok, stdout, stderr) = codemode(&["exec", "--catalog", missing.to_str().unwrap(), "return 1"], None);
    assert!(!ok, "must refuse: {stdout}");
    assert!(stderr.contains("\"ghost\"") && stderr.contains("cannot start"), "{stderr}");
    assert!(stderr.contains("command MCP servers"), "{stderr}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn exec_host_source_is_checked_and_used() {
    let (ok, stdout, stderr) = codemode(&["exec", "--host-source", "host", "return ALL_TOOLS.length"], None);
    assert!(ok, "{stderr}");
    assert_eq!(serde_json::from_str::<Value>(&stdout).unwrap()["value"], json!(0));
    for bad in ["mcp", "Host", ""] {
        let (ok, _, stderr) = codemode(&["exec", "--host-source", bad, "return 1"], None);
        assert!(!ok, "{bad:?} accepted");
        assert!(stderr.contains("host source name") && stderr.contains("not valid"), "{stderr}");
    }
}

#[test]
fn exec_reads_typescript_from_stdin() {
    let (ok, stdout, stderr) =
        codemode(&["exec", "--language", "typescript", "-"], Some("const n: number = 20; return n + 1;"));
    assert!(ok, "{stderr}");
    let result: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(result["value"], json!(21), "{result}");
}

#[test]
fn config_and_catalog_errors_name_file_and_path() {
    let dir = std::env::temp_dir().join(format!("codemode-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("bad-config.json");
    std::fs::write(&config, r#"{ "tools": { "codeMode": { "enabled": "yes" } } }"#).unwrap();
    let (ok, _, stderr) = codemode(&["exec", "--config", config.to_str().unwrap(), "return 1"], None);
    assert!(!ok);
    assert!(stderr.contains("bad-config.json: $.tools.codeMode.enabled"), "{stderr}");
    let catalog = dir.join("bad-catalog.json");
    std::fs::write(&catalog, r#"{ "tools": [{ "name": "x", "behavior": { "kind": "delay" } }] }"#).unwrap();
    let (ok, _, stderr) = codemode(&["exec", "--catalog", catalog.to_str().unwrap(), "return 1"], None);
    assert!(!ok);
    assert!(stderr.contains("bad-catalog.json: $.tools[0].behavior.ms: missing required field"), "{stderr}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn demo_runs_the_whole_tour_plain_when_piped() {
    let (ok, stdout, stderr) = codemode(&["demo"], None);
    assert!(ok, "{stderr}");
    assert!(!stdout.contains('\x1b'), "no ANSI codes when piped");
    for needle in [
        "Model-visible tools: exec, wait",
        "\"status\": \"waiting\"",
        "restored after the wait: in transit",
        "Direct    :",
        "\"unpaidTons\": 43",
        "\"currency\": \"EUR\"",
        "function getForecast",
    ] {
        assert!(stdout.contains(needle), "missing {needle:?} in:\n{stdout}");
    }
    assert!(!stdout.contains("\"status\": \"failed\""), "a demo cell failed:\n{stdout}");
}

fn cache_entries(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|d| d.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    names.sort();
    names
}

/// The compiled module is kept in the cache directory (`--module-cache`, `CODEMODE_MODULE_CACHE`),
/// reused by the next process, and never written with `--no-module-cache` or `off`.
#[test]
fn module_cache_flag_env_and_opt_out() {
    let base = std::env::temp_dir().join(format!("codemode-cli-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let flag_dir = base.join("flag");
    for _ in 0..2 {
        let (ok, stdout, stderr) =
            codemode(&["--module-cache", flag_dir.to_str().unwrap(), "exec", "return 1 + 1"], None);
        assert!(ok, "{stderr}");
        assert_eq!(serde_json::from_str::<Value>(&stdout).unwrap()["value"], 2);
    }
    let entries = cache_entries(&flag_dir);
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert!(entries[0].starts_with("codemode-guest-") && entries[0].ends_with(".cwasm"), "{entries:?}");

    let env_dir = base.join("env");
    let run_with_env = |value: &std::ffi::OsStr, extra: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_codemode"))
            .args(extra)
            .args(["exec", "return 3"])
            .env("CODEMODE_MODULE_CACHE", value)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    };
    run_with_env(env_dir.as_os_str(), &[]);
    assert_eq!(cache_entries(&env_dir).len(), 1);

    let off_dir = base.join("off");
    run_with_env("off".as_ref(), &[]);
    run_with_env(off_dir.as_os_str(), &["--no-module-cache"]);
    assert!(!off_dir.exists(), "--no-module-cache wrote {off_dir:?}");
    let (ok, _, stderr) = codemode(&["--module-cache", "x", "--no-module-cache", "exec", "1"], None);
    assert!(!ok && stderr.contains("cannot be used with"), "{stderr}");
    let _ = std::fs::remove_dir_all(&base);
}

/// `codemode exec … | head`: a reader that is gone is not a crash.
#[test]
fn exec_into_a_closed_pipe_exits_cleanly() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_codemode"))
        .args(["exec", "text('x'.repeat(60000)); return 'y'.repeat(1000);"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Close the read end before the cell has run (start-up takes far longer than this).
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(out.status.success(), "{:?}: {stderr}", out.status);
}
