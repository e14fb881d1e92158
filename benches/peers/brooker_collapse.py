"""Brooker's simple_collapse_sim next to models/brooker-collapse.toml (docs/validation.md).

Imports his model code unchanged (github.com/mbrooker/simulator_example,
simple_collapse_sim/sim.py, everything above its `run_multiple_n = 10` main block), runs it on
seeds 0..N-1 of Python's `random`, and runs retrystorm on seeds 1..N. Prints, per variant, the
share of runs that recovered after the spike (goodput over the last 10 s of the run at >= 0.8 x
the 10..20 s baseline; a collapse is to ~0, so the rule hardly matters) and the mean successes per
second at 20, 24, ..., 76 s for both.

    python3 benches/peers/brooker_collapse.py PATH/TO/sim.py 100
"""

import importlib.util
import json
import subprocess
import sys

ROOT = __file__.rsplit("/benches/", 1)[0]
BIN = f"{ROOT}/target/release/retrystorm"
MODEL = f"{ROOT}/models/brooker-collapse.toml"


def load_brooker(path):
    text = open(path).read()
    text = text[: text.index("run_multiple_n = 10")]
    spec = importlib.util.spec_from_loader("brooker", loader=None)
    mod = importlib.util.module_from_spec(spec)
    exec(compile(text, path, "exec"), mod.__dict__)
    return mod


def recovered(per_s):
    base = sum(per_s[10:20]) / 10.0
    return sum(per_s[-11:-1]) / 10.0 >= 0.8 * base


def ours(variant, n):
    curves = []
    for seed in range(1, n + 1):
        out = subprocess.run(
            [BIN, "run", MODEL, "--variant", variant, "--seed", str(seed), "--json", "-", "--quiet"],
            capture_output=True, text=True, check=True,
        ).stdout
        s = json.loads(out)["variants"][0]["series"]["succeeded"]
        curves.append(s + [0] * (80 - len(s)))
    return curves


def main():
    b = load_brooker(sys.argv[1])
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    runs = [
        ("spike-no-backoff", b.Client, b.run_sim_spike),
        ("spike-backoff", b.ClientWithBackoffAndJitter, b.run_sim_spike),
        ("ramp-no-backoff", b.Client, b.run_sim_ramp),
        ("ramp-backoff", b.ClientWithBackoffAndJitter, b.run_sim_ramp),
    ]
    for name, client, fn in runs:
        his = []
        for seed in range(n):
            b.random.seed(seed)
            his.append([d.successes for d in fn(name, client)][:80])
        mine = ours(name, n)
        mean = lambda cs: [sum(c[i] for c in cs if i < len(c)) / len(cs) for i in range(80)]
        print(f"{name}: recovered {sum(map(recovered, mine))}/{n} ours, {sum(map(recovered, his))}/{n} his")
        print("  ours per s", " ".join(f"{x:.0f}" for x in mean(mine)[20::4]))
        print("  his  per s", " ".join(f"{x:.0f}" for x in mean(his)[20::4]))


if __name__ == "__main__":
    main()
