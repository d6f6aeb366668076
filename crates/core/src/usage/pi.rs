//! pi sessions counted the way ccusage 20.0.24's `ccusage pi` counts them: one entry per
//! assistant `message` with `usage`, in every branch of the session tree (abandoned branches
//! included), dated by the entry's `timestamp`. The cost is pi's own `usage.cost.total` when
//! recorded, else the built-in price of the message's model. A `usage.totalTokens` above the four
//! counts goes through ccusage's total fallback ([`total_fallback`]: the missing tokens become
//! the output when it is 0, else extra tokens); ccusage counts pi's extra tokens in the total
//! but does not price them, and neither does ctxj (`extra_tokens` in the rows shows them).

use std::borrow::Cow;
use std::path::Path;
use std::sync::{Arc, LazyLock};

use memchr::memmem::Finder;
use serde::Deserialize;
use serde_json::{Number, Value};

use super::entry::{
    count as n, read_lines, str_at, total_fallback, whole, Compaction, Parse, Read, SessionKey, Tokens, UsageEntry,
};
use crate::journal::typed::object_or_null;

/// The session of a pi file: its folder (the project) and the file name after the first `_`
/// (the whole stem when there is none).
pub fn session_of(path: &Path) -> SessionKey {
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let session = stem.split_once('_').map_or(stem.clone(), |(_, id)| id.to_string());
    let project = path.parent().and_then(Path::file_name).map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    SessionKey { agent: super::Agent::Pi, project, session }
}

/// The entries and compactions of one pi session file.
pub fn read_file(file: usize, path: &Path, parse: Parse) -> Read {
    match crate::journal::input::read_regular(path) {
        Ok(bytes) => read_bytes_with(file, path, &bytes, parse),
        Err(_) => Read::default(),
    }
}

/// What a pi line tells `usage`, read either way: its type, timestamp, and for an assistant
/// message with a `usage` object, the model, the four counts, the recorded cost and total.
#[derive(Debug, PartialEq)]
struct Fields {
    ts: String,
    kind: Option<String>,
    call: Option<(Option<String>, Tokens, Option<f64>, u64)>,
}

/// The fields typed strictly (see `journal::typed`).
#[derive(Deserialize)]
struct TypedLine<'a> {
    #[serde(default, borrow)]
    timestamp: Option<Cow<'a, str>>,
    #[serde(rename = "type", default, borrow)]
    kind: Option<Cow<'a, str>>,
    #[serde(default, borrow, deserialize_with = "object_or_null")]
    message: Option<TypedMessage<'a>>,
}

#[derive(Deserialize)]
struct TypedMessage<'a> {
    #[serde(default, borrow)]
    role: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    model: Option<Cow<'a, str>>,
    #[serde(default, deserialize_with = "object_or_null")]
    usage: Option<TypedUsage>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TypedUsage {
    #[serde(default)]
    input: Option<Number>,
    #[serde(default)]
    output: Option<Number>,
    #[serde(default)]
    cache_write: Option<Number>,
    #[serde(default)]
    cache_read: Option<Number>,
    #[serde(default)]
    total_tokens: Option<Number>,
    #[serde(default, deserialize_with = "object_or_null")]
    cost: Option<TypedCost>,
}

#[derive(Deserialize)]
struct TypedCost {
    #[serde(default)]
    total: Option<Number>,
}

impl From<TypedLine<'_>> for Fields {
    fn from(l: TypedLine<'_>) -> Self {
        let call = l.message.filter(|m| m.role.as_deref() == Some("assistant")).and_then(|m| {
            let u = m.usage?;
            let tokens = Tokens {
                input: whole(&u.input),
                output: whole(&u.output),
                cache_creation: whole(&u.cache_write),
                cache_read: whole(&u.cache_read),
            };
            let cost = u.cost.and_then(|c| c.total).and_then(|t| t.as_f64());
            Some((m.model.map(Cow::into_owned), tokens, cost, whole(&u.total_tokens)))
        });
        Fields { ts: l.timestamp.map(Cow::into_owned).unwrap_or_default(), kind: l.kind.map(Cow::into_owned), call }
    }
}

/// The fields of a fully parsed line.
fn from_value(v: &Value) -> Fields {
    let call = v.get("message").filter(|m| m.get("role").and_then(Value::as_str) == Some("assistant")).and_then(|m| {
        let u = m.get("usage").filter(|u| u.is_object())?;
        let tokens = Tokens {
            input: n(u, "input"),
            output: n(u, "output"),
            cache_creation: n(u, "cacheWrite"),
            cache_read: n(u, "cacheRead"),
        };
        let cost = u.get("cost").and_then(|c| c.get("total")).and_then(Value::as_f64);
        Some((str_at(m, "model"), tokens, cost, n(u, "totalTokens")))
    });
    Fields { ts: str_at(v, "timestamp").unwrap_or_default(), kind: str_at(v, "type"), call }
}

static USAGE: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"\"usage\""));
static COMPACTION: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"\"compaction\""));

/// The entries and compactions of one pi session file's bytes (`path` names the session).
pub fn read_bytes(file: usize, path: &Path, bytes: &[u8]) -> Read {
    read_bytes_with(file, path, bytes, Parse::Fast)
}

/// [`read_bytes`], parsing the way `parse` says: one [`Fold::feed`] of the whole.
pub fn read_bytes_with(file: usize, path: &Path, bytes: &[u8], parse: Parse) -> Read {
    let mut fold = Fold::default();
    fold.feed(bytes, parse);
    fold.read(file, path)
}

/// One call as a [`Fold`] keeps it: its timestamp, model, counts, recorded cost and recorded
/// `totalTokens`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
struct Call {
    ts: String,
    model: Option<String>,
    tokens: Tokens,
    cost: Option<f64>,
    total: u64,
}

/// A pi session's lines as `usage` reads them, folded line by line (each line stands alone):
/// the calls and compactions so far. Feeding a file in pieces cut at line ends gives what one
/// feed of the whole gives (the live engine, `crate::live`, feeds the appended lines).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Fold {
    calls: Vec<Call>,
    compactions: Vec<String>,
}

impl Fold {
    /// Folds `bytes` (complete lines).
    pub fn feed(&mut self, bytes: &[u8], parse: Parse) {
        let wanted = |line: &[u8]| USAGE.find(line).is_some() || COMPACTION.find(line).is_some();
        for f in read_lines(bytes, parse, wanted, |t: TypedLine| Fields::from(t), from_value) {
            match f.kind.as_deref() {
                Some("compaction") => self.compactions.push(f.ts),
                Some("message") => {
                    let Some((model, tokens, recorded, total)) = f.call else { continue };
                    self.calls.push(Call { ts: f.ts, model, tokens, cost: recorded, total });
                }
                _ => {}
            }
        }
    }

    /// Takes out every call and compaction but the last `keep` of each (no later line depends
    /// on them): the live engine keeps sums of what is taken out.
    pub fn settle(&mut self, keep: usize) -> Fold {
        Fold {
            calls: self.calls.drain(..self.calls.len().saturating_sub(keep)).collect(),
            compactions: self.compactions.drain(..self.compactions.len().saturating_sub(keep)).collect(),
        }
    }

    /// The priced entries and compactions folded so far, as file `file` at `path`.
    pub fn read(&self, file: usize, path: &Path) -> Read {
        let session = Arc::new(session_of(path));
        Read {
            entries: self
                .calls
                .iter()
                .map(|c| {
                    let mut t = c.tokens;
                    let extra = total_fallback(&mut t, 0, c.total);
                    // Counted in the total, not priced (ccusage 20.0.24's `pi`).
                    let priced = UsageEntry::priced(session.clone(), file, c.ts.clone(), c.model.clone(), t, c.cost);
                    UsageEntry { extra, ..priced }
                })
                .collect(),
            compactions: self
                .compactions
                .iter()
                .map(|ts| Compaction { session: session.clone(), ts: ts.clone() })
                .collect(),
            duplicates: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recorded_cost_wins_and_session_id_follows_the_underscore() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("--proj--/2026-03-15T09-30-00-412Z_abc.jsonl");
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        let text = [
            r#"{"type":"message","timestamp":"2026-03-15T09:30:48Z","message":{"role":"assistant","model":"claude-sonnet-4-5","usage":{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"cost":{"total":0.5}}}}"#,
            r#"{"type":"message","timestamp":"2026-03-15T09:31:48Z","message":{"role":"user","usage":{"input":9}}}"#,
            r#"{"type":"compaction","timestamp":"2026-03-15T09:32:00Z"}"#,
        ]
        .join("\n");
        std::fs::write(&p, text).unwrap();
        let r = read_file(0, &p, Parse::Fast);
        assert_eq!(r.entries.len(), 1);
        assert_eq!(r.entries[0].cost, Some(0.5));
        assert_eq!(r.entries[0].tokens.total(), 10);
        assert_eq!(r.compactions.len(), 1);
        assert_eq!(r.entries[0].session.key(), "--proj--/abc");
    }

    /// SYNTHETIC pi v3 lines, checked against ccusage 20.0.24 (`ccusage pi session --json`):
    /// a `usage.totalTokens` above the four counts was dropped (ccusage: total 40, ctxj 10).
    /// ccusage moves the missing tokens into the output when it is 0 (and prices them), else
    /// counts them as extra without pricing them; the recorded cost still wins.
    #[test]
    fn regression_total_tokens_above_the_parts_were_dropped() {
        let line = |ts: &str, usage: &str| {
            format!(
                r#"{{"type":"message","timestamp":"{ts}","message":{{"role":"assistant","model":"claude-sonnet-4-5","usage":{usage}}}}}"#
            )
        };
        let text = [
            line(
                "2026-03-15T09:30:48Z",
                r#"{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"totalTokens":40,"cost":{"total":0.5}}"#,
            ),
            line("2026-03-16T09:30:48Z", r#"{"input":1000,"output":0,"totalTokens":3000}"#),
            line("2026-03-17T09:30:48Z", r#"{"input":1000,"output":100,"totalTokens":3000}"#),
        ]
        .join("\n");
        for parse in [Parse::Fast, Parse::Full] {
            let r = read_bytes_with(0, Path::new("s/--p--/1_a.jsonl"), text.as_bytes(), parse);
            let got: Vec<_> =
                r.entries.iter().map(|e| (e.tokens.total() + e.extra, e.tokens.output, e.extra)).collect();
            assert_eq!(got, vec![(40, 2, 30), (3000, 2000, 0), (3000, 100, 1900)]);
            assert_eq!(r.entries[0].cost, Some(0.5));
            let costs: Vec<f64> = r.entries[1..].iter().map(|e| e.cost.unwrap()).collect();
            assert!((costs[0] - 0.033).abs() < 1e-12 && (costs[1] - 0.0045).abs() < 1e-12, "{costs:?}");
        }
    }

    #[test]
    fn typed_reads_equal_the_full_parse_on_odd_lines() {
        let text = [
            r#"{"type":"message","timestamp":"t","message":{"role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"usage"}],"usage":{"input":1,"output":2.0,"cacheRead":-3,"cacheWrite":4,"cost":{"total":1e-3}}}}"#,
            r#"{"type":"message","message":{"role":"assistant","usage":{"input":1,"cost":null}}}"#,
            r#"{"type":"message","message":{"role":"assistant","usage":{"input":1,"cost":[0.5]}}}"#,
            r#"{"type":"message","message":{"role":"assistant","usage":null}}"#,
            r#"{"type":"message","message":{"role":"assistant","usage":"n/a"}}"#,
            r#"{"type":"message","message":{"role":"user","usage":{"input":9}}}"#,
            r#"{"type":"message","message":{"role":["assistant"],"usage":{"input":9}}}"#,
            r#"{"type":"message","message":"usage"}"#,
            r#"{"type":"compaction","timestamp":"t2"}"#,
            r#"{"type":"compaction","timestamp":null,"message":{"usage":1}}"#,
        ]
        .join("\n");
        let p = Path::new("sessions/--p--/1_x.jsonl");
        let fast = read_bytes_with(0, p, text.as_bytes(), Parse::Fast);
        assert_eq!(format!("{fast:?}"), format!("{:?}", read_bytes_with(0, p, text.as_bytes(), Parse::Full)));
        assert_eq!((fast.entries.len(), fast.compactions.len()), (3, 2));
    }

    /// Issue 31: a recorded cost of 1e308 summed to infinity (JSON null) in `usage` while export's
    /// rows kept 1e308; an impossible recorded cost is disregarded and the call priced, so rows
    /// and totals agree.
    #[test]
    fn regression_recorded_cost_1e308_keeps_rows_and_totals_consistent() {
        let line = r#"{"type":"message","timestamp":"2026-03-15T09:30:48Z","message":{"role":"assistant","model":"claude-sonnet-4-5","usage":{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"cost":{"total":1e308}}}}"#;
        let bytes = format!("{line}\n{}\n", line.replace("09:30:48", "09:31:48"));
        let r = read_bytes(0, std::path::Path::new("s/2026-03-15T09-30-00-000Z_abc.jsonl"), bytes.as_bytes());
        let costs: Vec<f64> = r.entries.iter().filter_map(|e| e.cost).collect();
        assert_eq!(costs.len(), 2);
        assert!(costs.iter().all(|c| c.is_finite() && *c < 1.0), "{costs:?}");
        assert!(costs.iter().sum::<f64>().is_finite());
    }
}
