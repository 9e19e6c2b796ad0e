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
