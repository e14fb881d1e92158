//! Number formatting shared by the table and the chart labels.

/// `1234567` -> `"1,234,567"`.
pub(crate) fn int(n: u64) -> String {
    group(&n.to_string())
}

/// Inserts thousands separators into a run of ASCII digits (an optional leading `-` is kept).
fn group(digits: &str) -> String {
    let (sign, digits) = match digits.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", digits),
    };
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 + 1);
    out.push_str(sign);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A millisecond value with precision that shrinks as it grows: `0.42`, `12.3`, `1,234`.
/// Not-a-number and infinities print as `-`.
pub(crate) fn ms(v: f64) -> String {
    if !v.is_finite() {
        return "-".to_string();
    }
    let a = v.abs();
    if a < 10.0 {
        format!("{v:.2}")
    } else if a < 100.0 {
        format!("{v:.1}")
    } else {
        group(&format!("{v:.0}"))
    }
}

/// A ratio such as amplification: `2.41x`.
pub(crate) fn times(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.2}x")
    } else {
        "-".to_string()
    }
}

/// A share in `[0, 1]` as a percentage: `19.0%`.
pub(crate) fn pct(v: f64) -> String {
    if v.is_finite() {
        format!("{:.1}%", v * 100.0)
    } else {
        "-".to_string()
    }
}

/// A duration for labels: `10 ms`, `2.5 s`, `250 us`.
pub(crate) fn duration(ms: f64) -> String {
    if !ms.is_finite() {
        return "?".to_string();
    }
    if ms >= 1000.0 {
        format!("{} s", trim(ms / 1000.0))
    } else if ms >= 1.0 || ms == 0.0 {
        format!("{} ms", trim(ms))
    } else {
        format!("{} us", trim(ms * 1000.0))
    }
}

/// An axis tick: like [`trim`], with thousands separators on whole numbers.
pub(crate) fn tick(v: f64) -> String {
    let s = trim(v);
    if !s.contains('.') { group(&s) } else { s }
}

/// Up to three decimals, without trailing zeros: `10`, `2.5`, `0.125`.
pub(crate) fn trim(v: f64) -> String {
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".to_string()
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grouping() {
        assert_eq!(int(0), "0");
        assert_eq!(int(999), "999");
        assert_eq!(int(1000), "1,000");
        assert_eq!(int(1234567), "1,234,567");
        assert_eq!(ms(-1234.4), "-1,234");
    }

    #[test]
    fn precision() {
        assert_eq!(ms(0.421), "0.42");
        assert_eq!(ms(12.34), "12.3");
        assert_eq!(ms(123456.7), "123,457");
        assert_eq!(ms(f64::NAN), "-");
        assert_eq!(times(2.414), "2.41x");
        assert_eq!(pct(0.19), "19.0%");
    }

    #[test]
    fn durations() {
        assert_eq!(duration(10.0), "10 ms");
        assert_eq!(duration(2500.0), "2.5 s");
        assert_eq!(duration(0.25), "250 us");
        assert_eq!(duration(0.0), "0 ms");
        assert_eq!(trim(0.0), "0");
        assert_eq!(tick(100_000.0), "100,000");
        assert_eq!(tick(1000.0), "1,000");
        assert_eq!(tick(0.5), "0.5");
    }
}
