//! Early errors of strict-mode code that the parser does not report but the engine does: a
//! reserved word of strict mode (`public`, `private`, `static`, ...) used as a name, and `eval` or
//! `arguments` bound as a name, inside a class body (always strict) or under `"use strict"`.
//!
//! TypeScript accepts `constructor(public) {}` (a parameter named `public`) and emits it as is;
//! the engine then rejects the whole cell with a `SyntaxError` that has no position in the user's
//! code. Finding it here makes it an `invalid_input` diagnostic at the user's position.

use oxc::ast::ast::{BindingIdentifier, Class, Directive, Function, IdentifierReference, Program};
use oxc::ast_visit::{Visit, walk};
use oxc::span::Span;
use oxc::syntax::scope::ScopeFlags;

const STRICT_RESERVED: &[&str] =
    &["implements", "interface", "let", "package", "private", "protected", "public", "static", "yield"];

/// One early error: where (in the checked code) and the message.
pub(crate) struct Finding {
    pub(crate) span: Span,
    pub(crate) message: String,
}

#[derive(Default)]
pub(crate) struct StrictCheck {
    strict: u32,
    pub(crate) findings: Vec<Finding>,
}

fn has_use_strict(directives: &[Directive<'_>]) -> bool {
    directives.iter().any(|d| d.directive == "use strict")
}

impl StrictCheck {
    fn check(&mut self, name: &str, span: Span, binding: bool) {
        if self.strict == 0 {
            return;
        }
        let reserved = STRICT_RESERVED.contains(&name);
        if reserved || (binding && matches!(name, "eval" | "arguments")) {
            let what = if reserved { "is a reserved word" } else { "cannot be declared" };
            self.findings.push(Finding {
                span,
                message: format!(
                    "Syntax error: `{name}` {what} in strict-mode code (class bodies and code under \
                     \"use strict\" are strict); rename it."
                ),
            });
        }
    }
}

impl<'a> Visit<'a> for StrictCheck {
    fn visit_program(&mut self, it: &Program<'a>) {
        let strict = has_use_strict(&it.directives);
        self.strict += u32::from(strict);
        walk::walk_program(self, it);
        self.strict -= u32::from(strict);
    }

    fn visit_class(&mut self, it: &Class<'a>) {
        self.strict += 1;
        walk::walk_class(self, it);
        self.strict -= 1;
    }

    fn visit_function(&mut self, it: &Function<'a>, flags: ScopeFlags) {
        let strict = it.body.as_ref().is_some_and(|b| has_use_strict(&b.directives));
        self.strict += u32::from(strict);
        walk::walk_function(self, it, flags);
        self.strict -= u32::from(strict);
    }

    fn visit_binding_identifier(&mut self, it: &BindingIdentifier<'a>) {
        self.check(&it.name, it.span, true);
    }

    fn visit_identifier_reference(&mut self, it: &IdentifierReference<'a>) {
        self.check(&it.name, it.span, false);
    }
}
