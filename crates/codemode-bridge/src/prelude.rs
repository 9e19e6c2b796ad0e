//! The guest prelude: JavaScript evaluated once into the sandbox's base snapshot.

/// The prelude source (`src/prelude.js`). Pass it to the sandbox when creating the base snapshot.
///
/// It relies on the private globals the sandbox installs before the prelude runs, captures them and
/// deletes them from `globalThis`:
/// - `__codemode_host_call(payload: string): Promise<any>` — starts a host call with a request (see
///   [`crate::HostRequest`]); the promise settles with the host's [`codemode_sandbox::Delivery`]; a policy refusal throws.
/// - `__codemode_host_call_with(prefix, value, suffix, objectPrototype)` — the same for the
///   request `prefix` + the native JSON text of plain-data `value` + `suffix` (undefined, and no
///   call, when `value` is not plain data): a tool call's request in one native step.
/// - `__codemode_encode(value, objectPrototype)` — the native JSON text of plain data, or undefined.
/// - `__codemode_output(kind: "text" | "json", payload: string): undefined` — emits output; a
///   refusal throws.
/// - `__codemode_set_result_encoder(encode)` — the prelude passes its restricted JSON encoder: the
///   sandbox applies it to each cell's resolved value (see [`crate::decode_cell_value`]).
///
/// It leaves the private global `__codemode_boot` (called by the boot script, then gone).
pub const PRELUDE: &str = include_str!("prelude.js");
