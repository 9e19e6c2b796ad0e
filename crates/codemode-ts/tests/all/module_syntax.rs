//! Module syntax is rejected in both languages; text that only mentions it is not.

use codemode_ts::{DiagnosticKind, Language, check_module_syntax};

use crate::{js, ts};

const REJECTED: &[(&str, u32, u32)] = &[
    ("import fs from 'node:fs';\nreturn 1;", 1, 1),
    ("import { readFile } from 'fs'", 1, 1),
    ("import * as path from 'path'", 1, 1),
    ("import 'side-effect'", 1, 1),
    ("const x = 1;\nexport const y = 2;", 2, 1),
    ("export default 42", 1, 1),
    ("export { a as b }; const a = 1", 1, 1),
    ("export * from './x'", 1, 1),
    ("const m = await import('./mod.js');", 1, 17),
    ("return (await import(\"x\")).default", 1, 15),
    ("return import.meta.url", 1, 8),
    ("const fs = require('fs')", 1, 12),
    ("const { join } = require(\"path\");", 1, 18),
    ("require('x')", 1, 1),
    ("const p = require.resolve('x')", 1, 11),
    ("async function f() {\n  return require('child_process');\n}", 2, 10),
    ("const load = () => import('./lazy');", 1, 20),
];

const REJECTED_TS_ONLY: &[(&str, u32, u32)] = &[
    ("import fs = require('fs');", 1, 1),
    ("export = 1;", 1, 1),
    ("export enum E { A }", 1, 1),
    ("import { type A, B } from './x';", 1, 1),
    ("namespace N { export const a = 1 }\nexport const b = 2;", 2, 1),
];

const ALLOWED: &[&str] = &[
    "const s = 'import x from \"y\"'; return s;",
    "const s = \"require('fs')\"; return s;",
    "const t = `import(${1}) and require(${2})`; return t;",
    "const r = /import\\(|require\\(/g; return r.source;",
    "// import fs from 'fs'\n/* require('x') */\nreturn 1;",
    "const obj = { import: 1, require: 2, export: 3 }; return obj.import + obj.require + obj.export;",
    "const requireAuth = (x) => x; return requireAuth(1);",
    "const importer = { import(x) { return x; } }; return importer.import(2);",
    "const meta = { import: { meta: 1 } }; return meta.import.meta;",
    "function required() { return 1 } return required();",
    "return tools.search('import csv files')",
];

const ALLOWED_TS_ONLY: &[&str] = &[
    "import type { A } from './a';\nconst a: A | null = null; return a;",
    "import { type A, type B } from './a';\nreturn 1;",
    "export type T = string;\nreturn 1;",
    "export interface I { x: number }\nreturn 1;",
    "export type { T } from './t';\nreturn 1;",
    "export declare const x: number;\nreturn 1;",
    "type M = typeof import('./m');\nreturn 1;",
    "let x: import('./m').T;\nreturn 1;",
];

#[test]
fn module_syntax_is_rejected_in_both_languages() {
    for &(source, line, column) in REJECTED {
        for (lang, out) in [("js", js(source)), ("ts", ts(source))] {
            let d = out.diagnostics.first().unwrap_or_else(|| panic!("{lang}: not rejected: {source}"));
            assert_eq!(d.kind, DiagnosticKind::ModuleSyntax, "{lang}: {source}: {d:?}");
            assert_eq!((d.line, d.column), (line, column), "{lang}: {source}");
            assert!(out.code.is_empty());
        }
    }
}

#[test]
fn typescript_module_forms_are_rejected() {
    for &(source, line, column) in REJECTED_TS_ONLY {
        let out = ts(source);
        let d = out.diagnostics.first().unwrap_or_else(|| panic!("not rejected: {source}"));
        assert_eq!(d.kind, DiagnosticKind::ModuleSyntax, "{source}: {d:?}");
        assert_eq!((d.line, d.column), (line, column), "{source}");
    }
}

#[test]
fn mentions_of_module_syntax_are_allowed() {
    for &source in ALLOWED {
        let out = js(source);
        assert!(out.is_ok(), "js rejected {source}: {}", out.error_message());
        assert_eq!(out.code, source);
        let out = ts(source);
        assert!(out.is_ok(), "ts rejected {source}: {}", out.error_message());
    }
}

#[test]
fn type_only_module_syntax_is_erased() {
    for &source in ALLOWED_TS_ONLY {
        let out = ts(source);
        assert!(out.is_ok(), "rejected {source}: {}", out.error_message());
        assert!(!out.code.contains("import ") && !out.code.contains("export "), "{source} -> {}", out.code);
        assert_eq!(out.code.lines().count(), source.lines().count());
    }
}

#[test]
fn the_message_says_what_to_use_instead() {
    let out = js("import x from 'y'");
    let message = &out.diagnostics[0].message;
    for needle in ["cannot import", "`tools`", "MCP", "API"] {
        assert!(message.contains(needle), "{message}");
    }
    let export = js("export const a = 1");
    assert!(export.diagnostics[0].message.contains("`return`"), "{}", export.diagnostics[0].message);
}

#[test]
fn every_occurrence_is_reported_up_to_the_bound() {
    let at_bound = "require('a');\n".repeat(codemode_ts::MAX_DIAGNOSTICS);
    assert_eq!(js(&at_bound).diagnostics.len(), codemode_ts::MAX_DIAGNOSTICS);
    let past_bound = "require('a');\n".repeat(codemode_ts::MAX_DIAGNOSTICS + 1);
    let out = js(&past_bound);
    assert_eq!(out.diagnostics.len(), codemode_ts::MAX_DIAGNOSTICS);
    assert_eq!(out.diagnostics.last().map(|d| d.line), Some(codemode_ts::MAX_DIAGNOSTICS as u32));
}

#[test]
fn check_module_syntax_alone() {
    let found = check_module_syntax("const a = 1;\nconst b = require('b');", Language::JavaScript);
    assert_eq!(found.len(), 1);
    assert_eq!((found[0].line, found[0].column), (2, 11));
    assert!(check_module_syntax("return 'require(x)'", Language::JavaScript).is_empty());
    assert!(check_module_syntax("import type { A } from 'a'", Language::TypeScript).is_empty());
}
