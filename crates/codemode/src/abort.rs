//! [`AbortSignal`]: host-side cancellation of an `exec`/`wait` call.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

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
