#!/usr/bin/env bash
# Peak memory of the release binary (docs/performance-log.md, "Memory (`benches/peers/memory.sh`)").
#
#   benches/peers/memory.sh
#
# Reports GNU time's "Maximum resident set size" (/usr/bin/time -v) for
#   1. the thundering herd at 10^6 clients (variant full): target under 250 MB;
#   2. the open overload scenario (models/overload-bench.toml) at two horizons 10x apart,
#      40 s and 400 s (1.3 * 10^7 and 1.3 * 10^8 events): streaming metrics must keep memory
#      flat in simulated time, target: the 10x horizon costs under 1.2x the memory;
#   3. the 400 s horizon again with 100 ms buckets (as many buckets as 40 s at 10 ms), which
#      separates the engine's state from the per-bucket time series (one row per bucket, kept
#      for the report: it grows with horizon / bucket by design).
# Set RETRYSTORM to use another binary (default: build and use target/release/retrystorm).
set -euo pipefail
cd "$(dirname "$0")/../.."
if [[ -z "${RETRYSTORM:-}" ]]; then
    cargo build --release --quiet --bin retrystorm
fi
bin="${RETRYSTORM:-target/release/retrystorm}"
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# measure LABEL ARGS...: prints "label | events | wall s | peak RSS MB" and sets RSS_KB.
measure() {
    local label=$1
    shift
    /usr/bin/time -v "$bin" run "$@" --json - 2>"$log" >"$log.json"
    RSS_KB=$(grep 'Maximum resident set size' "$log" | awk '{print $NF}')
    local wall events
    wall=$(grep 'Elapsed (wall clock)' "$log" | awk '{print $NF}')
    events=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["variants"][0]["summary"]["events"])' "$log.json")
    rm -f "$log.json"
    printf '| %s | %s | %s | %.1f |\n' "$label" "$events" "$wall" "$(awk -v k="$RSS_KB" 'BEGIN { print k / 1024 }')"
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| run | events | wall (m:ss) | peak RSS MB |"
echo "|---|---:|---:|---:|"
measure "herd, 10^6 clients" models/thundering-herd.toml --variant full --set workload.clients=1000000
herd_kb=$RSS_KB
measure "overload, horizon 40 s" models/overload-bench.toml --set horizon=40s
short_kb=$RSS_KB
measure "overload, horizon 400 s" models/overload-bench.toml --set horizon=400s
long_kb=$RSS_KB
measure "overload, horizon 400 s, bucket 100 ms" models/overload-bench.toml --set horizon=400s --set bucket=100ms
same_buckets_kb=$RSS_KB
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$herd_kb" "$short_kb" "$long_kb" "$same_buckets_kb" <<'PY'
import sys
herd, short, long_, same = (int(x) for x in sys.argv[1:])
print(f"herd 10^6: {herd / 1024:.1f} MB (target < 250 MB: {'met' if herd < 250 * 1024 else 'NOT met'})")
r = long_ / short
print(f"overload 400 s / 40 s: {r:.2f}x memory for 10x the horizon "
      f"(target < 1.2x: {'met' if r < 1.2 else 'NOT met'})")
print(f"overload 400 s at 100 ms buckets / 40 s at 10 ms (same bucket count): {same / short:.2f}x")
PY
