//! The guest -> host requests (host -> guest replies are in `reply`).
//!
//! Every request is one JSON object produced by the prelude and passed to the sandbox's host-call
//! import. It carries the protocol version `v` and an `op`; the other members depend on the op:
//!
//! | op | members | guest API |
//! | --- | --- | --- |
//! | `search` | `query: string`, `limit?: integer >= 1` | `tools.search(query, { limit })` |
//! | `apiSearch` | `query: string`, `limit?: integer >= 1`, `server?: string \| string[]` (1-64 names) | `API.search(query, { limit, server })` (MCP tools) |
//! | `describe` | `id: string` | `tools.describe(id)` |
//! | `call` | `id: string`, `input?: any` | `tools.call(id, input)` -> `{ tool, result }` |
//! | `callValue` | `id: string`, `input?: any` | `tools.callValue(id, input)`, `tools.<safeName>(input)` |
//! | `namespace` | `namespace: string`, `path: string`, `args: any[]` | `Issues.list(...)`, `namespaces.Issues.list(...)` |
//! | `mcp` | `server: string`, `tool: string`, `input: object` | `MCP.<server>.<tool>(input)` |
//! | `mcpApi` | `server: string`, `tool?: string`, `schema?: boolean` | `MCP.<server>.$api(tool?, { schema })` |
//! | `resourcesRead` | `server: string`, `input: object` | `MCP.<server>.resources.read(input)` |
//! | `promptsGet` | `server: string`, `input: object` | `MCP.<server>.prompts.get(input)` |
//! | `yield` | `reason?: string` | `yield_control(reason)` |
//!
//! Unknown members are refused, so a prelude and a host that drifted apart fail loudly. A request
//! whose `v` differs from [`PROTOCOL_VERSION`] is a [`DecodeError::VersionMismatch`], which the
//! runtime turns into a `runtime_unavailable` failure; every other decode error is delivered back to
//! the guest as a catchable `Error` ([`DecodeError::reply`]).
//!
//! A reply ([`Delivery`](codemode_sandbox::Delivery)) either resolves the guest's promise with JSON text (parsed by the engine's
//! native JSON parser into plain data) or rejects it with a plain intrinsic `Error` carrying `message`
//! and optionally `code` ([`DeliveryExt`](crate::DeliveryExt) builds them). What each op resolves
//! with is listed on [`HostRequest`].

use codemode_core::CodeModeErrorCode;
use codemode_sandbox::Delivery;
use serde_json::{Map, Value};

use crate::json::{self, DecodeLimits, JsonError};
use crate::reply::DeliveryExt;

/// The version of this protocol. The prelude refuses a boot context with another version, and the
/// host refuses requests with another `v`.
pub const PROTOCOL_VERSION: u32 = 1;

/// The largest payload the host decodes, and the default budget of argument bytes per run: 8 MiB.
pub const MAX_ARGUMENT_BYTES: u64 = 8 * 1024 * 1024;

/// Deepest nesting of a whole request: a value of [`MAX_VALUE_DEPTH`](crate::MAX_VALUE_DEPTH) levels inside `args`
/// (array) inside the request object.
pub const MAX_REQUEST_DEPTH: usize = json::MAX_VALUE_DEPTH + 2;

/// A decoded guest -> host request.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum HostRequest {
    /// `tools.search(query, { limit })`. Resolve with `ToolCatalogEntry[]`.
    Search {
        /// The query text.
        query: String,
        /// The requested limit; the runtime clamps it to `maxSearchLimit` and defaults it to
        /// `searchDefaultLimit`.
        limit: Option<u64>,
    },
    /// `API.search(query, { limit, server })`: the gateway's search over the run's MCP tools (never
    /// the catalog's guest entries). Resolve with `{ server, tool, call, id, description, input,
    /// output?, score, match }[]`.
    ApiSearch {
        /// The query text.
        query: String,
        /// The requested limit, clamped and defaulted like [`HostRequest::Search`]'s.
        limit: Option<u64>,
        /// The servers to search (`options.server`: one name or a list of at most
        /// [`MAX_SEARCH_SERVERS`], each a server identifier as in `MCP.<server>` or an exact
        /// server name; the host resolves them). Empty: every server.
        servers: Vec<String>,
    },
    /// `tools.describe(id)`. Resolve with `ToolCatalogEntryWithSchema`.
    Describe {
        /// Catalog id.
        id: String,
    },
    /// `tools.call(id, input)`. Resolve with `{ tool, result }` ([`call_envelope`](crate::call_envelope)).
    Call {
        /// Catalog id.
        id: String,
        /// The tool input (`None` when the guest passed none).
        input: Option<Value>,
    },
    /// `tools.callValue(id, input)` and convenience functions. Resolve with the tool's `details`.
    CallValue {
        /// Catalog id.
        id: String,
        /// The tool input (`None` when the guest passed none).
        input: Option<Value>,
    },
    /// A namespace function. Resolve the path with [`crate::NamespaceTable::resolve`], map `args` with
    /// the marker, call the tool, resolve with its `details`.
    Namespace {
        /// Namespace id (not its global name).
        namespace: String,
        /// Path of the callable inside the scope, segments joined by
        /// [`codemode_core::PATH_SEPARATOR`].
        path: String,
        /// The guest's arguments (missing ones are `null`).
        args: Vec<Value>,
    },
    /// `MCP.<server>.<tool>(input)`. Resolve with the MCP tool result.
    Mcp {
        /// Server identifier as the guest sees it.
        server: String,
        /// Tool identifier as the guest sees it.
        tool: String,
        /// The input object.
        input: Map<String, Value>,
    },
    /// `MCP.<server>.$api(tool?, { schema })`. Resolve with the API header.
    McpApi {
        /// Server identifier.
        server: String,
        /// One tool identifier, or the whole server.
        tool: Option<String>,
        /// Include full schemas.
        schema: bool,
    },
    /// `MCP.<server>.resources.read(input)`. Resolve with the MCP `resources/read` result.
    ResourcesRead {
        /// Server identifier.
        server: String,
        /// The request (`{ uri }`).
        input: Map<String, Value>,
    },
    /// `MCP.<server>.prompts.get(input)`. Resolve with the MCP `prompts/get` result.
    PromptsGet {
        /// Server identifier.
        server: String,
        /// The request (`{ name, arguments }`).
        input: Map<String, Value>,
    },
    /// `yield_control(reason)`: suspend the run with reason `yield`; resolve with `null` on `wait`.
    Yield {
        /// The guest's reason, if any.
        reason: Option<String>,
    },
}

impl HostRequest {
    /// The wire `op`.
    pub fn op(&self) -> &'static str {
        match self {
            HostRequest::Search { .. } => "search",
            HostRequest::ApiSearch { .. } => "apiSearch",
            HostRequest::Describe { .. } => "describe",
            HostRequest::Call { .. } => "call",
            HostRequest::CallValue { .. } => "callValue",
            HostRequest::Namespace { .. } => "namespace",
            HostRequest::Mcp { .. } => "mcp",
            HostRequest::McpApi { .. } => "mcpApi",
            HostRequest::ResourcesRead { .. } => "resourcesRead",
            HostRequest::PromptsGet { .. } => "promptsGet",
            HostRequest::Yield { .. } => "yield",
        }
    }

    /// The request as the prelude would send it (used by tests and the fuzz round trip).
    pub fn to_payload(&self) -> String {
        let mut m = Map::new();
        m.insert("v".into(), PROTOCOL_VERSION.into());
        m.insert("op".into(), self.op().into());
        let mut put = |k: &str, v: Value| {
            m.insert(k.into(), v);
        };
        match self {
            HostRequest::Search { query, limit } => {
                put("query", query.as_str().into());
                if let Some(limit) = limit {
                    put("limit", (*limit).into());
                }
            }
            HostRequest::ApiSearch { query, limit, servers } => {
                put("query", query.as_str().into());
                if let Some(limit) = limit {
                    put("limit", (*limit).into());
                }
                if !servers.is_empty() {
                    put("server", servers.iter().map(|s| Value::from(s.as_str())).collect());
                }
            }
            HostRequest::Describe { id } => put("id", id.as_str().into()),
            HostRequest::Call { id, input } | HostRequest::CallValue { id, input } => {
                put("id", id.as_str().into());
                if let Some(input) = input {
                    put("input", input.clone());
                }
            }
            HostRequest::Namespace { namespace, path, args } => {
                put("namespace", namespace.as_str().into());
                put("path", path.as_str().into());
                put("args", Value::Array(args.clone()));
            }
            HostRequest::Mcp { server, tool, input } => {
                put("server", server.as_str().into());
                put("tool", tool.as_str().into());
                put("input", Value::Object(input.clone()));
            }
            HostRequest::McpApi { server, tool, schema } => {
                put("server", server.as_str().into());
                if let Some(tool) = tool {
                    put("tool", tool.as_str().into());
                }
                if *schema {
                    put("schema", true.into());
                }
            }
            HostRequest::ResourcesRead { server, input } | HostRequest::PromptsGet { server, input } => {
                put("server", server.as_str().into());
                put("input", Value::Object(input.clone()));
            }
            HostRequest::Yield { reason } => {
                if let Some(reason) = reason {
                    put("reason", reason.as_str().into());
                }
            }
        }
        Value::Object(m).to_string()
    }
}

/// Why a payload could not be decoded into a [`HostRequest`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The payload is not bounded, strict JSON.
    #[error("code mode bridge: {0}")]
    Json(#[from] JsonError),
    /// The request names another protocol version (prelude and host are out of step).
    #[error("code mode bridge protocol mismatch: guest speaks {found}, host speaks {expected}")]
    VersionMismatch {
        /// What the request said (`None` when `v` was missing or not a number).
        found: String,
        /// [`PROTOCOL_VERSION`].
        expected: u32,
    },
    /// The request is well-formed JSON but not a valid request; the message is for the guest.
    #[error("{0}")]
    Invalid(String),
}

impl DecodeError {
    /// Whether the run must fail (`runtime_unavailable`) instead of rejecting the guest's promise.
    pub fn is_fatal(&self) -> bool {
        matches!(self, DecodeError::VersionMismatch { .. })
    }

    /// The code the run fails with when the error [is fatal](DecodeError::is_fatal):
    /// `runtime_unavailable`.
    pub fn fatal_code(&self) -> Option<CodeModeErrorCode> {
        self.is_fatal().then_some(CodeModeErrorCode::RuntimeUnavailable)
    }

    /// The reply that rejects the guest's promise with this error (code `invalid_input`).
    pub fn reply(&self) -> Delivery {
        Delivery::reject(self.to_string(), Some("invalid_input"))
    }
}

fn invalid(message: impl Into<String>) -> DecodeError {
    DecodeError::Invalid(message.into())
}

/// Decodes a guest payload with the default limits (8 MiB, depth [`MAX_REQUEST_DEPTH`]).
pub fn decode_request(payload: &str) -> Result<HostRequest, DecodeError> {
    let limits = DecodeLimits { max_bytes: MAX_ARGUMENT_BYTES as usize, max_depth: MAX_REQUEST_DEPTH };
    decode_request_with(payload.as_bytes(), &limits)
}

/// Decodes a guest payload within `limits`.
pub fn decode_request_with(payload: &[u8], limits: &DecodeLimits) -> Result<HostRequest, DecodeError> {
    if let Some(request) = decode_tool_call(payload, limits) {
        return Ok(request);
    }
    let value = json::decode_json_bytes(payload, limits)?;
    let Value::Object(mut m) = value else {
        return Err(invalid("code mode bridge: a request must be a JSON object"));
    };
    match m.remove("v") {
        Some(Value::Number(n)) if n.as_u64() == Some(u64::from(PROTOCOL_VERSION)) => {}
        other => {
            return Err(DecodeError::VersionMismatch {
                found: match other {
                    Some(v) => truncate(&v.to_string(), 32),
                    None => "nothing".into(),
                },
                expected: PROTOCOL_VERSION,
            });
        }
    }
    let op = match m.remove("op") {
        Some(Value::String(op)) => op,
        _ => return Err(invalid("code mode bridge: a request needs a string `op`")),
    };
    let mut r = Fields { op: &op, m };
    let request = match op.as_str() {
        "search" | "apiSearch" => {
            let what = if op == "search" { "tools.search" } else { "API.search" };
            let query = r.string("query", &format!("{what}: `query` must be a string"))?;
            let limit = match r.take("limit") {
                None | Some(Value::Null) => None,
                Some(Value::Number(n)) => match n.as_u64() {
                    Some(l) if l >= 1 => Some(l),
                    _ => return Err(invalid(limit_message(what))),
                },
                Some(_) => return Err(invalid(limit_message(what))),
            };
            if op == "search" {
                HostRequest::Search { query, limit }
            } else {
                HostRequest::ApiSearch { query, limit, servers: search_servers(r.take("server"))? }
            }
        }
        "describe" => HostRequest::Describe { id: r.string("id", "tools.describe: `id` must be a string")? },
        "call" => HostRequest::Call {
            id: r.string("id", "tools.call: `id` must be a string")?,
            input: r.optional_value("input"),
        },
        "callValue" => HostRequest::CallValue {
            id: r.string("id", "tools.callValue: `id` must be a string")?,
            input: r.optional_value("input"),
        },
        "namespace" => {
            let namespace = r.string("namespace", "namespace call: `namespace` must be a string")?;
            let path = r.string("path", "namespace call: `path` must be a string")?;
            let args = match r.take("args") {
                None => Vec::new(),
                Some(Value::Array(args)) => args,
                Some(_) => return Err(invalid("namespace call: `args` must be an array")),
            };
            HostRequest::Namespace { namespace, path, args }
        }
        "mcp" => {
            let server = r.string("server", "MCP call: `server` must be a string")?;
            let tool = r.string("tool", "MCP call: `tool` must be a string")?;
            let input = r.object_input(&format!("MCP.{server}.{tool}"))?;
            HostRequest::Mcp { server, tool, input }
        }
        "mcpApi" => {
            let server = r.string("server", "MCP $api: `server` must be a string")?;
            let tool = match r.take("tool") {
                None | Some(Value::Null) => None,
                Some(Value::String(t)) => Some(t),
                Some(_) => return Err(invalid(format!("MCP.{server}.$api: `toolName` must be a string"))),
            };
            let schema = match r.take("schema") {
                None | Some(Value::Null) => false,
                Some(Value::Bool(b)) => b,
                Some(_) => {
                    return Err(invalid(format!("MCP.{server}.$api: `options.schema` must be a boolean")));
                }
            };
            HostRequest::McpApi { server, tool, schema }
        }
        "resourcesRead" => {
            let server = r.string("server", "MCP resources.read: `server` must be a string")?;
            let input = r.object_input(&format!("MCP.{server}.resources.read"))?;
            HostRequest::ResourcesRead { server, input }
        }
        "promptsGet" => {
            let server = r.string("server", "MCP prompts.get: `server` must be a string")?;
            let input = r.object_input(&format!("MCP.{server}.prompts.get"))?;
            HostRequest::PromptsGet { server, input }
        }
        "yield" => HostRequest::Yield {
            reason: match r.take("reason") {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) => Some(s),
                Some(_) => return Err(invalid("yield_control: `reason` must be a string")),
            },
        },
        other => return Err(invalid(format!("code mode bridge: unknown op {:?}", truncate(other, 40)))),
    };
    r.finish()?;
    Ok(request)
}

/// A well-formed `call` / `callValue` request, as the prelude sends it (the hot path: every tool
/// call), decoded straight into its fields. `None` for anything else (another op, a missing or
/// extra member, a wrong type, a duplicate key, bad syntax, a payload past `limits`): the general
/// decoder then decides, with its own errors, so both paths accept exactly the same requests and
/// decode them to the same values (an explicit `"input": null` stays `Some(Null)`).
fn decode_tool_call(payload: &[u8], limits: &DecodeLimits) -> Option<HostRequest> {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct ToolCall<'a> {
        v: u64,
        #[serde(borrow)]
        op: std::borrow::Cow<'a, str>,
        id: String,
        #[serde(default, deserialize_with = "present")]
        input: Option<Value>,
    }
    fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
        <Value as serde::Deserialize>::deserialize(d).map(Some)
    }
    if payload.len() > limits.max_bytes || json::nesting_depth(payload) > limits.max_depth {
        return None;
    }
    let call: ToolCall<'_> = serde_json::from_slice(payload).ok()?;
    if call.v != u64::from(PROTOCOL_VERSION) {
        return None;
    }
    match &*call.op {
        "callValue" => Some(HostRequest::CallValue { id: call.id, input: call.input }),
        "call" => Some(HostRequest::Call { id: call.id, input: call.input }),
        _ => None,
    }
}

fn limit_message(what: &str) -> String {
    format!("{what}: `options.limit` must be a positive integer")
}

/// Most servers one `API.search` may name in `options.server`.
pub const MAX_SEARCH_SERVERS: usize = 64;

/// `API.search`'s `options.server`: absent or `null` (every server), a name, or a list of
/// 1..=[`MAX_SEARCH_SERVERS`] names.
fn search_servers(value: Option<Value>) -> Result<Vec<String>, DecodeError> {
    let message = || {
        invalid(format!(
            "API.search: `options.server` must be a server name or an array of at most {MAX_SEARCH_SERVERS} \
             server names, like {{ server: \"github\" }}"
        ))
    };
    match value {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::String(name)) => Ok(vec![name]),
        Some(Value::Array(names)) if !names.is_empty() && names.len() <= MAX_SEARCH_SERVERS => names
            .into_iter()
            .map(|n| match n {
                Value::String(name) => Ok(name),
                _ => Err(message()),
            })
            .collect(),
        Some(_) => Err(message()),
    }
}

struct Fields<'a> {
    op: &'a str,
    m: Map<String, Value>,
}

impl Fields<'_> {
    fn take(&mut self, key: &str) -> Option<Value> {
        self.m.remove(key)
    }

    fn string(&mut self, key: &str, message: &str) -> Result<String, DecodeError> {
        match self.m.remove(key) {
            Some(Value::String(s)) => Ok(s),
            _ => Err(invalid(message)),
        }
    }

    fn optional_value(&mut self, key: &str) -> Option<Value> {
        self.m.remove(key)
    }

    fn object_input(&mut self, what: &str) -> Result<Map<String, Value>, DecodeError> {
        match self.m.remove("input") {
            None | Some(Value::Null) => Ok(Map::new()),
            Some(Value::Object(m)) => Ok(m),
            Some(_) => Err(invalid(format!("{what}: input must be an object"))),
        }
    }

    fn finish(self) -> Result<(), DecodeError> {
        match self.m.keys().next() {
            None => Ok(()),
            Some(key) => Err(invalid(format!(
                "code mode bridge: unexpected member {:?} in a `{}` request",
                truncate(key, 40),
                self.op
            ))),
        }
    }
}

fn truncate(s: &str, max_chars: usize) -> String {
    codemode_core::text::char_prefix(s, max_chars)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_op_round_trips() {
        let mut input = Map::new();
        input.insert("uri".into(), json!("memo://one"));
        let requests = vec![
            HostRequest::Search { query: "list shipments".into(), limit: Some(3) },
            HostRequest::Search { query: String::new(), limit: None },
            HostRequest::ApiSearch {
                query: "open a pull request".into(),
                limit: Some(5),
                servers: Vec::new(),
            },
            HostRequest::ApiSearch { query: String::new(), limit: None, servers: vec!["github".into()] },
            HostRequest::ApiSearch {
                query: "x".into(),
                limit: None,
                servers: vec!["github".into(), "azure-mcp".into()],
            },
            HostRequest::Describe { id: "openclaw:core:read".into() },
            HostRequest::Call { id: "a:b:c".into(), input: Some(json!({ "x": [1, null] })) },
            HostRequest::CallValue { id: "a:b:c".into(), input: None },
            HostRequest::Namespace { namespace: "gh".into(), path: "a\u{1f}b".into(), args: vec![json!(1)] },
            HostRequest::Mcp { server: "github".into(), tool: "createIssue".into(), input: input.clone() },
            HostRequest::McpApi { server: "github".into(), tool: Some("x".into()), schema: true },
            HostRequest::McpApi { server: "github".into(), tool: None, schema: false },
            HostRequest::ResourcesRead { server: "docs".into(), input: input.clone() },
            HostRequest::PromptsGet { server: "docs".into(), input },
            HostRequest::Yield { reason: Some("checkpoint".into()) },
            HostRequest::Yield { reason: None },
        ];
        for request in requests {
            assert_eq!(decode_request(&request.to_payload()).unwrap(), request);
        }
        // One name is a list of one.
        assert_eq!(
            decode_request(r#"{"v":1,"op":"apiSearch","query":"q","server":"git","limit":null}"#).unwrap(),
            HostRequest::ApiSearch { query: "q".into(), limit: None, servers: vec!["git".into()] }
        );
    }

    /// The tool-call fast path decodes exactly what the general decoder does, and leaves every
    /// payload it does not fully accept to it (same errors, same values).
    #[test]
    fn tool_call_fast_path_agrees_with_the_general_decoder() {
        let limits = DecodeLimits { max_bytes: MAX_ARGUMENT_BYTES as usize, max_depth: MAX_REQUEST_DEPTH };
        let taken = [
            r#"{"v":1,"op":"callValue","id":"a:b:c","input":{"b":1,"a":[2.5,null,"é"]}}"#,
            r#"{"v":1,"op":"call","id":"a:b:c"}"#,
            r#"{"v":1,"op":"callValue","id":"x","input":null}"#,
            r#" {"input":7,"id":"x","op":"call","v":1} "#,
            r#"{"v":1,"op":"call","id":"x"}"#,
        ];
        for payload in taken {
            let fast = decode_tool_call(payload.as_bytes(), &limits).unwrap_or_else(|| panic!("{payload}"));
            assert_eq!(Ok(fast.clone()), decode_request(payload), "{payload}");
            let Value::Object(mut general) = serde_json::from_str::<Value>(payload).unwrap() else {
                panic!()
            };
            let input = general.remove("input");
            assert!(
                matches!(&fast, HostRequest::Call { input: i, .. } | HostRequest::CallValue { input: i, .. } if *i == input)
            );
        }
        let left = [
            r#"{"v":1,"op":"callValue","id":"x","id":"y"}"#,
            r#"{"v":1,"op":"callValue","id":"x","extra":1}"#,
            r#"{"v":1.0,"op":"callValue","id":"x"}"#,
            r#"{"v":2,"op":"callValue","id":"x"}"#,
            r#"{"op":"callValue","id":"x"}"#,
            r#"{"v":1,"op":"callValue","id":7}"#,
            r#"{"v":1,"op":"describe","id":"x"}"#,
            r#"{"v":1,"op":"callValue","id":"x"} x"#,
            r#"{"v":1,"op":"callValue","id":"x","input":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}"#,
        ];
        for payload in left {
            assert_eq!(decode_tool_call(payload.as_bytes(), &limits), None, "{payload}");
        }
        // What the general decoder makes of them: the last duplicate wins, the rest are errors.
        assert_eq!(decode_request(left[0]), Ok(HostRequest::CallValue { id: "y".into(), input: None }));
        assert!(decode_request(left[1]).is_err() && decode_request(left[8]).is_err());
    }

    #[test]
    fn version_mismatch_is_fatal() {
        for payload in [r#"{"op":"yield"}"#, r#"{"v":2,"op":"yield"}"#, r#"{"v":"1","op":"yield"}"#] {
            let e = decode_request(payload).unwrap_err();
            assert!(e.is_fatal(), "{payload}: {e}");
            assert_eq!(e.fatal_code(), Some(CodeModeErrorCode::RuntimeUnavailable));
            assert!(matches!(e, DecodeError::VersionMismatch { expected: PROTOCOL_VERSION, .. }));
        }
    }

    #[test]
    fn invalid_requests_are_catchable_errors() {
        let cases = [
            (r#"[1]"#, "must be a JSON object"),
            (r#"{"v":1}"#, "string `op`"),
            (r#"{"v":1,"op":"nope"}"#, "unknown op"),
            (r#"{"v":1,"op":"search"}"#, "`query` must be a string"),
            (r#"{"v":1,"op":"search","query":"x","limit":0}"#, "positive integer"),
            (r#"{"v":1,"op":"search","query":"x","limit":2.5}"#, "positive integer"),
            (r#"{"v":1,"op":"search","query":"x","limit":"3"}"#, "positive integer"),
            (r#"{"v":1,"op":"apiSearch"}"#, "API.search: `query` must be a string"),
            (
                r#"{"v":1,"op":"apiSearch","query":"x","limit":0}"#,
                "API.search: `options.limit` must be a positive integer",
            ),
            (r#"{"v":1,"op":"apiSearch","query":"x","server":7}"#, "`options.server` must be a server name"),
            (r#"{"v":1,"op":"apiSearch","query":"x","server":[]}"#, "`options.server` must be a server name"),
            (
                r#"{"v":1,"op":"apiSearch","query":"x","server":["git",1]}"#,
                "`options.server` must be a server name",
            ),
            (r#"{"v":1,"op":"search","query":"x","server":"git"}"#, "unexpected member \"server\""),
            (r#"{"v":1,"op":"describe","id":"x","extra":1}"#, "unexpected member \"extra\""),
            (r#"{"v":1,"op":"mcp","server":"s","tool":"t","input":[1]}"#, "MCP.s.t: input must be an object"),
            (r#"{"v":1,"op":"namespace","namespace":"n","path":"p","args":{}}"#, "`args` must be an array"),
            (r#"{"v":1,"op":"yield","reason":3}"#, "`reason` must be a string"),
        ];
        let too_many = format!(
            r#"{{"v":1,"op":"apiSearch","query":"x","server":{}}}"#,
            serde_json::to_string(&vec!["s"; MAX_SEARCH_SERVERS + 1]).unwrap()
        );
        let cases = cases.into_iter().chain([(too_many.as_str(), "at most 64 server names")]);
        for (payload, needle) in cases {
            let e = decode_request(payload).unwrap_err();
            assert!(!e.is_fatal());
            assert_eq!(e.fatal_code(), None);
            assert!(e.to_string().contains(needle), "{payload}: {e}");
            let Delivery::Reject { code, .. } = e.reply() else { panic!() };
            assert_eq!(code.as_deref(), Some("invalid_input"));
        }
    }

    #[test]
    fn request_depth_at_and_past_the_limit() {
        let value = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        let payload = |depth| {
            format!(r#"{{"v":1,"op":"namespace","namespace":"n","path":"p","args":[{}]}}"#, value(depth))
        };
        assert!(decode_request(&payload(json::MAX_VALUE_DEPTH)).is_ok());
        let e = decode_request(&payload(json::MAX_VALUE_DEPTH + 1)).unwrap_err();
        assert_eq!(e, DecodeError::Json(JsonError::TooDeep { limit: MAX_REQUEST_DEPTH }));
    }
}
