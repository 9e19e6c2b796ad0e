//! The fuzz check on a corpus and on a few thousand pseudo-random inputs (stable Rust, no extra
//! dependencies), plus the TypeScript oracle on part of them.

use codemode_core::fuzz::XorShift;
use codemode_mcp::fuzz::{check_render, servers_from_bytes, small_options};
use codemode_mcp::{McpApi, McpApiOptions};
use serde_json::{Value, json};

use crate::support::assert_valid_dts;

const PIECES: &[&str] = &[
    "a",
    "create_issue",
    "chrome-devtools",
    "get.thing",
    "delete",
    "constructor",
    "__proto__",
    "prototype",
    "then",
    "$api",
    "resources",
    "2fa",
    "",
    " ",
    "*/",
    "/*",
    "@param",
    "`",
    "```",
    "\"",
    "\\",
    "\n",
    "\u{2028}",
    "\u{202e}",
    "\0",
    "é",
    "𝕏",
    "default",
    "for",
    "function",
    "static",
    "x-id",
    "#",
    ">",
    "}",
    "{",
    "declare",
    "EVIL",
];

fn text(rng: &mut XorShift) -> String {
    (0..rng.below(6)).map(|_| rng.pick(PIECES)).collect()
}

fn schema(rng: &mut XorShift, depth: u32) -> Value {
    match if depth > 3 { rng.below(4) } else { rng.below(9) } {
        0 => json!({ "type": rng.pick(&["string", "number", "integer", "boolean", "null"]) }),
        1 => json!({ "enum": [text(rng), text(rng), 1, null] }),
        2 => json!({ "$ref": rng.pick(&["#", "#/$defs/X", "#/properties", "nope"]) }),
        3 => Value::from(text(rng)),
        4 | 5 => {
            let props: serde_json::Map<String, Value> =
                (0..rng.below(5)).map(|_| (text(rng), schema(rng, depth + 1))).collect();
            let required: Vec<String> = (0..rng.below(3)).map(|_| text(rng)).collect();
            json!({ "type": "object", "properties": props, "required": required, "description": text(rng),
                    "$defs": { "X": { "$ref": "#/$defs/X" } } })
        }
        6 => json!({ "type": "array", "items": schema(rng, depth + 1) }),
        7 => json!({ "anyOf": [schema(rng, depth + 1), schema(rng, depth + 1)] }),
        _ => json!({ "allOf": [schema(rng, depth + 1)], "additionalProperties": schema(rng, depth + 1) }),
    }
}

fn servers(rng: &mut XorShift) -> Value {
    let servers: Vec<Value> = (0..rng.below(4))
        .map(|_| {
            let tools: Vec<Value> = (0..rng.below(8))
                .map(|_| {
                    json!({ "name": text(rng), "title": text(rng), "description": text(rng),
                            "inputSchema": schema(rng, 0), "outputSchema": if rng.below(2) == 0 { Value::Null } else { schema(rng, 0) } })
                })
                .collect();
            json!({ "name": text(rng), "title": text(rng), "instructions": text(rng),
                    "hasResources": rng.below(2) == 0, "hasPrompts": rng.below(2) == 0, "tools": tools })
        })
        .collect();
    Value::Array(servers)
}

#[test]
fn corpus_inputs_never_panic() {
    let corpus: &[&[u8]] = &[
        b"",
        b"null",
        b"[]",
        b"{}",
        b"{\"tools\": 5}",
        b"{\"tools\": [{\"name\": \"a\"}, {\"name\": \"a\"}]}",
        b"{\"a\": {\"tools\": []}, \"b\": [1, 2, {\"name\": \"*/\"}]}",
        b"[{\"name\": \"x\", \"tools\": [{\"name\": \"t\", \"inputSchema\": {\"$ref\": \"#\"}}]}, 5]",
        b"server\ntool\tdesc */ EVIL\tp1\tp2\n\xff\xfe\tbad utf8",
        b"\n\n\n",
    ];
    for input in corpus {
        check_render(input);
    }
}

#[test]
fn pseudo_random_inputs_never_panic_and_stay_valid_typescript() {
    let mut rng = XorShift::new(XorShift::DEFAULT_SEED);
    for i in 0..1_000 {
        let value = servers(&mut rng);
        let bytes = serde_json::to_vec(&value).expect("json");
        check_render(&bytes);
        if i % 10 == 0 {
            let servers = servers_from_bytes(&bytes);
            for options in [McpApiOptions::default(), small_options()] {
                let api = McpApi::build(&servers, &options);
                for (path, content) in api.files() {
                    assert_valid_dts(path, content);
                }
            }
        }
    }
    for _ in 0..500 {
        let bytes: Vec<u8> = (0..rng.below(200)).map(|_| (rng.next_u64() & 0xff) as u8).collect();
        check_render(&bytes);
        let mixed: String =
            (0..rng.below(40)).map(|_| rng.pick(&["\n", "\t", "*/", "a", "-", "é", "{", "\""])).collect();
        check_render(mixed.as_bytes());
    }
}
