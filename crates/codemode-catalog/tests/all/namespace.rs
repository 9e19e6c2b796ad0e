//! The namespace registry: registration checks, visibility, scope validation, call resolution,
//! cleanup. Covers the spec's namespace testing checklist items that belong to the registry.

use std::sync::Arc;

use codemode_catalog::MAX_SCOPE_DEPTH;
use codemode_catalog::{Catalog, CatalogOptions, NamespaceError, NamespaceRegistry};
use codemode_core::PATH_SEPARATOR;
use codemode_core::{
    NamespaceContext, NamespaceRegistration, ScopeValue, ToolOrigin, ToolSpec, namespace_tool,
    namespace_tool_with,
};
use serde_json::json;

const PLUGIN: &str = "github";
const LIST: &str = "github_list_issues";
const UPDATE: &str = "github_update_issue";

fn plugin_tool(name: &str, owner: &str) -> ToolSpec {
    ToolSpec::new(name, ToolOrigin::BundledPlugin, owner)
}

fn catalog(tools: Vec<ToolSpec>) -> Catalog {
    Catalog::build(tools, &CatalogOptions::default())
}

fn owned_catalog() -> Catalog {
    catalog(vec![plugin_tool(LIST, PLUGIN), plugin_tool(UPDATE, PLUGIN), ToolSpec::core("message")])
}

fn ctx() -> NamespaceContext {
    let mut ctx = NamespaceContext::new("session-1", "run-1");
    ctx.config = json!({ "owner": "openclaw", "repo": "openclaw" });
    ctx
}

fn issues() -> NamespaceRegistration {
    NamespaceRegistration::new(
        "github-issues",
        "Issues",
        "GitHub issue helpers for the current repository.",
        [LIST, UPDATE],
        |ctx: &NamespaceContext| {
            ScopeValue::object([
                ("repository", ScopeValue::Data(ctx.config.clone())),
                ("list", namespace_tool_with(LIST, |args| args.first().cloned().unwrap_or(json!({})))),
                (
                    "update",
                    namespace_tool_with(
                        UPDATE,
                        |args| json!({ "number": args.first().cloned(), "patch": args.get(1).cloned() }),
                    ),
                ),
            ])
        },
    )
    .prompt("Use Issues.list(params) and Issues.update(number, patch).")
}

fn with_scope(id: &str, global: &str, scope: ScopeValue) -> NamespaceRegistration {
    NamespaceRegistration::new(id, global, "test namespace", [LIST, UPDATE], move |_: &NamespaceContext| {
        scope.clone()
    })
}

fn registry_with(registrations: Vec<NamespaceRegistration>) -> NamespaceRegistry {
    let registry = NamespaceRegistry::new();
    for r in registrations {
        registry.register_for_plugin(PLUGIN, r).expect("register");
    }
    registry
}

#[test]
fn prompt_appears_only_when_required_tools_are_visible() {
    let registry = registry_with(vec![issues()]);
    let visible = registry.visible_for(&owned_catalog(), &ctx());
    assert_eq!(visible.len(), 1);
    assert_eq!(visible[0].global_name, "Issues");
    assert_eq!(
        visible[0].prompt.as_deref(),
        Some("Use Issues.list(params) and Issues.update(number, patch).")
    );
    assert_eq!(visible[0].description, "GitHub issue helpers for the current repository.");
    assert_eq!(visible[0].plugin_id, PLUGIN);
    assert_eq!(visible[0].tool_ids[LIST], "openclaw:github:github_list_issues");

    // One required tool missing (policy removed it): hidden, prompt included.
    let partial = catalog(vec![plugin_tool(LIST, PLUGIN)]);
    let resolution = registry.resolve_for(&partial, &ctx());
    assert!(resolution.visible.is_empty());
    assert_eq!(
        resolution.hidden,
        [(
            "github-issues".to_owned(),
            NamespaceError::MissingTool { id: "github-issues".into(), tool_name: UPDATE.into() }
        )]
    );
}

#[test]
fn same_named_tools_from_another_source_do_not_expose_the_namespace() {
    let registry = registry_with(vec![issues()]);
    for impostor in [
        plugin_tool(UPDATE, "evil-plugin"),
        ToolSpec::core(UPDATE),
        ToolSpec::new(UPDATE, ToolOrigin::Mcp, PLUGIN),
        ToolSpec::new(UPDATE, ToolOrigin::Client, PLUGIN),
    ] {
        let impostor_id = impostor.catalog_id();
        let run = catalog(vec![plugin_tool(LIST, PLUGIN), impostor]);
        let resolution = registry.resolve_for(&run, &ctx());
        assert!(resolution.visible.is_empty(), "{impostor_id} exposed the namespace");
        let (_, error) = &resolution.hidden[0];
        assert!(
            matches!(error, NamespaceError::ForeignTool { found, .. } if found == std::slice::from_ref(&impostor_id)),
            "{error:?}"
        );
    }
}

#[test]
fn raw_functions_cannot_be_expressed() {
    // `ScopeValue` has no function variant; the only callable is a tool marker. The compile-time
    // half of this is the `compile_fail` doctest in `codemode_catalog::namespace`; at run time, a
    // data value that looks like a function is just data and is not callable.
    let scope = ScopeValue::object([
        ("list", ScopeValue::Data(json!({ "type": "function", "call": "githubClient.listIssues" }))),
        ("ok", namespace_tool(LIST)),
    ]);
    let registry = registry_with(vec![with_scope("ns", "Ns", scope)]);
    let resolution = registry.resolve_for(&owned_catalog(), &ctx());
    assert!(matches!(resolution.resolve("Ns", &["list"]), Err(NamespaceError::UnknownPath { .. })));
    assert!(matches!(resolution.resolve("Ns", &["list", "call"]), Err(NamespaceError::UnknownPath { .. })));
    assert!(resolution.resolve("Ns", &["ok"]).is_ok());
}

#[test]
fn forged_namespace_ids_and_paths_are_rejected() {
    let registry = registry_with(vec![issues()]);
    let resolution = registry.resolve_for(&owned_catalog(), &ctx());
    let call = resolution.resolve("Issues", &["list"]).expect("list");
    assert_eq!(call.catalog_id, "openclaw:github:github_list_issues");
    assert_eq!(
        resolution.resolve("github-issues", &["update"]).map(|c| c.catalog_id),
        Ok("openclaw:github:github_update_issue")
    );
    for (namespace, path) in [("Nope", vec!["list"]), ("tools", vec!["list"]), ("", vec!["list"])] {
        assert!(
            matches!(resolution.resolve(namespace, &path), Err(NamespaceError::UnknownNamespace { .. })),
            "{namespace}"
        );
    }
    for path in [
        vec!["delete"],
        vec![],
        vec!["repository"],
        vec!["repository", "owner"],
        vec!["__proto__"],
        vec!["constructor"],
        vec!["list", "call"],
        vec!["list\u{1f}update"],
    ] {
        assert!(
            matches!(resolution.resolve("Issues", &path), Err(NamespaceError::UnknownPath { .. })),
            "{path:?}"
        );
    }
}

#[test]
fn callable_paths_cannot_target_undeclared_tools() {
    // The plugin owns `github_delete_repo` and it is in the catalog, but it is not declared.
    let run = catalog(vec![
        plugin_tool(LIST, PLUGIN),
        plugin_tool(UPDATE, PLUGIN),
        plugin_tool("github_delete_repo", PLUGIN),
    ]);
    let scope = ScopeValue::object([
        ("list", namespace_tool(LIST)),
        ("nested", ScopeValue::object([("nuke", namespace_tool("github_delete_repo"))])),
    ]);
    let registry = registry_with(vec![with_scope("ns", "Ns", scope), issues()]);
    let resolution = registry.resolve_for(&run, &ctx());
    assert_eq!(resolution.visible.iter().map(|n| n.id.as_str()).collect::<Vec<_>>(), ["github-issues"]);
    assert_eq!(
        resolution.hidden,
        [(
            "ns".to_owned(),
            NamespaceError::UndeclaredTool {
                id: "ns".into(),
                path: "nested.nuke".into(),
                tool_name: "github_delete_repo".into()
            }
        )]
    );
}

#[test]
fn nested_objects_arrays_and_shared_references() {
    let shared = Arc::new(ScopeValue::object([
        ("list", namespace_tool(LIST)),
        ("meta", ScopeValue::Data(json!([1, 2]))),
    ]));
    let scope = ScopeValue::object([
        ("a", ScopeValue::Shared(shared.clone())),
        ("b", ScopeValue::object([("again", ScopeValue::Shared(shared.clone()))])),
        ("items", ScopeValue::Array(vec![ScopeValue::Data(json!("x")), namespace_tool(UPDATE)])),
    ]);
    let registry = registry_with(vec![with_scope("ns", "Ns", scope)]);
    let resolution = registry.resolve_for(&owned_catalog(), &ctx());
    assert!(resolution.hidden.is_empty(), "{:?}", resolution.hidden);
    let id = |path: &[&str]| resolution.resolve("Ns", path).map(|c| c.catalog_id.to_owned());
    assert_eq!(id(&["a", "list"]), Ok("openclaw:github:github_list_issues".into()));
    assert_eq!(id(&["b", "again", "list"]), Ok("openclaw:github:github_list_issues".into()));
    assert_eq!(id(&["items", "1"]), Ok("openclaw:github:github_update_issue".into()));
    for bad in [&["items", "0"][..], &["items", "01"], &["items", "2"], &["items", "-1"], &["a", "meta"]] {
        assert!(id(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn a_widely_shared_subtree_is_validated_once() {
    // 40 levels, each referencing the next twice: 2^40 paths, validated in linear time.
    let mut node = Arc::new(namespace_tool(LIST));
    for _ in 0..(MAX_SCOPE_DEPTH - 2) {
        node = Arc::new(ScopeValue::object([
            ("l", ScopeValue::Shared(node.clone())),
            ("r", ScopeValue::Shared(node.clone())),
        ]));
    }
    let scope = ScopeValue::object([("root", ScopeValue::Shared(node))]);
    let registry = registry_with(vec![with_scope("ns", "Ns", scope)]);
    let resolution = registry.resolve_for(&owned_catalog(), &ctx());
    assert!(resolution.hidden.is_empty(), "{:?}", resolution.hidden);
}

#[test]
fn unsafe_keys_hide_the_namespace_not_the_run() {
    let separator = format!("a{PATH_SEPARATOR}b");
    for key in ["__proto__", "constructor", "prototype", "", separator.as_str()] {
        let scope = ScopeValue::object([("inner", ScopeValue::object([(key, namespace_tool(LIST))]))]);
        let registry = registry_with(vec![with_scope("bad", "Bad", scope), issues()]);
        let resolution = registry.resolve_for(&owned_catalog(), &ctx());
        assert_eq!(resolution.visible.len(), 1, "{key:?}");
        assert_eq!(
            resolution.hidden,
            [(
                "bad".to_owned(),
                NamespaceError::UnsafeKey { id: "bad".into(), path: "inner".into(), key: key.into() }
            )]
        );
    }
    let duplicate = ScopeValue::object([("list", namespace_tool(LIST)), ("list", namespace_tool(UPDATE))]);
    let resolution =
        registry_with(vec![with_scope("dup", "Dup", duplicate)]).resolve_for(&owned_catalog(), &ctx());
    assert!(matches!(&resolution.hidden[0].1, NamespaceError::DuplicateKey { key, .. } if key == "list"));
}

#[test]
fn scope_root_must_be_an_object() {
    for scope in [
        namespace_tool(LIST),
        ScopeValue::Data(json!([1])),
        ScopeValue::Array(vec![]),
        ScopeValue::Data(json!(null)),
    ] {
        let resolution =
            registry_with(vec![with_scope("ns", "Ns", scope)]).resolve_for(&owned_catalog(), &ctx());
        assert!(matches!(&resolution.hidden[0].1, NamespaceError::ScopeNotObject { .. }));
    }
    let data_object = ScopeValue::Data(json!({ "plain": true }));
    let resolution =
        registry_with(vec![with_scope("ns", "Ns", data_object)]).resolve_for(&owned_catalog(), &ctx());
    assert_eq!(resolution.visible.len(), 1);
}

fn nested(depth: usize) -> ScopeValue {
    let mut node = namespace_tool(LIST);
    for _ in 0..depth {
        node = ScopeValue::object([("n", node)]);
    }
    node
}

#[test]
fn scope_depth_limit_is_exact() {
    let at = registry_with(vec![with_scope("ns", "Ns", nested(MAX_SCOPE_DEPTH))])
        .resolve_for(&owned_catalog(), &ctx());
    assert!(at.hidden.is_empty(), "{:?}", at.hidden);
    let path = vec!["n"; MAX_SCOPE_DEPTH];
    assert!(at.resolve("Ns", &path).is_ok());
    let past = registry_with(vec![with_scope("ns", "Ns", nested(MAX_SCOPE_DEPTH + 1))])
        .resolve_for(&owned_catalog(), &ctx());
    assert_eq!(
        past.hidden,
        [("ns".to_owned(), NamespaceError::ScopeTooDeep { id: "ns".into(), max: MAX_SCOPE_DEPTH })]
    );
}

#[test]
fn scope_is_built_per_run_from_the_context() {
    let registry = registry_with(vec![issues()]);
    let visible = registry.visible_for(&owned_catalog(), &ctx());
    let ScopeValue::Object(members) = &visible[0].scope else { panic!("object scope") };
    assert!(
        matches!(&members[0], (key, ScopeValue::Data(config)) if key == "repository" && config["repo"] == "openclaw")
    );
    // The input mapper travels with the marker.
    let resolution = registry.resolve_for(&owned_catalog(), &ctx());
    let call = resolution.resolve("Issues", &["update"]).expect("update");
    assert_eq!(
        call.marker.map_input(&[json!(7), json!({ "state": "closed" })]),
        json!({ "number": 7, "patch": { "state": "closed" } })
    );
    let list = resolution.resolve("Issues", &["list"]).expect("list");
    assert_eq!(list.marker.map_input(&[]), json!({}));
}

#[test]
fn a_panicking_scope_factory_hides_only_its_namespace() {
    let panicking =
        NamespaceRegistration::new("boom", "Boom", "d", [LIST], |_: &NamespaceContext| -> ScopeValue {
            panic!("factory bug")
        });
    let registry = registry_with(vec![panicking, issues()]);
    let resolution = registry.resolve_for(&owned_catalog(), &ctx());
    assert_eq!(resolution.visible.len(), 1);
    assert_eq!(resolution.hidden, [("boom".to_owned(), NamespaceError::ScopePanicked { id: "boom".into() })]);
}

#[test]
fn global_name_rules() {
    let registry = NamespaceRegistry::new();
    let register = |global: &str| {
        registry.register_for_plugin(
            PLUGIN,
            NamespaceRegistration::new("ns", global, "d", [LIST], |_: &NamespaceContext| {
                ScopeValue::object::<String>([])
            }),
        )
    };
    for bad in ["my-ns", "1abc", "", "delete", "Ünï", "a b"] {
        assert!(matches!(register(bad), Err(NamespaceError::InvalidGlobalName { .. })), "{bad:?}");
    }
    for reserved in ["tools", "namespaces", "text", "json", "yield_control", "MCP", "API", "ALL_TOOLS"] {
        assert!(
            matches!(
                register(reserved),
                Err(NamespaceError::ReservedGlobalName { reason: "Code Mode global", .. })
            ),
            "{reserved}"
        );
    }
    for private in ["__codemode", "__codemodeX", "__openclaw_ns"] {
        assert!(
            matches!(
                register(private),
                Err(NamespaceError::ReservedGlobalName { reason: "private prefix", .. })
            ),
            "{private}"
        );
    }
    for builtin in ["JSON", "Promise", "Object", "globalThis", "console"] {
        assert!(matches!(register(builtin), Err(NamespaceError::ReservedGlobalName { .. })), "{builtin}");
    }
    assert!(registry.registrations().is_empty());
    assert_eq!(register("Issues"), Ok(()));
    let message = register("tools").expect_err("reserved").to_string();
    assert!(message.contains("\"tools\"") && message.contains("reserved"), "{message}");
}

#[test]
fn registration_checks_and_duplicates() {
    let registry = NamespaceRegistry::new();
    let empty = |_: &NamespaceContext| ScopeValue::object::<String>([]);
    let none: [&str; 0] = [];
    assert_eq!(
        registry.register_for_plugin(PLUGIN, NamespaceRegistration::new("ns", "Ns", "d", none, empty)),
        Err(NamespaceError::NoRequiredTools { id: "ns".into() })
    );
    assert!(matches!(
        registry
            .register_for_plugin(PLUGIN, NamespaceRegistration::new("ns", "Ns", "d", [LIST, LIST], empty)),
        Err(NamespaceError::InvalidRequiredTool { .. })
    ));
    assert!(matches!(
        registry.register_for_plugin("", NamespaceRegistration::new("ns", "Ns", "d", [LIST], empty)),
        Err(NamespaceError::EmptyPluginId { .. })
    ));
    for bad_id in ["", "has space", "a/b"] {
        assert!(matches!(
            registry
                .register_for_plugin(PLUGIN, NamespaceRegistration::new(bad_id, "Ns", "d", [LIST], empty)),
            Err(NamespaceError::InvalidId { .. })
        ));
    }
    registry.register_for_plugin(PLUGIN, issues()).expect("first");
    let again = registry.register_for_plugin("other", issues()).expect_err("duplicate id");
    assert_eq!(
        again,
        NamespaceError::DuplicateId { id: "github-issues".into(), existing_plugin: PLUGIN.into() }
    );
    assert!(again.to_string().contains("already registered"));
    let same_global = NamespaceRegistration::new("other-issues", "Issues", "d", [LIST], empty);
    assert_eq!(
        registry.register_for_plugin(PLUGIN, same_global),
        Err(NamespaceError::DuplicateGlobalName {
            id: "other-issues".into(),
            global_name: "Issues".into(),
            existing_id: "github-issues".into()
        })
    );
}

#[test]
fn plugin_rollback_clears_its_registrations() {
    let registry = NamespaceRegistry::new();
    let empty = |_: &NamespaceContext| ScopeValue::object([("list", namespace_tool(LIST))]);
    registry.register_for_plugin(PLUGIN, issues()).expect("a");
    registry
        .register_for_plugin(PLUGIN, NamespaceRegistration::new("github-more", "More", "d", [LIST], empty))
        .expect("b");
    registry
        .register_for_plugin("jira", NamespaceRegistration::new("jira", "Jira", "d", ["jira_list"], empty))
        .expect("c");
    assert_eq!(registry.clear_for_plugin(PLUGIN), 2);
    assert_eq!(registry.registrations(), [("jira".to_owned(), "jira".to_owned())]);
    assert!(registry.visible_for(&owned_catalog(), &ctx()).is_empty());
    // The ids and globals are free again.
    registry.register_for_plugin(PLUGIN, issues()).expect("re-register after rollback");
    assert_eq!(registry.clear_for_plugin("nobody"), 0);
    registry.clear_for_test();
    assert!(registry.registrations().is_empty());
}

#[test]
fn clones_share_state_and_the_global_registry_works() {
    let registry = NamespaceRegistry::new();
    let clone = registry.clone();
    clone.register_for_plugin(PLUGIN, issues()).expect("register");
    assert_eq!(registry.registrations().len(), 1);

    let global = NamespaceRegistry::global();
    let unique =
        NamespaceRegistration::new("global-test-ns", "GlobalTestNs", "d", [LIST], |_: &NamespaceContext| {
            ScopeValue::object([("list", namespace_tool(LIST))])
        });
    global.register_for_plugin("global-test-plugin", unique).expect("global register");
    assert!(global.registrations().contains(&("global-test-plugin".to_owned(), "global-test-ns".to_owned())));
    assert_eq!(global.clear_for_plugin("global-test-plugin"), 1);
}

#[test]
fn visible_namespaces_are_ordered_by_id() {
    let empty = |_: &NamespaceContext| ScopeValue::object([("list", namespace_tool(LIST))]);
    let registry = NamespaceRegistry::new();
    for (id, global) in [("zeta", "Zeta"), ("alpha", "Alpha"), ("mid", "Mid")] {
        registry
            .register_for_plugin(PLUGIN, NamespaceRegistration::new(id, global, "d", [LIST], empty))
            .expect("register");
    }
    let ids: Vec<String> = registry.visible_for(&owned_catalog(), &ctx()).into_iter().map(|n| n.id).collect();
    assert_eq!(ids, ["alpha", "mid", "zeta"]);
}

/// Ownership checks follow the catalog's host source: a namespace over plugin tools is visible when
/// those tools are `host:<plugin>:<name>`.
#[test]
fn namespaces_resolve_under_a_named_host_source() {
    let mut options = CatalogOptions::default();
    options.host_source = "host".to_owned();
    let catalog = Catalog::build(
        vec![plugin_tool(LIST, PLUGIN), plugin_tool(UPDATE, PLUGIN), ToolSpec::core("message")],
        &options,
    );
    let registry = registry_with(vec![issues()]);
    let visible = registry.visible_for(&catalog, &ctx());
    assert_eq!(visible.len(), 1, "{:?}", registry.resolve_for(&catalog, &ctx()).hidden);
    assert_eq!(visible[0].tool_ids[LIST], "host:github:github_list_issues");
    assert_eq!(visible[0].tool_ids[UPDATE], "host:github:github_update_issue");
}
