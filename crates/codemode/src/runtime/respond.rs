//! A run's [`Responder`]: the guest's common requests served on the thread that runs the guest.
//!
//! The pump ([`CodeMode::dispatch`]) serves every request of a step on the async side. A run's
//! [`Responder`] serves the common ones (search, describe, `API.search`, `$api`, tool and MCP
//! calls) on the thread that runs the guest, inside the guest's host call: installed in the VM
//! for each step as its [`CallAnswerer`], it resolves a call answered at once with a value before
//! the call returns to the guest, so the guest runs on with no step ending (and, on VM threads, no
//! hand-off to the async side and back: two thread wake-ups) per call. The rest it keeps for the
//! step's end; when each of a step's calls is answered by then, the VM delivers the answers and
//! runs on. What it cannot finish goes to the pump as an [`Outcome`]
//! ([`CodeMode::take_outcome`]).

use std::sync::Arc;
use std::time::Instant;

use codemode_bridge::{HostRequest, SharedLedger, decode_request, lock};
use codemode_core::PendingToolCall;
use codemode_sandbox::{AtOnce, CallAnswerer, Delivery, HostCall};
use tokio::sync::Semaphore;

use super::CodeMode;
use super::dispatch::{Handled, Prepared, Shape, Site, Work, poll_once, spawn, track};
use crate::abort::AbortSignal;
use crate::host::RunScope;
use crate::run::{Counters, RunState};

/// What a run's [`Responder`] made of a guest call.
pub(crate) enum Outcome {
    /// Not looked at (no responder): the pump decodes and serves it.
    Call(HostCall),
    /// Decoded but not served by the responder: the pump serves it.
    Declined(u32, HostRequest),
    /// Not decodable in a way that ends the run (the pump ends it with this message).
    Fatal(String),
    /// Answered at once (delivered by the VM itself when the whole step was, else by the pump).
    Answered(u32, Delivery),
    /// A tool call whose host work has to wait: the pump registers and spawns it.
    Started(Started),
}

/// A nested call started by a [`Responder`] whose host work did not finish on its first poll.
pub(crate) struct Started {
    vm_id: u32,
    pending: PendingToolCall,
    shape: Shape,
    work: Work,
}

/// Serves a run's common guest requests on the thread that runs its guest (see the module docs).
/// Made for each `exec`/`wait` call of a run that is not restart-safe (those are never drained
/// within a call) and dropped with the VM's handle.
pub(crate) struct Responder {
    code_mode: CodeMode,
    run_id: String,
    scope: RunScope,
    parent_call_id: Option<String>,
    semaphore: Arc<Semaphore>,
    counts: Arc<Counters>,
    ledger: SharedLedger,
    abort: AbortSignal,
    /// Entered while host work is polled, so a host may use the runtime (timers, spawns).
    runtime: tokio::runtime::Handle,
    /// The deadline of the step the responder is installed for.
    deadline: Instant,
    /// Calls of the running step the responder served (or started) but did not answer at once.
    kept: Vec<Outcome>,
}

impl Responder {
    fn site(&self) -> Site<'_> {
        Site {
            run_id: &self.run_id,
            scope: &self.scope,
            parent_call_id: &self.parent_call_id,
            restart_safe: false,
            semaphore: &self.semaphore,
            counts: &self.counts,
        }
    }

    /// Serves `call` if it is one the responder serves.
    pub(crate) fn respond(&mut self, call: HostCall) -> Outcome {
        self.respond_to(call.id, &call.payload)
    }

    /// Serves call `id` with `payload` if it is one the responder serves.
    fn respond_to(&mut self, id: u32, payload: &str) -> Outcome {
        let request = match decode_request(payload) {
            Ok(request) => request,
            Err(e) if e.is_fatal() => return Outcome::Fatal(e.to_string()),
            Err(e) => return Outcome::Answered(id, e.reply()),
        };
        let cm = &self.code_mode;
        let request = match cm.lookup(&self.counts, request) {
            Ok(reply) => return Outcome::Answered(id, reply),
            Err(request) => request,
        };
        let prepared = match cm.prepare_call(&self.site(), request) {
            Ok(prepared) => prepared,
            Err(request) => return Outcome::Declined(id, request),
        };
        let (pending, shape, work) = match prepared {
            (Prepared::Refused(reply), _) => return Outcome::Answered(id, reply),
            (Prepared::Work { pending, work }, shape) => (pending, shape, work),
        };
        let _entered = self.runtime.enter();
        match poll_once(work) {
            Ok(reply) => Outcome::Answered(id, reply),
            Err(work) => Outcome::Started(Started { vm_id: id, pending, shape, work }),
        }
    }

    /// Sets the deadline of the step the responder is installed for.
    pub(crate) fn set_deadline(&mut self, deadline: Instant) {
        self.deadline = deadline;
    }

    /// The calls of the step that were served or started but not answered at once.
    pub(crate) fn take_kept(&mut self) -> Vec<Outcome> {
        std::mem::take(&mut self.kept)
    }

    /// Whether the VM may deliver answered calls and run on by itself: the run is not aborted,
    /// the step's `deadline` has not passed, and the output is within `maxOutputBytes` (the pump
    /// checks the same between steps).
    pub(crate) fn may_go_on(&self, deadline: Instant) -> bool {
        !self.abort.is_aborted() && Instant::now() < deadline && !lock(&self.ledger).output.limit_exceeded()
    }

    /// Books `n` replies the VM delivers itself (the pending-call budget, as the pump's delivery).
    pub(crate) fn delivered(&self, n: usize) {
        let mut ledger = lock(&self.ledger);
        for _ in 0..n {
            ledger.budgets.on_delivered();
        }
    }
}

/// A call answered at once resolves while the guest runs, under the checks of a step's end
/// ([`Responder::may_go_on`]: past them every call is left for the step's end, which hands them
/// to the pump); a rejection, a call whose host work has to wait and one the responder does not
/// serve are kept for the step's end.
impl CallAnswerer for Responder {
    fn answer(&mut self, id: u32, payload: &str) -> AtOnce {
        if !self.may_go_on(self.deadline) {
            return AtOnce::Left;
        }
        match self.respond_to(id, payload) {
            Outcome::Answered(_, Delivery::Resolve(json)) => {
                self.delivered(1);
                AtOnce::Resolved(json)
            }
            outcome => {
                self.kept.push(outcome);
                AtOnce::Kept
            }
        }
    }
}

impl CodeMode {
    /// The responder for one `exec`/`wait` call of `run` (none for a restart-safe run, or outside
    /// a tokio runtime).
    pub(crate) fn responder(&self, run: &RunState, abort: &AbortSignal) -> Option<Responder> {
        if run.restart_safe {
            return None;
        }
        let runtime = tokio::runtime::Handle::try_current().ok()?;
        Some(Responder {
            code_mode: self.clone(),
            run_id: run.run_id.clone(),
            scope: run.scope.clone(),
            parent_call_id: run.parent_call_id.clone(),
            semaphore: run.semaphore.clone(),
            counts: run.counts.clone(),
            ledger: run.ledger.clone(),
            abort: abort.clone(),
            runtime,
            deadline: Instant::now(),
            kept: Vec::new(),
        })
    }

    /// Takes over what a [`Responder`] left: answered replies join `ready`, started calls are
    /// registered and spawned, declined ones are dispatched here. `Err` ends the run.
    pub(super) fn take_outcome(
        &self,
        run: &mut RunState,
        outcome: Outcome,
        ready: &mut Vec<(u32, Delivery)>,
    ) -> Result<(), String> {
        match outcome {
            Outcome::Answered(id, reply) => ready.push((id, reply)),
            Outcome::Started(Started { vm_id, pending, shape, work }) => {
                track(run, vm_id, pending, shape);
                if let Handled::Ready(reply) = spawn(run, vm_id, work) {
                    ready.push((vm_id, reply));
                }
            }
            Outcome::Call(call) => {
                let id = call.id;
                let handled = self.dispatch(run, call);
                settle(id, handled, ready)?;
            }
            Outcome::Declined(id, request) => {
                let handled = self.serve(run, id, request);
                settle(id, handled, ready)?;
            }
            Outcome::Fatal(message) => return Err(message),
        }
        Ok(())
    }
}

/// What the pump's own serving of call `id` leaves for the step: a ready reply joins `ready`;
/// `Err` ends the run.
fn settle(id: u32, handled: Handled, ready: &mut Vec<(u32, Delivery)>) -> Result<(), String> {
    match handled {
        Handled::Ready(reply) => ready.push((id, reply)),
        Handled::Async | Handled::Yield => {}
        Handled::Fatal(message) => return Err(message),
    }
    Ok(())
}
