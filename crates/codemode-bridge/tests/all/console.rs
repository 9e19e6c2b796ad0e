//! `console.*` in the real guest: Node-style formatting, one text item per call, the output budget,
//! and hardening like the other prelude globals.

use codemode_bridge::{BudgetLimits, TRUNCATION_MARKER_PREFIX};
use codemode_core::CodeModeOutput;
use serde_json::json;

use crate::boot::sample_context;
use crate::guest::{Ledger, echo_host, run, run_with};

fn texts(code: &str) -> Vec<String> {
    let outcome = run(code);
    if let Err(e) = &outcome.result {
        panic!("cell failed: {e}\n{code}");
    }
    outcome
        .output
        .iter()
        .map(|o| match o {
            CodeModeOutput::Text { text } => text.clone(),
            other => panic!("console wrote a non-text item: {other:?}"),
        })
        .collect()
}

#[test]
fn every_method_appends_one_text_item_in_call_order() {
    let out = texts(
        r#"console.log("a"); console.info("b"); console.warn("c"); console.error("d"); console.debug("e");
        text("f"); console.log(); return null;"#,
    );
    assert_eq!(out, ["a", "b", "c", "d", "e", "f", ""]);
}

#[test]
fn values_print_like_node_with_objects_as_compact_json() {
    let out = texts(
        r#"
        console.log("x", 1, -0, 2.5, true, null, undefined, 5n, Symbol("s"));
        console.log({ a: [1, "two", { b: null }] }, [1, 2]);
        console.log(new Date(0), new String("boxed"));
        console.log(new TypeError("bad thing"), new Error(""));
        function named() {} console.log(named, () => 1);
        console.log(NaN, Infinity, { n: NaN, big: 7n, u: undefined });
        console.log("a\u{1F600}b", "lone \uD800");
        return null;
        "#,
    );
    assert_eq!(
        out,
        [
            "x 1 -0 2.5 true null undefined 5n Symbol(s)",
            r#"{"a":[1,"two",{"b":null}]} [1,2]"#,
            "1970-01-01T00:00:00.000Z boxed",
            "TypeError: bad thing Error",
            "[Function: named] [Function (anonymous)]",
            r#"NaN Infinity {"n":null,"big":"7"}"#,
            "a\u{1F600}b lone \u{FFFD}",
        ]
    );
}

#[test]
fn format_specifiers_follow_util_format() {
    let out = texts(
        r#"
        console.log("%s is %d years", "Ada", 36);
        console.log("%i|%f|%d", 42.9, "1.5e3", "7");
        console.log("%j and %o and %O", { a: 1 }, [1], { b: [2] });
        console.log("%s", { k: "v" }, "extra", 3);
        console.log("%c styled", "color: red");
        console.log("100%% sure", "yes");
        console.log("100%%");
        console.log("%s and %s", "only one");
        console.log("%x unknown", 1);
        console.log("%d %i %f", {}, Symbol("s"), 10n);
        console.log("%s", -0, 5n);
        console.log(1, "%s", 2);
        console.log("", "after empty");
        console.log("trailing %");
        return null;
        "#,
    );
    assert_eq!(
        out,
        [
            "Ada is 36 years",
            "42|1500|7",
            r#"{"a":1} and [1] and {"b":[2]}"#,
            r#"{"k":"v"} extra 3"#,
            " styled",
            "100% sure yes",
            "100%%",
            "only one and %s",
            "%x unknown 1",
            "NaN NaN 10",
            "-0 5n",
            "1 %s 2",
            " after empty",
            "trailing %",
        ]
    );
}

#[test]
fn values_the_encoder_refuses_print_a_reason_instead_of_throwing() {
    let out = texts(
        r#"
        const a = {}; a.self = a;
        console.log("cycle:", a);
        console.log("%j", a);
        console.log(new Uint8Array(2));
        const g = { get boom() { throw new Error("getter"); } };
        console.log(g);
        return null;
        "#,
    );
    assert_eq!(out.len(), 4);
    assert!(out[0].starts_with("cycle: [console.log: value is circular"), "{}", out[0]);
    assert!(out[1].starts_with("[console.log: value is circular"), "{}", out[1]);
    assert!(out[2].contains("binary values"), "{}", out[2]);
    assert!(out[3].contains(r#"reading property "boom" threw: getter"#), "{}", out[3]);
}

#[test]
fn console_output_counts_against_max_output_bytes() {
    let ledger = Ledger::new(BudgetLimits::default(), 1024);
    let outcome = run_with(
        &sample_context(),
        &ledger,
        r#"
        console.log("a".repeat(1000));
        console.log("%s", "b".repeat(24)); // exactly 1024 bytes in total
        let caught = null;
        try { console.error("c"); } catch (e) { caught = e.message; }
        return caught;
        "#,
        &mut echo_host,
    );
    assert_eq!(
        outcome.result.unwrap(),
        json!("output limit exceeded: the run's output would exceed maxOutputBytes (1024 bytes)")
    );
    assert_eq!(outcome.output.len(), 3);
    assert_eq!(outcome.output[1], CodeModeOutput::Text { text: "b".repeat(24) });
    let CodeModeOutput::Text { text } = &outcome.output[2] else { panic!() };
    assert!(text.starts_with(TRUNCATION_MARKER_PREFIX));
    let guard = ledger.get();
    let output = &guard.output;
    assert!(output.limit_exceeded());
    assert_eq!(output.used_bytes(), 1024);
}

#[test]
fn console_is_locked_frozen_and_survives_overwritten_builtins() {
    let outcome = run(r#"
        const d = Object.getOwnPropertyDescriptor(globalThis, "console");
        const shape = [typeof console, d.writable, d.configurable, d.enumerable, Object.isFrozen(console)];
        console = null;
        try { console.log = () => {}; } catch (e) {}
        try { Object.defineProperty(console, "info", { value: 1 }); } catch (e) {}
        const afterAssign = [typeof console.log, typeof console.info, delete globalThis.console];
        Object.prototype.toJSON = function () { return "hijacked"; };
        Array.prototype.join = () => { throw new Error("join ran"); };
        String.prototype.slice = () => { throw new Error("slice ran"); };
        String.prototype.charCodeAt = () => { throw new Error("charCodeAt ran"); };
        String.prototype.toWellFormed = () => { throw new Error("toWellFormed ran"); };
        Number.prototype.toString = () => { throw new Error("toString ran"); };
        BigInt.prototype.toString = () => { throw new Error("bigint toString ran"); };
        Function.prototype.call = () => { throw new Error("call ran"); };
        Function.prototype.apply = () => { throw new Error("apply ran"); };
        Reflect.apply = () => { throw new Error("Reflect.apply ran"); };
        globalThis.JSON = { stringify() { throw new Error("stringify ran"); }, parse() { throw new Error("parse ran"); } };
        globalThis.String = null; globalThis.Number = null; globalThis.parseInt = null; globalThis.parseFloat = null;
        Object.getOwnPropertyDescriptor = null; Object.prototype.toString = () => "[object Error]";
        const valueOfRan = { valueOf() { throw new Error("valueOf ran"); } };
        console.log("%s=%d %i %f", "n", 3, "12px", "2.5", { a: [1] }, 4n, new Date(0), function f() {}, valueOfRan);
        console.log("%d", valueOfRan);
        return { shape, afterAssign };
        "#);
    let v = outcome.result.expect("cell completes");
    assert_eq!(v["shape"], json!(["object", false, false, false, true]));
    assert_eq!(v["afterAssign"], json!(["function", "function", false]));
    assert_eq!(
        outcome.output,
        vec![
            CodeModeOutput::Text {
                text: r#"n=3 12 2.5 {"a":[1]} 4n 1970-01-01T00:00:00.000Z [Function: f] {}"#.into()
            },
            CodeModeOutput::Text { text: "NaN".into() },
        ]
    );
}
