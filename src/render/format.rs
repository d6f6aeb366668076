//! Number formatting for every table and summary: thousands separators, signs, money, percent,
//! durations.

// Grouping and counting live at the bottom of the layering (`ctxj_core::text`) so that library
// messages (import notes, budget rules) format numbers the same way the renderers do.
pub use ctxj_core::text::{count, thousands};

/// Signed thousands: "+1,200" / "−41,220" / "0".
pub fn signed_thousands(n: i64) -> String {
    match n.cmp(&0) {
        std::cmp::Ordering::Greater => format!("+{}", thousands(n as u64)),
        std::cmp::Ordering::Less => format!("−{}", thousands(n.unsigned_abs())),
        std::cmp::Ordering::Equal => "0".into(),
    }
}

/// Dollars as every table and summary shows them: "$1,234.56" (cents, thousands grouped;
/// "-$0.50"); an amount that is not zero but rounds to no cent is "<$0.01" (">-$0.01" below
/// zero), so a cost is never shown as free. JSON keeps the full figure.
pub fn usd(v: f64) -> String {
    let cents = (v.abs() * 100.0).round() as u64;
    match (cents, v) {
        (0, v) if v > 0.0 => "<$0.01".to_string(),
        (0, v) if v < 0.0 => ">-$0.01".to_string(),
        _ => format!("{}${}.{:02}", if v < 0.0 { "-" } else { "" }, thousands(cents / 100), cents % 100),
    }
}

/// The one money format under its older name (the report page calls it so).
pub use self::usd as money;

/// [`usd`], or "-" when there is no figure.
/// Money where sub-cent differences are the point (per-run statistics of an experiment): four
/// decimals below $1 (`$0.0053`), else [`usd`].
pub fn usd_fine(v: f64) -> String {
    if v.abs() < 1.0 && v != 0.0 {
        format!("{}${:.4}", if v < 0.0 { "-" } else { "" }, v.abs())
    } else {
        usd(v)
    }
}

pub fn usd_or_dash(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), usd)
}

/// [`percent`], or "-" when there is no figure.
pub fn percent_or_dash(r: Option<f64>) -> String {
    r.map_or_else(|| "-".to_string(), percent)
}

/// [`money`], or "n/a" when there is no figure.
pub fn money_or_na(v: Option<f64>) -> String {
    v.map_or_else(|| "n/a".to_string(), money)
}

/// A ratio as a percentage with one decimal: 0.4567 → "45.7%".
pub fn percent(r: f64) -> String {
    format!("{:.1}%", r * 100.0)
}

/// How a duration is written: compact in a table column, spelled out in a sentence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DurationStyle {
    /// A table column: `45s`, `12m` (minutes only under an hour), `1h 05m`, `2d 3h`.
    Compact,
    /// Prose: `5 s`, `7 min`, `7 min 3 s`, `1 h 2 min` (hours past a day stay hours).
    Prose,
}

/// `secs` written in `style`: the one duration format of the renderers (a column shows `-` for
/// an unknown or negative duration itself).
pub fn duration(secs: i64, style: DurationStyle) -> String {
    let (d, h, m, s) = (secs / 86_400, secs % 86_400 / 3600, secs % 3600 / 60, secs % 60);
    match style {
        DurationStyle::Compact if secs < 60 => format!("{secs}s"),
        DurationStyle::Compact if secs < 3600 => format!("{m}m"),
        DurationStyle::Compact if secs < 86_400 => format!("{h}h {m:02}m"),
        DurationStyle::Compact => format!("{d}d {h}h"),
        DurationStyle::Prose if secs < 60 => format!("{secs} s"),
        DurationStyle::Prose if secs < 3600 && s == 0 => format!("{m} min"),
        DurationStyle::Prose if secs < 3600 => format!("{m} min {s} s"),
        DurationStyle::Prose => format!("{} h {m} min", secs / 3600),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_compact_in_a_column_and_spelled_out_in_prose() {
        use DurationStyle::{Compact, Prose};
        assert_eq!(duration(45, Compact), "45s");
        assert_eq!(duration(723, Compact), "12m");
        assert_eq!(duration(3900, Compact), "1h 05m");
        assert_eq!(duration(183_600, Compact), "2d 3h");
        assert_eq!(duration(5, Prose), "5 s");
        assert_eq!(duration(423, Prose), "7 min 3 s");
        assert_eq!(duration(300, Prose), "5 min");
        assert_eq!(duration(3720, Prose), "1 h 2 min");
        assert_eq!(duration(183_600, Prose), "51 h 0 min");
    }

    #[test]
    fn count_is_grouped_and_singular_only_for_one() {
        assert_eq!(count(1, "strategy", "strategies"), "1 strategy");
        assert_eq!(count(0, "turn", "turns"), "0 turns");
        assert_eq!(count(22190, "block", "blocks"), "22,190 blocks");
    }

    #[test]
    fn groups_thousands() {
        assert_eq!(thousands(41220), "41,220");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000_000), "1,000,000");
        assert_eq!(signed_thousands(-41220), "−41,220");
        assert_eq!(usd(1234.555), "$1,234.56");
        assert_eq!(usd(0.004), "<$0.01");
        assert_eq!(usd(0.0), "$0.00");
        assert_eq!(usd(0.006), "$0.01");
        assert_eq!(money_or_na(Some(1234.5)), "$1,234.50");
        assert_eq!(usd(-0.5), "-$0.50");
        assert_eq!(percent_or_dash(Some(0.4567)), "45.7%");
    }
}
