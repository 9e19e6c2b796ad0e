//! Write tracking for one VM's linear memory, so a snapshot compares only the pages written
//! since the VM started or was restored instead of every page.
//!
//! Linux (≥ 6.7) only: the memory range is registered with a userfaultfd of its own in
//! asynchronous write-protect mode (`UFFD_FEATURE_WP_ASYNC`) and write-protected once when the
//! VM is armed. The kernel then resolves the first write to each page itself (no handler
//! thread, no signal) by clearing that page's write-protect bit, and the `PAGEMAP_SCAN` ioctl
//! lists the pages whose bit is clear (`PAGE_IS_WRITTEN`). Everything is per range and per
//! file descriptor: unlike soft-dirty bits (`/proc/self/clear_refs` is process-wide) VMs on
//! other threads neither see nor reset each other's state.
//!
//! Dropping the tracker closes the userfaultfd, which unregisters the range and clears every
//! write-protect bit, so wasmtime's pooling allocator (whose slot reset also scans for
//! `PAGE_IS_WRITTEN` pages) sees every page of the range as written again and resets all of
//! them. A [`Tracker`] must therefore be dropped before the store that owns the memory.
//!
//! At most 256 VMs are tracked at once (each holds a file descriptor). Anything unexpected
//! (more tracked VMs, another OS, an older kernel, a refused syscall, a page size other
//! than 4 KiB) yields no tracker, and the snapshot falls back to comparing every page.

/// A write-protected range of one VM's linear memory.
pub(crate) struct Tracker {
    #[cfg(target_os = "linux")]
    imp: imp::Tracker,
}

impl Tracker {
    /// Start tracking writes to `len` bytes at `ptr` (page aligned: the start of a linear
    /// memory). `None` when tracking is unavailable here.
    pub(crate) fn arm(ptr: *mut u8, len: usize) -> Option<Tracker> {
        #[cfg(target_os = "linux")]
        {
            imp::Tracker::arm(ptr, len).map(|imp| Tracker { imp })
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = (ptr, len);
            None
        }
    }

    /// Write-protect the pages `pages` (ascending indices into the range) again, so their next
    /// write is tracked anew: after [`Tracker::written`] and a reset of those pages, the tracker
    /// then reports only pages written from here on. `false` when the kernel refused (the caller
    /// must then stop trusting the tracker).
    pub(crate) fn protect(&self, pages: &[u32]) -> bool {
        #[cfg(target_os = "linux")]
        {
            self.imp.protect(pages)
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = pages;
            false
        }
    }

    /// Append to `out` (ascending) the index of every page of the range written since
    /// [`Tracker::arm`], possibly with some pages that were not. `false` when the scan failed
    /// (the caller must then treat every page as written).
    pub(crate) fn written(&self, out: &mut Vec<u32>) -> bool {
        #[cfg(target_os = "linux")]
        {
            self.imp.written(out)
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = out;
            false
        }
    }
}

#[cfg(target_os = "linux")]
mod imp {
    use std::fs::File;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};

    use crate::base::PAGE;

    const UFFD_API: u64 = 0xAA;
    const UFFD_USER_MODE_ONLY: libc::c_int = 1;
    const UFFD_FEATURE_WP_ASYNC: u64 = 1 << 15;
    const UFFDIO_REGISTER_MODE_WP: u64 = 1 << 1;
    const UFFDIO_WRITEPROTECT_MODE_WP: u64 = 1 << 0;
    // _IOWR(0xAA, nr, size) of the structs below.
    const UFFDIO_API: libc::c_ulong = 0xC018_AA3F;
    const UFFDIO_REGISTER: libc::c_ulong = 0xC020_AA00;
    const UFFDIO_WRITEPROTECT: libc::c_ulong = 0xC018_AA06;
    // _IOWR('f', 16, struct pm_scan_arg)
    const PAGEMAP_SCAN: libc::c_ulong = 0xC060_6610;
    const PAGE_IS_WRITTEN: u64 = 1 << 1;

    #[repr(C)]
    struct UffdioApi {
        api: u64,
        features: u64,
        ioctls: u64,
    }

    #[repr(C)]
    struct UffdioRange {
        start: u64,
        len: u64,
    }

    #[repr(C)]
    struct UffdioRegister {
        range: UffdioRange,
        mode: u64,
        ioctls: u64,
    }

    #[repr(C)]
    struct UffdioWriteprotect {
        range: UffdioRange,
        mode: u64,
    }

    #[repr(C)]
    #[derive(Clone, Copy, Default)]
    struct PageRegion {
        start: u64,
        end: u64,
        categories: u64,
    }

    #[repr(C)]
    struct PmScanArg {
        size: u64,
        flags: u64,
        start: u64,
        end: u64,
        walk_end: u64,
        vec: u64,
        vec_len: u64,
        max_pages: u64,
        category_inverted: u64,
        category_mask: u64,
        category_anyof_mask: u64,
        return_mask: u64,
    }

    /// This process's `/proc/self/pagemap`, reopened after a fork (an inherited descriptor
    /// would describe the parent's address space).
    fn pagemap() -> Option<Arc<File>> {
        static PAGEMAP: Mutex<Option<(u32, Arc<File>)>> = Mutex::new(None);
        let pid = std::process::id();
        let mut slot = PAGEMAP.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((p, f)) = &*slot
            && *p == pid
        {
            return Some(f.clone());
        }
        let f = Arc::new(File::open("/proc/self/pagemap").ok()?);
        *slot = Some((pid, f.clone()));
        Some(f)
    }

    /// Tracked VMs alive at once: each holds a file descriptor, and the process needs its
    /// descriptors for other things (sockets, pipes); past this, VMs go untracked.
    const MAX_LIVE: usize = 256;
    static LIVE: AtomicUsize = AtomicUsize::new(0);

    /// One of the [`MAX_LIVE`] places, released on drop.
    struct Place;

    impl Place {
        fn take() -> Option<Place> {
            LIVE.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| (n < MAX_LIVE).then_some(n + 1))
                .ok()
                .map(|_| Place)
        }
    }

    impl Drop for Place {
        fn drop(&mut self) {
            LIVE.fetch_sub(1, Ordering::AcqRel);
        }
    }

    pub(crate) struct Tracker {
        uffd: OwnedFd,
        _place: Place,
        pagemap: Arc<File>,
        start: u64,
        len: u64,
    }

    impl Tracker {
        pub(crate) fn arm(ptr: *mut u8, len: usize) -> Option<Tracker> {
            // SAFETY: `sysconf` only reads a constant of the process.
            let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
            let start = ptr as u64;
            if page != PAGE as libc::c_long
                || len == 0
                || !start.is_multiple_of(PAGE as u64)
                || !len.is_multiple_of(PAGE)
            {
                return None;
            }
            let place = Place::take()?;
            let pagemap = pagemap()?;
            // SAFETY: the userfaultfd syscall takes only flags and returns a new descriptor
            // (or -1), which we own from here on.
            let raw = unsafe {
                libc::syscall(libc::SYS_userfaultfd, libc::O_CLOEXEC | libc::O_NONBLOCK | UFFD_USER_MODE_ONLY)
            };
            if raw < 0 {
                return None;
            }
            // SAFETY: `raw` is a freshly created descriptor nobody else owns.
            let uffd = unsafe { OwnedFd::from_raw_fd(raw as libc::c_int) };
            let fd = uffd.as_raw_fd();
            let mut api = UffdioApi { api: UFFD_API, features: UFFD_FEATURE_WP_ASYNC, ioctls: 0 };
            // SAFETY: UFFDIO_API reads and writes exactly one `uffdio_api` (our repr(C) copy).
            if unsafe { libc::ioctl(fd, UFFDIO_API, &mut api) } != 0 {
                return None;
            }
            let range = || UffdioRange { start, len: len as u64 };
            let mut reg = UffdioRegister { range: range(), mode: UFFDIO_REGISTER_MODE_WP, ioctls: 0 };
            // SAFETY: UFFDIO_REGISTER reads and writes one `uffdio_register`. The range is the
            // VM's own linear memory (mapped, private anonymous, owned by the VM's store for at
            // least the tracker's lifetime); registering changes no contents, only how the
            // kernel resolves write faults there (asynchronously, in the kernel).
            if unsafe { libc::ioctl(fd, UFFDIO_REGISTER, &mut reg) } != 0 {
                return None;
            }
            let mut wp = UffdioWriteprotect { range: range(), mode: UFFDIO_WRITEPROTECT_MODE_WP };
            // SAFETY: UFFDIO_WRITEPROTECT reads one `uffdio_writeprotect`; with WP_ASYNC a write
            // to a protected page is resolved by the kernel, so nothing ever blocks on it.
            if unsafe { libc::ioctl(fd, UFFDIO_WRITEPROTECT, &mut wp) } != 0 {
                return None;
            }
            Some(Tracker { uffd, _place: place, pagemap, start, len: len as u64 })
        }

        pub(crate) fn protect(&self, pages: &[u32]) -> bool {
            let pages_in_range = self.len / PAGE as u64;
            let mut i = 0;
            while i < pages.len() {
                // One ioctl per run of consecutive pages.
                let first = pages[i];
                let mut end = first as u64 + 1;
                i += 1;
                while i < pages.len() && pages[i] as u64 == end {
                    end += 1;
                    i += 1;
                }
                if end > pages_in_range {
                    return false;
                }
                let range = UffdioRange {
                    start: self.start + first as u64 * PAGE as u64,
                    len: (end - first as u64) * PAGE as u64,
                };
                let mut wp = UffdioWriteprotect { range, mode: UFFDIO_WRITEPROTECT_MODE_WP };
                // SAFETY: as in `arm`: UFFDIO_WRITEPROTECT reads one `uffdio_writeprotect` over a
                // part of the registered range; with WP_ASYNC nothing ever blocks on it.
                if unsafe { libc::ioctl(self.uffd.as_raw_fd(), UFFDIO_WRITEPROTECT, &mut wp) } != 0 {
                    return false;
                }
            }
            true
        }

        pub(crate) fn written(&self, out: &mut Vec<u32>) -> bool {
            // Keep the descriptor alive (and the range registered) for the whole scan.
            let _uffd = &self.uffd;
            let mut regions = [PageRegion::default(); 256];
            let end = self.start + self.len;
            let mut from = self.start;
            while from < end {
                let mut arg = PmScanArg {
                    size: size_of::<PmScanArg>() as u64,
                    flags: 0,
                    start: from,
                    end,
                    walk_end: 0,
                    vec: regions.as_mut_ptr() as u64,
                    vec_len: regions.len() as u64,
                    max_pages: 0,
                    category_inverted: 0,
                    category_mask: PAGE_IS_WRITTEN,
                    category_anyof_mask: 0,
                    return_mask: PAGE_IS_WRITTEN,
                };
                // SAFETY: PAGEMAP_SCAN reads `arg`, writes at most `vec_len` regions into
                // `regions` and updates `arg.walk_end`; it only reads page tables of `[from,
                // end)`, never the memory.
                let n = unsafe { libc::ioctl(self.pagemap.as_raw_fd(), PAGEMAP_SCAN, &mut arg) };
                let Ok(n) = usize::try_from(n) else { return false };
                for r in regions.iter().take(n) {
                    if r.start < self.start || r.end > end || r.start >= r.end {
                        return false;
                    }
                    let first = (r.start - self.start) / PAGE as u64;
                    let last = (r.end - self.start).div_ceil(PAGE as u64);
                    out.extend((first..last).map(|p| p as u32));
                }
                if arg.walk_end <= from || arg.walk_end > end {
                    return arg.walk_end == end;
                }
                from = arg.walk_end;
            }
            true
        }
    }
}
