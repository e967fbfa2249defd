"""Tests of MaximumIndependentSet, the helpers, the kernels and the generators."""

import itertools
import warnings

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning

from skalgos.datasets import (
    make_erdos_renyi_graph,
    make_gnm_graph,
    make_planted_independent_set,
    make_sat_independent_set,
)
from skalgos.graph import (
    PCQO_PRESETS,
    MaximumIndependentSet,
    is_independent_set,
    is_maximal_independent_set,
    maximum_independent_set,
)
from skalgos.graph._kernels import (
    check_masks,
    check_masks_dense,
    greedy_min_degree,
    pcqo_gradient,
    pcqo_objective,
    pcqo_step,
)

# small, fast pCQO settings for tests: the official SATLIB setting with fewer
# initializations and steps (the ER setting needs hundreds of steps per check
# on graphs this small)
FAST = dict(PCQO_PRESETS["satlib"], batch_size=16, max_iter=300)
# the paper's method alone, without the local search polish
PCQO_ONLY = dict(FAST, local_search=False)
# pCQO alone at the default (auto) step size and penalty, shorter
SMALL = dict(batch_size=16, restart_interval=30, max_iter=300, local_search=False)


# --- oracles written independently of the package ---------------------------


def _is_independent(edges, S):
    S = set(S)
    return not any(u in S and v in S for u, v in edges)


def _is_maximal(n, edges, S):
    S = set(S)
    if not _is_independent(edges, S):
        return False
    nbrs = {i: set() for i in range(n)}
    for u, v in edges:
        nbrs[u].add(v)
        nbrs[v].add(u)
    return all(i in S or nbrs[i] & S for i in range(n))


def _alpha_brute_force(n, edges):
    """Independence number by enumerating all 2^n subsets (n <= 16)."""
    if n == 0:
        return 0
    codes = np.arange(2**n, dtype=np.int64)
    bits = ((codes[:, None] >> np.arange(n)) & 1).astype(bool)
    ok = np.ones(codes.size, dtype=bool)
    for u, v in edges:
        ok &= ~(bits[:, u] & bits[:, v])
    return int(bits[ok].sum(axis=1).max())


def _edges(A):
    A = sp.coo_array(sp.triu(sp.csr_array(A), k=1))
    return list(zip(A.row.tolist(), A.col.tolist()))


@st.composite
def random_graphs(draw, max_nodes=12):
    n = draw(st.integers(min_value=0, max_value=max_nodes))
    pairs = list(itertools.combinations(range(n), 2))
    chosen = draw(st.lists(st.booleans(), min_size=len(pairs), max_size=len(pairs)))
    A = np.zeros((n, n))
    for (u, v), c in zip(pairs, chosen):
        if c:
            A[u, v] = A[v, u] = 1.0
    return A


# --- the result is always a maximal independent set -------------------------


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(A=random_graphs(), solver=st.sampled_from(["pcqo", "greedy", "milp"]))
def test_result_is_maximal_independent_set(A, solver):
    n = A.shape[0]
    est = MaximumIndependentSet(solver, random_state=0, **FAST).fit(A)
    edges = _edges(A)
    assert _is_maximal(n, edges, est.independent_set_.tolist())
    assert est.size_ == len(est.independent_set_) == int(est.mask_.sum())
    assert np.all(np.diff(est.independent_set_) > 0)


@settings(max_examples=30, deadline=None)
@given(
    A=random_graphs(max_nodes=10),
    learning_rate=st.sampled_from([1e-9, 1e-5, 1e-2]),
    gamma=st.sampled_from([0.5, 10.0, 350.0]),
)
def test_pcqo_maximal_whatever_the_parameters(A, learning_rate, gamma):
    # badly tuned or far too few steps: the greedy rounding fallback still
    # returns a maximal independent set
    est = MaximumIndependentSet(
        batch_size=4,
        max_iter=3,
        restart_interval=1,
        learning_rate=learning_rate,
        gamma=gamma,
        local_search=False,
        random_state=1,
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        est.fit(A)
    assert _is_maximal(A.shape[0], _edges(A), est.independent_set_.tolist())
    assert est.history_[-1][1] == est.size_
    # a fallback is never silent
    fallback_warnings = [w for w in caught if w.category is ConvergenceWarning]
    assert est.used_fallback_ == bool(fallback_warnings)


# --- exactness ---------------------------------------------------------------


def test_graph_atlas_exact():
    """pCQO equals the independence number on every graph of up to 7 nodes."""
    wrong = []
    for G in nx.graph_atlas_g():
        n = G.number_of_nodes()
        edges = list(G.edges)
        alpha = _alpha_brute_force(n, edges)
        est = MaximumIndependentSet(random_state=0, **PCQO_ONLY).fit(G)
        if est.size_ != alpha or not _is_maximal(n, edges, est.independent_set_):
            wrong.append((n, edges, est.size_, alpha))
    assert not wrong, wrong[:5]


@pytest.mark.parametrize(
    "G, alpha",
    [
        (nx.cycle_graph(9), 4),
        (nx.cycle_graph(12), 6),
        (nx.path_graph(7), 4),
        (nx.path_graph(10), 5),
        (nx.complete_bipartite_graph(3, 5), 5),
        (nx.complete_bipartite_graph(6, 6), 6),
        (nx.petersen_graph(), 4),
        (nx.complete_graph(8), 1),
        (nx.empty_graph(6), 6),
        (nx.hypercube_graph(4), 8),
    ],
    ids=["C9", "C12", "P7", "P10", "K3,5", "K6,6", "petersen", "K8", "E6", "Q4"],
)
@pytest.mark.parametrize("solver", ["pcqo", "greedy", "milp"])
@pytest.mark.parametrize("local_search", [True, False], ids=["ls", "no-ls"])
def test_known_independence_numbers(G, alpha, solver, local_search):
    params = FAST if solver == "pcqo" else {}
    est = MaximumIndependentSet(
        solver, random_state=0, local_search=local_search, **params
    ).fit(G)
    assert est.size_ == alpha
    if solver == "milp":
        assert est.optimal_ and est.upper_bound_ == alpha


@pytest.mark.parametrize("seed", range(12))
def test_milp_matches_brute_force(seed):
    rng = np.random.RandomState(seed)
    n = int(rng.randint(8, 17))
    A = make_erdos_renyi_graph(n, float(rng.uniform(0.1, 0.6)), random_state=seed)
    est = MaximumIndependentSet("milp").fit(A)
    assert est.optimal_
    assert est.size_ == _alpha_brute_force(n, _edges(A))
    assert _is_maximal(n, _edges(A), est.independent_set_)


def test_milp_on_planted_sat_graph():
    A, alpha = make_sat_independent_set(12, 40, random_state=0)
    est = MaximumIndependentSet("milp").fit(A)
    assert est.optimal_ and est.size_ == alpha


def test_defaults_on_planted_sat_graph():
    A, alpha = make_sat_independent_set(12, 40, random_state=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est = MaximumIndependentSet(random_state=0).fit(A)
        alone = MaximumIndependentSet(random_state=0, local_search=False).fit(A)
    assert est.size_ == alpha
    assert not alone.used_fallback_ and alone.n_maximal_found_ > 0
    assert alone.size_ <= alpha


def test_satlib_preset_falls_back_loudly_on_a_small_sat_graph():
    # the official SATLIB setting finds no maximal set in 600 steps here: the
    # greedy rounding is used, and it says so
    A, _ = make_sat_independent_set(12, 40, random_state=1)
    est = MaximumIndependentSet(
        **{**PCQO_PRESETS["satlib"], "max_iter": 600, "batch_size": 32},
        local_search=False,
        random_state=0,
    )
    with pytest.warns(ConvergenceWarning, match="no maximal independent set"):
        est.fit(A)
    assert est.used_fallback_
    assert is_maximal_independent_set(A, est.independent_set_)


def test_pcqo_finds_small_er_optimum():
    A = make_erdos_renyi_graph(40, 0.15, random_state=3)
    opt = MaximumIndependentSet("milp").fit(A).size_
    est = MaximumIndependentSet(
        **{**PCQO_PRESETS["er"], "batch_size": 32, "max_iter": 1800},
        local_search=False,
        random_state=0,
    ).fit(A)
    assert est.size_ == opt


def test_greedy_is_optimal_on_forests():
    # a vertex of degree <= 1 is in some maximum independent set of a forest,
    # so the min-degree greedy is exact there
    for seed in range(10):
        T = nx.random_labeled_tree(30, seed=seed)
        T.remove_edges_from(list(T.edges)[::7])  # a forest
        alpha = MaximumIndependentSet("milp").fit(T).size_
        greedy = MaximumIndependentSet("greedy", local_search=False).fit(T)
        assert greedy.size_ == alpha


def test_milp_time_limit_reports_no_proof():
    A = make_erdos_renyi_graph(150, 0.15, random_state=0)
    est = MaximumIndependentSet("milp", time_limit=1e-3).fit(A)
    assert not est.optimal_
    assert is_maximal_independent_set(A, est.independent_set_)
    assert not est.upper_bound_ < est.size_  # NaN or a valid bound


# --- the pCQO pieces ---------------------------------------------------------


def _dense_W(A, gamma, gamma_prime):
    n = A.shape[0]
    Abar = 1.0 - np.eye(n) - A
    return gamma * A - gamma_prime * Abar


def test_gradient_matches_finite_differences():
    import array_api_compat.numpy as xp

    rng = np.random.RandomState(0)
    A = make_erdos_renyi_graph(15, 0.3, random_state=0).toarray()
    X = rng.uniform(size=(3, 15))
    g = pcqo_gradient(X, 5.0, 2.0, A=A, xp=xp)
    eps = 1e-6
    fd = np.empty_like(X)
    for i in range(15):
        E = np.zeros_like(X)
        E[:, i] = eps
        fd[:, i] = (
            pcqo_objective(X + E, A, 5.0, 2.0, xp=xp)
            - pcqo_objective(X - E, A, 5.0, 2.0, xp=xp)
        ) / (2 * eps)
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-6)


def test_implicit_complement_equals_dense():
    import array_api_compat.numpy as xp

    rng = np.random.RandomState(1)
    A = make_erdos_renyi_graph(30, 0.2, random_state=1)
    X = rng.uniform(size=(5, 30))
    dense = pcqo_gradient(X, 350.0, 7.0, W=_dense_W(A.toarray(), 350.0, 7.0), xp=xp)
    implicit = pcqo_gradient(X, 350.0, 7.0, A=A.toarray(), xp=xp)
    sparse = pcqo_gradient(X, 350.0, 7.0, A_sparse=A, xp=xp)
    np.testing.assert_allclose(implicit, dense, rtol=1e-10, atol=1e-9)
    np.testing.assert_allclose(sparse, dense, rtol=1e-10, atol=1e-9)
    a = MaximumIndependentSet(complement="dense", dtype="float64", random_state=0)
    b = MaximumIndependentSet(complement="implicit", dtype="float64", random_state=0)
    a.set_params(**PCQO_ONLY)
    b.set_params(**PCQO_ONLY)
    np.testing.assert_array_equal(a.fit(A).mask_, b.fit(A).mask_)
    assert [h[:2] for h in a.history_] == [h[:2] for h in b.history_]
    assert (a.complement_, b.complement_) == ("dense", "implicit")


def test_pcqo_update_in_namespace(array_namespace):
    ns = array_namespace
    xp = ns.xp
    rng = np.random.RandomState(0)
    A = make_erdos_renyi_graph(20, 0.25, random_state=0).toarray()
    X = rng.uniform(size=(4, 20))
    V = rng.normal(size=(4, 20)) * 1e-3
    W = _dense_W(A, 50.0, 3.0)

    import array_api_compat.numpy as npx

    g_ref = pcqo_gradient(X, 50.0, 3.0, W=W, xp=npx)
    X_ref, V_ref = pcqo_step(X, V, g_ref, 1e-3, 0.9, xp=npx)
    for kwargs in ({"W": ns.asarray(W)}, {"A": ns.asarray(A)}):
        g = pcqo_gradient(ns.asarray(X), 50.0, 3.0, xp=xp, **kwargs)
        Xn, Vn = pcqo_step(ns.asarray(X), ns.asarray(V), g, 1e-3, 0.9, xp=xp)
        np.testing.assert_allclose(ns.to_numpy(g), g_ref, rtol=1e-10, atol=1e-9)
        np.testing.assert_allclose(ns.to_numpy(Xn), X_ref, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(ns.to_numpy(Vn), V_ref, rtol=1e-10, atol=1e-12)
    M = (rng.uniform(size=(50, 20)) < 0.2).astype(float)
    ind, mx = check_masks_dense(ns.asarray(M), ns.asarray(A), xp=xp)
    Asp = sp.csr_array(A)
    ind_ref, mx_ref = check_masks(
        Asp.indptr.astype(np.int64), Asp.indices.astype(np.int64), M
    )
    np.testing.assert_array_equal(ns.to_numpy(ind), ind_ref)
    np.testing.assert_array_equal(ns.to_numpy(mx), mx_ref)


def test_fit_in_namespace_matches_numpy(array_namespace):
    ns = array_namespace
    A = make_erdos_renyi_graph(25, 0.2, random_state=2).toarray()
    params = dict(PCQO_ONLY, dtype="float64", random_state=0)
    ref = MaximumIndependentSet(**params).fit(A)
    with ns.dispatch():
        est = MaximumIndependentSet(**params).fit(ns.asarray(A))
    np.testing.assert_array_equal(ns.to_numpy(est.mask_), ref.mask_)
    assert ns.to_numpy(est.independent_set_).dtype == np.int64
    assert [h[:2] for h in est.history_] == [h[:2] for h in ref.history_]


@settings(max_examples=40, deadline=None)
@given(A=random_graphs(max_nodes=10), data=st.data())
def test_fixed_point_iff_maximal(A, data):
    """The paper's MIS check: a 0/1 point is a fixed point of the projected
    gradient step iff it is a maximal independent set, when
    gamma > 1 + gamma' (|S| - 1)."""
    import array_api_compat.numpy as xp

    n = A.shape[0]
    if n == 0:
        return
    bits = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    x = np.asarray(bits, dtype=float)[None, :]
    gamma_prime = 1.0
    gamma = 1.5 + gamma_prime * n  # above the bound for every |S| <= n
    g = pcqo_gradient(x, gamma, gamma_prime, A=A, xp=xp)
    fixed = bool(np.array_equal(np.clip(x - 0.1 * g, 0, 1), x))
    S = np.flatnonzero(x[0]).tolist()
    assert fixed == _is_maximal(n, _edges(A), S)


def test_check_masks_and_greedy_kernels():
    rng = np.random.RandomState(0)
    for seed in range(5):
        A = make_erdos_renyi_graph(30, 0.15, random_state=seed)
        edges = _edges(A)
        M = (rng.uniform(size=(40, 30)) < 0.3).astype(np.uint8)
        ind, mx = check_masks(A.indptr.astype(np.int64), A.indices.astype(np.int64), M)
        for b in range(40):
            S = np.flatnonzero(M[b]).tolist()
            assert ind[b] == _is_independent(edges, S)
            assert mx[b] == _is_maximal(30, edges, S)
        S = greedy_min_degree(A.indptr.astype(np.int64), A.indices.astype(np.int64))
        assert _is_maximal(30, edges, S.tolist())
        # the first pick has minimum degree
        assert np.diff(A.indptr).min() in np.diff(A.indptr)[S]


# --- estimator behaviour -----------------------------------------------------


def test_deterministic_history_and_attributes():
    A = make_erdos_renyi_graph(40, 0.2, random_state=0)
    a = MaximumIndependentSet(random_state=7, **SMALL).fit(A)
    b = MaximumIndependentSet(random_state=7, **SMALL).fit(A)
    np.testing.assert_array_equal(a.independent_set_, b.independent_set_)
    steps = [h[0] for h in a.history_]
    sizes = [h[1] for h in a.history_]
    assert steps == list(range(30, 301, 30)) and a.n_iter_ == 300
    assert sizes == sorted(sizes) and sizes[-1] == a.size_
    assert {h[3] for h in a.history_} == {"pcqo"}
    assert a.n_features_in_ == 40 and a.complement_ == "dense"
    # with the local search (the default), the result is deterministic too
    c = MaximumIndependentSet(random_state=7, **{**SMALL, "local_search": True})
    d = MaximumIndependentSet(random_state=7, **{**SMALL, "local_search": True})
    c.fit(A)
    d.fit(A)
    np.testing.assert_array_equal(c.independent_set_, d.independent_set_)
    assert c.n_local_search_iter_ == d.n_local_search_iter_ == 2000
    assert [h[3] for h in c.history_][-1] == "local_search"
    assert c.size_ >= a.size_


def test_time_limit_stops_pcqo():
    A = make_erdos_renyi_graph(60, 0.2, random_state=0)
    est = MaximumIndependentSet(
        max_iter=10**7,
        restart_interval=50,
        batch_size=8,
        local_search_iter=10**9,
        time_limit=0.2,
    ).fit(A)
    assert est.n_iter_ < 10**7 and est.n_local_search_iter_ < 10**9
    assert is_maximal_independent_set(A, est.independent_set_)


def test_restart_variants_and_warm_start():
    A = make_erdos_renyi_graph(40, 0.2, random_state=4)
    opt = MaximumIndependentSet("milp").fit(A).size_
    for kw in (
        dict(restart="best"),
        dict(restart="init", reset_velocity=True),
        dict(init="degree_normalized"),
        dict(init=np.full(40, 0.5)),
        dict(gamma_prime=0.0),
    ):
        est = MaximumIndependentSet(random_state=0, **{**SMALL, **kw}).fit(A)
        assert not est.used_fallback_
        assert is_maximal_independent_set(A, est.independent_set_)
        assert est.size_ <= opt


def test_input_formats_agree():
    G = nx.petersen_graph()
    A = nx.to_numpy_array(G)
    sizes = {
        MaximumIndependentSet("greedy", local_search=False).fit(x).size_
        for x in (G, A, sp.csr_array(A), sp.coo_matrix(A), A.tolist(), 2.5 * A)
    }
    assert sizes == {4}


def test_empty_graph_returns_empty_set():
    for G in (np.zeros((0, 0)), sp.csr_array((0, 0)), nx.Graph()):
        for solver in ("pcqo", "greedy", "milp"):
            est = MaximumIndependentSet(solver).fit(G)
            assert est.size_ == 0 and est.independent_set_.shape == (0,)
    assert maximum_independent_set(nx.Graph()).size == 0


@pytest.mark.parametrize(
    "G, match",
    [
        (np.zeros((3, 4)), "square"),
        (np.array([[0, 1, 0], [0, 0, 1], [0, 1, 0]]), "symmetric"),
        (np.array([[1, 1], [1, 0]]), "self loops"),
        (np.array([[0, -1], [-1, 0]]), "Negative values"),
        (np.array([[0, np.nan], [np.nan, 0]]), "NaN"),
        (np.zeros(3), "2D array"),
        (nx.DiGraph([(0, 1)]), "undirected"),
    ],
    ids=["non-square", "asymmetric", "self-loop", "negative", "nan", "1d", "directed"],
)
def test_bad_input(G, match):
    with pytest.raises(ValueError, match=match):
        MaximumIndependentSet("greedy").fit(G)
    with pytest.raises(ValueError, match=match):
        is_independent_set(G, [0])


def test_ignore_diagonal_and_bad_params():
    A = nx.to_numpy_array(nx.cycle_graph(6)) + np.eye(6)
    assert MaximumIndependentSet("milp", ignore_diagonal=True).fit(A).size_ == 3
    with pytest.raises(ValueError, match="solver"):
        MaximumIndependentSet("exact").fit(nx.path_graph(3))
    with pytest.raises(ValueError, match="init"):
        MaximumIndependentSet(init=np.ones(4)).fit(nx.path_graph(3))


def test_helpers():
    G = nx.cycle_graph(6)
    assert is_independent_set(G, [0, 2, 4]) and is_maximal_independent_set(G, [0, 3])
    assert not is_maximal_independent_set(G, [0])
    assert is_independent_set(G, np.array([1, 0, 0, 1, 0, 0], dtype=bool))
    assert is_independent_set(G, [])
    with pytest.raises(ValueError, match="node indices"):
        is_independent_set(G, [6])
    with pytest.raises(ValueError, match="one entry per node"):
        is_independent_set(G, np.ones(3, dtype=bool))
    with pytest.raises(TypeError, match="integers"):
        is_independent_set(G, [0.5])


# --- generators --------------------------------------------------------------


def _check_simple_graph(A, n):
    assert A.shape == (n, n)
    assert (A != A.T).nnz == 0
    assert np.all(A.diagonal() == 0) and np.all(A.data == 1)


def test_erdos_renyi_density_and_determinism():
    A = make_erdos_renyi_graph(2000, 0.01, random_state=0)
    _check_simple_graph(A, 2000)
    m, pairs = A.nnz // 2, 2000 * 1999 / 2
    assert abs(m - 0.01 * pairs) < 5 * np.sqrt(0.01 * pairs)
    B = make_erdos_renyi_graph(2000, 0.01, random_state=0)
    assert (A != B).nnz == 0
    assert make_erdos_renyi_graph(5, 1.0).nnz == 20
    assert make_erdos_renyi_graph(5, 0.0).nnz == 0
    # every pair has the same chance: the edge counts per pair are uniform
    counts = sum(
        make_erdos_renyi_graph(6, 0.5, random_state=s).toarray() for s in range(400)
    )
    off = counts[~np.eye(6, dtype=bool)]
    assert np.all(np.abs(off - 200) < 5 * 10)


def test_gnm_and_planted():
    A = make_gnm_graph(50, random_state=0)
    _check_simple_graph(A, 50)
    assert A.nnz // 2 == int(np.ceil(50 * 49 / 4))
    with pytest.raises(ValueError, match="exceeds"):
        make_gnm_graph(4, 7)
    A, planted = make_planted_independent_set(300, 60, 0.2, random_state=0)
    _check_simple_graph(A, 300)
    assert planted.size == 60 and is_maximal_independent_set(A, planted)
    assert not np.array_equal(planted, np.arange(60))
    # the planted set is the maximum here (proven by the MILP)
    A, planted = make_planted_independent_set(60, 20, 0.3, random_state=1)
    est = MaximumIndependentSet("milp").fit(A)
    assert est.optimal_ and est.size_ == 20


def test_sat_graph_structure():
    A, alpha = make_sat_independent_set(10, 30, random_state=0)
    _check_simple_graph(A, 90)
    Ad = A.toarray()
    for c in range(30):  # one triangle per clause
        assert Ad[3 * c, 3 * c + 1] == Ad[3 * c, 3 * c + 2] == Ad[3 * c + 1, 3 * c + 2]
    assert alpha == 30
    assert (
        _alpha_brute_force(9, _edges(make_sat_independent_set(3, 3, random_state=0)[0]))
        == 3
    )
    with pytest.raises(ValueError, match="n_variables"):
        make_sat_independent_set(2, 3)


def test_verbose_and_threads(capsys):
    A = make_erdos_renyi_graph(30, 0.2, random_state=0)
    a = MaximumIndependentSet(verbose=1, n_jobs=-1, random_state=0, **PCQO_ONLY)
    a.fit(A)
    out = capsys.readouterr().out
    assert out.count("[pCQO] step") == len(a.history_) == 10
    b = MaximumIndependentSet(n_jobs=1, random_state=0, **PCQO_ONLY).fit(A)
    np.testing.assert_array_equal(a.mask_, b.mask_)
    # the fused sparse kernel too (threads do not change the arithmetic)
    c = MaximumIndependentSet(complement="implicit", n_jobs=-1, random_state=0)
    d = MaximumIndependentSet(complement="implicit", n_jobs=1, random_state=0)
    c.set_params(**PCQO_ONLY)
    d.set_params(**PCQO_ONLY)
    np.testing.assert_array_equal(c.fit(A).mask_, d.fit(A).mask_)


def test_dataframe_with_a_string_column_is_a_clear_type_error():
    # issue 39: a string column surfaced as numpy's "'<=' not supported"
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"a": [0.0, 1.0, 0.0], "b": ["x", "y", "z"], "c": [1.0, 0, 1]})
    with pytest.raises(TypeError, match=r"X must be a numeric adjacency.*\['b'\]"):
        MaximumIndependentSet().fit(df)
    path = pd.DataFrame(np.array([[0, 1, 0], [1, 0, 1], [0, 1, 0]]))
    est = MaximumIndependentSet(solver="milp").fit(path)
    assert est.n_features_in_ == 3
