//! Early errors of the ECMAScript spec that TypeScript lets through and the engine refuses are
//! rejected before the cell runs, at the user's position; valid TypeScript whose declarations only
//! look duplicated (overloads, merging, types next to values) still runs.

use codemode_ts::DiagnosticKind;

use crate::ts;

/// The first diagnostic of a rejected TypeScript cell: (line, column, message).
fn rejected(source: &str) -> (u32, u32, String) {
    let out = ts(source);
    assert!(!out.is_ok(), "expected a rejection: {source}");
    let d = &out.diagnostics[0];
    assert_eq!(d.kind, DiagnosticKind::Syntax, "{}", out.error_message());
    assert!(out.error_message().starts_with(&format!("user.ts:{}:{}: ", d.line, d.column)));
    (d.line, d.column, d.message.clone())
}

#[test]
fn a_lexical_declaration_declared_twice_is_rejected_at_the_second() {
    let (line, column, message) = rejected("let x: number = 1; let x = 2; return x");
    assert_eq!((line, column), (1, 24));
    assert_eq!(message, "Syntax error: Identifier `x` has already been declared");
    // Positions are the user's after erased types and generated code on the line.
    let (line, column, _) =
        rejected("const a: Array<number> = [];\nclass C { constructor(private p: number) {} }; const C = 1");
    assert_eq!((line, column), (2, 54));
    for source in [
        "let x = 1;\nvar x = 2;",
        "const y = 1; function y() {}",
        "class B {} class B {}",
        "try {} catch (e) { let e = 1 }",
        "for (let i of []) { var i = 1 }",
        "let [u, u] = [1, 2]",
        "enum E { A } let E = 1",
        "class D { #x = 1; #x = 2 }",
    ] {
        let (_, _, message) = rejected(source);
        assert!(message.contains("has already been declared"), "{source}: {message}");
    }
}

#[test]
fn duplicate_parameters_are_rejected_where_strict_or_not_simple() {
    for (source, column) in [
        ("function f(a: number, a: number) { \"use strict\"; }", 23),
        ("class A { m(a: number, a) {} }", 24),
        ("const f = (a: string, a: string) => a", 23),
        ("function p({ a }, a) {}", 19),
        ("const o = { m(a, a) {} }", 18),
    ] {
        let (line, col, message) = rejected(source);
        assert_eq!((line, col), (1, column), "{source}: {message}");
        assert!(message.contains("`a` has already been declared"), "{source}: {message}");
    }
    // A sloppy function with simple parameters may repeat one (the last wins), as in Node.
    assert!(ts("function f(a, a) { return a }\nreturn f(1, 2)").is_ok());
}

#[test]
fn bad_labels_are_rejected() {
    let (line, column, message) = rejected("outer: for (;;) {\n  break inner;\n}");
    assert_eq!((line, column), (2, 9));
    assert!(message.contains("undefined label"), "{message}");
    let (_, _, message) = rejected("for (const n of [1]) { continue missing; }");
    assert!(message.contains("undefined label"), "{message}");
    // A label does not reach into a function.
    let (_, _, message) = rejected("a: for (;;) { (() => { break a; })(); }");
    assert!(message.contains("undefined label"), "{message}");
    let (line, column, message) = rejected("a: { a: {} }");
    assert_eq!((line, column), (1, 6));
    assert!(message.contains("Label `a` has already been declared"), "{message}");
    let (_, _, message) = rejected("b: { for (;;) { continue b; } }");
    assert!(message.contains("continue"), "{message}");
    assert!(ts("a: for (;;) { b: for (;;) { continue a; } }\nlabel: { break label; }\nreturn 1").is_ok());
}

#[test]
fn other_early_errors_are_rejected() {
    for (source, needle) in [
        ("return ({ __proto__: 1, __proto__: 2 })", "`__proto__`"),
        ("const g = () => new.target", "new.target"),
        ("return super.x", "super"),
        ("\"use strict\";\ndelete x;", "Delete of an unqualified identifier"),
        ("class D { constructor() {} constructor() {} }", "Multiple constructor implementations"),
        ("\"use strict\"; return 010", "octal"),
        ("return /(/.test(\"x\")", "Invalid regular expression"),
        ("return /a/uv", "regular expression flags"),
    ] {
        let (_, _, message) = rejected(source);
        assert!(message.contains(needle), "{source}: {message}");
    }
}

#[test]
fn typescript_that_only_looks_duplicated_still_runs() {
    for source in [
        // Overload signatures are erased.
        "function f(x: number): number;\nfunction f(x: string): string;\nfunction f(x: any) { return x }\nreturn f(1)",
        "class K { m(x: number): void; m(x: any) {} }\nreturn new K()",
        // Merged enums are `var`s; a type-only namespace is erased.
        "enum E { A = 1 }\nenum E { B = 2 }\nreturn E.B",
        "enum F { A }\nnamespace F { export type T = number }\nreturn F.A",
        "namespace N { export type X = number }\nconst N = 1; return N",
        // A type and a value of the same name.
        "interface P { x: number }\nconst P = 1\nreturn P",
        "type T = number; const T = 1; return T",
        "interface Q { a: number }\ninterface Q { b: number }\nclass Q {}\nreturn new Q()",
        "declare let z: number; let z2 = 1; return z2",
        // Redeclarations sloppy scripts allow.
        "var v = 1; var v = 2; return v",
        "function h() { return 1 }\nfunction h() { return 2 }\nreturn h()",
        "{ function k() {} function k() {} }\nreturn 1",
        "var w = 1; function w2() { var w = 2; let w3 = w; return w3 }\nreturn w2()",
        "let a = 1; { let a = 2 } return a",
        "({ __proto__: a, __proto__: b } = { }); var a, b; return 1",
        "function nt() { return new.target }\nreturn ({ m() { return super.toString } }).m() !== undefined",
        "return 010",
        "return [/{/, /a{/, /]/, /\\a/, /[\\d-a]/, /\\1(a)/, /\\8/, /\\p{L}/u, /[\\p{L}--[a-z]]/v].length",
        "const r = await Promise.resolve(1); return r",
        "return arguments.length",
    ] {
        let out = ts(source);
        assert!(out.is_ok(), "{source}: {}", out.error_message());
    }
}

/// A cell that closes the sandbox's wrapper (`0, async function () {` ... `}()`) early, in either
/// the wrapper's form or the older parenthesized one, would run code outside the cell's function:
/// it is refused, and cells that only look like the wrapper's text still run.
#[test]
fn a_cell_that_closes_the_wrapper_early_is_refused() {
    for source in [
        "}(); globalThis.escaped = 1; 0, async function () {",
        "}(), async function () {",
        "})(); (async function () {",
    ] {
        let (_, _, message) = rejected(source);
        assert!(message.starts_with("Syntax error"), "{source}: {message}");
    }
    for source in ["return 0, async function () {}();", "const f = async function () {}; return f() && 0;"] {
        assert!(ts(source).is_ok(), "{source}: {}", ts(source).error_message());
    }
}
