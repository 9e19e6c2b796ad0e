//! Diagnostics are data: kind, message, position in the user's source, a code frame.

use codemode_ts::{DiagnosticKind, TsError};

use crate::{js, ts};

#[test]
fn a_typescript_syntax_error_is_reported_with_position_and_frame() {
    let out = ts("const a: number = 1;\ninterface X {\n  x: number\n}\nconst b: = 2;\nreturn a;");
    assert!(!out.is_ok());
    assert!(out.code.is_empty(), "a cell with a syntax error never reaches the sandbox");
    assert_eq!(out.diagnostics.len(), 1);
    let d = &out.diagnostics[0];
    assert_eq!(d.kind, DiagnosticKind::Syntax);
    assert_eq!((d.line, d.column), (5, 10));
    insta::assert_snapshot!(out.error_message());
}

#[test]
fn typescript_sent_as_javascript_gets_a_hint() {
    let out = js("const n: number = 1;\nreturn n;");
    let d = &out.diagnostics[0];
    assert_eq!(d.kind, DiagnosticKind::Syntax);
    assert!(d.message.contains("\"language\": \"typescript\""), "{}", d.message);
    // Real JavaScript errors get no such hint.
    let out = js("const n = ;");
    assert!(!out.diagnostics[0].message.contains("typescript"));
}

#[test]
fn namespaces_with_values_are_unsupported_with_a_suggestion() {
    let out = ts("const a = 1;\nnamespace Util {\n  export const x = 1;\n}\nreturn Util.x;");
    let d = &out.diagnostics[0];
    assert_eq!(d.kind, DiagnosticKind::Unsupported);
    assert_eq!((d.line, d.column), (2, 1));
    assert!(d.message.contains("plain object"), "{}", d.message);
    let out = ts("module Legacy { export function f() {} }");
    assert_eq!(out.diagnostics[0].kind, DiagnosticKind::Unsupported);
    let out = ts("import Alias = Some.Thing;");
    assert_eq!(out.diagnostics[0].kind, DiagnosticKind::Unsupported);
}

#[test]
fn into_result_carries_the_rendered_message() {
    let err = js("import x from 'y'").into_result().expect_err("rejected");
    match err {
        TsError::InvalidInput { message, diagnostics } => {
            assert!(message.starts_with("user.js:1:1: An `import` declaration"), "{message}");
            assert_eq!(diagnostics.len(), 1);
        }
        other => panic!("unexpected {other:?}"),
    }
    assert!(ts("return 1 as number").into_result().is_ok());
}

#[test]
fn columns_count_characters_not_bytes() {
    let out = js("const s = 'héllo'; const t = ;");
    assert_eq!((out.diagnostics[0].line, out.diagnostics[0].column), (1, 30));
}

#[test]
fn unterminated_input_is_a_syntax_error_not_a_panic() {
    for source in ["`", "/*", "'abc", "class {", "function (", "<T>(", "enum", "a as", "x!"] {
        let out = ts(source);
        if !out.is_ok() {
            assert!(out.diagnostics.iter().all(|d| d.line >= 1 && d.column >= 1), "{source}");
        }
    }
}

#[test]
fn decorators_are_unsupported_in_typescript_cells() {
    let out = ts("function d(c: any) { return c; }\n@d\nclass A {}\nreturn 1;");
    assert_eq!(out.diagnostics.len(), 1, "{out:?}");
    let d = &out.diagnostics[0];
    assert_eq!((d.kind, d.line, d.column), (DiagnosticKind::Unsupported, 2, 1));
    assert!(d.message.contains("Decorators are not supported"), "{}", d.message);
}

/// Found by `cargo xtask fuzz strip`: oxc's TypeScript parser accepts the invalid identifier escape
/// `\_`, its JavaScript parser does not. The stripped output is re-checked as JavaScript, so the cell
/// is rejected before it could reach the sandbox.
#[test]
fn typescript_whose_output_is_not_javascript_is_rejected_before_the_sandbox() {
    let out = ts("const ok = 1;\np\\_<<4");
    assert!(!out.is_ok());
    assert!(out.code.is_empty());
    let d = &out.diagnostics[0];
    assert_eq!(d.kind, DiagnosticKind::Syntax);
    assert_eq!((d.line, d.column), (2, 3), "{}", d.message);
    assert!(!d.message.contains("send it with"), "{}", d.message);
}

#[test]
fn strict_mode_reserved_names_are_rejected_where_the_engine_would_reject_them() {
    // TypeScript emits `constructor(public) {}` as is; a class body is strict, so the engine
    // would fail the whole cell with a SyntaxError that points nowhere.
    let out = ts("class A {\n  constructor(public) {}\n}");
    assert!(!out.is_ok());
    let d = &out.diagnostics[0];
    assert_eq!((d.line, d.column), (2, 15), "{}", out.error_message());
    assert!(d.message.contains("`public` is a reserved word in strict-mode code"), "{}", d.message);
    let out = js("\"use strict\";\nvar eval = 1;");
    assert_eq!((out.diagnostics[0].line, out.diagnostics[0].column), (2, 5), "{}", out.error_message());
    // Sloppy code may use them: cells are not strict unless they say so.
    assert!(js("var public = 1; return public;").is_ok());
    assert!(ts("const f = (public: number) => public; return f(1);").is_ok());
}

#[test]
fn type_only_grammar_errors_that_tsc_accepts_are_accepted() {
    for source in [
        "type T<> = {}",
        "interface Foo<> {}",
        "function g<const const T>(x: T) { return x }",
        "function h<in out T>() {}",
    ] {
        assert!(ts(source).is_ok(), "{source}: {}", ts(source).error_message());
    }
    // `a ?? b && c`: TypeScript parses it, and emits the parentheses JavaScript needs.
    assert_eq!(ts("a ?? b && c").code, "a ?? (b && c)");
    // `??` and `||` share a precedence in TypeScript.
    assert_eq!(ts("a ?? b as any || c").code, "(a ?? b       ) || c");
}
