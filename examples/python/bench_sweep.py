"""A sweep of 1000 runs from Python, for timing against the CLI's `sweep` (docs/performance.md):
the thundering herd's 4 variants x 25 values of retry.base x 10 seeds, as a DataFrame.

    python examples/python/bench_sweep.py
    retrystorm sweep models/thundering-herd.toml --vary retry.base=10ms,20ms,...,250ms --seeds 10 --out s.jsonl
"""

from pathlib import Path

import retrystorm

HERD = Path(__file__).resolve().parents[2] / "models" / "thundering-herd.toml"
BASES = [f"{10 * i}ms" for i in range(1, 26)]

df = retrystorm.sweep(retrystorm.load(HERD), vary={"retry.base": BASES}, seeds=10)
assert len(df) == 1000, len(df)
print(len(df), "runs,", len(df.columns), "columns")
