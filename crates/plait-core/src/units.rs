//! Durations, rates and sizes written with units.
//!
//! A quantity is a decimal number with an optional exponent, optionally followed by spaces,
//! then a unit: `"49.5ms"`, `"1.5 Gbps"`, `"64KiB"`, `"1e-3s"`. Decimals are converted exactly
//! (no binary floating point): a duration is rounded to the nearest nanosecond, a rate to the
//! nearest bit/s, and a size must come out as a whole number of bytes. A value beyond `u64` in
//! the base unit is "out of range", with the maximum in the message. Plain numbers are accepted too: seconds for durations,
//! bit/s for rates, bytes for sizes (integers only).
//!
//! The parsers return a short reason on failure; the caller prefixes the field path. The
//! formatters (`format_number`, `format_duration`, `format_rate`, `format_size`) write the
//! same forms back. A leaf beside `time`: the scenario reader, the registry's parameter values
//! and the algorithms' messages all use it, and it imports none of them.

use toml::Value;

use crate::time::{Rate, SimTime};

pub(crate) const EXPECT_DURATION: &str = "a duration such as \"10ms\" or a number of seconds";
pub(crate) const EXPECT_RATE: &str = "a rate such as \"100Mbps\" or a number of bit/s";
pub(crate) const EXPECT_SIZE: &str = "a size such as \"64KiB\" or an integer number of bytes";

const DURATION_UNITS: &[(&str, u128)] = &[
    ("ns", 1),
    ("us", 1_000),
    ("µs", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("min", 60_000_000_000),
];
const DURATION_ACCEPTED: &str = "ns, us, ms, s, min";

// SI prefixes; the lower-case spellings are accepted because nobody means millibits.
const RATE_UNITS: &[(&str, u128)] = &[
    ("bps", 1),
    ("kbps", 1_000),
    ("Kbps", 1_000),
    ("mbps", 1_000_000),
    ("Mbps", 1_000_000),
    ("gbps", 1_000_000_000),
    ("Gbps", 1_000_000_000),
    ("tbps", 1_000_000_000_000),
    ("Tbps", 1_000_000_000_000),
];
const RATE_ACCEPTED: &str = "bps, kbps, Mbps, Gbps, Tbps";

const SIZE_UNITS: &[(&str, u128)] = &[
    ("B", 1),
    ("KB", 1_000),
    ("kB", 1_000),
    ("MB", 1_000_000),
    ("GB", 1_000_000_000),
    ("TB", 1_000_000_000_000),
    ("KiB", 1 << 10),
    ("MiB", 1 << 20),
    ("GiB", 1 << 30),
    ("TiB", 1 << 40),
];
const SIZE_ACCEPTED: &str =
    "B, KB, MB, GB, TB (powers of 1000), KiB, MiB, GiB, TiB (powers of 1024)";

#[derive(Clone, Copy, PartialEq, Eq)]
enum Rounding {
    Nearest,
    Exact,
}

/// Why a quantity was rejected: a malformed text (with the reason), or a well-formed number
/// whose value does not fit in a `u64` of the base unit.
#[derive(Debug)]
enum QuantityError {
    Invalid(String),
    OutOfRange,
}

impl From<String> for QuantityError {
    fn from(why: String) -> Self {
        QuantityError::Invalid(why)
    }
}

/// The most significant digits a quantity may have. With at most 24 digits the significand
/// times the largest unit factor (2^40) stays below 2^128, so the arithmetic below is exact.
const MAX_SIGNIFICANT_DIGITS: usize = 24;

/// Splits `text` into the number (`digits[.digits][e[+-]digits]`) and the rest. An `e` is
/// part of the number only when digits follow it, so that a unit may still start with `e`.
fn split_number(text: &str) -> (&str, &str) {
    let bytes = text.as_bytes();
    let mut end = bytes
        .iter()
        .position(|&c| !(c.is_ascii_digit() || c == b'.'))
        .unwrap_or(bytes.len());
    if end > 0 && matches!(bytes.get(end), Some(b'e' | b'E')) {
        let mut digits_at = end + 1;
        if matches!(bytes.get(digits_at), Some(b'+' | b'-')) {
            digits_at += 1;
        }
        let digits = bytes[digits_at.min(bytes.len())..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        if digits > 0 {
            end = digits_at + digits;
        }
    }
    (&text[..end], &text[end..])
}

/// Parses `<decimal>[e<exponent>]<unit>` into a count of the base unit (`units` gives the base
/// units per unit), exactly: the value is `significand * 10^exponent * factor`, in integers.
fn parse_quantity(
    text: &str,
    units: &[(&str, u128)],
    accepted: &str,
    rounding: Rounding,
    base: &str,
) -> Result<u64, QuantityError> {
    let text = text.trim();
    if text.starts_with('-') {
        return Err("must not be negative".to_string().into());
    }
    let (number, unit) = split_number(text);
    let unit = unit.trim_start();
    if number.is_empty() {
        let lower = text.trim_start_matches('+').to_ascii_lowercase();
        if lower.starts_with("nan") || lower.starts_with("inf") {
            return Err("not a finite number".to_string().into());
        }
        return Err(format!("expected a number followed by a unit ({accepted})").into());
    }
    let (mantissa, exponent) = match number.find(['e', 'E']) {
        Some(at) => (&number[..at], &number[at + 1..]),
        None => (number, ""),
    };
    let (whole, fraction) = match mantissa.split_once('.') {
        Some((w, f)) => (w, f),
        None => (mantissa, ""),
    };
    if whole.is_empty() || fraction.contains('.') || (mantissa.contains('.') && fraction.is_empty())
    {
        return Err(format!("'{number}' is not a number").into());
    }
    if unit.is_empty() {
        return Err(format!("missing unit (accepted: {accepted})").into());
    }
    let Some(&(_, factor)) = units.iter().find(|(name, _)| *name == unit) else {
        return Err(format!("unknown unit '{unit}' (accepted: {accepted})").into());
    };
    // Exponents far beyond any representable value saturate; the digits then decide.
    let exponent: i64 = match exponent.strip_prefix('-') {
        Some(digits) => -digits.parse::<i64>().unwrap_or(i64::MAX / 2),
        None => exponent
            .trim_start_matches('+')
            .parse::<i64>()
            .unwrap_or(if exponent.is_empty() { 0 } else { i64::MAX / 2 }),
    };
    let digits = format!("{whole}{fraction}");
    let leading = digits.trim_start_matches('0');
    let significant = leading.trim_end_matches('0');
    if significant.is_empty() {
        return Ok(0);
    }
    // value = significand * 10^power * factor
    let power = exponent - fraction.len() as i64 + (leading.len() - significant.len()) as i64;
    // A number of 10^20 or more exceeds u64::MAX whatever its unit (every factor is >= 1).
    if significant.len() as i64 + power > 20 {
        return Err(QuantityError::OutOfRange);
    }
    if significant.len() > MAX_SIGNIFICANT_DIGITS {
        return Err(
            format!("too many significant digits (at most {MAX_SIGNIFICANT_DIGITS})").into(),
        );
    }
    let significand: u128 = significant.parse().expect("at most 24 decimal digits");
    let scaled = significand * factor;
    let value = if power >= 0 {
        u32::try_from(power)
            .ok()
            .and_then(|p| 10u128.checked_pow(p))
            .and_then(|scale| scaled.checked_mul(scale))
            .ok_or(QuantityError::OutOfRange)?
    } else {
        // scaled < 2^128 / 10 < 10^38, so below 10^-38 the quotient is 0, remainder `scaled`.
        let (quotient, remainder, divisor) = match u32::try_from(-power)
            .ok()
            .and_then(|p| 10u128.checked_pow(p))
        {
            Some(divisor) => (scaled / divisor, scaled % divisor, Some(divisor)),
            None => (0, scaled, None),
        };
        match rounding {
            // Half up: remainder * 2 < 2 * 10^38 < 2^128.
            Rounding::Nearest => quotient + u128::from(divisor.is_some_and(|d| remainder * 2 >= d)),
            Rounding::Exact => {
                if remainder != 0 {
                    return Err(format!("not a whole number of {base}").into());
                }
                quotient
            }
        }
    };
    u64::try_from(value).map_err(|_| QuantityError::OutOfRange)
}

/// The largest duration, rate and size, as written in out-of-range messages.
const MAX_DURATION: &str = "18446744073.709551615 s";
const MAX_RATE: &str = "18446744073709551615 bps";
const MAX_SIZE: &str = "18446744073709551615 B";

/// `"<value> is out of range (at most <max>)"`; `value` is shown as written.
fn out_of_range(value: &str, max: &str) -> String {
    format!("{value} is out of range (at most {max})")
}

/// `"<literal> is out of range (at most 9223372036854775807)"` (or at least `i64::MIN` for a
/// negative one): an integer literal that the scenario tree, like TOML, cannot hold.
pub(crate) fn integer_out_of_range(literal: &str) -> String {
    if literal.starts_with('-') {
        format!("{literal} is out of range (at least {})", i64::MIN)
    } else {
        out_of_range(literal, &i64::MAX.to_string())
    }
}

/// As [`integer_out_of_range`] for a float literal beyond the largest finite `f64`.
pub(crate) fn float_out_of_range(literal: &str) -> String {
    if literal.starts_with('-') {
        format!("{literal} is out of range (at least {:e})", f64::MIN)
    } else {
        out_of_range(literal, &format!("{:e}", f64::MAX))
    }
}

/// For a TOML parse error at the start of `rest`: the message for a well-formed number literal
/// there whose value is out of range (TOML reports only that a number is too large or invalid,
/// without showing it). `None` when `rest` does not start with such a literal.
pub(crate) fn toml_number_out_of_range(rest: &str) -> Option<String> {
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '_' | '+' | '-' | '.' | 'e' | 'E')))
        .unwrap_or(rest.len());
    if rest[end..].starts_with(|c: char| c.is_alphanumeric()) {
        return None;
    }
    let literal = &rest[..end];
    let plain: String = literal.chars().filter(|&c| c != '_').collect();
    let unsigned = plain.trim_start_matches(['+', '-']);
    if !unsigned.is_empty() && unsigned.bytes().all(|c| c.is_ascii_digit()) {
        return plain
            .parse::<i64>()
            .is_err()
            .then(|| integer_out_of_range(literal));
    }
    match plain.parse::<f64>() {
        Ok(f) if f.is_infinite() => Some(float_out_of_range(literal)),
        _ => None,
    }
}

/// The message for a rejected quantity: out of range, or invalid with the reason.
fn quantity_message(text: &str, noun: &str, max: &str, error: QuantityError) -> String {
    match error {
        QuantityError::OutOfRange => out_of_range(text.trim(), max),
        QuantityError::Invalid(why) => format!("invalid {noun} \"{text}\": {why}"),
    }
}

/// Parses a duration such as `"60s"`, `"49.5ms"`, `"100us"`, `"5ns"`, `"1.5min"`.
pub fn parse_duration(text: &str) -> Result<SimTime, String> {
    parse_quantity(
        text,
        DURATION_UNITS,
        DURATION_ACCEPTED,
        Rounding::Nearest,
        "nanoseconds",
    )
    .map(SimTime)
    .map_err(|e| quantity_message(text, "duration", MAX_DURATION, e))
}

/// Parses a rate such as `"100Mbps"`, `"1.5Gbps"`, `"10kbps"`; zero is rejected.
pub fn parse_rate(text: &str) -> Result<Rate, String> {
    let bps = parse_quantity(text, RATE_UNITS, RATE_ACCEPTED, Rounding::Nearest, "bit/s")
        .map_err(|e| quantity_message(text, "rate", MAX_RATE, e))?;
    if bps == 0 {
        return Err(format!("invalid rate \"{text}\": must be at least 1 bps"));
    }
    Ok(Rate(bps))
}

/// Parses a size in bytes such as `"150MB"`, `"1.5KB"`, `"64KiB"`, `"1460B"`.
pub fn parse_size(text: &str) -> Result<u64, String> {
    parse_quantity(text, SIZE_UNITS, SIZE_ACCEPTED, Rounding::Exact, "bytes")
        .map_err(|e| quantity_message(text, "size", MAX_SIZE, e))
}

/// How a value is shown in an error message: scalars verbatim, containers by their type.
pub(crate) fn describe(value: &Value) -> String {
    match value {
        Value::String(s) => format!("\"{s}\""),
        Value::Integer(i) => i.to_string(),
        Value::Float(f) => format_float(*f),
        Value::Boolean(b) => b.to_string(),
        Value::Datetime(d) => format!("the date-time {d}"),
        Value::Array(_) => "a list".to_string(),
        Value::Table(_) => "a table".to_string(),
    }
}

/// A float as TOML would write it: always with a fraction or an exponent (so that `1500.0` is
/// not mistaken for the integer `1500`), an exponent for very large or small magnitudes, and
/// `nan`, `inf`, `-inf`.
pub(crate) fn format_float(f: f64) -> String {
    if f.is_nan() {
        "nan".to_string()
    } else if f.is_infinite() {
        if f > 0.0 { "inf" } else { "-inf" }.to_string()
    } else if f != 0.0 && (f.abs() >= 1e16 || f.abs() < 1e-5) {
        format!("{f:e}")
    } else {
        let text = f.to_string();
        if text.contains('.') {
            text
        } else {
            format!("{text}.0")
        }
    }
}

/// A number as messages show it: as Rust writes it (`0.7`, `3`), but with an exponent when the
/// magnitude is very large or small (`5e-324`, where Rust's `Display` writes 324 digits).
pub fn format_number(x: f64) -> String {
    if x.is_finite() && x != 0.0 && (x.abs() >= 1e16 || x.abs() < 1e-5) {
        format!("{x:e}")
    } else {
        x.to_string()
    }
}

fn expected(what: &str, value: &Value) -> String {
    format!("expected {what}, got {}", describe(value))
}

/// A duration: a string with a unit, or a plain number of seconds.
pub(crate) fn duration_value(value: &Value) -> Result<SimTime, String> {
    match value {
        Value::String(s) => parse_duration(s),
        Value::Integer(i) => {
            let secs = u64::try_from(*i).map_err(|_| format!("must not be negative, got {i}"))?;
            secs.checked_mul(1_000_000_000)
                .map(SimTime)
                .ok_or_else(|| out_of_range(&i.to_string(), MAX_DURATION))
        }
        Value::Float(f) => {
            if !f.is_finite() {
                Err(format!(
                    "must be a finite number of seconds, got {}",
                    format_float(*f)
                ))
            } else if *f < 0.0 {
                Err(format!("must not be negative, got {}", format_float(*f)))
            } else if *f * 1e9 >= u64::MAX as f64 {
                Err(out_of_range(&format_float(*f), MAX_DURATION))
            } else {
                Ok(SimTime::from_secs_f64(*f))
            }
        }
        other => Err(expected(EXPECT_DURATION, other)),
    }
}

/// A rate: a string with a unit, or a plain number of bit/s. Never zero.
pub(crate) fn rate_value(value: &Value) -> Result<Rate, String> {
    match value {
        Value::String(s) => parse_rate(s),
        Value::Integer(i) => match u64::try_from(*i) {
            Ok(0) => Err("must be at least 1 bps, got 0".to_string()),
            Ok(bps) => Ok(Rate(bps)),
            Err(_) => Err(format!("must not be negative, got {i}")),
        },
        Value::Float(f) => {
            let shown = format_float(*f);
            if !f.is_finite() {
                Err(format!("must be a finite number of bit/s, got {shown}"))
            } else if *f < 0.0 {
                Err(format!("must not be negative, got {shown}"))
            } else if f.round() < 1.0 {
                Err(format!("must be at least 1 bps, got {shown}"))
            } else if *f >= u64::MAX as f64 {
                Err(out_of_range(&shown, MAX_RATE))
            } else {
                Ok(Rate(f.round() as u64))
            }
        }
        other => Err(expected(EXPECT_RATE, other)),
    }
}

/// A size: a string with a unit, or a plain integer number of bytes.
pub(crate) fn size_value(value: &Value) -> Result<u64, String> {
    match value {
        Value::String(s) => parse_size(s),
        Value::Integer(i) => {
            u64::try_from(*i).map_err(|_| format!("must not be negative, got {i}"))
        }
        other => Err(expected(EXPECT_SIZE, other)),
    }
}

/// A non-negative integer.
pub(crate) fn uint_value(value: &Value) -> Result<u64, String> {
    match value {
        Value::Integer(i) => {
            u64::try_from(*i).map_err(|_| format!("must not be negative, got {i}"))
        }
        other => Err(expected("a non-negative integer", other)),
    }
}

/// A finite number (integers are accepted as numbers).
pub(crate) fn number_value(value: &Value) -> Result<f64, String> {
    match value {
        Value::Integer(i) => Ok(*i as f64),
        Value::Float(f) if f.is_finite() => Ok(*f),
        Value::Float(f) => Err(format!("must be a finite number, got {}", format_float(*f))),
        other => Err(expected("a number", other)),
    }
}

/// A probability in [0, 1].
pub(crate) fn probability_value(value: &Value) -> Result<f64, String> {
    let p = number_value(value).map_err(|_| expected("a probability between 0 and 1", value))?;
    if (0.0..=1.0).contains(&p) {
        Ok(p)
    } else {
        Err(format!(
            "must be a probability between 0 and 1, got {}",
            format_number(p)
        ))
    }
}

pub(crate) fn bool_value(value: &Value) -> Result<bool, String> {
    match value {
        Value::Boolean(b) => Ok(*b),
        other => Err(expected("true or false", other)),
    }
}

pub(crate) fn string_value(value: &Value) -> Result<String, String> {
    match value {
        Value::String(s) => Ok(s.clone()),
        other => Err(expected("a string", other)),
    }
}

/// A name: a non-empty string without surrounding spaces.
pub(crate) fn name_value(value: &Value) -> Result<String, String> {
    let name = string_value(value)?;
    if name.is_empty() {
        Err("must not be empty".to_string())
    } else if name.trim() != name {
        Err(format!("\"{name}\" must not start or end with spaces"))
    } else {
        Ok(name)
    }
}

/// Writes a duration with the largest unit (up to seconds) that represents it exactly.
pub fn format_duration(t: SimTime) -> String {
    let ns = t.as_nanos();
    for (unit, factor) in [("s", 1_000_000_000), ("ms", 1_000_000), ("us", 1_000)] {
        if ns != 0 && ns % factor == 0 {
            return format!("{}{unit}", ns / factor);
        }
    }
    if ns == 0 {
        "0s".to_string()
    } else {
        format!("{ns}ns")
    }
}

/// Writes a rate with the largest SI unit that represents it exactly.
pub fn format_rate(rate: Rate) -> String {
    let bps = rate.bps();
    for (unit, factor) in [
        ("Gbps", 1_000_000_000),
        ("Mbps", 1_000_000),
        ("kbps", 1_000),
    ] {
        if bps != 0 && bps % factor == 0 {
            return format!("{}{unit}", bps / factor);
        }
    }
    format!("{bps}bps")
}

/// Writes a size with the largest binary unit that represents it exactly, else in bytes.
pub fn format_size(bytes: u64) -> String {
    for (unit, factor) in [("GiB", 1u64 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)] {
        if bytes != 0 && bytes % factor == 0 {
            return format!("{}{unit}", bytes / factor);
        }
    }
    format!("{bytes}B")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ns(text: &str) -> u64 {
        parse_duration(text).unwrap().as_nanos()
    }

    #[test]
    fn every_duration_unit() {
        assert_eq!(ns("60s"), 60_000_000_000);
        assert_eq!(ns("49.5ms"), 49_500_000);
        assert_eq!(ns("100us"), 100_000);
        assert_eq!(ns("100µs"), 100_000);
        assert_eq!(ns("5ns"), 5);
        assert_eq!(ns("1.5min"), 90_000_000_000);
        assert_eq!(ns("0s"), 0);
        assert_eq!(ns(" 10 ms "), 10_000_000);
    }

    #[test]
    fn duration_decimals_are_exact_and_rounded_to_nanoseconds() {
        // 0.1 has no exact binary representation; the decimal path must not care.
        assert_eq!(ns("0.1s"), 100_000_000);
        assert_eq!(ns("1.000000001s"), 1_000_000_001);
        assert_eq!(ns("2.5ns"), 3);
        assert_eq!(ns("0.4ns"), 0);
        assert_eq!(ns("007ms"), 7_000_000);
    }

    #[test]
    fn duration_errors() {
        let err = parse_duration("10sec").unwrap_err();
        assert_eq!(
            err,
            "invalid duration \"10sec\": unknown unit 'sec' (accepted: ns, us, ms, s, min)"
        );
        assert!(parse_duration("10").unwrap_err().contains("missing unit"));
        assert!(parse_duration("-5s")
            .unwrap_err()
            .contains("must not be negative"));
        assert!(parse_duration("ms")
            .unwrap_err()
            .contains("expected a number"));
        assert!(parse_duration("1.2.3s")
            .unwrap_err()
            .contains("not a number"));
        assert!(parse_duration(".5s").unwrap_err().contains("not a number"));
        assert!(parse_duration("5.s").unwrap_err().contains("not a number"));
        assert!(parse_duration("NaNs")
            .unwrap_err()
            .contains("not a finite number"));
        assert_eq!(
            parse_duration("99999999999999999999s").unwrap_err(),
            "99999999999999999999s is out of range (at most 18446744073.709551615 s)"
        );
        assert!(parse_duration("1.0000000000000000000000001s")
            .unwrap_err()
            .contains("too many significant digits (at most 24)"));
    }

    #[test]
    fn exponents_are_exact() {
        assert_eq!(ns("1e-3s"), 1_000_000);
        assert_eq!(ns("1E+3ns"), 1_000);
        assert_eq!(ns("1.5e-9s"), 2);
        assert_eq!(ns("2.5e-1ns"), 0);
        assert_eq!(ns("1e-39s"), 0);
        assert_eq!(ns("1e-99999999999999999999s"), 0);
        assert_eq!(ns("0e99999999999999999999s"), 0);
        assert_eq!(ns("18446744073.709551615s"), u64::MAX);
        assert_eq!(ns("18446744073709551615e0ns"), u64::MAX);
        // Trailing zeros do not count as significant digits.
        assert_eq!(ns("1000000000000000000000000000000e-30s"), 1_000_000_000);
        assert!(parse_duration("1e99999999999999999999s")
            .unwrap_err()
            .contains("out of range"));
        assert!(parse_duration("1e39ns")
            .unwrap_err()
            .contains("out of range"));
        assert_eq!(parse_size("1.5e3B").unwrap(), 1_500);
        assert_eq!(parse_size("1e-3KB").unwrap(), 1);
        assert_eq!(
            parse_size("1e-4KB").unwrap_err(),
            "invalid size \"1e-4KB\": not a whole number of bytes"
        );
        assert!(parse_size("1e-40TiB")
            .unwrap_err()
            .contains("not a whole number"));
        assert_eq!(parse_rate("2.5e6bps").unwrap(), Rate(2_500_000));
        assert!(parse_rate("1e-400bps")
            .unwrap_err()
            .contains("at least 1 bps"));
    }

    #[test]
    fn floats_are_shown_as_floats() {
        assert_eq!(format_float(1500.0), "1500.0");
        assert_eq!(format_float(1.5), "1.5");
        assert_eq!(format_float(-0.005), "-0.005");
        assert_eq!(format_float(1e30), "1e30");
        assert_eq!(format_float(-2.5e-7), "-2.5e-7");
        assert_eq!(format_float(f64::NAN), "nan");
        assert_eq!(format_float(f64::NEG_INFINITY), "-inf");
    }

    #[test]
    fn plain_numbers_are_seconds() {
        assert_eq!(
            duration_value(&Value::Integer(3)).unwrap(),
            SimTime::from_secs(3)
        );
        assert_eq!(
            duration_value(&Value::Float(0.0495)).unwrap(),
            SimTime::from_micros(49_500)
        );
        assert!(duration_value(&Value::Integer(-1))
            .unwrap_err()
            .contains("negative"));
        assert!(duration_value(&Value::Float(-0.5))
            .unwrap_err()
            .contains("negative"));
        assert!(duration_value(&Value::Float(f64::NAN))
            .unwrap_err()
            .contains("finite"));
        assert!(duration_value(&Value::Float(f64::INFINITY))
            .unwrap_err()
            .contains("finite"));
        assert!(duration_value(&Value::Integer(i64::MAX))
            .unwrap_err()
            .contains("out of range"));
        let err = duration_value(&Value::Boolean(true)).unwrap_err();
        assert_eq!(err, format!("expected {EXPECT_DURATION}, got true"));
    }

    #[test]
    fn every_rate_unit() {
        assert_eq!(parse_rate("100Mbps").unwrap(), Rate(100_000_000));
        assert_eq!(parse_rate("1.5Gbps").unwrap(), Rate(1_500_000_000));
        assert_eq!(parse_rate("10kbps").unwrap(), Rate(10_000));
        assert_eq!(parse_rate("10Kbps").unwrap(), Rate(10_000));
        assert_eq!(parse_rate("2Tbps").unwrap(), Rate(2_000_000_000_000));
        assert_eq!(parse_rate("64bps").unwrap(), Rate(64));
        assert_eq!(parse_rate("2.5bps").unwrap(), Rate(3));
        assert_eq!(
            rate_value(&Value::Integer(1_000_000)).unwrap(),
            Rate(1_000_000)
        );
        assert_eq!(rate_value(&Value::Float(1e8)).unwrap(), Rate(100_000_000));
    }

    #[test]
    fn rate_errors() {
        // Bytes per second is not accepted: the trap of reading "MBps" as megabits is avoided.
        let err = parse_rate("10MBps").unwrap_err();
        assert_eq!(
            err,
            "invalid rate \"10MBps\": unknown unit 'MBps' (accepted: bps, kbps, Mbps, Gbps, Tbps)"
        );
        assert!(parse_rate("0Mbps").unwrap_err().contains("at least 1 bps"));
        assert!(parse_rate("0.4bps").unwrap_err().contains("at least 1 bps"));
        assert!(parse_rate("-1Mbps").unwrap_err().contains("negative"));
        assert!(rate_value(&Value::Integer(0))
            .unwrap_err()
            .contains("at least 1 bps"));
        assert!(rate_value(&Value::Integer(-5))
            .unwrap_err()
            .contains("negative"));
        assert!(rate_value(&Value::Float(f64::NAN))
            .unwrap_err()
            .contains("finite"));
        assert!(rate_value(&Value::Boolean(false))
            .unwrap_err()
            .starts_with("expected a rate"));
    }

    #[test]
    fn every_size_unit() {
        assert_eq!(parse_size("150MB").unwrap(), 150_000_000);
        assert_eq!(parse_size("1.5KB").unwrap(), 1_500);
        assert_eq!(parse_size("1.5kB").unwrap(), 1_500);
        assert_eq!(parse_size("64KiB").unwrap(), 65_536);
        assert_eq!(parse_size("64MiB").unwrap(), 64 << 20);
        assert_eq!(parse_size("2GiB").unwrap(), 2 << 30);
        assert_eq!(parse_size("1TiB").unwrap(), 1 << 40);
        assert_eq!(parse_size("3GB").unwrap(), 3_000_000_000);
        assert_eq!(parse_size("1TB").unwrap(), 1_000_000_000_000);
        assert_eq!(parse_size("1460B").unwrap(), 1_460);
        assert_eq!(parse_size("0.5KiB").unwrap(), 512);
        assert_eq!(size_value(&Value::Integer(1460)).unwrap(), 1460);
    }

    #[test]
    fn size_errors() {
        assert_eq!(
            parse_size("1.0001KB").unwrap_err(),
            "invalid size \"1.0001KB\": not a whole number of bytes"
        );
        assert!(parse_size("10kb")
            .unwrap_err()
            .contains("unknown unit 'kb'"));
        assert!(parse_size("10").unwrap_err().contains("missing unit"));
        assert!(size_value(&Value::Integer(-1))
            .unwrap_err()
            .contains("negative"));
        assert!(size_value(&Value::Float(1500.0))
            .unwrap_err()
            .starts_with("expected a size"));
        assert!(parse_size("20000000TiB")
            .unwrap_err()
            .contains("out of range"));
    }

    #[test]
    fn scalar_values() {
        assert_eq!(probability_value(&Value::Integer(1)).unwrap(), 1.0);
        assert!(probability_value(&Value::Float(1.5))
            .unwrap_err()
            .contains("between 0 and 1"));
        assert!(probability_value(&Value::Float(-0.1))
            .unwrap_err()
            .contains("between 0 and 1"));
        assert!(probability_value(&Value::String("x".into()))
            .unwrap_err()
            .starts_with("expected"));
        assert!(uint_value(&Value::Integer(-3))
            .unwrap_err()
            .contains("negative"));
        assert!(uint_value(&Value::Float(3.0))
            .unwrap_err()
            .contains("non-negative integer"));
        assert!(name_value(&Value::String(String::new()))
            .unwrap_err()
            .contains("empty"));
        assert!(name_value(&Value::String(" a".into()))
            .unwrap_err()
            .contains("spaces"));
    }

    #[test]
    fn formatting_round_trips() {
        for t in [
            0,
            1,
            999,
            1_000,
            49_500_000,
            200_000_000,
            60_000_000_000,
            1_000_000_001,
        ] {
            assert_eq!(
                parse_duration(&format_duration(SimTime(t))).unwrap(),
                SimTime(t)
            );
        }
        assert_eq!(format_duration(SimTime::from_millis(40)), "40ms");
        for bps in [1, 999, 10_000, 100_000_000, 1_500_000_000, 10_000_000_000] {
            assert_eq!(parse_rate(&format_rate(Rate(bps))).unwrap(), Rate(bps));
        }
        assert_eq!(format_rate(Rate(100_000_000)), "100Mbps");
        for bytes in [0, 1, 1000, 1460, 65_536, 64 << 20, 3 << 30] {
            assert_eq!(parse_size(&format_size(bytes)).unwrap(), bytes);
        }
        assert_eq!(format_size(64 << 20), "64MiB");
    }
}
