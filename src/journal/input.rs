//! Opening input files safely: only regular files are read (a device, FIFO, socket or directory
//! is refused *before* any byte is read — `ctxj show /dev/zero` once read until memory ran out,
//! and opening a FIFO blocks until a writer comes), and reads of spill and attachment files are
//! capped ([`READ_CAP`]) and confined to the session directory by file descriptor.
//!
//! **Confinement by descriptor.** On Linux a confined file is opened with `openat2(2)` and
//! `RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS` relative to a descriptor of the session directory:
//! the kernel resolves every component (symlinks included) and refuses any step outside, so a
//! directory swapped for a symlink between a check and the open cannot lead out. Elsewhere (and
//! on Linux kernels before 5.6, where `openat2` is `ENOSYS`), the fallback canonicalises the path,
//! checks it is inside the session directory, opens it, and checks that the opened file is the
//! one that was checked (same device and inode): a swap can then only make the read fail, never
//! read an outside file.

use std::fs::{File, Metadata};
use std::io::{self, Read};
use std::path::Path;

/// How many bytes of a spill or attachment file are read: 1 MiB. The rest is counted, not read.
pub const READ_CAP: u64 = 1 << 20;

/// The kind of a non-regular file, for messages.
pub fn kind_of(meta: &Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    "not a regular file"
}

fn refused(meta: &Metadata) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("{}, not a regular file: refused before reading", kind_of(meta)),
    )
}

/// Opens `path` for reading when it is a regular file (symlinks followed). The type is checked
/// before the open (a FIFO is never opened) and again on the open descriptor.
pub fn open_regular(path: &Path) -> io::Result<(File, Metadata)> {
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(refused(&meta));
    }
    let mut o = std::fs::OpenOptions::new();
    o.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // Never blocks on a FIFO swapped in after the check; no effect on regular files.
        o.custom_flags(libc::O_NONBLOCK);
    }
    let file = o.open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(refused(&meta));
    }
    Ok((file, meta))
}

/// Reads a whole regular file.
pub fn read_regular(path: &Path) -> io::Result<Vec<u8>> {
    let (file, meta) = open_regular(path)?;
    read_all(file, &meta)
}

/// Reads a whole regular file as UTF-8 text.
pub fn read_regular_text(path: &Path) -> io::Result<String> {
    String::from_utf8(read_regular(path)?).map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "not UTF-8 text"))
}

pub(crate) fn read_all(mut file: File, meta: &Metadata) -> io::Result<Vec<u8>> {
    let mut buf = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0).min(1 << 30));
    file.read_to_end(&mut buf)?;
    Ok(buf)
}

/// The first `cap` bytes of a file and its total length.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capped {
    pub bytes: Vec<u8>,
    /// The file's length when opened.
    pub total: u64,
}

impl Capped {
    /// Bytes of the file that were not read.
    pub fn more(&self) -> u64 {
        self.total.saturating_sub(self.bytes.len() as u64)
    }
}

/// Reads at most `cap` bytes of an open regular file (a 1 GB sparse spill reads 1 MiB).
pub fn read_capped(file: File, meta: &Metadata, cap: u64) -> io::Result<Capped> {
    let mut bytes = Vec::with_capacity(meta.len().min(cap) as usize);
    file.take(cap).read_to_end(&mut bytes)?;
    let total = meta.len().max(bytes.len() as u64);
    Ok(Capped { bytes, total })
}

/// Opens `rel` beneath the directory `base` (already canonical) so that no step of the
/// resolution leaves it; see the module doc. `rel` has been checked lexically (relative, no `..`).
pub fn open_beneath(base: &Path, rel: &Path) -> io::Result<(File, Metadata)> {
    #[cfg(target_os = "linux")]
    {
        match beneath_linux(base, rel) {
            Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => {}
            r => return r,
        }
    }
    beneath_fallback(base, rel)
}

#[cfg(target_os = "linux")]
fn beneath_linux(base: &Path, rel: &Path) -> io::Result<(File, Metadata)> {
    use rustix::fs::{openat2, Mode, OFlags, ResolveFlags, CWD};
    let dir =
        openat2(CWD, base, OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty(), ResolveFlags::empty())?;
    // O_PATH first: the type is checked on a descriptor that cannot block or read.
    let flags = ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS;
    let probe = File::from(openat2(&dir, rel, OFlags::PATH | OFlags::CLOEXEC, Mode::empty(), flags)?);
    let meta = probe.metadata()?;
    if !meta.is_file() {
        return Err(refused(&meta));
    }
    let fd = openat2(&dir, rel, OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC, Mode::empty(), flags)?;
    let file = File::from(fd);
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(refused(&meta));
    }
    Ok((file, meta))
}

fn beneath_fallback(base: &Path, rel: &Path) -> io::Result<(File, Metadata)> {
    let real = base.join(rel).canonicalize()?;
    if !real.starts_with(base) {
        return Err(io::Error::new(io::ErrorKind::PermissionDenied, "resolves outside the session directory"));
    }
    let checked = std::fs::metadata(&real)?;
    let (file, meta) = open_regular(&real)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if (checked.dev(), checked.ino()) != (meta.dev(), meta.ino()) {
            return Err(io::Error::new(io::ErrorKind::PermissionDenied, "changed while it was opened"));
        }
    }
    let _ = checked;
    Ok((file, meta))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn devices_fifos_and_directories_are_refused_before_reading() {
        let e = open_regular(Path::new("/dev/zero")).unwrap_err();
        assert!(e.to_string().contains("a character device"), "{e}");
        let d = tempfile::tempdir().unwrap();
        let e = open_regular(d.path()).unwrap_err();
        assert!(e.to_string().contains("a directory"), "{e}");
        let fifo = d.path().join("f");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        let e = read_regular(&fifo).unwrap_err();
        assert!(e.to_string().contains("a FIFO"), "{e}");
    }

    #[test]
    fn a_sparse_gigabyte_is_read_only_up_to_the_cap() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("big");
        File::create(&p).unwrap().set_len(1 << 30).unwrap();
        let (f, m) = open_regular(&p).unwrap();
        let c = read_capped(f, &m, READ_CAP).unwrap();
        assert_eq!(c.bytes.len() as u64, READ_CAP);
        assert_eq!(c.more(), (1 << 30) - READ_CAP);
    }

    #[cfg(unix)]
    #[test]
    fn open_beneath_refuses_a_symlinked_directory_leading_out() {
        let d = tempfile::tempdir().unwrap();
        let base = d.path().join("s");
        std::fs::create_dir_all(base.join("in")).unwrap();
        std::fs::write(d.path().join("secret"), "outside").unwrap();
        std::fs::write(base.join("in/ok"), "inside").unwrap();
        std::os::unix::fs::symlink("..", base.join("c2.out")).unwrap();
        let base = base.canonicalize().unwrap();
        assert!(open_beneath(&base, Path::new("in/ok")).is_ok());
        assert!(open_beneath(&base, Path::new("c2.out/secret")).is_err());
        assert!(beneath_fallback(&base, Path::new("c2.out/secret")).is_err());
    }
}
