"""Dynamic correlation clustering: SPARSE-PIVOT against REFERENCE CLUSTERING,
DYNAMIC-AGREEMENT, static PIVOT and the planted truth.

One run, six tables:

1. quality on planted partitions (insert-only stream, final graph): cost
   relative to the planted partition for SINGLETONS, static PIVOT and every
   dynamic method, with the share of singletons and where SPARSE-PIVOT's
   singletons come from;
2. the paper's process (insert the next node with probability 0.8, delete a
   random live node with probability 0.2; once all nodes are in, delete until
   empty): cost relative to SINGLETONS averaged over snapshots, planted
   partitions and drifting blobs with edges at distance < mean-distance / c;
3. wall time of one ``partial_fit`` call (one new node) at growing n, fixed
   degree: the per-call cost must not grow with n;
4. database operations and kernel time per insertion against the average
   degree at fixed n: where SPARSE-PIVOT starts to do fewer operations than
   REFERENCE CLUSTERING (the crossover);
5. database operations per insertion at growing n, with the slope of log(ops)
   against log(n);
6. streaming n nodes with SPARSE-PIVOT against recomputing static PIVOT after
   every insertion, both measured (no extrapolation).

Usage: ``python benchmarks/dynamic_cc.py [--quick] [--output PATH]``; the
environment variable ``DYNAMIC_CC_ONLY=crossover,ops`` (names: quality,
process, per_call, crossover, ops, recompute) runs only those tables.
"""

import os
import time

import numpy as np
from _common import parse_args, report, timer
from sklearn.metrics import pairwise_distances
from sklearn.neighbors import radius_neighbors_graph

from skalgos.cluster import DynamicCorrelationClustering, pivot
from skalgos.cluster._dynamic_cc import _singleton_sources
from skalgos.cluster._kernels import kwik_cluster
from skalgos.datasets import make_drifting_blobs, make_planted_partition_graph
from skalgos.metrics import correlation_clustering_cost
from skalgos.utils.validation import check_adjacency

args = parse_args("dynamic_cc", __doc__.splitlines()[0])
Q = args.quick

# --- parameters -----------------------------------------------------------------
SEED = 0
N_SEEDS = 2 if Q else 3  # arrival orders (and PIVOT seeds) per quality row
# planted partitions: (n_clusters, cluster_size, p_in, p_out)
PLANTED = (
    [(8, 50, 0.8, 0.005), (10, 40, 0.5, 0.005)]
    if Q
    else [
        (40, 100, 0.8, 0.002),
        (20, 100, 0.5, 0.002),
        (50, 40, 0.7, 0.005),
        (10, 200, 0.9, 0.001),
    ]
)
AGREEMENT_MAX_N = 2000 if Q else 4000  # pure-Python baseline: capped
AGREEMENT_SEEDS = 1  # and run for one arrival order only
# table 2: the paper's process
P_DELETE = 0.2
N_SNAPSHOTS = 8 if Q else 20
N_PIVOT_SEEDS = 3
PROCESS_SBM = [(8, 40, 0.8, 0.005)] if Q else [(20, 100, 0.8, 0.002)]
BLOBS_N = 300 if Q else 2000
BLOBS_C = (10,) if Q else (10, 30)
# table 3: one-node partial_fit calls at these n (cluster size 50, degree ~22)
PER_CALL_N = (2000, 8000) if Q else (2000, 8000, 32000, 128000)
PER_CALL_T = 50 if Q else 200  # timed calls per size
# table 4: fixed n, growing average degree
CROSS_N = 2000 if Q else 8000
CROSS_DEG = (20, 100) if Q else (20, 50, 100, 150, 200, 400)
KERNEL_REPEATS = 1 if Q else 7  # best of
# table 5
SIZES = (500, 1000, 2000) if Q else (1000, 4000, 16000, 32000)
# table 6: measured recompute baseline
N_RECOMPUTE = (500,) if Q else (2000, 5000)

METHODS = {
    "sparse_pivot": dict(algorithm="sparse_pivot"),
    "sparse_pivot (threshold search)": dict(
        algorithm="sparse_pivot", break_cluster="threshold_search"
    ),
    "reference": dict(algorithm="reference"),
    "agreement": dict(algorithm="agreement"),
}


def planted(k, s, p_in, p_out, seed=SEED):
    return make_planted_partition_graph(k, s, p_in, p_out, random_state=seed)


def singleton_share(labels):
    live = labels >= 0
    counts = np.bincount(labels[live], minlength=labels.shape[0])
    return float(np.mean(counts[labels[live]] == 1))


def _ratio(a, b):
    return a / b if b > 0 else float("nan")


# --- table 1 ----------------------------------------------------------------------
def table_quality():
    rows = []
    for k, s, p_in, p_out in PLANTED:
        A, truth = planted(k, s, p_in, p_out)
        n = A.shape[0]
        opt = correlation_clustering_cost(A, truth)
        res = {"SINGLETONS": ([A.nnz // 2], [1.0])}
        c, sh = [], []
        for r in range(N_SEEDS):
            lab = pivot(A, random_state=r)
            c.append(correlation_clustering_cost(A, lab))
            sh.append(singleton_share(lab))
        res["static PIVOT"] = (c, sh)
        why = np.zeros(3)
        for name, kw in METHODS.items():
            if name == "agreement" and n > AGREEMENT_MAX_N:
                continue
            c, sh = [], []
            for r in range(AGREEMENT_SEEDS if name == "agreement" else N_SEEDS):
                order = np.random.RandomState(r).permutation(n)
                est = DynamicCorrelationClustering(random_state=r, **kw)
                est.fit(A, order=order)
                c.append(correlation_clustering_cost(A, est.labels_))
                sh.append(singleton_share(est.labels_))
                if name == "sparse_pivot":
                    w = _singleton_sources(est)
                    why += [w["break"], w["unclustered"], w["pivot_not_pivot"]]
            res[f"{name} (1 order)" if name == "agreement" else name] = (c, sh)
        why /= N_SEEDS
        pv = np.mean(res["static PIVOT"][0])
        for name, (c, sh) in res.items():
            rows.append(
                [
                    f"{k}x{s} p_in={p_in} p_out={p_out}",
                    f"{A.nnz / n:.0f}",
                    name,
                    float(np.mean(c)) / opt,
                    _ratio(float(np.mean(c)), pv),
                    f"{100 * np.mean(sh):.0f}%",
                    (
                        f"{100 * why[0]:.0f}% / {100 * why[1]:.0f}% / "
                        f"{100 * why[2]:.0f}%"
                        if name == "sparse_pivot"
                        else ""
                    ),
                ]
            )
            print(rows[-1], flush=True)
    return (
        "Quality on planted partitions (insert-only stream, final graph, mean of "
        f"{N_SEEDS} arrival orders; lower is better)",
        [
            "graph",
            "avg degree",
            "method",
            "cost / planted cost",
            "ratio to PIVOT",
            "singletons",
            "SP singletons: break / unclustered / p(u) not a pivot",
        ],
        rows,
    )


# --- table 2 ----------------------------------------------------------------------
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
            for est in ests.values():
                est.partial_fit(block)
            live[seen : seen + (j - k)] = True
            seen += j - k
        else:
            j = k + 1
            for est in ests.values():
                est.remove([pos[node]])
            live[pos[node]] = False
        k = j
        if k in snap_at and live.sum() >= 20:
            m_live = correlation_clustering_cost(P, np.where(live, np.arange(n), -1))
            if m_live == 0:
                continue
            lab_pad = np.full(n, -1, dtype=np.int64)
            for name, est in ests.items():
                lab_pad[:] = -1
                lab_pad[: est.labels_.shape[0]] = est.labels_
                out[name].append(correlation_clustering_cost(P, lab_pad) / m_live)
            sub_live = np.flatnonzero(live)
            S = P[sub_live][:, sub_live]
            c = [
                correlation_clustering_cost(S, pivot(S, random_state=s)) / m_live
                for s in range(N_PIVOT_SEEDS)
            ]
            out["static PIVOT (from scratch)"].append(float(np.mean(c)))
    return {name: float(np.mean(v)) for name, v in out.items()}


def table_process():
    rows = []
    graphs = []
    for k, s, p_in, p_out in PROCESS_SBM:
        A, _ = planted(k, s, p_in, p_out)
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
        order, events = process(A, np.random.RandomState(SEED))
        step = max(1, len(events) // N_SNAPSHOTS)
        snap_at = set(range(step, len(events) + 1, step))
        res = run_process(A, order, events, snap_at)
        sp_, pv = res["sparse_pivot"], res["static PIVOT (from scratch)"]
        rows.append(
            [
                label,
                f"{A.nnz / A.shape[0]:.1f}",
                sp_,
                res["sparse_pivot (threshold search)"],
                res["reference"],
                res["agreement"],
                pv,
                _ratio(sp_, res["agreement"]),
                _ratio(sp_, pv),
            ]
        )
        print(rows[-1], flush=True)
    return (
        "The paper's process: cost / cost(SINGLETONS), mean over snapshots of the "
        "0.8/0.2 insert/delete stream (lower is better; SP = sparse_pivot)",
        [
            "graph",
            "avg degree",
            "SP",
            "SP (threshold search)",
            "reference",
            "agreement",
            "PIVOT scratch",
            "ratio SP/agreement",
            "ratio SP/PIVOT",
        ],
        rows,
    )


# --- table 3 ----------------------------------------------------------------------
def table_per_call():
    rows = []
    for name in ("sparse_pivot", "reference"):
        base = None
        for n in PER_CALL_N:
            # a graph of n + T nodes of fixed degree: the T timed arrivals see
            # about the same degree whatever n is
            N = n + PER_CALL_T
            A, _ = planted(N // 50 + 1, 50, 0.4, 2.0 / N)
            perm = np.random.RandomState(SEED).permutation(A.shape[0])
            P = check_adjacency(A[perm][:, perm])
            est = DynamicCorrelationClustering(random_state=SEED, **METHODS[name])
            est.fit(P[:n, :n])
            new_rows = [P[[i], : i + 1] for i in range(n, n + PER_CALL_T)]
            ops0 = est.db_ops_["total"]
            with timer() as t:
                for r in new_rows:
                    est.partial_fit(r)
            per = t() / PER_CALL_T
            ops = (est.db_ops_["total"] - ops0) / PER_CALL_T
            deg = np.mean([r.nnz for r in new_rows])
            base = per if base is None else base
            rows.append([name, n, f"{deg:.1f}", 1e6 * per, per / base, ops])
            print(rows[-1], flush=True)
    return (
        "One partial_fit call (one new node, full API: validation, update, "
        f"labels), mean of {PER_CALL_T} calls after n stored nodes (cluster size "
        "50, p_in 0.4, out-degree 2)",
        [
            "method",
            "n",
            "new node's degree",
            "us per call",
            "ratio to smallest n",
            "ops per call",
        ],
        rows,
    )


# --- table 4 ----------------------------------------------------------------------
def _kernel_time(A, order, kw):
    """Best-of wall time of the insertion loop alone (database ingestion and
    the algorithm's update, no input conversion), per insertion."""
    best = np.inf
    for _ in range(KERNEL_REPEATS):
        est = DynamicCorrelationClustering(random_state=SEED, **kw)
        run = est._run_block
        spent = []

        def timed(*a, _run=run, _spent=spent, **k):
            t0 = time.perf_counter()
            out = _run(*a, **k)
            _spent.append(time.perf_counter() - t0)
            return out

        est._run_block = timed
        est.fit(A, order=order)
        best = min(best, sum(spent) / A.shape[0])
    return best, est.db_ops_["per_insertion"]


def table_crossover():
    rows = []
    s = 400
    for deg in CROSS_DEG:
        A, _ = planted(CROSS_N // s, s, min(1.0, deg / s), 2.0 / CROSS_N)
        order = np.random.RandomState(SEED).permutation(A.shape[0])
        t_ref, o_ref = _kernel_time(A, order, METHODS["reference"])
        t_sp, o_sp = _kernel_time(A, order, METHODS["sparse_pivot"])
        rows.append(
            [
                f"{A.nnz / A.shape[0]:.0f}",
                o_sp,
                o_ref,
                o_sp / o_ref,
                1e6 * t_sp,
                1e6 * t_ref,
                t_sp / t_ref,
            ]
        )
        print(rows[-1], flush=True)
    return (
        f"Operations and kernel time per insertion against the average degree (n = "
        f"{CROSS_N}, clusters of {s}, out-degree 2, insert-only; kernel = the "
        f"insertion loop, best of {KERNEL_REPEATS})",
        [
            "avg degree",
            "SP ops",
            "reference ops",
            "ratio ops SP/ref",
            "SP us",
            "reference us",
            "ratio time SP/ref",
        ],
        rows,
    )


# --- table 5 ----------------------------------------------------------------------
def scaling_graph(n, seed):
    s = n // 20
    d_in = 0.005 * n + 20
    return planted(20, s, min(1.0, d_in / s), 2.0 / n, seed)


def table_ops():
    rows = []
    curves = {"sparse_pivot": [], "reference": []}
    for n in SIZES:
        A, _ = scaling_graph(n, SEED)
        order = np.random.RandomState(SEED).permutation(n)
        for name in curves:
            est = DynamicCorrelationClustering(random_state=SEED, **METHODS[name])
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
                ]
            )
            print(rows[-1], flush=True)
    slopes = []
    for name, pts in curves.items():
        x, y = np.log([p[0] for p in pts]), np.log([p[1] for p in pts])
        slopes.append([name, float(np.polyfit(x, y, 1)[0]), len(pts)])
    return [
        (
            "Database operations per insertion at growing n (insert-only; 20 "
            "clusters, in-degree 0.005n+20, out-degree 2)",
            ["n", "avg degree", "method", "mean ops", "p99 ops"],
            rows,
        ),
        (
            "Growth of ops per insertion: slope of log(mean ops) against log(n) "
            "(0 = constant, 1 = linear)",
            ["method", "slope", "sizes"],
            slopes,
        ),
    ]


# --- table 6 ----------------------------------------------------------------------
def table_recompute():
    rows = []
    for n in N_RECOMPUTE:
        A, _ = planted(n // 50, 50, 0.5, 2.0 / n)
        perm = np.random.RandomState(SEED).permutation(A.shape[0])
        P = check_adjacency(A[perm][:, perm])
        new_rows = [P[[i], : i + 1] for i in range(n)]
        est = DynamicCorrelationClustering(random_state=SEED)
        with timer() as t:
            for r in new_rows:
                est.partial_fit(r)
        t_sp = t()
        t_sp_kernel = _kernel_time(P, np.arange(n), METHODS["sparse_pivot"])[0] * n
        # static PIVOT after every insertion, measured: the full API call on
        # the current graph, and the kernel alone on pre-built CSR arrays
        t_api, t_kernel = 0.0, 0.0
        rs = np.random.RandomState(SEED)
        for i in range(1, n + 1):
            S = P[:i, :i]
            t0 = time.perf_counter()
            lab = pivot(S, random_state=i)
            t_api += time.perf_counter() - t0
            indptr, indices = S.indptr.astype(np.int64), S.indices.astype(np.int64)
            perm_i = rs.permutation(i).astype(np.int64)
            t0 = time.perf_counter()
            kwik_cluster(indptr, indices, perm_i)
            t_kernel += time.perf_counter() - t0
        m = P.nnz // 2
        c_sp = correlation_clustering_cost(P, est.labels_)
        c_pv = correlation_clustering_cost(P, lab)
        rows.append(
            [
                n,
                f"{P.nnz / n:.0f}",
                t_sp,
                t_api,
                t_api / t_sp,
                t_sp_kernel,
                t_kernel,
                t_kernel / t_sp_kernel,
                c_sp / m,
                c_pv / m,
            ]
        )
        print(rows[-1], flush=True)
    return (
        "Stream n nodes: SPARSE-PIVOT (one partial_fit per node) vs static PIVOT "
        "recomputed after every insertion, both measured",
        [
            "n",
            "avg degree",
            "SP stream s",
            "PIVOT every insertion s (API)",
            "ratio PIVOT/SP (API)",
            "SP stream s (kernel only)",
            "PIVOT every insertion s (kernel only)",
            "ratio PIVOT/SP (kernels)",
            "SP cost/|E| (final)",
            "PIVOT cost/|E| (final)",
        ],
        rows,
    )


# warm the Numba caches so that compile time is not timed
_A, _ = planted(3, 10, 0.9, 0.05)
for _kw in METHODS.values():
    DynamicCorrelationClustering(**_kw).fit(_A).partial_fit(np.zeros((1, 31)))
pivot(_A)

# DYNAMIC_CC_ONLY=crossover (for example) runs only the named tables; write
# them with --output elsewhere and copy them into the full results by hand.
_TABLES = {
    "quality": lambda: [table_quality()],
    "process": lambda: [table_process()],
    "per_call": lambda: [table_per_call()],
    "crossover": lambda: [table_crossover()],
    "ops": lambda: list(table_ops()),
    "recompute": lambda: [table_recompute()],
}
_only = [t for t in os.environ.get("DYNAMIC_CC_ONLY", "").split(",") if t]
for _t in _only:
    if _t not in _TABLES:
        raise ValueError(
            f"DYNAMIC_CC_ONLY: unknown table {_t!r}; one of {list(_TABLES)}"
        )
sections = [
    sec
    for name, make in _TABLES.items()
    if not _only or name in _only
    for sec in make()
]
report(
    args,
    "Dynamic correlation clustering (SPARSE-PIVOT, ICML 2025)",
    sections,
    notes=[
        "Cost / planted cost: the planted partition is a good clustering, not "
        "necessarily the optimum (a method can beat it; SINGLETONS' row shows "
        "the cost of giving up). Singletons: share of nodes alone in their "
        "cluster (the planted truth has none).",
    ],
)
