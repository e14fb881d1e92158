//! Layered retries: the closed forms for retries stacked across the hops of a request path.
//!
//! A path whose every hop retries (`[[layer]]` or `[[tier]]` tables, run by [`crate::sim::path`])
//! multiplies attempts: a failure at the bottom is seen by every caller above, and each may
//! retry it, so three hops of three attempts can send 3^3 = 27 attempts to the bottom for one
//! user action (the article: "Retry at one layer"; the Google SRE book, chapter "Addressing
//! Cascading Failures", on retries at multiple levels of the stack). The expected number of
//! bottom attempts per intent has a closed form when failures are independent and nothing times
//! out ([`expected_bottom_attempts`], derived in `docs/layered.md`); `tests/integration/layered.rs` checks
//! the engine against it.

/// `E[attempts at the bottom per intent]` when the bottom fails each attempt independently with
/// probability `p` and no layer times out or has a budget. `max_attempts` lists the layers top
/// first. With `q_1 = p` for the last layer, layer `k` (counted from the bottom) makes on average
/// `(1 - q_k^{n_k}) / (1 - q_k)` attempts per call (`n_k` when `q_k = 1`) and fails a call with
/// probability `q_{k+1} = q_k^{n_k}`; by Wald's identity the expected attempts multiply. The
/// product telescopes to `(1 - p^N) / (1 - p)` with `N` the product of `max_attempts`.
pub fn expected_bottom_attempts(p: f64, max_attempts: &[u32]) -> f64 {
    let mut q = p;
    let mut e = 1.0;
    for &n in max_attempts.iter().rev() {
        let n = n as i32;
        e *= if q >= 1.0 {
            f64::from(n)
        } else {
            (1.0 - q.powi(n)) / (1.0 - q)
        };
        q = q.powi(n);
    }
    e
}

/// The bottom attempts per intent when every attempt fails: the product of `max_attempts`.
pub fn worst_case_bottom_attempts(max_attempts: &[u32]) -> f64 {
    max_attempts.iter().map(|&n| f64::from(n)).product()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closed_form_edges() {
        assert_eq!(expected_bottom_attempts(0.0, &[3, 3, 3]), 1.0);
        assert_eq!(expected_bottom_attempts(1.0, &[3, 3, 3]), 27.0);
        assert_eq!(worst_case_bottom_attempts(&[3, 3, 3]), 27.0);
        // One layer: 1 + p + p^2.
        assert!((expected_bottom_attempts(0.5, &[3]) - 1.75).abs() < 1e-12);
        // Two layers of 2 with p = 0.5: bottom layer 1.5 per call and fails with 0.25; the top
        // makes 1 + 0.25 calls: 1.5 * 1.25.
        assert!((expected_bottom_attempts(0.5, &[2, 2]) - 1.875).abs() < 1e-12);
        // The telescoped form.
        for (p, n) in [
            (0.9, vec![3, 3, 3, 3]),
            (0.3, vec![2, 4]),
            (0.99, vec![5, 1, 7]),
        ] {
            let big_n: i32 = n.iter().map(|&x| x as i32).product();
            let closed = (1.0 - f64::powi(p, big_n)) / (1.0 - p);
            assert!((expected_bottom_attempts(p, &n) - closed).abs() < 1e-9 * closed);
        }
    }
}
