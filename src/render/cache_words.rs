//! The sentences that explain cache breaks: a simulated break's `reason` ([`divergence`]) and a
//! recorded break's `detail` ([`evidence`]), from the library's typed values
//! ([`ctxj_core::cache::explain::Divergence`], [`ctxj_core::cache::billed::Evidence`]); the
//! durations they quote in prose ([`super::format::duration`]).

use ctxj_core::cache::billed::{Evidence, TOLERANCE_SHARE, TOLERANCE_TOKENS};
use ctxj_core::cache::explain::{BlockRef, Divergence};
use ctxj_core::projection::diff::Cause;
use ctxj_core::text::escape_line;

use super::format::{duration, DurationStyle};

/// A duration in a sentence.
fn prose(secs: i64) -> String {
    duration(secs, DurationStyle::Prose)
}

/// When a recorded shortfall counts as a break, in words, from the library's two thresholds:
/// `max(1,024 tokens, 2% of the expected read)`.
pub fn tolerance() -> String {
    format!(
        "max({} tokens, {}% of the expected read)",
        super::format::thousands(TOLERANCE_TOKENS),
        TOLERANCE_SHARE * 100.0
    )
}

/// One line: why the request does not start with the whole previous one at `d.block`.
pub fn divergence(d: &Divergence) -> String {
    // The origin says something only when the strategy changed the block and its type does not
    // already say it ("summary (summary)").
    let tagged = |b: &BlockRef| {
        if b.origin == "verbatim" || b.origin == b.kind {
            b.to_string()
        } else if b.id.is_none() && b.origin.starts_with(b.kind) {
            b.origin.clone()
        } else {
            format!("{b} ({})", b.origin)
        }
    };
    let was = &d.was;
    let now = || d.now.as_ref().map_or_else(String::new, tagged);
    match d.cause {
        Cause::Ended => {
            format!("request ends before block {}: {was} and the {} block(s) after it are gone", d.block, d.after)
        }
        Cause::Rewritten => format!("{}: content changed", now()),
        Cause::Moved => format!("{was} moved; {} stands here now", now()),
        Cause::Dropped => format!("{was} dropped; {} stands here now", now()),
    }
}

/// One line: the evidence of a recorded cache break.
pub fn evidence(e: &Evidence) -> String {
    let model = |m: &Option<String>| m.as_deref().map_or_else(|| "?".to_string(), escape_line);
    match e {
        Evidence::Compaction => "a compaction record lies between the two calls".into(),
        Evidence::ModelSwitch { from, to } => format!("model {} → {}", model(from), model(to)),
        Evidence::Idle { idle, lifetime } => {
            format!("idle {} > the {} cache lifetime", prose(*idle), prose(*lifetime))
        }
        Evidence::SystemRecord => "a system record (system prompt / tools) lies between".into(),
        Evidence::NothingRead => "not even the system prompt and tools were read from cache".into(),
        Evidence::PrefixChange(d) => format!("block {} ({}): {}", d.block, d.was, divergence(d)),
        Evidence::Unexplained { gap } => {
            let after = gap.map_or(String::new(), |g| format!(" {} after the previous call", prose(g)));
            format!("the request was an append{after}; nothing recorded explains it")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(kind: &'static str, id: &str, origin: &str) -> BlockRef {
        BlockRef { kind, id: Some(id.into()), origin: origin.into() }
    }

    #[test]
    fn a_divergence_names_the_block_and_what_the_strategy_made_of_it() {
        let was = block("result", "c1", "verbatim");
        let d = |cause, now: Option<BlockRef>| Divergence { block: 4, was: was.clone(), now, cause, after: 2 };
        assert_eq!(
            divergence(&d(Cause::Rewritten, Some(block("result", "c1", "elided @ rev 7")))),
            "result c1 (elided @ rev 7): content changed"
        );
        assert_eq!(
            divergence(&d(Cause::Ended, None)),
            "request ends before block 4: result c1 and the 2 block(s) after it are gone"
        );
        let summary = BlockRef { kind: "summary", id: None, origin: "summary of 12 blocks".into() };
        assert_eq!(
            divergence(&d(Cause::Dropped, Some(summary))),
            "result c1 dropped; summary of 12 blocks stands here now"
        );
        assert_eq!(
            divergence(&d(Cause::Moved, Some(block("user", "u2", "verbatim")))),
            "result c1 moved; user u2 stands here now"
        );
    }

    #[test]
    fn evidence_reads_as_one_line() {
        let idle = Evidence::Idle { idle: 423, lifetime: 300 };
        assert_eq!(evidence(&idle), "idle 7 min 3 s > the 5 min cache lifetime");
        let switch = Evidence::ModelSwitch { from: Some("a\u{1b}[31m".into()), to: None };
        assert_eq!(evidence(&switch), format!("model {} → ?", escape_line("a\u{1b}[31m")));
        assert_eq!(
            evidence(&Evidence::Unexplained { gap: Some(5) }),
            "the request was an append 5 s after the previous call; nothing recorded explains it"
        );
        let d = Divergence { block: 3, was: block("user", "u1", "verbatim"), now: None, cause: Cause::Ended, after: 0 };
        assert_eq!(
            evidence(&Evidence::PrefixChange(d)),
            "block 3 (user u1): request ends before block 3: user u1 and the 0 block(s) after it are gone"
        );
    }
}
