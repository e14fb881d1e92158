//! A hop's learned timeout and hedging delay ([`crate::policy::adaptive`]): one estimator per
//! hop, shared by the hop's client processes, fed the latency of every answer its caller gets,
//! with its value over time for the series.
//!
//! An answer's latency is timed from its attempt's send, which the call keeps for its latest
//! attempt only ([`super::call::Calls`]' send times) and, when hedging, for the first copy (sent at
//! the call's start): a late answer to an attempt the call has since retried, or to a hedged copy
//! between the first and the latest, is not counted. A timeout is not a latency and is not
//! counted either; while nothing answers, the window empties and the value goes back to `max`.

use crate::base::time::{Duration, Time};
use crate::policy::adaptive::Learned;
use crate::policy::adaptive::estimator::Estimator;
use crate::sim::metrics::{Buckets, level_series};

/// One learned duration of a hop and its series.
#[derive(Clone, Debug)]
pub(super) struct Learner {
    estimator: Estimator,
    /// The first attempt's value over time, in ms.
    series: Buckets,
    /// Since when the series holds `level`.
    from: Time,
    level: Duration,
}

impl Learner {
    pub(super) fn new(spec: Learned, bucket: Duration) -> Self {
        let mut series = Buckets::new(bucket);
        series.keep_level();
        let estimator = Estimator::new(spec);
        let level = estimator.first_attempt();
        Learner {
            estimator,
            series,
            from: Time::ZERO,
            level,
        }
    }

    /// Moves the window to `now`, the series following each change of value.
    #[inline]
    fn advance(&mut self, now: Time) {
        let Learner {
            estimator,
            series,
            from,
            level,
        } = self;
        estimator.advance(now, |edge, value| {
            series.level(*from, edge, level.as_millis_f64());
            (*from, *level) = (edge, value);
        });
    }

    /// An answer seen at `now`, `latency` after its attempt went out.
    pub(super) fn record(&mut self, now: Time, latency: Duration) {
        self.advance(now);
        self.estimator.record(latency);
    }

    /// The value for attempt `attempt` (0 = the first try) sent at `now`.
    pub(super) fn value(&mut self, now: Time, attempt: u16) -> Duration {
        self.advance(now);
        self.estimator.value(attempt)
    }

    /// The first attempt's value per bucket up to `end`, in ms (as long as the run's series).
    pub(super) fn series(&self, end: Time) -> Vec<f32> {
        let mut me = self.clone();
        me.advance(end);
        me.series.level(me.from, end, me.level.as_millis_f64());
        level_series(me.series, end)
    }
}
