//! Simulated time: integer nanoseconds, never floats, never the wall clock.
//!
//! Model files spell durations as strings with units (`"250us"`, `"10ms"`, `"2s"`, `"1m"`);
//! [`Duration::parse`] is the one place that reads them.

use std::fmt;

/// A span of simulated time in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Duration(pub u64);

/// An instant on the simulated clock: nanoseconds since the start of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(pub u64);

const UNITS: &[(&str, u64)] = &[
    ("ns", 1),
    ("us", 1_000),
    ("µs", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("m", 60_000_000_000),
    ("h", 3_600_000_000_000),
];

/// Why a duration string was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DurationError {
    #[error("expected a duration with a unit (ns, us, ms, s, m, h), e.g. \"10ms\", got {0:?}")]
    NoUnit(String),
    #[error("durations cannot be negative, got {0:?}")]
    Negative(String),
    #[error("not a finite number in {0:?}")]
    NotANumber(String),
    /// What stands before the unit is no number (`1.5.3s`).
    #[error("expected a number before the unit, got {0:?} in {1:?}")]
    Malformed(String, String),
    #[error("duration {0:?} is too large (at most about 584 years)")]
    TooLarge(String),
}

impl Duration {
    pub const ZERO: Duration = Duration(0);

    pub const fn from_nanos(ns: u64) -> Self {
        Duration(ns)
    }
    pub const fn from_micros(us: u64) -> Self {
        Duration(us * 1_000)
    }
    pub const fn from_millis(ms: u64) -> Self {
        Duration(ms * 1_000_000)
    }
    pub const fn from_secs(s: u64) -> Self {
        Duration(s * 1_000_000_000)
    }
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// Milliseconds as f64: the unit of every `*_ms` field in the JSON output.
    pub fn as_millis_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    /// Rounds a non-negative finite number of nanoseconds to a duration (saturating).
    pub fn from_nanos_f64(ns: f64) -> Self {
        if ns.is_nan() || ns <= 0.0 {
            Duration(0)
        } else if ns >= u64::MAX as f64 {
            Duration(u64::MAX)
        } else {
            Duration(ns.round() as u64)
        }
    }
    pub fn saturating_mul_f64(self, k: f64) -> Self {
        Self::from_nanos_f64(self.0 as f64 * k)
    }

    /// Parses `"10ms"`, `"2.5s"`, `"250us"`, `"1m"`, `"0"` (zero needs no unit).
    pub fn parse(text: &str) -> Result<Duration, DurationError> {
        let s = text.trim();
        if s == "0" {
            return Ok(Duration(0));
        }
        if s.starts_with('-') {
            return Err(DurationError::Negative(text.to_string()));
        }
        // The number's end: digits, '.', '_', an exponent's 'e' and its sign ("1e-3s").
        let split = s
            .char_indices()
            .find(|&(i, c)| {
                let exponent_minus = c == '-' && s[..i].ends_with('e');
                !(c.is_ascii_digit()
                    || c == '.'
                    || c == '_'
                    || c == 'e'
                    || c == '+'
                    || exponent_minus)
            })
            .map(|(i, _)| i)
            .ok_or_else(|| DurationError::NoUnit(text.to_string()))?;
        // "1e3ms" is fine but the 'e' of a unit must not be eaten: units never start with 'e'.
        let (num, unit) = s.split_at(split);
        let unit = unit.trim();
        let scale = UNITS
            .iter()
            .find(|(u, _)| *u == unit)
            .map(|(_, k)| *k)
            .ok_or_else(|| DurationError::NoUnit(text.to_string()))?;
        let num = num.replace('_', "");
        if num.is_empty() {
            return Err(DurationError::NoUnit(text.to_string()));
        }
        if let Ok(n) = num.parse::<u64>() {
            return n
                .checked_mul(scale)
                .map(Duration)
                .ok_or_else(|| DurationError::TooLarge(text.to_string()));
        }
        let x: f64 = num
            .parse()
            .map_err(|_| DurationError::Malformed(num.clone(), text.to_string()))?;
        if !x.is_finite() {
            return Err(DurationError::NotANumber(text.to_string()));
        }
        let ns = x * scale as f64;
        if ns >= u64::MAX as f64 {
            return Err(DurationError::TooLarge(text.to_string()));
        }
        Ok(Duration(ns.round() as u64))
    }
}

impl Time {
    pub const ZERO: Time = Time(0);
    pub const MAX: Time = Time(u64::MAX);

    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    pub fn as_millis_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }
    /// `self + d`, saturating at the end of time so that "never" stays representable.
    pub fn after(self, d: Duration) -> Time {
        Time(self.0.saturating_add(d.0))
    }
    /// Elapsed time since `earlier` (zero if `earlier` is later).
    pub fn since(self, earlier: Time) -> Duration {
        Duration(self.0.saturating_sub(earlier.0))
    }
}

impl std::ops::Add<Duration> for Time {
    type Output = Time;
    fn add(self, d: Duration) -> Time {
        self.after(d)
    }
}

impl std::ops::Add for Duration {
    type Output = Duration;
    fn add(self, d: Duration) -> Duration {
        Duration(self.0.saturating_add(d.0))
    }
}

impl fmt::Display for Duration {
    /// The shortest exact spelling: `10ms`, `2s`, `250us`, `1500ns`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ns = self.0;
        if ns == 0 {
            return write!(f, "0s");
        }
        for (unit, k) in [
            ("h", 3_600_000_000_000u64),
            ("m", 60_000_000_000),
            ("s", 1_000_000_000),
            ("ms", 1_000_000),
            ("us", 1_000),
        ] {
            if ns % k == 0 {
                return write!(f, "{}{unit}", ns / k);
            }
        }
        write!(f, "{ns}ns")
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "t={}", Duration(self.0))
    }
}

impl<'de> serde::Deserialize<'de> for Duration {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Duration;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a duration string with a unit, e.g. \"10ms\"")
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Duration, E> {
                Duration::parse(s).map_err(E::custom)
            }
            fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<Duration, E> {
                if n == 0 {
                    Ok(Duration(0))
                } else {
                    Err(E::custom(format!(
                        "expected a duration string with a unit (ns, us, ms, s, m, h), e.g. \"{n}ms\", got the bare number {n}"
                    )))
                }
            }
            fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<Duration, E> {
                self.visit_i64(n as i64)
            }
            fn visit_f64<E: serde::de::Error>(self, n: f64) -> Result<Duration, E> {
                Err(E::custom(format!(
                    "expected a duration string with a unit (ns, us, ms, s, m, h), e.g. \"10ms\", got the bare number {n}"
                )))
            }
        }
        d.deserialize_any(V)
    }
}

impl serde::Serialize for Duration {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units() {
        assert_eq!(Duration::parse("250us"), Ok(Duration(250_000)));
        assert_eq!(Duration::parse("10ms"), Ok(Duration(10_000_000)));
        assert_eq!(Duration::parse("2s"), Ok(Duration(2_000_000_000)));
        assert_eq!(Duration::parse("1m"), Ok(Duration(60_000_000_000)));
        assert_eq!(Duration::parse("1.5ms"), Ok(Duration(1_500_000)));
        assert_eq!(Duration::parse("0"), Ok(Duration(0)));
        assert_eq!(Duration::parse("1_000ns"), Ok(Duration(1000)));
    }

    #[test]
    fn refuses_bad_input() {
        assert!(matches!(
            Duration::parse("10"),
            Err(DurationError::NoUnit(_))
        ));
        assert!(matches!(
            Duration::parse("-5ms"),
            Err(DurationError::Negative(_))
        ));
        assert!(matches!(
            Duration::parse("ms"),
            Err(DurationError::NoUnit(_))
        ));
        assert!(matches!(
            Duration::parse("10 parsecs"),
            Err(DurationError::NoUnit(_))
        ));
        assert!(Duration::parse("nanms").is_err());
        assert!(Duration::parse("1e400s").is_err());
        // An exponent's minus sign is the number's; what is below a nanosecond rounds to 0.
        assert_eq!(Duration::parse("1e-3s"), Ok(Duration::from_millis(1)));
        assert_eq!(Duration::parse("1e-400s"), Ok(Duration::ZERO));
        assert_eq!(
            Duration::parse("1.5.3s").unwrap_err().to_string(),
            "expected a number before the unit, got \"1.5.3\" in \"1.5.3s\""
        );
        assert!(Duration::parse("99999999999h").is_err());
    }

    #[test]
    fn display_round_trips() {
        for s in ["10ms", "2s", "250us", "1m", "1500ns", "3h"] {
            assert_eq!(Duration::parse(s).unwrap().to_string(), s);
        }
    }
}

/// Requests per second, written `"80/s"`, `"5/ms"`, `"1200/m"`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rate(pub f64);

impl Rate {
    pub fn parse(text: &str) -> Result<Rate, String> {
        let (n, unit) = text.split_once('/').ok_or_else(|| {
            format!("expected a rate like \"80/s\" (per ms, s, m or h), got {text:?}")
        })?;
        let n: f64 = n
            .trim()
            .parse()
            .map_err(|_| format!("expected a rate like \"80/s\", got {text:?}"))?;
        let per = match unit.trim() {
            "ms" => 1e-3,
            "s" => 1.0,
            "m" | "min" => 60.0,
            "h" => 3600.0,
            u => {
                return Err(format!(
                    "unknown rate unit {u:?} in {text:?}; allowed: /ms, /s, /m, /h"
                ));
            }
        };
        if !n.is_finite() || n < 0.0 {
            return Err(format!("a rate must be finite and >= 0, got {text:?}"));
        }
        Ok(Rate(n / per))
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/s", self.0)
    }
}

impl serde::Serialize for Rate {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> serde::Deserialize<'de> for Rate {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <String as serde::Deserialize>::deserialize(d)?;
        Rate::parse(&s).map_err(serde::de::Error::custom)
    }
}

/// A half-open window of simulated time `[from, to)`.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Window {
    pub from: Duration,
    pub to: Duration,
}
