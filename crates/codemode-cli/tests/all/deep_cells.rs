//! Deeply nested cells sent to `codemode session`: each is answered with `invalid_input` and the
//! process keeps answering (it used to die of a stack overflow on an async worker).

use serde_json::{Value, json};

use crate::session::Session;

fn repros() -> Vec<(&'static str, &'static str, String)> {
    vec![
        ("1,400 [", "javascript", format!("return {}{};", "[".repeat(1400), "]".repeat(1400))),
        ("2,000 (", "javascript", format!("return {}1{};", "(".repeat(2000), ")".repeat(2000))),
        ("2,000 {a:", "javascript", format!("return {}1{};", "{a:".repeat(2000), "}".repeat(2000))),
        ("2,000 f(", "javascript", format!("return {}1{};", "f(".repeat(2000), ")".repeat(2000))),
        ("2,000 templates", "javascript", format!("return {}1{};", "`${".repeat(2000), "}`".repeat(2000))),
        (
            "2,000 Array<",
            "typescript",
            format!("let x: {}number{} = []; return x;", "Array<".repeat(2000), ">".repeat(2000)),
        ),
        ("4,000 blocks", "javascript", format!("{}{}", "{".repeat(4000), "}".repeat(4000))),
        ("4,000 arrows", "javascript", format!("return {}1;", "a=>".repeat(4000))),
        ("4,000 ternaries", "javascript", format!("return {}1;", "a?1:".repeat(4000))),
        ("20,000 1+", "javascript", format!("return {}1;", "1+".repeat(20_000))),
        ("7,000 (", "typescript", format!("return {}1{};", "(".repeat(7000), ")".repeat(7000))),
    ]
}

#[test]
fn the_session_survives_every_deep_cell_and_answers_the_next_request() {
    let mut session = Session::start(None);
    let mut ask = |id: usize, input: Value| -> Value {
        session.send(
            json!({ "id": id, "op": "exec", "scope": { "session": "s1", "run": "r1" }, "input": input }),
        );
        session.answer(json!(id))
    };
    for (i, (what, language, code)) in repros().into_iter().enumerate() {
        let answer = ask(2 * i, json!({ "code": code, "language": language }));
        let result = &answer["result"];
        assert_eq!(result["status"], json!("failed"), "{what}: {answer}");
        assert_eq!(result["code"], json!("invalid_input"), "{what}: {answer}");
        let message = result["error"].as_str().or_else(|| result["message"].as_str()).unwrap_or_default();
        assert!(message.contains("nesting deeper than 1000 at 1:"), "{what}: {answer}");
        let next = ask(2 * i + 1, json!({ "code": "return 40 + 2;" }));
        assert_eq!(next["result"]["status"], json!("completed"), "after {what}: {next}");
        assert_eq!(next["result"]["value"], json!(42), "after {what}: {next}");
    }
    // Exits 0 once stdin closes.
    session.close();
}
