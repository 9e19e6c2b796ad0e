//! The `exec`/`wait` wire types: inputs, the result union, and what travels in results.
//!
//! Shapes follow the spec exactly (camelCase keys, `status`-tagged results, optional `output`). Inputs
//! are parsed by hand from JSON so that every rule violation gets a message a model can act on, with
//! the `invalid_input` code.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::config::{CodeModeConfig, Language};

/// The spec's error codes, plus `aborted` for host cancellation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum CodeModeErrorCode {
    /// Bad `exec`/`wait` arguments, disabled language, module access, TypeScript failure, unknown,
    /// expired or wrongly scoped `runId`, too many suspended runs.
    InvalidInput,
    /// The QuickJS guest cannot be created or died.
    RuntimeUnavailable,
    /// The guest ran past its wall-clock budget.
    Timeout,
    /// Output exceeded `maxOutputBytes`.
    OutputLimitExceeded,
    /// A snapshot exceeded `maxSnapshotBytes`.
    SnapshotLimitExceeded,
    /// A host-side defect; the message says what broke.
    InternalError,
    /// The host cancelled the run.
    Aborted,
}

impl CodeModeErrorCode {
    /// The wire name, e.g. `"invalid_input"`.
    pub fn as_str(self) -> &'static str {
        match self {
            CodeModeErrorCode::InvalidInput => "invalid_input",
            CodeModeErrorCode::RuntimeUnavailable => "runtime_unavailable",
            CodeModeErrorCode::Timeout => "timeout",
            CodeModeErrorCode::OutputLimitExceeded => "output_limit_exceeded",
            CodeModeErrorCode::SnapshotLimitExceeded => "snapshot_limit_exceeded",
            CodeModeErrorCode::InternalError => "internal_error",
            CodeModeErrorCode::Aborted => "aborted",
        }
    }
}

/// One item the guest wrote with `text(...)` or `json(...)`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
#[non_exhaustive]
pub enum CodeModeOutput {
    /// Human-readable text.
    Text {
        /// The text.
        text: String,
    },
    /// A structured, JSON-compatible value.
    Json {
        /// The value.
        value: Value,
    },
}

/// Catalog counts by source.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SourceCounts {
    /// OpenClaw core and plugin tools (the host's own).
    pub openclaw: usize,
    /// MCP tools.
    pub mcp: usize,
    /// Client-provided tools.
    pub client: usize,
}

impl SourceCounts {
    /// Counts of the host's own, MCP and client tools.
    pub fn new(openclaw: usize, mcp: usize, client: usize) -> SourceCounts {
        SourceCounts { openclaw, mcp, client }
    }
}

/// The `telemetry` field of every result. It never carries tool inputs, outputs or secrets.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CodeModeTelemetry {
    /// Number of entries in the run's hidden catalog (all sources).
    pub catalog_size: usize,
    /// The same, by source.
    pub catalog_by_source: SourceCounts,
    /// `tools.search` calls so far in the run (cumulative across waits).
    pub search_count: u64,
    /// `tools.describe` calls so far in the run.
    pub describe_count: u64,
    /// Nested tool calls so far in the run (catalog, namespace and MCP calls).
    pub call_count: u64,
    /// The tool names the model sees: `exec`, `wait`, and retained direct-only tools.
    pub model_visible_tools: Vec<String>,
}

impl CodeModeTelemetry {
    /// Telemetry of a run over a catalog of `catalog_size` entries (`catalog_by_source` by
    /// source) whose model sees `model_visible_tools`, with no search, describe or call yet (see
    /// [`CodeModeTelemetry::with_counts`]).
    pub fn new(
        catalog_size: usize,
        catalog_by_source: SourceCounts,
        model_visible_tools: Vec<String>,
    ) -> CodeModeTelemetry {
        CodeModeTelemetry {
            catalog_size,
            catalog_by_source,
            search_count: 0,
            describe_count: 0,
            call_count: 0,
            model_visible_tools,
        }
    }

    /// The same telemetry with the run's `tools.search`, `tools.describe` and nested-call counts.
    pub fn with_counts(
        mut self,
        search_count: u64,
        describe_count: u64,
        call_count: u64,
    ) -> CodeModeTelemetry {
        self.search_count = search_count;
        self.describe_count = describe_count;
        self.call_count = call_count;
        self
    }
}

/// Why a run is `waiting`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum WaitReason {
    /// Nested tool calls did not settle within the deadline.
    PendingTools,
    /// The guest called `yield_control(...)`.
    Yield,
}

/// A nested call still in flight when a run suspended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct PendingToolCall {
    /// Host-unique id of this nested call (stable across waits).
    pub call_id: String,
    /// Exact catalog id of the tool, e.g. `openclaw:core:message`.
    pub tool_id: String,
    /// The validated input the tool was called with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<Value>,
}

impl PendingToolCall {
    /// A call in flight: its host-unique id, the tool's exact catalog id and (when known) its input.
    pub fn new(
        call_id: impl Into<String>,
        tool_id: impl Into<String>,
        input: Option<Value>,
    ) -> PendingToolCall {
        PendingToolCall { call_id: call_id.into(), tool_id: tool_id.into(), input }
    }
}

/// `status: "completed"`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CompletedResult {
    /// The cell's return value after the JSON adapter (`null` for `undefined`).
    pub value: Value,
    /// Output items in guest call order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub output: Vec<CodeModeOutput>,
    /// Run telemetry.
    pub telemetry: CodeModeTelemetry,
}

impl CompletedResult {
    /// A completed run's value, its new output and its telemetry.
    pub fn new(value: Value, output: Vec<CodeModeOutput>, telemetry: CodeModeTelemetry) -> CompletedResult {
        CompletedResult { value, output, telemetry }
    }
}

/// `status: "waiting"`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct WaitingResult {
    /// Pass to `wait` to continue.
    pub run_id: String,
    /// Why the run suspended.
    pub reason: WaitReason,
    /// Nested calls still in flight.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending_tool_calls: Vec<PendingToolCall>,
    /// Output produced since the last result (each item is delivered exactly once).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub output: Vec<CodeModeOutput>,
    /// `true` when the run is restart-safe (`restartSafe: true`): replaying it cannot cause side effects.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub replay_safe: bool,
    /// Run telemetry.
    pub telemetry: CodeModeTelemetry,
}

impl WaitingResult {
    /// A suspended run `run_id`, suspended for `reason` with `pending_tool_calls` in flight, and no
    /// output (see [`WaitingResult::with_output`]); `replay_safe` is `false` (see
    /// [`WaitingResult::replay_safe`]).
    pub fn new(
        run_id: impl Into<String>,
        reason: WaitReason,
        pending_tool_calls: Vec<PendingToolCall>,
        telemetry: CodeModeTelemetry,
    ) -> WaitingResult {
        WaitingResult {
            run_id: run_id.into(),
            reason,
            pending_tool_calls,
            output: Vec::new(),
            replay_safe: false,
            telemetry,
        }
    }

    /// The same result with the output produced since the last result.
    pub fn with_output(mut self, output: Vec<CodeModeOutput>) -> WaitingResult {
        self.output = output;
        self
    }

    /// The same result marked replay-safe (the run is restart-safe) or not.
    pub fn replay_safe(mut self, replay_safe: bool) -> WaitingResult {
        self.replay_safe = replay_safe;
        self
    }
}

/// `status: "failed"`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct FailedResult {
    /// What went wrong, written for the model.
    pub error: String,
    /// The error code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<CodeModeErrorCode>,
    /// Output produced before the failure is kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub output: Vec<CodeModeOutput>,
    /// Run telemetry.
    pub telemetry: CodeModeTelemetry,
}

impl FailedResult {
    /// A failure written for the model, with its code (if any), the output kept and telemetry.
    pub fn new(
        error: impl Into<String>,
        code: Option<CodeModeErrorCode>,
        output: Vec<CodeModeOutput>,
        telemetry: CodeModeTelemetry,
    ) -> FailedResult {
        FailedResult { error: error.into(), code, output, telemetry }
    }
}

/// What `exec` and `wait` return.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
#[non_exhaustive]
pub enum CodeModeResult {
    /// The cell finished.
    Completed(CompletedResult),
    /// The cell is suspended; call `wait` with the run id.
    Waiting(WaitingResult),
    /// The cell (or the request) failed.
    Failed(FailedResult),
}

impl CodeModeResult {
    /// A `failed` result with a code and no output.
    pub fn failed(code: CodeModeErrorCode, error: impl Into<String>, telemetry: CodeModeTelemetry) -> Self {
        CodeModeResult::Failed(FailedResult {
            error: error.into(),
            code: Some(code),
            output: Vec::new(),
            telemetry,
        })
    }

    /// The `status` tag.
    pub fn status(&self) -> &'static str {
        match self {
            CodeModeResult::Completed(_) => "completed",
            CodeModeResult::Waiting(_) => "waiting",
            CodeModeResult::Failed(_) => "failed",
        }
    }

    /// The error code of a `failed` result.
    pub fn code(&self) -> Option<CodeModeErrorCode> {
        match self {
            CodeModeResult::Failed(f) => f.code,
            _ => None,
        }
    }

    /// The telemetry of any result.
    pub fn telemetry(&self) -> &CodeModeTelemetry {
        match self {
            CodeModeResult::Completed(r) => &r.telemetry,
            CodeModeResult::Waiting(r) => &r.telemetry,
            CodeModeResult::Failed(r) => &r.telemetry,
        }
    }

    /// The output items of any result.
    pub fn output(&self) -> &[CodeModeOutput] {
        match self {
            CodeModeResult::Completed(r) => &r.output,
            CodeModeResult::Waiting(r) => &r.output,
            CodeModeResult::Failed(r) => &r.output,
        }
    }

    /// The result as JSON.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// A bad `exec` or `wait` input. Always surfaces as `failed` with `invalid_input`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
#[non_exhaustive]
pub struct InputError {
    /// What was wrong, written for the model.
    pub message: String,
}

impl InputError {
    fn new(message: impl Into<String>) -> InputError {
        InputError { message: message.into() }
    }
}

/// The raw `exec` input, as the model sent it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExecInput {
    /// The program (the documented field).
    pub code: Option<String>,
    /// Alias of `code` for hook policies and trusted rewrites; must match `code` when both are set.
    pub command: Option<String>,
    /// `"javascript"` (default) or `"typescript"`, as sent (validated by [`ExecInput::validate`]).
    pub language: Option<String>,
    /// Refuse side-effecting nested calls; suspended results are replay-safe.
    pub restart_safe: Option<bool>,
}

const EXEC_KEYS: &[&str] = &["code", "command", "language", "restartSafe"];

impl ExecInput {
    /// An input carrying `code` in the default language.
    pub fn code(code: impl Into<String>) -> ExecInput {
        ExecInput { code: Some(code.into()), ..Default::default() }
    }

    /// The same input in `language`.
    pub fn with_language(mut self, language: Language) -> ExecInput {
        self.language = Some(language.as_str().to_owned());
        self
    }

    /// Reads an `exec` input from its JSON arguments. Unknown keys and wrong types are errors.
    pub fn from_json(value: &Value) -> Result<ExecInput, InputError> {
        let object = expect_object(value, "exec", EXEC_KEYS)?;
        Ok(ExecInput {
            code: optional_string(object, "code")?,
            command: optional_string(object, "command")?,
            language: optional_string(object, "language")?,
            restart_safe: match object.get("restartSafe") {
                None | Some(Value::Null) => None,
                Some(Value::Bool(b)) => Some(*b),
                Some(_) => return Err(InputError::new("exec: `restartSafe` must be a boolean.")),
            },
        })
    }

    /// Applies the spec's rules: one of `code`/`command` non-empty; both present must match; `language`
    /// defaults to `"javascript"` and must be enabled in `config`.
    pub fn validate(&self, config: &CodeModeConfig) -> Result<ExecCell, InputError> {
        let code = match (non_empty(&self.code), non_empty(&self.command)) {
            (None, None) => {
                return Err(InputError::new(
                    "exec: `code` must be a non-empty string of JavaScript or TypeScript.",
                ));
            }
            (Some(code), Some(command)) if code != command => {
                return Err(InputError::new(
                    "exec: `code` and `command` differ; send the program once, in `code`.",
                ));
            }
            (Some(code), _) | (None, Some(code)) => code.to_owned(),
        };
        let language = match self.language.as_deref() {
            None => Language::JavaScript,
            Some(name) => Language::parse(name).ok_or_else(|| {
                InputError::new(format!(
                    "exec: unsupported language {name:?}; use one of: {}.",
                    enabled_list(config)
                ))
            })?,
        };
        if !config.allows(language) {
            return Err(InputError::new(format!(
                "exec: language \"{language}\" is disabled here; use one of: {}.",
                enabled_list(config)
            )));
        }
        Ok(ExecCell { code, language, restart_safe: self.restart_safe.unwrap_or(false) })
    }
}

fn non_empty(s: &Option<String>) -> Option<&str> {
    s.as_deref().filter(|s| !s.trim().is_empty())
}

fn enabled_list(config: &CodeModeConfig) -> String {
    config.languages().iter().map(|l| format!("\"{l}\"")).collect::<Vec<_>>().join(", ")
}

/// A validated `exec` input.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExecCell {
    /// The program text.
    pub code: String,
    /// Its language (enabled in the config).
    pub language: Language,
    /// Whether the run is restart-safe.
    pub restart_safe: bool,
}

/// The `wait` input.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct WaitInput {
    /// The `runId` of a `waiting` result.
    pub run_id: String,
}

impl WaitInput {
    /// A `wait` for the run `run_id` (the `runId` of a `waiting` result).
    pub fn new(run_id: impl Into<String>) -> WaitInput {
        WaitInput { run_id: run_id.into() }
    }

    /// Reads a `wait` input from its JSON arguments.
    pub fn from_json(value: &Value) -> Result<WaitInput, InputError> {
        let object = expect_object(value, "wait", &["runId"])?;
        match object.get("runId") {
            Some(Value::String(id)) if !id.trim().is_empty() => Ok(WaitInput::new(id.clone())),
            _ => Err(InputError::new(
                "wait: `runId` must be the non-empty runId string from a `waiting` result.",
            )),
        }
    }
}

fn expect_object<'a>(
    value: &'a Value,
    tool: &str,
    keys: &[&str],
) -> Result<&'a Map<String, Value>, InputError> {
    let Value::Object(object) = value else {
        return Err(InputError::new(format!("{tool}: arguments must be a JSON object.")));
    };
    if let Some(key) = object.keys().find(|k| !keys.contains(&k.as_str())) {
        return Err(InputError::new(format!(
            "{tool}: unknown argument `{key}`; allowed: {}.",
            keys.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
        )));
    }
    Ok(object)
}

fn optional_string(object: &Map<String, Value>, key: &str) -> Result<Option<String>, InputError> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(InputError::new(format!("exec: `{key}` must be a string."))),
    }
}

/// What the model reads about `code`.
const CODE_DESCRIPTION: &str = "JavaScript or TypeScript program, run as the body of an async function (top-level await and return work).";
/// What the model reads about `language`.
const LANGUAGE_DESCRIPTION: &str = "Language of `code`. Default \"javascript\".";
/// What the model reads about `restartSafe`.
const RESTART_SAFE_DESCRIPTION: &str =
    "Set true for read-only work: side-effecting tool calls are refused so the run can be safely replayed.";
/// What the model reads about `runId`.
const RUN_ID_DESCRIPTION: &str = "The runId of a `waiting` exec or wait result.";

/// The model-visible `exec` input schema: `code`, `language` as a flat string enum of the enabled
/// `languages` (no `oneOf`/`anyOf`, which some providers reject) and `restartSafe`. The
/// `command` alias is accepted by [`ExecInput::from_json`] for hook policies and trusted rewrites
/// but is not shown: `code` is the documented field. Every description is written for the model.
pub fn exec_input_schema(languages: &[Language]) -> Value {
    let languages: Vec<Value> = languages.iter().map(|l| Value::from(l.as_str())).collect();
    serde_json::json!({
        "type": "object",
        "properties": {
            "code": { "type": "string", "description": CODE_DESCRIPTION },
            "language": { "type": "string", "enum": languages, "description": LANGUAGE_DESCRIPTION },
            "restartSafe": { "type": "boolean", "description": RESTART_SAFE_DESCRIPTION },
        },
        "required": ["code"],
        "additionalProperties": false,
    })
}

/// The model-visible `wait` input schema.
pub fn wait_input_schema() -> Value {
    serde_json::json!({
        "type": "object",
        "properties": { "runId": { "type": "string", "description": RUN_ID_DESCRIPTION } },
        "required": ["runId"],
        "additionalProperties": false,
    })
}
