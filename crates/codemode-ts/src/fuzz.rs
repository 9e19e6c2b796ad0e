//! Fuzz checks, called by the cargo-fuzz targets and by a stable test on pseudo-random input.

use crate::{DiagnosticKind, Language, StripOptions, strip};

/// Strips arbitrary bytes (as UTF-8, lossily) in both languages. Panics only on a real bug:
/// a panic inside, a report with both code and diagnostics, a JavaScript cell that is accepted
/// but changed, or an accepted TypeScript cell whose output changes the number of lines or is
/// not valid JavaScript.
pub fn check_strip(data: &[u8]) {
    let source = String::from_utf8_lossy(data);
    let js = strip(&source, &StripOptions::new(Language::JavaScript));
    if js.is_ok() {
        if !source.starts_with("#!") {
            assert_eq!(js.code, source, "an accepted JavaScript cell must pass through unchanged");
        }
    } else {
        assert!(js.code.is_empty());
    }
    let ts = strip(&source, &StripOptions::new(Language::TypeScript));
    if ts.is_ok() {
        assert_eq!(line_count(&ts.code), line_count(&source), "stripping must keep every line");
        let again = strip(&ts.code, &StripOptions::new(Language::JavaScript));
        // Known, accepted difference: cells are parsed with the module goal (strict), where `let`
        // is reserved, while the TypeScript parser accepts `let<T>` as an expression.
        assert!(
            uses_let_as_identifier(&ts.code)
                || again.diagnostics.iter().all(|d| d.kind == DiagnosticKind::ShellLike),
            "stripped output must be JavaScript:\n--- source\n{source}\n--- output\n{}\n--- {}",
            ts.code,
            again.error_message()
        );
    } else {
        assert!(ts.code.is_empty());
        assert!(ts.diagnostics.iter().all(|d| d.line >= 1 && d.column >= 1));
    }
}

fn uses_let_as_identifier(code: &str) -> bool {
    code.match_indices("let").any(|(i, _)| {
        let before = code[..i].chars().next_back();
        let after = code[i + 3..].trim_start().chars().next();
        !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$')
            && !after.is_some_and(|c| c.is_alphabetic() || matches!(c, '_' | '$' | '[' | '{'))
    })
}

fn line_count(s: &str) -> usize {
    let mut n = 1;
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' | '\u{2028}' | '\u{2029}' => n += 1,
            '\r' if chars.peek() != Some(&'\n') => n += 1,
            _ => {}
        }
    }
    n
}

/// How much deeper than the nesting measure the syntax tree of an accepted cell may be: the
/// measure counts one level per bracket or operator, where the tree has a small constant number of
/// nodes (a statement and its expression, a property and its value, ...).
pub const TREE_DEPTH_PER_LEVEL: usize = 4;

/// Pieces of an expression recipe: an opener and its closer, or a piece that stands alone.
const EXPRESSION_PIECES: &[(&str, &str)] = &[
    ("(", ")"),
    ("[", "]"),
    ("{a:", "}"),
    ("f(", ")"),
    ("`${", "}`"),
    ("(() => { return ", "})"),
    ("x => ", ""),
    ("a ? b : ", ""),
    ("1 + ", ""),
    ("!", ""),
    ("- ", ""),
    ("typeof ", ""),
    ("new ", ""),
    ("await ", ""),
    ("a = ", ""),
    ("a.b.c(", ")"),
    ("2 ** ", ""),
    ("1, ", ""),
    ("\n", ""),
    ("'((' + ", ""),
    ("/[(]/ + ", ""),
    ("// ((\n", ""),
    ("Array<", ">"),
    ("x as T, ", ""),
    ("a!(", ")"),
    ("() => ", ""),
];

/// Pieces of a statement recipe.
const STATEMENT_PIECES: &[(&str, &str)] = &[
    ("{", "}"),
    ("if (a) {", "}"),
    ("if (a) ", ""),
    ("if (a) {} else ", ""),
    ("while (a) ", ""),
    ("for (;;) ", ""),
    ("do ", " while (a);"),
    ("l: ", ""),
    ("x;", ""),
    ("\n", ""),
    ("function f() {", "}"),
    ("try {", "} finally {}"),
    ("switch (a) { case 1: ", "}"),
    ("class A { m() {", "} }"),
];

/// Builds a cell from a recipe: the first byte picks expressions or statements, then every two
/// bytes pick a piece and how often to repeat it (up to 1,660 times, so the nesting bound is often
/// crossed); openers are closed at the end.
pub fn nesting_cell(data: &[u8]) -> String {
    let statements = data.first().is_some_and(|b| b & 1 == 1);
    let (pieces, mut out, last) = if statements {
        (STATEMENT_PIECES, String::new(), "x;")
    } else {
        (EXPRESSION_PIECES, String::from("return "), "x")
    };
    let mut closers: Vec<&str> = Vec::new();
    for pair in data.get(1..).unwrap_or_default().chunks(2) {
        let (piece, close) = pieces[pair[0] as usize % pieces.len()];
        let repeat = match pair.get(1) {
            Some(&n) if n >= 0xC0 => 400 + (n as usize - 0xC0) * 20,
            Some(&n) => 1 + n as usize % 16,
            None => 1,
        };
        for _ in 0..repeat {
            out.push_str(piece);
            if !close.is_empty() {
                closers.push(close);
            }
        }
        if out.len() > 1 << 20 {
            break;
        }
    }
    out.push_str(last);
    while let Some(close) = closers.pop() {
        out.push_str(close);
    }
    out
}

/// Whole-cell preparation on arbitrary nesting: builds a cell with [`nesting_cell`] and prepares
/// it in both languages. Panics only on a real bug: a panic or stack overflow inside (the process
/// dies), a cell over the bound that is not rejected as too deep with its position, or an accepted
/// cell whose syntax tree is deeper than [`TREE_DEPTH_PER_LEVEL`] times the bound (the measure
/// must over-approximate the depth every recursive pass sees).
pub fn check_prepare(data: &[u8]) {
    let cell = nesting_cell(data);
    for language in [Language::JavaScript, Language::TypeScript] {
        let report = strip(&cell, &StripOptions::new(language));
        if let Some(d) = report.diagnostics.iter().find(|d| d.kind == DiagnosticKind::TooDeep) {
            assert_eq!(report.diagnostics.len(), 1);
            let at = format!("nesting deeper than {} at {}:{}", crate::MAX_NESTING, d.line, d.column);
            assert!(d.message.contains(&at), "{}", d.message);
            continue;
        }
        let depth = crate::tree_depth(&cell, language);
        assert!(
            depth.is_none_or(|d| d <= TREE_DEPTH_PER_LEVEL * crate::MAX_NESTING as usize + 16),
            "a cell within the nesting bound has a syntax tree {depth:?} deep"
        );
    }
}
