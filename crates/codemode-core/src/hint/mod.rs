//! JSON Schema -> compact TypeScript-style type hints.
//!
//! The catalog shows a hint per tool in the model-visible quick index
//! (`"openclaw:core:message" { to: string; text: string; silent?: boolean } -> { id: string }`), and
//! the MCP `.d.ts` renderer types function parameters with [`render_type`]. Every hint is one
//! syntactically valid TypeScript type expression, deterministic for a given schema and options, and
//! never longer than its character budget. Descriptions, titles, defaults, formats and numeric or
//! string constraints never appear.
//!
//! ```
//! use codemode_core::hint::{HintOptions, input_hint, output_hint};
//! use serde_json::json;
//!
//! let input = json!({
//!     "type": "object",
//!     "properties": {
//!         "to": { "type": "string", "description": "never shown" },
//!         "text": { "type": "string" },
//!         "silent": { "type": "boolean" }
//!     },
//!     "required": ["to", "text"]
//! });
//! assert_eq!(input_hint(&input, &HintOptions::input()), "{ to: string; text: string; silent?: boolean }");
//!
//! // Output hints exist only for closed, exactly representable schemas that fit.
//! let closed = json!({
//!     "type": "object",
//!     "properties": { "id": { "type": "string" } },
//!     "required": ["id"],
//!     "additionalProperties": false
//! });
//! assert_eq!(output_hint(&closed, &HintOptions::output()).as_deref(), Some("{ id: string }"));
//! let open = json!({ "type": "object", "properties": { "id": { "type": "string" } } });
//! assert_eq!(output_hint(&open, &HintOptions::output()), None);
//! ```
//!
//! # Mapping
//!
//! | JSON Schema | TypeScript |
//! | --- | --- |
//! | `true`, `{}` | `unknown` |
//! | `false`, `enum: []`, `type: []` | `never` |
//! | `type` `string` / `number`, `integer` / `boolean` / `null` | `string` / `number` / `boolean` / `null` |
//! | `type` list, `anyOf`, `oneOf` | union `A \| B` |
//! | `allOf`, `$ref` or combinators next to own keywords | intersection `A & B`; object members merge into one object |
//! | `enum`, `const` | literal union `"a" \| 1 \| null` (object/array values as object/tuple literal types) |
//! | `nullable: true` (OpenAPI) | `T \| null` |
//! | `properties`, `required` | `{ a: string; b?: number }`; keys that are not ASCII identifier names are quoted (`"x-id": string`) |
//! | `additionalProperties: false` | closed object (nothing added) |
//! | `additionalProperties: S` | `Record<string, S>` or `{ a: A; [key: string]: S }` |
//! | `additionalProperties: true` or `{}` (also `unevaluatedProperties`) | explicitly open: `Record<string, unknown>`, or `{ a: A; [key: string]: unknown }` |
//! | no `additionalProperties` | open object: the properties only; without properties `object`, or `{}` when `properties` is present but empty (a tool that takes no declared keys) |
//! | `patternProperties` | widened to `[key: string]: A \| B` (not exact); a single match-all pattern such as `^(.*)$` (TypeBox `Record`) is exact: `Record<string, A>` |
//! | `propertyNames` with `enum`/`const` | the listed keys become optional properties (closed) |
//! | `items: S` | `S[]`, or `Array<S>` when `S` is an object, union or intersection |
//! | `prefixItems` (2020-12), array `items` (draft-07) | tuple `[A, B?, ...C[]]`; elements from `minItems` on are optional; the rest comes from `items` (2020-12) / `additionalItems` (draft-07), none when it is `false` or `maxItems` allows no more |
//! | `$ref` `#`, `#/$defs/X`, `#/definitions/X`, any local JSON pointer | the target, inlined |
//! | cyclic, remote, `$anchor` or missing `$ref` | `unknown` (not exact) |
//! | any other JSON value as a schema | `unknown` (not exact) |
//!
//! Keywords that only narrow values (`not`, `if`/`then`/`else`, `dependentSchemas`, `contains`,
//! `pattern`, `format`, bounds) are ignored: the hint describes a superset, which still counts as
//! exact. Without `type`, `properties`/`required`/`additionalProperties`/`patternProperties`/
//! `propertyNames` imply an object and `items`/`prefixItems`/`additionalItems` imply an array.
//!
//! # Budget and degradation
//!
//! [`input_hint`] and [`render_type`] try, in order, until the text fits `max_chars`:
//!
//! 1. the full type (objects and arrays nested up to `max_depth` levels);
//! 2. objects/arrays nested deeper than 3 levels collapse to `object` / `unknown[]`, enums with
//!    more than 8 members to their base types (`"a" | "b" | ...` -> `string`);
//! 3. the same with 2 levels and 4 members; 4. with 1 level and 4 members;
//! 5. optional properties are dropped: below the top level all of them, at the top level those
//!    that do not fit, tried one by one in schema order; an object that lost properties gets the
//!    marker `[key: string]: unknown` (`{ a: string; [key: string]: unknown }`), or becomes
//!    `object` when nothing is left; with 2 levels and 8, then 4 enum members;
//! 6. the same with 1 level and every enum collapsed (single `const` values stay);
//! 7. the collapsed top-level kind: `object`, `unknown[]`, `string | null`, ...;
//! 8. `unknown`.
//!
//! Every step is deterministic. Budgets below [`MIN_HINT_CHARS`] are raised to it, so step 8
//! always fits.
//!
//! # Bounds
//!
//! Conversion never panics, never recurses more than a fixed depth (48 schema levels, `$ref` hops
//! and literal values included), and visits at most `8 × max_chars` schema nodes (at least 2,000,
//! at most 20,000) per attempt, so cyclic or diamond-shaped `$ref` graphs and huge or deep schemas
//! stay cheap and stack-safe; whatever lies beyond becomes `unknown` and makes the result inexact.
//! A `$ref` back into a schema that is being expanded is a cycle and becomes `unknown`.

mod convert;
mod ir;
mod render;

use serde_json::Value;

use self::convert::{Detail, convert};

/// Default budget of an input hint, in characters (quick-index lines must stay short).
pub const INPUT_HINT_MAX_CHARS: usize = 240;

/// Default budget of an output hint, in characters.
pub const OUTPUT_HINT_MAX_CHARS: usize = 400;

/// Default budget of [`render_type`], in characters (declaration files can afford more).
pub const RENDER_MAX_CHARS: usize = 4_000;

/// Default nesting of objects and arrays shown before they collapse to `object` / `unknown[]`.
pub const DEFAULT_MAX_DEPTH: usize = 8;

/// Smallest budget honoured: the length of `unknown[]`. Smaller budgets are raised to it.
pub const MIN_HINT_CHARS: usize = 9;

/// Options of [`input_hint`] and [`output_hint`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct HintOptions {
    /// Most characters (Unicode scalar values) in the hint; values below [`MIN_HINT_CHARS`] count
    /// as [`MIN_HINT_CHARS`]. Default: [`INPUT_HINT_MAX_CHARS`] ([`HintOptions::output`] uses
    /// [`OUTPUT_HINT_MAX_CHARS`]).
    pub max_chars: usize,
}

impl HintOptions {
    /// Defaults for input hints: [`INPUT_HINT_MAX_CHARS`].
    pub const fn input() -> Self {
        HintOptions { max_chars: INPUT_HINT_MAX_CHARS }
    }

    /// Defaults for output hints: [`OUTPUT_HINT_MAX_CHARS`].
    pub const fn output() -> Self {
        HintOptions { max_chars: OUTPUT_HINT_MAX_CHARS }
    }

    /// The same options with another budget.
    pub const fn with_max_chars(mut self, max_chars: usize) -> Self {
        self.max_chars = max_chars;
        self
    }
}

impl Default for HintOptions {
    fn default() -> Self {
        HintOptions::input()
    }
}

/// Options of [`render_type`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RenderOptions {
    /// Most characters in the text; values below [`MIN_HINT_CHARS`] count as [`MIN_HINT_CHARS`].
    /// Default: [`RENDER_MAX_CHARS`].
    pub max_chars: usize,
    /// Objects and arrays nested deeper than this collapse to `object` / `unknown[]` (the type is
    /// then not complete). Default: [`DEFAULT_MAX_DEPTH`].
    pub max_depth: usize,
}

impl RenderOptions {
    /// The same options with another budget.
    pub const fn with_max_chars(mut self, max_chars: usize) -> Self {
        self.max_chars = max_chars;
        self
    }

    /// The same options with another depth limit.
    pub const fn with_max_depth(mut self, max_depth: usize) -> Self {
        self.max_depth = max_depth;
        self
    }
}

impl Default for RenderOptions {
    fn default() -> Self {
        RenderOptions { max_chars: RENDER_MAX_CHARS, max_depth: DEFAULT_MAX_DEPTH }
    }
}

/// The result of [`render_type`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RenderedType {
    /// A TypeScript type expression, at most `max_chars` characters long.
    pub text: String,
    /// `text` is exactly the schema's shape: nothing collapsed, dropped, cut by the work bound or
    /// unresolved, no unsupported construct, and every object closed: `additionalProperties: false`
    /// or `unevaluatedProperties: false`, or every undeclared key typed (`additionalProperties: S`,
    /// a single match-all `patternProperties`), or `propertyNames` listing the keys. Only complete
    /// types may serve as output hints.
    pub complete: bool,
    /// The full type did not fit `max_chars` and a shorter form was chosen (implies `!complete`).
    pub degraded: bool,
}

/// The input hint of a tool: always a valid TypeScript type within `options.max_chars`, shortened
/// step by step (see the [module docs](self)) when the full type does not fit.
pub fn input_hint(schema: &Value, options: &HintOptions) -> String {
    let options = RenderOptions::default().with_max_chars(options.max_chars);
    render_type(schema, schema, &options).text
}

/// The output hint of a tool: `Some` only when the schema renders [completely](RenderedType::complete)
/// (every object level closed, nothing approximated) within `options.max_chars`; otherwise `None`
/// (shown as `-> ?`). Whether the schema is trusted enough to be hinted at all is the caller's call.
pub fn output_hint(schema: &Value, options: &HintOptions) -> Option<String> {
    let options = RenderOptions::default().with_max_chars(options.max_chars);
    let rendered = render_type(schema, schema, &options);
    rendered.complete.then_some(rendered.text)
}

/// Renders `schema` (the root schema or a sub-schema of it) as a TypeScript type, resolving local
/// `$ref`s against `root`. Always valid TypeScript within `options.max_chars`; see [`RenderedType`]
/// for what `complete` promises.
pub fn render_type(schema: &Value, root: &Value, options: &RenderOptions) -> RenderedType {
    let max_chars = effective_budget(options.max_chars);
    let max_depth = options.max_depth;
    let ladder = [
        Detail { depth_limit: max_depth, max_literals: usize::MAX, greedy_optional: false },
        Detail { depth_limit: max_depth.min(3), max_literals: 8, greedy_optional: false },
        Detail { depth_limit: max_depth.min(2), max_literals: 4, greedy_optional: false },
        Detail { depth_limit: max_depth.min(1), max_literals: 4, greedy_optional: false },
        Detail { depth_limit: max_depth.min(2), max_literals: 8, greedy_optional: true },
        Detail { depth_limit: max_depth.min(2), max_literals: 4, greedy_optional: true },
        Detail { depth_limit: max_depth.min(1), max_literals: 1, greedy_optional: true },
        Detail { depth_limit: 0, max_literals: 0, greedy_optional: false },
    ];
    for (rung, detail) in ladder.into_iter().enumerate() {
        let converted = convert(schema, root, detail, max_chars);
        let Some(rendered) = fit(&converted, max_chars) else { continue };
        let degraded = rung > 0;
        let complete = !degraded && converted.exact && !rendered.dropped && !converted.ty.has_open_object();
        return RenderedType { text: rendered.text, complete, degraded };
    }
    RenderedType { text: ir::Keyword::Unknown.as_str().to_owned(), complete: false, degraded: true }
}

/// Renders `converted` within `max_chars`, adding greedy optional properties in schema order while
/// they fit. `None` when even the minimal form does not fit.
fn fit(converted: &convert::Converted, max_chars: usize) -> Option<render::Rendered> {
    /// Bounds the re-rendering work on objects with thousands of optional properties.
    const MAX_GREEDY_TRIES: usize = 64;
    let mut included = vec![false; converted.greedy_count];
    let mut best = render::render(&converted.ty, max_chars, &included).ok()?;
    for id in 0..converted.greedy_count.min(MAX_GREEDY_TRIES) {
        included[id] = true;
        match render::render(&converted.ty, max_chars, &included) {
            Ok(rendered) => best = rendered,
            Err(render::Overflow) => included[id] = false,
        }
    }
    Some(best)
}

fn effective_budget(max_chars: usize) -> usize {
    max_chars.max(MIN_HINT_CHARS)
}

/// `name` as a property key in a TypeScript object type: as it is when it is an ASCII identifier
/// name (reserved words included: `delete`), otherwise as a [string literal](string_literal)
/// (`"x-request-id"`, `"2fa"`, `""`). The rule every hint uses.
pub fn property_key(name: &str) -> String {
    if crate::ident::is_identifier_name(name) { name.to_owned() } else { quote(name) }
}

/// `text` as a TypeScript (and JavaScript, and JSON) string literal: JSON escaping, plus `\uXXXX`
/// for invisible and direction-changing characters (C1 controls, zero-width and bidi marks,
/// line/paragraph separators, BOM, tag characters) so that the literal shows what it contains.
/// The rule every hint uses for literal types and quoted keys.
pub fn string_literal(text: &str) -> String {
    quote(text)
}

pub(crate) fn quote(text: &str) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0c}' => out.push_str("\\f"),
            c if is_invisible(c) => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{unit:04X}");
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn is_invisible(c: char) -> bool {
    matches!(c,
        '\u{00}'..='\u{1f}' | '\u{7f}'..='\u{9f}' | '\u{ad}' | '\u{061c}' | '\u{180e}'
        | '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2060}'..='\u{206f}'
        | '\u{feff}' | '\u{fff9}'..='\u{fffb}' | '\u{e0000}'..='\u{e007f}')
}
