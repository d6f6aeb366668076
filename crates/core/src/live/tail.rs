//! Following one growing file by byte offset: the complete lines appended since the last look,
//! a torn last line left for the next look, and a file that shrank or was replaced (another
//! inode) reported so that its session is folded again from zero.

use std::io::{Read as _, Seek as _, SeekFrom};
use std::path::PathBuf;

/// A followed file: where it is, which file it was (device, inode) and how far it was read.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Tail {
    pub path: PathBuf,
    dev: u64,
    ino: u64,
    /// Bytes folded: always the end of a complete line.
    pub offset: u64,
}

/// What a look at the file found.
#[derive(Debug, PartialEq, Eq)]
pub enum Appended {
    /// Nothing new, or only a torn line.
    Nothing,
    /// Complete lines (ending in `\n`), from the old offset.
    Lines(Vec<u8>),
    /// The file shrank or is another file: fold the session again from zero.
    Reset,
}

impl Tail {
    pub fn new(path: PathBuf) -> Tail {
        Tail { path, dev: 0, ino: 0, offset: 0 }
    }

    /// Starts over at byte 0.
    pub fn rewind(&mut self) {
        self.offset = 0;
        self.dev = 0;
        self.ino = 0;
    }

    /// Reads what was appended (regular files only, `journal::input`); at most `cap` bytes per
    /// look, so one huge append is folded over several looks.
    pub fn look(&mut self, cap: u64) -> std::io::Result<Appended> {
        let (mut f, meta) = crate::journal::input::open_regular(&self.path)?;
        let id = ids(&meta);
        if self.offset > 0 && (id != (self.dev, self.ino) || meta.len() < self.offset) {
            return Ok(Appended::Reset);
        }
        (self.dev, self.ino) = id;
        if meta.len() == self.offset {
            return Ok(Appended::Nothing);
        }
        f.seek(SeekFrom::Start(self.offset))?;
        let want = (meta.len() - self.offset).min(cap);
        let mut buf = Vec::with_capacity(want as usize);
        (&mut f).take(want).read_to_end(&mut buf)?;
        // A line longer than `cap`: read on to its end (or to the end of the file).
        let mut scanned = 0;
        while memchr::memchr(b'\n', &buf[scanned..]).is_none() && (buf.len() as u64) < meta.len() - self.offset {
            scanned = buf.len();
            (&mut f).take(cap.max(1)).read_to_end(&mut buf)?;
            if buf.len() == scanned {
                break;
            }
        }
        match memchr::memrchr(b'\n', &buf) {
            Some(i) => {
                buf.truncate(i + 1);
                self.offset += buf.len() as u64;
                Ok(Appended::Lines(buf))
            }
            None => Ok(Appended::Nothing),
        }
    }
}

#[cfg(unix)]
fn ids(m: &std::fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (m.dev(), m.ino())
}

#[cfg(not(unix))]
fn ids(_: &std::fs::Metadata) -> (u64, u64) {
    (0, 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write as _;

    #[test]
    fn torn_lines_wait_and_a_shrunk_file_resets() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("t.jsonl");
        std::fs::write(&p, "a\nb").unwrap();
        let mut t = Tail::new(p.clone());
        assert_eq!(t.look(1 << 20).unwrap(), Appended::Lines(b"a\n".to_vec()));
        assert_eq!(t.look(1 << 20).unwrap(), Appended::Nothing, "a torn line waits");
        std::fs::OpenOptions::new().append(true).open(&p).unwrap().write_all(b"c\n").unwrap();
        assert_eq!(t.look(1 << 20).unwrap(), Appended::Lines(b"bc\n".to_vec()));
        std::fs::write(&p, "x\n").unwrap();
        assert_eq!(t.look(1 << 20).unwrap(), Appended::Reset, "shrunk");
        let q = d.path().join("u.jsonl");
        std::fs::write(&q, "y\nzzzzzzzzz\n").unwrap();
        std::fs::rename(&q, &p).unwrap();
        let mut t2 = Tail::new(p.clone());
        assert!(matches!(t2.look(1 << 20).unwrap(), Appended::Lines(_)));
        std::fs::write(&q, "y\nzzzzzzzzz\nmore\n").unwrap();
        std::fs::rename(&q, &p).unwrap();
        assert_eq!(t2.look(1 << 20).unwrap(), Appended::Reset, "another inode");
    }

    #[test]
    fn regression_a_line_longer_than_a_look_was_never_read() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("t.jsonl");
        std::fs::write(&p, "0123456789\nab\nc").unwrap();
        let mut t = Tail::new(p.clone());
        assert_eq!(t.look(4).unwrap(), Appended::Lines(b"0123456789\n".to_vec()), "read to the line's end");
        assert_eq!(t.look(4).unwrap(), Appended::Lines(b"ab\n".to_vec()));
        assert_eq!(t.look(4).unwrap(), Appended::Nothing, "a torn line still waits");
    }
}
