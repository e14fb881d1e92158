//! gRPC retry throttling (gRFC A6, grpc-core `retry_throttle.cc`).

/// gRPC retry throttling state: tokens in thousandths, as grpc-core keeps them.
#[derive(Clone, Debug)]
pub struct GrpcThrottle {
    max_milli: i64,
    ratio_milli: i64,
    milli: i64,
}

impl GrpcThrottle {
    pub fn new(max_tokens: f64, token_ratio: f64) -> Self {
        let max_milli = (max_tokens * 1000.0).round() as i64;
        GrpcThrottle {
            max_milli,
            ratio_milli: (token_ratio * 1000.0).round() as i64,
            milli: max_milli,
        }
    }
    /// A failed attempt takes one token (never below zero).
    pub fn on_failure(&mut self) {
        self.milli = (self.milli - 1000).max(0);
    }
    /// A success adds `tokenRatio`, up to `maxTokens`.
    pub fn on_success(&mut self) {
        self.milli = (self.milli + self.ratio_milli).min(self.max_milli);
    }
    /// Retries (and hedges) are allowed only while `tokens > maxTokens / 2`.
    pub fn allows(&self) -> bool {
        self.milli * 2 > self.max_milli
    }
    pub fn tokens(&self) -> f64 {
        self.milli as f64 / 1000.0
    }
}
