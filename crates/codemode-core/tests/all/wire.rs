//! Wire shapes: exec/wait input rules, result serialization, schemas.

use codemode_core::{
    CodeModeConfig, CodeModeErrorCode, CodeModeOutput, CodeModeResult, CodeModeTelemetry, CompletedResult,
    ExecInput, FailedResult, Language, PendingToolCall, SourceCounts, ToolCatalogEntry,
    ToolCatalogEntryWithSchema, ToolOrigin, ToolSource, ToolSpec, WaitInput, WaitReason, WaitingResult,
};
use codemode_core::{exec_input_schema, wait_input_schema};
use serde_json::{Value, json};

fn exec(value: Value) -> Result<codemode_core::ExecCell, String> {
    let config = CodeModeConfig::enabled();
    ExecInput::from_json(&value).and_then(|i| i.validate(&config)).map_err(|e| e.message)
}

#[test]
fn exec_code_defaults_to_javascript() {
    let cell = exec(json!({ "code": "return 1" })).unwrap();
    assert_eq!(cell.code, "return 1");
    assert_eq!(cell.language, Language::JavaScript);
    assert!(!cell.restart_safe);
}

#[test]
fn exec_command_is_an_alias() {
    assert_eq!(exec(json!({ "command": "return 2" })).unwrap().code, "return 2");
    assert_eq!(exec(json!({ "code": "x", "command": "x" })).unwrap().code, "x");
    assert_eq!(exec(json!({ "code": "", "command": "y" })).unwrap().code, "y");
}

#[test]
fn exec_rules_each_fail_with_a_message() {
    assert_eq!(
        exec(json!({})).unwrap_err(),
        "exec: `code` must be a non-empty string of JavaScript or TypeScript."
    );
    assert_eq!(
        exec(json!({ "code": "  \n" })).unwrap_err(),
        "exec: `code` must be a non-empty string of JavaScript or TypeScript."
    );
    assert_eq!(
        exec(json!({ "code": "a", "command": "b" })).unwrap_err(),
        "exec: `code` and `command` differ; send the program once, in `code`."
    );
    assert_eq!(exec(json!({ "code": 5 })).unwrap_err(), "exec: `code` must be a string.");
    assert_eq!(
        exec(json!({ "code": "x", "language": "python" })).unwrap_err(),
        "exec: unsupported language \"python\"; use one of: \"javascript\", \"typescript\"."
    );
    assert_eq!(
        exec(json!({ "code": "x", "timeout": 5 })).unwrap_err(),
        "exec: unknown argument `timeout`; allowed: `code`, `command`, `language`, `restartSafe`."
    );
    assert_eq!(exec(json!("return 1")).unwrap_err(), "exec: arguments must be a JSON object.");
    assert_eq!(
        exec(json!({ "code": "x", "restartSafe": "yes" })).unwrap_err(),
        "exec: `restartSafe` must be a boolean."
    );
}

#[test]
fn exec_disabled_language_is_rejected() {
    let config = CodeModeConfig::from_json(&json!({ "enabled": true, "languages": ["javascript"] })).unwrap();
    let err = ExecInput::code("let x: number = 1").with_language(Language::TypeScript).validate(&config);
    assert_eq!(
        err.unwrap_err().message,
        "exec: language \"typescript\" is disabled here; use one of: \"javascript\"."
    );
}

#[test]
fn exec_restart_safe_flag() {
    assert!(exec(json!({ "code": "1", "restartSafe": true })).unwrap().restart_safe);
}

#[test]
fn wait_input_rules() {
    assert_eq!(WaitInput::from_json(&json!({ "runId": "r1" })).unwrap().run_id, "r1");
    for bad in [json!({}), json!({ "runId": "" }), json!({ "runId": 4 }), json!(null)] {
        assert!(WaitInput::from_json(&bad).is_err(), "{bad}");
    }
    assert!(
        WaitInput::from_json(&json!({ "runId": "r", "x": 1 }))
            .unwrap_err()
            .message
            .contains("unknown argument `x`")
    );
}

fn telemetry() -> CodeModeTelemetry {
    CodeModeTelemetry::new(3, SourceCounts::new(1, 1, 1), vec!["exec".into(), "wait".into()])
        .with_counts(1, 0, 2)
}

#[test]
fn results_serialize_to_the_spec_shapes() {
    let completed = CodeModeResult::Completed(CompletedResult::new(
        json!([1]),
        vec![CodeModeOutput::Text { text: "hi".into() }, CodeModeOutput::Json { value: json!({"a": 1}) }],
        telemetry(),
    ));
    assert_eq!(
        completed.to_json(),
        json!({
            "status": "completed",
            "value": [1],
            "output": [{ "type": "text", "text": "hi" }, { "type": "json", "value": { "a": 1 } }],
            "telemetry": {
                "catalogSize": 3,
                "catalogBySource": { "openclaw": 1, "mcp": 1, "client": 1 },
                "searchCount": 1, "describeCount": 0, "callCount": 2,
                "modelVisibleTools": ["exec", "wait"]
            }
        })
    );
    let suspended = WaitingResult::new(
        "run_1",
        WaitReason::PendingTools,
        vec![PendingToolCall::new("c1", "openclaw:core:slow", Some(json!({})))],
        telemetry(),
    );
    let waiting = CodeModeResult::Waiting(suspended.clone());
    let w = waiting.to_json();
    assert_eq!(w["status"], "waiting");
    assert_eq!(w["runId"], "run_1");
    assert_eq!(w["reason"], "pending_tools");
    assert_eq!(
        w["pendingToolCalls"][0],
        json!({ "callId": "c1", "toolId": "openclaw:core:slow", "input": {} })
    );
    assert!(w.get("output").is_none() && w.get("replaySafe").is_none());
    let w = CodeModeResult::Waiting(
        suspended.with_output(vec![CodeModeOutput::Text { text: "so far".into() }]).replay_safe(true),
    )
    .to_json();
    assert_eq!((w["output"][0]["text"].clone(), w["replaySafe"].clone()), (json!("so far"), json!(true)));
    let failed = CodeModeResult::Failed(FailedResult::new(
        "boom",
        Some(CodeModeErrorCode::OutputLimitExceeded),
        vec![],
        telemetry(),
    ));
    assert_eq!(failed.to_json()["code"], "output_limit_exceeded");
    // Round trip.
    for r in [completed, waiting, failed] {
        let back: CodeModeResult = serde_json::from_value(r.to_json()).unwrap();
        assert_eq!(back, r);
    }
}

#[test]
fn error_codes_have_spec_names() {
    let names: Vec<Value> = [
        CodeModeErrorCode::InvalidInput,
        CodeModeErrorCode::RuntimeUnavailable,
        CodeModeErrorCode::Timeout,
        CodeModeErrorCode::OutputLimitExceeded,
        CodeModeErrorCode::SnapshotLimitExceeded,
        CodeModeErrorCode::InternalError,
        CodeModeErrorCode::Aborted,
    ]
    .iter()
    .map(|c| {
        assert_eq!(serde_json::to_value(c).unwrap(), json!(c.as_str()));
        json!(c.as_str())
    })
    .collect();
    assert_eq!(
        names,
        json!([
            "invalid_input",
            "runtime_unavailable",
            "timeout",
            "output_limit_exceeded",
            "snapshot_limit_exceeded",
            "internal_error",
            "aborted"
        ])
        .as_array()
        .unwrap()
        .clone()
    );
}

fn contains_key(value: &Value, key: &str) -> bool {
    match value {
        Value::Object(map) => map.iter().any(|(k, v)| k == key || contains_key(v, key)),
        Value::Array(items) => items.iter().any(|v| contains_key(v, key)),
        _ => false,
    }
}

#[test]
fn exec_schema_has_a_flat_language_enum_and_no_unions() {
    let schema = exec_input_schema(&Language::ALL);
    for key in ["oneOf", "anyOf", "allOf", "$ref", "$defs"] {
        assert!(!contains_key(&schema, key), "{key} in {schema:#}");
    }
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["properties"]["language"]["type"], "string");
    assert_eq!(schema["properties"]["language"]["enum"], json!(["javascript", "typescript"]));
    assert_eq!(schema["properties"]["code"]["type"], "string");
    assert_eq!(schema["properties"]["restartSafe"]["type"], "boolean");
    assert_eq!(schema["additionalProperties"], false);
    assert_eq!(schema["required"], json!(["code"]));
    let only_js = exec_input_schema(&[Language::JavaScript]);
    assert_eq!(only_js["properties"]["language"]["enum"], json!(["javascript"]));
    let wait = wait_input_schema();
    for key in ["oneOf", "anyOf", "allOf", "$ref"] {
        assert!(!contains_key(&wait, key));
    }
    assert_eq!(wait["properties"]["runId"]["type"], "string");
    assert_eq!(wait["required"], json!(["runId"]));
}

/// Model-visible schema text is written for the model: the documented properties only (`code`,
/// not the `command` alias), a description on each, and nothing about how the schema was made.
#[test]
fn schemas_show_only_documented_properties_with_model_facing_text() {
    let exec = exec_input_schema(&Language::ALL);
    let wait = wait_input_schema();
    let exec_props: Vec<&str> = exec["properties"].as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(exec_props, ["code", "language", "restartSafe"], "no `command` alias in the schema");
    let wait_props: Vec<&str> = wait["properties"].as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(wait_props, ["runId"]);
    for schema in [&exec, &wait] {
        for (name, prop) in schema["properties"].as_object().unwrap() {
            let text = prop["description"].as_str().unwrap_or_default();
            assert!(text.len() > 10, "{name} has no description: {prop}");
        }
        let text = schema.to_string().to_lowercase();
        for word in ["schemars", "derived", "json schema of", "$schema", "title", "narrowed", "alias", "hook"]
        {
            assert!(!text.contains(word), "{word:?} in model-visible schema {schema}");
        }
        for key in ["description", "$schema", "title", "definitions", "$defs"] {
            assert!(schema.get(key).is_none(), "top-level {key} in {schema}");
        }
    }
    assert!(exec["properties"]["code"]["description"].as_str().unwrap().contains("async function"));
    assert!(wait["properties"]["runId"]["description"].as_str().unwrap().contains("waiting"));
    // The alias still parses (hook policies and trusted rewrites send it).
    let input = ExecInput::from_json(&json!({ "command": "return 1" })).unwrap();
    assert_eq!(input.command.as_deref(), Some("return 1"));
}

#[test]
fn tool_spec_ids_and_entries() {
    assert_eq!(ToolSpec::core("message").catalog_id(), "openclaw:core:message");
    assert_eq!(
        ToolSpec::new("browser_request", ToolOrigin::BundledPlugin, "browser").catalog_id(),
        "openclaw:browser:browser_request"
    );
    assert_eq!(
        ToolSpec::new("create_issue", ToolOrigin::Mcp, "github").catalog_id(),
        "mcp:github:create_issue"
    );
    assert_eq!(
        ToolSpec::new("select_file", ToolOrigin::Client, "app").catalog_id(),
        "client:app:select_file"
    );
    assert!(ToolOrigin::ExternalPlugin.is_trusted() && !ToolOrigin::Mcp.is_trusted());
    // An embedder may name the host source; only core and plugin ids change.
    assert_eq!(ToolSpec::core("message").catalog_id_in("host"), "host:core:message");
    assert_eq!(
        ToolSpec::new("browser_request", ToolOrigin::BundledPlugin, "browser").catalog_id_in("host"),
        "host:browser:browser_request"
    );
    assert_eq!(
        ToolSpec::new("create_issue", ToolOrigin::Mcp, "github").catalog_id_in("host"),
        "mcp:github:create_issue"
    );
    assert_eq!(ToolSpec::new("pick", ToolOrigin::Client, "app").catalog_id_in("host"), "client:app:pick");
    assert_eq!(
        ToolSpec::core("m").catalog_id_in(codemode_core::DEFAULT_HOST_SOURCE),
        ToolSpec::core("m").catalog_id()
    );
    let entry = ToolCatalogEntry::new(
        "openclaw:core:message",
        "message",
        "Send",
        ToolSource::Openclaw,
        "{ to: string }",
    );
    assert_eq!(
        serde_json::to_value(&entry).unwrap(),
        json!({ "id": "openclaw:core:message", "name": "message", "description": "Send", "source": "openclaw", "input": "{ to: string }" })
    );
    let labelled = entry
        .clone()
        .with_label(Some("Message".into()))
        .with_source_name(Some("chat".into()))
        .with_output(Some("{ ok: boolean }".into()));
    let v = serde_json::to_value(&labelled).unwrap();
    assert_eq!(
        (&v["label"], &v["sourceName"], &v["output"]),
        (&json!("Message"), &json!("chat"), &json!("{ ok: boolean }"))
    );
    let with_schema = ToolCatalogEntryWithSchema::new(entry, json!({"type": "object"}), None);
    let v = serde_json::to_value(&with_schema).unwrap();
    assert_eq!(v["parameters"], json!({"type": "object"}));
    assert_eq!(v["id"], "openclaw:core:message");
}

#[test]
fn tool_spec_round_trips_through_json() {
    let spec = ToolSpec::core("shipping_list")
        .description("List shipments.")
        .output_schema(json!({ "type": "array" }))
        .direct_only();
    let v = serde_json::to_value(&spec).unwrap();
    assert_eq!(v["origin"], "core");
    assert_eq!(v["directOnly"], true);
    let back: ToolSpec = serde_json::from_value(v).unwrap();
    assert_eq!(back, spec);
}

#[test]
fn host_source_names_are_short_lowercase_and_never_another_source() {
    use codemode_core::is_valid_host_source as valid;
    for ok in ["openclaw", "host", "my-agent", "a", "agent_2", &"a".repeat(32)] {
        assert!(valid(ok), "{ok}");
    }
    for bad in ["", "mcp", "client", "Host", "2host", "-x", "ho:st", "ho st", "höst", &"a".repeat(33)] {
        assert!(!valid(bad), "{bad:?}");
    }
}

#[test]
fn annotation_setters_serialize_as_mcp_hints() {
    let a = codemode_core::ToolAnnotations::default()
        .with_read_only_hint(true)
        .with_destructive_hint(false)
        .with_idempotent_hint(true)
        .with_open_world_hint(false);
    assert!(a.is_read_only());
    assert_eq!(
        serde_json::to_value(a).unwrap(),
        json!({ "readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false })
    );
    assert_eq!(serde_json::to_value(codemode_core::ToolAnnotations::default()).unwrap(), json!({}));
}
