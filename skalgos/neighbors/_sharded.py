"""A diverse k-NN index split into shards, built and queried in process or on Dask.

The merge of the shards' answers is exact (see
:class:`ShardedDiverseNearestNeighbors`, Notes): each shard answers with its
own diverse top-k under the same ``(k, k')``, and the greedy filter of the
union of those answers is the diverse top-k of the whole data.
"""

import hashlib
import json
import numbers
import os
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
from sklearn.base import BaseEstimator, _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, InvalidParameterError, StrOptions
from sklearn.utils.validation import check_is_fitted

from ..utils._backend import to_numpy
from ..utils.validation import validate_data
from ._diverse import DiverseNearestNeighbors, _check_group_labels

__all__ = ["ShardedDiverseNearestNeighbors"]

_FORMAT = "skalgos.neighbors.ShardedDiverseNearestNeighbors"
_FORMAT_VERSION = 1
_MANIFEST = "index.npz"
# parameters handed unchanged to every shard's DiverseNearestNeighbors
_SHARD_PARAMS = (
    "n_neighbors",
    "max_per_group",
    "method",
    "build",
    "max_degree",
    "build_list_size",
    "alpha",
    "m",
    "search_list_size",
    "target_recall",
    "metric",
    "n_jobs",
    "verbose",
)
_DASK_HINT = (
    "ShardedDiverseNearestNeighbors(backend='dask') needs Dask's distributed "
    "scheduler: pip install 'skalgos[dask]' (or pip install 'dask[distributed]'), "
    "or use backend='local'."
)


def _require_distributed():
    try:
        import distributed
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(_DASK_HINT) from exc
    return distributed


def _current_client():
    distributed = _require_distributed()
    try:
        return distributed.get_client()
    except ValueError as exc:
        raise ValueError(
            "backend='dask' runs on the current dask.distributed Client, and there "
            "is none: create one first, for example "
            "`from distributed import Client, LocalCluster; "
            "client = Client(LocalCluster(n_workers=2))`."
        ) from exc


# ---------------------------------------------------------------------------
# one shard: an index plus its global ids and global group codes
# ---------------------------------------------------------------------------


class _Shard:
    """A fitted DiverseNearestNeighbors over some rows of the data.

    ``ids[i]`` is the global index of local point ``i`` (ascending, so ties
    broken by local index are broken by global index); the shard was fitted
    with the *global* group codes as labels, so ``gcode[i]`` is the global
    group code of local point ``i``.
    """

    def __init__(self, index, ids):
        self.index = index
        self.ids = np.asarray(ids, dtype=np.int64)
        self.gcode = np.asarray(index._index["labels"], dtype=np.int64)[
            index._index["codes"]
        ]

    @property
    def n(self):
        return self.ids.shape[0]

    def answer(self, Q, k, kp, L, method, self_query):
        """This shard's diverse top-k of each query, in global ids.

        With ``self_query`` the queries are the global data in global order:
        the shard's own points are queried against the shard leaving
        themselves out, the other points as ordinary queries.
        Returns ``(dist, ids, codes)``, each (n_queries, k), padded with
        ``inf`` / ``-1``.
        """
        nq = Q.shape[0]
        D = np.full((nq, k), np.inf)
        I = np.full((nq, k), -1, dtype=np.int64)
        if self_query:
            own = np.zeros(nq, dtype=bool)
            own[self.ids] = True
            rows = [(self.ids, None, min(k, self.n - 1)),
                    (np.flatnonzero(~own), Q[~own], min(k, self.n))]  # fmt: skip
        else:
            rows = [(slice(None), Q, min(k, self.n))]
        for sel, Qs, ks in rows:
            if ks < 1 or (Qs is not None and Qs.shape[0] == 0):
                continue
            d, li = self.index.kneighbors(
                Qs,
                n_neighbors=ks,
                max_per_group=min(kp, ks),
                search_list_size=L,
                method=method,
            )
            d = np.asarray(d, dtype=np.float64)
            gi = np.where(li >= 0, self.ids[np.maximum(li, 0)], -1)
            D[sel, :ks] = np.where(li >= 0, d, np.inf)
            I[sel, :ks] = gi
        C = np.where(I >= 0, self._codes_of(I), -1)
        return D, I, C

    def _codes_of(self, gids):
        local = np.searchsorted(self.ids, np.maximum(gids, 0))
        return self.gcode[np.minimum(local, self.n - 1)]


def _merge(parts, k, kp):
    """Greedy diverse filter of the union of the shards' answers.

    ``parts`` is a list of ``(dist, ids, codes)``. Candidates are ordered by
    distance, ties by global index (the order of the exact single index), and
    each is kept unless its group already holds ``kp``, until ``k`` are kept.
    """
    D = np.concatenate([p[0] for p in parts], axis=1)
    I = np.concatenate([p[1] for p in parts], axis=1)
    C = np.concatenate([p[2] for p in parts], axis=1)
    nq, m = D.shape
    D = np.where(I < 0, np.inf, D)
    order = np.lexsort((I, D), axis=1)
    D = np.take_along_axis(D, order, axis=1)
    I = np.take_along_axis(I, order, axis=1)
    C = np.take_along_axis(C, order, axis=1)
    # rank of each candidate within its group, in distance order
    by_c = np.argsort(C, axis=1, kind="stable")
    Cs = np.take_along_axis(C, by_c, axis=1)
    pos = np.broadcast_to(np.arange(m), (nq, m))
    new_run = np.ones((nq, m), dtype=bool)
    new_run[:, 1:] = Cs[:, 1:] != Cs[:, :-1]
    run_start = np.maximum.accumulate(np.where(new_run, pos, 0), axis=1)
    rank = np.empty((nq, m), dtype=np.int64)
    np.put_along_axis(rank, by_c, pos - run_start, axis=1)
    keep = (rank < kp) & (I >= 0) & np.isfinite(D)
    sel = np.argsort(~keep, axis=1, kind="stable")[:, :k]
    out_i = np.take_along_axis(I, sel, axis=1)
    out_d = np.take_along_axis(D, sel, axis=1)
    kept = np.take_along_axis(keep, sel, axis=1)
    out_i[~kept] = -1
    out_d[~kept] = np.inf
    if out_i.shape[1] < k:
        pad = k - out_i.shape[1]
        out_i = np.hstack([out_i, np.full((nq, pad), -1, dtype=np.int64)])
        out_d = np.hstack([out_d, np.full((nq, pad), np.inf)])
    return out_d, out_i


# ---------------------------------------------------------------------------
# shard files and the worker-side functions
# ---------------------------------------------------------------------------


def _sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _write_shard(shard, directory, s):
    """Save one shard (validated index file + ids); returns the two names."""
    directory = Path(directory)
    name = f"shard_{s:05d}.npz"
    ids_name = f"shard_{s:05d}_ids.npy"
    shard.index.save(directory / name)
    np.save(directory / ids_name, shard.ids, allow_pickle=False)
    return name, ids_name


def _read_shard(directory, name, ids_name, n_total=None, verify=False):
    directory = Path(directory)
    index = DiverseNearestNeighbors.load(directory / name, verify=verify)
    try:
        ids = np.load(directory / ids_name, allow_pickle=False)
    except Exception as exc:
        raise ValueError(
            f"{directory / ids_name}: cannot read shard ids: {exc}"
        ) from exc
    if (
        ids.ndim != 1
        or ids.dtype.kind not in "iu"
        or ids.shape[0] != index.n_samples_fit_
    ):
        raise ValueError(
            f"{directory / ids_name}: shard ids must be a 1-D integer array with one "
            f"entry per indexed point ({index.n_samples_fit_})."
        )
    if ids.size and (
        np.any(np.diff(ids) <= 0) or ids[0] < 0 or (n_total and ids[-1] >= n_total)
    ):
        raise ValueError(
            f"{directory / ids_name}: shard ids must be strictly increasing global "
            "indices inside the data."
        )
    return _Shard(index, ids)


# shards a worker has loaded, keyed by file identity (path, size, mtime)
_WORKER_SHARDS = {}
_WORKER_LOCK = threading.Lock()


def _worker_threads(n_jobs):
    if n_jobs is not None:
        return n_jobs
    try:
        from distributed import get_worker

        w = get_worker()
        return int(getattr(w, "nthreads", None) or w.state.nthreads)
    except Exception:
        return None


def _cached_shard(directory, name, ids_name, n_jobs):
    path = Path(directory) / name
    st = path.stat()
    key = (str(path), st.st_size, st.st_mtime_ns)
    with _WORKER_LOCK:
        shard = _WORKER_SHARDS.get(key)
    if shard is None:
        shard = _read_shard(directory, name, ids_name)
        with _WORKER_LOCK:
            _WORKER_SHARDS[key] = shard
    shard.index.n_jobs = _worker_threads(n_jobs)
    return shard


def _dask_build(X, ids, gcodes, params, directory, s):
    """Worker task: fit one shard, save it under ``directory``."""
    params = dict(params, n_jobs=_worker_threads(params["n_jobs"]))
    index = DiverseNearestNeighbors(**params).fit(X, groups=gcodes)
    shard = _Shard(index, ids)
    name, ids_name = _write_shard(shard, directory, s)
    try:
        from distributed import get_worker

        address = get_worker().address
    except Exception:  # pragma: no cover
        address = None
    return {
        "name": name,
        "ids_name": ids_name,
        "n": shard.n,
        "build_time": index.build_time_,
        "search_list_size": getattr(index, "search_list_size_", None),
        "worker": address,
    }


def _dask_answer(directory, name, ids_name, n_jobs, Q, k, kp, L, method, self_query):
    shard = _cached_shard(directory, name, ids_name, n_jobs)
    t0 = time.perf_counter()
    out = shard.answer(Q, k, kp, L, method, self_query)
    return out, time.perf_counter() - t0


def _dask_fit_X(directory, name, ids_name, n_jobs):
    shard = _cached_shard(directory, name, ids_name, n_jobs)
    return shard.ids, np.asarray(shard.index._fit_X)


# ---------------------------------------------------------------------------
# sharding
# ---------------------------------------------------------------------------


def _random_shards(n, n_shards, rng):
    perm = rng.permutation(n)
    return [np.sort(p) for p in np.array_split(perm, n_shards)]


def _balanced_kmeans_shards(X, n_shards, rng, sample_size=20_000):
    """k-means on a sample, then capacity-bounded nearest-centre assignment.

    Each shard holds at most ``ceil(n / n_shards)`` points: points are
    assigned in order of decreasing preference margin (distance to their
    second centre minus to their first) to the nearest centre with room.
    """
    from sklearn.cluster import KMeans

    n = X.shape[0]
    sample = rng.choice(n, size=min(n, max(sample_size, 32 * n_shards)), replace=False)
    km = KMeans(n_shards, n_init=1, random_state=rng.randint(2**31 - 1))
    km.fit(X[sample])
    C = km.cluster_centers_
    D = (X * X).sum(1)[:, None] - 2.0 * (X @ C.T) + (C * C).sum(1)[None, :]
    pref = np.argsort(D, axis=1)
    sd = np.take_along_axis(D, pref[:, :2], axis=1) if n_shards > 1 else D
    margin = sd[:, -1] - sd[:, 0]
    cap = -(-n // n_shards)
    fill = np.zeros(n_shards, dtype=np.int64)
    assign = np.empty(n, dtype=np.int64)
    for i in np.argsort(-margin, kind="stable"):
        for c in pref[i]:
            if fill[c] < cap:
                assign[i] = c
                fill[c] += 1
                break
    return [np.flatnonzero(assign == s) for s in range(n_shards)]


# ---------------------------------------------------------------------------
# the estimator
# ---------------------------------------------------------------------------


class ShardedDiverseNearestNeighbors(BaseEstimator):
    """Diverse k-NN over a data set split into shards, in process or on Dask.

    The data are split into ``n_shards`` shards (at random, or by balanced
    k-means); each shard is a :class:`DiverseNearestNeighbors` index (the
    DiverseIndex build and DiverseSearch of Anand, Indyk et al., ICML 2025)
    built on its own. A query asks every shard for its diverse top-k with the
    same ``(k, k')`` and merges the answers with the greedy filter. The merge
    is exact (Notes): with exact (``method="brute"``) shards, the answer is
    the global exact diverse top-k, and with graph shards the only loss is
    each shard's own search error.

    Parameters
    ----------
    n_neighbors : int, default=10
        Number of neighbours ``k`` returned by :meth:`kneighbors`.
    max_per_group : int or None, default=1
        At most this many neighbours of one group (``k'``); ``None``: no cap.
    n_shards : int, default=4
        Number of shards (at most the number of samples is used).
    sharding : {"random", "kmeans"}, default="random"
        ``"random"``: a random partition into shards of equal size.
        ``"kmeans"``: balanced k-means (k-means on a sample of 20,000 points,
        then each point to the nearest centre with room, each shard at most
        ``ceil(n / n_shards)`` points). Random was measured at least as good
        (see the user guide), hence the default.
    backend : {"local", "dask"}, default="local"
        ``"local"``: shards are built one after another in this process (each
        build uses ``n_jobs`` threads) and kept in memory. ``"dask"``: every
        shard is built on a worker of the current ``dask.distributed`` Client
        and saved with :meth:`DiverseNearestNeighbors.save` under
        ``shard_dir``; the workers load their shards from there (and keep them
        in memory), answer queries and send back ``k`` candidates per query
        and shard; the client merges.
    shard_dir : str or path-like, default=None
        Directory of the shard files (``backend="dask"``; every worker must be
        able to read it). ``None``: a new temporary directory. With
        ``backend="local"`` the shards are also written there when it is given.
    method, build, max_degree, build_list_size, alpha, m, search_list_size, \
target_recall, metric
        As in :class:`DiverseNearestNeighbors`, for every shard (with
        ``search_list_size="auto"`` each shard chooses its own at fit).
    n_jobs : int, default=None
        Threads per shard build and query (``None``: all cores in process;
        on Dask, the worker's thread count, so workers do not oversubscribe).
    random_state : int, RandomState instance or None, default=None
        The partition and every shard's insertion order.
    verbose : int, default=0
        Print progress when positive.

    Attributes
    ----------
    n_features_in_ : int
        Number of features seen in ``fit``.
    n_samples_fit_ : int
        Number of indexed samples.
    n_shards_ : int
        Number of shards built.
    shard_sizes_ : ndarray of shape (n_shards_,)
        Points per shard.
    group_labels_ : ndarray
        The distinct groups.
    shards_ : list of DiverseNearestNeighbors or None
        The shard indices (``backend="local"``); ``None`` on Dask, where they
        live on the workers.
    shard_dir_ : str or None
        Where the shard files are.
    build_time_ : float
        Wall-clock seconds of the whole fit.

    See Also
    --------
    DiverseNearestNeighbors : The single index.

    Notes
    -----
    **The merge is exact.** Fix a query, order the points by distance (ties
    by index) and let ``G(A)`` be the greedy answer on a set ``A``: scan
    ``A`` in that order, take a point unless ``k`` are taken or ``k'`` of its
    group are. (The feasible answers, at most ``k'`` per group and ``k`` in
    all, are the independent sets of a truncated partition matroid, so
    ``G(A)`` is the optimal answer on ``A``; the single index's brute force
    computes ``G(S)`` on the whole data ``S``.)

    *Claim: for any subset* ``P`` *of* ``S``, ``G(S) ∩ P ⊆ G(P)``. Take
    ``x`` in ``G(S) ∩ P``, of group ``g``, and let ``T`` be the points
    ``G(S)`` took before ``x``, ``A`` those ``G(P)`` took before ``x``.
    Since ``G(S)`` took ``x``, fewer than ``k`` points and fewer than ``k'``
    of group ``g`` were taken before it, so the scan over ``S`` never
    reached ``k`` before ``x``: every point before ``x`` was taken or
    skipped because its group was full. For each group ``h``: if ``h`` was
    not full in ``T``, every point of ``h`` before ``x`` is in ``T``, so
    ``|A ∩ h| <= |T ∩ h|``; if it was full, ``|T ∩ h| = k' >= |A ∩ h|``.
    Hence ``|A ∩ g| <= |T ∩ g| < k'`` and ``|A| <= |T| < k``: the scan over
    ``P`` takes ``x``.

    Applied to each shard ``P_s``, every point of ``G(S)`` is in its own
    shard's answer, so the union ``U`` of the shards' answers contains
    ``G(S)``. Applied to ``U`` (``G(S) ⊆ U ⊆ S``), ``G(S) ⊆ G(U)``. If
    ``|G(S)| = k`` the two are equal, as ``|G(U)| <= k``. Otherwise the scan
    over ``S`` never took ``k`` points, so ``G(S)`` holds ``min(k', |S ∩ h|)``
    points of every group ``h``, which is at least what ``G(U)`` can hold,
    and again ``G(U) = G(S)``: the merge returns exactly the global answer,
    ties included. Each shard only needs its own ``G(P_s)``, which is why it
    is asked with the same ``(k, k')``. The test suite checks this against
    brute force on random data with many groups and on tied data.

    With graph shards each shard's answer is approximate and the merged
    recall is that of the shards at the same ``search_list_size``: a shard
    holds ``n / n_shards`` points, so a search of the same length explores a
    larger share of it, and the merged recall is usually a little higher
    than the single index's at the same setting (measured in
    ``benchmarks/results/diverse_knn_sharded.md``).

    What is ours: the paper builds one index; sharding, the Dask execution
    and the merge are not in it. A query is sent to every shard (no
    routing), which is what keeps the merge exact.

    Examples
    --------
    >>> import numpy as np
    >>> from skalgos.neighbors import ShardedDiverseNearestNeighbors
    >>> rng = np.random.RandomState(0)
    >>> X = rng.rand(200, 3)
    >>> groups = rng.randint(0, 20, size=200)
    >>> nn = ShardedDiverseNearestNeighbors(
    ...     n_neighbors=5, n_shards=3, method="brute", random_state=0
    ... ).fit(X, groups)
    >>> from skalgos.neighbors import diverse_kneighbors
    >>> _, exact = diverse_kneighbors(X, groups, X[:4], n_neighbors=5)
    >>> bool((nn.kneighbors(X[:4], return_distance=False) == exact).all())
    True
    """

    _parameter_constraints = {
        **{
            k: v
            for k, v in DiverseNearestNeighbors._parameter_constraints.items()
            if k in _SHARD_PARAMS
        },
        "n_shards": [Interval(numbers.Integral, 1, 2**20, closed="both")],
        "sharding": [StrOptions({"random", "kmeans"})],
        "backend": [StrOptions({"local", "dask"})],
        "shard_dir": [str, os.PathLike, None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_neighbors=10,
        *,
        max_per_group=1,
        n_shards=4,
        sharding="random",
        backend="local",
        shard_dir=None,
        method="graph",
        build="diverse",
        max_degree=48,
        build_list_size=64,
        alpha=1.2,
        m=2,
        search_list_size="auto",
        target_recall=0.95,
        metric="euclidean",
        n_jobs=None,
        random_state=None,
        verbose=0,
    ):
        self.n_neighbors = n_neighbors
        self.max_per_group = max_per_group
        self.n_shards = n_shards
        self.sharding = sharding
        self.backend = backend
        self.shard_dir = shard_dir
        self.method = method
        self.build = build
        self.max_degree = max_degree
        self.build_list_size = build_list_size
        self.alpha = alpha
        self.m = m
        self.search_list_size = search_list_size
        self.target_recall = target_recall
        self.metric = metric
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.input_tags.allow_nan = False
        return tags

    def _shard_params(self, seed):
        params = {k: getattr(self, k) for k in _SHARD_PARAMS}
        params["random_state"] = int(seed)
        return params

    # -- fit -------------------------------------------------------------------

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, groups=None):
        """Split ``X`` into shards and index each with the groups.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The points to index.
        y : array-like of shape (n_samples,), default=None
            The groups, when ``groups`` is not given.
        groups : array-like of shape (n_samples,), default=None
            The group of each sample; required unless ``max_per_group=None``.

        Returns
        -------
        self : ShardedDiverseNearestNeighbors
            The fitted index.
        """
        if groups is None:
            groups = y
        elif y is not None and not np.array_equal(to_numpy(y), to_numpy(groups)):
            raise ValueError(
                "Pass the groups either as y or as groups=, not two different arrays."
            )
        if groups is None and self.max_per_group is not None:
            raise ValueError(
                "ShardedDiverseNearestNeighbors requires y to be passed, but the "
                "target y is None: give the group of each sample as groups= (or as "
                "y), or set max_per_group=None for plain k-NN without groups."
            )
        if self.backend == "dask":
            client = _current_client()  # fail before any work
        t0 = time.perf_counter()
        X = validate_data(self, X, dtype=[np.float64, np.float32])
        n = X.shape[0]
        if groups is None:
            groups = np.arange(n)
        codes, labels = _check_group_labels(to_numpy(groups), n)
        rng = check_random_state(self.random_state)
        S = min(self.n_shards, n)
        if self.sharding == "kmeans" and S > 1:
            parts = _balanced_kmeans_shards(X, S, rng)
        else:
            parts = _random_shards(n, S, rng)
        seeds = rng.randint(2**31 - 1, size=S)
        self.n_samples_fit_ = n
        self.n_shards_ = S
        self.shard_sizes_ = np.array([p.size for p in parts], dtype=np.int64)
        self.group_labels_ = labels
        self._n_codes = len(labels)
        if self.backend == "local":
            self.shards_ = []
            for s, ids in enumerate(parts):
                index = DiverseNearestNeighbors(**self._shard_params(seeds[s]))
                index.fit(X[ids], groups=codes[ids])
                self.shards_.append(index)
                if self.verbose:
                    print(f"[Sharded] shard {s + 1}/{S}: {ids.size} points")
            self._shards = [_Shard(idx, ids) for idx, ids in zip(self.shards_, parts)]
            self.shard_dir_ = None
            if self.shard_dir is not None:
                Path(self.shard_dir).mkdir(parents=True, exist_ok=True)
                self._files = [
                    _write_shard(sh, self.shard_dir, s)
                    for s, sh in enumerate(self._shards)
                ]
                self.shard_dir_ = str(self.shard_dir)
        else:
            directory = self.shard_dir
            if directory is None:
                directory = tempfile.mkdtemp(prefix="skalgos-shards-")
            Path(directory).mkdir(parents=True, exist_ok=True)
            futures = [
                client.submit(
                    _dask_build,
                    X[ids],
                    ids,
                    codes[ids],
                    self._shard_params(seeds[s]),
                    str(directory),
                    s,
                    pure=False,
                )
                for s, ids in enumerate(parts)
            ]
            info = client.gather(futures)
            self.shards_ = None
            self._shards = None
            self._files = [(d["name"], d["ids_name"]) for d in info]
            self._workers = [d["worker"] for d in info]
            self.shard_dir_ = str(directory)
        self.build_time_ = time.perf_counter() - t0
        return self

    # -- query -----------------------------------------------------------------

    def _answers(self, Q, k, kp, L, method, self_query):
        """Every shard's answer, and the seconds each shard spent."""
        if self._shards is not None:
            out = []
            for sh in self._shards:
                t0 = time.perf_counter()
                out.append((sh.answer(Q, k, kp, L, method, self_query),
                            time.perf_counter() - t0))  # fmt: skip
            return out
        client = _current_client()
        Qf = client.scatter(Q, broadcast=True, hash=False)
        futures = [
            client.submit(
                _dask_answer, self.shard_dir_, name, ids_name, self.n_jobs, Qf,
                k, kp, L, method, self_query, pure=False,
                workers=[w] if w else None, allow_other_workers=True,
            )
            for (name, ids_name), w in zip(self._files, self._workers)
        ]  # fmt: skip
        return client.gather(futures)

    def _global_fit_X(self):
        d = self.n_features_in_
        X = None
        if self._shards is not None:
            pieces = [(sh.ids, np.asarray(sh.index._fit_X)) for sh in self._shards]
        else:
            client = _current_client()
            pieces = client.gather(
                [
                    client.submit(_dask_fit_X, self.shard_dir_, a, b, self.n_jobs)
                    for a, b in self._files
                ]
            )
        for ids, Xs in pieces:
            if X is None:
                X = np.empty((self.n_samples_fit_, d), dtype=Xs.dtype)
            X[ids] = Xs
        return X

    def kneighbors(
        self,
        X=None,
        n_neighbors=None,
        return_distance=True,
        *,
        max_per_group=None,
        search_list_size=None,
        method=None,
    ):
        """Find the diverse k nearest neighbours of each query over all shards.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features), default=None
            The queries; ``None`` queries every indexed point, each leaving
            itself out.
        n_neighbors, max_per_group, search_list_size, method
            As in :meth:`DiverseNearestNeighbors.kneighbors`; every shard is
            asked with these values.
        return_distance : bool, default=True
            Also return the distances.

        Returns
        -------
        distances : ndarray of shape (n_queries, n_neighbors)
            Only with ``return_distance=True``; ascending, ``inf`` for padding.
        indices : ndarray of shape (n_queries, n_neighbors)
            Indices into the fitted data (global), ``-1`` for padding.
        """
        check_is_fitted(self, "n_samples_fit_")
        k = self.n_neighbors if n_neighbors is None else n_neighbors
        kp = max_per_group if max_per_group is not None else self.max_per_group
        L = search_list_size
        if L is None and self.search_list_size != "auto":
            L = self.search_list_size
        # None: each shard's own search_list_size_ (chosen at its fit for "auto")
        method = self.method if method is None else method
        if not isinstance(k, numbers.Integral) or k < 1:
            raise ValueError(f"n_neighbors must be a positive integer; got {k!r}.")
        if kp is not None and (not isinstance(kp, numbers.Integral) or kp < 1):
            raise ValueError(
                f"max_per_group must be a positive integer or None; got {kp!r}."
            )
        if method not in ("graph", "two_stage", "brute"):
            raise ValueError(
                f"method must be 'graph', 'two_stage' or 'brute'; got {method!r}."
            )
        kp = k if kp is None else min(int(kp), k)
        n = self.n_samples_fit_
        if X is None:
            if k > n - 1:
                raise ValueError(
                    f"Expected n_neighbors < n_samples_fit ({n}) when querying the "
                    f"fitted points against themselves; got n_neighbors={k}."
                )
            Q = self._global_fit_X()
            self_query = True
        else:
            Q = validate_data(self, X, reset=False, dtype=[np.float64, np.float32])
            if k > n:
                raise ValueError(
                    f"Expected n_neighbors <= n_samples_fit ({n}); got n_neighbors={k}."
                )
            self_query = False
        answers = self._answers(Q, k, kp, L, method, self_query)
        t0 = time.perf_counter()
        dist, ind = _merge([a for a, _ in answers], k, kp)
        self._last_query_stats = {
            "shard_seconds": [t for _, t in answers],
            "merge_seconds": time.perf_counter() - t0,
        }
        return (dist, ind) if return_distance else ind

    def score(self, X, y=None):
        """Mean diverse recall@k against the exact answer over all shards.

        The exact answer is the merge of the shards' brute-force answers,
        which equals the global brute-force answer (Notes).

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)
            The queries.
        y : None
            Ignored.

        Returns
        -------
        score : float
            Diverse recall@k in ``[0, 1]``.
        """
        from ..metrics import diverse_recall

        check_is_fitted(self, "n_samples_fit_")
        if X is None:
            raise ValueError("score needs queries X; got None.")
        ind = self.kneighbors(X, return_distance=False)
        truth = self.kneighbors(X, return_distance=False, method="brute")
        return float(diverse_recall(ind, truth))

    # -- persistence -------------------------------------------------------------

    def __getstate__(self):
        state = self.__dict__.copy()
        state.pop("_last_query_stats", None)
        return state

    def save(self, path):
        """Write the index to the directory ``path``.

        The directory holds ``index.npz`` (format, version, parameters, group
        labels, shard sizes, the SHA-256 of every shard file) and, per shard,
        ``shard_NNNNN.npz`` (:meth:`DiverseNearestNeighbors.save`, with its
        own checksum) and ``shard_NNNNN_ids.npy`` (the global index of each
        of its points). A Dask index copies its shard files from
        ``shard_dir_``.

        Parameters
        ----------
        path : str or path-like
            Destination directory (created if missing).
        """
        import shutil

        check_is_fitted(self, "n_samples_fit_")
        labels = np.asarray(self.group_labels_)
        if labels.dtype.kind == "O":
            raise TypeError(
                "save() stores group labels without pickle; these labels have "
                "object dtype. Use integer or string labels, or pickle."
            )
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        if self._shards is not None:
            files = [_write_shard(sh, path, s) for s, sh in enumerate(self._shards)]
        else:
            files = self._files
            if Path(self.shard_dir_).resolve() != path.resolve():
                for a, b in files:
                    shutil.copyfile(Path(self.shard_dir_) / a, path / a)
                    shutil.copyfile(Path(self.shard_dir_) / b, path / b)
        params = self.get_params()
        params["shard_dir"] = (
            None if params["shard_dir"] is None else str(params["shard_dir"])
        )
        if not isinstance(params["random_state"], (numbers.Integral, type(None))):
            params["random_state"] = None
        digests = [[_sha256(path / a), _sha256(path / b)] for a, b in files]
        extra = {}
        if hasattr(self, "feature_names_in_"):
            extra["feature_names_in"] = np.asarray(self.feature_names_in_, dtype=str)
        np.savez(
            path / _MANIFEST,
            format=np.array(_FORMAT),
            version=np.array(_FORMAT_VERSION),
            params=np.array(json.dumps(params)),
            group_labels=labels,
            shard_files=np.array(files, dtype=str).reshape(-1, 2),
            shard_sha256=np.array(digests, dtype=str).reshape(-1, 2),
            shard_sizes=self.shard_sizes_,
            n_features=np.array(self.n_features_in_),
            **extra,
        )

    @classmethod
    def load(cls, path, *, verify=False):
        """Read an index written by :meth:`save`, checking every file.

        The manifest is validated (format, version, parameters), each shard
        file's SHA-256 is compared with the manifest, each shard is read with
        :meth:`DiverseNearestNeighbors.load` (which validates it), and the
        shards' ids must partition ``0..n_samples-1``. The loaded index runs
        in process (``backend="local"``).

        Parameters
        ----------
        path : str or path-like
            A directory written by :meth:`save`.
        verify : bool, default=False
            Also run each shard's ``load(..., verify=True)`` checks
            (reachability and a sample of queries against brute force).

        Returns
        -------
        index : ShardedDiverseNearestNeighbors
            The fitted index, with ``backend="local"``.

        Raises
        ------
        ValueError
            If any file is missing, modified or inconsistent.
        """
        path = Path(path)
        try:
            with np.load(path / _MANIFEST, allow_pickle=False) as f:
                m = {key: f[key] for key in f.files}
        except Exception as exc:
            raise ValueError(
                f"{path} is not a saved ShardedDiverseNearestNeighbors index: {exc}"
            ) from exc

        def fail(msg):
            raise ValueError(f"{path}: {msg}; the index is corrupted.")

        for key in ("format", "version", "params", "group_labels", "shard_files",
                    "shard_sha256", "shard_sizes", "n_features"):  # fmt: skip
            if key not in m:
                fail(f"entry {key!r} is missing from {_MANIFEST}")
        if str(m["format"]) != _FORMAT:
            raise ValueError(f"{path} holds {str(m['format'])!r}, not a {_FORMAT}.")
        if int(m["version"]) != _FORMAT_VERSION:
            raise ValueError(
                f"{path} has format version {int(m['version'])}; this skalgos reads "
                f"version {_FORMAT_VERSION}."
            )
        try:
            params = json.loads(str(m["params"]))
        except json.JSONDecodeError as exc:
            fail(f"'params' is not valid JSON ({exc})")
        if not isinstance(params, dict) or set(params) != set(cls().get_params()):
            fail("'params' must hold exactly the estimator's parameters")
        params["backend"] = "local"
        params["shard_dir"] = None
        est = cls(**params)
        try:
            est._validate_params()
        except InvalidParameterError as exc:
            fail(f"'params' are invalid: {exc}")
        files, digests, sizes = m["shard_files"], m["shard_sha256"], m["shard_sizes"]
        if files.ndim != 2 or files.shape[1] != 2 or digests.shape != files.shape:
            fail("'shard_files' and 'shard_sha256' must be (n_shards, 2)")
        if sizes.shape != (files.shape[0],) or files.shape[0] < 1:
            fail("'shard_sizes' must hold one size per shard")
        n = int(sizes.sum())
        labels = m["group_labels"]
        shards = []
        for (a, b), (da, db) in zip(files, digests):
            a, b = str(a), str(b)
            if Path(a).name != a or Path(b).name != b:
                fail(f"shard file names must be plain names, got {a!r}, {b!r}")
            for name, digest in ((a, da), (b, db)):
                if not (path / name).exists():
                    fail(f"shard file {name} is missing")
                if _sha256(path / name) != str(digest):
                    fail(f"shard file {name} does not match its SHA-256 checksum")
            shards.append(_read_shard(path, a, b, n_total=n, verify=verify))
        counts = np.zeros(n, dtype=np.int64)
        for sh, size in zip(shards, sizes):
            if sh.n != size:
                fail("a shard holds another number of points than 'shard_sizes'")
            if sh.index.n_features_in_ != int(m["n_features"]):
                fail("a shard has another number of features")
            if sh.gcode.size and (sh.gcode.min() < 0 or sh.gcode.max() >= labels.size):
                fail("a shard's group codes lie outside 'group_labels'")
            counts[sh.ids] += 1
        if np.any(counts != 1):
            fail("the shards' ids do not partition the samples")
        est.n_features_in_ = int(m["n_features"])
        if "feature_names_in" in m:
            est.feature_names_in_ = m["feature_names_in"].astype(object)
        est.n_samples_fit_ = n
        est.n_shards_ = len(shards)
        est.shard_sizes_ = sizes.astype(np.int64)
        est.group_labels_ = labels
        est._n_codes = labels.size
        est.shards_ = [sh.index for sh in shards]
        est._shards = shards
        est.shard_dir_ = None
        est.build_time_ = float(sum(sh.index.build_time_ for sh in shards))
        return est
