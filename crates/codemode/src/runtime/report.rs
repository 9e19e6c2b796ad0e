//! Reporting: `completed`, `failed` and `waiting` results with their output and telemetry, and the
//! model-facing texts of guest and sandbox failures.

use codemode_core::{CodeModeErrorCode, CodeModeResult, CodeModeTelemetry, CompletedResult, FailedResult};
use codemode_sandbox::{GuestError, PENDING_WITHOUT_HOST_WORK, SandboxError};
use serde_json::Value;

use super::CodeMode;
use crate::run::{Counts, RunState};
use codemode_bridge::lock;

impl CodeMode {
    pub(super) fn telemetry(&self, counts: &Counts) -> CodeModeTelemetry {
        let catalog = &self.inner.catalog;
        CodeModeTelemetry::new(catalog.len(), catalog.counts(), self.inner.visible_tools.clone()).with_counts(
            counts.search,
            counts.describe,
            counts.call,
        )
    }

    pub(super) fn completed(&self, run: &mut RunState, value: Value) -> CodeModeResult {
        let used = lock(&run.ledger).output.used_bytes();
        if used.saturating_add(run.value_bytes) > self.inner.config.max_output_bytes() {
            return self.value_too_large(run, run.value_bytes);
        }
        let output = lock(&run.ledger).output.take_new();
        CodeModeResult::Completed(CompletedResult::new(value, output, self.telemetry(&run.counts.counts())))
    }

    /// `output_limit_exceeded` for a returned value of `value_bytes` (at least) that does not fit in
    /// `maxOutputBytes` next to the run's output.
    pub(super) fn value_too_large(&self, run: &RunState, value_bytes: u64) -> CodeModeResult {
        let used = lock(&run.ledger).output.used_bytes();
        let max = self.inner.config.max_output_bytes();
        let value = if value_bytes > max {
            format!("the returned value alone ({value_bytes} bytes or more)")
        } else {
            format!("the returned value ({value_bytes} bytes) plus the run's output ({used} bytes)")
        };
        let message = format!(
            "output limit exceeded: {value} would go past maxOutputBytes ({max} bytes). Return less: a summary, \
             a count, or a slice of the data (text() and json() output counts against the same limit)."
        );
        self.fail(Some(run), CodeModeErrorCode::OutputLimitExceeded, message)
    }

    /// A `failed` result (with the run's new output and telemetry when there is a run).
    pub(crate) fn fail(
        &self,
        run: Option<&RunState>,
        code: impl Into<Option<CodeModeErrorCode>>,
        message: impl Into<String>,
    ) -> CodeModeResult {
        let (output, counts) = match run {
            Some(run) => (lock(&run.ledger).output.take_new(), run.counts.counts()),
            None => (Vec::new(), Counts::default()),
        };
        CodeModeResult::Failed(FailedResult::new(message, code.into(), output, self.telemetry(&counts)))
    }

    /// The `failed` result for exec/wait when Code Mode is off for this runtime.
    pub(super) fn refuse_if_disabled(&self) -> Option<CodeModeResult> {
        (!self.inner.config.is_enabled()).then(|| {
            self.fail(None, CodeModeErrorCode::InvalidInput, "code mode is not enabled for this run.")
        })
    }

    pub(super) fn aborted(&self, run: Option<&RunState>) -> CodeModeResult {
        self.fail(run, CodeModeErrorCode::Aborted, "code mode run was aborted.")
    }

    pub(super) fn sandbox_failure(&self, run: &mut RunState, error: SandboxError) -> CodeModeResult {
        let (code, message) = match &error {
            SandboxError::Timeout => (
                CodeModeErrorCode::Timeout,
                format!(
                    "code mode run timed out: the guest ran past timeoutMs ({} ms). Keep CPU work small, or split it \
                     across cells.",
                    self.inner.config.timeout_ms()
                ),
            ),
            SandboxError::MemoryExhausted => (
                CodeModeErrorCode::RuntimeUnavailable,
                "the guest VM was terminated: it exceeded memoryLimitBytes.".to_owned(),
            ),
            SandboxError::StackExhausted => (
                CodeModeErrorCode::RuntimeUnavailable,
                "the guest VM was terminated: it exhausted its call stack.".to_owned(),
            ),
            SandboxError::AllVmsInUse { .. } => (
                CodeModeErrorCode::RuntimeUnavailable,
                "code mode is busy: every sandbox slot is in use; retry in a few seconds.".to_owned(),
            ),
            // A step on the caller's thread stopped by the run's abort signal.
            SandboxError::Interrupted => {
                (CodeModeErrorCode::Aborted, "code mode run was aborted.".to_owned())
            }
            _ => (CodeModeErrorCode::RuntimeUnavailable, unavailable(&error)),
        };
        self.fail(Some(&*run), code, message)
    }
}

pub(super) fn unreachable_flow() -> CodeModeResult {
    CodeModeResult::failed(
        CodeModeErrorCode::InternalError,
        "internal error: unexpected suspension",
        CodeModeTelemetry::default(),
    )
}

pub(super) fn unavailable(error: &SandboxError) -> String {
    match error {
        SandboxError::AllVmsInUse { .. } => {
            "code mode is busy: every sandbox slot is in use; retry in a few seconds.".to_owned()
        }
        _ => format!("code mode runtime is unavailable: {error}"),
    }
}

/// Texts of the guest's embedding layer (its Rust bindings of QuickJS) that name internals: the
/// message a guest error carries when such a conversion fails, and what a model reads instead.
const ENGINE_INTERNAL_TEXTS: &[(&str, &str)] = &[
    (
        "Conversion from string failed",
        "a string with unpaired surrogates (not valid Unicode) could not cross the sandbox boundary",
    ),
    ("Error converting from js", "a value could not cross the sandbox boundary"),
    ("Error converting into js", "a value could not cross the sandbox boundary"),
    (
        "String contained internal null bytes",
        "a string with NUL characters could not cross the sandbox boundary",
    ),
    ("CStr didn't end in a null byte", "a string could not cross the sandbox boundary"),
    ("Exception generated by quickjs", "the sandbox engine failed internally"),
    ("quickjs library created a unknown error", "the sandbox engine failed internally"),
];

/// The plain replacement of an engine-internal message (see [`ENGINE_INTERNAL_TEXTS`]).
fn engine_internal_text(message: &str) -> Option<&'static str> {
    ENGINE_INTERNAL_TEXTS.iter().find(|(internal, _)| message.starts_with(internal)).map(|(_, plain)| *plain)
}

/// Characters of a thrown error's `Name: message` kept in the `failed` result.
const MAX_GUEST_ERROR_CHARS: usize = 4096;

/// `Name: message` plus the position in `user.js`/`user.ts` (mapped back to the user's source).
pub(super) fn guest_error_message(error: &GuestError, source: &codemode_ts::StripReturn) -> String {
    let mut message = match engine_internal_text(&error.message) {
        Some(plain) => format!("{}: {plain}", if error.name.is_empty() { "Error" } else { &error.name }),
        None => error.to_string(),
    };
    if let Some((cut_at, _)) = message.char_indices().nth(MAX_GUEST_ERROR_CHARS) {
        let bytes = message.len();
        message.truncate(cut_at);
        message.push_str(&format!("… (message cut, {bytes} bytes)"));
    }
    if error.message.starts_with(PENDING_WITHOUT_HOST_WORK) {
        return message;
    }
    let file = source.file_name();
    if let Some((line, column)) = stack_position(&error.stack, file) {
        // The sandbox's cell wrapper has its own line before the code; columns are the code's.
        let mapped = line
            .checked_sub(codemode_sandbox::CELL_LINE_OFFSET)
            .filter(|l| *l > 0)
            .and_then(|l| source.map_position(l, column.max(1)));
        match mapped {
            Some((l, c)) if column > 0 => message.push_str(&format!(" (at {file}:{l}:{c})")),
            Some((l, _)) => message.push_str(&format!(" (at {file}:{l})")),
            // A position in the wrapper itself says nothing about the user's code.
            None => {}
        }
    }
    message
}

/// The first `file:line:column` in a QuickJS stack.
fn stack_position(stack: &str, file: &str) -> Option<(u32, u32)> {
    let needle = format!("{file}:");
    let start = stack.find(&needle)? + needle.len();
    let rest = &stack[start..];
    let mut parts = rest.splitn(3, |c: char| !c.is_ascii_digit());
    let line: u32 = parts.next()?.parse().ok()?;
    let column: u32 = parts.next().and_then(|c| c.parse().ok()).unwrap_or(0);
    Some((line, column))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_internal_texts_are_replaced() {
        let source =
            codemode_ts::strip("throw 1", &codemode_ts::StripOptions::new(codemode_ts::Language::JavaScript));
        let error = GuestError {
            name: "InternalError".into(),
            message: "Conversion from string failed: invalid utf-8 sequence of 1 bytes from index 9".into(),
            stack: String::new(),
        };
        let message = guest_error_message(&error, &source);
        assert_eq!(
            message,
            "InternalError: a string with unpaired surrogates (not valid Unicode) could not cross the sandbox boundary"
        );
        for (internal, _) in ENGINE_INTERNAL_TEXTS {
            let error =
                GuestError { name: String::new(), message: format!("{internal}: x"), stack: String::new() };
            let message = guest_error_message(&error, &source);
            assert!(!message.contains(internal), "{message}");
            assert!(message.starts_with("Error: "), "{message}");
        }
        // Ordinary messages stay.
        let error = GuestError {
            name: "TypeError".into(),
            message: "x is not a function".into(),
            stack: String::new(),
        };
        assert_eq!(guest_error_message(&error, &source), "TypeError: x is not a function");
        // Huge messages are cut.
        let error = GuestError { name: "Error".into(), message: "m".repeat(100_000), stack: String::new() };
        let message = guest_error_message(&error, &source);
        assert!(
            message.len() < 4200 && message.ends_with("(message cut, 100007 bytes)"),
            "{}",
            &message[4000..]
        );
    }

    #[test]
    fn stack_positions_parse() {
        assert_eq!(stack_position("    at f (user.js:3:7)\n", "user.js"), Some((3, 7)));
        assert_eq!(stack_position("    at <eval> (user.ts:12:1)", "user.ts"), Some((12, 1)));
        assert_eq!(stack_position("    at native", "user.js"), None);
    }
}
