//! Native stacks for guest calls made on threads with less stack than a call may need.
//!
//! A guest call needs `max_wasm_stack_bytes` plus a margin of native stack. A VM thread sized by
//! [`crate::Sandbox::thread_stack_bytes`] has it; any other thread (an async worker running a
//! guest on the calling thread, 2 MiB) does not. `stacker::grow` would map a fresh segment for
//! every call, fault in the pages it touches and unmap it (with TLB shootdowns): tens of
//! microseconds per call. Here a segment is mapped once and kept in a small process-wide pool,
//! so a call on a small-stack thread takes a segment whose pages are already resident.
//!
//! The pool holds at most [`IDLE_SEGMENTS`] idle segments (the rest are unmapped when given
//! back), so its memory is bounded by the number of guest calls running at once on small-stack
//! threads, not by the number of threads. A segment is used by one call at a time and only for
//! its duration; nothing inside a guest call switches stacks again.

/// Runs `f` with at least `red_zone` bytes of native stack: on the calling thread's own stack
/// when it has that much left, else on a pooled segment of `size` bytes (at least `red_zone`).
pub(crate) fn with_stack<R>(red_zone: usize, size: usize, f: impl FnOnce() -> R) -> R {
    if stacker::remaining_stack().is_some_and(|left| left >= red_zone) {
        return f();
    }
    #[cfg(target_os = "linux")]
    if let Some(segment) = linux::Segment::take(size.max(red_zone)) {
        return segment.run(f);
    }
    stacker::grow(size.max(red_zone), f)
}

/// Idle segments kept for the next call on a small-stack thread.
#[cfg(target_os = "linux")]
const IDLE_SEGMENTS: usize = 8;

#[cfg(target_os = "linux")]
mod linux {
    use std::sync::Mutex;

    use super::IDLE_SEGMENTS;

    /// A mapped stack segment with a guard page below it.
    pub(super) struct Segment {
        /// Start of the mapping (the guard page).
        mapping: *mut u8,
        /// Bytes of the mapping, guard page included.
        mapped: usize,
        page: usize,
    }

    // SAFETY: a segment is plain memory owned by whoever holds it; it is never used by two
    // threads at once (a call takes it out of the pool and gives it back when done).
    unsafe impl Send for Segment {}

    fn pool() -> &'static Mutex<Vec<Segment>> {
        static POOL: Mutex<Vec<Segment>> = Mutex::new(Vec::new());
        &POOL
    }

    impl Segment {
        /// Usable bytes (above the guard page).
        fn usable(&self) -> usize {
            self.mapped - self.page
        }

        /// A segment of at least `size` usable bytes: an idle one, or a new mapping (`None`
        /// when the mapping fails).
        pub(super) fn take(size: usize) -> Option<Segment> {
            {
                let mut idle = pool().lock().unwrap_or_else(|p| p.into_inner());
                if let Some(i) = idle.iter().position(|s| s.usable() >= size) {
                    return Some(idle.swap_remove(i));
                }
            }
            Segment::map(size)
        }

        fn map(size: usize) -> Option<Segment> {
            // SAFETY: sysconf has no preconditions.
            let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).ok()?.max(4096);
            let mapped = size.div_ceil(page).checked_add(1)?.checked_mul(page)?;
            // SAFETY: a fresh anonymous private mapping; no existing memory is affected.
            let mapping = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    mapped,
                    libc::PROT_NONE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                    -1,
                    0,
                )
            };
            if mapping == libc::MAP_FAILED {
                return None;
            }
            let segment = Segment { mapping: mapping.cast(), mapped, page };
            // SAFETY: the range is inside the mapping just made; the lowest page stays PROT_NONE
            // as the guard.
            let rc = unsafe {
                libc::mprotect(
                    mapping.cast::<u8>().add(page).cast(),
                    mapped - page,
                    libc::PROT_READ | libc::PROT_WRITE,
                )
            };
            (rc == 0).then_some(segment)
        }

        /// Runs `f` on this segment, then gives it back to the pool.
        pub(super) fn run<R>(self, f: impl FnOnce() -> R) -> R {
            // SAFETY: the segment is mapped read-write above its guard page, owned by this call
            // for its duration, and large enough for what the caller asked; `f` cannot unwind
            // across the stack switch (panics are caught and resumed after it).
            let outcome = unsafe {
                psm::on_stack(self.mapping.add(self.page), self.usable(), || {
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
                })
            };
            self.give_back();
            match outcome {
                Ok(r) => r,
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }

        fn give_back(self) {
            let mut idle = pool().lock().unwrap_or_else(|p| p.into_inner());
            if idle.len() < IDLE_SEGMENTS {
                idle.push(self);
            }
        }
    }

    impl Drop for Segment {
        fn drop(&mut self) {
            // SAFETY: the mapping was made by `map` and is no longer used.
            unsafe {
                libc::munmap(self.mapping.cast(), self.mapped);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deep native recursion on a small thread runs on a pooled segment, twice (the second time
    /// on the segment the first gave back).
    #[test]
    fn a_small_thread_gets_a_segment_large_enough() {
        fn depth(n: u32) -> u32 {
            let pad = std::hint::black_box([0u8; 1024]);
            if n == 0 { u32::from(pad[0]) } else { depth(n - 1) + 1 }
        }
        let run = || {
            std::thread::Builder::new()
                .stack_size(256 << 10)
                .spawn(|| with_stack(8 << 20, 8 << 20, || depth(4000)))
                .unwrap()
                .join()
                .unwrap()
        };
        assert_eq!(run(), 4000);
        assert_eq!(run(), 4000);
        // A panic inside comes out as a panic of the caller.
        let caught = std::panic::catch_unwind(|| with_stack(64 << 20, 1 << 20, || panic!("inside")));
        assert!(caught.is_err());
    }
}
