//! Where the logs are: each agent's default folders (with their environment overrides), and the
//! transcripts of each agent under a list of paths.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::import::scan::find_sessions;
use crate::import::{detect_file, Format, FromFormat};

/// One folder to read and the agent whose logs it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    pub agent: Format,
    pub path: PathBuf,
}

/// Every default log folder, existing or not, in the order they are read:
/// * Claude Code: each `<dir>/projects` of `$CLAUDE_CONFIG_DIR` (comma-separated, as ccusage
///   reads it), else `~/.config/claude/projects` and `~/.claude/projects`;
/// * Codex: `$CODEX_HOME/sessions`, else `~/.codex/sessions`;
/// * pi: `$PI_AGENT_DIR` (the sessions folder, as ccusage reads it), else
///   `$PI_CODING_AGENT_DIR/sessions` (pi's own override of `~/.pi/agent`), else
///   `~/.pi/agent/sessions`.
pub fn default_roots(env: &dyn Fn(&str) -> Option<String>, home: Option<&Path>) -> Vec<Root> {
    let set = |k: &str| env(k).filter(|v| !v.trim().is_empty());
    let in_home = |rel: &str| home.map(|h| h.join(rel));
    let mut out = Vec::new();
    let claude: Vec<PathBuf> = match set("CLAUDE_CONFIG_DIR") {
        Some(dirs) => {
            dirs.split(',').map(str::trim).filter(|d| !d.is_empty()).map(|d| Path::new(d).join("projects")).collect()
        }
        None => [in_home(".config/claude/projects"), in_home(".claude/projects")].into_iter().flatten().collect(),
    };
    out.extend(claude.into_iter().map(|path| Root { agent: Format::ClaudeCode, path }));
    let codex = set("CODEX_HOME").map(|h| Path::new(&h).join("sessions")).or_else(|| in_home(".codex/sessions"));
    out.extend(codex.map(|path| Root { agent: Format::Codex, path }));
    let pi = set("PI_AGENT_DIR")
        .map(PathBuf::from)
        .or_else(|| set("PI_CODING_AGENT_DIR").map(|d| Path::new(&d).join("sessions")))
        .or_else(|| in_home(".pi/agent/sessions"));
    out.extend(pi.map(|path| Root { agent: Format::Pi, path }));
    out
}

/// The default folders of this process's environment that exist, narrowed to `agent`.
pub fn existing_default_roots(agent: Option<Format>) -> Vec<Root> {
    let env = |k: &str| std::env::var(k).ok();
    let home = dirs::home_dir();
    let mut roots = default_roots(&env, home.as_deref());
    roots.retain(|r| r.path.is_dir() && agent.is_none_or(|a| a == r.agent));
    roots.dedup();
    roots
}

/// The transcripts under `paths` (files as given, folders searched), by agent; ctxj journals
/// and files of no known format are left out, and so is every agent but `agent` when given.
pub fn transcripts(paths: &[PathBuf], agent: Option<Format>) -> BTreeMap<Format, Vec<PathBuf>> {
    let mut out: BTreeMap<Format, Vec<PathBuf>> = BTreeMap::new();
    for p in paths {
        let found: Vec<(Format, PathBuf)> = if p.is_dir() {
            find_sessions(p, FromFormat::Auto).into_iter().map(|f| (f.format, f.path)).collect()
        } else {
            detect_file(p).map(|f| (f, p.clone())).into_iter().collect()
        };
        for (f, path) in found {
            if f != Format::Ctxj && agent.is_none_or(|a| a == f) {
                out.entry(f).or_default().push(path);
            }
        }
    }
    for v in out.values_mut() {
        v.sort();
        v.dedup();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn environment_overrides_replace_the_home_folders() {
        let home = Path::new("/h");
        let none = |_: &str| None;
        let names = |r: Vec<Root>| r.into_iter().map(|r| r.path.display().to_string()).collect::<Vec<_>>();
        assert_eq!(
            names(default_roots(&none, Some(home))),
            ["/h/.config/claude/projects", "/h/.claude/projects", "/h/.codex/sessions", "/h/.pi/agent/sessions"]
        );
        let env = |k: &str| match k {
            "CLAUDE_CONFIG_DIR" => Some("/a, /b".to_string()),
            "CODEX_HOME" => Some("/c".to_string()),
            "PI_CODING_AGENT_DIR" => Some("/p".to_string()),
            _ => None,
        };
        assert_eq!(
            names(default_roots(&env, Some(home))),
            ["/a/projects", "/b/projects", "/c/sessions", "/p/sessions"]
        );
    }
}
