//! Fuzz checks: thin `fuzz/fuzz_targets/*.rs` glue calls these; each panics only on a real bug.

use serde_json::Value;

use crate::hint::{self, HintOptions, MIN_HINT_CHARS, RenderOptions};
use crate::ident;

/// Arbitrary bytes -> if they are JSON, every hint of them (as a schema, and of each of its direct
/// sub-schemas against it as root) never panics, never exceeds its budget, is deterministic, and
/// an output hint is exactly the complete rendering.
pub fn check_schema_hint(data: &[u8]) {
    let Ok(schema) = serde_json::from_slice::<Value>(data) else { return };
    check_schema_value(&schema);
}

/// [`check_schema_hint`] on an already parsed value.
pub fn check_schema_value(schema: &Value) {
    for max_chars in [0, MIN_HINT_CHARS, 40, hint::INPUT_HINT_MAX_CHARS] {
        let options = HintOptions::input().with_max_chars(max_chars);
        let budget = max_chars.max(MIN_HINT_CHARS);
        let input = hint::input_hint(schema, &options);
        assert!(input.chars().count() <= budget, "input hint over budget {budget}: {input}");
        assert!(!input.is_empty());
        assert_eq!(input, hint::input_hint(schema, &options), "input hint not deterministic");
        if let Some(output) = hint::output_hint(schema, &options) {
            assert!(output.chars().count() <= budget, "output hint over budget {budget}: {output}");
            let rendered =
                hint::render_type(schema, schema, &RenderOptions::default().with_max_chars(max_chars));
            assert!(rendered.complete, "output hint for an incomplete rendering: {output}");
            assert_eq!(rendered.text, output);
            assert_eq!(input, output, "a complete type must not be shortened as input");
        }
    }
    let options = RenderOptions::default().with_max_chars(120).with_max_depth(3);
    if let Value::Object(map) = schema {
        for sub in map.values() {
            let rendered = hint::render_type(sub, schema, &options);
            assert!(rendered.text.chars().count() <= 120);
            assert!(!(rendered.complete && rendered.degraded));
        }
    }
}

/// Arbitrary bytes -> if UTF-8, both normalizers yield identifiers, are idempotent, and
/// [`ident::is_identifier`] agrees with its parts.
pub fn check_identifier(data: &[u8]) {
    let Ok(name) = std::str::from_utf8(data) else { return };
    let snake = ident::to_snake_identifier(name);
    let camel = ident::to_camel_identifier(name);
    assert!(ident::is_identifier(&snake), "snake {name:?} -> {snake:?}");
    assert!(ident::is_identifier(&camel), "camel {name:?} -> {camel:?}");
    assert_eq!(ident::to_snake_identifier(&snake), snake, "snake not idempotent");
    assert_eq!(ident::to_camel_identifier(&camel), camel, "camel not idempotent");
    assert_eq!(ident::is_identifier(name), ident::is_identifier_name(name) && !ident::is_reserved_word(name));
    if ident::is_identifier(name) {
        assert_eq!(snake, name, "snake changed an identifier");
    }
}
