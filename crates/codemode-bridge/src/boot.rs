//! The per-run boot context: what the runtime evaluates (with the sandbox's `eval_script`) after
//! restoring the base snapshot and before the cell.

use std::collections::BTreeSet;

use codemode_core::guest::{McpGuestTable, TOOLS_HELPERS, is_private};
use codemode_core::{ToolCatalogEntry, ToolSource, ident};
use serde_json::{Map, Value, json};

use crate::api_files::{ApiFile, ApiFileTable};
use crate::error::BridgeError;
use crate::json::{self, DecodeLimits, JsonError, MAX_VALUE_DEPTH};
use crate::protocol::PROTOCOL_VERSION;
use crate::scope::NamespaceTable;

/// The guest global the prelude leaves for the boot script; it deletes itself on first call.
pub(crate) const BOOT_FUNCTION: &str = "__codemode_boot";

/// The guest global that holds the bulk texts of [`BootContext::api_script_and_texts`] until
/// its script takes them (the sandbox's `extend_with_texts` defines it).
pub(crate) const TEXTS_GLOBAL: &str = "__codemode_texts";

/// The guest global a two-stage boot leaves for the run's namespaces (see
/// [`BootContext::api_script`]); it deletes itself on first call.
pub(crate) const NAMESPACES_FUNCTION: &str = "__codemode_namespaces";

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
    /// The MCP servers and `API` files (codemode-mcp's [`McpGuestTable`]), or `None` for none.
    /// `MCP["<exact server name>"]` and `MCP.<server>["<exact tool name>"]` resolve as aliases of the
    /// identifiers. Default: `None`.
    pub mcp: Option<McpGuestTable>,
    /// The run's visible namespaces. Default: none.
    pub namespaces: NamespaceTable,
    /// The bound on a cell's returned value, in UTF-16 code units of its JSON text (the run's
    /// `maxOutputBytes`): a longer value stays in the guest and only its length crosses (decode with
    /// [`decode_cell_value_within`]). Default: none (unbounded).
    pub max_result_chars: Option<u64>,
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
            if !ident::is_identifier(name) || is_private(name) {
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
        let (servers, files) = mcp_table(self.mcp.as_ref())?;
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
            "maxResultChars": self.max_result_chars,
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
    /// the hook `__codemode_namespaces` for [`BootContext::namespaces_script`], which every run must then
    /// evaluate before its cell (it removes the hook).
    ///
    /// The `API` files' contents travel as string literals of their own (an array, the second
    /// argument), not inside the boot JSON: the guest then holds each content once, where a JSON
    /// string of megabytes (10,000 MCP tools' declarations) would also leave its literal, its parse
    /// and a copy of every content behind in guest memory (a base image several times larger).
    pub fn api_script(&self) -> Result<String, BridgeError> {
        let (literal, contents) = self.api_json_literal()?;
        let mut script = format!("{BOOT_FUNCTION}({literal}, [");
        for (i, content) in contents.into_iter().enumerate() {
            if i > 0 {
                script.push(',');
            }
            script.push_str(&Value::String(content).to_string());
        }
        script.push_str("]);");
        Ok(script)
    }

    /// [`BootContext::api_script`] with the `API` files' contents as bulk text instead of string
    /// literals: evaluate the script with `Sandbox::extend_with_texts(script, &texts, ..)`, which
    /// hands the guest the texts as the array global `__codemode_texts`; the script takes it,
    /// deletes the global and boots exactly as [`BootContext::api_script`] does. Parsing megabytes
    /// of literals was most of a 10,000-tool boot's time, and its garbage a third of the base
    /// image.
    pub fn api_script_and_texts(&self) -> Result<(String, Vec<String>), BridgeError> {
        let (literal, contents) = self.api_json_literal()?;
        let script = format!(
            "(function (texts) {{ delete globalThis.{TEXTS_GLOBAL}; {BOOT_FUNCTION}({literal}, texts); }})(globalThis.{TEXTS_GLOBAL});"
        );
        Ok((script, contents))
    }

    /// The first stage's boot JSON (no namespaces, no file contents) as a string literal, and the
    /// files' contents in the order of its `files`.
    fn api_json_literal(&self) -> Result<(String, Vec<String>), BridgeError> {
        let mut json = self.boot_json()?;
        let mut contents = Vec::new();
        if let Value::Object(map) = &mut json {
            map.remove("namespaces");
            if let Some(Value::Array(files)) = map.get_mut("files") {
                for file in files {
                    if let Some(Value::String(content)) =
                        file.as_object_mut().and_then(|f| f.remove("content"))
                    {
                        contents.push(content);
                    }
                }
            }
        }
        Ok((Value::String(json.to_string()).to_string(), contents))
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

/// The guest server map and the file table of an MCP guest table (checked when it was built).
fn mcp_table(mcp: Option<&McpGuestTable>) -> Result<(Map<String, Value>, ApiFileTable), BridgeError> {
    let mut servers = Map::new();
    let Some(mcp) = mcp else { return Ok((servers, ApiFileTable::default())) };
    for server in mcp.servers() {
        let tools: Vec<&str> = server.tools().iter().map(|t| t.ident()).collect();
        let tool_names: Vec<&str> = server.tools().iter().map(|t| t.name()).collect();
        servers.insert(
            server.ident().to_owned(),
            json!({
                "tools": tools,
                "resources": server.resources(),
                "prompts": server.prompts(),
                "name": server.name(),
                "toolNames": tool_names,
            }),
        );
    }
    let files = mcp
        .files()
        .iter()
        .map(|f| ApiFile { path: f.path().to_owned(), content: f.content().to_owned() })
        .collect();
    let files = ApiFileTable::new(files).map_err(invalid)?;
    Ok((servers, files))
}

/// A completed cell's value and the UTF-8 bytes of its JSON text (what the value counts against
/// `maxOutputBytes`, like a `json(...)` output item).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct CellValue {
    /// The value (`null` for `undefined`).
    pub value: Value,
    /// UTF-8 bytes of its restricted JSON text (0 for `undefined`: nothing was returned).
    pub bytes: u64,
}

/// Why a completed cell's value was not accepted.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CellValueError {
    /// The value's JSON text is over the bound. `bytes` is its size, or for a value the guest kept
    /// (see [`BootContext::max_result_chars`]) a lower bound of it.
    #[error("the returned value is {bytes} bytes or more; at most {limit} bytes are allowed")]
    TooLarge {
        /// Size of the value's JSON text (at least).
        bytes: u64,
        /// The bound.
        limit: u64,
    },
    /// The value is not what the prelude produces (a defect, never caused by guest code).
    #[error("the cell's value could not be decoded: {0}")]
    Invalid(JsonError),
}

/// Decodes the completed value of a cell. The prelude hands the sandbox its restricted JSON encoder,
/// which the sandbox applies to the cell's resolved value when the cell's promise settles (no `toJSON`
/// runs, `NaN`/`Infinity` become `null`, BigInt a decimal string, a cycle or excessive depth a
/// `TypeError`; and no extra `await` a cell could observe). So the sandbox's `value_json` is a JSON string
/// whose content is the restricted JSON text of the value (`None`, for `undefined` or a function,
/// becomes `null`). The inner text is decoded strictly, at most [`MAX_VALUE_DEPTH`] deep.
pub fn decode_cell_value(value_json: Option<&str>) -> Result<Value, JsonError> {
    match decode_cell_value_within(value_json, u64::MAX) {
        Ok(cell) => Ok(cell.value),
        Err(CellValueError::Invalid(e)) => Err(e),
        Err(CellValueError::TooLarge { bytes, limit }) => Err(JsonError::TooLarge {
            bytes: usize::try_from(bytes).unwrap_or(usize::MAX),
            limit: usize::try_from(limit).unwrap_or(usize::MAX),
        }),
    }
}

/// Decodes the completed value of a cell booted with [`BootContext::max_result_chars`], whose JSON text may have at most
/// `max_bytes` UTF-8 bytes. An oversized text is refused before it is parsed (nothing is allocated
/// for it); a value the guest kept (its length, a JSON number) is [`CellValueError::TooLarge`] too.
pub fn decode_cell_value_within(
    value_json: Option<&str>,
    max_bytes: u64,
) -> Result<CellValue, CellValueError> {
    let Some(outer) = value_json else { return Ok(CellValue { value: Value::Null, bytes: 0 }) };
    let unbounded = DecodeLimits { max_bytes: usize::MAX, max_depth: MAX_VALUE_DEPTH };
    match json::decode_json(outer, &unbounded).map_err(CellValueError::Invalid)? {
        Value::String(inner) => {
            let bytes = inner.len() as u64;
            if bytes > max_bytes {
                return Err(CellValueError::TooLarge { bytes, limit: max_bytes });
            }
            let value = json::decode_json(&inner, &unbounded).map_err(CellValueError::Invalid)?;
            Ok(CellValue { value, bytes })
        }
        Value::Number(n) if n.as_u64().is_some_and(|units| units > max_bytes) => {
            Err(CellValueError::TooLarge { bytes: n.as_u64().unwrap_or(u64::MAX), limit: max_bytes })
        }
        _ => Err(CellValueError::Invalid(JsonError::Syntax(
            "the cell value was not produced by the prelude's encoder".into(),
        ))),
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
    fn bounded_cell_values_are_refused_past_the_bound() {
        let at = Value::String(format!("\"{}\"", "x".repeat(8))).to_string();
        assert_eq!(
            decode_cell_value_within(Some(&at), 10),
            Ok(CellValue { value: json!("xxxxxxxx"), bytes: 10 })
        );
        assert_eq!(
            decode_cell_value_within(Some(&at), 9),
            Err(CellValueError::TooLarge { bytes: 10, limit: 9 })
        );
        // UTF-8 bytes count, not characters.
        let wide = Value::String("\"é\"".into()).to_string();
        assert_eq!(decode_cell_value_within(Some(&wide), 4).map(|c| c.bytes), Ok(4));
        assert!(decode_cell_value_within(Some(&wide), 3).is_err());
        // What the guest sends for a value it kept: its length.
        assert_eq!(
            decode_cell_value_within(Some("70000"), 65536),
            Err(CellValueError::TooLarge { bytes: 70000, limit: 65536 })
        );
        assert!(matches!(decode_cell_value_within(Some("12"), 65536), Err(CellValueError::Invalid(_))));
        assert_eq!(decode_cell_value_within(None, 0).map(|c| c.bytes), Ok(0));
    }
}
