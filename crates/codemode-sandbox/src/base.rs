//! What every VM of a sandbox starts from: the compiled module, the configuration and the base
//! image (the pages that differ from the pristine module memory).

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use crate::abi::Ledger;
use crate::config::SandboxConfig;
use crate::engine::Compiled;

/// Bytes of a page: the unit of base images, snapshots and write tracking.
pub(crate) const PAGE: usize = 4096;

fn zero_page() -> &'static [u8; PAGE] {
    static Z: [u8; PAGE] = [0; PAGE];
    &Z
}

/// Page `i` of a dense image (zero beyond its end).
pub(crate) fn base_page(base: &[u8], i: usize) -> &[u8] {
    base.get(i * PAGE..(i + 1) * PAGE).unwrap_or(zero_page())
}

/// The state every VM starts from, stored sparsely: the pages that differ from the pristine
/// module memory (a base image costs its dirty pages, not the whole linear memory).
pub(crate) struct BaseImage {
    /// Linear memory size of the base state, in bytes.
    pub len: usize,
    /// Pages that differ from the pristine module memory, ascending.
    pub dirty: Vec<u32>,
    /// Their contents, `PAGE` bytes each, in the order of `dirty`.
    pub pages: Box<[u8]>,
    pub ledger: Ledger,
    /// Identity of this base image (module hash + config + pages).
    pub id: u64,
}

impl BaseImage {
    pub fn empty() -> BaseImage {
        BaseImage { len: 0, dirty: Vec::new(), pages: Box::new([]), ledger: Ledger::default(), id: 0 }
    }

    /// The `k`-th dirty page's contents.
    pub fn dirty_page(&self, k: usize) -> &[u8] {
        &self.pages[k * PAGE..(k + 1) * PAGE]
    }

    /// Page `i` of the base state: its dirty copy, else the pristine page (zero past it).
    pub fn page<'a>(&'a self, pristine: &'a [u8], i: usize) -> &'a [u8] {
        match self.dirty.binary_search(&(i as u32)) {
            Ok(k) => self.dirty_page(k),
            Err(_) => base_page(pristine, i),
        }
    }

    /// The base image of a VM's `memory` and `ledger` (after a setup script, with no guest frame
    /// live).
    pub fn capture(memory: &[u8], ledger: &Ledger, compiled: &Compiled, config: &SandboxConfig) -> BaseImage {
        let pristine = &compiled.pristine;
        let mut dirty = Vec::new();
        let mut pages = Vec::new();
        for (i, page) in memory.chunks(PAGE).enumerate() {
            if page != base_page(pristine, i) {
                dirty.push(i as u32);
                pages.extend_from_slice(page);
                pages.resize(dirty.len() * PAGE, 0);
            }
        }
        // The base carries no per-run accounting: every run starts with zero stats and output.
        let ledger = Ledger {
            stats: Default::default(),
            output: Vec::new(),
            clock_ns: 0,
            captured_at_ns: 0,
            ..ledger.clone()
        };
        let id = {
            let mut h = std::hash::DefaultHasher::new();
            compiled.module_hash.hash(&mut h);
            config.memory_limit_bytes.hash(&mut h);
            memory.len().hash(&mut h);
            dirty.hash(&mut h);
            pages.hash(&mut h);
            h.finish()
        };
        BaseImage { len: memory.len(), dirty, pages: pages.into_boxed_slice(), ledger, id }
    }
}

/// The state shared by a sandbox and its VMs.
pub(crate) struct SandboxInner {
    pub config: SandboxConfig,
    pub compiled: Arc<Compiled>,
    pub base: BaseImage,
}
