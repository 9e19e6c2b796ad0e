//! [`MemoryRunStore`]: sealed run records in this process, shared by every runtime that holds the
//! store. The rules every store follows are here, on [`Entry`] (the file store applies the same
//! ones to entries it reads from disk under its lock).

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use super::{
    ClaimError, Claimed, MAX_SUSPENDED_RUNS, ParkChanges, Parked, Progress, RunRecord, RunStore, StoreError,
    unix_ms,
};

/// One stored run with its bookkeeping. Times are Unix milliseconds.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct Entry {
    pub session: String,
    pub agent: String,
    pub expires_ms: u64,
    /// `(claimant, until)` while a `wait` holds the run.
    pub claim: Option<(String, u64)>,
    /// Landed results (encoded replies) by guest call id.
    pub landed: BTreeMap<u32, String>,
    /// Calls in flight: owner instance by guest call id.
    pub calls: BTreeMap<u32, String>,
    #[serde(skip)]
    pub sealed: Vec<u8>,
}

/// What a claim decided for an entry.
pub(crate) enum ClaimStep {
    Claimed(Claimed),
    Refused(ClaimError),
    /// The claim of a stopped `wait` expired: remove the entry and report it unavailable.
    Abandoned,
}

impl Entry {
    /// Whether the entry is gone for good at `now`: a parked run past its TTL, or a claimed one
    /// whose claim expired (a `wait` that stopped with its process).
    pub fn dead(&self, now: u64) -> bool {
        match &self.claim {
            None => self.expires_ms <= now,
            Some((_, until)) => *until <= now,
        }
    }

    pub fn new_parked(record: RunRecord, ttl: Duration, changes: &ParkChanges, now: u64) -> Entry {
        let mut entry = Entry {
            session: record.session_id,
            agent: record.agent_run_id,
            expires_ms: now.saturating_add(ttl_ms(ttl)),
            claim: None,
            landed: BTreeMap::new(),
            calls: BTreeMap::new(),
            sealed: record.sealed,
        };
        entry.calls.extend(changes.register.iter().cloned());
        entry
    }

    /// Parks a claimed entry again (the parker holds the claim).
    pub fn repark(&mut self, record: RunRecord, ttl: Duration, changes: &ParkChanges, now: u64) {
        self.sealed = record.sealed;
        self.expires_ms = now.saturating_add(ttl_ms(ttl));
        self.claim = None;
        for id in &changes.consumed {
            self.landed.remove(id);
        }
        self.calls.extend(changes.register.iter().cloned());
    }

    pub fn claim(
        &mut self,
        session: &str,
        agent: &str,
        claimant: &str,
        hold: Duration,
        now: u64,
    ) -> ClaimStep {
        if let Some((_, until)) = &self.claim {
            return if *until <= now {
                ClaimStep::Abandoned
            } else {
                ClaimStep::Refused(ClaimError::AlreadyResuming)
            };
        }
        if self.expires_ms <= now {
            return ClaimStep::Refused(ClaimError::Unavailable);
        }
        if self.session != session {
            return ClaimStep::Refused(ClaimError::OtherSession);
        }
        if self.agent != agent {
            return ClaimStep::Refused(ClaimError::OtherAgentRun);
        }
        self.claim = Some((claimant.to_owned(), now.saturating_add(ttl_ms(hold))));
        ClaimStep::Claimed(Claimed {
            sealed: self.sealed.clone(),
            landed: self.landed.iter().map(|(k, v)| (*k, v.clone().into_bytes())).collect(),
            calls: self.calls.iter().map(|(k, v)| (*k, v.clone())).collect(),
        })
    }

    pub fn progress(&self) -> Progress {
        Progress {
            landed: self.landed.iter().map(|(k, v)| (*k, v.clone().into_bytes())).collect(),
            calls: self.calls.iter().map(|(k, v)| (*k, v.clone())).collect(),
        }
    }

    pub fn land(&mut self, call: u32, owner: &str, reply: Vec<u8>) -> bool {
        if self.calls.get(&call).map(String::as_str) != Some(owner) {
            return false;
        }
        self.calls.remove(&call);
        self.landed.insert(call, String::from_utf8_lossy(&reply).into_owned());
        true
    }
}

pub(crate) fn ttl_ms(ttl: Duration) -> u64 {
    u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX)
}

#[derive(Debug, Default)]
struct Tables {
    runs: HashMap<String, Entry>,
    /// Lease expiry (Unix ms) by instance.
    leases: HashMap<String, u64>,
}

impl Tables {
    fn sweep(&mut self, now: u64) {
        self.runs.retain(|_, e| !e.dead(now));
    }
}

/// Sealed run records in this process's memory: runtimes of one process (or the tests) sharing
/// runs exactly as separate processes share a file or Redis store. Lost when the process ends.
#[derive(Debug, Default)]
pub struct MemoryRunStore {
    tables: Mutex<Tables>,
}

impl MemoryRunStore {
    /// An empty store.
    pub fn new() -> MemoryRunStore {
        MemoryRunStore::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Tables> {
        self.tables.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[async_trait]
impl RunStore for MemoryRunStore {
    async fn park(
        &self,
        record: RunRecord,
        ttl: Duration,
        changes: ParkChanges,
    ) -> Result<Parked, StoreError> {
        let now = unix_ms();
        let mut t = self.lock();
        t.sweep(now);
        if changes.new {
            if t.runs.contains_key(&record.run_id) {
                return Ok(Parked::Gone);
            }
            if t.runs.len() >= MAX_SUSPENDED_RUNS {
                return Ok(Parked::Full);
            }
            let id = record.run_id.clone();
            t.runs.insert(id, Entry::new_parked(record, ttl, &changes, now));
            return Ok(Parked::Stored);
        }
        match t.runs.get_mut(&record.run_id) {
            Some(entry) if entry.claim.is_some() => {
                entry.repark(record, ttl, &changes, now);
                Ok(Parked::Stored)
            }
            _ => Ok(Parked::Gone),
        }
    }

    async fn claim(
        &self,
        run_id: &str,
        session_id: &str,
        agent_run_id: &str,
        claimant: &str,
        hold: Duration,
    ) -> Result<Claimed, ClaimError> {
        let now = unix_ms();
        let mut t = self.lock();
        let Some(entry) = t.runs.get_mut(run_id) else { return Err(ClaimError::Unavailable) };
        match entry.claim(session_id, agent_run_id, claimant, hold, now) {
            ClaimStep::Claimed(claimed) => Ok(claimed),
            ClaimStep::Refused(e) => Err(e),
            ClaimStep::Abandoned => {
                t.runs.remove(run_id);
                Err(ClaimError::Unavailable)
            }
        }
    }

    async fn release(&self, run_id: &str, claimant: &str) -> Result<(), StoreError> {
        let mut t = self.lock();
        if let Some(entry) = t.runs.get_mut(run_id)
            && entry.claim.as_ref().is_some_and(|(c, _)| c == claimant)
        {
            entry.claim = None;
        }
        Ok(())
    }

    async fn progress(&self, run_id: &str) -> Result<Progress, StoreError> {
        Ok(self.lock().runs.get(run_id).map(Entry::progress).unwrap_or_default())
    }

    async fn land(&self, run_id: &str, call: u32, owner: &str, reply: Vec<u8>) -> Result<bool, StoreError> {
        let now = unix_ms();
        let mut t = self.lock();
        Ok(match t.runs.get_mut(run_id) {
            Some(entry) if !entry.dead(now) => entry.land(call, owner, reply),
            _ => false,
        })
    }

    async fn interrupt(&self, run_id: &str, call: u32, owner: &str) -> Result<bool, StoreError> {
        let now = unix_ms();
        let mut t = self.lock();
        let alive = t.leases.get(owner).is_some_and(|until| *until > now);
        let Some(entry) = t.runs.get_mut(run_id) else { return Ok(false) };
        if alive || entry.calls.get(&call).map(String::as_str) != Some(owner) {
            return Ok(false);
        }
        entry.calls.remove(&call);
        Ok(true)
    }

    async fn remove(&self, run_id: &str) -> Result<(), StoreError> {
        let removed = self.lock().runs.remove(run_id);
        drop(removed);
        Ok(())
    }

    async fn cancel(&self, run_id: &str) -> Result<bool, StoreError> {
        let now = unix_ms();
        let mut t = self.lock();
        t.sweep(now);
        let parked = t.runs.get(run_id).is_some_and(|e| e.claim.is_none());
        Ok(parked && t.runs.remove(run_id).is_some())
    }

    async fn end_session(&self, session_id: &str) -> Result<usize, StoreError> {
        let mut t = self.lock();
        let before = t.runs.len();
        t.runs.retain(|_, e| e.session != session_id);
        Ok(before - t.runs.len())
    }

    async fn contains(&self, run_id: &str) -> Result<bool, StoreError> {
        let now = unix_ms();
        let mut t = self.lock();
        t.sweep(now);
        Ok(t.runs.contains_key(run_id))
    }

    async fn count(&self) -> Result<usize, StoreError> {
        let now = unix_ms();
        let mut t = self.lock();
        t.sweep(now);
        Ok(t.runs.len())
    }

    async fn heartbeat(&self, instance: &str, ttl: Duration) -> Result<(), StoreError> {
        let now = unix_ms();
        let mut t = self.lock();
        t.leases.retain(|_, until| *until > now);
        t.leases.insert(instance.to_owned(), now.saturating_add(ttl_ms(ttl)));
        Ok(())
    }
}
