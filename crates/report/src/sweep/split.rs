//! The sweep file of a `rare` study: the header's grid is one point of one variant over the
//! `--seeds` seeds, the header's `rare` says what was estimated
//! ([`RareStudy`](crate::sweep::header::RareStudy)), and each line is one seed's splitting run.
//! Its shards (`rare --shard I/N --out`) are merged like a sweep's, and the merged file gives
//! the estimate an unsharded run prints.

use crate::sweep::format::Record;
use crate::sweep::header::{SWEEP_SCHEMA_VERSION, SweepHeader};
use retrystorm_core::rare::SplitRun;
use retrystorm_core::sweep::Grid;
use serde::{Deserialize, Serialize};

/// One line per seed: its splitting run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SplitRecord {
    pub schema_version: u32,
    pub kind: String,
    /// The seed's index in the grid (the file's order).
    pub job: u64,
    pub split: SplitRun,
}

impl SplitRecord {
    /// The line of run `job`: the splitting run of its seed.
    pub fn new(job: u64, split: SplitRun) -> SplitRecord {
        SplitRecord {
            schema_version: SWEEP_SCHEMA_VERSION,
            kind: Self::KIND.into(),
            job,
            split,
        }
    }
}

impl Record for SplitRecord {
    const KIND: &'static str = "split";

    fn job(&self) -> u64 {
        self.job
    }

    fn misplaced(&self, grid: &Grid) -> Option<String> {
        let seed = grid.seeds[grid.job(self.job).replication];
        (seed != self.split.seed).then(|| {
            format!(
                "run {} is of seed {}, but the header's grid has seed {seed} there",
                self.job, self.split.seed
            )
        })
    }

    fn refused(header: &SweepHeader) -> Option<String> {
        match &header.rare {
            None => Some("a sweep file of plain runs, not a `rare` study's".into()),
            Some(_) if header.grid.points() != 1 || header.grid.variants.len() != 1 => {
                Some("a `rare` study's header must have one point of one variant".into())
            }
            Some(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::format::{parse_records, parse_sweep, sweep_text};
    use crate::sweep::header::RareStudy;
    use retrystorm_core::rare::Stage;

    fn file() -> (SweepHeader, Vec<SplitRecord>) {
        let grid = Grid {
            axes: vec![],
            variants: vec!["v".into()],
            seeds: vec![7, 8],
        };
        let mut h = SweepHeader::new("m", "x = 1", &[], &grid, 2);
        h.rare = Some(RareStudy {
            event: "queue >= 9".into(),
            score: None,
            score_from: None,
            excess: false,
            until_empty: true,
            particles: 20,
            pilot: None,
        });
        let run = |seed, estimate| SplitRun {
            seed,
            estimate,
            stages: vec![Stage {
                level: None,
                passed: 3,
                particles: 20,
            }],
            events: 123,
            events_per_plain_run: 6.15,
        };
        (
            h,
            vec![
                SplitRecord::new(0, run(7, 0.15)),
                SplitRecord::new(1, run(8, 0.1 + 0.2)),
            ],
        )
    }

    #[test]
    fn a_rare_file_reads_back_as_written_and_not_as_a_sweep() {
        let (h, runs) = file();
        let text = sweep_text(&h, &runs);
        let back = parse_records::<SplitRecord>("r.jsonl", text.as_bytes()).unwrap();
        assert_eq!(back.header, h);
        assert_eq!(back.records, runs, "floats read back exactly");
        let e = parse_sweep("r.jsonl", text.as_bytes()).err().unwrap();
        assert!(e.starts_with("r.jsonl:1: a `rare` study's file"), "{e}");
        let mut plain = h.clone();
        plain.rare = None;
        let e = parse_records::<SplitRecord>("s.jsonl", sweep_text(&plain, &runs).as_bytes())
            .err()
            .unwrap();
        assert!(e.contains("not a `rare` study's"), "{e}");
    }

    #[test]
    fn a_seed_out_of_its_place_is_refused() {
        let (h, mut runs) = file();
        runs[1].split.seed = 9;
        let e = parse_records::<SplitRecord>("r.jsonl", sweep_text(&h, &runs).as_bytes())
            .err()
            .unwrap();
        assert!(e.contains("r.jsonl:3: run 1 is of seed 9"), "{e}");
    }
}
