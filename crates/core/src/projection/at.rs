//! [`At`]: which state of a journal to look at — after a revision, or the request of a turn —
//! and the projection there.

use crate::journal::Journal;

use super::{request_at_turn, state_at_rev, Projection};

/// Which state of the journal a command looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum At {
    /// After applying records 1..=N.
    Rev(u64),
    /// The request of turn K.
    Turn(usize),
}

/// A position that cannot be parsed or does not exist in the journal.
#[derive(Debug, thiserror::Error)]
pub enum AtError {
    #[error("--at {what} {n}: {n:?} is not a number")]
    NotANumber {
        what: String,
        n: String,
        #[source]
        source: std::num::ParseIntError,
    },
    #[error("--at {what} {n}: positions are whole numbers from 1 (`ctxj log` lists the revs and turns)")]
    Negative { what: String, n: String },
    #[error("--at turn {0}: turns count from 1")]
    TurnZero(u64),
    #[error("--at takes `rev N` or `turn K`, not {0:?}{hint}", hint = At::hint(.0).map(|h| format!("; {h}")).unwrap_or_default())]
    Unknown(String),
    #[error("--at takes two values: `rev N` or `turn K`")]
    Incomplete,
    #[error("--at rev {n}: the journal has revs 1..{last}")]
    NoSuchRev { n: u64, last: u64 },
    #[error("--at turn {k}: the journal has {turns} turns")]
    NoSuchTurn { k: usize, turns: usize },
}

impl At {
    /// The words a position starts with, as [`At::parse_pairs`] reads them (`rev N`, `turn K`):
    /// what shell completions offer for `--at`.
    pub const KEYWORDS: [&'static str; 2] = ["rev", "turn"];

    /// `did you mean "turn 10" or "rev 10"?` for a bare number where `rev`/`turn` belongs.
    pub fn hint(value: &str) -> Option<String> {
        let n: u64 = value.parse().ok()?;
        Some(format!("--at {n}: did you mean \"turn {n}\" or \"rev {n}\"? (a position is `rev N` or `turn K`)"))
    }

    /// Parses the values of `--at` pairs (`rev N`, `turn K`).
    pub fn parse_pairs(v: &[String]) -> Result<Vec<At>, AtError> {
        v.chunks(2)
            .map(|p| match p {
                [what, n] => {
                    if n.starts_with('-') && n[1..].parse::<u64>().is_ok() {
                        return Err(AtError::Negative { what: what.clone(), n: n.clone() });
                    }
                    let n: u64 =
                        n.parse().map_err(|source| AtError::NotANumber { what: what.clone(), n: n.clone(), source })?;
                    match what.as_str() {
                        "rev" => Ok(At::Rev(n)),
                        "turn" if n >= 1 => Ok(At::Turn(n as usize)),
                        "turn" => Err(AtError::TurnZero(n)),
                        _ => Err(AtError::Unknown(what.clone())),
                    }
                }
                _ => Err(AtError::Incomplete),
            })
            .collect()
    }

    /// Checks the position exists in `journal`.
    pub fn check(self, journal: &Journal) -> Result<(), AtError> {
        match self {
            At::Rev(n) => {
                let last = journal.last_rev();
                if n < 1 || n > last {
                    return Err(AtError::NoSuchRev { n, last });
                }
            }
            At::Turn(k) => {
                let turns = journal.turns.len();
                if k > turns {
                    return Err(AtError::NoSuchTurn { k, turns });
                }
            }
        }
        Ok(())
    }

    pub fn describe(self) -> String {
        match self {
            At::Rev(n) => format!("rev {n}"),
            At::Turn(k) => format!("turn {k}"),
        }
    }

    /// How a view labels the position `at` (None: after the last record).
    pub fn label(at: Option<At>, journal: &Journal) -> String {
        at.map_or_else(|| format!("rev {} (end)", journal.last_rev()), At::describe)
    }
}

/// The projection at `at` (default: after the last record).
pub fn projection_at(journal: &Journal, at: Option<At>) -> Result<Projection, AtError> {
    Ok(match at {
        None => state_at_rev(journal, u64::MAX),
        Some(a) => {
            a.check(journal)?;
            match a {
                At::Rev(n) => state_at_rev(journal, n),
                At::Turn(k) => request_at_turn(journal, k).expect("checked above"),
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What completions offer for `--at` is what the parser reads.
    #[test]
    fn every_keyword_parses() {
        for k in At::KEYWORDS {
            assert!(At::parse_pairs(&[k.to_string(), "1".to_string()]).is_ok(), "{k}");
        }
        assert!(At::parse_pairs(&["call".to_string(), "1".to_string()]).is_err());
    }
}
