//! `tools.codeMode`: parse, default and clamp.
//!
//! The accepted JSON shape is exactly the spec's: `true` (enabled with defaults), `false` (disabled), or
//! an object. Only `enabled: true` enables Code Mode; every other field only tunes it. Numbers outside
//! the table's range are clamped to the nearest bound; `searchDefaultLimit` is then clamped to
//! `[1, maxSearchLimit]`. Everything else that does not fit (an unknown key, a wrong type, a `runtime`
//! other than `"quickjs-wasi"`, a `mode` other than `"only"`, an empty or unknown `languages` entry) is a
//! [`ConfigError`] naming the JSON path and what is allowed.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::validate::{Invalid, Object, expected, index, unknown_value};

/// The JSON path every error is reported under.
const ROOT: &str = "tools.codeMode";

/// A language a cell can be written in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    /// Plain JavaScript, evaluated as written.
    #[default]
    JavaScript,
    /// TypeScript, type-stripped to JavaScript before evaluation.
    TypeScript,
}

impl Language {
    /// Both languages, in the order the spec lists them.
    pub const ALL: [Language; 2] = [Language::JavaScript, Language::TypeScript];

    /// The wire name (`"javascript"` / `"typescript"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Language::JavaScript => "javascript",
            Language::TypeScript => "typescript",
        }
    }

    /// The file name positions in a cell refer to: `user.js` or `user.ts`.
    pub fn file_name(self) -> &'static str {
        match self {
            Language::JavaScript => "user.js",
            Language::TypeScript => "user.ts",
        }
    }

    /// Parses a wire name; anything else is `None`.
    pub fn parse(name: &str) -> Option<Language> {
        Language::ALL.into_iter().find(|l| l.as_str() == name)
    }
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An inclusive numeric range from the spec's configuration table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    /// Smallest accepted value.
    pub min: u64,
    /// Largest accepted value.
    pub max: u64,
}

impl Bounds {
    const fn new(min: u64, max: u64) -> Bounds {
        Bounds { min, max }
    }
}

/// Defaults and ranges, exactly as the spec's table.
pub mod limits {
    use super::Bounds;

    /// `timeoutMs`: default 10,000; 100-60,000.
    pub const TIMEOUT_MS: (u64, Bounds) = (10_000, Bounds::new(100, 60_000));
    /// `memoryLimitBytes`: default 64 MiB; 1 MiB-1 GiB.
    pub const MEMORY_LIMIT_BYTES: (u64, Bounds) = (67_108_864, Bounds::new(1_048_576, 1_073_741_824));
    /// `maxOutputBytes`: default 64 KiB; 1 KiB-10 MiB.
    pub const MAX_OUTPUT_BYTES: (u64, Bounds) = (65_536, Bounds::new(1_024, 10_485_760));
    /// `maxSnapshotBytes`: default 10 MiB; 1 KiB-256 MiB.
    pub const MAX_SNAPSHOT_BYTES: (u64, Bounds) = (10_485_760, Bounds::new(1_024, 268_435_456));
    /// `maxPendingToolCalls`: default 16; 1-128.
    pub const MAX_PENDING_TOOL_CALLS: (u64, Bounds) = (16, Bounds::new(1, 128));
    /// `snapshotTtlSeconds`: default 900; 1-86,400.
    pub const SNAPSHOT_TTL_SECONDS: (u64, Bounds) = (900, Bounds::new(1, 86_400));
    /// `maxSearchLimit`: default 50; 1-50.
    pub const MAX_SEARCH_LIMIT: (u64, Bounds) = (50, Bounds::new(1, 50));
    /// `searchDefaultLimit`: default 8; clamped to `[1, maxSearchLimit]`.
    pub const SEARCH_DEFAULT_LIMIT: u64 = 8;
}

/// The parsed, clamped `tools.codeMode` configuration.
///
/// The fields are private: a value comes from [`CodeModeConfig::from_json`] (the spec's JSON shape),
/// [`Default`] / [`CodeModeConfig::enabled`], and the `with_*` setters, each of which clamps to the
/// spec's range exactly as the parser does (the parser is built on them), so no configuration
/// outside the table's ranges can exist.
///
/// ```
/// use codemode_core::CodeModeConfig;
///
/// let config = CodeModeConfig::enabled().with_timeout_ms(5).with_max_search_limit(10);
/// assert_eq!(config.timeout_ms(), 100); // clamped to the table's lower bound
/// assert_eq!(config.search_default_limit(), 8);
/// assert_eq!(config.with_max_search_limit(3).search_default_limit(), 3);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodeModeConfig {
    enabled: bool,
    languages: Vec<Language>,
    timeout_ms: u64,
    memory_limit_bytes: u64,
    max_output_bytes: u64,
    max_snapshot_bytes: u64,
    max_pending_tool_calls: u32,
    snapshot_ttl_seconds: u64,
    search_default_limit: u32,
    max_search_limit: u32,
}

impl Default for CodeModeConfig {
    /// Disabled, every other field at the table's default.
    fn default() -> Self {
        CodeModeConfig {
            enabled: false,
            languages: Language::ALL.to_vec(),
            timeout_ms: limits::TIMEOUT_MS.0,
            memory_limit_bytes: limits::MEMORY_LIMIT_BYTES.0,
            max_output_bytes: limits::MAX_OUTPUT_BYTES.0,
            max_snapshot_bytes: limits::MAX_SNAPSHOT_BYTES.0,
            max_pending_tool_calls: limits::MAX_PENDING_TOOL_CALLS.0 as u32,
            snapshot_ttl_seconds: limits::SNAPSHOT_TTL_SECONDS.0,
            search_default_limit: limits::SEARCH_DEFAULT_LIMIT as u32,
            max_search_limit: limits::MAX_SEARCH_LIMIT.0 as u32,
        }
    }
}

/// `value` clamped into `bounds` (the one clamp every numeric field goes through).
fn clamp(value: u64, (_, bounds): (u64, Bounds)) -> u64 {
    value.clamp(bounds.min, bounds.max)
}

/// `value` clamped into `bounds`, as a `u32` (every `u32` field's bounds fit in one).
fn clamp_u32(value: u32, limit: (u64, Bounds)) -> u32 {
    clamp(u64::from(value), limit) as u32
}

impl CodeModeConfig {
    /// The activation gate. Default `false`; only `enabled: true` (or the `true` shorthand) enables.
    pub fn is_enabled(&self) -> bool {
        self.enabled
    }

    /// Languages `exec` accepts, deduplicated, in spec order. Default: both.
    pub fn languages(&self) -> &[Language] {
        &self.languages
    }

    /// Wall-clock budget of one `exec`/`wait` call, in milliseconds: how long it waits for nested
    /// calls, and how long the guest runs (waiting is not charged to the guest). Default 10,000;
    /// 100-60,000.
    pub fn timeout_ms(&self) -> u64 {
        self.timeout_ms
    }

    /// Guest linear-memory cap. Default 64 MiB; 1 MiB-1 GiB.
    pub fn memory_limit_bytes(&self) -> u64 {
        self.memory_limit_bytes
    }

    /// Output budget of a run, cumulative across waits. Default 64 KiB; 1 KiB-10 MiB.
    pub fn max_output_bytes(&self) -> u64 {
        self.max_output_bytes
    }

    /// Stored-snapshot budget per suspended run. Default 10 MiB; 1 KiB-256 MiB.
    pub fn max_snapshot_bytes(&self) -> u64 {
        self.max_snapshot_bytes
    }

    /// Nested calls in flight per run. Default 16; 1-128.
    pub fn max_pending_tool_calls(&self) -> u32 {
        self.max_pending_tool_calls
    }

    /// How long a suspended run may wait for `wait`, in seconds. Default 900; 1-86,400.
    pub fn snapshot_ttl_seconds(&self) -> u64 {
        self.snapshot_ttl_seconds
    }

    /// `tools.search` limit when the guest gives none. Default 8, never above
    /// [`max_search_limit`](CodeModeConfig::max_search_limit).
    pub fn search_default_limit(&self) -> u32 {
        self.search_default_limit
    }

    /// Largest `tools.search` limit. Default 50; 1-50.
    pub fn max_search_limit(&self) -> u32 {
        self.max_search_limit
    }

    /// Sets the activation gate.
    pub fn with_enabled(mut self, enabled: bool) -> CodeModeConfig {
        self.enabled = enabled;
        self
    }

    /// Sets the accepted languages (deduplicated, in spec order). An empty list is refused, as
    /// the parser refuses `languages: []`.
    pub fn with_languages(
        mut self,
        languages: impl IntoIterator<Item = Language>,
    ) -> Result<CodeModeConfig, ConfigError> {
        let mut list: Vec<Language> = languages.into_iter().collect();
        list.sort();
        list.dedup();
        if list.is_empty() {
            return Err(ConfigError::new(format!("{ROOT}.languages"), NO_LANGUAGE));
        }
        self.languages = list;
        Ok(self)
    }

    /// Sets `timeoutMs`, clamped to 100-60,000.
    pub fn with_timeout_ms(mut self, ms: u64) -> CodeModeConfig {
        self.timeout_ms = clamp(ms, limits::TIMEOUT_MS);
        self
    }

    /// Sets `memoryLimitBytes`, clamped to 1 MiB-1 GiB.
    pub fn with_memory_limit_bytes(mut self, bytes: u64) -> CodeModeConfig {
        self.memory_limit_bytes = clamp(bytes, limits::MEMORY_LIMIT_BYTES);
        self
    }

    /// Sets `maxOutputBytes`, clamped to 1 KiB-10 MiB.
    pub fn with_max_output_bytes(mut self, bytes: u64) -> CodeModeConfig {
        self.max_output_bytes = clamp(bytes, limits::MAX_OUTPUT_BYTES);
        self
    }

    /// Sets `maxSnapshotBytes`, clamped to 1 KiB-256 MiB.
    pub fn with_max_snapshot_bytes(mut self, bytes: u64) -> CodeModeConfig {
        self.max_snapshot_bytes = clamp(bytes, limits::MAX_SNAPSHOT_BYTES);
        self
    }

    /// Sets `maxPendingToolCalls`, clamped to 1-128.
    pub fn with_max_pending_tool_calls(mut self, calls: u32) -> CodeModeConfig {
        self.max_pending_tool_calls = clamp_u32(calls, limits::MAX_PENDING_TOOL_CALLS);
        self
    }

    /// Sets `snapshotTtlSeconds`, clamped to 1-86,400.
    pub fn with_snapshot_ttl_seconds(mut self, seconds: u64) -> CodeModeConfig {
        self.snapshot_ttl_seconds = clamp(seconds, limits::SNAPSHOT_TTL_SECONDS);
        self
    }

    /// Sets `maxSearchLimit`, clamped to 1-50; the search default is lowered to it if it was
    /// above (set this before [`with_search_default_limit`](CodeModeConfig::with_search_default_limit)).
    pub fn with_max_search_limit(mut self, limit: u32) -> CodeModeConfig {
        self.max_search_limit = clamp_u32(limit, limits::MAX_SEARCH_LIMIT);
        self.search_default_limit = self.search_default_limit.clamp(1, self.max_search_limit);
        self
    }

    /// Sets `searchDefaultLimit`, clamped to `[1, maxSearchLimit]`.
    pub fn with_search_default_limit(mut self, limit: u32) -> CodeModeConfig {
        self.search_default_limit = limit.clamp(1, self.max_search_limit);
        self
    }
}

/// A `tools.codeMode` value that cannot be accepted.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
#[non_exhaustive]
pub struct ConfigError {
    /// JSON path of the offending value, e.g. `tools.codeMode.languages[1]`.
    pub path: String,
    /// What was wrong and what is allowed.
    pub message: String,
}

impl ConfigError {
    fn new(path: impl Into<String>, message: impl Into<String>) -> ConfigError {
        ConfigError { path: path.into(), message: message.into() }
    }
}

/// Why an empty language list is refused.
const NO_LANGUAGE: &str = "must list at least one language (\"javascript\", \"typescript\"); to turn Code Mode off set enabled: false";

impl From<Invalid> for ConfigError {
    fn from(e: Invalid) -> ConfigError {
        ConfigError { path: e.path, message: e.message }
    }
}

const KEYS: &[&str] = &[
    "enabled",
    "runtime",
    "mode",
    "languages",
    "timeoutMs",
    "memoryLimitBytes",
    "maxOutputBytes",
    "maxSnapshotBytes",
    "maxPendingToolCalls",
    "snapshotTtlSeconds",
    "searchDefaultLimit",
    "maxSearchLimit",
];

impl CodeModeConfig {
    /// An enabled configuration with every other field at its default.
    pub fn enabled() -> CodeModeConfig {
        CodeModeConfig::default().with_enabled(true)
    }

    /// Parses the `tools.codeMode` value: `true`, `false`, or an object.
    pub fn from_json(value: &Value) -> Result<CodeModeConfig, ConfigError> {
        let object = match value {
            Value::Bool(enabled) => return Ok(CodeModeConfig::default().with_enabled(*enabled)),
            Value::Object(_) => Object::new(value, ROOT)?,
            other => return Err(ConfigError::new(ROOT, expected("true, false or an object", other))),
        };
        let mut config = CodeModeConfig::default();
        object.only(KEYS)?;
        config = config.with_enabled(object.bool("enabled")?);
        if let Some(v) = object.get("runtime") {
            expect_literal(v, &object.child("runtime"), "quickjs-wasi")?;
        }
        if let Some(v) = object.get("mode") {
            expect_literal(v, &object.child("mode"), "only")?;
        }
        if let Some(v) = object.get("languages") {
            config = config.with_languages(parse_languages(v, &object.child("languages"))?)?;
        }
        // Each number is read as an integer (saturating) and clamped by its setter: the setters are
        // the only clamp.
        let number = |key: &str, (default, bounds): (u64, Bounds)| -> Result<u64, ConfigError> {
            object.get(key).map_or(Ok(default), |v| read_integer(v, &object.child(key), bounds))
        };
        let small = |n: u64| u32::try_from(n).unwrap_or(u32::MAX);
        config = config
            .with_timeout_ms(number("timeoutMs", limits::TIMEOUT_MS)?)
            .with_memory_limit_bytes(number("memoryLimitBytes", limits::MEMORY_LIMIT_BYTES)?)
            .with_max_output_bytes(number("maxOutputBytes", limits::MAX_OUTPUT_BYTES)?)
            .with_max_snapshot_bytes(number("maxSnapshotBytes", limits::MAX_SNAPSHOT_BYTES)?)
            .with_max_pending_tool_calls(small(number(
                "maxPendingToolCalls",
                limits::MAX_PENDING_TOOL_CALLS,
            )?))
            .with_snapshot_ttl_seconds(number("snapshotTtlSeconds", limits::SNAPSHOT_TTL_SECONDS)?)
            .with_max_search_limit(small(number("maxSearchLimit", limits::MAX_SEARCH_LIMIT)?));
        let search_bounds = Bounds::new(1, u64::from(config.max_search_limit));
        let search_default =
            object.get("searchDefaultLimit").map_or(Ok(limits::SEARCH_DEFAULT_LIMIT), |v| {
                read_integer(v, &object.child("searchDefaultLimit"), search_bounds)
            })?;
        Ok(config.with_search_default_limit(small(search_default)))
    }

    /// Parses `tools.codeMode` from JSON text.
    pub fn from_json_str(text: &str) -> Result<CodeModeConfig, ConfigError> {
        let value: Value =
            serde_json::from_str(text).map_err(|e| ConfigError::new(ROOT, format!("not valid JSON: {e}")))?;
        CodeModeConfig::from_json(&value)
    }

    /// Whether `language` is enabled.
    pub fn allows(&self, language: Language) -> bool {
        self.languages.contains(&language)
    }

    /// The effective search limit for a guest-requested `limit`: default when absent, clamped to
    /// `[1, max_search_limit]`.
    pub fn search_limit(&self, requested: Option<f64>) -> usize {
        let max = self.max_search_limit.max(1) as f64;
        match requested {
            Some(n) if n.is_finite() => n.floor().clamp(1.0, max) as usize,
            Some(n) if n == f64::INFINITY => max as usize,
            _ => self.search_default_limit as usize,
        }
    }
}

fn expect_literal(value: &Value, path: &str, allowed: &str) -> Result<(), ConfigError> {
    match value.as_str() {
        Some(s) if s == allowed => Ok(()),
        _ => {
            Err(ConfigError::new(path, expected(&format!("\"{allowed}\" (the only supported value)"), value)))
        }
    }
}

fn parse_languages(value: &Value, path: &str) -> Result<Vec<Language>, ConfigError> {
    const NAMES: &[&str] = &["javascript", "typescript"];
    let Some(items) = value.as_array() else {
        return Err(ConfigError::new(
            path,
            expected("an array of \"javascript\" and/or \"typescript\"", value),
        ));
    };
    if items.is_empty() {
        return Err(ConfigError::new(path, NO_LANGUAGE));
    }
    let mut languages = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let language = match item.as_str() {
            Some(name) => Language::parse(name)
                .ok_or_else(|| ConfigError::new(index(path, i), unknown_value("language", name, NAMES)))?,
            None => {
                return Err(ConfigError::new(
                    index(path, i),
                    expected("\"javascript\" or \"typescript\"", item),
                ));
            }
        };
        if !languages.contains(&language) {
            languages.push(language);
        }
    }
    languages.sort();
    Ok(languages)
}

/// An integer `value` at `path`, saturating: a negative one reads as 0 and one past `u64` as
/// `u64::MAX`, so the field's setter clamps it to the nearest bound (`bounds` only words the error).
/// A whole-number float (`5000.0`) reads as that integer.
fn read_integer(value: &Value, path: &str, bounds: Bounds) -> Result<u64, ConfigError> {
    let err = || {
        ConfigError::new(
            path,
            expected(
                &format!("an integer (range {}-{}, out-of-range values are clamped)", bounds.min, bounds.max),
                value,
            ),
        )
    };
    let Value::Number(n) = value else { return Err(err()) };
    if let Some(u) = n.as_u64() {
        return Ok(u);
    }
    if n.as_i64().is_some() {
        return Ok(0); // negative
    }
    match n.as_f64() {
        // `as` saturates: below 0 reads as 0, past `u64::MAX` as `u64::MAX`.
        Some(f) if f.fract() == 0.0 => Ok(f as u64),
        _ => Err(err()),
    }
}
