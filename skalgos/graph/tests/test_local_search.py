"""Tests of the iterated local search, node weights, networkx input as labels,
the fused pCQO kernel, the weighted greedy and the optional CHILS solver."""

import itertools
import sys
import warnings

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning

from skalgos.datasets import make_erdos_renyi_graph
from skalgos.graph import (
    MaximumIndependentSet,
    improve_independent_set,
    is_independent_set,
    is_maximal_independent_set,
    maximum_independent_set,
)
from skalgos.graph import _kernels as K
from skalgos.graph._local_search import _seed_state
from skalgos.graph._mis import _validate_graph

SOLVERS = ["pcqo", "greedy", "milp", "chils"]


def _solver_params(solver):
    """Small settings per solver; skips CHILS when the package is missing."""
    if solver == "chils":
        pytest.importorskip("chils")
        return dict(time_limit=0.05)
    if solver == "pcqo":
        return dict(batch_size=8, max_iter=200)
    return {}


# --- oracles written independently of the package ---------------------------


def _edges(A):
    A = sp.coo_array(sp.triu(sp.csr_array(A), k=1))
    return list(zip(A.row.tolist(), A.col.tolist()))


def _best_weight_brute_force(n, edges, w):
    """Maximum weight of an independent set by enumeration (n <= 14)."""
    codes = np.arange(2**n, dtype=np.int64)
    bits = ((codes[:, None] >> np.arange(n)) & 1).astype(bool)
    ok = np.ones(codes.size, dtype=bool)
    for u, v in edges:
        ok &= ~(bits[:, u] & bits[:, v])
    return float((bits[ok] * w).sum(axis=1).max()) if n else 0.0


def _is_maximal(n, edges, S):
    S = set(S)
    nbrs = {i: set() for i in range(n)}
    for u, v in edges:
        if u in S and v in S:
            return False
        nbrs[u].add(v)
        nbrs[v].add(u)
    return all(i in S or nbrs[i] & S for i in range(n))


@st.composite
def graph_and_set(draw, max_nodes=14, weighted=False):
    """A random graph, an independent set of it, and maybe node weights."""
    n = draw(st.integers(min_value=1, max_value=max_nodes))
    pairs = list(itertools.combinations(range(n), 2))
    chosen = draw(st.lists(st.booleans(), min_size=len(pairs), max_size=len(pairs)))
    A = np.zeros((n, n))
    for (u, v), c in zip(pairs, chosen):
        if c:
            A[u, v] = A[v, u] = 1.0
    order = draw(st.permutations(range(n)))
    keep = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    S = []
    for v, k in zip(order, keep):  # a random independent (not maximal) set
        if k and not any(A[v, u] for u in S):
            S.append(v)
    w = None
    if weighted:
        w = np.asarray(
            draw(st.lists(st.integers(0, 9), min_size=n, max_size=n)), dtype=float
        )
    return A, sorted(S), w


# --- the local search never loses and keeps independence ---------------------


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=graph_and_set(), max_iter=st.sampled_from([0, 1, 7, 200]))
def test_local_search_never_lowers_size(data, max_iter):
    A, S, _ = data
    n = A.shape[0]
    out = improve_independent_set(A, S, max_iter=max_iter, random_state=0)
    assert _is_maximal(n, _edges(A), out.tolist())
    assert len(out) >= len(S)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=graph_and_set(weighted=True), max_iter=st.sampled_from([0, 5, 300]))
def test_weighted_local_search_never_lowers_weight(data, max_iter):
    A, S, w = data
    n = A.shape[0]
    out = improve_independent_set(
        A, S, node_weight=w, max_iter=max_iter, random_state=1
    )
    assert _is_maximal(n, _edges(A), out.tolist())
    assert w[out].sum() >= w[S].sum() - 1e-9
    # never above the optimum (a wrong weight bookkeeping would show here)
    assert w[out].sum() <= _best_weight_brute_force(n, _edges(A), w) + 1e-9


def _alloc(A, w, mask, seed):
    n = A.shape[0]
    weighted = w is not None
    ww = np.ones(n) if w is None else w
    st_ = np.empty((K.N_STATE_ROWS, n), np.int64)
    sc = np.zeros(K.N_INT_SCALARS, np.int64)
    fs = np.zeros(K.N_FLOAT_SCALARS + n)
    fs[K._EPS] = 1e-9 * ww.mean()
    fs[K._WUNIT] = ww.mean()
    log = np.empty(8 * n + 64, np.int64)
    best = np.zeros(n, np.uint8)
    rng = _seed_state(np.random.RandomState(seed))
    args = (A.indptr, A.indices, ww, weighted)
    K.ils_init(*args, mask.astype(np.uint8), st_, sc, fs, log, best, rng)
    return args, st_, sc, fs, log, best, rng


def _check_state(A, w, st_, sc, fs, best):
    """Every piece of incremental bookkeeping against a recomputation."""
    n = A.shape[0]
    weighted = w is not None
    w = np.ones(n) if w is None else w
    nsol = sc[K._NSOL]
    insol = np.zeros(n, dtype=bool)
    insol[st_[K._PERM, :nsol]] = True
    np.testing.assert_array_equal(st_[K._POS, st_[K._PERM]], np.arange(n))
    tight = (A @ insol.astype(float)).astype(np.int64)
    np.testing.assert_array_equal(st_[K._TIGHT], tight)
    one_tight = set(st_[K._OTL, : sc[K._NOT]].tolist())
    assert one_tight == set(np.flatnonzero(~insol & (tight == 1)).tolist())
    differ = set(st_[K._DL, : sc[K._ND]].tolist())
    assert differ == set(np.flatnonzero(insol != best.astype(bool)).tolist())
    assert fs[K._CUR] == pytest.approx(w[insol].sum())
    if weighted:  # the running solution-neighbour weights
        np.testing.assert_allclose(fs[K._NBW :], A @ (w * insol), atol=1e-9)
    assert fs[K._BEST] == pytest.approx(w[best.astype(bool)].sum())
    # the current solution is independent and maximal, and so is the best
    assert np.all(tight[insol] == 0) and np.all(tight[~insol] > 0)
    independent, maximal = K.check_masks(A.indptr, A.indices, best[None])
    assert independent[0] and maximal[0]


@pytest.mark.parametrize("weighted", [False, True], ids=["unit", "weighted"])
def test_ils_bookkeeping_matches_recomputation(weighted):
    A = _validate_graph(make_erdos_renyi_graph(150, 0.05, random_state=3))
    w = np.random.RandomState(4).randint(1, 30, 150).astype(float) if weighted else None
    mask = np.zeros(150, dtype=np.uint8)
    args, st_, sc, fs, log, best, rng = _alloc(A, w, mask, 0)
    _check_state(A, w, st_, sc, fs, best)
    previous = fs[K._BEST]
    for _ in range(20):
        ran = K.ils_iterate(*args, st_, sc, fs, log, best, rng, 157)
        assert ran == 157
        _check_state(A, w, st_, sc, fs, best)
        assert fs[K._BEST] >= previous  # the best never gets worse
        previous = fs[K._BEST]


def test_ils_on_complete_and_empty_graphs():
    # nothing to perturb on an edgeless graph (every node is in the solution)
    out = improve_independent_set(np.zeros((5, 5)), [], max_iter=50, random_state=0)
    np.testing.assert_array_equal(out, np.arange(5))
    out = improve_independent_set(nx.complete_graph(6), [2], max_iter=50)
    assert len(out) == 1


def test_local_search_reaches_optimum_where_greedy_does_not():
    # the Petersen graph: alpha = 4; and random sparse graphs against the MILP
    G = nx.petersen_graph()
    assert len(improve_independent_set(G, [0], random_state=0)) == 4
    for seed in range(5):
        A = make_erdos_renyi_graph(60, 0.08, random_state=seed)
        opt = MaximumIndependentSet("milp").fit(A)
        assert opt.optimal_
        greedy = MaximumIndependentSet("greedy", local_search=False).fit(A)
        ils = MaximumIndependentSet("greedy", random_state=seed).fit(A)
        assert greedy.size_ <= ils.size_ == opt.size_


def test_improve_independent_set_rejects_dependent_input():
    with pytest.raises(ValueError, match="independent set"):
        improve_independent_set(nx.path_graph(3), [0, 1])
    with pytest.raises(ValueError, match="max_iter"):
        improve_independent_set(nx.path_graph(3), [0], max_iter=-1)
    with pytest.raises(ValueError, match="max_iter"):
        improve_independent_set(nx.path_graph(3), [0], max_iter="many")
    with pytest.raises(ValueError, match="time_limit"):
        improve_independent_set(nx.path_graph(3), [0], time_limit=0)


# --- defaults do not fall back -----------------------------------------------


def test_grid_at_defaults_reaches_alpha():
    # a 20 x 20 grid is bipartite with alpha = 200; the official ER setting
    # falls back to greedy rounding here (gamma = 350 < 1 + 7 * 199)
    G = nx.grid_2d_graph(20, 20)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est = MaximumIndependentSet(random_state=0).fit(G)
        alone = MaximumIndependentSet(random_state=0, local_search=False).fit(G)
    assert est.size_ == 200 and not est.used_fallback_
    assert not alone.used_fallback_ and alone.n_maximal_found_ > 0
    assert est.gamma_ > 1 + est.gamma_prime * (200 - 1)
    assert is_maximal_independent_set(G, est.independent_set_)
    # the set is one colour class: labels are (row, column) tuples
    parities = {(i + j) % 2 for i, j in est.independent_set_labels_}
    assert len(parities) == 1


def test_er_setting_warns_when_it_falls_back():
    from skalgos.graph import PCQO_PRESETS

    G = nx.grid_2d_graph(20, 20)
    est = MaximumIndependentSet(
        **{**PCQO_PRESETS["er"], "max_iter": 900, "batch_size": 8},
        local_search=False,
        random_state=0,
    )
    with pytest.warns(ConvergenceWarning, match="rounded greedily"):
        est.fit(G)
    assert est.used_fallback_


# --- networkx input: structure only, labels back -----------------------------


@pytest.mark.parametrize("solver", SOLVERS)
def test_weight_zero_edge_is_an_edge_for_every_solver(solver):
    G = nx.Graph()
    G.add_edge("a", "b", weight=0)  # read as data, this edge would vanish
    G.add_edge("b", "c", weight=-3.0)  # a negative attribute is no error
    G.add_node("d")
    assert not is_independent_set(G, [0, 1])
    assert not is_independent_set(G, [1, 2])
    est = MaximumIndependentSet(solver, random_state=0, **_solver_params(solver))
    est.fit(G)
    labels = set(est.independent_set_labels_)
    assert not {"a", "b"} <= labels and not {"b", "c"} <= labels
    assert labels == {"a", "c", "d"} and est.size_ == 3


@pytest.mark.parametrize("solver", SOLVERS)
def test_string_labels_and_weight_attribute(solver):
    # a star whose centre outweighs its leaves: the weighted optimum is the
    # centre, the unweighted one the leaves
    G = nx.star_graph(["hub", "x", "y", "z"])
    nx.set_node_attributes(G, {"hub": 10.0, "x": 2.0, "y": 3.0, "z": 4.0}, "w")
    params = _solver_params(solver)
    plain = MaximumIndependentSet(solver, random_state=0, **params).fit(G)
    assert plain.independent_set_labels_ == ["x", "y", "z"]
    assert plain.weight_ == 3.0
    heavy = MaximumIndependentSet(solver, random_state=0, **params)
    heavy.fit(G, node_weight="w")
    assert heavy.independent_set_labels_ == ["hub"] and heavy.weight_ == 10.0
    # the same through an array in list(G.nodes) order
    w = np.array([G.nodes[v]["w"] for v in G.nodes])
    same = MaximumIndependentSet(solver, random_state=0, **params)
    assert same.fit(G, node_weight=w).independent_set_labels_ == ["hub"]


def test_labels_for_array_input_are_indices():
    est = MaximumIndependentSet("greedy").fit(nx.to_numpy_array(nx.path_graph(5)))
    assert est.independent_set_labels_ == [0, 2, 4]
    assert all(type(v) is int for v in est.independent_set_labels_)


@pytest.mark.parametrize(
    "node_weight, match, error",
    [
        (np.ones(3), "one entry per node", ValueError),
        (np.array([1.0, -1.0, 1.0, 1.0]), "non-negative", ValueError),
        (np.array([1.0, np.nan, 1.0, 1.0]), "NaN", ValueError),
        ("w", "node attribute", TypeError),
        (["a", "b", "c", "d"], "numbers", TypeError),
    ],
    ids=["shape", "negative", "nan", "attribute-on-array", "strings"],
)
def test_bad_node_weight(node_weight, match, error):
    A = nx.to_numpy_array(nx.path_graph(4))
    with pytest.raises(error, match=match):
        MaximumIndependentSet("greedy").fit(A, node_weight=node_weight)


def test_missing_weight_attribute():
    G = nx.path_graph(3)
    G.nodes[0]["w"] = 1.0
    with pytest.raises(ValueError, match="node 1 has no attribute 'w'"):
        MaximumIndependentSet("greedy").fit(G, node_weight="w")


def test_node_weight_is_not_modified():
    w = np.array([1.0, 2.0, 3.0, 4.0])
    before = w.copy()
    MaximumIndependentSet(random_state=0).fit(nx.path_graph(4), node_weight=w)
    np.testing.assert_array_equal(w, before)


# --- weighted MIS against the exact optimum ----------------------------------


@pytest.mark.parametrize("seed", range(8))
def test_weighted_solvers_against_brute_force(seed):
    rng = np.random.RandomState(seed)
    n = int(rng.randint(8, 14))
    A = make_erdos_renyi_graph(n, float(rng.uniform(0.15, 0.5)), random_state=seed)
    w = rng.randint(1, 20, size=n).astype(float)
    opt = _best_weight_brute_force(n, _edges(A), w)
    milp = MaximumIndependentSet("milp").fit(A, node_weight=w)
    assert milp.optimal_ and milp.weight_ == opt == milp.upper_bound_
    for solver in ("pcqo", "greedy"):
        est = MaximumIndependentSet(solver, random_state=seed).fit(A, node_weight=w)
        assert est.weight_ == opt, solver
        assert _is_maximal(n, _edges(A), est.independent_set_.tolist())
        plain = MaximumIndependentSet(solver, random_state=seed, local_search=False)
        assert plain.fit(A, node_weight=w).weight_ <= opt


@pytest.mark.parametrize("seed", range(4))
def test_weighted_milp_equals_blown_up_unweighted(seed):
    # integer weights: the MWIS of G equals the MIS of G with every node v
    # replaced by w(v) non-adjacent twins (each twin has v's neighbours)
    rng = np.random.RandomState(seed)
    n = 25
    A = make_erdos_renyi_graph(n, 0.2, random_state=seed).toarray()
    w = rng.randint(1, 4, size=n)
    owner = np.repeat(np.arange(n), w)
    blown = A[np.ix_(owner, owner)]
    heavy = MaximumIndependentSet("milp").fit(A, node_weight=w.astype(float))
    twins = MaximumIndependentSet("milp").fit(blown)
    assert heavy.optimal_ and twins.optimal_
    assert heavy.weight_ == twins.size_


@pytest.mark.parametrize("seed", range(2))
def test_weighted_heuristics_on_larger_graphs(seed):
    # on 100 nodes the MILP proves the optimum; the ILS comes within 1% of it
    # and beats the weighted greedy (GWMIN)
    A = make_erdos_renyi_graph(100, 0.05, random_state=seed)
    w = np.random.RandomState(seed).uniform(1, 10, size=100)
    opt = MaximumIndependentSet("milp", time_limit=120).fit(A, node_weight=w)
    assert opt.optimal_
    greedy = MaximumIndependentSet("greedy", local_search=False)
    greedy.fit(A, node_weight=w)
    est = MaximumIndependentSet(random_state=seed).fit(A, node_weight=w)
    assert is_maximal_independent_set(A, est.independent_set_)
    assert greedy.weight_ <= est.weight_ <= opt.weight_ + 1e-9
    assert est.weight_ >= 0.99 * opt.weight_


def test_unit_weights_match_unweighted_optimum():
    A = make_erdos_renyi_graph(40, 0.15, random_state=0)
    plain = MaximumIndependentSet("milp").fit(A)
    unit = MaximumIndependentSet("milp").fit(A, node_weight=np.ones(40))
    assert plain.size_ == unit.weight_ == unit.size_
    est = MaximumIndependentSet(random_state=0).fit(A, node_weight=np.ones(40))
    assert est.size_ == plain.size_


# --- the weighted greedy (GWMIN) ---------------------------------------------


def _gwmin_reference(A, w):
    """Plain Python GWMIN with the kernel's tie-break (smaller index first)."""
    A = sp.csr_array(A)
    alive = set(range(A.shape[0]))
    nbrs = [set(A.indices[A.indptr[i] : A.indptr[i + 1]].tolist()) for i in alive]
    chosen = []
    while alive:
        v = max(sorted(alive), key=lambda u: w[u] / (len(nbrs[u] & alive) + 1))
        chosen.append(v)
        alive -= nbrs[v] | {v}
    return sorted(chosen)


@pytest.mark.parametrize("seed", range(6))
def test_weighted_greedy_matches_reference(seed):
    rng = np.random.RandomState(seed)
    A = _validate_graph(make_erdos_renyi_graph(40, 0.12, random_state=seed))
    w = rng.randint(1, 6, size=40).astype(float)  # ties happen
    got = K.greedy_weighted(A.indptr, A.indices, w)
    assert got.tolist() == _gwmin_reference(A, w)


# --- the fused pCQO kernel (n x B batch, one SpMM per step) ------------------


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_fused_kernel_matches_array_api_steps(dtype):
    import array_api_compat.numpy as xp

    rng = np.random.RandomState(0)
    A = _validate_graph(make_erdos_renyi_graph(60, 0.1, random_state=0))
    c = rng.uniform(0.5, 2.0, size=60)
    X0 = rng.uniform(size=(5, 60))
    V0 = rng.normal(scale=1e-3, size=(5, 60))
    gamma, gamma_prime, lr, mom = 30.0, 2.0, 2e-3, 0.9
    X, V = X0.copy(), V0.copy()
    for _ in range(7):
        g = K.pcqo_gradient(X, gamma, gamma_prime, c=c[None, :], A=A.toarray(), xp=xp)
        X, V = K.pcqo_step(X, V, g, lr, mom, xp=xp)
    Xf = np.ascontiguousarray(X0.T, dtype=dtype)
    Vf = np.ascontiguousarray(V0.T, dtype=dtype)
    out = K.pcqo_sparse_steps(
        A.indptr, A.indices, c, Xf, Vf, np.empty_like(Xf), 7, gamma, gamma_prime,
        lr, mom,
    )  # fmt: skip
    tol = 1e-12 if dtype is np.float64 else 1e-4
    np.testing.assert_allclose(out.T, X, atol=tol, rtol=tol)
    np.testing.assert_allclose(Vf.T, V, atol=tol, rtol=tol)
    assert out.dtype == dtype


def test_weighted_pcqo_keeps_the_heaviest_checked_set():
    # a star: the centre alone is a maximal set and so are the leaves; with a
    # heavy centre pCQO alone must return it (no local search)
    G = nx.star_graph(6)
    w = np.array([50.0] + [1.0] * 6)
    est = MaximumIndependentSet(random_state=0, local_search=False)
    est.fit(G, node_weight=w)
    assert est.independent_set_.tolist() == [0] and not est.used_fallback_


# --- CHILS (optional) --------------------------------------------------------


def test_chils_solver_gives_a_maximal_set_at_least_greedy():
    pytest.importorskip("chils")
    A = make_erdos_renyi_graph(300, 0.03, random_state=0)
    est = MaximumIndependentSet("chils", time_limit=0.2, random_state=0).fit(A)
    greedy = MaximumIndependentSet("greedy", local_search=False).fit(A)
    assert is_maximal_independent_set(A, est.independent_set_)
    assert est.size_ >= greedy.size_
    assert est.history_[-1][3] == "chils" and est.n_local_search_iter_ == 0


def test_chils_fractional_weights_are_scaled():
    pytest.importorskip("chils")
    G = nx.path_graph(3)
    w = np.array([0.3, 0.5, 0.3])  # the ends win: 0.6 > 0.5
    est = MaximumIndependentSet("chils", time_limit=0.05, random_state=0)
    assert est.fit(G, node_weight=w).independent_set_.tolist() == [0, 2]
    assert est.weight_ == pytest.approx(0.6)


def test_chils_missing_gives_an_install_hint(monkeypatch):
    monkeypatch.setitem(sys.modules, "chils", None)
    with pytest.raises(ImportError, match=r"skalgos\[mis\]"):
        MaximumIndependentSet("chils").fit(nx.path_graph(3))


def test_function_form_with_weights():
    G = nx.path_graph(3)
    nodes = maximum_independent_set(G, node_weight=[1.0, 5.0, 1.0], random_state=0)
    assert nodes.tolist() == [1]
