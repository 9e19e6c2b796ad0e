//! Enum lowering with TypeScript's semantics: the same object, the same values and the same
//! reverse mappings as `tsc` emits.
//!
//! TypeScript decides a member's value and whether it gets a reverse mapping (`E[E.A = 0] = "A"`)
//! at compile time, with its constant evaluator (`createEvaluator` in the checker): literals,
//! templates, unary `+ - ~`, binary arithmetic and string `+`, references to earlier members (bare,
//! `E.X` or `E["X"]`), to other enums' members and to `const` variables without a type annotation.
//! A member whose value is a constant is emitted as that constant; any other initializer is emitted
//! as written, with bare references to the enum's members qualified (`X` becomes `E.X`, as the
//! members are properties, not variables, and declarations of one enum merge). A member gets a
//! reverse mapping unless its constant value is a string or its initializer is syntactically a
//! string (a string literal, a template, or `+` with such an operand), never by a run-time check.
//!
//! Scopes are tracked only as far as this needs: one frame per statement list, holding the `const`
//! values, other bindings and enums declared there so far.

use std::collections::{HashMap, HashSet};

use oxc::ast::ast::{
    ArrowFunctionExpression, BindingIdentifier, Class, Expression, Function, IdentifierReference,
    ObjectProperty, Statement, TSEnumDeclaration, TSEnumMemberName, UnaryOperator,
};
use oxc::ast_visit::{Visit, walk};
use oxc::span::GetSpan;
use oxc::syntax::operator::BinaryOperator;

use crate::strip::js_string;

/// A compile-time constant value of an enum member or `const` variable.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Const {
    Number(f64),
    String(String),
}

/// The result of TypeScript's constant evaluation of an expression.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Evaluated {
    pub(crate) value: Option<Const>,
    /// Syntactically a string (a literal, a template, or `+` with such an operand).
    pub(crate) syntactic_string: bool,
}

impl Evaluated {
    fn unknown() -> Self {
        Self::default()
    }

    fn number(n: f64) -> Self {
        Self { value: Some(Const::Number(n)), syntactic_string: false }
    }
}

/// What an enum declared in a frame is known to hold so far.
#[derive(Debug, Default)]
struct EnumState {
    /// Member names of every declaration of this enum in the frame (declarations merge).
    members: HashSet<String>,
    /// Values of the members declared so far.
    values: HashMap<String, Evaluated>,
}

/// One statement list's bindings, as far as enum evaluation needs them.
#[derive(Debug, Default)]
struct Frame {
    consts: HashMap<String, Evaluated>,
    shadow: HashSet<String>,
    /// By name and constness: a `const enum` and an `enum` of the same name do not merge.
    enums: HashMap<(String, bool), EnumState>,
    /// Enum names whose `var`/`let` was emitted.
    declared: HashSet<String>,
}

impl Frame {
    fn has_enum(&self, name: &str) -> bool {
        self.enums.contains_key(&(name.to_owned(), false))
            || self.enums.contains_key(&(name.to_owned(), true))
    }
}

/// The scope frames of the statement lists being walked.
#[derive(Debug, Default)]
pub(crate) struct Scopes {
    frames: Vec<Frame>,
}

/// The enum whose member initializer is being evaluated.
struct Current<'n> {
    name: &'n str,
    is_const: bool,
    member: &'n str,
}

/// The name of an enum member as a string.
pub(crate) fn member_name(id: &TSEnumMemberName<'_>) -> String {
    match id {
        TSEnumMemberName::Identifier(id) => id.name.to_string(),
        TSEnumMemberName::String(s) | TSEnumMemberName::ComputedString(s) => s.value.to_string(),
        TSEnumMemberName::ComputedTemplateString(t) => t
            .quasis
            .first()
            .and_then(|q| q.value.cooked.as_ref())
            .map(ToString::to_string)
            .unwrap_or_default(),
    }
}

impl Scopes {
    /// Enters a statement list: its enums are known up front, so a declaration sees the members of
    /// later declarations of the same enum (as TypeScript's merged symbol does).
    pub(crate) fn push(&mut self, statements: &[Statement<'_>]) {
        let mut frame = Frame::default();
        for statement in statements {
            if let Statement::TSEnumDeclaration(e) = statement
                && !e.declare
            {
                let state = frame.enums.entry((e.id.name.to_string(), e.r#const)).or_default();
                state.members.extend(e.body.members.iter().map(|m| member_name(&m.id)));
            }
        }
        self.frames.push(frame);
    }

    pub(crate) fn pop(&mut self) {
        self.frames.pop();
    }

    /// Whether the innermost frame is the cell's top level (where TypeScript emits `var`).
    fn at_top_level(&self) -> bool {
        self.frames.len() <= 1
    }

    /// Records a `const name = init` without a type annotation.
    pub(crate) fn record_const(&mut self, name: &str, init: &Expression<'_>) {
        let value = self.evaluate(init, None);
        if let Some(frame) = self.frames.last_mut() {
            frame.consts.insert(name.to_owned(), value);
        }
    }

    /// Records any other binding, which hides outer `const`s of the same name.
    pub(crate) fn record_binding(&mut self, name: &str) {
        if let Some(frame) = self.frames.last_mut() {
            frame.consts.remove(name);
            frame.shadow.insert(name.to_owned());
        }
    }

    /// The enum `name` visible here; `is_const` picks between a `const enum` and an `enum` of
    /// the same name (`None`: the regular one if both exist).
    fn find_enum(&self, name: &str, is_const: Option<bool>) -> Option<&EnumState> {
        for frame in self.frames.iter().rev() {
            let found = match is_const {
                Some(c) => frame.enums.get(&(name.to_owned(), c)),
                None => frame
                    .enums
                    .get(&(name.to_owned(), false))
                    .or_else(|| frame.enums.get(&(name.to_owned(), true))),
            };
            if let Some(state) = found {
                return Some(state);
            }
            if frame.consts.contains_key(name) || frame.shadow.contains(name) {
                return None;
            }
        }
        None
    }

    fn is_bound(&self, name: &str) -> bool {
        self.frames.iter().any(|f| f.consts.contains_key(name) || f.shadow.contains(name) || f.has_enum(name))
    }

    fn member_value(
        &self,
        enum_name: &str,
        member: &str,
        current: Option<&Current<'_>>,
    ) -> Option<Evaluated> {
        let is_const = current.filter(|c| c.name == enum_name).map(|c| c.is_const);
        let state = self.find_enum(enum_name, is_const)?;
        if !state.members.contains(member) {
            return None;
        }
        if current.is_some_and(|c| c.name == enum_name && c.member == member) {
            // A member referring to itself: "used before being assigned".
            return Some(Evaluated::unknown());
        }
        // Declared later (in this declaration or a later one): TypeScript evaluates it as 0.
        Some(state.values.get(member).cloned().unwrap_or_else(|| Evaluated::number(0.0)))
    }

    fn resolve_identifier(&self, name: &str, current: Option<&Current<'_>>) -> Evaluated {
        if let Some(c) = current
            && let Some(v) = self.member_value(c.name, name, current)
        {
            return v;
        }
        if matches!(name, "Infinity" | "NaN") && !self.is_bound(name) {
            return Evaluated::number(if name == "NaN" { f64::NAN } else { f64::INFINITY });
        }
        for frame in self.frames.iter().rev() {
            if let Some(v) = frame.consts.get(name) {
                return Evaluated { value: v.value.clone(), syntactic_string: v.syntactic_string };
            }
            if frame.shadow.contains(name) || frame.has_enum(name) {
                break;
            }
        }
        Evaluated::unknown()
    }

    /// TypeScript's constant evaluator (`createEvaluator`).
    fn evaluate(&self, expr: &Expression<'_>, current: Option<&Current<'_>>) -> Evaluated {
        let expr = skip_parentheses(expr);
        match expr {
            Expression::UnaryExpression(u) => {
                let operand = self.evaluate(&u.argument, current);
                if let Some(Const::Number(n)) = operand.value {
                    let v = match u.operator {
                        UnaryOperator::UnaryPlus => Some(n),
                        UnaryOperator::UnaryNegation => Some(-n),
                        UnaryOperator::BitwiseNot => Some(f64::from(!to_int32(n))),
                        _ => None,
                    };
                    if let Some(v) = v {
                        return Evaluated::number(v);
                    }
                }
                Evaluated::unknown()
            }
            Expression::BinaryExpression(b) => {
                let left = self.evaluate(&b.left, current);
                let right = self.evaluate(&b.right, current);
                let plus = b.operator == BinaryOperator::Addition;
                let syntactic_string = (left.syntactic_string || right.syntactic_string) && plus;
                let value = match (&left.value, &right.value) {
                    (Some(Const::Number(l)), Some(Const::Number(r))) => {
                        numeric_binary(b.operator, *l, *r).map(Const::Number)
                    }
                    (Some(l), Some(r)) if plus => {
                        Some(Const::String(format!("{}{}", const_text(l), const_text(r))))
                    }
                    _ => None,
                };
                Evaluated { value, syntactic_string }
            }
            Expression::StringLiteral(s) => {
                Evaluated { value: Some(Const::String(s.value.to_string())), syntactic_string: true }
            }
            Expression::TemplateLiteral(t) => {
                let mut out = String::new();
                for (i, quasi) in t.quasis.iter().enumerate() {
                    let Some(cooked) = quasi.value.cooked.as_ref() else {
                        return Evaluated { value: None, syntactic_string: true };
                    };
                    out.push_str(cooked);
                    if let Some(e) = t.expressions.get(i) {
                        match self.evaluate(e, current).value {
                            Some(v) => out.push_str(&const_text(&v)),
                            None => return Evaluated { value: None, syntactic_string: true },
                        }
                    }
                }
                Evaluated { value: Some(Const::String(out)), syntactic_string: true }
            }
            Expression::NumericLiteral(n) => Evaluated::number(n.value),
            Expression::Identifier(id) => self.resolve_identifier(&id.name, current),
            Expression::StaticMemberExpression(m) if !m.optional => match &m.object {
                // The object of `E.X` resolves as a namespace: the enum, even if a member is named `E`.
                Expression::Identifier(obj) => {
                    self.member_value(&obj.name, &m.property.name, current).unwrap_or_default()
                }
                _ => Evaluated::unknown(),
            },
            Expression::ComputedMemberExpression(m) if !m.optional => {
                let key = match skip_parentheses(&m.expression) {
                    Expression::StringLiteral(s) => Some(s.value.to_string()),
                    Expression::TemplateLiteral(t) if t.expressions.is_empty() => {
                        t.quasis.first().and_then(|q| q.value.cooked.as_ref()).map(ToString::to_string)
                    }
                    _ => None,
                };
                match (&m.object, key) {
                    // The object of `E["X"]` resolves as a value: a member named `E` comes first.
                    (Expression::Identifier(obj), Some(key))
                        if !current.is_some_and(|c| self.is_member_of(c, &obj.name)) =>
                    {
                        self.member_value(&obj.name, &key, current).unwrap_or_default()
                    }
                    _ => Evaluated::unknown(),
                }
            }
            _ => Evaluated::unknown(),
        }
    }
}

impl Scopes {
    fn is_member_of(&self, current: &Current<'_>, name: &str) -> bool {
        self.find_enum(current.name, Some(current.is_const)).is_some_and(|s| s.members.contains(name))
    }
}

fn skip_parentheses<'b, 'a>(mut expr: &'b Expression<'a>) -> &'b Expression<'a> {
    while let Expression::ParenthesizedExpression(p) = expr {
        expr = &p.expression;
    }
    expr
}

fn to_int32(n: f64) -> i32 {
    if !n.is_finite() {
        return 0;
    }
    let m = n.trunc().rem_euclid(4_294_967_296.0);
    (m as u32) as i32
}

fn to_uint32(n: f64) -> u32 {
    to_int32(n) as u32
}

fn numeric_binary(op: BinaryOperator, l: f64, r: f64) -> Option<f64> {
    use BinaryOperator as B;
    Some(match op {
        B::BitwiseOR => f64::from(to_int32(l) | to_int32(r)),
        B::BitwiseAnd => f64::from(to_int32(l) & to_int32(r)),
        B::BitwiseXOR => f64::from(to_int32(l) ^ to_int32(r)),
        B::ShiftRight => f64::from(to_int32(l) >> (to_uint32(r) & 31)),
        B::ShiftRightZeroFill => f64::from(to_uint32(l) >> (to_uint32(r) & 31)),
        B::ShiftLeft => f64::from(to_int32(l).wrapping_shl(to_uint32(r) & 31)),
        B::Multiplication => l * r,
        B::Division => l / r,
        B::Addition => l + r,
        B::Subtraction => l - r,
        B::Remainder => l % r,
        B::Exponential => js_pow(l, r),
        _ => return None,
    })
}

/// `l ** r` with JavaScript's special cases (`1 ** NaN` and `(-1) ** ±Infinity` are NaN).
fn js_pow(l: f64, r: f64) -> f64 {
    if r.is_nan() || (l.abs() == 1.0 && r.is_infinite()) { f64::NAN } else { l.powf(r) }
}

/// `"" + value` for a constant, as JavaScript prints numbers.
fn const_text(c: &Const) -> String {
    match c {
        Const::String(s) => s.clone(),
        Const::Number(n) => js_number(*n),
    }
}

/// JavaScript's `Number.prototype.toString()` for the values an enum evaluation produces.
fn js_number(n: f64) -> String {
    if n.is_nan() {
        return "NaN".into();
    }
    if n.is_infinite() {
        return if n > 0.0 { "Infinity".into() } else { "-Infinity".into() };
    }
    if n == 0.0 {
        return "0".into();
    }
    if n.fract() == 0.0 && n.abs() < 1e21 {
        return format!("{n:.0}");
    }
    // Shortest round-trip digits, then JavaScript's exponent rules.
    let s = format!("{n:e}");
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let negative = mantissa.starts_with('-');
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let k = digits.len() as i32;
    let point = exp + 1;
    let body = if (-5 < point && point <= 0) || (0 < point && point <= 21) {
        if point <= 0 {
            format!("0.{}{digits}", "0".repeat((-point) as usize))
        } else if point >= k {
            format!("{digits}{}", "0".repeat((point - k) as usize))
        } else {
            format!("{}.{}", &digits[..point as usize], &digits[point as usize..])
        }
    } else {
        let e = point - 1;
        let sign = if e < 0 { "-" } else { "+" };
        if k == 1 {
            format!("{digits}e{sign}{}", e.abs())
        } else {
            format!("{}.{}e{sign}{}", &digits[..1], &digits[1..], e.abs())
        }
    };
    if negative { format!("-{body}") } else { body }
}

/// A JavaScript expression for a constant, as TypeScript emits it.
fn const_literal(c: &Const) -> String {
    match c {
        Const::String(s) => js_string(s),
        Const::Number(n) if *n < 0.0 => format!("-{}", js_number(-n)),
        Const::Number(n) => js_number(*n),
    }
}

/// One text replacement of the source.
pub(crate) struct Replacement {
    pub(crate) start: u32,
    pub(crate) end: u32,
    pub(crate) text: String,
}

/// What lowering one enum declaration produces: replacements, plus the initializers left in place
/// (the stripper still walks them for types).
pub(crate) struct Lowered<'b, 'a> {
    pub(crate) replacements: Vec<Replacement>,
    pub(crate) kept: Vec<&'b Expression<'a>>,
}

impl Scopes {
    /// Lowers one (non-`declare`) enum declaration, in TypeScript's shape:
    /// `var E; (function (E) { E[E["A"] = 0] = "A"; E["B"] = "b"; })(E || (E = {}));`.
    pub(crate) fn lower<'b, 'a>(&mut self, it: &'b TSEnumDeclaration<'a>) -> Lowered<'b, 'a> {
        let name = it.id.name.as_str();
        if self.frames.is_empty() {
            self.frames.push(Frame::default());
        }
        let top = self.at_top_level();
        let is_const = it.r#const;
        let first = {
            let frame = self.frames.last_mut().expect("a frame was pushed");
            let state = frame.enums.entry((name.to_owned(), is_const)).or_default();
            if state.members.is_empty() {
                state.members.extend(it.body.members.iter().map(|m| member_name(&m.id)));
            }
            frame.declared.insert(name.to_owned())
        };
        let keyword = if top { "var" } else { "let" };
        let header = if first {
            format!("{keyword} {name}; (function ({name}) {{")
        } else {
            format!(";(function ({name}) {{")
        };
        let closer = format!(" }})({name} || ({name} = {{}}));");
        let mut out = Lowered { replacements: Vec::new(), kept: Vec::new() };
        let members = &it.body.members;
        let Some(first_member) = members.first() else {
            out.replacements.push(Replacement {
                start: it.span.start,
                end: it.span.end,
                text: format!("{header}{closer}"),
            });
            return out;
        };
        out.replacements.push(Replacement {
            start: it.span.start,
            end: first_member.span.start,
            text: header,
        });
        let mut auto: Option<f64> = Some(0.0);
        for (i, member) in members.iter().enumerate() {
            let key = member_name(&member.id);
            let key_literal = js_string(&key);
            let next = members.get(i + 1).map_or(it.span.end, |m| m.span.start);
            let tail = if i + 1 == members.len() { closer.as_str() } else { "" };
            let current = Current { name, is_const, member: &key };
            let evaluated = match &member.initializer {
                Some(init) => self.evaluate(init, Some(&current)),
                None => Evaluated { value: auto.map(Const::Number), syntactic_string: false },
            };
            let reverse = !(matches!(evaluated.value, Some(Const::String(_))) || evaluated.syntactic_string);
            let (open, close) = if reverse {
                (format!(" {name}[{name}[{key_literal}] = "), format!("] = {key_literal};{tail}"))
            } else {
                (format!(" {name}[{key_literal}] = "), format!(";{tail}"))
            };
            match (&evaluated.value, &member.initializer) {
                (Some(value), _) => {
                    let text = format!("{open}{}{close}", const_literal(value));
                    out.replacements.push(Replacement { start: member.span.start, end: next, text });
                }
                (None, Some(init)) => {
                    let init_span = init.span();
                    out.replacements.push(Replacement {
                        start: member.span.start,
                        end: init_span.start,
                        text: open,
                    });
                    let members_here =
                        self.find_enum(name, Some(is_const)).map(|s| s.members.clone()).unwrap_or_default();
                    let mut refs = MemberRefs {
                        enum_name: name,
                        members: &members_here,
                        locals: Vec::new(),
                        found: Vec::new(),
                    };
                    refs.visit_expression(init);
                    out.replacements.extend(refs.found);
                    out.replacements.push(Replacement { start: init_span.end, end: next, text: close });
                    out.kept.push(init);
                }
                (None, None) => {
                    let text = format!("{open}void 0{close}");
                    out.replacements.push(Replacement { start: member.span.start, end: next, text });
                }
            }
            auto = match &evaluated.value {
                Some(Const::Number(n)) => Some(n + 1.0),
                _ => None,
            };
            if let Some(frame) = self.frames.last_mut()
                && let Some(state) = frame.enums.get_mut(&(name.to_owned(), is_const))
            {
                state.values.insert(key, evaluated);
            }
        }
        out
    }
}

/// Finds bare references to an enum's members in a non-constant initializer, which TypeScript
/// qualifies (`X` becomes `E.X`), skipping names bound inside the initializer (function
/// parameters and locals, class names).
struct MemberRefs<'n> {
    enum_name: &'n str,
    members: &'n HashSet<String>,
    locals: Vec<HashSet<String>>,
    found: Vec<Replacement>,
}

impl MemberRefs<'_> {
    fn qualifies(&self, name: &str) -> bool {
        self.members.contains(name) && !self.locals.iter().any(|l| l.contains(name))
    }

    fn scoped(&mut self, names: HashSet<String>, f: impl FnOnce(&mut Self)) {
        self.locals.push(names);
        f(self);
        self.locals.pop();
    }
}

impl<'a> Visit<'a> for MemberRefs<'_> {
    fn visit_identifier_reference(&mut self, it: &IdentifierReference<'a>) {
        if self.qualifies(&it.name) {
            let text = format!("{}.{}", self.enum_name, it.name);
            self.found.push(Replacement { start: it.span.start, end: it.span.end, text });
        }
    }

    fn visit_object_property(&mut self, it: &ObjectProperty<'a>) {
        if it.shorthand
            && let Expression::Identifier(id) = &it.value
            && self.qualifies(&id.name)
        {
            let text = format!("{0}: {1}.{0}", id.name, self.enum_name);
            self.found.push(Replacement { start: it.span.start, end: it.span.end, text });
            return;
        }
        walk::walk_object_property(self, it);
    }

    fn visit_function(&mut self, it: &Function<'a>, flags: oxc::syntax::scope::ScopeFlags) {
        let mut names = Bindings::default();
        if let Some(id) = &it.id {
            names.0.insert(id.name.to_string());
        }
        names.visit_formal_parameters(&it.params);
        if let Some(body) = &it.body {
            names.visit_function_body(body);
        }
        self.scoped(names.0, |s| walk::walk_function(s, it, flags));
    }

    fn visit_arrow_function_expression(&mut self, it: &ArrowFunctionExpression<'a>) {
        let mut names = Bindings::default();
        names.visit_formal_parameters(&it.params);
        names.visit_arrow_function_body(&it.body);
        self.scoped(names.0, |s| walk::walk_arrow_function_expression(s, it));
    }

    fn visit_class(&mut self, it: &Class<'a>) {
        let names: HashSet<String> = it.id.iter().map(|id| id.name.to_string()).collect();
        self.scoped(names, |s| walk::walk_class(s, it));
    }

    fn visit_catch_clause(&mut self, it: &oxc::ast::ast::CatchClause<'a>) {
        let mut names = Bindings::default();
        if let Some(p) = &it.param {
            names.visit_catch_parameter(p);
        }
        self.scoped(names.0, |s| walk::walk_catch_clause(s, it));
    }
}

/// Every name bound in a function (parameters, declarations at any block depth), not descending
/// into nested functions.
#[derive(Default)]
pub(crate) struct Bindings(pub(crate) HashSet<String>);

impl<'a> Visit<'a> for Bindings {
    fn visit_binding_identifier(&mut self, it: &BindingIdentifier<'a>) {
        self.0.insert(it.name.to_string());
    }

    fn visit_function(&mut self, it: &Function<'a>, _flags: oxc::syntax::scope::ScopeFlags) {
        if let Some(id) = &it.id {
            self.0.insert(id.name.to_string());
        }
    }

    fn visit_arrow_function_expression(&mut self, _it: &ArrowFunctionExpression<'a>) {}

    fn visit_class(&mut self, it: &Class<'a>) {
        if let Some(id) = &it.id {
            self.0.insert(id.name.to_string());
        }
    }
}
