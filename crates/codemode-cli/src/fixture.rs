//! The fixture catalog format (docs/fixture-catalog.md, docs/fixture-catalog.schema.json): host
//! tools with scripted behaviors, inline or command-started MCP servers, namespaces and a deny list.
//!
//! Loading validates the whole document and reports the first problem with its JSON path
//! (`$.tools[2].behavior.kind`) and a fix, so a hand-written file is quick to repair.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use codemode::{
    NamespaceRegistration, ScopeValue, ToolAnnotations, ToolOrigin, ToolSpec, namespace_tool,
    namespace_tool_with,
};
use serde_json::{Map, Value};

use crate::error::CliError;

/// What a scripted tool does when called.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Behavior {
    /// Returns fixed `details` (and optional raw `content` blocks).
    Static {
        /// The structured value (`null` when an MCP error result gives none).
        details: Value,
        /// Raw result blocks, returned by `tools.call` / MCP calls.
        content: Option<Value>,
        /// MCP tools only: the result has `isError: true`. The call then fails the way a real
        /// server's error result does through `codemode serve`: the guest's call throws with the
        /// result's text as message and code `tool_error`.
        is_error: bool,
    },
    /// Returns which tool ran and its input: `{ tool: <catalog id>, input }` for host tools,
    /// `{ server, tool: <MCP tool name>, input }` (as `structuredContent`) for MCP tools.
    Echo,
    /// Fails with a message and an optional code.
    Error {
        /// The error message the guest sees.
        message: String,
        /// A short machine code.
        code: Option<String>,
    },
    /// Sleeps `ms` milliseconds, then returns `details` (or what [`Behavior::Echo`] returns when
    /// `details` is absent).
    Delay {
        /// How long to sleep.
        ms: u64,
        /// The value returned afterwards; `None` echoes.
        details: Option<Value>,
    },
    /// Stays pending until a session `resolve` (or `reject`) for its call id.
    Manual,
    /// The n-th call behaves like `steps[n]`; calls past the end repeat the last step.
    Sequence(Vec<Behavior>),
    /// The file gives no behavior for the tool: every call fails with code `no_behavior` and a
    /// message saying so (a fixture never fakes success silently).
    Unscripted,
}

/// How to start an upstream MCP server (the shape MCP clients use in `mcpServers`).
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct UpstreamCommand {
    /// The program (empty for a remote server).
    pub command: String,
    /// How the gateway talks to it (`type`; inferred from `url` or `command` when absent).
    pub transport: UpstreamTransport,
    /// A remote server's URL (`url`: the Streamable HTTP endpoint, or the legacy SSE stream);
    /// then there is no program.
    pub url: Option<String>,
    /// HTTP headers sent to a remote server (`headers`).
    pub headers: BTreeMap<String, String>,
    /// Its arguments.
    pub args: Vec<String>,
    /// Extra environment variables.
    pub env: BTreeMap<String, String>,
    /// Working directory (relative paths are resolved against the config file's directory).
    pub cwd: Option<PathBuf>,
    /// How long start-up (initialize and the first listing) may take (`startupTimeoutMs`; the
    /// gateway's default when absent).
    pub startup_timeout_ms: Option<u64>,
    /// How long one request to this server may take (`timeoutMs`; the gateway's default when
    /// absent).
    pub timeout_ms: Option<u64>,
    /// `disabled: true`: listed but not started.
    pub disabled: bool,
    /// `inheritEnv: true`: the child gets the gateway's whole environment, not just the allowlist.
    pub inherit_env: bool,
    /// Fields accepted for compatibility with other clients but not used, one warning each.
    pub warnings: Vec<String>,
}

/// How the gateway talks to an upstream server (`type` in its entry).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum UpstreamTransport {
    /// A child process speaking MCP on its stdio (`"stdio"`, or an entry with `command`).
    #[default]
    Stdio,
    /// A remote server over Streamable HTTP (`"http"`, or an entry with `url`).
    Http,
    /// A remote server over the legacy HTTP+SSE transport (`"sse"`).
    Sse,
}

impl UpstreamTransport {
    /// The name the status resource shows: `stdio`, `http` or `sse`.
    pub fn as_str(self) -> &'static str {
        match self {
            UpstreamTransport::Stdio => "stdio",
            UpstreamTransport::Http => "http",
            UpstreamTransport::Sse => "sse",
        }
    }
}

/// Environment variables every upstream child gets from the gateway (what the official MCP SDKs
/// pass), besides its own `env` and `envFile`.
pub const ENV_ALLOWLIST: &[&str] = &["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"];

/// Replaces `${VAR}` and `${env:VAR}` in `text` with the variable's value. Errors name the
/// missing variable.
pub fn interpolate(text: &str) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            return Err(format!("unclosed \"${{\" in {text:?}"));
        };
        let name = after[..end].strip_prefix("env:").unwrap_or(&after[..end]);
        match std::env::var(name) {
            Ok(value) => out.push_str(&value),
            Err(_) => {
                return Err(format!(
                    "environment variable {name:?} is not set (used as ${{{}}})",
                    &after[..end]
                ));
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// A remote server entry: `{"type"?: "http" | "sse", "url", "headers"?}` (Streamable HTTP unless
/// `type` is `"sse"`).
fn parse_remote(name: &str, obj: &Obj<'_>, kind: Option<&str>) -> Result<FixtureMcpServer, Invalid> {
    obj.only(&[
        "type",
        "url",
        "headers",
        "startupTimeoutMs",
        "timeoutMs",
        "timeout",
        "disabled",
        "autoApprove",
        "alwaysAllow",
    ])?;
    let transport = match kind {
        None => UpstreamTransport::Http,
        Some("http" | "streamable-http" | "streamableHttp") => UpstreamTransport::Http,
        Some("sse") => UpstreamTransport::Sse,
        Some(other) => {
            return Err((
                obj.child("type"),
                format!(
                    "a server with a url has type \"http\" (Streamable HTTP) or \"sse\" (legacy HTTP+SSE), found {other:?}"
                ),
            ));
        }
    };
    let url = interpolate(&obj.required_string("url")?).map_err(|e| (obj.child("url"), e))?;
    match reqwest::Url::parse(&url) {
        Ok(parsed) if matches!(parsed.scheme(), "http" | "https") && parsed.host().is_some() => {}
        Ok(_) => {
            return Err((obj.child("url"), format!("must be an http:// or https:// URL, found {url:?}")));
        }
        Err(e) => return Err((obj.child("url"), format!("is not a valid URL ({e}): {url:?}"))),
    }
    // Without a type, a URL whose path ends in /sse is a legacy SSE server (as clients infer it).
    let transport = match (kind, reqwest::Url::parse(&url)) {
        (None, Ok(parsed)) if parsed.path().trim_end_matches('/').ends_with("/sse") => UpstreamTransport::Sse,
        _ => transport,
    };
    let mut headers = BTreeMap::new();
    if let Some(v) = obj.get("headers") {
        let hpath = obj.child("headers");
        let map =
            v.as_object().ok_or_else(|| (hpath.clone(), "must be an object of string values".to_owned()))?;
        for (k, v) in map {
            let at = format!("{hpath}{}", key_path(k));
            let s = v.as_str().ok_or_else(|| (at.clone(), "must be a string".to_owned()))?;
            headers.insert(k.clone(), interpolate(s).map_err(|e| (at, e))?);
        }
    }
    let millis =
        |key: &str| match obj.get(key) {
            None => Ok(None),
            Some(v) => v.as_u64().filter(|ms| *ms >= 1).map(Some).ok_or_else(|| {
                (obj.child(key), "must be a positive whole number of milliseconds".to_owned())
            }),
        };
    let mut warnings = Vec::new();
    for (key, why) in [
        ("timeout", "is not used (its unit differs between clients); set timeoutMs in milliseconds"),
        ("autoApprove", "is not used: the gateway does not ask for approval"),
        ("alwaysAllow", "is not used: the gateway does not ask for approval"),
    ] {
        if obj.get(key).is_some() {
            warnings.push(format!("{} {why}", obj.child(key)));
        }
    }
    Ok(FixtureMcpServer::Command {
        name: name.to_owned(),
        command: UpstreamCommand {
            transport,
            url: Some(url),
            headers,
            startup_timeout_ms: millis("startupTimeoutMs")?,
            timeout_ms: millis("timeoutMs")?,
            disabled: obj.bool("disabled")?,
            warnings,
            ..UpstreamCommand::default()
        },
    })
}

/// Reads a dotenv file: `KEY=VALUE` lines, `#` comments, optional `export ` and quotes.
fn read_env_file(path: &Path) -> Result<BTreeMap<String, String>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut env = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line.strip_prefix("export ").unwrap_or(line);
        let Some((key, value)) = line.split_once('=') else {
            return Err(format!("{}:{}: expected KEY=VALUE", path.display(), n + 1));
        };
        let value = value.trim();
        let value = value
            .strip_prefix('"')
            .and_then(|v| v.strip_suffix('"'))
            .or_else(|| value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
            .unwrap_or(value);
        env.insert(key.trim().to_owned(), value.to_owned());
    }
    Ok(env)
}

/// A resource an inline MCP server serves.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct FixtureResource {
    /// The resource URI.
    pub uri: String,
    /// Its text.
    pub text: String,
    /// Its MIME type.
    pub mime_type: Option<String>,
}

/// A prompt an inline MCP server serves: `messages` is returned as is.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct FixturePrompt {
    /// The prompt name.
    pub name: String,
    /// Its description.
    pub description: Option<String>,
    /// The `messages` array returned by `prompts.get`; `{{name}}` is replaced with argument `name`.
    pub messages: Value,
}

/// An inline MCP server: listed tools with behaviors, plus resources and prompts.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct InlineMcpServer {
    /// The server's metadata as `tools/list` would report it.
    pub server: codemode::McpServer,
    /// Behavior per tool name.
    pub behaviors: BTreeMap<String, Behavior>,
    /// Resources.
    pub resources: Vec<FixtureResource>,
    /// Prompts.
    pub prompts: Vec<FixturePrompt>,
}

/// One entry of `mcpServers`.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum FixtureMcpServer {
    /// Tools declared in the file, answered by behaviors.
    Inline(InlineMcpServer),
    /// A real server started as a child process (`codemode serve`, `exec`, `session`).
    Command {
        /// The server name (owner in `mcp:<name>:<tool>`).
        name: String,
        /// How to start it.
        command: UpstreamCommand,
    },
}

impl FixtureMcpServer {
    /// The server name.
    pub fn name(&self) -> &str {
        match self {
            FixtureMcpServer::Inline(inline) => &inline.server.name,
            FixtureMcpServer::Command { name, .. } => name,
        }
    }
}

/// A host tool of the fixture.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct FixtureTool {
    /// The descriptor handed to Code Mode.
    pub spec: ToolSpec,
    /// What a call does.
    pub behavior: Behavior,
    /// Removed by the host's policy before Code Mode sees it (`"denied": true` or listed in `deny`).
    pub denied: bool,
}

/// A namespace of the fixture, registered for plugin `plugin`.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct FixtureNamespace {
    /// The plugin that owns the namespace (and its required tools).
    pub plugin: String,
    /// The registration.
    pub registration: NamespaceRegistration,
}

/// A loaded, validated fixture catalog.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct FixtureCatalog {
    /// Host tools (core, plugin, client), in file order.
    pub tools: Vec<FixtureTool>,
    /// MCP servers, in file order.
    pub mcp_servers: Vec<FixtureMcpServer>,
    /// Namespaces.
    pub namespaces: Vec<FixtureNamespace>,
    /// Names or catalog ids removed by policy (`deny`), in file order.
    pub deny: Vec<String>,
    /// The `<source>` of host tool ids (`<source>:<owner>:<tool>`), chosen by the embedder, not
    /// the file. Default: `None`, the spec's `openclaw`. See [`FixtureCatalog::with_host_source`].
    pub host_source: Option<String>,
}

impl FixtureCatalog {
    /// Reads and validates a fixture catalog file.
    pub fn load(path: &Path) -> Result<FixtureCatalog, CliError> {
        let text = std::fs::read_to_string(path)
            .map_err(|source| CliError::Read { path: path.display().to_string(), source })?;
        let base = path.parent().unwrap_or(Path::new("."));
        FixtureCatalog::from_str_in(&text, &path.display().to_string(), base)
    }

    /// Parses and validates fixture text; `file` names it in errors, `base` resolves relative `cwd`s.
    pub fn from_str_in(text: &str, file: &str, base: &Path) -> Result<FixtureCatalog, CliError> {
        let value: Value = serde_json::from_str(text).map_err(|e| CliError::Invalid {
            file: file.to_owned(),
            path: "$".to_owned(),
            message: format!("not valid JSON: {e}"),
        })?;
        FixtureCatalog::from_value(&value, base).map_err(|(path, message)| CliError::Invalid {
            file: file.to_owned(),
            path,
            message,
        })
    }

    /// Validates a fixture document; errors are `(json path, message)`.
    pub fn from_value(value: &Value, base: &Path) -> Result<FixtureCatalog, (String, String)> {
        let root = Obj::new(value, "$".into())?;
        root.only(&["$schema", "tools", "mcpServers", "namespaces", "deny"])?;
        let deny = match root.get("deny") {
            None => Vec::new(),
            Some(v) => string_array(v, &root.child("deny"))?,
        };
        let mut tools = Vec::new();
        if let Some(list) = root.get("tools") {
            let path = root.child("tools");
            let items =
                list.as_array().ok_or_else(|| (path.clone(), "must be an array of tools".to_owned()))?;
            for (i, item) in items.iter().enumerate() {
                tools.push(parse_tool(item, format!("{path}[{i}]"), &deny)?);
            }
        }
        let mut seen = BTreeMap::new();
        for (i, tool) in tools.iter().enumerate() {
            if let Some(first) = seen.insert(tool.spec.catalog_id(), i) {
                return Err((
                    format!("$.tools[{i}].name"),
                    format!(
                        "duplicate catalog id {:?} (also $.tools[{first}]); rename one tool or give it another owner",
                        tool.spec.catalog_id()
                    ),
                ));
            }
        }
        let mut mcp_servers = Vec::new();
        if let Some(map) = root.get("mcpServers") {
            let path = root.child("mcpServers");
            let map = map.as_object().ok_or_else(|| {
                (path.clone(), "must be an object mapping server names to servers".to_owned())
            })?;
            for (name, server) in map {
                let spath = format!("{path}{}", key_path(name));
                if name.is_empty() || name.contains(':') {
                    return Err((spath, "server names must be non-empty and contain no ':'".to_owned()));
                }
                mcp_servers.push(parse_server(name, server, spath, base)?);
            }
        }
        let mut namespaces = Vec::new();
        if let Some(list) = root.get("namespaces") {
            let path = root.child("namespaces");
            let items =
                list.as_array().ok_or_else(|| (path.clone(), "must be an array of namespaces".to_owned()))?;
            for (i, item) in items.iter().enumerate() {
                namespaces.push(parse_namespace(item, format!("{path}[{i}]"))?);
            }
        }
        Ok(FixtureCatalog { tools, mcp_servers, namespaces, deny, host_source: None })
    }

    /// The same catalog with host tool ids under `name` (`host:core:message`); checked when the
    /// engine is built.
    pub fn with_host_source(mut self, name: impl Into<String>) -> FixtureCatalog {
        self.host_source = Some(name.into());
        self
    }

    /// The `<source>` of host tool ids: [`FixtureCatalog::host_source`] or `openclaw`.
    pub fn host_source_name(&self) -> &str {
        self.host_source.as_deref().unwrap_or(codemode::DEFAULT_HOST_SOURCE)
    }

    /// The catalog id Code Mode gives `spec` with this catalog's host source.
    pub fn id_of(&self, spec: &ToolSpec) -> String {
        spec.catalog_id_in(self.host_source_name())
    }

    /// The tools Code Mode sees: host tools minus denied ones, then inline MCP tools minus denied
    /// ones. Tools of command-started servers are added when those servers are connected.
    pub fn effective_tools(&self) -> Vec<ToolSpec> {
        let mut out: Vec<ToolSpec> =
            self.tools.iter().filter(|t| !self.is_denied(&t.spec)).map(|t| t.spec.clone()).collect();
        for server in &self.mcp_servers {
            if let FixtureMcpServer::Inline(inline) = server {
                out.extend(inline.server.tool_specs().into_iter().filter(|spec| !self.is_denied(spec)));
            }
        }
        out
    }

    /// Whether policy removes this tool (per-tool `denied`, or its name or catalog id in `deny`;
    /// the id may be written with the spec's `openclaw` or with the chosen host source).
    pub fn is_denied(&self, spec: &ToolSpec) -> bool {
        let id = spec.catalog_id();
        let named = self.id_of(spec);
        if self.deny.iter().any(|d| *d == spec.name || *d == id || *d == named) {
            return true;
        }
        self.tools.iter().any(|t| t.denied && t.spec.catalog_id() == id)
    }

    /// The `deny` entries that match none of the fixture's tools, its inline servers' tools, nor
    /// `others` (by name or catalog id), in file order.
    pub fn unmatched_deny(&self, others: &[ToolSpec]) -> Vec<String> {
        let mut specs: Vec<ToolSpec> = self.tools.iter().map(|t| t.spec.clone()).collect();
        for server in &self.mcp_servers {
            if let FixtureMcpServer::Inline(inline) = server {
                specs.extend(inline.server.tool_specs());
            }
        }
        specs.extend(others.iter().cloned());
        self.deny
            .iter()
            .filter(|d| !specs.iter().any(|s| s.name == **d || s.catalog_id() == **d))
            .cloned()
            .collect()
    }

    /// The inline MCP servers' metadata (visible ones: denied tools removed).
    pub fn inline_mcp_servers(&self) -> Vec<codemode::McpServer> {
        self.mcp_servers
            .iter()
            .filter_map(|s| match s {
                FixtureMcpServer::Inline(inline) => {
                    let mut server = inline.server.clone();
                    server.tools.retain(|tool| !self.is_denied(&tool.to_tool_spec(&server.name)));
                    Some(server)
                }
                FixtureMcpServer::Command { .. } => None,
            })
            .collect()
    }

    /// The command-started MCP servers, `(name, command)`.
    pub fn upstream_servers(&self) -> Vec<(String, UpstreamCommand)> {
        self.mcp_servers
            .iter()
            .filter_map(|s| match s {
                FixtureMcpServer::Command { name, command } => Some((name.clone(), command.clone())),
                FixtureMcpServer::Inline(_) => None,
            })
            .collect()
    }
}

/// A JSON object with its path, for validation with good errors.
struct Obj<'a> {
    map: &'a Map<String, Value>,
    path: String,
}

type Invalid = (String, String);

impl<'a> Obj<'a> {
    fn new(value: &'a Value, path: String) -> Result<Obj<'a>, Invalid> {
        match value.as_object() {
            Some(map) => Ok(Obj { map, path }),
            None => Err((path, format!("must be an object, found {}", kind_of(value)))),
        }
    }

    fn child(&self, key: &str) -> String {
        format!("{}{}", self.path, key_path(key))
    }

    fn get(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key)
    }

    fn only(&self, allowed: &[&str]) -> Result<(), Invalid> {
        match self.map.keys().find(|k| !allowed.contains(&k.as_str())) {
            Some(key) => Err((self.child(key), codemode_core::suggest::unknown_key(key, allowed))),
            None => Ok(()),
        }
    }

    fn string(&self, key: &str) -> Result<Option<String>, Invalid> {
        match self.map.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err((self.child(key), format!("must be a string, found {}", kind_of(other)))),
        }
    }

    fn required_string(&self, key: &str) -> Result<String, Invalid> {
        match self.string(key)? {
            Some(s) if !s.is_empty() => Ok(s),
            Some(_) => Err((self.child(key), "must not be empty".to_owned())),
            None => Err((self.child(key), format!("missing required field {key:?}"))),
        }
    }

    fn bool(&self, key: &str) -> Result<bool, Invalid> {
        match self.map.get(key) {
            None => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(other) => Err((self.child(key), format!("must be true or false, found {}", kind_of(other)))),
        }
    }

    fn schema(&self, key: &str) -> Result<Option<Value>, Invalid> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v @ Value::Object(_)) | Some(v @ Value::Bool(_)) => Ok(Some(v.clone())),
            Some(other) => {
                Err((self.child(key), format!("must be a JSON Schema object, found {}", kind_of(other))))
            }
        }
    }
}

fn key_path(key: &str) -> String {
    let plain = !key.is_empty()
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
        && !key.starts_with(|c: char| c.is_ascii_digit());
    if plain { format!(".{key}") } else { format!("[{}]", Value::from(key)) }
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn string_array(value: &Value, path: &str) -> Result<Vec<String>, Invalid> {
    let items =
        value.as_array().ok_or_else(|| (path.to_owned(), "must be an array of strings".to_owned()))?;
    items
        .iter()
        .enumerate()
        .map(|(i, v)| {
            v.as_str()
                .map(str::to_owned)
                .ok_or_else(|| (format!("{path}[{i}]"), "must be a string".to_owned()))
        })
        .collect()
}

const ORIGINS: &str = "core, bundledPlugin, externalPlugin, client";

fn parse_tool(value: &Value, path: String, deny: &[String]) -> Result<FixtureTool, Invalid> {
    let obj = Obj::new(value, path)?;
    obj.only(&[
        "name",
        "label",
        "description",
        "parameters",
        "outputSchema",
        "origin",
        "owner",
        "directOnly",
        "annotations",
        "behavior",
        "denied",
    ])?;
    let name = obj.required_string("name")?;
    if name.contains(':') {
        return Err((obj.child("name"), "tool names must not contain ':'".to_owned()));
    }
    let origin = match obj.string("origin")?.as_deref() {
        None | Some("core") => ToolOrigin::Core,
        Some("bundledPlugin") => ToolOrigin::BundledPlugin,
        Some("externalPlugin") => ToolOrigin::ExternalPlugin,
        Some("client") => ToolOrigin::Client,
        Some("mcp") => {
            return Err((
                obj.child("origin"),
                "MCP tools belong under \"mcpServers\": {\"<server>\": {\"tools\": [...]}}".to_owned(),
            ));
        }
        Some(other) => {
            return Err((
                obj.child("origin"),
                format!("unknown origin {other:?}; expected one of {ORIGINS}"),
            ));
        }
    };
    let owner = match (obj.string("owner")?, origin) {
        (Some(owner), _) if !owner.is_empty() && !owner.contains(':') => owner,
        (Some(_), _) => return Err((obj.child("owner"), "must be non-empty and contain no ':'".to_owned())),
        (None, ToolOrigin::Core) => "core".to_owned(),
        (None, _) => {
            return Err((
                obj.child("owner"),
                "required for plugin and client tools (the plugin or app id)".to_owned(),
            ));
        }
    };
    let mut spec = ToolSpec::new(name.clone(), origin, owner);
    if let Some(label) = obj.string("label")? {
        spec = spec.label(label);
    }
    spec = spec.description(obj.string("description")?.unwrap_or_default());
    if let Some(parameters) = obj.schema("parameters")? {
        spec = spec.parameters(parameters);
    }
    if let Some(output) = obj.schema("outputSchema")? {
        spec = spec.output_schema(output);
    }
    if obj.bool("directOnly")? {
        spec = spec.direct_only();
    }
    if let Some(annotations) = obj.get("annotations") {
        let parsed: ToolAnnotations = serde_json::from_value(annotations.clone()).map_err(|e| {
            (
                obj.child("annotations"),
                format!("must be MCP-style annotations ({{\"readOnlyHint\": true, ...}}): {e}"),
            )
        })?;
        spec = spec.annotations(parsed);
    }
    let behavior = match obj.get("behavior") {
        None => Behavior::Unscripted,
        Some(b) => parse_behavior(b, obj.child("behavior"), false)?,
    };
    let id = spec.catalog_id();
    let denied = obj.bool("denied")? || deny.iter().any(|d| *d == name || *d == id);
    Ok(FixtureTool { spec, behavior, denied })
}

const BEHAVIORS: &str = "static, echo, error, delay, manual, sequence";

/// `mcp`: the behavior answers an MCP tool (only those may script `isError: true`).
fn parse_behavior(value: &Value, path: String, mcp: bool) -> Result<Behavior, Invalid> {
    if let Value::String(kind) = value {
        return match kind.as_str() {
            "echo" => Ok(Behavior::Echo),
            "manual" => Ok(Behavior::Manual),
            other => Err((
                path,
                format!(
                    "the string shorthand is only \"echo\" or \"manual\" (found {other:?}); use an object such as {{\"kind\": \"static\", \"details\": ...}}"
                ),
            )),
        };
    }
    let obj = Obj::new(value, path)?;
    let kind = obj.required_string("kind")?;
    match kind.as_str() {
        "static" => {
            obj.only(&["kind", "details", "content", "isError"])?;
            let is_error = obj.bool("isError")?;
            if is_error && !mcp {
                return Err((
                    obj.child("isError"),
                    "isError is for MCP tools (under \"mcpServers\"); a host tool fails with {\"kind\": \"error\", \"message\": ...}"
                        .to_owned(),
                ));
            }
            let details = match obj.get("details") {
                Some(details) => details.clone(),
                None if is_error => Value::Null,
                None => {
                    return Err((obj.child("details"), "missing required field \"details\"".to_owned()));
                }
            };
            let content = match obj.get("content") {
                None => None,
                Some(c @ Value::Array(_)) => Some(c.clone()),
                Some(other) => {
                    return Err((
                        obj.child("content"),
                        format!("must be an array of content blocks, found {}", kind_of(other)),
                    ));
                }
            };
            if is_error && content.is_none() {
                return Err((
                    obj.child("content"),
                    "an isError result needs \"content\", e.g. [{\"type\": \"text\", \"text\": \"what failed\"}]"
                        .to_owned(),
                ));
            }
            Ok(Behavior::Static { details, content, is_error })
        }
        "echo" => {
            obj.only(&["kind"])?;
            Ok(Behavior::Echo)
        }
        "manual" => {
            obj.only(&["kind"])?;
            Ok(Behavior::Manual)
        }
        "error" => {
            obj.only(&["kind", "message", "code"])?;
            Ok(Behavior::Error { message: obj.required_string("message")?, code: obj.string("code")? })
        }
        "delay" => {
            obj.only(&["kind", "ms", "details"])?;
            let ms = match obj.get("ms") {
                Some(v) => v.as_u64().filter(|ms| *ms <= 3_600_000).ok_or_else(|| {
                    (
                        obj.child("ms"),
                        "must be a whole number of milliseconds between 0 and 3600000".to_owned(),
                    )
                })?,
                None => return Err((obj.child("ms"), "missing required field \"ms\"".to_owned())),
            };
            Ok(Behavior::Delay { ms, details: obj.get("details").cloned() })
        }
        "sequence" => {
            obj.only(&["kind", "steps"])?;
            let spath = obj.child("steps");
            let steps = obj
                .get("steps")
                .and_then(Value::as_array)
                .filter(|s| !s.is_empty())
                .ok_or_else(|| (spath.clone(), "must be a non-empty array of behaviors".to_owned()))?;
            let steps = steps
                .iter()
                .enumerate()
                .map(|(i, s)| parse_behavior(s, format!("{spath}[{i}]"), mcp))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(Behavior::Sequence(steps))
        }
        other => Err((obj.child("kind"), format!("unknown behavior {other:?}; expected one of {BEHAVIORS}"))),
    }
}

fn parse_server(name: &str, value: &Value, path: String, base: &Path) -> Result<FixtureMcpServer, Invalid> {
    let obj = Obj::new(value, path)?;
    let kind = obj.string("type")?;
    if obj.get("url").is_some() && obj.get("command").is_some() {
        return Err((
            obj.child("url"),
            "give either command (a local server) or url (a remote one), not both".to_owned(),
        ));
    }
    if obj.get("url").is_some() && kind.as_deref() == Some("stdio") {
        return Err((obj.child("type"), "a \"stdio\" server has a command, not a url".to_owned()));
    }
    if obj.get("url").is_some()
        || matches!(kind.as_deref(), Some("http" | "sse" | "streamable-http" | "streamableHttp"))
    {
        return parse_remote(name, &obj, kind.as_deref());
    }
    if obj.get("command").is_some() {
        obj.only(&[
            "command",
            "args",
            "env",
            "cwd",
            "type",
            "startupTimeoutMs",
            "timeoutMs",
            "timeout",
            "disabled",
            "autoApprove",
            "alwaysAllow",
            "envFile",
            "inheritEnv",
        ])?;
        if let Some(kind) = obj.string("type")?
            && kind != "stdio"
        {
            return Err((
                obj.child("type"),
                format!("unknown server type {kind:?}; expected \"stdio\", \"http\" or \"sse\""),
            ));
        }
        let expand = |text: String, key: &str| interpolate(&text).map_err(|e| (obj.child(key), e));
        let command = expand(obj.required_string("command")?, "command")?;
        let args = match obj.get("args") {
            None => Vec::new(),
            Some(v) => string_array(v, &obj.child("args"))?
                .into_iter()
                .enumerate()
                .map(|(i, a)| interpolate(&a).map_err(|e| (format!("{}[{i}]", obj.child("args")), e)))
                .collect::<Result<_, _>>()?,
        };
        let mut env = BTreeMap::new();
        if let Some(v) = obj.get("env") {
            let epath = obj.child("env");
            let map = v
                .as_object()
                .ok_or_else(|| (epath.clone(), "must be an object of string values".to_owned()))?;
            for (k, v) in map {
                let s = v
                    .as_str()
                    .ok_or_else(|| (format!("{epath}{}", key_path(k)), "must be a string".to_owned()))?;
                let s = interpolate(s).map_err(|e| (format!("{epath}{}", key_path(k)), e))?;
                env.insert(k.clone(), s);
            }
        }
        if let Some(file) = obj.string("envFile")? {
            let file = base.join(interpolate(&file).map_err(|e| (obj.child("envFile"), e))?);
            let from_file = read_env_file(&file).map_err(|e| (obj.child("envFile"), e))?;
            for (k, v) in from_file {
                // The entry's own `env` wins over the file.
                env.entry(k).or_insert(v);
            }
        }
        let cwd = match obj.string("cwd")? {
            Some(c) => Some(base.join(expand(c, "cwd")?)),
            None => None,
        };
        let millis = |key: &str| match obj.get(key) {
            None => Ok(None),
            Some(v) => v.as_u64().filter(|ms| *ms >= 1).map(Some).ok_or_else(|| {
                (obj.child(key), "must be a positive whole number of milliseconds".to_owned())
            }),
        };
        let timeout_ms = millis("timeoutMs")?;
        let mut warnings = Vec::new();
        for (key, why) in [
            ("timeout", "is not used (its unit differs between clients); set timeoutMs in milliseconds"),
            ("autoApprove", "is not used: the gateway does not ask for approval"),
            ("alwaysAllow", "is not used: the gateway does not ask for approval"),
        ] {
            if obj.get(key).is_some() {
                warnings.push(format!("{} {why}", obj.child(key)));
            }
        }
        let disabled = obj.bool("disabled")?;
        let inherit_env = obj.bool("inheritEnv")?;
        return Ok(FixtureMcpServer::Command {
            name: name.to_owned(),
            command: UpstreamCommand {
                command,
                transport: UpstreamTransport::Stdio,
                url: None,
                headers: BTreeMap::new(),
                args,
                env,
                cwd,
                startup_timeout_ms: millis("startupTimeoutMs")?,
                timeout_ms,
                disabled,
                inherit_env,
                warnings,
            },
        });
    }
    obj.only(&["title", "instructions", "tools", "behavior", "resources", "prompts"])?;
    let default_behavior = match obj.get("behavior") {
        None => Behavior::Unscripted,
        Some(b) => parse_behavior(b, obj.child("behavior"), true)?,
    };
    let mut server = codemode::McpServer::new(name, Vec::new());
    if let Some(title) = obj.string("title")? {
        server = server.with_title(title);
    }
    if let Some(instructions) = obj.string("instructions")? {
        server = server.with_instructions(instructions);
    }
    let mut behaviors = BTreeMap::new();
    let tpath = obj.child("tools");
    let tools = match obj.get("tools") {
        Some(Value::Array(items)) => items,
        Some(other) => {
            return Err((tpath, format!("must be an array of MCP tools, found {}", kind_of(other))));
        }
        None => {
            return Err((
                tpath,
                "missing: an inline server needs \"tools\" (or give \"command\" to start a real server)"
                    .to_owned(),
            ));
        }
    };
    for (i, item) in tools.iter().enumerate() {
        let ipath = format!("{tpath}[{i}]");
        let tool = Obj::new(item, ipath)?;
        // Other fields of a real `tools/list` entry (`_meta`, `icons`, `execution`, ...) are accepted
        // and ignored, so a captured listing can be pasted as is.
        let tool_name = tool.required_string("name")?;
        tool.string("title")?;
        tool.string("description")?;
        tool.schema("inputSchema")?;
        tool.schema("outputSchema")?;
        let behavior = match tool.get("behavior") {
            None => default_behavior.clone(),
            Some(b) => parse_behavior(b, tool.child("behavior"), true)?,
        };
        if behaviors.insert(tool_name.clone(), behavior).is_some() {
            return Err((
                tool.child("name"),
                format!("duplicate tool name {tool_name:?} on server {name:?}"),
            ));
        }
        let mut raw = item.clone();
        if let Some(map) = raw.as_object_mut() {
            map.remove("behavior");
        }
        if let Some(parsed) = codemode::McpTool::from_value_lossy(&raw) {
            server.tools.push(parsed);
        }
    }
    let mut resources = Vec::new();
    if let Some(v) = obj.get("resources") {
        let rpath = obj.child("resources");
        let items = v.as_array().ok_or_else(|| (rpath.clone(), "must be an array".to_owned()))?;
        for (i, item) in items.iter().enumerate() {
            let r = Obj::new(item, format!("{rpath}[{i}]"))?;
            r.only(&["uri", "text", "mimeType"])?;
            resources.push(FixtureResource {
                uri: r.required_string("uri")?,
                text: r.string("text")?.unwrap_or_default(),
                mime_type: r.string("mimeType")?,
            });
        }
        server = server.with_resources();
    }
    let mut prompts = Vec::new();
    if let Some(v) = obj.get("prompts") {
        let ppath = obj.child("prompts");
        let items = v.as_array().ok_or_else(|| (ppath.clone(), "must be an array".to_owned()))?;
        for (i, item) in items.iter().enumerate() {
            let p = Obj::new(item, format!("{ppath}[{i}]"))?;
            p.only(&["name", "description", "messages"])?;
            let messages = match p.get("messages") {
                Some(m @ Value::Array(_)) => m.clone(),
                _ => return Err((p.child("messages"), "must be an array of prompt messages".to_owned())),
            };
            prompts.push(FixturePrompt {
                name: p.required_string("name")?,
                description: p.string("description")?,
                messages,
            });
        }
        server = server.with_prompts();
    }
    Ok(FixtureMcpServer::Inline(InlineMcpServer { server, behaviors, resources, prompts }))
}

fn parse_namespace(value: &Value, path: String) -> Result<FixtureNamespace, Invalid> {
    let obj = Obj::new(value, path)?;
    obj.only(&["id", "globalName", "description", "plugin", "requiredToolNames", "prompt", "scope"])?;
    let id = obj.required_string("id")?;
    let global_name = obj.required_string("globalName")?;
    let description = obj.string("description")?.unwrap_or_default();
    let plugin = obj.required_string("plugin")?;
    let required = match obj.get("requiredToolNames") {
        None => Vec::new(),
        Some(v) => string_array(v, &obj.child("requiredToolNames"))?,
    };
    let scope_json = obj.get("scope").cloned().unwrap_or_else(|| Value::Object(Map::new()));
    let scope_path = obj.child("scope");
    // Validate markers once now so a bad marker is reported at load time, not at exec time.
    let scope = to_scope(&scope_json, &scope_path)?;
    let mut registration =
        NamespaceRegistration::new(id, global_name, description, required, move |_ctx| scope.clone());
    if let Some(prompt) = obj.string("prompt")? {
        registration = registration.prompt(prompt);
    }
    Ok(FixtureNamespace { plugin, registration })
}

/// Converts fixture scope JSON into a [`ScopeValue`]. A tool marker is an object with `"$tool"`:
/// - `{"$tool": "name"}`: the first argument is the input (`{}` when missing);
/// - `{"$tool": "name", "arg": "key"}`: the input is `{ key: <first argument> }`;
/// - `{"$tool": "name", "args": ["a", "b"]}`: positional, the input is `{ a: <arg 0>, b: <arg 1> }`
///   (arguments not passed are left out);
/// - `{"$tool": "name", "args": "all"}`: the input is `{ args: [<every argument>] }`.
fn to_scope(value: &Value, path: &str) -> Result<ScopeValue, Invalid> {
    match value {
        Value::Object(map) if map.contains_key("$tool") => {
            let tool = map
                .get("$tool")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .ok_or_else(|| (format!("{path}.$tool"), "must be a tool name".to_owned()))?
                .to_owned();
            if let Some(key) = map.keys().find(|k| !matches!(k.as_str(), "$tool" | "arg" | "args")) {
                return Err((
                    format!("{path}{}", key_path(key)),
                    "a tool marker allows only \"$tool\" and one of \"arg\" or \"args\"".to_owned(),
                ));
            }
            match (map.get("arg"), map.get("args")) {
                (None, None) => Ok(namespace_tool(tool)),
                (Some(_), Some(_)) => Err((
                    format!("{path}.args"),
                    "give either \"arg\" (first argument under one key) or \"args\" (positional), not both"
                        .to_owned(),
                )),
                (Some(Value::String(key)), None) => {
                    let key = key.clone();
                    Ok(namespace_tool_with(tool, move |args: &[Value]| {
                        let mut input = Map::new();
                        input.insert(key.clone(), args.first().cloned().unwrap_or(Value::Null));
                        Value::Object(input)
                    }))
                }
                (Some(_), None) => Err((format!("{path}.arg"), "must be a property name".to_owned())),
                (None, Some(Value::String(all))) if all == "all" => {
                    Ok(namespace_tool_with(tool, |args: &[Value]| {
                        let mut input = Map::new();
                        input.insert("args".to_owned(), Value::Array(args.to_vec()));
                        Value::Object(input)
                    }))
                }
                (None, Some(Value::Array(names))) => {
                    let apath = format!("{path}.args");
                    let mut keys: Vec<String> = Vec::with_capacity(names.len());
                    for (i, name) in names.iter().enumerate() {
                        match name.as_str() {
                            Some(k) if !k.is_empty() && !keys.iter().any(|seen| seen == k) => {
                                keys.push(k.to_owned())
                            }
                            Some(k) if !k.is_empty() => {
                                return Err((
                                    format!("{apath}[{i}]"),
                                    format!("property name {k:?} appears twice"),
                                ));
                            }
                            _ => {
                                return Err((
                                    format!("{apath}[{i}]"),
                                    "must be a non-empty property name".to_owned(),
                                ));
                            }
                        }
                    }
                    if keys.is_empty() {
                        return Err((
                            apath,
                            "must name at least one property, e.g. [\"number\", \"patch\"]".to_owned(),
                        ));
                    }
                    Ok(namespace_tool_with(tool, move |args: &[Value]| {
                        let mut input = Map::new();
                        for (key, arg) in keys.iter().zip(args) {
                            input.insert(key.clone(), arg.clone());
                        }
                        Value::Object(input)
                    }))
                }
                (None, Some(_)) => Err((
                    format!("{path}.args"),
                    "must be a list of property names (positional, e.g. [\"number\", \"patch\"]) or \"all\""
                        .to_owned(),
                )),
            }
        }
        Value::Object(map) => Ok(ScopeValue::Object(
            map.iter()
                .map(|(k, v)| Ok((k.clone(), to_scope(v, &format!("{path}{}", key_path(k)))?)))
                .collect::<Result<Vec<_>, Invalid>>()?,
        )),
        Value::Array(items) => Ok(ScopeValue::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, v)| to_scope(v, &format!("{path}[{i}]")))
                .collect::<Result<_, _>>()?,
        )),
        other => Ok(ScopeValue::Data(other.clone())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> (String, String) {
        let value: Value = serde_json::from_str(text).unwrap();
        FixtureCatalog::from_value(&value, Path::new(".")).unwrap_err()
    }

    #[test]
    fn errors_name_the_json_path() {
        assert_eq!(
            err(r#"{"tools":[{"name":"a"},{"name":"b","behavior":{"kind":"sleep"}}]}"#).0,
            "$.tools[1].behavior.kind"
        );
        assert_eq!(
            err(r#"{"tools":[{"name":"a","behavior":{"kind":"delay"}}]}"#).0,
            "$.tools[0].behavior.ms"
        );
        assert_eq!(
            err(r#"{"mcpServers":{"my server":{"tools":[{"name":1}]}}}"#).0,
            "$.mcpServers[\"my server\"].tools[0].name"
        );
        assert_eq!(err(r#"{"tool":[]}"#).0, "$.tool");
        assert_eq!(
            err(r#"{"tools":[{"name":"a","behavior":{"kind":"sequence","steps":[{"kind":"error"}]}}]}"#).0,
            "$.tools[0].behavior.steps[0].message"
        );
        assert_eq!(
            err(r#"{"namespaces":[{"id":"x","globalName":"X","plugin":"p","scope":{"a":{"$tool":""}}}]}"#).0,
            "$.namespaces[0].scope.a.$tool"
        );
        assert_eq!(err(r#"{"tools":[{"name":"a"},{"name":"a"}]}"#).0, "$.tools[1].name");
    }

    #[test]
    fn deny_removes_tools_from_the_effective_list() {
        let value = serde_json::json!({
            "deny": ["b", "mcp:srv:y"],
            "tools": [{"name":"a"},{"name":"b"},{"name":"c","denied":true}],
            "mcpServers": {"srv": {"tools": [{"name":"x"},{"name":"y"}]}}
        });
        let catalog = FixtureCatalog::from_value(&value, Path::new(".")).unwrap();
        let ids: Vec<String> = catalog.effective_tools().iter().map(ToolSpec::catalog_id).collect();
        assert_eq!(ids, ["openclaw:core:a", "mcp:srv:x"]);
        assert_eq!(catalog.inline_mcp_servers()[0].tools.len(), 1);
    }
}
