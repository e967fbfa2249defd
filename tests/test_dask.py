"""Scaling out with Dask (issue 36, part 5).

- ``partial_fit_chunks`` streams Dask arrays / DataFrames into the
  incremental estimators chunk by chunk, and the result is exactly that of
  ``partial_fit`` called by hand on the same chunks in the same order.
- ``GridSearchCV`` under ``joblib.parallel_config(backend="dask")`` on a
  ``distributed.LocalCluster`` runs for one estimator of every family and
  finds the same ``best_params_`` / ``cv_results_`` as the sequential search.

The cluster has 2 worker processes of 1 thread each, and every worker starts
with ``NUMBA_NUM_THREADS`` equal to its thread count (Dask's nanny sets
``OMP_NUM_THREADS`` and the BLAS variables to 1 itself, not Numba's), so
workers do not oversubscribe the cores. Processes rather than threads: Numba's
thread count is per process (and ``numba.set_num_threads`` per calling
thread), which an environment variable read at the worker's start fixes for
every task; the cluster starts in ~4 s.

The Dask tests skip where the ``dask`` extra is not installed; the checks
that need no Dask (estimators without ``partial_fit``, NumPy and iterable
chunks) always run.
"""

import subprocess
import sys

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_diabetes
from sklearn.linear_model import Ridge, RidgeCV
from sklearn.model_selection import GridSearchCV, train_test_split

from skalgos.federated import FederatedClassifier, FederatedRegressor
from skalgos.online import (
    BOLD,
    ClippedVAWRegressor,
    DelayedFTRLRegressor,
    DelayedOGDClassifier,
    DelayedOGDRegressor,
    DelayedOnlineNewtonStepRegressor,
)
from skalgos.utils import all_estimators, partial_fit_chunks

DASK_REASON = "needs the dask extra: pip install 'skalgos[dask]'"
THREADS_PER_WORKER = 1


def _dask_array():
    pytest.importorskip("dask", reason=DASK_REASON)
    return pytest.importorskip("dask.array", reason=DASK_REASON)


def _dask_dataframe():
    pytest.importorskip("dask", reason=DASK_REASON)
    pytest.importorskip(
        "pyarrow", reason="dask.dataframe needs pyarrow; " + DASK_REASON
    )
    return pytest.importorskip("dask.dataframe", reason=DASK_REASON)


def _by_hand(est, chunks, n_passes=1, classes=None):
    """``partial_fit`` on each ``(X, y[, sw])`` chunk in order."""
    for p in range(n_passes):
        for i, (Xc, yc, *sw) in enumerate(chunks):
            kw = {"sample_weight": sw[0]} if sw else {}
            if classes is not None and p == 0 and i == 0:
                kw["classes"] = classes
            est.partial_fit(Xc, yc, **kw)
    return est


def _regression(n=1200, d=5, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, d))
    y = X @ rng.normal(size=d) + 0.1 * rng.normal(size=n)
    return X / 3.0, y / np.abs(y).max()


# ---------------------------------------------------------------------------
# partial_fit_chunks
# ---------------------------------------------------------------------------

STREAMED = [
    DelayedFTRLRegressor(random_state=0),
    DelayedOGDRegressor(random_state=0),
    DelayedOnlineNewtonStepRegressor(random_state=0),
    ClippedVAWRegressor(),
    BOLD(random_state=0),
    FederatedRegressor(n_clients=2, local_steps=10, random_state=0),
]


@pytest.mark.parametrize("est", STREAMED, ids=lambda e: type(e).__name__)
def test_dask_array_chunks_equal_partial_fit_by_hand(est):
    da = _dask_array()
    X, y = _regression()
    sw = np.random.RandomState(1).uniform(0.5, 2.0, size=len(y))
    # 12 row blocks, X also split along its columns, y and the weights
    # chunked differently: the helper aligns them with X's row blocks
    Xd = da.from_array(X, chunks=(100, 2))
    yd = da.from_array(y, chunks=150)
    swd = da.from_array(sw, chunks=250)
    assert Xd.numblocks == (12, 3)
    got = partial_fit_chunks(clone(est), Xd, yd, sample_weight=swd, n_passes=2)
    chunks = [
        (X[s : s + 100], y[s : s + 100], sw[s : s + 100]) for s in range(0, 1200, 100)
    ]
    ref = _by_hand(clone(est), chunks, n_passes=2)
    np.testing.assert_array_equal(got.predict(X), ref.predict(X))
    if hasattr(ref, "coef_"):
        np.testing.assert_array_equal(got.coef_, ref.coef_)
    # the stream was learned: better than predicting the mean
    assert got.score(X, y) > 0.5


def test_chunks_are_computed_one_at_a_time():
    # X is built from 10 lazy blocks that log when they are materialised:
    # each is computed once per pass, in order, never the whole array at once
    da = _dask_array()
    import dask

    X, y = _regression(n=500)
    log = []

    def load(i):
        log.append(i)
        return X[50 * i : 50 * (i + 1)]

    blocks = [
        da.from_delayed(dask.delayed(load)(i), shape=(50, X.shape[1]), dtype=X.dtype)
        for i in range(10)
    ]
    Xd = da.concatenate(blocks)
    est = partial_fit_chunks(
        DelayedOGDRegressor(random_state=0), Xd, da.from_array(y, chunks=50), n_passes=2
    )
    assert log == list(range(10)) * 2
    ref = _by_hand(
        DelayedOGDRegressor(random_state=0),
        [(X[s : s + 50], y[s : s + 50]) for s in range(0, 500, 50)],
        n_passes=2,
    )
    np.testing.assert_array_equal(est.coef_, ref.coef_)


def test_diabetes_streamed_in_chunks_reaches_ridge():
    # a real data set streamed in 12 chunks, 3 passes: the held-out R^2 is
    # that of partial_fit by hand, and within 0.02 of RidgeCV's
    da = _dask_array()
    X, y = load_diabetes(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, random_state=0)
    Xd = da.from_array(Xtr, chunks=(30, -1))
    assert Xd.numblocks[0] >= 10
    est = partial_fit_chunks(
        ClippedVAWRegressor(), Xd, da.from_array(ytr, chunks=30), n_passes=3
    )
    chunks = [(Xtr[s : s + 30], ytr[s : s + 30]) for s in range(0, len(ytr), 30)]
    ref = _by_hand(ClippedVAWRegressor(), chunks, n_passes=3)
    r2 = est.score(Xte, yte)
    assert r2 == ref.score(Xte, yte)
    ridge = RidgeCV().fit(Xtr, ytr).score(Xte, yte)
    assert r2 > ridge - 0.02, (r2, ridge)


def test_dask_dataframe_partitions():
    dd = _dask_dataframe()
    frame = load_diabetes(as_frame=True).frame
    ddf = dd.from_pandas(frame, npartitions=10)
    assert ddf.npartitions == 10
    features = frame.drop(columns=["target"])
    parts = [ddf.partitions[i].compute() for i in range(10)]
    chunks = [(p.drop(columns=["target"]), p["target"]) for p in parts]
    ref = _by_hand(ClippedVAWRegressor(), chunks, n_passes=2)

    # the target as a column name, and as a Dask Series with X's partitions
    by_name = partial_fit_chunks(ClippedVAWRegressor(), ddf, "target", n_passes=2)
    by_series = partial_fit_chunks(
        ClippedVAWRegressor(),
        ddf.drop(columns=["target"]),
        ddf["target"],
        n_passes=2,
    )
    for est in (by_name, by_series):
        np.testing.assert_array_equal(est.coef_, ref.coef_)
        assert list(est.feature_names_in_) == list(features.columns)
        assert est.score(features, frame["target"]) > 0.4


def test_classifier_classes_from_a_dask_target():
    # sorted labels: the first chunk holds one class only, so the classes
    # must reach the first partial_fit (computed from the Dask y here)
    da = _dask_array()
    rng = np.random.RandomState(0)
    y = np.repeat([0, 1], 300)
    X = rng.normal(size=(600, 3)) + y[:, None]
    est = partial_fit_chunks(
        DelayedOGDClassifier(random_state=0),
        da.from_array(X, chunks=(60, -1)),
        da.from_array(y, chunks=60),
    )
    np.testing.assert_array_equal(est.classes_, [0, 1])
    chunks = [(X[s : s + 60], y[s : s + 60]) for s in range(0, 600, 60)]
    ref = _by_hand(DelayedOGDClassifier(random_state=0), chunks, classes=[0, 1])
    np.testing.assert_array_equal(est.predict(X), ref.predict(X))
    # the federated classifier: one round per chunk, classes on the first
    fed = FederatedClassifier(n_clients=2, local_steps=3, random_state=0)
    got = partial_fit_chunks(
        clone(fed), da.from_array(X, chunks=(60, -1)), da.from_array(y, chunks=60)
    )
    ref = _by_hand(clone(fed), chunks, classes=np.array([0, 1]))
    np.testing.assert_array_equal(got.predict(X), ref.predict(X))


def test_numpy_and_iterable_chunks():
    # no Dask needed: an in-memory array is cut in chunk_size rows, an
    # iterable gives its chunks
    X, y = _regression(n=1000)
    chunks = [(X[s : s + 100], y[s : s + 100]) for s in range(0, 1000, 100)]
    ref = _by_hand(DelayedFTRLRegressor(random_state=0), chunks, n_passes=2)
    a = partial_fit_chunks(
        DelayedFTRLRegressor(random_state=0), X, y, chunk_size=100, n_passes=2
    )
    b = partial_fit_chunks(DelayedFTRLRegressor(random_state=0), chunks, n_passes=2)
    np.testing.assert_array_equal(a.coef_, ref.coef_)
    np.testing.assert_array_equal(b.coef_, ref.coef_)
    with pytest.raises(ValueError, match="iterator"):
        partial_fit_chunks(DelayedFTRLRegressor(), iter(chunks), n_passes=2)
    with pytest.raises(ValueError, match="classes is required"):
        partial_fit_chunks(DelayedOGDClassifier(), [(X, y > 0)])
    with pytest.raises(ValueError, match="one entry per row"):
        partial_fit_chunks(DelayedFTRLRegressor(), X, y[:-1])


def test_estimator_without_partial_fit_is_a_clear_error():
    X, y = _regression(n=100)
    with pytest.raises(TypeError, match="Ridge has none"):
        partial_fit_chunks(Ridge(), X, y)
    with pytest.raises(TypeError, match="instance"):
        partial_fit_chunks(DelayedFTRLRegressor, X, y)


def test_dask_array_y_length_mismatch():
    da = _dask_array()
    X, y = _regression(n=300)
    with pytest.raises(ValueError, match="one entry per row"):
        partial_fit_chunks(
            DelayedFTRLRegressor(),
            da.from_array(X, chunks=(50, -1)),
            da.from_array(y[:-10], chunks=50),
        )
    with pytest.raises(ValueError, match="chunk_size"):
        partial_fit_chunks(
            DelayedFTRLRegressor(), da.from_array(X, chunks=50), y, chunk_size=10
        )


def test_import_skalgos_does_not_import_dask():
    code = (
        "import sys, skalgos, skalgos.utils, skalgos.online, skalgos.federated, "
        "skalgos.neighbors\n"
        "from skalgos.utils import partial_fit_chunks\n"
        "bad = [m for m in ('dask', 'distributed') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# ---------------------------------------------------------------------------
# GridSearchCV under the joblib Dask backend
# ---------------------------------------------------------------------------

# one estimator per family; its tiny data, grid, scoring and cv come from the
# common checks' specs (skalgos/utils/_test_common/instance_generator.py)
FAMILY_PICKS = {
    "completion": "OCMCRegressor",
    "kernel_ridge": "InvariantKernelRidge",
    "transport": "PWKMeans",
    "tree": "BDDClassifier",
    "cluster": "DynamicCorrelationClustering",
    "neighbors": "DiverseNearestNeighbors",
    "graph": "MaximumIndependentSet",
    "online": "DelayedFTRLRegressor",
    "federated": "FederatedClassifier",
    "metrics": "RepresentationalCompositionality",
    "torch": "TorchClassifier",
}


@pytest.fixture(scope="module")
def client():
    dask = pytest.importorskip("dask", reason=DASK_REASON)
    distributed = pytest.importorskip("distributed", reason=DASK_REASON)
    # Numba reads NUMBA_NUM_THREADS when it is first imported: set in the
    # environment the nanny gives a worker process before it starts
    env = {"distributed.nanny.pre-spawn-environ.NUMBA_NUM_THREADS": THREADS_PER_WORKER}
    with dask.config.set(env):
        cluster = distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=THREADS_PER_WORKER,
            processes=True,
            dashboard_address=None,
        )
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()


def _worker_threads():
    import numba

    from skalgos.utils._backend import effective_n_threads

    return numba.get_num_threads(), effective_n_threads(None)


def test_workers_numba_threads(client):
    # in every worker process (Client.run) and in a task's executor thread
    got = client.run(_worker_threads)
    assert len(got) == 2
    assert set(got.values()) == {(THREADS_PER_WORKER, THREADS_PER_WORKER)}
    task = client.submit(_worker_threads, pure=False).result()
    assert task == (THREADS_PER_WORKER, THREADS_PER_WORKER)


def test_every_family_has_a_pick():
    families = {cls.__module__.split(".")[1] for _, cls in all_estimators()}
    assert families <= set(FAMILY_PICKS), families - set(FAMILY_PICKS)


def _search(name, n_jobs):
    from skalgos.utils._test_common.instance_generator import (
        _construct_instances,
        get_data,
        get_spec,
    )
    from skalgos.utils.estimator_checks import _with_seed

    cls = dict(all_estimators())[name]
    est = _with_seed(next(_construct_instances(cls)))
    spec = get_spec(cls)
    X, y, fit_params = get_data(est)
    grid = spec.get("grid") or {"random_state": [0, 1]}
    assert sum(len(v) for v in grid.values()) == 2  # a 2-point grid
    search = GridSearchCV(
        est,
        grid,
        cv=spec.get("cv", 2),
        scoring=spec.get("scoring"),
        error_score="raise",
        n_jobs=n_jobs,
    )
    return search.fit(X, **fit_params) if y is None else search.fit(X, y, **fit_params)


@pytest.mark.parametrize("family", sorted(FAMILY_PICKS))
def test_grid_search_dask_backend_matches_sequential(family, client):
    import joblib

    if family == "torch":
        pytest.importorskip("torch", reason="the torch family needs the torch extra")
    name = FAMILY_PICKS[family]
    sequential = _search(name, n_jobs=None)
    with joblib.parallel_config(backend="dask"):
        distributed = _search(name, n_jobs=-1)
    assert distributed.best_params_ == sequential.best_params_
    a, b = distributed.cv_results_, sequential.cv_results_
    assert set(a) == set(b)
    assert a["params"] == b["params"]
    for key in b:
        if key == "params" or key.endswith("_time"):
            continue
        np.testing.assert_array_equal(np.asarray(a[key]), np.asarray(b[key]), key)
