//! Finds module syntax in a parsed cell: static `import`/`export`, `import()`, `import.meta` and
//! calls to `require`. Text that only mentions them (strings, templates, regexes, comments,
//! `obj.import`, `requireAuth`) is not flagged, because the check walks the AST rather than the text.
//!
//! This check exists to give the model a useful message. The guarantee is elsewhere: the guest has
//! no module loader and no `require`, so module syntax that slipped past this check still could not
//! load anything.

use oxc::ast::ast::{
    CallExpression, Expression, ImportDeclarationSpecifier, ImportExpression, ImportMeta, ImportOrExportKind,
    ModuleDeclaration, TSExternalModuleDeclaration, TSGlobalDeclaration, TSImportEqualsDeclaration,
    TSModuleReference, TSNamespaceDeclaration,
};
use oxc::ast_visit::{Visit, walk};
use oxc::span::{GetSpan, Span};

const USE_INSTEAD: &str = "Code Mode cells cannot import modules; there is no module loader. Use the globals \
instead: `tools` (tools.search, tools.describe, tools.callValue) for catalog tools, `MCP.<server>.<tool>(...)` \
for MCP servers, and `API` for their TypeScript declarations.";

/// One module-syntax finding: where, and the message for the model.
pub(crate) struct Finding {
    pub(crate) span: Span,
    pub(crate) message: String,
}

/// Walks a program and records every module-syntax use.
#[derive(Default)]
pub(crate) struct ModuleCheck {
    pub(crate) findings: Vec<Finding>,
    /// Depth of TypeScript namespaces: `export` inside one is not module syntax.
    namespace_depth: u32,
}

impl ModuleCheck {
    fn push(&mut self, span: Span, what: &str) {
        self.findings.push(Finding { span, message: format!("{what} is not allowed. {USE_INSTEAD}") });
    }
}

/// Is this module declaration erased by TypeScript (type-only), and so harmless?
pub(crate) fn is_type_only(decl: &ModuleDeclaration<'_>) -> bool {
    use oxc::ast::ast::Declaration as D;
    match decl {
        ModuleDeclaration::ImportDeclaration(d) => {
            d.import_kind == ImportOrExportKind::Type
                || d.specifiers.as_ref().is_some_and(|s| {
                    !s.is_empty()
                        && s.iter().all(|s| {
                            matches!(s, ImportDeclarationSpecifier::ImportSpecifier(s) if s.import_kind == ImportOrExportKind::Type)
                        })
                })
        }
        ModuleDeclaration::ExportNamedDeclaration(d) => {
            d.export_kind == ImportOrExportKind::Type
                || (!d.specifiers.is_empty()
                    && d.specifiers.iter().all(|s| s.export_kind == ImportOrExportKind::Type))
        }
        ModuleDeclaration::ExportFromDeclaration(d) => d.export_kind == ImportOrExportKind::Type,
        ModuleDeclaration::ExportAllDeclaration(d) => d.export_kind == ImportOrExportKind::Type,
        ModuleDeclaration::ExportDeclaration(d) => match &d.declaration {
            D::TSTypeAliasDeclaration(_) | D::TSInterfaceDeclaration(_) => true,
            D::VariableDeclaration(v) => v.declare,
            D::FunctionDeclaration(f) => f.declare,
            D::ClassDeclaration(c) => c.declare,
            D::TSEnumDeclaration(e) => e.declare,
            D::TSNamespaceDeclaration(n) => n.declare,
            D::TSExternalModuleDeclaration(m) => m.declare,
            D::TSGlobalDeclaration(g) => g.declare,
            D::TSImportEqualsDeclaration(_) => false,
        },
        ModuleDeclaration::ExportDefaultDeclaration(d) => {
            matches!(d.declaration, oxc::ast::ast::ExportDefaultDeclarationKind::TSInterfaceDeclaration(_))
        }
        ModuleDeclaration::TSExportAssignment(_) | ModuleDeclaration::TSNamespaceExportDeclaration(_) => false,
    }
}

impl<'a> Visit<'a> for ModuleCheck {
    fn visit_ts_namespace_declaration(&mut self, it: &TSNamespaceDeclaration<'a>) {
        self.namespace_depth += 1;
        walk::walk_ts_namespace_declaration(self, it);
        self.namespace_depth -= 1;
    }

    fn visit_ts_external_module_declaration(&mut self, it: &TSExternalModuleDeclaration<'a>) {
        self.namespace_depth += 1;
        walk::walk_ts_external_module_declaration(self, it);
        self.namespace_depth -= 1;
    }

    fn visit_ts_global_declaration(&mut self, it: &TSGlobalDeclaration<'a>) {
        self.namespace_depth += 1;
        walk::walk_ts_global_declaration(self, it);
        self.namespace_depth -= 1;
    }

    fn visit_module_declaration(&mut self, it: &ModuleDeclaration<'a>) {
        if self.namespace_depth > 0 {
            walk::walk_module_declaration(self, it);
            return;
        }
        if is_type_only(it) {
            return;
        }
        let what = match it {
            ModuleDeclaration::ImportDeclaration(_) => "An `import` declaration",
            ModuleDeclaration::TSExportAssignment(_) => "`export =`",
            _ => {
                "An `export` declaration (a cell is the body of an async function: `return` its value instead)"
            }
        };
        self.push(it.span(), what);
        walk::walk_module_declaration(self, it);
    }

    fn visit_ts_import_equals_declaration(&mut self, it: &TSImportEqualsDeclaration<'a>) {
        if matches!(it.module_reference, TSModuleReference::ExternalModuleReference(_))
            && it.import_kind == ImportOrExportKind::Value
        {
            self.push(it.span, "`import ... = require(...)`");
        }
    }

    fn visit_import_expression(&mut self, it: &ImportExpression<'a>) {
        self.push(it.span, "A dynamic `import()`");
        walk::walk_import_expression(self, it);
    }

    fn visit_import_meta(&mut self, it: &ImportMeta) {
        self.push(it.span, "`import.meta`");
    }

    fn visit_call_expression(&mut self, it: &CallExpression<'a>) {
        let callee = it.callee.get_inner_expression();
        let is_require = match callee {
            Expression::Identifier(id) => id.name == "require",
            // `require.resolve(...)`, `require.context(...)`
            Expression::StaticMemberExpression(m) => {
                matches!(m.object.get_inner_expression(), Expression::Identifier(id) if id.name == "require")
            }
            _ => false,
        };
        if is_require {
            self.push(it.span, "A `require(...)` call");
        }
        walk::walk_call_expression(self, it);
    }
}
