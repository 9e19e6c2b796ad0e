//! The per-run boot context: what the runtime evaluates (with the sandbox's `eval_script`) after
//! restoring the base snapshot and before the cell.

use std::collections::BTreeSet;

use codemode_core::namespace::PRIVATE_PREFIXES;
use codemode_core::{ToolCatalogEntry, ToolSource, ident};
use serde_json::{Map, Value, json};

use crate::api_files::{ApiFile, ApiFileTable};
use crate::error::BridgeError;
use crate::json::{self, DecodeLimits, JsonError, MAX_VALUE_DEPTH};
use crate::protocol::PROTOCOL_VERSION;
use crate::scope::{NamespaceTable, is_safe_segment};

/// The guest global the prelude leaves for the boot script; it deletes itself on first call.
pub const BOOT_FUNCTION: &str = "__codemode_boot";

/// The guest global a two-stage boot leaves for the run's namespaces (see
/// [`BootContext::api_script`]); it deletes itself on first call.
pub const NAMESPACES_FUNCTION: &str = "__codemode_namespaces";

/// The guest global that adapts a cell's return value (see [`wrap_cell`]).
pub const RESULT_FUNCTION: &str = "__codemode_result";

/// Names of `tools` members that convenience functions may never take.
pub const TOOLS_HELPERS: &[&str] = &["search", "describe", "call", "callValue"];

/// Built-in members of each `MCP.<server>` object.
pub const MCP_SERVER_HELPERS: &[&str] = &["$api", "resources", "prompts"];

/// Everything the guest API needs for one run. Fill the fields, then call [`BootContext::boot_script`].
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct BootContext {
    /// `ALL_TOOLS`: the guest-facing catalog entries. Entries with `source: "mcp"` are left out (MCP
    /// tools are reachable only through `MCP`). Default: empty.
    pub all_tools: Vec<ToolCatalogEntry>,
    /// Convenience functions `tools.<safeName>(input)` as `(safe_name, catalog_id)`: each name must be
    /// an identifier, unique, not a `tools` helper ([`TOOLS_HELPERS`]) nor private; each id must be in
    /// `all_tools`. Default: none.
    pub convenience: Vec<(String, String)>,
    /// The MCP table (codemode-mcp's guest JSON), or `null` for none. Expected shape:
    /// `{ "servers": { <serverIdent>: { "tools": [<toolIdent>...], "resources": bool, "prompts": bool,
    ///    "name"?: <exact server name>, "toolNames"?: [<exact tool name>...] } },
    ///    "files": [{ "path": "mcp/index.d.ts", "content": "..." }] }`.
    /// Server idents must be identifiers; tool idents identifier names that are safe path segments and
    /// not a server helper ([`MCP_SERVER_HELPERS`]). `toolNames` (one per tool ident, in the same
    /// order) and `name` make `MCP["<exact server name>"]` and `MCP.<server>["<exact tool name>"]`
    /// resolve as aliases. Default: `null`.
    pub mcp: Value,
    /// The run's visible namespaces. Default: none.
    pub namespaces: NamespaceTable,
}

impl BootContext {
    /// An empty context.
    pub fn new() -> BootContext {
        BootContext::default()
    }

    /// The boot JSON (validated).
    ///
    /// ```json
    /// { "protocol": 1,
    ///   "allTools": [ToolCatalogEntry...],
    ///   "convenience": [["web_search", "openclaw:core:web_search"], ...],
    ///   "mcp": { "<server>": { "tools": ["createIssue"], "resources": false, "prompts": false } },
    ///   "files": [{ "path": "mcp/index.d.ts", "content": "...", "bytes": 123 }],
    ///   "namespaces": [descriptor...] }
    /// ```
    pub fn boot_json(&self) -> Result<Value, BridgeError> {
        let all_tools: Vec<&ToolCatalogEntry> =
            self.all_tools.iter().filter(|e| e.source != ToolSource::Mcp).collect();
        let ids: BTreeSet<&str> = all_tools.iter().map(|e| e.id.as_str()).collect();
        let mut names = BTreeSet::new();
        for (name, id) in &self.convenience {
            if !ident::is_identifier(name) || PRIVATE_PREFIXES.iter().any(|p| name.starts_with(p)) {
                return Err(invalid(format!("convenience name {name:?} is not a safe identifier")));
            }
            if TOOLS_HELPERS.contains(&name.as_str()) {
                return Err(invalid(format!("convenience name {name:?} would shadow a tools helper")));
            }
            if !names.insert(name.as_str()) {
                return Err(invalid(format!("convenience name {name:?} appears twice")));
            }
            if !ids.contains(id.as_str()) {
                return Err(invalid(format!(
                    "convenience name {name:?} targets {id:?}, which is not in ALL_TOOLS"
                )));
            }
        }
        let (servers, files) = mcp_table(&self.mcp)?;
        let files: Vec<Value> = files
            .files()
            .iter()
            .map(|f| json!({ "path": f.path, "content": f.content, "bytes": f.content.len() }))
            .collect();
        let convenience: Vec<Value> = self.convenience.iter().map(|(n, id)| json!([n, id])).collect();
        Ok(json!({
            "protocol": PROTOCOL_VERSION,
            "allTools": all_tools,
            "convenience": convenience,
            "mcp": servers,
            "files": files,
            "namespaces": self.namespaces.descriptors(),
        }))
    }

    /// The script to evaluate before the cell: `__codemode_boot("<boot JSON as a string literal>")`.
    /// The JSON travels as a string and is parsed by the prelude's captured `JSON.parse`, so keys like
    /// `__proto__` in namespace data stay plain data (an object literal would set a prototype).
    pub fn boot_script(&self) -> Result<String, BridgeError> {
        let json = self.boot_json()?.to_string();
        let literal = Value::String(json).to_string();
        Ok(format!("{BOOT_FUNCTION}({literal});"))
    }
}

impl BootContext {
    /// First stage of a two-stage boot: everything but the namespaces. Evaluate it once (for
    /// example into a sandbox base image with `Sandbox::extend`); it leaves
    /// [`NAMESPACES_FUNCTION`] for [`BootContext::namespaces_script`], which every run must then
    /// evaluate before its cell (it removes the hook).
    pub fn api_script(&self) -> Result<String, BridgeError> {
        let mut json = self.boot_json()?;
        if let Value::Object(map) = &mut json {
            map.remove("namespaces");
        }
        let literal = Value::String(json.to_string()).to_string();
        Ok(format!("{BOOT_FUNCTION}({literal});"))
    }

    /// Second stage of a two-stage boot: the run's namespaces (possibly none).
    pub fn namespaces_script(&self) -> String {
        let list = Value::Array(self.namespaces.descriptors()).to_string();
        let literal = Value::String(list).to_string();
        format!("{NAMESPACES_FUNCTION}({literal});")
    }
}

fn invalid(message: String) -> BridgeError {
    BridgeError::InvalidContext(message)
}

/// Validates the MCP table and returns the guest server map and the file table.
fn mcp_table(mcp: &Value) -> Result<(Map<String, Value>, ApiFileTable), BridgeError> {
    let mut servers_out = Map::new();
    let mut files = Vec::new();
    let object = match mcp {
        Value::Null => return Ok((servers_out, ApiFileTable::default())),
        Value::Object(o) => o,
        _ => return Err(invalid("the MCP table must be an object".into())),
    };
    if let Some(key) = object.keys().find(|k| !matches!(k.as_str(), "servers" | "files")) {
        return Err(invalid(format!("the MCP table has an unknown member {key:?}")));
    }
    match object.get("servers") {
        None | Some(Value::Null) => {}
        Some(Value::Object(servers)) => {
            for (server, entry) in servers {
                if !ident::is_identifier(server) {
                    return Err(invalid(format!("MCP server identifier {server:?} is not an identifier")));
                }
                let Value::Object(entry) = entry else {
                    return Err(invalid(format!("MCP server {server:?} must be an object")));
                };
                let flag = |key: &str| match entry.get(key) {
                    None | Some(Value::Null) => Ok(false),
                    Some(Value::Bool(b)) => Ok(*b),
                    Some(_) => Err(invalid(format!("MCP server {server:?}: `{key}` must be a boolean"))),
                };
                let (resources, prompts) = (flag("resources")?, flag("prompts")?);
                let mut tools = Vec::new();
                let mut seen = BTreeSet::new();
                match entry.get("tools") {
                    None | Some(Value::Null) => {}
                    Some(Value::Array(list)) => {
                        for tool in list {
                            let Value::String(tool) = tool else {
                                return Err(invalid(format!(
                                    "MCP server {server:?}: tool identifiers must be strings"
                                )));
                            };
                            if !ident::is_identifier_name(tool) || !is_safe_segment(tool) {
                                return Err(invalid(format!(
                                    "MCP server {server:?}: tool identifier {tool:?} is not a safe identifier"
                                )));
                            }
                            if MCP_SERVER_HELPERS.contains(&tool.as_str()) {
                                return Err(invalid(format!(
                                    "MCP server {server:?}: tool identifier {tool:?} collides with a built-in member"
                                )));
                            }
                            if !seen.insert(tool.as_str()) {
                                return Err(invalid(format!(
                                    "MCP server {server:?}: tool {tool:?} appears twice"
                                )));
                            }
                            tools.push(Value::String(tool.clone()));
                        }
                    }
                    Some(_) => {
                        return Err(invalid(format!("MCP server {server:?}: `tools` must be an array")));
                    }
                }
                let name = match entry.get("name") {
                    None | Some(Value::Null) => Value::Null,
                    Some(Value::String(name)) => Value::String(name.clone()),
                    Some(_) => {
                        return Err(invalid(format!("MCP server {server:?}: `name` must be a string")));
                    }
                };
                let tool_names = match entry.get("toolNames") {
                    None | Some(Value::Null) => Vec::new(),
                    Some(Value::Array(list))
                        if list.len() == tools.len() && list.iter().all(Value::is_string) =>
                    {
                        list.clone()
                    }
                    Some(_) => {
                        return Err(invalid(format!(
                            "MCP server {server:?}: `toolNames` must be an array of strings, one per tool"
                        )));
                    }
                };
                if let Some(key) = entry
                    .keys()
                    .find(|k| !matches!(k.as_str(), "tools" | "resources" | "prompts" | "name" | "toolNames"))
                {
                    return Err(invalid(format!("MCP server {server:?} has an unknown member {key:?}")));
                }
                servers_out.insert(
                    server.clone(),
                    json!({
                        "tools": tools,
                        "resources": resources,
                        "prompts": prompts,
                        "name": name,
                        "toolNames": tool_names,
                    }),
                );
            }
        }
        Some(_) => return Err(invalid("MCP `servers` must be an object".into())),
    }
    match object.get("files") {
        None | Some(Value::Null) => {}
        Some(Value::Array(list)) => {
            for file in list {
                match (file.get("path"), file.get("content")) {
                    (Some(Value::String(path)), Some(Value::String(content))) => {
                        files.push(ApiFile { path: path.clone(), content: content.clone() })
                    }
                    _ => return Err(invalid("API files must be { path: string, content: string }".into())),
                }
            }
        }
        Some(_) => return Err(invalid("MCP `files` must be an array".into())),
    }
    let files = ApiFileTable::new(files).map_err(invalid)?;
    Ok((servers_out, files))
}

/// Wraps a cell body so that its return value goes through the prelude's restricted JSON adapter
/// instead of the engine's `JSON.stringify`: no `toJSON` runs, `NaN`/`Infinity` become `null`, BigInt a
/// decimal string, a cycle or excessive depth a catchable `TypeError`, and setters guest code put on
/// `Array.prototype` cannot interfere. Pass the result to the sandbox's `eval_cell` instead of `body`,
/// and decode the completed value with [`decode_cell_value`]. The prefix sits on the first line, so
/// line numbers do not move.
pub fn wrap_cell(body: &str) -> String {
    format!("return {RESULT_FUNCTION}(await (async () => {{{body}\n}})());")
}

/// Decodes the completed value of a [`wrap_cell`] cell: the sandbox's `value_json` is a JSON string
/// whose content is the restricted JSON text of the value (`None`, for `undefined` or a function,
/// becomes `null`). The inner text is decoded strictly, at most [`MAX_VALUE_DEPTH`] deep.
pub fn decode_cell_value(value_json: Option<&str>) -> Result<Value, JsonError> {
    let Some(outer) = value_json else { return Ok(Value::Null) };
    let unbounded = DecodeLimits { max_bytes: usize::MAX, max_depth: MAX_VALUE_DEPTH };
    match json::decode_json(outer, &unbounded)? {
        Value::String(inner) => json::decode_json(&inner, &unbounded),
        _ => Err(JsonError::Syntax("the cell value was not produced by the prelude's encoder".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cell_values_decode_from_the_prelude_encoding() {
        assert_eq!(decode_cell_value(None), Ok(Value::Null));
        assert_eq!(decode_cell_value(Some(r#""{\"a\":[1,null]}""#)), Ok(json!({ "a": [1, null] })));
        assert_eq!(decode_cell_value(Some(r#""\"s\"""#)), Ok(json!("s")));
        assert!(decode_cell_value(Some("{}")).is_err(), "not a string: not from the prelude");
        assert!(decode_cell_value(Some(r#""{""#)).is_err());
        let deep = format!("{}{}", "[".repeat(65), "]".repeat(65));
        let outer = Value::String(deep).to_string();
        assert_eq!(decode_cell_value(Some(&outer)), Err(JsonError::TooDeep { limit: 64 }));
    }

    #[test]
    fn wrap_cell_keeps_the_first_line() {
        let wrapped = wrap_cell("const a = 1;\nreturn a;");
        assert_eq!(wrapped.lines().count(), 3);
        assert!(wrapped.starts_with("return __codemode_result(await (async () => {const a = 1;"));
    }
}
