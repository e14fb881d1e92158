#!/usr/bin/env python3
"""Runs a command several times; prints the median wall time, the peak RSS and its last stdout.

Usage: timeit.py RUNS CMD [ARGS...]
Prints one JSON object on stdout: {"runs", "median_s", "min_s", "max_s", "times_s",
"max_rss_kb", "stdout"}. Wall time is time.perf_counter around fork/exec/wait; peak RSS is the
child's ru_maxrss from os.wait4 (the same number as /usr/bin/time's "Maximum resident set size").
hyperfine is not installed on the benchmark machine; this is the small part of it we need.
"""

import json
import os
import statistics
import subprocess
import sys
import time


def main() -> int:
    runs = int(sys.argv[1])
    cmd = sys.argv[2:]
    times, rss, out = [], [], ""
    for _ in range(runs):
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        data = p.stdout.read()
        _, status, usage = os.wait4(p.pid, 0)
        times.append(time.perf_counter() - t0)
        p.returncode = os.waitstatus_to_exitcode(status)
        if p.returncode != 0:
            print(f"timeit: {cmd!r} exited with {p.returncode}", file=sys.stderr)
            return 1
        rss.append(usage.ru_maxrss)
        out = data.decode()
    json.dump(
        {
            "runs": runs,
            "median_s": statistics.median(times),
            "min_s": min(times),
            "max_s": max(times),
            "times_s": times,
            "max_rss_kb": max(rss),
            "stdout": out,
        },
        sys.stdout,
    )
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
