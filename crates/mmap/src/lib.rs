//! `ctxj-mmap`: a read-only memory map of a whole file that survives the file being truncated
//! while it is read — the only `unsafe` code of ctxj, in a crate of its own so that `ctxj-core`
//! and `ctxj` can `#![forbid(unsafe_code)]` and the compiler holds that rule.
//!
//! **The SIGBUS hazard, and how it is handled.** A mapped file that another process truncates
//! while ctxj reads it makes the kernel raise SIGBUS on the next access to a page past the new
//! end. Journals are append-only, so a well-behaved harness only grows them (growth is harmless:
//! the map keeps its original length and ctxj sees a consistent prefix), but ctxj also reads
//! files other tools rewrite, and an audit tool must not die on them. Checking the length before
//! or after mapping cannot close the race (the truncation can land in the middle of the parse:
//! `tests/cli/hostile.rs` did exactly that and got SIGBUS before this module handled it), so ctxj
//! **handles the signal, here and only here**:
//!
//! * every live map is registered (start, length) in a fixed table of atomics;
//! * a SIGBUS handler, installed once before the first map, looks the faulting address up in
//!   that table. When the address belongs to a journal map, it replaces the map from the faulting
//!   page to its end with anonymous zero pages (`mmap(MAP_FIXED | MAP_ANONYMOUS)`, a plain system
//!   call, safe in a signal handler), marks the map as *shrunk* and returns: the faulting read is
//!   retried and sees zeros. Any other SIGBUS goes to the handler installed before (Rust's own,
//!   or the default action), exactly as without ctxj's handler;
//! * [`Mapped::shrank`] tells the reader the bytes are not the file's: `Session::load` then reads
//!   the file again with a plain `read` (no map) and warns that the journal shrank while it was
//!   being read. The result is exactly what a plain read of the file as it now is gives.
//!
//! A file that shrinks and grows back between two page faults cannot be noticed through the
//! signal; [`Mapped::shrank`] also compares the file's length with the mapped length, which
//! catches a shrink that did not fault. Handling is compiled on Linux and macOS; elsewhere on
//! Unix nothing is mapped (plain reads only). `CTXJ_NO_MMAP=1` turns mapping off everywhere.
//!
//! `ctxj-core`'s `journal::mmap::Source` decides when to map (large regular files opened through
//! `journal::input`) and reads small files instead; this crate only maps, releases and watches.

use std::fs::File;

/// A registered read-only map of a whole file.
pub struct Mapped {
    map: memmap2::Mmap,
    file: File,
    #[cfg(any(target_os = "linux", target_os = "macos"))]
    slot: usize,
}

impl Drop for Mapped {
    fn drop(&mut self) {
        // Unregister before `map` is unmapped (fields drop after this body).
        #[cfg(any(target_os = "linux", target_os = "macos"))]
        guard::unregister(self.slot);
    }
}

impl Mapped {
    /// Maps `file` (of `len` bytes) read-only and registers the map with the SIGBUS handler;
    /// `None` when it cannot be guarded (handler not installed, too many maps, or a platform
    /// without the handler): the caller then reads the file instead.
    pub fn map(file: &File, len: usize) -> std::io::Result<Option<Mapped>> {
        #[cfg(any(target_os = "linux", target_os = "macos"))]
        return guard::map(file, len);
        #[cfg(not(any(target_os = "linux", target_os = "macos")))]
        {
            let _ = (file, len);
            Ok(None)
        }
    }

    /// The mapped bytes (zeros past the point where the file was cut, after a shrink).
    pub fn bytes(&self) -> &[u8] {
        &self.map
    }

    /// Tells the kernel that `start..end` will not be read again, so that its pages leave this
    /// process's resident set (they stay in the page cache). Reading the range later is still
    /// correct: the pages fault in again from the file (or, after a shrink handled by the SIGBUS
    /// handler, from the zero pages that replaced them).
    pub fn release(&self, start: usize, end: usize) {
        let end = end.min(self.map.len());
        if end > start {
            // SAFETY: MADV_DONTNEED on a private, read-only mapping that this process never
            // writes only drops page-table entries; the next access re-reads the same bytes.
            // No Rust reference observes a change. Failure is harmless.
            let _ = unsafe { self.map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, start, end - start) };
        }
    }

    /// Whether the file shrank while it was mapped: the bytes may then hold zeros where the
    /// file's end was cut off, and must be read again.
    pub fn shrank(&self) -> bool {
        #[cfg(any(target_os = "linux", target_os = "macos"))]
        if guard::faulted(self.slot) {
            return true;
        }
        self.file.metadata().map_or(true, |meta| meta.len() < self.map.len() as u64)
    }
}

#[cfg(any(target_os = "linux", target_os = "macos"))]
mod guard {
    //! The registry of live maps and the SIGBUS handler (see the module documentation).

    use std::fs::File;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::OnceLock;

    use super::Mapped;

    /// How many journals can be mapped at once; past that, files are read instead.
    const SLOTS: usize = 64;

    struct Slot {
        /// 0 = free; otherwise the claimed map's start address (page-aligned).
        start: AtomicUsize,
        len: AtomicUsize,
        faulted: AtomicBool,
        claimed: AtomicBool,
    }

    #[allow(clippy::declare_interior_mutable_const)]
    const FREE: Slot = Slot {
        start: AtomicUsize::new(0),
        len: AtomicUsize::new(0),
        faulted: AtomicBool::new(false),
        claimed: AtomicBool::new(false),
    };
    static TABLE: [Slot; SLOTS] = [FREE; SLOTS];

    /// The SIGBUS disposition before ours, to chain to; `None` when installing failed.
    static PREVIOUS: OnceLock<Option<libc::sigaction>> = OnceLock::new();

    fn page_size() -> usize {
        // SAFETY: sysconf has no preconditions.
        let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        if p > 0 {
            p as usize
        } else {
            4096
        }
    }

    /// Installs the handler once; whether it is in place.
    fn install() -> bool {
        PREVIOUS
            .get_or_init(|| {
                // SAFETY: plain sigaction calls with zero-initialized, then filled, structs.
                unsafe {
                    let mut old: libc::sigaction = std::mem::zeroed();
                    let mut new: libc::sigaction = std::mem::zeroed();
                    new.sa_sigaction = handler as *const () as usize;
                    new.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
                    libc::sigemptyset(&mut new.sa_mask);
                    if libc::sigaction(libc::SIGBUS, &new, &mut old) != 0 {
                        return None;
                    }
                    Some(old)
                }
            })
            .is_some()
    }

    /// Maps `file` (of `len` bytes) and registers the map; `None` when it cannot be guarded
    /// (handler not installed, table full, or the file already shorter than `len`).
    pub(super) fn map(file: &File, len: usize) -> std::io::Result<Option<Mapped>> {
        if !install() {
            return Ok(None);
        }
        let Some(slot) = TABLE
            .iter()
            .position(|s| s.claimed.compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire).is_ok())
        else {
            return Ok(None);
        };
        // SAFETY: a read-only private map of a file we opened read-only. Another process may
        // change the file: appends do not touch the mapped range, and a shrink is handled by the
        // SIGBUS handler, which needs the map registered before any byte of it is read.
        let map = match unsafe { memmap2::MmapOptions::new().len(len).map(file) } {
            Ok(m) => m,
            Err(e) => {
                TABLE[slot].claimed.store(false, Ordering::Release);
                return Err(e);
            }
        };
        let s = &TABLE[slot];
        s.faulted.store(false, Ordering::Relaxed);
        s.len.store(map.len(), Ordering::Relaxed);
        s.start.store(map.as_ptr() as usize, Ordering::Release);
        let file = file.try_clone()?;
        Ok(Some(Mapped { map, file, slot }))
    }

    pub(super) fn unregister(slot: usize) {
        let s = &TABLE[slot];
        s.start.store(0, Ordering::Release);
        s.len.store(0, Ordering::Relaxed);
        s.claimed.store(false, Ordering::Release);
    }

    pub(super) fn faulted(slot: usize) -> bool {
        TABLE[slot].faulted.load(Ordering::Acquire)
    }

    #[cfg(target_os = "linux")]
    unsafe fn fault_addr(info: *mut libc::siginfo_t) -> usize {
        (*info).si_addr() as usize
    }

    #[cfg(target_os = "macos")]
    unsafe fn fault_addr(info: *mut libc::siginfo_t) -> usize {
        (*info).si_addr as usize
    }

    /// The SIGBUS handler. Only async-signal-safe operations: atomics, `mmap`, `sigaction`.
    extern "C" fn handler(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
        // SAFETY: the kernel passes a valid siginfo for SA_SIGINFO handlers.
        let addr = unsafe { fault_addr(info) };
        for s in TABLE.iter() {
            let start = s.start.load(Ordering::Acquire);
            let len = s.len.load(Ordering::Relaxed);
            if start == 0 || addr < start || addr >= start + len {
                continue;
            }
            let page = page_size();
            let from = addr & !(page - 1);
            let end = (start + len).div_ceil(page) * page;
            // SAFETY: [from, end) lies inside a live map of ours (registered, not yet unmapped:
            // it is only unmapped after unregistering, and a thread faulting on it holds a borrow
            // that keeps it alive). Replacing it with zero pages keeps every later read valid.
            let p = unsafe {
                libc::mmap(
                    from as *mut libc::c_void,
                    end - from,
                    libc::PROT_READ,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                    -1,
                    0,
                )
            };
            if p != libc::MAP_FAILED {
                s.faulted.store(true, Ordering::Release);
                return; // the faulting read is retried and sees zeros
            }
            break;
        }
        chain(sig, info, ctx);
    }

    /// Passes a SIGBUS that is not ours to the previous disposition.
    fn chain(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
        let prev = PREVIOUS.get().copied().flatten();
        // SAFETY: calling the previously installed handler the way the kernel would have, or
        // restoring the default action so that the re-executed access kills the process.
        unsafe {
            match prev {
                Some(p) if p.sa_sigaction != libc::SIG_DFL && p.sa_sigaction != libc::SIG_IGN => {
                    if p.sa_flags & libc::SA_SIGINFO != 0 {
                        let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                            std::mem::transmute(p.sa_sigaction);
                        f(sig, info, ctx);
                    } else {
                        let f: extern "C" fn(libc::c_int) = std::mem::transmute(p.sa_sigaction);
                        f(sig);
                    }
                }
                _ => {
                    let mut dfl: libc::sigaction = std::mem::zeroed();
                    dfl.sa_sigaction = libc::SIG_DFL;
                    libc::sigaction(libc::SIGBUS, &dfl, std::ptr::null_mut());
                }
            }
        }
    }
}
