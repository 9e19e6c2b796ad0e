//! The runtime over a shared [`RunStore`]: sealing a run into a record and back, landing this
//! process's nested-call results in the store, watching calls that run elsewhere, and this
//! process's lease.
//!
//! The record format and opening a claimed record are in `record`.
//!
//! Rules (see `docs/serve.md`, "Running more than one gateway"):
//! - a suspended run is a sealed record; any runtime with the same guest module, catalog and state
//!   key can claim it for one `wait`;
//! - a nested call keeps running in the process that dispatched it; its result is written to the
//!   store when it settles, for whichever process serves the next `wait`;
//! - every process renews a lease while it lives; a call whose owner's lease lapsed (the process
//!   died) is settled by the claimant: dispatched again if the run is restart-safe (its calls are
//!   read-only by construction: side-effecting tools are refused before they run), otherwise
//!   rejected in the guest with code `interrupted`;
//! - a landed result is removed from the store when the claimant that took it up parks the run again
//!   (or the run ends), so it is delivered once;
//! - cancellation and TTL act on the store; a process drops its calls for a run that is gone at its
//!   next lease renewal.

use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasher, RandomState};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use codemode_bridge::lock;
use codemode_core::{CodeModeErrorCode, CodeModeResult, FailedResult, Language, WaitInput, WaitingResult};
use codemode_sandbox::Delivery;
use codemode_sandbox::Snapshot;
use tokio::sync::{Notify, mpsc};
use tokio::task::AbortHandle;

use super::envelope::{self, Identity, StateKey};
use super::{ALREADY_RESUMING, OTHER_AGENT_RUN, OTHER_SESSION, TOO_MANY, UNAVAILABLE};
use super::{
    ClaimError, LEASE_EVERY, LEASE_TTL, ParkChanges, Parked, RunRecord, RunStore, StoreError, claim_hold,
    unix_ms,
};
use crate::abort::AbortSignal;
use crate::host::RunScope;
use crate::run::{Landed, RunState};
use crate::runtime::CodeMode;
use crate::runtime::drive::Flow;

mod record;

pub(crate) use record::interrupted_reply;
use record::{
    StoredCall, StoredReply, StoredRun, StoredScope, decode_reply, encode_reply, namespaces_digest,
    restore_state, settle_orphan,
};

/// How often a `wait` looks in the store for results that landed in another process.
const POLL_EVERY: Duration = Duration::from_millis(20);
/// Most run ids a runtime remembers having parked (a bookkeeping bound: runs that ended in another
/// process are forgotten here when the bound or the longest TTL is reached).
const MAX_PARKED_HERE: usize = 10_000;
/// The longest `snapshotTtlSeconds`.
const MAX_TTL: Duration = Duration::from_secs(86_400);
/// How often a `wait` checks the leases of the processes running its calls.
const LEASE_CHECK_EVERY: Duration = Duration::from_millis(500);

/// The message of a nested call that was in flight in a process that stopped.
pub(crate) const INTERRUPTED: &str = "the tool call was interrupted: the gateway process running it stopped before it answered, \
                               so it may or may not have taken effect; check before retrying it";

/// A shared store as one runtime uses it.
pub(crate) struct Shared {
    pub store: Arc<dyn RunStore>,
    key: StateKey,
    /// This process's name in the store (owner of its calls, holder of its claims).
    pub instance: String,
    module: Identity,
    catalog: Identity,
    /// Calls this process runs for parked runs: their tasks, by run id and guest call id.
    local: Mutex<HashMap<String, BTreeMap<u32, AbortHandle>>>,
    /// Woken when a result of this process lands for a run.
    wake: Mutex<HashMap<String, Arc<Notify>>>,
    /// Runs this runtime parked and has not seen end (when parked), bounded by
    /// [`MAX_PARKED_HERE`] and the longest TTL.
    parked_here: Mutex<HashMap<String, Instant>>,
    heartbeat: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared").field("store", &self.store).field("instance", &self.instance).finish()
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        self.stop();
    }
}

fn store_failure(cm: &CodeMode, run: Option<&RunState>, e: &StoreError) -> CodeModeResult {
    cm.fail(run, CodeModeErrorCode::RuntimeUnavailable, format!("code mode {e}; retry later."))
}

impl Shared {
    pub(crate) fn new(
        store: Arc<dyn RunStore>,
        key: StateKey,
        module: Identity,
        catalog: Identity,
    ) -> Shared {
        let salt = RandomState::new().hash_one((std::process::id(), unix_ms()));
        Shared {
            store,
            key,
            instance: format!("gw-{}-{salt:016x}", std::process::id()),
            module,
            catalog,
            local: Mutex::default(),
            wake: Mutex::default(),
            parked_here: Mutex::default(),
            heartbeat: Mutex::new(None),
        }
    }

    /// Stops renewing the lease and cancels this process's calls (process shutdown: the runs stay in
    /// the store; another process settles the calls as interrupted once the lease lapses).
    pub(crate) fn stop(&self) {
        if let Some(task) = self.heartbeat.lock().unwrap_or_else(|p| p.into_inner()).take() {
            task.abort();
        }
        let local = std::mem::take(&mut *self.local.lock().unwrap_or_else(|p| p.into_inner()));
        for task in local.values().flat_map(|calls| calls.values()) {
            task.abort();
        }
    }

    /// Takes the lease now (so calls registered next are never seen as orphaned) and keeps it
    /// renewed; each renewal also drops local calls of runs that are gone (cancelled, expired,
    /// ended elsewhere).
    async fn ensure_lease(self: &Arc<Self>) -> Result<(), StoreError> {
        if self.heartbeat.lock().unwrap_or_else(|p| p.into_inner()).as_ref().is_some_and(|t| !t.is_finished())
        {
            return Ok(());
        }
        self.store.heartbeat(&self.instance, LEASE_TTL).await?;
        let weak = Arc::downgrade(self);
        let task = tokio::spawn(async move {
            loop {
                tokio::time::sleep(LEASE_EVERY).await;
                let Some(shared) = weak.upgrade() else { return };
                if let Err(e) = shared.store.heartbeat(&shared.instance, LEASE_TTL).await {
                    tracing::warn!(error = %e, "run store: renewing this process's lease failed");
                    continue;
                }
                shared.drop_gone_runs().await;
            }
        });
        let mut slot = self.heartbeat.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(old) = slot.replace(task) {
            old.abort();
        }
        Ok(())
    }

    async fn drop_gone_runs(&self) {
        let runs: Vec<String> =
            self.local.lock().unwrap_or_else(|p| p.into_inner()).keys().cloned().collect();
        for run_id in runs {
            if let Ok(false) = self.store.contains(&run_id).await {
                self.abort_local(&run_id);
            }
        }
    }

    /// Cancels this process's calls for `run_id`.
    pub(crate) fn abort_local(&self, run_id: &str) {
        let calls = self.local.lock().unwrap_or_else(|p| p.into_inner()).remove(run_id);
        for task in calls.into_iter().flat_map(BTreeMap::into_values) {
            task.abort();
        }
        self.wake.lock().unwrap_or_else(|p| p.into_inner()).remove(run_id);
    }

    /// Whether this process runs calls for `run_id`.
    pub(crate) fn runs_calls_for(&self, run_id: &str) -> bool {
        self.local.lock().unwrap_or_else(|p| p.into_inner()).contains_key(run_id)
    }

    /// Whether this runtime parked `run_id` and has not seen it end.
    pub(crate) fn parked_here(&self, run_id: &str) -> bool {
        self.parked_here.lock().unwrap_or_else(|p| p.into_inner()).contains_key(run_id)
    }

    /// Runs this runtime parked and has not seen end.
    pub(crate) fn parked_here_count(&self) -> usize {
        let mut parked = self.parked_here.lock().unwrap_or_else(|p| p.into_inner());
        parked.retain(|_, at| at.elapsed() < MAX_TTL);
        parked.len()
    }

    fn note_parked(&self, run_id: &str) {
        let mut parked = self.parked_here.lock().unwrap_or_else(|p| p.into_inner());
        if parked.len() >= MAX_PARKED_HERE {
            parked.retain(|_, at| at.elapsed() < MAX_TTL);
            if parked.len() >= MAX_PARKED_HERE {
                parked.clear();
            }
        }
        parked.insert(run_id.to_owned(), Instant::now());
    }

    pub(crate) fn note_gone(&self, run_id: &str) {
        self.parked_here.lock().unwrap_or_else(|p| p.into_inner()).remove(run_id);
    }

    fn notify(&self, run_id: &str) -> Arc<Notify> {
        self.wake.lock().unwrap_or_else(|p| p.into_inner()).entry(run_id.to_owned()).or_default().clone()
    }

    /// Removes a finished run from the store, in the background when no runtime is at hand.
    pub(crate) fn forget(self: &Arc<Self>, run_id: &str) {
        self.abort_local(run_id);
        self.note_gone(run_id);
        let (shared, run_id) = (self.clone(), run_id.to_owned());
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move {
                if let Err(e) = shared.store.remove(&run_id).await {
                    tracing::warn!(error = %e, run = %run_id, "run store: removing a finished run failed");
                }
            });
        }
    }

    /// Seals `run` (whose snapshot is set) into a record.
    fn seal(&self, run: &RunState, snapshot: &Snapshot) -> RunRecord {
        let ledger = lock(&run.ledger);
        let (code, typescript) = run.cell.clone().unwrap_or_default();
        let state = StoredRun {
            run_id: run.run_id.clone(),
            scope: StoredScope {
                agent_id: run.scope.agent_id.clone(),
                session_id: run.scope.session_id.clone(),
                session_key: run.scope.session_key.clone(),
                agent_run_id: run.scope.agent_run_id.clone(),
                call_id: run.scope.call_id.clone(),
                restart_safe: run.scope.restart_safe,
            },
            parent_call_id: run.parent_call_id.clone(),
            restart_safe: run.restart_safe,
            budgets: ledger.budgets.clone(),
            output: ledger.output.clone(),
            counts: {
                let counts = run.counts.counts();
                [counts.search, counts.describe, counts.call]
            },
            namespaces: namespaces_digest(run),
            landed: run
                .landed
                .iter()
                .map(|(id, reply)| {
                    let stored = match reply {
                        Delivery::Resolve(json) => StoredReply::Resolve(json.clone()),
                        Delivery::Reject { message, code } => {
                            StoredReply::Reject(message.clone(), code.clone())
                        }
                    };
                    (*id, stored)
                })
                .collect(),
            in_flight: run
                .in_flight
                .iter()
                .map(|(id, p)| {
                    let call = StoredCall {
                        call_id: p.call_id.clone(),
                        tool_id: p.tool_id.clone(),
                        input: p.input.clone(),
                        shape: run.shapes.get(id).copied(),
                    };
                    (*id, call)
                })
                .collect(),
            yields: run.yields.clone(),
            value: run.value.clone(),
            value_bytes: run.value_bytes,
            code,
            typescript,
            next_call: run.counts.numbered(),
            captured_ago_ms: snapshot
                .captured_ago()
                .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
            sealed_at_ms: unix_ms(),
        };
        drop(ledger);
        let state = serde_json::to_vec(&state).unwrap_or_default();
        RunRecord {
            run_id: run.run_id.clone(),
            session_id: run.scope.session_id.clone(),
            agent_run_id: run.scope.agent_run_id.clone(),
            sealed: envelope::seal(&self.key, &self.module, &self.catalog, &state, snapshot.as_bytes()),
        }
    }
}

/// Parks `run` in the shared store and returns `waiting` (or `failed`).
pub(crate) async fn park(
    cm: &CodeMode,
    shared: &Arc<Shared>,
    mut run: Box<RunState>,
    snapshot: Snapshot,
    waiting: WaitingResult,
    ttl: Duration,
) -> CodeModeResult {
    // Results already sent by this process's calls are part of the record.
    while let Ok(landed) = run.rx.try_recv() {
        run.landed.push(landed);
    }
    let landed: Vec<u32> = run.landed.iter().map(|(id, _)| *id).collect();
    let register: Vec<(u32, String)> = run
        .in_flight
        .keys()
        .filter(|id| !landed.contains(id) && !run.remote.contains_key(id))
        .map(|id| (*id, shared.instance.clone()))
        .collect();
    if !register.is_empty()
        && let Err(e) = shared.ensure_lease().await
    {
        return store_failure(cm, Some(&run), &e);
    }
    let record = shared.seal(&run, &snapshot);
    let changes = ParkChanges { new: !run.claimed, consumed: std::mem::take(&mut run.consumed), register };
    let registered = !changes.register.is_empty();
    match shared.store.park(record, ttl, changes).await {
        Ok(Parked::Stored) => {}
        Ok(Parked::Full) => {
            return CodeModeResult::Failed(FailedResult::new(
                TOO_MANY,
                Some(CodeModeErrorCode::InvalidInput),
                waiting.output,
                waiting.telemetry,
            ));
        }
        Ok(Parked::Gone) => {
            return CodeModeResult::Failed(FailedResult::new(
                UNAVAILABLE,
                Some(CodeModeErrorCode::InvalidInput),
                waiting.output,
                waiting.telemetry,
            ));
        }
        Err(e) => {
            let mut failed = store_failure(cm, None, &e);
            if let CodeModeResult::Failed(f) = &mut failed {
                f.output = waiting.output;
                f.telemetry = waiting.telemetry;
            }
            return failed;
        }
    }
    shared.note_parked(&run.run_id);
    if registered || !run.tasks.is_empty() {
        // This process's calls go on; their results land in the store.
        let tasks: BTreeMap<u32, AbortHandle> = std::mem::take(&mut run.tasks).into_iter().collect();
        let (_tx, rx) = mpsc::unbounded_channel();
        let rx = std::mem::replace(&mut run.rx, rx);
        let run_id = run.run_id.clone();
        shared
            .local
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(run_id.clone())
            .or_default()
            .extend(tasks);
        let weak = Arc::downgrade(shared);
        tokio::spawn(forward(weak, run_id, rx));
    }
    drop(run);
    CodeModeResult::Waiting(waiting)
}

/// Lands the results of this process's calls for a parked run in the store, as they settle.
async fn forward(shared: std::sync::Weak<Shared>, run_id: String, mut rx: mpsc::UnboundedReceiver<Landed>) {
    // The run state (and its sender) is gone: the channel ends when the last call settles.
    while let Some((id, reply)) = rx.recv().await {
        let Some(shared) = shared.upgrade() else { return };
        match shared.store.land(&run_id, id, &shared.instance, encode_reply(&reply)).await {
            Ok(true) => {}
            Ok(false) => {
                tracing::debug!(run = %run_id, call = id, "result of a call no longer registered dropped")
            }
            Err(e) => tracing::warn!(error = %e, run = %run_id, "run store: landing a result failed"),
        }
        {
            let mut local = shared.local.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(calls) = local.get_mut(&run_id) {
                calls.remove(&id);
                if calls.is_empty() {
                    local.remove(&run_id);
                }
            }
        }
        shared.notify(&run_id).notify_waiters();
    }
}

/// Removes the run from the store when a `wait` ends without parking it again.
struct Finish {
    shared: Arc<Shared>,
    run_id: Option<String>,
}

impl Drop for Finish {
    fn drop(&mut self) {
        if let Some(run_id) = self.run_id.take() {
            self.shared.forget(&run_id);
        }
    }
}

/// `wait` over a shared store.
pub(crate) async fn wait(
    cm: &CodeMode,
    shared: &Arc<Shared>,
    scope: &RunScope,
    input: WaitInput,
    abort: &AbortSignal,
) -> CodeModeResult {
    let config = cm.config();
    let hold = claim_hold(config.timeout_ms());
    let claimed = match shared
        .store
        .claim(&input.run_id, &scope.session_id, &scope.agent_run_id, &shared.instance, hold)
        .await
    {
        Ok(claimed) => claimed,
        Err(ClaimError::Store(e)) => return store_failure(cm, None, &e),
        Err(e) => {
            let message = match e {
                ClaimError::OtherSession => OTHER_SESSION,
                ClaimError::OtherAgentRun => OTHER_AGENT_RUN,
                ClaimError::AlreadyResuming => ALREADY_RESUMING,
                _ => UNAVAILABLE,
            };
            return cm.fail(None, CodeModeErrorCode::InvalidInput, message);
        }
    };
    let mut run = match restore_state(cm, shared, scope, claimed, abort).await {
        Ok(run) => run,
        Err(result) => {
            if let Err(e) = shared.store.release(&input.run_id, &shared.instance).await {
                tracing::warn!(error = %e, "run store: releasing a claim failed");
            }
            return *result;
        }
    };
    let mut finish = Finish { shared: shared.clone(), run_id: Some(run.run_id.clone()) };
    let result = cm.resume(&mut run, abort).await;
    finish.run_id = None;
    let result = match result {
        Ok(Flow::Done(result)) => result,
        Ok(Flow::Suspend(_)) => {
            cm.fail(Some(&run), CodeModeErrorCode::InternalError, "internal error: unexpected suspension")
        }
        Err((vm, reason)) => return cm.suspend(run, vm, reason).await,
    };
    // A terminal result: the run leaves the store before the result is returned.
    shared.abort_local(&run.run_id);
    shared.note_gone(&run.run_id);
    if let Err(e) = shared.store.remove(&run.run_id).await {
        tracing::warn!(error = %e, run = %run.run_id, "run store: removing a finished run failed");
    }
    result
}

/// Waits until a call lands (here or, through the store, in another process), the deadline, or an
/// abort; settles calls whose process stopped.
pub(crate) async fn next_landed(
    cm: &CodeMode,
    shared: &Arc<Shared>,
    run: &mut RunState,
    deadline: Instant,
    abort: &AbortSignal,
) -> crate::runtime::drive::Wake {
    use crate::runtime::drive::Wake;
    let notify = shared.notify(&run.run_id);
    let mut next_lease_check = Instant::now();
    loop {
        if !run.landed.is_empty() {
            return Wake::Landed;
        }
        let poll = (Instant::now() + POLL_EVERY).min(deadline);
        tokio::select! {
            biased;
            _ = abort.aborted() => return Wake::Aborted,
            landed = run.rx.recv() => {
                run.landed.extend(landed);
                while let Ok(more) = run.rx.try_recv() {
                    run.landed.push(more);
                }
                continue;
            }
            _ = notify.notified() => {}
            _ = tokio::time::sleep_until(poll.into()) => {}
        }
        if Instant::now() >= deadline {
            return Wake::Deadline;
        }
        if run.remote.is_empty() {
            continue;
        }
        let progress = match shared.store.progress(&run.run_id).await {
            Ok(progress) => progress,
            Err(e) => {
                tracing::warn!(error = %e, "run store: reading landed results failed");
                continue;
            }
        };
        for (id, bytes) in progress.landed {
            if run.remote.remove(&id).is_some() {
                run.consumed.push(id);
                run.landed.push((id, decode_reply(&bytes)));
            }
        }
        if Instant::now() >= next_lease_check {
            next_lease_check = Instant::now() + LEASE_CHECK_EVERY;
            let remote: Vec<(u32, String)> = run.remote.iter().map(|(k, v)| (*k, v.clone())).collect();
            for (id, owner) in remote {
                if owner == shared.instance && shared.runs_calls_for(&run.run_id) {
                    continue;
                }
                match shared.store.interrupt(&run.run_id, id, &owner).await {
                    Ok(true) => settle_orphan(cm, run, id),
                    Ok(false) => {}
                    Err(e) => tracing::warn!(error = %e, "run store: checking a call's owner failed"),
                }
            }
        }
    }
}

/// Language of a cell as stored.
pub(crate) fn is_typescript(language: Language) -> bool {
    language == Language::TypeScript
}
