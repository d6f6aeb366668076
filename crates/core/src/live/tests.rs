//! The engine against the batch read: any transcript appended in random pieces (the state settled,
//! saved and resumed between some of them, as `ctxj statusline` does between runs) ends in the
//! figures of the same engine fed the whole file once, nothing settled, whose read is exactly
//! what `usage` reads from the whole file.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use proptest::prelude::*;

use super::LiveSession;
use crate::cache::billed::BreakCause;
use crate::import::Format;

/// The figures of a session as text: its [`super::View`]'s counts and own calls and its
/// [`super::Snapshot`] at a fixed time, dollars rounded to a nano-dollar (sums are added in
/// another order once settled).
fn figures(s: &LiveSession) -> String {
    let v = s.view();
    let nano = |c: Option<f64>| c.map(|c| (c * 1e9).round() as i64);
    // The compaction point is left out: the model a compaction is recorded with is the last call
    // read when its line was (a duplicate read later may move that call past it).
    let no_point = super::compact::Overrides { disabled: true, ..Default::default() };
    let inp = super::Inputs { now_ms: 1_800_000_000_000, overrides: no_point, ..Default::default() };
    let mut snap = super::Snapshot::of(s, &inp);
    // A settled call's dollars are read back from JSON, to the last bit or one off it.
    let cost = (nano(snap.cost.take()), nano(snap.last_call_cost.take()), nano(snap.next_call_cost.take()));
    snap.last_compaction = snap.last_compaction.map(|c| super::compact::Observed { model: None, ..c });
    let tail: Vec<String> = v
        .own
        .iter()
        .rev()
        .take(8)
        .map(|e| format!("{} {:?} {:?} {} {:?}", e.ts, e.model, e.tokens, e.cache_creation_1h, nano(e.cost)))
        .collect();
    let counts = (v.calls, v.duplicates, v.compaction_count, nano(v.cost), v.offset + v.own.len());
    format!("{counts:?} {cost:?} {snap:?} {tail:?}")
}

/// Appends `bytes` to a copy of `name` in a fresh folder in pieces cut at `cuts` (fractions of
/// the length), polling after each and settling, saving and resuming after every other; the
/// engine's figures and those of the batch engine (the whole file folded once, nothing settled,
/// its read checked `==` the batch `usage` read), as text.
fn chunked_and_batch(name: &str, bytes: &[u8], agent: Format, cuts: &[f64], keep: usize) -> (String, String) {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join(name);
    let mut f = std::fs::File::create(&path).unwrap();
    let mut at: Vec<usize> = cuts.iter().map(|c| (c * bytes.len() as f64) as usize).collect();
    at.push(bytes.len());
    at.sort_unstable();
    let mut live = LiveSession::open(&path, Some(agent)).unwrap();
    let mut from = 0;
    for (k, &to) in at.iter().enumerate() {
        f.write_all(&bytes[from..to]).unwrap();
        f.flush().unwrap();
        from = to;
        live.poll().unwrap();
        if k % 2 == 1 {
            live.settle_keeping(keep);
            live = LiveSession::resume(&live.save(), &path).expect("the saved state resumes");
        }
    }
    if !bytes.ends_with(b"\n") {
        // The engine waits for a torn last line's end; the batch read takes it as a line.
        f.write_all(b"\n").unwrap();
        live.poll().unwrap();
    }
    let batch = crate::usage::read(&BTreeMap::from([(agent, vec![path.clone()])])).0;
    let mut whole = LiveSession::open(&path, Some(agent)).unwrap();
    whole.poll().unwrap();
    assert_eq!(format!("{:?}", whole.read()), format!("{batch:?}"), "the engine fed the whole file is the batch read");
    let chunked = figures(&live);
    live.settle();
    assert!(live.save().len() < STATE_CAP, "{name}: a settled state of {} bytes", live.save().len());
    assert_eq!(figures(&live), chunked, "settling changes no figure");
    (chunked, figures(&whole))
}

/// The most a settled state may take (the fold's last calls of one file and the tally's recent
/// calls): it does not grow with the session.
const STATE_CAP: usize = 96 << 10;

/// The transcripts of the agents with a usage reader: the shared samples and corpus.
fn transcripts() -> Vec<(PathBuf, Format)> {
    let root = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../.."));
    let var = |k: &str, d: &str| std::env::var_os(k).map(PathBuf::from).unwrap_or_else(|| root.join("shared").join(d));
    let (samples, corpus) = (var("CTXJ_SHARED_SAMPLES", "samples"), var("CTXJ_SHARED_CORPUS", "corpus"));
    assert!(samples.is_dir() && corpus.is_dir(), "{} / {} missing", samples.display(), corpus.display());
    let mut out = Vec::new();
    for base in [samples, corpus] {
        for agent in ["claude-code", "codex", "pi"] {
            for e in walkdir::WalkDir::new(base.join(agent)).into_iter().flatten() {
                let p = e.into_path();
                if p.extension().is_some_and(|x| x == "jsonl") {
                    if let Some(f) = crate::import::detect_file(&p).filter(|f| *f != Format::Ctxj) {
                        out.push((p, f));
                    }
                }
            }
        }
    }
    out.sort();
    out
}

fn cuts(seed: u64, n: usize) -> Vec<f64> {
    let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % 1_000_000) as f64 / 1_000_000.0
        })
        .collect()
}

/// Issue 33: every shared transcript of every agent ctxj reads, fed in random pieces (settled
/// between them), ends in exactly the batch result's figures (calls, duplicates, compactions,
/// dollars, the last calls, the snapshot with its last break), with a state of bounded size.
#[test]
#[cfg_attr(
    not(ctxj_has_samples),
    ignore = "needs ../shared/samples (fails under CI=true; once it is there, `touch build.rs`)"
)]
#[cfg_attr(
    not(ctxj_has_corpus),
    ignore = "needs ../shared/corpus (fails under CI=true; once it is there, `touch build.rs`)"
)]
fn chunked_folds_equal_the_batch_read_on_every_shared_transcript() {
    let all = transcripts();
    let mut agents = std::collections::BTreeSet::new();
    for (i, (p, agent)) in all.iter().enumerate() {
        let bytes = std::fs::read(p).unwrap();
        let name = p.file_name().unwrap().to_string_lossy();
        let (live, batch) = chunked_and_batch(&name, &bytes, *agent, &cuts(i as u64, 12), super::tally::KEEP);
        assert_eq!(live, batch, "{}: the chunked fold differs from the batch read", p.display());
        agents.insert(*agent);
    }
    assert_eq!(agents.len(), 3, "transcripts of Claude Code, Codex and pi: {agents:?}");
}

/// `watch`'s cache breaks of a whole transcript, as (call, lost tokens, cause).
fn live_breaks(p: &Path, agent: Format) -> Vec<(usize, u64, Option<BreakCause>)> {
    let mut live = LiveSession::open(p, Some(agent)).unwrap();
    live.poll().unwrap();
    let inp = super::Inputs { now_ms: 1_800_000_000_000, ..Default::default() };
    let snap = super::Snapshot::of(&live, &inp);
    let events = super::watcher::Watcher::default().step(&live, &snap, inp.now_ms);
    events
        .into_iter()
        .filter_map(|e| match e {
            super::events::Event::CacheBreak { call, lost_tokens, cause, .. } => Some((call, lost_tokens, cause)),
            _ => None,
        })
        .collect()
}

/// Issue 33: `watch`'s cache breaks are `ctxj cache`'s recorded breaks on every shared Claude
/// Code, Codex and pi transcript: the same call, the same lost tokens, the same cause — where
/// `watch` names one; its `None` (the usage lines tell nothing) stands for the causes `cache`
/// names from the reconstructed requests. One rule decides both (`cache::billed::left_in_cache`,
/// `shortfall`): pi's calls below the minimum cacheable prompt, and a compaction before an
/// aborted call, once parted them.
#[test]
#[cfg_attr(
    not(ctxj_has_samples),
    ignore = "needs ../shared/samples (fails under CI=true; once it is there, `touch build.rs`)"
)]
#[cfg_attr(
    not(ctxj_has_corpus),
    ignore = "needs ../shared/corpus (fails under CI=true; once it is there, `touch build.rs`)"
)]
fn breaks_and_causes_equal_cache_on_every_shared_transcript() {
    let mut per_agent: BTreeMap<Format, usize> = BTreeMap::new();
    for (p, agent) in transcripts() {
        let Ok(loaded) = crate::import::load_path(&p, Default::default()) else { continue };
        let table = crate::cache::prices::PriceTable::builtin();
        let batch = crate::cache::billed::billed(&loaded.journal, &crate::tokens::CharEstimator, &table, None);
        let live = live_breaks(&p, agent);
        let theirs: Vec<(usize, u64, BreakCause)> =
            batch.breaks.iter().map(|b| (b.turn, b.rewritten_tokens, b.cause)).collect();
        let same = live.len() == theirs.len()
            && live.iter().zip(&theirs).all(|(l, c)| {
                (l.0, l.1) == (c.0, c.1)
                    && (l.2 == Some(c.2)
                        || l.2.is_none()
                            && matches!(
                                c.2,
                                BreakCause::PrefixChange | BreakCause::SystemOrTools | BreakCause::Provider
                            ))
            });
        assert!(same, "{}: watch {live:?}, cache {theirs:?}", p.display());
        *per_agent.entry(agent).or_default() += theirs.len();
    }
    assert_eq!(per_agent.len(), 3, "breaks compared for Claude Code, Codex and pi: {per_agent:?}");
}

fn small(agent: Format) -> (&'static str, String) {
    match agent {
        Format::ClaudeCode => ("s.jsonl", (0..6).map(|i| format!(
            r#"{{"type":"assistant","requestId":"r{r}","timestamp":"2026-01-01T00:0{i}:00Z","message":{{"id":"m{r}","model":"claude-sonnet-4-5","usage":{{"input_tokens":{i},"cache_creation_input_tokens":1000,"cache_creation":{{"ephemeral_1h_input_tokens":{h}}},"cache_read_input_tokens":{c},"output_tokens":7}}}}}}
{{"type":"system","subtype":"compact_boundary","timestamp":"2026-01-01T00:0{i}:30Z","compactMetadata":{{"trigger":"auto","preTokens":{c}}}}}
"#, r = i / 2, h = i * 100, c = 5000 * i)).collect()),
        Format::Codex => ("rollout-x.jsonl", (0..6).map(|i| format!(
            r#"{{"type":"turn_context","payload":{{"model":"gpt-5.{m}-codex"}}}}
{{"timestamp":"2026-03-14T10:00:0{i}Z","type":"event_msg","payload":{{"type":"token_count","info":{{"total_token_usage":{{"input_tokens":{t}}},"last_token_usage":{{"input_tokens":{t},"cached_input_tokens":40,"output_tokens":5}}}}}}}}
{{"type":"compacted","timestamp":"x{i}"}}
"#, m = i % 2 + 2, t = 100 * (i / 2 + 1))).collect()),
        _ => ("2026_abc.jsonl", (0..6).map(|i| format!(
            r#"{{"type":"message","timestamp":"2026-01-01T00:00:0{i}Z","message":{{"role":"assistant","model":"claude-sonnet-4-5","usage":{{"input":{i},"output":3,"cacheRead":10,"cacheWrite":2,"cost":{{"total":0.{i}1}}}}}}}}
{{"type":"compaction","timestamp":"c{i}"}}
"#)).collect()),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    /// Any cut of a transcript (through lines, through multi-byte characters) folds to the batch
    /// read's figures, for each agent, settled down to the last `keep` calls between the pieces.
    #[test]
    fn any_cut_folds_to_the_batch_read(
        cuts in proptest::collection::vec(0.0f64..1.0, 0..20),
        which in 0usize..3,
        keep in 1usize..4,
    ) {
        let agent = [Format::ClaudeCode, Format::Codex, Format::Pi][which];
        let (name, text) = small(agent);
        let (live, batch) = chunked_and_batch(name, text.trim_end().as_bytes(), agent, &cuts, keep);
        prop_assert_eq!(live, batch);
    }
}

/// A file cut short or replaced while followed is folded again from zero.
#[test]
fn a_rewritten_transcript_refolds_from_zero() {
    let (_, text) = small(Format::Pi);
    let d = tempfile::tempdir().unwrap();
    let p: &Path = &d.path().join("2026_abc.jsonl");
    std::fs::write(p, &text).unwrap();
    let mut live = LiveSession::open(p, None).unwrap();
    live.poll().unwrap();
    assert_eq!(live.read().entries.len(), 6);
    let first_two: String = text.lines().take(2).map(|l| format!("{l}\n")).collect();
    std::fs::write(p, first_two).unwrap();
    live.poll().unwrap();
    assert_eq!((live.read().entries.len(), live.resets()), (1, 1));
}

/// The status line had no last break (issue 33: "the last break with cause and $"); it now
/// carries the session's last `cache_break` by the rule `watch` reports with.
#[test]
fn regression_the_snapshot_carries_the_last_cache_break() {
    let line = |i: usize, read: u64, ts: &str| {
        format!(
            r#"{{"type":"assistant","requestId":"r{i}","timestamp":"{ts}","message":{{"id":"m{i}","model":"claude-sonnet-4-5","usage":{{"input_tokens":5,"cache_creation_input_tokens":1000,"cache_read_input_tokens":{read},"output_tokens":7}}}}}}"#
        )
    };
    // Call 2 reads what call 1 left; call 3 comes 20 minutes later and reads nothing: a ttl break.
    let text =
        [line(1, 0, "2026-01-01T00:00:00Z"), line(2, 1000, "2026-01-01T00:01:00Z"), line(3, 0, "2026-01-01T00:21:00Z")]
            .join("\n")
            + "\n";
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("s.jsonl");
    std::fs::write(&p, text).unwrap();
    let mut live = LiveSession::open(&p, Some(Format::ClaudeCode)).unwrap();
    live.poll().unwrap();
    let snap = super::Snapshot::of(&live, &super::Inputs::default());
    let b = snap.last_break.expect("a last break");
    assert_eq!((b.call, b.cause, b.lost_tokens), (3, Some(crate::cache::billed::BreakCause::Ttl), 2000));
    assert!(b.cost.is_some_and(|c| c > 0.0));
}

/// The breaks `watch` reports on Claude Code calls of `claude-opus-4-5` given as (input, cache
/// read, cache write), a minute apart.
fn breaks_of(calls: &[(u64, u64, u64)]) -> Vec<(usize, u64, Option<BreakCause>)> {
    let text: String = calls
        .iter()
        .enumerate()
        .map(|(i, (inp, read, write))| {
            format!(
                r#"{{"type":"assistant","requestId":"r{i}","timestamp":"2026-01-01T00:{i:02}:00Z","message":{{"id":"m{i}","model":"claude-opus-4-5","usage":{{"input_tokens":{inp},"cache_creation_input_tokens":{write},"cache_read_input_tokens":{read},"output_tokens":7}}}}}}"#
            ) + "\n"
        })
        .collect();
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("s.jsonl");
    std::fs::write(&p, text).unwrap();
    live_breaks(&p, Format::ClaudeCode)
}

/// A prompt below the model's minimum cacheable prompt (4,096 tokens on Opus 4.5) is not cached,
/// so the next call reading nothing of it is no break (`cache`'s rule); `watch` reported one.
#[test]
fn regression_a_prompt_below_the_cache_minimum_was_a_break() {
    // The third call writes: the session caches, and calls 1 and 2 were too short to be cached.
    assert_eq!(breaks_of(&[(3_000, 0, 0), (3_200, 0, 0), (0, 0, 5_000)]), []);
    let b = breaks_of(&[(5_000, 0, 0), (5_200, 0, 0), (0, 0, 6_000)]);
    assert_eq!(b, [(2, 5_000, None), (3, 5_200, None)], "a cacheable prompt not read back is one");
}

/// A session none of whose calls read from or wrote to the cache (a local model) shows no cache:
/// nothing is expected of it, as in `cache`; `watch` reported every call a break.
#[test]
fn regression_a_session_without_any_cache_was_all_breaks() {
    assert_eq!(breaks_of(&[(20_000, 0, 0), (21_000, 0, 0), (22_000, 0, 0)]), []);
    let b = breaks_of(&[(20_000, 0, 0), (21_000, 0, 0), (1_000, 21_000, 500)]);
    assert_eq!(b, [(2, 20_000, None)], "once the session shows a cache, the miss before counts");
}

/// `n` Claude Code calls, two lines each (a message's copies), growing by 1,000 tokens a call.
fn calls(from: usize, n: usize) -> String {
    (from..from + n)
        .map(|i| {
            let l = format!(
                r#"{{"type":"assistant","requestId":"r{i}","timestamp":"2026-01-01T{h:02}:{m:02}:{s:02}Z","message":{{"id":"m{i}","model":"claude-sonnet-4-5","usage":{{"input_tokens":3,"cache_creation_input_tokens":1000,"cache_read_input_tokens":{r},"output_tokens":9}}}}}}"#,
                h = i / 3600 % 24,
                m = i / 60 % 60,
                s = i % 60,
                r = 1000 * i
            );
            format!("{l}\n{l}\n")
        })
        .collect()
}

/// Issue 33: a warm `statusline` run loaded and saved a state with one entry per call (7.5 MB
/// at a 300 MB transcript); settled, the state of a session of 5,000 calls is no larger than
/// that of one of 200, and its figures are those of the whole file folded once.
#[test]
fn regression_warm_state_grew_with_the_session() {
    let d = tempfile::tempdir().unwrap();
    let size = |n: usize| {
        let p = d.path().join(format!("s{n}.jsonl"));
        std::fs::write(&p, calls(0, n)).unwrap();
        let mut live = LiveSession::open(&p, Some(Format::ClaudeCode)).unwrap();
        live.poll().unwrap();
        let whole = figures(&live);
        live.settle();
        assert_eq!(figures(&live), whole, "settling changes no figure");
        let v = live.view();
        assert_eq!((v.calls, v.duplicates, v.offset + v.own.len()), (n, n, n));
        live.save().len()
    };
    let (short, long) = (size(200), size(5_000));
    // Only the numbers written grow (more digits).
    assert!(long <= short + short / 20, "a state of {long} bytes at 5,000 calls against {short} at 200");
    assert!(long < STATE_CAP);
}

/// `watch` numbers calls among the session's own even when earlier ones were settled.
#[test]
fn a_settled_session_numbers_new_calls_after_the_settled_ones() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("s.jsonl");
    std::fs::write(&p, calls(0, 100)).unwrap();
    let mut live = LiveSession::open(&p, Some(Format::ClaudeCode)).unwrap();
    live.poll().unwrap();
    live.settle_keeping(4);
    let inp = super::Inputs { now_ms: 1_800_000_000_000, ..Default::default() };
    let mut w = super::watcher::Watcher::after(&live, &super::Snapshot::of(&live, &inp));
    std::fs::OpenOptions::new().append(true).open(&p).unwrap().write_all(calls(100, 1).as_bytes()).unwrap();
    live.poll().unwrap();
    let events = w.step(&live, &super::Snapshot::of(&live, &inp), inp.now_ms);
    let call = events.iter().find_map(|e| match e {
        super::events::Event::Call { call, cache, .. } => Some((*call, *cache)),
        _ => None,
    });
    assert_eq!(call, Some((101, super::events::CacheUse::Hit)));
}
