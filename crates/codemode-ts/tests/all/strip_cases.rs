//! Exact output for the constructs where blanking alone would change meaning or fail to parse.

use crate::{js, ts};

fn code(source: &str) -> String {
    let out = ts(source);
    assert!(out.is_ok(), "{source}: {}", out.error_message());
    out.code
}

#[test]
fn javascript_passes_through_unchanged() {
    let source = "const x = await tools.search('a'); // comment\nreturn x.length > 0 ? x : null;";
    assert_eq!(js(source).code, source);
}

#[test]
fn as_before_a_parenthesized_line_keeps_the_statement_break() {
    assert_eq!(code("const a = b as T\n(c)"), "const a = b;    \n(c)");
    assert_eq!(code("const a = b as T\n[1].map(f)"), "const a = b;    \n[1].map(f)");
    assert_eq!(code("const a = b satisfies T\n`x`"), "const a = b;           \n`x`");
    // No hazard: no blanking semicolon.
    assert_eq!(code("const a = b as T;\n(c)"), "const a = b     ;\n(c)");
    assert_eq!(code("const a = b as T\n+ 1"), "const a = b     \n+ 1");
}

#[test]
fn removed_statements_leave_an_empty_statement() {
    assert_eq!(code("let a = 1\ninterface I {}\n(a)"), "let a = 1\n;             \n(a)");
}

#[test]
fn a_multi_line_arrow_return_type_moves_the_parenthesis() {
    assert_eq!(code("const f = (a): {\n  x: 1\n} => a"), "const f = (a    \n      \n) => a");
}

#[test]
fn this_parameter_and_its_comma_are_removed() {
    assert_eq!(code("function f(this: W, a: number) {}"), "function f(         a        ) {}");
    assert_eq!(code("function f(this: W) {}"), "function f(       ) {}");
}

#[test]
fn markers_and_modifiers_are_blanked() {
    assert_eq!(code("function f(a?: number) {}"), "function f(a         ) {}");
    assert_eq!(code("let x!: number;"), "let x         ;");
    assert_eq!(
        code("class A { private readonly x?: string = 'a'; }"),
        "class A {                  x          = 'a'; }"
    );
    assert_eq!(
        code("class A { declare y: number; z!: number }"),
        "class A { ;                  z          }"
    );
    assert_eq!(
        code("abstract class A { abstract f(): void; g() {} }"),
        format!("         class A {{ ;{} g() {{}} }}", " ".repeat(18))
    );
    assert_eq!(
        code("class A<T> extends B<T> implements C, D<T> {}"),
        format!("class A    extends B{}{{}}", " ".repeat(23))
    );
    assert_eq!(code("x!.y = z!;"), "x .y = z ;");
    assert_eq!(code("const v = <any>w;"), "const v =      w;");
}

#[test]
fn overloads_and_declarations_are_removed() {
    assert_eq!(
        code("function f(a: string): void;\nfunction f(a: any) {}\ndeclare const g: number;"),
        format!(";{}\nfunction f(a     ) {{}}\n;{}", " ".repeat(27), " ".repeat(23))
    );
}

#[test]
fn enums_evaluate_like_typescript_shapes() {
    let out = code("enum E { A, B = 'b', C = A + 2 }");
    assert!(out.starts_with("var E; (function (E) {"), "{out}");
    assert!(out.contains("var A = $cm$m(\"A\", $cm$v + 1);"));
    assert!(out.contains("var B = $cm$m(\"B\", 'b');"));
    assert!(out.contains("var C = $cm$m(\"C\", A + 2);"));
    assert!(out.ends_with("})(E || (E = {}));"), "{out}");
    // Members whose names are not plain identifiers get no local binding.
    let out = code("enum K { 'a-b' = 1, default = 2 }");
    assert!(out.contains("$cm$m(\"a-b\", 1)") && out.contains("$cm$m(\"default\", 2)"), "{out}");
    assert!(!out.contains("var default"), "{out}");
    // Prototype-chain names are plain bindings here (unlike catalog names), so later members can
    // refer to them.
    let out = code("enum P { constructor = 1, prototype = constructor + 1, __proto__ = 3 }");
    assert!(out.contains("var constructor = $cm$m(\"constructor\", 1);"), "{out}");
    assert!(out.contains("var prototype = $cm$m(\"prototype\", constructor + 1);"), "{out}");
    assert!(out.contains("var __proto__ = $cm$m(\"__proto__\", 3);"), "{out}");
}

#[test]
fn parameter_properties_go_after_super() {
    let out =
        code("class B extends A {\n  constructor(private x: number) {\n    super();\n    go();\n  }\n}");
    assert_eq!(
        out,
        "class B extends A { x;\n  constructor(        x        ) {\n    super(); this.x = x;\n    go();\n  }\n}"
    );
}
