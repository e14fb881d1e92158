"""A sweep of 1000 runs from Python, for timing against the CLI's `sweep` (docs/performance.md):
the thundering herd's 4 variants x 25 values of retry.base x 10 seeds, as a DataFrame.

    python examples/python/bench_sweep.py [--no-pandas]
    retrystorm sweep models/thundering-herd.toml --vary retry.base=10ms,20ms,...,250ms --seeds 10 --out s.jsonl
"""

import sys
import time
from pathlib import Path

if "--no-pandas" in sys.argv:  # rows as a list of dicts
    sys.modules["pandas"] = None
else:
    import pandas  # noqa: F401  (imported up front, as in a notebook)

import retrystorm

HERD = Path(__file__).resolve().parents[2] / "models" / "thundering-herd.toml"
BASES = [f"{10 * i}ms" for i in range(1, 26)]

t = time.perf_counter()
rows = retrystorm.sweep(retrystorm.load(HERD), vary={"retry.base": BASES}, seeds=10)
took = time.perf_counter() - t
assert len(rows) == 1000, len(rows)
print(f"{len(rows)} runs in {took:.3f} s (the sweep call)")
