"""
=====================================================
pCQO-MIS: independent set size over time vs. greedy
=====================================================

:class:`~skalgos.graph.MaximumIndependentSet` runs pCQO-MIS, a projected
momentum gradient descent on a quadratic relaxation of the maximum independent
set problem, from many initializations at once. It records the best maximal
independent set found at every MIS check in ``history_``. We plot that size
against wall-clock time, next to the min-degree greedy (a single, instant
answer) and the exact optimum proven by the MILP solver.
"""

import os

import matplotlib.pyplot as plt

from skalgos.datasets import make_erdos_renyi_graph
from skalgos.graph import MaximumIndependentSet

QUICK = os.environ.get("SKALGOS_EXAMPLES_QUICK") == "1"

# %%
# A random graph like the paper's ER test set (p = 0.15), smaller.
n = 60 if QUICK else 120
A = make_erdos_renyi_graph(n, 0.15, random_state=0)

# %%
# pCQO with the official ER setting (fewer steps), the greedy, and the MILP.
pcqo = MaximumIndependentSet(
    batch_size=32 if QUICK else 256,
    max_iter=1800 if QUICK else 9000,
    random_state=0,
).fit(A)
greedy = MaximumIndependentSet("greedy").fit(A)
milp = MaximumIndependentSet("milp", time_limit=30).fit(A)
print(f"pCQO {pcqo.size_}, greedy {greedy.size_}, MILP {milp.size_}")
print(f"MILP proved optimality: {milp.optimal_}")

# %%
# Best size over time. Each step of the curve is one MIS check (every
# ``restart_interval`` gradient steps, followed by a restart).
seconds = [h[2] for h in pcqo.history_]
best = [h[1] for h in pcqo.history_]
fig, ax = plt.subplots(figsize=(6, 4))
ax.step(seconds, best, where="post", marker="o", label="pCQO-MIS, best so far")
ax.axhline(greedy.size_, color="C1", ls="--", label="min-degree greedy")
ax.axhline(
    milp.size_, color="k", ls=":", label="MILP optimum" if milp.optimal_ else "MILP"
)
ax.set_xlabel("seconds")
ax.set_ylabel("independent set size")
ax.set_title(f"ER graph, n={n}, p=0.15")
ax.legend(loc="lower right")
fig.tight_layout()
