"""The four jitter strategies on the thundering herd, side by side: the retries per bucket of
each (first seed) and the mean retry peak over seeds, plotted with matplotlib.

    pip install ./crates/python matplotlib pandas
    python examples/python/jitter.py [--seeds 10] [--out jitter.png]
"""

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

import retrystorm

HERD = Path(__file__).resolve().parents[2] / "models" / "thundering-herd.toml"

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--seeds", type=int, default=10)
ap.add_argument("--out", default="jitter.png")
a = ap.parse_args()

model = retrystorm.load(HERD)  # its variants: no-jitter, full, equal, decorrelated

fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
names, peaks, errs = [], [], []
for v in model.variants:
    r = retrystorm.run(model, variant=v, seeds=a.seeds)  # `run --variant V --seeds N --json`
    left.plot(r.series["start_ms"], r.series["retries"], label=v, linewidth=1)
    rep = r.summary["variants"][0]["replications"]
    names.append(v)
    peaks.append(rep["mean"]["peak_retries"])
    errs.append(rep["ci95"].get("peak_retries", 0.0))
    print(f"{v:>14}: peak retries per bucket {peaks[-1]:8.1f} ± {errs[-1]:.1f} (95% CI, {a.seeds} seeds)")
left.set(xlabel="simulated time (ms)", ylabel="retries per bucket", title="retries over time (first seed)")
left.set_yscale("symlog")
left.legend()
right.bar(names, peaks, yerr=errs, capsize=4)
right.set(ylabel="peak retries per bucket", title=f"mean peak over {a.seeds} seeds (95% CI)")
fig.tight_layout()
fig.savefig(a.out, dpi=120)
print(f"wrote {a.out}")
