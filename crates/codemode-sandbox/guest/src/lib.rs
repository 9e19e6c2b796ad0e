//! The QuickJS guest of `codemode-sandbox`, a `wasm32-wasip1` cdylib.
//!
//! The ABI is synchronous and documented in the host crate (`codemode-sandbox/src/lib.rs`,
//! section "Guest ABI"). Every export returns with no guest frame on the stack, so the host may
//! snapshot linear memory after any export returns.
//!
//! Private globals installed on `globalThis` (the bridge prelude captures and deletes them):
//! - `__codemode_host_call(payload: string): Promise<any>`
//! - `__codemode_host_call_with(prefix: string, value, suffix: string, objectPrototype): Promise<any>
//!   | undefined` — the host call of `prefix` + the `__codemode_encode` text of `value` + `suffix`,
//!   or undefined (no call) when the value is not plain data
//! - `__codemode_output(kind: "text" | "json", payload: string): undefined`
//! - `__codemode_set_result_encoder(encode: (value) => string): undefined` — from then on a cell's
//!   resolved value is reported as `JSON.stringify(encode(value))`, called from here when the cell's
//!   promise settles (so encoding adds no `await` and no promise lookup the cell could observe)
//! - `__codemode_encode(value, objectPrototype): string | undefined` — the restricted JSON text of
//!   plain data (see [`encode`]), or undefined when the value holds anything else; the
//!   prelude's own encoder then encodes it with every rule

use rquickjs::function::Rest;
use rquickjs::{Context, Ctx, Exception, Function, Object, Persistent, Promise, Runtime, Value, qjs};
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;

#[link(wasm_import_module = "codemode")]
unsafe extern "C" {
    /// Start a host call with a UTF-8 payload. Returns the call id (>= 0), or `-(n + 1)` when
    /// the host refused it with an `n`-byte message (fetch it with `refusal`), or
    /// `ANSWERED_AT_ONCE + n` when the host answered it at once with `n` bytes of JSON (fetch
    /// them with `answer`).
    fn host_call(ptr: *const u8, len: usize) -> i64;
    /// Copy the JSON text of the call answered at once (at most `len` bytes) to `ptr`.
    fn answer(ptr: *mut u8, len: usize);
    /// Emit output (`kind` 0 = text, 1 = json). Returns 0, or `-(n + 1)` on refusal.
    fn output(kind: i32, ptr: *const u8, len: usize) -> i32;
    /// Copy the last refusal message (at most `len` bytes) to `ptr`.
    fn refusal(ptr: *mut u8, len: usize);
}

/// The ABI's names and status codes, one file shared with the host.
#[path = "../../src/abi_names.rs"]
#[allow(dead_code)] // the host's import and export lists are not used here
mod abi_names;
use abi_names::status;

struct Engine {
    rt: Runtime,
    ctx: Context,
}

type Resolvers = (Persistent<Function<'static>>, Persistent<Function<'static>>);

thread_local! {
    static ENGINE: RefCell<Option<Engine>> = const { RefCell::new(None) };
    static PENDING: RefCell<BTreeMap<u32, Resolvers>> = const { RefCell::new(BTreeMap::new()) };
    static CURRENT: RefCell<Option<Persistent<Promise<'static>>>> = const { RefCell::new(None) };
    static ENCODER: RefCell<Option<Persistent<Function<'static>>>> = const { RefCell::new(None) };
    static STATUS: Cell<i32> = const { Cell::new(status::IDLE) };
    static RESULT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    static RNG: Cell<u64> = const { Cell::new(0x9E37_79B9_7F4A_7C15) };
}

fn set_result(code: i32, bytes: &[u8]) -> i32 {
    STATUS.with(|s| s.set(code));
    RESULT.with(|r| {
        let mut r = r.borrow_mut();
        r.clear();
        r.extend_from_slice(bytes);
    });
    code
}

/// Error record: three length-prefixed (u32 LE) UTF-8 strings: name, message, stack.
fn error_record(name: &str, message: &str, stack: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(12 + name.len() + message.len() + stack.len());
    for s in [name, message, stack] {
        out.extend_from_slice(&(s.len() as u32).to_le_bytes());
        out.extend_from_slice(s.as_bytes());
    }
    out
}

fn internal(message: &str) -> i32 {
    set_result(status::INTERNAL, message.as_bytes())
}

/// Read a property without running user code for data properties; accessors may run (bounded
/// by the host deadline). Any exception is swallowed.
fn get_string_prop<'js>(ctx: &Ctx<'js>, obj: &Object<'js>, key: &str) -> Option<String> {
    match obj.get::<_, Value<'js>>(key) {
        Ok(v) => v.as_string().and_then(|s| s.to_string().ok()),
        Err(_) => {
            let _ = ctx.catch();
            None
        }
    }
}

/// Describe a thrown value: `(name, message, stack)`. `name` is empty for non-Error values.
fn describe_thrown<'js>(ctx: &Ctx<'js>, v: Value<'js>) -> (String, String, String) {
    if v.is_error()
        && let Some(obj) = v.as_object()
    {
        let name = get_string_prop(ctx, obj, "name").unwrap_or_else(|| "Error".to_owned());
        let message = get_string_prop(ctx, obj, "message").unwrap_or_default();
        let stack = get_string_prop(ctx, obj, "stack").unwrap_or_default();
        return (name, message, stack);
    }
    let message = if let Some(s) = v.as_string() {
        s.to_string().unwrap_or_default()
    } else if let Some(obj) = v.as_object().filter(|_| !v.is_function()) {
        describe_object(ctx, obj)
    } else if v.is_function() {
        "[function]".to_owned()
    } else if v.is_symbol() {
        "[symbol]".to_owned()
    } else {
        // Primitive: ToString runs no user code.
        unsafe { // SAFETY: `ctx` and `v` are live handles of this runtime; the new value is owned by `from_raw`.
            let raw = qjs::JS_ToString(ctx.as_raw().as_ptr(), v.as_raw());
            let s = Value::from_raw(ctx.clone(), raw);
            s.as_string().and_then(|s| s.to_string().ok()).unwrap_or_default()
        }
    };
    (String::new(), message, String::new())
}

/// A thrown non-Error object: its own `toString()` when it has one (`class Test262Error { toString() }`),
/// else its constructor's name (unless `Object`/`Array`) followed by its JSON.
fn describe_object<'js>(ctx: &Ctx<'js>, obj: &Object<'js>) -> String {
    let own_to_string = match obj.get::<_, Value<'js>>("toString") {
        Ok(f) => f.into_function().and_then(|f| match f.call::<_, Value<'js>>((rquickjs::function::This(obj.clone()),)) {
            Ok(r) => r.as_string().and_then(|s| s.to_string().ok()),
            Err(_) => {
                let _ = ctx.catch();
                None
            }
        }),
        Err(_) => {
            let _ = ctx.catch();
            None
        }
    };
    if let Some(text) = own_to_string.filter(|t| !t.starts_with("[object ")) {
        return text;
    }
    let constructor = match obj.get::<_, Value<'js>>("constructor") {
        Ok(c) => c.as_object().and_then(|c| get_string_prop(ctx, c, "name")),
        Err(_) => {
            let _ = ctx.catch();
            None
        }
    }
    .filter(|n| !n.is_empty() && n != "Object" && n != "Array");
    let json = match ctx.json_stringify(obj.clone()) {
        Ok(Some(s)) => s.to_string().unwrap_or_default(),
        _ => {
            let _ = ctx.catch();
            "[object]".to_owned()
        }
    };
    match constructor {
        Some(name) => format!("{name} {json}"),
        None => json,
    }
}

fn fail_with_exception(ctx: &Ctx<'_>) -> i32 {
    let e = ctx.catch();
    let (name, message, stack) = describe_thrown(ctx, e);
    set_result(status::FAILED, &error_record(&name, &message, &stack))
}

fn with_engine<R>(f: impl FnOnce(&Engine) -> R) -> Option<R> {
    ENGINE.with(|e| e.borrow().as_ref().map(f))
}

/// Define an own data property (never runs setters that user code may have installed).
fn define<'js>(ctx: &Ctx<'js>, obj: &Object<'js>, key: &str, value: Value<'js>) {
    let Ok(key) = std::ffi::CString::new(key) else { return };
    unsafe { // SAFETY: live `ctx`/`obj` of this runtime; the property takes the duplicated reference.
        let raw = qjs::JS_DupValue(ctx.as_raw().as_ptr(), value.as_raw());
        qjs::JS_DefinePropertyValueStr(
            ctx.as_raw().as_ptr(),
            obj.as_raw(),
            key.as_ptr(),
            raw,
            (qjs::JS_PROP_WRITABLE | qjs::JS_PROP_CONFIGURABLE) as i32,
        );
    }
}

/// An intrinsic `Error` (created from the realm's own constructor, so overwriting
/// `globalThis.Error` does not matter) with `message` and optional `code`.
fn plain_error<'js>(ctx: &Ctx<'js>, message: &str, code: Option<&str>) -> rquickjs::Result<Value<'js>> {
    let obj = unsafe { // SAFETY: a live `ctx`; the new error's reference is owned by `from_raw`.
        let raw = qjs::JS_NewError(ctx.as_raw().as_ptr());
        Value::from_raw(ctx.clone(), raw)
    };
    let Some(o) = obj.as_object() else {
        return Err(rquickjs::Error::Exception);
    };
    let msg = rquickjs::String::from_str(ctx.clone(), message)?.into_value();
    define(ctx, o, "message", msg);
    if let Some(code) = code {
        let c = rquickjs::String::from_str(ctx.clone(), code)?.into_value();
        define(ctx, o, "code", c);
    }
    Ok(obj)
}

fn refusal_message(len: usize) -> String {
    let mut buf = vec![0u8; len];
    unsafe { refusal(buf.as_mut_ptr(), len) }; // SAFETY: the host writes at most `len` bytes into `buf`.
    String::from_utf8_lossy(&buf).into_owned()
}

fn throw_plain(ctx: &Ctx<'_>, message: &str) -> rquickjs::Error {
    match plain_error(ctx, message, None) {
        Ok(v) => ctx.throw(v),
        Err(e) => e,
    }
}

fn js_output<'js>(ctx: Ctx<'js>, args: Rest<Value<'js>>) -> rquickjs::Result<()> {
    let kind = args.0.first().and_then(|v| v.as_string()).and_then(|s| s.to_string().ok());
    let kind = match kind.as_deref() {
        Some("text") => 0,
        Some("json") => 1,
        _ => return Err(Exception::throw_type(&ctx, "__codemode_output expects kind \"text\" or \"json\"")),
    };
    let Some(payload) = args.0.get(1).and_then(|v| v.as_string()) else {
        return Err(Exception::throw_type(&ctx, "__codemode_output expects a string payload"));
    };
    let payload = payload.to_string()?;
    let r = unsafe { output(kind, payload.as_ptr(), payload.len()) }; // SAFETY: the host only reads `len` bytes.
    if r < 0 {
        let msg = refusal_message((-(r + 1)) as usize);
        return Err(throw_plain(&ctx, &msg));
    }
    Ok(())
}

fn js_set_result_encoder<'js>(ctx: Ctx<'js>, args: Rest<Value<'js>>) -> rquickjs::Result<()> {
    let Some(f) = args.0.first().and_then(|v| v.as_function()) else {
        return Err(Exception::throw_type(&ctx, "__codemode_set_result_encoder expects a function"));
    };
    let saved = Persistent::save(&ctx, f.clone());
    ENCODER.with(|e| *e.borrow_mut() = Some(saved));
    Ok(())
}

/// xorshift64* over guest-held state (so a restored VM continues the same sequence).
fn next_random() -> f64 {
    RNG.with(|s| {
        let mut x = s.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        s.set(x);
        let r = x.wrapping_mul(0x2545_F491_4F6C_DD1D);
        (r >> 11) as f64 / (1u64 << 53) as f64
    })
}

/// The plain-data fast path of the restricted JSON adapter (`__codemode_encode`).
mod encode;
use encode::js_encode;

/// Starting host calls and settling their promises.
mod calls;
use calls::{js_host_call, js_host_call_with, resolve_with_json};

fn install_globals(ctx: &Ctx<'_>) -> rquickjs::Result<()> {
    let g = ctx.globals();
    let encode = Function::new(ctx.clone(), js_encode)?.with_name("__codemode_encode")?;
    define(ctx, &g, "__codemode_encode", encode.into_value());
    let host = Function::new(ctx.clone(), js_host_call)?.with_name("__codemode_host_call")?;
    define(ctx, &g, "__codemode_host_call", host.into_value());
    let host_with = Function::new(ctx.clone(), js_host_call_with)?.with_name("__codemode_host_call_with")?;
    define(ctx, &g, "__codemode_host_call_with", host_with.into_value());
    let out = Function::new(ctx.clone(), js_output)?.with_name("__codemode_output")?;
    define(ctx, &g, "__codemode_output", out.into_value());
    let encoder = Function::new(ctx.clone(), js_set_result_encoder)?.with_name("__codemode_set_result_encoder")?;
    define(ctx, &g, "__codemode_set_result_encoder", encoder.into_value());
    // Math.random from host-seeded guest state (see `cm_seed`).
    let math: Object<'_> = g.get("Math")?;
    let random = Function::new(ctx.clone(), next_random)?.with_name("random")?;
    define(ctx, &math, "random", random.into_value());
    Ok(())
}

/// Allocate `len` bytes for the host to write into. Never returns null for `len > 0` unless
/// memory is exhausted (then 0).
#[unsafe(no_mangle)]
pub extern "C" fn cm_alloc(len: usize) -> *mut u8 {
    let mut v = Vec::<u8>::new();
    if v.try_reserve_exact(len.max(1)).is_err() {
        return std::ptr::null_mut();
    }
    let p = v.as_mut_ptr();
    std::mem::forget(v);
    p
}

/// Free a buffer from `cm_alloc`.
///
/// # Safety
/// `ptr`/`len` must come from one `cm_alloc` call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cm_dealloc(ptr: *mut u8, len: usize) {
    if !ptr.is_null() {
        drop(unsafe { Vec::from_raw_parts(ptr, 0, len.max(1)) }); // SAFETY: the caller's contract (from `cm_alloc`).
    }
}

/// Create the QuickJS runtime and context. `memory_limit` caps QuickJS's heap (0 = none);
/// `max_stack` is the shadow-stack budget for JS recursion (0 = unchecked).
#[unsafe(no_mangle)]
pub extern "C" fn cm_init(memory_limit: u32, max_stack: u32) -> i32 {
    let Ok(rt) = Runtime::new() else { return internal("runtime creation failed") };
    rt.set_max_stack_size(max_stack as usize);
    let Ok(ctx) = Context::full(&rt) else { return internal("context creation failed") };
    if ctx.with(|ctx| install_globals(&ctx)).is_err() {
        return internal("installing globals failed");
    }
    // Set the limit last so init itself never fails on a small limit.
    rt.set_memory_limit(memory_limit as usize);
    ENGINE.with(|e| *e.borrow_mut() = Some(Engine { rt, ctx }));
    set_result(status::IDLE, b"")
}

/// Seed `Math.random`.
#[unsafe(no_mangle)]
pub extern "C" fn cm_seed(seed: u64) {
    RNG.with(|s| s.set(if seed == 0 { 0x9E37_79B9_7F4A_7C15 } else { seed }));
}

/// # Safety
/// `ptr`/`len` must describe readable guest memory.
unsafe fn read_str<'a>(ptr: *const u8, len: usize) -> Option<&'a str> {
    if len == 0 {
        return Some("");
    }
    std::str::from_utf8(unsafe { std::slice::from_raw_parts(ptr, len) }).ok() // SAFETY: the caller's contract.
}

/// Define the global `__codemode_texts` (writable, configurable, not enumerable): an array of the
/// strings in the buffer, each a u32-LE byte length followed by that many bytes of UTF-8. Bulk
/// text for the script evaluated next (which takes and deletes the global), created directly
/// instead of parsed from string literals. Returns 0, -2 for a malformed buffer, -3 for an
/// engine failure (e.g. the memory limit).
///
/// # Safety
/// `ptr`/`len` must describe readable guest memory.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cm_define_texts(ptr: *const u8, len: usize) -> i32 {
    let bytes: &[u8] = if len == 0 { &[] } else { unsafe { std::slice::from_raw_parts(ptr, len) } }; // SAFETY: the host passes a buffer it wrote into guest memory.
    let mut texts = Vec::new();
    let mut rest = bytes;
    while !rest.is_empty() {
        let Some((head, tail)) = rest.split_at_checked(4) else { return -2 };
        let n = u32::from_le_bytes([head[0], head[1], head[2], head[3]]) as usize;
        let Some((text, tail)) = tail.split_at_checked(n) else { return -2 };
        let Ok(text) = std::str::from_utf8(text) else { return -2 };
        texts.push(text);
        rest = tail;
    }
    let r = with_engine(|eng| {
        eng.ctx.with(|ctx| {
            let filled = (|| -> rquickjs::Result<rquickjs::Array<'_>> {
                let array = rquickjs::Array::new(ctx.clone())?;
                for (i, text) in texts.iter().enumerate() {
                    array.set(i, rquickjs::String::from_str(ctx.clone(), text)?)?;
                }
                Ok(array)
            })();
            match filled {
                Ok(array) => {
                    define(&ctx, &ctx.globals(), "__codemode_texts", array.into_value());
                    0
                }
                Err(_) => {
                    let _ = ctx.catch();
                    -3
                }
            }
        })
    });
    r.unwrap_or(-3)
}

/// Evaluate a classic global script. Returns COMPLETED(_UNDEFINED) with the completion value
/// as JSON, or FAILED with an error record.
///
/// # Safety
/// Pointers must describe readable guest memory.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cm_eval_script(
    ptr: *const u8,
    len: usize,
    name_ptr: *const u8,
    name_len: usize,
) -> i32 {
    let (Some(src), Some(name)) = (unsafe { read_str(ptr, len) }, unsafe { read_str(name_ptr, name_len) }) // SAFETY: the host passes buffers it wrote into guest memory (ptr/len pairs).
    else {
        return internal("script is not UTF-8");
    };
    let r = with_engine(|eng| {
        eng.ctx.with(|ctx| {
            let mut opts = rquickjs::context::EvalOptions::default();
            opts.strict = false;
            opts.filename = Some(name.to_owned());
            match ctx.eval_with_options::<Value<'_>, _>(src, opts) {
                Ok(v) => settle_value(&ctx, v),
                Err(_) => fail_with_exception(&ctx),
            }
        })
    });
    r.unwrap_or_else(|| internal("not initialized"))
}

fn settle_value<'js>(ctx: &Ctx<'js>, v: Value<'js>) -> i32 {
    match ctx.json_stringify(v) {
        Ok(Some(s)) => match s.to_string() {
            Ok(s) => set_result(status::COMPLETED, s.as_bytes()),
            Err(_) => fail_with_exception(ctx),
        },
        Ok(None) => set_result(status::COMPLETED_UNDEFINED, b""),
        Err(_) => fail_with_exception(ctx),
    }
}

/// Evaluate `body` as the body of an async function (top-level `await` and `return` work) and
/// run jobs. The wrapper's header has a line of its own: line `n` of `body` is line `n + 1` of the
/// evaluated script and columns are the body's (`codemode_sandbox::CELL_LINE_OFFSET`).
///
/// # Safety
/// Pointers must describe readable guest memory.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cm_eval_cell(
    ptr: *const u8,
    len: usize,
    name_ptr: *const u8,
    name_len: usize,
) -> i32 {
    let (Some(body), Some(name)) = (unsafe { read_str(ptr, len) }, unsafe { read_str(name_ptr, name_len) }) // SAFETY: the host passes buffers it wrote into guest memory (ptr/len pairs).
    else {
        return internal("cell is not UTF-8");
    };
    let src = [abi_names::CELL_PREFIX, body, abi_names::CELL_SUFFIX].concat();
    let started = with_engine(|eng| {
        eng.ctx.with(|ctx| {
            let mut opts = rquickjs::context::EvalOptions::default();
            opts.strict = false;
            opts.filename = Some(name.to_owned());
            match ctx.eval_with_options::<Value<'_>, _>(src, opts) {
                Ok(v) => match v.into_promise() {
                    Some(p) => {
                        CURRENT.with(|c| *c.borrow_mut() = Some(Persistent::save(&ctx, p)));
                        STATUS.with(|s| s.set(status::PENDING));
                        None
                    }
                    None => Some(internal("cell did not produce a promise")),
                },
                Err(_) => {
                    CURRENT.with(|c| *c.borrow_mut() = None);
                    Some(fail_with_exception(&ctx))
                }
            }
        })
    });
    match started {
        None => internal("not initialized"),
        Some(Some(code)) => code,
        Some(None) => cm_run_jobs(),
    }
}

/// Run all pending jobs, then report the status of the current cell.
#[unsafe(no_mangle)]
pub extern "C" fn cm_run_jobs() -> i32 {
    let r = with_engine(|eng| {
        loop {
            match eng.rt.execute_pending_job() {
                Ok(true) => {}
                Ok(false) => break,
                // A job threw (not possible for promise reactions): drop the exception, continue.
                Err(e) => {
                    e.0.with(|ctx| {
                        let _ = ctx.catch();
                    });
                }
            }
        }
        poll(eng)
    });
    r.unwrap_or_else(|| internal("not initialized"))
}

fn poll(eng: &Engine) -> i32 {
    let current = CURRENT.with(|c| c.borrow().clone());
    // No cell: report idle without touching the result buffer.
    let Some(current) = current else { return status::IDLE };
    eng.ctx.with(|ctx| {
        let Ok(p) = current.restore(&ctx) else { return internal("lost the cell promise") };
        match p.state() {
            rquickjs::promise::PromiseState::Pending => set_result(status::PENDING, b""),
            rquickjs::promise::PromiseState::Resolved => {
                CURRENT.with(|c| *c.borrow_mut() = None);
                let v: Value<'_> = match p.result::<Value<'_>>() {
                    Some(Ok(v)) => v,
                    _ => return fail_with_exception(&ctx),
                };
                let encoder = ENCODER.with(|e| e.borrow().clone());
                match encoder.map(|f| f.restore(&ctx)) {
                    None => settle_value(&ctx, v),
                    Some(Ok(f)) => match f.call::<_, Value<'_>>((v,)) {
                        Ok(encoded) => settle_value(&ctx, encoded),
                        Err(_) => fail_with_exception(&ctx),
                    },
                    Some(Err(_)) => internal("lost the result encoder"),
                }
            }
            rquickjs::promise::PromiseState::Rejected => {
                CURRENT.with(|c| *c.borrow_mut() = None);
                // `result` of a rejected promise yields Err(Exception) with the reason pending.
                match p.result::<Value<'_>>() {
                    Some(Err(_)) | None => fail_with_exception(&ctx),
                    Some(Ok(v)) => {
                        let (name, message, stack) = describe_thrown(&ctx, v);
                        set_result(status::FAILED, &error_record(&name, &message, &stack))
                    }
                }
            }
        }
    })
}

/// Status of the current cell (no guest code runs).
#[unsafe(no_mangle)]
pub extern "C" fn cm_status() -> i32 {
    STATUS.with(|s| s.get())
}

/// Whether QuickJS has jobs queued.
#[unsafe(no_mangle)]
pub extern "C" fn cm_jobs_pending() -> i32 {
    with_engine(|eng| eng.rt.is_job_pending() as i32).unwrap_or(0)
}

/// Settle host call `call_id`. `kind` 0: resolve with the JSON text at `ptr` (parsed by the
/// engine's native JSON parser); 1: reject with a plain intrinsic `Error` whose message is the
/// text at `ptr` and, when `code_len > 0`, whose `code` is the text at `code_ptr`.
/// Returns 0, -1 for an unknown id, -2 for invalid JSON, -3 for an engine failure.
///
/// # Safety
/// Pointers must describe readable guest memory.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cm_deliver(
    call_id: u32,
    kind: i32,
    ptr: *const u8,
    len: usize,
    code_ptr: *const u8,
    code_len: usize,
) -> i32 {
    let (Some(text), Some(code)) = (unsafe { read_str(ptr, len) }, unsafe { read_str(code_ptr, code_len) }) // SAFETY: the host passes buffers it wrote into guest memory (ptr/len pairs).
    else {
        return -2;
    };
    let Some((res, rej)) = PENDING.with(|p| p.borrow_mut().remove(&call_id)) else {
        return -1;
    };
    let r = with_engine(|eng| {
        eng.ctx.with(|ctx| {
            let (Ok(resolve), Ok(reject)) = (res.restore(&ctx), rej.restore(&ctx)) else { return -3 };
            if kind == 0 {
                resolve_with_json(&ctx, &resolve, &reject, text)
            } else {
                let code = if code.is_empty() { None } else { Some(code) };
                let e = match plain_error(&ctx, text, code) {
                    Ok(e) => e,
                    Err(_) => {
                        let _ = ctx.catch();
                        return -3;
                    }
                };
                match reject.call::<_, ()>((e,)) {
                    Ok(()) => 0,
                    Err(_) => {
                        let _ = ctx.catch();
                        -3
                    }
                }
            }
        })
    });
    r.unwrap_or(-3)
}

/// Pointer to the result buffer (valid until the next export call).
#[unsafe(no_mangle)]
pub extern "C" fn cm_result_ptr() -> *const u8 {
    RESULT.with(|r| r.borrow().as_ptr())
}

/// Length of the result buffer.
#[unsafe(no_mangle)]
pub extern "C" fn cm_result_len() -> usize {
    RESULT.with(|r| r.borrow().len())
}

/// Host promises still waiting for `cm_deliver`.
#[unsafe(no_mangle)]
pub extern "C" fn cm_pending_calls() -> u32 {
    PENDING.with(|p| p.borrow().len() as u32)
}

/// Bytes QuickJS has allocated (its own accounting, the one the memory limit applies to).
#[unsafe(no_mangle)]
pub extern "C" fn cm_heap_used() -> u64 {
    with_engine(|eng| eng.rt.memory_usage().malloc_size as u64).unwrap_or(0)
}
