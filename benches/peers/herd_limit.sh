#!/usr/bin/env bash
# The herd (full jitter, 6 attempts) end to end from the CLI, 10^4 to 10^7 clients, on the
# direct path and through the event loop (`--set engine.path=event-loop`), beside the yardstick
# `../shared/bench/herd-limit` (`herd-limit N`: no queue at all; `herd-limit N queue`: a plain
# calendar queue). Prints a TSV on stdout (medians; cpu = user + system):
#   what clients wall_s cpu_s peak_mb runs
# The event loop at 10^7 runs once (about 10 s and 1 GB). Redraw the chart with
#   python3 benches/peers/herd_limit_chart.py benches/peers/herd_limit.tsv docs/herd-limit.svg
# Usage: benches/peers/herd_limit.sh [RUNS] > benches/peers/herd_limit.tsv
# Env: BIN (default target/release/retrystorm), LIMIT (default
#      ../shared/bench/herd-limit/target/release/herd-limit), SIZES.
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS=${1:-3}
BIN=${BIN:-target/release/retrystorm}
LIMIT=${LIMIT:-../shared/bench/herd-limit/target/release/herd-limit}
SIZES=${SIZES:-"10000 100000 1000000 10000000"}
[ -x "$BIN" ] || cargo build --release --bin retrystorm >&2
[ -x "$LIMIT" ] || cargo build --release --manifest-path "$(dirname "$(dirname "$(dirname "$LIMIT")")")/Cargo.toml" >&2
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
tmp=$(mktemp)
printf 'what\tclients\twall_s\tcpu_s\tpeak_mb\truns\n'
for n in $SIZES; do
  for what in direct event-loop herd-limit herd-limit-queue; do
    runs=$RUNS
    case $what in
      direct) cmd=("$BIN" run models/thundering-herd.toml --variant full --set "workload.clients=$n" -q) ;;
      event-loop)
        cmd=("$BIN" run models/thundering-herd.toml --variant full --set "workload.clients=$n"
          --set engine.path=event-loop -q)
        [ "$n" -ge 10000000 ] && runs=1 ;;
      herd-limit) cmd=("$LIMIT" "$n") ;;
      herd-limit-queue) cmd=("$LIMIT" "$n" queue) ;;
    esac
    : > "$tmp"
    for _ in $(seq "$runs"); do
      /usr/bin/time -f '%e %M %U %S' -a -o "$tmp" "${cmd[@]}" > /dev/null
    done
    s=$(awk '{print $1}' "$tmp" | median)
    cpu=$(awk '{printf "%.3f\n", $3 + $4}' "$tmp" | median)
    mb=$(awk '{printf "%.1f\n", $2 / 1024}' "$tmp" | median)
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$what" "$n" "$s" "$cpu" "$mb" "$runs"
  done
done
rm -f "$tmp"
