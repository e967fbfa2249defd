"""
=======================================================================
Independent set size over time: pCQO-MIS, local search, greedy, CHILS
=======================================================================

:class:`~skalgos.graph.MaximumIndependentSet` runs pCQO-MIS, a projected
momentum gradient descent on a quadratic relaxation of the maximum independent
set problem, from a batch of initializations at once, then polishes the best
set it found with the iterated local search (ILS) of Andrade, Resende and
Werneck. ``history_`` records the best size at every MIS check of pCQO and
after every chunk of ILS iterations, with the seconds since ``fit`` started.

We plot that size against wall-clock time on a sparse random graph, next to
the min-degree greedy (one instant answer), the same local search started from
the greedy set, and CHILS (the state of the art heuristic, when the optional
``chils`` package is installed) run with a few time limits.
"""

import os

import matplotlib.pyplot as plt

from skalgos.datasets import make_erdos_renyi_graph
from skalgos.graph import MaximumIndependentSet

QUICK = os.environ.get("SKALGOS_EXAMPLES_QUICK") == "1"

# %%
# A sparse Erdos-Renyi graph (average degree 10), where the greedy is strong.
n = 500 if QUICK else 3000
A = make_erdos_renyi_graph(n, 10 / (n - 1), random_state=0)
seconds = 0.5 if QUICK else 4.0

# %%
# pCQO followed by the local search, and the local search from the greedy
# set, both for the same wall-clock budget (the ILS iteration budget is lifted
# so that only the time limit stops them).
ours = MaximumIndependentSet(
    local_search_iter=10**9, time_limit=seconds, random_state=0
).fit(A)
greedy_ils = MaximumIndependentSet(
    "greedy", local_search_iter=10**9, time_limit=seconds, random_state=0
).fit(A)
greedy = MaximumIndependentSet("greedy", local_search=False).fit(A)
print(
    f"greedy {greedy.size_}, pCQO + ILS {ours.size_}, greedy + ILS {greedy_ils.size_}"
)

# %%
# CHILS at a few time limits, if it is installed (``pip install chils``).
chils = []
try:
    import chils as _  # noqa: F401

    for t in [seconds / 8, seconds / 2, seconds]:
        est = MaximumIndependentSet("chils", time_limit=t, random_state=0).fit(A)
        chils.append((t, est.size_))
    print("CHILS:", ", ".join(f"{size} at {t:g} s" for t, size in chils))
except ImportError:
    print("chils is not installed: its points are left out")

# %%
# Best size over time. pCQO's checks come first (the paper's method alone),
# then the local search takes over.
fig, ax = plt.subplots(figsize=(6.5, 4))
for est, label, colour in (
    (ours, "pCQO, then ILS", "C0"),
    (greedy_ils, "greedy, then ILS", "C2"),
):
    for phase, style in (("pcqo", "o"), ("local_search", "")):
        pts = [(h[2], h[1]) for h in est.history_ if h[3] == phase and h[1] > 0]
        if pts:
            ax.step(
                *zip(*pts),
                where="post",
                marker=style or None,
                color=colour,
                label=f"{label}: {phase.replace('_', ' ')}",
            )
ax.axhline(greedy.size_, color="C1", ls="--", label="min-degree greedy")
if chils:
    ax.plot(*zip(*chils), "k*", markersize=10, label="CHILS (time limit)")
ax.set_xlabel("seconds")
ax.set_ylabel("independent set size")
ax.set_title(f"Erdos-Renyi graph, n={n}, average degree 10")
ax.legend(loc="lower right", fontsize=8)
fig.tight_layout()
