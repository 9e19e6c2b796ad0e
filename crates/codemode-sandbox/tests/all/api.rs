//! Errors, output, policy, determinism, isolation, the import allowlist and the module cache.

use std::sync::{Arc, Barrier};

use codemode_sandbox::{
    Delivery, GuestPolicy, IMPORT_ALLOWLIST, OutputKind, Sandbox, SandboxConfig, SandboxError, Step, globals,
};

use crate::{completed, failed, run, sandbox, serial, soon};

#[test]
fn syntax_error_names_the_error_and_the_file() {
    let _g = serial();
    let out = run("const a = 1;\nreturn (;");
    let e = failed(&out.step);
    assert_eq!(e.name, "SyntaxError");
    assert!(!e.message.is_empty() && !e.message.starts_with("user.js"), "{e:?}");
    assert!(e.stack.contains("user.js:3"), "{e:?}"); // body line 2 + CELL_LINE_OFFSET
}

#[test]
fn reference_error_has_user_line_numbers() {
    let _g = serial();
    let out = run("const a = 1;\n\nreturn a + x;");
    let e = failed(&out.step);
    assert_eq!((e.name.as_str(), e.message.as_str()), ("ReferenceError", "x is not defined"));
    // Body line 3, after the wrapper's own line, at the body's column.
    assert!(e.stack.contains("user.js:4:12"), "{e:?}");
    assert_eq!(e.to_string(), "ReferenceError: x is not defined");
}

#[test]
fn error_thrown_after_await_keeps_its_line() {
    let _g = serial();
    let out = run("await host('echo', 1);\nfunction f() {\n  throw new TypeError('bad');\n}\nf();");
    let e = failed(&out.step);
    assert_eq!(e.name, "TypeError");
    assert!(e.stack.contains("user.js:4"), "{e:?}");
}

#[test]
fn completion_values() {
    let _g = serial();
    assert_eq!(run("return undefined").step, Step::Completed { value_json: None });
    assert_eq!(run("1 + 1").step, Step::Completed { value_json: None });
    assert_eq!(run("return () => 1").step, Step::Completed { value_json: None });
    assert_eq!(
        run("return {a: [1, 'x', null, true], u: undefined}").step,
        completed(r#"{"a":[1,"x",null,true]}"#)
    );
    assert_eq!(run("return 'é\\u0000'").step, completed("\"é\\u0000\""));
    assert_eq!(run("return NaN").step, completed("null"));
}

#[test]
fn eval_script_defines_globals_for_the_cell() {
    let _g = serial();
    let mut vm = sandbox().start().unwrap();
    assert_eq!(vm.eval_script("var ctx = {run: 'r1'}; 5", soon()).unwrap(), completed("5"));
    assert_eq!(vm.eval_cell("return ctx.run", "user.js", soon()).unwrap(), completed("\"r1\""));
    let e = vm.eval_script("(", soon()).unwrap();
    assert_eq!(failed(&e).name, "SyntaxError");
}

#[test]
fn a_second_cell_while_one_is_pending_is_refused() {
    let _g = serial();
    let mut vm = sandbox().start().unwrap();
    vm.eval_cell("await host('echo', 1)", "user.js", soon()).unwrap();
    assert_eq!(vm.eval_cell("return 1", "user.js", soon()), Err(SandboxError::Busy));
}

#[test]
fn deliver_errors() {
    let _g = serial();
    let mut vm = sandbox().start().unwrap();
    vm.eval_cell(
        "try { return await host('echo', 1) } catch (e) { return [e.message, e.code] }",
        "user.js",
        soon(),
    )
    .unwrap();
    let id = vm.take_host_calls()[0].id;
    assert_eq!(
        vm.deliver(id + 7, Delivery::Resolve("1".into()), soon()),
        Err(SandboxError::UnknownCall { call_id: id + 7 })
    );
    assert_eq!(vm.deliver(id, Delivery::Resolve("{nope".into()), soon()), Err(SandboxError::InvalidJson));
    // The program is not left hanging: it sees a rejection.
    assert_eq!(
        vm.run_jobs(soon()).unwrap(),
        completed(r#"["host delivered invalid JSON","internal_error"]"#)
    );
    assert_eq!(
        vm.deliver(id, Delivery::Resolve("1".into()), soon()),
        Err(SandboxError::UnknownCall { call_id: id })
    );
}

#[test]
fn deliver_and_run_settles_a_step_in_one_go() {
    let _g = serial();
    let mut vm = sandbox().start().unwrap();
    let cell = "const r = await Promise.allSettled([host('a', 1), host('b', 2), host('c', 3)]);\n\
                return r.map((x) => x.status === 'fulfilled' ? x.value : [x.reason.message, x.reason.code]);";
    assert!(matches!(vm.eval_cell(cell, "user.js", soon()).unwrap(), Step::Pending { pending_calls: 3 }));
    let ids: Vec<u32> = vm.take_host_calls().iter().map(|c| c.id).collect();
    let before = vm.abi_stats().deliveries;
    // An unknown call is skipped and an invalid reply rejects its promise, as `deliver` would have
    // it; the rest settle, then the jobs run, all in one call.
    let step = vm
        .deliver_and_run(
            [
                (ids[0], Delivery::Resolve("10".into())),
                (ids[2] + 99, Delivery::Resolve("0".into())),
                (ids[1], Delivery::Resolve("{nope".into())),
                (ids[2], Delivery::Reject { message: "no".into(), code: Some("tool_error".into()) }),
            ],
            soon(),
        )
        .unwrap();
    assert_eq!(
        step,
        completed(r#"[10,["host delivered invalid JSON","internal_error"],["no","tool_error"]]"#)
    );
    assert_eq!(vm.abi_stats().deliveries - before, 3);
    assert!(vm.pending_host_calls().is_empty());
    // Past its deadline nothing is delivered.
    let mut vm = sandbox().start().unwrap();
    vm.eval_cell("return await host('a', 1)", "user.js", soon()).unwrap();
    let id = vm.take_host_calls()[0].id;
    let past = std::time::Instant::now() - std::time::Duration::from_millis(1);
    assert_eq!(vm.deliver_and_run([(id, Delivery::Resolve("1".into()))], past), Err(SandboxError::Timeout));
    assert_eq!(vm.pending_host_calls().len(), 1);
}

struct Budget {
    calls_left: usize,
    output_bytes_left: usize,
}

impl GuestPolicy for Budget {
    fn on_host_call(&mut self, _payload: &str) -> Result<(), String> {
        if self.calls_left == 0 {
            return Err("too many pending tool calls".into());
        }
        self.calls_left -= 1;
        Ok(())
    }
    fn on_output(&mut self, _kind: OutputKind, payload: &str) -> Result<(), String> {
        if payload.len() > self.output_bytes_left {
            return Err("output limit exceeded".into());
        }
        self.output_bytes_left -= payload.len();
        Ok(())
    }
}

#[test]
fn policy_refusals_are_catchable_errors() {
    let _g = serial();
    let mut vm = sandbox().start().unwrap();
    vm.set_policy(Box::new(Budget { calls_left: 1, output_bytes_left: 8 }));
    let code = r#"
host('echo', 1);
let r = [];
try { host('echo', 2) } catch (e) { r.push(e.message, e instanceof Error) }
text('12345678');
try { text('9') } catch (e) { r.push(e.message) }
return r;
"#;
    let step = vm.eval_cell(code, "user.js", soon()).unwrap();
    // One call is pending, but the cell already returned.
    assert_eq!(step, completed(r#"["too many pending tool calls",true,"output limit exceeded"]"#));
    // The policy accepted `12345678`: it is the policy's, the VM keeps no second copy.
    assert!(vm.take_output().is_empty());
    let s = vm.abi_stats();
    assert_eq!(s.output_bytes, 8);
    assert_eq!(
        (s.host_calls, s.host_calls_attempted, s.outputs, s.outputs_attempted, s.refusals),
        (1, 2, 1, 2, 2)
    );
    assert_eq!(s.output_bytes, 8);
}

#[test]
fn output_kinds() {
    let _g = serial();
    let out = run("text('a'); json({b: 1}); return 0").output;
    assert_eq!(out.len(), 2);
    assert_eq!((out[1].kind, out[1].payload.as_str()), (OutputKind::Json, r#"{"b":1}"#));
}

#[test]
fn raw_imports_validate_their_arguments() {
    let _g = serial();
    // Without a prelude the private globals are visible; bad arguments are TypeErrors.
    let sb = Sandbox::new(crate::det_config(), "").unwrap();
    let mut vm = sb.start().unwrap();
    let code = format!(
        "const r = []; for (const f of [() => {h}(1), () => {o}('x', 'y'), () => {o}('text', 1)]) {{ try {{ f() }} catch (e) {{ r.push(e.name) }} }} return r",
        h = globals::HOST_CALL,
        o = globals::OUTPUT
    );
    assert_eq!(
        vm.eval_cell(&code, "user.js", soon()).unwrap(),
        completed(r#"["TypeError","TypeError","TypeError"]"#)
    );
    for g in globals::ALL {
        assert!(g.starts_with(globals::PRIVATE_PREFIX));
    }
}

#[test]
fn global_names_show_nothing_of_the_host() {
    let _g = serial();
    let out = run("return Object.getOwnPropertyNames(globalThis).sort()");
    let Step::Completed { value_json: Some(names) } = out.step else { panic!() };
    // Standard ECMAScript globals plus the test prelude's own three.
    let expected = r#"["AggregateError","Array","ArrayBuffer","AsyncDisposableStack","BigInt","BigInt64Array","BigUint64Array","Boolean","DOMException","DataView","Date","DisposableStack","Error","EvalError","FinalizationRegistry","Float16Array","Float32Array","Float64Array","Function","Infinity","Int16Array","Int32Array","Int8Array","InternalError","Iterator","JSON","Map","Math","NaN","Number","Object","Promise","Proxy","RangeError","ReferenceError","Reflect","RegExp","Set","SharedArrayBuffer","String","SuppressedError","Symbol","SyntaxError","TypeError","URIError","Uint16Array","Uint32Array","Uint8Array","Uint8ClampedArray","WeakMap","WeakRef","WeakSet","atob","btoa","decodeURI","decodeURIComponent","encodeURI","encodeURIComponent","escape","eval","globalThis","host","isFinite","isNaN","json","parseFloat","parseInt","performance","queueMicrotask","text","undefined","unescape"]"#;
    assert_eq!(names, expected);
}

#[test]
fn deterministic_clock_and_random() {
    let _g = serial();
    let code = "return [Date.now(), new Date().getTime(), performance.now(), Math.random(), Math.random()]";
    let a = run(code).step;
    let b = run(code).step;
    assert_eq!(a, b);
    let Step::Completed { value_json: Some(v) } = &a else { panic!() };
    assert!(v.starts_with("[1700000000000,1700000000000,0,"), "{v}");
    // Non-deterministic: real clock, different random sequences per VM.
    let sb = Sandbox::new(SandboxConfig::default(), "").unwrap();
    let mut r = Vec::new();
    for _ in 0..2 {
        let mut vm = sb.start().unwrap();
        r.push(vm.eval_cell("return [Math.random(), Date.now()]", "user.js", soon()).unwrap());
    }
    assert_ne!(r[0], r[1]);
    let Step::Completed { value_json: Some(v) } = &r[0] else { panic!() };
    let now: u64 = v.trim_end_matches(']').rsplit(',').next().unwrap().parse().unwrap();
    let real = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64;
    assert!(real.abs_diff(now) < 60_000);
}

/// 12 VMs on 12 threads, each writing its own global; none sees another's.
#[test]
fn twelve_vms_on_twelve_threads_are_isolated() {
    let _g = serial();
    let barrier = Arc::new(Barrier::new(12));
    let handles: Vec<_> = (0..12)
        .map(|i| {
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                let mut vm = sandbox().start().unwrap();
                let set = format!("globalThis.v{i} = {i}; globalThis.shared = {i}; return 0");
                assert_eq!(vm.eval_cell(&set, "user.js", soon()).unwrap(), completed("0"));
                barrier.wait();
                let check = "return [Object.keys(globalThis).filter(k => /^v\\d+$/.test(k)), shared]";
                let step = vm.eval_cell(check, "user.js", soon()).unwrap();
                assert_eq!(step, completed(&format!("[[\"v{i}\"],{i}]")));
                barrier.wait();
                // And a fresh VM from the same sandbox sees none of it.
                let mut fresh = sandbox().start().unwrap();
                fresh.eval_cell("return typeof shared", "user.js", soon()).unwrap()
            })
        })
        .collect();
    for h in handles {
        assert_eq!(h.join().unwrap(), completed("\"undefined\""));
    }
}

#[test]
fn vm_and_sandbox_are_send_and_sync_where_needed() {
    fn send<T: Send>() {}
    fn send_sync<T: Send + Sync + Clone>() {}
    send::<codemode_sandbox::Vm>();
    send_sync::<Sandbox>();
    send_sync::<codemode_sandbox::Snapshot>();
}

#[test]
fn guest_imports_equal_the_allowlist_and_one_mutable_global() {
    use wasmparser::{Parser, Payload, TypeRef};
    let mut imports = Vec::new();
    let mut mutable_globals = 0;
    for p in Parser::new(0).parse_all(codemode_sandbox::guest_wasm()) {
        match p.unwrap() {
            Payload::ImportSection(r) => {
                for imp in r.into_imports() {
                    let imp = imp.unwrap();
                    if let TypeRef::Global(g) = imp.ty {
                        mutable_globals += g.mutable as usize;
                    }
                    imports.push((imp.module.to_owned(), imp.name.to_owned()));
                }
            }
            Payload::GlobalSection(r) => {
                for g in r {
                    mutable_globals += g.unwrap().ty.mutable as usize;
                }
            }
            _ => {}
        }
    }
    imports.sort();
    let mut allow: Vec<(String, String)> =
        IMPORT_ALLOWLIST.iter().map(|(m, n)| (m.to_string(), n.to_string())).collect();
    allow.sort();
    assert_eq!(imports, allow);
    assert_eq!(mutable_globals, 1);
}

#[test]
fn prelude_errors_are_reported() {
    let _g = serial();
    let err = Sandbox::new(crate::det_config(), "throw new TypeError('bad prelude')").unwrap_err();
    let SandboxError::Prelude { error } = err else { panic!("{err:?}") };
    assert_eq!((error.name.as_str(), error.message.as_str()), ("TypeError", "bad prelude"));
    assert!(error.stack.contains("prelude.js"));
}

fn temp_dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("codemode-sandbox-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// The disk cache: the first sandbox writes an entry; a corrupt entry in another directory is
/// recompiled (never trusted) and rewritten.
#[test]
fn module_cache_writes_and_recovers_from_corruption() {
    let _g = serial();
    let a = temp_dir("a");
    let mut c = crate::det_config();
    c.cache_dir = Some(a.clone());
    let sb = Sandbox::new(c.clone(), "").unwrap();
    assert_eq!(sb.start().unwrap().eval_cell("return 3", "user.js", soon()).unwrap(), completed("3"));
    let entries: Vec<_> = std::fs::read_dir(&a).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(entries.len(), 1, "{entries:?}");
    let good = std::fs::read(&entries[0]).unwrap();

    let b = temp_dir("b");
    std::fs::create_dir_all(&b).unwrap();
    let name = entries[0].file_name().unwrap();
    let mut corrupt = good.clone();
    let mid = corrupt.len() / 2;
    corrupt[mid] ^= 0xff;
    std::fs::write(b.join(name), &corrupt).unwrap();
    c.cache_dir = Some(b.clone());
    let sb = Sandbox::new(c, "").unwrap();
    assert_eq!(sb.start().unwrap().eval_cell("return 4", "user.js", soon()).unwrap(), completed("4"));
    let rewritten = std::fs::read(b.join(name)).unwrap();
    assert_ne!(rewritten, corrupt);
    let _ = std::fs::remove_dir_all(&a);
    let _ = std::fs::remove_dir_all(&b);
}

/// A cache directory that cannot be created (its parent is a file) is no cache, not a failure.
#[test]
fn unusable_module_cache_directory_only_costs_the_compile() {
    let _g = serial();
    let file = temp_dir("not-a-dir");
    std::fs::write(&file, "a file where the cache's parent should be").unwrap();
    let mut c = crate::det_config();
    c.cache_dir = Some(file.join("cache"));
    let sb = Sandbox::new(c, "").unwrap();
    assert_eq!(sb.start().unwrap().eval_cell("return 5", "user.js", soon()).unwrap(), completed("5"));
    assert!(std::fs::metadata(&file).unwrap().is_file());
    let _ = std::fs::remove_file(&file);
}

/// `Sandbox::extend_with_texts`: the script finds the texts as the array `__codemode_texts`
/// (UTF-8 of any kind, empty ones, large ones, exactly in order), takes them and deletes the global;
/// with no texts the global is never defined. The buffer that carried them leaves no copy in the
/// base image.
#[test]
fn extend_with_texts_hands_the_script_its_texts() {
    let _g = serial();
    let base = crate::sandbox();
    let big = "declare namespace MCP.x {}\n".repeat(40_000);
    let texts = ["plain", "", "é 💡 \u{2028} \"q\" \\ \u{0}", big.as_str()];
    let script = "const d = Object.getOwnPropertyDescriptor(globalThis, '__codemode_texts'); \
        globalThis.got = [__codemode_texts.slice(), [d.writable, d.enumerable, d.configurable]]; \
        delete globalThis.__codemode_texts;";
    let extended = base.extend_with_texts(script, &texts, "boot.js").unwrap();
    let mut vm = extended.start().unwrap();
    let step = vm
        .eval_cell(
            r#"return [got[0].length, got[0][0], got[0][1], got[0][2] === "é 💡 \u2028 \"q\" \\ \u0000",
              got[0][3].length, got[0][3] === "declare namespace MCP.x {}\n".repeat(40000), got[1], typeof __codemode_texts]"#,
            "user.js",
            soon(),
        )
        .unwrap();
    let expected = format!(r#"[4,"plain","",true,{},true,[true,false,true],"undefined"]"#, big.len());
    assert_eq!(step, completed(&expected));
    // The 1 MiB of text is in the base image once (its UTF-8 buffer was zeroed before it was
    // freed), where a string literal leaves its source and its parse behind as well.
    let literal = format!("globalThis.got = [\"{}\"];", big.replace('\n', "\\n"));
    let literal = base.extend(&literal, "boot.js").unwrap();
    assert!(
        extended.base_image_bytes() < literal.base_image_bytes(),
        "bulk {} KiB, literal {} KiB",
        extended.base_image_bytes() >> 10,
        literal.base_image_bytes() >> 10
    );
    // No texts: no global.
    let plain = base.extend_with_texts("globalThis.seen = typeof __codemode_texts;", &[], "boot.js").unwrap();
    let mut vm = plain.start().unwrap();
    assert_eq!(vm.eval_cell("return seen", "user.js", soon()).unwrap(), completed("\"undefined\""));
}

/// `Sandbox::extend`: the script runs once; every VM of the new sandbox starts with its effects,
/// the original is untouched, and snapshots stay with the sandbox that made them.
#[test]
fn extend_bakes_a_script_into_the_base_image() {
    let _g = serial();
    let base = crate::sandbox();
    let script = "globalThis.catalog = Object.freeze({ size: 677, names: ['a', 'b'] }); let counter = 0;";
    let extended = base.extend(script, "catalog.js").unwrap();
    for _ in 0..3 {
        let mut vm = extended.start().unwrap();
        let step =
            vm.eval_cell("counter += 1; return [catalog.size, catalog.names, counter]", "user.js", soon());
        assert_eq!(step.unwrap(), completed("[677,[\"a\",\"b\"],1]"), "every VM starts from the baked state");
    }
    // The new base image holds only the pages the script changed; the rest are the original's.
    assert_eq!(base.base_image_own_bytes(), base.base_image_bytes());
    let shared = extended.base_image_bytes() - extended.base_image_own_bytes();
    assert!(
        extended.base_image_own_bytes() > 0 && shared > 0,
        "own {} of {} (the original: {})",
        extended.base_image_own_bytes(),
        extended.base_image_bytes(),
        base.base_image_bytes()
    );
    let mut plain = base.start().unwrap();
    assert_eq!(
        plain.eval_cell("return typeof catalog", "user.js", soon()).unwrap(),
        completed("\"undefined\"")
    );

    // A snapshot of the extended sandbox restores there and continues; not into the original.
    let mut vm = extended.start().unwrap();
    let step =
        vm.eval_cell("const r = await host('echo', 2); return r + catalog.size", "user.js", soon()).unwrap();
    assert!(matches!(step, Step::Pending { .. }), "{step:?}");
    let snapshot = vm.snapshot().unwrap();
    drop(vm);
    assert!(matches!(base.restore(&snapshot), Err(SandboxError::Snapshot { .. })));
    let mut restored = extended.restore(&snapshot).unwrap();
    let call = restored.take_host_calls().pop().unwrap();
    restored.deliver(call.id, crate::dispatch(&call.payload), soon()).unwrap();
    assert_eq!(restored.run_jobs(soon()).unwrap(), completed("679"));

    // A script that throws is an error naming it, and the original sandbox still works.
    let err = base.extend("throw new TypeError('bad catalog')", "catalog.js").unwrap_err();
    let SandboxError::Prelude { error } = err else { panic!("{err:?}") };
    assert_eq!((error.name.as_str(), error.message.as_str()), ("TypeError", "bad catalog"));
    assert!(error.stack.contains("catalog.js"), "{}", error.stack);
    assert_eq!(base.start().unwrap().eval_cell("return 1", "user.js", soon()).unwrap(), completed("1"));
}

/// The native plain-data encoder: exact text for plain data, and undefined, with no guest code
/// run, for everything else (getters, proxy traps, `toJSON`, holes, other classes and
/// prototypes, BigInt, cycles and nesting at 64 levels, text past 64 KiB, no JSON form).
#[test]
fn the_plain_data_encoder_gives_up_without_running_guest_code() {
    let sb = Sandbox::new(crate::det_config(), "").unwrap();
    let mut vm = sb.start().unwrap();
    let code = format!(
        r#"const enc = (v) => {e}(v, Object.prototype);
        let ran = 0;
        const nest = (n) => {{ let v = 0; for (let i = 0; i < n; i++) v = [v]; return v; }};
        const cyc = {{}}; cyc.c = cyc;
        const plain = [enc({{ b: [1, -0, 1.5e300, "\u0001\"\ud800"], a: null, u: undefined, f() {{}} }}), enc([undefined, Symbol()]),
          enc(Object.create(null)), enc(nest(64)).length, enc("x".repeat(65530)).length];
        const refused = [{{ get g() {{ ran++; return 1; }} }}, new Proxy({{}}, {{ ownKeys() {{ ran++; return []; }}, get() {{ ran++; }} }}),
          {{ toJSON() {{ ran++; return 1; }}, x: [1, , 2] }}, new Date(0), new (class K {{}})(), 1n, cyc, nest(65),
          "x".repeat(65537), undefined, () => 1, Symbol()].map((v) => enc(v));
        return {{ plain, refused, ran }};"#,
        e = globals::ENCODE
    );
    let expected = format!(
        r#"{{"plain":["{{\"b\":[1,0,1.5e+300,\"\\u0001\\\"{r}\"],\"a\":null}}","[null,null]","{{}}",129,65532],"refused":[{}],"ran":0}}"#,
        ["null"; 12].join(","),
        r = '\u{fffd}'
    );
    assert_eq!(vm.eval_cell(&code, "user.js", soon()).unwrap(), completed(&expected));
}

/// Encoding plain data natively leaks nothing: many encodes leave the linear memory where a few
/// left it.
#[test]
fn the_plain_data_encoder_does_not_grow_memory() {
    let sb = Sandbox::new(crate::det_config(), "").unwrap();
    let mut vm = sb.start().unwrap();
    let code = |n: u32| {
        format!(
            r#"let s = 0; for (let i = 0; i < {n}; i++) s += {e}({{ i, q: "v" + i, a: [i, {{ k: null }}] }}, Object.prototype).length; return s > 0;"#,
            e = globals::ENCODE
        )
    };
    assert_eq!(vm.eval_cell(&code(1000), "user.js", soon()).unwrap(), completed("true"));
    let after_few = vm.memory_bytes();
    assert_eq!(vm.eval_cell(&code(200_000), "user.js", soon()).unwrap(), completed("true"));
    assert_eq!(vm.memory_bytes(), after_few);
}
