#!/usr/bin/env bash
# Time and peak memory of the herd (full jitter, 6 attempts) end to end from the CLI, 10^4 to
# 10^7 clients, beside the floor (examples/herd_floor.rs). Prints a TSV on stdout:
#   what clients wall_s cpu_s peak_mb runs   (medians; cpu = user + system)
# On a shared machine the CPU seconds are the number to compare: wall time includes waiting for
# the other processes' turns.
# Usage: benches/peers/herd_scaling.sh [RUNS] > benches/peers/herd_scaling.tsv
# Env: BIN (default target/release/retrystorm), FLOOR (default target/release/examples/herd_floor),
#      SIZES (default "10000 100000 1000000 10000000").
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS=${1:-3}
BIN=${BIN:-target/release/retrystorm}
FLOOR=${FLOOR:-target/release/examples/herd_floor}
SIZES=${SIZES:-"10000 100000 1000000 10000000"}
[ -x "$BIN" ] || cargo build --release --bin retrystorm >&2
[ -x "$FLOOR" ] || cargo build --release --example herd_floor >&2
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
printf 'what\tclients\twall_s\tcpu_s\tpeak_mb\truns\n'
for n in $SIZES; do
  for what in retrystorm floor; do
    : > /tmp/herd_scaling.$$
    for _ in $(seq "$RUNS"); do
      if [ "$what" = retrystorm ]; then
        cmd=("$BIN" run models/thundering-herd.toml --variant full --set "workload.clients=$n" --json /dev/null)
      else
        cmd=("$FLOOR" "$n")
      fi
      /usr/bin/time -f '%e %M %U %S' -a -o /tmp/herd_scaling.$$ "${cmd[@]}" > /dev/null
    done
    s=$(awk '{print $1}' /tmp/herd_scaling.$$ | median)
    cpu=$(awk '{printf "%.2f\n", $3 + $4}' /tmp/herd_scaling.$$ | median)
    mb=$(awk '{printf "%.1f\n", $2 / 1024}' /tmp/herd_scaling.$$ | median)
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$what" "$n" "$s" "$cpu" "$mb" "$RUNS"
  done
done
rm -f /tmp/herd_scaling.$$
