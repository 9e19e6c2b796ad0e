//! TypeScript cells to JavaScript by type stripping, and the checks every Code Mode cell goes
//! through before it reaches the sandbox.
//!
//! A Code Mode cell is the body of an async function: top-level `await` and `return` work in
//! both languages. [`strip`] takes the cell source and returns a report, [`StripReturn`], the way
//! oxc's own APIs do: the JavaScript to evaluate plus [`Diagnostic`]s as data. A cell with any
//! diagnostic must not run; the runtime reports it as `invalid_input`.
//!
//! What happens, in order:
//!
//! 1. **Shell-like text** (`ls -la`, `curl https://...`, `$ git status`) is rejected with a message
//!    saying that `exec` runs JavaScript, not shell commands.
//! 2. **Nesting** is bounded before anything recursive sees the cell: a linear scan rejects a
//!    cell that nests deeper than [`MAX_NESTING`] levels (brackets, operators and nested
//!    statements each count; flat code of any length stays far below it), so parsing and the
//!    checks below never need more than [`PREPARE_STACK_BYTES`] of stack. [`strip`] runs them on
//!    a stack segment of that size when the calling thread has less left (a cell within 64
//!    levels needs only 1 MiB, which an async worker's own stack has).
//! 3. **Parsing** with [oxc](https://oxc.rs) as JavaScript or TypeScript. Syntax errors become
//!    diagnostics with a line, a column and a code frame; a TypeScript cell with a syntax error
//!    never reaches the sandbox. Where oxc groups a TypeScript expression differently from `tsc`
//!    (`1 + 2 as number * 3` is `(1 + 2) * 3` there, `x as T ? await y : z`, `x as T <= y`,
//!    `f<T> in x`), the cell is parsed with parentheses that make the two agree, placed from oxc's
//!    own AST (`regroup.rs`); they appear in the output and positions map around them.
//! 4. **Module syntax** is rejected in both languages: static `import`/`export`, `import()`,
//!    `import.meta` and `require(...)` calls. The check walks the AST, so text that merely mentions
//!    them (strings, templates, regexes, comments, `obj.import`, `requireAuth`) is fine. Type-only
//!    imports and exports (`import type`, `export type`, `export interface`) are erased instead.
//!    This check exists for a good message: the real guarantee is that the guest has no module
//!    loader and no `require`, so nothing could be loaded anyway.
//! 5. **Type stripping** (TypeScript only; JavaScript cells are returned unchanged). Types are
//!    replaced by spaces in place, like Node's `--experimental-strip-types`, so every line and
//!    almost every column of the output is where the user wrote it. There is no down-levelling:
//!    QuickJS runs modern JavaScript. A few constructs need generated code:
//!    - parameter properties (`constructor(private x: number)`) become a field declaration at the
//!      start of the class body and an assignment at the start of the constructor (after
//!      `super(...)`), as TypeScript emits them for ES2022;
//!    - `enum` and `const enum` become an object built by an IIFE, with TypeScript's values and
//!      reverse mappings (its constant evaluation and syntactic string rule; see `enums.rs`);
//!    - auto-accessors (`accessor x = 1`) become a private storage field, a getter and a setter;
//!    - a multi-line arrow return type moves the `)` so that `=>` stays on the line of the `)`;
//!    - an operand whose erased type would let an operator regroup it (`2 ** 3 as number ** 2`)
//!      is parenthesized, as TypeScript emits it.
//!
//!    `namespace`/`module` blocks that hold values are rejected with a diagnostic (kind
//!    [`DiagnosticKind::Unsupported`]) that suggests a plain object; type-only and `declare`d
//!    namespaces are erased. Decorators are rejected the same way (QuickJS does not run them).
//!    There is no type checking and no module resolution.
//! 6. **Early errors** (TypeScript only). The output is parsed again as the script the sandbox
//!    evaluates (the body of a non-strict `async function`) and checked with oxc's semantic
//!    analysis: the ECMAScript spec's early errors that the parser does not report and
//!    `transpileModule` lets through, so that the engine would refuse the whole cell with a
//!    `SyntaxError` and no code. Among them: `let`/`const`/`class` declared twice or next to a
//!    `var`/function of the same name, duplicate parameters in strict code, arrows, methods or with
//!    non-simple parameters, `break`/`continue` to a label no statement around has (also across an
//!    arrow function), a label declared twice, duplicate `__proto__`, `new.target` and `super`
//!    outside where they are allowed, `delete` of a name and octal literals in strict code, two
//!    constructors, a private name declared twice, strict-mode reserved words as names, and invalid
//!    regular expressions. Checking the output, not the TypeScript, keeps what only looks
//!    duplicated in TypeScript (overloads, merged enums and interfaces, a type and a value of one
//!    name): by then it is gone or a `var`. Each is a [`DiagnosticKind::Syntax`] diagnostic at the
//!    user's position. It costs one more parse and one semantic pass per TypeScript cell, on an
//!    output of the input's size and nesting.
//!
//! Positions: the output keeps every line. Columns are the user's columns except after generated
//! code on the same line (see above); [`StripReturn::map_position`] maps any position of the
//! output back to the user's source exactly, and diagnostics are always in user coordinates. Name the evaluated script [`StripReturn::file_name`]
//! (`user.ts` / `user.js`).
//!
//! ```
//! use codemode_ts::{strip, Language, StripOptions};
//!
//! let cell = "interface Hit { id: string }\nconst hits: Hit[] = await tools.search(\"files\");\nreturn hits.length;";
//! let out = strip(cell, &StripOptions::new(Language::TypeScript));
//! assert!(out.is_ok());
//! assert_eq!(out.code.lines().count(), 3);
//! assert!(out.code.contains("const hits        = await tools.search(\"files\");"));
//!
//! let bad = strip("import fs from 'node:fs';", &StripOptions::new(Language::JavaScript));
//! assert_eq!(bad.diagnostics[0].kind, codemode_ts::DiagnosticKind::ModuleSyntax);
//! ```
#![deny(missing_docs)]

// The crate README (its crates.io page) is compiled and run as doc tests too.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

mod diagnostic;
mod early_errors;
mod enums;
mod module_check;
mod nesting;
mod operands;
mod regroup;
mod rewrite;
mod shell;
mod strict_check;
mod strip;

#[doc(hidden)]
pub mod fuzz;

use oxc::allocator::Allocator;
use oxc::ast_visit::Visit;
use oxc::parser::{ParseOptions, Parser, ParserReturn};
use oxc::span::SourceType;

pub use crate::diagnostic::{Diagnostic, DiagnosticKind};
pub use crate::nesting::MAX_NESTING;
#[doc(hidden)]
pub use crate::regroup::MAX_PARSES as MAX_REGROUP_PARSES;
use crate::regroup::{Insertions, Outcome, Regrouped};
use crate::rewrite::{Edit, EditKind, Rewritten};

/// Text placed before the cell by [`StripReturn::wrapped`] to make it the body of an async
/// function, for evaluating a cell outside the sandbox (the sandbox wraps cells itself). It is a
/// line of its own: line `n` of the code is line `n + 1` of the wrapped script, at the same column.
pub const WRAPPER_PREFIX: &str = "(async () => {\n";

/// Text placed after the cell. The line break keeps a trailing `//` comment from swallowing it.
pub const WRAPPER_SUFFIX: &str = "\n})()";

/// At most this many diagnostics are reported for one cell.
pub const MAX_DIAGNOSTICS: usize = 8;

/// The language of a cell (the vocabulary's, so a cell's `language` needs no mapping).
pub use codemode_core::Language;

/// Options for [`strip`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct StripOptions {
    /// The language of the cell. Default: [`Language::JavaScript`].
    pub language: Language,
}

impl StripOptions {
    /// Options for a cell in `language`.
    pub fn new(language: Language) -> Self {
        Self { language }
    }
}

/// The report [`strip`] returns.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StripReturn {
    /// The JavaScript to evaluate (the cell body, not wrapped). Empty when there are diagnostics.
    pub code: String,
    /// Problems found; the cell must not run unless this is empty.
    pub diagnostics: Vec<Diagnostic>,
    /// The language the cell was read as.
    pub language: Language,
    map: Rewritten,
    /// Parentheses inserted before parsing (see `regroup.rs`), for mapping positions back.
    insertions: Insertions,
}

impl StripReturn {
    fn failed(language: Language, diagnostics: Vec<Diagnostic>) -> Self {
        Self {
            code: String::new(),
            diagnostics,
            language,
            map: Rewritten::default(),
            insertions: Insertions::default(),
        }
    }

    /// True when the cell may run.
    pub fn is_ok(&self) -> bool {
        self.diagnostics.is_empty()
    }

    /// `user.ts` or `user.js`: the name to give the evaluated script.
    pub fn file_name(&self) -> &'static str {
        self.language.file_name()
    }

    /// The script to evaluate: [`WRAPPER_PREFIX`], the code, [`WRAPPER_SUFFIX`]. Evaluating it
    /// yields the promise of the cell's return value.
    pub fn wrapped(&self) -> String {
        let mut s = String::with_capacity(WRAPPER_PREFIX.len() + self.code.len() + WRAPPER_SUFFIX.len());
        s.push_str(WRAPPER_PREFIX);
        s.push_str(&self.code);
        s.push_str(WRAPPER_SUFFIX);
        s
    }

    /// Maps a 1-based (line, column) of [`code`](Self::code), the script the engine runs, to the
    /// user's source. This is the one position map from engine positions to user positions, for
    /// both languages: callers first undo the lines their wrapper adds before the code (one, for
    /// both the sandbox's wrapper and [`wrapped`](Self::wrapped)). `None` past the code's last
    /// line. Columns count Unicode scalar values.
    pub fn map_position(&self, line: u32, column: u32) -> Option<(u32, u32)> {
        let code_lines = 1 + self.code.matches('\n').count() as u32;
        if line > code_lines {
            return None;
        }
        self.map.map(line, column).map(|at| self.insertions.source_position(at))
    }

    /// All diagnostics rendered for the model: `user.ts:3:7: message` and a code frame each.
    pub fn error_message(&self) -> String {
        let file = self.file_name();
        self.diagnostics.iter().map(|d| d.render(file)).collect::<Vec<_>>().join("\n\n")
    }

    /// `Ok(self)` when the cell may run, otherwise [`TsError::InvalidInput`].
    pub fn into_result(self) -> Result<Self, TsError> {
        if self.is_ok() {
            Ok(self)
        } else {
            Err(TsError::InvalidInput { message: self.error_message(), diagnostics: self.diagnostics })
        }
    }
}

/// Why a cell cannot run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TsError {
    /// The cell was rejected before running (syntax, module syntax, shell text, unsupported
    /// TypeScript). Maps to the `invalid_input` error code.
    #[error("{message}")]
    InvalidInput {
        /// Every diagnostic, rendered for the model.
        message: String,
        /// The diagnostics as data.
        diagnostics: Vec<Diagnostic>,
    },
}

fn source_type(language: Language) -> SourceType {
    // Module goal: top-level `await` parses, and `import`/`export` parse as declarations so they
    // can be reported with a good message rather than as a syntax error.
    SourceType::mjs().with_typescript(language == Language::TypeScript)
}

fn parse<'a>(allocator: &'a Allocator, source: &'a str, language: Language) -> ParserReturn<'a> {
    let options = ParseOptions { allow_return_outside_function: true, ..ParseOptions::default() };
    Parser::new(allocator, source, source_type(language)).with_options(options).parse()
}

const SHELL_MESSAGE: &str = "This looks like a shell command. `exec` runs JavaScript (or TypeScript), not shell \
commands: there is no shell, filesystem or network here. Use the catalog instead, e.g. \
`const hits = await tools.search(\"list files\"); return hits;` and then `tools.callValue(id, input)`.";

/// Stack that parsing and checking a cell within [`MAX_NESTING`] may need, with a wide margin:
/// the deepest kind of nesting at the bound (template literals, then brackets and TypeScript type
/// arguments) was measured at under 2 MiB in an unoptimized build, under 2 KiB per level. A
/// thread that prepares cells should have this much; [`strip`] and [`check_module_syntax`] switch
/// to a stack segment of this size when less is left, unless the cell is shallow (within 64
/// levels: then 1 MiB of stack is enough and the calling thread's own stack is used).
pub const PREPARE_STACK_BYTES: usize = 32 << 20;

/// Runs `f` with at least [`PREPARE_STACK_BYTES`] of stack.
fn with_stack<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(PREPARE_STACK_BYTES, PREPARE_STACK_BYTES, f)
}

/// Nesting within which a cell counts as shallow (see [`SHALLOW_STACK_BYTES`]).
const SHALLOW_NESTING: u32 = 64;

/// Stack that parsing and checking a cell within [`SHALLOW_NESTING`] levels may need: 64 levels at
/// under 2 KiB each (the measured bound, see [`PREPARE_STACK_BYTES`]) is 128 KiB; this is 8 times
/// that. A shallow cell (nearly every cell) runs on the calling thread's own stack when this much
/// is left (an async worker's 2 MiB stack has it), instead of a fresh 32 MiB segment mapped,
/// faulted in and unmapped for every call.
const SHALLOW_STACK_BYTES: usize = 1 << 20;

/// Runs `f` (the parse and checks of a cell within [`MAX_NESTING`] whose nesting peaks at `peak`)
/// with the stack its nesting can need: [`SHALLOW_STACK_BYTES`] for a shallow cell, else
/// [`PREPARE_STACK_BYTES`].
fn with_stack_for<R>(peak: u32, f: impl FnOnce() -> R) -> R {
    if peak <= SHALLOW_NESTING {
        stacker::maybe_grow(SHALLOW_STACK_BYTES, PREPARE_STACK_BYTES, f)
    } else {
        with_stack(f)
    }
}

fn too_deep_diagnostic(source: &str, offset: u32) -> Diagnostic {
    let mut d = Diagnostic::at(DiagnosticKind::TooDeep, String::new(), source, offset);
    d.message = format!(
        "The cell nests too deeply: nesting deeper than {MAX_NESTING} at {}:{} (every bracket, operator and \
         nested statement counts a level). Flatten it: split long or deeply nested expressions into named steps, \
         or build deep data in a loop.",
        d.line, d.column
    );
    d
}

/// Checks and, for TypeScript, strips a cell. See the crate docs for what is checked.
pub fn strip(source: &str, options: &StripOptions) -> StripReturn {
    let language = options.language;
    if let Some(at) = shell::detect(source) {
        return StripReturn::failed(
            language,
            vec![Diagnostic::at(DiagnosticKind::ShellLike, SHELL_MESSAGE, source, at)],
        );
    }
    let nesting = nesting::measure(source, language);
    if let Some(at) = nesting.too_deep_at {
        return StripReturn::failed(language, vec![too_deep_diagnostic(source, at)]);
    }
    with_stack_for(nesting.peak, || strip_bounded(source, language))
}

/// [`strip`] past the shell and nesting checks.
fn strip_bounded(source: &str, language: Language) -> StripReturn {
    let allocator = Allocator::default();
    let mut parsed = parse(&allocator, source, language);
    if language == Language::TypeScript {
        parsed.diagnostics.retain(|d| !is_grammar_only(&d.message));
        // Where oxc groups `as`/`satisfies` differently from tsc, parse a text with parentheses
        // that make the two agree (see `regroup.rs`).
        match regroup::regroup(source, &parsed) {
            Outcome::Unchanged | Outcome::Failed(None) => {}
            Outcome::Regrouped(regrouped) => {
                let allocator = Allocator::default();
                let mut reparsed = parse(&allocator, &regrouped.text, language);
                reparsed.diagnostics.retain(|d| !is_grammar_only(&d.message));
                return strip_parsed(source, Some(&regrouped), language, &reparsed);
            }
            Outcome::Failed(Some(span)) => {
                return StripReturn::failed(
                    language,
                    vec![Diagnostic::at(DiagnosticKind::Unsupported, REGROUP_MESSAGE, source, span.start)],
                );
            }
        }
    }
    strip_parsed(source, None, language, &parsed)
}

const REGROUP_MESSAGE: &str = "TypeScript applies the operator that follows this `as`/`satisfies` expression to \
the whole expression (`a + b as T * c` is `(a + b as T) * c`), and Code Mode could not reproduce that grouping \
here. Add parentheses around the `as`/`satisfies` expression to write the grouping you mean.";

/// Checks and strips a parsed cell. `parsed` is the parse of `regrouped`'s text when there is
/// one (then every offset of the tree is an offset of that text), else of `source`.
fn strip_parsed(
    source: &str,
    regrouped: Option<&Regrouped>,
    language: Language,
    parsed: &ParserReturn<'_>,
) -> StripReturn {
    let text = regrouped.map_or(source, |r| r.text.as_str());
    if parsed.panicked || !parsed.diagnostics.is_empty() {
        // (A regrouped text always parses: the repair parsed it.)
        return StripReturn::failed(language, syntax_diagnostics(text, language, parsed));
    }
    let insertions = regrouped.map(|r| r.insertions.clone()).unwrap_or_default();
    // A diagnostic at an offset of `text`, positioned in the user's source.
    let at = |kind: DiagnosticKind, message: &str, offset: u32| {
        Diagnostic::at(kind, message, source, insertions.source_offset(offset))
    };
    let mut check = module_check::ModuleCheck::default();
    check.visit_program(&parsed.program);
    let mut diagnostics: Vec<Diagnostic> = check
        .findings
        .iter()
        .take(MAX_DIAGNOSTICS)
        .map(|f| at(DiagnosticKind::ModuleSyntax, &f.message, f.span.start))
        .collect();
    let mut edits = Vec::new();
    if let Some(hashbang) = &parsed.program.hashbang {
        edits.push(Edit { start: hashbang.span.start, end: hashbang.span.end, kind: EditKind::Blank });
    }
    if language == Language::TypeScript {
        let mut stripper = strip::Stripper::new(text);
        stripper.visit_program(&parsed.program);
        let room = MAX_DIAGNOSTICS.saturating_sub(diagnostics.len());
        diagnostics.extend(
            stripper
                .unsupported
                .iter()
                .take(room)
                .map(|f| at(DiagnosticKind::Unsupported, &f.message, f.span.start)),
        );
        edits.extend(stripper.edits);
    }
    if language == Language::JavaScript {
        let mut strict = strict_check::StrictCheck::default();
        strict.visit_program(&parsed.program);
        let room = MAX_DIAGNOSTICS.saturating_sub(diagnostics.len());
        diagnostics.extend(
            strict.findings.iter().take(room).map(|f| at(DiagnosticKind::Syntax, &f.message, f.span.start)),
        );
    }
    if !diagnostics.is_empty() {
        return StripReturn::failed(language, diagnostics);
    }
    let map = if edits.is_empty() { Rewritten::identity(text) } else { rewrite::apply(text, edits) };
    if language == Language::TypeScript {
        // The output must be a script the engine accepts: oxc's TypeScript mode accepts a few
        // things its JavaScript mode rejects (e.g. the invalid identifier escape in `p\_`, a
        // parameter named `public` in a class), and TypeScript itself lets the ECMAScript spec's
        // early errors through (`let x = 1; let x = 2`, duplicate parameters in strict code,
        // `break` to a missing label). Otherwise the cell would only fail later, inside the sandbox,
        // with no code. Lines are kept, so positions map back into the user's source.
        let findings = early_errors::check(&map.code, MAX_DIAGNOSTICS);
        if !findings.is_empty() {
            let index = diagnostic::LineIndex::new(&map.code);
            let diagnostics = findings
                .iter()
                .map(|f| {
                    let (line, column) = index.position(&map.code, f.offset);
                    let at = map.map(line, column).map_or((line, column), |p| insertions.source_position(p));
                    Diagnostic::at_position(DiagnosticKind::Syntax, f.message.clone(), source, at)
                })
                .collect();
            return StripReturn::failed(language, diagnostics);
        }
    }
    StripReturn { code: map.code.clone(), diagnostics, language, map, insertions }
}

/// TypeScript grammar errors that oxc reports while parsing but `tsc` reports only when type
/// checking, so `transpileModule` (what a TypeScript user runs) accepts the code: the parsed tree is
/// complete and everything involved is a type, erased anyway. Whatever stays in the output is
/// parsed again as JavaScript.
fn is_grammar_only(message: &str) -> bool {
    const MESSAGES: &[&str] = &[
        "Type parameter list cannot be empty.",
        "Type argument list cannot be empty.",
        "'const' modifier can only appear on a type parameter of a function, method or class",
        "'in' modifier can only appear on a type parameter of a class, interface or type alias.",
        "'out' modifier can only appear on a type parameter of a class, interface or type alias.",
        "'const' modifier already seen.",
        "'in' modifier already seen.",
        "'out' modifier already seen.",
        "Logical expressions and coalesce expressions cannot be mixed",
    ];
    MESSAGES.contains(&message)
}

/// Only the module-syntax check, for callers that run the other steps themselves. Returns no
/// diagnostics for a source that does not parse (report its syntax errors through [`strip`]).
pub fn check_module_syntax(source: &str, language: Language) -> Vec<Diagnostic> {
    let nesting = nesting::measure(source, language);
    if let Some(at) = nesting.too_deep_at {
        return vec![too_deep_diagnostic(source, at)];
    }
    with_stack_for(nesting.peak, || module_syntax_bounded(source, language))
}

fn module_syntax_bounded(source: &str, language: Language) -> Vec<Diagnostic> {
    let allocator = Allocator::default();
    let parsed = parse(&allocator, source, language);
    if parsed.panicked {
        return Vec::new();
    }
    let mut check = module_check::ModuleCheck::default();
    check.visit_program(&parsed.program);
    check
        .findings
        .iter()
        .map(|f| Diagnostic::at(DiagnosticKind::ModuleSyntax, f.message.clone(), source, f.span.start))
        .collect()
}

/// The depth of the syntax tree of a cell that parses without errors (every AST node counts), for
/// the fuzz checks. Runs with [`PREPARE_STACK_BYTES`] of stack like [`strip`]; `None` when the cell
/// does not parse or nests deeper than [`MAX_NESTING`].
#[doc(hidden)]
pub fn tree_depth(source: &str, language: Language) -> Option<usize> {
    #[derive(Default)]
    struct Depth {
        now: usize,
        max: usize,
    }
    impl<'a> Visit<'a> for Depth {
        fn enter_node(&mut self, _kind: oxc::ast::AstKind<'a>) {
            self.now += 1;
            self.max = self.max.max(self.now);
        }
        fn leave_node(&mut self, _kind: oxc::ast::AstKind<'a>) {
            self.now -= 1;
        }
    }
    if nesting::too_deep(source, language).is_some() {
        return None;
    }
    with_stack(|| {
        let allocator = Allocator::default();
        let parsed = parse(&allocator, source, language);
        if parsed.panicked || !parsed.diagnostics.is_empty() {
            return None;
        }
        let mut depth = Depth::default();
        depth.visit_program(&parsed.program);
        Some(depth.max)
    })
}

fn syntax_diagnostics(source: &str, language: Language, parsed: &ParserReturn<'_>) -> Vec<Diagnostic> {
    let hint = (language == Language::JavaScript && {
        let allocator = Allocator::default();
        let ts = parse(&allocator, source, Language::TypeScript);
        !ts.panicked && ts.diagnostics.is_empty()
    })
    .then_some(" This looks like TypeScript: send it with \"language\": \"typescript\".");
    let mut out: Vec<Diagnostic> = parsed
        .diagnostics
        .iter()
        // Later errors are mostly the parser recovering from the first; one is what helps.
        .take(1)
        .map(|d| {
            let offset =
                d.labels.iter().find(|l| l.primary()).or_else(|| d.labels.first()).map_or(0, |l| l.offset());
            let mut message = format!("Syntax error: {}", d.message);
            if let Some(help) = &d.help {
                message.push_str(&format!(" ({help})"));
            }
            if let Some(hint) = hint {
                message.push_str(hint);
            }
            Diagnostic::at(DiagnosticKind::Syntax, message, source, offset)
        })
        .collect();
    if out.is_empty() {
        out.push(Diagnostic::at(
            DiagnosticKind::Syntax,
            "Syntax error: the cell could not be parsed.",
            source,
            0,
        ));
    }
    out
}
