//! Every agent `ctxj usage` reads, behind one interface: the registry [`SPECS`] names each
//! agent, its default folders with ccusage 20.0.24's environment overrides, how to find its log
//! files under a folder, and the reader that turns them into [`Read`] entries with ccusage's
//! rules (fields, de-duplication, recorded costs, double counts). Adding an agent is one
//! [`Spec`] row and one reader module. The readers of Claude Code, Codex and pi live in
//! `usage::{claude, codex, pi}` (they also serve `ctxj export`); the others are here, one file
//! each, with the shared helpers in [`util`].

pub mod amp;
pub mod antigravity;
pub mod cline;
pub mod codebuff;
pub mod copilot;
pub mod droid;
pub mod gemini;
pub mod goose;
pub mod grok;
pub mod hermes;
pub mod kimi;
pub mod openclaw;
pub mod opencode;
pub mod protobuf;
pub mod qwen;
pub mod util;
pub mod zcode;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

pub use super::entry::Agent;
use super::entry::{Parse, Read};
use crate::import::scan::find_sessions;
use crate::import::{detect_file, Format, FromFormat};

impl Agent {
    /// The registry row of this agent.
    pub fn spec(self) -> &'static Spec {
        SPECS.iter().find(|s| s.agent == self).expect("every agent has a spec")
    }

    /// The name used by `--agent` and in reports (`claude-code`, `codex`, `opencode`, …).
    pub fn name(self) -> &'static str {
        self.spec().name
    }

    /// The agent of a transcript format (`None` for a ctxj journal).
    pub fn of_format(f: Format) -> Option<Agent> {
        Agent::ALL.into_iter().find(|a| a.name() == f.name())
    }

    /// The agent of a file detected as `f`: [`Agent::of_format`], but an OpenCode-format store
    /// named `kilo*` is Kilo CLI's (the name the importer's `harness` follows too).
    pub fn of_file(f: Format, path: &Path) -> Option<Agent> {
        let kilo = path.file_name().is_some_and(|n| n.to_string_lossy().starts_with("kilo"));
        match f {
            Format::OpenCode if kilo => Some(Agent::Kilo),
            _ => Agent::of_format(f),
        }
    }

    /// The transcript format ctxj imports this agent's logs as, when it has one.
    pub fn format(self) -> Option<Format> {
        [Format::ClaudeCode, Format::Codex, Format::Pi].into_iter().find(|f| f.name() == self.name())
    }

    /// An agent by `--agent` name (ccusage's `claude` included).
    pub fn by_name(name: &str) -> Option<Agent> {
        let name = if name == "claude" { "claude-code" } else { name };
        Agent::ALL.into_iter().find(|a| a.name() == name)
    }
}

impl std::fmt::Display for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The environment a discovery reads: variables and the home folder (injected for tests).
pub struct Env<'a> {
    pub var: &'a dyn Fn(&str) -> Option<String>,
    pub home: Option<&'a Path>,
}

impl Env<'_> {
    /// A variable that is set and not blank.
    pub fn set(&self, k: &str) -> Option<String> {
        (self.var)(k).filter(|v| !v.trim().is_empty())
    }
    /// A comma-separated list of folders (ccusage's form of most overrides); empty when unset.
    pub fn list(&self, k: &str) -> Vec<PathBuf> {
        self.set(k)
            .map(|v| v.split(',').map(str::trim).filter(|d| !d.is_empty()).map(PathBuf::from).collect())
            .unwrap_or_default()
    }
    /// `rel` under the home folder.
    pub fn home(&self, rel: &str) -> Option<PathBuf> {
        self.home.map(|h| h.join(rel))
    }
    /// The folders of `k`, else those of `defaults` under home.
    pub fn list_or_home(&self, k: &str, defaults: &[&str]) -> Vec<PathBuf> {
        let l = self.list(k);
        if l.is_empty() {
            defaults.iter().filter_map(|d| self.home(d)).collect()
        } else {
            l
        }
    }
}

/// One agent: how to find its logs and how to read them.
pub struct Spec {
    pub agent: Agent,
    /// `--agent` name.
    pub name: &'static str,
    /// For people ("Gemini CLI").
    pub label: &'static str,
    /// The environment variables that replace the default folders.
    pub env: &'static [&'static str],
    /// Whether ctxj imports this agent's requests for replay (`show`, `cache`, `audit`, …): the
    /// one place `sessions` takes its label from (a session of any other agent, or in a file no
    /// importer detects, is listed `usage only`). [`Agent::format`] is narrower: the agents whose
    /// usage is read through the import scan (Claude Code, Codex, pi).
    pub content: bool,
    /// Whether the reader was checked against ccusage's own output on real or ccusage fixture
    /// files (`../shared/corpus/ccusage/`); `false` means built from the documented schema only,
    /// or not read at all (`read_supported`).
    pub checked_against_ccusage: bool,
    /// Whether ctxj reads this agent's usage at all (every agent today; an agent registered
    /// before its reader lands says `false`, and `usage` names its folder as not read).
    pub read_supported: bool,
    /// The default folders (the override when set), existing or not.
    pub roots: fn(&Env) -> Vec<PathBuf>,
    /// The log files under one folder (or the file itself).
    pub files: fn(&Path) -> Vec<PathBuf>,
    /// The entries of the files (indexes count from `first`).
    pub read: fn(&[PathBuf], usize, Parse) -> Read,
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

fn transcripts_of(root: &Path, f: Format) -> Vec<PathBuf> {
    transcripts(&[root.to_path_buf()], Some(f)).remove(&f).unwrap_or_default()
}

fn per_file(paths: &[PathBuf], first: usize, parse: Parse, one: fn(usize, &Path, Parse) -> Read) -> Read {
    util::merge(paths.par_iter().enumerate().map(|(i, p)| one(first + i, p, parse)).collect())
}

/// The registry: one row per agent.
pub static SPECS: &[Spec] = &[
    Spec {
        agent: Agent::ClaudeCode,
        name: "claude-code",
        label: "Claude Code",
        env: &["CLAUDE_CONFIG_DIR"],
        content: true,
        checked_against_ccusage: true,
        read_supported: true,
        roots: |e| match e.set("CLAUDE_CONFIG_DIR") {
            Some(_) => e.list("CLAUDE_CONFIG_DIR").into_iter().map(|d| d.join("projects")).collect(),
            None => [e.home(".config/claude/projects"), e.home(".claude/projects")].into_iter().flatten().collect(),
        },
        files: |r| transcripts_of(r, Format::ClaudeCode),
        read: |p, first, parse| super::claude::read(p, first, parse),
    },
    Spec {
        agent: Agent::Codex,
        name: "codex",
        label: "Codex",
        env: &["CODEX_HOME"],
        content: true,
        checked_against_ccusage: true,
        read_supported: true,
        // ccusage reads `sessions/` and `archived_sessions/` of each home; a file under both
        // is read once, from `sessions/` (see `discover`).
        roots: |e| {
            let homes = e.set("CODEX_HOME").map(PathBuf::from).or_else(|| e.home(".codex"));
            homes.into_iter().flat_map(|h| [h.join("sessions"), h.join("archived_sessions")]).collect()
        },
        files: |r| transcripts_of(r, Format::Codex),
        read: |p, first, parse| per_file(p, first, parse, super::codex::read_file),
    },
    Spec {
        agent: Agent::Opencode,
        name: "opencode",
        label: "OpenCode",
        env: &["OPENCODE_DATA_DIR"],
        content: true,
        checked_against_ccusage: true,
        read_supported: true,
        roots: |e| e.list_or_home("OPENCODE_DATA_DIR", &[".local/share/opencode"]),
        files: opencode::files_opencode,
        read: |p, first, _| opencode::read(p, first, Agent::Opencode),
    },
    Spec {
        agent: Agent::Amp,
        name: "amp",
        label: "Amp",
        env: &["AMP_DATA_DIR"],
        content: false,
        checked_against_ccusage: true,
        read_supported: true,
        roots: |e| e.list_or_home("AMP_DATA_DIR", &[".local/share/amp"]),
        files: amp::files,
        read: |p, first, parse| per_file(p, first, parse, amp::read_file),
    },
    Spec {
        agent: Agent::Droid,
        name: "droid",
        label: "Droid",
        env: &["DROID_SESSIONS_DIR"],
        content: false,
        checked_against_ccusage: true,
        read_supported: true,
        roots: |e| e.list_or_home("DROID_SESSIONS_DIR", &[".factory/sessions"]),
        files: droid::files,
        read: |p, first, _| droid::read(p, first),
    },
    Spec {
        agent: Agent::Codebuff,
        name: "codebuff",
        label: "Codebuff",
        env: &["CODEBUFF_DATA_DIR"],
        content: false,
        checked_against_ccusage: true,
        read_supported: true,
        roots: |e| {
            e.list_or_home(
                "CODEBUFF_DATA_DIR",
                &[".config/manicode", ".config/manicode-dev", ".config/manicode-staging"],
            )
        },
        files: codebuff::files,
        read: |p, first, _| codebuff::read(p, first),
    },
    Spec {
        agent: Agent::Hermes,
        name: "hermes",
        label: "Hermes Agent",
        env: &["HERMES_HOME"],
        content: false,
        checked_against_ccusage: true,
        read_supported: true,
        roots: |e| e.list_or_home("HERMES_HOME", &[".hermes"]),
        files: hermes::files,
        read: |p, first, _| hermes::read(p, first),
    },
    Spec {
        agent: Agent::Pi,
        name: "pi",
        label: "pi",
        env: &["PI_AGENT_DIR", "PI_CODING_AGENT_DIR"],
        content: true,
        checked_against_ccusage: true,
        read_supported: true,
        roots: |e| {
            let l = e.list("PI_AGENT_DIR");
            if !l.is_empty() {
                return l;
            }
            e.set("PI_CODING_AGENT_DIR")
                .map(|d| Path::new(&d).join("sessions"))
                .or_else(|| e.home(".pi/agent/sessions"))
                .into_iter()
                .collect()
        },
        files: |r| transcripts_of(r, Format::Pi),
        read: |p, first, parse| per_file(p, first, parse, super::pi::read_file),
    },
    Spec {
        agent: Agent::Goose,
        name: "goose",
        label: "Goose",
        env: &["GOOSE_PATH_ROOT"],
        content: false,
        checked_against_ccusage: true,
        read_supported: true,
        roots: goose::roots,
        files: goose::files,
        read: |p, first, _| goose::read(p, first),
    },
    Spec {
        agent: Agent::Kilo,
        name: "kilo",
        label: "Kilo CLI",
        env: &["KILO_DATA_DIR"],
        content: true,
        checked_against_ccusage: true,
        read_supported: true,
        roots: |e| e.list_or_home("KILO_DATA_DIR", &[".local/share/kilo"]),
        files: opencode::files_kilo,
        read: |p, first, _| opencode::read(p, first, Agent::Kilo),
    },
    Spec {
        agent: Agent::Copilot,
        name: "copilot",
        label: "GitHub Copilot CLI",
        env: &["COPILOT_HOME", "COPILOT_OTEL_FILE_EXPORTER_PATH"],
        content: false,
        checked_against_ccusage: true,
        read_supported: true,
        roots: |e| {
            let mut r = e.list_or_home("COPILOT_HOME", &[".copilot"]);
            r.extend(e.set("COPILOT_OTEL_FILE_EXPORTER_PATH").map(PathBuf::from));
            r
        },
        files: copilot::files,
        read: |p, first, _| copilot::read(p, first),
    },
    Spec {
        agent: Agent::Gemini,
        name: "gemini",
        label: "Gemini CLI",
        env: &["GEMINI_DATA_DIR"],
        content: true,
        checked_against_ccusage: true,
        read_supported: true,
        roots: |e| e.list_or_home("GEMINI_DATA_DIR", &[".gemini/tmp"]),
        files: gemini::files,
        read: |p, first, parse| per_file(p, first, parse, gemini::read_file),
    },
    Spec {
        agent: Agent::Antigravity,
        name: "antigravity",
        label: "Antigravity",
        env: &["ANTIGRAVITY_DATA_DIR"],
        content: false,
        checked_against_ccusage: false,
        read_supported: true,
        roots: antigravity::roots,
        files: antigravity::files,
        read: |p, first, _| antigravity::read(p, first),
    },
    Spec {
        agent: Agent::Kimi,
        name: "kimi",
        label: "Kimi CLI / Kimi Code",
        env: &["KIMI_DATA_DIR"],
        content: true,
        checked_against_ccusage: true,
        read_supported: true,
        roots: |e| e.list_or_home("KIMI_DATA_DIR", &[".kimi", ".kimi-code"]),
        files: kimi::files,
        read: |p, first, _| kimi::read(p, first),
    },
    Spec {
        agent: Agent::Qwen,
        name: "qwen",
        label: "Qwen Code",
        env: &["QWEN_DATA_DIR"],
        content: true,
        checked_against_ccusage: true,
        read_supported: true,
        roots: |e| e.list_or_home("QWEN_DATA_DIR", &[".qwen"]),
        files: qwen::files,
        read: |p, first, _| qwen::read(p, first),
    },
    Spec {
        agent: Agent::Openclaw,
        name: "openclaw",
        label: "OpenClaw",
        env: &["OPENCLAW_DIR"],
        content: true,
        checked_against_ccusage: true,
        read_supported: true,
        roots: |e| e.list_or_home("OPENCLAW_DIR", &[".openclaw", ".clawdbot", ".moltbot", ".moldbot"]),
        files: openclaw::files,
        read: |p, first, _| openclaw::read(p, first),
    },
    Spec {
        agent: Agent::Grok,
        name: "grok",
        label: "Grok Build",
        env: &["GROK_HOME"],
        content: false,
        checked_against_ccusage: false,
        read_supported: true,
        roots: |e| e.set("GROK_HOME").map(PathBuf::from).or_else(|| e.home(".grok")).into_iter().collect(),
        files: grok::files,
        read: |p, first, parse| per_file(p, first, parse, grok::read_file),
    },
    Spec {
        agent: Agent::Zcode,
        name: "zcode",
        label: "ZCode",
        env: &["ZCODE_HOME"],
        content: false,
        checked_against_ccusage: false,
        read_supported: true,
        roots: zcode::roots,
        files: zcode::files,
        read: |p, first, _| zcode::read(p, first),
    },
    Spec {
        agent: Agent::Cline,
        name: "cline",
        label: "Cline",
        env: &["CLINE_SESSION_DATA_DIR", "CLINE_DATA_DIR", "CLINE_DIR"],
        content: true,
        checked_against_ccusage: false,
        read_supported: true,
        roots: |e| {
            let d = e
                .set("CLINE_SESSION_DATA_DIR")
                .map(PathBuf::from)
                .or_else(|| e.set("CLINE_DATA_DIR").map(|d| Path::new(&d).join("sessions")))
                .or_else(|| e.set("CLINE_DIR").map(|d| Path::new(&d).join("data/sessions")))
                .or_else(|| e.home(".cline/data/sessions"));
            d.into_iter().collect()
        },
        files: cline::files,
        read: |p, first, _| cline::read(p, first),
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_agent_has_one_spec_and_names_round_trip() {
        for a in Agent::ALL {
            assert_eq!(SPECS.iter().filter(|s| s.agent == a).count(), 1, "{a:?}");
            assert_eq!(Agent::by_name(a.name()), Some(a));
        }
        assert_eq!(SPECS.len(), Agent::ALL.len());
        assert_eq!(Agent::by_name("claude"), Some(Agent::ClaudeCode));
        for f in [Format::ClaudeCode, Format::Codex, Format::Pi] {
            assert_eq!(Agent::of_format(f).and_then(Agent::format), Some(f));
        }
        assert_eq!(Agent::of_format(Format::Ctxj), None);
        assert_eq!(Agent::of_file(Format::OpenCode, Path::new("d/kilo.db")), Some(Agent::Kilo));
        assert_eq!(Agent::of_file(Format::OpenCode, Path::new("d/opencode.db")), Some(Agent::Opencode));
    }

    #[test]
    fn overrides_replace_the_home_folders() {
        let home = Path::new("/h");
        let var = |k: &str| match k {
            "GEMINI_DATA_DIR" => Some("/g1, /g2".to_string()),
            "CODEX_HOME" => Some("/c".to_string()),
            _ => None,
        };
        let e = Env { var: &var, home: Some(home) };
        let s = |a: Agent| (a.spec().roots)(&e);
        assert_eq!(s(Agent::Gemini), [PathBuf::from("/g1"), PathBuf::from("/g2")]);
        assert_eq!(s(Agent::Codex), [PathBuf::from("/c/sessions"), PathBuf::from("/c/archived_sessions")]);
        assert_eq!(s(Agent::Qwen), [PathBuf::from("/h/.qwen")]);
        assert_eq!(s(Agent::Openclaw).len(), 4);
        assert_eq!(s(Agent::Antigravity), [PathBuf::from("/h/.gemini/antigravity-cli")]);
        assert_eq!(s(Agent::Zcode), [PathBuf::from("/h/.zcode")]);
        let var = |k: &str| matches!(k, "ANTIGRAVITY_DATA_DIR" | "ZCODE_HOME").then(|| "/a,/b".to_string());
        let e = Env { var: &var, home: Some(home) };
        for a in [Agent::Antigravity, Agent::Zcode] {
            assert_eq!((a.spec().roots)(&e), [PathBuf::from("/a"), PathBuf::from("/b")], "{a}");
        }
    }
}
