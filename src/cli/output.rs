//! Where a command's output goes: a buffered stdout that a closed pipe silences without
//! changing the exit code, the one escaped error message, and the one mapping of an error to its
//! exit code ([`ErrorKind`]).

use std::io::{self, Write};

/// Buffered stdout. A closed pipe (`ctxj diff … | head -2`) stops the output quietly: the rest
/// is discarded and the command still returns its own exit code (1 for differences or findings),
/// instead of the broken pipe turning every result into 0. Other write errors propagate.
pub fn stdout() -> io::BufWriter<PipeSafe<io::StdoutLock<'static>>> {
    io::BufWriter::with_capacity(1 << 16, PipeSafe { inner: io::stdout().lock(), closed: false })
}

/// A writer that turns a broken pipe into "everything written" and discards what follows.
pub struct PipeSafe<W> {
    inner: W,
    closed: bool,
}

impl<W: Write> Write for PipeSafe<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.closed {
            return Ok(buf.len());
        }
        match self.inner.write(buf) {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(buf.len())
            }
            Err(e) => Err(io::Error::new(e.kind(), OutputFailed(e))),
            r => r,
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.closed {
            return Ok(());
        }
        match self.inner.flush() {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(())
            }
            Err(e) => Err(io::Error::new(e.kind(), OutputFailed(e))),
            r => r,
        }
    }
}

/// stdout could not be written (a full disk, a closed terminal; not a closed pipe): the command's
/// own failure, not its input's ([`ErrorKind::Internal`]).
#[derive(Debug, thiserror::Error)]
#[error("writing the output: {0}")]
pub struct OutputFailed(io::Error);

/// Marks an error as an internal failure, not one of the arguments or the input:
/// `.context(Internal("creating a temporary file"))` ([`ErrorKind::Internal`], exit 3).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Internal(pub &'static str);

/// What went wrong, by who can act on it (as jj's `CommandErrorKind`): the one place an error
/// becomes an exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// stdout closed by its reader (`| head`) and noticed by a writer other than [`stdout`]:
    /// quiet, exit 0.
    BrokenPipe,
    /// ctxj or its environment failed, not the arguments or the input: output that could not be
    /// written ([`OutputFailed`]), an error marked [`Internal`]. Exit 3.
    Internal,
    /// The arguments or the input: exit 2, with a message saying what to change.
    Usage,
}

impl ErrorKind {
    /// The kind of `e`, from the errors of its chain.
    pub fn of(e: &anyhow::Error) -> ErrorKind {
        let io_errors = || e.chain().filter_map(|c| c.downcast_ref::<io::Error>());
        if io_errors().any(|io| io.kind() == io::ErrorKind::BrokenPipe) {
            return ErrorKind::BrokenPipe;
        }
        // A document serialized to stdout fails only on writing (ctxj reads no JSON through
        // `serde_json::from_reader`), and serde_json hides the `io::Error` from the chain.
        let serialized_output = e.chain().any(|c| c.downcast_ref::<serde_json::Error>().is_some_and(|j| j.is_io()));
        if e.downcast_ref::<Internal>().is_some()
            || io_errors().any(|io| io.get_ref().is_some_and(|r| r.is::<OutputFailed>()))
            || serialized_output
        {
            return ErrorKind::Internal;
        }
        ErrorKind::Usage
    }

    /// The exit code of this kind.
    pub fn exit_code(self) -> u8 {
        match self {
            ErrorKind::BrokenPipe => super::EXIT_OK,
            ErrorKind::Internal => super::EXIT_INTERNAL,
            ErrorKind::Usage => super::EXIT_USAGE,
        }
    }
}

/// Prints an error chain as one message, control characters escaped.
pub fn print_error(e: &anyhow::Error) {
    let mut err = io::stderr().lock();
    let _ = writeln!(err, "error: {}", ctxj_core::text::escape_block(&format!("{e:#}")));
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Closed;
    impl Write for Closed {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::ErrorKind::BrokenPipe.into())
        }
        fn flush(&mut self) -> io::Result<()> {
            Err(io::ErrorKind::BrokenPipe.into())
        }
    }

    struct Full;
    impl Write for Full {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::Error::from_raw_os_error(28))
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// Bug: a failure to write stdout (a full disk) exited 2, "usage or input error".
    #[test]
    fn regression_an_output_failure_exited_as_a_usage_error() {
        let mut w = io::BufWriter::new(PipeSafe { inner: Full, closed: false });
        w.write_all(b"x").unwrap();
        let e = anyhow::Error::new(w.flush().unwrap_err());
        assert_eq!(ErrorKind::of(&e), ErrorKind::Internal);
        assert_eq!(ErrorKind::of(&e).exit_code(), 3);
        let mut w = io::BufWriter::with_capacity(1, PipeSafe { inner: Full, closed: false });
        let e = anyhow::Error::new(serde_json::to_writer(&mut w, &["a long enough document"]).unwrap_err());
        assert_eq!(ErrorKind::of(&e), ErrorKind::Internal, "through serde_json");
        let e = anyhow::Error::new(io::Error::from(io::ErrorKind::NotFound)).context("reading x");
        assert_eq!(ErrorKind::of(&e), ErrorKind::Usage, "an input that cannot be read");
        let e = anyhow::Error::new(io::Error::from(io::ErrorKind::NotFound)).context(Internal("a temporary file"));
        assert_eq!(ErrorKind::of(&e.context("report")), ErrorKind::Internal, "marked, under more context");
        let e = anyhow::Error::new(io::Error::from(io::ErrorKind::BrokenPipe));
        assert_eq!(ErrorKind::of(&e).exit_code(), 0);
    }

    #[test]
    fn a_broken_pipe_is_swallowed_so_the_exit_code_survives() {
        let mut w = io::BufWriter::new(PipeSafe { inner: Closed, closed: false });
        w.write_all(&[b'x'; 100_000]).unwrap();
        w.flush().unwrap();
        assert!(w.get_ref().closed);
    }
}
