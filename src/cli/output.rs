//! Where a command's output goes: a buffered stdout that a closed pipe silences without
//! changing the exit code, and the one escaped error message.

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
            r => r,
        }
    }
}

/// A broken pipe that reached `main` anyway (a writer other than [`stdout`]): quiet, exit 0.
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.downcast_ref::<io::Error>().is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe))
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

    #[test]
    fn a_broken_pipe_is_swallowed_so_the_exit_code_survives() {
        let mut w = io::BufWriter::new(PipeSafe { inner: Closed, closed: false });
        w.write_all(&[b'x'; 100_000]).unwrap();
        w.flush().unwrap();
        assert!(w.get_ref().closed);
    }
}
