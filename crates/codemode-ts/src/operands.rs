//! Operands of the expressions type stripping touches: erasing type wrappers (`as`, `satisfies`,
//! `<T>x`, `x!`), the operator precedence that decides whether an erased operand needs
//! parentheses, and where a class member's key starts.

use oxc::ast::ast::{Expression, PropertyKey};
use oxc::span::GetSpan;
use oxc::syntax::operator::LogicalOperator;
use oxc::syntax::precedence::{GetPrecedence, Precedence};

/// The kind of operator an operand belongs to, for the `??`-mixing rule.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum OperandOf {
    Coalesce,
    AndOr,
    Other,
}

/// `x as T`, `x satisfies T`, `<T>x`, `x!`: erased down to `x`.
pub(crate) fn is_type_wrapper(e: &Expression<'_>) -> bool {
    matches!(
        e,
        Expression::TSAsExpression(_)
            | Expression::TSSatisfiesExpression(_)
            | Expression::TSTypeAssertion(_)
            | Expression::TSNonNullExpression(_)
    )
}

/// The expression left after erasing type wrappers.
pub(crate) fn erased<'b, 'a>(mut e: &'b Expression<'a>) -> &'b Expression<'a> {
    loop {
        e = match e {
            Expression::TSAsExpression(x) => &x.expression,
            Expression::TSSatisfiesExpression(x) => &x.expression,
            Expression::TSTypeAssertion(x) => &x.expression,
            Expression::TSNonNullExpression(x) => &x.expression,
            _ => return e,
        };
    }
}

/// The precedence of an operator expression; `None` for primary and member-level expressions.
pub(crate) fn precedence(e: &Expression<'_>) -> Option<Precedence> {
    Some(match e {
        Expression::SequenceExpression(_) => Precedence::Comma,
        Expression::YieldExpression(_) => Precedence::Yield,
        Expression::AssignmentExpression(_) | Expression::ArrowFunctionExpression(_) => Precedence::Assign,
        Expression::ConditionalExpression(_) => Precedence::Conditional,
        Expression::LogicalExpression(l) => l.operator.precedence(),
        Expression::BinaryExpression(b) => b.operator.precedence(),
        Expression::UnaryExpression(_) | Expression::AwaitExpression(_) => Precedence::Prefix,
        Expression::UpdateExpression(_) => Precedence::Postfix,
        _ => return None,
    })
}

/// `a ?? b` next to `||`/`&&` (or the reverse) needs parentheses in JavaScript.
pub(crate) fn mixes_coalesce(inner: &Expression<'_>, outer: OperandOf) -> bool {
    match inner {
        Expression::LogicalExpression(l) => {
            let coalesce = l.operator == LogicalOperator::Coalesce;
            (coalesce && outer == OperandOf::AndOr) || (!coalesce && outer == OperandOf::Coalesce)
        }
        _ => false,
    }
}

/// Where the key of a class member starts (the `[` of a computed key).
pub(crate) fn key_start(key: &PropertyKey<'_>, computed: bool, source: &str) -> u32 {
    let start = key.span().start;
    if computed { source[..start as usize].rfind('[').map_or(start, |i| i as u32) } else { start }
}
