//! Finagle's peak EWMA load metric (twitter/finagle `finagle-core/src/main/scala/com/twitter/
//! finagle/loadbalancer/PeakEwma.scala`, its `Metric`, and `finagle/util/Ema.scala`).
//!
//! - `cost = ewma × (pending + 1)`; a replica with no latency history but requests pending costs
//!   `Penalty + pending`, `Penalty = Long.MaxValue >> 16` (so it loses to any measured replica);
//!   one with no history and nothing pending costs 0.
//! - An observed round trip `rtt` above the current average *resets* it to `rtt` ("peak":
//!   quick to react to a slow replica); otherwise `ewma = rtt·(1 − w) + ewma·w` with
//!   `w = exp(−Δt / decayTime)`, `Δt` the time since the last update (an unevenly spaced series).
//! - Reading the cost first observes a round trip of 0 at `now`, which decays the average; so a
//!   read between two observations shortens the second one's `Δt` (and its weight), as in Finagle.
//! - The round trip runs from `start` to `end`, success or failure (`Throw` ends it too).
//!
//! Time is the simulation's integer nanoseconds; only the average itself is a float, as in Finagle.

use crate::base::time::{Duration, Time};

/// `Long.MaxValue >> 16` as Finagle's `Double`.
pub const PENALTY: f64 = (i64::MAX >> 16) as f64;

/// One replica's metric, as one balancer sees it.
#[derive(Clone, Debug)]
pub struct PeakEwma {
    /// `tau`: the mean lifetime of an observation, in nanoseconds.
    tau: f64,
    /// The last time a round trip was observed (`stamp`, monotonic).
    stamp: Time,
    pending: u32,
    /// `Ema.time`; `None` is Finagle's `Long.MinValue` (no observation since the last reset).
    ema_time: Option<Time>,
    ema: f64,
}

impl PeakEwma {
    pub fn new(decay: Duration, now: Time) -> Self {
        PeakEwma {
            tau: decay.as_nanos() as f64,
            stamp: now,
            pending: 0,
            ema_time: None,
            ema: 0.0,
        }
    }

    /// `Ema.update(stamp, x)`.
    fn update(&mut self, t: Time, x: f64) {
        match self.ema_time {
            None => self.ema = x,
            Some(last) => {
                let td = t.0.saturating_sub(last.0) as f64;
                let w = if self.tau == 0.0 {
                    0.0
                } else {
                    (-td / self.tau).exp()
                };
                self.ema = x * (1.0 - w) + self.ema * w;
            }
        }
        self.ema_time = Some(t);
    }

    /// `Metric.observe(rtt)`.
    fn observe(&mut self, rtt: f64, now: Time) {
        if now > self.stamp {
            self.stamp = now;
        }
        if rtt > self.ema {
            self.ema_time = None;
            self.ema = 0.0;
        }
        self.update(self.stamp, rtt);
    }

    /// `Metric.get()`: the load the balancer compares.
    pub fn cost(&mut self, now: Time) -> f64 {
        self.observe(0.0, now);
        if self.ema == 0.0 && self.pending != 0 {
            PENALTY + f64::from(self.pending)
        } else {
            self.ema * f64::from(self.pending + 1)
        }
    }

    /// `Metric.start()`.
    pub fn start(&mut self) {
        self.pending += 1;
    }

    /// `Metric.end(ts)`: the round trip from `sent` to `now`.
    pub fn end(&mut self, sent: Time, now: Time) {
        let rtt = now.0.saturating_sub(sent.0) as f64;
        self.pending = self.pending.saturating_sub(1);
        self.observe(rtt, now);
    }

    /// The average as last updated (Finagle's `cost.last`), in nanoseconds.
    pub fn last(&self) -> f64 {
        self.ema
    }

    pub fn pending(&self) -> u32 {
        self.pending
    }
}
