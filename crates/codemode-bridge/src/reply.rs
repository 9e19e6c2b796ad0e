//! Host -> guest replies: the bridge's [`Delivery`] values (resolve, reject) and how a large
//! result is bounded ([`DeliveryLimits`]), and the `tools.call` envelope.

use codemode_sandbox::Delivery;
use serde_json::Value;

/// How a host -> guest reply is bounded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeliveryLimits {
    /// Largest value delivered as is, in bytes of JSON text; a larger one is replaced by a
    /// `{ truncated: true, bytes, preview }` placeholder. Default: [`MAX_RESULT_BYTES`] (1 MiB).
    pub max_result_bytes: usize,
    /// Characters of JSON text kept in the placeholder's `preview`. Default: [`PREVIEW_CHARS`] (1,024).
    pub preview_chars: usize,
}

/// Default [`DeliveryLimits::max_result_bytes`]: 1 MiB.
pub const MAX_RESULT_BYTES: usize = 1024 * 1024;
/// Default [`DeliveryLimits::preview_chars`].
pub const PREVIEW_CHARS: usize = 1024;

impl Default for DeliveryLimits {
    fn default() -> Self {
        DeliveryLimits { max_result_bytes: MAX_RESULT_BYTES, preview_chars: PREVIEW_CHARS }
    }
}

/// The bridge's replies, built as the sandbox's [`Delivery`] (one type for what ends a host call):
/// bring the trait into scope and write `Delivery::value(&v, &limits)`, `Delivery::reject(..)`.
pub trait DeliveryExt: Sized {
    /// Resolve with `value`, replacing a value whose JSON text exceeds `limits.max_result_bytes` by
    /// a placeholder object `{ "truncated": true, "bytes": <size of the JSON text>, "preview":
    /// <its first preview_chars characters> }`. A large result is never cut silently: the guest sees
    /// a value that says what happened and can choose a narrower call.
    fn value(value: &Value, limits: &DeliveryLimits) -> Self;

    /// Resolve with `null` (e.g. a `yield` continued by `wait`).
    fn null() -> Self;

    /// Reject with a message (shown to the guest as is: sanitize host messages first with
    /// [`crate::sanitize_error`]).
    fn reject(message: impl Into<String>, code: Option<&str>) -> Self;

    /// Reject with a host or tool failure, passed through [`crate::sanitize_error`].
    fn reject_sanitized(message: &str, code: Option<&str>) -> Self;
}

impl DeliveryExt for Delivery {
    fn value(value: &Value, limits: &DeliveryLimits) -> Delivery {
        let text = value.to_string();
        if text.len() <= limits.max_result_bytes {
            return Delivery::Resolve(text);
        }
        let preview = match text.char_indices().nth(limits.preview_chars) {
            Some((i, _)) => &text[..i],
            None => &text[..],
        };
        let placeholder = serde_json::json!({ "truncated": true, "bytes": text.len(), "preview": preview });
        Delivery::Resolve(placeholder.to_string())
    }

    fn null() -> Delivery {
        Delivery::Resolve("null".into())
    }

    fn reject(message: impl Into<String>, code: Option<&str>) -> Delivery {
        Delivery::Reject { message: message.into(), code: code.map(str::to_owned) }
    }

    fn reject_sanitized(message: &str, code: Option<&str>) -> Delivery {
        Delivery::reject(crate::sanitize_error(message), code)
    }
}

/// The `{ tool, result }` envelope `tools.call(...)` resolves with.
pub fn call_envelope(tool_id: &str, result: Value) -> Value {
    serde_json::json!({ "tool": tool_id, "result": result })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn oversized_results_become_a_placeholder() {
        let limits = DeliveryLimits { max_result_bytes: 20, preview_chars: 5 };
        let fits = json!("0123456789abcdef12"); // 20 bytes of JSON text
        assert_eq!(Delivery::value(&fits, &limits), Delivery::Resolve("\"0123456789abcdef12\"".into()));
        let over = json!("0123456789abcdef123");
        let Delivery::Resolve(text) = Delivery::value(&over, &limits) else { panic!() };
        let placeholder: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(placeholder, json!({ "truncated": true, "bytes": 21, "preview": "\"0123" }));
        // The preview never splits a character.
        let wide = json!("ééééééééééééééééééé");
        let Delivery::Resolve(text) = Delivery::value(&wide, &limits) else { panic!() };
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap()["preview"], "\"éééé");
    }
}
