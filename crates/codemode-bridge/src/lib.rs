//! The Code Mode bridge: the JSON-only protocol between the host and the QuickJS guest, its limits,
//! and the guest prelude.
//!
//! The sandbox (codemode-sandbox) moves bytes; this crate decides what they mean:
//!
//! - [`PRELUDE`]: the JavaScript evaluated once into the base snapshot. It captures the sandbox's two
//!   private imports and the intrinsics it needs, and defines the guest API (`ALL_TOOLS`, `tools`,
//!   `MCP`, `API`, `namespaces` and namespace globals, `text`, `json`, `console`, `yield_control`) when the
//!   per-run boot script runs. Guest values are encoded by a restricted JSON adapter before they cross.
//! - [`BootContext`]: the per-run context (catalog entries, convenience names, MCP table, API files,
//!   namespace descriptors) rendered as the boot script ([`BootContext::boot_script`]).
//! - the protocol: the versioned requests ([`HostRequest`], decoded strictly and within bounds by
//!   [`decode_request`]) and replies ([`Delivery`](codemode_sandbox::Delivery), with the oversized-result placeholder).
//! - budgets: per-run budgets ([`RunBudgets`]: 8 MiB of argument bytes, 256 pending registrations)
//!   and the [`OutputAccumulator`] (`maxOutputBytes`, one truncation marker, each item returned once).
//! - scopes: namespace scope serialization ([`NamespaceTable`]) and resolution of guest calls.
//! - [`sanitize_error`]: host and tool error messages made safe for the guest.
//!
//! ```
//! use codemode_bridge::{BootContext, DeliveryExt, DeliveryLimits, HostRequest, PRELUDE, decode_request};
//! use codemode_sandbox::Delivery;
//! use serde_json::json;
//!
//! // Once per process: evaluate PRELUDE in the sandbox and snapshot it.
//! assert!(PRELUDE.contains("__codemode_boot"));
//!
//! // Per run: evaluate the boot script, then the (wrapped) cell.
//! let script = BootContext::new().boot_script().unwrap();
//! assert!(script.starts_with("__codemode_boot("));
//!
//! // Per host call: decode, perform, reply.
//! let request = decode_request(r#"{"v":1,"op":"search","query":"list shipments","limit":3}"#).unwrap();
//! assert_eq!(request, HostRequest::Search { query: "list shipments".into(), limit: Some(3) });
//! let reply = Delivery::value(&json!([{ "id": "openclaw:shipping:shipping_list" }]), &DeliveryLimits::default());
//! assert!(matches!(reply, Delivery::Resolve(_)));
//! ```
//!
//! # How the runtime uses it
//!
//! 1. Once per process: `Sandbox::new(config, PRELUDE)`.
//! 2. Per run: restore the base snapshot, install the run's [`RunLedger::policy`] (it calls
//!    [`RunBudgets::on_host_call`] and [`OutputAccumulator::push`]; their errors' `to_string()` is the
//!    refusal message the guest's call throws, and accepted output lives only in the ledger), evaluate [`BootContext::boot_script`] with
//!    `eval_script` (a failure there is `runtime_unavailable`), then `eval_cell(code)`.
//! 3. Per host call: [`decode_request`]; a [fatal](DecodeError::is_fatal) error fails the run with
//!    `runtime_unavailable`, any other is delivered as [`DecodeError::reply`]; otherwise perform the
//!    operation and deliver a [`Delivery`](codemode_sandbox::Delivery) (`Delivery::value` for results, `Delivery::reject_sanitized` for
//!    host/tool failures), then call [`RunBudgets::on_delivered`].
//! 4. Before suspending or draining more calls, check [`OutputAccumulator::limit_exceeded`]
//!    (`output_limit_exceeded`); put [`OutputAccumulator::take_new`] in each result; decode a completed
//!    value with [`decode_cell_value_within`] (the bound is [`BootContext::max_result_chars`]); the value's
//!    bytes plus [`OutputAccumulator::used_bytes`] must fit in `maxOutputBytes`, else the run fails
//!    with `output_limit_exceeded`. Store the budgets and the accumulator with the snapshot.
//!
//! # Decisions
//!
//! - **Argument bytes** count the whole request text (UTF-8) the prelude hands to the sandbox, not
//!   just the `input` member: the envelope is small and this is what actually crosses.
//! - **Oversized results** (JSON text over [`DeliveryLimits::max_result_bytes`], 1 MiB) are replaced
//!   by `{ "truncated": true, "bytes": <size>, "preview": <first 1,024 characters of the JSON> }`
//!   rather than cut: a cut value would be invalid or silently wrong, a placeholder says what happened.
//! - **Output past `maxOutputBytes`**: the item that would cross the limit is dropped whole (no
//!   partial text), a single text marker is added, and every later output call throws.
//! - **Guest adapter**: a getter that throws makes the conversion fail with a `TypeError` naming the
//!   key (dropping the property would hide the problem); `toJSON` is never called, so a `Date` is
//!   converted by the intrinsic `toISOString` and an `Error` becomes `{ name, message }`; `Map`/`Set`
//!   and other class instances contribute their own enumerable properties (usually `{}`), as
//!   `JSON.stringify` would; binary values throw; shared references are encoded where they appear.
//! - **Cell values** are encoded by the prelude too (the prelude hands its encoder to the sandbox,
//!   which applies it when the cell's promise settles; see [`decode_cell_value`]), because the engine's
//!   `JSON.stringify` invokes `toJSON` and runs setters guest code put on `Array.prototype`.
#![deny(missing_docs)]

// The crate README (its crates.io page) is compiled and run as doc tests too.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

mod api_files;
mod boot;
mod budget;
mod error;
#[doc(hidden)]
pub mod fuzz;
mod json;
mod policy;
mod prelude;
mod protocol;
mod reply;
mod sanitize;
mod scope;

pub use api_files::{ApiFile, ApiFileTable, ApiPathError, MAX_API_PATH_CHARS, normalize_api_path};
pub use boot::{BootContext, CellValue, CellValueError, decode_cell_value, decode_cell_value_within};
pub use budget::{
    BudgetLimits, BudgetRefusal, MAX_PENDING_REGISTRATIONS, OutputAccumulator, OutputRefusal, RunBudgets,
    TRUNCATION_MARKER_PREFIX,
};
pub use error::BridgeError;
pub use json::{JsonError, MAX_VALUE_DEPTH};
pub use policy::{RunLedger, SharedLedger, lock};
pub use prelude::PRELUDE;
pub use protocol::{
    DecodeError, HostRequest, MAX_ARGUMENT_BYTES, MAX_REQUEST_DEPTH, MAX_SEARCH_SERVERS, PROTOCOL_VERSION,
    decode_request,
};
pub use reply::{DeliveryExt, DeliveryLimits, MAX_RESULT_BYTES, PREVIEW_CHARS, call_envelope};
pub use sanitize::{MAX_ERROR_CHARS, sanitize_error};
pub use scope::{NamespaceTable, ResolvedCallable, SerializedNamespace, serialize_namespace};
