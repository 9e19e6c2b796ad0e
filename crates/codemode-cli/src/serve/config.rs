//! The gateway config file (`codemode serve --config`) and the gateway's limits.

use std::path::Path;
use std::time::Duration;

use codemode::CodeModeConfig;
use serde_json::{Value, json};

use codemode_core::validate::{Invalid, Object, expected};

use crate::engine::config_from_value;
use crate::error::CliError;
use crate::fixture::{FixtureCatalog, UpstreamCommand};

/// Default time an upstream call may take before it fails with code `timeout`.
pub const DEFAULT_UPSTREAM_TIMEOUT_MS: u64 = 120_000;

/// Default time an upstream may take to start (initialize and list its tools) before it is left
/// out (`startupTimeoutMs`).
pub const DEFAULT_STARTUP_TIMEOUT_MS: u64 = 10_000;

/// Most `tools/list` pages read from one upstream; past it the listing is truncated.
pub const MAX_LIST_PAGES: usize = 100;

/// Most tools taken from one upstream; past it the listing is truncated.
pub const MAX_TOOLS_PER_SERVER: usize = 1000;

/// Most bytes of tool definitions (as JSON) taken from one upstream; past it the listing is
/// truncated.
pub const MAX_LISTING_BYTES: usize = 4 * 1024 * 1024;

/// A `list_changed` waits this long for more before the catalog is rebuilt ...
pub const LIST_CHANGED_DEBOUNCE: Duration = Duration::from_millis(200);

/// ... but no longer than this after the first one (an upstream that never stops sending them
/// still gets a rebuild, one per this interval at most).
pub const LIST_CHANGED_MAX_DELAY: Duration = Duration::from_secs(2);

/// The first restart of a crashed upstream waits this long; each further one twice as long ...
pub const RESTART_BACKOFF_FIRST: Duration = Duration::from_millis(500);

/// ... up to this.
pub const RESTART_BACKOFF_MAX: Duration = Duration::from_secs(30);

/// Restarts in a row (without [`RESTART_RESET_AFTER`] of uptime between them) before the gateway
/// gives up on an upstream.
pub const MAX_RESTARTS: u32 = 5;

/// An upstream that stayed up this long after a restart counts its restarts from zero again.
pub const RESTART_RESET_AFTER: Duration = Duration::from_secs(60);

/// Most catalog generations kept for suspended runs (each kept generation holds at least one);
/// past it the oldest are dropped with a warning.
pub const MAX_GENERATIONS: usize = 64;

/// The gateway configuration file.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct GatewayConfig {
    /// Code Mode settings (`codeMode`, default: enabled).
    pub code_mode: CodeModeConfig,
    /// Upstream servers (`mcpServers`), in file order.
    pub servers: Vec<(String, UpstreamCommand)>,
    /// The optional fixture catalog (`catalog`: a path, or an inline fixture object).
    pub catalog: FixtureCatalog,
    /// Per-call upstream timeout (`upstreamTimeoutMs`).
    pub upstream_timeout: Duration,
    /// Default start-up timeout per upstream (`startupTimeoutMs`; a server's own overrides it).
    pub startup_timeout: Duration,
    /// Servers with `disabled: true` (not started), in file order.
    pub disabled_servers: Vec<String>,
    /// Directory for the compiled guest module (not in the file: `--module-cache`). Default: none.
    pub module_cache: Option<std::path::PathBuf>,
    /// Fail [`Gateway::start`](super::Gateway::start) when an upstream cannot be started, instead of
    /// logging it and going on without it. Default: `false` (`serve` stays up); `exec` and `session`
    /// set it.
    pub require_upstreams: bool,
    /// Where suspended runs are kept (`--run-store`, sealed with `--state-key-env`). Default: none
    /// (in the process).
    pub run_store: Option<crate::engine::RunStoreChoice>,
}

impl GatewayConfig {
    /// Reads and validates a gateway config file. Errors name the file, the JSON path and the fix.
    /// The file may be JSONC (`//` and `/* */` comments, trailing commas), as clients write it.
    pub fn load(path: &Path) -> Result<GatewayConfig, CliError> {
        let file = path.display().to_string();
        let text =
            std::fs::read_to_string(path).map_err(|source| CliError::Read { path: file.clone(), source })?;
        let value: Value = serde_json::from_str(&strip_jsonc(&text)).map_err(|e| CliError::Config {
            file: file.clone(),
            path: "$".into(),
            message: format!("not valid JSON: {e}"),
        })?;
        GatewayConfig::from_value(&value, &file, path.parent().unwrap_or(Path::new(".")))
    }

    /// Validates a gateway config document.
    pub fn from_value(value: &Value, file: &str, base: &Path) -> Result<GatewayConfig, CliError> {
        let invalid =
            |e: Invalid| CliError::Config { file: file.to_owned(), path: e.path, message: e.message };
        let Value::Object(map) = value else {
            return Err(invalid(Invalid::new(
                "$",
                format!(
                    "{} such as {{\"mcpServers\": {{...}}, \"codeMode\": {{...}}}}",
                    expected("an object", value)
                ),
            )));
        };
        let root = Object::new(value, "$").map_err(invalid)?;
        const FIELDS: &[&str] = &[
            "$schema",
            "mcpServers",
            "servers",
            "codeMode",
            "tools",
            "catalog",
            "upstreamTimeoutMs",
            "startupTimeoutMs",
            "hostSource",
        ];
        root.only(FIELDS).map_err(invalid)?;
        // A gateway exists for Code Mode: a `codeMode` object without `enabled` means enabled.
        let mut value = value.clone();
        for pointer in ["/codeMode", "/tools/codeMode"] {
            if let Some(Value::Object(code_mode)) = value.pointer_mut(pointer) {
                code_mode.entry("enabled").or_insert(Value::Bool(true));
            }
        }
        let value = &value;
        let code_mode = if map.contains_key("codeMode") || value.pointer("/tools/codeMode").is_some() {
            config_from_value(value, file)?
        } else {
            CodeModeConfig::enabled()
        };
        // `mcpServers` (or VS Code's `servers`) uses exactly the fixture format's command shape:
        // validate it through it.
        let key = match (map.get("mcpServers"), map.get("servers")) {
            (Some(_), Some(_)) => {
                return Err(invalid(Invalid::new(
                    "$.servers",
                    "give either mcpServers or servers, not both",
                )));
            }
            (None, Some(_)) => "servers",
            _ => "mcpServers",
        };
        let servers_doc = json!({ "mcpServers": map.get(key).cloned().unwrap_or_else(|| json!({})) });
        let servers_only = FixtureCatalog::from_value(&servers_doc, base).map_err(|e| {
            invalid(Invalid::new(e.path.replacen("$.mcpServers", &root.child(key), 1), e.message))
        })?;
        let mut servers = servers_only.upstream_servers();
        let mut catalog = match map.get("catalog") {
            None => FixtureCatalog::default(),
            Some(Value::String(path)) => FixtureCatalog::load(&base.join(path))?,
            Some(inline @ Value::Object(_)) => FixtureCatalog::from_value(inline, base)
                .map_err(|e| invalid(Invalid::new(e.path.replacen('$', "$.catalog", 1), e.message)))?,
            Some(other) => {
                return Err(invalid(Invalid::new(
                    "$.catalog",
                    expected("a fixture file path or an inline fixture object", other),
                )));
            }
        };
        // Inline servers written directly under mcpServers join the fixture catalog.
        catalog.mcp_servers.extend(
            servers_only
                .mcp_servers
                .into_iter()
                .filter(|s| matches!(s, crate::fixture::FixtureMcpServer::Inline(_))),
        );
        servers.extend(catalog.upstream_servers());
        match map.get("hostSource") {
            None => {}
            Some(Value::String(name)) if codemode::is_valid_host_source(name) => {
                catalog = catalog.with_host_source(name.clone());
            }
            Some(other) => {
                return Err(invalid(Invalid::new(
                    "$.hostSource",
                    expected(
                        "the source of host tool ids: 1-32 lowercase letters, digits, `_` or `-`, \
                         starting with a letter, not \"mcp\" or \"client\" (e.g. \"host\")",
                        other,
                    ),
                )));
            }
        }
        let (disabled, servers): (Vec<_>, Vec<_>) = servers.into_iter().partition(|(_, c)| c.disabled);
        let disabled_servers = disabled.into_iter().map(|(name, _)| name).collect();
        let millis = |key: &str, default: u64| {
            root.positive_millis(key).map(|ms| Duration::from_millis(ms.unwrap_or(default))).map_err(invalid)
        };
        let upstream_timeout = millis("upstreamTimeoutMs", DEFAULT_UPSTREAM_TIMEOUT_MS)?;
        let startup_timeout = millis("startupTimeoutMs", DEFAULT_STARTUP_TIMEOUT_MS)?;
        Ok(GatewayConfig {
            code_mode,
            servers,
            catalog,
            upstream_timeout,
            startup_timeout,
            disabled_servers,
            module_cache: None,
            require_upstreams: false,
            run_store: None,
        })
    }

    /// A gateway over a fixture catalog alone: its command servers are the upstreams, each must
    /// start ([`GatewayConfig::require_upstreams`]). What `codemode exec` and `codemode session`
    /// use when the catalog names command servers.
    pub fn for_catalog(code_mode: CodeModeConfig, catalog: FixtureCatalog) -> GatewayConfig {
        let (disabled, servers): (Vec<_>, Vec<_>) =
            catalog.upstream_servers().into_iter().partition(|(_, c)| c.disabled);
        GatewayConfig {
            code_mode,
            servers,
            catalog,
            upstream_timeout: Duration::from_millis(DEFAULT_UPSTREAM_TIMEOUT_MS),
            startup_timeout: Duration::from_millis(DEFAULT_STARTUP_TIMEOUT_MS),
            disabled_servers: disabled.into_iter().map(|(name, _)| name).collect(),
            module_cache: None,
            require_upstreams: true,
            run_store: None,
        }
    }
}

/// JSONC to JSON: comments become spaces (so error positions stay right) and trailing commas
/// before `}` or `]` are dropped. Strings are left alone.
pub fn strip_jsonc(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(bytes.len());
    let mut i = 0;
    // Index in `out` of a comma that may turn out to be trailing.
    let mut comma: Option<usize> = None;
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'"' => {
                comma = None;
                let start = i;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i = (i + 1).min(bytes.len());
                out.extend_from_slice(&bytes[start..i]);
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    out.push(b' ');
                    i += 1;
                }
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                let end = text[i + 2..].find("*/").map_or(bytes.len(), |e| i + 2 + e + 2);
                for &c in &bytes[i..end] {
                    out.push(if c == b'\n' { b'\n' } else { b' ' });
                }
                i = end;
                continue;
            }
            b',' => comma = Some(out.len()),
            b'}' | b']' => {
                if let Some(at) = comma.take() {
                    out[at] = b' ';
                }
            }
            c if c.is_ascii_whitespace() => {}
            _ => comma = None,
        }
        out.push(b);
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| text.to_owned())
}
