//! The VM thread: one dedicated OS thread per `exec`/`wait` call drives the QuickJS guest, so the
//! async runtime never blocks on guest code. The async side sends commands and awaits answers.
//! Threads are reused: a finished run's thread waits (up to [`MAX_IDLE_THREADS`] of them) for the
//! next run instead of exiting, holding a VM already started for it.

use std::sync::Mutex;
use std::sync::mpsc;
use std::time::Instant;

use codemode_bridge::{RunLedger, SharedLedger};
use codemode_sandbox::{Delivery, HostCall, Sandbox, SandboxError, Snapshot, Step, Vm};
use tokio::sync::oneshot;

/// Where the VM comes from.
pub(crate) enum Origin {
    /// The sandbox's base image (a new run).
    Fresh,
    /// A suspended run.
    Restore(Snapshot),
}

enum Command {
    Boot { boot: String, cell: String, file: &'static str },
    Deliver(Vec<(u32, Delivery)>),
    Snapshot,
}

/// What a step left behind: the step, and the host calls it started.
pub(crate) struct StepAnswer {
    pub step: Result<Step, SandboxError>,
    pub calls: Vec<HostCall>,
}

enum Answer {
    Step(StepAnswer),
    Snapshot(Result<Snapshot, SandboxError>),
}

/// A command, when it was sent, and where its answer goes.
type Request = (Command, Instant, oneshot::Sender<Answer>);

/// The deadline a step sent at `sent` runs under: the run's deadline, moved out by the time the
/// command spent reaching the VM thread (and the VM spent starting). The runtime checks the
/// deadline before it sends; without this, a command sent just in time could find the deadline
/// passed on arrival and fail as a timeout without running any guest code.
fn step_deadline(deadline: Instant, sent: Instant) -> Instant {
    deadline + sent.elapsed()
}

/// Handle to a VM thread. Dropping it ends the thread (after its current step).
pub(crate) struct VmThread {
    tx: mpsc::Sender<Request>,
}

fn gone() -> SandboxError {
    SandboxError::Unavailable { reason: "the VM thread stopped".into() }
}

/// Idle VM threads kept for the next run (each keeps its stack mapping; starting and ending
/// an OS thread with a 20 MiB stack costs tens of microseconds plus TLB shootdowns).
const MAX_IDLE_THREADS: usize = 8;

/// A run for a VM thread: where its VM comes from and how to talk to it.
struct Job {
    sandbox: Sandbox,
    origin: Origin,
    ledger: SharedLedger,
    deadline: Instant,
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

/// Runs one job to its end: the VM lives until the [`VmThread`] handle is dropped. `spare` is a
/// VM started ahead of time from the job's sandbox, used for a fresh run.
fn run_job(job: Job, spare: Option<Vm>) {
    let Job { sandbox, origin, ledger, deadline, requests, first, sent, ready } = job;
    let vm = match (origin, spare) {
        (Origin::Fresh, Some(vm)) => Ok(vm),
        (Origin::Fresh, None) => sandbox.start(),
        (Origin::Restore(snapshot), _) => sandbox.restore(&snapshot),
    };
    let mut vm = match vm {
        Ok(vm) => vm,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    vm.set_policy(RunLedger::policy(&ledger));
    let first = first.map(|command| run_command(&mut vm, command, step_deadline(deadline, sent)));
    if ready.send(Ok(first)).is_err() {
        return;
    }
    while let Ok((command, sent, answer)) = requests.recv() {
        let reply = run_command(&mut vm, command, step_deadline(deadline, sent));
        if answer.send(reply).is_err() {
            break;
        }
    }
}

/// A VM thread's life: jobs one after another, idle in between (at most [`MAX_IDLE_THREADS`] wait;
/// past that the thread ends). While idle it holds a VM already started from the sandbox of its
/// last run, so the next fresh run of that sandbox skips the start (restoring the base image).
fn worker(jobs: mpsc::Receiver<Job>, me: mpsc::Sender<Job>) {
    let mut spare: Option<(Sandbox, Vm)> = None;
    while let Ok(job) = jobs.recv() {
        let vm = match spare.take() {
            Some((sandbox, vm)) if sandbox.is_same(&job.sandbox) => Some(vm),
            _ => None,
        };
        let sandbox = job.sandbox.clone();
        run_job(job, vm);
        spare = sandbox.start().ok().map(|vm| (sandbox, vm));
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

impl VmThread {
    /// Starts a VM from `origin` on a VM thread (an idle one if there is one), its policy backed
    /// by `ledger`. Every guest step runs under `deadline`.
    pub(crate) async fn start(
        sandbox: Sandbox,
        origin: Origin,
        ledger: SharedLedger,
        deadline: Instant,
    ) -> Result<VmThread, SandboxError> {
        Ok(VmThread::launch(sandbox, origin, ledger, deadline, None).await?.0)
    }

    /// Starts a fresh VM, evaluates the boot script, then starts the cell: one hand-off to the VM
    /// thread for all three.
    pub(crate) async fn start_and_boot(
        sandbox: Sandbox,
        ledger: SharedLedger,
        deadline: Instant,
        boot: String,
        cell: String,
        file: &'static str,
    ) -> Result<(VmThread, StepAnswer), SandboxError> {
        let first = Command::Boot { boot, cell, file };
        match VmThread::launch(sandbox, Origin::Fresh, ledger, deadline, Some(first)).await? {
            (vm, Some(Answer::Step(step))) => Ok((vm, step)),
            _ => Err(gone()),
        }
    }

    async fn launch(
        sandbox: Sandbox,
        origin: Origin,
        ledger: SharedLedger,
        deadline: Instant,
        first: Option<Command>,
    ) -> Result<(VmThread, Option<Answer>), SandboxError> {
        let (tx, requests) = mpsc::channel::<Request>();
        let (ready, ready_rx) = oneshot::channel();
        let mut job = Job { sandbox, origin, ledger, deadline, requests, first, sent: Instant::now(), ready };
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
        Ok((VmThread { tx }, first))
    }

    async fn request(&self, command: Command) -> Result<Answer, SandboxError> {
        let (answer_tx, answer_rx) = oneshot::channel();
        self.tx.send((command, Instant::now(), answer_tx)).map_err(|_| gone())?;
        answer_rx.await.map_err(|_| gone())
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

fn run_command(vm: &mut Vm, command: Command, deadline: Instant) -> Answer {
    let step = match command {
        Command::Snapshot => return Answer::Snapshot(vm.snapshot()),
        Command::Boot { boot, cell, file } => match vm.eval_script(&boot, deadline) {
            Ok(Step::Failed(e)) => {
                Err(SandboxError::Unavailable { reason: format!("the guest API failed to boot: {e}") })
            }
            Ok(_) => vm.eval_cell(&cell, file, deadline),
            Err(e) => Err(e),
        },
        Command::Deliver(deliveries) => {
            let mut failure = None;
            for (id, delivery) in deliveries {
                match vm.deliver(id, delivery, deadline) {
                    Ok(()) | Err(SandboxError::UnknownCall { .. }) | Err(SandboxError::InvalidJson) => {}
                    Err(e) => {
                        failure = Some(e);
                        break;
                    }
                }
            }
            match failure {
                Some(e) => Err(e),
                None => vm.run_jobs(deadline),
            }
        }
    };
    let calls = if step.is_ok() { vm.take_host_calls() } else { Vec::new() };
    Answer::Step(StepAnswer { step, calls })
}
