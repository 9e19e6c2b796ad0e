//! The stripped output of a TypeScript cell, checked as the script the sandbox evaluates.
//!
//! oxc's parser leaves most of the ECMAScript spec's *early errors* to its semantic analysis: a
//! `let`/`const`/`class` declared twice in one scope or next to a `var` or function of the same
//! name, duplicate parameters where they are not allowed, `break`/`continue` to a label that does
//! not exist, a label declared twice, duplicate `__proto__` in an object literal, `super` or
//! `new.target` where there is none, `delete` of a plain name in strict code, and so on. TypeScript
//! (`transpileModule`) emits such code as is and the engine then rejects the whole cell with a
//! `SyntaxError` that has no code. Checking here makes each an `invalid_input` diagnostic at the
//! user's position.
//!
//! The check runs on the *output*, as JavaScript, wrapped exactly as the sandbox wraps a cell (the
//! body of a non-strict `async function`: top-level `await` and `return` work, strictness comes
//! from the cell's own `"use strict"` and its classes). Checking the output rather than the
//! TypeScript source avoids TypeScript's own false positives: overload signatures, `declare`d
//! names, an interface or type alias next to a value of the same name and type-only namespaces are
//! gone by then, and merged enums are `var`s.

use oxc::allocator::Allocator;
use oxc::ast::ast::{
    ArrowFunctionExpression, BreakStatement, ContinueStatement, Expression, Function, LabelIdentifier,
    LabeledStatement, Program, Statement, StaticBlock,
};
use oxc::ast_visit::{Visit, walk};
use oxc::diagnostics::OxcDiagnostic;
use oxc::parser::{ParseOptions, Parser};
use oxc::semantic::SemanticBuilder;
use oxc::span::{GetSpan, SourceType};
use oxc::syntax::scope::ScopeFlags;

use crate::diagnostic::to_u32;
use crate::strict_check::StrictCheck;

/// The sandbox's wrapper around a cell (`codemode_sandbox::CELL_PREFIX`; a tidy test keeps the
/// two equal): the header has a line of its own.
const PREFIX: &str = "0, async function () {\n";
/// The end of the sandbox's wrapper (`codemode_sandbox::CELL_SUFFIX`).
const SUFFIX: &str = "\n}()";

/// One problem with the output: a byte offset of the checked code and a message for the model.
pub(crate) struct Finding {
    pub(crate) offset: u32,
    pub(crate) message: String,
}

/// Checks `code` (a stripped cell) as the sandbox evaluates it: it must parse as a script, pass
/// the strict-mode name check and raise none of the early errors of oxc's semantic analysis. At
/// most `limit` findings, parse errors first (only the first parse error is reported: later ones
/// are mostly the parser recovering).
pub(crate) fn check(code: &str, limit: usize) -> Vec<Finding> {
    let mut wrapped = String::with_capacity(PREFIX.len() + code.len() + SUFFIX.len());
    wrapped.push_str(PREFIX);
    wrapped.push_str(code);
    wrapped.push_str(SUFFIX);
    let allocator = Allocator::default();
    let parsed = Parser::new(&allocator, &wrapped, SourceType::script())
        .with_options(ParseOptions { parse_regular_expression: true, ..ParseOptions::default() })
        .parse();
    // An offset of the wrapped text, as an offset of `code`.
    let code_offset = |offset: u32| offset.saturating_sub(to_u32(PREFIX.len())).min(to_u32(code.len()));
    if parsed.panicked || !parsed.diagnostics.is_empty() {
        let finding = parsed.diagnostics.first().map_or_else(
            || Finding { offset: 0, message: "Syntax error: the cell could not be parsed.".to_owned() },
            |d| Finding { offset: code_offset(primary_offset(d)), message: message(d) },
        );
        return vec![finding];
    }
    if !is_wrapped_body(&parsed.program, &wrapped) {
        // The code closed the wrapper's function early. It parsed on its own, so this cannot
        // happen; if it did, the cell would not run as written.
        return vec![Finding {
            offset: 0,
            message: "Syntax error: the cell could not be parsed as the body of a function.".to_owned(),
        }];
    }
    let mut strict = StrictCheck::default();
    strict.visit_program(&parsed.program);
    if !strict.findings.is_empty() {
        return strict
            .findings
            .iter()
            .take(limit)
            .map(|f| Finding { offset: code_offset(f.span.start), message: f.message.clone() })
            .collect();
    }
    let semantic = SemanticBuilder::new().with_check_syntax_error(true).build(&parsed.program);
    if !semantic.diagnostics.is_empty() {
        return semantic
            .diagnostics
            .iter()
            .take(limit)
            .map(|d| Finding { offset: code_offset(primary_offset(d)), message: message(d) })
            .collect();
    }
    let mut labels = LabelCheck { frames: vec![Vec::new()], findings: Vec::new() };
    labels.visit_program(&parsed.program);
    labels
        .findings
        .into_iter()
        .take(limit)
        .map(|at| Finding { offset: code_offset(at), message: undefined_label() })
        .collect()
}

/// `break`/`continue` to a label outside the arrow function around it. oxc treats only `function`s
/// and static blocks as boundaries of a label, so it misses `a: for (;;) { (() => { break a })() }`,
/// which the engine refuses.
struct LabelCheck<'a> {
    /// The labels around the current point, one frame per function, arrow function or static block.
    frames: Vec<Vec<&'a str>>,
    /// Offsets of labels used where no statement around has them.
    findings: Vec<u32>,
}

impl<'a> LabelCheck<'a> {
    fn in_frame(&self, label: &LabelIdentifier<'a>) -> bool {
        self.frames.last().is_some_and(|f| f.contains(&label.name.as_str()))
    }

    fn framed(&mut self, f: impl FnOnce(&mut Self)) {
        self.frames.push(Vec::new());
        f(self);
        self.frames.pop();
    }
}

impl<'a> Visit<'a> for LabelCheck<'a> {
    fn visit_labeled_statement(&mut self, it: &LabeledStatement<'a>) {
        if let Some(frame) = self.frames.last_mut() {
            frame.push(it.label.name.as_str());
        }
        walk::walk_labeled_statement(self, it);
        if let Some(frame) = self.frames.last_mut() {
            frame.pop();
        }
    }

    fn visit_break_statement(&mut self, it: &BreakStatement<'a>) {
        if let Some(label) = &it.label
            && !self.in_frame(label)
        {
            self.findings.push(label.span.start);
        }
    }

    fn visit_continue_statement(&mut self, it: &ContinueStatement<'a>) {
        if let Some(label) = &it.label
            && !self.in_frame(label)
        {
            self.findings.push(label.span.start);
        }
    }

    fn visit_function(&mut self, it: &Function<'a>, flags: ScopeFlags) {
        self.framed(|this| walk::walk_function(this, it, flags));
    }

    fn visit_arrow_function_expression(&mut self, it: &ArrowFunctionExpression<'a>) {
        self.framed(|this| walk::walk_arrow_function_expression(this, it));
    }

    fn visit_static_block(&mut self, it: &StaticBlock<'a>) {
        self.framed(|this| walk::walk_static_block(this, it));
    }
}

fn undefined_label() -> String {
    "Syntax error: use of an undefined label: no statement around this `break`/`continue` has this label (a \
     label does not reach into or out of a function)."
        .to_owned()
}

/// The wrapped program is exactly the wrapper: `0,` then one call of a function expression whose
/// body ends at the wrapper's closing brace.
fn is_wrapped_body(program: &Program<'_>, wrapped: &str) -> bool {
    let [Statement::ExpressionStatement(statement)] = program.body.as_slice() else {
        return false;
    };
    let Expression::SequenceExpression(sequence) = &statement.expression else {
        return false;
    };
    let [Expression::NumericLiteral(_), Expression::CallExpression(call)] = sequence.expressions.as_slice()
    else {
        return false;
    };
    let Expression::FunctionExpression(function) = &call.callee else {
        return false;
    };
    // `SUFFIX` is `\n}()`: the body's `}` is its second character.
    function.body.as_ref().is_some_and(|b| b.span().end as usize == wrapped.len() - SUFFIX.len() + 2)
}

/// Where a diagnostic points: its primary label, else its last (a redeclaration's labels are the
/// first declaration, then the second).
fn primary_offset(d: &OxcDiagnostic) -> u32 {
    d.labels.iter().find(|l| l.primary()).or_else(|| d.labels.last()).map_or(0, |l| l.offset())
}

fn message(d: &OxcDiagnostic) -> String {
    // The cell's top level is the wrapper's function body, so oxc reports a label that no
    // statement around the `break`/`continue` has as one beyond a function boundary.
    if d.message == "Jump target cannot cross function boundary." {
        return undefined_label();
    }
    let mut message = format!("Syntax error: {}", d.message);
    if let Some(help) = &d.help {
        message.push_str(&format!(" ({help})"));
    }
    message
}
