//! Stripping keeps every line; positions in the output map back to the user's source.

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
fn the_wrapper_is_a_line_of_its_own() {
    let out = js("throw new Error('x')");
    assert_eq!(out.map_position(1, 1), Some((1, 1)), "line 1, column 1 keeps its column");
    assert_eq!(out.map_position(1, 7), Some((1, 7)));
    assert_eq!(out.map_position(2, 1), None, "past the code");
    let wrapped = out.wrapped();
    assert!(WRAPPER_PREFIX.ends_with('\n'));
    assert_eq!(wrapped, format!("{WRAPPER_PREFIX}throw new Error('x')\n}})()"));
    assert_eq!(wrapped.lines().nth(1), Some("throw new Error('x')"), "code line 1 is wrapped line 2");
}

#[test]
fn map_position_is_identity_for_plain_stripping() {
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
    assert_eq!(out.map_position(1, 11), Some((1, 10)));
    assert_eq!(out.map_position(1, 1), Some((1, 1)));
}

#[test]
fn enum_lowering_keeps_the_lines_of_following_code() {
    let source = "enum E {\n  A,\n  B = 5,\n}\nconst x: number = E.B;\nthrow new Error(String(x));";
    let out = ts(source);
    let lines: Vec<&str> = out.code.lines().collect();
    assert_eq!(lines.len(), 6);
    assert_eq!(lines[4], "const x         = E.B;");
    assert_eq!(out.map_position(6, 1), Some((6, 1)));
    assert!(lines[1].contains("E[E[\"A\"] = 0] = \"A\";"), "{}", lines[1]);
    assert!(lines[2].contains("E[E[\"B\"] = 5] = \"B\";"), "{}", lines[2]);
    assert_eq!(out.map_position(3, 3), Some((3, 3)), "generated code maps to the member it came from");
    assert_eq!(out.map_position(3, 5), Some((3, 3)));
}

#[test]
fn a_non_constant_enum_initializer_keeps_its_columns() {
    let source = "enum E {\n  A = 1,\n  B = String(A).length,\n}";
    let out = ts(source);
    let lines: Vec<&str> = out.code.lines().collect();
    assert!(lines[2].contains("E[E[\"B\"] = String(E.A).length] = \"B\";"), "{}", lines[2]);
    // `String` is the user's text at line 3, column 7.
    let col = lines[2].find("String").unwrap() as u32 + 1;
    assert_eq!(out.map_position(3, col), Some((3, 7)));
}
