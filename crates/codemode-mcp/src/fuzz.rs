//! Fuzz checks: the thin `fuzz/fuzz_targets/*.rs` glue calls these; each panics only on a real bug.

use std::collections::HashSet;

use codemode_core::ident::is_identifier;
use serde_json::{Value, json};

use crate::api::{HeaderOptions, INDEX_PATH, McpApi, McpApiOptions};
use crate::error::McpApiError;
use crate::model::{McpServer, McpTool};
use codemode_core::guest::MCP_SERVER_MEMBERS;

use crate::names::is_dangerous;
use crate::path::check_file_path;

/// Budgets of the second build in [`check_render`]: small, but above every fixed frame.
pub fn small_options() -> McpApiOptions {
    McpApiOptions::default()
        .with_max_server_file_bytes(3_000)
        .with_max_tool_declaration_bytes(600)
        .with_max_index_file_bytes(4_000)
        .with_max_total_bytes(6_000)
}

/// Arbitrary bytes -> server metadata ([`servers_from_bytes`]) -> the API built with default and
/// with [`small_options`] budgets satisfies every invariant of [`check_api`].
pub fn check_render(data: &[u8]) {
    let servers = servers_from_bytes(data);
    for (round, options) in [McpApiOptions::default(), small_options()].into_iter().enumerate() {
        let api = McpApi::build(&servers, &options);
        check_api(&api, &servers, &options);
        if round == 0 {
            let again = McpApi::build(&servers, &options);
            assert!(api.files().eq(again.files()), "rendering is not deterministic");
        }
    }
}

/// Interprets bytes as MCP server metadata. JSON: an array of servers (`{ name?, title?,
/// instructions?, hasResources?, hasPrompts?, tools }`, or a bare tool list), an object with
/// `tools` (one server), or an object mapping server names to tool lists. Anything else: UTF-8
/// (lossy) lines, the first naming the server, each further line `name \t description \t
/// property \t property ...`.
pub fn servers_from_bytes(data: &[u8]) -> Vec<McpServer> {
    match serde_json::from_slice::<Value>(data) {
        Ok(Value::Array(items)) => {
            items.iter().enumerate().map(|(i, item)| server_from_value(i, item)).collect()
        }
        Ok(value @ Value::Object(_)) if value.get("tools").is_some() => vec![server_from_value(0, &value)],
        Ok(Value::Object(map)) => {
            map.iter().map(|(name, tools)| McpServer::from_tools_list(name.clone(), tools)).collect()
        }
        Ok(_) => Vec::new(),
        Err(_) => vec![server_from_text(&String::from_utf8_lossy(data))],
    }
}

fn server_from_value(i: usize, value: &Value) -> McpServer {
    let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
    let mut server = McpServer::from_tools_list(text("name").unwrap_or_else(|| format!("s{i}")), value);
    server.title = text("title");
    server.instructions = text("instructions");
    server.has_resources = value.get("hasResources").and_then(Value::as_bool).unwrap_or(false);
    server.has_prompts = value.get("hasPrompts").and_then(Value::as_bool).unwrap_or(false);
    server
}

fn server_from_text(text: &str) -> McpServer {
    let mut lines = text.split('\n');
    let name = lines.next().unwrap_or_default();
    let tools = lines
        .map(|line| {
            let mut fields = line.split('\t');
            let tool = McpTool::new(fields.next().unwrap_or_default());
            let description = fields.next().unwrap_or_default();
            let properties: serde_json::Map<String, Value> = fields
                .map(|field| (field.to_owned(), json!({ "type": "string", "description": field })))
                .collect();
            tool.with_description(description)
                .with_input_schema(json!({ "type": "object", "properties": properties, "required": [] }))
        })
        .collect();
    McpServer::new(name, tools).with_title(text).with_resources()
}

/// Every invariant of a built API: bijective identifier tables, valid and consistent paths, files
/// within their budgets, lexically sound declaration files whose only declarations are ours,
/// bounded tool declarations, and working headers.
pub fn check_api(api: &McpApi, servers: &[McpServer], options: &McpApiOptions) {
    let unique_servers: HashSet<&str> = servers.iter().map(|s| s.name.as_str()).collect();
    let table = api.server_table();
    assert_eq!(table.len(), unique_servers.len(), "a server was dropped or invented");
    let mut server_idents = HashSet::new();
    for (ident, name) in table.entries() {
        assert!(is_identifier(ident) && !is_dangerous(ident), "bad server identifier {ident:?}");
        assert!(server_idents.insert(ident), "server identifier {ident:?} is not unique");
        assert_eq!(table.ident(name), Some(ident));
        assert_eq!(table.name(ident), Some(name));
    }

    let files: Vec<(&str, &str)> = api.files().collect();
    assert_eq!(files.len(), table.len() + 1);
    assert_eq!(files[0].0, INDEX_PATH);
    let listed = api.list(None).expect("list all");
    assert_eq!(listed, api.list(Some("mcp")).expect("list mcp"));
    assert_eq!(listed, api.list(Some("mcp/")).expect("list mcp/"));
    assert_eq!(listed.len(), files.len());
    for ((path, content), entry) in files.iter().zip(&listed) {
        assert_eq!(check_file_path(path), Ok(*path));
        assert_eq!(api.read(path), Ok(*content));
        assert_eq!((entry.path.as_str(), entry.bytes), (*path, content.len()));
    }
    assert!(files[0].1.len() <= options.max_index_file_bytes.max(INDEX_FLOOR), "index over budget");
    check_lexically(files[0].1, &HashSet::new());

    for (server_ident, server_name) in table.entries() {
        let tools = api.tool_table(server_ident).expect("tool table");
        let server = servers.iter().find(|s| s.name == server_name).expect("server");
        let unique_tools: HashSet<&str> = server.tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(tools.len(), unique_tools.len(), "a tool was dropped or invented");
        let mut idents = HashSet::new();
        for (ident, name) in tools.entries() {
            assert!(
                is_identifier(ident) && !is_dangerous(ident) && !MCP_SERVER_MEMBERS.contains(&ident),
                "bad tool identifier {ident:?}"
            );
            assert!(idents.insert(ident), "tool identifier {ident:?} is not unique");
            assert_eq!(tools.name(ident), Some(name));
            let resolved = api.resolve(server_ident, ident).expect("resolve");
            assert_eq!((resolved.server_name, resolved.tool_name), (server_name, name));
        }
        let path = format!("mcp/{server_ident}.d.ts");
        let content = api.read(&path).expect("server file");
        assert!(
            content.len() <= options.max_server_file_bytes.max(SERVER_FILE_FLOOR),
            "server file over budget"
        );
        let mut functions: HashSet<&str> = idents.clone();
        functions.extend(["$api", "read", "get"]);
        check_lexically(content, &functions);

        let header = api.header(server_ident, None, &HeaderOptions::default()).expect("server header");
        assert!(
            header.declarations.contains(&format!("API.read(\"{path}\")")),
            "server header points to its file"
        );
        let listed = header.tools.as_deref().unwrap_or_default();
        assert_eq!(listed.len(), tools.len(), "the server header lists every tool");
        let described: usize =
            listed.iter().filter_map(|t| t.description.as_deref()).map(|d| d.chars().count()).sum();
        assert!(described <= crate::api::MAX_HEADER_SUMMARY_CHARS, "server header descriptions over budget");
        for tool in listed {
            if let Some(description) = &tool.description {
                assert!(description.chars().count() <= crate::render::COMPACT_SUMMARY_MAX_CHARS);
                assert!(
                    !description.chars().any(crate::text::is_invisible),
                    "invisible characters in {description:?}"
                );
            }
        }
        assert_eq!(
            api.header(server_ident, None, &HeaderOptions::with_schema()),
            Err(McpApiError::SchemaWithoutTool)
        );
        // Tool headers: the first few tools (each rendering is bounded; all would be quadratic-ish
        // for fuzzing huge lists).
        for (ident, _) in tools.entries().take(8) {
            let header =
                api.header(server_ident, Some(ident), &HeaderOptions::with_schema()).expect("tool header");
            let frame = format!("declare namespace MCP.{server_ident} {{\n").len() + 2;
            let declaration_bytes = header.declarations.len() - frame;
            let fallback = crate::render::fallback_declaration(ident).len();
            assert!(
                declaration_bytes <= options.max_tool_declaration_bytes.max(fallback),
                "tool declaration over budget: {declaration_bytes}"
            );
            assert!(header.input_schema.is_some());
            check_lexically(&header.declarations, &HashSet::from([ident]));
        }
    }
    let table = api.guest_table();
    assert_eq!(table.files().len(), api.files().len(), "every API file is in the guest table");
    let summaries = api.server_summaries();
    assert_eq!(table.servers().len(), summaries.len(), "every server is in the guest table");
    for (server, summary) in table.servers().iter().zip(&summaries) {
        assert_eq!(server.ident(), summary.ident);
        assert_eq!(
            server.tools().len(),
            summary.tools,
            "every tool of {} is in the guest table",
            summary.ident
        );
    }
}

/// Smallest index budget honoured (the shared types and the frame).
const INDEX_FLOOR: usize = 3_000;
/// Smallest server file budget honoured (the frame: header comment, `$api`, resources, prompts).
const SERVER_FILE_FLOOR: usize = 1_400;

/// Lexical soundness of a rendered declaration file: every comment and string closes, brackets
/// balance, code outside comments and strings is ASCII without template or single quotes, and every
/// `function <name>(` in code names one of `functions` (so no text can inject a declaration).
/// With an empty `functions`, no `function` may appear in code at all.
pub fn check_lexically(source: &str, functions: &HashSet<&str>) {
    #[derive(PartialEq)]
    enum State {
        Code,
        Block,
        Line,
        Str,
    }
    let bytes = source.as_bytes();
    let mut state = State::Code;
    let mut stack: Vec<u8> = Vec::new();
    let mut code = String::new();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let next = bytes.get(i + 1).copied();
        match state {
            State::Code => match b {
                b'/' if next == Some(b'*') => {
                    state = State::Block;
                    code.push(' ');
                    i += 1;
                }
                b'/' if next == Some(b'/') => {
                    state = State::Line;
                    i += 1;
                }
                b'"' => {
                    state = State::Str;
                    code.push_str("\"\"");
                }
                b'{' | b'(' | b'[' | b'<' => {
                    stack.push(b);
                    code.push(b as char);
                }
                b'}' | b')' | b']' | b'>' => {
                    let open = match b {
                        b'}' => b'{',
                        b')' => b'(',
                        b']' => b'[',
                        _ => b'<',
                    };
                    assert_eq!(stack.pop(), Some(open), "unbalanced {:?} in code: {source}", b as char);
                    code.push(b as char);
                }
                b'`' | b'\'' => panic!("quote character in code: {source}"),
                _ => {
                    assert!(b.is_ascii(), "non-ASCII code: {source}");
                    code.push(b as char);
                }
            },
            State::Block => {
                if b == b'*' && next == Some(b'/') {
                    state = State::Code;
                    i += 1;
                }
            }
            State::Line => {
                if b == b'\n' {
                    state = State::Code;
                    code.push('\n');
                }
            }
            State::Str => match b {
                b'\\' => i += 1,
                b'"' => state = State::Code,
                b'\n' | b'\r' => panic!("line break in a string literal: {source}"),
                _ => {}
            },
        }
        i += 1;
    }
    assert!(state == State::Code || state == State::Line, "unterminated comment or string: {source}");
    assert!(stack.is_empty(), "unclosed brackets: {source}");
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '$';
    let mut rest = code.as_str();
    while let Some(at) = rest.find("function ") {
        let before = rest[..at].chars().next_back();
        let after = &rest[at + "function ".len()..];
        rest = after;
        if before.is_some_and(is_ident) {
            continue;
        }
        let name_len = after.find(|c: char| !is_ident(c)).unwrap_or(after.len());
        if after[name_len..].starts_with('(') {
            let name = &after[..name_len];
            assert!(functions.contains(name), "unexpected function {name:?} in: {source}");
        }
    }
}
