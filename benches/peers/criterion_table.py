#!/usr/bin/env python3
"""Prints the medians of `cargo bench --bench scenarios` as Markdown tables (as in
docs/performance-log.md).

Reads target/criterion/<group>/<name>/<param>/new/{estimates,benchmark}.json for the groups
herd, three_clients and overload: the median time per iteration (one whole run) with its 95%
confidence interval, the time per element (attempt or event) and the throughput, then for the
herd the ratios retrystorm / floor and retrystorm / floor_3ev at each size and the growth of the
time per attempt from 10^4 to 10^6 clients next to n log n.

Usage: benches/peers/criterion_table.py [CRITERION_DIR]   (default target/criterion)
"""

import json
import math
import os
import sys


def read(root: str, group: str) -> dict:
    out = {}
    gdir = os.path.join(root, group)
    if not os.path.isdir(gdir):
        return out
    for name in sorted(os.listdir(gdir)):
        ndir = os.path.join(gdir, name)
        if not os.path.isdir(ndir) or name == "report":
            continue
        for param in os.listdir(ndir):
            new = os.path.join(ndir, param, "new")
            if not os.path.isfile(os.path.join(new, "estimates.json")):
                continue
            est = json.load(open(os.path.join(new, "estimates.json")))["median"]
            bench = json.load(open(os.path.join(new, "benchmark.json")))
            elements = bench["throughput"]["Elements"]
            out[(name, int(param))] = {
                "median_s": est["point_estimate"] / 1e9,
                "lo_s": est["confidence_interval"]["lower_bound"] / 1e9,
                "hi_s": est["confidence_interval"]["upper_bound"] / 1e9,
                "elements": elements,
            }
    return out


def main() -> int:
    root = sys.argv[1] if len(sys.argv) > 1 else "target/criterion"
    herd = read(root, "herd")
    if herd:
        print("Herd (elements = attempts = 6 x clients):\n")
        print("| row | clients | median s (95% CI) | ns per attempt | M attempts/s |")
        print("|---|---:|---:|---:|---:|")
        for (name, n), r in sorted(herd.items(), key=lambda kv: (kv[0][1], kv[0][0] != "retrystorm", kv[0][0])):
            ns = r["median_s"] / r["elements"] * 1e9
            print(f"| `{name}` | {n:,} | {r['median_s']:.4f} ({r['lo_s']:.4f} to {r['hi_s']:.4f}) "
                  f"| {ns:.1f} | {r['elements'] / r['median_s'] / 1e6:.2f} |")
        print("\nRatios (same run):\n")
        print("| clients | retrystorm / floor | retrystorm / floor_3ev | floor_3ev / floor |")
        print("|---:|---:|---:|---:|")
        sizes = sorted({n for (_, n) in herd})
        for n in sizes:
            rs, fl, f3 = (herd.get((k, n)) for k in ("retrystorm", "floor", "floor_3ev"))
            if rs and fl and f3:
                print(f"| {n:,} | {rs['median_s'] / fl['median_s']:.2f} | "
                      f"{rs['median_s'] / f3['median_s']:.2f} | {f3['median_s'] / fl['median_s']:.2f} |")
        base = sizes[0]
        print(f"\nGrowth of the time per attempt from {base:,} clients (n log n predicts "
              "log(n) / log(n0)):\n")
        print("| clients | retrystorm ns/attempt | x vs smallest | floor ns/attempt | x vs smallest "
              "| n log n: x |")
        print("|---:|---:|---:|---:|---:|---:|")
        for n in sizes:
            cells = []
            for k in ("retrystorm", "floor"):
                r, r0 = herd.get((k, n)), herd.get((k, base))
                if r and r0:
                    per, per0 = (x["median_s"] / x["elements"] * 1e9 for x in (r, r0))
                    cells += [f"{per:.1f}", f"{per / per0:.2f}"]
                else:
                    cells += ["", ""]
            print(f"| {n:,} | {' | '.join(cells)} | {math.log(n) / math.log(base):.2f} |")
    for group in ("three_clients", "overload"):
        rows = read(root, group)
        if not rows:
            continue
        print(f"\n{group} (elements = events):\n")
        print("| row | events | median s (95% CI) | ns per event | M events/s |")
        print("|---|---:|---:|---:|---:|")
        for (name, n), r in sorted(rows.items()):
            print(f"| `{name}` | {n:,} | {r['median_s']:.3f} ({r['lo_s']:.3f} to {r['hi_s']:.3f}) | "
                  f"{r['median_s'] / n * 1e9:.1f} | {n / r['median_s'] / 1e6:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
