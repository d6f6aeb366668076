//! Where the logs are: each agent's default folders (with their environment overrides), and the
//! log files of each agent under a list of paths (the detected transcripts through
//! [`super::agents::transcripts`], which the registry's readers use too).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::agents::{transcripts, Agent, Env, SPECS};

/// One folder to read and the agent whose logs it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    pub agent: Agent,
    pub path: PathBuf,
}

/// Every default log folder, existing or not, in registry order (each agent's own rule and
/// environment override, [`super::agents::SPECS`]). For example Claude Code: each
/// `<dir>/projects` of `$CLAUDE_CONFIG_DIR` (comma-separated), else `~/.config/claude/projects`
/// and `~/.claude/projects`; Codex: `sessions` and `archived_sessions` of `$CODEX_HOME` or
/// `~/.codex`; pi: `$PI_AGENT_DIR`, else `$PI_CODING_AGENT_DIR/sessions`, else
/// `~/.pi/agent/sessions`.
pub fn default_roots(env: &dyn Fn(&str) -> Option<String>, home: Option<&Path>) -> Vec<Root> {
    let e = Env { var: env, home };
    SPECS.iter().flat_map(|s| (s.roots)(&e).into_iter().map(move |path| Root { agent: s.agent, path })).collect()
}

/// The default folders of this process's environment that exist, narrowed to `agent`.
pub fn existing_default_roots(agent: Option<Agent>) -> Vec<Root> {
    let env = |k: &str| std::env::var(k).ok();
    let home = dirs::home_dir();
    let mut roots = default_roots(&env, home.as_deref());
    roots.retain(|r| r.path.exists() && agent.is_none_or(|a| a == r.agent));
    roots.dedup();
    roots
}

/// The log files to read, by agent. With `paths`, files as given and folders searched: for
/// `agent` with its own layout (every agent but Claude Code, Codex and pi), the folder is read
/// as that agent's data folder (what its environment override names); otherwise the
/// transcripts ctxj detects. Without `paths`, every existing default folder of `agent` (or of
/// every agent) through its registry row. A Codex file present under both `sessions/` and
/// `archived_sessions/` is read once, from `sessions/` (as ccusage does).
pub fn discover(paths: &[PathBuf], agent: Option<Agent>) -> BTreeMap<Agent, Vec<PathBuf>> {
    let mut out: BTreeMap<Agent, Vec<PathBuf>> = BTreeMap::new();
    if !paths.is_empty() {
        match agent.filter(|a| a.format().is_none()) {
            Some(a) => {
                let files = paths.iter().flat_map(|p| (a.spec().files)(p)).collect::<Vec<_>>();
                out.insert(a, files);
            }
            None => {
                for (f, files) in transcripts(paths, agent.and_then(Agent::format)) {
                    for file in files {
                        if let Some(a) = Agent::of_file(f, &file) {
                            out.entry(a).or_default().push(file);
                        }
                    }
                }
            }
        }
    } else {
        let mut codex_seen = std::collections::HashSet::new();
        for r in existing_default_roots(agent) {
            for f in (r.agent.spec().files)(&r.path) {
                if r.agent == Agent::Codex && !codex_seen.insert(f.strip_prefix(&r.path).unwrap_or(&f).to_path_buf()) {
                    continue;
                }
                out.entry(r.agent).or_default().push(f);
            }
        }
    }
    for v in out.values_mut() {
        v.sort();
        v.dedup();
    }
    out.retain(|_, v| !v.is_empty());
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
            names(default_roots(&none, Some(home)))[..4],
            ["/h/.config/claude/projects", "/h/.claude/projects", "/h/.codex/sessions", "/h/.codex/archived_sessions"]
        );
        let env = |k: &str| match k {
            "CLAUDE_CONFIG_DIR" => Some("/a, /b".to_string()),
            "CODEX_HOME" => Some("/c".to_string()),
            "PI_CODING_AGENT_DIR" => Some("/p".to_string()),
            _ => None,
        };
        let all = names(default_roots(&env, Some(home)));
        assert_eq!(all[..4], ["/a/projects", "/b/projects", "/c/sessions", "/c/archived_sessions"]);
        assert!(all.contains(&"/p/sessions".to_string()), "{all:?}");
    }
}
