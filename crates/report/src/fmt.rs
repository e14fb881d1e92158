//! The one number formatter of every text output: the tables, the `run` view, the HTML report,
//! chart labels and the CLI's progress bars. Thousands are grouped with `,`; precision shrinks as
//! the number grows ([`num`]); a mean with a confidence interval is given to the precision of its
//! interval ([`pm`]).

/// Quotes a word for a POSIX shell when it needs it.
pub fn shell_word(w: &str) -> String {
    if !w.is_empty()
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
    {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', r"'\''"))
    }
}

/// How a table's header names the runs: `seed 1`, or for `seeds` replications from `seed`
/// (`--seeds 5`) `5 seeds, 1..5`, as the charts' titles say.
pub fn seeds_label(seed: u64, seeds: u32) -> String {
    if seeds > 1 {
        let last = seed.saturating_add(u64::from(seeds) - 1);
        format!("{seeds} seeds, {seed}..{last}")
    } else {
        format!("seed {seed}")
    }
}

/// `1234567` -> `"1,234,567"`.
pub fn int(n: u64) -> String {
    group(&n.to_string())
}

/// Inserts thousands separators into the integer part of a decimal number written by `format!`
/// (an optional leading `-` and a fraction are kept).
fn group(text: &str) -> String {
    let (sign, rest) = match text.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", text),
    };
    let (digits, frac) = rest
        .split_once('.')
        .map_or((rest, None), |(i, f)| (i, Some(f)));
    let mut out = String::with_capacity(text.len() + digits.len() / 3 + 1);
    out.push_str(sign);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if let Some(f) = frac {
        out.push('.');
        out.push_str(f);
    }
    out
}

/// How many decimals [`num`] gives `v`: none from 100 up, one from 10, two from 0.01, and below
/// that enough for one significant digit (at most 6).
pub fn decimals(v: f64) -> usize {
    let a = v.abs();
    if !a.is_finite() || a == 0.0 || a >= 100.0 {
        0
    } else if a >= 10.0 {
        1
    } else if a >= 0.01 {
        2
    } else {
        ((-a.log10().floor()) as usize).min(6)
    }
}

/// `v` with `d` decimals and thousands grouped; `-` when not finite.
pub fn fixed(v: f64, d: usize) -> String {
    if !v.is_finite() {
        return "-".to_string();
    }
    let s = group(&format!("{v:.d$}"));
    // `-0`, `-0.00`: a negative number rounded to zero.
    if s.starts_with('-') && s[1..].chars().all(|c| c == '0' || c == '.') {
        s[1..].to_string()
    } else {
        s
    }
}

/// Any measured number: `0`, `0.42`, `0.007`, `12.3`, `2,098`, `1,234,567`. Not-a-number and
/// infinities print as `-`.
pub fn num(v: f64) -> String {
    fixed(v, decimals(v))
}

/// `mean ± half-width`, the mean to the precision of the half-width (`171.2 ± 12.3`); only the
/// mean, as [`num`] gives it alone, when there is no interval (one replication) or it is zero
/// at the finest precision shown (six decimals): `4,075`, not `4,074.766335 ± 0.000000`.
pub fn pm(mean: f64, half: Option<f64>) -> String {
    pm_with(mean, half, num, "")
}

/// A ratio with its interval, by the rule of [`pm`] and the suffix of [`times`]: `6.00x` alone,
/// `1.0705x ± 0.0001` with an interval.
pub fn pm_times(mean: f64, half: Option<f64>) -> String {
    pm_with(mean, half, times, "x")
}

fn pm_with(mean: f64, half: Option<f64>, alone: fn(f64) -> String, unit: &str) -> String {
    match half {
        Some(h)
            if h.is_finite()
                && fixed(h, decimals(h))
                    .bytes()
                    .any(|b| b.is_ascii_digit() && b != b'0') =>
        {
            let d = decimals(h);
            if mean.is_finite() {
                format!("{}{unit} ± {}", fixed(mean, d), fixed(h, d))
            } else {
                "-".to_string()
            }
        }
        _ => alone(mean),
    }
}

/// A millisecond value: [`num`].
pub fn ms(v: f64) -> String {
    num(v)
}

/// A ratio such as amplification, always with two decimals: `2.41x`, `6.00x`.
pub fn times(v: f64) -> String {
    if v.is_finite() {
        format!("{}x", fixed(v, 2))
    } else {
        "-".to_string()
    }
}

/// A rate per second: `35,539/s`, `2.5/s`.
pub fn per_s(v: f64) -> String {
    format!("{}/s", num(v))
}

/// A share in `[0, 1]` as a percentage: `19.0%`.
pub fn pct(v: f64) -> String {
    if v.is_finite() {
        format!("{:.1}%", v * 100.0)
    } else {
        "-".to_string()
    }
}

/// A duration for labels: `10 ms`, `2.5 s`, `250 us`.
pub fn duration(ms: f64) -> String {
    if !ms.is_finite() {
        return "?".to_string();
    }
    let short = |v: f64| {
        let s = fixed(v, decimals(v));
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if ms >= 1000.0 {
        format!("{} s", short(ms / 1000.0))
    } else if ms >= 1.0 || ms == 0.0 {
        format!("{} ms", short(ms))
    } else {
        format!("{} us", short(ms * 1000.0))
    }
}

/// An axis tick: like [`trim`], with thousands separators on whole numbers.
pub fn tick(v: f64) -> String {
    let s = trim(v);
    if !s.contains('.') { group(&s) } else { s }
}

/// Up to three decimals, without trailing zeros: `10`, `2.5`, `0.125`.
pub fn trim(v: f64) -> String {
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".to_string()
    } else {
        s.to_string()
    }
}

/// What a metric is, for an axis label: `peak retries per 10 ms` for `peak_retries` with 10 ms
/// buckets, `p99 completion time (ms)` for `completion_ms.p99`. Unknown names are spelled out
/// (`mean_wait_ms` -> `mean wait (ms)`).
pub fn metric_label(metric: &str, bucket_ms: Option<f64>) -> String {
    let per = bucket_ms
        .filter(|b| b.is_finite() && *b > 0.0)
        .map_or("per bucket".to_string(), |b| format!("per {}", duration(b)));
    if let Some(p) = metric.strip_prefix("completion_ms.") {
        let what = match p {
            "p50" => "median".to_string(),
            "p999" => "p99.9".to_string(),
            "max" => "longest".to_string(),
            other => other.to_string(),
        };
        return format!("{what} completion time (ms)");
    }
    let known = match metric {
        "amplification" => Some("amplification (attempts per intent)".to_string()),
        "peak_retries" => Some(format!("peak retries {per}")),
        "peak_arrivals" => Some(format!("peak arrivals {per}")),
        "succeeded" => Some("intents succeeded".into()),
        "failed" => Some("intents failed".into()),
        "lost" => Some("intents lost (effect never applied)".into()),
        "duplicated" => Some("intents applied twice or more".into()),
        "phantom" => Some("phantom successes (told success, never applied)".into()),
        "false_failures" => Some("false failures (gave up, but applied)".into()),
        "wasted_share" => Some("share of server work wasted".into()),
        "goodput_per_s" => Some("goodput (successes per second)".into()),
        "offered_per_s" => Some("offered load (arrivals per second)".into()),
        "recovery_ms" => Some("recovery time after the trigger (ms)".into()),
        "rejected" => Some("requests rejected at once".into()),
        "timeouts" => Some("attempt timeouts".into()),
        _ => None,
    };
    known.unwrap_or_else(|| {
        let (name, unit) = match metric.strip_suffix("_ms") {
            Some(n) => (n, " (ms)"),
            None => (metric, ""),
        };
        format!("{}{unit}", name.replace(['_', '.'], " "))
    })
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
        assert_eq!(times(6.0), "6.00x");
        assert_eq!(num(0.0), "0");
        assert_eq!(num(2097.9106149790737), "2,098");
        assert_eq!(num(0.0071), "0.007");
        assert_eq!(num(-0.0001), "-0.0001");
        assert_eq!(fixed(-0.001, 1), "0.0");
        assert_eq!(per_s(35538.6216), "35,539/s");
    }

    #[test]
    fn metric_labels() {
        assert_eq!(
            metric_label("peak_retries", Some(10.0)),
            "peak retries per 10 ms"
        );
        assert_eq!(
            metric_label("completion_ms.p99", None),
            "p99 completion time (ms)"
        );
        assert_eq!(metric_label("mean_wait_ms", None), "mean wait (ms)");
        assert_eq!(metric_label("layered.orphaned", None), "layered orphaned");
    }

    #[test]
    fn mean_and_interval() {
        assert_eq!(pm(1000.0, Some(0.0)), "1,000");
        assert_eq!(pm(171.2, Some(12.34)), "171.2 ± 12.3");
        assert_eq!(pm(171.2, Some(123.4)), "171 ± 123");
        assert_eq!(pm(1.3333, Some(0.007)), "1.333 ± 0.007");
        assert_eq!(pm(2.4142, None), "2.41");
        assert_eq!(pm(12345.6, Some(2.0)), "12,345.60 ± 2.00");
        // An interval that is zero at six decimals is no interval.
        assert_eq!(pm(4074.766335, Some(1e-9)), "4,075");
        assert_eq!(pm(4074.766335, Some(4e-6)), "4,074.766335 ± 0.000004");
        assert_eq!(pm_times(6.0, None), "6.00x");
        assert_eq!(pm_times(6.0, Some(1e-12)), "6.00x");
        assert_eq!(pm_times(1.07049, Some(0.00012)), "1.0705x ± 0.0001");
    }

    #[test]
    fn durations() {
        assert_eq!(duration(10.0), "10 ms");
        assert_eq!(duration(2500.0), "2.5 s");
        assert_eq!(duration(0.25), "250 us");
        assert_eq!(duration(0.0), "0 ms");
        assert_eq!(duration(18456.0), "18.5 s");
        assert_eq!(duration(123456.0), "123 s");
        assert_eq!(trim(0.0), "0");
        assert_eq!(tick(100_000.0), "100,000");
        assert_eq!(tick(1000.0), "1,000");
        assert_eq!(tick(0.5), "0.5");
    }
}
