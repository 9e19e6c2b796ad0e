//! MCP metadata -> `.d.ts` text: one declaration per tool, one file per server, and the index.
//!
//! Every piece of server text goes through [`crate::text`] (comments) or is quoted (property keys);
//! identifiers come from [`NameTable`](crate::NameTable). Each function returns text within the byte budget it is
//! given (callers test this).

use std::collections::HashSet;
use std::fmt::Write as _;

use codemode_core::hint::{RenderOptions, property_key, render_type, string_literal};
use serde_json::{Map, Value};

use crate::model::{McpServer, McpTool};
use crate::names::NameTable;
use crate::text::{comment_text, first_line, first_sentence};

/// Longest tool summary line in a JSDoc comment, in characters.
pub const SUMMARY_MAX_CHARS: usize = 200;

/// Longest first sentence of a tool in the budget-stripped part of a server file and in the tool
/// list of a server's `$api()` header, in characters.
pub const COMPACT_SUMMARY_MAX_CHARS: usize = 120;

/// Longest `@param` description, in characters (at the most detailed level).
pub const PARAM_DOC_MAX_CHARS: usize = 160;

/// Longest server summary in `mcp/index.d.ts`, in characters.
pub const SERVER_SUMMARY_MAX_CHARS: usize = 120;

/// The declarations every file refers to; they open `mcp/index.d.ts`.
pub const SHARED_TYPES: &str = r#"/** What every `MCP.<server>.<tool>(input)` call resolves to (an MCP `CallToolResult`). */
type McpToolResult = {
  content?: unknown[];
  structuredContent?: unknown;
  isError?: boolean;
  [key: string]: unknown;
};

/** What `MCP.<server>.$api(toolName?, options?)` resolves to. */
type McpApiHeader = {
  /** Identifier of the server under `MCP`. */
  server: string;
  /** Exact server name; catalog ids are `mcp:<serverName>:<toolName>`. */
  serverName: string;
  /** Declaration file of the server, for `API.read(path)`. */
  path: string;
  /** TypeScript declarations of the one tool asked for; for a server header, where to find them. */
  declarations: string;
  /** Every tool of the server, with the first sentence of its description (server header only). */
  tools?: Array<{ tool: string; toolName: string; id: string; description?: string }>;
  /** Identifier of the tool under `MCP.<server>` (tool header only). */
  tool?: string;
  /** Exact MCP tool name (tool header only). */
  toolName?: string;
  /** Exact catalog id (tool header only). */
  id?: string;
  /** Full JSON Schema of the input (`{ schema: true }` only). */
  inputSchema?: unknown;
  /** Declared JSON Schema of `structuredContent`, if any (`{ schema: true }` only). */
  outputSchema?: unknown;
  /** The tool's title, as the server sent it (`{ schema: true }` only). */
  title?: string;
  /** The tool's full description, as the server sent it (`{ schema: true }` only). */
  description?: string;
  /** The server's behaviour hints (`readOnlyHint`, ...), as sent (`{ schema: true }` only). */
  annotations?: unknown;
};

/** What `MCP.<server>.resources.read({ uri })` resolves to (an MCP `ReadResourceResult`). */
type McpResourceResult = {
  contents?: unknown[];
  [key: string]: unknown;
};

/** What `MCP.<server>.prompts.get({ name, arguments })` resolves to (an MCP `GetPromptResult`). */
type McpPromptResult = {
  description?: string;
  messages?: unknown[];
  [key: string]: unknown;
};
"#;

const API_DECL: &str = "  /** Return this TypeScript-style API header: the whole server, or one tool; `schema: true` adds the tool's JSON Schemas. */\n  function $api(toolName?: string, options?: { schema?: boolean }): Promise<McpApiHeader>;\n";

const RESOURCES_DECL: &str = "  /** Resources of this server. */\n  namespace resources {\n    /** Read one resource by URI. */\n    function read(input: { uri: string }): Promise<McpResourceResult>;\n  }\n";

const PROMPTS_DECL: &str = "  /** Prompts of this server. */\n  namespace prompts {\n    /** Get one prompt, filled with its arguments. */\n    function get(input: { name: string; arguments?: { [key: string]: string } }): Promise<McpPromptResult>;\n  }\n";

/// How detailed one rendering attempt of a tool is.
#[derive(Clone, Copy)]
struct Detail {
    /// Budget of each property type, in characters.
    type_chars: usize,
    /// Budget of each `@param` description; 0 leaves descriptions out.
    param_doc_chars: usize,
    /// Keep only required properties (the rest is marked by an index signature).
    required_only: bool,
}

const LADDER: [Detail; 5] = [
    Detail { type_chars: 1_000, param_doc_chars: PARAM_DOC_MAX_CHARS, required_only: false },
    Detail { type_chars: 240, param_doc_chars: 80, required_only: false },
    Detail { type_chars: 80, param_doc_chars: 0, required_only: false },
    Detail { type_chars: 80, param_doc_chars: 0, required_only: true },
    Detail { type_chars: 24, param_doc_chars: 0, required_only: true },
];

/// The declaration of one tool inside `declare namespace MCP.<server> { ... }` (indented by two
/// spaces, ending in a newline), at most `max_bytes` bytes long (never less than the fallback).
pub(crate) fn tool_declaration(tool: &McpTool, ident: &str, max_bytes: usize) -> String {
    let summary = tool
        .description
        .as_deref()
        .map(|d| first_line(d, SUMMARY_MAX_CHARS))
        .filter(|s| !s.is_empty())
        .or_else(|| tool.title.as_deref().map(|t| first_line(t, SUMMARY_MAX_CHARS)))
        .unwrap_or_default();
    let returns = tool.output_schema.is_some().then(|| {
        format!(
            "@returns `structuredContent` has a declared schema: `$api(\"{ident}\", {{ schema: true }})`."
        )
    });
    if let Some(properties) = object_properties(&tool.input_schema) {
        let required = required_keys(&tool.input_schema);
        // Open by the schema's own word (`true`, `{}`, a value schema): undeclared keys are allowed.
        let indexed =
            !matches!(tool.input_schema.get("additionalProperties"), None | Some(Value::Bool(false)));
        for detail in LADDER {
            let attempt = property_declaration(
                tool,
                ident,
                &summary,
                returns.as_deref(),
                properties,
                &required,
                indexed,
                detail,
                max_bytes,
            );
            if let Some(text) = attempt {
                return text;
            }
        }
    } else {
        let input = plain_input_type(&tool.input_schema);
        let text = assemble(&summary_lines(&summary, returns.as_deref()), ident, &input, false, max_bytes);
        if let Some(text) = text {
            return text;
        }
    }
    fallback_declaration(ident)
}

/// The declaration used when nothing more detailed fits: an open input and a pointer to `$api`.
pub(crate) fn fallback_declaration(ident: &str) -> String {
    format!(
        "  /**\n   * Input schema too large to declare here: call `$api(\"{ident}\", {{ schema: true }})`.\n   */\n  function {ident}(input: {{ [key: string]: unknown }}): Promise<McpToolResult>;\n"
    )
}

/// `properties` of an object schema whose top level the parameter layout can show exactly: an
/// object of properties, with no combinator or reference next to it.
fn object_properties(schema: &Value) -> Option<&Map<String, Value>> {
    let map = schema.as_object()?;
    if ["anyOf", "oneOf", "allOf", "$ref", "not", "if"].iter().any(|k| map.contains_key(*k)) {
        return None;
    }
    match map.get("type") {
        None => {}
        Some(Value::String(t)) if t == "object" => {}
        Some(_) => return None,
    }
    map.get("properties")?.as_object()
}

fn required_keys(schema: &Value) -> HashSet<&str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|keys| keys.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// The input type of a schema without a property layout: an object schema without `properties`
/// is an open (or, with `additionalProperties: false`, empty) object; anything else is rendered.
fn plain_input_type(schema: &Value) -> String {
    let Some(map) = schema.as_object() else { return "{ [key: string]: unknown }".to_owned() };
    let shaped = ["anyOf", "oneOf", "allOf", "$ref", "items", "enum", "const", "not", "if"]
        .iter()
        .any(|k| map.contains_key(*k))
        || map.get("type").is_some_and(|t| t != "object");
    if shaped {
        return render_type(schema, schema, &RenderOptions::default().with_max_chars(1_000)).text;
    }
    if map.get("additionalProperties") == Some(&Value::Bool(false)) {
        "{}".to_owned()
    } else {
        "{ [key: string]: unknown }".to_owned()
    }
}

fn summary_lines(summary: &str, returns: Option<&str>) -> Vec<String> {
    let mut lines = Vec::new();
    if !summary.is_empty() {
        lines.push(summary.to_owned());
    }
    if let Some(returns) = returns {
        lines.push(returns.to_owned());
    }
    lines
}

#[allow(clippy::too_many_arguments)] // private: one attempt of the ladder, all inputs spelled out
fn property_declaration(
    tool: &McpTool,
    ident: &str,
    summary: &str,
    returns: Option<&str>,
    properties: &Map<String, Value>,
    required: &HashSet<&str>,
    indexed: bool,
    detail: Detail,
    max_bytes: usize,
) -> Option<String> {
    let mut doc = Vec::new();
    if !summary.is_empty() {
        doc.push(summary.to_owned());
    }
    // Bytes of `doc` so far (kept, not summed per property).
    let mut doc_len = summary.len();
    let mut body = String::new();
    let mut any_required = false;
    let mut left_out = false;
    for (key, sub) in properties {
        let optional = !required.contains(key.as_str());
        any_required |= !optional;
        if optional && detail.required_only {
            left_out = true;
            continue;
        }
        let key_text = property_key(key);
        let ty =
            render_type(sub, &tool.input_schema, &RenderOptions::default().with_max_chars(detail.type_chars));
        let _ = writeln!(body, "    {key_text}{}: {};", if optional { "?" } else { "" }, ty.text);
        let mut param = format!("@param {}", comment_text(&key_text, 80));
        if detail.param_doc_chars > 0 {
            let description = sub
                .get("description")
                .and_then(Value::as_str)
                .or_else(|| sub.get("title").and_then(Value::as_str))
                .map(|d| comment_text(d, detail.param_doc_chars))
                .unwrap_or_default();
            if !description.is_empty() {
                param.push(' ');
                param.push_str(&description);
            }
        }
        doc_len += param.len();
        doc.push(param);
        // Early exit: this attempt already cannot fit.
        if body.len() + doc_len > max_bytes {
            return None;
        }
    }
    if left_out || indexed {
        body.push_str("    [key: string]: unknown;\n");
    }
    if left_out {
        doc.push(format!(
            "Optional properties are left out: `$api(\"{ident}\", {{ schema: true }})` has them."
        ));
    }
    if let Some(returns) = returns {
        doc.push(returns.to_owned());
    }
    let input = if body.is_empty() { "{}".to_owned() } else { format!("{{\n{body}  }}") };
    assemble(&doc, ident, &input, !any_required, max_bytes)
}

/// JSDoc + signature, or `None` when over `max_bytes`.
fn assemble(
    doc: &[String],
    ident: &str,
    input: &str,
    optional_input: bool,
    max_bytes: usize,
) -> Option<String> {
    let mut out = String::new();
    match doc {
        [] => {}
        [line] => {
            let _ = writeln!(out, "  /** {line} */");
        }
        lines => {
            out.push_str("  /**\n");
            for line in lines {
                let _ = writeln!(out, "   * {line}");
            }
            out.push_str("   */\n");
        }
    }
    let _ = writeln!(
        out,
        "  function {ident}(input{}: {input}): Promise<McpToolResult>;",
        if optional_input { "?" } else { "" }
    );
    (out.len() <= max_bytes).then_some(out)
}

/// Budgets of one server file.
#[derive(Clone, Copy)]
pub(crate) struct FileBudget {
    pub(crate) max_file_bytes: usize,
    pub(crate) max_tool_bytes: usize,
    /// Declarations are left out entirely (the run's total budget is spent).
    pub(crate) minimal: bool,
}

/// `mcp/<ident>.d.ts` of one server, at most `budget.max_file_bytes` bytes (never less than its
/// fixed frame).
pub(crate) fn server_file(server: &McpServer, ident: &str, tools: &NameTable, budget: FileBudget) -> String {
    let mut head = String::new();
    let _ = writeln!(
        head,
        "/* mcp/{ident}.d.ts: MCP server {} as `MCP.{ident}`, {} tool{}. Generated per run; read-only. */",
        quote_for_comment(&server.name),
        tools.len(),
        if tools.len() == 1 { "" } else { "s" },
    );
    let _ = writeln!(head, "\ndeclare namespace MCP.{ident} {{");
    head.push_str(API_DECL);
    let mut tail = String::new();
    if server.has_resources {
        tail.push('\n');
        tail.push_str(RESOURCES_DECL);
    }
    if server.has_prompts {
        tail.push('\n');
        tail.push_str(PROMPTS_DECL);
    }
    tail.push_str("}\n");

    let by_name: std::collections::HashMap<&str, &McpTool> =
        server.tools.iter().rev().map(|t| (t.name.as_str(), t)).collect();

    // First choice: every tool declared in full, if that fits the budget exactly. The
    // declarations rendered on the way are reused below (`rendered[k]` is the k-th tool's).
    let mut rendered: Vec<String> = Vec::new();
    if !budget.minimal {
        let room = budget.max_file_bytes.saturating_sub(head.len() + tail.len());
        let mut body_len = 0usize;
        let mut fits = true;
        for (tool_ident, name) in tools.entries() {
            let Some(tool) = by_name.get(name) else { continue };
            let decl = tool_declaration(tool, tool_ident, budget.max_tool_bytes);
            body_len += 1 + decl.len();
            rendered.push(decl);
            if body_len > room {
                fits = false;
                break;
            }
        }
        if fits {
            let mut out = head;
            for decl in &rendered {
                out.push('\n');
                out.push_str(decl);
            }
            return out + &tail;
        }
    }
    let mut rendered = rendered.into_iter();

    /// Room kept for the "more tools" note.
    const NOTE_RESERVE: usize = 160;
    let frame = head.len() + tail.len() + NOTE_RESERVE;
    let available = budget.max_file_bytes.saturating_sub(frame);
    // Full declarations may use three quarters of the room; compact ones fill the rest.
    let full_room = available / 4 * 3;
    let mut body = String::new();
    let mut compact = budget.minimal;
    let mut compact_started = false;
    let mut declared = 0usize;
    for (tool_ident, name) in tools.entries() {
        let Some(tool) = by_name.get(name) else { continue };
        let cached = rendered.next();
        if !compact {
            let decl = cached.unwrap_or_else(|| tool_declaration(tool, tool_ident, budget.max_tool_bytes));
            if body.len() + decl.len() < full_room {
                body.push('\n');
                body.push_str(&decl);
                declared += 1;
                continue;
            }
            compact = true;
        }
        if budget.minimal {
            break;
        }
        if !compact_started {
            compact_started = true;
            let note =
                "\n  /* Declarations left out below (file budget): `$api(\"<tool>\")` has each one. */\n";
            if body.len() + note.len() > available {
                break;
            }
            body.push_str(note);
        }
        let line = compact_declaration(tool, tool_ident);
        if body.len() + line.len() > available {
            break;
        }
        body.push_str(&line);
        declared += 1;
    }
    let missing = tools.len() - declared;
    if missing > 0 {
        let _ = write!(
            body,
            "\n  /* {missing} more tool{} not declared here (budget); `MCP.{ident}.$api()` lists every tool. */\n",
            if missing == 1 { " is" } else { "s are" }
        );
    }
    head + &body + &tail
}

/// A tool of the budget-stripped section: its first description sentence (at most
/// [`COMPACT_SUMMARY_MAX_CHARS`]) and an open signature.
fn compact_declaration(tool: &McpTool, ident: &str) -> String {
    let summary = tool
        .description
        .as_deref()
        .map(|d| first_sentence(d, COMPACT_SUMMARY_MAX_CHARS))
        .filter(|s| !s.is_empty())
        .or_else(|| tool.title.as_deref().map(|t| first_sentence(t, COMPACT_SUMMARY_MAX_CHARS)))
        .unwrap_or_default();
    let mut out = String::new();
    if !summary.is_empty() {
        let _ = writeln!(out, "  /** {summary} */");
    }
    let _ =
        writeln!(out, "  function {ident}(input?: {{ [key: string]: unknown }}): Promise<McpToolResult>;");
    out
}

/// A name shown inside a comment: quoted, neutralized, bounded.
fn quote_for_comment(name: &str) -> String {
    comment_text(&string_literal(&name.chars().take(120).collect::<String>()), 160)
}

/// One line of the server list in `mcp/index.d.ts`.
pub(crate) fn index_line(server: &McpServer, ident: &str, path: &str, tool_count: usize) -> String {
    let mut line = format!(
        " * - `MCP.{ident}` ({path}): server {}, {tool_count} tool{}",
        quote_for_comment(&server.name),
        if tool_count == 1 { "" } else { "s" }
    );
    if server.has_resources {
        line.push_str(", resources");
    }
    if server.has_prompts {
        line.push_str(", prompts");
    }
    let summary = server
        .title
        .as_deref()
        .map(|t| first_line(t, SERVER_SUMMARY_MAX_CHARS))
        .filter(|s| !s.is_empty())
        .or_else(|| server.instructions.as_deref().map(|i| first_line(i, SERVER_SUMMARY_MAX_CHARS)))
        .unwrap_or_default();
    if !summary.is_empty() {
        line.push_str(". ");
        line.push_str(&summary);
    }
    line.push('\n');
    line
}

/// `mcp/index.d.ts`: the shared types and the list of visible servers, within `max_bytes` (never
/// less than the shared types and the frame).
pub(crate) fn index_file(lines: &[(String, String)], max_bytes: usize) -> String {
    let mut out = String::from(
        "/* mcp/index.d.ts: shared types of the MCP declarations and the visible MCP servers. Generated per run; read-only.\n * Call a tool: `await MCP.<server>.<tool>({ ...input })`. Full schema of one tool: `await MCP.<server>.$api(\"<tool>\", { schema: true })`. */\n\n",
    );
    out.push_str(SHARED_TYPES);
    out.push_str(
        "\n/**\n * Visible MCP servers; `API.read(\"mcp/<server>.d.ts\")` has the declarations of one.\n",
    );
    /// Room kept for the "more servers" line, the comment end and the `McpServerName` frame.
    const TAIL_RESERVE: usize = 200;
    let mut names: Vec<String> = Vec::new();
    let mut names_len = 0usize;
    let mut listed = 0usize;
    for (ident, line) in lines {
        let name = string_literal(ident);
        if out.len() + line.len() + names_len + name.len() + 3 + TAIL_RESERVE > max_bytes {
            break;
        }
        out.push_str(line);
        names_len += name.len() + 3;
        names.push(name);
        listed += 1;
    }
    if lines.is_empty() {
        out.push_str(" * (none)\n");
    }
    if listed < lines.len() {
        let _ = writeln!(out, " * - … {} more: `API.list(\"mcp\")` lists every file.", lines.len() - listed);
    }
    out.push_str(" */\n");
    if names.is_empty() {
        out.push_str("type McpServerName = never;\n");
    } else {
        let _ = writeln!(out, "type McpServerName = {};", names.join(" | "));
    }
    out
}
