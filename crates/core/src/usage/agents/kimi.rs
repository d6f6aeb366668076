//! Kimi CLI and Kimi Code counted the way ccusage counts them. Roots: `$KIMI_DATA_DIR` (a comma
//! list), else `~/.kimi` and `~/.kimi-code`.
//! * Kimi CLI (legacy): `sessions/<group>/<session>/wire.jsonl`, each `StatusUpdate` with
//!   `token_usage {input_other → input, output, input_cache_read, input_cache_creation}`, dated by
//!   the line's float `timestamp`; the log names no model: the root's `config.json` `model`, else
//!   `kimi-for-coding`, priced as the model the alias served then ([`dated_model`]).
//! * Kimi Code: `sessions/<ws>/<session>/agents/<agent>/wire.jsonl`, each `usage.record` of
//!   `usageScope: "turn"` (`"session"` records are cumulative), `usage {inputOther, output,
//!   inputCacheRead, inputCacheCreation}`, dated by `time` (ms), model without `kimi-code/`.
//!
//! Calls equal in session, message id, time, model and counts are counted once. As in ccusage, a
//! legacy `token_usage.total` above the parts is extra, and a record whose time cannot be read
//! (a Kimi Code `time` that is no integer) is dated by the file's modification time.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use super::util::{file_time, folder, from_ms, json_file, json_lines, n, s, time_of, total_fallback, walk};
use super::Agent;
use crate::usage::entry::{Read, SessionKey, Tokens, UsageEntry};

/// The two layouts' `wire.jsonl` files under a root.
pub fn files(root: &Path) -> Vec<PathBuf> {
    walk(root, |p| {
        super::util::name(p) == "wire.jsonl"
            && (folder(p, 3) == "sessions" || (folder(p, 2) == "agents" && folder(p, 5) == "sessions"))
    })
}

/// The model of a legacy root (`config.json`'s `model`), else ccusage's default.
fn legacy_model(wire: &Path) -> String {
    let root = wire.ancestors().nth(4);
    root.and_then(|r| json_file(&r.join("config.json")))
        .and_then(|c| s(&c, "model"))
        .unwrap_or_else(|| "kimi-for-coding".into())
}

/// When Kimi's `kimi-for-coding` alias moved from Kimi K2.5 to K2.6 (ccusage 20.0.24's Kimi
/// adapter prices the alias so).
const K2_6_SINCE: &str = "2026-04-20T15:28:10.072Z";

/// The model an alias served at `ts`: `kimi-for-coding` is `kimi-k2.5` before [`K2_6_SINCE`] and
/// `kimi-k2.6` from then on; `None` for other names (priced as they are written).
pub fn dated_model(model: &str, ts: &str) -> Option<&'static str> {
    (model == "kimi-for-coding").then(|| {
        match crate::usage::time::instant(ts).zip(crate::usage::time::instant(K2_6_SINCE)) {
            Some((t, since)) if t < since => "kimi-k2.5",
            Some(_) => "kimi-k2.6",
            None => "kimi-k2.5",
        }
    })
}

/// The entries of the files.
pub fn read(paths: &[PathBuf], first: usize) -> Read {
    let mut out = Read::default();
    let mut seen = HashSet::new();
    for (i, p) in paths.iter().enumerate() {
        let code = folder(p, 2) == "agents";
        let (session, project) = if code { (folder(p, 3), folder(p, 4)) } else { (folder(p, 1), folder(p, 2)) };
        let sk = Arc::new(SessionKey { agent: Agent::Kimi, project, session: session.clone() });
        let model = if code { String::new() } else { legacy_model(p) };
        for l in json_lines(p) {
            let mut extra = 0;
            let (tokens, ts, model, id) = if code {
                if l.get("type").and_then(Value::as_str) != Some("usage.record")
                    || l.get("usageScope").and_then(Value::as_str) != Some("turn")
                {
                    continue;
                }
                let Some(u) = l.get("usage") else { continue };
                let t = Tokens {
                    input: n(u, "inputOther"),
                    output: n(u, "output"),
                    cache_creation: n(u, "inputCacheCreation"),
                    cache_read: n(u, "inputCacheRead"),
                };
                let m = s(&l, "model").unwrap_or_default();
                let m = m.strip_prefix("kimi-code/").unwrap_or(&m).to_string();
                // ccusage dates a record whose `time` is no integer (ms) by the file's mtime.
                let ts = match l.get("time").and_then(Value::as_i64) {
                    Some(ms) => from_ms(ms),
                    None => file_time(p),
                };
                (t, ts, m, String::new())
            } else {
                let Some(msg) = l.get("message") else { continue };
                if msg.get("type").and_then(Value::as_str) != Some("StatusUpdate") {
                    continue;
                }
                let Some(u) = msg.get("payload").and_then(|p| p.get("token_usage")).filter(|u| u.is_object()) else {
                    continue;
                };
                let mut t = Tokens {
                    input: n(u, "input_other"),
                    output: n(u, "output"),
                    cache_creation: n(u, "input_cache_creation"),
                    cache_read: n(u, "input_cache_read"),
                };
                extra = total_fallback(&mut t, 0, n(u, "total"));
                let id = msg.get("payload").and_then(|p| s(p, "message_id")).unwrap_or_default();
                let ts = Some(time_of(l.get("timestamp"))).filter(|t| !t.is_empty()).unwrap_or_else(|| file_time(p));
                (t, ts, model.clone(), id)
            };
            if tokens.is_zero() && extra == 0 {
                continue;
            }
            let key = (session.clone(), id, ts.clone(), model.clone(), tokens);
            if !seen.insert(format!("{key:?}")) {
                out.duplicates += 1;
                continue;
            }
            let mut e = UsageEntry::with_extra(sk.clone(), first + i, ts, Some(model), tokens, extra, 0, None);
            if let Some(m) = dated_model(e.model.as_deref().unwrap_or_default(), &e.ts) {
                let priced = Tokens { output: tokens.output.saturating_add(extra), ..tokens };
                e.cost = crate::usage::entry::builtin_cost(Some(m), &priced, 0);
            }
            out.entries.push(e);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SYNTHETIC records in Kimi CLI's and Kimi Code's wire schemas, checked against ccusage
    /// 20.0.24 (`ccusage kimi session|daily --json`): a legacy `token_usage.total` (50) above
    /// the parts (17) lost the rest, and a Kimi Code `usage.record` whose `time` is a string was
    /// put on the day "unknown" where ccusage dates it by the file's modification time.
    #[test]
    fn regression_legacy_total_and_unreadable_time_were_missed() {
        let d = tempfile::tempdir().unwrap();
        let legacy = d.path().join("sessions/g1/s1/wire.jsonl");
        std::fs::create_dir_all(legacy.parent().unwrap()).unwrap();
        std::fs::write(
            &legacy,
            r#"{"timestamp":1775000000.5,"message":{"type":"StatusUpdate","payload":{"token_usage":{"input_other":10,"output":2,"input_cache_read":5,"total":50}}}}"#,
        )
        .unwrap();
        let code = d.path().join("sessions/wd/session_k/agents/main/wire.jsonl");
        std::fs::create_dir_all(code.parent().unwrap()).unwrap();
        std::fs::write(
            &code,
            r#"{"type":"usage.record","model":"kimi-k2.5","usage":{"inputOther":3,"output":1},"usageScope":"turn","time":"2026-07-25T03:40:00Z"}"#,
        )
        .unwrap();
        let r = read(&[legacy, code.clone()], 0);
        assert_eq!(r.entries.len(), 2);
        assert_eq!(r.entries[0].extra, 33);
        assert_eq!(r.entries[1].ts, file_time(&code));
        assert!(!r.entries[1].ts.is_empty());
    }

    /// `kimi-for-coding` (Kimi CLI's default, Kimi Code's alias) was unpriced; it serves K2.5
    /// until 2026-04-20T15:28:10.072Z and K2.6 from then on, and is priced so.
    #[test]
    fn regression_kimi_for_coding_was_unpriced() {
        assert_eq!(dated_model("kimi-for-coding", "2026-04-20T15:28:10.071Z"), Some("kimi-k2.5"));
        assert_eq!(dated_model("kimi-for-coding", "2026-04-20T15:28:10.072Z"), Some("kimi-k2.6"));
        assert_eq!(dated_model("kimi-k2.5", "2026-05-01T00:00:00Z"), None);
        let d = tempfile::tempdir().unwrap();
        let legacy = d.path().join("sessions/g1/s1/wire.jsonl");
        std::fs::create_dir_all(legacy.parent().unwrap()).unwrap();
        std::fs::write(
            &legacy,
            r#"{"timestamp":1776600000,"message":{"type":"StatusUpdate","payload":{"token_usage":{"input_other":1000000,"output":0}}}}"#,
        )
        .unwrap();
        let r = read(&[legacy], 0);
        assert_eq!(r.entries[0].model.as_deref(), Some("kimi-for-coding"), "the name as the log has it");
        assert!((r.entries[0].cost.unwrap() - 0.6).abs() < 1e-9, "at K2.5's input price");
    }
}
