//! GitHub Copilot CLI (`${COPILOT_HOME:-~/.copilot}`) counted the way ccusage 20.0.24 counts it:
//! * `session-state/<session>/events.jsonl`: each `session.shutdown` / `session.usage_checkpoint`
//!   with `modelMetrics.<model>.usage` holds the session's **cumulative** counts for that model,
//!   so each snapshot adds its difference from the previous one; `inputTokens` includes cache
//!   reads and writes, so each snapshot's input is first `inputTokens − cacheRead − cacheWrite`,
//!   then every field is differenced on its own, a field that went down adding 0 (a resumed
//!   process restarts its counters; ccusage 20.0.24 counts exactly that); reasoning is inside output.
//! * OpenTelemetry file exports (`otel/*.jsonl`, `$COPILOT_OTEL_FILE_EXPORTER_PATH`): each `chat`
//!   span with `gen_ai.usage.*`, unless a snapshot of the same session and model at or after
//!   its end already covers it.
//!
//! Model suffixes `-1m` / `-1m-internal` are dropped.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use super::util::{folder, json_lines, n, num, s, walk};
use super::Agent;
use crate::usage::entry::{Read, SessionKey, Tokens, UsageEntry};

/// `session-state/*/events.jsonl` and `otel/*.jsonl` under a root (or the export file itself).
pub fn files(root: &Path) -> Vec<PathBuf> {
    if root.is_file() {
        return vec![root.to_path_buf()];
    }
    walk(root, |p| {
        (super::util::name(p) == "events.jsonl" && folder(p, 2) == "session-state")
            || (folder(p, 1) == "otel" && p.extension().is_some_and(|e| e == "jsonl"))
    })
}

fn model_name(m: &str) -> String {
    let m = m.strip_suffix("-1m-internal").or_else(|| m.strip_suffix("-1m")).unwrap_or(m);
    m.to_string()
}

/// The entries of the files.
pub fn read(paths: &[PathBuf], first: usize) -> Read {
    let mut out = Read::default();
    // (session, model) → the time of the latest snapshot.
    let mut latest: BTreeMap<(String, String), String> = BTreeMap::new();
    let mut spans = Vec::new();
    for (i, p) in paths.iter().enumerate() {
        let lines = json_lines(p);
        if super::util::name(p) != "events.jsonl" {
            spans.extend(lines.into_iter().map(|l| (i, l)));
            continue;
        }
        let session = folder(p, 1);
        let sk = Arc::new(SessionKey { agent: Agent::Copilot, project: String::new(), session: session.clone() });
        let mut before: BTreeMap<String, [u64; 4]> = BTreeMap::new();
        for l in lines {
            let kind = l.get("type").and_then(Value::as_str);
            if !matches!(kind, Some("session.shutdown" | "session.usage_checkpoint")) {
                continue;
            }
            let ts = s(&l, "timestamp").unwrap_or_default();
            let Some(metrics) = l.get("data").and_then(|d| d.get("modelMetrics")).and_then(Value::as_object) else {
                continue;
            };
            for (m, v) in metrics {
                let Some(u) = v.get("usage").filter(|u| u.is_object()) else { continue };
                let model = model_name(m);
                let (read, write) = (n(u, "cacheReadTokens"), n(u, "cacheWriteTokens"));
                // The uncached input of this snapshot first, then the difference per field.
                let now =
                    [n(u, "inputTokens").saturating_sub(read.saturating_add(write)), n(u, "outputTokens"), read, write];
                let prev = before.insert(model.clone(), now).unwrap_or_default();
                let d: Vec<u64> = now.iter().zip(prev).map(|(a, b)| a.saturating_sub(b)).collect();
                let tokens = Tokens { input: d[0], output: d[1], cache_read: d[2], cache_creation: d[3] };
                let e = latest.entry((session.clone(), model.clone())).or_default();
                if ts > *e {
                    *e = ts.clone();
                }
                if tokens.is_zero() {
                    continue;
                }
                out.entries.push(UsageEntry::with_extra(
                    sk.clone(),
                    first + i,
                    ts.clone(),
                    Some(model),
                    tokens,
                    0,
                    0,
                    None,
                ));
            }
        }
    }
    let mut seen = HashSet::new();
    for (i, l) in spans {
        let Some(a) = l.get("attributes").filter(|a| a.is_object()) else { continue };
        let op = a.get("gen_ai.operation.name").and_then(Value::as_str);
        if l.get("type").and_then(Value::as_str) != Some("span") || op != Some("chat") {
            continue;
        }
        let id = format!("{}|{}", s(&l, "traceId").unwrap_or_default(), s(&l, "spanId").unwrap_or_default());
        if !seen.insert(id) {
            out.duplicates += 1;
            continue;
        }
        let Some(session) = s(a, "gen_ai.conversation.id") else { continue };
        let model = s(a, "gen_ai.response.model").or_else(|| s(a, "gen_ai.request.model")).map(|m| model_name(&m));
        let ts = match l.get("endTime").and_then(Value::as_array) {
            Some(t) if !t.is_empty() => {
                let secs = i64::try_from(num(t.first())).unwrap_or(i64::MAX);
                let nanos = i64::try_from(num(t.get(1))).unwrap_or(0);
                super::util::from_ms(secs.saturating_mul(1000).saturating_add(nanos / 1_000_000))
            }
            _ => String::new(),
        };
        if let Some(m) = &model {
            if latest
                .get(&(session.clone(), m.clone()))
                .is_some_and(|t| crate::usage::time::instant(t) >= crate::usage::time::instant(&ts))
            {
                continue;
            }
        }
        let read = n(a, "gen_ai.usage.cache_read.input_tokens");
        let write = n(a, "gen_ai.usage.cache_write.input_tokens").max(n(a, "gen_ai.usage.cache_creation.input_tokens"));
        let tokens = Tokens {
            input: n(a, "gen_ai.usage.input_tokens").saturating_sub(read),
            output: n(a, "gen_ai.usage.output_tokens"),
            cache_read: read,
            cache_creation: write,
        };
        if tokens.is_zero() {
            continue;
        }
        let sk = Arc::new(SessionKey { agent: Agent::Copilot, project: String::new(), session });
        out.entries.push(UsageEntry::with_extra(sk, first + i, ts, model, tokens, 0, 0, None));
    }
    out
}

#[cfg(test)]
mod tests {
    /// SYNTHETIC `events.jsonl` in Copilot CLI's schema (a resume restarts the counters), checked
    /// against ccusage 20.0.24 (`ccusage copilot daily --json`): the second snapshot's uncached
    /// input (90 − 60 − 5 = 25) is 5 above the first's (100 − 80 = 20), but the raw
    /// `inputTokens` and `cacheReadTokens` both went down, so subtracting the raw fields first
    /// lost those 5 tokens (found on a real log: 88,298 input tokens of one session).
    #[test]
    fn regression_resumed_session_lost_input_when_the_raw_counters_went_down() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("session-state/s1/events.jsonl");
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        let shutdown = |t: &str, i: u64, o: u64, r: u64, w: u64| {
            format!(
                r#"{{"type":"session.shutdown","timestamp":"{t}","data":{{"modelMetrics":{{"gpt-5.4-mini":{{"usage":{{"inputTokens":{i},"outputTokens":{o},"cacheReadTokens":{r},"cacheWriteTokens":{w}}}}}}}}}}}"#
            )
        };
        let text = [shutdown("2026-04-06T08:10:00Z", 100, 50, 80, 0), shutdown("2026-04-07T08:10:00Z", 90, 60, 60, 5)];
        std::fs::write(&p, text.join("\n")).unwrap();
        let r = super::read(&[p], 0);
        let t: Vec<_> = r
            .entries
            .iter()
            .map(|e| (e.tokens.input, e.tokens.output, e.tokens.cache_read, e.tokens.cache_creation))
            .collect();
        assert_eq!(t, vec![(20, 50, 80, 0), (5, 10, 0, 5)]);
    }
}
