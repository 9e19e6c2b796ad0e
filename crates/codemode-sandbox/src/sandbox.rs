//! [`Sandbox`]: engine + module + base snapshot; hands out [`Vm`]s.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::abi::os_random_u64;
use crate::base::{BaseImage, PAGE, SandboxInner};
use crate::config::SandboxConfig;
use crate::engine::compiled;
use crate::error::SandboxError;
use crate::snapshot::Snapshot;
use crate::vm::{Step, Vm};

/// How long sandbox set-up (QuickJS init + prelude) may run.
const SETUP_DEADLINE: Duration = Duration::from_secs(10);

/// A ready-to-use QuickJS sandbox: the compiled module (shared process-wide) and a base
/// snapshot taken after QuickJS init and the caller's prelude. Cheap to clone, `Send + Sync`.
#[derive(Clone)]
pub struct Sandbox {
    inner: Arc<SandboxInner>,
}

impl std::fmt::Debug for Sandbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sandbox")
            .field("config", &self.inner.config)
            .field("base_pages", &self.inner.base.dirty.len())
            .finish()
    }
}

impl Sandbox {
    /// Compile (once per process and engine configuration) or load the module, start QuickJS,
    /// evaluate `prelude` as a classic global script, and keep the result as the base image.
    pub fn new(config: SandboxConfig, prelude: &str) -> Result<Sandbox, SandboxError> {
        let compiled =
            compiled(config.max_wasm_stack_bytes, config.cache_dir.as_deref(), config.max_live_vms)?;
        let provisional = Arc::new(SandboxInner {
            config: config.clone(),
            compiled: compiled.clone(),
            base: BaseImage::empty(),
        });
        let mut vm = Vm::instantiate(provisional)?;
        let live_clock = setup_clock(&mut vm);
        let deadline = Instant::now() + SETUP_DEADLINE;
        let heap_limit = u32::try_from(config.memory_limit_bytes).unwrap_or(u32::MAX);
        let stack = config.quickjs_stack_bytes();
        let rc = vm.guarded(deadline, |store, ex| ex.init.call(store, (heap_limit, stack)))?;
        if rc != 0 {
            return Err(SandboxError::Unavailable { reason: format!("guest init failed ({rc})") });
        }
        if !prelude.is_empty() {
            match vm.eval_script_named(prelude, "prelude.js", deadline)? {
                Step::Failed(error) => return Err(SandboxError::Prelude { error }),
                Step::Completed { .. } | Step::Pending { .. } => {}
            }
            vm.run_jobs(deadline)?;
        }
        vm.store.data_mut().deterministic = live_clock;
        let base =
            BaseImage::capture(vm.memory.data(&vm.store), &vm.store.data().ledger, &compiled, &config, None);
        drop(vm);
        Ok(Sandbox { inner: Arc::new(SandboxInner { config, compiled, base }) })
    }

    /// A sandbox whose base image is this one's plus `script` (a classic global script, run once
    /// here, named `name` in stack traces): per-catalog set-up that every VM would otherwise
    /// repeat. Costs one VM start, the script, and a copy of the pages it changed. Snapshots of
    /// one sandbox do not restore into the other.
    ///
    /// The script runs in a VM that is not seeded (its `Math.random` state is the base image's, not
    /// one drawn from the OS), so the same sandbox extended with the same script has the same
    /// [`Sandbox::identity`] in every process; each VM started from it is seeded as usual.
    pub fn extend(&self, script: &str, name: &str) -> Result<Sandbox, SandboxError> {
        self.extend_with_texts(script, &[], name)
    }

    /// [`Sandbox::extend`] with bulk text: before `script` runs, the guest global
    /// `__codemode_texts` holds `texts` as an array of strings (made directly from the UTF-8, much
    /// cheaper than parsing megabytes of string literals); the script takes them and deletes the
    /// global. With no texts the global is not defined (exactly [`Sandbox::extend`]).
    pub fn extend_with_texts(
        &self,
        script: &str,
        texts: &[&str],
        name: &str,
    ) -> Result<Sandbox, SandboxError> {
        let mut vm = self.start_unseeded()?;
        let live_clock = setup_clock(&mut vm);
        let deadline = Instant::now() + SETUP_DEADLINE;
        if !texts.is_empty() {
            vm.define_texts(texts, deadline)?;
        }
        match vm.eval_script_named(script, name, deadline)? {
            Step::Failed(error) => return Err(SandboxError::Prelude { error }),
            Step::Completed { .. } | Step::Pending { .. } => {}
        }
        vm.run_jobs(deadline)?;
        vm.store.data_mut().deterministic = live_clock;
        let inner = &self.inner;
        let base = BaseImage::capture(
            vm.memory.data(&vm.store),
            &vm.store.data().ledger,
            &inner.compiled,
            &inner.config,
            Some(&inner.base),
        );
        drop(vm);
        Ok(Sandbox {
            inner: Arc::new(SandboxInner {
                config: inner.config.clone(),
                compiled: inner.compiled.clone(),
                base,
            }),
        })
    }

    /// Whether `other` is this sandbox (a clone of it): VMs of one start like VMs of the other.
    pub fn is_same(&self, other: &Sandbox) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// Identity of what this sandbox's snapshots need: the guest module (and engine) hash and the
    /// base image id (module, memory limit and every page of the base state, so also the scripts run
    /// into it). Deterministic across processes of one build; a snapshot restores only into a
    /// sandbox with the same identity.
    pub fn identity(&self) -> (u64, u64) {
        (self.inner.compiled.module_hash, self.inner.base.id)
    }

    /// Bytes of this sandbox's base image: the pages that differ from the pristine module memory
    /// (what every fresh VM copies into its instance).
    pub fn base_image_bytes(&self) -> usize {
        self.inner.base.dirty.len() * PAGE
    }

    /// Bytes of this sandbox's base image that it holds itself: what [`Sandbox::extend`] added to
    /// the memory of the sandbox it extended (pages equal to that sandbox's are shared with it).
    pub fn base_image_own_bytes(&self) -> usize {
        self.inner.base.own_bytes
    }

    /// The configuration this sandbox was built with.
    pub fn config(&self) -> &SandboxConfig {
        &self.inner.config
    }

    /// Native stack for a thread that runs this sandbox's VMs: with it, guest calls run on the
    /// thread's own stack. On a smaller stack every guest call first maps a fresh stack segment
    /// of this size (and unmaps it after), which costs tens of microseconds per call.
    pub fn thread_stack_bytes(&self) -> usize {
        self.inner.config.max_wasm_stack_bytes + (1 << 20)
    }

    /// A fresh VM in the base state (a restore of the base image; no init runs). `Math.random`
    /// is seeded per VM (from the OS, or the deterministic seed).
    ///
    /// With a base image of at least [`SandboxConfig::recycle_min_base_bytes`] (or with
    /// [`SandboxConfig::track_writes`]) the VM is write-tracked, so [`Sandbox::recycle`] can reset
    /// it in place once its run is over.
    pub fn start(&self) -> Result<Vm, SandboxError> {
        let mut vm = self.start_unseeded()?;
        let config = &self.inner.config;
        if config.track_writes || self.base_image_bytes() >= config.recycle_min_base_bytes {
            vm.arm_tracking(Vec::new());
        }
        self.seed(&mut vm)?;
        Ok(vm)
    }

    /// Seeds `Math.random` of a VM in the base state (from the OS, or the deterministic seed).
    fn seed(&self, vm: &mut Vm) -> Result<(), SandboxError> {
        let seed = match self.inner.config.deterministic {
            Some(d) => d.seed,
            None => os_random_u64(),
        };
        vm.guarded(Instant::now() + Duration::from_secs(1), |store, ex| ex.seed.call(store, seed))
    }

    /// A finished VM of this sandbox, reset in place to the state [`Sandbox::start`] gives: the
    /// pages it wrote since its start (or its last recycle) get the base image's contents back,
    /// its host state (ledger, output, statistics, policy, clock, interrupt handle) is new, and
    /// `Math.random` is seeded anew. The cost is proportional to the pages the run wrote, not to
    /// the base image. Nothing of the run survives: every page that may differ from the base
    /// image is rewritten, and a VM for which that cannot be known is not recycled.
    ///
    /// `None` (the VM is dropped) when the VM cannot be recycled: it is another sandbox's, it was
    /// terminated (a trap, a timeout, an interrupt), its memory grew past the base image's size,
    /// it is not write-tracked (see [`SandboxConfig::recycle_min_base_bytes`]), or the kernel
    /// refused the tracking calls. Start a fresh VM then.
    pub fn recycle(&self, mut vm: Vm) -> Option<Vm> {
        if !Arc::ptr_eq(&vm.sandbox, &self.inner) || !vm.reset_to_base() {
            return None;
        }
        self.seed(&mut vm).ok()?;
        Some(vm)
    }

    /// A VM in the base state, its random state not seeded (and its writes not tracked).
    fn start_unseeded(&self) -> Result<Vm, SandboxError> {
        let mut vm = self.fresh(self.inner.base.len as u64)?;
        let base = &self.inner.base;
        let mem = vm.memory.data_mut(&mut vm.store);
        for (k, &p) in base.dirty.iter().enumerate() {
            let off = p as usize * PAGE;
            mem[off..off + PAGE].copy_from_slice(base.dirty_page(k));
        }
        vm.store.data_mut().ledger = base.ledger.clone();
        Ok(vm)
    }

    /// A fresh VM that continues exactly where the snapshotted one stopped.
    pub fn restore(&self, snapshot: &Snapshot) -> Result<Vm, SandboxError> {
        let d = snapshot.decode()?;
        let base = &self.inner.base;
        if d.module_hash != self.inner.compiled.module_hash || d.base_id != base.id {
            return Err(SandboxError::Snapshot { reason: "the snapshot belongs to another sandbox".into() });
        }
        if d.mem_len < base.len as u64 {
            return Err(SandboxError::Snapshot { reason: "memory smaller than the base image".into() });
        }
        let mut vm = self.fresh(d.mem_len)?;
        let mem = vm.memory.data_mut(&mut vm.store);
        for (k, &p) in base.dirty.iter().enumerate() {
            let off = p as usize * PAGE;
            mem[off..off + PAGE].copy_from_slice(base.dirty_page(k));
        }
        let pristine = &self.inner.compiled.pristine;
        for (k, &p) in d.pages.iter().enumerate() {
            let off = p as usize * PAGE;
            let b = base.page(pristine, p as usize);
            let x = &d.xor[k * PAGE..(k + 1) * PAGE];
            for ((dst, a), b) in mem[off..off + PAGE].iter_mut().zip(x).zip(b) {
                *dst = a ^ b;
            }
        }
        // The run's clock went on while it was suspended (if it had started).
        if d.ledger.captured_at_ns != 0 {
            let suspended = crate::abi::process_clock_ns().saturating_sub(d.ledger.captured_at_ns);
            let clock = Duration::from_nanos(d.ledger.clock_ns.saturating_add(suspended));
            vm.store.data_mut().clock_origin =
                Some(Instant::now().checked_sub(clock).unwrap_or_else(Instant::now));
        }
        vm.store.data_mut().ledger = d.ledger;
        vm.set_cell_running(d.cell_running);
        if self.inner.config.track_writes {
            vm.arm_tracking(d.pages);
        }
        Ok(vm)
    }

    /// Instantiate and grow memory to `mem_len` bytes.
    fn fresh(&self, mem_len: u64) -> Result<Vm, SandboxError> {
        let mut vm = Vm::instantiate(self.inner.clone())?;
        let cur = vm.memory.data_size(&vm.store) as u64;
        if mem_len > cur {
            let pages = (mem_len - cur).div_ceil(65536);
            vm.memory.grow(&mut vm.store, pages).map_err(|_| SandboxError::Snapshot {
                reason: format!("memory of {mem_len} bytes exceeds this sandbox's cap"),
            })?;
        }
        if vm.memory.data_size(&vm.store) as u64 != mem_len {
            return Err(SandboxError::Snapshot { reason: "memory size mismatch".into() });
        }
        Ok(vm)
    }
}

/// Set-up (QuickJS init, the prelude, an extension script) reads a fixed wall clock, so a base image
/// depends only on the module, the configuration and the scripts: the same in every process, which
/// lets a snapshot move between processes. Returns the VM's own clock setting, to put back.
fn setup_clock(vm: &mut Vm) -> Option<crate::Deterministic> {
    let st = vm.store.data_mut();
    let live = st.deterministic;
    st.deterministic = Some(crate::Deterministic { clock_ms: 0, seed: live.map_or(0, |d| d.seed) });
    live
}
