//! JavaScript identifier rules shared by the catalog (safe convenience names), the MCP `.d.ts`
//! renderer (`MCP.<server>.<tool>` names) and the namespace registry (`globalName` checks).
//!
//! # Decisions
//!
//! - **ASCII only.** JavaScript allows any Unicode `ID_Start`/`ID_Continue` code point in
//!   identifiers, but names derived from untrusted catalogs are shown to a model and typed back by
//!   it; look-alike and invisible code points make that unsafe. Every non-ASCII character is
//!   therefore treated as not part of an identifier: [`is_identifier_name`] rejects it and the
//!   normalizers replace it.
//! - **Reserved means "never use as a binding or a path segment".** [`RESERVED_WORDS`] is wider
//!   than the ECMAScript list: it adds strict-mode words, `await`, the literals, the prototype-chain
//!   names (`__proto__`, `constructor`, `prototype`) and the global values that cannot or should
//!   not be shadowed (`undefined`, `NaN`, `Infinity`, `eval`, `arguments`).
//! - **Normalizers do not resolve collisions.** `create_issue`, `create-issue` and `createIssue`
//!   all map to the same camel name; callers that need unique names disambiguate themselves.
//!
//! ```
//! use codemode_core::ident::{is_identifier, to_camel_identifier, to_snake_identifier};
//!
//! assert!(is_identifier("createIssue"));
//! assert!(!is_identifier("delete"));
//! assert_eq!(to_camel_identifier("chrome-devtools"), "chromeDevtools");
//! assert_eq!(to_camel_identifier("delete"), "delete2");
//! assert_eq!(to_snake_identifier("get.thing"), "get_thing");
//! assert_eq!(to_snake_identifier("2fa"), "_2fa");
//! ```

/// Every name that [`is_identifier`] refuses even though it is an identifier name, sorted by byte
/// order (a test keeps it sorted).
///
/// It holds the ECMAScript reserved words (`break` … `with`, `enum`, and the literals `null`,
/// `true`, `false`), the strict-mode reserved words (`implements`, `interface`, `let`, `package`,
/// `private`, `protected`, `public`, `static`, `yield`), `await`, the prototype-chain names
/// `__proto__`, `constructor`, `prototype`, and the global values `undefined`, `NaN`, `Infinity`,
/// `eval`, `arguments`. Contextual keywords that are valid binding names everywhere (`async`,
/// `get`, `set`, `of`, `type`, ...) are not included.
pub const RESERVED_WORDS: &[&str] = &[
    "Infinity",
    "NaN",
    "__proto__",
    "arguments",
    "await",
    "break",
    "case",
    "catch",
    "class",
    "const",
    "constructor",
    "continue",
    "debugger",
    "default",
    "delete",
    "do",
    "else",
    "enum",
    "eval",
    "export",
    "extends",
    "false",
    "finally",
    "for",
    "function",
    "if",
    "implements",
    "import",
    "in",
    "instanceof",
    "interface",
    "let",
    "new",
    "null",
    "package",
    "private",
    "protected",
    "prototype",
    "public",
    "return",
    "static",
    "super",
    "switch",
    "this",
    "throw",
    "true",
    "try",
    "typeof",
    "undefined",
    "var",
    "void",
    "while",
    "with",
    "yield",
];

/// Whether `name` is in [`RESERVED_WORDS`] (case-sensitive: `Delete` is not reserved).
pub fn is_reserved_word(name: &str) -> bool {
    RESERVED_WORDS.binary_search(&name).is_ok()
}

/// Whether `c` may start an identifier: ASCII letter, `_` or `$`.
pub fn is_identifier_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_' || c == '$'
}

/// Whether `c` may continue an identifier: ASCII letter, ASCII digit, `_` or `$`.
pub fn is_identifier_part(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '$'
}

/// Whether `name` has identifier syntax: `[A-Za-z_$][A-Za-z0-9_$]*`, ASCII only.
///
/// Reserved words pass: they are valid property names (`{ delete: string }`), which is what this
/// check is for. Use [`is_identifier`] for bindings and global names.
pub fn is_identifier_name(name: &str) -> bool {
    let mut chars = name.chars();
    match chars.next() {
        Some(first) if is_identifier_start(first) => chars.all(is_identifier_part),
        _ => false,
    }
}

/// Whether `name` is safe as a JavaScript binding, global name or path segment: it has identifier
/// syntax ([`is_identifier_name`]) and is not a [reserved word](RESERVED_WORDS).
pub fn is_identifier(name: &str) -> bool {
    is_identifier_name(name) && !is_reserved_word(name)
}

/// Maps any string to an identifier, keeping its case and word separators as `_`.
///
/// Rules, applied in order:
/// 1. every maximal run of characters that are not identifier parts (anything but ASCII letters,
///    digits, `_`, `$`) becomes one `_`;
/// 2. an empty result becomes `_`;
/// 3. a leading ASCII digit gets a `_` prefix (`2fa` -> `_2fa`);
/// 4. a [reserved word](RESERVED_WORDS) gets a `_` suffix (`delete` -> `delete_`).
///
/// The result always satisfies [`is_identifier`], and the function is idempotent. Distinct inputs
/// may collide (`a-b`, `a.b` and `a_b` all give `a_b`).
pub fn to_snake_identifier(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 1);
    let mut in_invalid_run = false;
    for c in name.chars() {
        if is_identifier_part(c) {
            out.push(c);
            in_invalid_run = false;
        } else if !in_invalid_run {
            out.push('_');
            in_invalid_run = true;
        }
    }
    finish(out, "_")
}

/// Maps any string to a lowerCamelCase-style identifier.
///
/// Rules, applied in order:
/// 1. the name is split into words at every run of separators: `_` and every character that is
///    not an identifier part (so `-`, `.`, space, `/` and all non-ASCII characters separate words;
///    `$` and ASCII digits are word characters);
/// 2. the first word is kept as it is; every later word gets its first character upper-cased
///    (ASCII) and keeps the rest (`create_issue` -> `createIssue`, `get_HTTP_status` ->
///    `getHTTPStatus`, `GitHub-tools` -> `GitHubTools`);
/// 3. an empty result (the name had no word characters) becomes `_`;
/// 4. a leading ASCII digit gets a `_` prefix (`3d-model` -> `_3dModel`);
/// 5. a [reserved word](RESERVED_WORDS) gets a `2` suffix (`delete` -> `delete2`,
///    `__proto__` -> `proto`, which is not reserved).
///
/// The result always satisfies [`is_identifier`], and the function is idempotent. Distinct inputs
/// may collide (`create_issue`, `create-issue` and `createIssue` all give `createIssue`).
pub fn to_camel_identifier(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 1);
    let mut at_word_start = false;
    for c in name.chars() {
        if c != '_' && is_identifier_part(c) {
            if at_word_start && !out.is_empty() {
                out.push(c.to_ascii_uppercase());
            } else {
                out.push(c);
            }
            at_word_start = false;
        } else {
            at_word_start = true;
        }
    }
    finish(out, "2")
}

fn finish(mut out: String, reserved_suffix: &str) -> String {
    if out.is_empty() {
        out.push('_');
    }
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    if is_reserved_word(&out) {
        out.push_str(reserved_suffix);
    }
    out
}
