//! Goose (`$GOOSE_PATH_ROOT/data/sessions/sessions.db`, else the first existing of
//! `~/.local/share/goose/sessions/sessions.db`, `~/Library/Application Support/goose/…` and
//! `~/.local/share/Block/goose/…`) counted the way ccusage 20.0.24 counts it: one entry per
//! `sessions` row, `accumulated_{input,output,total}_tokens`, else `{input,output,total}_tokens`;
//! total − input − output is extra (priced as output); no cache columns, so no cache split; the
//! model from `model_config_json.model_name`; dated at `created_at`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::util::{columns, open_db};
use super::{Agent, Env};
use crate::usage::entry::{Read, SessionKey, Tokens, UsageEntry};

/// The default database folders (ccusage's order; the first existing one is read).
pub fn roots(e: &Env) -> Vec<PathBuf> {
    if let Some(r) = e.set("GOOSE_PATH_ROOT") {
        return vec![Path::new(&r).join("data/sessions")];
    }
    let all: Vec<PathBuf> = [
        ".local/share/goose/sessions",
        "Library/Application Support/goose/sessions",
        ".local/share/Block/goose/sessions",
    ]
    .iter()
    .filter_map(|d| e.home(d))
    .collect();
    all.iter().find(|d| d.join("sessions.db").is_file()).cloned().into_iter().collect()
}

/// `sessions.db` in a folder, or in its `data/sessions/` (the folder named as `GOOSE_PATH_ROOT`
/// names it).
pub fn files(root: &Path) -> Vec<PathBuf> {
    if root.is_file() {
        return vec![root.to_path_buf()];
    }
    [root.join("sessions.db"), root.join("data/sessions/sessions.db")]
        .into_iter()
        .find(|p| p.is_file())
        .into_iter()
        .collect()
}

/// The entries of the files.
pub fn read(paths: &[PathBuf], first: usize) -> Read {
    let mut out = Read::default();
    for (i, p) in paths.iter().enumerate() {
        let Some((c, _tmp)) = open_db(p) else { continue };
        let cols = columns(&c, "sessions");
        let col = |name: &str| if cols.iter().any(|c| c == name) { name.to_string() } else { "NULL".into() };
        let sql = format!(
            "SELECT id, {}, {}, {}, {}, {}, {}, {}, {} FROM sessions",
            col("accumulated_input_tokens"),
            col("accumulated_output_tokens"),
            col("accumulated_total_tokens"),
            col("input_tokens"),
            col("output_tokens"),
            col("total_tokens"),
            col("model_config_json"),
            col("created_at"),
        );
        let Ok(mut st) = c.prepare(&sql) else { continue };
        let rows = st.query_map([], |r| {
            let t: [Option<i64>; 6] = [r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?];
            Ok((r.get::<_, String>(0)?, t, r.get::<_, Option<String>>(7)?, r.get::<_, Option<String>>(8)?))
        });
        let Ok(rows) = rows else { continue };
        for (id, t, config, created) in rows.flatten() {
            let u = |x: Option<i64>| x.and_then(|v| u64::try_from(v).ok());
            let (input, output, total) = if t[0].is_some() || t[1].is_some() {
                (u(t[0]).unwrap_or(0), u(t[1]).unwrap_or(0), u(t[2]).unwrap_or(0))
            } else {
                (u(t[3]).unwrap_or(0), u(t[4]).unwrap_or(0), u(t[5]).unwrap_or(0))
            };
            let extra = total.saturating_sub(input.saturating_add(output));
            let tokens = Tokens { input, output, ..Tokens::default() };
            if tokens.is_zero() && extra == 0 {
                continue;
            }
            let model = config
                .and_then(|c| serde_json::from_str::<serde_json::Value>(&c).ok())
                .and_then(|v| super::util::s(&v, "model_name"));
            let ts = created
                .map(|c| if c.contains('T') { c } else { format!("{}Z", c.replace(' ', "T")) })
                .unwrap_or_default();
            let sk = Arc::new(SessionKey { agent: Agent::Goose, project: String::new(), session: id });
            out.entries.push(UsageEntry::with_extra(sk, first + i, ts, model, tokens, extra, 0, None));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    /// `usage --agent goose DIR` reads DIR as Goose's data folder, the folder `GOOSE_PATH_ROOT`
    /// names (its database is `DIR/data/sessions/sessions.db`); only `DIR/sessions.db` was looked
    /// for, so the folder the variable reads gave "no goose log found".
    #[test]
    fn regression_goose_path_root_folder_found_no_database() {
        let d = tempfile::tempdir().unwrap();
        let db = d.path().join("data/sessions/sessions.db");
        std::fs::create_dir_all(db.parent().unwrap()).unwrap();
        std::fs::write(&db, b"").unwrap();
        assert_eq!(super::files(d.path()), vec![db.clone()]);
        assert_eq!(super::files(db.parent().unwrap()), vec![db]);
    }
}
