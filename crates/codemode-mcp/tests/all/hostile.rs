//! Hostile server metadata: text that tries to leave its comment, names that try to be code,
//! schemas that are huge, deep or cyclic.

use codemode_mcp::fuzz::check_api;
use codemode_mcp::{HeaderOptions, McpApi, McpApiOptions, McpServer, McpTool};
use serde_json::{Value, json};

use crate::support::{assert_valid_dts, comments_and_statements};

const ESCAPES: &[&str] = &[
    "*/ declare const EVIL: 1; /*",
    "ok */ } declare namespace EVIL { function x(): void; } /* ",
    "```ts\n*/ function EVIL() {}\n```",
    "# EVIL heading\n> quote\n@param EVIL injected\n@deprecated EVIL",
    "line\u{2028}*/EVIL\u{2029}/*",
    "bidi \u{202e}EVIL\u{202c} zero\u{200b}width \u{0}nul \u{1b}[31mred",
    "**/EVIL/**",
    "EVIL\\*/ trailing backslash \\",
];

fn hostile_server() -> McpServer {
    let mut tools = Vec::new();
    for (i, text) in ESCAPES.iter().enumerate() {
        let properties = json!({
            "a": { "type": "string", "description": text },
            "*/EVIL": { "type": "string", "description": text },
            "\"quoted\"\n": { "type": "string", "title": text },
            "default": { "enum": [text, "*/"] },
        });
        tools.push(
            McpTool::new(format!("t{i}*/EVIL"))
                .with_title(*text)
                .with_description(*text)
                .with_input_schema(json!({ "type": "object", "properties": properties, "required": ["a"] }))
                .with_output_schema(json!({ "description": text })),
        );
    }
    tools.push(McpTool::new("__proto__"));
    tools.push(McpTool::new("constructor"));
    tools.push(McpTool::new("then"));
    tools.push(McpTool::new("$api"));
    tools.push(McpTool::new("\u{202e}evil\n"));
    McpServer::new("srv */ EVIL", tools)
        .with_title("*/ EVIL title /*")
        .with_instructions("\n\n*/ declare const EVIL: 2;")
        .with_resources()
        .with_prompts()
}

/// Every occurrence of `EVIL` lies inside a comment or a string literal; the file has exactly
/// `statements` top-level statements.
fn assert_contained(path: &str, source: &str, statements: usize) {
    assert_valid_dts(path, source);
    let (comments, count) = comments_and_statements(source);
    assert_eq!(count, statements, "{path}: injected statements\n{source}");
    for (at, _) in source.match_indices("EVIL") {
        // `srvEVIL`, `t0EVIL`: identifiers made from hostile names are ours, and safe.
        if source[..at].ends_with(|c: char| c.is_ascii_alphanumeric()) {
            continue;
        }
        let in_comment = comments.iter().any(|&(start, end)| start <= at && at < end);
        let line = source[..at].rsplit('\n').next().unwrap_or_default();
        let in_string = line.matches('"').count() % 2 == 1;
        assert!(in_comment || in_string, "{path}: EVIL outside comments and strings at {at}\n{source}");
    }
}

#[test]
fn hostile_text_stays_inside_comments() {
    let server = hostile_server();
    let api = McpApi::build(std::slice::from_ref(&server), &McpApiOptions::default());
    check_api(&api, std::slice::from_ref(&server), &McpApiOptions::default());
    let (_, ident) = api.server_table().entries().map(|(i, n)| (n, i)).next().unwrap();
    assert_eq!(ident, "srvEVIL");
    assert_contained("index", api.read("mcp/index.d.ts").unwrap(), 5);
    let file = api.read("mcp/srvEVIL.d.ts").unwrap();
    assert_contained("server", file, 1);
    insta::assert_snapshot!("hostile_server", file);
    for (tool, _) in api.tool_table("srvEVIL").unwrap().entries() {
        let header = api.header("srvEVIL", Some(tool), &HeaderOptions::default()).unwrap();
        assert_contained(tool, &header.declarations, 1);
    }
}

#[test]
fn dangerous_tool_names_are_renamed() {
    let api = McpApi::build(&[hostile_server()], &McpApiOptions::default());
    let tools = api.tool_table("srvEVIL").unwrap();
    assert_eq!(tools.ident("__proto__"), Some("proto"));
    assert_eq!(tools.ident("constructor"), Some("constructor2"));
    assert_eq!(tools.ident("then"), Some("then2"));
    assert_eq!(tools.ident("$api"), Some("$api2"));
    assert_eq!(tools.ident("t0*/EVIL"), Some("t0EVIL"));
}

#[test]
fn huge_descriptions_and_names_are_bounded() {
    let description = "word ".repeat(400_000);
    let name = "n".repeat(100_000);
    let tool = McpTool::new(name.clone()).with_description(description.clone()).with_input_schema(json!({
        "type": "object",
        "properties": { "p": { "type": "string", "description": description } }
    }));
    let server = McpServer::new("x".repeat(100_000), vec![tool]).with_title(description);
    let api = McpApi::build(std::slice::from_ref(&server), &McpApiOptions::default());
    check_api(&api, std::slice::from_ref(&server), &McpApiOptions::default());
    for (path, content) in api.files() {
        assert!(content.len() < 8 * 1024, "{path}: {}", content.len());
        assert_valid_dts(path, content);
    }
}

fn nested(depth: usize) -> Value {
    let mut schema = json!({ "type": "string" });
    for _ in 0..depth {
        schema = json!({ "type": "object", "properties": { "deeper": schema, "list": { "type": "array", "items": { "type": "number" } } } });
    }
    schema
}

#[test]
fn deep_and_cyclic_schemas_render_within_budget() {
    let cyclic = json!({
        "type": "object",
        "$defs": {
            "Node": { "type": "object", "properties": { "next": { "$ref": "#/$defs/Node" }, "value": { "type": "string" } } },
            "A": { "$ref": "#/$defs/B" },
            "B": { "$ref": "#/$defs/A" }
        },
        "properties": {
            "node": { "$ref": "#/$defs/Node" },
            "loop": { "$ref": "#/$defs/A" },
            "self": { "$ref": "#" },
            "remote": { "$ref": "https://example.invalid/schema.json" }
        }
    });
    let tools = vec![
        McpTool::new("deep").with_input_schema(json!({ "type": "object", "properties": { "root": nested(300) } })),
        McpTool::new("cyclic").with_input_schema(cyclic),
        McpTool::new("top_level_ref").with_input_schema(json!({ "$ref": "#" })),
        McpTool::new("not_an_object").with_input_schema(json!(42)),
        McpTool::new("array_input").with_input_schema(json!({ "type": "array", "items": { "type": "string" } })),
        McpTool::new("any_of").with_input_schema(json!({ "anyOf": [
            { "type": "object", "properties": { "a": { "type": "string" } }, "required": ["a"] },
            { "type": "object", "properties": { "b": { "type": "number" } }, "required": ["b"] }
        ] })),
        McpTool::new("properties_not_object").with_input_schema(json!({ "type": "object", "properties": [1, 2] })),
        McpTool::new("closed_empty").with_input_schema(json!({ "type": "object", "additionalProperties": false })),
        McpTool::new("record").with_input_schema(json!({
            "type": "object", "properties": { "a": { "type": "string" } }, "additionalProperties": { "type": "number" }
        })),
    ];
    let server = McpServer::new("schemas", tools);
    let api = McpApi::build(std::slice::from_ref(&server), &McpApiOptions::default());
    check_api(&api, std::slice::from_ref(&server), &McpApiOptions::default());
    let file = api.read("mcp/schemas.d.ts").unwrap();
    assert_valid_dts("schemas", file);
    insta::assert_snapshot!("hostile_schemas", file);
}

#[test]
fn lenient_parsing_skips_malformed_tools() {
    let raw = json!({ "tools": [
        { "name": "ok", "description": 5, "inputSchema": "nope", "annotations": [1] },
        { "description": "no name" },
        { "name": 7 },
        "string entry",
        { "name": "ok2", "title": null, "outputSchema": null, "annotations": { "readOnlyHint": "yes" } }
    ] });
    let server = McpServer::from_tools_list("lenient", &raw);
    let names: Vec<&str> = server.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["ok", "ok2"]);
    assert_eq!(server.tools[0].description, None);
    assert_eq!(server.tools[1].output_schema, None);
    let specs = server.tool_specs();
    assert_eq!(specs[1].catalog_id(), "mcp:lenient:ok2");
    assert!(!specs[1].annotations.is_read_only());
    let api = McpApi::build(std::slice::from_ref(&server), &McpApiOptions::default());
    assert_valid_dts("lenient", api.read("mcp/lenient.d.ts").unwrap());
}

#[test]
fn duplicate_servers_and_tools_keep_the_first() {
    let first = McpServer::new(
        "dup",
        vec![McpTool::new("a").with_description("first"), McpTool::new("a").with_description("second")],
    );
    let second = McpServer::new("dup", vec![McpTool::new("other")]);
    let api = McpApi::build(&[first, second], &McpApiOptions::default());
    assert_eq!(api.server_table().len(), 1);
    assert_eq!(api.tool_table("dup").unwrap().duplicates(), 1);
    let file = api.read("mcp/dup.d.ts").unwrap();
    assert!(file.contains("first") && !file.contains("second") && !file.contains("other"));
}

#[test]
fn deserializes_the_mcp_wire_shape() {
    let server: McpServer = serde_json::from_value(json!({
        "name": "github",
        "hasResources": true,
        "tools": [{ "name": "create_issue", "inputSchema": { "type": "object" }, "outputSchema": { "type": "object" },
                    "annotations": { "readOnlyHint": false } }]
    }))
    .unwrap();
    assert!(server.has_resources && !server.has_prompts);
    assert_eq!(server.tools[0].output_schema.as_deref(), Some(&json!({ "type": "object" })));
    let tool: McpTool = serde_json::from_value(json!({ "name": "t" })).unwrap();
    assert_eq!(*tool.input_schema, json!({ "type": "object" }));
}
