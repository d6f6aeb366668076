//! Issue 29, OpenCode and Kilo CLI stores: every session of the corpus's `opencode.db` and
//! `kilo.db` imports (`store.db#<session>`), validates clean, has its request hash reproduced by
//! `show` for every turn, and its recorded prompt tokens equal ccusage 20.0.24's own per-session
//! input + cache read + cache write (`../shared/corpus/ccusage/<agent>-session.json`); the store
//! is never written beside; a store of several sessions asks for one by name.

use std::path::Path;

use serde_json::Value;

use crate::common::{ctxj, shared_corpus};
use ctxj_core::import::Format;

/// ccusage's Σ input + cache read + cache write of one session (OpenCode's `input` excludes the
/// cache, so this is the prompt tokens the provider reported).
fn ccusage_prompt(c: &Path, agent: &str, session: &str) -> u64 {
    let v: Value =
        serde_json::from_slice(&std::fs::read(c.join(format!("ccusage/{agent}-session.json"))).unwrap()).unwrap();
    let s = v["sessions"].as_array().unwrap().iter().find(|s| s["sessionId"] == session).unwrap();
    ["inputTokens", "cacheReadTokens", "cacheCreationTokens"].iter().map(|k| s[k].as_u64().unwrap()).sum()
}

fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

#[test]
#[cfg_attr(
    not(ctxj_has_corpus),
    ignore = "needs ../shared/corpus (fails under CI=true; once it is there, `touch build.rs`)"
)]
fn every_store_session_imports_validates_reproduces_hashes_and_equals_ccusage() {
    let c = shared_corpus();
    let out = tempfile::tempdir().unwrap();
    let mut n = 0;
    for (rel, agent, harness) in [("opencode/opencode.db", "opencode", "opencode"), ("kilo/kilo.db", "kilo", "kilo")] {
        let db = c.join(rel);
        let before = listing(db.parent().unwrap());
        assert_eq!(ctxj_core::import::detect_file(&db), Some(Format::OpenCode), "{rel}");
        for s in ctxj_core::import::opencode::sessions(&db).unwrap() {
            let spec = format!("{}#{}", db.display(), s.id);
            let im = ctxj_core::import::import_file(&db, Format::OpenCode, Some(&s.id)).unwrap();
            let Some(ctxj_core::journal::Body::Session(sr)) = im.journal.records.first().map(|r| &r.body) else {
                panic!("{spec}: no session record")
            };
            assert_eq!(sr.harness.as_deref(), Some(harness));
            let got: u64 = im
                .journal
                .records
                .iter()
                .filter_map(|r| match &r.body {
                    ctxj_core::journal::Body::Assistant(a) => a.usage.as_ref().and_then(|u| u.prompt_tokens),
                    _ => None,
                })
                .sum();
            assert_eq!(got, ccusage_prompt(&c, agent, &s.id), "{spec}: Σ prompt tokens");
            let dest = out.path().join(format!("s{n}"));
            n += 1;
            ctxj().arg("import").arg(&spec).arg("--out").arg(&dest).assert().success();
            let v = ctxj().args(["validate", "--json"]).arg(&dest).output().unwrap();
            assert!(v.status.success(), "{spec}: {}", String::from_utf8_lossy(&v.stdout));
            let jp = dest.join("journal.jsonl");
            let j = ctxj_core::journal::parse_bytes(&jp, &std::fs::read(&jp).unwrap(), Default::default()).unwrap();
            assert!(!j.turns.is_empty(), "{spec}: no turns");
            let recorded = |k: usize| match &j.records[j.turns[k - 1]].body {
                ctxj_core::journal::Body::Assistant(a) => {
                    a.prompt_sha256.clone().expect("every turn has prompt_sha256")
                }
                _ => unreachable!(),
            };
            for k in 1..=j.turns.len() {
                let shown =
                    ctxj().args(["show", "--at", "turn", &k.to_string(), "--json"]).arg(&spec).output().unwrap();
                assert!(shown.status.success(), "{spec} turn {k}: {}", String::from_utf8_lossy(&shown.stderr));
                let bytes = &shown.stdout[..shown.stdout.len() - 1];
                assert_eq!(ctxj_core::projection::block::sha256_hex(bytes), recorded(k), "{spec} turn {k}");
            }
        }
        assert_eq!(listing(db.parent().unwrap()), before, "{rel}: something was written beside the store");
    }
    assert_eq!(n, 4, "1 OpenCode and 3 Kilo sessions");
}

#[test]
#[cfg_attr(
    not(ctxj_has_corpus),
    ignore = "needs ../shared/corpus (fails under CI=true; once it is there, `touch build.rs`)"
)]
fn a_store_of_one_session_opens_and_one_of_several_asks_which() {
    let c = shared_corpus();
    ctxj().arg("turns").arg(c.join("opencode/opencode.db")).assert().success();
    let out = ctxj().arg("turns").arg(c.join("kilo/kilo.db")).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("3 main sessions") && err.contains("ses_31eb08fcfffe5mP6m37tYko1St"), "{err}");
    let out = ctxj().arg("turns").arg(format!("{}#ses_nope", c.join("kilo/kilo.db").display())).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("ses_nope"));
}
