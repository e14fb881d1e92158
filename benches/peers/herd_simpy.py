#!/usr/bin/env python3
"""The thundering herd in SimPy: the peer that retrystorm is timed against.

The same scenario as `retrystorm run models/thundering-herd.toml --variant full`:
N clients fail at the same instant (t = 0) and every attempt fails at once (the server always
answers 503, without service time), so only the scheduling of retries is observed. Each client
makes 6 attempts (5 retries) with full-jitter exponential backoff: before retry n (n = 0..4) it
sleeps U(0, min(cap, base * 2^n)), base 100 ms, cap 10 s. Arrivals at the server are counted
per 10 ms bucket, and the script reports the peak retries per bucket and the total retries.

It is written the way a SimPy user would write it: one process per client, the server a plain
function call (cheaper for SimPy than a server process plus request/reply events, which is what
retrystorm simulates: so the comparison, if anything, favours SimPy). The random numbers come
from Python's `random` (Mersenne Twister), not retrystorm's streams, so the peak agrees in
distribution, not to the unit.

Usage: herd_simpy.py N [--seed S]; prints one JSON object:
{"clients", "retries", "attempts", "peak_retries", "peak_arrivals", "end_ms", "sim_seconds"}.
"""

import argparse
import json
import random
import sys
import time
from collections import Counter

import simpy

BASE = 0.100  # s
CAP = 10.0  # s
ATTEMPTS = 6
BUCKET = 0.010  # s


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("clients", type=int)
    ap.add_argument("--seed", type=int, default=42)
    args = ap.parse_args()

    t0 = time.perf_counter()
    rng = random.Random(args.seed)
    env = simpy.Environment()
    first = Counter()
    retries = Counter()
    attempts = 0

    def server(now: float, retry: bool) -> bool:
        """The server: counts the arrival and fails it at once."""
        nonlocal attempts
        attempts += 1
        (retries if retry else first)[int(now / BUCKET)] += 1
        return False

    def client(env: simpy.Environment):
        for n in range(ATTEMPTS):
            if server(env.now, n > 0):
                return
            if n + 1 < ATTEMPTS:
                yield env.timeout(rng.uniform(0.0, min(CAP, BASE * 2**n)))

    for _ in range(args.clients):
        env.process(client(env))
    env.run()
    sim_seconds = time.perf_counter() - t0

    peak_retries = max(retries.values(), default=0)
    peak_arrivals = max(
        (first[b] + retries[b] for b in set(first) | set(retries)), default=0
    )
    json.dump(
        {
            "clients": args.clients,
            "attempts": attempts,
            "retries": sum(retries.values()),
            "peak_retries": peak_retries,
            "peak_arrivals": peak_arrivals,
            "end_ms": env.now * 1e3,
            "sim_seconds": sim_seconds,
        },
        sys.stdout,
    )
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
