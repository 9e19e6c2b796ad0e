//! A catalog of 10,000 MCP tools (the 16 public catalogs' tools repeated over 233 servers, see
//! `benches/support/synthetic.rs`): the model-visible surface, the quick index and every `.d.ts`
//! stay within their budgets, and the guest API works (a trivial cell, `API.search`, a call of a
//! tool of the last server). Speed at this size is measured by `cargo bench -p codemode --bench
//! scale`, not here.

use codemode::{CodeMode, CodeModeConfig, ExecInput, NamespaceRegistry, RunOptions, definition_chars};
use codemode_catalog::{QUICK_INDEX_MAX_CHARS, QuickIndexOptions};
use codemode_mcp::{INDEX_PATH, MAX_INDEX_FILE_BYTES, MAX_SERVER_FILE_BYTES, MAX_TOTAL_BYTES};
use serde_json::json;

use crate::support::*;
use crate::synthetic::{specs, synthetic_servers};

const TOOLS: usize = 10_000;

#[test]
fn synthetic_catalogs_have_the_promised_size_and_shapes() {
    for n in [100, 1_000, TOOLS] {
        let servers = synthetic_servers(n);
        assert_eq!(servers.iter().map(|s| s.tools.len()).sum::<usize>(), n);
        let mut names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), servers.len(), "server names are unique");
    }
    let servers = synthetic_servers(TOOLS);
    assert_eq!(servers.len(), 233);
    assert_eq!(servers[16].name, "atlassian_1");
    assert_eq!(servers[16].tools, servers[0].tools, "copies keep the real shapes");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_tools_stay_within_every_budget_and_run() {
    let servers = synthetic_servers(TOOLS);
    let last = servers.last().unwrap().clone();
    let host = ScriptedHost::new();
    let cm = CodeMode::builder(
        CodeModeConfig::from_json(&json!({ "enabled": true, "timeoutMs": 20000 })).unwrap(),
    )
    .tools(specs(&servers))
    .mcp_servers(servers)
    .host(host.clone())
    .namespaces(NamespaceRegistry::new())
    .build()
    .unwrap();
    assert_eq!(cm.runtime_unavailable_reason(), None);
    assert_eq!(cm.catalog().len(), TOOLS);

    // The model-visible surface: exec + wait within SURFACE_MAX_CHARS, the quick index and the
    // server list within theirs.
    let surface = cm.model_surface(&RunOptions::default());
    let chars: usize = surface.tools().iter().map(definition_chars).sum();
    assert!(chars <= codemode::SURFACE_MAX_CHARS, "surface {chars} chars");
    let quick = cm.catalog().quick_index(&QuickIndexOptions::default());
    assert!(quick.chars().count() <= QUICK_INDEX_MAX_CHARS, "quick index {} chars", quick.chars().count());
    // The server lines within their budget; the rest are counted in the last line.
    let list = cm.mcp_server_list();
    let lines: usize = list.lines().filter(|l| l.starts_with("- MCP.")).map(|l| l.chars().count() + 1).sum();
    assert!(lines <= codemode::MCP_SERVER_LIST_MAX_CHARS, "server lines {lines} chars");
    assert!(list.lines().last().unwrap().starts_with("- and "), "233 servers cannot all be listed: {list}");

    // Every `.d.ts` within its budget. The server files declare their tools until they reach
    // MAX_TOTAL_BYTES together (the file that crosses it is the last with declarations); every
    // later server gets a minimal file (no declarations: `$api()` still has them).
    let api = cm.mcp_api().unwrap();
    let mut files = api.files();
    let (index_path, index) = files.next().unwrap();
    assert_eq!(index_path, INDEX_PATH);
    assert!(index.len() <= MAX_INDEX_FILE_BYTES, "index: {} bytes", index.len());
    let mut before = 0usize;
    let mut server_files = 0;
    let mut minimal = 0;
    for (path, content) in files {
        server_files += 1;
        assert!(content.len() <= MAX_SERVER_FILE_BYTES, "{path}: {} bytes", content.len());
        if before >= MAX_TOTAL_BYTES {
            minimal += 1;
            assert!(content.len() <= 4096, "{path} should be minimal: {} bytes", content.len());
            assert!(content.contains("not declared here"), "{path}: {content}");
        }
        before += content.len();
    }
    assert_eq!(server_files, 233);
    assert!(minimal > 0, "10,000 tools reach the total budget");
    assert!(before <= MAX_TOTAL_BYTES + MAX_SERVER_FILE_BYTES + minimal * 4096, "{before} bytes");

    // The guest API over 10,000 tools: a trivial cell, a search, a call on the last server.
    let scope = scope();
    let r = cm.exec(&scope, ExecInput::code("return 1 + 1;")).await;
    assert_eq!(value(&r), json!(2));
    // The first search builds the ranking index (in this unoptimized test build that takes longer
    // than a run's time budget at 10,000 tools; the `scale` bench measures it in release).
    assert!(!cm.catalog().search_mcp("create a pull request", 5).is_empty());
    let r = cm
        .exec(&scope, ExecInput::code(r#"const hits = await API.search("create a pull request", { limit: 5 }); return hits.map((h) => h.id);"#))
        .await;
    let hits = value(&r);
    assert_eq!(hits.as_array().unwrap().len(), 5, "{hits}");
    assert!(hits.to_string().contains("pull_request"), "{hits}");
    let tool = last
        .tools
        .iter()
        .find(|t| t.input_schema.get("required").and_then(|r| r.as_array()).is_none_or(|r| r.is_empty()))
        .expect("a tool without required parameters on the last server");
    let server = api.server_table().ident(&last.name).unwrap().to_owned();
    let call =
        format!("return await MCP[{server:?}][{:?}]({{}});", api_tool_ident(&cm, &last.name, &tool.name));
    let r = cm.exec(&scope, ExecInput::code(call)).await;
    assert!(matches!(r, codemode::CodeModeResult::Completed(_)), "{:?}", r.to_json());
    let called = host.call_ids();
    assert_eq!(called.len(), 1, "{called:?}");
}

fn api_tool_ident(cm: &CodeMode, server: &str, tool: &str) -> String {
    let api = cm.mcp_api().unwrap();
    let server = api.server_table().ident(server).unwrap();
    api.tool_table(server).unwrap().ident(tool).unwrap().to_owned()
}

/// With a large catalog the base image is big enough that finished VMs are recycled in place
/// (`Sandbox::recycle`) rather than restored from the base image: nothing a run does is visible to
/// the next one, on VM threads and on the calling thread, after completed, failed, timed-out and
/// memory-growing runs alike.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_on_recycled_vms_see_nothing_of_earlier_runs() {
    let servers = synthetic_servers(1_000);
    for thread in [codemode::GuestThread::Dedicated, codemode::GuestThread::Caller] {
        let cm = CodeMode::builder(
            CodeModeConfig::from_json(&json!({ "enabled": true, "timeoutMs": 20000 })).unwrap(),
        )
        .tools(specs(&servers))
        .mcp_servers(servers.clone())
        .host(ScriptedHost::new())
        .namespaces(NamespaceRegistry::new())
        .guest_thread(thread)
        .build()
        .unwrap();
        assert!(
            cm.base_image_bytes() >= codemode::SandboxConfig::default().recycle_min_base_bytes,
            "the 1,000-tool base image ({} bytes) should be large enough to recycle VMs",
            cm.base_image_bytes()
        );
        let scope = scope();
        let probe = "return [typeof leak, ({}).polluted ?? null, typeof globalThis.big, Object.keys(MCP).length, \
                     (await API.list('mcp')).length];";
        let clean = value(&cm.exec(&scope, ExecInput::code(probe)).await);
        assert_eq!(clean[0], json!("undefined"), "{clean}");
        let dirty = [
            "globalThis.leak = 1; Object.prototype.polluted = 'yes'; return 1;",
            "globalThis.leak = 2; throw new Error('failed');",
            "globalThis.big = new Uint8Array(32 << 20).fill(1); globalThis.leak = 3; return big.length;",
            "globalThis.leak = 4; Array.prototype.map = null; JSON.stringify = null; return 'ok';",
        ];
        for _round in 0..3 {
            for code in dirty {
                let _ = cm.exec(&scope, ExecInput::code(code)).await;
                let seen = value(&cm.exec(&scope, ExecInput::code(probe)).await);
                assert_eq!(seen, clean, "{thread:?}: after {code}");
            }
        }
    }
}
