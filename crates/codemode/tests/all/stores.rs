//! Shared run stores (memory and file; Redis is covered by the CLI's tests): the shared-run
//! scenarios, the file store across a "restart", the cap, and refusal of altered files.

use std::path::PathBuf;
use std::sync::Arc;

use codemode::CodeModeResult;
use codemode::store::{FileRunStore, MAX_SUSPENDED_RUNS, MemoryRunStore, RunStore};
use serde_json::json;

use crate::shared_runs::*;

fn memory() -> Arc<dyn RunStore> {
    Arc::new(MemoryRunStore::new())
}

/// A fresh directory under the system temp dir, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("codemode-store-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        TempDir(dir)
    }

    fn store(&self) -> Arc<dyn RunStore> {
        Arc::new(FileRunStore::open(&self.0).unwrap())
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

macro_rules! over_memory_and_file {
    ($($name:ident),* $(,)?) => {
        mod memory_store {
            use super::*;
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    crate::shared_runs::$name(memory()).await;
                }
            )*
        }
        mod file_store {
            use super::*;
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    let dir = TempDir::new(stringify!($name));
                    crate::shared_runs::$name(dir.store()).await;
                }
            )*
        }
    };
}

over_memory_and_file!(
    a_landed_result_is_delivered_by_the_other_replica,
    a_yielded_run_moves_and_output_is_delivered_once,
    a_call_of_a_stopped_replica_reaches_the_guest_as_interrupted,
    a_restart_safe_read_only_call_is_dispatched_again,
    a_parked_run_expires_after_its_ttl,
    concurrent_waits_on_two_replicas_let_exactly_one_win,
    foreign_and_tampered_runs_are_refused,
    cancelling_on_one_replica_stops_the_calls_on_the_other,
    a_thousand_cycles_keep_memory_flat,
);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_file_store_keeps_a_waiting_run_across_a_restart() {
    let dir = TempDir::new("restart");
    let run = {
        let store = dir.store();
        let a = replica(&store, "A", Mode::Answer);
        let r = a.exec("text('one'); await yield_control(); text('two'); return 'after restart';").await;
        let run = waiting_id(&r);
        a.cm.shutdown();
        run
    };
    // A new process: a new store handle on the same directory, a new runtime.
    let store = dir.store();
    let b = replica(&store, "B", Mode::Answer);
    let r = b.wait(&run).await;
    assert_eq!(completed(&r), json!("after restart"));
    assert_eq!(r.output().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_altered_run_file_is_refused_and_kept() {
    let dir = TempDir::new("altered");
    let store = dir.store();
    let a = replica(&store, "A", Mode::Answer);
    let run = waiting_id(&a.exec("await yield_control(); return 1;").await);
    let path = dir.0.join("runs").join(format!("{run}.run"));
    let original = std::fs::read(&path).unwrap();
    let mut bytes = original.clone();
    let last = bytes.len() - 40;
    bytes[last] ^= 1;
    std::fs::write(&path, &bytes).unwrap();
    let (error, code) = failed(&a.wait(&run).await);
    assert_eq!(code.as_deref(), Some("invalid_input"));
    assert!(error.contains("integrity check"), "{error}");
    // Not restored, not deleted: the original bytes still resume.
    let mut restored = std::fs::read(&path).unwrap();
    let last = restored.len() - 40;
    restored[last] ^= 1;
    std::fs::write(&path, &restored).unwrap();
    assert_eq!(completed(&a.wait(&run).await), json!(1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_store_holds_at_most_64_runs_across_replicas() {
    for store in [memory(), TempDir::new("cap").store()] {
        let a = replica(&store, "A", Mode::Answer);
        let b = replica(&store, "B", Mode::Answer);
        let mut runs = Vec::new();
        for i in 0..MAX_SUSPENDED_RUNS {
            let replica = if i % 2 == 0 { &a } else { &b };
            runs.push(waiting_id(&replica.exec("await yield_control(); return 1;").await));
        }
        assert_eq!(store.count().await.unwrap(), MAX_SUSPENDED_RUNS);
        for replica in [&a, &b] {
            let (error, code) = failed(&replica.exec("text('x'); await yield_control(); return 1;").await);
            assert_eq!(
                (error.as_str(), code.as_deref()),
                ("too many suspended code mode runs.", Some("invalid_input"))
            );
        }
        // A wait that suspends again is not a new run: it parks at the cap.
        assert!(matches!(b.wait(&runs[0]).await, CodeModeResult::Completed(_)));
        assert_eq!(store.count().await.unwrap(), MAX_SUSPENDED_RUNS - 1);
        assert!(a.cm.cancel_run(&runs[1]).await);
        assert_eq!(a.cm.end_session_runs("client-1").await, MAX_SUSPENDED_RUNS - 2);
        assert_eq!(store.count().await.unwrap(), 0);
    }
}
