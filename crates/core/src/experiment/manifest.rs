//! The experiment manifest (`docs/experiments.md`): a TOML file naming arms (a label and the
//! sessions of its runs, by path or glob, relative to the manifest), the reference arm, optional
//! outcomes per session, the model to price unlabelled turns with, a LiteLLM price table, and the
//! bootstrap's seed and resample count.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::ExperimentError;

/// The manifest as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// A title for the report.
    #[serde(default)]
    pub name: Option<String>,
    /// The label of the arm the others are compared with (default: the first arm).
    #[serde(default)]
    pub reference: Option<String>,
    /// Prices the turns whose model the session does not name.
    #[serde(default)]
    pub model: Option<String>,
    /// LiteLLM `model_prices_and_context_window.json`, relative to the manifest.
    #[serde(default)]
    pub prices: Option<PathBuf>,
    #[serde(default)]
    pub seed: Option<u64>,
    #[serde(default)]
    pub resamples: Option<usize>,
    #[serde(rename = "arm")]
    pub arms: Vec<ArmSpec>,
    /// Session path as written in an arm (or matched by its glob) → passed.
    #[serde(default)]
    pub outcomes: BTreeMap<String, bool>,
}

/// One `[[arm]]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArmSpec {
    pub label: String,
    /// Paths or globs (`*`, `?`, `[…]`, `**`), relative to the manifest.
    pub sessions: Vec<String>,
}

/// The most resamples a manifest may ask for (the intervals are computed in memory).
pub const MAX_RESAMPLES: usize = 1_000_000;

impl Manifest {
    /// Reads and checks the manifest at `path`.
    pub fn read(path: &Path) -> Result<Manifest, ExperimentError> {
        let file = path.display().to_string();
        let text = crate::journal::input::read_regular_text(path)
            .map_err(|source| ExperimentError::Read { path: file.clone(), source })?;
        Manifest::parse(&file, &text)
    }

    /// Parses and checks manifest text; `file` names it in errors.
    pub fn parse(file: &str, text: &str) -> Result<Manifest, ExperimentError> {
        let m: Manifest =
            toml::from_str(text).map_err(|e| ExperimentError::Toml { file: file.into(), msg: e.message().into() })?;
        let bad = |msg: String| Err(ExperimentError::Manifest { file: file.into(), msg });
        if m.arms.is_empty() {
            return bad("no `[[arm]]`: name at least one arm with a `label` and its `sessions`".into());
        }
        for (i, a) in m.arms.iter().enumerate() {
            if a.label.trim().is_empty() {
                return bad(format!("arm {} has an empty `label`", i + 1));
            }
            if m.arms[..i].iter().any(|b| b.label == a.label) {
                return bad(format!("two arms are labelled {:?}", a.label));
            }
            if a.sessions.is_empty() {
                return bad(format!("arm {:?} lists no `sessions`", a.label));
            }
        }
        if let Some(r) = &m.reference {
            if !m.arms.iter().any(|a| &a.label == r) {
                return bad(format!("`reference = {r:?}` is not the label of an arm"));
            }
        }
        if m.resamples.is_some_and(|r| r > MAX_RESAMPLES) {
            return bad(format!("`resamples` is at most {MAX_RESAMPLES}"));
        }
        Ok(m)
    }

    /// The reference arm's label.
    pub fn reference(&self) -> &str {
        self.reference.as_deref().unwrap_or(&self.arms[0].label)
    }
}

/// One session of an arm: as the manifest names it (relative, `/`-separated) and on disk.
#[derive(Debug, Clone)]
pub struct SessionRef {
    pub name: String,
    pub path: PathBuf,
}

/// Device, inode (Unix) and canonical path (elsewhere) of a session's journal file.
pub type Identity = (u64, u64, PathBuf);

/// What identifies a session on disk: the file (device and inode on Unix, else the canonical
/// path) of its journal — a session directory and its `journal.jsonl`, `a/x` and `./a/../a/x`, or
/// a symlink and its target, are one session.
pub fn identity(path: &Path) -> Option<Identity> {
    let file = if path.is_dir() && path.join("journal.jsonl").is_file() {
        path.join("journal.jsonl")
    } else {
        path.to_path_buf()
    };
    file_identity(&file.canonicalize().ok()?)
}

#[cfg(unix)]
fn file_identity(canon: &Path) -> Option<Identity> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(canon).ok()?;
    Some((m.dev(), m.ino(), PathBuf::new()))
}

#[cfg(not(unix))]
fn file_identity(canon: &Path) -> Option<Identity> {
    Some((0, 0, canon.to_path_buf()))
}

/// The sessions of `arm`: each entry taken as a path when it names one, else as a glob (matches
/// sorted by name); an entry that matches nothing is an error. A session matched twice (by two
/// entries, or under two names of one file: see [`identity`]) counts once, and `notes` says so.
pub fn resolve(base: &Path, arm: &ArmSpec, notes: &mut Vec<String>) -> Result<Vec<SessionRef>, ExperimentError> {
    let mut out: Vec<SessionRef> = Vec::new();
    let mut seen: Vec<(Option<Identity>, usize)> = Vec::new();
    for entry in &arm.sessions {
        let direct = base.join(entry);
        let found: Vec<PathBuf> = if direct.exists() {
            vec![direct]
        } else {
            glob_walk(&direct).map_err(|msg| ExperimentError::Glob {
                label: arm.label.clone(),
                pattern: entry.clone(),
                msg,
            })?
        };
        if found.is_empty() {
            return Err(ExperimentError::NoMatch { label: arm.label.clone(), pattern: entry.clone() });
        }
        for path in found {
            let name = path.strip_prefix(base).unwrap_or(&path).to_string_lossy().replace('\\', "/");
            let id = identity(&path);
            let earlier = seen.iter().find(|(i, k)| match (i, &id) {
                (Some(a), Some(b)) => a == b,
                _ => out[*k].path == path,
            });
            match earlier {
                Some(&(_, k)) => notes.push(format!(
                    "arm {:?}: {:?} is the session {:?} again; counted once",
                    arm.label, name, out[k].name
                )),
                None => {
                    seen.push((id, out.len()));
                    out.push(SessionRef { name, path });
                }
            }
        }
    }
    Ok(out)
}

/// The most entries one glob of a manifest may visit: a pattern such as `/**/x.jsonl` is an
/// error, not a walk of the whole disk.
pub const MAX_WALK: usize = 200_000;

/// The paths matching the glob `full` (`*`, `?`, `[…]`, `**`; sorted), found by a walk from its
/// literal leading folder that is symlink-safe (issue 31): links are followed, but a folder
/// already visited — by (device, inode) — is not entered again, so `latest -> .` or two links to
/// one folder cannot make the walk endless or repeat its sessions; at most [`MAX_WALK`] entries.
/// Names are matched as lossy UTF-8, so a file whose name is not UTF-8 is still found.
fn glob_walk(full: &Path) -> Result<Vec<PathBuf>, String> {
    let mut root = PathBuf::new();
    let mut rest: Vec<String> = Vec::new();
    for c in full.components() {
        let text = c.as_os_str().to_string_lossy();
        if rest.is_empty() && !text.contains(['*', '?', '[']) {
            root.push(c);
        } else {
            rest.push(text.into_owned());
        }
    }
    if rest.is_empty() {
        return Ok(Vec::new());
    }
    let pattern = glob::Pattern::new(&rest.join("/")).map_err(|e| e.msg.to_string())?;
    let opts = glob::MatchOptions {
        case_sensitive: true,
        require_literal_separator: true,
        require_literal_leading_dot: false,
    };
    let depth = if rest.iter().any(|r| r.contains("**")) { usize::MAX } else { rest.len() };
    let key = |p: &Path| p.canonicalize().ok().and_then(|c| file_identity(&c));
    let mut visited: std::collections::HashSet<Identity> = key(&root).into_iter().collect();
    let mut out = Vec::new();
    let mut walk =
        walkdir::WalkDir::new(&root).follow_links(true).min_depth(1).max_depth(depth).sort_by_file_name().into_iter();
    let mut seen = 0usize;
    while let Some(e) = walk.next() {
        // A loop walkdir finds, or an entry that vanished: skipped.
        let Ok(e) = e else { continue };
        seen += 1;
        if seen > MAX_WALK {
            return Err(format!("visits more than {MAX_WALK} entries: name a narrower folder"));
        }
        let rel = e.path().strip_prefix(&root).unwrap_or(e.path()).to_string_lossy().replace('\\', "/");
        if pattern.matches_with(&rel, opts) {
            // Matched under two names, a session counts once ([`resolve`] dedupes by identity).
            out.push(e.path().to_path_buf());
        }
        // A folder seen before (through a link) is not entered again.
        if e.file_type().is_dir() && !key(e.path()).is_none_or(|k| visited.insert(k)) {
            walk.skip_current_dir();
        }
    }
    out.sort();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manifest_parses_and_names_its_reference() {
        let m = Manifest::parse(
            "e.toml",
            "reference = \"b\"\n[[arm]]\nlabel = \"a\"\nsessions = [\"a/*\"]\n[[arm]]\nlabel = \"b\"\nsessions = [\"b\"]\n\
             [outcomes]\n\"b\" = true\n",
        )
        .unwrap();
        assert_eq!(m.reference(), "b");
        assert_eq!(m.outcomes.get("b"), Some(&true));
    }

    #[test]
    fn bad_manifests_say_what_is_wrong() {
        let err = |t: &str| Manifest::parse("e.toml", t).unwrap_err().to_string();
        assert!(err("").contains("arm"), "{}", err(""));
        assert!(err("[[arm]]\nlabel = \"a\"\nsessions = []\n").contains("lists no `sessions`"));
        assert!(err("reference = \"x\"\n[[arm]]\nlabel = \"a\"\nsessions = [\"s\"]\n").contains("not the label"));
        assert!(err("[[arm]]\nlabel = \"a\"\nsessions = [\"s\"]\n[[arm]]\nlabel = \"a\"\nsessions = [\"t\"]\n")
            .contains("two arms"));
        assert!(err("colour = 1\n[[arm]]\nlabel = \"a\"\nsessions = [\"s\"]\n").contains("e.toml"));
    }
}
