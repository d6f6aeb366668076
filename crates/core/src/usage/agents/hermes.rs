//! Hermes Agent (`${HERMES_HOME:-~/.hermes}/state.db`, and `profiles/*/state.db`) counted the way
//! ccusage 20.0.24 counts it: one entry per `sessions` row, dated at `started_at` (seconds or
//! milliseconds), with `input_tokens`, `output_tokens`, `cache_read_tokens`,
//! `cache_write_tokens` and `reasoning_tokens` as extra (priced as output); a session id is
//! counted once across databases. Cost: `actual_cost_usd`, else `estimated_cost_usd`, when above
//! 0; else the built-in price of the model. The log has no per-request usage.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::util::{columns, from_epoch, open_db, walk};
use super::Agent;
use crate::usage::entry::{Read, SessionKey, Tokens, UsageEntry};

/// `state.db` and `profiles/*/state.db` under a root.
pub fn files(root: &Path) -> Vec<PathBuf> {
    if root.is_file() {
        return vec![root.to_path_buf()];
    }
    let mut v: Vec<PathBuf> = Some(root.join("state.db")).filter(|p| p.is_file()).into_iter().collect();
    v.extend(walk(&root.join("profiles"), |p| {
        super::util::name(p) == "state.db" && super::util::folder(p, 2) == "profiles"
    }));
    v
}

/// The entries of the files.
pub fn read(paths: &[PathBuf], first: usize) -> Read {
    let mut out = Read::default();
    let mut seen = HashSet::new();
    for (i, p) in paths.iter().enumerate() {
        let Some((c, _tmp)) = open_db(p) else { continue };
        let cols = columns(&c, "sessions");
        let col = |name: &str, cast: &str| {
            if cols.iter().any(|c| c == name) {
                format!("{cast}({name})")
            } else {
                "NULL".to_string()
            }
        };
        let sql = format!(
            "SELECT id, {}, {}, {}, {}, {}, {}, {}, {}, {} FROM sessions",
            col("model", ""),
            col("started_at", ""),
            col("input_tokens", ""),
            col("output_tokens", ""),
            col("cache_read_tokens", ""),
            col("cache_write_tokens", ""),
            col("reasoning_tokens", ""),
            col("estimated_cost_usd", ""),
            col("actual_cost_usd", ""),
        );
        let Ok(mut st) = c.prepare(&sql) else { continue };
        type Row = (String, Option<String>, Option<f64>, [Option<i64>; 5], Option<f64>, Option<f64>);
        let rows = st.query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, Option<String>>(1)?,
                r.get::<_, Option<f64>>(2)?,
                [r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?, r.get(7)?],
                r.get::<_, Option<f64>>(8)?,
                r.get::<_, Option<f64>>(9)?,
            ))
        });
        let Ok(rows) = rows else { continue };
        for (id, model, started, t, estimated, actual) in rows.flatten().collect::<Vec<Row>>() {
            let u = |x: Option<i64>| x.and_then(|v| u64::try_from(v).ok()).unwrap_or(0);
            let tokens = Tokens { input: u(t[0]), output: u(t[1]), cache_read: u(t[2]), cache_creation: u(t[3]) };
            let extra = u(t[4]);
            if (tokens.is_zero() && extra == 0) || !seen.insert(id.clone()) {
                continue;
            }
            let recorded = actual.filter(|c| *c > 0.0).or(estimated.filter(|c| *c > 0.0));
            let sk = Arc::new(SessionKey { agent: Agent::Hermes, project: String::new(), session: id });
            let ts = started.map(from_epoch).unwrap_or_default();
            out.entries.push(UsageEntry::with_extra(sk, first + i, ts, model, tokens, extra, 0, recorded));
        }
    }
    out
}
