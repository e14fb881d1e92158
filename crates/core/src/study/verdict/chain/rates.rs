//! Metafor's transition rates for one server with a retry orbit (mpi-sws-rse/metafor at
//! 5355c17, `metafor/ctmc_model/single_server/ctmc.py`, `SingleServerCTMC`): a state is `n`
//! requests in the tier (waiting and in service, `0..=max_jobs`) and `o` requests in the orbit
//! (timed out, waiting to be retried or dropped, `0..orbit`). From `(n, o)`:
//!
//! | to | rate | when |
//! |---|---|---|
//! | `(n + 1, o)` | `lambda + o r tail(n)` (`lambda` alone at `n = 0`) | `n < max_jobs` |
//! | `(n + 1, o + 1)` | `alpha lambda tail(n)` | `0 < n < max_jobs`, `o + 1 < orbit` |
//! | `(n + 1, o - 1)` | `o r (1 - tail(n))` | `n < max_jobs` |
//! | `(n, o - 1)` | `o d` (`o (d + r)` at `n = max_jobs`: a retry into a full queue is lost) | `o > 0` |
//! | `(n - 1, o)` | `min(n, workers) mu(n)` | `n > 0` |
//!
//! with `r = R / ((R + 1) T)` and `d = 1 / ((R + 1) T)` for `R` retries of `T` seconds each,
//! `alpha = 0.25` (Metafor's constant), and `tail(n)` Metafor's Chebyshev bound on the share of
//! replies later than the timeout behind `n` requests. The orbit is truncated at `orbit` sizes:
//! an arrival that would grow it past the last is not added to it (Metafor drops that
//! transition). The chain is a quasi-birth-death process: levels are `n`, phases `o`.

use super::blocks::{Block, Tridiagonal};

/// Metafor's `alpha`: the share of timed-out arrivals that join the orbit at once, a constant it
/// fits "with simulation data" (`SingleServerCTMC.__init__`'s default).
pub const ALPHA: f64 = 0.25;

/// The rates of one tier's chain, per second.
#[derive(Clone, Debug)]
pub struct Rates {
    /// Arrivals of first attempts.
    pub arrival: f64,
    /// Mean service time with one worker busy, seconds.
    pub service: f64,
    /// `server.slowdown`: each other busy worker adds this share of the service time.
    pub slowdown: f64,
    pub workers: usize,
    /// The most requests the tier holds (queue and workers).
    pub max_jobs: usize,
    /// Orbit sizes kept (`0..orbit`).
    pub orbit: usize,
    /// The per-attempt timeout, seconds (for `tail`).
    pub timeout: f64,
    /// Retries after the first attempt.
    pub retries: f64,
    /// Seconds an attempt takes in the orbit: the timeout and the mean backoff after it.
    pub attempt_s: f64,
}

impl Rates {
    /// The rate at which one orbiting request is retried: `R / ((R + 1) T)`.
    pub fn retry(&self) -> f64 {
        self.retries / ((self.retries + 1.0) * self.attempt_s)
    }

    /// The rate at which one orbiting request gives up: `1 / ((R + 1) T)`.
    pub fn drop(&self) -> f64 {
        1.0 / ((self.retries + 1.0) * self.attempt_s)
    }

    /// Requests per second served with `n` in the tier.
    pub fn served(&self, n: usize) -> f64 {
        let busy = n.min(self.workers) as f64;
        if busy == 0.0 {
            return 0.0;
        }
        busy / (self.service * (1.0 + self.slowdown * (busy - 1.0)))
    }

    /// Metafor's `_tail_prob_computer`: the share of replies later than the timeout behind `n`
    /// requests, bounded by Chebyshev's inequality for the sum of `n` exponential services at
    /// the level's rate (mean `n / rate`, variance `n / rate^2`); 1 once the timeout is within
    /// one standard deviation of the mean.
    pub fn tail(&self, n: usize) -> f64 {
        if n == 0 {
            return 0.0;
        }
        let rate = self.served(n);
        let mean = n as f64 / rate;
        let sigma = (n as f64).sqrt() / rate;
        let slack = self.timeout - mean;
        if slack > sigma {
            (sigma / slack).powi(2)
        } else {
            1.0
        }
    }

    /// The generator restricted to levels `from..to` (the states outside are absorbing for a
    /// hitting time; the diagonal keeps every rate out, also those leaving the range).
    pub fn generator(&self, from: usize, to: usize) -> Tridiagonal {
        let levels = from..to;
        Tridiagonal {
            diag: levels.clone().map(|n| self.local(n)).collect(),
            upper: (from..to.saturating_sub(1)).map(|n| self.up(n)).collect(),
            lower: (from + 1..to).map(|n| self.down(n)).collect(),
        }
    }

    /// Level `n` to `n + 1`.
    fn up(&self, n: usize) -> Block {
        let mut b = Block::zeros(self.orbit);
        if n >= self.max_jobs {
            return b;
        }
        let (r, tail) = (self.retry(), self.tail(n));
        for o in 0..self.orbit {
            let of = o as f64;
            if n == 0 {
                b.set(o, o, self.arrival);
                if o > 0 {
                    b.set(o, o - 1, of * r);
                }
                continue;
            }
            b.set(o, o, self.arrival + of * r * tail);
            if o + 1 < self.orbit {
                b.set(o, o + 1, ALPHA * self.arrival * tail);
            }
            if o > 0 {
                b.set(o, o - 1, of * r * (1.0 - tail));
            }
        }
        b
    }

    /// Level `n` to `n - 1`: a service completes.
    fn down(&self, n: usize) -> Block {
        let mut b = Block::zeros(self.orbit);
        let served = self.served(n);
        for o in 0..self.orbit {
            b.set(o, o, served);
        }
        b
    }

    /// Within level `n`: orbiting requests give up (or, at a full tier, are lost), and the
    /// diagonal: minus every rate out of the state.
    fn local(&self, n: usize) -> Block {
        let mut b = Block::zeros(self.orbit);
        let leave = if n >= self.max_jobs {
            self.drop() + self.retry()
        } else {
            self.drop()
        };
        for o in 1..self.orbit {
            b.set(o, o - 1, o as f64 * leave);
        }
        let up = self.up(n);
        let down = if n > 0 { self.served(n) } else { 0.0 };
        for o in 0..self.orbit {
            let out: f64 = (0..self.orbit)
                .map(|j| up.at(o, j) + b.at(o, j))
                .sum::<f64>()
                + down;
            b.set(o, o, -out);
        }
        b
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// Metafor's README "Example 1" as its own chain: 10/s, one thread, `qsize = 100` (levels
    /// 0..=99), an orbit of 20, 9.5/s, 3 s, 4 retries (as `benches/peers/metafor_ctmc.py`
    /// builds it).
    pub(in super::super) fn example() -> Rates {
        Rates {
            arrival: 9.5,
            service: 0.1,
            slowdown: 0.0,
            workers: 1,
            max_jobs: 99,
            orbit: 20,
            timeout: 3.0,
            retries: 4.0,
            attempt_s: 3.0,
        }
    }

    #[test]
    fn rows_of_the_full_generator_sum_to_zero() {
        let r = example();
        let g = r.generator(0, r.max_jobs + 1);
        for n in 0..=r.max_jobs {
            for o in 0..r.orbit {
                let mut sum: f64 = (0..r.orbit).map(|j| g.diag[n].at(o, j)).sum();
                if n < r.max_jobs {
                    sum += (0..r.orbit).map(|j| g.upper[n].at(o, j)).sum::<f64>();
                }
                if n > 0 {
                    sum += (0..r.orbit).map(|j| g.lower[n - 1].at(o, j)).sum::<f64>();
                }
                assert!(sum.abs() < 1e-9, "row ({n}, {o}) sums to {sum}");
            }
        }
    }

    #[test]
    fn metafor_rates_and_tail() {
        let r = example();
        assert!((r.retry() - 4.0 / 15.0).abs() < 1e-15);
        assert!((r.drop() - 1.0 / 15.0).abs() < 1e-15);
        // 10 requests at 10/s: mean 1 s, sigma 0.316 s, 2 s of slack: (0.316 / 2)^2 = 0.025.
        assert!((r.tail(10) - 0.025).abs() < 1e-12);
        // 27 requests: mean 2.7 s, sigma 0.52 s > 0.3 s of slack: certain.
        assert_eq!(r.tail(27), 1.0);
        assert_eq!(r.tail(0), 0.0);
    }
}
