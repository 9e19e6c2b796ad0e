//! Integration tests for codemode-ts, one module per area.

mod diagnostics;
mod early_errors;
mod fixtures;
mod fuzz;
mod module_syntax;
mod nesting;
mod positions;
mod regroup;
mod shell;
mod strip_cases;

use codemode_ts::{Language, StripOptions, StripReturn, strip};

/// Strips a TypeScript cell.
pub fn ts(source: &str) -> StripReturn {
    strip(source, &StripOptions::new(Language::TypeScript))
}

/// Checks a JavaScript cell.
pub fn js(source: &str) -> StripReturn {
    strip(source, &StripOptions::new(Language::JavaScript))
}
