//! [`AbortSignal`]: host-side cancellation of an `exec`/`wait` call.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use codemode_sandbox::InterruptHandle;

use tokio::sync::Notify;

/// A cancellation signal the host passes to [`crate::CodeMode::exec_with`] /
/// [`crate::CodeMode::wait_with`]. Cheap to clone; clones share state. Once aborted it stays aborted.
///
/// An aborted call returns `failed` with code `aborted`: nothing is dispatched if it is aborted
/// during preparation, in-flight nested calls are cancelled, and the run is never parked.
#[derive(Clone, Debug, Default)]
pub struct AbortSignal {
    inner: Arc<AbortInner>,
}

#[derive(Debug, Default)]
struct AbortInner {
    aborted: AtomicBool,
    notify: Notify,
    /// VMs running guest steps on a caller's thread: an abort interrupts them (by link id).
    links: Mutex<Vec<(u64, InterruptHandle)>>,
    next_link: AtomicU64,
}

/// Keeps a VM's [`InterruptHandle`] linked to an [`AbortSignal`] until dropped.
#[derive(Debug)]
pub(crate) struct AbortLink {
    inner: Arc<AbortInner>,
    id: u64,
}

impl Drop for AbortLink {
    fn drop(&mut self) {
        self.inner.links.lock().unwrap_or_else(|p| p.into_inner()).retain(|(id, _)| *id != self.id);
    }
}

impl AbortSignal {
    /// A signal that is not aborted yet.
    pub fn new() -> AbortSignal {
        AbortSignal::default()
    }

    /// Aborts every call holding this signal (or a clone).
    pub fn abort(&self) {
        self.inner.aborted.store(true, Ordering::SeqCst);
        self.inner.notify.notify_waiters();
        for (_, handle) in self.inner.links.lock().unwrap_or_else(|p| p.into_inner()).iter() {
            handle.interrupt();
        }
    }

    /// Interrupts the VM of `handle` when this signal aborts (at once if it already has), until
    /// the returned link is dropped. For guest steps that run on the caller's thread, where no
    /// `select!` can stop waiting for them.
    pub(crate) fn link(&self, handle: InterruptHandle) -> AbortLink {
        let id = self.inner.next_link.fetch_add(1, Ordering::Relaxed);
        self.inner.links.lock().unwrap_or_else(|p| p.into_inner()).push((id, handle.clone()));
        if self.is_aborted() {
            handle.interrupt();
        }
        AbortLink { inner: self.inner.clone(), id }
    }

    /// Whether [`AbortSignal::abort`] was called.
    pub fn is_aborted(&self) -> bool {
        self.inner.aborted.load(Ordering::SeqCst)
    }

    /// Completes once the signal is aborted.
    pub async fn aborted(&self) {
        loop {
            let notified = self.inner.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.is_aborted() {
                return;
            }
            notified.await;
        }
    }
}
