//! `as`/`satisfies` and type arguments followed by an operator group as in TypeScript, where oxc's
//! parser differs from tsc's (an operator after `a + b as T`, `x as T ? await y : z`,
//! `x as T <= y`, `f<T> in x`). Values are checked against typescript@5 by `cargo xtask ts-oracle`
//! (fixtures 106-110); these tests pin the output text, positions and the bound.

use codemode_ts::{DiagnosticKind, MAX_REGROUP_PARSES};

use crate::ts;

fn code(source: &str) -> String {
    let out = ts(source);
    assert!(out.is_ok(), "{source}: {}", out.error_message());
    out.code
}

#[test]
fn an_operator_after_an_assertion_applies_to_the_whole_assertion() {
    assert_eq!(code("return 1 + 2 as number * 3"), "return (1 + 2          ) * 3");
    assert_eq!(code("return a - b satisfies T ** 2"), "return (a - b            ) ** 2");
    assert_eq!(code("f(a << b as any + 1, 2)"), "f((a << b       ) + 1, 2)");
    assert_eq!(
        code("return a + b as T * c as U ** d"),
        "return ((a + b     ) * c     ) ** d",
        "each assertion takes what follows it, inside out"
    );
    // Below a lower operator oxc's parse succeeds but groups differently; tsc's grouping wins.
    assert_eq!(code("return 0 || 1 + 2 as number * 3"), "return 0 || (1 + 2          ) * 3");
    assert_eq!(code("return x == a + b as T * c"), "return x == (a + b     ) * c");
    assert_eq!(code("return 5 > 1 + a as number * 3"), "return (5 > 1 + a          ) * 3");
}

#[test]
fn operators_that_do_not_regroup_are_left_alone() {
    assert_eq!(code("return a == b as number - 1"), "return a == b           - 1", "`as` binds to `b`");
    assert_eq!(code("return a * b as number + c"), "return a * b           + c");
    assert_eq!(code("return a + b as number <= c"), "return a + b           <= c");
}

#[test]
fn a_conditional_after_an_assertion_may_start_with_await_or_yield() {
    assert_eq!(code("return x as T ? await y : z"), "return (x     ) ? await y : z");
    assert_eq!(code("return a || b satisfies T ? await y : z"), "return a || (b            ) ? await y : z");
    assert_eq!(
        code("return x as T ?\n  await y :\n  z"),
        "return (x     ) ?\n  await y :\n  z",
        "with the `?` ending a line oxc ends the statement there; the repair still finds it"
    );
    assert_eq!(
        code("function* g() { return x as T ? yield 1 : 2 }"),
        "function* g() { return (x     ) ? yield 1 : 2 }"
    );
}

#[test]
fn less_equal_after_a_type_reference_is_the_operator() {
    assert_eq!(code("return n as T <= 3"), "return (n     ) <= 3");
    assert_eq!(code("return n as const <= 3"), "return (n         ) <= 3");
}

#[test]
fn type_arguments_followed_by_in_end_the_instantiation_expression() {
    assert_eq!(code("return f<number> in o"), "return (f        ) in o");
    assert_eq!(code("return k + o.f<T> in o"), "return k + (o.f   ) in o");
}

#[test]
fn a_statement_starting_with_a_regrouped_operand_gets_a_semicolon() {
    // Without it, `rec(1)` would call its result with the parenthesized operand.
    assert_eq!(code("rec(1)\nrec(2) + 1 as number * rec(3)"), "rec(1)\n;(rec(2) + 1          ) * rec(3)");
    assert_eq!(code("if (a) a + 1 as number * 3"), "if (a) (a + 1          ) * 3", "not in a statement list");
}

#[test]
fn what_tsc_rejects_stays_rejected() {
    for source in [
        "return x as T < y",
        "return a + b\nas T * c",
        "return f<number>!",
        "return x as T ? -y : z",
        "let v = 1 + 2 as number *",
    ] {
        let out = ts(source);
        assert!(!out.is_ok(), "{source} should be rejected like tsc rejects it");
        assert_eq!(out.diagnostics[0].kind, DiagnosticKind::Syntax, "{source}");
    }
}

#[test]
fn positions_after_inserted_parentheses_map_to_the_user_source() {
    let source = "const v = 1 + 2 as number * 3; null.f";
    let out = ts(source);
    assert_eq!(out.code, "const v = (1 + 2          ) * 3; null.f");
    let user = source.find("null").unwrap() as u32 + 1;
    let engine = out.code.find("null").unwrap() as u32 + 1;
    assert_eq!(engine, user + 2);
    assert_eq!(out.map_position(1, engine), Some((1, user)));
    assert_eq!(out.map_position(1, 11), Some((1, 11)), "the inserted `(` maps to where it was inserted");
    assert_eq!(out.map_position(1, 12), Some((1, 11)), "`1` is the user's column 11");
    // Diagnostics found after the repair point into the user's source too.
    let bad = ts("const v = 1 + 2 as number * 3; require('x')");
    assert_eq!(bad.diagnostics[0].kind, DiagnosticKind::ModuleSyntax);
    assert_eq!((bad.diagnostics[0].line, bad.diagnostics[0].column), (1, 32));
    assert!(bad.diagnostics[0].code_frame.contains("1 + 2 as number * 3"), "the frame shows the user's text");
    let second_line = ts("x = 1\ny = a + b as T * c; require('x')");
    assert_eq!((second_line.diagnostics[0].line, second_line.diagnostics[0].column), (2, 21));
}

#[test]
fn up_to_the_bound_of_rejected_forms_are_repaired_in_one_cell() {
    let cell = |n: usize| (0..n).map(|i| format!("v{i} = {i} + 2 as number * 3\n")).collect::<String>();
    let at_bound = ts(&cell(MAX_REGROUP_PARSES - 1));
    assert!(at_bound.is_ok(), "{}", at_bound.error_message());
    assert_eq!(
        at_bound.code.lines().last(),
        Some(format!("v{0} = ({0} + 2          ) * 3", MAX_REGROUP_PARSES - 2).as_str())
    );
    // Past it the cell is reported as oxc parses it: a syntax error at the first form.
    let past = ts(&cell(MAX_REGROUP_PARSES));
    assert!(!past.is_ok());
    assert_eq!(past.diagnostics[0].kind, DiagnosticKind::Syntax);
    assert_eq!(past.diagnostics[0].line, 1);
}
