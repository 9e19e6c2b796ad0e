//! Stripping keeps every line; positions in the wrapped script map back to the user's source.

use codemode_ts::WRAPPER_PREFIX;

use crate::{js, ts};

#[test]
fn every_runtime_line_stays_where_the_user_wrote_it() {
    let source = "interface A {\n  x: number;\n}\ntype B = A & {\n  y: string\n};\nconst v: A = { x: 1 };\nfunction f<T>(\n  a: T,\n  b?: number,\n): T {\n  return a;\n}\nthrow new Error(String(f<number>(v.x)));";
    let out = ts(source);
    assert!(out.is_ok(), "{}", out.error_message());
    let src_lines: Vec<&str> = source.lines().collect();
    let out_lines: Vec<&str> = out.code.lines().collect();
    assert_eq!(src_lines.len(), out_lines.len());
    assert_eq!(out_lines[13], "throw new Error(String(f        (v.x)));");
    assert_eq!(out_lines[6], "const v    = { x: 1 };");
    // Same columns for code that was kept.
    let col_src = src_lines[13].find("new Error").unwrap();
    let col_out = out_lines[13].find("new Error").unwrap();
    assert_eq!(col_src, col_out);
}

#[test]
fn map_position_undoes_the_wrapper_on_line_one() {
    let out = js("throw new Error('x')");
    let prefix = WRAPPER_PREFIX.chars().count() as u32;
    assert_eq!(out.map_position(1, prefix + 1), Some((1, 1)));
    assert_eq!(out.map_position(1, prefix + 7), Some((1, 7)));
    assert_eq!(out.map_position(1, prefix), None, "inside the wrapper");
    assert_eq!(out.map_position(2, 1), None, "the wrapper's suffix line");
    let wrapped = out.wrapped();
    assert!(wrapped.starts_with(WRAPPER_PREFIX) && wrapped.contains("throw new Error('x')\n})()"));
}

#[test]
fn map_position_is_identity_after_line_one_for_plain_stripping() {
    let out = ts("const a: number = 1;\nconst b: string = 'x';\n  throw new Error(b);");
    assert_eq!(out.map_position(3, 3), Some((3, 3)));
    assert_eq!(out.map_position(2, 7), Some((2, 7)));
}

#[test]
fn generated_parameter_properties_map_back_to_their_line() {
    let source = "class P {\n  constructor(public x: number) {\n    throw new Error('boom');\n  }\n}";
    let out = ts(source);
    let lines: Vec<&str> = out.code.lines().collect();
    assert_eq!(lines[0], "class P { x;");
    assert_eq!(lines[1], "  constructor(       x        ) { this.x = x;");
    // Column of `throw` on line 3 is unchanged.
    assert_eq!(out.map_position(3, 5), Some((3, 5)));
    // A position inside the inserted assignment maps to the insertion point (after `{`).
    let inserted_col = lines[1].find("this.x").unwrap() as u32 + 1;
    assert_eq!(out.map_position(2, inserted_col), Some((2, 34)));
    // The inserted field declaration on line 1 maps to its insertion point.
    let prefix = codemode_ts::WRAPPER_PREFIX.chars().count() as u32;
    assert_eq!(out.map_position(1, prefix + 11), Some((1, 10)));
    assert_eq!(out.map_position(1, prefix + 1), Some((1, 1)));
}

#[test]
fn enum_lowering_keeps_the_lines_of_following_code() {
    let source = "enum E {\n  A,\n  B = 5,\n}\nconst x: number = E.B;\nthrow new Error(String(x));";
    let out = ts(source);
    let lines: Vec<&str> = out.code.lines().collect();
    assert_eq!(lines.len(), 6);
    assert_eq!(lines[4], "const x         = E.B;");
    assert_eq!(out.map_position(6, 1), Some((6, 1)));
    assert!(lines[1].contains("var A = $cm$m(\"A\", $cm$v + 1);"), "{}", lines[1]);
    assert!(lines[2].contains("var B = $cm$m(\"B\", 5);"), "{}", lines[2]);
    assert_eq!(out.map_position(3, 3), Some((3, 3)), "generated code maps to the member it came from");
    assert_eq!(out.map_position(3, 5), Some((3, 3)));
    // The initializer itself is the user's text: `5` at line 3, column 7.
    let init_col = lines[2].find('5').unwrap() as u32 + 1;
    assert_eq!(out.map_position(3, init_col), Some((3, 7)));
}
