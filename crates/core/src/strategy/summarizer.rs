//! `--summarizer CMD`: a compaction replay asks a command for its summaries instead of writing the
//! deterministic template (issue 17).
//!
//! ctxj runs `sh -c CMD` with the summarizer request as JSON on stdin —
//! `{"instruction": …, "blocks": [<canonical blocks>], "template": <the deterministic summary>}` —
//! and takes its stdout (UTF-8, trailing whitespace trimmed, not empty) as the summary. The
//! command must exit 0 within the timeout and write at most [`MAX_OUTPUT`] bytes; secret-looking
//! strings in its answer become `[REDACTED]` (the rule of `audit`'s `compact-secret`, seed 002).
//! It runs in a process group of its own, killed whole at the timeout. Answers are
//! cached by the SHA-256 of the command and its input in `<cache>/summaries/` (`<cache>`:
//! `$CTXJ_CACHE_DIR`, else the user's cache folder + `ctxj`), so a replay is repeatable and the
//! second run calls nothing. The cache goes through `journal::cache_dir` (issue 31): never in a
//! session folder, `0600` files in a `0700` folder, no symlinks followed, reads capped, each entry
//! sealed with its length and SHA-256 (an empty, truncated or edited entry is a miss); the binary
//! hands no folder under `--no-cache` / `CTXJ_NO_CACHE`.
//!
//! A replay cannot stop half-way, so a failure is remembered (the first one), the pass uses the
//! template, and the command reports it ([`Summarizer::take_error`]) before printing anything.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::journal::cache_dir::{self, CacheDir};
use crate::process::Group;
use crate::projection::block::sha256_hex;
use crate::projection::Block;

use super::summary;

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
    /// `None`: no cache (`--no-cache`, or no cache folder could be found).
    pub cache: Option<CacheDir>,
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

/// The kind of a sealed summary entry ([`cache_dir::seal`]).
const ENTRY_KIND: &str = "summary/1";

/// The `summaries/` subfolder of the cache folder `base` (refused inside a session).
pub fn cache_in(base: &std::path::Path) -> Result<CacheDir, crate::journal::SessionError> {
    CacheDir::new(base, "summaries")
}

/// The cached summary `name` in `dir`: a regular file (no link) of at most [`MAX_OUTPUT`] bytes
/// plus its header, [`cache_dir::seal`]ed as a summary, whose content is non-blank UTF-8; `None`
/// (a cache miss) otherwise. The one reader of the summary cache (fuzzed: `summary_cache`).
pub fn read_cached(dir: &CacheDir, name: &str) -> Option<String> {
    let bytes = dir.read(name, MAX_OUTPUT as u64 + 256)?;
    let body = cache_dir::unseal(ENTRY_KIND, &bytes)?;
    std::str::from_utf8(body).ok().filter(|s| !s.trim().is_empty()).map(str::to_string)
}

/// `summary` framed as a summary cache entry (what [`read_cached`] reads back).
pub fn seal_entry(summary: &str) -> Vec<u8> {
    cache_dir::seal(ENTRY_KIND, summary.as_bytes())
}

impl Summarizer {
    /// A summarizer running `cmd`, its answers cached in `cache` (`None`: not cached).
    pub fn new(cmd: &str, timeout: Duration, cache: Option<CacheDir>) -> Summarizer {
        Summarizer { cmd: cmd.to_string(), timeout, cache, error: Mutex::new(None), runs: Mutex::new(0) }
    }

    /// The summary of `blocks` (the summarized blocks, system block first when there is one);
    /// on failure the `template`, with the failure remembered.
    pub fn summarize(&self, instruction: &str, blocks: &[Block], template: &str) -> String {
        let canon: Vec<serde_json::Value> =
            blocks.iter().filter_map(|b| serde_json::from_slice(&b.canonical()).ok()).collect();
        let input = serde_json::json!({"instruction": instruction, "blocks": canon, "template": template});
        let input = input.to_string().into_bytes();
        let key = sha256_hex(&[self.cmd.as_bytes(), b"\0", &input].concat());
        let name = format!("{key}.txt");
        if let Some(hit) = self.cached(&name) {
            // an answer cached before redaction existed is redacted on the way out too
            return summary::redact(&hit);
        }
        match self.run(&input) {
            Ok(s) => {
                if let Some(d) = &self.cache {
                    // A cache that cannot be written only costs the next run a call.
                    let _ = d.write(&name, &seal_entry(&s));
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

    /// The cached answer `name` ([`read_cached`]).
    fn cached(&self, name: &str) -> Option<String> {
        read_cached(self.cache.as_ref()?, name)
    }

    /// The first failure of the replays so far, if any (and forgets it).
    pub fn take_error(&self) -> Option<SummarizerError> {
        self.error.lock().unwrap_or_else(|p| p.into_inner()).take()
    }

    /// How many times the command ran (cache misses).
    pub fn runs(&self) -> usize {
        *self.runs.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs the command once on `input`, in a process group of its own: at the timeout the whole
    /// group is killed (a wrapper script's children with it), stdout and stderr are drained
    /// concurrently and kept up to their bounds, and the size limit is judged before the exit
    /// status (a pipeline cut short by the limit is "too large", not "exit status 141").
    pub fn run(&self, input: &[u8]) -> Result<String, SummarizerError> {
        *self.runs.lock().unwrap_or_else(|p| p.into_inner()) += 1;
        let cmd = || self.cmd.clone();
        let timeout = || SummarizerError::Timeout { cmd: cmd(), secs: self.timeout.as_secs() };
        let mut command = Command::new("sh");
        command.arg("-c").arg(&self.cmd).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        crate::process::own_group(&mut command);
        let mut child = command.spawn().map_err(|e| SummarizerError::Spawn { cmd: cmd(), why: e.to_string() })?;
        let group = Group(child.id());
        let mut stdin = child.stdin.take();
        let data = input.to_vec();
        // Writing and reading in threads: a command that answers before reading all its input
        // (or never reads it) cannot deadlock the replay.
        let writer = std::thread::spawn(move || {
            if let Some(s) = stdin.as_mut() {
                let _ = s.write_all(&data);
            }
        });
        let (tx, rx) = std::sync::mpsc::channel::<(bool, Vec<u8>, bool)>();
        let drain = |r: Option<Box<dyn Read + Send>>, cap: usize, is_out: bool| {
            let tx = tx.clone();
            std::thread::spawn(move || {
                let (buf, over) = r.map_or((Vec::new(), false), |r| drain_bounded(r, cap));
                let _ = tx.send((is_out, buf, over));
            })
        };
        drain(child.stdout.take().map(|s| Box::new(s) as Box<dyn Read + Send>), MAX_OUTPUT, true);
        drain(child.stderr.take().map(|s| Box::new(s) as Box<dyn Read + Send>), 4096, false);
        drop(tx);
        let deadline = Instant::now() + self.timeout;
        let status = loop {
            match child.try_wait() {
                Ok(Some(s)) => break s,
                Ok(None) if Instant::now() >= deadline => {
                    group.kill();
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(timeout());
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(10)),
                Err(e) => {
                    group.kill();
                    return Err(SummarizerError::Spawn { cmd: cmd(), why: e.to_string() });
                }
            }
        };
        // The pipes close when every process holding them is gone: a background child of the
        // command still writing is waited for until the same deadline, then its group killed.
        let (mut out, mut err, mut too_large) = (Vec::new(), Vec::new(), false);
        for _ in 0..2 {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok((true, buf, over)) => (out, too_large) = (buf, over),
                Ok((false, buf, _)) => err = buf,
                Err(_) => {
                    group.kill();
                    return Err(timeout());
                }
            }
        }
        let _ = writer.join();
        if too_large {
            return Err(SummarizerError::TooLarge { cmd: cmd(), limit: MAX_OUTPUT });
        }
        if !status.success() {
            let e = String::from_utf8_lossy(&err);
            let e = e.trim();
            let stderr = if e.is_empty() { String::new() } else { format!(": {}", crate::text::escape_line(e)) };
            return Err(SummarizerError::Exit { cmd: cmd(), status: status.to_string(), stderr });
        }
        match String::from_utf8(out) {
            Ok(s) if !s.trim().is_empty() => Ok(summary::redact(s.trim_end())),
            _ => Err(SummarizerError::Empty { cmd: cmd() }),
        }
    }
}

/// Reads `r` to its end, keeping the first `cap` bytes: whether more came. Reading on past the
/// bound keeps the writer from blocking on a full pipe (or dying of SIGPIPE) while memory stays
/// bounded.
fn drain_bounded(mut r: impl Read, cap: usize) -> (Vec<u8>, bool) {
    let mut buf = Vec::new();
    let mut over = false;
    let mut chunk = [0u8; 8192];
    loop {
        match r.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => {
                let room = cap - buf.len();
                buf.extend_from_slice(&chunk[..n.min(room)]);
                over |= n > room;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    (buf, over)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_cache(cmd: &str, dir: &std::path::Path, secs: u64) -> Summarizer {
        Summarizer {
            cmd: cmd.into(),
            timeout: Duration::from_secs(secs),
            cache: Some(cache_in(dir).unwrap()),
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
        assert_eq!(std::fs::read_dir(d.path().join("summaries")).unwrap().count(), 1);
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

    /// Issue 30: a > 1 MiB answer through a pipeline reported "exit status 141" (the reader
    /// stopped, `tr` died of SIGPIPE, the status was judged first) instead of the size limit.
    #[test]
    fn regression_oversized_pipeline_is_too_large_not_sigpipe() {
        let d = tempfile::tempdir().unwrap();
        let s = with_cache("head -c 3000000 /dev/zero | tr '\\0' x; exit 0", d.path(), 20);
        let e = s.run(b"{}").unwrap_err();
        assert!(matches!(e, SummarizerError::TooLarge { .. }), "{e}");
        let s = with_cache("head -c 3000000 /dev/zero | tr '\\0' x; exit 3", d.path(), 20);
        let e = s.run(b"{}").unwrap_err();
        assert!(matches!(e, SummarizerError::TooLarge { .. }), "size before exit status: {e}");
    }

    /// Issue 30: the timeout killed `sh` but not its process group, so a wrapper's child kept
    /// running (here it would create a file two seconds after the timeout).
    #[cfg(unix)]
    #[test]
    fn regression_timeout_kills_the_process_group() {
        let d = tempfile::tempdir().unwrap();
        let flag = d.path().join("still-running");
        let cmd = format!("(sleep 3; touch '{}') & sleep 5; wait", flag.display());
        let s = with_cache(&cmd, d.path(), 1);
        let started = Instant::now();
        assert!(matches!(s.run(b"{}"), Err(SummarizerError::Timeout { secs: 1, .. })));
        assert!(started.elapsed() < Duration::from_secs(3), "returned at the timeout");
        std::thread::sleep(Duration::from_millis(3500));
        assert!(!flag.exists(), "the wrapper's child survived the timeout");
    }

    /// Issue 30: a background child holding stdout open after the shell exits cannot hang the
    /// replay past the timeout.
    #[cfg(unix)]
    #[test]
    fn regression_background_child_holding_the_pipe_times_out() {
        let d = tempfile::tempdir().unwrap();
        let s = with_cache("echo summary; sleep 30 &", d.path(), 1);
        let started = Instant::now();
        assert!(matches!(s.run(b"{}"), Err(SummarizerError::Timeout { .. })));
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    /// Issue 30: secrets in a plugged-in summarizer's answer reached the replayed summary; they
    /// are redacted with `compact-secret`'s pattern, on a fresh answer and on a cached one.
    #[test]
    fn regression_summarizer_secrets_are_redacted() {
        let d = tempfile::tempdir().unwrap();
        let s = with_cache("echo 'key sk-abcdefghijklmnopqrstuvwx and AKIAABCDEFGHIJKLMNOP'", d.path(), 20);
        let got = s.summarize("i", &[], "template");
        assert_eq!(got, "key [REDACTED] and [REDACTED]");
        assert!(!summary::has_secret(&got));
        assert_eq!(s.summarize("i", &[], "template"), got, "cached");
        assert_eq!(s.runs(), 1);
    }

    /// The one entry a summarizer wrote, and the summarizer.
    fn one_entry(d: &std::path::Path) -> (Summarizer, std::path::PathBuf) {
        let s = with_cache("echo from-the-command", d, 20);
        assert_eq!(s.summarize("i", &[], "template"), "from-the-command");
        let e = std::fs::read_dir(d.join("summaries")).unwrap().next().unwrap().unwrap().path();
        (s, e)
    }

    /// Issue 31: with `CTXJ_CACHE_DIR` inside a session the summaries were written into it (the
    /// token memo refused the same folder).
    #[test]
    fn regression_summary_cache_inside_a_session_is_refused() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("journal.jsonl"), b"").unwrap();
        assert!(cache_in(d.path()).is_err());
        assert!(cache_in(&d.path().join("cache")).is_err());
    }

    /// Issue 31: entries were created 0644 in a 0755 folder, readable by other users.
    #[cfg(unix)]
    #[test]
    fn regression_summary_cache_files_are_private() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let (_, e) = one_entry(d.path());
        let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&e), 0o600);
        assert_eq!(mode(&d.path().join("summaries")), 0o700);
    }

    /// Issue 31: an entry replaced by a symlink printed the link's target as the summary.
    #[cfg(unix)]
    #[test]
    fn regression_summary_cache_entry_replaced_by_a_symlink_is_ignored() {
        let d = tempfile::tempdir().unwrap();
        let (s, e) = one_entry(d.path());
        let secret = d.path().join("secret");
        std::fs::write(&secret, cache_dir::seal(ENTRY_KIND, b"the target's content")).unwrap();
        std::fs::remove_file(&e).unwrap();
        std::os::unix::fs::symlink(&secret, &e).unwrap();
        assert_eq!(s.summarize("i", &[], "template"), "from-the-command");
        assert_eq!(s.runs(), 2, "a miss: the command ran again");
    }

    /// Issue 31: an empty or truncated entry was trusted as the summary.
    #[test]
    fn regression_summary_cache_empty_or_truncated_entry_is_not_trusted() {
        let d = tempfile::tempdir().unwrap();
        let (s, e) = one_entry(d.path());
        let whole = std::fs::read(&e).unwrap();
        for damaged in [Vec::new(), whole[..whole.len() - 3].to_vec(), b"forged summary".to_vec()] {
            std::fs::write(&e, &damaged).unwrap();
            assert_eq!(s.summarize("i", &[], "template"), "from-the-command");
        }
        assert_eq!(s.runs(), 4, "each damaged entry was a miss");
    }

    /// Issue 31: a 1 GiB sparse entry was read whole (124 s, 15.8 GB); it is refused by its size.
    #[test]
    fn regression_summary_cache_huge_entry_is_not_read() {
        let d = tempfile::tempdir().unwrap();
        let (s, e) = one_entry(d.path());
        std::fs::OpenOptions::new().write(true).open(&e).unwrap().set_len(1 << 30).unwrap();
        let started = Instant::now();
        assert_eq!(s.summarize("i", &[], "template"), "from-the-command");
        assert!(started.elapsed() < Duration::from_secs(10));
        assert_eq!(s.runs(), 2);
    }

    /// Issue 31: `--no-cache` did not turn the summary cache off; without a folder nothing is kept.
    #[test]
    fn regression_summary_cache_off_without_a_folder() {
        let s = Summarizer::new("echo fresh", Duration::from_secs(20), None);
        assert_eq!(s.summarize("i", &[], "template"), "fresh");
        assert_eq!(s.summarize("i", &[], "template"), "fresh");
        assert_eq!(s.runs(), 2);
    }
}
