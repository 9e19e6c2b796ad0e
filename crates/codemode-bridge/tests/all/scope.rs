//! Namespace scope serialization and resolution of guest calls.

use std::sync::Arc;

use codemode_bridge::{BridgeError, NamespaceTable, serialize_namespace};
use codemode_core::PATH_SEPARATOR;
use codemode_core::{NamespaceRegistration, ScopeValue, namespace_tool, namespace_tool_with};
use serde_json::{Value, json};

fn registration(
    global: &str,
    scope: impl Fn() -> ScopeValue + Send + Sync + 'static,
) -> NamespaceRegistration {
    NamespaceRegistration::new(
        "github-issues",
        global,
        "Issues",
        ["github_list_issues", "github_update_issue"],
        move |_| scope(),
    )
}

fn issues_scope() -> ScopeValue {
    let shared = Arc::new(ScopeValue::object([
        ("list", namespace_tool("github_list_issues")),
        ("limits", ScopeValue::Data(json!({ "max": 50 }))),
    ]));
    ScopeValue::object([
        ("repository", ScopeValue::Data(json!({ "owner": "openclaw", "__proto__": { "x": 1 } }))),
        ("list", namespace_tool("github_list_issues")),
        (
            "update",
            namespace_tool_with(
                "github_update_issue",
                |args: &[Value]| json!({ "number": args.first().cloned().unwrap_or(Value::Null), "patch": args.get(1).cloned() }),
            ),
        ),
        (
            "nested",
            ScopeValue::object([("deeper", ScopeValue::Array(vec![namespace_tool("github_list_issues")]))]),
        ),
        ("a", ScopeValue::Shared(shared.clone())),
        ("b", ScopeValue::Shared(shared)),
    ])
}

#[test]
fn nested_objects_and_shared_references_serialize() {
    let reg = registration("Issues", issues_scope);
    let ns = serialize_namespace(&reg, &(reg.create_scope)(&Default::default())).unwrap();
    insta::assert_json_snapshot!("issues_descriptor", ns.descriptor());
    let sep = PATH_SEPARATOR.to_string();
    let paths: Vec<&str> = ns.callables().keys().map(String::as_str).collect();
    let expected = [
        "a".to_owned() + &sep + "list",
        "list".into(),
        "nested".to_owned() + &sep + "deeper" + &sep + "0",
        "update".into(),
    ];
    assert_eq!(paths, expected.iter().map(String::as_str).collect::<Vec<_>>());
    // The shared subtree is emitted once and referenced twice.
    assert_eq!(ns.descriptor()["shared"].as_array().unwrap().len(), 1);
    let text = ns.descriptor().to_string();
    assert!(!text.contains("github_list_issues"), "tool names never reach the guest: {text}");
}

#[test]
fn calls_resolve_and_forged_ids_and_paths_are_rejected() {
    let reg = registration("Issues", issues_scope);
    let mut table = NamespaceTable::new();
    table.add(&reg, &(reg.create_scope)(&Default::default())).unwrap();
    let update = table.resolve("github-issues", "update").unwrap();
    assert_eq!(update.marker.tool_name, "github_update_issue");
    assert_eq!(
        update.marker.map_input(&[json!(7), json!({ "state": "closed" })]),
        json!({ "number": 7, "patch": { "state": "closed" } })
    );
    let list = table.resolve("github-issues", "list").unwrap();
    assert_eq!(list.marker.map_input(&[]), json!({}));
    assert_eq!(list.marker.map_input(&[json!({ "state": "open" })]), json!({ "state": "open" }));

    assert_eq!(table.resolve("Issues", "list").unwrap_err(), "namespace call: unknown namespace");
    assert_eq!(table.resolve("other", "list").unwrap_err(), "namespace call: unknown namespace");
    for forged in ["repository", "nested", "a", "missing", "", "list\u{1f}x", "__proto__", "constructor"] {
        assert_eq!(
            table.resolve("github-issues", forged).unwrap_err(),
            "Issues: no callable at this path",
            "{forged:?}"
        );
    }
}

#[test]
fn unsafe_path_segments_are_rejected() {
    for key in ["__proto__", "constructor", "prototype", "", "a\u{1f}b"] {
        let key = key.to_owned();
        let reg = registration("Issues", move || {
            ScopeValue::object([(
                "ok",
                ScopeValue::object([(key.clone(), namespace_tool("github_list_issues"))]),
            )])
        });
        let err = serialize_namespace(&reg, &(reg.create_scope)(&Default::default())).unwrap_err();
        assert!(matches!(&err, BridgeError::UnsafeSegment { path, .. } if path == "ok"), "{err}");
    }
    let reg = registration("Issues", || {
        ScopeValue::object([("x", ScopeValue::Data(json!(1))), ("x", ScopeValue::Data(json!(2)))])
    });
    assert!(matches!(
        serialize_namespace(&reg, &(reg.create_scope)(&Default::default())),
        Err(BridgeError::DuplicateKey { .. })
    ));
}

#[test]
fn invalid_global_names_are_rejected() {
    for name in [
        "tools",
        "namespaces",
        "text",
        "json",
        "yield_control",
        "MCP",
        "API",
        "ALL_TOOLS",
        "__codemode_x",
        "__openclawIssues",
        "globalThis",
        "1abc",
        "delete",
        "has-dash",
        "",
        "Éclair",
    ] {
        let reg = registration(name, issues_scope);
        let err = serialize_namespace(&reg, &(reg.create_scope)(&Default::default())).unwrap_err();
        assert!(matches!(err, BridgeError::InvalidGlobalName { .. }), "{name}: {err}");
    }
}

#[test]
fn callable_paths_cannot_target_undeclared_tools() {
    let reg = registration("Issues", || ScopeValue::object([("drop", namespace_tool("github_delete_repo"))]));
    let err = serialize_namespace(&reg, &(reg.create_scope)(&Default::default())).unwrap_err();
    assert_eq!(
        err,
        BridgeError::UndeclaredTool {
            id: "github-issues".into(),
            path: "drop".into(),
            tool: "github_delete_repo".into()
        }
    );
}

#[test]
fn the_scope_must_be_a_bounded_object() {
    for scope in
        [ScopeValue::Data(json!([1])), namespace_tool("github_list_issues"), ScopeValue::Array(vec![])]
    {
        let reg = registration("Issues", move || scope.clone());
        assert!(matches!(
            serialize_namespace(&reg, &(reg.create_scope)(&Default::default())),
            Err(BridgeError::ScopeNotObject { .. })
        ));
    }
    let nest = |levels: usize| {
        let mut v = namespace_tool("github_list_issues");
        for _ in 0..levels {
            v = ScopeValue::object([("n", v)]);
        }
        v
    };
    let ok = registration("Issues", move || nest(64));
    assert!(serialize_namespace(&ok, &(ok.create_scope)(&Default::default())).is_ok());
    let deep = registration("Issues", move || nest(65));
    assert!(matches!(
        serialize_namespace(&deep, &(deep.create_scope)(&Default::default())),
        Err(BridgeError::ScopeTooDeep { limit: 64, .. })
    ));
}

#[test]
fn namespace_ids_and_globals_are_unique_per_run() {
    let mut table = NamespaceTable::new();
    let reg = registration("Issues", issues_scope);
    table.add(&reg, &issues_scope()).unwrap();
    assert!(matches!(
        table.add(&reg, &issues_scope()),
        Err(BridgeError::DuplicateNamespace { what: "id", .. })
    ));
    let other = NamespaceRegistration::new("gh2", "Issues", "", ["github_list_issues"], |_| {
        ScopeValue::object::<String>([])
    });
    assert!(matches!(
        table.add(&other, &ScopeValue::object::<String>([])),
        Err(BridgeError::DuplicateNamespace { what: "globalName", .. })
    ));
}
