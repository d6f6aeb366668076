//! `--summarizer CMD`: a compaction replay asks a command for its summaries instead of writing the
//! deterministic template (issue 17).
//!
//! ctxj runs `sh -c CMD` with the summarizer request as JSON on stdin —
//! `{"instruction": …, "blocks": [<canonical blocks>], "template": <the deterministic summary>}` —
//! and takes its stdout (UTF-8, trailing whitespace trimmed, not empty) as the summary. The
//! command must exit 0 within the timeout and write at most [`MAX_OUTPUT`] bytes. Answers are
//! cached by the SHA-256 of the command and its input in `<cache>/summaries/` (`<cache>`:
//! `$CTXJ_CACHE_DIR`, else the user's cache folder + `ctxj`), never in a session folder, so a
//! replay is repeatable and the second run calls nothing.
//!
//! A replay cannot stop half-way, so a failure is remembered (the first one), the pass uses the
//! template, and the command reports it ([`Summarizer::take_error`]) before printing anything.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::projection::block::sha256_hex;
use crate::projection::Block;

/// The largest summary accepted, in bytes.
pub const MAX_OUTPUT: usize = 1 << 20;

/// How long a summary may take by default.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

/// Why the summarizer command gave no summary.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum SummarizerError {
    #[error("summarizer `{cmd}` could not be started: {why}")]
    Spawn { cmd: String, why: String },
    #[error("summarizer `{cmd}` exited with {status}{stderr}")]
    Exit { cmd: String, status: String, stderr: String },
    #[error("summarizer `{cmd}` did not answer within {secs} s (killed)")]
    Timeout { cmd: String, secs: u64 },
    #[error("summarizer `{cmd}` wrote more than {limit} bytes")]
    TooLarge { cmd: String, limit: usize },
    #[error("summarizer `{cmd}` wrote no summary (empty or not UTF-8 output)")]
    Empty { cmd: String },
}

/// A summarizer command, with its cache folder and the first failure of a replay.
#[derive(Debug)]
pub struct Summarizer {
    pub cmd: String,
    pub timeout: Duration,
    /// `None`: no cache (no cache folder could be found).
    pub cache: Option<PathBuf>,
    error: Mutex<Option<SummarizerError>>,
    /// Commands run (cache misses), for tests and the report.
    runs: Mutex<usize>,
}

impl PartialEq for Summarizer {
    fn eq(&self, other: &Self) -> bool {
        self.cmd == other.cmd && self.timeout == other.timeout && self.cache == other.cache
    }
}

impl Eq for Summarizer {}

/// `$CTXJ_CACHE_DIR`, else the user's cache folder + `ctxj`; its `summaries/` subfolder.
pub fn cache_dir() -> Option<PathBuf> {
    let base = std::env::var_os("CTXJ_CACHE_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| dirs::cache_dir().map(|d| d.join("ctxj")))?;
    Some(base.join("summaries"))
}

impl Summarizer {
    pub fn new(cmd: &str, timeout: Duration) -> Summarizer {
        Summarizer { cmd: cmd.to_string(), timeout, cache: cache_dir(), error: Mutex::new(None), runs: Mutex::new(0) }
    }

    /// The summary of `blocks` (the summarized blocks, system block first when there is one);
    /// on failure the `template`, with the failure remembered.
    pub fn summarize(&self, instruction: &str, blocks: &[Block], template: &str) -> String {
        let canon: Vec<serde_json::Value> =
            blocks.iter().filter_map(|b| serde_json::from_slice(&b.canonical()).ok()).collect();
        let input = serde_json::json!({"instruction": instruction, "blocks": canon, "template": template});
        let input = input.to_string().into_bytes();
        let key = sha256_hex(&[self.cmd.as_bytes(), b"\0", &input].concat());
        let file = self.cache.as_ref().map(|d| d.join(format!("{key}.txt")));
        if let Some(hit) = file.as_ref().and_then(|f| crate::journal::input::read_regular_text(f).ok()) {
            return hit;
        }
        match self.run(&input) {
            Ok(s) => {
                if let (Some(f), Some(d)) = (&file, &self.cache) {
                    // A cache that cannot be written only costs the next run a call.
                    if std::fs::create_dir_all(d).is_ok() {
                        let _ = crate::journal::session::write_guarded(f, s.as_bytes(), &[]);
                    }
                }
                s
            }
            Err(e) => {
                let mut slot = self.error.lock().unwrap_or_else(|p| p.into_inner());
                slot.get_or_insert(e);
                template.to_string()
            }
        }
    }

    /// The first failure of the replays so far, if any (and forgets it).
    pub fn take_error(&self) -> Option<SummarizerError> {
        self.error.lock().unwrap_or_else(|p| p.into_inner()).take()
    }

    /// How many times the command ran (cache misses).
    pub fn runs(&self) -> usize {
        *self.runs.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs the command once on `input`.
    pub fn run(&self, input: &[u8]) -> Result<String, SummarizerError> {
        *self.runs.lock().unwrap_or_else(|p| p.into_inner()) += 1;
        let cmd = || self.cmd.clone();
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(&self.cmd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| SummarizerError::Spawn { cmd: cmd(), why: e.to_string() })?;
        let mut stdin = child.stdin.take();
        let data = input.to_vec();
        // Writing and reading in threads: a command that answers before reading all its input
        // (or never reads it) cannot deadlock the replay.
        let writer = std::thread::spawn(move || {
            if let Some(s) = stdin.as_mut() {
                let _ = s.write_all(&data);
            }
        });
        let read = |r: Option<Box<dyn Read + Send>>, cap: usize| {
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                if let Some(r) = r {
                    let _ = r.take(cap as u64 + 1).read_to_end(&mut buf);
                }
                buf
            })
        };
        let out = read(child.stdout.take().map(|s| Box::new(s) as Box<dyn Read + Send>), MAX_OUTPUT);
        let err = read(child.stderr.take().map(|s| Box::new(s) as Box<dyn Read + Send>), 4096);
        let start = Instant::now();
        let status = loop {
            match child.try_wait() {
                Ok(Some(s)) => break s,
                Ok(None) if start.elapsed() >= self.timeout => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(SummarizerError::Timeout { cmd: cmd(), secs: self.timeout.as_secs() });
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(10)),
                Err(e) => return Err(SummarizerError::Spawn { cmd: cmd(), why: e.to_string() }),
            }
        };
        let _ = writer.join();
        let out = out.join().unwrap_or_default();
        let err = err.join().unwrap_or_default();
        if !status.success() {
            let e = String::from_utf8_lossy(&err);
            let e = e.trim();
            let stderr = if e.is_empty() { String::new() } else { format!(": {}", crate::text::escape_line(e)) };
            return Err(SummarizerError::Exit { cmd: cmd(), status: status.to_string(), stderr });
        }
        if out.len() > MAX_OUTPUT {
            return Err(SummarizerError::TooLarge { cmd: cmd(), limit: MAX_OUTPUT });
        }
        match String::from_utf8(out) {
            Ok(s) if !s.trim().is_empty() => Ok(s.trim_end().to_string()),
            _ => Err(SummarizerError::Empty { cmd: cmd() }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_cache(cmd: &str, dir: &std::path::Path, secs: u64) -> Summarizer {
        Summarizer {
            cmd: cmd.into(),
            timeout: Duration::from_secs(secs),
            cache: Some(dir.to_path_buf()),
            error: Mutex::new(None),
            runs: Mutex::new(0),
        }
    }

    #[test]
    fn a_command_answers_and_is_cached() {
        let d = tempfile::tempdir().unwrap();
        let s = with_cache("wc -c | tr -d ' '; echo ' bytes of JSON'", d.path(), 20);
        let blocks = [Block::User { id: "u".into(), text: "hello".into() }];
        let a = s.summarize("Summarize.", &blocks, "template");
        assert!(a.ends_with("bytes of JSON"), "{a}");
        assert_eq!(s.summarize("Summarize.", &blocks, "template"), a);
        assert_eq!(s.runs(), 1, "the second call is a cache hit");
        assert!(s.take_error().is_none());
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1);
    }

    #[test]
    fn failures_fall_back_to_the_template_and_are_reported() {
        let d = tempfile::tempdir().unwrap();
        type Want = fn(&SummarizerError) -> bool;
        let cases: [(&str, u64, Want); 4] = [
            (
                "echo oops >&2; exit 3",
                20,
                |e| matches!(e, SummarizerError::Exit { stderr, .. } if stderr.contains("oops")),
            ),
            ("sleep 5", 1, |e| matches!(e, SummarizerError::Timeout { secs: 1, .. })),
            ("true", 20, |e| matches!(e, SummarizerError::Empty { .. })),
            ("head -c 1048577 /dev/zero | tr '\\0' x", 20, |e| matches!(e, SummarizerError::TooLarge { .. })),
        ];
        for (cmd, secs, want) in cases {
            let s = with_cache(cmd, d.path(), secs);
            assert_eq!(s.summarize("i", &[], "template"), "template", "{cmd}");
            let e = s.take_error().unwrap_or_else(|| panic!("{cmd}: no error"));
            assert!(want(&e), "{cmd}: {e}");
        }
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0, "failures are not cached");
    }
}
