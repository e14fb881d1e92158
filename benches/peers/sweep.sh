#!/usr/bin/env bash
# Sweep speedup across cores (docs/performance.md, "rayon: runs in parallel, one run on one core").
#
#   benches/peers/sweep.sh
#
# A 100-run sweep (the thundering herd's 4 variants x 25 seeds at 50 000 clients, about 0.1 s
# of engine time per run) with --jobs 1 and with --jobs 2, RUNS times each (default 3,
# interleaved so that load from other processes hits both alike); prints the medians and the
# speedup. Target on 2 cores: at least 1.8x. Set RETRYSTORM to use another binary.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [[ -z "${RETRYSTORM:-}" ]]; then
    cargo build --release --quiet --bin retrystorm
fi
bin="${RETRYSTORM:-target/release/retrystorm}"
runs="${RUNS:-3}"
clients="${CLIENTS:-50000}"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$bin" "$runs" "$clients" <<'PY'
import json, os, statistics, subprocess, sys
here = "benches/peers"
bin_, runs, clients = sys.argv[1], int(sys.argv[2]), sys.argv[3]
cmd = [bin_, "sweep", "models/thundering-herd.toml", "--seeds", "25",
       "--set", f"workload.clients={clients}"]
times = {1: [], 2: []}
for _ in range(runs):
    for jobs in (1, 2):
        out = subprocess.run([sys.executable, f"{here}/timeit.py", "1", *cmd, "--jobs", str(jobs)],
                             check=True, capture_output=True, text=True).stdout
        r = json.loads(out)
        assert "100 runs" in r["stdout"], r["stdout"][:200]
        times[jobs].append(r["median_s"])
m1, m2 = statistics.median(times[1]), statistics.median(times[2])
print(f"command: {' '.join(cmd)} --jobs J")
print("| jobs | runs | median s | all s |")
print("|---:|---:|---:|---|")
for j in (1, 2):
    print(f"| {j} | {len(times[j])} | {statistics.median(times[j]):.3f} | "
          f"{', '.join(f'{t:.3f}' for t in times[j])} |")
print(f"speedup --jobs 2 / --jobs 1: {m1 / m2:.2f}x (target >= 1.8x)")
print("load average after: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
PY
