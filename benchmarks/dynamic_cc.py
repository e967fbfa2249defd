"""Dynamic correlation clustering: SPARSE-PIVOT against DYNAMIC-AGREEMENT,
REFERENCE CLUSTERING and static PIVOT recomputed from scratch.

One run, three tables:

1. cost relative to SINGLETONS (= number of live edges), averaged over
   snapshots of the paper's process (insert the next node with probability
   0.8, delete a random live node with probability 0.2; once all nodes are in,
   delete until empty), on planted-partition graphs and on drifting blobs
   with edges at distance < mean-distance / c;
2. database operations per insertion (mean and p99) and wall time for
   growing n, with the slope of log(ops) against log(n);
3. wall time of streaming n nodes with SPARSE-PIVOT against recomputing
   static PIVOT after every insertion (estimated from timed prefixes).

Usage: ``python benchmarks/dynamic_cc.py [--quick] [--output PATH]``.
"""

import time

import numpy as np
from _common import parse_args, report, timer
from sklearn.metrics import pairwise_distances
from sklearn.neighbors import radius_neighbors_graph

from skalgos.cluster import DynamicCorrelationClustering, pivot
from skalgos.cluster._kernels import kwik_cluster
from skalgos.datasets import make_drifting_blobs, make_planted_partition_graph
from skalgos.metrics import correlation_clustering_cost
from skalgos.utils.validation import check_adjacency

args = parse_args("dynamic_cc", __doc__.splitlines()[0])
Q = args.quick

# --- parameters -----------------------------------------------------------------
SEED = 0
P_DELETE = 0.2  # the paper's insert/delete mix
N_SNAPSHOTS = 8 if Q else 25
N_PIVOT_SEEDS = 3  # static PIVOT from scratch, mean over seeds, per snapshot
# planted partition graphs for table 1: (n_clusters, cluster_size, p_in, p_out)
SBM = [(8, 40, 0.8, 0.005)] if Q else [(40, 100, 0.8, 0.002), (20, 100, 0.5, 0.002)]
# drifting blobs for table 1
BLOBS_N = 300 if Q else 2000
BLOBS_C = (10, 20) if Q else (10, 15, 20, 25, 30)
# table 2: n, in-cluster degree 0.005 n + 20, out degree 2, 20 clusters
SIZES = (500, 1000, 2000) if Q else (1000, 4000, 16000, 64000)
AGREEMENT_MAX_N = 2000 if Q else 16000  # pure-Python baseline: capped
# table 3
N_WALL = 2000 if Q else 20000
N_PREFIXES = 5 if Q else 20

METHODS = {
    "sparse_pivot": dict(algorithm="sparse_pivot"),
    "sparse_pivot (threshold search)": dict(
        algorithm="sparse_pivot", break_cluster="threshold_search"
    ),
    "reference": dict(algorithm="reference"),
    "agreement": dict(algorithm="agreement"),
}


def scaling_graph(n, seed):
    s = n // 20
    d_in = 0.005 * n + 20
    return make_planted_partition_graph(
        20, s, min(1.0, d_in / s), 2.0 / n, random_state=seed
    )


def process(A, rs):
    """The paper's event sequence: ('+', node) / ('-', node)."""
    n = A.shape[0]
    order = rs.permutation(n)
    events, live, i = [], [], 0
    while i < n or live:
        if i < n and (not live or rs.rand() >= P_DELETE):
            events.append(("+", order[i]))
            live.append(order[i])
            i += 1
        else:
            j = rs.randint(len(live))
            live[j], live[-1] = live[-1], live[j]
            events.append(("-", live.pop()))
    return order, events


def run_process(A, order, events, snap_at):
    """Run every method on the event stream; normalised cost at snapshots."""
    n = A.shape[0]
    pos = np.empty(n, dtype=np.int64)
    pos[order] = np.arange(n)
    P = check_adjacency(A[order][:, order])  # node id = arrival index
    out = {name: [] for name in METHODS}
    out["static PIVOT (from scratch)"] = []
    times = dict.fromkeys(out, 0.0)
    ests = {
        name: DynamicCorrelationClustering(random_state=SEED, **kw)
        for name, kw in METHODS.items()
    }
    seen = 0
    live = np.zeros(n, dtype=bool)
    k = 0
    while k < len(events):
        kind, node = events[k]
        if kind == "+":
            j = k
            while j < len(events) and events[j][0] == "+" and j not in snap_at:
                j += 1
            j = max(j, k + 1)
            block = P[seen : seen + (j - k), : seen + (j - k)]
            for name, est in ests.items():
                t = time.perf_counter()
                est.partial_fit(block)
                times[name] += time.perf_counter() - t
            live[seen : seen + (j - k)] = True
            seen += j - k
        else:
            j = k + 1
            for name, est in ests.items():
                t = time.perf_counter()
                est.remove([pos[node]])
                times[name] += time.perf_counter() - t
            live[pos[node]] = False
        k = j
        if k in snap_at and live.sum() >= 20:
            lab_pad = np.full(n, -1, dtype=np.int64)
            sub_live = np.flatnonzero(live)
            m_live = correlation_clustering_cost(P, np.where(live, np.arange(n), -1))
            if m_live == 0:
                continue
            for name, est in ests.items():
                lab_pad[:] = -1
                lab_pad[: est.labels_.shape[0]] = est.labels_
                out[name].append(correlation_clustering_cost(P, lab_pad) / m_live)
            S = P[sub_live][:, sub_live]
            c = []
            for s in range(N_PIVOT_SEEDS):
                t = time.perf_counter()
                lab = pivot(S, random_state=s)
                times["static PIVOT (from scratch)"] += time.perf_counter() - t
                c.append(correlation_clustering_cost(S, lab) / m_live)
            out["static PIVOT (from scratch)"].append(float(np.mean(c)))
    return {name: float(np.mean(v)) for name, v in out.items()}, times


def _ratio(a, b):
    return a / b if b > 0 else float("nan")


def table_costs():
    rows = []
    graphs = []
    for k, s, p_in, p_out in SBM:
        A, _ = make_planted_partition_graph(k, s, p_in, p_out, random_state=SEED)
        graphs.append((f"planted {k}x{s} p_in={p_in} p_out={p_out}", A))
    X, _ = make_drifting_blobs(
        BLOBS_N, 10, 2, cluster_std=1.0, drift=10.0, center_box=(-20, 20),
        random_state=SEED,
    )  # fmt: skip
    rs = np.random.RandomState(SEED)
    sample = X[rs.choice(len(X), min(len(X), 1000), replace=False)]
    mean_d = pairwise_distances(sample).mean()
    for c in BLOBS_C:
        A = check_adjacency(radius_neighbors_graph(X, mean_d / c))
        graphs.append((f"drifting blobs, r = mean/{c}", A))
    for label, A in graphs:
        n = A.shape[0]
        order, events = process(A, np.random.RandomState(SEED))
        step = max(1, len(events) // N_SNAPSHOTS)
        snap_at = set(range(step, len(events) + 1, step))
        res, times = run_process(A, order, events, snap_at)
        sp_ = res["sparse_pivot"]
        rows.append(
            [
                label,
                f"{A.nnz / n:.1f}",
                res["sparse_pivot"],
                res["sparse_pivot (threshold search)"],
                res["reference"],
                res["agreement"],
                res["static PIVOT (from scratch)"],
                _ratio(sp_, res["agreement"]),
                _ratio(sp_, res["static PIVOT (from scratch)"]),
                times["sparse_pivot"],
                times["agreement"],
            ]
        )
        print(rows[-1], flush=True)
    header = [
        "graph",
        "avg degree",
        "SP",
        "SP (threshold search)",
        "reference",
        "agreement",
        "PIVOT scratch",
        "ratio SP/agreement",
        "ratio SP/PIVOT",
        "SP wall s",
        "agreement wall s",
    ]
    return (
        "Cost / cost(SINGLETONS), mean over snapshots of the 0.8/0.2 insert/delete "
        "process (lower is better; SP = sparse_pivot)",
        header,
        rows,
    )


def table_ops():
    rows = []
    curves = {name: [] for name in METHODS}
    for n in SIZES:
        A, _ = scaling_graph(n, SEED)
        order = np.random.RandomState(SEED).permutation(n)
        for name, kw in METHODS.items():
            if name == "agreement" and n > AGREEMENT_MAX_N:
                rows.append([n, f"{A.nnz / n:.0f}", name, "-", "-", "-", "skipped"])
                continue
            est = DynamicCorrelationClustering(random_state=SEED, **kw)
            with timer() as t:
                est.fit(A, order=order)
            hist = est.db_ops_["history"].sum(axis=1)
            curves[name].append((n, hist.mean()))
            rows.append(
                [
                    n,
                    f"{A.nnz / n:.0f}",
                    name,
                    float(hist.mean()),
                    float(np.percentile(hist, 99)),
                    t(),
                    "",
                ]
            )
            print(rows[-1], flush=True)
    slopes = []
    for name, pts in curves.items():
        if len(pts) >= 2:
            x, y = np.log([p[0] for p in pts]), np.log([p[1] for p in pts])
            slopes.append([name, float(np.polyfit(x, y, 1)[0]), len(pts)])
    ref = dict((s[0], s[1]) for s in slopes)
    for s in slopes:
        s.append(s[1] / ref["reference"])
    return [
        (
            "Database operations per insertion (insert-only stream; planted "
            "partition, 20 clusters, in-degree 0.005n+20, out-degree 2)",
            ["n", "avg degree", "method", "mean ops", "p99 ops", "wall s", "note"],
            rows,
        ),
        (
            "Growth of ops per insertion: slope of log(mean ops) against log(n) "
            "(0 = constant, 1 = linear), ratio to reference's slope",
            ["method", "slope", "sizes", "ratio to reference slope"],
            slopes,
        ),
    ]


def table_wall():
    A, _ = scaling_graph(N_WALL, SEED)
    n = A.shape[0]
    order = np.random.RandomState(SEED).permutation(n)
    est = DynamicCorrelationClustering(random_state=SEED)
    with timer() as t:
        est.fit(A, order=order)
    t_sp = t()
    P = check_adjacency(A[order][:, order])
    ts = np.unique(np.linspace(1, n, N_PREFIXES).astype(int))
    per = []
    for m in ts:
        S = P[:m, :m]
        indptr, indices = S.indptr.astype(np.int64), S.indices.astype(np.int64)
        perm = np.random.RandomState(m).permutation(m).astype(np.int64)
        reps = 3
        with timer() as tk:
            for _ in range(reps):
                kwik_cluster(indptr, indices, perm)
        per.append(tk() / reps)
    # sum over every insertion t = 1..n of PIVOT(G_t): integrate the timed curve
    t_scratch = float(np.trapezoid(per, ts))
    c_sp = correlation_clustering_cost(A, est.labels_)
    c_pv = np.mean(
        [correlation_clustering_cost(A, pivot(A, random_state=s)) for s in range(3)]
    )
    rows = [
        [
            n,
            f"{A.nnz / n:.0f}",
            t_sp,
            t_scratch,
            t_scratch / t_sp,
            c_sp / A.nnz * 2,
            c_pv / A.nnz * 2,
            c_sp / c_pv,
        ]
    ]
    return (
        "Wall time: stream n nodes with SPARSE-PIVOT vs recompute static PIVOT "
        "after every insertion (kernel only, integrated from timed prefixes)",
        [
            "n",
            "avg degree",
            "SP stream s",
            "PIVOT every insertion s (est.)",
            "ratio PIVOT/SP",
            "SP cost/|E| (final)",
            "PIVOT cost/|E| (final)",
            "ratio cost SP/PIVOT",
        ],
        rows,
    )


# warm the Numba caches so that compile time is not timed
_A, _ = make_planted_partition_graph(3, 10, 0.9, 0.05, random_state=0)
for kw in METHODS.values():
    DynamicCorrelationClustering(**kw).fit(_A)
pivot(_A)

sections = [table_costs(), *table_ops(), table_wall()]
report(args, "Dynamic correlation clustering (SPARSE-PIVOT, ICML 2025)", sections)
