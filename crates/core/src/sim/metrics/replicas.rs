//! Per-replica counts per time bucket for a replicated tier (`server.replicas`): arrivals,
//! served, rejected and ejections. The tier's [`Buckets`](super::Buckets) keeps them
//! ([`keep_replicas`](super::Buckets::keep_replicas), [`replica`](super::Buckets::replica)), so
//! that they share its width and merge with it (one series length for the tier and its replicas).

use super::windows::bump;
use crate::result::summary::ReplicaSeries;

/// The most replicas whose series a tier keeps (each is four bounded series); the summary's
/// per-replica rows have no such limit.
pub const MAX_REPLICA_SERIES: u32 = 64;

/// What happened at a replica.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplicaEvent {
    Arrival,
    Served,
    Rejected,
    /// An outlier detector took it out of its balancer's choice.
    Ejected,
}

/// One replica's four series.
#[derive(Clone, Debug, Default)]
pub(super) struct ReplicaCounts {
    series: [Vec<u32>; 4],
}

impl ReplicaCounts {
    /// Counts `what` in stored bucket `i`.
    #[inline]
    pub(super) fn count(&mut self, i: usize, what: ReplicaEvent) {
        bump(&mut self.series[what as usize], i);
    }

    /// Halves the resolution, as [`Buckets`](super::Buckets) does for its own series.
    pub(super) fn halve(&mut self, halve: impl Fn(&mut Vec<u32>)) {
        for v in &mut self.series {
            halve(v);
        }
    }

    /// The finished series, padded to `n` buckets.
    pub(super) fn finish(mut self, replica: usize, n: usize) -> ReplicaSeries {
        for v in &mut self.series {
            v.resize(n, 0);
        }
        let [arrivals, served, rejected, ejections] = self.series;
        ReplicaSeries {
            replica: replica as u32,
            arrivals,
            served,
            rejected,
            ejections,
        }
    }
}
