//! Per-replica counts per time bucket for a replicated tier (`server.replicas`): arrivals,
//! served, rejected and ejections, stored in the tier's [`Buckets`] so that they share its width
//! and merge with it (one series length for the tier and its replicas).

use super::buckets::Buckets;
use super::windows::bump;
use crate::summary::ReplicaSeries;
use crate::time::Time;

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
    /// Halves the resolution, as [`Buckets`] does for its own series.
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

impl Buckets {
    /// Keeps per-replica series for `replicas` replicas (none beyond [`MAX_REPLICA_SERIES`]).
    pub fn keep_replicas(&mut self, replicas: u32) {
        if (2..=MAX_REPLICA_SERIES).contains(&replicas) {
            self.replicas = vec![ReplicaCounts::default(); replicas as usize];
        }
    }

    /// Counts `what` at replica `r` at `t` (nothing when replica series are not kept).
    #[inline]
    pub fn replica(&mut self, t: Time, r: usize, what: ReplicaEvent) {
        if self.replicas.is_empty() {
            return;
        }
        let i = self.index(t);
        bump(&mut self.replicas[r].series[what as usize], i);
    }
}
