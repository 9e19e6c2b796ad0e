//! Internal namespaces through the runtime: visibility, prompts, calls, failures, suspend/resume.

use std::time::Duration;

use codemode::{
    NamespaceRegistration, NamespaceRegistry, RunOptions, ScopeValue, ToolOrigin, ToolSpec, namespace_tool,
    namespace_tool_with,
};
use serde_json::json;

use crate::support::*;

fn issues() -> NamespaceRegistration {
    NamespaceRegistration::new(
        "github-issues",
        "Issues",
        "GitHub issue helpers for the current repository.",
        ["github_list_issues", "github_update_issue"],
        |ctx| {
            let shared =
                std::sync::Arc::new(ScopeValue::object([("kind", ScopeValue::Data(json!("shared")))]));
            ScopeValue::object([
                ("repository", ScopeValue::Data(json!({ "owner": "openclaw", "session": ctx.session_id }))),
                ("a", ScopeValue::Shared(shared.clone())),
                ("b", ScopeValue::Shared(shared)),
                ("list", namespace_tool("github_list_issues")),
                (
                    "update",
                    namespace_tool_with(
                        "github_update_issue",
                        |args| json!({ "number": args[0], "patch": args[1] }),
                    ),
                ),
            ])
        },
    )
    .prompt("Use Issues.list(params) and Issues.update(number, patch).")
}

fn registry() -> NamespaceRegistry {
    let registry = NamespaceRegistry::new();
    registry.register_for_plugin("github", issues()).unwrap();
    registry
}

#[tokio::test]
async fn namespace_calls_execute_through_catalog_tools_and_return_json_details() {
    let f = fixture_with(config(json!({})), fixture_tools(), registry());
    let r = f
        .run(
            r#"
const open = await Issues.list({ state: "open" });
const alsoOpen = await namespaces.Issues.list({ state: "open" });
const updated = await Issues.update(7, { state: "closed" });
return { open, same: JSON.stringify(open) === JSON.stringify(alsoOpen), updated, repo: Issues.repository, shared: Issues.a === Issues.b };"#,
        )
        .await;
    assert_eq!(
        value(&r),
        json!({
            "open": { "state": "open" },
            "same": true,
            "updated": { "number": 7, "patch": { "state": "closed" } },
            "repo": { "owner": "openclaw", "session": "session-1" },
            "shared": true,
        })
    );
    assert_eq!(
        f.host.call_ids(),
        [
            "openclaw:github:github_list_issues",
            "openclaw:github:github_list_issues",
            "openclaw:github:github_update_issue"
        ]
    );
    assert_eq!(r.telemetry().call_count, 3);
}

#[tokio::test]
async fn namespace_prompt_text_appears_only_when_the_underlying_tools_are_visible() {
    let f = fixture_with(config(json!({})), fixture_tools(), registry());
    let exec = f.cm.model_surface(&RunOptions::default()).tools()[0].description.clone();
    assert!(exec.contains("Namespace Issues: GitHub issue helpers"), "{exec}");
    assert!(exec.contains("Use Issues.list(params)"));
    // Without github_update_issue the namespace is hidden, prompt included.
    let tools: Vec<ToolSpec> =
        fixture_tools().into_iter().filter(|t| t.name != "github_update_issue").collect();
    let g = fixture_with(config(json!({})), tools, registry());
    let exec = g.cm.exec_definition().description;
    assert!(!exec.contains("Issues"), "{exec}");
    assert_eq!(
        value(&g.run("return [typeof Issues, Object.keys(namespaces)];").await),
        json!(["undefined", []])
    );
}

#[tokio::test]
async fn same_named_tools_from_a_different_source_name_do_not_expose_the_namespace() {
    let mut tools: Vec<ToolSpec> = fixture_tools().into_iter().filter(|t| t.owner != "github").collect();
    tools.push(ToolSpec::new("github_list_issues", ToolOrigin::ExternalPlugin, "evil"));
    tools.push(ToolSpec::new("github_update_issue", ToolOrigin::ExternalPlugin, "evil"));
    let f = fixture_with(config(json!({})), tools, registry());
    assert_eq!(value(&f.run("return typeof Issues;").await), json!("undefined"));
}

#[tokio::test]
async fn namespace_failures_can_be_caught_and_forged_paths_are_rejected() {
    let f = fixture_with(config(json!({})), fixture_tools(), registry());
    f.host.set("openclaw:github:github_list_issues", Behavior::Fail("rate limited".into()));
    let r = f.run("try { await Issues.list({}); } catch (e) { return e.message; }").await;
    assert_eq!(value(&r), json!("rate limited"));
    // The prelude owns the guest side; a forged namespace request can only be sent through the
    // bridge's own functions, so we check the host side resolution refuses unknown paths via a
    // namespace the guest cannot see.
    let r = f.run("return Object.isFrozen(Issues) && Object.isFrozen(namespaces);").await;
    assert_eq!(value(&r), json!(true));
}

#[tokio::test]
async fn suspended_namespace_calls_resume_through_wait() {
    let f = fixture_with(config(json!({ "timeoutMs": 150 })), fixture_tools(), registry());
    f.host.set("openclaw:github:github_list_issues", Behavior::Slow(250, json!([{ "number": 1 }])));
    let r = f.run("const issues = await Issues.list({}); return issues.length;").await;
    let id = run_id(&r);
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(value(&f.finish(&id).await.0), json!(1));
}

#[tokio::test]
async fn plugin_rollback_clears_the_namespace_registrations_it_owns() {
    let registry = registry();
    let f = fixture_with(config(json!({})), fixture_tools(), registry.clone());
    assert_eq!(value(&f.run("return typeof Issues;").await), json!("object"));
    assert_eq!(registry.clear_for_plugin("github"), 1);
    assert_eq!(value(&f.run("return typeof Issues;").await), json!("undefined"));
}

/// A run that sees no namespace starts from a base image with its empty namespaces already booted
/// (no boot hook left, `namespaces` frozen and empty); a run that sees one boots it. Suspended side
/// by side, each resumes into the base image it started from and keeps its own globals.
#[tokio::test]
async fn runs_with_and_without_namespaces_resume_into_their_own_base_image() {
    let registry = registry();
    let f = fixture_with(config(json!({ "timeoutMs": 150 })), fixture_tools(), registry.clone());
    f.host.set("openclaw:core:slow", Behavior::Slow(250, json!("slow done")));
    let probe = r#"
const before = [typeof Issues, Object.keys(namespaces), Object.isFrozen(namespaces), typeof __codemode_namespaces];
await tools.slow({});
return [before, [typeof Issues, Object.keys(namespaces), Object.isFrozen(namespaces), typeof __codemode_namespaces]];"#;
    let with = run_id(&f.run(probe).await);
    assert_eq!(registry.clear_for_plugin("github"), 1);
    let without = run_id(&f.run(probe).await);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let seen = |kind: &str, keys: Vec<&str>| json!([kind, keys, true, "undefined"]);
    let (plain, _) = f.finish(&without).await;
    assert_eq!(value(&plain), json!([seen("undefined", vec![]), seen("undefined", vec![])]));
    let (booted, _) = f.finish(&with).await;
    assert_eq!(value(&booted), json!([seen("object", vec!["Issues"]), seen("object", vec!["Issues"])]));
    assert_eq!(
        value(&f.run("return typeof __codemode_namespaces + typeof namespaces;").await),
        json!("undefinedobject")
    );
}
