//! Preparing a cell: deep nesting fails cleanly through `exec` (on a small-stack runtime thread),
//! preparation runs off the async workers, counts against `timeoutMs` and honours an abort.

use std::time::{Duration, Instant};

use codemode::{AbortSignal, CodeModeErrorCode, CodeModeResult, ExecInput, Language};
use serde_json::json;

use crate::support::*;

fn js(code: String) -> ExecInput {
    ExecInput::code(code)
}

fn ts(code: String) -> ExecInput {
    ExecInput::code(code).with_language(Language::TypeScript)
}

fn repros() -> Vec<(&'static str, ExecInput)> {
    vec![
        ("1,400 [", js(format!("return {}{};", "[".repeat(1400), "]".repeat(1400)))),
        ("2,000 (", js(format!("return {}1{};", "(".repeat(2000), ")".repeat(2000)))),
        ("2,000 {a:", js(format!("return {}1{};", "{a:".repeat(2000), "}".repeat(2000)))),
        ("2,000 f(", js(format!("return {}1{};", "f(".repeat(2000), ")".repeat(2000)))),
        ("2,000 templates", js(format!("return {}1{};", "`${".repeat(2000), "}`".repeat(2000)))),
        (
            "2,000 Array<",
            ts(format!("let x: {}number{} = []; return x;", "Array<".repeat(2000), ">".repeat(2000))),
        ),
        ("4,000 blocks", js(format!("{}{}", "{".repeat(4000), "}".repeat(4000)))),
        ("4,000 arrows", js(format!("return {}1;", "a=>".repeat(4000)))),
        ("4,000 ternaries", js(format!("return {}1;", "a?1:".repeat(4000)))),
        ("20,000 1+", js(format!("return {}1;", "1+".repeat(20_000)))),
        ("7,000 (", js(format!("return {}1{};", "(".repeat(7000), ")".repeat(7000)))),
        ("7,000 ( as TypeScript", ts(format!("return {}1{};", "(".repeat(7000), ")".repeat(7000)))),
    ]
}

/// `#[tokio::test]` runs on the test thread (2 MiB of stack): preparing any of these there would
/// overflow it, as it overflowed the async workers of `codemode session` and `serve`.
#[tokio::test]
async fn deep_cells_fail_with_invalid_input_and_the_next_exec_runs() {
    let f = fixture(json!({}));
    for (what, input) in repros() {
        let r = f.cm.exec(&scope(), input).await;
        assert_eq!(r.code(), Some(CodeModeErrorCode::InvalidInput), "{what}");
        assert!(error(&r).contains("nesting deeper than 1000 at 1:"), "{what}: {}", error(&r));
        assert_eq!(value(&f.run("return 40 + 2;").await), json!(42), "after {what}");
    }
}

#[tokio::test]
async fn cells_at_the_nesting_bound_run_in_the_guest() {
    let f = fixture(json!({ "timeoutMs": 10000 }));
    let at = [
        (format!("return {}{}.length;", "[".repeat(998), "]".repeat(998)), json!(1)),
        (format!("return {}1{};", "(".repeat(999), ")".repeat(999)), json!(1)),
        (format!("return {}1;", "1+".repeat(999)), json!(1000)),
        (format!("let a = 0; {}a = 7;{} return a;", "{".repeat(998), "}".repeat(998)), json!(7)),
    ];
    for (code, expected) in at {
        assert_eq!(value(&f.run(&code).await), expected);
    }
}

fn big_enum(members: usize) -> ExecInput {
    let body = (0..members).map(|i| format!("M{i}")).collect::<Vec<_>>().join(", ");
    ts(format!("enum E {{ {body} }}\nreturn E.M1;"))
}

/// 80,000 and 200,000 members on one line (the lowering was quadratic: 5.6 s and 31.7 s) under
/// `timeoutMs` 1000: each run completes or fails with `timeout`, and answers by the deadline
/// (with slack for a loaded machine), not after preparing for half a minute.
#[tokio::test]
async fn big_enums_finish_or_time_out_within_the_deadline() {
    let f = fixture(json!({ "timeoutMs": 1000 }));
    for members in [80_000, 200_000] {
        let started = Instant::now();
        let r = f.cm.exec(&scope(), big_enum(members)).await;
        let took = started.elapsed();
        match &r {
            CodeModeResult::Completed(_) => assert_eq!(value(&r), json!(1)),
            CodeModeResult::Failed(failed) => {
                assert_eq!(failed.code, Some(CodeModeErrorCode::Timeout), "{}", failed.error);
            }
            other => panic!("{:?}", other.to_json()),
        }
        assert!(took < Duration::from_secs(8), "{members} members answered after {took:?}");
    }
}

/// Preparation past `timeoutMs` fails as `timeout` with a message about preparing.
#[tokio::test]
async fn preparation_counts_against_the_timeout() {
    let f = fixture(json!({ "timeoutMs": 100 }));
    // A large cell: far more than 100 ms to parse and strip in any build.
    let body = (0..400_000).map(|i| format!("M{i} = {i}")).collect::<Vec<_>>().join(", ");
    let r = f.cm.exec(&scope(), ts(format!("enum E {{ {body} }}\nreturn E.M1;"))).await;
    assert_eq!(r.code(), Some(CodeModeErrorCode::Timeout), "{:?}", r.to_json());
    assert!(error(&r).contains("preparing the cell"), "{}", error(&r));
    assert!(error(&r).contains("timeoutMs (100 ms)"), "{}", error(&r));
    assert_eq!(value(&f.run("return 1;").await), json!(1));
}

/// On a single-threaded runtime: two big TypeScript cells (a million-member enum each, rejected
/// only after parsing, for the `export` at their end) are being prepared when a trivial cell is
/// sent 20 ms later; the trivial one is answered first. When preparation ran on the runtime's
/// thread, both big cells were prepared (and rejected) before the trivial one could even start.
#[tokio::test(flavor = "current_thread")]
async fn a_trivial_cell_is_not_blocked_behind_big_ones() {
    let f = fixture(json!({ "timeoutMs": 60000 }));
    let s = scope();
    let body = (0..1_000_000).map(|i| format!("M{i} = {i}")).collect::<Vec<_>>().join(", ");
    let big_cell = format!("enum E {{ {body} }}\nexport {{}};");
    let order = std::sync::Mutex::new(Vec::new());
    let big = |name: &'static str| {
        let (f, s, order, cell) = (&f, &s, &order, big_cell.clone());
        async move {
            let r = f.cm.exec(s, ts(cell)).await;
            order.lock().unwrap().push(name);
            r
        }
    };
    let trivial = async {
        tokio::time::sleep(Duration::from_millis(20)).await;
        let r = f.cm.exec(&s, ExecInput::code("return 'quick';")).await;
        order.lock().unwrap().push("trivial");
        r
    };
    let (a, b, t) = tokio::join!(big("big-1"), big("big-2"), trivial);
    assert_eq!(value(&t), json!("quick"));
    assert_eq!(order.lock().unwrap()[0], "trivial", "{:?}", order.lock().unwrap());
    for r in [a, b] {
        assert_eq!(r.code(), Some(CodeModeErrorCode::InvalidInput), "{}", r.to_json());
        assert!(error(&r).contains("export"), "{}", error(&r));
    }
}

/// An abort while the cell is being prepared ends the call at once with `aborted`.
#[tokio::test]
async fn an_abort_stops_waiting_for_preparation() {
    let f = fixture(json!({ "timeoutMs": 60000 }));
    let body = (0..400_000).map(|i| format!("M{i} = {i}")).collect::<Vec<_>>().join(", ");
    let signal = AbortSignal::new();
    let trigger = signal.clone();
    let s = scope();
    let started = Instant::now();
    let (r, _) =
        tokio::join!(f.cm.exec_with(&s, ts(format!("enum E {{ {body} }}\nreturn E.M1;")), signal), async {
            tokio::time::sleep(Duration::from_millis(30)).await;
            trigger.abort();
        });
    assert_eq!(r.code(), Some(CodeModeErrorCode::Aborted), "{:?}", r.to_json());
    assert_eq!(f.cm.run_count(), 0);
    assert_eq!(f.host.call_count(), 0);
    assert!(started.elapsed() < Duration::from_secs(20));
}

/// Deep nesting the guest parses itself (`eval`, `Function`, `JSON.parse`) is a catchable error
/// inside the guest, like deep recursion, and the run goes on.
#[tokio::test]
async fn deep_nesting_parsed_by_the_guest_is_a_catchable_error() {
    let f = fixture(json!({ "timeoutMs": 10000 }));
    let cases = [
        "eval('('.repeat(100000) + '1' + ')'.repeat(100000))",
        "new Function('return ' + '('.repeat(100000) + '1' + ')'.repeat(100000))",
        "eval('['.repeat(100000))",
        "eval('{'.repeat(100000) + '}'.repeat(100000))",
        "eval('a=>'.repeat(100000) + '1')",
        "JSON.parse('['.repeat(200000) + ']'.repeat(200000))",
        "JSON.parse('{\"a\":'.repeat(200000) + '1' + '}'.repeat(200000))",
    ];
    for case in cases {
        let code = format!(
            "try {{ {case}; return 'no error'; }} catch (e) {{ return [e.name, String(e.message)]; }}"
        );
        let r = f.run(&code).await;
        let v = value(&r);
        assert!(matches!(v[0].as_str(), Some("RangeError" | "SyntaxError" | "InternalError")), "{case}: {v}");
    }
    assert_eq!(value(&f.run("return 2;").await), json!(2));
}
