//! A ratio of retries to calls without a window.

/// A balance of retries fed by calls, without a time window ([`super::BudgetKind::Ratio`]).
#[derive(Clone, Debug)]
pub struct RatioBudget {
    balance: f64,
    ratio: f64,
}

impl RatioBudget {
    pub fn new(ratio: f64, min_retries: u64) -> Self {
        RatioBudget {
            balance: min_retries as f64,
            ratio,
        }
    }
    pub fn deposit(&mut self) {
        self.balance += self.ratio;
    }
    pub fn try_withdraw(&mut self) -> bool {
        let ok = self.balance >= 1.0;
        if ok {
            self.balance -= 1.0;
        }
        ok
    }
}
