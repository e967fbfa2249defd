"""ShardedDiverseNearestNeighbors: exact merge, same API, Dask execution."""

import pickle

import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV

from skalgos.metrics import diverse_recall
from skalgos.neighbors import (
    DiverseNearestNeighbors,
    ShardedDiverseNearestNeighbors,
    diverse_kneighbors,
)
from skalgos.neighbors._sharded import _merge

SMALL = dict(max_degree=12, build_list_size=24, search_list_size=40, random_state=0)


def _data(n=1_500, d=6, n_groups=300, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d)
    groups = rng.randint(0, n_groups, size=n)
    return X, groups, rng.randn(60, d)


@pytest.mark.parametrize("sharding", ["random", "kmeans"])
@pytest.mark.parametrize("n_shards", [1, 3, 8])
@pytest.mark.parametrize("k, kprime", [(10, 1), (10, 2), (5, 5)])
def test_merge_of_exact_shards_is_the_global_exact_answer(
    sharding, n_shards, k, kprime
):
    X, groups, Q = _data()
    sh = ShardedDiverseNearestNeighbors(
        n_neighbors=k, max_per_group=kprime, n_shards=n_shards, sharding=sharding,
        method="brute", random_state=1,
    ).fit(X, groups)  # fmt: skip
    d_ref, i_ref = diverse_kneighbors(X, groups, Q, n_neighbors=k, max_per_group=kprime)
    d, i = sh.kneighbors(Q)
    np.testing.assert_array_equal(i, i_ref)
    np.testing.assert_allclose(d, d_ref, rtol=1e-12)
    # self-queries leave each point out, across shards
    _, i_self_ref = diverse_kneighbors(
        X, groups, None, n_neighbors=k, max_per_group=kprime
    )
    np.testing.assert_array_equal(sh.kneighbors(return_distance=False), i_self_ref)


def test_merge_is_exact_with_ties_and_few_groups():
    # integer grid: many exactly tied distances; ties go to the smaller index
    rng = np.random.RandomState(3)
    X = rng.randint(0, 4, size=(400, 2)).astype(float)
    groups = rng.randint(0, 7, size=400)
    Q = rng.randint(0, 4, size=(40, 2)).astype(float)
    for kprime in (1, 2, 3):
        sh = ShardedDiverseNearestNeighbors(
            n_neighbors=12, max_per_group=kprime, n_shards=5, method="brute",
            random_state=0,
        ).fit(X, groups)  # fmt: skip
        _, ref = diverse_kneighbors(X, groups, Q, n_neighbors=12, max_per_group=kprime)
        # with 7 groups and k' = 1 only 7 can be reported: padded like the single index
        np.testing.assert_array_equal(sh.kneighbors(Q, return_distance=False), ref)


def test_merge_kernel_on_hand_made_candidates():
    # two shards; group 0 holds the three nearest candidates overall
    D = [np.array([[0.1, 0.2, 0.5]]), np.array([[0.15, 0.3, np.inf]])]
    Ind = [np.array([[1, 4, 7]]), np.array([[2, 9, -1]])]
    C = [np.array([[0, 0, 1]]), np.array([[0, 2, -1]])]
    d, i = _merge(list(zip(D, Ind, C)), k=3, kp=1)
    np.testing.assert_array_equal(i, [[1, 9, 7]])
    np.testing.assert_allclose(d, [[0.1, 0.3, 0.5]])
    d, i = _merge(list(zip(D, Ind, C)), k=4, kp=2)
    np.testing.assert_array_equal(i, [[1, 2, 9, 7]])


def test_graph_shards_recall_matches_the_single_index():
    X, groups, Q = _data(n=3_000, d=8, n_groups=600)
    _, truth = diverse_kneighbors(X, groups, Q)
    single = DiverseNearestNeighbors(**SMALL).fit(X, groups)
    r_single = diverse_recall(single.kneighbors(Q, return_distance=False), truth)
    sh = ShardedDiverseNearestNeighbors(n_shards=4, **SMALL).fit(X, groups)
    r_sharded = diverse_recall(sh.kneighbors(Q, return_distance=False), truth)
    assert r_single >= 0.9
    assert r_sharded >= r_single - 0.02
    assert sh.score(Q) == pytest.approx(r_sharded)
    assert sh.shard_sizes_.sum() == 3_000 and sh.n_shards_ == 4
    assert sh.shard_sizes_.max() - sh.shard_sizes_.min() <= 1


def test_balanced_kmeans_shards_are_balanced_and_compact():
    from sklearn.datasets import make_blobs

    X, _ = make_blobs(2_000, n_features=4, centers=4, cluster_std=0.5, random_state=0)
    groups = np.arange(2_000) % 97
    sh = ShardedDiverseNearestNeighbors(
        n_shards=4, sharding="kmeans", method="brute", random_state=0
    ).fit(X, groups)
    assert sh.shard_sizes_.max() <= 500
    # well-separated blobs: each shard is one blob, so its spread is the blob's
    spread = [np.asarray(s._fit_X).std(axis=0).mean() for s in sh.shards_]
    assert max(spread) < 1.0


def test_api_pickle_save_load_and_gridsearch(tmp_path):
    X, groups, Q = _data(n=800, n_groups=150)
    labels = np.array([f"doc{g}" for g in groups])
    sh = ShardedDiverseNearestNeighbors(n_shards=3, **SMALL).fit(X, labels)
    ref = sh.kneighbors(Q)
    for other in (pickle.loads(pickle.dumps(sh)),):
        for a, b in zip(ref, other.kneighbors(Q)):
            np.testing.assert_array_equal(a, b)
    sh.save(tmp_path / "idx")
    loaded = ShardedDiverseNearestNeighbors.load(tmp_path / "idx", verify=True)
    for a, b in zip(ref, loaded.kneighbors(Q)):
        np.testing.assert_array_equal(a, b)
    assert loaded.get_params() == sh.get_params()
    np.testing.assert_array_equal(loaded.group_labels_, sh.group_labels_)
    # a modified shard file is refused by its checksum
    shard = tmp_path / "idx" / "shard_00001_ids.npy"
    ids = np.load(shard)
    np.save(shard, ids[::-1].copy())
    with pytest.raises(ValueError, match="checksum"):
        ShardedDiverseNearestNeighbors.load(tmp_path / "idx")
    search = GridSearchCV(
        ShardedDiverseNearestNeighbors(n_shards=2, **SMALL),
        {"search_list_size": [10, 60]},
        cv=2,
    ).fit(X, groups)
    assert search.best_params_ == {"search_list_size": 60}


def test_bad_parameters_are_named():
    X, groups, _ = _data(n=100)
    with pytest.raises(ValueError, match="n_shards"):
        ShardedDiverseNearestNeighbors(n_shards=0).fit(X, groups)
    with pytest.raises(ValueError, match="backend"):
        ShardedDiverseNearestNeighbors(backend="ray").fit(X, groups)
    with pytest.raises(ValueError, match="groups"):
        ShardedDiverseNearestNeighbors().fit(X)


def test_dask_backend_without_a_client_says_so():
    pytest.importorskip("distributed", reason="dask.distributed is not installed")
    import distributed

    try:
        distributed.get_client()
        pytest.skip("a Dask client is active in this process")
    except ValueError:
        pass
    X, groups, _ = _data(n=100)
    with pytest.raises(ValueError, match="Client"):
        ShardedDiverseNearestNeighbors(backend="dask").fit(X, groups)


def test_dask_backend_without_dask_names_the_extra(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "distributed", None)  # import fails
    X, groups, _ = _data(n=100)
    with pytest.raises(ImportError, match=r"skalgos\[dask\]"):
        ShardedDiverseNearestNeighbors(backend="dask").fit(X, groups)
    # the local backend needs no Dask
    ShardedDiverseNearestNeighbors(n_shards=2, method="brute").fit(X, groups)


# --------------------------------------------------------------------------- dask


@pytest.fixture(scope="module")
def dask_client():
    distributed = pytest.importorskip(
        "distributed", reason="Dask's distributed scheduler is not installed "
        "(pip install 'dask[distributed]'): the Dask backend is not tested"
    )  # fmt: skip
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
    )
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()


def test_dask_backend_answers_like_the_local_one(dask_client, tmp_path):
    X, groups, Q = _data(n=1_200, n_groups=200)
    params = dict(n_shards=4, n_jobs=1, **SMALL)
    local = ShardedDiverseNearestNeighbors(**params).fit(X, groups)
    remote = ShardedDiverseNearestNeighbors(
        backend="dask", shard_dir=tmp_path / "shards", **params
    ).fit(X, groups)
    assert remote.shards_ is None
    assert len(list((tmp_path / "shards").glob("shard_*.npz"))) == 4
    for a, b in zip(local.kneighbors(Q), remote.kneighbors(Q)):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(
        local.kneighbors(return_distance=False),
        remote.kneighbors(return_distance=False),
    )
    # exact shards on the workers: the global exact answer
    _, ref = diverse_kneighbors(X, groups, Q)
    np.testing.assert_array_equal(remote.kneighbors(Q, method="brute")[1], ref)
    # saved from the workers' files, loaded in process
    remote.save(tmp_path / "saved")
    loaded = ShardedDiverseNearestNeighbors.load(tmp_path / "saved")
    np.testing.assert_array_equal(
        loaded.kneighbors(Q, return_distance=False),
        remote.kneighbors(Q, return_distance=False),
    )
    r = pickle.loads(pickle.dumps(remote))
    np.testing.assert_array_equal(r.kneighbors(Q)[1], remote.kneighbors(Q)[1])


def test_gridsearch_under_the_dask_joblib_backend(dask_client):
    import joblib

    X, groups, _ = _data(n=600, n_groups=120)
    with joblib.parallel_backend("dask"):
        search = GridSearchCV(
            ShardedDiverseNearestNeighbors(n_shards=2, n_jobs=1, **SMALL),
            {"search_list_size": [10, 60]},
            cv=2,
            n_jobs=2,
        ).fit(X, groups)
    assert search.best_params_ == {"search_list_size": 60}
