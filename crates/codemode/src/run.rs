//! [`RunState`]: everything one Code Mode run carries across `exec` and its `wait`s.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use codemode_bridge::{BudgetLimits, NamespaceTable, RunLedger, SharedLedger};
use codemode_core::{CodeModeConfig, PendingToolCall};
use codemode_sandbox::{Delivery, Snapshot};
use serde_json::Value;
use tokio::sync::{Semaphore, mpsc};
use tokio::task::AbortHandle;

use crate::host::RunScope;

/// Cumulative catalog counters of a run.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Counts {
    pub search: u64,
    pub describe: u64,
    pub call: u64,
}

/// A run's counters, shared by the run and the VM that serves its immediate calls
/// ([`crate::runtime::Responder`]): catalog counts and the numbering of nested calls.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    search: AtomicU64,
    describe: AtomicU64,
    call: AtomicU64,
    numbered: AtomicU64,
}

impl Counters {
    /// Counters that continue from `counts`, the last nested call numbered `numbered`.
    pub(crate) fn resume(counts: Counts, numbered: u64) -> Arc<Counters> {
        Arc::new(Counters {
            search: AtomicU64::new(counts.search),
            describe: AtomicU64::new(counts.describe),
            call: AtomicU64::new(counts.call),
            numbered: AtomicU64::new(numbered),
        })
    }

    /// The catalog counts so far.
    pub(crate) fn counts(&self) -> Counts {
        Counts {
            search: self.search.load(Ordering::Relaxed),
            describe: self.describe.load(Ordering::Relaxed),
            call: self.call.load(Ordering::Relaxed),
        }
    }

    pub(crate) fn searched(&self) {
        self.search.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn described(&self) {
        self.describe.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn called(&self) {
        self.call.fetch_add(1, Ordering::Relaxed);
    }

    /// The number of the next nested call (1, 2, …): its call id is `<run id>.<number>`.
    pub(crate) fn number_call(&self) -> u64 {
        self.numbered.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// How many nested calls were numbered.
    pub(crate) fn numbered(&self) -> u64 {
        self.numbered.load(Ordering::Relaxed)
    }
}

/// A settled host call: the guest call id and what to deliver.
pub(crate) type Landed = (u32, Delivery);

pub(crate) struct RunState {
    pub run_id: String,
    /// The scope of the `exec` that started the run (kept across waits).
    pub scope: RunScope,
    /// The model's `exec` call id (kept across waits).
    pub parent_call_id: Option<String>,
    pub restart_safe: bool,
    pub ledger: SharedLedger,
    /// Catalog counts and nested-call numbering (shared with the run's responder).
    pub counts: Arc<Counters>,
    /// Visible namespaces of the run and the catalog id of each required tool, by namespace id.
    pub namespaces: NamespaceTable,
    pub namespace_tools: HashMap<String, BTreeMap<String, String>>,
    pub tx: mpsc::UnboundedSender<Landed>,
    pub rx: mpsc::UnboundedReceiver<Landed>,
    /// Settled calls not delivered yet.
    pub landed: Vec<Landed>,
    /// Dispatched host calls not settled yet, by guest call id.
    pub in_flight: BTreeMap<u32, PendingToolCall>,
    pub tasks: HashMap<u32, AbortHandle>,
    /// `yield_control` calls waiting for `wait`.
    pub yields: Vec<u32>,
    /// The cell's value once it returned (detached calls may still be draining).
    pub value: Option<Value>,
    /// UTF-8 bytes of the value's JSON text (counted with the output against `maxOutputBytes`).
    pub value_bytes: u64,
    pub snapshot: Option<Snapshot>,
    /// The TypeScript/JavaScript source map of the cell, for error positions.
    pub source: Arc<codemode_ts::StripReturn>,
    pub semaphore: Arc<Semaphore>,
    /// How each dispatched tool call's result is shaped (for a dispatch again from a shared store).
    pub shapes: HashMap<u32, u8>,
    /// Shared store: in-flight calls running in some process (owner instance), by guest call id.
    pub remote: BTreeMap<u32, String>,
    /// Shared store: landed results taken up from the store during this `wait`.
    pub consumed: Vec<u32>,
    /// Shared store: the cell's source and whether it is TypeScript (prepared again on restore).
    pub cell: Option<(String, bool)>,
    /// Shared store: this state came from a claim (parking it again is not a new run).
    pub claimed: bool,
}

impl RunState {
    pub(crate) fn new(
        run_id: String,
        scope: RunScope,
        restart_safe: bool,
        config: &CodeModeConfig,
        source: Arc<codemode_ts::StripReturn>,
    ) -> RunState {
        let (tx, rx) = mpsc::unbounded_channel();
        RunState {
            run_id,
            parent_call_id: scope.call_id.clone(),
            scope,
            restart_safe,
            ledger: RunLedger::shared(BudgetLimits::default(), config.max_output_bytes()),
            counts: Arc::default(),
            namespaces: NamespaceTable::new(),
            namespace_tools: HashMap::new(),
            tx,
            rx,
            landed: Vec::new(),
            in_flight: BTreeMap::new(),
            tasks: HashMap::new(),
            yields: Vec::new(),
            value: None,
            value_bytes: 0,
            snapshot: None,
            source,
            semaphore: Arc::new(Semaphore::new(config.max_pending_tool_calls().max(1) as usize)),
            shapes: HashMap::new(),
            remote: BTreeMap::new(),
            consumed: Vec::new(),
            cell: None,
            claimed: false,
        }
    }

    /// Pending calls for a `waiting` result (dispatched, not settled).
    pub(crate) fn pending_calls(&self) -> Vec<PendingToolCall> {
        let landed: Vec<u32> = self.landed.iter().map(|(id, _)| *id).collect();
        self.in_flight.iter().filter(|(id, _)| !landed.contains(id)).map(|(_, p)| p.clone()).collect()
    }
}

impl Drop for RunState {
    fn drop(&mut self) {
        for task in self.tasks.values() {
            task.abort();
        }
    }
}
