//! Per-run budgets the runtime consults from the sandbox's policy hook, and the output accumulator.
//!
//! Both are plain data (`Clone`, serializable) so that the runtime stores them with a suspended run's
//! snapshot and restores them on `wait`: every budget is cumulative over the whole run.

use codemode_core::CodeModeOutput;
use codemode_sandbox::OutputKind;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::json::{self, DecodeLimits};
use crate::protocol::MAX_ARGUMENT_BYTES;

/// Default [`BudgetLimits::max_pending_registrations`].
pub const MAX_PENDING_REGISTRATIONS: u32 = 256;

/// The bounds of [`RunBudgets`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BudgetLimits {
    /// Bytes of host-call payloads (UTF-8, whole request text) a run may send in total, across all
    /// resumes. Default: 8 MiB ([`MAX_ARGUMENT_BYTES`]); exactly this many bytes pass.
    pub max_argument_bytes: u64,
    /// Host calls that may be registered and not yet delivered at once. Default: 256
    /// ([`MAX_PENDING_REGISTRATIONS`]); the next one is refused before dispatch.
    pub max_pending_registrations: u32,
}

impl Default for BudgetLimits {
    fn default() -> Self {
        BudgetLimits {
            max_argument_bytes: MAX_ARGUMENT_BYTES,
            max_pending_registrations: MAX_PENDING_REGISTRATIONS,
        }
    }
}

/// Why a host call was refused. The message is safe to show to the guest; the refused call is not
/// counted against either budget.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BudgetRefusal {
    /// The run would send more argument bytes than allowed.
    #[error(
        "code mode bridge: this call would bring the run's bridge arguments to {would_be} bytes; \
         the limit is {limit} bytes per run"
    )]
    ArgumentBytes {
        /// Total bytes including the refused call.
        would_be: u64,
        /// The limit.
        limit: u64,
    },
    /// Too many calls are waiting for a delivery.
    #[error("code mode bridge: {limit} calls are already pending; await some before starting more")]
    PendingRegistrations {
        /// The limit.
        limit: u32,
    },
}

/// Cumulative bridge budgets of one run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunBudgets {
    limits: BudgetLimits,
    argument_bytes: u64,
    pending: u32,
}

impl RunBudgets {
    /// Fresh budgets.
    pub fn new(limits: BudgetLimits) -> RunBudgets {
        RunBudgets { limits, argument_bytes: 0, pending: 0 }
    }

    /// The limits.
    pub fn limits(&self) -> &BudgetLimits {
        &self.limits
    }

    /// Called for every host call before it is registered: counts `payload`'s UTF-8 bytes and one
    /// pending registration, or refuses (and counts nothing).
    pub fn on_host_call(&mut self, payload: &str) -> Result<(), BudgetRefusal> {
        if self.pending >= self.limits.max_pending_registrations {
            return Err(BudgetRefusal::PendingRegistrations { limit: self.limits.max_pending_registrations });
        }
        let would_be = self.argument_bytes.saturating_add(payload.len() as u64);
        if would_be > self.limits.max_argument_bytes {
            return Err(BudgetRefusal::ArgumentBytes { would_be, limit: self.limits.max_argument_bytes });
        }
        self.argument_bytes = would_be;
        self.pending += 1;
        Ok(())
    }

    /// Called when a registered call was delivered (resolved or rejected).
    pub fn on_delivered(&mut self) {
        self.pending = self.pending.saturating_sub(1);
    }

    /// Argument bytes used so far.
    pub fn argument_bytes(&self) -> u64 {
        self.argument_bytes
    }

    /// Calls registered and not yet delivered.
    pub fn pending(&self) -> u32 {
        self.pending
    }
}

/// Why an output call was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OutputRefusal {
    /// The run's output would exceed `maxOutputBytes`; the run must fail with
    /// `output_limit_exceeded` (check [`OutputAccumulator::limit_exceeded`]).
    #[error("output limit exceeded: the run's output would exceed maxOutputBytes ({limit} bytes)")]
    LimitExceeded {
        /// `maxOutputBytes`.
        limit: u64,
    },
    /// A `json` payload was not restricted JSON (a prelude defect; the item is dropped).
    #[error("json(...): {0}")]
    InvalidJson(String),
}

/// Collects `text(...)` / `json(...)` output of a run against `maxOutputBytes`.
///
/// - Bytes are counted as the UTF-8 length of the payload as the guest sent it (the text, or the JSON
///   text), cumulative across `wait`s. Reaching exactly `maxOutputBytes` passes; the first item that
///   would go past it is refused, dropped entirely, and replaced by a single text marker
///   ([`TRUNCATION_MARKER_PREFIX`]…); from then on every output call is refused without adding more
///   markers, and [`limit_exceeded`](OutputAccumulator::limit_exceeded) stays `true` so the runtime
///   fails the run with `output_limit_exceeded` (even if the guest caught the error) before it
///   suspends or drains more calls. Output kept before the limit stays in the result.
/// - [`take_new`](OutputAccumulator::take_new) returns what was not yet returned, so every item is
///   delivered exactly once across `exec` and `wait` results.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OutputAccumulator {
    max_bytes: u64,
    used_bytes: u64,
    items: Vec<CodeModeOutput>,
    returned: usize,
    exceeded: bool,
}

/// Start of the text of the truncation marker item.
pub const TRUNCATION_MARKER_PREFIX: &str = "[output truncated: ";

impl OutputAccumulator {
    /// An empty accumulator for `maxOutputBytes`.
    pub fn new(max_output_bytes: u64) -> OutputAccumulator {
        OutputAccumulator {
            max_bytes: max_output_bytes,
            used_bytes: 0,
            items: Vec::new(),
            returned: 0,
            exceeded: false,
        }
    }

    /// Adds one output call, or refuses it (the guest's call then throws the refusal's message).
    pub fn push(&mut self, kind: OutputKind, payload: &str) -> Result<(), OutputRefusal> {
        if self.exceeded {
            return Err(OutputRefusal::LimitExceeded { limit: self.max_bytes });
        }
        let bytes = payload.len() as u64;
        if self.used_bytes.saturating_add(bytes) > self.max_bytes {
            self.exceeded = true;
            self.items.push(CodeModeOutput::Text {
                text: format!(
                    "{TRUNCATION_MARKER_PREFIX}maxOutputBytes ({} bytes) exceeded]",
                    self.max_bytes
                ),
            });
            return Err(OutputRefusal::LimitExceeded { limit: self.max_bytes });
        }
        let item = match kind {
            OutputKind::Text => CodeModeOutput::Text { text: payload.to_owned() },
            OutputKind::Json => {
                let limits = DecodeLimits { max_bytes: usize::MAX, max_depth: json::MAX_VALUE_DEPTH };
                let value: Value = json::decode_json(payload, &limits)
                    .map_err(|e| OutputRefusal::InvalidJson(e.to_string()))?;
                CodeModeOutput::Json { value }
            }
        };
        self.used_bytes += bytes;
        self.items.push(item);
        Ok(())
    }

    /// Items not yet returned by an earlier call.
    pub fn take_new(&mut self) -> Vec<CodeModeOutput> {
        let new = self.items[self.returned..].to_vec();
        self.returned = self.items.len();
        new
    }

    /// Whether the run went past `maxOutputBytes` (the run must fail with `output_limit_exceeded`).
    pub fn limit_exceeded(&self) -> bool {
        self.exceeded
    }

    /// Bytes counted so far.
    pub fn used_bytes(&self) -> u64 {
        self.used_bytes
    }

    /// Every item so far (returned or not).
    pub fn items(&self) -> &[CodeModeOutput] {
        &self.items
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn argument_bytes_exactly_at_the_limit_pass() {
        let mut b = RunBudgets::new(BudgetLimits::default());
        let chunk = "x".repeat(1024 * 1024);
        for _ in 0..8 {
            b.on_host_call(&chunk).unwrap();
            b.on_delivered();
        }
        assert_eq!(b.argument_bytes(), 8 * 1024 * 1024);
        assert_eq!(
            b.on_host_call("x"),
            Err(BudgetRefusal::ArgumentBytes { would_be: 8 * 1024 * 1024 + 1, limit: 8 * 1024 * 1024 })
        );
        assert_eq!(b.argument_bytes(), 8 * 1024 * 1024);
        assert!(b.on_host_call("").is_ok(), "an empty payload still fits");
    }

    #[test]
    fn argument_bytes_count_utf8_and_survive_a_clone() {
        let mut b = RunBudgets::new(BudgetLimits { max_argument_bytes: 6, max_pending_registrations: 9 });
        b.on_host_call("é").unwrap(); // 2 bytes
        let mut resumed = b.clone();
        resumed.on_host_call("€").unwrap(); // 3 bytes
        assert_eq!(resumed.argument_bytes(), 5);
        assert!(resumed.on_host_call("é").is_err());
        assert!(resumed.on_host_call("x").is_ok());
        let round: RunBudgets = serde_json::from_value(serde_json::to_value(&resumed).unwrap()).unwrap();
        assert_eq!(round, resumed);
    }

    #[test]
    fn the_257th_pending_registration_is_refused() {
        let mut b = RunBudgets::new(BudgetLimits::default());
        for _ in 0..256 {
            b.on_host_call("{}").unwrap();
        }
        assert_eq!(b.on_host_call("{}"), Err(BudgetRefusal::PendingRegistrations { limit: 256 }));
        assert_eq!(b.pending(), 256);
        assert_eq!(b.argument_bytes(), 512, "the refused call is not counted");
        b.on_delivered();
        assert!(b.on_host_call("{}").is_ok());
    }

    #[test]
    fn output_exactly_at_the_limit_passes() {
        let mut out = OutputAccumulator::new(10);
        out.push(OutputKind::Text, "12345").unwrap();
        out.push(OutputKind::Json, "[1,2,3]").unwrap_err(); // 12 > 10
        assert!(out.limit_exceeded());
        let mut out = OutputAccumulator::new(10);
        out.push(OutputKind::Text, "12345").unwrap();
        out.push(OutputKind::Json, "[1,2]").unwrap();
        out.push(OutputKind::Text, "").unwrap(); // exactly 10 (empty adds nothing)
        assert!(!out.limit_exceeded());
        assert_eq!(out.used_bytes(), 10);
    }

    #[test]
    fn output_past_the_limit_keeps_earlier_items_and_one_marker() {
        let mut out = OutputAccumulator::new(8);
        out.push(OutputKind::Text, "abc").unwrap();
        assert_eq!(out.take_new(), vec![CodeModeOutput::Text { text: "abc".into() }]);
        out.push(OutputKind::Json, "{\"a\":1}").unwrap_err();
        out.push(OutputKind::Text, "x").unwrap_err();
        out.push(OutputKind::Text, "y").unwrap_err();
        let new = out.take_new();
        assert_eq!(new.len(), 1);
        let CodeModeOutput::Text { text } = &new[0] else { panic!() };
        assert!(text.starts_with(TRUNCATION_MARKER_PREFIX), "{text}");
        assert!(text.contains("8 bytes"));
        assert_eq!(out.items().len(), 2);
        assert!(out.take_new().is_empty(), "delivered exactly once");
    }

    #[test]
    fn output_counts_utf8_bytes_and_decodes_json() {
        let mut out = OutputAccumulator::new(4);
        out.push(OutputKind::Text, "éé").unwrap();
        assert!(out.push(OutputKind::Text, "é").is_err());
        let mut out = OutputAccumulator::new(100);
        out.push(OutputKind::Json, "{\"a\":[1,null]}").unwrap();
        assert!(matches!(out.push(OutputKind::Json, "{"), Err(OutputRefusal::InvalidJson(_))));
        assert_eq!(out.items(), &[CodeModeOutput::Json { value: json!({ "a": [1, null] }) }]);
        assert_eq!(out.used_bytes(), 14);
        // Cumulative across a suspend/resume.
        let mut resumed: OutputAccumulator =
            serde_json::from_value(serde_json::to_value(&out).unwrap()).unwrap();
        assert_eq!(resumed.take_new().len(), 1);
    }
}
