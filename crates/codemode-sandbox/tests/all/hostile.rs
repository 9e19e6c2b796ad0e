//! One test per hostile program, each with its expected outcome; after every case the sandbox
//! must still serve a fresh VM.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use codemode_sandbox::{PENDING_WITHOUT_HOST_WORK, Sandbox, SandboxError, Step};

use crate::{PRELUDE, completed, dispatch, sandbox, serial, soon};

/// 16 MiB QuickJS heap: memory bombs hit the limit quickly.
pub fn small_sandbox() -> &'static Sandbox {
    static S: OnceLock<Sandbox> = OnceLock::new();
    S.get_or_init(|| {
        let mut c = crate::det_config();
        c.memory_limit_bytes = 16 << 20;
        Sandbox::new(c, PRELUDE).expect("sandbox")
    })
}

enum Expect {
    /// `SandboxError::Timeout` within the deadline plus slack.
    Timeout,
    /// `Step::Failed` with this name and a message containing this text.
    Fails(&'static str, &'static str),
    /// `Step::Completed` with this JSON.
    Completes(&'static str),
}

const DEADLINE_MS: u64 = 300;

fn check(sb: &Sandbox, code: &str, expect: Expect) {
    let _g = serial();
    let mut vm = sb.start().unwrap();
    let started = Instant::now();
    // Short deadline where a timeout is the expected outcome; generous otherwise (memory bombs
    // do real work, and CI machines are shared).
    let ms = if matches!(expect, Expect::Timeout) { DEADLINE_MS } else { 5_000 };
    let deadline = started + Duration::from_millis(ms);
    let mut r = vm.eval_cell(code, "user.js", deadline);
    // Serve host calls, if any (a few cases make them).
    while let Ok(Step::Pending { .. }) = &r {
        for c in vm.take_host_calls() {
            vm.deliver(c.id, dispatch(&c.payload), deadline).unwrap();
        }
        r = vm.run_jobs(deadline);
    }
    let elapsed = started.elapsed();
    match expect {
        Expect::Timeout => {
            assert_eq!(r, Err(SandboxError::Timeout), "code: {code}");
            assert!(elapsed < Duration::from_millis(DEADLINE_MS + 300), "stopped late: {elapsed:?}");
            assert!(vm.is_terminated());
            assert!(matches!(vm.run_jobs(soon()), Err(SandboxError::Terminated { .. })));
        }
        Expect::Fails(name, msg) => {
            let step = r.unwrap_or_else(|e| panic!("code {code}: host error {e}"));
            let e = crate::failed(&step);
            assert_eq!(e.name, name, "{e:?}");
            assert!(e.message.contains(msg), "message {:?} lacks {msg:?}", e.message);
        }
        Expect::Completes(json) => assert_eq!(r.unwrap(), completed(json), "code: {code}"),
    }
    drop(vm);
    // The sandbox (and the process) are fine: a new VM runs.
    let mut vm = sb.start().unwrap();
    assert_eq!(vm.eval_cell("return 6 * 7", "user.js", soon()).unwrap(), completed("42"));
}

macro_rules! hostile {
    ($($name:ident: $sb:expr, $code:expr => $expect:expr;)*) => {$(
        #[test]
        fn $name() {
            check($sb, $code, $expect);
        }
    )*};
}

hostile! {
    infinite_loop: sandbox(), "while (true) {}" => Expect::Timeout;
    infinite_loop_in_a_job: sandbox(), "await null; for (;;) {}" => Expect::Timeout;
    infinite_loop_after_host_call: sandbox(), "await host('echo', 1); while (true) {}" => Expect::Timeout;
    catastrophic_regex: sandbox(), "return /^(a+)+$/.test('a'.repeat(40) + 'b')" => Expect::Timeout;
    infinite_loop_in_catch_of_timeout_is_not_a_loophole: sandbox(),
        "for (;;) { try { while (true) {} } catch (e) {} }" => Expect::Timeout;
    array_growth: small_sandbox(),
        "const a = []; while (true) a.push(new Array(100000).fill(1.5));" => Expect::Fails("InternalError", "out of memory");
    array_growth_caught: small_sandbox(),
        "let a = []; try { while (true) a.push(new Array(100000).fill(1.5)); } catch (e) { a = null; return String(e); }"
        => Expect::Completes("\"InternalError: out of memory\"");
    // Concatenation builds ropes, so doubling hits QuickJS's string length cap first.
    string_doubling: small_sandbox(),
        "let s = 'x'; while (true) s = s + s;" => Expect::Fails("InternalError", "string too long");
    string_repeat_doubling: small_sandbox(),
        "let n = 1; while (true) { globalThis.s = 'x'.repeat(n); n *= 2 }" => Expect::Fails("InternalError", "out of memory");
    huge_json_parse: small_sandbox(),
        "const s = '[' + '[1,2,3,4],'.repeat(1000000) + '0]'; return JSON.parse(s).length" => Expect::Fails("InternalError", "out of memory");
    // Many small allocations end exactly at the limit, where upstream quickjs-ng cannot allocate
    // the InternalError and throws `null`; the guest build patches that (xtask/src/guest.rs).
    many_small_objects: small_sandbox(),
        "const m = new Map(); for (let i = 0; ; i++) m.set(i, {i, s: 'v' + i});" => Expect::Fails("InternalError", "out of memory");
    many_small_objects_caught: small_sandbox(),
        "let m = new Map(); try { for (let i = 0; ; i++) m.set(i, {i, s: 'v' + i}); } catch (e) { m = null; return [e instanceof Error, e.name, e.message]; }"
        => Expect::Completes("[true,\"InternalError\",\"out of memory\"]");
    many_small_arrays: small_sandbox(),
        "const a = []; for (;;) a.push([a.length]);" => Expect::Fails("InternalError", "out of memory");
    many_closures: small_sandbox(),
        "const fs = []; for (let i = 0; ; i++) fs.push(() => i);" => Expect::Fails("InternalError", "out of memory");
    deep_recursion_5000_works: sandbox(),
        "function f(n) { return n === 0 ? 0 : 1 + f(n - 1) } return f(5000)" => Expect::Completes("5000");
    unbounded_recursion_is_a_range_error: sandbox(),
        "function f() { return f() } f()" => Expect::Fails("RangeError", "stack");
    unbounded_recursion_is_catchable: sandbox(),
        "function f(n) { return f(n + 1) + 1 } try { f(0) } catch (e) { return e.name }" => Expect::Completes("\"RangeError\"");
    // JSON.parse recursion uses far more wasm stack per shadow-stack byte than JS calls, so
    // the wasm stack runs out before QuickJS's check: a clean, typed failure.
    deep_json_nesting: sandbox(),
        "return JSON.parse('['.repeat(1000000) + ']'.repeat(1000000)).length" => Expect::Fails("RangeError", "Maximum call stack size exceeded");
    json_nesting_10000_works: sandbox(),
        "return JSON.stringify(JSON.parse('['.repeat(10000) + ']'.repeat(10000))).length" => Expect::Completes("20000");
    pending_without_host_work: sandbox(),
        "await new Promise(() => {})" => Expect::Fails("Error", PENDING_WITHOUT_HOST_WORK);
    throw_string: sandbox(), "throw 'boom'" => Expect::Fails("", "boom");
    throw_number: sandbox(), "throw 42" => Expect::Fails("", "42");
    throw_null: sandbox(), "throw null" => Expect::Fails("", "null");
    throw_undefined: sandbox(), "throw undefined" => Expect::Fails("", "undefined");
    throw_object: sandbox(), "throw {code: 1, why: 'x'}" => Expect::Fails("", "{\"code\":1,\"why\":\"x\"}");
    throw_symbol: sandbox(), "throw Symbol('s')" => Expect::Fails("", "[symbol]");
    throw_function: sandbox(), "throw function f() {}" => Expect::Fails("", "[function]");
    throw_error_with_hostile_getters: sandbox(),
        "const e = new Error('m'); Object.defineProperty(e, 'name', {get() { while (true) {} }}); throw e"
        => Expect::Timeout;
    reject_with_non_error: sandbox(), "await Promise.reject(7)" => Expect::Fails("", "7");
    result_bigint_is_a_type_error: sandbox(), "return 1n" => Expect::Fails("TypeError", "BigInt");
    result_cycle_is_a_type_error: sandbox(), "const a = {}; a.a = a; return a" => Expect::Fails("TypeError", "circular");
    result_with_throwing_to_json: sandbox(),
        "return {toJSON() { throw new RangeError('nope') }}" => Expect::Fails("RangeError", "nope");
    overwritten_builtins_do_not_break_delivery: sandbox(), r#"
        const savedProto = Error.prototype;
        globalThis.JSON = undefined;
        globalThis.Promise = function () { throw new Error("no promises") };
        globalThis.Error = function () { throw new Error("no errors") };
        Object.defineProperty(Object.prototype, "message", { set(v) { throw 1 }, get() { return "hijacked" }, configurable: true });
        Object.defineProperty(Object.prototype, "code", { set(v) { throw 2 }, configurable: true });
        Object.prototype.toJSON = undefined;
        const r = await host("add", {a: 1, b: 2});
        let caught;
        try { await host("fail", {}); } catch (e) { caught = [e.message, e.code, Object.getPrototypeOf(e) === savedProto]; }
        delete Object.prototype.message; delete Object.prototype.code;
        return [r.sum, caught];
    "# => Expect::Completes("[3,[\"tool failed\",\"E_TOOL\",true]]");
    no_host_objects_reachable: sandbox(), r#"
        const names = ["require", "module", "process", "std", "os", "exports", "Deno", "Bun", "fetch", "XMLHttpRequest",
                       "__codemode_host_call", "__codemode_host_call_with", "__codemode_output", "__codemode_set_result_encoder", "__codemode_encode", "scriptArgs", "print", "console", "setTimeout"];
        return names.filter(n => n in globalThis);
    "# => Expect::Completes("[]");
    dynamic_import_rejects: sandbox(),
        "try { await import('fs'); return 'imported' } catch (e) { return e.name }" => Expect::Completes("\"ReferenceError\"");
    eval_of_own_string_is_plain_js: sandbox(), "return eval('1 + 2')" => Expect::Completes("3");
    function_constructor_cannot_escape: sandbox(),
        "return Function('return typeof globalThis.__codemode_host_call')()" => Expect::Completes("\"undefined\"");
}
