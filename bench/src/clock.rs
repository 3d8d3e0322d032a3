//! UTC times as the seed needs them: seconds since the epoch, printed the way Rails stores
//! `datetime(6)` in SQLite (`YYYY-MM-DD HH:MM:SS`, no fraction when it is zero) or as ISO 8601.

pub const MIN: i64 = 60;
pub const HOUR: i64 = 3600;
pub const DAY: i64 = 86400;

/// Seconds since 1970-01-01 for a UTC civil time.
pub fn utc(y: i64, mo: i64, d: i64, h: i64, mi: i64, s: i64) -> i64 {
    // Days from civil (Howard Hinnant's algorithm), valid for the proleptic Gregorian calendar.
    let y = if mo <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (mo + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146097 + doe - 719468;
    days * DAY + h * HOUR + mi * MIN + s
}

fn civil(t: i64) -> (i64, i64, i64, i64, i64, i64) {
    let days = t.div_euclid(DAY);
    let secs = t.rem_euclid(DAY);
    let z = days + 719468;
    let era = z.div_euclid(146097);
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + if m <= 2 { 1 } else { 0 };
    (y, m, d, secs / HOUR, secs % HOUR / MIN, secs % MIN)
}

/// `2026-03-02 16:00:00`, the Rails SQLite form.
pub fn db(t: i64) -> String {
    let (y, m, d, h, mi, s) = civil(t);
    format!("{y:04}-{m:02}-{d:02} {h:02}:{mi:02}:{s:02}")
}

/// `2026-03-02T16:00:00Z`.
pub fn iso(t: i64) -> String {
    let (y, m, d, h, mi, s) = civil(t);
    format!("{y:04}-{m:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z")
}

/// `2026-03-02T16:00:00.000Z`, the form of Rails message-verifier expiries.
pub fn iso_ms(t: i64) -> String {
    let (y, m, d, h, mi, s) = civil(t);
    format!("{y:04}-{m:02}-{d:02}T{h:02}:{mi:02}:{s:02}.000Z")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        let t = utc(2026, 3, 2, 16, 0, 0);
        assert_eq!(t, 1772467200);
        assert_eq!(db(t), "2026-03-02 16:00:00");
        assert_eq!(db(t - 2 * DAY + 8 * HOUR - 16 * HOUR + 7 * MIN), "2026-02-28 08:07:00");
        assert_eq!(iso_ms(utc(2045, 1, 1, 0, 0, 0)), "2045-01-01T00:00:00.000Z");
        assert_eq!(iso(utc(2024, 2, 29, 23, 59, 59)), "2024-02-29T23:59:59Z");
    }
}
