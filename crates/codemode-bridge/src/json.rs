//! The host side of the restricted JSON adapter: a strict, bounded decoder for guest payloads.
//!
//! The prelude already restricts values before they cross (see the crate docs); the host never trusts
//! that and re-validates every payload here:
//!
//! - the payload is at most [`DecodeLimits::max_bytes`] bytes of UTF-8 (checked before anything is
//!   parsed or allocated),
//! - containers nest at most [`DecodeLimits::max_depth`] levels (checked by a linear pre-scan before
//!   parsing, so a deep payload never reaches the recursive parser),
//! - the text is one JSON value (RFC 8259) with nothing after it; lone surrogate escapes are refused.
//!
//! Memory used by a successful decode is linear in the payload size; nothing is allocated for a
//! payload that is over the byte limit or too deep.

use serde_json::Value;

/// How deep a guest value may nest: the prelude refuses deeper values with a catchable error, and the
/// host refuses them too.
pub const MAX_VALUE_DEPTH: usize = 64;

/// Bounds for [`decode_json`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DecodeLimits {
    /// Largest accepted payload, in bytes. Default: 8 MiB ([`crate::MAX_ARGUMENT_BYTES`]).
    pub max_bytes: usize,
    /// Deepest accepted nesting of arrays and objects (a scalar has depth 0, `[]` depth 1).
    /// Default: [`MAX_VALUE_DEPTH`].
    pub max_depth: usize,
}

impl Default for DecodeLimits {
    fn default() -> Self {
        DecodeLimits { max_bytes: crate::MAX_ARGUMENT_BYTES as usize, max_depth: MAX_VALUE_DEPTH }
    }
}

/// Why a payload was refused. The messages are safe to show to the guest.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum JsonError {
    /// The payload is larger than the limit.
    #[error("value is {bytes} bytes; the Code Mode bridge accepts at most {limit} bytes")]
    TooLarge {
        /// Payload size.
        bytes: usize,
        /// The limit.
        limit: usize,
    },
    /// The payload nests deeper than the limit.
    #[error("value nests deeper than {limit} levels; the Code Mode bridge accepts at most {limit}")]
    TooDeep {
        /// The limit.
        limit: usize,
    },
    /// The payload is not UTF-8.
    #[error("value is not UTF-8 text")]
    NotUtf8,
    /// The payload is not one well-formed JSON value.
    #[error("value is not valid JSON ({0})")]
    Syntax(String),
}

/// Decodes bytes as one strict JSON value within `limits`.
pub fn decode_json_bytes(data: &[u8], limits: &DecodeLimits) -> Result<Value, JsonError> {
    if data.len() > limits.max_bytes {
        return Err(JsonError::TooLarge { bytes: data.len(), limit: limits.max_bytes });
    }
    let text = std::str::from_utf8(data).map_err(|_| JsonError::NotUtf8)?;
    decode_json(text, limits)
}

/// Decodes text as one strict JSON value within `limits`.
pub fn decode_json(text: &str, limits: &DecodeLimits) -> Result<Value, JsonError> {
    if text.len() > limits.max_bytes {
        return Err(JsonError::TooLarge { bytes: text.len(), limit: limits.max_bytes });
    }
    if nesting_depth(text.as_bytes()) > limits.max_depth {
        return Err(JsonError::TooDeep { limit: limits.max_depth });
    }
    serde_json::from_str(text).map_err(|e| JsonError::Syntax(syntax_message(&e)))
}

/// A short, position-free description of a serde_json error.
fn syntax_message(e: &serde_json::Error) -> String {
    let full = e.to_string();
    match full.find(" at line ") {
        Some(i) => full[..i].to_owned(),
        None => full,
    }
}

/// The deepest bracket nesting in `bytes`, ignoring brackets inside strings. Linear, allocation-free;
/// it only over-approximates on malformed input, which the parser rejects anyway.
pub fn nesting_depth(bytes: &[u8]) -> usize {
    let mut depth = 0usize;
    let mut max = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for &b in bytes {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                max = max.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

/// Depth of an already decoded value (a scalar is 0, `[]` is 1).
pub fn value_depth(value: &Value) -> usize {
    // Iterative so that a hostile value cannot overflow the host stack.
    let mut max = 0;
    let mut stack: Vec<(&Value, usize)> = vec![(value, 0)];
    while let Some((v, d)) = stack.pop() {
        match v {
            Value::Array(items) => {
                max = max.max(d + 1);
                stack.extend(items.iter().map(|i| (i, d + 1)));
            }
            Value::Object(members) => {
                max = max.max(d + 1);
                stack.extend(members.values().map(|i| (i, d + 1)));
            }
            _ => {}
        }
    }
    max
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested(depth: usize) -> String {
        format!("{}{}", "[".repeat(depth), "]".repeat(depth))
    }

    #[test]
    fn depth_at_and_past_the_limit() {
        let limits = DecodeLimits::default();
        assert!(decode_json(&nested(MAX_VALUE_DEPTH), &limits).is_ok());
        assert_eq!(
            decode_json(&nested(MAX_VALUE_DEPTH + 1), &limits),
            Err(JsonError::TooDeep { limit: MAX_VALUE_DEPTH })
        );
        assert_eq!(value_depth(&decode_json(&nested(MAX_VALUE_DEPTH), &limits).unwrap()), MAX_VALUE_DEPTH);
        // Brackets inside strings do not count.
        let s = format!("[\"{}\\\"{}\"]", "[".repeat(200), "{".repeat(200));
        assert!(decode_json(&s, &limits).is_ok());
    }

    #[test]
    fn bytes_at_and_past_the_limit() {
        let limits = DecodeLimits { max_bytes: 10, max_depth: 4 };
        assert!(decode_json("\"12345678\"", &limits).is_ok());
        assert_eq!(decode_json("\"123456789\"", &limits), Err(JsonError::TooLarge { bytes: 11, limit: 10 }));
        assert_eq!(decode_json_bytes(b"\"\xff\"", &limits), Err(JsonError::NotUtf8));
    }

    #[test]
    fn strict_syntax() {
        let limits = DecodeLimits::default();
        for bad in ["", "NaN", "[1,]", "{a:1}", "1 2", "\"\\ud800\"", "'x'", "[Infinity]", "undefined"] {
            assert!(matches!(decode_json(bad, &limits), Err(JsonError::Syntax(_))), "{bad}");
        }
        assert_eq!(decode_json(" {\"a\":[1,2.5,null]} ", &limits).unwrap()["a"][1], 2.5);
        let err = decode_json("[1,", &limits).unwrap_err().to_string();
        assert!(!err.contains("line"), "{err}");
    }
}
