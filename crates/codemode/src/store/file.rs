//! [`FileRunStore`]: one directory of run files, shared by the processes of one machine (or of a
//! shared volume) and kept across restarts.
//!
//! Layout: `runs/<run id>.run` (a little-endian `u32` length, the entry's bookkeeping as JSON, then
//! the sealed record), `leases/<instance>` (the Unix millisecond a process's lease ends) and
//! `.lock`. Every operation holds an exclusive lock on `.lock` (an OS file lock, released if the
//! process dies) for its read-modify-write, so operations of all processes are atomic against each
//! other; every file is written to a temporary name, flushed to disk and renamed over the old one,
//! so a crash leaves the old or the new version, never a torn one.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;

use super::memory::{ClaimStep, Entry, ttl_ms};
use super::{
    ClaimError, Claimed, MAX_SUSPENDED_RUNS, ParkChanges, Parked, Progress, RunRecord, RunStore, StoreError,
    unix_ms,
};

/// Longest run id or instance name used as a file name.
const MAX_NAME: usize = 128;

/// Suspended runs in a directory (see the module docs).
#[derive(Debug, Clone)]
pub struct FileRunStore {
    inner: Arc<Dirs>,
}

#[derive(Debug)]
struct Dirs {
    root: PathBuf,
    runs: PathBuf,
    leases: PathBuf,
}

fn io(context: &str, e: std::io::Error) -> StoreError {
    StoreError::Unavailable(format!("{context}: {e}"))
}

/// Run ids and instance names are file names: only `[A-Za-z0-9_.-]`, no leading dot.
fn safe_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME
        && !name.starts_with('.')
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.')
}

impl FileRunStore {
    /// Opens (creating if missing) the store in `dir`.
    pub fn open(dir: impl AsRef<Path>) -> Result<FileRunStore, StoreError> {
        let root = dir.as_ref().to_path_buf();
        let runs = root.join("runs");
        let leases = root.join("leases");
        for d in [&root, &runs, &leases] {
            fs::create_dir_all(d).map_err(|e| io(&format!("creating {}", d.display()), e))?;
        }
        let store = FileRunStore { inner: Arc::new(Dirs { root, runs, leases }) };
        // Fails now, not at the first suspension, if the lock cannot be taken.
        drop(store.inner.lock()?);
        Ok(store)
    }

    /// Runs `f` under the store lock on a blocking thread.
    async fn locked<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Dirs) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let inner = self.inner.clone();
        tokio::task::spawn_blocking(move || {
            let _lock = inner.lock()?;
            f(&inner)
        })
        .await
        .map_err(|e| StoreError::Unavailable(format!("run store task failed: {e}")))?
    }
}

struct Lock(File);

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = self.0.unlock();
    }
}

impl Dirs {
    fn lock(&self) -> Result<Lock, StoreError> {
        let path = self.root.join(".lock");
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| io(&format!("opening {}", path.display()), e))?;
        file.lock().map_err(|e| io(&format!("locking {}", path.display()), e))?;
        Ok(Lock(file))
    }

    fn run_path(&self, run_id: &str) -> PathBuf {
        self.runs.join(format!("{run_id}.run"))
    }

    fn read(&self, run_id: &str) -> Result<Option<Entry>, StoreError> {
        if !safe_name(run_id) {
            return Ok(None);
        }
        read_entry(&self.run_path(run_id))
    }

    fn write(&self, run_id: &str, entry: &Entry) -> Result<(), StoreError> {
        let meta = serde_json::to_vec(entry).map_err(|e| StoreError::Unavailable(e.to_string()))?;
        let mut bytes = Vec::with_capacity(4 + meta.len() + entry.sealed.len());
        bytes.extend_from_slice(&(meta.len() as u32).to_le_bytes());
        bytes.extend_from_slice(&meta);
        bytes.extend_from_slice(&entry.sealed);
        atomic_write(&self.runs, &self.run_path(run_id), &bytes)
    }

    fn delete(&self, run_id: &str) -> Result<(), StoreError> {
        if !safe_name(run_id) {
            return Ok(());
        }
        match fs::remove_file(self.run_path(run_id)) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(io("removing a run", e)),
        }
    }

    /// Every live entry (dead ones are deleted on the way).
    fn live(&self, now: u64) -> Result<Vec<(String, Entry)>, StoreError> {
        let mut out = Vec::new();
        for item in fs::read_dir(&self.runs).map_err(|e| io("listing runs", e))? {
            let item = item.map_err(|e| io("listing runs", e))?;
            let name = item.file_name().to_string_lossy().into_owned();
            let Some(run_id) = name.strip_suffix(".run") else { continue };
            if !safe_name(run_id) {
                continue;
            }
            match read_entry(&item.path()) {
                Ok(Some(entry)) if !entry.dead(now) => out.push((run_id.to_owned(), entry)),
                Ok(Some(_)) | Err(_) => self.delete(run_id)?,
                Ok(None) => {}
            }
        }
        Ok(out)
    }

    fn lease_alive(&self, instance: &str, now: u64) -> bool {
        if !safe_name(instance) {
            return false;
        }
        fs::read_to_string(self.leases.join(instance))
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
            .is_some_and(|until| until > now)
    }
}

fn read_entry(path: &Path) -> Result<Option<Entry>, StoreError> {
    let mut file = match File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io("reading a run", e)),
    };
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).map_err(|e| io("reading a run", e))?;
    let corrupt = || StoreError::Unavailable(format!("run file {} is corrupt", path.display()));
    let len =
        bytes.get(..4).and_then(|b| b.try_into().ok()).map(u32::from_le_bytes).ok_or_else(corrupt)? as usize;
    let meta = bytes.get(4..4 + len).ok_or_else(corrupt)?;
    let mut entry: Entry = serde_json::from_slice(meta).map_err(|_| corrupt())?;
    entry.sealed = bytes[4 + len..].to_vec();
    Ok(Some(entry))
}

fn atomic_write(dir: &Path, path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = dir.join(format!(".tmp-{}-{n}", std::process::id()));
    let written = (|| {
        let mut file = File::create(&tmp)?;
        file.write_all(bytes)?;
        file.sync_data()?;
        fs::rename(&tmp, path)
    })();
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(io(&format!("writing {}", path.display()), e));
    }
    Ok(())
}

#[async_trait]
impl RunStore for FileRunStore {
    async fn park(
        &self,
        record: RunRecord,
        ttl: Duration,
        changes: ParkChanges,
    ) -> Result<Parked, StoreError> {
        if !safe_name(&record.run_id) {
            return Ok(Parked::Gone);
        }
        self.locked(move |d| {
            let now = unix_ms();
            let existing = d.read(&record.run_id)?.filter(|e| !e.dead(now));
            let id = record.run_id.clone();
            if changes.new {
                if existing.is_some() {
                    return Ok(Parked::Gone);
                }
                if d.live(now)?.len() >= MAX_SUSPENDED_RUNS {
                    return Ok(Parked::Full);
                }
                d.write(&id, &Entry::new_parked(record, ttl, &changes, now))?;
                return Ok(Parked::Stored);
            }
            match existing {
                Some(mut entry) if entry.claim.is_some() => {
                    entry.repark(record, ttl, &changes, now);
                    d.write(&id, &entry)?;
                    Ok(Parked::Stored)
                }
                _ => Ok(Parked::Gone),
            }
        })
        .await
    }

    async fn claim(
        &self,
        run_id: &str,
        session_id: &str,
        agent_run_id: &str,
        claimant: &str,
        hold: Duration,
    ) -> Result<Claimed, ClaimError> {
        let (run_id, session, agent, claimant) =
            (run_id.to_owned(), session_id.to_owned(), agent_run_id.to_owned(), claimant.to_owned());
        let step = self
            .locked(move |d| {
                let now = unix_ms();
                let Some(mut entry) = d.read(&run_id)? else {
                    return Ok(ClaimStep::Refused(ClaimError::Unavailable));
                };
                let step = entry.claim(&session, &agent, &claimant, hold, now);
                match &step {
                    ClaimStep::Claimed(_) => d.write(&run_id, &entry)?,
                    ClaimStep::Abandoned => d.delete(&run_id)?,
                    ClaimStep::Refused(ClaimError::Unavailable) => d.delete(&run_id)?,
                    ClaimStep::Refused(_) => {}
                }
                Ok(step)
            })
            .await?;
        match step {
            ClaimStep::Claimed(claimed) => Ok(claimed),
            ClaimStep::Refused(e) => Err(e),
            ClaimStep::Abandoned => Err(ClaimError::Unavailable),
        }
    }

    async fn release(&self, run_id: &str, claimant: &str) -> Result<(), StoreError> {
        let (run_id, claimant) = (run_id.to_owned(), claimant.to_owned());
        self.locked(move |d| {
            if let Some(mut entry) = d.read(&run_id)?
                && entry.claim.as_ref().is_some_and(|(c, _)| *c == claimant)
            {
                entry.claim = None;
                d.write(&run_id, &entry)?;
            }
            Ok(())
        })
        .await
    }

    async fn progress(&self, run_id: &str) -> Result<Progress, StoreError> {
        let run_id = run_id.to_owned();
        self.locked(move |d| Ok(d.read(&run_id)?.map(|e| e.progress()).unwrap_or_default())).await
    }

    async fn land(&self, run_id: &str, call: u32, owner: &str, reply: Vec<u8>) -> Result<bool, StoreError> {
        let (run_id, owner) = (run_id.to_owned(), owner.to_owned());
        self.locked(move |d| {
            let now = unix_ms();
            match d.read(&run_id)? {
                Some(mut entry) if !entry.dead(now) => {
                    let landed = entry.land(call, &owner, reply);
                    if landed {
                        d.write(&run_id, &entry)?;
                    }
                    Ok(landed)
                }
                _ => Ok(false),
            }
        })
        .await
    }

    async fn interrupt(&self, run_id: &str, call: u32, owner: &str) -> Result<bool, StoreError> {
        let (run_id, owner) = (run_id.to_owned(), owner.to_owned());
        self.locked(move |d| {
            let now = unix_ms();
            if d.lease_alive(&owner, now) {
                return Ok(false);
            }
            let Some(mut entry) = d.read(&run_id)? else { return Ok(false) };
            if entry.calls.get(&call) != Some(&owner) {
                return Ok(false);
            }
            entry.calls.remove(&call);
            d.write(&run_id, &entry)?;
            Ok(true)
        })
        .await
    }

    async fn remove(&self, run_id: &str) -> Result<(), StoreError> {
        let run_id = run_id.to_owned();
        self.locked(move |d| d.delete(&run_id)).await
    }

    async fn cancel(&self, run_id: &str) -> Result<bool, StoreError> {
        let run_id = run_id.to_owned();
        self.locked(move |d| {
            let now = unix_ms();
            match d.read(&run_id)? {
                Some(entry) if entry.claim.is_none() && !entry.dead(now) => {
                    d.delete(&run_id)?;
                    Ok(true)
                }
                Some(entry) if entry.dead(now) => {
                    d.delete(&run_id)?;
                    Ok(false)
                }
                _ => Ok(false),
            }
        })
        .await
    }

    async fn end_session(&self, session_id: &str) -> Result<usize, StoreError> {
        let session = session_id.to_owned();
        self.locked(move |d| {
            let mut n = 0;
            for (id, entry) in d.live(unix_ms())? {
                if entry.session == session {
                    d.delete(&id)?;
                    n += 1;
                }
            }
            Ok(n)
        })
        .await
    }

    async fn contains(&self, run_id: &str) -> Result<bool, StoreError> {
        let run_id = run_id.to_owned();
        self.locked(move |d| Ok(d.read(&run_id)?.is_some_and(|e| !e.dead(unix_ms())))).await
    }

    async fn count(&self) -> Result<usize, StoreError> {
        self.locked(|d| Ok(d.live(unix_ms())?.len())).await
    }

    async fn heartbeat(&self, instance: &str, ttl: Duration) -> Result<(), StoreError> {
        if !safe_name(instance) {
            return Err(StoreError::Unavailable(format!("instance name {instance:?} is not a file name")));
        }
        let instance = instance.to_owned();
        self.locked(move |d| {
            let until = unix_ms().saturating_add(ttl_ms(ttl));
            let path = d.leases.join(&instance);
            // A lease needs no flush to disk: after a crash of the machine every lease is stale anyway.
            let tmp = d.leases.join(format!(".tmp-{instance}"));
            fs::write(&tmp, until.to_string())
                .and_then(|()| fs::rename(&tmp, &path))
                .map_err(|e| io("writing a lease", e))?;
            // Leases of processes gone for a while are removed.
            if let Ok(items) = fs::read_dir(&d.leases) {
                let now = unix_ms();
                for item in items.flatten() {
                    let name = item.file_name().to_string_lossy().into_owned();
                    if !name.starts_with('.') && !d.lease_alive(&name, now.saturating_sub(60_000)) {
                        let _ = fs::remove_file(item.path());
                    }
                }
            }
            Ok(())
        })
        .await
    }
}
