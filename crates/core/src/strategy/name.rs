//! Strategy names (spec `strategies.md` §2): `<family>-<param>[-<modifier>]`.

use super::compact::{Mode, Unit};
use super::{Kind, Strategy};

/// Every family with an example name, for error messages and help.
pub const FAMILIES: &[(&str, &str)] = &[
    ("recorded", "recorded"),
    ("baseline", "baseline"),
    ("truncate-N", "truncate-500"),
    ("age-truncate-N-keep-K", "age-truncate-500-keep-3"),
    ("mid-truncate-N", "mid-truncate-2000"),
    ("sliding-N[-pin]", "sliding-40-pin"),
    ("per-tool-keep-K", "per-tool-keep-2"),
    ("elide-keep-K | elide-B-T-keep-K", "elide-100000-70000-keep-5"),
    ("compact-at-N[t][-structured][-repeat|-chain]", "compact-at-12000-structured"),
    ("tiered | tiered-fast", "tiered-fast"),
];

/// A strategy name that cannot be parsed.
#[derive(Debug, thiserror::Error)]
#[error("unknown strategy {name:?}: {why}\n{}", families_help())]
pub struct StrategyError {
    pub name: String,
    pub why: String,
}

/// "known strategies:" followed by one line per family with an example.
pub fn families_help() -> String {
    let mut s = String::from("known strategies (family: example):");
    for (f, e) in FAMILIES {
        s.push_str(&format!("\n  {f}: {e}"));
    }
    s
}

/// What shell completions offer for a strategy name: each family's fixed start, up to its first
/// parameter (`truncate-`, `compact-at-`; a family without parameter whole: `recorded`), and its
/// example (`truncate-500`), from [`FAMILIES`], in its order, without repeats.
pub fn completion_words() -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for (family, example) in FAMILIES {
        for form in family.split(" | ") {
            let end = form.find(|c: char| c.is_ascii_uppercase() || c == '[').unwrap_or(form.len());
            out.push(&form[..end]);
        }
        out.push(example);
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|w| !w.is_empty() && seen.insert(*w));
    out
}

fn num<T: std::str::FromStr>(s: &str) -> Option<T> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Parses a strategy name of spec §2.
pub fn parse(name: &str) -> Result<Strategy, StrategyError> {
    let err = |why: &str| StrategyError { name: name.to_string(), why: why.to_string() };
    let ok = |kind| Ok(Strategy { name: name.to_string(), kind, summarizer: None });
    let parts: Vec<&str> = name.split('-').collect();
    match parts.as_slice() {
        ["recorded"] => ok(Kind::Recorded),
        ["baseline"] => ok(Kind::Baseline),
        ["truncate", n] => ok(Kind::Truncate { n: num(n).ok_or_else(|| err("N must be a number of characters"))? }),
        ["mid", "truncate", n] => {
            ok(Kind::MidTruncate { n: num(n).ok_or_else(|| err("N must be a number of bytes"))? })
        }
        ["age", "truncate", n, "keep", k] => match (num(n), num(k)) {
            (Some(n), Some(keep)) => ok(Kind::AgeTruncate { n, keep }),
            _ => Err(err("N and K must be numbers")),
        },
        ["sliding", n, rest @ ..] => {
            let n = num(n).ok_or_else(|| err("N must be a number of blocks"))?;
            if n == 0 {
                return Err(err("sliding-0 keeps no block of the conversation (only the system block): give N ≥ 1"));
            }
            match rest {
                [] => ok(Kind::Sliding { n, pin: false }),
                ["pin"] => ok(Kind::Sliding { n, pin: true }),
                _ => Err(err("the only modifier of sliding-N is -pin")),
            }
        }
        ["per", "tool", "keep", k] => ok(Kind::PerTool { keep: num(k).ok_or_else(|| err("K must be a number"))? }),
        ["elide", "keep", k] => {
            ok(Kind::Elide { budget: None, keep: num(k).ok_or_else(|| err("K must be a number"))? })
        }
        ["elide", b, t, "keep", k] => match (num::<u64>(b), num::<u64>(t), num(k)) {
            (Some(b), Some(t), Some(keep)) if t < b => ok(Kind::Elide { budget: Some((b, t)), keep }),
            (Some(_), Some(_), Some(_)) => Err(err("the target T must be below the budget B")),
            _ => Err(err("B, T and K must be numbers of tokens / results")),
        },
        ["compact", "at", n, mods @ ..] => {
            let (digits, unit) = match n.strip_suffix('t') {
                Some(d) => (d, Unit::Tokens),
                None => (*n, Unit::Chars),
            };
            let n = num(digits).ok_or_else(|| err("N must be a number (characters, or tokens with a `t`)"))?;
            if n == 0 {
                return Err(err("a threshold of 0 compacts before every request, before any conversation: give N ≥ 1"));
            }
            let (mut mode, mut structured) = (None, false);
            for m in mods {
                match *m {
                    "structured" if !structured => structured = true,
                    "repeat" if mode.is_none() => mode = Some(Mode::Repeat),
                    "chain" if mode.is_none() => mode = Some(Mode::Chain),
                    _ => return Err(err("modifiers are -structured and one of -repeat / -chain, each at most once")),
                }
            }
            ok(Kind::CompactAt { n, unit, mode: mode.unwrap_or(Mode::Once), structured })
        }
        ["tiered"] => ok(Kind::Tiered { fast: false }),
        ["tiered", "fast"] => ok(Kind::Tiered { fast: true }),
        _ => Err(err("not a strategy name")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The completion words are prefixes of real names: each complete word parses, each prefix
    /// (ending in `-`) parses with a number after it or starts some family's example.
    #[test]
    fn completion_words_are_names_or_their_starts() {
        let words = completion_words();
        for w in ["recorded", "baseline", "truncate-", "age-truncate-", "sliding-", "compact-at-", "tiered-fast"] {
            assert!(words.contains(&w), "{w} missing from {words:?}");
        }
        for w in &words {
            match w.ends_with('-') {
                true => {
                    assert!(parse(&format!("{w}5")).is_ok() || FAMILIES.iter().any(|(_, e)| e.starts_with(w)), "{w}")
                }
                false => assert!(parse(w).is_ok(), "{w} does not parse"),
            }
        }
    }

    /// Bug: `sliding-0` was accepted and, sending only the system block, looked the cheapest
    /// strategy of all; `compact-at-0` compacted an empty conversation.
    #[test]
    fn regression_zero_size_strategies_were_accepted() {
        for name in ["sliding-0", "sliding-0-pin", "compact-at-0", "compact-at-0t-repeat"] {
            let e = parse(name).unwrap_err().to_string();
            assert!(e.contains("N ≥ 1"), "{name}: {e}");
        }
        assert!(parse("sliding-1").is_ok() && parse("compact-at-1t").is_ok());
    }

    #[test]
    fn every_example_parses() {
        for (_, e) in FAMILIES {
            let s = parse(e).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(s.name, *e);
        }
    }

    #[test]
    fn names_of_the_seeds() {
        assert_eq!(parse("truncate-500").unwrap().kind, Kind::Truncate { n: 500 });
        assert_eq!(parse("age-truncate-500-keep-3").unwrap().kind, Kind::AgeTruncate { n: 500, keep: 3 });
        assert_eq!(parse("mid-truncate-10").unwrap().kind, Kind::MidTruncate { n: 10 });
        assert_eq!(parse("sliding-8").unwrap().kind, Kind::Sliding { n: 8, pin: false });
        assert_eq!(parse("sliding-8-pin").unwrap().kind, Kind::Sliding { n: 8, pin: true });
        assert_eq!(parse("per-tool-keep-2").unwrap().kind, Kind::PerTool { keep: 2 });
        assert_eq!(parse("elide-keep-5").unwrap().kind, Kind::Elide { budget: None, keep: 5 });
        assert_eq!(parse("elide-1000-700-keep-5").unwrap().kind, Kind::Elide { budget: Some((1000, 700)), keep: 5 });
        assert_eq!(
            parse("compact-at-12000-structured").unwrap().kind,
            Kind::CompactAt { n: 12000, unit: Unit::Chars, mode: Mode::Once, structured: true }
        );
        assert_eq!(
            parse("compact-at-8000t-chain").unwrap().kind,
            Kind::CompactAt { n: 8000, unit: Unit::Tokens, mode: Mode::Chain, structured: false }
        );
        assert_eq!(
            parse("compact-at-10-structured-repeat").unwrap().kind,
            Kind::CompactAt { n: 10, unit: Unit::Chars, mode: Mode::Repeat, structured: true }
        );
        assert_eq!(parse("tiered").unwrap().kind, Kind::Tiered { fast: false });
        assert_eq!(parse("tiered-fast").unwrap().kind, Kind::Tiered { fast: true });
    }

    #[test]
    fn malformed_names_list_the_families() {
        for bad in [
            "",
            "truncate",
            "truncate-",
            "truncate--5",
            "truncate-+5",
            "truncate-5x",
            "sliding-5-pin-pin",
            "elide-keep",
            "elide-10-20-keep-1",
            "compact-at-5-repeat-chain",
            "compact-at-t",
            "tiered-slow",
            "Baseline",
            "age-truncate-5-keep",
        ] {
            let e = parse(bad).expect_err(bad).to_string();
            assert!(e.contains("age-truncate-500-keep-3") && e.contains("tiered-fast"), "{bad}: {e}");
        }
    }
}
