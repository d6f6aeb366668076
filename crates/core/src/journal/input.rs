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
//! checks it is inside the session directory, and opens the canonical path one component at a
//! time from a descriptor of the session directory with `O_NOFOLLOW` (Unix): a component swapped
//! for a symlink after the check makes the open fail, never read an outside file. (The earlier
//! fallback compared device and inode of a check and an open made *by name*: both could follow the
//! swapped link, so it did not close the race.) On systems that are not Unix the checked path is
//! opened by name, with no protection against the race.

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

/// The fallback: the path is canonicalised (symlinks inside the session directory are followed
/// here, once) and checked to lie inside `base`; then the canonical path is opened one component
/// at a time from a descriptor of `base` with `O_NOFOLLOW` (Unix), so a component swapped for a
/// symlink after the check makes the open fail instead of leading out. Elsewhere the checked
/// path is opened by name (no race protection; documented in docs/reliability.md).
fn beneath_fallback(base: &Path, rel: &Path) -> io::Result<(File, Metadata)> {
    let real = base.join(rel).canonicalize()?;
    let Ok(inside) = real.strip_prefix(base) else {
        return Err(io::Error::new(io::ErrorKind::PermissionDenied, "resolves outside the session directory"));
    };
    #[cfg(unix)]
    {
        walk_nofollow(base, inside)
    }
    #[cfg(not(unix))]
    {
        let _ = inside;
        open_regular(&real)
    }
}

/// Opens `rel` (symlink-free, relative) below `base` component by component, following no link.
#[cfg(unix)]
fn walk_nofollow(base: &Path, rel: &Path) -> io::Result<(File, Metadata)> {
    use rustix::fs::{openat, statat, AtFlags, FileType, Mode, OFlags, CWD};
    use rustix::io::Errno;
    let swapped = |e: Errno| match e {
        Errno::LOOP | Errno::NOTDIR | Errno::MLINK => io::Error::new(
            io::ErrorKind::PermissionDenied,
            "a symbolic link appeared in the path while it was opened: refused",
        ),
        e => e.into(),
    };
    let names: Vec<&std::ffi::OsStr> = rel
        .components()
        .filter_map(|c| match c {
            std::path::Component::Normal(n) => Some(n),
            _ => None,
        })
        .collect();
    let Some((last, parents)) = names.split_last() else {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "the session directory itself: refused"));
    };
    let dir_flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let mut dir = openat(CWD, base, dir_flags, Mode::empty())?;
    for name in parents {
        dir = openat(&dir, *name, dir_flags | OFlags::NOFOLLOW, Mode::empty()).map_err(swapped)?;
    }
    // The type first, without following a link and without opening (a FIFO is never opened).
    let st = statat(&dir, *last, AtFlags::SYMLINK_NOFOLLOW)?;
    match FileType::from_raw_mode(st.st_mode) {
        FileType::RegularFile => {}
        FileType::Symlink => return Err(swapped(Errno::LOOP)),
        _ => {
            let kind = match FileType::from_raw_mode(st.st_mode) {
                FileType::Directory => "a directory",
                FileType::Fifo => "a FIFO",
                FileType::CharacterDevice => "a character device",
                FileType::BlockDevice => "a block device",
                FileType::Socket => "a socket",
                _ => "not a regular file",
            };
            let msg = format!("{kind}, not a regular file: refused before reading");
            return Err(io::Error::new(io::ErrorKind::InvalidInput, msg));
        }
    }
    let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let file = File::from(openat(&dir, *last, flags, Mode::empty()).map_err(swapped)?);
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(refused(&meta));
    }
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

    /// The race of issue 21, live and in process: a thread swaps `c2.out/` with a symlink to an
    /// outside folder (`renameat2(RENAME_EXCHANGE)`) while both openers (openat2 and the
    /// O_NOFOLLOW fallback) open `c2.out/stdout` over and over. Each must only ever read the
    /// inside file or refuse; the loop runs until it has seen both outcomes (the race was live).
    #[cfg(target_os = "linux")]
    #[test]
    fn a_directory_swapped_for_a_link_while_opening_never_reads_outside() {
        use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
        use std::sync::Arc;
        let d = tempfile::tempdir().unwrap();
        let base = d.path().join("s");
        std::fs::create_dir_all(base.join("c2.out")).unwrap();
        std::fs::create_dir(d.path().join("outside")).unwrap();
        std::fs::write(base.join("c2.out/stdout"), "inside").unwrap();
        std::fs::write(d.path().join("outside/stdout"), "SECRET").unwrap();
        std::os::unix::fs::symlink("../outside", base.join("swap")).unwrap();
        let base = base.canonicalize().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let swaps = Arc::new(AtomicU64::new(0));
        let swapper = {
            let (a, b, stop, swaps) = (base.join("c2.out"), base.join("swap"), stop.clone(), swaps.clone());
            std::thread::spawn(move || {
                use rustix::fs::{renameat_with, RenameFlags, CWD};
                while !stop.load(Ordering::Relaxed) {
                    renameat_with(CWD, &a, CWD, &b, RenameFlags::EXCHANGE).unwrap();
                    swaps.fetch_add(1, Ordering::Relaxed);
                }
            })
        };
        type Opener = fn(&Path, &Path) -> io::Result<(File, Metadata)>;
        let openers: [(&str, Opener); 2] = [("openat2", open_beneath), ("fallback", beneath_fallback)];
        for (name, open) in openers {
            let (mut inside, mut refused, mut tries) = (0u32, 0u32, 0u32);
            while tries < 2_000 || (inside == 0 || refused == 0) && tries < 2_000_000 {
                tries += 1;
                match open(&base, Path::new("c2.out/stdout")) {
                    Ok((f, m)) => {
                        let c = read_capped(f, &m, READ_CAP).unwrap();
                        assert_eq!(c.bytes, b"inside", "{name}: read outside the session after {tries} tries");
                        inside += 1;
                    }
                    Err(_) => refused += 1,
                }
            }
            assert!(inside > 0 && refused > 0, "{name}: the race was not live ({inside} reads, {refused} refusals)");
        }
        stop.store(true, Ordering::Relaxed);
        swapper.join().unwrap();
        assert!(swaps.load(Ordering::Relaxed) > 0);
    }
}
