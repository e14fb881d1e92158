//! Brooker's token bucket and retry breaker (his `retry_sim`).

/// Brooker's token bucket (mbrooker/simulator_example, `retry_sim/retry_strategy.py`,
/// `AdaptiveRetryStrategy`): `start()` adds the fill, `should_retry()` needs `bucket > 1.0`.
#[derive(Clone, Debug)]
pub struct BrookerBucket {
    tokens: f64,
    size: f64,
    fill: f64,
}

impl BrookerBucket {
    pub fn new(size: f64, fill: f64) -> Self {
        BrookerBucket {
            tokens: size,
            size,
            fill,
        }
    }
    pub fn on_call(&mut self) {
        self.tokens = (self.tokens + self.fill).min(self.size);
    }
    pub fn try_withdraw(&mut self) -> bool {
        let ok = self.tokens > 1.0;
        if ok {
            self.tokens -= 1.0;
        }
        ok
    }
}

/// Brooker's retry breaker (the same file, `CircuitBreakerRetryStrategy`): cumulative counts of
/// calls and failed attempts; a retry only while `failures / calls <= max_rate`.
#[derive(Clone, Debug)]
pub struct FailureRatio {
    calls: f64,
    failures: f64,
    max_rate: f64,
}

impl FailureRatio {
    /// A first try was made.
    pub fn on_call(&mut self) {
        self.calls += 1.0;
    }

    /// An attempt failed.
    pub fn on_failure(&mut self) {
        self.failures += 1.0;
    }

    pub fn new(max_rate: f64) -> Self {
        FailureRatio {
            calls: 0.0,
            failures: 0.0,
            max_rate,
        }
    }
    pub fn allows(&self) -> bool {
        self.calls > 0.0 && self.failures / self.calls <= self.max_rate
    }
}
