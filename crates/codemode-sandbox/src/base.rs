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
/// module memory (a base image costs its dirty pages, not the whole linear memory). A base image
/// captured on top of another ([`crate::Sandbox::extend`]) shares the pages it has in common with
/// it instead of holding a second copy.
pub(crate) struct BaseImage {
    /// Linear memory size of the base state, in bytes.
    pub len: usize,
    /// Pages that differ from the pristine module memory, ascending.
    pub dirty: Vec<u32>,
    /// Where each page of `dirty` is held: a chunk of `chunks` and the page's place in it.
    slots: Vec<(u32, u32)>,
    /// Page contents, `PAGE` bytes each: the parent image's chunks, then this image's own.
    chunks: Vec<Arc<[u8]>>,
    /// Bytes of the pages this image holds itself (not shared with the image it was captured on).
    pub own_bytes: usize,
    pub ledger: Ledger,
    /// Identity of this base image (module hash + config + pages).
    pub id: u64,
}

impl BaseImage {
    pub fn empty() -> BaseImage {
        BaseImage {
            len: 0,
            dirty: Vec::new(),
            slots: Vec::new(),
            chunks: Vec::new(),
            own_bytes: 0,
            ledger: Ledger::default(),
            id: 0,
        }
    }

    /// The `k`-th dirty page's contents.
    pub fn dirty_page(&self, k: usize) -> &[u8] {
        let (chunk, at) = self.slots[k];
        let at = at as usize * PAGE;
        &self.chunks[chunk as usize][at..at + PAGE]
    }

    /// Page `i` of the base state: its dirty copy, else the pristine page (zero past it).
    pub fn page<'a>(&'a self, pristine: &'a [u8], i: usize) -> &'a [u8] {
        match self.dirty.binary_search(&(i as u32)) {
            Ok(k) => self.dirty_page(k),
            Err(_) => base_page(pristine, i),
        }
    }

    /// The base image of a VM's `memory` and `ledger` (after a setup script, with no guest frame
    /// live). Pages equal to `parent`'s (the image the VM started from) are shared with it.
    pub fn capture(
        memory: &[u8],
        ledger: &Ledger,
        compiled: &Compiled,
        config: &SandboxConfig,
        parent: Option<&BaseImage>,
    ) -> BaseImage {
        let pristine = &compiled.pristine;
        let mut chunks: Vec<Arc<[u8]>> = parent.map(|p| p.chunks.clone()).unwrap_or_default();
        let own_chunk = u32::try_from(chunks.len()).expect("few chunks");
        let mut dirty = Vec::new();
        let mut slots = Vec::new();
        let mut own = Vec::new();
        for (i, page) in memory.chunks(PAGE).enumerate() {
            if page == base_page(pristine, i) {
                continue;
            }
            let shared = parent.and_then(|p| match p.dirty.binary_search(&(i as u32)) {
                Ok(k) if p.dirty_page(k) == page => Some(p.slots[k]),
                _ => None,
            });
            dirty.push(i as u32);
            match shared {
                Some(slot) => slots.push(slot),
                None => {
                    slots.push((own_chunk, (own.len() / PAGE) as u32));
                    own.extend_from_slice(page);
                }
            }
        }
        let id = {
            let mut h = std::hash::DefaultHasher::new();
            compiled.module_hash.hash(&mut h);
            config.memory_limit_bytes.hash(&mut h);
            memory.len().hash(&mut h);
            dirty.hash(&mut h);
            // The dirty pages as one run of bytes: its length, then each page in order.
            h.write_usize(dirty.len() * PAGE);
            for &p in &dirty {
                h.write(&memory[p as usize * PAGE..][..PAGE]);
            }
            h.finish()
        };
        let own_bytes = own.len();
        chunks.push(own.into());
        // The base carries no per-run accounting: every run starts with zero stats and output.
        let ledger = Ledger {
            stats: Default::default(),
            output: Vec::new(),
            clock_ns: 0,
            captured_at_ns: 0,
            ..ledger.clone()
        };
        BaseImage { len: memory.len(), dirty, slots, chunks, own_bytes, ledger, id }
    }
}

/// The state shared by a sandbox and its VMs.
pub(crate) struct SandboxInner {
    pub config: SandboxConfig,
    pub compiled: Arc<Compiled>,
    pub base: BaseImage,
}
