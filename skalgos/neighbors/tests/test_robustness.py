"""DiverseNearestNeighbors on extreme inputs, bounded parameters, trusted files,
and the automatic search list size."""

import json

import numpy as np
import pytest

from skalgos.metrics import diverse_recall
from skalgos.neighbors import DiverseNearestNeighbors, diverse_kneighbors
from skalgos.neighbors._diverse import _array_checksum

SMALL = dict(max_degree=8, build_list_size=16, search_list_size=24, random_state=0)


def _data(n=400, d=5, n_groups=40, seed=0):
    rng = np.random.RandomState(seed)
    return rng.randn(n, d), rng.randint(0, n_groups, size=n), rng.randn(20, d)


# --------------------------------------------------------------------------- magnitudes


@pytest.mark.parametrize("factor", [1e300, 1e-300, 2.0**70])
@pytest.mark.parametrize("method", ["graph", "brute"])
def test_any_finite_magnitude_answers_like_unit_scale(factor, method):
    X, groups, Q = _data()
    ref = DiverseNearestNeighbors(method=method, **SMALL).fit(X, groups)
    big = DiverseNearestNeighbors(method=method, **SMALL).fit(X * factor, groups)
    d_ref, i_ref = ref.kneighbors(Q)
    d, i = big.kneighbors(Q * factor)
    np.testing.assert_array_equal(i, i_ref)
    assert np.all(np.isfinite(d))
    np.testing.assert_allclose(d / factor, d_ref, rtol=1e-6)
    # self-queries and the exact function too
    np.testing.assert_array_equal(
        big.kneighbors(return_distance=False), ref.kneighbors(return_distance=False)
    )
    _, exact = diverse_kneighbors(X * factor, groups, Q * factor)
    np.testing.assert_array_equal(exact, diverse_kneighbors(X, groups, Q)[1])


@pytest.mark.parametrize("metric", ["sqeuclidean", "inner_product"])
def test_distances_beyond_float64_are_refused(metric):
    X, groups, _ = _data()
    with pytest.raises(ValueError, match="exceed the float64 range"):
        DiverseNearestNeighbors(metric=metric, **SMALL).fit(X * 1e300, groups)
    # cosine ranks the same at any scale
    nn = DiverseNearestNeighbors(metric="cosine", **SMALL).fit(X * 1e300, groups)
    assert np.all(np.isfinite(nn.kneighbors(X[:5] * 1e300)[0]))


def test_queries_far_outside_the_data_are_refused():
    X, groups, _ = _data()
    nn = DiverseNearestNeighbors(**SMALL).fit(X, groups)
    with pytest.raises(ValueError, match="Rescale the queries"):
        nn.kneighbors(X[:3] * 1e300)


# --------------------------------------------------------------------------- parameters


@pytest.mark.parametrize(
    "name", ["build_list_size", "m", "search_list_size", "max_degree", "n_neighbors"]
)
def test_integer_parameters_are_bounded_by_int32(name):
    X, groups, _ = _data(n=200)
    with pytest.raises(ValueError, match=name):
        DiverseNearestNeighbors(**{**SMALL, name: 2**31}).fit(X, groups)


@pytest.mark.parametrize(
    "name", ["build_list_size", "m", "search_list_size", "max_degree"]
)
def test_int32_max_sizes_act_as_the_data_size(name):
    # a queue longer than the data, a degree above n - 1 or an m above the
    # number of groups change nothing, and allocate nothing for 2**31 entries
    X, groups, Q = _data(n=150)
    big = DiverseNearestNeighbors(**{**SMALL, name: 2**31 - 1}).fit(X, groups)
    bounded = {"build_list_size": 150, "m": 41, "search_list_size": 150,
               "max_degree": 149}[name]  # fmt: skip
    ref = DiverseNearestNeighbors(**{**SMALL, name: bounded}).fit(X, groups)
    np.testing.assert_array_equal(
        big.kneighbors(Q, return_distance=False),
        ref.kneighbors(Q, return_distance=False),
    )
    np.testing.assert_array_equal(
        big.kneighbors(Q, search_list_size=2**40, return_distance=False),
        ref.kneighbors(Q, search_list_size=150, return_distance=False),
    )


@pytest.mark.parametrize("alpha", [1e300, np.inf, np.nan, 0.5])
def test_alpha_is_bounded(alpha):
    X, groups, _ = _data(n=100)
    with pytest.raises(ValueError, match="alpha"):
        DiverseNearestNeighbors(alpha=alpha, **SMALL).fit(X, groups)


@pytest.mark.parametrize("target", [0.0, 1.5, np.nan])
def test_target_recall_is_bounded(target):
    X, groups, _ = _data(n=100)
    with pytest.raises(ValueError, match="target_recall"):
        DiverseNearestNeighbors(target_recall=target).fit(X, groups)


# --------------------------------------------------------------------------- files


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    X, groups, Q = _data(n=600, n_groups=60)
    nn = DiverseNearestNeighbors(**SMALL).fit(X, groups)
    path = tmp_path_factory.mktemp("idx") / "index.npz"
    nn.save(path)
    return nn, dict(np.load(path)), Q


def _write(tmp_path, entries, *, fix_checksum):
    entries = dict(entries)
    if fix_checksum:
        entries["checksum"] = np.array(_array_checksum(entries))
    np.savez(tmp_path / "bad.npz", **entries)
    return tmp_path / "bad.npz"


def _no_edges(e):
    e = dict(e)
    e["graph_indptr"] = np.zeros_like(e["graph_indptr"])
    e["graph_indices"] = np.zeros(0, dtype=e["graph_indices"].dtype)
    return e


def _reversed_rows(e):
    return dict(e, fit_X=e["fit_X"][::-1].copy())


@pytest.mark.parametrize("change", [_no_edges, _reversed_rows])
def test_well_formed_but_modified_files_are_refused(saved, tmp_path, change):
    _, entries, _ = saved
    path = _write(tmp_path, change(entries), fix_checksum=False)
    with pytest.raises(ValueError, match="checksum does not match"):
        DiverseNearestNeighbors.load(path)


@pytest.mark.parametrize(
    "change, match",
    [(_no_edges, "unreachable"), (_reversed_rows, "measured diverse recall")],
)
def test_verify_catches_content_that_does_not_fit(saved, tmp_path, change, match):
    # the checksum recomputed (a file written wrong by its own tool): only
    # verify=True can tell
    _, entries, _ = saved
    path = _write(tmp_path, change(entries), fix_checksum=True)
    DiverseNearestNeighbors.load(path)  # well-formed, consistent checksum
    with pytest.raises(ValueError, match=match):
        DiverseNearestNeighbors.load(path, verify=True)


def test_verify_accepts_a_sound_index(saved, tmp_path):
    nn, entries, Q = saved
    loaded = DiverseNearestNeighbors.load(_write(tmp_path, entries, fix_checksum=False),
                                          verify=True)  # fmt: skip
    np.testing.assert_array_equal(loaded.kneighbors(Q)[1], nn.kneighbors(Q)[1])
    assert loaded.search_list_size_ == nn.search_list_size_


def test_version_1_files_load_with_a_warning(saved, tmp_path):
    nn, entries, Q = saved
    old = {
        k: v
        for k, v in entries.items()
        if k not in ("checksum", "search_list_size_fitted")
    }
    params = json.loads(str(old["params"]))
    del params["target_recall"]
    old["params"] = np.array(json.dumps(params))
    old["version"] = np.array(1)
    np.savez(tmp_path / "v1.npz", **old)
    with pytest.warns(UserWarning, match="no checksum"):
        loaded = DiverseNearestNeighbors.load(tmp_path / "v1.npz")
    np.testing.assert_array_equal(loaded.kneighbors(Q)[1], nn.kneighbors(Q)[1])


# --------------------------------------------------------------------------- auto


def test_auto_search_list_reaches_the_target_on_new_queries():
    # 64-d Gaussian data with many groups: hard for a graph, L=10 is far off
    X, groups, _ = _data(n=6_000, d=64, n_groups=1_500, seed=0)
    Q = np.random.RandomState(1).randn(200, 64)
    _, truth = diverse_kneighbors(X, groups, Q)
    nn = DiverseNearestNeighbors(random_state=0).fit(X, groups)
    L = nn.search_list_size_
    steps = [step for step, _ in nn._auto_recalls]
    recalls = [r for _, r in nn._auto_recalls]
    assert steps[0] == 10 and steps[-1] == L and L > 10
    assert recalls[-1] >= 0.96 > max(recalls[:-1])
    assert diverse_recall(nn.kneighbors(Q, return_distance=False), truth) >= 0.95
    fixed = nn.kneighbors(Q, search_list_size=10, return_distance=False)
    assert diverse_recall(fixed, truth) < 0.9
    # a higher target gives a longer list and a higher recall
    hi = DiverseNearestNeighbors(target_recall=0.99, random_state=0).fit(X, groups)
    assert hi.search_list_size_ > L
    assert diverse_recall(hi.kneighbors(Q, return_distance=False), truth) >= 0.98
    # an integer is kept as given
    assert DiverseNearestNeighbors(**SMALL).fit(X, groups).search_list_size_ == 24


def test_inner_product_self_queries_use_the_query_map():
    X, groups, _ = _data(n=1_500, d=8, n_groups=50)
    nn = DiverseNearestNeighbors(
        metric="inner_product", search_list_size=100, random_state=0
    ).fit(X, groups)
    _, truth = diverse_kneighbors(X, groups, None, metric="inner_product")
    assert diverse_recall(nn.kneighbors(return_distance=False), truth) >= 0.99
