//! Type stripping: a visitor over the TypeScript AST that records edits which blank out types in
//! place (so every line and column of runtime code stays where the user wrote it), plus the few
//! lowerings that need generated code: parameter properties and enums.

use oxc::ast::ast::{
    AccessorProperty, AccessorPropertyType, BinaryExpression, BindingPattern, Class, ClassBody, ClassElement,
    Declaration, Decorator, Expression, FormalParameter, ImportOrExportKind, LogicalExpression,
    MethodDefinition, MethodDefinitionKind, MethodDefinitionType, ModuleDeclaration, PropertyDefinitionType,
    PropertyKey, Statement, TSAsExpression, TSClassImplements, TSImportEqualsDeclaration, TSModuleReference,
    TSNamespaceDeclaration, TSNamespaceDeclarationBody, TSNonNullExpression, TSSatisfiesExpression,
    TSThisParameter, TSTypeAnnotation, TSTypeAssertion, TSTypeParameterDeclaration,
    TSTypeParameterInstantiation, VariableDeclaration, VariableDeclarationKind, VariableDeclarator,
};
use oxc::ast_visit::{Visit, walk};
use oxc::span::{GetSpan, Span};
use oxc::syntax::operator::LogicalOperator;
use oxc::syntax::precedence::{GetPrecedence, Precedence};

use crate::enums::{Bindings, Scopes};
use crate::operands::{OperandOf, erased, is_type_wrapper, key_start, mixes_coalesce, precedence};

use crate::module_check::{Finding, is_type_only};
use crate::rewrite::{Edit, EditKind};

/// TypeScript-only modifiers that are erased.
const TS_MODIFIERS: &[&str] =
    &["public", "private", "protected", "readonly", "override", "abstract", "declare"];

/// Prefix of generated private names; no user identifier should start with it.
const HELPER: &str = "$cm$";

pub(crate) struct Stripper<'s> {
    source: &'s str,
    pub(crate) edits: Vec<Edit>,
    pub(crate) unsupported: Vec<Finding>,
    /// Scope frames for enum evaluation; only kept when the cell mentions `enum`.
    scopes: Scopes,
    track_scopes: bool,
    /// The name of the class whose body is being walked (for static auto-accessors).
    class_name: Option<String>,
}

impl<'s> Stripper<'s> {
    pub(crate) fn new(source: &'s str) -> Self {
        Self {
            source,
            edits: Vec::new(),
            unsupported: Vec::new(),
            scopes: Scopes::default(),
            track_scopes: source.contains("enum"),
            class_name: None,
        }
    }

    /// Where the `class` keyword of `it` ends.
    fn class_keyword_end(&self, it: &Class<'_>) -> u32 {
        let mut pos = it.decorators.last().map_or(it.span.start, |d| d.span.end) as usize;
        while let Some((at, c, _)) = self.next_significant(pos) {
            if at >= it.body.span.start as usize {
                break;
            }
            let word_end = if c.is_ascii_alphabetic() {
                self.bytes()[at..]
                    .iter()
                    .position(|b| !b.is_ascii_alphanumeric())
                    .map_or(self.source.len(), |n| at + n)
            } else {
                at + 1
            };
            if &self.source[at..word_end] == "class" {
                return word_end as u32;
            }
            pos = word_end;
        }
        it.span.start
    }

    /// Wraps an operand of a binary or logical operator in parentheses when erasing its type
    /// (`2 ** 3 as number ** 2`, `1 + 2 as number * 3`) would otherwise let the operator regroup
    /// it, as TypeScript does.
    fn parenthesize_operand(
        &mut self,
        operand: &Expression<'_>,
        outer: Precedence,
        outer_op: OperandOf,
        left: bool,
    ) {
        if !is_type_wrapper(operand) {
            // `a ?? b && c` parses in TypeScript (mixing is a type-check error there) and tsc emits
            // `a ?? (b && c)`; JavaScript needs the parentheses.
            if mixes_coalesce(operand, outer_op) {
                let span = operand.span();
                self.replace(span.start, span.start, "(".to_owned());
                self.replace(span.end, span.end, ")".to_owned());
            }
            return;
        }
        let inner = erased(operand);
        let Some(inner_precedence) = precedence(inner) else { return };
        let exponent = outer == Precedence::Exponentiation;
        let regroups = inner_precedence < outer
            || (inner_precedence == outer && (if left { exponent } else { !exponent }))
            || mixes_coalesce(inner, outer_op);
        if regroups {
            let start = operand.span().start;
            self.replace(start, start, "(".to_owned());
            let end = inner.span().end;
            self.replace(end, end, ")".to_owned());
        }
    }

    /// Lowers an auto-accessor (`accessor x = 1`) as TypeScript does for ES2022: a private
    /// storage field plus a getter and a setter.
    fn lower_accessor(&mut self, class: Option<&str>, it: &AccessorProperty<'_>, index: usize) {
        if it.computed {
            self.unsupported(
                it.span,
                "Auto-accessors with a computed name (`accessor [key] = ...`) are not supported in Code Mode \
                 cells; write a private field with a getter and a setter instead.",
            );
            return;
        }
        let key_span = it.key.span();
        let key_text = &self.source[key_span.start as usize..key_span.end as usize];
        let storage = match &it.key {
            PropertyKey::StaticIdentifier(id) => format!("#{}_accessor_storage", id.name),
            PropertyKey::PrivateIdentifier(id) => format!("#{}_accessor_storage", id.name),
            _ => format!("#{HELPER}accessor_storage_{index}"),
        };
        let is_static = if it.r#static { "static " } else { "" };
        let receiver = match (it.r#static, class) {
            (true, Some(name)) => name.to_owned(),
            _ => "this".to_owned(),
        };
        let methods = format!(
            " {is_static}get {key_text}() {{ return {receiver}.{storage}; }} {is_static}set {key_text}(value) {{ \
             {receiver}.{storage} = value; }}"
        );
        let start = it.decorators.last().map_or(it.span.start, |d| d.span.end);
        match &it.value {
            Some(value) => {
                let v = value.span();
                self.replace(start, v.start, format!("{is_static}{storage} = "));
                self.replace(v.end, it.span.end, format!(";{methods}"));
                self.visit_expression(value);
            }
            None => self.replace(start, it.span.end, format!("{is_static}{storage};{methods}")),
        }
    }

    fn bytes(&self) -> &[u8] {
        self.source.as_bytes()
    }

    fn blank(&mut self, start: u32, end: u32) {
        if start < end {
            self.edits.push(Edit { start, end, kind: EditKind::Blank });
        }
    }

    fn blank_span(&mut self, span: Span) {
        self.blank(span.start, span.end);
    }

    fn blank_statement(&mut self, span: Span) {
        if span.start < span.end {
            self.edits.push(Edit { start: span.start, end: span.end, kind: EditKind::BlankWithSemicolon });
        }
    }

    fn replace(&mut self, start: u32, end: u32, text: String) {
        self.edits.push(Edit { start, end, kind: EditKind::Replace(text) });
    }

    fn unsupported(&mut self, span: Span, message: &str) {
        self.unsupported.push(Finding { span, message: message.to_owned() });
    }

    /// The next byte that is not whitespace or inside a comment, from `pos`; also whether a line
    /// break was crossed on the way.
    fn next_significant(&self, mut pos: usize) -> Option<(usize, u8, bool)> {
        let b = self.bytes();
        let mut newline = false;
        while pos < b.len() {
            match b[pos] {
                b'\n' | b'\r' => {
                    newline = true;
                    pos += 1;
                }
                b' ' | b'\t' | 0x0B | 0x0C => pos += 1,
                b'/' if b.get(pos + 1) == Some(&b'/') => {
                    while pos < b.len() && b[pos] != b'\n' && b[pos] != b'\r' {
                        pos += 1;
                    }
                }
                b'/' if b.get(pos + 1) == Some(&b'*') => {
                    let rest = &self.source[pos + 2..];
                    let close = rest.find("*/").map_or(b.len(), |i| pos + 2 + i + 2);
                    newline |= self.source[pos..close].contains(['\n', '\r', '\u{2028}', '\u{2029}']);
                    pos = close;
                }
                0xE2 if b.get(pos + 1) == Some(&0x80) && matches!(b.get(pos + 2), Some(0xA8 | 0xA9)) => {
                    newline = true;
                    pos += 3;
                }
                // Other non-ASCII whitespace (NBSP, BOM, Zs) is rare; treat it as whitespace.
                c if c >= 0x80 => {
                    let ch = self.source[pos..].chars().next()?;
                    if ch.is_whitespace() || ch == '\u{FEFF}' {
                        pos += ch.len_utf8();
                    } else {
                        return Some((pos, c, newline));
                    }
                }
                c => return Some((pos, c, newline)),
            }
        }
        None
    }

    /// Blanks the TypeScript modifier keywords found between `start` and `end` (only keywords,
    /// whitespace and comments lie there).
    fn blank_modifiers(&mut self, start: u32, end: u32) {
        let mut pos = start as usize;
        let end = end as usize;
        while let Some((at, c, _)) = self.next_significant(pos) {
            if at >= end {
                break;
            }
            if c.is_ascii_alphabetic() {
                let word_end = self.bytes()[at..end]
                    .iter()
                    .position(|b| !(b.is_ascii_alphanumeric() || *b == b'_' || *b == b'$'))
                    .map_or(end, |n| at + n);
                if TS_MODIFIERS.contains(&&self.source[at..word_end]) {
                    self.blank(at as u32, word_end as u32);
                }
                pos = word_end;
            } else {
                pos = at + 1;
            }
        }
    }

    /// Blanks a `?` or `!` marker right after `after` (skipping the `]` of a computed key).
    fn blank_marker_after(&mut self, after: u32, computed: bool, marker: u8) {
        let mut pos = after as usize;
        if computed && let Some((at, b']', _)) = self.next_significant(pos) {
            pos = at + 1;
        }
        if let Some((at, c, _)) = self.next_significant(pos)
            && c == marker
        {
            self.blank(at as u32, at as u32 + 1);
        }
    }

    /// Removes a type that follows an expression (`x as T`, `x satisfies T`) and guards against
    /// automatic semicolon insertion changing meaning: `x as T\n(y)` is two statements in
    /// TypeScript, but `x\n(y)` would be a call.
    fn blank_trailing_type(&mut self, expr_end: u32, end: u32) {
        let hazard = matches!(self.next_significant(end as usize), Some((_, b'(' | b'[' | b'`', true)));
        if hazard {
            self.edits.push(Edit { start: expr_end, end, kind: EditKind::BlankWithSemicolon });
        } else {
            self.blank(expr_end, end);
        }
    }
}

/// Names of a constructor's parameter properties (`constructor(private x: number)`), in order.
fn parameter_properties(method: &MethodDefinition<'_>) -> Vec<String> {
    method
        .value
        .params
        .items
        .iter()
        .filter(|p| p.accessibility.is_some() || p.readonly || p.r#override)
        .filter_map(|p| match &p.pattern {
            BindingPattern::BindingIdentifier(id) => Some(id.name.to_string()),
            _ => None,
        })
        .collect()
}

/// Is a namespace made of types only (and so erased without leaving a value)?
fn namespace_is_type_only(ns: &TSNamespaceDeclaration<'_>) -> bool {
    match &ns.body {
        TSNamespaceDeclarationBody::TSNamespaceDeclaration(inner) => namespace_is_type_only(inner),
        TSNamespaceDeclarationBody::TSModuleBlock(block) => block.body.iter().all(|s| match s {
            Statement::TSTypeAliasDeclaration(_) | Statement::TSInterfaceDeclaration(_) => true,
            Statement::TSNamespaceDeclaration(inner) => inner.declare || namespace_is_type_only(inner),
            Statement::ExportDeclaration(_) | Statement::ExportNamedDeclaration(_) => {
                s.as_module_declaration().is_some_and(is_type_only)
                    || matches!(s, Statement::ExportDeclaration(d) if matches!(&d.declaration,
                        Declaration::TSNamespaceDeclaration(inner) if namespace_is_type_only(inner)))
            }
            _ => false,
        }),
    }
}

/// A double-quoted JavaScript string literal for `s`.
pub(crate) fn js_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

const NAMESPACE_MESSAGE: &str = "TypeScript `namespace`/`module` blocks that hold values are not supported in \
Code Mode cells. Use a plain object instead, for example `const Utils = { helper(x) { ... } };`.";

impl<'a> Visit<'a> for Stripper<'_> {
    // ---- types: blanked, never walked ----
    fn visit_ts_type_annotation(&mut self, it: &TSTypeAnnotation<'a>) {
        self.blank_span(it.span);
    }

    fn visit_ts_type_parameter_declaration(&mut self, it: &TSTypeParameterDeclaration<'a>) {
        self.blank_span(it.span);
    }

    fn visit_ts_type_parameter_instantiation(&mut self, it: &TSTypeParameterInstantiation<'a>) {
        self.blank_span(it.span);
    }

    fn visit_ts_class_implements(&mut self, _it: &TSClassImplements<'a>) {}

    fn visit_ts_this_parameter(&mut self, it: &TSThisParameter<'a>) {
        // `function f(this: T, a)` -> also remove the comma after `this: T`.
        let end = match self.next_significant(it.span.end as usize) {
            Some((at, b',', _)) => at as u32 + 1,
            _ => it.span.end,
        };
        self.blank(it.span.start, end);
    }

    fn visit_decorator(&mut self, it: &Decorator<'a>) {
        self.unsupported(
            it.span,
            "Decorators are not supported in Code Mode cells (the JavaScript engine does not run them). \
             Call the function directly instead, e.g. `const Logged = withLogging(class { ... });`.",
        );
    }

    // ---- expressions ----
    fn visit_ts_as_expression(&mut self, it: &TSAsExpression<'a>) {
        self.visit_expression(&it.expression);
        self.blank_trailing_type(it.expression.span().end, it.span.end);
    }

    fn visit_ts_satisfies_expression(&mut self, it: &TSSatisfiesExpression<'a>) {
        self.visit_expression(&it.expression);
        self.blank_trailing_type(it.expression.span().end, it.span.end);
    }

    fn visit_ts_non_null_expression(&mut self, it: &TSNonNullExpression<'a>) {
        self.visit_expression(&it.expression);
        let from = it.expression.span().end as usize;
        if let Some(n) = self.source.get(from..it.span.end as usize).and_then(|s| s.rfind('!')) {
            let at = (from + n) as u32;
            self.blank(at, at + 1);
        }
    }

    fn visit_ts_type_assertion(&mut self, it: &TSTypeAssertion<'a>) {
        self.blank(it.span.start, it.expression.span().start);
        self.visit_expression(&it.expression);
    }

    // ---- declarations ----
    fn visit_module_declaration(&mut self, it: &ModuleDeclaration<'a>) {
        if is_type_only(it) {
            self.blank_statement(it.span());
        }
        // Anything else is module syntax, already reported by the module check.
    }

    fn visit_declaration(&mut self, it: &Declaration<'a>) {
        match it {
            Declaration::TSTypeAliasDeclaration(d) => self.blank_statement(d.span),
            Declaration::TSInterfaceDeclaration(d) => self.blank_statement(d.span),
            Declaration::TSEnumDeclaration(e) if e.declare => self.blank_statement(e.span),
            Declaration::TSEnumDeclaration(e) => {
                let lowered = self.scopes.lower(e);
                for r in lowered.replacements {
                    self.replace(r.start, r.end, r.text);
                }
                for init in lowered.kept {
                    self.visit_expression(init);
                }
            }
            Declaration::TSNamespaceDeclaration(n) => {
                if n.declare || namespace_is_type_only(n) {
                    self.blank_statement(n.span);
                } else {
                    self.unsupported(n.span, NAMESPACE_MESSAGE);
                }
            }
            Declaration::TSExternalModuleDeclaration(m) => {
                if m.declare {
                    self.blank_statement(m.span);
                } else {
                    self.unsupported(m.span, NAMESPACE_MESSAGE);
                }
            }
            Declaration::TSGlobalDeclaration(g) => self.blank_statement(g.span),
            Declaration::TSImportEqualsDeclaration(d) => self.visit_ts_import_equals_declaration(d),
            Declaration::VariableDeclaration(v) if v.declare => self.blank_statement(v.span),
            Declaration::FunctionDeclaration(f) if f.declare || f.body.is_none() => {
                self.blank_statement(f.span)
            }
            Declaration::ClassDeclaration(c) if c.declare => self.blank_statement(c.span),
            _ => walk::walk_declaration(self, it),
        }
    }

    fn visit_ts_import_equals_declaration(&mut self, it: &TSImportEqualsDeclaration<'a>) {
        if it.import_kind == ImportOrExportKind::Type {
            self.blank_statement(it.span);
        } else if !matches!(it.module_reference, TSModuleReference::ExternalModuleReference(_)) {
            self.unsupported(
                it.span,
                "`import X = Namespace.Member` aliases are not supported in Code Mode cells; use `const X = ...`.",
            );
        }
    }

    fn visit_variable_declarator(&mut self, it: &VariableDeclarator<'a>) {
        if it.definite {
            self.blank_marker_after(it.id.span().end, false, b'!');
        }
        walk::walk_variable_declarator(self, it);
    }

    fn visit_formal_parameter(&mut self, it: &FormalParameter<'a>) {
        let start = it.decorators.last().map_or(it.span.start, |d| d.span.end);
        self.blank_modifiers(start, it.pattern.span().start);
        if it.optional {
            self.blank_marker_after(it.pattern.span().end, false, b'?');
        }
        walk::walk_formal_parameter(self, it);
    }

    fn visit_class(&mut self, it: &Class<'a>) {
        if it.r#abstract || it.declare {
            let start = it.decorators.last().map_or(it.span.start, |d| d.span.end);
            let end = it.id.as_ref().map_or(it.body.span.start, |id| id.span.start);
            self.blank_modifiers(start, end);
        }
        if let Some(last) = it.implements.last() {
            let after = [
                it.id.as_ref().map(|id| id.span.end),
                it.type_parameters.as_ref().map(|t| t.span.end),
                it.heritage.as_ref().map(|h| h.expression.span().end),
                it.heritage.as_ref().and_then(|h| h.type_arguments.as_ref()).map(|t| t.span.end),
            ]
            .into_iter()
            .flatten()
            .max()
            .unwrap_or_else(|| self.class_keyword_end(it));
            if let Some((at, _, _)) = self.next_significant(after as usize) {
                self.blank(at as u32, last.span.end);
            }
        }
        let outer = std::mem::replace(&mut self.class_name, it.id.as_ref().map(|id| id.name.to_string()));
        walk::walk_class(self, it);
        self.class_name = outer;
    }

    fn visit_statements(&mut self, it: &oxc::allocator::Vec<'a, Statement<'a>>) {
        if !self.track_scopes {
            walk::walk_statements(self, it);
            return;
        }
        self.scopes.push(it);
        walk::walk_statements(self, it);
        self.scopes.pop();
    }

    fn visit_variable_declaration(&mut self, it: &VariableDeclaration<'a>) {
        walk::walk_variable_declaration(self, it);
        if !self.track_scopes {
            return;
        }
        for d in &it.declarations {
            match (&d.id, &d.init) {
                (BindingPattern::BindingIdentifier(id), Some(init))
                    if it.kind == VariableDeclarationKind::Const && d.type_annotation.is_none() =>
                {
                    self.scopes.record_const(&id.name, init);
                }
                _ => {
                    let mut names = Bindings::default();
                    names.visit_binding_pattern(&d.id);
                    for name in names.0 {
                        self.scopes.record_binding(&name);
                    }
                }
            }
        }
    }

    fn visit_binary_expression(&mut self, it: &BinaryExpression<'a>) {
        let p = it.operator.precedence();
        self.parenthesize_operand(&it.left, p, OperandOf::Other, true);
        self.parenthesize_operand(&it.right, p, OperandOf::Other, false);
        walk::walk_binary_expression(self, it);
    }

    fn visit_logical_expression(&mut self, it: &LogicalExpression<'a>) {
        let p = it.operator.precedence();
        let op =
            if it.operator == LogicalOperator::Coalesce { OperandOf::Coalesce } else { OperandOf::AndOr };
        self.parenthesize_operand(&it.left, p, op, true);
        // `a ?? b as T || c`: TypeScript gives `??` and `||` one precedence, so this is
        // `(a ?? b) || c` there; oxc parsed `a ?? (b || c)`. Emit TypeScript's grouping.
        if let (OperandOf::Coalesce, Expression::LogicalExpression(r)) = (op, &it.right)
            && r.operator == LogicalOperator::Or
        {
            let mut leftmost = &r.left;
            while let Expression::LogicalExpression(l) = leftmost
                && l.operator == LogicalOperator::Or
            {
                leftmost = &l.left;
            }
            self.replace(it.span.start, it.span.start, "(".to_owned());
            let end = leftmost.span().end;
            self.replace(end, end, ")".to_owned());
        } else {
            self.parenthesize_operand(&it.right, p, op, false);
        }
        walk::walk_logical_expression(self, it);
    }

    fn visit_class_body(&mut self, it: &ClassBody<'a>) {
        // Parameter properties become class fields declared first (as TypeScript emits them
        // with `useDefineForClassFields`), and assignments in the constructor.
        let ctor = it.body.iter().find_map(|e| match e {
            ClassElement::MethodDefinition(m)
                if m.kind == MethodDefinitionKind::Constructor && m.value.body.is_some() =>
            {
                Some(m)
            }
            _ => None,
        });
        if let Some(ctor) = ctor {
            let names = parameter_properties(ctor);
            if !names.is_empty() {
                let fields: String = names.iter().map(|n| format!(" {n};")).collect();
                self.replace(it.span.start + 1, it.span.start + 1, fields);
            }
        }
        let mut accessor_index = 0;
        for element in &it.body {
            match element {
                ClassElement::TSIndexSignature(s) => self.blank_statement(s.span),
                ClassElement::MethodDefinition(m)
                    if m.value.body.is_none()
                        || m.r#type == MethodDefinitionType::TSAbstractMethodDefinition =>
                {
                    self.blank_statement(m.span);
                }
                ClassElement::PropertyDefinition(p)
                    if p.declare || p.r#type == PropertyDefinitionType::TSAbstractPropertyDefinition =>
                {
                    self.blank_statement(p.span);
                }
                ClassElement::AccessorProperty(p)
                    if p.r#type == AccessorPropertyType::TSAbstractAccessorProperty =>
                {
                    self.blank_statement(p.span);
                }
                ClassElement::MethodDefinition(m) => {
                    let start = m.decorators.last().map_or(m.span.start, |d| d.span.end);
                    self.blank_modifiers(start, key_start(&m.key, m.computed, self.source));
                    if m.optional {
                        self.blank_marker_after(m.key.span().end, m.computed, b'?');
                    }
                    self.visit_method_definition(m);
                }
                ClassElement::PropertyDefinition(p) => {
                    let start = p.decorators.last().map_or(p.span.start, |d| d.span.end);
                    self.blank_modifiers(start, key_start(&p.key, p.computed, self.source));
                    if p.optional {
                        self.blank_marker_after(p.key.span().end, p.computed, b'?');
                    }
                    if p.definite {
                        self.blank_marker_after(p.key.span().end, p.computed, b'!');
                    }
                    self.visit_property_definition(p);
                }
                ClassElement::AccessorProperty(p) => {
                    let class = self.class_name.clone();
                    self.lower_accessor(class.as_deref(), p, accessor_index);
                    accessor_index += 1;
                }
                ClassElement::StaticBlock(b) => self.visit_static_block(b),
            }
        }
    }

    fn visit_method_definition(&mut self, it: &MethodDefinition<'a>) {
        if it.kind == MethodDefinitionKind::Constructor
            && let Some(body) = &it.value.body
        {
            let names = parameter_properties(it);
            if !names.is_empty() {
                let super_call = body.statements.iter().find_map(|s| match s {
                    Statement::ExpressionStatement(e) => match e.expression.get_inner_expression() {
                        Expression::CallExpression(c) if matches!(c.callee, Expression::Super(_)) => {
                            Some(s.span())
                        }
                        _ => None,
                    },
                    _ => None,
                });
                let at = super_call
                    .map(|s| s.end)
                    .or_else(|| body.directives.last().map(|d| d.span.end))
                    .unwrap_or(body.span.start + 1);
                // After `super()` or a directive written without a semicolon, end it first.
                let separator =
                    if matches!(self.bytes().get((at as usize).wrapping_sub(1)), Some(b';' | b'{')) {
                        ""
                    } else {
                        ";"
                    };
                let assignments: String = std::iter::once(separator.to_owned())
                    .chain(names.iter().map(|n| format!(" this.{n} = {n};")))
                    .collect();
                self.replace(at, at, assignments);
            }
        }
        walk::walk_method_definition(self, it);
    }

    fn visit_arrow_function_expression(&mut self, it: &oxc::ast::ast::ArrowFunctionExpression<'a>) {
        // `(a): {\n x: T\n} => a` would leave a line break before `=>`, which JavaScript rejects:
        // move the closing parenthesis to the end of the return type.
        if let Some(ret) = &it.return_type {
            let params_end = it.params.span.end;
            let spans_lines = self.source[ret.span.start as usize..ret.span.end as usize]
                .contains(['\n', '\r', '\u{2028}', '\u{2029}']);
            if spans_lines
                && self.bytes().get((params_end as usize).wrapping_sub(1)) == Some(&b')')
                && self.bytes().get((ret.span.end as usize).wrapping_sub(1)).is_some_and(u8::is_ascii)
            {
                self.blank(params_end - 1, ret.span.end - 1);
                self.replace(ret.span.end - 1, ret.span.end, ")".to_owned());
                if let Some(tp) = &it.type_parameters {
                    self.blank_span(tp.span);
                }
                self.visit_formal_parameters(&it.params);
                self.visit_arrow_function_body(&it.body);
                return;
            }
        }
        walk::walk_arrow_function_expression(self, it);
    }
}
