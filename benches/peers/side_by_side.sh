#!/bin/bash
# Side by side: old (db82494) and new, alternating, 7 runs each; prints median seconds and max RSS.
OLD=${OLD:?path to the previous commit's release binary}
NEW=${NEW:-target/release/retrystorm}
cd "$(dirname "$0")/../.."
run() { /usr/bin/time -f "%e %M" "$@" >/dev/null 2>>/tmp/perf.err; }
for case in herd overload; do
  for bin in old new; do : > /tmp/perf.$case.$bin; done
  for i in 1 2 3 4 5 6 7; do
    for bin in old new; do
      B=$OLD; [ $bin = new ] && B=$NEW
      if [ $case = herd ]; then
        args="run models/thundering-herd.toml --variant full --set workload.clients=1000000"
      else
        args="run models/overload-bench.toml"
      fi
      /usr/bin/time -f "%e %M" -o /tmp/t.$$ $B $args >/dev/null 2>/dev/null
      cat /tmp/t.$$ >> /tmp/perf.$case.$bin
    done
  done
  for bin in old new; do
    echo "$case $bin $(sort -n /tmp/perf.$case.$bin | awk '{a[NR]=$1; m[NR]=$2} END {print "median_s", a[int((NR+1)/2)]}') max_rss_kb $(awk '{print $2}' /tmp/perf.$case.$bin | sort -n | tail -1)"
  done
done
