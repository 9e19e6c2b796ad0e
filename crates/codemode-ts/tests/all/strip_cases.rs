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
    assert_eq!(
        out,
        r#"var E; (function (E) { E[E["A"] = 0] = "A"; E["B"] = "b"; E[E["C"] = 2] = "C"; })(E || (E = {}));"#
    );
    // Names that are not identifiers, keywords and prototype-chain names are plain keys.
    let out = code("enum K { 'a-b' = 1, default = 2, await, constructor = 1, prototype = constructor + 1 }");
    for part in [
        r#"K[K["a-b"] = 1] = "a-b";"#,
        r#"K[K["default"] = 2] = "default";"#,
        r#"K[K["await"] = 3] = "await";"#,
    ] {
        assert!(out.contains(part), "{out}");
    }
    assert!(out.contains(r#"K[K["prototype"] = 2] = "prototype";"#), "{out}");
    // A second declaration merges: no second `var`, and it sees the first one's members.
    let out = code("const X = 10\nenum A { X = 1 }\nenum A { Y = X + 1 }");
    assert!(out.contains(r#";(function (A) { A[A["Y"] = 2] = "Y"; })(A || (A = {}));"#), "{out}");
    assert_eq!(out.matches("var A;").count(), 1, "{out}");
    // Non-constant initializers stay as written, with members qualified; the reverse mapping
    // follows TypeScript's syntactic rule.
    let out = code("enum E { a = 0, x = a.toString(), s = `t${x}`, t = 's' + a }");
    assert!(out.contains(r#"E[E["x"] = E.a.toString()] = "x";"#), "{out}");
    assert!(out.contains(r#"E["s"] = `t${E.x}`;"#), "{out}");
    assert!(out.contains(r#"E["t"] = "s0";"#), "{out}");
    // Inside a block, `let`, as TypeScript emits.
    assert!(code("{ enum B { X } }").contains("let B; (function (B) {"));
}

#[test]
fn an_auto_accessor_becomes_storage_and_accessors() {
    let out = code("class A { accessor x: number = 1; static accessor y = 2 }");
    assert_eq!(
        out,
        "class A { #x_accessor_storage = 1; get x() { return this.#x_accessor_storage; } set x(value) { \
         this.#x_accessor_storage = value; } static #y_accessor_storage = 2; static get y() { return \
         A.#y_accessor_storage; } static set y(value) { A.#y_accessor_storage = value; } }"
    );
    let out = ts("class A { accessor [k] = 1 }");
    assert!(out.error_message().contains("computed name"), "{}", out.error_message());
}

#[test]
fn anonymous_class_expressions_keep_their_keyword() {
    assert_eq!(code("const C = class implements I {}"), "const C = class              {}");
    assert_eq!(code("() => class implements I, J { v = 2 }"), "() => class                 { v = 2 }");
    assert_eq!(code("(class extends B implements I {})"), "(class extends B              {})");
}

#[test]
fn erased_types_never_regroup_operators() {
    assert_eq!(code("2 ** 3 as number ** 2"), "(2 ** 3)           ** 2");
    assert_eq!(code("a - b as number - c"), "a - b           - c", "left-associative: no regrouping");
    assert_eq!(code("a - (b as number) - c"), "a - (b          ) - c");
    assert_eq!(code("a ** b as number"), "a ** b          ");
    assert_eq!(code("a * b as number + c"), "a * b           + c");
    assert_eq!(code("x ** y! ** z"), "x ** y  ** z");
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
