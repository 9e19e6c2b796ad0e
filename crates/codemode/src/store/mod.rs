//! Run storage: where suspended runs wait for `wait`.
//!
//! Without a configured store a [`crate::CodeMode`] keeps its suspended runs in its own
//! in-process map (`local.rs`: the spec's behaviour, live state, nothing serialized). With a
//! [`RunStore`] ([`CodeModeBuilder::run_store`](crate::CodeModeBuilder::run_store)) every
//! suspended run is a sealed record (versioned, under an HMAC keyed by the [`StateKey`]) in a store that several runtimes, or
//! several processes, share:
//!
//! - [`MemoryRunStore`]: records in this process (runtimes of one process sharing runs; tests);
//! - [`FileRunStore`]: one directory, atomic writes, survives a restart;
//! - `RedisRunStore` (feature `redis`): TTL as key expiry, every multi-step change one Lua script.
//!
//! Every store enforces the same rules atomically: at most [`MAX_SUSPENDED_RUNS`] parked runs per
//! store, `snapshotTtlSeconds` per run, scope checked on claim, and one `wait` at a time
//! (a claim). Nested-call results land in the store as they settle ([`RunStore::land`]), only
//! for a call still registered to the process that lands it; a call whose owner's lease
//! ([`RunStore::heartbeat`]) lapsed can be taken over ([`RunStore::interrupt`]) by whoever holds
//! the claim.

use std::time::Duration;

use async_trait::async_trait;

pub(crate) mod envelope;
mod file;
pub(crate) mod local;
mod memory;
#[cfg(feature = "redis")]
mod redis;
pub(crate) mod shared;

pub use envelope::{EnvelopeError, MIN_KEY_BYTES, StateKey};
pub use file::FileRunStore;
pub use local::MAX_SUSPENDED_RUNS;
pub(crate) use local::{ALREADY_RESUMING, OTHER_AGENT_RUN, OTHER_SESSION, TOO_MANY, UNAVAILABLE};
pub use memory::MemoryRunStore;
#[cfg(feature = "redis")]
pub use redis::RedisRunStore;

/// A failure of the store itself (I/O, connection, a corrupt index). `exec`/`wait` turn it into
/// a `failed` result with `runtime_unavailable`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The store could not be reached or used.
    #[error("run store unavailable: {0}")]
    Unavailable(String),
    /// A store address that cannot be used.
    #[error("invalid run store address {address:?}: {reason}")]
    Address {
        /// What was given.
        address: String,
        /// Why it cannot be used.
        reason: String,
    },
}

/// Why a claim was refused.
#[derive(Debug)]
#[non_exhaustive]
pub enum ClaimError {
    /// Unknown, expired, or abandoned by a `wait` whose process stopped.
    Unavailable,
    /// The run belongs to another session.
    OtherSession,
    /// The run belongs to another agent run.
    OtherAgentRun,
    /// Another `wait` holds the run.
    AlreadyResuming,
    /// The store failed.
    Store(StoreError),
}

impl From<StoreError> for ClaimError {
    fn from(e: StoreError) -> Self {
        ClaimError::Store(e)
    }
}

/// One suspended run as stored: its scope (checked on claim, in the clear so a store can check it
/// atomically; the sealed record repeats it under the MAC) and the sealed record.
#[derive(Clone, Debug)]
pub struct RunRecord {
    /// The run id.
    pub run_id: String,
    /// Session of the `exec` that started the run.
    pub session_id: String,
    /// Agent run of the `exec` that started the run.
    pub agent_run_id: String,
    /// The sealed record (versioned, authenticated with the [`StateKey`]).
    pub sealed: Vec<u8>,
}

/// What a park changes besides the record, in the same atomic step.
#[derive(Clone, Debug, Default)]
pub struct ParkChanges {
    /// The run is new (its `exec` suspended): it counts against [`MAX_SUSPENDED_RUNS`] and is
    /// refused when the store is full. Otherwise the parker holds the claim and parks it again.
    pub new: bool,
    /// Landed results the parker took up (delivered, or copied into the record): removed.
    pub consumed: Vec<u32>,
    /// Nested calls now in flight in the parker's process: `(guest call id, owner instance)`.
    pub register: Vec<(u32, String)>,
}

/// The outcome of a park.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Parked {
    /// The run is stored.
    Stored,
    /// The store holds [`MAX_SUSPENDED_RUNS`] runs already (only for a new run).
    Full,
    /// The run is gone (cancelled, expired, or its claim was lost) while the parker held it.
    Gone,
}

/// A claimed run: the sealed record, the results that landed since it was parked, and the calls
/// registered as in flight with their owners.
#[derive(Clone, Debug, Default)]
pub struct Claimed {
    /// The sealed record.
    pub sealed: Vec<u8>,
    /// Landed results by guest call id (encoded replies).
    pub landed: Vec<(u32, Vec<u8>)>,
    /// Calls in flight: (guest call id, owner instance).
    pub calls: Vec<(u32, String)>,
}

/// What a claimant sees of a claimed run while it waits: landed results and registered calls.
#[derive(Clone, Debug, Default)]
pub struct Progress {
    /// Landed results by guest call id (encoded replies), all of them (seen or not).
    pub landed: Vec<(u32, Vec<u8>)>,
    /// Calls in flight: (guest call id, owner instance).
    pub calls: Vec<(u32, String)>,
}

/// Storage of suspended runs shared by runtimes and processes. Every method is one atomic step
/// against the store. Times are the store's own (`expires`, claim holds and leases are durations
/// from the moment the store performs the step).
#[async_trait]
pub trait RunStore: Send + Sync + std::fmt::Debug {
    /// Stores (or stores again) a run for `ttl`, releasing the parker's claim, applying `changes`.
    async fn park(
        &self,
        record: RunRecord,
        ttl: Duration,
        changes: ParkChanges,
    ) -> Result<Parked, StoreError>;

    /// Claims a parked run for one `wait`, checking its scope, for at most `hold` (a claim older
    /// than that belongs to a `wait` whose process stopped: the run is then discarded and reads
    /// as unavailable).
    async fn claim(
        &self,
        run_id: &str,
        session_id: &str,
        agent_run_id: &str,
        claimant: &str,
        hold: Duration,
    ) -> Result<Claimed, ClaimError>;

    /// Gives a claim back without changing the run (its record could not be used here).
    async fn release(&self, run_id: &str, claimant: &str) -> Result<(), StoreError>;

    /// Landed results and registered calls of a run (for its claimant, while it waits).
    async fn progress(&self, run_id: &str) -> Result<Progress, StoreError>;

    /// Records the result of call `call` of `run_id`, if the call is still registered to `owner`
    /// (unregistering it). Returns whether it was recorded (false: the run is gone, or the call
    /// was interrupted and taken over).
    async fn land(&self, run_id: &str, call: u32, owner: &str, reply: Vec<u8>) -> Result<bool, StoreError>;

    /// Unregisters call `call` of `run_id` if it is still registered to `owner` and `owner`'s lease
    /// has lapsed (its process stopped). Returns whether it did: the caller then settles the call.
    async fn interrupt(&self, run_id: &str, call: u32, owner: &str) -> Result<bool, StoreError>;

    /// Forgets a run (terminal result), whatever its state.
    async fn remove(&self, run_id: &str) -> Result<(), StoreError>;

    /// Removes a parked (not claimed) run. Returns whether one was removed.
    async fn cancel(&self, run_id: &str) -> Result<bool, StoreError>;

    /// Removes every run of a session. Returns how many.
    async fn end_session(&self, session_id: &str) -> Result<usize, StoreError>;

    /// Whether a run is stored (parked or claimed, not expired).
    async fn contains(&self, run_id: &str) -> Result<bool, StoreError>;

    /// Runs stored (parked or claimed, not expired).
    async fn count(&self) -> Result<usize, StoreError>;

    /// Keeps `instance`'s lease for `ttl` more (its process is alive).
    async fn heartbeat(&self, instance: &str, ttl: Duration) -> Result<(), StoreError>;
}

/// Opens the store an address names: `memory:` (this process only), `file://DIR` (a directory,
/// created if missing) or `redis://HOST:PORT/DB` (needs the `redis` feature).
pub async fn open_run_store(address: &str) -> Result<std::sync::Arc<dyn RunStore>, StoreError> {
    if address == "memory:" || address == "memory://" {
        return Ok(std::sync::Arc::new(MemoryRunStore::new()));
    }
    if let Some(dir) = address.strip_prefix("file://") {
        if dir.is_empty() {
            return Err(StoreError::Address {
                address: address.to_owned(),
                reason: "name a directory: file:///var/lib/codemode/runs".into(),
            });
        }
        return Ok(std::sync::Arc::new(FileRunStore::open(dir)?));
    }
    if address.starts_with("redis://") || address.starts_with("rediss://") {
        #[cfg(feature = "redis")]
        {
            return Ok(std::sync::Arc::new(RedisRunStore::connect(address).await?));
        }
        #[cfg(not(feature = "redis"))]
        {
            return Err(StoreError::Address {
                address: address.to_owned(),
                reason: "this build has no Redis support (the codemode crate's `redis` feature)".into(),
            });
        }
    }
    Err(StoreError::Address {
        address: address.to_owned(),
        reason: "expected file://DIR or redis://HOST:PORT/DB".into(),
    })
}

/// How long a `wait`'s claim holds at most: the wait's own time bound plus room for restore and
/// snapshot. A claim older than this was left by a process that stopped mid-`wait`.
pub(crate) fn claim_hold(timeout_ms: u64) -> Duration {
    Duration::from_millis(timeout_ms) + Duration::from_secs(30)
}

/// How long a process's lease lasts without a heartbeat, and how often it is renewed.
pub(crate) const LEASE_TTL: Duration = Duration::from_millis(3000);
pub(crate) const LEASE_EVERY: Duration = Duration::from_millis(1000);

/// Milliseconds since the Unix epoch (0 before it).
pub(crate) fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}
