//! Fuzz checks: thin `fuzz/fuzz_targets/*.rs` glue calls these; each panics only on a real bug.

use crate::json::{DecodeLimits, nesting_depth, value_depth};
use crate::protocol::{MAX_ARGUMENT_BYTES, MAX_REQUEST_DEPTH, decode_request_with};

/// Arbitrary bytes through the host-side request decoder: it never panics; bytes over the 8 MiB
/// budget are refused before parsing; an accepted request nests at most [`MAX_REQUEST_DEPTH`] levels;
/// and an accepted request re-encodes to a payload that decodes to the same request (numbers compared
/// to within 2 ULP: serde_json's default float parser is not always correctly rounded).
pub fn check_decode(data: &[u8]) {
    let limits = DecodeLimits { max_bytes: MAX_ARGUMENT_BYTES as usize, max_depth: MAX_REQUEST_DEPTH };
    check_decode_with(data, &limits);
    // Small limits exercise the refusal paths on small inputs too.
    check_decode_with(data, &DecodeLimits { max_bytes: 64, max_depth: 3 });
}

fn check_decode_with(data: &[u8], limits: &DecodeLimits) {
    let result = decode_request_with(data, limits);
    let Ok(request) = result else { return };
    assert!(data.len() <= limits.max_bytes, "accepted {} bytes over the limit", data.len());
    assert!(nesting_depth(data) <= limits.max_depth, "accepted a payload nested too deep");
    let payload = request.to_payload();
    let again = decode_request_with(
        payload.as_bytes(),
        &DecodeLimits { max_bytes: usize::MAX, max_depth: limits.max_depth.max(MAX_REQUEST_DEPTH) },
    )
    .unwrap_or_else(|e| panic!("re-encoded request does not decode: {e}: {payload}"));
    let (a, b) = (parse(&request.to_payload()), parse(&again.to_payload()));
    assert!(same_json(&a, &b), "round trip changed the request: {a} vs {b}");
    let value: serde_json::Value = serde_json::from_str(&payload).expect("payload is JSON");
    assert!(value_depth(&value) <= limits.max_depth.max(MAX_REQUEST_DEPTH));
}

fn parse(payload: &str) -> serde_json::Value {
    serde_json::from_str(payload).expect("payload is JSON")
}

/// Structural equality with floats equal to within 2 ULP.
fn same_json(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value;
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
            (Some(x), Some(y)) if x.is_finite() && y.is_finite() => {
                x == y || (x.to_bits() as i64).abs_diff(y.to_bits() as i64) <= 2
            }
            _ => x == y,
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_json(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|((kx, vx), (ky, vy))| kx == ky && same_json(vx, vy))
        }
        _ => a == b,
    }
}
