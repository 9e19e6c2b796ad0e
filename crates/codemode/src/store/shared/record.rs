//! A suspended run as a stored record and back: the JSON state sealed beside the snapshot
//! (`StoredRun` and its calls, scope and replies), and opening a claimed record into a run state
//! ready for `resume`, settling calls whose process stopped.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use codemode_bridge::{DeliveryExt, OutputAccumulator, RunBudgets, lock};
use codemode_core::{CodeModeErrorCode, CodeModeResult, PendingToolCall};
use codemode_sandbox::{Delivery, Snapshot};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::abort::AbortSignal;
use crate::host::RunScope;
use crate::prepare::{self, NotPrepared};
use crate::run::{Counters, Counts, RunState};
use crate::runtime::CodeMode;
use crate::store::envelope;
use crate::store::{Claimed, OTHER_AGENT_RUN, OTHER_SESSION, unix_ms};

use super::{INTERRUPTED, Shared};

/// A reply as stored (JSON).
#[derive(Serialize, Deserialize)]
pub(super) enum StoredReply {
    #[serde(rename = "r")]
    Resolve(String),
    #[serde(rename = "e")]
    Reject(String, Option<String>),
}

pub(super) fn encode_reply(reply: &Delivery) -> Vec<u8> {
    let stored = match reply {
        Delivery::Resolve(json) => StoredReply::Resolve(json.clone()),
        Delivery::Reject { message, code } => StoredReply::Reject(message.clone(), code.clone()),
    };
    serde_json::to_vec(&stored).unwrap_or_default()
}

pub(super) fn decode_reply(bytes: &[u8]) -> Delivery {
    match serde_json::from_slice::<StoredReply>(bytes) {
        Ok(StoredReply::Resolve(json)) => Delivery::Resolve(json),
        Ok(StoredReply::Reject(message, code)) => Delivery::Reject { message, code },
        Err(_) => Delivery::reject("the stored tool result could not be read", Some("internal_error")),
    }
}

pub(crate) fn interrupted_reply() -> Delivery {
    Delivery::reject(INTERRUPTED, Some("interrupted"))
}

/// A nested call in flight, as stored.
#[derive(Serialize, Deserialize)]
pub(super) struct StoredCall {
    pub(super) call_id: String,
    pub(super) tool_id: String,
    pub(super) input: Option<Value>,
    /// How its result is shaped, for a dispatch again; `None` for calls that are never dispatched
    /// again (MCP resources and prompts).
    pub(super) shape: Option<u8>,
}

#[derive(Serialize, Deserialize)]
pub(super) struct StoredScope {
    pub(super) agent_id: Option<String>,
    pub(super) session_id: String,
    pub(super) session_key: Option<String>,
    pub(super) agent_run_id: String,
    pub(super) call_id: Option<String>,
    pub(super) restart_safe: bool,
}

/// Everything of a [`RunState`] that outlives the process, besides the snapshot.
#[derive(Serialize, Deserialize)]
pub(super) struct StoredRun {
    pub(super) run_id: String,
    pub(super) scope: StoredScope,
    pub(super) parent_call_id: Option<String>,
    pub(super) restart_safe: bool,
    pub(super) budgets: RunBudgets,
    pub(super) output: OutputAccumulator,
    pub(super) counts: [u64; 3],
    /// SHA-256 (hex) of the run's namespace descriptors and their tools.
    pub(super) namespaces: String,
    pub(super) landed: Vec<(u32, StoredReply)>,
    pub(super) in_flight: BTreeMap<u32, StoredCall>,
    pub(super) yields: Vec<u32>,
    pub(super) value: Option<Value>,
    pub(super) value_bytes: u64,
    pub(super) code: String,
    pub(super) typescript: bool,
    pub(super) next_call: u64,
    /// How long before sealing the snapshot was captured (ms), when the run's clock had started.
    pub(super) captured_ago_ms: Option<u64>,
    /// When it was sealed (Unix ms, the sealer's clock).
    pub(super) sealed_at_ms: u64,
}

pub(super) fn namespaces_digest(run: &RunState) -> String {
    let descriptors = serde_json::to_vec(&run.namespaces.descriptors()).unwrap_or_default();
    let tools: BTreeMap<&String, &BTreeMap<String, String>> = run.namespace_tools.iter().collect();
    let tools = serde_json::to_vec(&tools).unwrap_or_default();
    envelope::identity(&[&descriptors, &tools]).iter().map(|b| format!("{b:02x}")).collect()
}

/// Opens a claimed record into a run state ready for `resume`.
pub(super) async fn restore_state(
    cm: &CodeMode,
    shared: &Arc<Shared>,
    scope: &RunScope,
    claimed: Claimed,
    abort: &AbortSignal,
) -> Result<Box<RunState>, Box<CodeModeResult>> {
    let refuse = |message: String| Box::new(cm.fail(None, CodeModeErrorCode::InvalidInput, message));
    let opened = envelope::open(&shared.key, &shared.module, &shared.catalog, &claimed.sealed)
        .map_err(|e| refuse(format!("code mode run cannot be resumed here: {e}.")))?;
    let state: StoredRun = serde_json::from_slice(&opened.state).map_err(|_| {
        refuse("code mode run cannot be resumed here: its stored state is unreadable.".into())
    })?;
    if state.scope.session_id != scope.session_id {
        return Err(refuse(OTHER_SESSION.into()));
    }
    if state.scope.agent_run_id != scope.agent_run_id {
        return Err(refuse(OTHER_AGENT_RUN.into()));
    }
    let config = cm.config();
    let deadline = Instant::now() + Duration::from_millis(config.timeout_ms());
    let language =
        if state.typescript { codemode_ts::Language::TypeScript } else { codemode_ts::Language::JavaScript };
    let source = match prepare::prepare(state.code.clone(), language, deadline, abort).await {
        Ok(source) if source.is_ok() => source,
        Ok(_) => {
            return Err(refuse("code mode run cannot be resumed here: its cell no longer prepares.".into()));
        }
        Err(NotPrepared::Aborted) => {
            return Err(Box::new(cm.fail(None, CodeModeErrorCode::Aborted, "code mode run was aborted.")));
        }
        Err(NotPrepared::Timeout) => {
            return Err(Box::new(cm.fail(
                None,
                CodeModeErrorCode::Timeout,
                "code mode run timed out while it was restored.",
            )));
        }
        Err(NotPrepared::Unavailable(reason)) => {
            return Err(Box::new(cm.fail(
                None,
                CodeModeErrorCode::RuntimeUnavailable,
                format!("code mode runtime is unavailable: {reason}"),
            )));
        }
    };
    let mut restored_scope = RunScope::new(state.scope.session_id.clone(), state.scope.agent_run_id.clone());
    restored_scope.agent_id = state.scope.agent_id.clone();
    restored_scope.session_key = state.scope.session_key.clone();
    restored_scope.call_id = state.scope.call_id.clone();
    restored_scope.restart_safe = state.scope.restart_safe;
    let mut run = Box::new(RunState::new(
        state.run_id.clone(),
        restored_scope.clone(),
        state.restart_safe,
        config,
        Arc::new(source),
    ));
    cm.add_namespaces(&mut run, &restored_scope);
    if namespaces_digest(&run) != state.namespaces {
        return Err(refuse(
            "code mode run cannot be resumed here: it was suspended with other namespaces visible.".into(),
        ));
    }
    let snapshot = Snapshot::from_bytes(&opened.snapshot)
        .and_then(|s| match state.captured_ago_ms {
            Some(ago) => {
                let since = unix_ms().saturating_sub(state.sealed_at_ms);
                s.recaptured(Duration::from_millis(ago.saturating_add(since)))
            }
            None => Ok(s),
        })
        .map_err(|e| refuse(format!("code mode run could not be restored: {e}")))?;
    run.parent_call_id = state.parent_call_id;
    run.claimed = true;
    run.cell = Some((state.code, state.typescript));
    {
        let mut ledger = lock(&run.ledger);
        ledger.budgets = state.budgets;
        ledger.output = state.output;
    }
    let [search, describe, call] = state.counts;
    run.counts = Counters::resume(Counts { search, describe, call }, state.next_call);
    run.landed = state
        .landed
        .into_iter()
        .map(|(id, r)| {
            let reply = match r {
                StoredReply::Resolve(json) => Delivery::Resolve(json),
                StoredReply::Reject(message, code) => Delivery::Reject { message, code },
            };
            (id, reply)
        })
        .collect();
    for (id, call) in state.in_flight {
        if let Some(shape) = call.shape {
            run.shapes.insert(id, shape);
        }
        run.in_flight.insert(id, PendingToolCall::new(call.call_id, call.tool_id, call.input));
    }
    run.yields = state.yields;
    run.value = state.value;
    run.value_bytes = state.value_bytes;
    run.snapshot = Some(snapshot);
    // What landed since the run was parked, then the calls still registered; an in-flight call
    // that is neither was settled by a claimant that stopped before parking: its owner is gone.
    let already: Vec<u32> = run.landed.iter().map(|(id, _)| *id).collect();
    for (id, bytes) in claimed.landed {
        run.consumed.push(id);
        if run.in_flight.contains_key(&id) && !already.contains(&id) {
            run.landed.push((id, decode_reply(&bytes)));
        }
    }
    let landed: Vec<u32> = run.landed.iter().map(|(id, _)| *id).collect();
    let registered: HashMap<u32, String> = claimed.calls.into_iter().collect();
    let open: Vec<u32> = run.in_flight.keys().copied().filter(|id| !landed.contains(id)).collect();
    for id in open {
        match registered.get(&id) {
            Some(owner) => {
                run.remote.insert(id, owner.clone());
            }
            None => settle_orphan(cm, &mut run, id),
        }
    }
    Ok(run)
}

/// Settles a call whose process stopped: dispatched again in a restart-safe run, else `interrupted`.
pub(super) fn settle_orphan(cm: &CodeMode, run: &mut RunState, id: u32) {
    run.remote.remove(&id);
    let again = run.restart_safe && run.shapes.contains_key(&id);
    if again && let Some(reply) = cm.redispatch(run, id) {
        run.landed.push((id, reply));
    } else if !again {
        run.landed.push((id, interrupted_reply()));
    }
}
