//! Driving a run: `exec` and `wait`, the pump that delivers results as they land, suspension
//! into the run store and resumption from it.

use std::hash::{BuildHasher, RandomState};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use codemode_bridge::{BootContext, CellValueError, DeliveryExt, OutputRefusal, lock};
use codemode_core::{
    CodeModeErrorCode, CodeModeResult, ExecInput, FailedResult, NamespaceContext, NamespaceRegistration,
    ScopeValue, WaitInput, WaitReason, WaitingResult,
};
use codemode_sandbox::{Delivery, Step};
use serde_json::Value;

use super::CodeMode;
use super::report::{guest_error_message, unavailable, unreachable_flow};
use crate::abort::AbortSignal;
use crate::admission::Refusal;
use crate::host::RunScope;
use crate::prepare::{self, NotPrepared};
use crate::run::{Landed, RunState};
use crate::store::local::{RunStore as LocalRuns, TOO_MANY};
use crate::store::shared;
use crate::vm::{Origin, Placement, StepAnswer, VmThread};

/// How the pump left a run.
pub(crate) enum Flow {
    Done(CodeModeResult),
    Suspend(WaitReason),
}

impl CodeMode {
    /// `exec` with raw JSON arguments, as the model sent them.
    pub async fn exec_json(&self, scope: &RunScope, arguments: &Value) -> CodeModeResult {
        match ExecInput::from_json(arguments) {
            Ok(input) => self.exec(scope, input).await,
            Err(e) => self.fail(None, CodeModeErrorCode::InvalidInput, e.message),
        }
    }

    /// `wait` with raw JSON arguments.
    pub async fn wait_json(&self, scope: &RunScope, arguments: &Value) -> CodeModeResult {
        match WaitInput::from_json(arguments) {
            Ok(input) => self.wait(scope, input).await,
            Err(e) => self.fail(None, CodeModeErrorCode::InvalidInput, e.message),
        }
    }

    /// Runs a cell. Never panics and never errors: every failure is a `failed` result.
    pub async fn exec(&self, scope: &RunScope, input: ExecInput) -> CodeModeResult {
        self.exec_with(scope, input, AbortSignal::new()).await
    }

    /// Continues a suspended run.
    pub async fn wait(&self, scope: &RunScope, input: WaitInput) -> CodeModeResult {
        self.wait_with(scope, input, AbortSignal::new()).await
    }

    /// [`CodeMode::exec`] with a cancellation signal.
    pub async fn exec_with(&self, scope: &RunScope, input: ExecInput, abort: AbortSignal) -> CodeModeResult {
        let inner = &self.inner;
        if let Some(refused) = self.refuse_if_disabled() {
            return refused;
        }
        let cell = match input.validate(&inner.config) {
            Ok(cell) => cell,
            Err(e) => return self.fail(None, CodeModeErrorCode::InvalidInput, e.message),
        };
        let sandbox = match &inner.sandbox {
            Ok(sandbox) => sandbox.clone(),
            Err(reason) => {
                return self.fail(
                    None,
                    CodeModeErrorCode::RuntimeUnavailable,
                    format!("code mode runtime is unavailable: {reason}"),
                );
            }
        };
        if abort.is_aborted() {
            return self.aborted(None);
        }
        let language = cell.language;
        // Preparation counts against the run's time budget, off the async workers.
        let deadline = Instant::now() + Duration::from_millis(inner.config.timeout_ms());
        let source =
            inner.shared.is_some().then(|| (cell.code.clone(), shared::is_typescript(cell.language)));
        let stripped = match prepare::prepare(cell.code, language, deadline, &abort).await {
            Ok(stripped) => stripped,
            Err(NotPrepared::Aborted) => return self.aborted(None),
            Err(NotPrepared::Timeout) => {
                let message = format!(
                    "code mode run timed out: preparing the cell (parsing{}) took longer than timeoutMs ({} ms). \
                     Send a smaller cell.",
                    if language == codemode_ts::Language::TypeScript {
                        " and TypeScript stripping"
                    } else {
                        ""
                    },
                    inner.config.timeout_ms()
                );
                return self.fail(None, CodeModeErrorCode::Timeout, message);
            }
            Err(NotPrepared::Unavailable(reason)) => {
                return self.fail(
                    None,
                    CodeModeErrorCode::RuntimeUnavailable,
                    format!("code mode runtime is unavailable: {reason}"),
                );
            }
        };
        if !stripped.is_ok() {
            return self.fail(None, CodeModeErrorCode::InvalidInput, stripped.error_message());
        }
        if abort.is_aborted() {
            return self.aborted(None);
        }
        let run_id = self.new_run_id();
        let restart_safe = cell.restart_safe || scope.restart_safe;
        let file = stripped.file_name();
        let body = stripped.code.clone();
        let mut run =
            Box::new(RunState::new(run_id, scope.clone(), restart_safe, &inner.config, Arc::new(stripped)));
        run.cell = source;
        self.add_namespaces(&mut run, scope);
        let (sandbox, script) = match &inner.without_namespaces {
            Some(plain) if run.namespaces.namespaces().is_empty() => (plain.clone(), None),
            _ => {
                let mut boot = BootContext::new();
                boot.namespaces = run.namespaces.clone();
                (sandbox, Some(boot.namespaces_script()))
            }
        };
        // A VM slot and its memory from the process-wide budget, held until this call returns. Time
        // spent queued for it does not count against timeoutMs (preparation does).
        let remaining = deadline.saturating_duration_since(Instant::now());
        let _ticket = match self.admit(&abort).await {
            Ok(ticket) => ticket,
            Err(refused) => return self.refused(Some(&*run), refused),
        };
        let deadline = Instant::now() + remaining;
        let responder = self.responder(&run, &abort);
        let started = tokio::select! {
            biased;
            _ = abort.aborted() => return self.aborted(Some(&*run)),
            started = VmThread::start_and_boot(
                sandbox,
                run.ledger.clone(),
                deadline,
                responder,
                (script, body, file),
                self.placement(&abort),
            ) => started,
        };
        let (vm, answer) = match started {
            Ok(started) => started,
            Err(e) => return self.fail(Some(&*run), CodeModeErrorCode::RuntimeUnavailable, unavailable(&e)),
        };
        let flow = self.pump(&mut run, &vm, answer, deadline, &abort).await;
        match flow {
            Flow::Done(result) => result,
            Flow::Suspend(reason) => self.suspend(run, vm, reason).await,
        }
    }

    /// [`CodeMode::wait`] with a cancellation signal.
    pub async fn wait_with(&self, scope: &RunScope, input: WaitInput, abort: AbortSignal) -> CodeModeResult {
        let inner = &self.inner;
        if let Some(refused) = self.refuse_if_disabled() {
            return refused;
        }
        // Admitted before the run is taken: a refusal leaves it parked for a later `wait`.
        let _ticket = match self.admit(&abort).await {
            Ok(ticket) => ticket,
            Err(refused) => return self.refused(None, refused),
        };
        if let Some(shared) = &inner.shared {
            return shared::wait(self, shared, scope, input, &abort).await;
        }
        let mut run = match inner.store.take_for_wait(&input.run_id, scope) {
            Ok(run) => run,
            Err(message) => return self.fail(None, CodeModeErrorCode::InvalidInput, message),
        };
        // If this future is dropped mid-resume, the run is discarded rather than left "being resumed".
        let mut guard = ResumeGuard { store: &inner.store, run_id: Some(run.run_id.clone()) };
        let result = self.resume(&mut run, &abort).await;
        let result = match result {
            Ok(Flow::Suspend(_)) => unreachable_flow(),
            Ok(Flow::Done(result)) => result,
            Err((vm, reason)) => {
                guard.run_id = None;
                self.suspend(run, vm, reason).await
            }
        };
        drop(guard);
        result
    }

    /// Restores and drives a run. `Err` carries a VM to suspend (the run goes back to the store).
    pub(crate) async fn resume(
        &self,
        run: &mut RunState,
        abort: &AbortSignal,
    ) -> Result<Flow, (VmThread, WaitReason)> {
        let inner = &self.inner;
        let sandbox = match &inner.sandbox {
            Ok(sandbox) => sandbox.clone(),
            Err(reason) => {
                return Ok(Flow::Done(self.fail(
                    Some(&*run),
                    CodeModeErrorCode::RuntimeUnavailable,
                    format!("code mode runtime is unavailable: {reason}"),
                )));
            }
        };
        let deadline = Instant::now() + Duration::from_millis(inner.config.timeout_ms());
        let Some(snapshot) = run.snapshot.take() else {
            return Ok(Flow::Done(self.fail(
                Some(&*run),
                CodeModeErrorCode::InternalError,
                "the run has no snapshot",
            )));
        };
        // A run that saw no namespace started from (and was snapshotted against) that base image.
        let sandbox = match &inner.without_namespaces {
            Some(plain) if plain.identity() == snapshot.identity() => plain.clone(),
            _ => sandbox,
        };
        let origin = Origin::Restore(snapshot);
        let responder = self.responder(run, abort);
        let vm = match VmThread::start(
            sandbox,
            origin,
            run.ledger.clone(),
            deadline,
            responder,
            self.placement(abort),
        )
        .await
        {
            Ok(vm) => vm,
            Err(e) => {
                return Ok(Flow::Done(self.fail(
                    Some(&*run),
                    CodeModeErrorCode::InvalidInput,
                    format!("code mode run could not be restored: {e}"),
                )));
            }
        };
        let mut deliveries: Vec<Landed> = run.yields.drain(..).map(|id| (id, Delivery::null())).collect();
        if deliveries.is_empty() && run.landed.is_empty() && !run.in_flight.is_empty() {
            match self.wait_for_landed(run, &vm, deadline, abort).await {
                Wake::Landed => {}
                Wake::Deadline => return Err((vm, WaitReason::PendingTools)),
                Wake::Aborted => return Ok(Flow::Done(self.aborted(Some(&*run)))),
            }
        }
        deliveries.append(&mut run.landed);
        if Instant::now() >= deadline {
            run.landed = deliveries;
            return Err((vm, WaitReason::PendingTools));
        }
        let answer = tokio::select! {
            biased;
            _ = abort.aborted() => return Ok(Flow::Done(self.aborted(Some(&*run)))),
            answer = self.deliver(run, &vm, deliveries) => answer,
        };
        match self.pump(run, &vm, answer, deadline, abort).await {
            Flow::Done(result) => Ok(Flow::Done(result)),
            Flow::Suspend(reason) => Err((vm, reason)),
        }
    }

    /// Drives the guest: dispatch its calls, deliver results as they land, run jobs; until it
    /// completes, fails, yields, or reaches the deadline with calls pending.
    async fn pump(
        &self,
        run: &mut RunState,
        vm: &VmThread,
        mut answer: StepAnswer,
        deadline: Instant,
        abort: &AbortSignal,
    ) -> Flow {
        loop {
            // Past maxOutputBytes the run fails, even if the guest caught the refusal or died of it.
            if lock(&run.ledger).output.limit_exceeded() {
                let limit = self.inner.config.max_output_bytes();
                let message = OutputRefusal::LimitExceeded { limit }.to_string();
                return Flow::Done(self.fail(Some(&*run), CodeModeErrorCode::OutputLimitExceeded, message));
            }
            match answer.step {
                Err(e) => return Flow::Done(self.sandbox_failure(run, e)),
                Ok(Step::Failed(e)) => {
                    let message = guest_error_message(&e, &run.source);
                    return Flow::Done(self.fail(Some(&*run), None::<CodeModeErrorCode>, message));
                }
                Ok(Step::Completed { value_json }) => {
                    if run.value.is_none() {
                        let max = self.inner.config.max_output_bytes();
                        match codemode_bridge::decode_cell_value_within(value_json.as_deref(), max) {
                            Ok(cell) => {
                                run.value = Some(cell.value);
                                run.value_bytes = cell.bytes;
                            }
                            Err(CellValueError::TooLarge { bytes, .. }) => {
                                return Flow::Done(self.value_too_large(run, bytes));
                            }
                            Err(e) => {
                                let message = format!("the cell's value could not be decoded: {e}");
                                return Flow::Done(self.fail(
                                    Some(&*run),
                                    CodeModeErrorCode::InternalError,
                                    message,
                                ));
                            }
                        }
                    }
                }
                Ok(Step::Pending { .. }) => {}
            }
            let mut ready: Vec<Landed> = Vec::new();
            for outcome in answer.calls {
                if let Err(message) = self.take_outcome(run, outcome, &mut ready) {
                    return Flow::Done(self.fail(
                        Some(&*run),
                        CodeModeErrorCode::RuntimeUnavailable,
                        message,
                    ));
                }
            }
            if abort.is_aborted() {
                return Flow::Done(self.aborted(Some(&*run)));
            }
            if !ready.is_empty() && Instant::now() >= vm.guest_deadline(deadline) {
                // Out of time before the guest could take the replies: keep them for `wait`.
                run.landed.extend(ready);
                return Flow::Suspend(WaitReason::PendingTools);
            }
            if !ready.is_empty() {
                answer = tokio::select! {
                    biased;
                    _ = abort.aborted() => return Flow::Done(self.aborted(Some(&*run))),
                    answer = self.deliver(run, vm, ready) => answer,
                };
                continue;
            }
            if let Some(value) = &run.value
                && run.in_flight.is_empty()
                && run.yields.is_empty()
            {
                let value = value.clone();
                return Flow::Done(self.completed(run, value));
            }
            if !run.yields.is_empty() {
                return Flow::Suspend(WaitReason::Yield);
            }
            if run.in_flight.is_empty() {
                return Flow::Done(self.fail(
                    Some(&*run),
                    CodeModeErrorCode::InternalError,
                    "the guest is pending without host work",
                ));
            }
            if run.restart_safe {
                // Restart-safe runs are never drained automatically: every continuation is a `wait`.
                return Flow::Suspend(WaitReason::PendingTools);
            }
            match self.wait_for_landed(run, vm, deadline, abort).await {
                Wake::Landed => {}
                Wake::Deadline => return Flow::Suspend(WaitReason::PendingTools),
                Wake::Aborted => return Flow::Done(self.aborted(Some(&*run))),
            }
            if Instant::now() >= deadline {
                return Flow::Suspend(WaitReason::PendingTools);
            }
            let landed = std::mem::take(&mut run.landed);
            answer = tokio::select! {
                biased;
                _ = abort.aborted() => return Flow::Done(self.aborted(Some(&*run))),
                answer = self.deliver(run, vm, landed) => answer,
            };
        }
    }

    /// [`Self::next_landed`], the time it waited given back to the guest's steps
    /// ([`VmThread::waited`]): waiting for tool calls does not use up the guest's `timeoutMs`.
    async fn wait_for_landed(
        &self,
        run: &mut RunState,
        vm: &VmThread,
        deadline: Instant,
        abort: &AbortSignal,
    ) -> Wake {
        let waiting = Instant::now();
        let wake = self.next_landed(run, deadline, abort).await;
        vm.waited(waiting.elapsed());
        wake
    }

    /// Waits until at least one call has landed (collecting every landed one), the deadline, or an
    /// abort.
    async fn next_landed(&self, run: &mut RunState, deadline: Instant, abort: &AbortSignal) -> Wake {
        if !run.landed.is_empty() {
            return Wake::Landed;
        }
        if let Some(shared) = &self.inner.shared
            && !run.remote.is_empty()
        {
            return shared::next_landed(self, shared, run, deadline, abort).await;
        }
        let first = tokio::select! {
            biased;
            _ = abort.aborted() => return Wake::Aborted,
            landed = run.rx.recv() => landed,
            _ = tokio::time::sleep_until(deadline.into()) => return Wake::Deadline,
        };
        run.landed.extend(first);
        while let Ok(more) = run.rx.try_recv() {
            run.landed.push(more);
        }
        if run.landed.is_empty() { Wake::Deadline } else { Wake::Landed }
    }

    /// Delivers replies, releasing their budgets and in-flight bookkeeping, then runs jobs.
    async fn deliver(&self, run: &mut RunState, vm: &VmThread, landed: Vec<Landed>) -> StepAnswer {
        let mut deliveries = Vec::with_capacity(landed.len());
        {
            let mut ledger = lock(&run.ledger);
            for (id, reply) in landed {
                ledger.budgets.on_delivered();
                run.in_flight.remove(&id);
                run.tasks.remove(&id);
                run.remote.remove(&id);
                run.shapes.remove(&id);
                deliveries.push((id, reply));
            }
        }
        vm.deliver(deliveries).await
    }

    fn placement<'a>(&self, abort: &'a AbortSignal) -> Placement<'a> {
        Placement { thread: self.inner.guest_thread, abort }
    }

    /// Takes a VM slot and `memoryLimitBytes` from the admission budget (queueing if needed).
    async fn admit(&self, abort: &AbortSignal) -> Result<crate::admission::Ticket, Refusal> {
        self.inner.admission.admit(self.inner.config.memory_limit_bytes(), abort).await
    }

    fn refused(&self, run: Option<&RunState>, refusal: Refusal) -> CodeModeResult {
        match refusal {
            Refusal::Aborted => self.aborted(run),
            Refusal::Busy(message) => self.fail(run, CodeModeErrorCode::RuntimeUnavailable, message),
        }
    }

    /// Forgets a run that ends without being parked (also in a shared store).
    fn forget(&self, run: &RunState) {
        match &self.inner.shared {
            Some(shared) if run.claimed => shared.forget(&run.run_id),
            Some(_) => {}
            None => self.inner.store.remove(&run.run_id),
        }
    }

    /// Snapshots and parks a run, returning `waiting` (or `failed` when a limit refuses it).
    pub(crate) async fn suspend(
        &self,
        mut run: Box<RunState>,
        vm: VmThread,
        reason: WaitReason,
    ) -> CodeModeResult {
        let inner = &self.inner;
        let snapshot = vm.snapshot().await;
        drop(vm);
        let snapshot = match snapshot {
            Ok(snapshot) => snapshot,
            Err(e) => {
                self.forget(&run);
                return self.sandbox_failure(&mut run, e);
            }
        };
        let bytes = snapshot.stored_bytes() as u64;
        if bytes > inner.config.max_snapshot_bytes() {
            self.forget(&run);
            let message = format!(
                "snapshot limit exceeded: the suspended run needs {bytes} bytes; maxSnapshotBytes is {}.",
                inner.config.max_snapshot_bytes()
            );
            return self.fail(Some(&*run), CodeModeErrorCode::SnapshotLimitExceeded, message);
        }
        run.snapshot = Some(snapshot);
        let output = lock(&run.ledger).output.take_new();
        let waiting = WaitingResult::new(
            run.run_id.clone(),
            reason,
            run.pending_calls(),
            self.telemetry(&run.counts.counts()),
        )
        .with_output(output)
        .replay_safe(run.restart_safe);
        let ttl = Duration::from_secs(inner.config.snapshot_ttl_seconds());
        if let Some(shared) = &inner.shared
            && let Some(snapshot) = run.snapshot.take()
        {
            return shared::park(self, shared, run, snapshot, waiting, ttl).await;
        }
        match inner.store.park(run, ttl, &inner.admission) {
            Ok(()) => CodeModeResult::Waiting(waiting),
            Err(run) => CodeModeResult::Failed(FailedResult::new(
                TOO_MANY,
                Some(CodeModeErrorCode::InvalidInput),
                waiting.output,
                self.telemetry(&run.counts.counts()),
            )),
        }
    }

    pub(crate) fn add_namespaces(&self, run: &mut RunState, scope: &RunScope) {
        let mut ctx = NamespaceContext::new(scope.session_id.clone(), scope.agent_run_id.clone());
        ctx.agent_id = scope.agent_id.clone();
        ctx.session_key = scope.session_key.clone();
        let resolution = self.inner.namespaces.resolve_for(&self.inner.catalog, &ctx);
        for ns in resolution.visible {
            let registration = NamespaceRegistration::new(
                ns.id.clone(),
                ns.global_name.clone(),
                ns.description.clone(),
                ns.tool_ids.keys().cloned(),
                |_| ScopeValue::Data(Value::Null),
            );
            match run.namespaces.add(&registration, &ns.scope) {
                Ok(()) => {
                    run.namespace_tools.insert(ns.id.clone(), ns.tool_ids.clone());
                }
                Err(e) => tracing::warn!(namespace = %ns.id, error = %e, "namespace hidden for this run"),
            }
        }
        for (id, reason) in resolution.hidden {
            tracing::debug!(namespace = %id, %reason, "namespace not visible");
        }
    }

    fn new_run_id(&self) -> String {
        let n = self.inner.next_run.fetch_add(1, Ordering::Relaxed);
        let mixed = RandomState::new().hash_one((self.inner.salt, n));
        format!("cm_{mixed:016x}{n:x}")
    }
}

/// Removes a run from the store when a `wait` ends without parking it again (terminal result, or the
/// `wait` future was dropped).
struct ResumeGuard<'a> {
    store: &'a LocalRuns,
    run_id: Option<String>,
}

impl Drop for ResumeGuard<'_> {
    fn drop(&mut self) {
        if let Some(run_id) = self.run_id.take() {
            self.store.remove(&run_id);
        }
    }
}

pub(crate) enum Wake {
    Landed,
    Deadline,
    Aborted,
}
