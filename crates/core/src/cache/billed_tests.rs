//! Tests of the session as billed ([`super`]): per-turn prices, the recorded cache timeline and
//! its causes, the environment replays share.

use super::*;
use crate::tokens::CharEstimator;

fn journal(lines: &[String]) -> Journal {
    let text = lines.join("\n") + "\n";
    crate::journal::parse_bytes(std::path::Path::new("j.jsonl"), text.as_bytes(), Default::default())
        .expect("valid journal")
}

/// A journal: per call (seconds, model, prompt, read, write).
fn calls(c: &[(u32, &str, u64, u64, u64)]) -> Journal {
    journal(&call_lines(c))
}

/// The lines of [`calls`]'s journal.
fn call_lines(c: &[(u32, &str, u64, u64, u64)]) -> Vec<String> {
    let mut l = vec![
        r#"{"rev":1,"ts":"2026-11-29T10:00:00Z","kind":"session","id":"s","model":"claude-opus-4-6"}"#.to_string()
    ];
    for (i, &(s, m, p, r, w)) in c.iter().enumerate() {
        let ts = |x: u32| format!("2026-11-29T10:{:02}:{:02}Z", x / 60, x % 60);
        l.push(format!(r#"{{"rev":{},"ts":"{}","kind":"user","id":"u{i}","text":"q{i}"}}"#, l.len() + 1, ts(s)));
        l.push(format!(
            r#"{{"rev":{},"ts":"{}","kind":"assistant","id":"a{i}","text":"a","model":"{m}","usage":{{"prompt_tokens":{p},"cached_tokens":{r},"cache_write_tokens":{w},"completion_tokens":10}}}}"#,
            l.len() + 1,
            ts(s + 1)
        ));
    }
    l
}

#[test]
fn an_unexplained_shortfall_is_a_provider_break_priced_at_write_minus_read() {
    let j = calls(&[
        (0, "claude-opus-4-6", 30_000, 0, 30_000),
        (10, "claude-opus-4-6", 40_000, 30_000, 10_000),
        (15, "claude-opus-4-6", 42_000, 10_000, 32_000),
    ]);
    let b = billed(&j, &CharEstimator, &PriceTable::builtin(), None);
    assert_eq!(b.breaks.len(), 1);
    let x = &b.breaks[0];
    assert_eq!(
        (x.turn, x.cause, x.expected_read, x.cache_read, x.rewritten_tokens),
        (3, BreakCause::Provider, 40_000, 10_000, 30_000)
    );
    assert!((x.cost.unwrap() - 30_000.0 * (6.25 - 0.5) / 1e6).abs() < 1e-12);
    assert_eq!(b.cache_write, Some(72_000));
    assert_eq!(b.input, Some(0));
    assert_eq!(b.hit_rate, Some(40_000.0 / 112_000.0));
    assert!(b.unknown.is_empty());
}

#[test]
fn regression_a_compaction_pays_for_its_summarizer_call() {
    let mut l =
        call_lines(&[(0, "claude-opus-4-6", 30_000, 0, 30_000), (10, "claude-opus-4-6", 31_000, 30_000, 1_000)]);
    let without = billed(&journal(&l), &CharEstimator, &PriceTable::builtin(), None);
    l.push(r#"{"rev":6,"ts":"2026-11-29T10:00:20Z","kind":"compact","trigger":"auto","summary":"s","first_kept":5,"usage":{"prompt_tokens":20000,"cached_tokens":0,"completion_tokens":1000}}"#.into());
    let with = billed(&journal(&l), &CharEstimator, &PriceTable::builtin(), None);
    assert_eq!((without.summarizer_calls, with.summarizer_calls), (0, 1));
    // claude-opus-4-6 (session model): $5/M input, $25/M output.
    let call = (20_000.0 * 5.0 + 1_000.0 * 25.0) / 1e6;
    assert!((with.summarizer_cost.unwrap() - call).abs() < 1e-12, "{:?}", with.summarizer_cost);
    assert!((with.cost.unwrap() - without.cost.unwrap() - call).abs() < 1e-12);
    assert_eq!(with.turns, without.turns, "the summarizer call is no turn");
}

#[test]
fn an_aborted_call_is_skipped_and_the_lifetime_seen_is_kept() {
    // Call 2 billed nothing (pi's aborted requests); call 3 reads what call 1 left, 10 min on.
    let j = calls(&[
        (0, "claude-opus-4-6", 30_000, 0, 30_000),
        (10, "claude-opus-4-6", 0, 0, 0),
        (600, "claude-opus-4-6", 31_000, 30_000, 1_000),
    ]);
    let b = billed(&j, &CharEstimator, &PriceTable::builtin(), None);
    assert!(b.breaks.is_empty(), "{:?}", b.breaks);
    assert_eq!(b.kept_idle_seconds, Some(600.0));
}

#[test]
fn the_environment_prices_each_turn_at_its_model_and_caps_the_unexplained_losses() {
    let j = calls(&[
        (0, "claude-opus-4-6", 30_000, 0, 30_000),
        (10, "claude-sonnet-4-5", 31_000, 0, 31_000),
        (20, "claude-sonnet-4-5", 32_000, 5_000, 27_000),
    ]);
    let b = billed(&j, &CharEstimator, &PriceTable::builtin(), None);
    let flags: Vec<(BreakCause, bool)> = b.breaks.iter().map(|x| (x.cause, x.environment)).collect();
    assert_eq!(flags, [(BreakCause::ModelSwitch, false), (BreakCause::Provider, true)]);
    let p = crate::cache::Pricing::for_session(&j, None, None, PriceTable::builtin());
    let env = p.environment(&b);
    let sonnet = PriceTable::builtin().lookup("claude-sonnet-4-5").unwrap().1;
    assert_eq!((env.model(2), env.price(2)), (Some("claude-sonnet-4-5"), Some(sonnet)));
    assert_eq!((env.read_cap(2), env.read_cap(3)), (None, Some(5_000 + 1_024)));
    let ignored = p.clone().with_provider_breaks(crate::cache::ProviderBreaks::Ignore).environment(&b);
    assert_eq!((ignored.read_cap(3), ignored.price(2)), (None, Some(sonnet)));
    let forced = crate::cache::Pricing::for_session(&j, Some("claude-opus-4-6"), None, PriceTable::builtin());
    assert_eq!(forced.environment(&b).price(2), None, "--model prices every turn as that model");
}

#[test]
fn small_shortfalls_are_within_tolerance() {
    // 1,000 tokens short: under 1,024.
    let j = calls(&[(0, "claude-opus-4-6", 30_000, 0, 30_000), (10, "claude-opus-4-6", 31_000, 29_000, 2_000)]);
    assert!(billed(&j, &CharEstimator, &PriceTable::builtin(), None).breaks.is_empty());
}

#[test]
fn causes_in_order_ttl_model_switch_floor() {
    let j = calls(&[
        (0, "claude-opus-4-6", 30_000, 0, 30_000),
        (400, "claude-opus-4-6", 31_000, 0, 31_000),
        (410, "claude-sonnet-4-5", 32_000, 0, 32_000),
        (420, "claude-sonnet-4-5", 33_000, 0, 33_000),
    ]);
    let b = billed(&j, &CharEstimator, &PriceTable::builtin(), None);
    let causes: Vec<BreakCause> = b.breaks.iter().map(|x| x.cause).collect();
    assert_eq!(causes, [BreakCause::Ttl, BreakCause::ModelSwitch, BreakCause::SystemOrTools]);
    // Each message priced at its own model.
    let opus = PriceTable::builtin().lookup("claude-opus-4-6").unwrap().1;
    let sonnet = PriceTable::builtin().lookup("claude-sonnet-4-5").unwrap().1;
    assert_eq!(b.per_turn[2].cost, Some(sonnet.billed(0, 32_000, 0, 0, 10)));
    assert_eq!(b.per_turn[0].cost, Some(opus.billed(0, 30_000, 0, 0, 10)));
}

#[test]
fn a_call_is_billed_at_the_cost_its_log_recorded_else_at_its_price() {
    let j = journal(&[
        r#"{"rev":1,"ts":"2026-11-29T10:00:00Z","kind":"session","id":"s","model":"qwen3:8b"}"#.into(),
        r#"{"rev":2,"ts":"2026-11-29T10:00:01Z","kind":"user","id":"u","text":"q"}"#.into(),
        r#"{"rev":3,"ts":"2026-11-29T10:00:02Z","kind":"assistant","id":"a","text":"x","usage":{"prompt_tokens":5000,"completion_tokens":3,"cost_usd":0.0}}"#.into(),
        r#"{"rev":4,"ts":"2026-11-29T10:00:03Z","kind":"user","id":"u2","text":"q"}"#.into(),
        r#"{"rev":5,"ts":"2026-11-29T10:00:04Z","kind":"assistant","id":"a2","text":"y","usage":{"prompt_tokens":6000,"completion_tokens":3}}"#.into(),
        r#"{"rev":6,"ts":"2026-11-29T10:00:05Z","kind":"model","model":"gpt-5"}"#.into(),
        r#"{"rev":7,"ts":"2026-11-29T10:00:06Z","kind":"user","id":"u3","text":"q"}"#.into(),
        r#"{"rev":8,"ts":"2026-11-29T10:00:07Z","kind":"assistant","id":"a3","text":"z","usage":{"prompt_tokens":1000,"completion_tokens":1,"cost_usd":9.0}}"#.into(),
    ]);
    let b = billed(&j, &CharEstimator, &PriceTable::builtin(), None);
    assert_eq!((b.turns, b.unpriced_turns, b.recorded_cost_turns), (3, 1, 2));
    // The recorded cost wins over a known price (ccusage's rule, and `usage`'s); the call with
    // neither is unpriced.
    assert_eq!(b.cost, Some(0.0 + 9.0));
}

/// Unseen sweep 2 after h28c priced MiniMax: OpenClaw sessions that record the provider's charge
/// per call were billed by `cache` at the table's price ($0.6082) while `usage` and ccusage billed
/// the recorded cost ($0.5898). "As billed" is one figure: the recorded cost wins where there is one.
#[test]
fn regression_cache_billed_a_priced_model_at_the_table_not_the_recorded_cost() {
    let j = journal(&[
        r#"{"rev":1,"ts":"2026-11-29T10:00:00Z","kind":"session","id":"s","model":"claude-sonnet-4-5"}"#.into(),
        r#"{"rev":2,"ts":"2026-11-29T10:00:01Z","kind":"user","id":"u","text":"q"}"#.into(),
        r#"{"rev":3,"ts":"2026-11-29T10:00:02Z","kind":"assistant","id":"a","text":"x","usage":{"prompt_tokens":5000,"completion_tokens":3,"cost_usd":0.0123}}"#.into(),
    ]);
    let b = billed(&j, &CharEstimator, &PriceTable::builtin(), None);
    assert_eq!(b.cost, Some(0.0123));
    assert_eq!(b.recorded_cost_turns, 1);
}

#[test]
fn usage_without_writes_leaves_them_unknown() {
    let j = journal(&[
        r#"{"rev":1,"ts":"2026-11-29T10:00:00Z","kind":"session","id":"s","model":"gpt-5"}"#.into(),
        r#"{"rev":2,"ts":"2026-11-29T10:00:01Z","kind":"user","id":"u","text":"q"}"#.into(),
        r#"{"rev":3,"ts":"2026-11-29T10:00:02Z","kind":"assistant","id":"a","text":"x","usage":{"prompt_tokens":5000,"cached_tokens":0,"completion_tokens":3}}"#.into(),
    ]);
    let b = billed(&j, &CharEstimator, &PriceTable::builtin(), None);
    assert_eq!(b.cache_write, None);
    assert_eq!(b.unknown, ["cache_write"]);
    assert_eq!(b.input, Some(5000));
    assert_eq!(b.cost, Some((5000.0 * 1.25 + 3.0 * 10.0) / 1e6));
}

#[test]
fn regression_a_compaction_before_an_aborted_call_was_not_the_break_cause() {
    // A compaction, then a call that billed nothing (pi's aborted request), then a call that reads
    // nothing of what call 1 left: the compaction lies between the two calls compared.
    let mut l = call_lines(&[
        (0, "claude-opus-4-6", 30_000, 0, 30_000),
        (10, "claude-opus-4-6", 0, 0, 0),
        (20, "claude-opus-4-6", 8_000, 0, 8_000),
    ]);
    l.insert(
        3,
        r#"{"rev":0,"ts":"2026-11-29T10:00:05Z","kind":"compact","trigger":"auto","summary":"s","first_kept":2}"#
            .into(),
    );
    for (i, x) in l.iter_mut().enumerate() {
        let at = x.find("\"rev\":").unwrap() + 6;
        let end = at + x[at..].find(',').unwrap();
        x.replace_range(at..end, &(i + 1).to_string());
    }
    let b = billed(&journal(&l), &CharEstimator, &PriceTable::builtin(), None);
    let causes: Vec<(usize, BreakCause)> = b.breaks.iter().map(|x| (x.turn, x.cause)).collect();
    assert_eq!(causes, [(3, BreakCause::Compaction)]);
}

#[test]
fn a_prompt_below_the_minimum_leaves_nothing_when_no_write_is_reported() {
    // claude-opus-4-5 caches prompts of 4,096 tokens and more; no cache write reported yet.
    assert_eq!(left_in_cache(3_000, 0, 0, Some("claude-opus-4-5"), false), 0);
    assert_eq!(left_in_cache(5_000, 0, 0, Some("claude-opus-4-5"), false), 5_000);
    assert_eq!(left_in_cache(5_000, 1_000, 500, Some("claude-opus-4-5"), false), 1_500, "a write: read + write");
    assert_eq!(left_in_cache(5_000, 1_000, 0, Some("claude-opus-4-5"), true), 1_000);
}

/// A Codex session (OpenAI: no cache writes reported, reads in 128-token steps): per call
/// (prompt, cached), each call 2 s after the previous, each user message 40 words.
fn codex_calls(c: &[(u64, u64)]) -> Journal {
    let mut l =
        vec![r#"{"rev":1,"ts":"2026-11-29T10:00:00Z","kind":"session","id":"s","model":"gpt-5","harness":"codex"}"#
            .to_string()];
    for (i, &(p, r)) in c.iter().enumerate() {
        let ts = format!("2026-11-29T10:00:{:02}Z", 2 * i + 1);
        let text = "word ".repeat(40);
        l.push(format!(r#"{{"rev":{},"ts":"{ts}","kind":"user","id":"u{i}","text":"{text}"}}"#, l.len() + 1));
        l.push(format!(
            r#"{{"rev":{},"ts":"{ts}","kind":"assistant","id":"a{i}","text":"ok","usage":{{"prompt_tokens":{p},"cached_tokens":{r},"completion_tokens":50}}}}"#,
            l.len() + 1
        ));
    }
    journal(&l)
}

/// Corpus Codex `019b04ae` (issue 34): OpenAI read only the 3,072-token system prefix at three
/// of seven calls although the previous call, seconds before, had sent the same prefix 400–900
/// tokens longer. Each shortfall is under the break tolerance, so no break was reported — and
/// none was replayed: the replay read what an ideal cache keeps, −23 % against the bill.
/// A loss under the tolerance is still the provider's (its caching is best effort: a request
/// may be routed to a machine that does not hold the entry); the replay follows it, the break
/// report does not list it.
#[test]
fn regression_replay_ignored_provider_losses_below_the_break_tolerance() {
    let recorded = [(3_505, 3_072), (3_711, 3_072), (3_815, 3_584), (3_930, 3_072), (4_040, 3_072), (4_150, 3_968)];
    let j = codex_calls(&recorded);
    let table = PriceTable::builtin();
    let b = billed(&j, &CharEstimator, &table, None);
    assert!(b.breaks.is_empty(), "{:?}", b.breaks);
    // Turn 3 read all but the last partial 128-token step of turn 2's prompt: no loss.
    assert_eq!(b.unreported_losses, [(2, 433), (4, 743), (5, 858)]);
    let p = crate::cache::Pricing::for_session(&j, None, None, table);
    let s = crate::strategy::parse("recorded").unwrap();
    let sim = crate::cache::simulate(&j, &s, &CharEstimator, p.options_with(&b), |_, _| {});
    for (t, &(_, read)) in sim.turns.iter().zip(&recorded) {
        assert!(
            t.cached.abs_diff(read) < 128 + 64,
            "turn {}: read {} where the provider read {read}",
            t.turn,
            t.cached
        );
    }
    let (got, want) = (sim.summary.cost.unwrap(), b.cost.unwrap());
    assert!((got / want - 1.0).abs() < 0.05, "replayed ${got:.5} against billed ${want:.5}");
    // `ignore` replays no loss, reported or not.
    let ignore = p.with_provider_breaks(crate::cache::ProviderBreaks::Ignore);
    let kept = crate::cache::simulate(&j, &s, &CharEstimator, ignore.options_with(&b), |_, _| {});
    assert!(kept.turns[1].cached > 3_300, "{}", kept.turns[1].cached);
}
