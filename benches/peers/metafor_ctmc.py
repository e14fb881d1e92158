"""Metafor's CTMC of its canonical single server, for docs/validation.md ("Metafor").

Usage: python3 benches/peers/metafor_ctmc.py PATH_TO_METAFOR_CHECKOUT
(git clone https://github.com/mpi-sws-rse/metafor; pip install numpy scipy pandas matplotlib)

Builds the README's "Example 1" (Work(10), qsize=100, orbit_size=20, thread_pool=1; Source 9.5/s,
timeout=3, retries=4) with Metafor's own DSL and prints its stationary mean queue, mixing time,
its own hitting-time figures, and the expected time from the empty state to a queue of 90 or
more, which is what retrystorm measures per run.
"""
import sys

sys.path.pop(0)  # this directory's timeit.py would shadow the standard library's
import numpy as np  # noqa: E402

root = sys.argv[1]
sys.path[:0] = [root, root + "/metafor"]
from metafor.dsl.dsl import Program, Server, Source, Work  # noqa: E402

server = Server("52", {"insert": Work(10, [])}, qsize=100, orbit_size=20, thread_pool=1)
p = Program("Service52")
p.add_server(server)
p.add_source(Source("client", "insert", 9.5, timeout=3, retries=4))
p.connect("client", "52")
ctmc = p.build()
pi = ctmc.get_stationary_distribution()
print("stationary mean queue:", ctmc.main_queue_size_average(pi))
print("mixing time (s):", ctmc.get_mixing_time())
low = ctmc.set_construction([[0, 30]], [[0, ctmc.retry_queue_size]])
high = ctmc.set_construction([[90, 100]], [[0, ctmc.retry_queue_size]])
# Metafor's get_hitting_time_average returns the minimum over the source states.
print("Metafor hitting time, best state of q<30 -> q>=90 (s):", ctmc.get_hitting_time_average(low, high))
print("Metafor hitting time, best state of q>=90 -> q<30 (s):", ctmc.get_hitting_time_average(high, low))
target = set(high)
rest = [i for i in range(ctmc.state_num) if i not in target]
Q = ctmc.Q.toarray() if hasattr(ctmc.Q, "toarray") else np.asarray(ctmc.Q)
u = np.linalg.solve(Q[np.ix_(rest, rest)], -np.ones(len(rest)))
print("expected time, empty -> q>=90 (s):", u[rest.index(ctmc._index_composer(0, 0))])
