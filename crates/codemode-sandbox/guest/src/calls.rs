//! Host calls from the guest's side: starting one (with a payload the prelude built, or one built
//! here from a prefix, a plain value and a suffix) and settling its promise with the host's JSON,
//! at once or when the host delivers.

use rquickjs::function::Rest;
use rquickjs::{Ctx, Exception, Function, Persistent, Promise, Value};

use crate::{PENDING, abi_names, answer, encode, host_call, plain_error, refusal_message, throw_plain};

pub(crate) fn js_host_call<'js>(ctx: Ctx<'js>, args: Rest<Value<'js>>) -> rquickjs::Result<Promise<'js>> {
    let Some(payload) = args.0.first().and_then(|v| v.as_string()) else {
        return Err(Exception::throw_type(&ctx, "__codemode_host_call expects a string payload"));
    };
    start_host_call(&ctx, payload.to_string()?.as_bytes())
}

/// `__codemode_host_call_with(prefix, value, suffix, objectPrototype)`: the host call whose
/// payload is `prefix` + the restricted JSON text of `value` + `suffix` (as `__codemode_encode`
/// would encode it), built here in one buffer; undefined (and nothing started) when the value is
/// not plain data.
pub(crate) fn js_host_call_with<'js>(ctx: Ctx<'js>, args: Rest<Value<'js>>) -> rquickjs::Result<Value<'js>> {
    let strings = (args.0.first().and_then(|v| v.as_string()), args.0.get(2).and_then(|v| v.as_string()));
    let (Some(prefix), Some(suffix), Some(value), Some(proto)) = (strings.0, strings.1, args.0.get(1), args.0.get(3))
    else {
        return Err(Exception::throw_type(&ctx, "__codemode_host_call_with expects (string, value, string, object)"));
    };
    let (prefix, suffix) = (prefix.to_string()?, suffix.to_string()?);
    let mut payload = Vec::with_capacity(prefix.len() + suffix.len() + 64);
    payload.extend_from_slice(prefix.as_bytes());
    if !encode::encode_into(&ctx, value, proto, &mut payload) {
        return Ok(Value::new_undefined(ctx));
    }
    payload.extend_from_slice(suffix.as_bytes());
    Ok(start_host_call(&ctx, &payload)?.into_value())
}

/// Starts the host call of `payload` (UTF-8): its promise, settled at once when the host answers
/// it at once, else when the host delivers.
fn start_host_call<'js>(ctx: &Ctx<'js>, payload: &[u8]) -> rquickjs::Result<Promise<'js>> {
    let ctx = ctx.clone();
    // The promise exists before the host records the call, so every recorded id can settle.
    let (promise, resolve, reject) = Promise::new(&ctx)?;
    let r = unsafe { host_call(payload.as_ptr(), payload.len()) }; // SAFETY: the host only reads `len` bytes.
    if r < 0 {
        let msg = refusal_message((-(r + 1)) as usize);
        return Err(throw_plain(&ctx, &msg));
    }
    if r >= abi_names::ANSWERED_AT_ONCE {
        // Room for the NUL the parser's C string gets, so handing the bytes over copies nothing.
        let len = (r - abi_names::ANSWERED_AT_ONCE) as usize;
        let mut text = Vec::with_capacity(len + 1);
        text.resize(len, 0u8);
        unsafe { answer(text.as_mut_ptr(), len) }; // SAFETY: the host writes at most `len` bytes.
        resolve_with_json(&ctx, &resolve, &reject, text);
        return Ok(promise);
    }
    PENDING.with(|p| {
        p.borrow_mut().insert(r as u32, (Persistent::save(&ctx, resolve), Persistent::save(&ctx, reject)))
    });
    Ok(promise)
}

/// Resolves a host call's promise with the value of the JSON `text`; text the engine cannot parse
/// rejects it instead (so the program cannot hang on it). Returns 0, -2 for invalid JSON, -3 for
/// an engine failure.
pub(crate) fn resolve_with_json<'js>(
    ctx: &Ctx<'js>,
    resolve: &Function<'js>,
    reject: &Function<'js>,
    text: impl Into<Vec<u8>>,
) -> i32 {
    let v = match ctx.json_parse(text) {
        Ok(v) => v,
        Err(_) => {
            let _ = ctx.catch();
            if let Ok(e) = plain_error(ctx, "host delivered invalid JSON", Some("internal_error")) {
                let _ = reject.call::<_, ()>((e,));
            }
            return -2;
        }
    };
    match resolve.call::<_, ()>((v,)) {
        Ok(()) => 0,
        Err(_) => {
            let _ = ctx.catch();
            -3
        }
    }
}
