"""
Cost over insertions: SPARSE-PIVOT, REFERENCE and DYNAMIC-AGREEMENT
===================================================================

Nodes of a planted-partition graph arrive in random order; with probability
0.2 a random live node is deleted instead (the process of the SPARSE-PIVOT
paper). After every step we read the clustering each dynamic algorithm keeps
and compare its number of disagreements with the all-singletons clustering
(whose cost is the number of live edges) and with static PIVOT recomputed
from scratch on the current graph.
"""

import os

import matplotlib.pyplot as plt
import numpy as np

from skalgos.cluster import DynamicCorrelationClustering, pivot
from skalgos.datasets import make_planted_partition_graph
from skalgos.metrics import correlation_clustering_cost

QUICK = os.environ.get("SKALGOS_EXAMPLES_QUICK") == "1"
n_clusters, size = (6, 25) if QUICK else (20, 40)
A, truth = make_planted_partition_graph(n_clusters, size, 0.8, 0.01, random_state=0)
n = A.shape[0]
rs = np.random.RandomState(0)
order = rs.permutation(n)
P = A[order][:, order]  # node id = arrival index

# %%
# Run the stream
# --------------
# ``partial_fit`` takes the new node's row (its edges to every node seen so
# far and to itself), ``remove`` soft-deletes a node.
algorithms = {
    "SPARSE-PIVOT": DynamicCorrelationClustering(random_state=0),
    "REFERENCE": DynamicCorrelationClustering(algorithm="reference", random_state=0),
    "DYNAMIC-AGREEMENT": DynamicCorrelationClustering(
        algorithm="agreement", random_state=0
    ),
}
curves = {name: [] for name in [*algorithms, "PIVOT from scratch"]}
steps = []
live = np.zeros(n, dtype=bool)
seen = 0
step = 0
while seen < n:
    if live.sum() > 0 and rs.rand() < 0.2:
        node = rs.choice(np.flatnonzero(live))
        for est in algorithms.values():
            est.remove([node])
        live[node] = False
    else:
        for est in algorithms.values():
            est.partial_fit(P[[seen], : seen + 1])
        live[seen] = True
        seen += 1
    step += 1
    if step % 10:
        continue
    ids = np.where(live, np.arange(n), -1)
    edges = correlation_clustering_cost(P, ids)  # cost of all singletons
    if edges == 0:
        continue
    steps.append(step)
    for name, est in algorithms.items():
        labels = np.full(n, -1)
        labels[: est.labels_.shape[0]] = est.labels_
        curves[name].append(correlation_clustering_cost(P, labels) / edges)
    keep = np.flatnonzero(live)
    sub = P[keep][:, keep]
    curves["PIVOT from scratch"].append(
        correlation_clustering_cost(sub, pivot(sub, random_state=0)) / edges
    )

# %%
# Plot the normalised objective
# -----------------------------
fig, ax = plt.subplots(figsize=(7, 4))
for name, c in curves.items():
    ax.plot(steps, c, label=f"{name} (mean {np.mean(c):.2f})")
ax.axhline(1.0, color="grey", lw=0.8, ls=":", label="all singletons")
ax.set_xlabel("step (insertions and deletions)")
ax.set_ylabel("cost / cost(singletons)")
ax.set_title("Correlation clustering cost along the stream")
ax.legend()
fig.tight_layout()

# %%
# Database operations per insertion
# ---------------------------------
# The update time of the model is the number of degree, random-neighbour and
# adjacency queries; ``db_ops_`` counts them.
for name, est in algorithms.items():
    print(f"{name:18s} {est.db_ops_['per_insertion']:8.1f} queries per insertion")
