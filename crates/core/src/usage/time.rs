//! Time for `usage`: the time zone rows are dated in, the period an entry falls in, and the
//! `--since` / `--until` window. Zones come from the IANA database (`chrono-tz`).

use chrono::{DateTime, Datelike, NaiveDate, TimeZone, Utc};
use chrono_tz::Tz;

/// A bad `--timezone`, `--since` or `--until`.
#[derive(Debug, thiserror::Error)]
pub enum TimeError {
    #[error("unknown time zone {0:?} (an IANA name such as Europe/Paris or UTC)")]
    Zone(String),
    #[error("{0:?} is neither a date (2026-03-14 or 20260314) nor an RFC 3339 time")]
    Bound(String),
    #[error("--since {since} is after --until {until}: the window holds no time (swap them?)")]
    Inverted { since: String, until: String },
}

/// The zone named, else `TZ`, else the system's, else UTC (like ccusage: the local zone).
pub fn zone(name: Option<&str>) -> Result<Tz, TimeError> {
    if let Some(n) = name {
        return n.parse().map_err(|_| TimeError::Zone(n.to_string()));
    }
    let local = std::env::var("TZ")
        .ok()
        .map(|t| t.trim_start_matches(':').to_string())
        .filter(|t| !t.is_empty())
        .or_else(|| iana_time_zone::get_timezone().ok());
    Ok(local.and_then(|t| t.parse().ok()).unwrap_or(Tz::UTC))
}

/// A time as written in a transcript, if it parses.
pub fn instant(ts: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(ts).ok().map(|d| d.with_timezone(&Utc))
}

/// The local date of `ts` in `tz` (the first ten characters when it does not parse).
pub fn local_date(ts: &str, tz: Tz) -> Option<NaiveDate> {
    match instant(ts) {
        Some(d) => Some(d.with_timezone(&tz).date_naive()),
        None => NaiveDate::parse_from_str(ts.get(..10)?, "%Y-%m-%d").ok(),
    }
}

/// A day of the week (`--start-of-week`).
pub use chrono::Weekday;

/// A calendar period.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Period {
    Day,
    /// Weeks start on Sunday, as in ccusage's `weekly`; the key is the Sunday's date.
    Week,
    /// Weeks that start on the given day (`--start-of-week`); the key is that day's date.
    WeekFrom(chrono::Weekday),
    Month,
}

/// The key of the period `ts` falls in: `2026-03-14`, `2026-03-08` (a week's Sunday), `2026-03`.
pub fn period_key(ts: &str, tz: Tz, p: Period) -> String {
    let Some(d) = local_date(ts, tz) else { return "unknown".into() };
    match p {
        Period::Day => d.format("%Y-%m-%d").to_string(),
        Period::Week => period_key(ts, tz, Period::WeekFrom(chrono::Weekday::Sun)),
        Period::WeekFrom(start) => {
            let back = (7 + d.weekday().num_days_from_monday() - start.num_days_from_monday()) % 7;
            (d - chrono::Days::new(back.into())).format("%Y-%m-%d").to_string()
        }
        Period::Month => d.format("%Y-%m").to_string(),
    }
}

#[cfg(test)]
mod week_tests {
    use super::*;

    #[test]
    fn weeks_start_on_the_chosen_day() {
        // 2026-03-14 is a Saturday.
        let k = |w| period_key("2026-03-14T10:00:00Z", Tz::UTC, Period::WeekFrom(w));
        assert_eq!(k(chrono::Weekday::Sun), "2026-03-08");
        assert_eq!(k(chrono::Weekday::Mon), "2026-03-09");
        assert_eq!(k(chrono::Weekday::Sat), "2026-03-14");
        assert_eq!(period_key("2026-03-14T10:00:00Z", Tz::UTC, Period::Week), "2026-03-08");
    }
}

/// `--since` / `--until`: entries from `since` (inclusive) to `until` (inclusive; a date means
/// its whole day) in the zone.
#[derive(Debug, Clone, Copy, Default)]
pub struct Window {
    pub since: Option<DateTime<Utc>>,
    pub until: Option<DateTime<Utc>>,
}

fn parse_bound(s: &str, tz: Tz, end: bool) -> Result<DateTime<Utc>, TimeError> {
    if let Ok(d) = DateTime::parse_from_rfc3339(s) {
        return Ok(d.with_timezone(&Utc));
    }
    let date = NaiveDate::parse_from_str(s, "%Y-%m-%d")
        .or_else(|_| NaiveDate::parse_from_str(s, "%Y%m%d"))
        .map_err(|_| TimeError::Bound(s.to_string()))?;
    let day = if end { date.succ_opt().ok_or_else(|| TimeError::Bound(s.to_string()))? } else { date };
    let midnight = day.and_hms_opt(0, 0, 0).expect("midnight exists");
    let local = tz.from_local_datetime(&midnight).earliest().ok_or_else(|| TimeError::Bound(s.to_string()))?;
    let utc = local.with_timezone(&Utc);
    Ok(if end { utc - chrono::Duration::nanoseconds(1) } else { utc })
}

impl Window {
    /// The window from `since` to `until` (dates are whole days in `tz`); a window that ends
    /// before it starts is an error, not an empty report.
    pub fn parse(since: Option<&str>, until: Option<&str>, tz: Tz) -> Result<Window, TimeError> {
        let w = Window {
            since: since.map(|s| parse_bound(s, tz, false)).transpose()?,
            until: until.map(|s| parse_bound(s, tz, true)).transpose()?,
        };
        if let (Some(s), Some(u)) = (w.since, w.until) {
            if s > u {
                let (since, until) = (since.unwrap_or_default().to_string(), until.unwrap_or_default().to_string());
                return Err(TimeError::Inverted { since, until });
            }
        }
        Ok(w)
    }

    /// Whether no bound was given (every entry is inside, undated ones too).
    pub fn is_open(&self) -> bool {
        self.since.is_none() && self.until.is_none()
    }

    /// Whether an entry at `ts` is inside (an undated entry is inside only an open window).
    pub fn contains(&self, ts: &str) -> bool {
        if self.since.is_none() && self.until.is_none() {
            return true;
        }
        let Some(t) = instant(ts) else { return false };
        self.since.is_none_or(|s| t >= s) && self.until.is_none_or(|u| t <= u)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_follow_the_zone() {
        let tz: Tz = "America/New_York".parse().unwrap();
        assert_eq!(period_key("2026-03-14T02:00:00Z", tz, Period::Day), "2026-03-13");
        assert_eq!(period_key("2026-03-14T02:00:00Z", Tz::UTC, Period::Day), "2026-03-14");
        assert_eq!(period_key("2026-03-14T12:00:00Z", Tz::UTC, Period::Week), "2026-03-08");
        assert_eq!(period_key("2026-03-14T12:00:00Z", Tz::UTC, Period::Month), "2026-03");
    }

    #[test]
    fn window_dates_are_whole_local_days() {
        let tz: Tz = "Asia/Tokyo".parse().unwrap();
        let w = Window::parse(Some("2026-03-14"), Some("20260314"), tz).unwrap();
        assert!(w.contains("2026-03-13T15:00:00Z"), "midnight in Tokyo");
        assert!(!w.contains("2026-03-13T14:59:59Z"));
        assert!(w.contains("2026-03-14T14:59:59Z"));
        assert!(!w.contains("2026-03-14T15:00:00Z"));
        assert!(Window::parse(Some("yesterday"), None, tz).is_err());
        assert!(Window::parse(Some("2026-03-14"), Some("2026-03-14"), tz).is_ok(), "one day");
        let e = Window::parse(Some("2026-03-15"), Some("2026-03-14"), tz).unwrap_err();
        assert!(matches!(e, TimeError::Inverted { .. }), "regression: an inverted window printed an empty table");
        assert!(zone(Some("Mars/Olympus")).is_err());
    }
}
