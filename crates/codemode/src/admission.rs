//! [`Admission`]: the process-wide budget of guest VMs that `exec` and `wait` may hold at once.
//!
//! Every `exec` and `wait` holds a VM from when it starts (or restores) it until it returns. Each VM
//! may use up to its runtime's `memoryLimitBytes`, so without a shared budget N concurrent calls can
//! use N times that. Before starting a VM a call is *admitted*: it takes one VM slot and
//! `memoryLimitBytes` of the guest-memory budget, and gives both back when it returns. A call that
//! does not fit waits in a first-come, first-served queue; when the queue is full, or the call has
//! waited [`AdmissionLimits::max_queue_wait`], it fails with `runtime_unavailable` and a "busy,
//! retry" message. A `wait` refused this way leaves its run parked (nothing is lost); retrying
//! the `wait` later continues it.
//!
//! Every runtime built without [`crate::CodeModeBuilder::admission`] shares [`Admission::global`];
//! runtimes given one `Admission` share that one.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::abort::AbortSignal;

/// Bounds of an [`Admission`] budget.
///
/// The defaults suit a 24 GiB machine running nothing else heavy: 8 GiB of guest memory (a third
/// of it; a VM's resident memory is at most about 1.25 times its `memoryLimitBytes` plus 12 MiB, see
/// `SandboxConfig::memory_limit_bytes`), at most 128 VMs at once (128 runs at the default 64 MiB
/// `memoryLimitBytes`), 1,024 calls queued, each for at most 10 seconds. Keep
/// [`AdmissionLimits::max_vms`] below the sandbox's `max_live_vms` (1,000 by default) minus the
/// idle VMs the runtime keeps warm (up to 8 on idle VM threads, and up to 8 spares for
/// `GuestThread::Caller` runs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct AdmissionLimits {
    /// VMs held at once by `exec` and `wait` calls. Default: 128.
    pub max_vms: u32,
    /// Sum of the `memoryLimitBytes` of the VMs held at once. A single VM is always admitted when
    /// nothing else runs, even if its limit is larger. Default: 8 GiB.
    pub max_guest_memory_bytes: u64,
    /// Calls waiting for admission at once; one more fails at once. `0`: no queue. Default: 1,024.
    pub max_queued: u32,
    /// Longest a call waits in the queue. Default: 10 seconds.
    pub max_queue_wait: Duration,
    /// Suspended runs held at once by every runtime sharing this budget (the spec's per-process
    /// cap); one more is refused "too many suspended code mode runs". Default:
    /// [`MAX_SUSPENDED_RUNS`](crate::store::MAX_SUSPENDED_RUNS) (64).
    pub max_suspended_runs: u32,
}

impl Default for AdmissionLimits {
    fn default() -> Self {
        AdmissionLimits {
            max_vms: 128,
            max_guest_memory_bytes: 8 << 30,
            max_queued: 1024,
            max_queue_wait: Duration::from_secs(10),
            max_suspended_runs: crate::store::MAX_SUSPENDED_RUNS as u32,
        }
    }
}

impl AdmissionLimits {
    /// Limits with `max_vms` VMs and `max_guest_memory_bytes` of guest memory, the default queue.
    pub fn new(max_vms: u32, max_guest_memory_bytes: u64) -> AdmissionLimits {
        AdmissionLimits { max_vms, max_guest_memory_bytes, ..AdmissionLimits::default() }
    }

    /// With at most `max_queued` waiting calls, each waiting at most `max_queue_wait`.
    pub fn with_queue(mut self, max_queued: u32, max_queue_wait: Duration) -> AdmissionLimits {
        self.max_queued = max_queued;
        self.max_queue_wait = max_queue_wait;
        self
    }
}

/// Guest memory is counted in KiB (a `memoryLimitBytes` of 1 GiB is 1 Mi permits).
const UNIT: u64 = 1024;

/// A budget of VMs and guest memory shared by the runtimes that hold it. Cheap to clone (clones
/// share the budget).
#[derive(Clone, Debug)]
pub struct Admission {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    limits: AdmissionLimits,
    vms: Arc<Semaphore>,
    memory: Arc<Semaphore>,
    memory_units: u32,
    queued: AtomicUsize,
    held: AtomicUsize,
    suspended: AtomicUsize,
}

/// What an [`Admission`] is doing right now.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct AdmissionUsage {
    /// Calls holding a VM.
    pub vms: usize,
    /// Calls waiting in the queue.
    pub queued: usize,
    /// Suspended runs held (parked or being resumed) by every runtime sharing the budget.
    pub suspended_runs: usize,
}

/// Why a call was not admitted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// Queue full or waited too long: the model-visible "busy, retry" message.
    Busy(String),
    /// The call was aborted while it waited.
    Aborted,
}

/// A VM slot and its memory, held until dropped.
#[derive(Debug)]
pub(crate) struct Ticket {
    _vm: OwnedSemaphorePermit,
    _memory: OwnedSemaphorePermit,
    held: Arc<Inner>,
}

impl Drop for Ticket {
    fn drop(&mut self) {
        self.held.held.fetch_sub(1, Ordering::SeqCst);
    }
}

/// One suspended run's place under the process-wide cap, held until dropped.
#[derive(Debug)]
pub(crate) struct SuspendedRun(Arc<Inner>);

impl Drop for SuspendedRun {
    fn drop(&mut self) {
        self.0.suspended.fetch_sub(1, Ordering::SeqCst);
    }
}

struct QueueSlot<'a>(&'a AtomicUsize);

impl Drop for QueueSlot<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Admission {
    /// A budget with `limits` (zero VMs or zero memory are raised to one VM / 1 KiB).
    pub fn new(limits: AdmissionLimits) -> Admission {
        let vms = (limits.max_vms.max(1) as usize).min(Semaphore::MAX_PERMITS);
        let units = u32::try_from((limits.max_guest_memory_bytes / UNIT).max(1)).unwrap_or(u32::MAX);
        Admission {
            inner: Arc::new(Inner {
                limits,
                vms: Arc::new(Semaphore::new(vms)),
                memory: Arc::new(Semaphore::new(units as usize)),
                memory_units: units,
                queued: AtomicUsize::new(0),
                held: AtomicUsize::new(0),
                suspended: AtomicUsize::new(0),
            }),
        }
    }

    /// The process-wide budget ([`AdmissionLimits::default`]) that runtimes share unless given
    /// another one.
    pub fn global() -> &'static Admission {
        static GLOBAL: std::sync::OnceLock<Admission> = std::sync::OnceLock::new();
        GLOBAL.get_or_init(|| Admission::new(AdmissionLimits::default()))
    }

    /// The limits.
    pub fn limits(&self) -> &AdmissionLimits {
        &self.inner.limits
    }

    /// Calls holding a VM and calls queued, right now.
    pub fn usage(&self) -> AdmissionUsage {
        AdmissionUsage {
            vms: self.inner.held.load(Ordering::SeqCst),
            queued: self.inner.queued.load(Ordering::SeqCst),
            suspended_runs: self.inner.suspended.load(Ordering::SeqCst),
        }
    }

    /// Admits one VM of `memory_bytes`, waiting in the queue if it does not fit yet.
    pub(crate) async fn admit(&self, memory_bytes: u64, abort: &AbortSignal) -> Result<Ticket, Refusal> {
        let inner = &self.inner;
        let units =
            u32::try_from(memory_bytes.div_ceil(UNIT)).unwrap_or(u32::MAX).clamp(1, inner.memory_units);
        // Fast path: both fit now (a waiting call is never overtaken: the semaphores hand freed
        // permits to waiters first).
        if let Ok(vm) = inner.vms.clone().try_acquire_owned() {
            if let Ok(memory) = inner.memory.clone().try_acquire_many_owned(units) {
                return Ok(self.ticket(vm, memory));
            }
            drop(vm);
        }
        let limits = inner.limits;
        if inner.queued.fetch_add(1, Ordering::SeqCst) >= limits.max_queued as usize {
            inner.queued.fetch_sub(1, Ordering::SeqCst);
            return Err(Refusal::Busy(format!(
                "code mode is busy ({} running, {} waiting to start); retry in a few seconds.",
                inner.held.load(Ordering::SeqCst),
                limits.max_queued
            )));
        }
        let _slot = QueueSlot(&inner.queued);
        let acquire = async {
            let vm = inner.vms.clone().acquire_owned().await;
            let memory = inner.memory.clone().acquire_many_owned(units).await;
            (vm, memory)
        };
        tokio::select! {
            biased;
            _ = abort.aborted() => Err(Refusal::Aborted),
            (vm, memory) = acquire => match (vm, memory) {
                (Ok(vm), Ok(memory)) => Ok(self.ticket(vm, memory)),
                // The semaphores are never closed.
                _ => Err(Refusal::Busy("code mode is busy; retry in a few seconds.".into())),
            },
            _ = tokio::time::sleep(limits.max_queue_wait) => Err(Refusal::Busy(format!(
                "code mode is busy: no room for another run opened up within {} ms; retry in a few seconds.",
                limits.max_queue_wait.as_millis()
            ))),
        }
    }

    /// A place for one more suspended run, held until dropped; `None` at the cap.
    pub(crate) fn hold_suspended_run(&self) -> Option<SuspendedRun> {
        let cap = self.inner.limits.max_suspended_runs as usize;
        self.inner
            .suspended
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| (n < cap).then_some(n + 1))
            .ok()
            .map(|_| SuspendedRun(self.inner.clone()))
    }

    fn ticket(&self, vm: OwnedSemaphorePermit, memory: OwnedSemaphorePermit) -> Ticket {
        self.inner.held.fetch_add(1, Ordering::SeqCst);
        Ticket { _vm: vm, _memory: memory, held: self.inner.clone() }
    }
}
