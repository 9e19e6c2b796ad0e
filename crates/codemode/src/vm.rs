//! Where guest steps run ([`GuestThread`]).
//!
//! By default a dedicated OS thread per `exec`/`wait` call drives the QuickJS guest, so the async
//! runtime never blocks on guest code. The async side sends commands and awaits answers. Threads
//! are reused: a finished run's thread waits (up to [`MAX_IDLE_THREADS`] of them) for the next run
//! instead of exiting, holding a VM already started for it.
//!
//! With [`GuestThread::Caller`] the steps run on the thread that polls `exec`/`wait` instead: no
//! hand-off and no thread wake-up per step (on a 2-core VM those were most of a trivial exec's
//! time). A VM comes from a small pool of VMs started ahead of time by one background thread,
//! which also resets finished VMs in place (or drops them), so neither the start nor the teardown
//! is on the caller's path; except that a run which came right after the thread's last one resets
//! its finished VM itself (see `spares::recycle`): back to back, that costs the next run less than
//! the hand-off does.
//! An abort interrupts the running step through the VM's interrupt handle.

use std::any::Any;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use codemode_bridge::{RunLedger, SharedLedger};
use codemode_sandbox::{Delivery, Sandbox, SandboxError, Snapshot, Step, Vm};
use tokio::sync::oneshot;

use crate::abort::{AbortLink, AbortSignal};
use crate::runtime::{Outcome, Responder};

/// Which thread runs a run's guest steps (see [`crate::CodeModeBuilder::guest_thread`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum GuestThread {
    /// A VM thread of the runtime's own (reused across runs): the async caller never blocks on
    /// guest code; each step is a hand-off to that thread and back.
    #[default]
    Dedicated,
    /// The thread that polls `exec`/`wait`: each step blocks it for as long as the guest runs
    /// (at most `timeoutMs`). On a worker of a multi-thread tokio runtime the step runs inside
    /// `tokio::task::block_in_place`, so the worker's other tasks move to another thread
    /// meanwhile; elsewhere (a current-thread runtime, `block_on`) it simply blocks. Choose it
    /// when the caller may block: a dedicated thread per session, `block_on` in a script or a
    /// binding, a multi-thread runtime with cores to spare. Results, limits, suspension and
    /// aborts are the same as with [`GuestThread::Dedicated`].
    Caller,
}

/// Where the VM comes from.
pub(crate) enum Origin {
    /// The sandbox's base image (a new run).
    Fresh,
    /// A suspended run.
    Restore(Snapshot),
}

enum Command {
    /// The run's boot script (none when the base image already holds what it would do), then the
    /// cell.
    Boot {
        boot: Option<String>,
        cell: String,
        file: &'static str,
    },
    Deliver(Vec<(u32, Delivery)>),
    Snapshot,
}

/// What a step left behind: the step, and what became of the host calls it made (the run's
/// [`Responder`] served what it could where the step ran and hands the rest over; without a
/// responder each call is an [`Outcome::Call`]).
pub(crate) struct StepAnswer {
    pub step: Result<Step, SandboxError>,
    pub calls: Vec<Outcome>,
}

enum Answer {
    Step(StepAnswer),
    Snapshot(Result<Snapshot, SandboxError>),
}

/// A command, how far the run's deadline is moved out for it (the time the run spent waiting
/// for tool calls, see [`VmThread::waited`]), when it was sent, and where its answer goes.
type Request = (Command, Duration, Instant, oneshot::Sender<Answer>);

/// The deadline a step sent at `sent` runs under: the run's deadline, moved out by the time the
/// command spent reaching the VM thread (and the VM spent starting). The runtime checks the
/// deadline before it sends; without this, a command sent just in time could find the deadline
/// passed on arrival and fail as a timeout without running any guest code.
fn step_deadline(deadline: Instant, sent: Instant) -> Instant {
    deadline + sent.elapsed()
}

/// Handle to a run's VM: on a VM thread, or run on the caller's thread. Dropping it ends the VM
/// (a VM thread's after its current step).
pub(crate) struct VmThread {
    kind: Kind,
    /// Microseconds this `exec`/`wait` call spent waiting for the run's tool calls to land. Guest
    /// steps get that time back on top of the deadline: `timeoutMs` bounds how long the guest
    /// itself runs, and (separately, in the runtime) how long a call waits for tool calls. Without
    /// it, a result landing just before the deadline would wake the guest with no time left and
    /// fail the run as a timeout although the guest had barely run.
    waited: AtomicU64,
}

enum Kind {
    Thread(mpsc::Sender<Request>),
    /// Locked only by the caller's own steps (never contended: a run's steps are sequential).
    Caller(Box<Mutex<CallerVm>>),
}

/// A VM whose steps run on the caller's thread.
struct CallerVm {
    vm: Option<Vm>,
    responder: Option<Responder>,
    sandbox: Sandbox,
    deadline: Instant,
    /// The run started right after this thread's last run ended (see [`spares::back_to_back`]).
    back_to_back: bool,
    /// The VM's linear memory when the run started.
    start_bytes: usize,
    _abort: AbortLink,
}

impl Drop for CallerVm {
    fn drop(&mut self) {
        if let Some(vm) = self.vm.take() {
            // Reset here only what is cheap to reset: a tracked VM that ended well and whose
            // memory did not grow (a reset costs what the run wrote; a VM that cannot be reset
            // would be dropped, which costs more).
            let here = self.back_to_back
                && vm.writes_tracked()
                && !vm.is_terminated()
                && vm.memory_bytes() == self.start_bytes;
            spares::recycle(&self.sandbox, vm, here);
        }
    }
}

fn gone() -> SandboxError {
    SandboxError::Unavailable { reason: "the VM thread stopped".into() }
}

/// Idle VM threads kept for the next run (each keeps its stack mapping and one spare VM;
/// starting and ending an OS thread with a 20 MiB stack costs tens of microseconds plus TLB
/// shootdowns). 16 rather than 8: with 12 sessions back to back on 2 cores, 8 left threads
/// ending and starting on every run (3,500 against 7,200 execs/s).
const MAX_IDLE_THREADS: usize = 16;

/// A run for a VM thread: where its VM comes from and how to talk to it.
struct Job {
    sandbox: Sandbox,
    origin: Origin,
    ledger: SharedLedger,
    deadline: Instant,
    responder: Option<Responder>,
    requests: mpsc::Receiver<Request>,
    /// Run right after the VM is ready; its answer comes back with the readiness (one hand-off
    /// for start + boot).
    first: Option<Command>,
    /// When the job was handed to a thread.
    sent: Instant,
    ready: oneshot::Sender<Result<Option<Answer>, SandboxError>>,
}

fn idle_threads() -> &'static Mutex<Vec<mpsc::Sender<Job>>> {
    static IDLE: std::sync::OnceLock<Mutex<Vec<mpsc::Sender<Job>>>> = std::sync::OnceLock::new();
    IDLE.get_or_init(Default::default)
}

/// Runs one job to its end: the VM lives until the [`VmThread`] handle is dropped, and is returned
/// then (for [`Sandbox::recycle`]). `spare` is a VM started ahead of time from the job's sandbox,
/// used for a fresh run.
fn run_job(job: Job, spare: Option<Vm>) -> Option<Vm> {
    let Job { sandbox, origin, ledger, deadline, mut responder, requests, first, sent, ready } = job;
    let vm = match (origin, spare) {
        (Origin::Fresh, Some(vm)) => Ok(vm),
        (Origin::Fresh, None) => sandbox.start(),
        (Origin::Restore(snapshot), _) => sandbox.restore(&snapshot),
    };
    let mut vm = match vm {
        Ok(vm) => vm,
        Err(e) => {
            let _ = ready.send(Err(e));
            return None;
        }
    };
    vm.set_policy(RunLedger::policy(&ledger));
    let first =
        first.map(|command| run_command(&mut vm, command, step_deadline(deadline, sent), &mut responder));
    if ready.send(Ok(first)).is_err() {
        return Some(vm);
    }
    while let Ok((command, waited, sent, answer)) = requests.recv() {
        let reply = run_command(&mut vm, command, step_deadline(deadline, sent) + waited, &mut responder);
        if answer.send(reply).is_err() {
            break;
        }
    }
    Some(vm)
}

/// A VM thread's life: jobs one after another, idle in between (at most [`MAX_IDLE_THREADS`] wait;
/// past that the thread ends). While idle it holds a VM ready for the sandbox of its last run, so
/// the next fresh run of that sandbox skips the start: the finished VM reset in place
/// ([`Sandbox::recycle`]: only the pages the run wrote), else a VM started anew (restoring the
/// whole base image).
fn worker(jobs: mpsc::Receiver<Job>, me: mpsc::Sender<Job>) {
    let mut spare: Option<(Sandbox, Vm)> = None;
    while let Ok(job) = jobs.recv() {
        let vm = match spare.take() {
            Some((sandbox, vm)) if sandbox.is_same(&job.sandbox) => Some(vm),
            _ => None,
        };
        let sandbox = job.sandbox.clone();
        let used = run_job(job, vm);
        let next = match used.and_then(|vm| sandbox.recycle(vm)) {
            Some(vm) => Some(vm),
            None => sandbox.start().ok(),
        };
        spare = next.map(|vm| (sandbox, vm));
        let mut idle = idle_threads().lock().unwrap_or_else(|p| p.into_inner());
        if idle.len() >= MAX_IDLE_THREADS {
            return;
        }
        idle.push(me.clone());
    }
}

fn spawn_worker(job: Job) -> Result<(), SandboxError> {
    // Sized for the job's sandbox, so guest calls never need a fresh stack segment. A reused
    // thread may serve a sandbox with a larger wasm stack; its calls then grow the stack.
    let stack = job.sandbox.thread_stack_bytes();
    let (tx, rx) = mpsc::channel::<Job>();
    let me = tx.clone();
    tx.send(job).map_err(|_| gone())?;
    std::thread::Builder::new()
        .name("codemode-vm".into())
        .stack_size(stack)
        .spawn(move || worker(rx, me))
        .map_err(|e| SandboxError::Unavailable { reason: format!("cannot start a VM thread: {e}") })?;
    Ok(())
}

/// Where a run's steps go: the thread mode, and the abort that interrupts a step on the caller's
/// thread.
#[derive(Clone, Copy)]
pub(crate) struct Placement<'a> {
    pub thread: GuestThread,
    pub abort: &'a AbortSignal,
}

/// Runs a guest step on the calling thread; on a multi-thread runtime's worker inside
/// `block_in_place`, so the worker's other tasks are not held up.
fn blocking<R>(f: impl FnOnce() -> R) -> R {
    match tokio::runtime::Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(f)
        }
        _ => f(),
    }
}

impl VmThread {
    /// Starts a VM from `origin` (on a VM thread, an idle one if there is one, or on the caller's
    /// thread, per `placement`), its policy backed by `ledger`. Every guest step runs under
    /// `deadline`, and `responder` serves what it can of each step's calls where the step ran.
    pub(crate) async fn start(
        sandbox: Sandbox,
        origin: Origin,
        ledger: SharedLedger,
        deadline: Instant,
        responder: Option<Responder>,
        placement: Placement<'_>,
    ) -> Result<VmThread, SandboxError> {
        let vm = (sandbox, origin, ledger, deadline, responder);
        if placement.thread == GuestThread::Caller {
            return Ok(VmThread::on_caller(vm, None, placement.abort)?.0);
        }
        Ok(VmThread::launch(vm, None).await?.0)
    }

    /// Starts a fresh VM, evaluates the boot script, then starts the cell: one hand-off to the VM
    /// thread for all three (none on the caller's thread).
    pub(crate) async fn start_and_boot(
        sandbox: Sandbox,
        ledger: SharedLedger,
        deadline: Instant,
        responder: Option<Responder>,
        (boot, cell, file): (Option<String>, String, &'static str),
        placement: Placement<'_>,
    ) -> Result<(VmThread, StepAnswer), SandboxError> {
        let first = Command::Boot { boot, cell, file };
        let vm = (sandbox, Origin::Fresh, ledger, deadline, responder);
        let started = if placement.thread == GuestThread::Caller {
            VmThread::on_caller(vm, Some(first), placement.abort)?
        } else {
            VmThread::launch(vm, Some(first)).await?
        };
        match started {
            (vm, Some(Answer::Step(step))) => Ok((vm, step)),
            _ => Err(gone()),
        }
    }

    /// A VM whose steps run on this thread: a spare one for a fresh run, else started (or
    /// restored) here; then `first`.
    fn on_caller(
        (sandbox, origin, ledger, deadline, mut responder): NewVm,
        first: Option<Command>,
        abort: &AbortSignal,
    ) -> Result<(VmThread, Option<Answer>), SandboxError> {
        blocking(|| {
            let vm = match origin {
                Origin::Fresh => match spares::take(&sandbox) {
                    Some(vm) => Ok(vm),
                    None => sandbox.start(),
                },
                Origin::Restore(snapshot) => sandbox.restore(&snapshot),
            };
            let mut vm = vm?;
            vm.set_policy(RunLedger::policy(&ledger));
            let link = abort.link(vm.interrupt_handle());
            let first = first.map(|command| run_command(&mut vm, command, deadline, &mut responder));
            let (back_to_back, start_bytes) = (spares::back_to_back(), vm.memory_bytes());
            let caller = CallerVm {
                vm: Some(vm),
                responder,
                sandbox,
                deadline,
                back_to_back,
                start_bytes,
                _abort: link,
            };
            Ok((VmThread::new(Kind::Caller(Box::new(Mutex::new(caller)))), first))
        })
    }

    async fn launch(
        (sandbox, origin, ledger, deadline, responder): NewVm,
        first: Option<Command>,
    ) -> Result<(VmThread, Option<Answer>), SandboxError> {
        let (tx, requests) = mpsc::channel::<Request>();
        let (ready, ready_rx) = oneshot::channel();
        let sent = Instant::now();
        let mut job = Job { sandbox, origin, ledger, deadline, responder, requests, first, sent, ready };
        loop {
            let idle = idle_threads().lock().unwrap_or_else(|p| p.into_inner()).pop();
            let Some(thread) = idle else {
                spawn_worker(job)?;
                break;
            };
            match thread.send(job) {
                Ok(()) => break,
                // That thread has ended; try the next.
                Err(mpsc::SendError(back)) => job = back,
            }
        }
        let first = ready_rx.await.map_err(|_| gone())??;
        Ok((VmThread::new(Kind::Thread(tx)), first))
    }

    fn new(kind: Kind) -> VmThread {
        VmThread { kind, waited: AtomicU64::new(0) }
    }

    /// Gives guest steps `waited` more time: the run waited that long for its tool calls to land.
    pub(crate) fn waited(&self, waited: Duration) {
        let micros = u64::try_from(waited.as_micros()).unwrap_or(u64::MAX);
        self.waited.fetch_add(micros, Ordering::Relaxed);
    }

    /// The deadline guest steps run under, given the run's `deadline`: moved out by the time the
    /// run waited for tool calls.
    pub(crate) fn guest_deadline(&self, deadline: Instant) -> Instant {
        deadline + self.waited_so_far()
    }

    fn waited_so_far(&self) -> Duration {
        Duration::from_micros(self.waited.load(Ordering::Relaxed))
    }

    async fn request(&self, command: Command) -> Result<Answer, SandboxError> {
        match &self.kind {
            Kind::Thread(tx) => {
                let (answer_tx, answer_rx) = oneshot::channel();
                tx.send((command, self.waited_so_far(), Instant::now(), answer_tx)).map_err(|_| gone())?;
                answer_rx.await.map_err(|_| gone())
            }
            Kind::Caller(caller) => {
                let mut caller = caller.lock().unwrap_or_else(|p| p.into_inner());
                let deadline = self.guest_deadline(caller.deadline);
                let CallerVm { vm, responder, .. } = &mut *caller;
                let vm = vm.as_mut().ok_or_else(gone)?;
                Ok(blocking(|| run_command(vm, command, deadline, responder)))
            }
        }
    }

    /// Settles host calls, then runs jobs.
    pub(crate) async fn deliver(&self, deliveries: Vec<(u32, Delivery)>) -> StepAnswer {
        match self.request(Command::Deliver(deliveries)).await {
            Ok(Answer::Step(step)) => step,
            Ok(Answer::Snapshot(_)) => StepAnswer { step: Err(gone()), calls: Vec::new() },
            Err(e) => StepAnswer { step: Err(e), calls: Vec::new() },
        }
    }

    /// Snapshots the VM (at a quiescent point).
    pub(crate) async fn snapshot(&self) -> Result<Snapshot, SandboxError> {
        match self.request(Command::Snapshot).await? {
            Answer::Snapshot(snapshot) => snapshot,
            Answer::Step(_) => Err(gone()),
        }
    }
}

/// What a new VM is made of: its sandbox, where it comes from, the run's ledger, the run's
/// deadline and the run's responder.
type NewVm = (Sandbox, Origin, SharedLedger, Instant, Option<Responder>);

/// Runs `command` with the run's `responder` (if any) installed in the VM for the step: a call
/// it answers at once resolves while the guest runs, with no step ending (see
/// [`CallAnswerer`](codemode_sandbox::CallAnswerer)); then the step's other calls are served as
/// [`run_step`] says.
fn run_command(
    vm: &mut Vm,
    command: Command,
    deadline: Instant,
    responder: &mut Option<Responder>,
) -> Answer {
    let Some(mut installed) = responder.take() else { return run_step(vm, command, deadline) };
    installed.set_deadline(deadline);
    vm.set_answerer(Some(Box::new(installed)));
    let answer = run_step(vm, command, deadline);
    let answerer: Option<Box<dyn Any>> = vm.set_answerer(None).map(|a| a as Box<dyn Any>);
    *responder = answerer.and_then(|a| a.downcast::<Responder>().ok()).map(|r| *r);
    answer
}

/// The responder [`run_command`] installed in `vm`.
fn responder(vm: &mut Vm) -> Option<&mut Responder> {
    vm.answerer_mut().and_then(|a| (a as &mut dyn Any).downcast_mut::<Responder>())
}

/// Runs `command`, then serves the step's calls with the installed responder: those it kept (and
/// any it left), and while each call of a pending step is answered at once (and the responder
/// lets it go on), the answers are delivered and the guest runs on here, with no trip to the
/// async side.
fn run_step(vm: &mut Vm, command: Command, deadline: Instant) -> Answer {
    let mut step = match command {
        Command::Snapshot => return Answer::Snapshot(vm.snapshot()),
        Command::Boot { boot, cell, file } => match boot.map(|boot| vm.eval_script(&boot, deadline)) {
            Some(Ok(Step::Failed(e))) => {
                Err(SandboxError::Unavailable { reason: format!("the guest API failed to boot: {e}") })
            }
            Some(Err(e)) => Err(e),
            Some(Ok(_)) | None => vm.eval_cell(&cell, file, deadline),
        },
        Command::Deliver(deliveries) => deliver(vm, deliveries, deadline),
    };
    loop {
        if step.is_err() {
            return Answer::Step(StepAnswer { step, calls: Vec::new() });
        }
        let left = vm.take_host_calls();
        let Some(responder) = responder(vm) else {
            return Answer::Step(StepAnswer { step, calls: left.into_iter().map(Outcome::Call).collect() });
        };
        let mut calls = responder.take_kept();
        calls.extend(left.into_iter().map(|call| responder.respond(call)));
        let answered = !calls.is_empty() && calls.iter().all(|c| matches!(c, Outcome::Answered(..)));
        if !(answered && matches!(step, Ok(Step::Pending { .. })) && responder.may_go_on(deadline)) {
            return Answer::Step(StepAnswer { step, calls });
        }
        responder.delivered(calls.len());
        let replies = calls.into_iter().filter_map(|c| match c {
            Outcome::Answered(id, reply) => Some((id, reply)),
            _ => None,
        });
        step = deliver(vm, replies, deadline);
    }
}

/// Settles host calls, then runs jobs (one entry into the guest).
fn deliver(
    vm: &mut Vm,
    deliveries: impl IntoIterator<Item = (u32, Delivery)>,
    deadline: Instant,
) -> Result<Step, SandboxError> {
    vm.deliver_and_run(deliveries, deadline)
}

/// VMs started ahead of time for runs on the caller's thread, and the background thread that
/// starts them and drops finished ones.
mod spares {
    use std::cell::Cell;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::mpsc;
    use std::sync::{Mutex, OnceLock};
    use std::time::{Duration, Instant};

    use codemode_sandbox::{Sandbox, Vm};

    /// Spare VMs kept per sandbox, and in all.
    const PER_SANDBOX: usize = 1;
    const MAX_SPARES: usize = 8;

    /// Messages waiting for the background thread at most. Past it a finished VM is dropped on
    /// the caller's thread and no refill is asked for (the next run starts its VM itself), so
    /// VMs waiting to be dropped never pile up (each holds a slot of the sandbox's instance
    /// pool) when runs finish faster than one thread can drop and start VMs.
    const MAX_QUEUED: usize = 2;
    static QUEUED: AtomicUsize = AtomicUsize::new(0);

    /// Work for the background thread: recycle or drop `used` (if any), then make sure `sandbox`
    /// has a spare.
    struct Recycle {
        sandbox: Sandbox,
        used: Option<Vm>,
    }

    fn pool() -> &'static Mutex<Vec<(Sandbox, Vm)>> {
        static POOL: Mutex<Vec<(Sandbox, Vm)>> = Mutex::new(Vec::new());
        &POOL
    }

    fn recycler(stack: usize) -> Option<&'static Mutex<mpsc::Sender<Recycle>>> {
        static TX: OnceLock<Option<Mutex<mpsc::Sender<Recycle>>>> = OnceLock::new();
        TX.get_or_init(|| {
            let (tx, rx) = mpsc::channel::<Recycle>();
            std::thread::Builder::new()
                .name("codemode-spares".into())
                .stack_size(stack)
                .spawn(move || {
                    while let Ok(Recycle { sandbox, used }) = rx.recv() {
                        // A finished VM reset in place becomes the spare (else it is dropped).
                        let recycled = used.and_then(|vm| sandbox.recycle(vm));
                        refill(&sandbox, recycled);
                        QUEUED.fetch_sub(1, Ordering::AcqRel);
                    }
                })
                .ok()
                .map(|_| Mutex::new(tx))
        })
        .as_ref()
    }

    /// The spares of `sandbox` in `pool`.
    fn spares_of(pool: &[(Sandbox, Vm)], sandbox: &Sandbox) -> usize {
        pool.iter().filter(|(s, _)| s.is_same(sandbox)).count()
    }

    /// Makes sure `sandbox` has a spare: `recycled` (a finished VM of it, reset in place) if
    /// given, else one started anew.
    fn refill(sandbox: &Sandbox, recycled: Option<Vm>) {
        let have = spares_of(&pool().lock().unwrap_or_else(|p| p.into_inner()), sandbox);
        if have >= PER_SANDBOX {
            return;
        }
        let vm = match recycled {
            Some(vm) => vm,
            None => match sandbox.start() {
                Ok(vm) => vm,
                Err(_) => return,
            },
        };
        let mut pool = pool().lock().unwrap_or_else(|p| p.into_inner());
        if pool.len() >= MAX_SPARES {
            // The oldest spare goes (dropped outside the lock).
            let old = pool.remove(0);
            pool.push((sandbox.clone(), vm));
            drop(pool);
            drop(old);
        } else {
            pool.push((sandbox.clone(), vm));
        }
    }

    fn send(sandbox: &Sandbox, used: Option<Vm>) {
        let Some(tx) = recycler(sandbox.thread_stack_bytes()) else { return drop(used) };
        let taken =
            QUEUED.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| (n < MAX_QUEUED).then_some(n + 1));
        if taken.is_err() {
            return drop(used);
        }
        let tx = tx.lock().unwrap_or_else(|p| p.into_inner());
        // The thread never ends, so the send only fails if it could not start.
        if let Err(mpsc::SendError(message)) = tx.send(Recycle { sandbox: sandbox.clone(), used }) {
            QUEUED.fetch_sub(1, Ordering::AcqRel);
            drop(message);
        }
    }

    /// A spare VM of `sandbox`, if one is ready (another is started in the background).
    pub(super) fn take(sandbox: &Sandbox) -> Option<Vm> {
        let spare = {
            let mut pool = pool().lock().unwrap_or_else(|p| p.into_inner());
            let i = pool.iter().position(|(s, _)| s.is_same(sandbox));
            i.map(|i| pool.swap_remove(i).1)
        };
        if spare.is_none() {
            send(sandbox, None);
        }
        spare
    }

    /// Runs that start within this long of the end of the last run on their thread count as
    /// back to back.
    const BACK_TO_BACK: Duration = Duration::from_millis(1);

    thread_local! {
        /// When the last run on this thread handed its VM back.
        static LAST_END: Cell<Option<Instant>> = const { Cell::new(None) };
    }

    /// Whether a run starting now comes right after the last run on this thread (see
    /// [`recycle`]).
    pub(super) fn back_to_back() -> bool {
        LAST_END.with(|last| last.get().is_some_and(|end| end.elapsed() < BACK_TO_BACK))
    }

    /// A finished VM, reset in place to become its sandbox's spare ([`Sandbox::recycle`]), or
    /// dropped and a spare started anew. With `here` (a run that came back to back, its VM cheap
    /// to reset) it is reset on the caller's thread (~12 µs for a small run): when runs follow
    /// each other, the next one likely does too, and the hand-off costs it more than that (the
    /// background thread's wake-up, and a VM reset on the other core: cold caches), or finds no
    /// spare ready at all and starts a VM anew (a copy of the whole base image). Otherwise the
    /// background thread resets it, off the caller's path, while the caller is idle.
    pub(super) fn recycle(sandbox: &Sandbox, vm: Vm, here: bool) {
        LAST_END.with(|last| last.set(Some(Instant::now())));
        if !here {
            return send(sandbox, Some(vm));
        }
        let Some(vm) = sandbox.recycle(vm) else { return send(sandbox, None) };
        let mut pool = pool().lock().unwrap_or_else(|p| p.into_inner());
        if spares_of(&pool, sandbox) < PER_SANDBOX && pool.len() < MAX_SPARES {
            pool.push((sandbox.clone(), vm));
        } else {
            // No room: the background thread keeps or drops it.
            drop(pool);
            send(sandbox, Some(vm));
        }
    }

    #[cfg(test)]
    mod tests {
        use std::time::{Duration, Instant};

        use codemode_sandbox::{Sandbox, SandboxConfig, Step};

        /// A run that came back to back resets its VM on the caller's thread: the next run of the
        /// sandbox finds it as its spare at once, reset (nothing of the run before is left), with
        /// no background thread involved.
        #[test]
        fn a_back_to_back_run_resets_its_vm_itself_and_the_next_run_takes_it() {
            let sandbox = Sandbox::new(SandboxConfig::default(), "").unwrap();
            let deadline = || Instant::now() + Duration::from_secs(10);
            let mut vm = sandbox.start().unwrap();
            let step = vm.eval_cell("globalThis.left = 'behind'; return 1;", "user.js", deadline()).unwrap();
            assert_eq!(step, Step::Completed { value_json: Some("1".into()) });
            super::recycle(&sandbox, vm, true);
            let Some(mut spare) = super::take(&sandbox) else {
                // Recycling needs write tracking (Linux >= 6.7), as in codemode-sandbox's tests.
                assert!(
                    !cfg!(target_os = "linux") || std::env::var_os("CODEMODE_TEST_ALLOW_UNTRACKED").is_some(),
                    "a back-to-back run's VM is reset on the caller's thread and kept as the spare"
                );
                return;
            };
            let step = spare.eval_cell("return typeof left;", "user.js", deadline()).unwrap();
            assert_eq!(step, Step::Completed { value_json: Some("\"undefined\"".into()) });
            assert!(super::back_to_back(), "a run starting right after counts as back to back");
        }
    }
}
