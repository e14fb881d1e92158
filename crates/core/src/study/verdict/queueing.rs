//! A tier as a queueing station: its capacity, its mean response time at a load and the share
//! of attempts that outlast a timeout. A bounded pool of workers is an M/M/c queue (Erlang's C
//! formula, with `server.slowdown` taken at the busy workers' fixed point); an unbounded pool
//! whose service slows with concurrency is its fluid limit (Little's law: `n = a * s * (1 + k *
//! (n - 1))`), the model of Brooker's `simple_collapse_sim`.

use crate::base::dist::Dist;
use crate::model::{Network, Server};

/// Above this many workers Erlang's C formula is taken as 0 below 99.9 % utilisation (a large
/// pool barely queues), so that a verdict stays a few milliseconds.
const ERLANG_WORKERS: f64 = 20_000.0;

/// A tier's service side, in seconds and requests per second.
#[derive(Clone, Debug)]
pub(super) struct Station {
    /// Workers over every replica; none = unlimited.
    pub workers: Option<f64>,
    /// Mean service time with one worker busy.
    pub service: f64,
    /// `server.slowdown`: each other request in service adds this fraction of the service time.
    pub slowdown: f64,
    /// The service-time distribution (for the share of services longer than a timeout).
    pub dist: Dist,
    /// Mean network time of a round trip from the callers (request and reply).
    pub network: f64,
}

impl Station {
    pub fn of(server: &Server, network: &Network) -> Station {
        Station {
            workers: server
                .capacity
                .0
                .map(|c| c as f64 * f64::from(server.replicas)),
            service: server.service.mean_ns() / 1e9,
            slowdown: server.slowdown,
            dist: server.service,
            network: (network.request_latency().mean_ns() + network.response_latency().mean_ns())
                / 1e9,
        }
    }

    /// The same station with fewer workers (ejected replicas, a capacity drop) or slower service.
    pub fn scaled(&self, workers: f64, service_factor: f64) -> Station {
        Station {
            workers: self.workers.map(|w| w * workers),
            service: self.service * service_factor,
            ..self.clone()
        }
    }

    /// Busy workers at load `a` (requests/s): the fixed point of `b = a * s * (1 + k * (b - 1))`;
    /// none when it has none (the load is past capacity).
    fn busy(&self, a: f64) -> Option<f64> {
        let (s, k) = (self.service, self.slowdown);
        let denominator = 1.0 - a * s * k;
        let b = if k == 0.0 {
            a * s
        } else if denominator > 0.0 {
            a * s * (1.0 - k) / denominator
        } else {
            return None;
        };
        let b = b.max(a * s);
        match self.workers {
            Some(c) if b >= c => None,
            _ => Some(b),
        }
    }

    /// Mean service time with `b` workers busy.
    fn service_with(&self, b: f64) -> f64 {
        self.service * (1.0 + self.slowdown * (b - 1.0).max(0.0))
    }

    /// The most requests per second the tier serves: its workers at full slowdown, or (no
    /// worker limit) where the slowdown's fixed point diverges; none = unlimited.
    pub fn capacity(&self) -> Option<f64> {
        if self.service <= 0.0 {
            return None;
        }
        match self.workers {
            Some(c) => Some(c / self.service_with(c)),
            None if self.slowdown > 0.0 => Some(1.0 / (self.service * self.slowdown)),
            None => None,
        }
    }

    /// Mean time from sending an attempt to its reply at load `a`: network, queueing and
    /// service; infinite at or past capacity.
    pub fn response(&self, a: f64) -> f64 {
        let Some(b) = self.busy(a) else {
            return f64::INFINITY;
        };
        let s = self.service_with(b);
        let wait = match self.workers {
            Some(c) if a > 0.0 => erlang_c(c, a * s) * s / (c - a * s),
            _ => 0.0,
        };
        self.network + s + wait
    }

    /// The share of attempts at load `a` whose reply comes after `timeout` seconds: the wait
    /// (Erlang C's exponential tail) or the service itself outlasting it.
    pub fn late_share(&self, a: f64, timeout: f64) -> f64 {
        let Some(b) = self.busy(a) else {
            return 1.0;
        };
        let s = self.service_with(b);
        let room = timeout - self.network;
        if room <= 0.0 {
            return 1.0;
        }
        let scale = if self.service > 0.0 {
            s / self.service
        } else {
            1.0
        };
        let slow = tail(&self.dist, room / scale);
        let waits = match self.workers {
            Some(c) if a > 0.0 => {
                let drain = c / s - a;
                erlang_c(c, a * s) * (-drain * (room - s).max(0.0)).exp()
            }
            _ => 0.0,
        };
        1.0 - (1.0 - slow) * (1.0 - waits.min(1.0))
    }

    /// The largest load at which the mean response stays within `timeout`: the load an
    /// all-fail state must reach to keep every attempt timing out. Infinite when no load makes
    /// the response longer (unlimited workers without slowdown); 0 when even an idle tier
    /// answers too late.
    pub fn timeout_capacity(&self, timeout: f64) -> f64 {
        // Unlimited workers that do not slow down: no load makes a reply later.
        let Some(top) = self.capacity() else {
            return f64::INFINITY;
        };
        if self.response(0.0) > timeout {
            return 0.0;
        }
        let (mut lo, mut hi) = (0.0, top);
        for _ in 0..60 {
            let mid = (lo + hi) / 2.0;
            if self.response(mid) <= timeout {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        lo
    }
}

/// Erlang's C formula: the probability that an arrival waits, `c` workers offered `load`
/// erlangs (`load < c`), through Erlang B's recursion.
fn erlang_c(c: f64, load: f64) -> f64 {
    let rho = load / c;
    if rho >= 1.0 {
        return 1.0;
    }
    if c > ERLANG_WORKERS {
        return if rho < 0.999 { 0.0 } else { 1.0 };
    }
    let mut b = 1.0;
    for k in 1..=(c.round() as u64) {
        b = load * b / (k as f64 + load * b);
    }
    b / (1.0 - rho * (1.0 - b))
}

/// P(X > t) for a service-time distribution, `t` in seconds.
pub(super) fn tail(d: &Dist, t: f64) -> f64 {
    use statrs::function::erf::erfc;
    let ns = t * 1e9;
    match *d {
        Dist::Constant(v) => f64::from(u8::from(v.0 as f64 > ns)),
        Dist::Uniform { min, max } => {
            let (a, b) = (min.0 as f64, max.0 as f64);
            if b <= a {
                f64::from(u8::from(a > ns))
            } else {
                ((b - ns) / (b - a)).clamp(0.0, 1.0)
            }
        }
        Dist::Exponential { mean } if mean.0 > 0 => (-ns / mean.0 as f64).exp().min(1.0),
        Dist::Exponential { .. } => 0.0,
        Dist::Lognormal { mean, sigma } => {
            if ns <= 0.0 {
                return 1.0;
            }
            let mu = (mean.0 as f64).ln() - sigma * sigma / 2.0;
            0.5 * erfc((ns.ln() - mu) / (sigma * std::f64::consts::SQRT_2))
        }
        Dist::Normal { mean, sd } => {
            // |N(m, sd)| > t: both tails of the unfolded normal.
            let (m, s) = (mean.0 as f64, sd.0 as f64);
            if s == 0.0 {
                return f64::from(u8::from(m.abs() > ns));
            }
            let z = |x: f64| 0.5 * erfc(x / (s * std::f64::consts::SQRT_2));
            (z(ns - m) + z(ns + m)).min(1.0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::time::Duration;

    fn mm1(mean_ms: u64) -> Station {
        Station {
            workers: Some(1.0),
            service: mean_ms as f64 / 1000.0,
            slowdown: 0.0,
            dist: Dist::Exponential {
                mean: Duration::from_millis(mean_ms),
            },
            network: 0.0,
        }
    }

    #[test]
    fn mm1_response_is_one_over_mu_minus_lambda() {
        // M/M/1 with mu = 10/s at 8/s: T = 1 / (10 - 8) = 0.5 s.
        let r = mm1(100).response(8.0);
        assert!((r - 0.5).abs() < 1e-9, "{r}");
        // and its timeout capacity for 3 s is 10 - 1/3.
        let c = mm1(100).timeout_capacity(3.0);
        assert!((c - (10.0 - 1.0 / 3.0)).abs() < 1e-6, "{c}");
    }

    #[test]
    fn slowdown_caps_ten_workers_at_917_per_s() {
        let s = Station {
            workers: Some(10.0),
            service: 0.010,
            slowdown: 0.01,
            dist: Dist::Exponential {
                mean: Duration::from_millis(10),
            },
            network: 0.002,
        };
        let c = s.capacity().unwrap();
        assert!((c - 917.43).abs() < 0.01, "{c}");
        assert!(s.response(750.0) < 0.1);
    }

    #[test]
    fn unlimited_workers_with_slowdown_diverge_at_one_over_sk() {
        let s = Station {
            workers: None,
            service: 1.01,
            slowdown: 0.0099,
            dist: Dist::Constant(Duration::from_millis(1010)),
            network: 0.2,
        };
        assert!((s.capacity().unwrap() - 1.0 / (1.01 * 0.0099)).abs() < 1e-9);
        let t = s.timeout_capacity(3.0);
        // s / (1 - a s k) (1 - k) ... the mean response reaches 3 s a little below 64/s.
        assert!((60.0..66.0).contains(&t), "{t}");
    }

    #[test]
    fn tails() {
        let e = Dist::Exponential {
            mean: Duration::from_millis(100),
        };
        assert!((tail(&e, 0.1) - (-1.0f64).exp()).abs() < 1e-12);
        assert_eq!(tail(&Dist::Constant(Duration::from_millis(5)), 0.004), 1.0);
        assert_eq!(tail(&Dist::Constant(Duration::from_millis(5)), 0.006), 0.0);
    }
}
