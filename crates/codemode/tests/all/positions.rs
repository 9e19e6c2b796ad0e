//! Error positions and thrown values as the model sees them: one cell wrapper on its own line, one
//! map from engine positions to the user's (JavaScript and TypeScript), and thrown non-Errors
//! described by their own text.

use codemode::{ExecInput, Language};

use crate::support::{error, fixture, scope, value};

async fn ts_error(f: &crate::support::Fixture, code: &str) -> String {
    error(&f.cm.exec(&scope(), ExecInput::code(code).with_language(Language::TypeScript)).await)
}

/// The `(at file:line:column)` suffix of an error message.
fn position(message: &str) -> &str {
    message.rsplit_once(" (at ").map_or("", |(_, p)| p.trim_end_matches(')'))
}

#[tokio::test]
async fn the_same_statement_has_the_same_column_on_line_one_and_line_two() {
    let f = fixture(serde_json::json!({}));
    let first = f.run("let a=1;null.f").await;
    let second = f.run("\nlet a=1;null.f").await;
    let (p1, p2) = (position(&error(&first)).to_owned(), position(&error(&second)).to_owned());
    let col1 = p1.strip_prefix("user.js:1:").unwrap_or_else(|| panic!("{}", error(&first)));
    let col2 = p2.strip_prefix("user.js:2:").unwrap_or_else(|| panic!("{}", error(&second)));
    assert_eq!(col1, col2, "{p1} vs {p2}");
    assert!(col1.parse::<u32>().unwrap() >= 9, "{p1}: the error is in `null.f`, after `let a=1;`");
    // TypeScript, with a type erased before the error.
    let ts1 = ts_error(&f, "let a: number=1;null.f").await;
    let ts2 = ts_error(&f, "\nlet a: number=1;null.f").await;
    let c1 = position(&ts1).strip_prefix("user.ts:1:").unwrap_or_else(|| panic!("{ts1}")).to_owned();
    let c2 = position(&ts2).strip_prefix("user.ts:2:").unwrap_or_else(|| panic!("{ts2}")).to_owned();
    assert_eq!(c1, c2);
    assert_eq!(c1.parse::<u32>().unwrap(), col1.parse::<u32>().unwrap() + 8, "`: number` is 8 characters");
}

#[tokio::test]
async fn an_error_at_line_one_column_one_keeps_its_column() {
    let f = fixture(serde_json::json!({}));
    let r = f.run("undefinedThing()").await;
    assert_eq!(error(&r), "ReferenceError: undefinedThing is not defined (at user.js:1:1)");
    let r = f.run("undefinedThing()\n").await;
    assert_eq!(error(&r), "ReferenceError: undefinedThing is not defined (at user.js:1:1)");
    let r = f.run("1;\nundefinedThing()").await;
    assert_eq!(error(&r), "ReferenceError: undefinedThing is not defined (at user.js:2:1)");
    assert_eq!(
        ts_error(&f, "undefinedThing<number>()").await,
        "ReferenceError: undefinedThing is not defined (at user.ts:1:1)"
    );
}

#[tokio::test]
async fn positions_after_an_await_and_in_nested_frames_map_the_same_way() {
    let f = fixture(serde_json::json!({}));
    for (code, at) in [
        ("await 0; undefinedThing()", "user.js:1:10"),
        ("await 0;\n  undefinedThing()", "user.js:2:3"),
        ("function f() { return undefinedThing() }\nawait 0; f()", "user.js:1:23"),
        ("const g = async () => { await 0; undefinedThing() }\nawait g()", "user.js:1:34"),
    ] {
        let r = f.run(code).await;
        assert_eq!(position(&error(&r)), at, "{code}: {}", error(&r));
    }
    let ts =
        ts_error(&f, "const g = async (): Promise<void> => { await 0; undefinedThing() }\nawait g()").await;
    assert_eq!(position(&ts), "user.ts:1:49", "{ts}");
}

#[tokio::test]
async fn thrown_non_errors_keep_their_constructor_name_and_own_text() {
    let f = fixture(serde_json::json!({}));
    let test262 = "class Test262Error { constructor(m) { this.message = m } toString() { return 'Test262Error: ' + \
                   this.message } }\nthrow new Test262Error('boom')";
    assert_eq!(error(&f.run(test262).await), "Uncaught Test262Error: boom");
    assert_eq!(error(&f.run("throw {code: 1}").await), "Uncaught {\"code\":1}");
    assert_eq!(
        error(&f.run("class Oops { constructor() { this.a = 1 } }\nthrow new Oops()").await),
        "Uncaught Oops {\"a\":1}"
    );
    assert_eq!(error(&f.run("throw 'plain'").await), "Uncaught plain");
    // An array has its own `toString()` (from `Array.prototype`, not `Object.prototype`).
    assert_eq!(error(&f.run("throw [1, 2]").await), "Uncaught 1,2");
}

#[tokio::test]
async fn returning_a_value_looks_up_no_promise_constructor() {
    // test262's tick-count tests patch `Promise.prototype.constructor`: the cell wrapper must not
    // add an `await` (or `.then`) of its own that such code could observe.
    let f = fixture(serde_json::json!({}));
    let r = f
        .run(
            "let n = 0;\nObject.defineProperty(Promise.prototype, 'constructor', { get() { n++; return Promise; }, \
             configurable: true });\nconst p = (async () => 1)();\nawait p;\nconst seen = n;\nreturn { seen, get \
             later() { return n; } };",
        )
        .await;
    assert_eq!(value(&r), serde_json::json!({ "seen": 1, "later": 1 }), "{r:?}");
}
