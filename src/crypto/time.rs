//! Wall-clock times in the text forms the Rails formats use: ISO 8601 with milliseconds
//! (`exp` of signed messages) and the HTTP-date of `Set-Cookie: expires=`.
//!
//! Times are Unix milliseconds (`i64`, UTC). Calendar arithmetic uses the proleptic
//! Gregorian days-from-civil algorithm (Howard Hinnant's public-domain derivation).

/// Milliseconds since the Unix epoch, now.
pub fn now_ms() -> i64 {
    match std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        Ok(d) => d.as_millis() as i64,
        Err(e) => -(e.duration().as_millis() as i64),
    }
}

fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719468;
    let era = z.div_euclid(146097);
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (
        if m <= 2 {
            yoe + era * 400 + 1
        } else {
            yoe + era * 400
        },
        m,
        d,
    )
}

fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// `t` moved by whole calendar years, as Ruby's `20.years.from_now` (Time#advance): same
/// month, day and time of day; 29 February becomes 28 February in a common year.
pub fn add_years(t: i64, years: i64) -> i64 {
    let days = t.div_euclid(86_400_000);
    let in_day = t.rem_euclid(86_400_000);
    let (y, m, d) = civil_from_days(days);
    let ny = y + years;
    let nd = d.min(days_in_month(ny, m));
    days_from_civil(ny, m, nd) * 86_400_000 + in_day
}

/// Appends `t` as `YYYY-MM-DDTHH:MM:SS.mmmZ` (Rails' `exp` format).
pub fn write_iso8601(t: i64, out: &mut Vec<u8>) {
    let days = t.div_euclid(86_400_000);
    let ms = t.rem_euclid(86_400_000);
    let (y, m, d) = civil_from_days(days);
    push_num(out, y, 4);
    out.push(b'-');
    push_num(out, m as i64, 2);
    out.push(b'-');
    push_num(out, d as i64, 2);
    out.push(b'T');
    push_num(out, ms / 3_600_000, 2);
    out.push(b':');
    push_num(out, ms / 60_000 % 60, 2);
    out.push(b':');
    push_num(out, ms / 1000 % 60, 2);
    out.push(b'.');
    push_num(out, ms % 1000, 3);
    out.push(b'Z');
}

/// Appends `v` in decimal, zero-padded to `width` digits (years outside 0..=9999 are
/// written with as many digits as they need, and a sign when negative).
fn push_num(out: &mut Vec<u8>, v: i64, width: usize) {
    if v < 0 {
        out.push(b'-');
    }
    let mut buf = [b'0'; 20];
    let mut n = v.unsigned_abs();
    let mut i = buf.len();
    while n > 0 {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
    }
    let start = i.min(buf.len() - width);
    out.extend_from_slice(&buf[start..]);
}

fn digits(s: &[u8], n: usize) -> Option<i64> {
    let d = s.get(..n)?;
    if !d.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(d.iter().fold(0i64, |a, &c| a * 10 + (c - b'0') as i64))
}

/// Parses `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)` to Unix milliseconds (fractions
/// beyond milliseconds are truncated). `None` for anything else.
pub fn parse_iso8601(s: &[u8]) -> Option<i64> {
    let (y, mo, d) = (
        digits(s, 4)?,
        digits(s.get(5..)?, 2)?,
        digits(s.get(8..)?, 2)?,
    );
    let (h, mi, se) = (
        digits(s.get(11..)?, 2)?,
        digits(s.get(14..)?, 2)?,
        digits(s.get(17..)?, 2)?,
    );
    if s.get(4) != Some(&b'-')
        || s.get(7) != Some(&b'-')
        || !matches!(s.get(10), Some(b'T' | b't' | b' '))
        || s.get(13) != Some(&b':')
        || s.get(16) != Some(&b':')
    {
        return None;
    }
    if !(1..=12).contains(&mo)
        || d < 1
        || d > days_in_month(y, mo as u32) as i64
        || h > 23
        || mi > 59
        || se > 60
    {
        return None;
    }
    let mut rest = s.get(19..)?;
    let mut ms = 0;
    if let [b'.', frac @ ..] = rest {
        let n = frac.iter().take_while(|c| c.is_ascii_digit()).count();
        if n == 0 {
            return None;
        }
        for (i, &c) in frac[..n.min(3)].iter().enumerate() {
            ms += (c - b'0') as i64 * [100, 10, 1][i];
        }
        rest = &frac[n..];
    }
    let offset_min = match rest {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), hh @ ..] if hh.len() == 5 && hh[2] == b':' => {
            let v = digits(hh, 2)? * 60 + digits(&hh[3..], 2)?;
            if *sign == b'-' {
                -v
            } else {
                v
            }
        }
        _ => return None,
    };
    let days = days_from_civil(y, mo as u32, d as u32);
    Some(((days * 24 + h) * 60 + mi - offset_min) * 60_000 + se * 1000 + ms)
}

/// Appends `t` as an IMF-fixdate (`Thu, 01 Jan 2046 00:00:00 GMT`), as Rack writes
/// `expires=`.
pub fn write_http_date(t: i64, out: &mut Vec<u8>) {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let secs = t.div_euclid(1000);
    let days = secs.div_euclid(86_400);
    let s = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    out.extend_from_slice(DAYS[days.rem_euclid(7) as usize].as_bytes());
    out.extend_from_slice(b", ");
    push_num(out, d as i64, 2);
    out.push(b' ');
    out.extend_from_slice(MONTHS[(m as usize + 11) % 12].as_bytes());
    out.push(b' ');
    push_num(out, y, 4);
    out.push(b' ');
    push_num(out, s / 3600, 2);
    out.push(b':');
    push_num(out, s / 60 % 60, 2);
    out.push(b':');
    push_num(out, s % 60, 2);
    out.extend_from_slice(b" GMT");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iso(t: i64) -> String {
        let mut v = Vec::new();
        write_iso8601(t, &mut v);
        String::from_utf8(v).unwrap()
    }

    fn http(t: i64) -> String {
        let mut v = Vec::new();
        write_http_date(t, &mut v);
        String::from_utf8(v).unwrap()
    }

    const EXP_2045: i64 = 2_366_841_600_000; // 2045-01-01T00:00:00Z

    #[test]
    fn iso8601_round_trip() {
        assert_eq!(iso(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso(EXP_2045), "2045-01-01T00:00:00.000Z");
        assert_eq!(parse_iso8601(b"2045-01-01T00:00:00.000Z"), Some(EXP_2045));
        let t = parse_iso8601(b"2044-01-16T09:55:09.004Z").unwrap();
        assert_eq!(iso(t), "2044-01-16T09:55:09.004Z");
        assert_eq!(parse_iso8601(b"2045-01-01T01:00:00+01:00"), Some(EXP_2045));
        assert_eq!(
            parse_iso8601(b"2045-01-01T00:00:00.123456Z"),
            Some(EXP_2045 + 123)
        );
        assert_eq!(parse_iso8601(b"1969-12-31T23:59:59.999Z"), Some(-1));
        for bad in [
            &b""[..],
            b"2045-01-01",
            b"2045-13-01T00:00:00Z",
            b"2045-02-29T00:00:00Z",
            b"2045-01-01T00:00:00",
            b"2045-01-01T00:00:00.Z",
            b"2045-01-01T00:00:00Zjunk",
            b"2045/01/01T00:00:00Z",
            b"204a-01-01T00:00:00Z",
        ] {
            assert_eq!(parse_iso8601(bad), None, "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn http_dates() {
        assert_eq!(http(0), "Thu, 01 Jan 1970 00:00:00 GMT");
        assert_eq!(http(EXP_2045 + 999), "Sun, 01 Jan 2045 00:00:00 GMT");
        assert_eq!(http(951_782_400_000), "Tue, 29 Feb 2000 00:00:00 GMT");
    }

    #[test]
    fn calendar_years() {
        let t = parse_iso8601(b"2024-01-16T09:55:09.004Z").unwrap();
        assert_eq!(iso(add_years(t, 20)), "2044-01-16T09:55:09.004Z");
        let leap = parse_iso8601(b"2024-02-29T12:00:00.000Z").unwrap();
        assert_eq!(iso(add_years(leap, 20)), "2044-02-29T12:00:00.000Z");
        assert_eq!(iso(add_years(leap, 21)), "2045-02-28T12:00:00.000Z");
    }
}
