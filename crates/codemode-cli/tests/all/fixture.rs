//! The fixture catalog format: loader errors, the demo catalog, and the published JSON Schema.

use std::path::Path;

use codemode_cli::CliError;
use codemode_cli::fixture::{Behavior, FixtureCatalog, FixtureMcpServer};
use serde_json::{Value, json};

fn load(value: Value) -> Result<FixtureCatalog, CliError> {
    FixtureCatalog::from_str_in(&value.to_string(), "cat.json", Path::new("/base"))
}

fn error_path(value: Value) -> String {
    match load(value) {
        Err(CliError::Invalid { file, path, .. }) => {
            assert_eq!(file, "cat.json");
            path
        }
        other => panic!("expected an Invalid error, got {other:?}"),
    }
}

#[test]
fn every_behavior_kind_loads() {
    let catalog = load(json!({
        "tools": [
            { "name": "a", "behavior": { "kind": "static", "details": { "x": 1 }, "content": [] } },
            { "name": "b", "behavior": "echo" },
            { "name": "c", "behavior": { "kind": "error", "message": "no", "code": "nope" } },
            { "name": "d", "behavior": { "kind": "delay", "ms": 5 } },
            { "name": "e", "behavior": "manual" },
            { "name": "f", "behavior": { "kind": "sequence", "steps": ["echo", { "kind": "manual" }] } },
            { "name": "g" }
        ]
    }))
    .unwrap();
    let behaviors: Vec<&Behavior> = catalog.tools.iter().map(|t| &t.behavior).collect();
    assert!(matches!(behaviors[0], Behavior::Static { .. }));
    assert_eq!(behaviors[1], &Behavior::Echo);
    assert!(matches!(behaviors[2], Behavior::Error { code: Some(_), .. }));
    assert_eq!(behaviors[3], &Behavior::Delay { ms: 5, details: None });
    assert_eq!(behaviors[4], &Behavior::Manual);
    assert_eq!(behaviors[5], &Behavior::Sequence(vec![Behavior::Echo, Behavior::Manual]));
    assert_eq!(behaviors[6], &Behavior::Unscripted, "no behavior: calls fail, they never fake success");
}

#[test]
fn mcp_error_results_are_scriptable_on_mcp_tools_only() {
    let catalog = load(json!({
        "mcpServers": { "s": { "tools": [
            { "name": "bad", "behavior": { "kind": "static", "isError": true, "content": [{ "type": "text", "text": "no" }] } },
            { "name": "seq", "behavior": { "kind": "sequence", "steps": [
                { "kind": "static", "details": 1 },
                { "kind": "static", "isError": true, "details": { "why": "x" }, "content": [] }
            ] } },
            { "name": "plain" }
        ], "behavior": "echo" } }
    }))
    .unwrap();
    let FixtureMcpServer::Inline(inline) = &catalog.mcp_servers[0] else { panic!() };
    assert!(matches!(
        &inline.behaviors["bad"],
        Behavior::Static { is_error: true, details: Value::Null, .. }
    ));
    assert_eq!(inline.behaviors["plain"], Behavior::Echo, "the server's behavior is the default");
    assert_eq!(
        error_path(
            json!({ "tools": [{ "name": "a", "behavior": { "kind": "static", "isError": true, "details": 1 } }] })
        ),
        "$.tools[0].behavior.isError"
    );
    assert_eq!(
        error_path(
            json!({ "mcpServers": { "s": { "tools": [{ "name": "a", "behavior": { "kind": "static", "isError": true } }] } } })
        ),
        "$.mcpServers.s.tools[0].behavior.content"
    );
    assert_eq!(
        error_path(
            json!({ "mcpServers": { "s": { "tools": [{ "name": "a", "behavior": { "kind": "static", "isError": "yes", "details": 1 } }] } } })
        ),
        "$.mcpServers.s.tools[0].behavior.isError"
    );
}

#[test]
fn namespace_markers_take_one_argument_mapping() {
    let ns = |marker: Value| json!({ "namespaces": [{ "id": "n", "globalName": "N", "plugin": "p", "scope": { "f": marker } }] });
    for ok in [
        json!({ "$tool": "t" }),
        json!({ "$tool": "t", "arg": "id" }),
        json!({ "$tool": "t", "args": ["number", "patch"] }),
        json!({ "$tool": "t", "args": "all" }),
    ] {
        load(ns(ok.clone())).unwrap_or_else(|e| panic!("{ok}: {e}"));
    }
    assert_eq!(
        error_path(ns(json!({ "$tool": "t", "arg": "a", "args": ["b"] }))),
        "$.namespaces[0].scope.f.args"
    );
    assert_eq!(error_path(ns(json!({ "$tool": "t", "args": "some" }))), "$.namespaces[0].scope.f.args");
    assert_eq!(error_path(ns(json!({ "$tool": "t", "args": [] }))), "$.namespaces[0].scope.f.args");
    assert_eq!(
        error_path(ns(json!({ "$tool": "t", "args": ["a", "a"] }))),
        "$.namespaces[0].scope.f.args[1]"
    );
    assert_eq!(error_path(ns(json!({ "$tool": "t", "args": ["a", 1] }))), "$.namespaces[0].scope.f.args[1]");
    assert_eq!(error_path(ns(json!({ "$tool": "t", "argz": 1 }))), "$.namespaces[0].scope.f.argz");
}

#[test]
fn validation_errors_name_the_path_and_the_fix() {
    assert_eq!(error_path(json!({ "tools": {} })), "$.tools");
    assert_eq!(error_path(json!({ "tools": [{ "name": "a", "origin": "mcp" }] })), "$.tools[0].origin");
    assert_eq!(
        error_path(json!({ "tools": [{ "name": "a", "origin": "bundledPlugin" }] })),
        "$.tools[0].owner"
    );
    assert_eq!(
        error_path(json!({ "tools": [{ "name": "a", "behavior": "static" }] })),
        "$.tools[0].behavior"
    );
    assert_eq!(
        error_path(json!({ "tools": [{ "name": "a", "behavior": { "kind": "delay", "ms": -1 } }] })),
        "$.tools[0].behavior.ms"
    );
    assert_eq!(
        error_path(json!({ "tools": [{ "name": "a", "parameters": "object" }] })),
        "$.tools[0].parameters"
    );
    assert_eq!(
        error_path(json!({ "tools": [{ "name": "a", "behavior": { "kind": "sequence", "steps": [] } }] })),
        "$.tools[0].behavior.steps"
    );
    assert_eq!(error_path(json!({ "mcpServers": { "s": { "command": 1 } } })), "$.mcpServers.s.command");
    assert_eq!(
        error_path(json!({ "mcpServers": { "s": { "command": "x", "env": { "K": 1 } } } })),
        "$.mcpServers.s.env.K"
    );
    assert_eq!(error_path(json!({ "mcpServers": { "s": {} } })), "$.mcpServers.s.tools");
    assert_eq!(error_path(json!({ "mcpServers": { "a:b": { "tools": [] } } })), "$.mcpServers[\"a:b\"]");
    assert_eq!(
        error_path(json!({ "namespaces": [{ "id": "n", "globalName": "N" }] })),
        "$.namespaces[0].plugin"
    );
    assert_eq!(error_path(json!({ "deny": [1] })), "$.deny[0]");
    let message = match load(json!({ "tools": [{ "name": "a", "behavior": { "kind": "sleep" } }] })) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("must fail"),
    };
    assert_eq!(
        message,
        "cat.json: $.tools[0].behavior.kind: unknown behavior \"sleep\"; allowed values are static, echo, error, delay, manual, sequence"
    );
    match load(Value::Null).map(|_| ()) {
        Err(CliError::Invalid { path, .. }) => assert_eq!(path, "$"),
        other => panic!("{other:?}"),
    }
    match FixtureCatalog::from_str_in("{", "cat.json", Path::new(".")) {
        Err(CliError::Invalid { path, message, .. }) => {
            assert_eq!((path.as_str(), message.starts_with("not valid JSON")), ("$", true))
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_mistyped_key_gets_the_closest_allowed_one() {
    // The one validation style of every file the project reads (config, fixture, gateway).
    let message = load(json!({ "tool": [] })).unwrap_err().to_string();
    assert!(message.contains("$.tool: unknown key; did you mean `tools`? allowed keys are "), "{message}");
    let message = load(json!({ "zzzzzzzz": [] })).unwrap_err().to_string();
    assert!(message.contains("unknown key; allowed keys are "), "no hint when nothing is close: {message}");
}

#[test]
fn command_servers_resolve_cwd_against_the_file() {
    let catalog = load(json!({
        "mcpServers": { "fs": { "command": "npx", "args": ["-y", "srv"], "env": { "A": "1" }, "cwd": "work" } }
    }))
    .unwrap();
    let servers = catalog.upstream_servers();
    assert_eq!(servers[0].0, "fs");
    assert_eq!(servers[0].1.cwd.as_deref(), Some(Path::new("/base/work")));
    assert!(matches!(catalog.mcp_servers[0], FixtureMcpServer::Command { .. }));
    assert!(catalog.effective_tools().is_empty());
}

#[test]
fn the_demo_and_test_catalogs_load() {
    let demo = codemode_cli::demo::demo_catalog().unwrap();
    assert_eq!(demo.namespaces.len(), 1);
    let servers: Vec<(String, usize)> =
        demo.inline_mcp_servers().iter().map(|s| (s.name.clone(), s.tools.len())).collect();
    assert_eq!(servers, [("weather".to_owned(), 1), ("github".to_owned(), 26)]);
    FixtureCatalog::load(&crate::fixture_path("session.json")).unwrap();
}

/// The published schema lists exactly the fields and behavior kinds the loader accepts.
#[test]
fn the_json_schema_matches_the_loader() {
    let path = std::path::PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"))
        .join("../../docs/fixture-catalog.schema.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let root: Vec<&str> = schema["properties"].as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(root, ["$schema", "tools", "mcpServers", "namespaces", "deny"]);
    let kinds: Vec<String> = schema["$defs"]["behavior"]["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b| b.pointer("/properties/kind/const").and_then(Value::as_str).map(str::to_owned))
        .collect();
    assert_eq!(kinds, ["static", "echo", "error", "delay", "manual", "sequence"]);
    let tool: Vec<&str> =
        schema["$defs"]["tool"]["properties"].as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        tool,
        [
            "name",
            "label",
            "description",
            "parameters",
            "outputSchema",
            "origin",
            "owner",
            "directOnly",
            "annotations",
            "behavior",
            "denied"
        ]
    );
}

/// The shared validation style (`codemode_core::validate`) in the fixture format: an unknown key
/// or value gets the closest allowed one, a wrong type names its path, what is allowed and what
/// was found, and a rejected range is enforced at and past its bound.
#[test]
fn fixture_errors_suggest_name_the_type_and_enforce_ranges() {
    let message = |value: Value| load(value).unwrap_err().to_string();
    assert_eq!(
        message(json!({ "tools": [{ "name": "a", "behavour": "echo" }] })),
        "cat.json: $.tools[0].behavour: unknown key; did you mean `behavior`? allowed keys are name, label, \
         description, parameters, outputSchema, origin, owner, directOnly, annotations, behavior, denied"
    );
    assert_eq!(
        message(json!({ "tools": [{ "name": "a", "behavior": { "kind": "dealy", "ms": 1 } }] })),
        "cat.json: $.tools[0].behavior.kind: unknown behavior \"dealy\"; did you mean `delay`? allowed values \
         are static, echo, error, delay, manual, sequence"
    );
    assert_eq!(
        message(json!({ "tools": [{ "name": "a", "origin": "bundledPlugins", "owner": "p" }] })),
        "cat.json: $.tools[0].origin: unknown origin \"bundledPlugins\"; did you mean `bundledPlugin`? allowed \
         values are core, bundledPlugin, externalPlugin, client"
    );
    assert_eq!(
        message(json!({ "tools": [{ "name": "a", "directOnly": "yes" }] })),
        "cat.json: $.tools[0].directOnly: expected true or false, got string \"yes\""
    );
    assert_eq!(
        message(json!({ "mcpServers": { "gh": { "tools": [{ "name": "t", "inputSchema": [] }] } } })),
        "cat.json: $.mcpServers.gh.tools[0].inputSchema: expected a JSON Schema (an object or a boolean), got array []"
    );
    let delay =
        |ms: u64| load(json!({ "tools": [{ "name": "a", "behavior": { "kind": "delay", "ms": ms } }] }));
    assert!(matches!(delay(3_600_000).unwrap().tools[0].behavior, Behavior::Delay { ms: 3_600_000, .. }));
    assert_eq!(
        delay(3_600_001).unwrap_err().to_string(),
        "cat.json: $.tools[0].behavior.ms: expected a whole number of milliseconds between 0 and 3600000, got number 3600001"
    );
}
