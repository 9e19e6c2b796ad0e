//! The run store: suspended runs in an in-process map, keyed by run id. Nothing is persisted.
//!
//! An entry is either parked (a snapshot waiting for `wait`) or being resumed (a `wait` holds the
//! run). Parked entries expire after `snapshotTtlSeconds`; at most [`MAX_SUSPENDED_RUNS`] entries
//! exist at once in the process (each entry holds a place of the [`crate::Admission`] budget every
//! runtime shares). Dropping a run cancels its in-flight nested calls.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::admission::{Admission, SuspendedRun};
use crate::host::RunScope;
use crate::run::RunState;

/// The most suspended runs a process keeps (the spec's per-process cap): the default
/// [`AdmissionLimits::max_suspended_runs`](crate::AdmissionLimits::max_suspended_runs), shared by
/// every [`crate::CodeMode`] of one [`crate::Admission`].
pub const MAX_SUSPENDED_RUNS: usize = 64;

/// Message for an unknown or expired run id.
pub(crate) const UNAVAILABLE: &str = "code mode run is unavailable or expired.";
/// Message for a run of another session.
pub(crate) const OTHER_SESSION: &str = "code mode run belongs to a different session.";
/// Message for a run of another agent run.
pub(crate) const OTHER_AGENT_RUN: &str = "code mode run belongs to a different agent run.";
/// Message for a second concurrent `wait`.
pub(crate) const ALREADY_RESUMING: &str = "code mode run is already being resumed.";
/// Message when the cap of suspended runs is reached.
pub(crate) const TOO_MANY: &str = "too many suspended code mode runs.";

struct Entry {
    session_id: String,
    agent_run_id: String,
    expires_at: Instant,
    /// `None` while a `wait` holds the run.
    parked: Option<Box<RunState>>,
    /// Its place under the process-wide cap, released with the entry.
    _place: SuspendedRun,
}

#[derive(Default)]
pub(crate) struct RunStore {
    runs: Mutex<HashMap<String, Entry>>,
}

impl RunStore {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        self.runs.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Removes expired parked runs; returns them so they are dropped outside the lock.
    fn sweep(runs: &mut HashMap<String, Entry>) -> Vec<Entry> {
        let now = Instant::now();
        let expired: Vec<String> = runs
            .iter()
            .filter(|(_, e)| e.parked.is_some() && e.expires_at <= now)
            .map(|(id, _)| id.clone())
            .collect();
        expired.iter().filter_map(|id| runs.remove(id)).collect()
    }

    /// Parks `run` for `ttl`. A run that a `wait` holds is parked again in place; a new run is
    /// refused (and handed back) when the cap is reached.
    pub(crate) fn park(
        &self,
        run: Box<RunState>,
        ttl: Duration,
        admission: &Admission,
    ) -> Result<(), Box<RunState>> {
        let mut runs = self.lock();
        let _expired = Self::sweep(&mut runs);
        let id = run.run_id.clone();
        let expires_at = Instant::now() + ttl;
        if let Some(entry) = runs.get_mut(&id) {
            entry.parked = Some(run);
            entry.expires_at = expires_at;
            return Ok(());
        }
        let Some(place) = admission.hold_suspended_run() else { return Err(run) };
        let entry = Entry {
            session_id: run.scope.session_id.clone(),
            agent_run_id: run.scope.agent_run_id.clone(),
            expires_at,
            parked: Some(run),
            _place: place,
        };
        runs.insert(id, entry);
        Ok(())
    }

    /// Takes a parked run for `wait`, checking its scope; the entry stays as "being resumed".
    pub(crate) fn take_for_wait(
        &self,
        run_id: &str,
        scope: &RunScope,
    ) -> Result<Box<RunState>, &'static str> {
        let mut runs = self.lock();
        let _expired = Self::sweep(&mut runs);
        let entry = runs.get_mut(run_id).ok_or(UNAVAILABLE)?;
        if entry.session_id != scope.session_id {
            return Err(OTHER_SESSION);
        }
        if entry.agent_run_id != scope.agent_run_id {
            return Err(OTHER_AGENT_RUN);
        }
        entry.parked.take().ok_or(ALREADY_RESUMING)
    }

    /// Forgets a run (terminal state after a `wait`).
    pub(crate) fn remove(&self, run_id: &str) {
        let removed = self.lock().remove(run_id);
        drop(removed);
    }

    /// Cancels a parked run: it is removed and its nested calls are cancelled.
    pub(crate) fn cancel(&self, run_id: &str) -> bool {
        let mut runs = self.lock();
        let parked = runs.get(run_id).is_some_and(|e| e.parked.is_some());
        let removed = if parked { runs.remove(run_id) } else { None };
        drop(runs);
        removed.is_some()
    }

    /// Removes every run of a session.
    pub(crate) fn end_session(&self, session_id: &str) -> usize {
        let mut runs = self.lock();
        let ids: Vec<String> =
            runs.iter().filter(|(_, e)| e.session_id == session_id).map(|(id, _)| id.clone()).collect();
        let removed: Vec<Entry> = ids.iter().filter_map(|id| runs.remove(id)).collect();
        drop(runs);
        removed.len()
    }

    /// Removes everything.
    pub(crate) fn clear(&self) -> usize {
        let removed: Vec<(String, Entry)> = self.lock().drain().collect();
        removed.len()
    }

    /// Whether `run_id` is live (parked or being resumed), after dropping expired runs.
    pub(crate) fn contains(&self, run_id: &str) -> bool {
        let mut runs = self.lock();
        let expired = Self::sweep(&mut runs);
        let found = runs.contains_key(run_id);
        drop(runs);
        drop(expired);
        found
    }

    /// Live entries (parked or being resumed), after dropping expired ones.
    pub(crate) fn len(&self) -> usize {
        let mut runs = self.lock();
        let expired = Self::sweep(&mut runs);
        let n = runs.len();
        drop(runs);
        drop(expired);
        n
    }
}
