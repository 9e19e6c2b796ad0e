//! The bridge's side of the sandbox's guest policy: one run's budgets and output, shared between
//! the VM (which consults them through [`RunLedger::policy`] before it accepts a host call or an
//! output item) and the host that delivers results and reports output.

use std::sync::{Arc, Mutex, MutexGuard};

use codemode_sandbox::{GuestPolicy, OutputKind};

use crate::budget::{BudgetLimits, OutputAccumulator, RunBudgets};

/// Budgets and output of one run, cumulative over the whole run (its `exec` and every `wait`).
#[derive(Debug)]
#[non_exhaustive]
pub struct RunLedger {
    /// Argument bytes and pending registrations.
    pub budgets: RunBudgets,
    /// `text(...)` / `json(...)` output against `maxOutputBytes`: the only copy of the run's output.
    pub output: OutputAccumulator,
}

/// A [`RunLedger`] shared between a VM's policy and the host.
pub type SharedLedger = Arc<Mutex<RunLedger>>;

impl RunLedger {
    /// A fresh ledger under `limits` and `max_output_bytes`, ready to share.
    pub fn shared(limits: BudgetLimits, max_output_bytes: u64) -> SharedLedger {
        Arc::new(Mutex::new(RunLedger {
            budgets: RunBudgets::new(limits),
            output: OutputAccumulator::new(max_output_bytes),
        }))
    }

    /// The guest policy of a VM that runs under `ledger` (install it with `Vm::set_policy`): it
    /// refuses what the budgets refuse, with the refusal's message, and keeps accepted output.
    pub fn policy(ledger: &SharedLedger) -> Box<dyn GuestPolicy> {
        Box::new(Policy(ledger.clone()))
    }
}

/// Locks `ledger`; a poisoned lock is taken over (the ledger holds plain counters and items).
pub fn lock(ledger: &SharedLedger) -> MutexGuard<'_, RunLedger> {
    ledger.lock().unwrap_or_else(|p| p.into_inner())
}

struct Policy(SharedLedger);

impl GuestPolicy for Policy {
    fn on_host_call(&mut self, payload: &str) -> Result<(), String> {
        lock(&self.0).budgets.on_host_call(payload).map_err(|e| e.to_string())
    }

    fn on_output(&mut self, kind: OutputKind, payload: &str) -> Result<(), String> {
        lock(&self.0).output.push(kind, payload).map_err(|e| e.to_string())
    }
}
