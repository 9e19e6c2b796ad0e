//! The nesting bound: every kind of deep nesting is rejected with its position before anything
//! recursive runs, at and past the bound; flat code of any length is not; preparing a cell at the
//! bound needs no more stack than a small thread has.

use codemode_ts::{DiagnosticKind, Language, MAX_NESTING, StripOptions, StripReturn, strip, tree_depth};

use crate::{js, ts};

const N: usize = MAX_NESTING as usize;

/// Cells nesting `n` levels, each level counted once by the measure.
fn one_per_level(n: usize) -> Vec<(&'static str, Language, String)> {
    use Language::{JavaScript as J, TypeScript as T};
    vec![
        ("[", J, format!("return {}{};", "[".repeat(n), "]".repeat(n))),
        ("(", J, format!("return {}1{};", "(".repeat(n), ")".repeat(n))),
        ("template", J, format!("return {}1{};", "`${".repeat(n), "}`".repeat(n))),
        ("block", J, format!("{}{}", "{".repeat(n), "}".repeat(n))),
        ("arrow", J, format!("return {}1;", "a=>".repeat(n))),
        ("1+1", J, format!("return {}1;", "1+".repeat(n))),
        ("!", J, format!("return {}1;", "!".repeat(n))),
        ("typeof", J, format!("return {}1;", "typeof ".repeat(n))),
        ("new", J, format!("return {}X;", "new ".repeat(n))),
        ("assignment", J, format!("let a; return {}1;", "a=".repeat(n))),
        ("member", J, format!("return a{};", ".b".repeat(n))),
        ("label", J, (0..n).map(|i| format!("l{i}:")).collect::<String>() + "1;"),
        ("**", J, format!("return {}1;", "2**".repeat(n))),
        ("as", T, format!("return 1{};", " as any".repeat(n))),
        ("Array<", T, format!("let x = {}1{}; return x;", "Array<".repeat(n - 1), ">".repeat(n - 1))),
    ]
}

fn assert_too_deep(what: &str, out: &StripReturn) {
    assert!(!out.is_ok(), "{what}: accepted");
    assert_eq!(out.diagnostics.len(), 1, "{what}: {:?}", out.diagnostics);
    let d = &out.diagnostics[0];
    assert_eq!(d.kind, DiagnosticKind::TooDeep, "{what}: {}", d.message);
    let at = format!("nesting deeper than {MAX_NESTING} at {}:{}", d.line, d.column);
    assert!(d.message.contains(&at), "{what}: {}", d.message);
    assert!(out.code.is_empty());
}

fn prepare(language: Language, source: &str) -> StripReturn {
    strip(source, &StripOptions::new(language))
}

#[test]
fn every_kind_of_nesting_passes_at_the_bound_and_fails_past_it() {
    for (what, language, at) in one_per_level(N) {
        let out = prepare(language, &at);
        assert!(out.is_ok(), "{what} at the bound: {}", out.error_message());
        let depth = tree_depth(&at, language).expect("parses");
        assert!(depth <= 4 * N + 16, "{what}: tree {depth} deep");
    }
    for (what, language, past) in one_per_level(N + 1) {
        assert_too_deep(what, &prepare(language, &past));
    }
}

#[test]
fn the_reported_repros_are_rejected_as_too_deep() {
    let cases: Vec<(&str, Language, String)> = vec![
        ("1,400 [", Language::JavaScript, format!("return {}{};", "[".repeat(1400), "]".repeat(1400))),
        ("2,000 (", Language::JavaScript, format!("return {}1{};", "(".repeat(2000), ")".repeat(2000))),
        ("2,000 {a:", Language::JavaScript, format!("return {}1{};", "{a:".repeat(2000), "}".repeat(2000))),
        ("2,000 f(", Language::JavaScript, format!("return {}1{};", "f(".repeat(2000), ")".repeat(2000))),
        (
            "2,000 templates",
            Language::JavaScript,
            format!("return {}1{};", "`${".repeat(2000), "}`".repeat(2000)),
        ),
        (
            "2,000 Array<",
            Language::TypeScript,
            format!("let x: {}number{} = []; return x;", "Array<".repeat(2000), ">".repeat(2000)),
        ),
        ("4,000 blocks", Language::JavaScript, format!("{}{}", "{".repeat(4000), "}".repeat(4000))),
        ("4,000 arrows", Language::JavaScript, format!("return {}1;", "a=>".repeat(4000))),
        ("4,000 ternaries", Language::JavaScript, format!("return {}1;", "a?1:".repeat(4000))),
        ("20,000 1+", Language::JavaScript, format!("return {}1;", "1+".repeat(20_000))),
        ("7,000 (", Language::JavaScript, format!("return {}1{};", "(".repeat(7000), ")".repeat(7000))),
        (
            "100,000 (",
            Language::TypeScript,
            format!("return {}1{};", "(".repeat(100_000), ")".repeat(100_000)),
        ),
        ("else if chain", Language::JavaScript, format!("if (a) {{}}{}", " else if (a) {}".repeat(2000))),
        ("if (a) if (a)", Language::JavaScript, format!("{}x;", "if (a)\n".repeat(2000))),
        ("do do", Language::JavaScript, format!("{}x;{}", "do ".repeat(1200), " while (a);".repeat(1200))),
        ("call chain", Language::JavaScript, format!("return f{};", "()".repeat(2000))),
        ("keyof", Language::TypeScript, format!("type K = {}T;", "keyof ".repeat(2000))),
        ("function types", Language::TypeScript, format!("let f: {}void;", "() => ".repeat(2000))),
        ("unterminated", Language::JavaScript, "(".repeat(5000)),
    ];
    for (what, language, source) in &cases {
        assert_too_deep(what, &prepare(*language, source));
    }
}

#[test]
fn the_position_is_the_token_that_crossed_the_bound() {
    let source = format!("const x = 1;\nreturn {};", "[".repeat(N + 5));
    let out = js(&source);
    assert_too_deep("[", &out);
    let d = &out.diagnostics[0];
    assert_eq!((d.line, d.column), (2, 8 + N as u32));
    assert!(
        d.message.contains(&format!("nesting deeper than {MAX_NESTING} at 2:{}", 8 + N)),
        "{}",
        d.message
    );
    assert!(out.error_message().starts_with(&format!("user.js:2:{}: ", 8 + N)));
}

#[test]
fn flat_code_of_any_length_is_not_nesting() {
    let flat = [
        (
            "a long array",
            format!("return [{}];", (0..50_000).map(|i| i.to_string()).collect::<Vec<_>>().join(",")),
        ),
        (
            "a long object",
            format!(
                "return {{{}}};",
                (0..20_000).map(|i| format!("k{i}: {i} + 1")).collect::<Vec<_>>().join(", ")
            ),
        ),
        ("statements", "let x = 0;\n".to_owned() + &"x = x + 1;\n".repeat(20_000) + "return x;"),
        (
            "statements without semicolons",
            "let x = 0\n".to_owned() + &"x = x + 1\n".repeat(20_000) + "return x",
        ),
        ("one-line blocks", "let x = 0;".to_owned() + &"if (x) { x = 1 } else { x = 2 }".repeat(5_000)),
        ("if statements on one line", "let a = 0;".to_owned() + &"if(a){a=a+1}".repeat(5_000) + "return a;"),
        ("while loops", "let a = 0;\n".to_owned() + &"while (a) { a = a - 1 }\n".repeat(5_000)),
        ("do-while loops", "let a = 0;\n".to_owned() + &"do { a = a - 1 } while (a > 0)\n".repeat(5_000)),
        (
            "a big switch",
            format!(
                "switch (1) {{ {} }}",
                (0..5_000).map(|i| format!("case {i}: x = {i}; break;")).collect::<String>()
            ),
        ),
        ("brackets in strings", format!("return '{0}' + \"{0}\";", "((([[[{{{".repeat(5_000))),
        ("brackets in comments", format!("// {0}\n/* {0} */ return 1;", "((([[[{{{".repeat(5_000))),
        ("brackets in regexes", format!("return [{}];", "/[(]\\(\\[/".to_owned() + &",/\\(/".repeat(5_000))),
        (
            "brackets in template text",
            format!("return `{}${{1}}{}`;", "(((".repeat(5_000), "[[[".repeat(5_000)),
        ),
        (
            "many arrow callbacks",
            "const xs = [1];\n".to_owned() + &"xs.map((x) => x * 2).filter((x) => x > 1);\n".repeat(5_000),
        ),
        ("many ternaries", "let a = 1;\n".to_owned() + &"a = a ? 1 : 2;\n".repeat(5_000) + "return a;"),
    ];
    for (what, source) in &flat {
        let out = js(source);
        assert!(out.is_ok(), "{what}: {}", out.error_message());
    }
    let ts_flat = [
        ("comparisons", "let a = 1, b = 2;\n".to_owned() + &"if (a < b) { a = b }\n".repeat(5_000)),
        (
            "comparisons in a loop",
            "let n = 0;\n".to_owned() + &"for (let i = 0; i < 3; i++) n++;\n".repeat(5_000),
        ),
        ("generics", "type M = Map<string, Array<number>>;\n".repeat(5_000)),
        (
            "an interface",
            format!(
                "interface I {{\n{}}}\nreturn 1;",
                (0..5_000).map(|i| format!("  k{i}: string\n")).collect::<String>()
            ),
        ),
        (
            "a long enum",
            format!(
                "enum E {{ {} }}\nreturn E.M1;",
                (0..5_000).map(|i| format!("M{i} = {i}")).collect::<Vec<_>>().join(", ")
            ),
        ),
    ];
    for (what, source) in &ts_flat {
        let out = ts(source);
        assert!(out.is_ok(), "{what}: {}", out.error_message());
    }
}

#[test]
fn a_cell_at_the_bound_is_prepared_on_a_small_stack() {
    // 256 KiB is far less than parsing 1,000 levels needs: strip moves to a stack segment of its own.
    let handle = std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(|| {
            one_per_level(N)
                .into_iter()
                .map(|(what, language, source)| (what, prepare(language, &source).is_ok()))
                .collect::<Vec<_>>()
        })
        .unwrap();
    for (what, ok) in handle.join().unwrap() {
        assert!(ok, "{what}");
    }
}

#[test]
fn the_module_check_alone_is_bounded_too() {
    let deep = format!("return {}{};", "[".repeat(N + 1), "]".repeat(N + 1));
    let found = codemode_ts::check_module_syntax(&deep, Language::JavaScript);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].kind, DiagnosticKind::TooDeep);
    let at = format!("return {}{};", "[".repeat(N), "]".repeat(N));
    assert!(codemode_ts::check_module_syntax(&at, Language::JavaScript).is_empty());
}

#[test]
fn the_enum_lowering_is_linear() {
    // Two enums of 20,000 and 80,000 members on one line: the lowering used to count columns
    // from the start of the line for every member (quadratic). Checked by the output, not a timer:
    // every member is lowered and the output keeps the line.
    for members in [20_000, 80_000] {
        let source = format!(
            "enum E {{ {} }}\nreturn E.M1;",
            (0..members).map(|i| format!("M{i}")).collect::<Vec<_>>().join(", ")
        );
        let out = ts(&source);
        assert!(out.is_ok(), "{}", out.error_message());
        assert_eq!(out.code.lines().count(), 2);
        assert_eq!(out.code.matches("] = \"M").count(), members, "one reverse mapping per member");
    }
}
