//! What a host does with the requests the guest prelude sends: decode them strictly, answer with a
//! bounded reply, and turn host failures into plain, sanitized guest errors.
//!
//! ```sh
//! cargo run -p codemode-bridge --example protocol
//! ```
use codemode_bridge::{DeliveryExt, DeliveryLimits, decode_request};
use codemode_sandbox::Delivery;
use serde_json::json;

fn main() {
    let payloads = [
        r#"{"v":1,"op":"search","query":"send a message","limit":3}"#.to_owned(),
        r#"{"v":1,"op":"callValue","id":"openclaw:core:message","input":{"to":"ops","text":"hi"}}"#
            .to_owned(),
        r#"{"v":99,"op":"search","query":"x"}"#.to_owned(),
        format!(r#"{{"v":1,"op":"search","query":"{}"}}"#, "[".repeat(10)),
        format!(r#"{{"v":1,"op":"callValue","id":"x","input":{}{}}}"#, "[".repeat(500), "]".repeat(500)),
    ];
    for payload in &payloads {
        let shown: String = payload.chars().take(72).collect();
        match decode_request(payload) {
            Ok(request) => println!("ok     {shown}\n       -> {request:?}"),
            Err(error) => {
                let fatal = if error.is_fatal() { "fatal (ends the run)" } else { "delivered to the guest" };
                println!("error  {shown}\n       -> {fatal}: {:?}", error.reply());
            }
        }
    }

    // A large tool result is replaced by a placeholder that says so, never cut silently.
    let big = json!({ "rows": vec!["x".repeat(100); 20_000] });
    match Delivery::value(&big, &DeliveryLimits::default()) {
        Delivery::Resolve(text) => {
            println!("\nlarge result delivered as {} bytes: {}...", text.len(), &text[..60])
        }
        other => println!("\nunexpected: {other:?}"),
    }
    // A host failure with a path and a token in it.
    let reply =
        Delivery::reject_sanitized("open /home/alice/.ssh/id_rsa failed; token=ghp_abc123", Some("io"));
    println!("sanitized host error: {reply:?}");
}
