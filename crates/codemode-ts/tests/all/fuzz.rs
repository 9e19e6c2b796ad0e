//! Stable-Rust driver for `codemode_ts::fuzz::check_strip`: pseudo-random bytes plus token soup
//! that is likely to parse, so the stripping paths are exercised, not only the error paths.

use codemode_core::fuzz::XorShift;
use codemode_ts::fuzz::check_strip;

/// Iterations per randomized test: 3,000 by default, more with `CODEMODE_FUZZ_ITERATIONS`.
fn iterations() -> usize {
    std::env::var("CODEMODE_FUZZ_ITERATIONS").ok().and_then(|v| v.parse().ok()).unwrap_or(3000)
}

const TOKENS: &[&str] = &[
    "const ",
    "let ",
    "x",
    "y",
    " = ",
    "1",
    "'s'",
    ";",
    "\n",
    ": number",
    ": string[]",
    " as any",
    " satisfies T",
    "!",
    "?",
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    "<T>",
    "<T,>",
    " => ",
    "function ",
    "class ",
    "interface I ",
    "type T = ",
    "enum E ",
    "namespace N ",
    "declare ",
    "abstract ",
    "private ",
    "public ",
    "readonly ",
    "constructor",
    "return ",
    "await ",
    "async ",
    "import ",
    "export ",
    "require(",
    "import(",
    "`",
    "${",
    "//",
    "/*",
    "*/",
    "/re/",
    ", ",
    ".",
    "this",
    "super()",
    "extends ",
    "implements ",
    "new ",
    "?.",
    "??",
    " * ",
    " + ",
    " ** ",
    " <= ",
    " in ",
    "f<T>",
    " as T",
    "\u{2028}",
    "é",
    "\r\n",
    "#!",
    "@dec ",
];

#[test]
fn random_bytes_never_panic() {
    let mut rng = XorShift::new(XorShift::DEFAULT_SEED);
    for _ in 0..iterations() {
        let len = rng.below(64);
        let data: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
        check_strip(&data);
    }
}

#[test]
fn token_soup_never_panics_and_keeps_lines() {
    let mut rng = XorShift::new(0xD1B5_4A32_D192_ED03);
    let mut accepted = 0;
    let total = iterations();
    for _ in 0..total {
        let n = 1 + rng.below(24);
        let source: String = (0..n).map(|_| rng.pick(TOKENS)).collect();
        check_strip(source.as_bytes());
        accepted += usize::from(crate::ts(&source).is_ok());
    }
    eprintln!("token soup: {accepted} of {total} accepted as TypeScript");
    assert!(
        accepted >= total / 60,
        "the soup must exercise stripping, not only errors ({accepted} accepted)"
    );
}

#[test]
fn corpus_like_cases() {
    for case in [
        "",
        "return 1",
        "#!/usr/bin/env node\nreturn 1",
        "class A { constructor(private x: number) { super(); } }",
        "enum E {}",
        "enum E { A = 'x', B }",
        "const f = (a): {\n} => a",
        "x as T\n(y)",
        "1 + 2 as number * 3",
        "x\n1 + 2 as T ** 3 as U * 4",
        "0 || a + b as T * c + d as U ** e",
        "x as T ? await y : z as U ? await w : v",
        "x as T <= y as U <= z",
        "f<T> in o in p",
        "a + b as T *",
        "x as T ? await",
        // A syntax error reported inside a multi-byte character.
        "; number * super()`${}?;<T,> in import private constructorf<T>extends é",
        "\u{feff}const a: number = 1",
        "let a = 1\u{2028}const b: string = ''",
    ] {
        check_strip(case.as_bytes());
    }
    let fixtures = std::path::PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"))
        .join("tests/fixtures");
    for entry in std::fs::read_dir(fixtures).expect("fixtures") {
        let bytes = std::fs::read(entry.expect("entry").path()).expect("fixture");
        check_strip(&bytes);
    }
}

/// Valid TypeScript statements, joined at random with and without semicolons, so that the
/// blanking meets its neighbours in every order (automatic semicolon insertion hazards).
const STATEMENTS: &[&str] = &[
    "const a: number = 1",
    "let b = c as unknown as string",
    "x = y satisfies Z",
    "interface I { a: string }",
    "type T<U> = U[]",
    "enum E { A, B = 'b' }",
    "declare const d: number",
    "function f<T>(this: W, a?: T): T { return a! }",
    "function g(a: string): void",
    "class K<T> extends Base<T> implements I { private x?: T; declare y: number; constructor(public z: T) { super() } m?(): void }",
    "abstract class Q { abstract q(): void; [k: string]: unknown }",
    "const h = async <T,>(v: T): Promise<T> => v",
    "const arrow = (p: number): {\n  r: number\n} => ({ r: p })",
    "(w as any).v = 1",
    "[1, 2].forEach((n: number) => n)",
    "`tpl`",
    "(paren)",
    "obj!.prop![0]!",
    "namespace OnlyTypes { export type X = 1 }",
    "import type { A } from 'a'",
    "export type { A }",
    "let u!: string",
    "for (const [k, v] of Object.entries(o) as [string, number][]) {}",
    "label: for (;;) break label",
    "return <any>r",
];

#[test]
fn statement_soup_strips_to_valid_javascript() {
    let mut rng = XorShift::new(0x2545_F491_4F6C_DD1D);
    let separators = ["\n", ";\n", "; ", "\n\n"];
    let mut accepted = 0;
    let total = iterations() / 2;
    for _ in 0..total {
        let n = 1 + rng.below(6);
        let mut source = String::new();
        for i in 0..n {
            if i > 0 {
                source.push_str(rng.pick(&separators));
            }
            source.push_str(rng.pick(STATEMENTS));
        }
        check_strip(source.as_bytes());
        accepted += usize::from(crate::ts(&source).is_ok());
    }
    eprintln!("statement soup: {accepted} of {total} accepted as TypeScript");
    assert!(accepted >= total * 2 / 3, "most statement soups are valid TypeScript ({accepted} accepted)");
}

/// `check_prepare` on random nesting recipes: deep and flat, expressions and statements, within
/// and past the bound. Counts both outcomes so the check cannot pass by rejecting everything.
#[test]
fn nesting_recipes_are_bounded_or_shallow() {
    let mut rng = XorShift::new(0x9E37_79B9_7F4A_7C15);
    let (mut too_deep, mut parsed) = (0, 0);
    let total = (iterations() / 10).max(100);
    for _ in 0..total {
        let len = 1 + 2 * rng.below(6);
        let data: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
        codemode_ts::fuzz::check_prepare(&data);
        let cell = codemode_ts::fuzz::nesting_cell(&data);
        let out = crate::js(&cell);
        too_deep +=
            usize::from(out.diagnostics.iter().any(|d| d.kind == codemode_ts::DiagnosticKind::TooDeep));
        parsed += usize::from(codemode_ts::tree_depth(&cell, codemode_ts::Language::JavaScript).is_some());
    }
    eprintln!("nesting recipes: {too_deep} too deep, {parsed} parsed, of {total}");
    assert!(too_deep >= total / 10 && parsed >= total / 10, "{too_deep} too deep, {parsed} parsed");
}

#[test]
fn nesting_recipes_from_the_issue() {
    for data in [
        &[0u8, 0, 0xFF, 0, 0xFF][..], // 1,660 + 1,660 `(`
        &[0, 6, 0xFF, 6, 0xFF],       // arrows
        &[1, 3, 0xFF, 3, 0xFF],       // else-if chain
        &[1, 6, 0xF8],                // do ... while
        &[0, 8, 0xF3, 4, 0xF3],       // 1+1+ and templates
    ] {
        codemode_ts::fuzz::check_prepare(data);
    }
}
