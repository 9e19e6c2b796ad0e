//! Hostile cells against the prelude's own invariants: no prelude function (or receiver) reaches
//! guest code through stack-trace hooks, and a cell's value never crosses the bound it was given.

use std::time::{Duration, Instant};

use codemode_bridge::{BudgetLimits, CellValue, CellValueError, PRELUDE, decode_cell_value_within};
use codemode_sandbox::{Sandbox, Step};
use serde_json::{Value, json};

use crate::boot::sample_context;
use crate::guest::{Ledger, booted_vm, echo_host, run, sandbox_config};

/// Collects, from inside guest callbacks the prelude triggers, every function and receiver the
/// stack-trace hook's CallSites hand out. `leaks` must stay empty; `frames` shows the hook ran.
const PROBE: &str = r#"
const leaks = [];
let frames = 0;
let lines = 0;
Error.prepareStackTrace = (_e, callSites) => callSites;
function probe(where) {
  const sites = new Error("probe").stack;
  if (!Array.isArray(sites)) { leaks.push(where + ": hook not called"); return; }
  for (const site of sites) {
    frames++;
    if (typeof site.getLineNumber() === "number") lines++;
    const f = typeof site.getFunction === "function" ? site.getFunction() : undefined;
    const t = typeof site.getThis === "function" ? site.getThis() : undefined;
    if (f !== undefined) leaks.push(where + ": function " + (f && f.name));
    if (t !== undefined) leaks.push(where + ": receiver " + typeof t);
  }
}
function probeCapture(where) {
  const holder = {};
  Error.captureStackTrace(holder);
  const sites = holder.stack;
  if (!Array.isArray(sites)) return;
  for (const site of sites) {
    frames++;
    if (site.getFunction() !== undefined) leaks.push(where + ": captured function");
    if (site.getThis() !== undefined) leaks.push(where + ": captured receiver");
  }
}
"#;

fn probe(attack: &str) -> Value {
    let code = format!("{PROBE}\n{attack}\nreturn {{ leaks, frames: frames > 0, lines: lines > 0 }};");
    match run(&code).result {
        Ok(v) => v,
        Err(e) => panic!("cell failed: {e}\n{attack}"),
    }
}

fn assert_sealed(attack: &str) {
    let v = probe(attack);
    assert_eq!(v["leaks"], json!([]), "{attack}");
    assert_eq!(v["frames"], json!(true), "the hook ran: {attack}");
}

/// The issue's attack: `Error.prepareStackTrace` returning the CallSites, `getFunction()` in a
/// getter the prelude reads while it encodes a tool input (it used to return `request`,
/// `callTool`, `encode`, `walk`...).
#[test]
fn a_getter_read_by_the_prelude_sees_no_prelude_function() {
    assert_sealed(
        r#"await tools.call("openclaw:core:web_search", { get query() { probe("getter"); return "q"; } });
           await tools.web_search({ nested: [{ get x() { probe("nested getter"); return 1; } }] });
           text({ get shown() { probe("text getter"); return 1; } });
           json({ get shown() { probe("json getter"); return 1; } });"#,
    );
}

#[test]
fn capture_stack_trace_inside_a_getter_sees_no_prelude_function() {
    assert_sealed(
        r#"probe("top");
           await tools.call("openclaw:core:web_search", { get query() { probeCapture("capture"); return "q"; } });"#,
    );
}

/// Errors the prelude itself creates (a bad id, a cycle, a throwing getter) run the hook with
/// prelude frames on the stack.
#[test]
fn errors_the_prelude_throws_expose_no_frames() {
    assert_sealed(
        r#"Error.prepareStackTrace = (_e, sites) => {
             for (const s of sites) {
               frames++;
               if (s.getFunction() !== undefined) leaks.push("prelude error: function");
               if (s.getThis() !== undefined) leaks.push("prelude error: receiver");
             }
             return "stack";
           };
           const a = []; a.push(a);
           for (const bad of [() => tools.call(42), () => tools.callValue("x", a), () => json(a),
                              () => tools.call("x", { get y() { throw new Error("no"); } })]) {
             try { await bad(); } catch (_) {}
           }"#,
    );
}

#[test]
fn to_json_and_to_primitive_are_not_called_and_see_nothing() {
    let v = probe(
        r#"let called = 0;
           const tricky = {
             toJSON() { called++; probe("toJSON"); return 1; },
             [Symbol.toPrimitive]() { called++; probe("toPrimitive"); return 1; },
             valueOf() { called++; probe("valueOf"); return 1; },
             toString() { called++; probe("toString"); return "s"; },
           };
           await tools.call("openclaw:core:web_search", { tricky });
           text(tricky); json(tricky);
           // A proxy array whose length is an object: the loop bound coerces it.
           const len = { [Symbol.toPrimitive]() { probe("length coercion"); return 1; } };
           const arr = new Proxy([1], { get(t, k) { return k === "length" ? len : t[k]; } });
           try { await tools.callValue("openclaw:core:web_search", arr); } catch (_) {}
           leaks.push(...(called ? ["toJSON/toPrimitive/valueOf/toString called " + called] : []));
           probe("after");"#,
    );
    assert_eq!(v["leaks"], json!([]));
}

#[test]
fn proxy_traps_the_prelude_triggers_see_no_prelude_function() {
    assert_sealed(
        r#"const handler = {
             get(t, k, r) { probe("get " + String(k)); return Reflect.get(t, k, r); },
             ownKeys(t) { probe("ownKeys"); return Reflect.ownKeys(t); },
             getOwnPropertyDescriptor(t, k) { probe("gopd"); return Reflect.getOwnPropertyDescriptor(t, k); },
             getPrototypeOf(t) { probe("getPrototypeOf"); return Reflect.getPrototypeOf(t); },
             has(t, k) { probe("has"); return Reflect.has(t, k); },
           };
           await tools.call("openclaw:core:web_search", new Proxy({ a: 1, b: [2] }, handler));
           await tools.callValue("openclaw:core:web_search", new Proxy([1, 2], handler));
           text(new Proxy({ a: 1 }, handler));
           await tools.search("q", new Proxy({ limit: 2 }, handler));"#,
    );
}

/// Other routes to a caller: `caller` / `arguments.callee` from sloppy callbacks the prelude calls.
#[test]
fn callers_are_not_reachable_from_callbacks() {
    let v = probe(
        r#"function sloppyGetter() {
             let c;
             try { c = sloppyGetter.caller; } catch (_) { c = undefined; }
             if (typeof c === "function") leaks.push("caller " + c.name);
             let d;
             try { d = arguments.callee.caller; } catch (_) { d = undefined; }
             if (typeof d === "function") leaks.push("callee.caller " + d.name);
             return 1;
           }
           const input = {};
           Object.defineProperty(input, "x", { get: sloppyGetter, enumerable: true });
           await tools.call("openclaw:core:web_search", input);
           probe("after");"#,
    );
    assert_eq!(v["leaks"], json!([]));
}

/// The CallSite prototype cannot be given its members back, and the hook still formats stacks.
#[test]
fn call_sites_stay_sealed_and_useful() {
    let v = probe(
        r#"const sites = (() => { Error.prepareStackTrace = (_e, s) => s; return new Error().stack; })();
           const proto = Object.getPrototypeOf(sites[0]);
           const before = proto.getFunction;
           try { proto.getFunction = function () { return "replaced"; }; } catch (_) {}
           try { Object.defineProperty(proto, "getThis", { value: () => "replaced" }); } catch (_) {}
           if (proto.getFunction !== before || sites[0].getThis() !== undefined) leaks.push("unsealed");
           if (!Object.isFrozen(proto)) leaks.push("not frozen");
           Error.prepareStackTrace = (_e, s) => s.map((c) => c.getFileName() + ":" + c.getLineNumber()).join(",");
           const formatted = new Error().stack;
           if (typeof formatted !== "string" || !formatted.includes("user.js:")) leaks.push("formatting: " + formatted);
           Error.prepareStackTrace = (_e, s) => s;
           probe("after");"#,
    );
    assert_eq!(v["leaks"], json!([]));
}

// ---- the cell's value against maxOutputBytes ----

fn deadline() -> Instant {
    Instant::now() + Duration::from_secs(20)
}

/// Runs `code` booted with a `max`-byte value bound; returns the raw `value_json` and its decoding.
fn bounded(code: &str, max: u64) -> (Option<String>, Result<CellValue, CellValueError>) {
    let ledger = Ledger::new(BudgetLimits::default(), 1 << 20);
    let mut context = sample_context();
    context.max_result_chars = Some(max);
    let mut vm = booted_vm(&context, &ledger);
    let mut step = vm.eval_cell(code, "user.js", deadline()).unwrap();
    loop {
        match step {
            Step::Completed { value_json } => {
                let decoded = decode_cell_value_within(value_json.as_deref(), max);
                return (value_json, decoded);
            }
            Step::Failed(e) => panic!("cell failed: {e}"),
            Step::Pending { .. } => {
                for call in vm.take_host_calls() {
                    let request = codemode_bridge::decode_request(&call.payload).unwrap();
                    let reply = echo_host(&request);
                    ledger.get().budgets.on_delivered();
                    vm.deliver(call.id, reply, deadline()).unwrap();
                }
                step = vm.run_jobs(deadline()).unwrap();
            }
        }
    }
}

#[test]
fn a_value_exactly_at_the_bound_crosses() {
    // `"x…x"` with 65,534 x's is 65,536 bytes of JSON.
    let (_, decoded) = bounded("return 'x'.repeat(65534);", 65536);
    let cell = decoded.unwrap();
    assert_eq!(cell.bytes, 65536);
    assert_eq!(cell.value, json!("x".repeat(65534)));
    // UTF-8 bytes count: 3-byte characters.
    let (_, decoded) = bounded("return { s: '€'.repeat(100) };", 308);
    assert_eq!(decoded.unwrap().bytes, 308);
    let (_, decoded) = bounded("return { s: '€'.repeat(100) };", 307);
    assert_eq!(decoded, Err(CellValueError::TooLarge { bytes: 308, limit: 307 }));
}

/// Past the bound in code units the guest keeps the text: only its length crosses (a few bytes),
/// so a huge value costs the host nothing.
#[test]
fn a_value_past_the_bound_stays_in_the_guest() {
    let (raw, decoded) = bounded("return 'x'.repeat(65535);", 65536);
    assert_eq!(raw.as_deref(), Some("65537"));
    assert_eq!(decoded, Err(CellValueError::TooLarge { bytes: 65537, limit: 65536 }));
    let (raw, decoded) = bounded("return 'x'.repeat(200000);", 65536);
    assert_eq!(raw.as_deref(), Some("200002"));
    assert!(matches!(decoded, Err(CellValueError::TooLarge { bytes: 200002, .. })), "{decoded:?}");
    let (raw, _) = bounded("return Array.from({ length: 300000 }, (_, i) => i);", 65536);
    assert!(raw.as_deref().is_some_and(|r| r.len() < 12), "{raw:?}");
}

/// Five million lone surrogates: each becomes U+FFFD (3 bytes); the value stays in the guest.
#[test]
fn lone_surrogates_do_not_blow_up_the_value() {
    let (raw, decoded) = bounded("return '\\ud800'.repeat(5000000);", 65536);
    assert_eq!(raw.as_deref(), Some("5000002"));
    assert!(matches!(decoded, Err(CellValueError::TooLarge { .. })));
    // Within the bound they cross as U+FFFD.
    let (_, decoded) = bounded("return '\\udc00a\\ud800';", 65536);
    let cell = decoded.unwrap();
    assert_eq!(cell.value, json!("\u{fffd}a\u{fffd}"));
    assert_eq!(cell.bytes, 9);
}

/// The probe sandbox used above is the shared one; the prelude also loads on its own.
#[test]
fn the_sealing_prelude_loads_in_a_fresh_sandbox() {
    Sandbox::new(sandbox_config(), PRELUDE).expect("the prelude loads");
}
