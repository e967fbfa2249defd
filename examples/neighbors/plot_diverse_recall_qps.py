"""
Diverse k-NN: recall against queries per second
===============================================

A catalogue where one seller owns 90% of the items: the 10 nearest items to a
query are nearly all from that seller. A *diverse* query asks for the 10
nearest items with at most one per seller. The usual answer is two-stage:
retrieve ``r`` nearest candidates, then keep the first item of each seller,
which needs ``r`` far larger than 10. :class:`~skalgos.neighbors.DiverseNearestNeighbors`
answers in one pass, with a graph built to keep edges toward other sellers
(DiverseIndex) and a search queue that bounds each seller (DiverseSearch).

We sweep the queue size of each method and plot diverse recall@10 against
queries per second.
"""

# %%
import os
import time

import matplotlib.pyplot as plt

from skalgos.datasets import make_colored_manifold
from skalgos.metrics import diverse_recall
from skalgos.neighbors import DiverseNearestNeighbors, diverse_kneighbors

QUICK = os.environ.get("SKALGOS_EXAMPLES_QUICK") == "1"
n, n_queries = (3_000, 100) if QUICK else (20_000, 500)

X, sellers = make_colored_manifold(
    n + n_queries, n_features=32, intrinsic_dim=6, n_groups=501,
    dominant_share=0.9, random_state=0,
)  # fmt: skip
Q, X, sellers = X[n:], X[:n], sellers[:n]
_, truth = diverse_kneighbors(X, sellers, Q, n_neighbors=10, max_per_group=1)

# %%
# Build the diverse index and the standard (DiskANN) one.
diverse = DiverseNearestNeighbors(random_state=0).fit(X, sellers)
standard = DiverseNearestNeighbors(build="standard", random_state=0).fit(X, sellers)
print(
    f"build: diverse {diverse.build_time_:.1f} s, standard {standard.build_time_:.1f} s"
)

# %%
# Sweep the queue size (``search_list_size``; for two-stage it is ``r``).
curves = {
    "diverse build + diverse search": (diverse, "graph", [10, 12, 15, 20, 30, 50]),
    "standard build + diverse search": (standard, "graph", [10, 20, 50, 100, 200]),
    "two-stage (standard build)": (standard, "two_stage", [50, 100, 150, 200, 300]),
}
fig, ax = plt.subplots(figsize=(6, 4))
for label, (est, method, sizes) in curves.items():
    est.kneighbors(Q[:5], method=method)  # warm up
    recall, qps = [], []
    for L in sizes:
        t0 = time.perf_counter()
        ind = est.kneighbors(Q, search_list_size=L, method=method)[1]
        qps.append(len(Q) / (time.perf_counter() - t0))
        recall.append(diverse_recall(ind, truth))
    ax.plot(recall, qps, "o-", label=label)
    print(label, [f"{r:.3f}" for r in recall])
ax.set_xlabel("diverse recall@10")
ax.set_ylabel("queries per second")
ax.set_yscale("log")
ax.legend()
fig.tight_layout()
