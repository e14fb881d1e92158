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

model = retrystorm.load(HERD)
report = retrystorm.compare(model, seeds=a.seeds)  # every variant: none, full, equal, decorrelated

fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
names, peaks, errs = [], [], []
for v in report["variants"]:
    s = v["series"]
    left.plot(s["bucket_ms"], s["retries"], label=v["name"], linewidth=1)
    names.append(v["name"])
    peaks.append(v["replications"]["mean"]["peak_retries"])
    errs.append(v["replications"]["ci95"].get("peak_retries", 0.0))
    print(f"{v['name']:>14}: peak retries {peaks[-1]:8.1f} ± {errs[-1]:.1f}  (retries {v['summary']['retries']})")
left.set(xlabel="simulated time (ms)", ylabel="retries per bucket", title="retries over time (first seed)")
left.set_yscale("symlog")
left.legend()
right.bar(names, peaks, yerr=errs, capsize=4)
right.set(ylabel="peak retries per bucket", title=f"mean peak over {a.seeds} seeds (95% CI)")
fig.tight_layout()
fig.savefig(a.out, dpi=120)
print(f"wrote {a.out}")
