//! Timestamps as Rails stores them in SQLite (spec/01 §1.1), without a date library.
//!
//! Times are microseconds since the Unix epoch (UTC) in an `i64`. On disk they are TEXT
//! `YYYY-MM-DD HH:MM:SS` followed by `.ffffff` (exactly six digits) only when the
//! microseconds are non-zero. Because that format sorts like the time it encodes, SQL
//! compares timestamps as strings; always bind values produced by `format`.
//! The calendar conversion is the standard days-from-civil arithmetic on the proleptic
//! Gregorian calendar.

use crate::words;
use std::time::{SystemTime, UNIX_EPOCH};

/// Microseconds per second.
pub const US_PER_SEC: i64 = 1_000_000;

/// The current time in µs since the epoch (0 if the clock is before 1970).
pub fn now_us() -> i64 {
    match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_micros()).unwrap_or(i64::MAX),
        Err(_) => 0,
    }
}

/// A formatted timestamp on the stack (at most 26 bytes): no allocation to bind it.
#[derive(Clone, Copy)]
pub struct Stamp {
    buf: [u8; 26],
    len: usize,
}

impl Stamp {
    /// The text, e.g. `2025-12-12 15:43:40.123456` or `2025-12-12 15:43:40`.
    pub fn as_str(&self) -> &str {
        // Only ASCII digits and separators are ever written into buf.
        std::str::from_utf8(self.buf.get(..self.len).unwrap_or(&[])).unwrap_or("")
    }
}

impl std::fmt::Debug for Stamp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Days since 1970-01-01 → (year, month 1..=12, day 1..=31).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// (year, month, day) → days since 1970-01-01.
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Formats `us` (µs since the epoch, UTC) the way Rails stores a `datetime(6)`.
/// Years outside 0..=9999 are clamped to that range (they cannot be written by Rails either).
pub fn format(us: i64) -> Stamp {
    let secs = us.div_euclid(US_PER_SEC);
    let micros = us.rem_euclid(US_PER_SEC) as u32;
    let (mut y, mut mo, mut d) = civil_from_days(secs.div_euclid(86_400));
    let mut sod = secs.rem_euclid(86_400) as u32;
    if y < 0 {
        (y, mo, d, sod) = (0, 1, 1, 0);
    } else if y > 9999 {
        (y, mo, d, sod) = (9999, 12, 31, 86_399);
    }
    let mut s = Stamp { buf: [0; 26], len: 19 };
    let b = &mut s.buf;
    let put = |b: &mut [u8; 26], at: usize, v: u32, digits: usize| {
        let mut v = v;
        for k in (0..digits).rev() {
            if let Some(slot) = b.get_mut(at + k) {
                *slot = b'0' + (v % 10) as u8;
            }
            v /= 10;
        }
    };
    put(b, 0, y as u32, 4);
    b[4] = b'-';
    put(b, 5, mo, 2);
    b[7] = b'-';
    put(b, 8, d, 2);
    b[10] = b' ';
    put(b, 11, sod / 3600, 2);
    b[13] = b':';
    put(b, 14, sod / 60 % 60, 2);
    b[16] = b':';
    put(b, 17, sod % 60, 2);
    if micros != 0 {
        b[19] = b'.';
        put(b, 20, micros, 6);
        s.len = 26;
    }
    s
}

fn digits(b: &[u8]) -> Option<u32> {
    if b.is_empty() || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(b.iter().fold(0u32, |acc, &c| acc.saturating_mul(10).saturating_add(u32::from(c - b'0'))))
}

/// Parses a stored timestamp back to µs since the epoch. Accepts what Rails writes
/// (`YYYY-MM-DD HH:MM:SS[.f…]`) and the ISO forms other writers use (`T` separator,
/// trailing `Z` or `+00:00`/`-hh:mm` offsets, 1–9 fraction digits; beyond 6 truncated).
/// Returns `None` for anything else.
pub fn parse(s: &str) -> Option<i64> {
    parse_bytes(s.as_bytes())
}

/// `parse` over raw column bytes: a timestamp is ASCII, so no UTF-8 check is needed first.
pub fn parse_bytes(b: &[u8]) -> Option<i64> {
    parse_rails(b).or_else(|| parse_any(b))
}

/// The two forms Rails writes (every row a page reads, two per message): fixed positions, so
/// a value is checked eight bytes at a time against a template of its word (`Form`): 187
/// instructions a timestamp with the range check and day count, against 222 checking byte by
/// byte (a room page decodes 80 of them, a search page at ×100 200). `None` hands over to
/// `parse_any`.
fn parse_rails(b: &[u8]) -> Option<i64> {
    const DATE: Form = Form::new(b"0000-00-");
    const DAY: Form = Form::new(b"00 00:00");
    const TIME: Form = Form::new(b"00:00:00");
    const MICROS: Form = Form::new(b"0.000000");
    let micros = match b.len() {
        19 => 0,
        26 => MICROS.digits(b.get(18..26)?)?.number(2..8),
        _ => return None,
    };
    let date = DATE.digits(b.get(0..8)?)?;
    let day = DAY.digits(b.get(8..16)?)?;
    let time = TIME.digits(b.get(11..19)?)?;
    instant((date.number(0..4), date.number(5..7), day.number(0..2)), (time.number(0..2), time.number(3..5), time.number(6..8)), i64::from(micros), 0)
}

/// Eight bytes of a timestamp's fixed form: '0' where a digit goes, any other byte as is.
struct Form {
    word: u64,
    /// 0xFF in the bytes that hold digits.
    digit_bytes: u64,
}

/// The digit values of a word that fits a `Form` (0 in its other bytes).
struct Digits(u64);

impl Form {
    const fn new(form: &[u8; 8]) -> Form {
        let mut digit_bytes = 0u64;
        let mut i = 0;
        while i < 8 {
            if form[i] == b'0' {
                digit_bytes |= 0xFF << (8 * i);
            }
            i += 1;
        }
        Form { word: u64::from_le_bytes(*form), digit_bytes }
    }

    /// `w` (8 bytes) if it fits: `w ^ word` turns an ASCII digit under a '0' into its value
    /// 0..=9 and a byte equal to the form's into 0, so `w` fits when its other bytes are 0 and
    /// every digit byte is below 10 (its low seven bits plus 0x76 stay below 0x80, and its top
    /// bit is clear).
    fn digits(&self, w: &[u8]) -> Option<Digits> {
        const LOW7: u64 = 0x7F7F_7F7F_7F7F_7F7F;
        const HIGH: u64 = 0x8080_8080_8080_8080;
        let d = words::load(w) ^ self.word;
        let over_nine = ((d & LOW7).wrapping_add(0x7676_7676_7676_7676) | d) & HIGH;
        ((d & !self.digit_bytes) | (over_nine & self.digit_bytes) == 0).then_some(Digits(d))
    }
}

impl Digits {
    /// The decimal number of the digits at byte positions `at`.
    fn number(&self, at: std::ops::Range<u32>) -> u32 {
        at.fold(0, |v, i| v * 10 + ((self.0 >> (8 * i)) & 0xFF) as u32)
    }
}

/// µs since the epoch of a calendar date and time of day given `offset_secs` east of UTC;
/// `None` when a field is out of range.
fn instant((y, mo, d): (u32, u32, u32), (h, mi, se): (u32, u32, u32), micros: i64, offset_secs: i64) -> Option<i64> {
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || se > 60 {
        return None;
    }
    let secs = days_from_civil(i64::from(y), mo, d) * 86_400 + i64::from(h * 3600 + mi * 60 + se) - offset_secs;
    Some(secs * US_PER_SEC + micros)
}

/// Every accepted form, field by field.
fn parse_any(b: &[u8]) -> Option<i64> {
    if b.len() < 19 || b.get(4) != Some(&b'-') || b.get(7) != Some(&b'-') {
        return None;
    }
    if !matches!(b.get(10), Some(b' ' | b'T' | b't')) || b.get(13) != Some(&b':') || b.get(16) != Some(&b':') {
        return None;
    }
    let y = digits(b.get(0..4)?)?;
    let mo = digits(b.get(5..7)?)?;
    let d = digits(b.get(8..10)?)?;
    let h = digits(b.get(11..13)?)?;
    let mi = digits(b.get(14..16)?)?;
    let se = digits(b.get(17..19)?)?;
    let mut rest = b.get(19..)?;
    let mut micros: i64 = 0;
    if rest.first() == Some(&b'.') {
        let n = rest.iter().skip(1).take_while(|c| c.is_ascii_digit()).count();
        if n == 0 {
            return None;
        }
        let frac = rest.get(1..1 + n)?;
        for k in 0..6 {
            micros = micros * 10 + frac.get(k).map_or(0, |c| i64::from(c - b'0'));
        }
        rest = rest.get(1 + n..)?;
    }
    let offset_secs: i64 = match rest {
        [] | [b'Z'] | [b'z'] => 0,
        [sign @ (b'+' | b'-'), oh1, oh2, b':', om1, om2] | [sign @ (b'+' | b'-'), oh1, oh2, om1, om2] => {
            let oh = digits(&[*oh1, *oh2])?;
            let om = digits(&[*om1, *om2])?;
            let v = i64::from(oh * 3600 + om * 60);
            if *sign == b'+' { v } else { -v }
        }
        _ => return None,
    };
    instant((y, mo, d), (h, mi, se), micros, offset_secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_like_rails() {
        assert_eq!(format(0).as_str(), "1970-01-01 00:00:00");
        // 2025-12-12 15:43:40.123456 UTC
        let t = 1_765_554_220_123_456;
        assert_eq!(format(t).as_str(), "2025-12-12 15:43:40.123456");
        assert_eq!(format(t - 123_456).as_str(), "2025-12-12 15:43:40");
        assert_eq!(format(t - 123_455).as_str(), "2025-12-12 15:43:40.000001");
        assert_eq!(format(951_782_400 * US_PER_SEC).as_str(), "2000-02-29 00:00:00");
        assert_eq!(format(-1).as_str(), "1969-12-31 23:59:59.999999");
    }

    #[test]
    fn parses_what_it_formats_and_iso_forms() {
        for t in [0, 1, 999_999, 1_765_554_220_123_456, 4_102_444_799_999_999, -86_400_000_001] {
            assert_eq!(parse(format(t).as_str()), Some(t), "{}", format(t).as_str());
        }
        let t = 1_765_554_220_123_456;
        assert_eq!(parse("2025-12-12T15:43:40.123456Z"), Some(t));
        assert_eq!(parse("2025-12-12T16:43:40.123456+01:00"), Some(t));
        assert_eq!(parse("2025-12-12 15:43:40.123456789"), Some(t));
        assert_eq!(parse("2025-12-12 15:43:40.1"), Some(t - 23_456));
    }

    #[test]
    fn the_rails_forms_parse_as_the_general_path_does() {
        for t in [0, 1, 999_999, 1_765_554_220_123_456, 4_102_444_799_999_999, 951_782_400 * US_PER_SEC, -86_400_000_001] {
            let f = format(t);
            assert_eq!(parse_rails(f.as_str().as_bytes()), parse_any(f.as_str().as_bytes()), "{}", f.as_str());
        }
        for s in ["2025-12-12T15:43:40", "2025-12-12 15:43:40Z", "2025-12-12 15:43:40,123456", "2025-12-12 15:4:400", "2025-12-32 15:43:40", "2025-12-12 24:00:00", "2025-1a-12 15:43:40"] {
            assert_eq!(parse_rails(s.as_bytes()), None, "{s}");
        }
        assert_eq!(parse_bytes(b"2025-12-12T15:43:40Z"), parse("2025-12-12T15:43:40Z"));
        assert_eq!(parse_bytes(b"2025-12-12 15:43:40\xff"), None);
    }

    #[test]
    fn every_one_byte_change_parses_as_the_general_path_does() {
        for base in ["2025-12-12 15:43:40", "2025-12-12 15:43:40.123456", "1999-02-28 23:59:59.999999"] {
            for at in 0..base.len() {
                for byte in 0..=255u8 {
                    let mut v = base.as_bytes().to_vec();
                    v[at] = byte;
                    let fast = parse_rails(&v);
                    assert!(fast.is_none() || fast == parse_any(&v), "{:?}", String::from_utf8_lossy(&v));
                    assert_eq!(parse_bytes(&v), parse_any(&v), "{:?}", String::from_utf8_lossy(&v));
                }
            }
        }
    }

    #[test]
    fn rejects_garbage() {
        for s in ["", "2025-12-12", "2025-13-12 15:43:40", "2025-12-12 15:43:4x", "2025-12-12 15:43:40.", "2025-12-12 15:43:40 junk", "２０２５-12-12 15:43:40"] {
            assert_eq!(parse(s), None, "{s}");
        }
    }

    #[test]
    fn string_order_is_time_order() {
        let a = format(1_765_554_220_000_000);
        let b = format(1_765_554_220_000_001);
        let c = format(1_765_554_221_000_000);
        assert!(a.as_str() < b.as_str() && b.as_str() < c.as_str());
    }
}
