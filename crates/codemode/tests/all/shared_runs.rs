//! Shared-run scenarios: runtimes ("replicas") over one shared run store, each with its own tool
//! host, as separate gateways would be. Self-contained (only the public API) so the CLI's tests run
//! the same scenarios over Redis (`#[path]`-included there); here they run over the memory and
//! file stores.

#![allow(dead_code)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use codemode::store::{
    ClaimError, Claimed, ParkChanges, Parked, Progress, RunRecord, RunStore, StateKey, StoreError,
};
use codemode::{
    CodeMode, CodeModeConfig, CodeModeResult, ExecInput, NestedCall, RunScope, ToolAnnotations, ToolError,
    ToolHost, ToolOutcome, ToolSpec, WaitInput, WaitReason,
};
use serde_json::{Value, json};
use tokio::sync::Semaphore;

/// How a replica's tools answer.
#[derive(Clone, Copy, Debug)]
pub enum Mode {
    /// At once, with `{ "from": <replica> }`.
    Answer,
    /// After the test opens the gate ([`Host::open`]).
    Gated,
    /// Never (until the call is cancelled).
    Hang,
}

pub struct Host {
    name: String,
    mode: Mode,
    gate: Semaphore,
    pub calls: AtomicUsize,
    /// Calls whose future was dropped before it answered (cancelled).
    pub dropped: Arc<AtomicUsize>,
}

/// Counts a call's future dropped before it finished.
struct Unfinished(Option<Arc<AtomicUsize>>);

impl Drop for Unfinished {
    fn drop(&mut self) {
        if let Some(count) = self.0.take() {
            count.fetch_add(1, Ordering::SeqCst);
        }
    }
}

impl Host {
    pub fn open(&self) {
        self.gate.add_permits(1);
    }
}

#[async_trait]
impl ToolHost for Host {
    async fn call(&self, call: NestedCall) -> Result<ToolOutcome, ToolError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let mut unfinished = Unfinished(Some(self.dropped.clone()));
        match self.mode {
            Mode::Answer => {}
            Mode::Gated => {
                let permit = self.gate.acquire().await.map_err(|_| ToolError::new("gate closed"))?;
                permit.forget();
            }
            Mode::Hang => std::future::pending::<()>().await,
        }
        unfinished.0 = None;
        Ok(ToolOutcome::details(json!({ "from": self.name, "input": call.input })))
    }
}

pub fn tools() -> Vec<ToolSpec> {
    let read_only = ToolAnnotations::default().with_read_only_hint(true);
    vec![
        ToolSpec::core("lookup").description("Look something up").annotations(read_only),
        ToolSpec::core("send").description("Send something"),
    ]
}

pub fn config(extra: Value) -> CodeModeConfig {
    let mut object = json!({ "enabled": true, "timeoutMs": 300 });
    for (k, v) in extra.as_object().into_iter().flatten() {
        object[k] = v.clone();
    }
    CodeModeConfig::from_json(&object).unwrap()
}

pub fn key() -> StateKey {
    StateKey::new(*b"test state key, 32 bytes long!!!").unwrap()
}

pub struct Replica {
    pub cm: CodeMode,
    pub host: Arc<Host>,
}

pub fn replica_with(
    store: &Arc<dyn RunStore>,
    name: &str,
    mode: Mode,
    config: CodeModeConfig,
    tools: Vec<ToolSpec>,
    key: StateKey,
) -> Replica {
    let host = Arc::new(Host {
        name: name.into(),
        mode,
        gate: Semaphore::new(0),
        calls: AtomicUsize::new(0),
        dropped: Arc::default(),
    });
    let cm = CodeMode::builder(config)
        .tools(tools)
        .host(host.clone())
        .run_store(store.clone(), key)
        .build()
        .unwrap();
    Replica { cm, host }
}

pub fn replica(store: &Arc<dyn RunStore>, name: &str, mode: Mode) -> Replica {
    replica_with(store, name, mode, config(json!({})), tools(), key())
}

pub fn scope() -> RunScope {
    RunScope::new("client-1", "turn-1").with_call_id("call-1")
}

impl Replica {
    pub async fn exec(&self, code: &str) -> CodeModeResult {
        self.cm.exec(&scope(), ExecInput::code(code)).await
    }

    pub async fn exec_json(&self, input: Value) -> CodeModeResult {
        self.cm.exec(&scope(), ExecInput::from_json(&input).unwrap()).await
    }

    pub async fn wait(&self, run_id: &str) -> CodeModeResult {
        self.cm.wait(&scope().with_call_id("call-wait"), WaitInput::new(run_id.to_owned())).await
    }

    /// Waits until the run is not `waiting` any more (at most `rounds` waits).
    pub async fn finish(&self, run_id: &str, rounds: usize) -> CodeModeResult {
        for _ in 0..rounds {
            let r = self.wait(run_id).await;
            if !matches!(r, CodeModeResult::Waiting(_)) {
                return r;
            }
        }
        panic!("run {run_id} still waiting after {rounds} waits");
    }
}

#[track_caller]
pub fn waiting_id(r: &CodeModeResult) -> String {
    match r {
        CodeModeResult::Waiting(w) => w.run_id.clone(),
        other => panic!("expected waiting, got {}", other.to_json()),
    }
}

#[track_caller]
pub fn completed(r: &CodeModeResult) -> Value {
    match r {
        CodeModeResult::Completed(c) => c.value.clone(),
        other => panic!("expected completed, got {}", other.to_json()),
    }
}

#[track_caller]
pub fn failed(r: &CodeModeResult) -> (String, Option<String>) {
    match r {
        CodeModeResult::Failed(f) => (f.error.clone(), f.code.map(|c| c.as_str().to_owned())),
        other => panic!("expected failed, got {}", other.to_json()),
    }
}

fn texts(r: &CodeModeResult) -> Vec<String> {
    r.output()
        .iter()
        .map(|o| serde_json::to_value(o).unwrap()["text"].as_str().unwrap_or("").to_owned())
        .collect()
}

/// Exec on A suspends on a slow call; the call lands while the run is parked; `wait` on B
/// delivers A's result (B's tools are never called).
pub async fn a_landed_result_is_delivered_by_the_other_replica(store: Arc<dyn RunStore>) {
    let a = replica(&store, "A", Mode::Gated);
    let b = replica(&store, "B", Mode::Answer);
    let run = waiting_id(&a.exec("return await tools.lookup({ q: 1 });").await);
    a.host.open();
    let r = b.finish(&run, 20).await;
    assert_eq!(completed(&r), json!({ "from": "A", "input": { "q": 1 } }));
    assert_eq!(b.host.calls.load(Ordering::SeqCst), 0);
    assert_eq!(store.count().await.unwrap(), 0, "a finished run leaves the store");
}

/// A `yield_control` run moves too; output already delivered is not delivered again.
pub async fn a_yielded_run_moves_and_output_is_delivered_once(store: Arc<dyn RunStore>) {
    let a = replica(&store, "A", Mode::Answer);
    let b = replica(&store, "B", Mode::Answer);
    let r = a.exec("text('before'); const v = await yield_control('pause'); text('after'); return [v === undefined, 7];").await;
    let CodeModeResult::Waiting(w) = &r else { panic!("{}", r.to_json()) };
    assert_eq!(w.reason, WaitReason::Yield);
    assert_eq!(texts(&r), ["before"]);
    let r = b.wait(&w.run_id).await;
    assert_eq!(completed(&r), json!([true, 7]));
    assert_eq!(texts(&r), ["after"]);
    let (error, code) = failed(&a.wait(&w.run_id).await);
    assert_eq!(
        (error.as_str(), code.as_deref()),
        ("code mode run is unavailable or expired.", Some("invalid_input"))
    );
}

/// A's process stops with a call in flight: B settles it as a catchable `interrupted` error once
/// A's lease lapses, and never runs it itself.
pub async fn a_call_of_a_stopped_replica_reaches_the_guest_as_interrupted(store: Arc<dyn RunStore>) {
    let a = replica(&store, "A", Mode::Hang);
    let b = replica(&store, "B", Mode::Answer);
    let code = "try { await tools.send({ to: 'x' }); return 'sent'; } catch (e) { return { code: e.code, message: e.message }; }";
    let run = waiting_id(&a.exec(code).await);
    a.cm.shutdown();
    drop(a);
    let r = b.finish(&run, 40).await;
    let value = completed(&r);
    assert_eq!(value["code"], "interrupted", "{value}");
    assert_eq!(
        value["message"],
        "the tool call was interrupted: the gateway process running it stopped before it answered, so it may or \
         may not have taken effect; check before retrying it"
    );
    assert_eq!(b.host.calls.load(Ordering::SeqCst), 0, "a call that may have side effects is not run again");
}

/// A restart-safe run's read-only call in flight on a stopped replica is dispatched again by B.
pub async fn a_restart_safe_read_only_call_is_dispatched_again(store: Arc<dyn RunStore>) {
    let a = replica(&store, "A", Mode::Hang);
    let b = replica(&store, "B", Mode::Answer);
    let r = a
        .exec_json(json!({ "code": "return await tools.lookup({ q: 'again' });", "restartSafe": true }))
        .await;
    let run = waiting_id(&r);
    assert_eq!(a.host.calls.load(Ordering::SeqCst), 1);
    a.cm.shutdown();
    drop(a);
    let r = b.finish(&run, 40).await;
    assert_eq!(completed(&r), json!({ "from": "B", "input": { "q": "again" } }));
    assert_eq!(b.host.calls.load(Ordering::SeqCst), 1);
}

/// A parked run expires after `snapshotTtlSeconds` in the store itself.
pub async fn a_parked_run_expires_after_its_ttl(store: Arc<dyn RunStore>) {
    let config = config(json!({ "snapshotTtlSeconds": 1 }));
    let a = replica_with(&store, "A", Mode::Answer, config.clone(), tools(), key());
    let b = replica_with(&store, "B", Mode::Answer, config, tools(), key());
    let run = waiting_id(&a.exec("await yield_control(); return 1;").await);
    assert!(b.cm.contains_run(&run).await);
    tokio::time::sleep(Duration::from_millis(1300)).await;
    assert!(!b.cm.contains_run(&run).await);
    let (error, code) = failed(&b.wait(&run).await);
    assert_eq!(
        (error.as_str(), code.as_deref()),
        ("code mode run is unavailable or expired.", Some("invalid_input"))
    );
    assert_eq!(store.count().await.unwrap(), 0);
}

/// Two waits at once on two replicas: exactly one holds the run, the other is refused.
pub async fn concurrent_waits_on_two_replicas_let_exactly_one_win(store: Arc<dyn RunStore>) {
    let a = replica(&store, "A", Mode::Hang);
    let b = replica(&store, "B", Mode::Hang);
    let run = waiting_id(&a.exec("return await tools.lookup({});").await);
    for _ in 0..5 {
        let (ra, rb) = tokio::join!(a.wait(&run), b.wait(&run));
        let refused = [&ra, &rb]
            .iter()
            .filter(|r| matches!(r, CodeModeResult::Failed(f) if f.error == "code mode run is already being resumed."))
            .count();
        let waiting = [&ra, &rb].iter().filter(|r| matches!(r, CodeModeResult::Waiting(_))).count();
        assert_eq!((refused, waiting), (1, 1), "A: {} B: {}", ra.to_json(), rb.to_json());
    }
    assert!(a.cm.cancel_run(&run).await);
    assert_eq!(store.count().await.unwrap(), 0);
}

/// A run cancelled on B stops the call that A runs for it (at A's next lease renewal); a run
/// whose TTL passes does too.
pub async fn cancelling_on_one_replica_stops_the_calls_on_the_other(store: Arc<dyn RunStore>) {
    let a = replica_with(&store, "A", Mode::Hang, config(json!({ "snapshotTtlSeconds": 2 })), tools(), key());
    let b =
        replica_with(&store, "B", Mode::Answer, config(json!({ "snapshotTtlSeconds": 2 })), tools(), key());
    let run = waiting_id(&a.exec("return await tools.lookup({});").await);
    assert!(a.cm.has_run(&run));
    assert!(b.cm.cancel_run(&run).await);
    let stopped = async {
        while a.host.dropped.load(Ordering::SeqCst) == 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(5), stopped)
        .await
        .expect("A's call stops within 5 s of the cancel");
    let (error, _) = failed(&a.wait(&run).await);
    assert_eq!(error, "code mode run is unavailable or expired.");
    // Expiry: nobody waits; the run's TTL (2 s) passes and A drops its call.
    let run = waiting_id(&a.exec("return await tools.lookup({});").await);
    let stopped = async {
        while a.host.dropped.load(Ordering::SeqCst) < 2 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(8), stopped).await.expect("A's call stops once the run expired");
    assert!(!b.cm.contains_run(&run).await);
}

/// A run is refused (`invalid_input`, never restored, not deleted) by a replica over another
/// catalog, with another state key, or when its stored bytes were altered.
pub async fn foreign_and_tampered_runs_are_refused(store: Arc<dyn RunStore>) {
    let a = replica(&store, "A", Mode::Answer);
    let run = waiting_id(&a.exec("await yield_control(); return 'resumed';").await);

    let mut other_tools = tools();
    other_tools.push(ToolSpec::core("extra").description("One more tool"));
    let c = replica_with(&store, "C", Mode::Answer, config(json!({})), other_tools, key());
    let (error, code) = failed(&c.wait(&run).await);
    assert_eq!(code.as_deref(), Some("invalid_input"));
    assert!(error.contains("different tool catalog"), "{error}");

    let d = replica_with(
        &store,
        "D",
        Mode::Answer,
        config(json!({})),
        tools(),
        StateKey::new(*b"another key, also long enough!!!").unwrap(),
    );
    let (error, code) = failed(&d.wait(&run).await);
    assert_eq!(code.as_deref(), Some("invalid_input"));
    assert!(error.contains("integrity check"), "{error}");

    let tampering: Arc<dyn RunStore> = Arc::new(Tampering(store.clone()));
    let e = replica(&tampering, "E", Mode::Answer);
    let (error, code) = failed(&e.wait(&run).await);
    assert_eq!(code.as_deref(), Some("invalid_input"));
    assert!(error.contains("integrity check"), "{error}");

    // Still there, for a replica that may open it.
    let b = replica(&store, "B", Mode::Answer);
    assert_eq!(completed(&b.wait(&run).await), json!("resumed"));
}

/// 1,000 suspend/resume cycles alternating between two replicas: the store holds one run
/// throughout and this process's memory stays flat.
pub async fn a_thousand_cycles_keep_memory_flat(store: Arc<dyn RunStore>) {
    // Resident memory is the whole process's, and the other tests of this binary allocate beside
    // this one: the cycles run, and are measured, in a child process that runs only this test.
    if std::env::var_os(RUN_ALONE).is_none() && run_alone() {
        return;
    }
    // A loaded machine must not cut a cycle short: the deadline is far past a cycle's length.
    let config = || config(json!({ "timeoutMs": 10_000 }));
    let a = replica_with(&store, "A", Mode::Answer, config(), tools(), key());
    let b = replica_with(&store, "B", Mode::Answer, config(), tools(), key());
    let code = "let n = 0; for (let i = 0; i < 1000; i++) { n += (await tools.lookup({ i })).input.i; await yield_control(); } return n;";
    let run = waiting_id(&a.exec(code).await);
    let mut baseline = 0;
    for i in 0..1000 {
        let replica = if i % 2 == 0 { &b } else { &a };
        let r = replica.wait(&run).await;
        if i == 999 {
            assert_eq!(completed(&r), json!(499_500));
        } else {
            assert_eq!(waiting_id(&r), run, "cycle {i}");
        }
        if i == 100 {
            baseline = rss_bytes();
            assert_eq!(store.count().await.unwrap(), 1);
        }
    }
    let grown = rss_bytes().saturating_sub(baseline);
    assert!(grown < 24 << 20, "resident memory grew by {grown} bytes over 900 cycles");
    assert_eq!(store.count().await.unwrap(), 0);
    assert_eq!(a.host.calls.load(Ordering::SeqCst) + b.host.calls.load(Ordering::SeqCst), 1000);
}

/// Set in the child process [`run_alone`] starts.
const RUN_ALONE: &str = "CODEMODE_TEST_RUN_ALONE";

/// Runs the current test again in a child process of this test binary, with nothing else
/// running in it, and asserts that it passed there. `false` when libtest runs tests on the main
/// thread (`--test-threads=1`): then this process runs one test at a time already.
fn run_alone() -> bool {
    let Some(name) = std::thread::current().name().filter(|n| *n != "main").map(str::to_owned) else {
        return false;
    };
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([name.as_str(), "--exact", "--test-threads=1", "--nocapture"])
        .env(RUN_ALONE, "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "{name} in a process of its own:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    true
}

/// Resident set size of this process (Linux), 0 elsewhere.
pub fn rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1).and_then(|p| p.parse::<u64>().ok()))
        .map_or(0, |pages| pages * 4096)
}

/// A store whose claims hand out the record with one byte flipped (what an attacker with write
/// access to the store could do).
#[derive(Debug)]
pub struct Tampering(pub Arc<dyn RunStore>);

#[async_trait]
impl RunStore for Tampering {
    async fn park(
        &self,
        record: RunRecord,
        ttl: Duration,
        changes: ParkChanges,
    ) -> Result<Parked, StoreError> {
        self.0.park(record, ttl, changes).await
    }
    async fn claim(
        &self,
        run_id: &str,
        session_id: &str,
        agent_run_id: &str,
        claimant: &str,
        hold: Duration,
    ) -> Result<Claimed, ClaimError> {
        let mut claimed = self.0.claim(run_id, session_id, agent_run_id, claimant, hold).await?;
        let middle = claimed.sealed.len() / 2;
        claimed.sealed[middle] ^= 0x20;
        Ok(claimed)
    }
    async fn release(&self, run_id: &str, claimant: &str) -> Result<(), StoreError> {
        self.0.release(run_id, claimant).await
    }
    async fn progress(&self, run_id: &str) -> Result<Progress, StoreError> {
        self.0.progress(run_id).await
    }
    async fn land(&self, run_id: &str, call: u32, owner: &str, reply: Vec<u8>) -> Result<bool, StoreError> {
        self.0.land(run_id, call, owner, reply).await
    }
    async fn interrupt(&self, run_id: &str, call: u32, owner: &str) -> Result<bool, StoreError> {
        self.0.interrupt(run_id, call, owner).await
    }
    async fn remove(&self, run_id: &str) -> Result<(), StoreError> {
        self.0.remove(run_id).await
    }
    async fn cancel(&self, run_id: &str) -> Result<bool, StoreError> {
        self.0.cancel(run_id).await
    }
    async fn end_session(&self, session_id: &str) -> Result<usize, StoreError> {
        self.0.end_session(session_id).await
    }
    async fn contains(&self, run_id: &str) -> Result<bool, StoreError> {
        self.0.contains(run_id).await
    }
    async fn count(&self) -> Result<usize, StoreError> {
        self.0.count().await
    }
    async fn heartbeat(&self, instance: &str, ttl: Duration) -> Result<(), StoreError> {
        self.0.heartbeat(instance, ttl).await
    }
}
