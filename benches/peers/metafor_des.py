"""Metafor's own discrete-event simulator on its canonical server, for docs/validation.md ("Metafor").

Usage: python3 benches/peers/metafor_des.py METAFOR_CHECKOUT [--seeds 30] [--horizon 900]
                                              [--ours target/release/retrystorm]
(git clone https://github.com/mpi-sws-rse/metafor; pip install numpy pandas matplotlib)

Builds the README's "Example 1" (one thread, exponential service of mean 0.1 s, queue 100; an open
client at 9.5/s with a 3 s timeout and 4 retries) from the classes of `metafor/simulator/`
(Server, OpenLoopClientWithTimeout, Simulator) and runs it once per seed (Python's `random`,
which Metafor draws from, seeded with the seed). `simulate.py`'s own `make_sim_exp` cannot be
used: at commit 5355c17 it hard-codes a five-server DAG (client timeout 36 s, 3 retries).

Three clients, to tell the modelling differences apart:
- `as-shipped`: Metafor's classes unchanged. Its client arms the 3 s timer only when `offer`
  returns events, i.e. when the first attempt starts service at once (`client.py`, `generate`:
  `if offered:`); a first attempt that waits in the queue is never retried.
- `timer-every-attempt`: the same, but `generate` arms the timer for every first attempt, like
  a real client (and like retrystorm). Everything else (a dropped attempt is not retried, a late
  answer to an earlier attempt settles the request) stays Metafor's.
- `timer-every-attempt, latest-answer-only`: also, like retrystorm's client, once a retry went
  out the answer to an earlier attempt is ignored (Metafor's `on_complete` accepts any attempt's).
- ours, with `--ours BIN`: `BIN run models/metafor.toml --variant V --seed S --json -` for the
  variants `retry-at-once` (the canonical client) and `no-retries` (what the as-shipped client
  amounts to: its only timers are on attempts served at once, which finish long before 3 s).

Each run gives the time-weighted mean queue (waiting requests, not the one in service: Metafor's
`FCFSQueue` and retrystorm's `queue_len` alike) per 1 s bucket, and the statistic of
docs/validation.md: the start of the first bucket whose mean queue is >= 90 (a run that never
gets there counts as the horizon), and whether a later bucket comes back under 30.
"""
import argparse
import contextlib
import heapq
import io
import json
import logging
import math
import random
import statistics
import subprocess
import sys

sys.path.pop(0)  # this directory's timeit.py would shadow the standard library's

TIP, BACK = 90, 30


def metafor_queue_series(sim_mod, seed, horizon, timer_every_attempt, latest_answer_only):
    """One run of Metafor's DES; returns the mean queue length of each 1 s bucket."""
    server_mod, client_mod, job_mod, simulate_mod = sim_mod
    random.seed(seed)

    clock = {"t": 0.0}
    area = [0.0] * horizon

    class TimedQueue(server_mod.FCFSQueue):
        """Metafor's FIFO, integrating its length over simulated time per bucket."""

        def __init__(self):
            super().__init__()
            self.last_t = 0.0

        def _advance(self):
            t, n = min(clock["t"], float(horizon)), self.len()
            while self.last_t < t:
                b = int(self.last_t)
                end = min(t, b + 1.0)
                area[b] += n * (end - self.last_t)
                self.last_t = end

        def append(self, job):
            self._advance()
            super().append(job)

        def pop(self):
            self._advance()
            return super().pop()

    class Client(client_mod.OpenLoopClientWithTimeout):
        def generate(self, t, payload=None):
            events = super().generate(t, payload)
            if timer_every_attempt and not any(e[1] == self.on_timeout for e in events[1:]):
                # Arm the timer Metafor skips for a first attempt that was queued or dropped
                # (`Server.offer` below remembers the job `generate` just offered).
                events.append((t + self.timeout, self.on_timeout, self._last_job))
            return events

        def on_timeout(self, t, job):
            events = super().on_timeout(t, job)
            if events:  # a retry went out: only its answer is awaited now
                self._latest[job.request_id] = job.attempt_id + 1
            return events

        def on_complete(self, t, job):
            if latest_answer_only and job.attempt_id < self._latest.get(job.request_id, 0):
                return None  # the answer to an attempt the client has given up on
            return super().on_complete(t, job)

    # Capture the job `generate` creates: it is the first argument of the next `offer`.
    class Server(server_mod.Server):
        def offer(self, job, t):
            if self.client is not None and job.attempt_id == 0:
                self.client._last_job = job
            return super().offer(job, t)

    server = Server(
        1,
        "server_1",
        100,  # queue size
        1,  # thread pool
        job_mod.ExponentialDistribution(10.0),  # service rate 10/s
        None,
        downstream_server=None,
        timeout=None,  # no server-side retries
        max_retries=0,
        # Server.offer reads self.token_bucket.tokens before its None check (server.py:388):
        # an infinite bucket admits everything.
        token_bucket=server_mod.TokenBucket(capacity=math.inf, refill_rate=0.0),
    )
    server.queue = TimedQueue()
    server.set_context(server_mod.Context(seed, 1, server_mod.JoinTracker({1: []})))
    client = Client(
        "client",
        "request",
        job_mod.ExponentialDistribution,
        0.95,  # rho: arrivals at rho / mean service = 9.5/s
        job_mod.exp_job(0.1),
        3.0,  # timeout (s)
        4,  # retries
        0.95,
        0.95,
        [math.inf],  # no fault phase
        0.0,
    )
    client.server = server
    client._latest = {}
    server.client = client

    with contextlib.redirect_stdout(io.StringIO()):
        sim = simulate_mod.Simulator({1: server}, [client], {1: []}, seed)
    logging.disable(logging.INFO)  # Simulator turns INFO logging on: one line per event
    # Simulator.sim's loop, with its clock shared with TimedQueue.
    sim.reset()
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink):  # job_done prints one line per completion
        while sim.q and sim.t < horizon:
            (t, _, call, payload) = heapq.heappop(sim.q)
            sim.t = clock["t"] = t
            for ev in call(t, payload) or []:
                t2, call2, payload2 = ev
                heapq.heappush(sim.q, (t2, next(sim.event_counter), call2, payload2))
            sink.seek(0)
            sink.truncate()
    clock["t"] = float(horizon)
    server.queue._advance()
    return area


def ours_queue_series(binary, model, variant, seed):
    out = subprocess.run(
        [binary, "run", model, "--variant", variant, "--seed", str(seed), "--json", "-"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    series = json.loads(out)["variants"][0]["series"]
    assert series["bucket_ms"] == 1000, series["bucket_ms"]
    return series["queue_len"]


def tip_and_back(queue, horizon):
    tip = next((i for i, q in enumerate(queue) if q >= TIP), None)
    back = tip is not None and any(q < BACK for q in queue[tip + 1 :])
    return (horizon if tip is None else tip), tip is not None, back


def t975(df):
    """Student's t 97.5% quantile (Cornish-Fisher to 1/df^2: within 0.1% for df >= 5)."""
    z = 1.959964
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)


def summarize(name, results, horizon):
    tips = [r[0] for r in results]
    n = len(tips)
    mean = statistics.fmean(tips)
    half = t975(n - 1) * statistics.stdev(tips) / math.sqrt(n) if n > 1 else float("nan")
    tipped = sum(r[1] for r in results)
    back = sum(r[2] for r in results)
    print(
        f"{name:>20}: time to a queue >= {TIP}: {mean:.1f} ± {half:.1f} s (median {statistics.median(tips):g}),"
        f" tipped within {horizon} s in {tipped} of {n}; back under {BACK} after tipping in {back} of {tipped}"
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("metafor")
    ap.add_argument("--seeds", type=int, default=30)
    ap.add_argument("--horizon", type=int, default=900)
    ap.add_argument("--ours", help="path to the retrystorm binary")
    ap.add_argument("--model", default="models/metafor.toml")
    args = ap.parse_args()

    sys.path[:0] = [args.metafor]
    with contextlib.redirect_stdout(io.StringIO()):
        from metafor.simulator import client, job, server, simulate
    mods = (server, client, job, simulate)
    seeds = range(1, args.seeds + 1)
    clients = (
        ("as-shipped", False, False),
        ("timer-every-attempt", True, False),
        ("timer-every-attempt, latest-answer-only", True, True),
    )
    for name, every, latest in clients:
        res = [tip_and_back(metafor_queue_series(mods, s, args.horizon, every, latest), args.horizon) for s in seeds]
        summarize("Metafor DES " + name, res, args.horizon)
        print("    per seed:", [r[0] for r in res])
    for variant in ("retry-at-once", "no-retries") if args.ours else ():
        res = [tip_and_back(ours_queue_series(args.ours, args.model, variant, s), args.horizon) for s in seeds]
        summarize("retrystorm " + variant, res, args.horizon)
        print("    per seed:", [r[0] for r in res])


if __name__ == "__main__":
    main()
