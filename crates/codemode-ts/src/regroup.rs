//! TypeScript's grouping around `as`, `satisfies` and type arguments where oxc's parser differs
//! from `tsc`'s.
//!
//! oxc 0.146 parses four forms differently from TypeScript 5 (whose `transpileModule` is what a
//! TypeScript user runs):
//!
//! 1. **An operator after `a OP b as T`.** `tsc` treats `as T`/`satisfies T` as a postfix operator
//!    of relational precedence inside its binary-operator loop and keeps going, so
//!    `1 + 2 as number * 3` is `((1 + 2) as number) * 3` (9). oxc stops its loop when the next
//!    operator binds tighter than the one before the `as` (it follows a later TypeScript change,
//!    microsoft/TypeScript#63527): at the top of an expression that is a syntax error, and below a
//!    lower operator (`x == 1 + 2 as number * 3`, `0 || 1 + 2 as number * 3`) the outer loop takes
//!    the operator instead, which silently groups it differently.
//! 2. **`x as T ? await y : z`.** After a type, `?` starts a conditional when the next token can
//!    start a type. `tsc` reads types outside the `await`/`yield` context, so `await` and `yield`
//!    are identifiers there and the `?` is the conditional; oxc counts them as reserved words and
//!    reads `T?` as a JSDoc nullable type, then fails at `await` (or, when the `?` ends a line,
//!    ends the statement after `T?` and fails at the conditional's `:`).
//! 3. **`x as T <= y`.** oxc splits `<=` after a type reference into `<` and `=` to look for type
//!    arguments (`tsc` only splits `<<`), then fails at `=`.
//! 4. **`f<T> in x`.** Type arguments end an instantiation expression when a binary operator
//!    follows; oxc does not count `in` as one where `in` is allowed (its check is inverted), reads
//!    `f < T > in x` and fails at `in`.
//!
//! In all four, `tsc`'s tree has an expression `N` (the assertion, from the start of its operand to
//! the end of its type, or the instantiation expression) as an operand, followed by a token that
//! is not a member, call or type-argument continuation (a binary operator, `?`, `<=` or `in`).
//! Writing `(N)` instead of `N` gives the same tree in `tsc` (for an assertion: a parenthesized
//! primary at the start of the same binary-operator loop, followed by the same tokens) plus a
//! parenthesized-expression node, which evaluates the same. And oxc parses `(N) ...` the way `tsc`
//! does: the operand inside the parentheses ends at `)`. So the fix is to insert those parentheses
//! into the text oxc parses, found with oxc's own AST, never by matching source text:
//!
//! - form 1 below a lower operator parses: the AST shows it exactly (a binary expression whose
//!   left operand ends in an assertion of a binary expression with a lower operator; see
//!   [`Scan`]);
//! - a syntax error at a token right after a type is probed: that one token is replaced by a
//!   token of the same length that oxc handles like `tsc` in that place (`>` for an operator, `>=`
//!   for `<=`, `void ` for `await`/`yield`, `* ` for `in`; `;` for the `:` of a conditional whose
//!   test oxc ended at `T?`, whose assertion is then the one before the `?`), the probe is parsed (repeating for
//!   further errors) and its AST gives the expression that ends right before the token. Offsets
//!   are unchanged by the probe, and everything before the token (which decides where the
//!   expression starts) is parsed as before.
//!
//! After the parentheses are inserted the text is parsed again, and the repair repeats until the
//! parse is clean and shows no divergence. The result is accepted only if every inserted pair is
//! a parenthesized expression in the final AST exactly where it was inserted, as an operand of the
//! operator or conditional that follows it (so no `(` was taken as call arguments). A new
//! statement that starts with the expression gets `;(`: without the semicolon, the line before
//! could take the `(` as a call. Positions are mapped back to the user's source with
//! [`Insertions::source_offset`] and [`Insertions::source_position`].

use oxc::allocator::Allocator;
use oxc::ast::AstKind;
use oxc::ast::ast::{Expression, TSType};
use oxc::ast_visit::Visit;
use oxc::parser::ParserReturn;
use oxc::span::{GetSpan, Span};
use oxc::syntax::precedence::{GetPrecedence, Precedence};

use crate::diagnostic::{LineIndex, to_u32};

/// At most this many extra parses are spent on one cell's repair; past it the cell is reported as
/// oxc parsed it (a syntax error, or the divergence as unsupported). Each rejected form costs one
/// parse, and the repaired text one more, so a cell can hold up to `MAX_PARSES - 1` of them.
pub const MAX_PARSES: usize = 48;

/// The text oxc parses after the repair.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Regrouped {
    /// The user's source with the inserted parentheses.
    pub(crate) text: String,
    /// Where the text differs from the user's source.
    pub(crate) insertions: Insertions,
}

/// Text inserted into the user's source (never a line break), to map positions back.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Insertions {
    /// Inserted runs `(offset in the text, length)`, sorted by offset.
    inserted: Vec<(u32, u32)>,
    /// The same runs as `(line, column, length)` in the text.
    inserted_positions: Vec<(u32, u32, u32)>,
}

impl Insertions {
    /// The byte offset in the user's source of a byte offset in the repaired text; an offset
    /// inside an inserted run maps to where the run was inserted.
    pub(crate) fn source_offset(&self, offset: u32) -> u32 {
        let mut shift = 0;
        for &(at, len) in &self.inserted {
            if at >= offset {
                break;
            }
            shift += len.min(offset - at);
        }
        offset - shift
    }

    /// The 1-based (line, column) in the user's source of one in the repaired text.
    pub(crate) fn source_position(&self, (line, column): (u32, u32)) -> (u32, u32) {
        let mut shift = 0;
        for &(l, c, len) in &self.inserted_positions {
            if l == line && c < column {
                shift += len.min(column - c);
            }
        }
        (line, column - shift)
    }
}

/// What [`regroup`] found.
pub(crate) enum Outcome {
    /// oxc's parse is `tsc`'s: use it.
    Unchanged,
    /// Parse this text instead (it parses cleanly, as `tsc` groups the source).
    Regrouped(Regrouped),
    /// oxc's parse differs from `tsc`'s and could not be repaired. `Some(span)`: the parse
    /// succeeded but groups the assertion at `span` (user's source) differently from `tsc`, so the
    /// cell must not run; `None`: report the syntax error of the original parse.
    Failed(Option<Span>),
}

/// How a parse went, for the repair.
enum Parse {
    /// Clean: the assertions to parenthesize (none when oxc's grouping is `tsc`'s), and whether
    /// every earlier inserted pair is where it must be.
    Clean { diverged: Vec<Group>, pairs_hold: bool },
    /// A syntax error at this offset.
    Error(u32),
}

/// An assertion to parenthesize: its span, whether a statement in a statement list starts with
/// it, and what must follow the `)`.
#[derive(Debug, Clone, Copy)]
struct Group {
    span: Span,
    statement_start: bool,
    follows: Follows,
}

/// What the parenthesized assertion is the operand of, checked in the final AST.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Follows {
    /// The left operand of a binary or logical operator.
    Operator,
    /// The test of a conditional (or the right operand of an operator inside the test).
    Conditional,
    /// Any operand of an operator or a conditional (`(f<T>) in x`, `a + (f<T>) in x`).
    Operand,
}

/// One inserted pair in the current text: where the `(` is, where the `)` ends, and its role.
#[derive(Debug, Clone, Copy)]
struct Pair {
    open: u32,
    close_end: u32,
    follows: Follows,
}

/// Finds and repairs where oxc's parse of `source` (already parsed as `first`) differs from
/// `tsc`'s (see the module docs).
pub(crate) fn regroup(source: &str, first: &ParserReturn<'_>) -> Outcome {
    // A clean parse can only diverge at an `as`/`satisfies`.
    if is_clean(first) && !(source.contains("as") || source.contains("satisfies")) {
        return Outcome::Unchanged;
    }
    let mut state = Repair { text: source.to_owned(), inserted: Vec::new(), pairs: Vec::new(), parses: 0 };
    let mut silent: Option<Span> = None;
    let mut current = classify(first, &[]);
    loop {
        match current {
            Parse::Clean { diverged, pairs_hold } => {
                if diverged.is_empty() {
                    if state.pairs.is_empty() {
                        return Outcome::Unchanged;
                    }
                    if !pairs_hold {
                        return Outcome::Failed(silent);
                    }
                    return Outcome::Regrouped(state.finish());
                }
                if silent.is_none() && state.pairs.is_empty() {
                    silent = Some(diverged[0].span);
                }
                state.insert(&diverged);
            }
            Parse::Error(at) => {
                let Some(groups) = state.probe(at) else { return Outcome::Failed(silent) };
                state.insert(&groups);
            }
        }
        if state.parses >= MAX_PARSES {
            return Outcome::Failed(silent);
        }
        state.parses += 1;
        let allocator = Allocator::default();
        let parsed = crate::parse(&allocator, &state.text, crate::Language::TypeScript);
        current = classify(&parsed, &state.pairs);
    }
}

struct Repair {
    text: String,
    inserted: Vec<(u32, u32)>,
    pairs: Vec<Pair>,
    parses: usize,
}

impl Repair {
    /// Inserts `(` ... `)` around every group (spans in the current text).
    fn insert(&mut self, groups: &[Group]) {
        // (offset, text, width of the group, index of the new pair, is the `(`)
        let mut edits: Vec<(u32, &'static str, u32, usize, bool)> = Vec::new();
        for (i, g) in groups.iter().enumerate() {
            let width = g.span.end - g.span.start;
            edits.push((g.span.start, if g.statement_start { ";(" } else { "(" }, width, i, true));
            edits.push((g.span.end, ")", width, i, false));
        }
        // Right to left; at one offset, the `(` of the narrower group goes in first, so the wider
        // group's `(` ends up outside it.
        edits.sort_by(|a, b| b.0.cmp(&a.0).then(a.2.cmp(&b.2)));
        let mut new_pairs: Vec<Pair> =
            groups.iter().map(|g| Pair { open: u32::MAX, close_end: u32::MAX, follows: g.follows }).collect();
        for (at, text, _, index, open) in edits {
            let len = to_u32(text.len());
            self.text.insert_str(at as usize, text);
            for run in &mut self.inserted {
                if run.0 >= at {
                    run.0 += len;
                }
            }
            self.inserted.push((at, len));
            // Text inserted at a `(` goes before it; text inserted where a `)` ends goes after it.
            for pair in self.pairs.iter_mut().chain(new_pairs.iter_mut()) {
                if pair.open != u32::MAX && pair.open >= at {
                    pair.open += len;
                }
                if pair.close_end != u32::MAX && pair.close_end > at {
                    pair.close_end += len;
                }
            }
            if open {
                new_pairs[index].open = at + len - 1;
            } else {
                new_pairs[index].close_end = at + 1;
            }
        }
        self.inserted.sort_unstable();
        self.pairs.extend(new_pairs);
    }

    /// Replaces the token after a type that oxc rejected at `at` (and any further such errors)
    /// until the probe parses, and returns the assertions that end right before those tokens.
    fn probe(&mut self, at: u32) -> Option<Vec<Group>> {
        let mut probe = self.text.clone();
        let mut markers: Vec<Marker> = Vec::new();
        let mut at = at;
        loop {
            let marker = marker(&probe, at)?;
            if markers.iter().any(|m| m.at == marker.at) {
                return None;
            }
            let (start, end) = marker.replace;
            probe.replace_range(start as usize..end as usize, marker.replacement);
            markers.push(marker);
            if self.parses >= MAX_PARSES {
                return None;
            }
            self.parses += 1;
            let allocator = Allocator::default();
            let parsed = crate::parse(&allocator, &probe, crate::Language::TypeScript);
            if is_clean(&parsed) {
                let mut scan = Scan::new(false, true);
                scan.visit_program(&parsed.program);
                return markers.iter().map(|m| m.group(&probe, &scan)).collect();
            }
            at = error_offset(&parsed)?;
        }
    }

    fn finish(self) -> Regrouped {
        let index = LineIndex::new(&self.text);
        let inserted_positions = self
            .inserted
            .iter()
            .map(|&(at, len)| {
                let (line, column) = index.position(&self.text, at);
                (line, column, len)
            })
            .collect();
        Regrouped { text: self.text, insertions: Insertions { inserted: self.inserted, inserted_positions } }
    }
}

/// The offset of the first syntax error of a parse.
fn error_offset(parsed: &ParserReturn<'_>) -> Option<u32> {
    let d = parsed.diagnostics.iter().find(|d| !crate::is_grammar_only(&d.message))?;
    let label = d.labels.iter().find(|l| l.primary()).or_else(|| d.labels.first())?;
    Some(label.offset())
}

fn classify(parsed: &ParserReturn<'_>, pairs: &[Pair]) -> Parse {
    if !is_clean(parsed) {
        return Parse::Error(error_offset(parsed).unwrap_or(0));
    }
    let mut scan = Scan::new(true, !pairs.is_empty());
    scan.visit_program(&parsed.program);
    let pairs_hold = pairs.iter().all(|p| {
        scan.parens.iter().any(|&(span, role)| {
            span.start == p.open
                && span.end == p.close_end
                && match p.follows {
                    Follows::Operator => role == Role::Left,
                    Follows::Conditional => matches!(role, Role::Test | Role::Right),
                    Follows::Operand => role != Role::Other,
                }
        })
    });
    Parse::Clean { diverged: scan.diverged, pairs_hold }
}

/// A parse without syntax errors (TypeScript grammar errors that `tsc` leaves to the type checker
/// aside, as [`crate::strip`] does).
fn is_clean(parsed: &ParserReturn<'_>) -> bool {
    !parsed.panicked && parsed.diagnostics.iter().all(|d| crate::is_grammar_only(&d.message))
}

/// A token oxc rejected right after a type, and the same-length token the probe puts there.
struct Marker {
    kind: MarkerKind,
    /// Where the token starts.
    at: u32,
    /// For an operator: its precedence.
    precedence: Precedence,
    replace: (u32, u32),
    replacement: &'static str,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum MarkerKind {
    /// A binary operator after the type (form 1).
    Operator,
    /// `await`/`yield` after `T ?` (form 2); `at` is the keyword.
    Conditional,
    /// `<=` after the type (form 3).
    LessEqual,
    /// `in` after type arguments (form 4); the group is the instantiation expression.
    In,
    /// Form 2 with the `?` ending a line: oxc read `T?`, ended the statement there, and failed at
    /// the conditional's `:` (`at`), which the probe makes a `;`.
    Colon,
}

impl Marker {
    /// The assertion of the probe's AST the marker belongs to.
    fn group(&self, probe: &str, scan: &Scan<'_>) -> Option<Group> {
        if self.kind == MarkerKind::Colon {
            // The last assertion before the `:` whose type oxc read as `T?` with `await`/`yield`
            // after the `?`; the group ends before the `?`.
            let (group, statement_start, _) = scan
                .nullable
                .iter()
                .filter(|(_, _, question)| *question < self.at)
                .filter(|(_, _, question)| {
                    next_significant(probe, question + 1).is_some_and(|w| keyword_at(probe, w).is_some())
                })
                .max_by_key(|(_, _, question)| *question)?;
            return Some(Group {
                span: *group,
                statement_start: *statement_start,
                follows: Follows::Conditional,
            });
        }
        let candidates = if self.kind == MarkerKind::In { &scan.instantiations } else { &scan.assertions };
        let found = candidates.iter().find(|a| match self.kind {
            MarkerKind::Operator => {
                next_significant(probe, a.span.end) == Some(self.at)
                    && a.inner_precedence.is_some_and(|p| self.precedence > p)
            }
            MarkerKind::LessEqual | MarkerKind::In => next_significant(probe, a.span.end) == Some(self.at),
            MarkerKind::Conditional => next_significant(probe, a.span.end).is_some_and(|q| {
                probe.as_bytes()[q as usize] == b'?' && next_significant(probe, q + 1) == Some(self.at)
            }),
            MarkerKind::Colon => false,
        })?;
        let follows = match self.kind {
            MarkerKind::Conditional | MarkerKind::Colon => Follows::Conditional,
            MarkerKind::In => Follows::Operand,
            MarkerKind::Operator | MarkerKind::LessEqual => Follows::Operator,
        };
        Some(Group { span: found.span, statement_start: found.statement_start, follows })
    }
}

/// The marker at the first token at or after `at`, if it is one of the three forms.
fn marker(text: &str, at: u32) -> Option<Marker> {
    let e = next_significant(text, at)?;
    let rest = &text.as_bytes()[e as usize..];
    if keyword_at(text, e).is_some() {
        return Some(Marker {
            kind: MarkerKind::Conditional,
            at: e,
            precedence: Precedence::Lowest,
            replace: (e, e + 5),
            replacement: "void ",
        });
    }
    if rest.first() == Some(&b':') && rest.get(1) != Some(&b':') {
        return Some(Marker {
            kind: MarkerKind::Colon,
            at: e,
            precedence: Precedence::Lowest,
            replace: (e, e + 1),
            replacement: ";",
        });
    }
    if rest.starts_with(b"in") && !is_identifier_byte(rest.get(2)) {
        return Some(Marker {
            kind: MarkerKind::In,
            at: e,
            precedence: Precedence::Compare,
            replace: (e, e + 2),
            replacement: "* ",
        });
    }
    // The error of form 3 is reported at the `=` of `<=`.
    let less_equal = if rest.starts_with(b"<=") {
        Some(e)
    } else if rest.first() == Some(&b'=') && e > 0 && text.as_bytes()[e as usize - 1] == b'<' {
        Some(e - 1)
    } else {
        None
    };
    if let Some(l) = less_equal {
        let b = text.as_bytes();
        let before = l.checked_sub(1).map(|i| b[i as usize]);
        if before != Some(b'<') && b.get(l as usize + 2) != Some(&b'=') {
            return Some(Marker {
                kind: MarkerKind::LessEqual,
                at: l,
                precedence: Precedence::Compare,
                replace: (l, l + 1),
                replacement: ">",
            });
        }
        return None;
    }
    const OPERATORS: &[(&str, Precedence, &str)] = &[
        (">>>", Precedence::Shift, ">  "),
        (">>", Precedence::Shift, "> "),
        ("<<", Precedence::Shift, "> "),
        ("**", Precedence::Exponentiation, "> "),
        ("*", Precedence::Multiply, ">"),
        ("/", Precedence::Multiply, ">"),
        ("%", Precedence::Multiply, ">"),
        ("+", Precedence::Add, ">"),
        ("-", Precedence::Add, ">"),
    ];
    let &(op, precedence, replacement) =
        OPERATORS.iter().find(|(op, _, _)| rest.starts_with(op.as_bytes()))?;
    let next = rest.get(op.len()).copied();
    // `*=`, `>>>=`, ...: assignments; `++`, `--`: updates.
    if next == Some(b'=') || (matches!(op, "+" | "-") && next == Some(op.as_bytes()[0])) {
        return None;
    }
    Some(Marker {
        kind: MarkerKind::Operator,
        at: e,
        precedence,
        replace: (e, e + to_u32(op.len())),
        replacement,
    })
}

fn is_identifier_byte(b: Option<&u8>) -> bool {
    b.is_some_and(|&b| b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80)
}

/// `await` or `yield` as a whole word at `at`.
fn keyword_at(text: &str, at: u32) -> Option<&'static str> {
    let rest = &text.as_bytes()[at as usize..];
    ["await", "yield"]
        .into_iter()
        .find(|w| rest.starts_with(w.as_bytes()) && !is_identifier_byte(rest.get(w.len())))
}

/// The first offset at or after `pos` that is not whitespace or a comment.
fn next_significant(text: &str, pos: u32) -> Option<u32> {
    let b = text.as_bytes();
    let mut pos = pos as usize;
    // An error offset may point into a character.
    while pos < b.len() && !text.is_char_boundary(pos) {
        pos += 1;
    }
    while pos < b.len() {
        match b[pos] {
            b' ' | b'\t' | b'\n' | b'\r' | 0x0B | 0x0C => pos += 1,
            b'/' if b.get(pos + 1) == Some(&b'/') => {
                while pos < b.len() && b[pos] != b'\n' && b[pos] != b'\r' {
                    pos += 1;
                }
            }
            b'/' if b.get(pos + 1) == Some(&b'*') => {
                pos = text[pos + 2..].find("*/").map_or(b.len(), |i| pos + 2 + i + 2);
            }
            c if c >= 0x80 => {
                let ch = text[pos..].chars().next()?;
                if ch.is_whitespace() || ch == '\u{FEFF}' {
                    pos += ch.len_utf8();
                } else {
                    return Some(to_u32(pos));
                }
            }
            _ => return Some(to_u32(pos)),
        }
    }
    None
}

/// An `as`/`satisfies` expression of a parse.
struct Assertion {
    span: Span,
    /// A statement in a statement list starts with it.
    statement_start: bool,
    /// The precedence of the unparenthesized binary or logical expression it asserts (under any
    /// further assertions), if it asserts one.
    inner_precedence: Option<Precedence>,
}

/// One walk over a parse: its assertions, the assertions oxc grouped differently from `tsc`
/// (form 1 below a lower operator), and its parenthesized expressions with their role.
struct Scan<'a> {
    /// Look for divergences (clean parses).
    divergences: bool,
    /// Record assertions, instantiation expressions and parenthesized expressions (probes, and
    /// parses that must show earlier inserted pairs).
    collect: bool,
    stack: Vec<AstKind<'a>>,
    assertions: Vec<Assertion>,
    /// Instantiation expressions (`f<T>`), in the same shape.
    instantiations: Vec<Assertion>,
    /// Assertions whose type oxc read as a JSDoc nullable type `T?`: the assertion without the
    /// `?`, whether a statement starts with it, and the offset of the `?`.
    nullable: Vec<(Span, bool, u32)>,
    diverged: Vec<Group>,
    parens: Vec<(Span, Role)>,
}

/// What a parenthesized expression is to its parent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// The left operand of a binary or logical operator.
    Left,
    /// The right operand of a binary or logical operator.
    Right,
    /// The test of a conditional.
    Test,
    /// Anything else (a callee, an argument, ...).
    Other,
}

impl<'a> Scan<'a> {
    fn new(divergences: bool, collect: bool) -> Self {
        Self {
            divergences,
            collect,
            stack: Vec::new(),
            assertions: Vec::new(),
            instantiations: Vec::new(),
            nullable: Vec::new(),
            diverged: Vec::new(),
            parens: Vec::new(),
        }
    }

    /// Does a statement in a statement list start at `start` (the node being entered starts there)?
    fn statement_starts_at(&self, start: u32) -> bool {
        for (i, kind) in self.stack.iter().enumerate().rev() {
            if kind.span().start != start {
                return false;
            }
            if let AstKind::ExpressionStatement(_) = kind {
                return i.checked_sub(1).and_then(|p| self.stack.get(p)).is_some_and(|parent| {
                    matches!(
                        parent,
                        AstKind::Program(_)
                            | AstKind::BlockStatement(_)
                            | AstKind::FunctionBody(_)
                            | AstKind::StaticBlock(_)
                            | AstKind::SwitchCase(_)
                            | AstKind::TSModuleBlock(_)
                    )
                });
            }
        }
        false
    }

    /// Records an assertion whose type is `T?` (see [`Scan::nullable`]).
    fn note_nullable(&mut self, span: Span, ty: &TSType<'a>) {
        if let TSType::JSDocNullableType(n) = ty
            && n.postfix
        {
            let group = Span::new(span.start, n.type_annotation.span().end);
            let statement_start = self.statement_starts_at(span.start);
            self.nullable.push((group, statement_start, n.span.end - 1));
        }
    }

    /// Form 1 below a lower operator: `op` follows `left`, whose right edge is an assertion of a
    /// binary expression with an operator that binds less tightly than `op`.
    fn check_operand(&mut self, left: &Expression<'a>, op: Precedence) {
        let mut e = left;
        loop {
            e = match e {
                Expression::BinaryExpression(b) => &b.right,
                Expression::LogicalExpression(l) => &l.right,
                Expression::TSAsExpression(_) | Expression::TSSatisfiesExpression(_) => {
                    if inner_precedence(e).is_some_and(|p| op > p) {
                        let span = e.span();
                        let statement_start = self.statement_starts_at(span.start);
                        self.diverged.push(Group { span, statement_start, follows: Follows::Operator });
                    }
                    return;
                }
                _ => return,
            };
        }
    }
}

/// See [`Assertion::inner_precedence`].
fn inner_precedence(mut e: &Expression<'_>) -> Option<Precedence> {
    loop {
        e = match e {
            Expression::TSAsExpression(x) => &x.expression,
            Expression::TSSatisfiesExpression(x) => &x.expression,
            Expression::BinaryExpression(b) => return Some(b.operator.precedence()),
            Expression::LogicalExpression(l) => return Some(l.operator.precedence()),
            _ => return None,
        };
    }
}

impl<'a> Visit<'a> for Scan<'a> {
    fn enter_node(&mut self, kind: AstKind<'a>) {
        match kind {
            AstKind::TSAsExpression(x) if self.collect => {
                self.note_nullable(x.span, &x.type_annotation);
                self.assertions.push(Assertion {
                    span: x.span,
                    statement_start: self.statement_starts_at(x.span.start),
                    inner_precedence: inner_precedence(&x.expression),
                });
            }
            AstKind::TSSatisfiesExpression(x) if self.collect => {
                self.note_nullable(x.span, &x.type_annotation);
                self.assertions.push(Assertion {
                    span: x.span,
                    statement_start: self.statement_starts_at(x.span.start),
                    inner_precedence: inner_precedence(&x.expression),
                });
            }
            AstKind::TSInstantiationExpression(x) if self.collect => {
                self.instantiations.push(Assertion {
                    span: x.span,
                    statement_start: self.statement_starts_at(x.span.start),
                    inner_precedence: None,
                });
            }
            AstKind::BinaryExpression(b) if self.divergences => {
                self.check_operand(&b.left, b.operator.precedence());
            }
            AstKind::LogicalExpression(l) if self.divergences => {
                self.check_operand(&l.left, l.operator.precedence());
            }
            AstKind::ParenthesizedExpression(p) if self.collect => {
                let span = p.span;
                let role = match self.stack.last() {
                    Some(AstKind::BinaryExpression(b)) if b.left.span() == span => Role::Left,
                    Some(AstKind::LogicalExpression(l)) if l.left.span() == span => Role::Left,
                    Some(AstKind::BinaryExpression(b)) if b.right.span() == span => Role::Right,
                    Some(AstKind::LogicalExpression(l)) if l.right.span() == span => Role::Right,
                    Some(AstKind::ConditionalExpression(c)) if c.test.span() == span => Role::Test,
                    _ => Role::Other,
                };
                self.parens.push((span, role));
            }
            _ => {}
        }
        self.stack.push(kind);
    }

    fn leave_node(&mut self, _kind: AstKind<'a>) {
        self.stack.pop();
    }
}
