//! Read-only access to a journal's bytes: a memory map for large regular files, a plain read
//! for small or special files (pipes, `/dev/stdin`, procfs).
//!
//! This is the only module of ctxj with `unsafe` code.
//!
//! **The SIGBUS hazard.** A mapped file that another process truncates while ctxj reads it makes
//! the kernel raise SIGBUS on the next access past the new end. Journals are append-only, so a
//! well-behaved harness only grows them (growth is harmless: the map keeps its original length and
//! ctxj sees a consistent prefix). ctxj avoids the hazard instead of handling the signal: it maps
//! a file only when it is a regular file of at least [`MMAP_MIN`] bytes, and it re-checks the
//! length right after mapping; a shrink detected then falls back to a plain read. A truncation
//! racing with the read itself remains possible in principle; `CTXJ_NO_MMAP=1` turns mapping off
//! for users who read journals that other tools rewrite in place.

use std::fs::File;
use std::io::Read;
use std::path::Path;

/// Files smaller than this are read into memory; mapping them costs more than it saves.
pub const MMAP_MIN: u64 = 1 << 20;

/// The bytes of a journal file.
pub enum Source {
    Mapped(memmap2::Mmap),
    Owned(Vec<u8>),
}

impl Source {
    /// Opens `path` read-only.
    pub fn open(path: &Path) -> std::io::Result<Self> {
        let mut file = File::open(path)?;
        let meta = file.metadata()?;
        let no_mmap = std::env::var_os("CTXJ_NO_MMAP").is_some_and(|v| v == "1");
        if meta.is_file() && meta.len() >= MMAP_MIN && !no_mmap {
            // SAFETY: the map is read-only and private to this process. The file may be changed
            // by another process; appends do not affect the mapped range, and a shrink would
            // fault on access. We re-check the length after mapping and fall back to a plain read
            // when it shrank (see the module documentation for the remaining race).
            #[allow(unsafe_code)]
            let map = unsafe { memmap2::MmapOptions::new().len(meta.len() as usize).map(&file)? };
            if file.metadata()?.len() >= meta.len() {
                return Ok(Source::Mapped(map));
            }
            drop(map);
        }
        let mut buf = Vec::with_capacity(meta.len() as usize);
        file.read_to_end(&mut buf)?;
        Ok(Source::Owned(buf))
    }

    /// Tells the kernel that `start..end` will not be read again, so that its pages leave this
    /// process's resident set (they stay in the page cache). A no-op for owned bytes. Reading the
    /// range later is still correct: the pages fault in again from the file.
    pub fn release(&self, start: usize, end: usize) {
        if let Source::Mapped(m) = self {
            let end = end.min(m.len());
            if end > start {
                // SAFETY: MADV_DONTNEED on a private, read-only file mapping that this process
                // never writes only drops page-table entries; the next access re-reads the same
                // file bytes (the append-only caveat of the module documentation applies as for
                // any access). No Rust reference observes a change. Failure is harmless.
                #[allow(unsafe_code)]
                let _ = unsafe { m.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, start, end - start) };
            }
        }
    }

    pub fn bytes(&self) -> &[u8] {
        match self {
            Source::Mapped(m) => m,
            Source::Owned(v) => v,
        }
    }
}
