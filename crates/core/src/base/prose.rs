//! Numbers as the sentences that explain a result write them.

/// A number for a sentence: at most 3 significant decimals, no trailing zeros.
pub fn short(x: f64) -> String {
    if !x.is_finite() {
        return if x > 0.0 {
            "unlimited".into()
        } else {
            "-".into()
        };
    }
    let digits = if x.abs() >= 100.0 {
        0
    } else if x.abs() >= 10.0 {
        1
    } else if x.abs() >= 1.0 {
        2
    } else {
        3
    };
    let s = format!("{x:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}
