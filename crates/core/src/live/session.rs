//! One live session: its files (the transcript, and for Claude Code its subagents' files),
//! followed by offset ([`super::tail`]), their lines folded by the agent's [`super::Fold`], and
//! the compactions seen. The whole state saves to bytes and resumes from them, so a short-lived
//! `ctxj statusline` reads only what was appended since its previous run; before it is saved,
//! what no later line can change is settled into sums ([`super::tally`]), so the state stays as
//! small however long the session grows.

use std::path::{Path, PathBuf};

use super::compact::{self, Observed};
use super::reported::{self, Reported};
use super::tail::{Appended, Tail};
use super::tally::{Tally, View, KEEP};
use super::Fold;
use crate::import::Format;
use crate::usage::entry::{Agent, Read, SessionKey};

/// Bytes read per look at a file (a larger append is folded over several looks; a line longer
/// than this is read whole). Small enough that a cold `statusline` run, which settles after each
/// look ([`LiveSession::poll_settling`]), holds little of a long transcript at once.
const CAP: u64 = 4 << 20;
/// The saved state's layout version (2: the settled calls kept as a [`Tally`]; 3: pi's folded
/// calls keep the recorded `totalTokens`).
const VERSION: u32 = 3;
/// Compactions with a recorded size, and reported miss causes, kept after a settle.
const KEEP_NOTES: usize = 16;

/// Why a session cannot be followed.
#[derive(Debug, thiserror::Error)]
pub enum LiveError {
    #[error("{path}: {err}")]
    Io { path: String, err: std::io::Error },
    #[error("{path}: not a transcript of an agent ctxj reads usage from")]
    Unknown { path: String },
}

/// A followed session.
pub struct LiveSession {
    agent: Format,
    main: PathBuf,
    tails: Vec<Tail>,
    fold: Box<dyn Fold>,
    observed: Vec<Observed>,
    /// Cache-miss causes the session's own file reported (`message.diagnostics`).
    reported: Vec<Reported>,
    /// The calls settled out of the fold.
    tally: Tally,
    resets: usize,
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Saved {
    version: u32,
    agent: String,
    main: PathBuf,
    tails: Vec<Tail>,
    fold: serde_json::Value,
    observed: Vec<Observed>,
    reported: Vec<Reported>,
    tally: Tally,
}

fn agent_named(name: &str) -> Option<Format> {
    [Format::ClaudeCode, Format::Codex, Format::Pi].into_iter().find(|f| f.name() == name)
}

impl LiveSession {
    /// Starts following `main` (its format detected when `agent` is `None`); nothing read yet.
    pub fn open(main: &Path, agent: Option<Format>) -> Result<LiveSession, LiveError> {
        let unknown = || LiveError::Unknown { path: main.display().to_string() };
        if let Err(err) = crate::journal::input::open_regular(main) {
            return Err(LiveError::Io { path: main.display().to_string(), err });
        }
        let agent = agent.or_else(|| crate::import::detect_file(main)).ok_or_else(unknown)?;
        let mut fold = super::fold_for(agent, None).ok_or_else(unknown)?;
        fold.add_file(0);
        Ok(LiveSession {
            agent,
            main: main.to_path_buf(),
            tails: vec![Tail::new(main.to_path_buf())],
            fold,
            observed: Vec::new(),
            reported: Vec::new(),
            tally: Tally::default(),
            resets: 0,
        })
    }

    /// Resumes from [`LiveSession::save`]d bytes when they follow `main`; `None` otherwise (an
    /// unreadable or older state is read again from zero by the caller).
    pub fn resume(bytes: &[u8], main: &Path) -> Option<LiveSession> {
        let s: Saved = serde_json::from_slice(bytes).ok()?;
        if s.version != VERSION || s.main != main {
            return None;
        }
        let agent = agent_named(&s.agent)?;
        Some(LiveSession {
            agent,
            main: s.main,
            tails: s.tails,
            fold: super::fold_for(agent, Some(s.fold))?,
            observed: s.observed,
            reported: s.reported,
            tally: s.tally,
            resets: 0,
        })
    }

    /// The state as bytes (JSON).
    pub fn save(&self) -> Vec<u8> {
        let s = Saved {
            version: VERSION,
            agent: self.agent.name().to_string(),
            main: self.main.clone(),
            tails: self.tails.clone(),
            fold: self.fold.save(),
            observed: self.observed.clone(),
            reported: self.reported.clone(),
            tally: self.tally.clone(),
        };
        serde_json::to_vec(&s).unwrap_or_default()
    }

    pub fn agent(&self) -> Format {
        self.agent
    }
    pub fn main(&self) -> &Path {
        &self.main
    }
    /// The followed files, in the order `usage` reads them.
    pub fn files(&self) -> Vec<PathBuf> {
        self.tails.iter().map(|t| t.path.clone()).collect()
    }
    /// The folders whose changes concern the session: the transcript's own (its appends, and a
    /// new session beside it), and for Claude Code the session's folder and its `subagents`
    /// folder when they exist (a subagent file appearing or growing).
    pub fn folders(&self) -> Vec<PathBuf> {
        let parent = self.main.parent().map(|p| if p.as_os_str().is_empty() { Path::new(".") } else { p });
        let mut out: Vec<PathBuf> = parent.map(Path::to_path_buf).into_iter().collect();
        if self.agent == Format::ClaudeCode {
            let own = self.main.with_extension("");
            let sub = own.join("subagents");
            out.extend([own, sub].into_iter().filter(|d| d.is_dir()));
        }
        out
    }
    /// Compactions with a recorded size, in order.
    pub fn observed(&self) -> &[Observed] {
        &self.observed
    }
    /// Cache-miss causes the session's own file reported, in order ([`super::reported`]).
    pub fn reported(&self) -> &[Reported] {
        &self.reported
    }
    /// Times a file shrank or was replaced and the session was folded again from zero.
    pub fn resets(&self) -> usize {
        self.resets
    }

    fn main_index(&self) -> usize {
        self.tails.iter().position(|t| t.path == self.main).unwrap_or(0)
    }

    /// Claude Code subagent files that appeared (`<session>/subagents/*.jsonl`), placed in the
    /// order `usage` sorts files.
    fn discover(&mut self) {
        if self.agent != Format::ClaudeCode {
            return;
        }
        let dir = self.main.with_extension("").join("subagents");
        let Ok(rd) = std::fs::read_dir(&dir) else { return };
        let mut found: Vec<PathBuf> = rd
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "jsonl") && p.is_file())
            .collect();
        found.sort();
        for p in found {
            if let Err(at) = self.tails.binary_search_by(|t| t.path.cmp(&p)) {
                self.tails.insert(at, Tail::new(p));
                self.fold.add_file(at);
            }
        }
    }

    /// Folds every complete line appended since the last look; the number of bytes folded. A
    /// file that shrank or was replaced folds the whole session again from zero.
    pub fn poll(&mut self) -> Result<u64, LiveError> {
        self.poll_with(false)
    }

    /// [`LiveSession::poll`], settling ([`LiveSession::settle`]) after each look that folded
    /// lines: a session read from zero (a cold `statusline` run) then holds one look's lines and
    /// the fold's last calls, not every call of the transcript, and ends with the same figures.
    pub fn poll_settling(&mut self) -> Result<u64, LiveError> {
        self.poll_with(true)
    }

    fn poll_with(&mut self, settling: bool) -> Result<u64, LiveError> {
        self.discover();
        let mut folded = 0;
        let mut i = 0;
        while i < self.tails.len() {
            let main = i == self.main_index();
            let looked = self.tails[i].look(CAP);
            match looked {
                Ok(Appended::Lines(lines)) => {
                    folded += lines.len() as u64;
                    self.fold.feed(i, &lines);
                    if main && self.agent == Format::ClaudeCode {
                        self.note_compactions(&lines);
                        self.reported.extend(reported::scan(&lines));
                    }
                    drop(lines);
                    if settling {
                        self.settle();
                    }
                    continue; // look again: more than CAP may have been appended
                }
                Ok(Appended::Nothing) => {}
                Ok(Appended::Reset) => {
                    self.restart();
                    i = 0;
                    continue;
                }
                Err(err) if i == self.main_index() => {
                    return Err(LiveError::Io { path: self.tails[i].path.display().to_string(), err })
                }
                Err(_) => {} // a subagent file that went away: what it held stays counted
            }
            i += 1;
        }
        Ok(folded)
    }

    /// Forgets everything read and starts every file at byte 0.
    fn restart(&mut self) {
        self.resets += 1;
        for t in &mut self.tails {
            t.rewind();
        }
        self.fold = super::fold_for(self.agent, None).expect("a followed agent has a fold");
        for at in 0..self.tails.len() {
            self.fold.add_file(at);
        }
        self.observed.clear();
        self.reported.clear();
        self.tally = Tally::default();
    }

    /// Settles what no later line can change into the [`Tally`] (the fold keeps the last
    /// [`KEEP`] calls and compactions of each file; the newest [`KEEP_NOTES`] compactions seen
    /// and reported causes are kept): done before the state is saved.
    pub fn settle(&mut self) {
        self.settle_keeping(KEEP);
    }

    /// [`LiveSession::settle`], the fold keeping `keep` calls of each file (tests settle more).
    pub(crate) fn settle_keeping(&mut self, keep: usize) {
        let files = self.files();
        let settled = self.fold.settle(keep.max(1), &files);
        let later = self.fold.read(&files);
        self.tally.add(&settled, self.main_index(), &later.compactions, &later.entries, &self.session_key());
        let drop = self.observed.len().saturating_sub(KEEP_NOTES);
        self.observed.drain(..drop);
        let drop = self.reported.len().saturating_sub(KEEP_NOTES);
        self.reported.drain(..drop);
    }

    /// The session's key for its settled calls (the figures do not read it).
    fn session_key(&self) -> std::sync::Arc<SessionKey> {
        let (project, session) = match self.agent {
            Format::ClaudeCode => crate::usage::claude::session_of(&self.main),
            _ => (String::new(), self.main.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()),
        };
        let agent = match self.agent {
            Format::Codex => Agent::Codex,
            Format::Pi => Agent::Pi,
            _ => Agent::ClaudeCode,
        };
        std::sync::Arc::new(SessionKey { agent, project, session })
    }

    fn note_compactions(&mut self, lines: &[u8]) {
        let mut seen = compact::scan(lines);
        if seen.is_empty() {
            return;
        }
        let view = self.view();
        for c in &mut seen {
            c.model = view.own.iter().rev().filter(|e| e.ts <= c.ts).find_map(|e| e.model.clone());
        }
        self.observed.extend(seen);
    }

    /// What the batch `usage` read of the session's files gives now, of the calls not yet
    /// settled (all of them until [`LiveSession::settle`]).
    pub fn read(&self) -> Read {
        self.fold.read(&self.files())
    }

    /// The whole session as the figures see it: the settled calls' sums joined to [`Self::read`].
    pub fn view(&self) -> View {
        self.tally.view(self.read(), self.main_index(), &self.session_key())
    }

    /// The last call's cache writes (one-hour part, all), when the agent records them.
    pub fn last_writes(&self) -> Option<(u64, u64)> {
        self.fold.last_writes(self.main_index())
    }

    /// Whether the session writes one-hour cache entries: the last call's writes were all
    /// one-hour ones (then its cache lives an hour, and a rewrite costs the one-hour rate).
    pub fn writes_one_hour(&self) -> bool {
        self.last_writes().is_some_and(|(h, all)| all > 0 && h >= all)
    }

    /// The index of the session's own file among [`LiveSession::files`].
    pub fn main_file(&self) -> usize {
        self.main_index()
    }
}
