//! Read-only access to a journal's bytes: a memory map for large regular files, a plain read
//! for small ones (procfs files included). Devices, FIFOs, sockets and directories are refused
//! before reading (`journal::input`).
//!
//! The map itself — the only `unsafe` code of ctxj — is the `ctxj-mmap` crate (`crates/mmap`);
//! this module decides when to map and reads small files instead. What follows is that crate's
//! policy, kept here for the reader of the journal path.
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
//! * [`Source::shrank`] tells the reader the bytes are not the file's: `Session::load` then reads
//!   the file again with a plain `read` (no map) and warns that the journal shrank while it was
//!   being read. The result is exactly what a plain read of the file as it now is gives.
//!
//! A file that shrinks and grows back between two page faults cannot be noticed through the
//! signal; [`Source::shrank`] also compares the file's length with the mapped length, which
//! catches a shrink that did not fault. Handling is compiled on Linux and macOS; elsewhere on
//! Unix nothing is mapped (plain reads only). `CTXJ_NO_MMAP=1` turns mapping off everywhere.

use std::io::Read;
use std::path::Path;

pub use ctxj_mmap::Mapped;

/// Files smaller than this are read into memory; mapping them costs more than it saves.
pub const MMAP_MIN: u64 = 1 << 20;

/// The bytes of a journal file.
pub enum Source {
    Mapped(Mapped),
    Owned(Vec<u8>),
}

impl Source {
    /// Opens `path` read-only.
    pub fn open(path: &Path) -> std::io::Result<Self> {
        // Only regular files: a device or FIFO is refused before any byte is read.
        let (mut file, meta) = super::input::open_regular(path)?;
        let no_mmap = std::env::var_os("CTXJ_NO_MMAP").is_some_and(|v| v == "1");
        if meta.is_file() && meta.len() >= MMAP_MIN && !no_mmap && usize::try_from(meta.len()).is_ok() {
            if let Some(m) = Mapped::map(&file, meta.len() as usize)? {
                return Ok(Source::Mapped(m));
            }
        }
        let mut buf = Vec::with_capacity(meta.len() as usize);
        file.read_to_end(&mut buf)?;
        Ok(Source::Owned(buf))
    }

    /// Reads `path` into memory without mapping it.
    pub fn read(path: &Path) -> std::io::Result<Self> {
        Ok(Source::Owned(super::input::read_regular(path)?))
    }

    /// Tells the kernel that `start..end` will not be read again ([`Mapped::release`]). A no-op
    /// for owned bytes.
    pub fn release(&self, start: usize, end: usize) {
        if let Source::Mapped(m) = self {
            m.release(start, end);
        }
    }

    pub fn bytes(&self) -> &[u8] {
        match self {
            Source::Mapped(m) => m.bytes(),
            Source::Owned(v) => v,
        }
    }

    /// Whether the file shrank while it was mapped: the bytes read may then hold zeros where the
    /// file's end was cut off, and must be read again.
    pub fn shrank(&self) -> bool {
        match self {
            Source::Owned(_) => false,
            Source::Mapped(m) => m.shrank(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_files_are_read_large_ones_mapped() {
        let d = tempfile::tempdir().unwrap();
        let small = d.path().join("s");
        std::fs::write(&small, b"abc\n").unwrap();
        let s = Source::open(&small).unwrap();
        assert!(matches!(s, Source::Owned(_)));
        assert_eq!(s.bytes(), b"abc\n");
        assert!(!s.shrank());
        let big = d.path().join("b");
        std::fs::write(&big, vec![b'x'; MMAP_MIN as usize + 10]).unwrap();
        let b = Source::open(&big).unwrap();
        #[cfg(any(target_os = "linux", target_os = "macos"))]
        assert!(matches!(b, Source::Mapped(_)));
        assert_eq!(b.bytes().len(), MMAP_MIN as usize + 10);
        assert!(!b.shrank());
    }

    #[test]
    fn growing_while_mapped_is_not_a_shrink() {
        use std::io::Write;
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("j");
        std::fs::write(&p, vec![b'x'; 2 << 20]).unwrap();
        let s = Source::open(&p).unwrap();
        std::fs::OpenOptions::new().append(true).open(&p).unwrap().write_all(b"more\n").unwrap();
        assert!(s.bytes().iter().all(|&b| b == b'x'));
        assert!(!s.shrank());
    }

    /// Regression test for the SIGBUS crash: before the handler, reading a map after the file
    /// was truncated killed the process (this test binary included).
    #[test]
    fn truncated_while_mapped_reads_zeros_and_reports_the_shrink() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("j");
        let len = 3 << 20;
        std::fs::write(&p, vec![b'x'; len]).unwrap();
        for _ in 0..3 {
            let s = Source::open(&p).unwrap();
            std::fs::OpenOptions::new().write(true).open(&p).unwrap().set_len(4096).unwrap();
            let bytes = s.bytes();
            assert_eq!(bytes.len(), len);
            assert!(bytes[..4096].iter().all(|&b| b == b'x'));
            let zeros = bytes[4096..].iter().filter(|&&b| b == 0).count();
            assert_eq!(zeros, len - 4096, "the cut-off part reads as zeros");
            assert!(s.shrank());
            drop(s);
            std::fs::write(&p, vec![b'x'; len]).unwrap();
        }
    }
}
