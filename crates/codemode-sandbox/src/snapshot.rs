//! Sparse snapshots: the 4 KiB pages of linear memory that differ from the sandbox's base
//! image (pristine module memory + QuickJS init + prelude), stored as XOR against the base
//! page (mostly zero bytes, so they compress well), plus memory size and the host-side ledger.
//!
//! Wire format (little endian):
//! `MAGIC(8) | module_hash u64 | base_id u64 | mem_len u64 | flags u8 | ledger_len u32 | ledger |
//!  page_count u32 | page_index u32 * page_count | payload_len u32 | payload | checksum u64`
//! where the payload is the XOR pages, lz4-compressed when flag bit 0 is set; flag bit 1 means a
//! cell was pending. The checksum covers everything before it.

use std::hash::Hasher;

use crate::abi::{AbiStats, GuestOutput, OutputKind};
use crate::abi::{Ledger, LedgerCall};
use crate::base::{PAGE, SandboxInner, base_page};
use crate::error::SandboxError;

const WASM_PAGE: u64 = 65536;
const MAGIC: &[u8; 8] = b"CMSNAP01";
const FLAG_COMPRESSED: u8 = 1;
const FLAG_CELL_RUNNING: u8 = 2;
/// Offsets of the module hash and the base image id (after the magic).
const MODULE_HASH_AT: usize = 8;
const BASE_ID_AT: usize = 16;
/// Offset of the ledger's `captured_at_ns`: magic, module hash, base id, memory size, flags, ledger
/// length, then the ledger's `next_id`, `rng` and `clock_ns`.
const CAPTURED_AT: usize = 8 + 8 + 8 + 8 + 1 + 4 + 4 + 8 + 8;

/// A suspended VM: restore it with [`crate::Sandbox::restore`] into a fresh instance that
/// continues exactly where this one stopped. Belongs to the sandbox (module + base image +
/// configuration) that took it; restoring into another sandbox is refused.
#[derive(Clone, PartialEq, Eq)]
pub struct Snapshot {
    bytes: Vec<u8>,
}

impl std::fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Snapshot").field("stored_bytes", &self.bytes.len()).finish()
    }
}

/// A decoded snapshot.
pub(crate) struct Decoded {
    pub module_hash: u64,
    pub base_id: u64,
    pub mem_len: u64,
    pub cell_running: bool,
    pub ledger: Ledger,
    pub pages: Vec<u32>,
    /// `pages.len() * PAGE` bytes: each page XOR the base page.
    pub xor: Vec<u8>,
}

fn checksum(bytes: &[u8]) -> u64 {
    let mut h = std::hash::DefaultHasher::new();
    h.write(bytes);
    h.finish()
}

impl Snapshot {
    /// Bytes this snapshot occupies when stored (what [`Snapshot::to_bytes`] returns).
    pub fn stored_bytes(&self) -> usize {
        self.bytes.len()
    }

    /// The serialized snapshot.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.bytes.clone()
    }

    /// The serialized snapshot, by reference.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The guest memory this snapshot holds, without the ledger (whose clocks differ between two
    /// captures of the same memory): memory size, then each stored page's index and XOR bytes.
    /// For tests that compare two ways of capturing the same VM.
    #[doc(hidden)]
    pub fn memory_image(&self) -> Result<Vec<u8>, SandboxError> {
        let d = self.decode()?;
        let mut out = d.mem_len.to_le_bytes().to_vec();
        for page in &d.pages {
            out.extend_from_slice(&page.to_le_bytes());
        }
        out.extend_from_slice(&d.xor);
        Ok(out)
    }

    /// How long ago, on this process's clock, the snapshot was captured; `None` when the run's
    /// clock had not started (no cell ran yet). Capture times are process-local: a snapshot that
    /// moves to another process goes through [`Snapshot::recaptured`] there.
    pub fn captured_ago(&self) -> Option<std::time::Duration> {
        let at = u64::from_le_bytes(self.bytes.get(CAPTURED_AT..CAPTURED_AT + 8)?.try_into().ok()?);
        (at != 0).then(|| std::time::Duration::from_nanos(crate::abi::process_clock_ns().saturating_sub(at)))
    }

    /// This snapshot as if this process had captured it `ago` before now, so a restore here counts
    /// the time it spent suspended elsewhere (the guest's monotonic clock never goes back within a
    /// run). A snapshot whose clock had not started is returned unchanged.
    pub fn recaptured(&self, ago: std::time::Duration) -> Result<Snapshot, SandboxError> {
        let d = self.decode()?;
        if d.ledger.captured_at_ns == 0 {
            return Ok(self.clone());
        }
        let now = crate::abi::process_clock_ns();
        let ago = u64::try_from(ago.as_nanos()).unwrap_or(u64::MAX);
        // 0 means "not started": a capture before the process clock's start (about 146 years
        // before this process started, see `process_clock_ns`) reads as its first tick.
        let at = now.saturating_sub(ago).max(1);
        let mut bytes = self.bytes.clone();
        let body_len = bytes.len().saturating_sub(8);
        bytes
            .get_mut(CAPTURED_AT..CAPTURED_AT + 8)
            .ok_or_else(|| bad("truncated"))?
            .copy_from_slice(&at.to_le_bytes());
        let sum = checksum(&bytes[..body_len]);
        bytes[body_len..].copy_from_slice(&sum.to_le_bytes());
        Ok(Snapshot { bytes })
    }

    /// The [`crate::Sandbox::identity`] of the sandbox this snapshot belongs to (module hash, base
    /// image id): the one sandbox that restores it.
    pub fn identity(&self) -> (u64, u64) {
        let word = |at: usize| {
            self.bytes.get(at..at + 8).and_then(|b| b.try_into().ok()).map_or(0, u64::from_le_bytes)
        };
        (word(MODULE_HASH_AT), word(BASE_ID_AT))
    }

    /// Parse and fully validate serialized bytes (structure, checksum, ledger, decompression).
    /// Whether it belongs to a given sandbox is checked by [`crate::Sandbox::restore`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Snapshot, SandboxError> {
        decode(bytes)?;
        Ok(Snapshot { bytes: bytes.to_vec() })
    }

    /// Decode for a restore. Every `Snapshot` was validated when it was made (captured in
    /// process, or checked by [`Snapshot::from_bytes`]) and its bytes never change, so the
    /// checksum is not recomputed; the structure is still parsed with full bounds checks.
    pub(crate) fn decode(&self) -> Result<Decoded, SandboxError> {
        decode_body(self.bytes.get(..self.bytes.len().saturating_sub(8)).unwrap_or_default())
    }

    /// Snapshot `memory`: every page that differs from the base image. With `candidates`
    /// (ascending), only those pages are compared: the caller guarantees every other page
    /// equals the base image (write tracking).
    pub(crate) fn capture(
        sb: &SandboxInner,
        memory: &[u8],
        candidates: Option<&[u32]>,
        ledger: &Ledger,
        cell_running: bool,
    ) -> Snapshot {
        let base = &sb.base;
        let pristine = &sb.compiled.pristine;
        let mut pages = Vec::new();
        let mut xor = Vec::new();
        let mut diff = |i: usize, page: &[u8], b: &[u8]| {
            if page != b {
                pages.push(i as u32);
                xor.extend(page.iter().zip(b).map(|(x, y)| x ^ y));
            }
        };
        match candidates {
            Some(candidates) => {
                for &i in candidates {
                    let i = i as usize;
                    if let Some(page) = memory.get(i * PAGE..(i + 1) * PAGE) {
                        diff(i, page, base.page(pristine, i));
                    }
                }
            }
            None => {
                // `base.dirty` is ascending, like `i`: walk it alongside instead of searching it.
                let mut next_dirty = 0;
                for (i, page) in memory.chunks(PAGE).enumerate() {
                    let b = match base.dirty.get(next_dirty) {
                        Some(&d) if d as usize == i => {
                            next_dirty += 1;
                            base.dirty_page(next_dirty - 1)
                        }
                        _ => base_page(pristine, i),
                    };
                    diff(i, page, b);
                }
            }
        }
        let compress = sb.config.compress_snapshots;
        let payload = if compress { lz4_flex::block::compress(&xor) } else { xor };
        let mut out = Vec::with_capacity(payload.len() + pages.len() * 4 + 256);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&sb.compiled.module_hash.to_le_bytes());
        out.extend_from_slice(&sb.base.id.to_le_bytes());
        out.extend_from_slice(&(memory.len() as u64).to_le_bytes());
        let flags =
            if compress { FLAG_COMPRESSED } else { 0 } | if cell_running { FLAG_CELL_RUNNING } else { 0 };
        out.push(flags);
        let l = encode_ledger(ledger);
        out.extend_from_slice(&(l.len() as u32).to_le_bytes());
        out.extend_from_slice(&l);
        out.extend_from_slice(&(pages.len() as u32).to_le_bytes());
        for p in &pages {
            out.extend_from_slice(&p.to_le_bytes());
        }
        out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
        out.extend_from_slice(&payload);
        let sum = checksum(&out);
        out.extend_from_slice(&sum.to_le_bytes());
        Snapshot { bytes: out }
    }
}

fn bad(reason: &str) -> SandboxError {
    SandboxError::Snapshot { reason: reason.to_owned() }
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], SandboxError> {
        let (a, b) = self.0.split_at_checked(n).ok_or_else(|| bad("truncated"))?;
        self.0 = b;
        Ok(a)
    }
    fn u8(&mut self) -> Result<u8, SandboxError> {
        Ok(self.take(1)?[0])
    }
    fn u32(&mut self) -> Result<u32, SandboxError> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().map_err(|_| bad("truncated"))?))
    }
    fn u64(&mut self) -> Result<u64, SandboxError> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().map_err(|_| bad("truncated"))?))
    }
    fn string(&mut self) -> Result<String, SandboxError> {
        let n = self.u32()? as usize;
        String::from_utf8(self.take(n)?.to_vec()).map_err(|_| bad("string is not UTF-8"))
    }
}

fn decode(bytes: &[u8]) -> Result<Decoded, SandboxError> {
    let (body, sum) = bytes
        .split_at_checked(bytes.len().checked_sub(8).ok_or_else(|| bad("truncated"))?)
        .ok_or_else(|| bad("truncated"))?;
    if checksum(body).to_le_bytes() != sum {
        return Err(bad("checksum mismatch"));
    }
    decode_body(body)
}

/// Decode everything before the checksum.
fn decode_body(body: &[u8]) -> Result<Decoded, SandboxError> {
    let mut r = Reader(body);
    if r.take(8)? != MAGIC {
        return Err(bad("not a codemode snapshot (bad magic or version)"));
    }
    let module_hash = r.u64()?;
    let base_id = r.u64()?;
    let mem_len = r.u64()?;
    if mem_len == 0 || mem_len % WASM_PAGE != 0 || mem_len > 4 << 30 {
        return Err(bad("invalid memory size"));
    }
    let flags = r.u8()?;
    if flags & !(FLAG_COMPRESSED | FLAG_CELL_RUNNING) != 0 {
        return Err(bad("unknown flags"));
    }
    let ledger_len = r.u32()? as usize;
    let ledger = decode_ledger(r.take(ledger_len)?)?;
    let count = r.u32()? as usize;
    let max_pages = (mem_len / PAGE as u64) as usize;
    if count > max_pages {
        return Err(bad("more pages than memory"));
    }
    let mut pages = Vec::with_capacity(count);
    for _ in 0..count {
        let p = r.u32()?;
        if p as usize >= max_pages || pages.last().is_some_and(|&last| last >= p) {
            return Err(bad("page index out of range or out of order"));
        }
        pages.push(p);
    }
    let payload_len = r.u32()? as usize;
    let payload = r.take(payload_len)?;
    if !r.0.is_empty() {
        return Err(bad("trailing bytes"));
    }
    let want = count * PAGE;
    let xor = if flags & FLAG_COMPRESSED != 0 {
        let mut out = vec![0u8; want];
        lz4_block_decode(payload, &mut out)?;
        out
    } else {
        if payload.len() != want {
            return Err(bad("page data has the wrong size"));
        }
        payload.to_vec()
    };
    Ok(Decoded {
        module_hash,
        base_id,
        mem_len,
        cell_running: flags & FLAG_CELL_RUNNING != 0,
        ledger,
        pages,
        xor,
    })
}

/// Decode one LZ4 block (as written by `lz4_flex::block::compress`) into `out`, which it must
/// fill exactly. Every read and write is bounds-checked, so corrupt input is an error. Unlike
/// `lz4_flex`'s decoder, an overlapping match (the long zero runs of XOR pages) is copied in
/// doubling non-overlapping chunks instead of byte by byte.
pub(crate) fn lz4_block_decode(input: &[u8], out: &mut [u8]) -> Result<(), SandboxError> {
    let corrupt = || bad("corrupt compressed pages");
    if input.is_empty() && out.is_empty() {
        return Ok(());
    }
    let mut i = 0;
    let mut o = 0;
    let mut byte = |i: &mut usize| -> Result<u8, SandboxError> {
        let b = *input.get(*i).ok_or_else(corrupt)?;
        *i += 1;
        Ok(b)
    };
    let extend =
        |i: &mut usize, mut n: usize, byte: &mut dyn FnMut(&mut usize) -> Result<u8, SandboxError>| {
            if n == 15 {
                loop {
                    let b = byte(i)?;
                    n = n.checked_add(usize::from(b)).ok_or_else(corrupt)?;
                    if b != 255 {
                        break;
                    }
                }
            }
            Ok::<usize, SandboxError>(n)
        };
    loop {
        let token = byte(&mut i)?;
        let lit = extend(&mut i, usize::from(token >> 4), &mut byte)?;
        let src = input.get(i..i.checked_add(lit).ok_or_else(corrupt)?).ok_or_else(corrupt)?;
        out.get_mut(o..o + lit).ok_or_else(corrupt)?.copy_from_slice(src);
        i += lit;
        o += lit;
        if i == input.len() {
            break;
        }
        let offset = usize::from(u16::from_le_bytes([byte(&mut i)?, byte(&mut i)?]));
        let len = extend(&mut i, usize::from(token & 15), &mut byte)?.checked_add(4).ok_or_else(corrupt)?;
        if offset == 0 || offset > o || len > out.len() - o {
            return Err(corrupt());
        }
        let start = o - offset;
        let mut done = 0;
        while done < len {
            // `done` is a multiple of `offset` until the last chunk, so the source span
            // `start..start + n` repeats the pattern and never overlaps the destination.
            let n = (len - done).min(offset + done);
            out.copy_within(start..start + n, o + done);
            done += n;
        }
        o += len;
    }
    if o != out.len() {
        return Err(bad("page data has the wrong size"));
    }
    Ok(())
}

fn encode_ledger(l: &Ledger) -> Vec<u8> {
    let mut out = Vec::new();
    let put_str = |out: &mut Vec<u8>, s: &str| {
        out.extend_from_slice(&(s.len() as u32).to_le_bytes());
        out.extend_from_slice(s.as_bytes());
    };
    out.extend_from_slice(&l.next_id.to_le_bytes());
    out.extend_from_slice(&l.rng.to_le_bytes());
    out.extend_from_slice(&l.clock_ns.to_le_bytes());
    out.extend_from_slice(&l.captured_at_ns.to_le_bytes());
    for v in stats_fields(&l.stats) {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.extend_from_slice(&(l.calls.len() as u32).to_le_bytes());
    for (id, c) in &l.calls {
        out.extend_from_slice(&id.to_le_bytes());
        out.push(c.taken as u8);
        put_str(&mut out, &c.payload);
    }
    out.extend_from_slice(&(l.output.len() as u32).to_le_bytes());
    for o in &l.output {
        out.push(match o.kind {
            OutputKind::Text => 0,
            OutputKind::Json => 1,
        });
        put_str(&mut out, &o.payload);
    }
    out
}

const STATS_FIELDS: usize = 11;

fn stats_fields(s: &AbiStats) -> [u64; STATS_FIELDS] {
    [
        s.host_calls,
        s.host_calls_attempted,
        s.host_call_bytes,
        s.outputs,
        s.outputs_attempted,
        s.output_bytes,
        s.refusals,
        s.deliveries,
        s.delivered_bytes,
        s.eval_bytes,
        s.stdio_bytes_dropped,
    ]
}

fn decode_ledger(bytes: &[u8]) -> Result<Ledger, SandboxError> {
    let mut r = Reader(bytes);
    let next_id = r.u32()?;
    let rng = r.u64()?;
    let clock_ns = r.u64()?;
    let captured_at_ns = r.u64()?;
    let mut f = [0u64; STATS_FIELDS];
    for v in &mut f {
        *v = r.u64()?;
    }
    let stats = AbiStats {
        host_calls: f[0],
        host_calls_attempted: f[1],
        host_call_bytes: f[2],
        outputs: f[3],
        outputs_attempted: f[4],
        output_bytes: f[5],
        refusals: f[6],
        deliveries: f[7],
        delivered_bytes: f[8],
        eval_bytes: f[9],
        stdio_bytes_dropped: f[10],
    };
    let n = r.u32()? as usize;
    let mut calls = std::collections::BTreeMap::new();
    for _ in 0..n {
        let id = r.u32()?;
        let taken = match r.u8()? {
            0 => false,
            1 => true,
            _ => return Err(bad("invalid ledger flag")),
        };
        let payload = r.string()?;
        if calls.insert(id, LedgerCall { payload, taken }).is_some() {
            return Err(bad("duplicate call id"));
        }
    }
    let n = r.u32()? as usize;
    let mut output = Vec::with_capacity(n.min(1024));
    for _ in 0..n {
        let kind = match r.u8()? {
            0 => OutputKind::Text,
            1 => OutputKind::Json,
            _ => return Err(bad("invalid output kind")),
        };
        output.push(GuestOutput { kind, payload: r.string()? });
    }
    if !r.0.is_empty() {
        return Err(bad("trailing ledger bytes"));
    }
    Ok(Ledger { next_id, calls, output, stats, rng, clock_ns, captured_at_ns })
}
