//! Tests of the cache models ([`super`]): each model's rule, recorded losses replayed, and
//! the property that a cache without losses reads what the ideal one reads.

use super::*;

/// A request of blocks named by small integers, each `tok` tokens, one minute apart.
fn req(blocks: &[u128], tok: u64, minute: i64) -> Request {
    Request::new(blocks.to_vec(), vec![tok; blocks.len()], 1, Some(minute * 60_000))
}

#[test]
fn slug_defaults() {
    assert_eq!(CacheModel::for_slug("anthropic/claude-sonnet-4-5"), CacheModel::Anthropic);
    assert_eq!(CacheModel::for_slug("claude-opus-4-6"), CacheModel::Anthropic);
    assert_eq!(CacheModel::for_slug("openrouter/claude-x"), CacheModel::Anthropic, "the name after the vendor");
    assert_eq!(CacheModel::for_slug("openai/whatever"), CacheModel::OpenAi);
    assert_eq!(CacheModel::for_slug("gpt-5.3-codex"), CacheModel::OpenAi);
    assert_eq!(CacheModel::for_slug("amazon-bedrock/us.anthropic.claude-opus-4-6-v1"), CacheModel::Anthropic);
    assert_eq!(CacheModel::for_slug("claude-opus-4-6@20260101"), CacheModel::Anthropic);
    assert_eq!(CacheModel::for_slug("o3-mini"), CacheModel::OpenAi);
    assert_eq!(CacheModel::for_slug("ollama/o1x"), CacheModel::OpenAi);
    assert_eq!(CacheModel::for_slug("opus"), CacheModel::Ideal);
    assert_eq!(CacheModel::for_slug("google/x"), CacheModel::Gemini);
    assert_eq!(CacheModel::for_slug("gemini-2.5-flash"), CacheModel::Gemini);
    assert_eq!(CacheModel::for_slug("ollama/qwen2.5-coder:32b"), CacheModel::Ideal);
    assert_eq!(CacheModel::for_slug(""), CacheModel::Ideal);
}

#[test]
fn forget_beyond_cuts_the_entries_along_the_request() {
    for m in [CacheModel::OpenAi, CacheModel::Anthropic, CacheModel::Ideal] {
        let mut s = Simulator::new(m);
        s.step(&req(&(1..=20).collect::<Vec<_>>(), 100, 0));
        let next = req(&(1..=21).collect::<Vec<_>>(), 100, 1);
        let mut lost = s.clone();
        lost.forget_beyond(&next, 1_250);
        assert!(lost.step(&next).cached <= 1_250, "{m}: at most the first 12 blocks survive");
        assert!(s.step(&next).cached >= 1_920, "{m}: without the loss the whole previous request is read");
    }
    // Entries off the request's path stay.
    let mut s = Simulator::new(CacheModel::OpenAi);
    s.step(&req(&(100..=120).collect::<Vec<_>>(), 100, 0));
    s.forget_beyond(&req(&(1..=21).collect::<Vec<_>>(), 100, 1), 0);
    assert_eq!(s.step(&req(&(100..=121).collect::<Vec<_>>(), 100, 2)).cached, 2_048);
}

#[test]
fn ideal_is_the_longest_common_prefix_forever() {
    let mut s = Simulator::new(CacheModel::Ideal);
    assert_eq!(s.step(&req(&[1, 2, 3], 10, 0)).cached, 0);
    let o = s.step(&req(&[1, 2, 3, 4], 10, 0));
    assert_eq!((o.prompt, o.cached, o.cached_blocks), (43, 30, 3));
    // Any earlier request counts, even a day later.
    let o = s.step(&req(&[1, 2, 9], 10, 24 * 60));
    assert_eq!(o.cached, 20);
    let o = s.step(&req(&[1, 2, 3, 4, 5], 10, 24 * 60));
    assert_eq!(o.cached, 40);
    assert_eq!(s.step(&req(&[7], 10, 24 * 60)).cached, 0);
}

proptest::proptest! {
    /// Regression (issue 15, `tokens --per-turn` super-linear): the `ideal` cache reads the
    /// longest common block prefix with any earlier request — checked against every earlier
    /// request, over sessions that append, rewrite and shorten.
    #[test]
    fn ideal_reads_the_longest_prefix_of_any_earlier_request(
        ops in proptest::collection::vec((0usize..3, 0usize..12, 1u128..6), 1..40)
    ) {
        let mut s = Simulator::new(CacheModel::Ideal);
        let mut sent: Vec<Vec<u128>> = Vec::new();
        let mut cur: Vec<u128> = Vec::new();
        for (op, at, key) in ops {
            match op {
                0 => cur.push(key),
                1 => { let i = at.min(cur.len()); cur.truncate(i); cur.push(key); }
                _ => cur.truncate(at.min(cur.len())),
            }
            let lcp = |a: &[u128]| a.iter().zip(&cur).take_while(|(x, y)| x == y).count();
            let want = sent.iter().map(|a| lcp(a)).max().unwrap_or(0);
            let o = s.step(&req(&cur, 10, 0));
            proptest::prop_assert_eq!(o.cached, 10 * want as u64);
            proptest::prop_assert_eq!(o.cached_blocks, want);
            sent.push(cur.clone());
        }
    }
}

#[test]
fn openai_minimum_and_rounding() {
    let mut s = Simulator::new(CacheModel::OpenAi);
    // 10 blocks of 100 tokens = 1000 < 1024: nothing cached.
    let ten: Vec<u128> = (1..=10).collect();
    s.step(&req(&ten, 100, 0));
    let eleven: Vec<u128> = (1..=11).collect();
    assert_eq!(s.step(&req(&eleven, 100, 1)).cached, 0, "1000-token match is below 1024");
    // 11 blocks = 1100 matched → rounded down to 1024 + 128·0.
    let twelve: Vec<u128> = (1..=12).collect();
    assert_eq!(s.step(&req(&twelve, 100, 2)).cached, 1024);
    // 12 blocks = 1200 → 1152.
    let o = s.step(&req(&(1..=13).collect::<Vec<_>>(), 100, 3));
    assert_eq!((o.cached, o.write, o.prompt), (1152, 0, 1303));
    // Gemini: same minimum, no rounding.
    let mut g = Simulator::new(CacheModel::Gemini);
    g.step(&req(&ten, 100, 0));
    assert_eq!(g.step(&req(&eleven, 100, 1)).cached, 0);
    assert_eq!(g.step(&req(&twelve, 100, 2)).cached, 1100);
}

#[test]
fn openai_ttl_from_ts_refreshed_on_use() {
    let mut s = Simulator::new(CacheModel::OpenAi);
    let a: Vec<u128> = (1..=20).collect();
    s.step(&req(&a, 100, 0));
    // 5 minutes later: still alive (inclusive), and used → refreshed.
    assert_eq!(s.step(&req(&a, 100, 5)).cached, 1920);
    // A diverging request at minute 9 uses the shared prefix of 10 blocks.
    let mut b: Vec<u128> = (1..=10).collect();
    b.push(99);
    assert_eq!(s.step(&req(&b, 100, 9)).cached, 0, "a 1000-token match is below 1024: no use");
    // Minute 11 is 6 minutes after the last use of `a` (minute 5): expired.
    assert_eq!(s.step(&req(&a, 100, 11)).cached, 0);
    // Times come from ts: 5 min 1 ms later is too late.
    let mut t = Simulator::new(CacheModel::OpenAi);
    t.step(&Request::new(a.clone(), vec![100; 20], 1, Some(0)));
    assert_eq!(t.step(&Request::new(a.clone(), vec![100; 20], 1, Some(TTL_MS + 1))).cached, 0);
    assert_eq!(parse_ts("2026-11-29T17:25:48.608Z"), Some(1_795_973_148_608));
    assert_eq!(parse_ts("2026-11-29T18:25:48.608+01:00"), Some(1_795_973_148_608));
    assert_eq!(parse_ts("yesterday"), None);
}

#[test]
fn entry_refresh_keeps_the_whole_entry_alive() {
    // a at 0; b shares 15 of its 20 blocks at minute 4 (a is used, refreshed to 4);
    // a again at minute 8: 8 − 4 ≤ 5, so all of a is still cached.
    let mut s = Simulator::new(CacheModel::Gemini);
    let a: Vec<u128> = (1..=20).collect();
    s.step(&req(&a, 100, 0));
    let mut b: Vec<u128> = (1..=15).collect();
    b.push(77);
    assert_eq!(s.step(&req(&b, 100, 4)).cached, 1500);
    assert_eq!(s.step(&req(&a, 100, 8)).cached, 2000);
}

/// A request of `n` blocks at `minute`: a 1,200-token system block, then 100-token blocks.
fn system_then_blocks(n: u128, minute: i64) -> Request {
    let keys: Vec<u128> = (0..n).collect();
    let mut tok = vec![100; n as usize];
    tok[0] = 1200;
    Request::new(keys, tok, 1, Some(minute * 60_000))
}

#[test]
fn anthropic_breakpoints_lookback_and_billing() {
    let mut s = Simulator::new(CacheModel::Anthropic);
    let mk = system_then_blocks;
    let o = s.step(&mk(3, 0));
    assert_eq!((o.prompt, o.cached, o.write), (1403, 0, 1403), "first request: all written");
    let o = s.step(&mk(5, 1));
    assert_eq!((o.cached, o.write, o.cached_blocks), (1400, 203, 3), "reads the last-block entry of turn 1");
    // 25 more blocks: the 5-block entry ends outside the last 20 blocks; only the system
    // breakpoint (1200 tokens) is readable.
    let o = s.step(&mk(30, 2));
    assert_eq!((o.cached, o.cached_blocks), (1200, 1));
    assert_eq!(o.write, o.prompt - 1200);
    // The next request reads the 30-block entry (within its last 20).
    assert_eq!(s.step(&mk(40, 3)).cached_blocks, 30);
    // 6 minutes of silence: everything expired.
    assert_eq!(s.step(&mk(41, 9)).cached, 0);
}

/// A Claude Code turn that appends more than 20 blocks (bash-mode user lines, each with its
/// caveat, between two calls): the provider read the previous call's entry through the second
/// breakpoint Claude Code puts at the end of the previous response; the replay read only the
/// system block and wrote the rest again (a real session simulated at +31 % of its bill).
#[test]
fn regression_second_breakpoint_reads_past_a_long_append() {
    let mk = |n: u128, minute: i64, mark: usize| {
        let keys: Vec<u128> = (0..n).collect();
        let mut tok = vec![100; n as usize];
        tok[0] = 1200;
        let mut r = Request::new(keys, tok, 1, Some(minute * 60_000));
        r.set_mark(mark);
        r
    };
    let mut s = Simulator::new(CacheModel::Anthropic);
    s.step(&mk(5, 0, 0));
    // Block 6 is the response; 24 user blocks follow.
    let o = s.step(&mk(30, 1, 6));
    assert_eq!(o.cached_blocks, 5, "the previous entry lies within 20 blocks of the second breakpoint");
    let o = s.step(&mk(60, 2, 0));
    assert_eq!(o.cached_blocks, 1, "without a second breakpoint only the system entry is in reach");
    // Without the mark, the old rule: only the system block.
    let mut s = Simulator::new(CacheModel::Anthropic);
    s.step(&mk(5, 0, 0));
    assert_eq!(s.step(&mk(30, 1, 0)).cached_blocks, 1);
    // A mark at or past the end is none.
    let mut r = mk(5, 0, 0);
    r.set_mark(5);
    assert_eq!(r.mark, 0);
}

/// Regression (issue 34): a Claude Code subagent's call billed 2,326 tokens past its marker as
/// input (the marker sat on the second-to-last message); the replay wrote them and read them at
/// the next call (−7.7 % against the bill). The tail is left unwritten and the entry ends before it.
#[test]
fn regression_uncached_tail_past_the_marker_was_written_and_read() {
    let mut s = Simulator::new(CacheModel::Anthropic);
    let mk = system_then_blocks;
    let first = mk(3, 0);
    let mut o = s.step(&first);
    // 3 tokens past the marker: framing, the nearest boundary is the end; nothing changes.
    s.unmark(&first, 3, &mut o);
    assert_eq!((o.cached, o.write), (0, 1403));
    // The next request's last two blocks (200 tokens) were past the marker.
    let second = mk(6, 1);
    let mut o = s.step(&second);
    assert_eq!((o.cached, o.write), (1400, 303));
    s.unmark(&second, 203, &mut o);
    assert_eq!((o.cached, o.write, o.new_tokens()), (1400, 100, 303), "only the block before the marker is written");
    // The call after reads up to that marker, not the unwritten tail.
    let o = s.step(&mk(7, 2));
    assert_eq!((o.cached_blocks, o.cached), (4, 1500));
    // Other models have no markers.
    let mut openai = Simulator::new(CacheModel::OpenAi);
    let mut o = openai.step(&second);
    let before = o;
    openai.unmark(&second, 203, &mut o);
    assert_eq!(o, before);
}

#[test]
fn anthropic_minimum_for_writes() {
    let mut s = Simulator::new(CacheModel::Anthropic);
    let small = Request::new(vec![1, 2], vec![500, 500], 1, Some(0));
    s.step(&small);
    // Neither the 500-token system entry nor the 1000-token request was written.
    let o = s.step(&Request::new(vec![1, 2, 3], vec![500, 500, 500], 1, Some(1)));
    assert_eq!(o.cached, 0);
    // That request (1500 tokens) was written: an identical request reads it all.
    let o = s.step(&Request::new(vec![1, 2, 3], vec![500, 500, 500], 1, Some(2)));
    assert_eq!((o.cached, o.write), (1500, 3), "framing tokens are never cached");
}

#[test]
fn breaks() {
    let a = req(&[1, 2, 3], 10, 0);
    assert_eq!(break_between(&a, &req(&[1, 2, 3, 4], 10, 0)), None);
    assert_eq!(break_between(&a, &req(&[1, 2, 3], 10, 0)), None);
    assert_eq!(break_between(&a, &req(&[1, 5, 3, 4], 10, 0)), Some(BreakAt { block: 1 }));
    assert_eq!(break_between(&a, &req(&[1, 2], 10, 0)), Some(BreakAt { block: 2 }));
    assert_eq!(common_prefix(&a.ph, &req(&[9], 1, 0).ph), 0);
}

/// Regression (issue 28: a turn whose provider read 13,168 of 32,343 tokens was replayed as read
/// 0, write 32,168): a recorded loss drops only what lies past the provider's read — even when
/// this model's own lifetime would have let everything expire.
#[test]
fn a_replayed_loss_keeps_what_the_provider_read() {
    for m in [CacheModel::OpenAi, CacheModel::Anthropic, CacheModel::Gemini, CacheModel::Ideal] {
        let mut s = Simulator::new(m);
        s.step(&req(&(1..=30).collect::<Vec<_>>(), 1_000, 0));
        // Ten minutes later (past the 5-minute lifetime), the provider still read 13 blocks.
        let next = req(&(1..=32).collect::<Vec<_>>(), 1_000, 10);
        let o = s.step_after_loss(&next, 13_000, 30);
        let want = if m == CacheModel::OpenAi { 13_000 / OPENAI_STEP * OPENAI_STEP } else { 13_000 };
        assert_eq!(o.cached, want, "{m}");
        if m == CacheModel::Anthropic {
            assert_eq!(o.write, o.prompt - o.cached, "{m}: the rest is written again");
        }
        // Nothing the request does not share with the previous one is read.
        let mut s = Simulator::new(m);
        s.step(&req(&(1..=30).collect::<Vec<_>>(), 1_000, 0));
        let other: Vec<u128> = (1..=5).chain(100..127).collect();
        let o = s.step_after_loss(&req(&other, 1_000, 10), 13_000, 5);
        assert!(o.cached <= 5_000, "{m}: {o:?}");
    }
}

/// A request below the model's minimum cacheable prompt is neither read nor written (Anthropic:
/// processed without caching, its input billed at the input rate).
#[test]
fn below_the_model_minimum_nothing_is_cached_or_written() {
    let mut s = Simulator::new(CacheModel::Anthropic).with_min(4_096);
    let o = s.step(&req(&[1, 2, 3], 1_000, 0));
    assert_eq!((o.cached, o.write), (0, 0));
    let o = s.step(&req(&[1, 2, 3, 4, 5], 1_000, 1));
    assert_eq!((o.cached, o.write), (0, o.prompt), "5,000 tokens: written now");
    let mut s = Simulator::new(CacheModel::OpenAi).with_min(4_096);
    s.step(&req(&[1, 2, 3], 1_000, 0));
    assert_eq!(s.step(&req(&[1, 2, 3, 4], 1_000, 1)).cached, 0);
    s.step(&req(&[1, 2, 3, 4, 5], 1_000, 2));
    assert_eq!(s.step(&req(&[1, 2, 3, 4, 5, 6], 1_000, 3)).cached, 4_992, "5,000 tokens were kept");
}

/// Appends of 1–19 blocks (within Anthropic's lookback), calls minutes apart (within the
/// lifetime), block sizes above the minimum.
fn appends() -> impl proptest::strategy::Strategy<Value = Vec<(usize, u64, i64)>> {
    proptest::collection::vec((1usize..19, 1u64..3_000, 0i64..5), 1..25)
}

/// The requests of such a session, block keys numbered in order.
fn session(ops: &[(usize, u64, i64)]) -> Vec<Request> {
    let (mut keys, mut toks, mut min, mut out) = (Vec::new(), Vec::new(), 0i64, Vec::new());
    for &(n, t, gap) in ops {
        for _ in 0..n {
            keys.push(keys.len() as u128 + 1);
            toks.push(t.max(MIN_TOKENS));
        }
        min += gap;
        out.push(Request::new(keys.clone(), toks.clone(), 1, Some(min * 60_000)));
    }
    out
}

proptest::proptest! {
    /// A session with no losses (appends within the lifetime and the lookback): every model with
    /// entries reads exactly what the ideal cache reads (Gemini and Anthropic to the token,
    /// OpenAI rounded down to its 128-token step).
    #[test]
    fn without_losses_every_model_reads_what_the_ideal_cache_reads(ops in appends()) {
        let reqs = session(&ops);
        let mut ideal = Simulator::new(CacheModel::Ideal);
        let mut sims: Vec<Simulator> =
            [CacheModel::OpenAi, CacheModel::Anthropic, CacheModel::Gemini].into_iter().map(Simulator::new).collect();
        for r in &reqs {
            let want = ideal.step(r).cached;
            for s in &mut sims {
                let got = s.step(r).cached;
                let want = if s.model() == CacheModel::OpenAi { want / OPENAI_STEP * OPENAI_STEP } else { want };
                proptest::prop_assert_eq!(got, want, "{}", s.model());
            }
        }
    }

    /// A loss replayed at any turn, the provider having read any whole-block prefix of the
    /// previous request: the replay reads exactly that (never less, never more), then goes on.
    #[test]
    fn dropping_only_past_the_read_never_reads_less_than_the_provider(
        ops in appends(), at in 1usize..25, cut in 0usize..400, late in proptest::bool::ANY,
    ) {
        let mut reqs = session(&ops);
        let at = at.min(reqs.len().saturating_sub(1));
        proptest::prop_assume!(at >= 1);
        if late {
            // The loss comes after an idle hour: past every model's lifetime.
            for r in &mut reqs[at..] {
                r.time_ms = r.time_ms.map(|t| t + 3_600_000);
            }
        }
        let held = reqs[at - 1].len();
        let lim = cut % (held + 1);
        let read = reqs[at].prefix_tokens(lim);
        for m in [CacheModel::OpenAi, CacheModel::Anthropic, CacheModel::Gemini, CacheModel::Ideal] {
            let mut s = Simulator::new(m);
            for r in &reqs[..at] {
                s.step(r);
            }
            let o = s.step_after_loss(&reqs[at], read, held);
            let want = match m {
                _ if lim == 0 || (m != CacheModel::Ideal && read < MIN_TOKENS) => 0,
                CacheModel::OpenAi => read / OPENAI_STEP * OPENAI_STEP,
                _ => read,
            };
            proptest::prop_assert_eq!(o.cached, want, "{} lim {} of {}", m, lim, held);
        }
    }
}

/// Issue 31: blocks of `u64::MAX` tokens (a transcript's u64::MAX usage, calibrated) made
/// `prompt()` overflow — a panic with overflow checks on (`ctxj export`), a wrap in release. The
/// cumulative sizes and the prompt saturate, and every model steps through such a request.
#[test]
fn regression_u64_max_block_tokens_overflowed_the_prompt() {
    let r = Request::new(vec![1, 2, 3], vec![u64::MAX; 3], 1, Some(0));
    assert_eq!(r.prompt(), u64::MAX);
    assert_eq!(r.prefix_tokens(2), u64::MAX);
    for m in CacheModel::ALL {
        let mut s = Simulator::new(m);
        let o = s.step(&r);
        assert!(o.cached <= o.prompt, "{m:?}: {o:?}");
        let o = s.step(&Request::new(vec![1, 2, 3, 4], vec![u64::MAX; 4], 1, Some(1000)));
        assert!(o.cached <= o.prompt, "{m:?}: {o:?}");
    }
}
