//! `tools.codeMode` parsing: shorthand, activation gate, every row of the table at and beyond both
//! bounds, and each error message.

use codemode_core::limits;
use codemode_core::{CodeModeConfig, Language};
use serde_json::{Value, json};

fn parse(value: Value) -> CodeModeConfig {
    CodeModeConfig::from_json(&value).unwrap_or_else(|e| panic!("{value}: {e}"))
}

fn error(value: Value) -> String {
    CodeModeConfig::from_json(&value).expect_err("expected a config error").to_string()
}

#[test]
fn shorthand_true_enables_with_defaults() {
    let config = parse(json!(true));
    assert!(config.is_enabled());
    assert_eq!(config, CodeModeConfig::default().with_enabled(true));
}

#[test]
fn shorthand_false_disables() {
    assert!(!parse(json!(false)).is_enabled());
}

#[test]
fn object_without_enabled_true_stays_disabled() {
    assert!(!parse(json!({})).is_enabled());
    assert!(!parse(json!({ "enabled": false, "timeoutMs": 5000 })).is_enabled());
    assert!(!parse(json!({ "languages": ["typescript"], "maxSearchLimit": 10 })).is_enabled());
    assert!(parse(json!({ "enabled": true })).is_enabled());
}

#[test]
fn defaults_match_the_spec_table() {
    let c = CodeModeConfig::default();
    assert!(!c.is_enabled());
    assert_eq!(c.languages(), vec![Language::JavaScript, Language::TypeScript]);
    assert_eq!(c.timeout_ms(), 10_000);
    assert_eq!(c.memory_limit_bytes(), 67_108_864);
    assert_eq!(c.max_output_bytes(), 65_536);
    assert_eq!(c.max_snapshot_bytes(), 10_485_760);
    assert_eq!(c.max_pending_tool_calls(), 16);
    assert_eq!(c.snapshot_ttl_seconds(), 900);
    assert_eq!(c.search_default_limit(), 8);
    assert_eq!(c.max_search_limit(), 50);
}

/// Every numeric row at its bounds, one below, one above, far beyond, negative, and as a float literal.
#[test]
fn every_numeric_field_is_clamped_at_both_bounds() {
    type Getter = fn(&CodeModeConfig) -> u64;
    let rows: [(&str, u64, u64, Getter); 7] = [
        ("timeoutMs", 100, 60_000, |c| c.timeout_ms()),
        ("memoryLimitBytes", 1_048_576, 1_073_741_824, |c| c.memory_limit_bytes()),
        ("maxOutputBytes", 1_024, 10_485_760, |c| c.max_output_bytes()),
        ("maxSnapshotBytes", 1_024, 268_435_456, |c| c.max_snapshot_bytes()),
        ("maxPendingToolCalls", 1, 128, |c| u64::from(c.max_pending_tool_calls())),
        ("snapshotTtlSeconds", 1, 86_400, |c| c.snapshot_ttl_seconds()),
        ("maxSearchLimit", 1, 50, |c| u64::from(c.max_search_limit())),
    ];
    for (key, min, max, get) in rows {
        let at = |v: Value| get(&parse(json!({ "enabled": true, key: v })));
        assert_eq!(at(json!(min)), min, "{key} at min");
        assert_eq!(at(json!(max)), max, "{key} at max");
        assert_eq!(at(json!(min - 1)), min, "{key} below min");
        assert_eq!(at(json!(max + 1)), max, "{key} above max");
        assert_eq!(at(json!(0)), min, "{key} zero");
        assert_eq!(at(json!(-5)), min, "{key} negative");
        assert_eq!(at(json!(u64::MAX)), max, "{key} u64::MAX");
        assert_eq!(at(json!(1e300)), max, "{key} 1e300");
        assert_eq!(at(json!(-1e300)), min, "{key} -1e300");
        assert_eq!(at(json!(max as f64)), max, "{key} as float literal");
        let e = error(json!({ key: 1.5 }));
        assert!(e.starts_with(&format!("tools.codeMode.{key}: expected an integer")), "{e}");
        let e = error(json!({ key: "10" }));
        assert!(e.contains(&format!("range {min}-{max}")), "{e}");
    }
}

#[test]
fn search_default_limit_is_clamped_to_max_search_limit() {
    let c = parse(json!({ "searchDefaultLimit": 20, "maxSearchLimit": 10 }));
    assert_eq!((c.search_default_limit(), c.max_search_limit()), (10, 10));
    let c = parse(json!({ "searchDefaultLimit": 0 }));
    assert_eq!(c.search_default_limit(), 1);
    let c = parse(json!({ "searchDefaultLimit": 50 }));
    assert_eq!(c.search_default_limit(), 50);
    let c = parse(json!({ "searchDefaultLimit": 51 }));
    assert_eq!(c.search_default_limit(), 50);
    let c = parse(json!({ "maxSearchLimit": 3 }));
    assert_eq!(c.search_default_limit(), 3, "the default 8 is clamped too");
    let c = parse(json!({ "maxSearchLimit": 0 }));
    assert_eq!((c.search_default_limit(), c.max_search_limit()), (1, 1));
}

#[test]
fn search_limit_for_guest_requests() {
    let c = parse(json!({ "searchDefaultLimit": 5, "maxSearchLimit": 20 }));
    assert_eq!(c.search_limit(None), 5);
    assert_eq!(c.search_limit(Some(3.0)), 3);
    assert_eq!(c.search_limit(Some(0.0)), 1);
    assert_eq!(c.search_limit(Some(-4.0)), 1);
    assert_eq!(c.search_limit(Some(500.0)), 20);
    assert_eq!(c.search_limit(Some(f64::INFINITY)), 20);
    assert_eq!(c.search_limit(Some(f64::NAN)), 5);
}

#[test]
fn languages_subset_dedup_and_order() {
    assert_eq!(parse(json!({ "languages": ["typescript"] })).languages(), vec![Language::TypeScript]);
    assert_eq!(parse(json!({ "languages": ["javascript"] })).languages(), vec![Language::JavaScript]);
    assert_eq!(
        parse(json!({ "languages": ["typescript", "javascript", "typescript"] })).languages(),
        vec![Language::JavaScript, Language::TypeScript]
    );
}

#[test]
fn error_messages_name_the_path_and_what_is_allowed() {
    assert_eq!(
        error(json!({ "runtime": "node" })),
        "tools.codeMode.runtime: expected \"quickjs-wasi\" (the only supported value), got string \"node\""
    );
    assert_eq!(
        error(json!({ "mode": "hybrid" })),
        "tools.codeMode.mode: expected \"only\" (the only supported value), got string \"hybrid\""
    );
    assert_eq!(
        error(json!({ "languages": ["javascript", ""] })),
        "tools.codeMode.languages[1]: unknown language \"\"; allowed values are javascript, typescript"
    );
    assert_eq!(
        error(json!({ "languages": ["python"] })),
        "tools.codeMode.languages[0]: unknown language \"python\"; allowed values are javascript, typescript"
    );
    assert!(
        error(json!({ "languages": [] })).starts_with("tools.codeMode.languages: must list at least one")
    );
    assert!(
        error(json!({ "languages": "javascript" }))
            .starts_with("tools.codeMode.languages: expected an array")
    );
    assert_eq!(
        error(json!({ "enabled": "yes" })),
        "tools.codeMode.enabled: expected true or false, got string \"yes\""
    );
    assert_eq!(error(json!("on")), "tools.codeMode: expected true, false or an object, got string \"on\"");
    assert_eq!(error(json!(null)), "tools.codeMode: expected true, false or an object, got null");
    let unknown = error(json!({ "timeout": 10 }));
    assert!(
        unknown.starts_with("tools.codeMode.timeout: unknown key; did you mean `timeoutMs`?"),
        "{unknown}"
    );
    assert!(unknown.contains("allowed keys are enabled, runtime, mode, languages"), "{unknown}");
    let unknown = error(json!({ "frobnicate": 1 }));
    assert!(unknown.starts_with("tools.codeMode.frobnicate: unknown key; allowed keys"), "{unknown}");
}

#[test]
fn accepted_literals_parse() {
    let c = parse(json!({ "enabled": true, "runtime": "quickjs-wasi", "mode": "only" }));
    assert!(c.is_enabled());
}

#[test]
fn from_json_str_reports_bad_json() {
    let e = CodeModeConfig::from_json_str("{ enabled: true }").unwrap_err().to_string();
    assert!(e.starts_with("tools.codeMode: not valid JSON"), "{e}");
    assert!(CodeModeConfig::from_json_str("true").unwrap().is_enabled());
}

#[test]
fn limits_module_matches_defaults() {
    assert_eq!(limits::TIMEOUT_MS.0, CodeModeConfig::default().timeout_ms());
    assert_eq!(limits::MAX_SEARCH_LIMIT.1.max, 50);
}

/// The setters are the parser's clamp: each gives what the JSON shape gives, at, below and past
/// both bounds, so no value outside the table can be built in code either.
#[test]
fn setters_clamp_exactly_as_the_parser() {
    type Set = fn(CodeModeConfig, u64) -> CodeModeConfig;
    let small = |n: u64| u32::try_from(n).unwrap_or(u32::MAX);
    let rows: [(&str, u64, u64, Set); 7] = [
        ("timeoutMs", 100, 60_000, |c, n| c.with_timeout_ms(n)),
        ("memoryLimitBytes", 1_048_576, 1_073_741_824, |c, n| c.with_memory_limit_bytes(n)),
        ("maxOutputBytes", 1_024, 10_485_760, |c, n| c.with_max_output_bytes(n)),
        ("maxSnapshotBytes", 1_024, 268_435_456, |c, n| c.with_max_snapshot_bytes(n)),
        ("maxPendingToolCalls", 1, 128, |c, n| {
            c.with_max_pending_tool_calls(u32::try_from(n).unwrap_or(u32::MAX))
        }),
        ("snapshotTtlSeconds", 1, 86_400, |c, n| c.with_snapshot_ttl_seconds(n)),
        ("maxSearchLimit", 1, 50, |c, n| c.with_max_search_limit(u32::try_from(n).unwrap_or(u32::MAX))),
    ];
    for (key, min, max, set) in rows {
        for n in [0, min - 1, min, min + 1, max - 1, max, max + 1, u64::from(u32::MAX), u64::MAX] {
            let parsed = parse(json!({ "enabled": true, key: n }));
            let built = set(CodeModeConfig::enabled(), n);
            assert_eq!(built, parsed, "{key} = {n}");
        }
    }
    for n in [0, 1, 8, 50, 51, u32::MAX] {
        let parsed = parse(json!({ "searchDefaultLimit": n, "maxSearchLimit": 10 }));
        let built =
            CodeModeConfig::default().with_max_search_limit(10).with_search_default_limit(small(n.into()));
        assert_eq!(built, parsed, "searchDefaultLimit = {n}");
    }
    assert_eq!(CodeModeConfig::default().with_max_search_limit(3).search_default_limit(), 3);
}

#[test]
fn languages_setter_dedups_and_refuses_an_empty_list_as_the_parser_does() {
    let c = CodeModeConfig::enabled()
        .with_languages([Language::TypeScript, Language::JavaScript, Language::TypeScript])
        .unwrap();
    assert_eq!(c.languages(), [Language::JavaScript, Language::TypeScript]);
    assert_eq!(c, parse(json!({ "enabled": true, "languages": ["typescript", "javascript"] })));
    let e = CodeModeConfig::enabled().with_languages([]).unwrap_err().to_string();
    assert_eq!(e, error(json!({ "languages": [] })));
}

/// The shared validation style (`codemode_core::validate`): an unknown key gets the closest allowed
/// one, a wrong type names its path and what is allowed, a misspelt value gets the closest allowed
/// one, and a number out of range is clamped (the spec clamps; it never rejects a whole number).
#[test]
fn one_validation_style_unknown_key_wrong_type_out_of_range() {
    assert!(
        error(json!({ "enabled": true, "maxSearchLimt": 5 }))
            .starts_with("tools.codeMode.maxSearchLimt: unknown key; did you mean `maxSearchLimit`?"),
    );
    assert_eq!(
        error(json!({ "timeoutMs": [5] })),
        "tools.codeMode.timeoutMs: expected an integer (range 100-60000, out-of-range values are clamped), got array [5]"
    );
    assert_eq!(
        error(json!({ "languages": ["javascript", "typescrpt"] })),
        "tools.codeMode.languages[1]: unknown language \"typescrpt\"; did you mean `typescript`? allowed values are javascript, typescript"
    );
    assert_eq!(
        error(json!({ "languages": [7] })),
        "tools.codeMode.languages[0]: expected \"javascript\" or \"typescript\", got number 7"
    );
    assert!(
        error(json!({ "a b": 1 })).starts_with("tools.codeMode[\"a b\"]: unknown key;"),
        "a key that is not an identifier is quoted in the path"
    );
    let c = parse(json!({ "enabled": true, "maxPendingToolCalls": 129, "timeoutMs": 99 }));
    assert_eq!((c.max_pending_tool_calls(), c.timeout_ms()), (128, 100));
}

/// A whole-number float is that integer (JSON does not tell `5000` from `5000.0`), clamped like any
/// other; a fractional one is refused.
#[test]
fn whole_number_floats_read_as_their_integer() {
    let c = parse(json!({ "enabled": true, "timeoutMs": 5000.0, "maxPendingToolCalls": 1.0e12 }));
    assert_eq!((c.timeout_ms(), c.max_pending_tool_calls()), (5_000, 128));
    assert_eq!(parse(json!({ "timeoutMs": -3.0 })).timeout_ms(), 100);
    assert!(
        error(json!({ "timeoutMs": 5000.5 })).starts_with("tools.codeMode.timeoutMs: expected an integer")
    );
}
