//! A [`Vm`]'s host calls: settling them (one by one, or all of a step's with its jobs in one
//! entry into the guest) and taking the ones the guest started.

use std::time::Instant;

use wasmtime::{Memory, Store};

use super::{Exports, Step, Vm, abi};
use crate::abi::{Delivery, HostCall, HostState, LedgerCall};
use crate::abi_names::status;
use crate::error::SandboxError;

impl Vm {
    /// Settle host call `call_id`. Reactions run at the next [`Vm::run_jobs`]. Guest code may
    /// run here (a user-defined `then` getter on `Object.prototype`), hence the deadline.
    pub fn deliver(
        &mut self,
        call_id: u32,
        delivery: Delivery,
        deadline: Instant,
    ) -> Result<(), SandboxError> {
        if self.terminated.is_none() && !self.store.data().ledger.calls.contains_key(&call_id) {
            return Err(SandboxError::UnknownCall { call_id });
        }
        let mem = self.memory;
        let rc = self.guarded(deadline, |store, ex| Self::settle(store, ex, mem, call_id, &delivery))?;
        match rc {
            0 => Ok(()),
            -1 => Err(SandboxError::UnknownCall { call_id }),
            -2 => Err(SandboxError::InvalidJson),
            _ => Err(abi("the guest could not settle the promise")),
        }
    }

    /// Settles host calls and runs jobs in one entry into the guest: what [`Vm::deliver`] for each
    /// of `deliveries` and then [`Vm::run_jobs`] do, without an entry (deadline check, epoch
    /// ticker, native stack) per call. A delivery [`Vm::deliver`] refuses with
    /// [`SandboxError::UnknownCall`] or [`SandboxError::InvalidJson`] is skipped (the guest's
    /// promise of an invalid one is rejected, as there); any other failure is the result.
    pub fn deliver_and_run(
        &mut self,
        deliveries: impl IntoIterator<Item = (u32, Delivery)>,
        deadline: Instant,
    ) -> Result<Step, SandboxError> {
        let mem = self.memory;
        let (code, result, refused) = self.guarded(deadline, |store, ex| {
            for (call_id, delivery) in deliveries {
                if !store.data().ledger.calls.contains_key(&call_id) {
                    continue;
                }
                if !matches!(Self::settle(store, ex, mem, call_id, &delivery)?, -2..=0) {
                    return Ok((0, Vec::new(), true));
                }
            }
            let code = ex.run_jobs.call(&mut *store, ())?;
            let result =
                if code == status::PENDING { Vec::new() } else { Self::read_result(store, ex, mem)? };
            Ok((code, result, false))
        })?;
        if refused {
            return Err(abi("the guest could not settle the promise"));
        }
        self.step(true, code, result)
    }

    /// Hands `delivery` to the guest's promise of call `call_id` and books it (unless the guest
    /// knew no such call); returns the guest's code: 0 settled, -1 unknown, -2 invalid JSON.
    fn settle(
        store: &mut Store<HostState>,
        ex: &Exports,
        mem: Memory,
        call_id: u32,
        delivery: &Delivery,
    ) -> wasmtime::Result<i32> {
        let (kind, text, code) = match delivery {
            Delivery::Resolve(json) => (0, json.as_str(), ""),
            Delivery::Reject { message, code } => (1, message.as_str(), code.as_deref().unwrap_or("")),
        };
        let (ptr, len) = Self::write_parts(store, ex, mem, &[text.as_bytes(), code.as_bytes()])?;
        let (tl, cl) = (text.len() as u32, code.len() as u32);
        let rc = ex.deliver.call(&mut *store, (call_id, kind, ptr, tl, ptr + tl, cl))?;
        ex.dealloc.call(&mut *store, (ptr, len))?;
        if rc != -1 {
            let ledger = &mut store.data_mut().ledger;
            ledger.calls.remove(&call_id);
            ledger.stats.deliveries += 1;
            ledger.stats.delivered_bytes += (text.len() + code.len()) as u64;
        }
        Ok(rc)
    }

    /// Host calls started since the last take (each is returned once, across snapshots).
    pub fn take_host_calls(&mut self) -> Vec<HostCall> {
        let mut out = Vec::new();
        for (id, call) in self.store.data_mut().ledger.calls.iter_mut() {
            if !call.taken {
                call.taken = true;
                out.push(HostCall { id: *id, payload: call.payload.clone() });
            }
        }
        out
    }

    /// Every host call started and not delivered yet (taken or not).
    pub fn pending_host_calls(&self) -> Vec<HostCall> {
        let calls = &self.store.data().ledger.calls;
        calls
            .iter()
            .map(|(id, LedgerCall { payload, .. })| HostCall { id: *id, payload: payload.clone() })
            .collect()
    }
}
