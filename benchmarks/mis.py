"""Maximum independent set: pCQO-MIS + local search vs greedy, networkx, MILP, CHILS.

(a) Quality and time on sparse graphs: Erdos-Renyi with average degree 20
    (n = 1000, 5000, 20000), random 3-regular, a grid, a planar (Delaunay)
    graph and SAT-derived graphs, for the min-degree greedy, networkx's
    maximal_independent_set (best of 10), pCQO alone, ours (the defaults:
    pCQO + iterated local search), the greedy + the same local search, the
    MILP (HiGHS; optima only when proven, or known by construction) and CHILS
    at 1 s and at our wall time. Several seeds: median [min, max].
(b) Time to quality: best size against wall-clock seconds for ours and the
    greedy + ILS (one long run each, read from ``history_``) and CHILS run
    with that time limit.
(c) Node weights (maximum weight independent set) against GWMIN, MILP, CHILS.
(d) pCQO alone: the measurements behind the default batch size and step
    count, and the dense vs implicit complement.

CHILS (``pip install chils``, the ``mis`` extra) is optional: without it its
columns say "not installed". Run: ``python benchmarks/mis.py`` (``--quick``
for CI).
"""

import os
import platform
import statistics
import subprocess
import time
import warnings

import networkx as nx
import numpy as np
import scipy.sparse as sp
from _common import parse_args, report
from scipy.spatial import Delaunay

from skalgos.datasets import make_erdos_renyi_graph, make_sat_independent_set
from skalgos.graph import MaximumIndependentSet

args = parse_args("mis", __doc__.splitlines()[0])
QUICK = args.quick

try:
    import chils  # noqa: F401

    HAVE_CHILS = True
except ImportError:
    HAVE_CHILS = False
NO_CHILS = "not installed"

# --- parameters ---------------------------------------------------------------
SEEDS = [0] if QUICK else [0, 1, 2]
MILP_TIME_LIMIT = 3.0 if QUICK else 20.0
MILP_MAX_NODES = 10_000  # above this the MILP is not run
NX_DRAWS = 5
CHILS_SECONDS = 0.2 if QUICK else 1.0
# one seed above this many nodes (the runs take tens of seconds each)
MANY_SEEDS_MAX_NODES = 10_000
# (b)
CURVE_GRAPHS = ["ER n=300, d=10"] if QUICK else ["ER n=1000, d=20", "ER n=5000, d=20"]
CURVE_SECONDS = [0.1, 0.3] if QUICK else [0.1, 0.3, 1.0, 3.0, 6.0]
# (c)
WEIGHTED_GRAPHS = (
    ["ER n=300, d=10"] if QUICK else ["ER n=1000, d=20", "ER n=5000, d=20"]
)
WEIGHT_RANGE = (1, 100)
# (d)
D_GRAPH = "ER n=300, d=10" if QUICK else "ER n=5000, d=20"
D_BATCHES = [8, 32, 64] if QUICK else [8, 16, 32, 64, 128, 256]
D_TIMING_STEPS = 10 if QUICK else 50
D_STEPS = [100, 300] if QUICK else [100, 200, 300, 600, 1200]
D_DENSE = [(300, 10)] if QUICK else [(1000, 20), (1000, 100), (2000, 20), (2000, 200)]


def er(n, d, seed=0):
    return make_erdos_renyi_graph(n, d / (n - 1), random_state=seed)


def regular3(n, seed=0):
    return sp.csr_array(nx.to_scipy_sparse_array(nx.random_regular_graph(3, n, seed)))


def grid(rows, cols):
    return sp.csr_array(nx.to_scipy_sparse_array(nx.grid_2d_graph(rows, cols)))


def planar(n, seed=0):
    """Delaunay triangulation of uniform points in the unit square."""
    tri = Delaunay(np.random.RandomState(seed).uniform(size=(n, 2)))
    s = tri.simplices
    e = np.concatenate([s[:, [0, 1]], s[:, [1, 2]], s[:, [0, 2]]])
    A = sp.csr_array((np.ones(len(e)), (e[:, 0], e[:, 1])), shape=(n, n))
    return sp.csr_array(((A + A.T) > 0).astype(float))


def sat(n_vars, n_clauses, seed=0):
    A, alpha = make_sat_independent_set(n_vars, n_clauses, random_state=seed)
    return A, alpha


# name -> (adjacency, known optimum or None, how it is known)
if QUICK:
    SAT_SMALL = sat(20, 80)
    GRAPHS = {
        "ER n=300, d=10": (er(300, 10), None, ""),
        "3-regular n=300": (regular3(300), None, ""),
        "grid 15x15": (grid(15, 15), 113, "bipartite: ceil(n/2)"),
        "planar (Delaunay) n=300": (planar(300), None, ""),
        "SAT 20 vars, 80 clauses": (SAT_SMALL[0], SAT_SMALL[1], "planted 3-SAT"),
    }
else:
    SAT_SMALL = sat(100, 403)
    SAT_LARGE = sat(1000, 4030)
    GRAPHS = {
        "ER n=1000, d=20": (er(1000, 20), None, ""),
        "ER n=5000, d=20": (er(5000, 20), None, ""),
        "ER n=20000, d=20": (er(20000, 20), None, ""),
        "3-regular n=5000": (regular3(5000), None, ""),
        "grid 100x100": (grid(100, 100), 5000, "bipartite: n/2"),
        "planar (Delaunay) n=5000": (planar(5000), None, ""),
        "SAT 100 vars, 403 clauses": (SAT_SMALL[0], SAT_SMALL[1], "planted 3-SAT"),
        "SAT 1000 vars, 4030 clauses": (SAT_LARGE[0], SAT_LARGE[1], "planted 3-SAT"),
    }
EXTRA = {"ER n=300, d=10": er(300, 10)}


def graph(name):
    return GRAPHS[name][0] if name in GRAPHS else EXTRA[name]


def fit(A, node_weight=None, **params):
    c0, t0 = time.process_time(), time.perf_counter()
    est = MaximumIndependentSet(**params).fit(A, node_weight=node_weight)
    return est, time.perf_counter() - t0, time.process_time() - c0


def run_chils(A, seconds, seed, node_weight=None):
    """CHILS through our solver="chils" (graph built in Python, then run)."""
    if not HAVE_CHILS:
        return None
    est, wall, cpu = fit(
        A,
        node_weight=node_weight,
        solver="chils",
        time_limit=seconds,
        random_state=seed,
    )
    return est, wall, cpu


def nx_best(A, draws):
    G = nx.from_scipy_sparse_array(A)
    t0 = time.perf_counter()
    size = max(len(nx.maximal_independent_set(G, seed=k)) for k in range(draws))
    return size, time.perf_counter() - t0


def med(values):
    return statistics.median(values)


def spread(values, fmt="{:g}"):
    """median [min, max] (or the single value)."""
    if len(values) == 1:
        return fmt.format(values[0])
    return (
        f"{fmt.format(med(values))} [{fmt.format(min(values))}, "
        f"{fmt.format(max(values))}]"
    )


def best_at(history, t):
    """Best value in a ``history_`` reached by ``t`` seconds (0 if none)."""
    values = [h[1] for h in history if h[2] <= t]
    return max(values) if values else 0


# warm-up: compile the kernels once, outside every timing
_w = er(200, 5)
for _solver in ("pcqo", "greedy"):
    MaximumIndependentSet(_solver, local_search_iter=50, random_state=0).fit(_w)
    MaximumIndependentSet(_solver, local_search_iter=50, random_state=0).fit(
        _w, node_weight=np.arange(1.0, 201.0)
    )
with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # two steps: a fallback, on purpose
    MaximumIndependentSet(complement="dense", local_search=False, max_iter=2).fit(_w)

sections = []

# (a) ------------------------------------------------------------------------
rows = []
goal_rows = []
for name, (A, known, how) in GRAPHS.items():
    n, m = A.shape[0], A.nnz // 2
    seeds = SEEDS if n <= MANY_SEEDS_MAX_NODES else SEEDS[:1]
    greedy, t_greedy, _ = fit(A, solver="greedy", local_search=False)
    s_nx, t_nx = nx_best(A, NX_DRAWS)
    alone, t_alone, _ = fit(A, local_search=False, random_state=seeds[0])
    ours = [fit(A, random_state=s) for s in seeds]
    g_ils = [fit(A, solver="greedy", random_state=s) for s in seeds]
    sizes = [e.size_ for e, _, _ in ours]
    walls = [w for _, w, _ in ours]
    cpus = [c for _, _, c in ours]
    if n <= MILP_MAX_NODES:
        milp, t_milp, _ = fit(A, solver="milp", time_limit=MILP_TIME_LIMIT)
        if milp.optimal_:
            milp_txt = f"**{milp.size_}** (proven, {t_milp:.1f} s)"
        else:
            milp_txt = f"{milp.size_} (bound {milp.upper_bound_:.0f}, not proven)"
    else:
        milp = None
        milp_txt = f"not run (n > {MILP_MAX_NODES})"
    optimum = (
        known if known is not None else (milp.size_ if milp and milp.optimal_ else None)
    )
    opt_txt = f"**{known}** ({how})" if known is not None else milp_txt
    if HAVE_CHILS:
        c1 = [run_chils(A, CHILS_SECONDS, s) for s in seeds]
        cw = [run_chils(A, w, s) for s, w in zip(seeds, walls)]
        c1_sizes = [e.size_ for e, _, _ in c1]
        cw_sizes = [e.size_ for e, _, _ in cw]
        c1_txt = spread(c1_sizes)
        c1_cpu = f"{med([c for _, _, c in c1]):.2f}"
        cw_txt = spread(cw_sizes)
        r1 = f"{med(sizes) / med(c1_sizes):.4f}"
        rw = f"{med(sizes) / med(cw_sizes):.4f}"
        tr = f"{med(walls) / CHILS_SECONDS:.2f}"
    else:
        c1_txt = c1_cpu = cw_txt = r1 = rw = tr = NO_CHILS
    rows.append(
        [
            name,
            n,
            m,
            opt_txt,
            f"{greedy.size_} ({t_greedy:.3f} s)",
            f"{s_nx} ({t_nx:.2f} s)",
            f"{alone.size_} ({t_alone:.2f} s)",
            spread(sizes),
            f"{med(walls):.2f}",
            f"{med(cpus):.2f}",
            spread([e.size_ for e, _, _ in g_ils]),
            c1_txt,
            c1_cpu,
            cw_txt,
            f"{med(sizes) / greedy.size_:.4f}",
            r1,
            rw,
            tr,
            "" if optimum is None else f"{med(sizes) / optimum:.4f}",
        ]
    )
    goal_rows.append(
        [
            name,
            "yes"
            if min(sizes) >= greedy.size_
            else f"no ({min(sizes)} < {greedy.size_})",
            r1,
            tr,
        ]
    )
sections.append(
    (
        "(a) Sizes (median [min, max] over seeds "
        f"{SEEDS}, one seed above {MANY_SEEDS_MAX_NODES} nodes) and wall seconds; ours = MaximumIndependentSet() defaults "
        f"(pCQO, then the ARW iterated local search); CHILS {CHILS_SECONDS:g} s and "
        "CHILS given our wall time; MILP HiGHS "
        f"{MILP_TIME_LIMIT:g} s (bold = optimum, proven or known by construction)",
        [
            "graph",
            "n",
            "edges",
            "optimum / MILP",
            "greedy (s)",
            f"networkx best of {NX_DRAWS} (s)",
            "pCQO alone (s)",
            "ours",
            "ours s",
            "ours CPU s",
            "greedy + ILS",
            f"CHILS {CHILS_SECONDS:g} s",
            "CHILS CPU s",
            "CHILS at our time",
            "size ratio ours/greedy",
            f"size ratio ours/CHILS {CHILS_SECONDS:g} s",
            "size ratio ours/CHILS same time",
            f"time ratio ours/CHILS {CHILS_SECONDS:g} s",
            "size ratio ours/optimum",
        ],
        rows,
    )
)
sections.append(
    (
        "(a') The goal: never below the greedy (every seed); at least 0.99 of "
        "CHILS's size within 10x its time (n = 1000 and 5000)",
        ["graph", "never below greedy", "size ratio ours/CHILS", "time ratio"],
        goal_rows,
    )
)

# (b) ------------------------------------------------------------------------
rows = []
horizon = max(CURVE_SECONDS)
for name in CURVE_GRAPHS:
    A = graph(name)
    greedy = MaximumIndependentSet("greedy", local_search=False).fit(A).size_
    ours = [
        fit(A, random_state=s, local_search_iter=10**9, time_limit=horizon)[0]
        for s in SEEDS
    ]
    g_ils = [
        fit(
            A,
            solver="greedy",
            random_state=s,
            local_search_iter=10**9,
            time_limit=horizon,
        )[0]
        for s in SEEDS
    ]
    for t in CURVE_SECONDS:
        o = [best_at(e.history_, t) for e in ours]
        g = [best_at(e.history_, t) for e in g_ils]
        if HAVE_CHILS:
            c = [run_chils(A, t, s)[0].size_ for s in SEEDS]
            c_txt = spread(c)
            ratio = f"{med(o) / med(c):.4f}"
        else:
            c_txt = ratio = NO_CHILS
        rows.append([name, t, greedy, spread(o), spread(g), c_txt, ratio])
sections.append(
    (
        "(b) Time to quality: best size reached by t seconds (median [min, max] "
        f"over seeds {SEEDS}); ours and greedy + ILS read from one run of "
        f"{horizon:g} s (0 = pCQO still running), CHILS run with time limit t",
        [
            "graph",
            "t (s)",
            "greedy",
            "ours",
            "greedy + ILS",
            "CHILS",
            "size ratio ours/CHILS",
        ],
        rows,
    )
)

# (c) ------------------------------------------------------------------------
rows = []
for name in WEIGHTED_GRAPHS:
    A = graph(name)
    n = A.shape[0]
    w = np.random.RandomState(0).randint(WEIGHT_RANGE[0], WEIGHT_RANGE[1] + 1, n)
    w = w.astype(float)
    greedy, t_g, _ = fit(A, node_weight=w, solver="greedy", local_search=False)
    ours = [fit(A, node_weight=w, random_state=s) for s in SEEDS]
    vals = [e.weight_ for e, _, _ in ours]
    walls = [t for _, t, _ in ours]
    milp, t_m, _ = fit(A, node_weight=w, solver="milp", time_limit=MILP_TIME_LIMIT)
    milp_txt = (
        f"**{milp.weight_:.0f}** (proven)"
        if milp.optimal_
        else f"{milp.weight_:.0f} (bound {milp.upper_bound_:.0f}, not proven)"
    )
    if HAVE_CHILS:
        c = [run_chils(A, CHILS_SECONDS, s, node_weight=w)[0].weight_ for s in SEEDS]
        c_txt, ratio = spread(c, "{:.0f}"), f"{med(vals) / med(c):.4f}"
    else:
        c_txt = ratio = NO_CHILS
    rows.append(
        [
            name,
            f"{greedy.weight_:.0f} ({t_g:.3f} s)",
            spread(vals, "{:.0f}"),
            f"{med(walls):.2f}",
            milp_txt,
            c_txt,
            f"{med(vals) / greedy.weight_:.4f}",
            ratio,
        ]
    )
sections.append(
    (
        f"(c) Node weights, uniform integers in {list(WEIGHT_RANGE)}: total weight "
        f"(median [min, max] over seeds {SEEDS})",
        [
            "graph",
            "GWMIN greedy (s)",
            "ours",
            "ours s",
            f"MILP {MILP_TIME_LIMIT:g} s",
            f"CHILS {CHILS_SECONDS:g} s",
            "weight ratio ours/greedy",
            f"weight ratio ours/CHILS {CHILS_SECONDS:g} s",
        ],
        rows,
    )
)

# (d) ------------------------------------------------------------------------
A = graph(D_GRAPH)
n = A.shape[0]
rows = []
for B in D_BATCHES:
    est = MaximumIndependentSet(
        batch_size=B,
        max_iter=D_TIMING_STEPS,
        restart_interval=D_TIMING_STEPS,
        local_search=False,
        random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # too few steps to converge: no matter
        est.fit(A)
        t0 = time.perf_counter()
        est.fit(A)
    per_step = (time.perf_counter() - t0) / D_TIMING_STEPS
    rows.append([B, 1e3 * per_step, 1e6 * per_step / B])
sections.append(
    (
        f"(d1) pCQO step time against the batch size B, {D_GRAPH} (fused sparse "
        "kernel, float32, 1 thread)",
        ["B", "ms per step", "us per step and initialization"],
        rows,
    )
)
rows = []
greedy = MaximumIndependentSet("greedy", local_search=False).fit(A).size_
for steps in D_STEPS:
    alone = [fit(A, max_iter=steps, local_search=False, random_state=s) for s in SEEDS]
    polished = [
        fit(A, max_iter=steps, local_search_iter=5 * n, random_state=s)[0].size_
        for s in SEEDS
    ]
    first = [next((h[0] for h in e.history_ if h[1] > 0), None) for e, _, _ in alone]
    rows.append(
        [
            steps,
            spread([e.size_ for e, _, _ in alone]),
            f"{med([t for _, t, _ in alone]):.2f}",
            "never" if None in first else spread(first),
            sum(e.used_fallback_ for e, _, _ in alone),
            spread(polished),
            greedy,
            f"{med([e.size_ for e, _, _ in alone]) / greedy:.4f}",
        ]
    )
sections.append(
    (
        f"(d2) pCQO alone against its step count (B=32, a check every 100 steps), "
        f"{D_GRAPH}, and the same followed by {5}n ILS iterations",
        [
            "steps",
            "pCQO size",
            "pCQO s",
            "first maximal set at step",
            "fallbacks",
            "then ILS",
            "greedy",
            "size ratio pCQO/greedy",
        ],
        rows,
    )
)
rows = []
for nd, d in D_DENSE:
    Ad = er(nd, d)
    per = {}
    for mode in ("dense", "implicit"):
        est = MaximumIndependentSet(
            batch_size=32,
            max_iter=D_TIMING_STEPS,
            restart_interval=D_TIMING_STEPS,
            complement=mode,
            local_search=False,
            random_state=0,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(Ad)
            t0 = time.perf_counter()
            est.fit(Ad)
        per[mode] = (time.perf_counter() - t0) / D_TIMING_STEPS
    rows.append(
        [nd, d, Ad.nnz // 2, 1e3 * per["dense"], 1e3 * per["implicit"],
         per["dense"] / per["implicit"]]
    )  # fmt: skip
sections.append(
    (
        "(d3) time per pCQO step (B=32, float32, 1 thread): the paper's dense "
        "complement against the implicit one (fused sparse kernel)",
        ["n", "average degree", "edges", "dense ms", "implicit ms", "time ratio"],
        rows,
    )
)


def _cpu_model():
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        for line in out.splitlines():
            if line.startswith("Model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


sections.append(
    (
        "Setup",
        ["item", "value"],
        [
            ["CPU", f"{_cpu_model()}, {os.cpu_count()} cores (shared)"],
            ["CHILS", "installed" if HAVE_CHILS else NO_CHILS + " (rows skipped)"],
            ["threads", "ours: 1 (n_jobs=None); CHILS: its OpenMP default"],
        ],
    )
)

report(args, "Maximum independent set: pCQO-MIS + ILS vs greedy, MILP, CHILS", sections)
