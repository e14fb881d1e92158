#!/usr/bin/env python3
"""retrystorm against SimPy on the thundering herd: medians side by side (run by run.sh).

For each N, times `retrystorm run models/thundering-herd.toml --variant full --set
workload.clients=N --json -` (release binary, end to end: process start, model load, simulation,
report) and `herd_simpy.py N` (end to end: interpreter start, import, simulation) several times,
and prints the medians, their ratio, the peak RSS and both simulators' peak retries per 10 ms
bucket (which must agree in distribution: same scenario, different random numbers).

Environment: RETRYSTORM (binary), PYTHON (with simpy), RUNS (retrystorm runs, default 5),
SIMPY_RUNS (default 3), SIMPY_RUNS_1M (SimPy runs at 10^6, default 1: about a minute each),
SIZES (default "10000 100000 1000000"), SIMPY_MAX (largest N for SimPy, default 1000000).
"""

import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def timeit(runs: int, cmd: list[str]) -> dict:
    out = subprocess.run(
        [sys.executable, os.path.join(HERE, "timeit.py"), str(runs), *cmd],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return json.loads(out)


def main() -> int:
    rs = os.environ.get("RETRYSTORM", "target/release/retrystorm")
    py = os.environ.get("PYTHON", "target/peers-venv/bin/python")
    runs = int(os.environ.get("RUNS", "5"))
    simpy_runs = int(os.environ.get("SIMPY_RUNS", "3"))
    simpy_runs_1m = int(os.environ.get("SIMPY_RUNS_1M", "1"))
    simpy_max = int(os.environ.get("SIMPY_MAX", "1000000"))
    sizes = [int(s) for s in os.environ.get("SIZES", "10000 100000 1000000").split()]

    rows = []
    for n in sizes:
        r = timeit(
            runs,
            [rs, "run", "models/thundering-herd.toml", "--variant", "full",
             "--set", f"workload.clients={n}", "--json", "-"],
        )
        rsum = json.loads(r["stdout"])["variants"][0]["summary"]
        assert rsum["attempts"] == 6 * n and rsum["ended"] == "settled", rsum
        row = {"n": n, "rs": r, "rsum": rsum, "sp": None}
        if n <= simpy_max:
            k = simpy_runs_1m if n >= 1_000_000 else simpy_runs
            sp = timeit(k, [py, os.path.join(HERE, "herd_simpy.py"), str(n)])
            row["sp"] = sp
            row["ssum"] = json.loads(sp["stdout"])
            assert row["ssum"]["attempts"] == 6 * n
        rows.append(row)
        print(f"# N = {n} done", file=sys.stderr, flush=True)

    print("load average after the run: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    hdr = ("| clients | attempts | retrystorm median s (runs) | SimPy median s (runs) | "
           "SimPy / retrystorm | SimPy in-process s | retrystorm ns/attempt | retrystorm peak RSS MB | "
           "SimPy peak RSS MB | peak retries retrystorm / SimPy | retries |")
    print(hdr)
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|")
    for row in rows:
        n, r, s = row["n"], row["rs"], row["sp"]
        ns_per = r["median_s"] / (6 * n) * 1e9
        if s:
            sp_cell = f"{s['median_s']:.3f} ({s['runs']})"
            ratio = f"{s['median_s'] / r['median_s']:.1f}x"
            sp_rss = f"{s['max_rss_kb'] / 1024:.0f}"
            sp_in = f"{row['ssum']['sim_seconds']:.3f}"
            peaks = f"{row['rsum']['peak_retries']} / {row['ssum']['peak_retries']}"
        else:
            sp_cell, ratio, sp_rss, sp_in = "not run", "", "", ""
            peaks = f"{row['rsum']['peak_retries']} / -"
        print(f"| {n:,} | {6 * n:,} | {r['median_s']:.3f} ({r['runs']}) | {sp_cell} | {ratio} | {sp_in} | "
              f"{ns_per:.0f} | {r['max_rss_kb'] / 1024:.0f} | {sp_rss} | {peaks} | "
              f"{row['rsum']['retries']:,} |")
    # Same picture: the peak per bucket is a sum of many small random contributions, so the two
    # simulators' peaks should be within a few percent (plus a few units of noise) of each other.
    for row in rows:
        if row["sp"]:
            a, b = row["rsum"]["peak_retries"], row["ssum"]["peak_retries"]
            rel = abs(a - b) / max(a, b)
            ok = rel < 0.05 or abs(a - b) <= 3 * (max(a, b) ** 0.5)
            print(f"N = {row['n']:,}: peak retries {a} vs {b} ({rel:.1%} apart): "
                  f"{'agree' if ok else 'DISAGREE'}")
            if not ok:
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
