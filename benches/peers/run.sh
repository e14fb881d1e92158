#!/usr/bin/env bash
# retrystorm against its SimPy peer on the thundering herd (docs/performance-log.md, "SimPy peer").
#
#   benches/peers/run.sh            # N = 10^4, 10^5, 10^6 (SimPy at 10^6 takes about a minute)
#   SIMPY_MAX=100000 benches/peers/run.sh   # skip SimPy at 10^6
#   SIZES="10000 100000" RUNS=3 benches/peers/run.sh
#
# Installs simpy into target/peers-venv (once), builds the release binary, then runs
# benches/peers/compare.py, which prints medians side by side, the ratio and both peaks.
# Do not run it while another benchmark runs: the machine has 2 cores.
set -euo pipefail
cd "$(dirname "$0")/../.."

venv=target/peers-venv
if ! "$venv/bin/python" -c 'import simpy' 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet -r benches/peers/requirements.txt
fi
if [[ -z "${RETRYSTORM:-}" ]]; then
    cargo build --release --quiet --bin retrystorm
fi
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)," \
    "$("$venv/bin/python" --version), simpy $("$venv/bin/python" -c 'import simpy; print(simpy.__version__)')"
echo "load average before the run: $(cut -d' ' -f1-3 /proc/loadavg)"
RETRYSTORM="${RETRYSTORM:-target/release/retrystorm}" PYTHON="$venv/bin/python" \
    python3 benches/peers/compare.py
