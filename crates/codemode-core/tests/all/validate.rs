//! The shared validation helpers every JSON reader uses (`tools.codeMode`, fixture, gateway).

use codemode_core::validate::{
    Invalid, Object, child, describe, expected, index, string_array, string_map, type_name, unknown_value,
};
use serde_json::json;

#[test]
fn paths_quote_keys_that_are_not_identifiers() {
    assert_eq!(child("mcpServers", "github"), "mcpServers.github");
    assert_eq!(child("$.mcpServers", "my server"), "$.mcpServers[\"my server\"]");
    assert_eq!(child("$", "1st"), "$[\"1st\"]");
    assert_eq!(child("$", ""), "$[\"\"]");
    assert_eq!(index(&child("$", "tools"), 2), "$.tools[2]");
}

#[test]
fn found_values_are_described_by_type_and_short_text() {
    assert_eq!(type_name(&json!([])), "an array");
    assert_eq!(type_name(&json!(null)), "null");
    assert_eq!(describe(&json!("yes")), "string \"yes\"");
    assert_eq!(describe(&json!(null)), "null");
    assert_eq!(describe(&json!("x".repeat(60))), "string", "long text is left out");
    assert_eq!(expected("a string", &json!(7)), "expected a string, got number 7");
}

#[test]
fn unknown_values_suggest_the_closest_allowed_one() {
    let allowed = ["static", "echo", "error", "delay"];
    assert_eq!(
        unknown_value("behavior", "dealy", &allowed),
        "unknown behavior \"dealy\"; did you mean `delay`? allowed values are static, echo, error, delay"
    );
    assert_eq!(
        unknown_value("behavior", "zzzzzzzz", &allowed),
        "unknown behavior \"zzzzzzzz\"; allowed values are static, echo, error, delay"
    );
}

#[test]
fn object_fields_report_path_allowed_and_found() {
    let doc =
        json!({ "name": "", "on": 1, "ms": 0, "n": 11, "list": ["a", 2], "env": { "K": true }, "timout": 1 });
    let obj = Object::new(&doc, "servers.x").unwrap();
    let err = |r: Result<(), Invalid>| r.unwrap_err().to_string();
    assert_eq!(
        err(obj.only(&["name", "timeout"])),
        "servers.x.on: unknown key; allowed keys are name, timeout"
    );
    assert_eq!(
        err(obj.required_string("name").map(drop)),
        "servers.x.name: expected a non-empty string, got string \"\""
    );
    assert_eq!(
        err(obj.required_string("missing").map(drop)),
        "servers.x.missing: missing required field \"missing\""
    );
    assert_eq!(err(obj.bool("on").map(drop)), "servers.x.on: expected true or false, got number 1");
    assert_eq!(
        err(obj.positive_millis("ms").map(drop)),
        "servers.x.ms: expected a positive whole number of milliseconds, got number 0"
    );
    // A rejected range: at the bound accepted, one past it refused with the range.
    assert_eq!(obj.integer_in("n", 0, 11, "steps").unwrap(), Some(11));
    assert_eq!(
        err(obj.integer_in("n", 0, 10, "steps").map(drop)),
        "servers.x.n: expected a whole number of steps between 0 and 10, got number 11"
    );
    assert_eq!(err(obj.string_array("list").map(drop)), "servers.x.list[1]: expected a string, got number 2");
    assert_eq!(
        err(string_map(&doc["env"], &obj.child("env")).map(drop)),
        "servers.x.env.K: expected a string, got boolean true"
    );
    assert_eq!(err(string_array(&doc["on"], "p").map(drop)), "p: expected an array of strings, got number 1");
    assert_eq!(Object::new(&json!(3), "$").unwrap_err().to_string(), "$: expected an object, got number 3");
}
