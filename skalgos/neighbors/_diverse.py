"""Diverse k-nearest-neighbour search on a graph index (Anand, Indyk et al., 2025)."""

import hashlib
import json
import math
import numbers
import threading
import time
from pathlib import Path

import numpy as np
from sklearn.base import BaseEstimator, _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, InvalidParameterError, StrOptions
from sklearn.utils.validation import check_is_fitted

from ..utils._backend import (
    device,
    effective_n_threads,
    get_namespace,
    is_numpy_namespace,
    numba_threads,
    to_device,
    to_numpy,
)
from ..utils.validation import check_groups, validate_data

__all__ = ["DiverseNearestNeighbors", "diverse_kneighbors"]

_FORMAT = "skalgos.neighbors.DiverseNearestNeighbors"
# version 2 adds the "checksum" entry (SHA-256 of every other array); version
# 1 files (no checksum) are still read, with a warning
_FORMAT_VERSION = 2
_INT32_MAX = 2**31 - 1
# a power-of-two rescaling of the data applies when its largest magnitude
# leaves [2**-60, 2**60]: outside, float32 squared distances of the graph
# overflow or underflow (X * 1e300 made every distance inf)
_SCALE_RANGE = (2.0**-60, 2.0**60)
# the sample of verify=True: self-queries answered by the graph and by brute
# force; a sound index answers them far above this recall (a file with its
# rows reversed gave 0.20, one without edges 0.35)
_VERIFY_QUERIES = 64
_VERIFY_MIN_RECALL = 0.8
_METRICS = ("euclidean", "sqeuclidean", "cosine", "inner_product")
# distance-block size (entries) of the brute-force paths
_BLOCK = 1 << 22
# fewer rows than this run on one thread (waking the pool costs more)
_PARALLEL_MIN = 128
# guards the hand-over of the visited-stamp scratch arrays between threads
_SCRATCH_LOCK = threading.Lock()


def _kernels():
    from . import _kernels

    return _kernels


# ---------------------------------------------------------------------------
# metric helpers
# ---------------------------------------------------------------------------


def _unit_rows(X, xp):
    norms = xp.sqrt(xp.sum(X * X, axis=1))
    norms = xp.where(norms > 0, norms, xp.ones_like(norms))
    return X / norms[:, None]


def _block_distances(Q, X, metric, xp):
    """Ranking distances between the rows of ``Q`` and ``X`` (namespace ``xp``).

    Squared Euclidean for the Euclidean metrics, ``1 - cos`` for cosine and
    ``-<q, x>`` for the inner product; all are computed from one matrix product.
    """
    if metric == "cosine":
        Q, X = _unit_rows(Q, xp), _unit_rows(X, xp)
        return 1.0 - Q @ xp.matrix_transpose(X)
    if metric == "inner_product":
        return -(Q @ xp.matrix_transpose(X))
    qq = xp.sum(Q * Q, axis=1)
    xx = xp.sum(X * X, axis=1)
    D = qq[:, None] - 2.0 * (Q @ xp.matrix_transpose(X)) + xx[None, :]
    return xp.where(D > 0, D, xp.zeros_like(D))


def _final_distances(Q, X, idx, metric, xp):
    """Exact distance of each query to its reported points; inf for padding.

    ``idx`` is a NumPy int array (nq, k) with -1 for padding.
    """
    nq, k = idx.shape
    safe = np.where(idx < 0, 0, idx).reshape(-1)
    safe_x = to_device(safe, device(X), xp=xp) if not is_numpy_namespace(xp) else safe
    P = xp.take(X, safe_x, axis=0)
    P = xp.reshape(P, (nq, k, X.shape[1]))
    if metric == "cosine":
        P = xp.reshape(_unit_rows(xp.reshape(P, (nq * k, X.shape[1])), xp), P.shape)
        D = 1.0 - xp.sum(P * _unit_rows(Q, xp)[:, None, :], axis=2)
    elif metric == "inner_product":
        D = -xp.sum(P * Q[:, None, :], axis=2)
    else:
        diff = P - Q[:, None, :]
        D = xp.sum(diff * diff, axis=2)
        if metric == "euclidean":
            D = xp.sqrt(D)
    pad = idx < 0
    if pad.any():
        pad_x = pad if is_numpy_namespace(xp) else to_device(pad, device(X), xp=xp)
        D = xp.where(pad_x, xp.full_like(D, math.inf), D)
    return D


def _graph_space(X, metric, max_norm=None):
    """Map NumPy rows to the float32 space where the graph uses squared L2.

    Cosine: unit rows. Inner product: the usual reduction of maximum inner
    product search to L2 search, ``x -> [x, sqrt(M^2 - |x|^2)]`` for data and
    ``q -> [q, 0]`` for queries (``max_norm`` given), which orders the data by
    decreasing ``<q, x>``.
    """
    X = np.asarray(X, dtype=np.float64)
    if metric == "cosine":
        norms = np.linalg.norm(X, axis=1)
        X = X / np.where(norms > 0, norms, 1.0)[:, None]
    elif metric == "inner_product":
        sq = np.einsum("ij,ij->i", X, X)
        if max_norm is None:  # data
            M2 = sq.max() if sq.size else 0.0
            extra = np.sqrt(np.maximum(M2 - sq, 0.0))
        else:  # queries
            extra = np.zeros(X.shape[0])
        X = np.hstack([X, extra[:, None]])
    return np.ascontiguousarray(X, dtype=np.float32)


def _pow2_scale(max_abs):
    """A power of two ``s`` with ``max_abs * s`` in ``[0.5, 1)``, or 1.0.

    1.0 when ``max_abs`` is zero or inside ``_SCALE_RANGE``. Multiplying by a
    power of two is exact in floating point (short of overflow and
    underflow), and every metric here ranks the same after scaling data and
    queries by one positive factor, so the scaled index answers exactly as
    the unscaled one would in exact arithmetic.
    """
    max_abs = float(max_abs)
    if max_abs == 0.0 or _SCALE_RANGE[0] <= max_abs <= _SCALE_RANGE[1]:
        return 1.0
    return float(2.0 ** (-np.frexp(max_abs)[1]))


def _array_checksum(entries):
    """SHA-256 of every entry (name, dtype, shape and bytes) but "checksum"."""
    h = hashlib.sha256()
    for key in sorted(entries):
        if key == "checksum":
            continue
        a = np.ascontiguousarray(entries[key])
        h.update(key.encode())
        h.update(a.dtype.str.encode())
        h.update(repr(a.shape).encode())
        if a.dtype.kind == "U":
            h.update(a.astype(a.dtype.newbyteorder("<")).tobytes())
        else:
            h.update(a.tobytes())
    return "sha256:" + h.hexdigest()


def _tie_aware_recall(ind, dist, true_ind, true_dist, rtol=1e-6):
    """Diverse recall that counts a point tied in distance with a missed one.

    With ties (points at the same distance), the graph may return another
    of the tied points than brute force, which breaks ties by index; such a
    point is as good an answer, so it is matched to a missed true point at
    the same distance (relative tolerance ``rtol``).
    """
    scores = np.empty(ind.shape[0])
    for r in range(ind.shape[0]):
        t = true_ind[r] >= 0
        truth = dict(zip(true_ind[r][t].tolist(), true_dist[r][t].tolist()))
        if not truth:
            scores[r] = 1.0
            continue
        got = {int(i): float(d) for i, d in zip(ind[r], dist[r]) if i >= 0}
        hit = sum(1 for i in got if i in truth)
        missed = sorted(d for i, d in truth.items() if i not in got)
        extra = sorted(d for i, d in got.items() if i not in truth)
        a = b = 0
        while a < len(missed) and b < len(extra):
            tol = rtol * max(abs(missed[a]), abs(extra[b]), 1e-300)
            if abs(missed[a] - extra[b]) <= tol:
                hit += 1
                a += 1
                b += 1
            elif missed[a] < extra[b]:
                a += 1
            else:
                b += 1
        scores[r] = hit / len(truth)
    return float(scores.mean())


def _spread_seeds(data, entry, n_seeds):
    """``entry`` and then farthest-first points: ``n_seeds`` entry points.

    Greedy k-center traversal (Gonzalez): each new seed is the point
    farthest from the seeds so far, so every well-separated cluster holds
    one once ``n_seeds`` exceeds the number of clusters. Deterministic.
    """
    n = data.shape[0]
    n_seeds = max(1, min(int(n_seeds), n))
    seeds = np.empty(n_seeds, dtype=np.int64)
    seeds[0] = entry
    d = ((data - data[entry]) ** 2).sum(axis=1, dtype=np.float64)
    for t in range(1, n_seeds):
        seeds[t] = int(np.argmax(d))
        np.minimum(
            d, ((data - data[seeds[t]]) ** 2).sum(axis=1, dtype=np.float64), out=d
        )
    return seeds


def _check_group_labels(groups, n):
    """Refuse missing groups (None, NaN, pandas NA) and unorderable label mixes.

    A missing group is an error rather than a group of its own: silently
    merging every unlabelled sample into one group (or treating each as
    unique) changes the answers, so the user decides.
    """
    arr = np.asarray(groups)
    if arr.ndim == 1 and arr.shape[0] == n:
        if arr.dtype.kind == "f":
            missing = np.flatnonzero(~np.isfinite(arr))
        elif arr.dtype.kind == "O":
            missing = np.flatnonzero([_is_missing(g) for g in arr])
        else:
            missing = np.zeros(0, dtype=np.int64)
        if missing.size:
            raise ValueError(
                f"groups contains {missing.size} missing value(s) (None or NaN), "
                f"first at sample {missing[0]}. Every sample needs a group: give "
                "the unlabelled samples a label of their own (for example "
                "'missing', or one unique label each) or drop them before fit."
            )
    try:
        return check_groups(arr, n)
    except TypeError as exc:
        types = sorted({type(g).__name__ for g in arr.ravel()})
        raise TypeError(
            f"groups mixes label types that cannot be sorted ({', '.join(types)}); "
            "use labels of one type, for example all strings."
        ) from exc


def _is_missing(g):
    if g is None:
        return True
    try:
        return bool(g != g)  # NaN (float or numpy scalar)
    except TypeError:  # pandas.NA refuses bool()
        return True


# ---------------------------------------------------------------------------
# exact diverse top-k (brute force)
# ---------------------------------------------------------------------------


def _take_rows(A, idx, xp):
    """``A[r, idx[r, j]]`` for 2-D arrays, with only 1-D ``take`` (array API)."""
    b, n = A.shape
    offs = xp.reshape(xp.arange(b, dtype=idx.dtype, device=device(idx)), (b, 1)) * n
    flat = xp.reshape(idx + offs, (-1,))
    return xp.reshape(xp.take(xp.reshape(A, (-1,)), flat), idx.shape)


def _diverse_topk_xp(D, codes_sorted_layout, k, xp):
    """Exact diverse top-k of a distance block in any array namespace.

    Sorting every row by distance and then (stably) by group code gives the
    same group layout in every row, so the ``kprime`` nearest points of each
    group sit in the same columns ``J`` of every row; the answer is the ``k``
    nearest of those columns (ties to the smaller index).
    """
    codes_x, J = codes_sorted_layout
    b = D.shape[0]
    order = xp.argsort(D, axis=1, stable=True)
    row_codes = xp.reshape(xp.take(codes_x, xp.reshape(order, (-1,))), order.shape)
    by_group = xp.argsort(row_codes, axis=1, stable=True)
    grouped = _take_rows(order, by_group, xp)
    cand = xp.take(grouped, J, axis=1)
    # ties broken by index: sort by index first, then stably by distance
    by_index = xp.argsort(cand, axis=1, stable=True)
    cand = _take_rows(cand, by_index, xp)
    cand_d = _take_rows(D, cand, xp)
    by_dist = xp.argsort(cand_d, axis=1, stable=True)
    top = min(k, cand.shape[1])
    out_i = _take_rows(cand, by_dist[:, :top], xp)
    out_d = _take_rows(cand_d, by_dist[:, :top], xp)
    out_i, out_d = to_numpy(out_i).astype(np.int64), to_numpy(out_d)
    if top < k:
        out_i = np.hstack([out_i, -np.ones((b, k - top), dtype=np.int64)])
        out_d = np.hstack([out_d, np.full((b, k - top), np.inf)])
    out_i[~np.isfinite(out_d)] = -1
    return out_i


def _brute(Q, X, codes, n_codes, k, kprime, metric, skip=None, xp=None, n_jobs=None):
    """Exact diverse top-k indices (NumPy int64, -1 padding) of every query."""
    xp = get_namespace(Q, X) if xp is None else xp
    nq, n = Q.shape[0], X.shape[0]
    out = np.empty((nq, k), dtype=np.int64)
    step = max(1, _BLOCK // max(n, 1))
    numpy_path = is_numpy_namespace(xp)
    if numpy_path:
        K = _kernels()
        nthreads = effective_n_threads(n_jobs) if nq >= _PARALLEL_MIN else 1
    else:
        counts = np.bincount(codes, minlength=n_codes)
        offsets = np.concatenate([[0], np.cumsum(counts)[:-1]])
        J = np.concatenate(
            [np.arange(o, o + min(c, kprime)) for o, c in zip(offsets, counts)]
        ).astype(np.int64)
        dev = device(X)
        layout = (to_device(codes, dev, xp=xp), to_device(J, dev, xp=xp))
    for lo in range(0, nq, step):
        hi = min(nq, lo + step)
        D = _block_distances(Q[lo:hi, ...], X, metric, xp)
        if numpy_path:
            sk = (
                np.full(hi - lo, -1, dtype=np.int64)
                if skip is None
                else np.asarray(skip[lo:hi], dtype=np.int64)
            )
            with numba_threads(nthreads):
                out[lo:hi], _ = K.diverse_topk(
                    np.ascontiguousarray(D), codes, n_codes, k, kprime, sk, 8 * nthreads
                )
        else:
            if skip is not None:
                rows = np.arange(hi - lo)
                mask = np.zeros((hi - lo, n), dtype=bool)
                mask[rows, skip[lo:hi]] = True
                D = xp.where(
                    to_device(mask, device(X), xp=xp), xp.full_like(D, math.inf), D
                )
            out[lo:hi] = _diverse_topk_xp(D, layout, k, xp)
    return out


def diverse_kneighbors(
    X,
    groups,
    queries=None,
    *,
    n_neighbors=10,
    max_per_group=1,
    metric="euclidean",
    return_distance=True,
):
    """Exact diverse k-nearest neighbours by brute force.

    For each query, return the ``n_neighbors`` points nearest to it such that at
    most ``max_per_group`` come from any one group. The greedy scan by distance
    (take each point unless its group is full) is optimal here, for the
    farthest reported distance and for the sum of distances alike, because the
    constraint is a partition matroid; this function computes that answer
    exactly, in blocks, with Numba on NumPy input and with the array namespace
    of the input otherwise. It is the ground truth of diverse recall.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The data.
    groups : array-like of shape (n_samples,)
        The group (color) of each sample.
    queries : array-like of shape (n_queries, n_features), default=None
        The queries; ``None`` queries every sample against the others.
    n_neighbors : int, default=10
        Number of neighbours ``k``.
    max_per_group : int or None, default=1
        At most this many neighbours per group (``k'``); ``None`` means no cap.
    metric : {"euclidean", "sqeuclidean", "cosine", "inner_product"}, \
            default="euclidean"
        The distance (``inner_product`` ranks by decreasing ``<q, x>`` and
        reports ``-<q, x>``).
    return_distance : bool, default=True
        Also return the distances.

    Returns
    -------
    distances : array of shape (n_queries, n_neighbors)
        Only with ``return_distance=True``; ``inf`` where a row is padded.
    indices : ndarray of shape (n_queries, n_neighbors)
        Sorted by distance; ``-1`` pads rows when fewer than ``n_neighbors``
        points can be reported under the cap.

    Examples
    --------
    >>> import numpy as np
    >>> from skalgos.neighbors import diverse_kneighbors
    >>> X = np.array([[0.0], [0.1], [0.2], [1.0]])
    >>> dist, ind = diverse_kneighbors(X, [0, 0, 1, 1], [[0.0]], n_neighbors=2)
    >>> ind
    array([[0, 2]])
    """
    est = DiverseNearestNeighbors(
        n_neighbors=n_neighbors,
        max_per_group=max_per_group,
        method="brute",
        metric=metric,
    ).fit(X, groups=groups)
    return est.kneighbors(queries, return_distance=return_distance)


# ---------------------------------------------------------------------------
# the estimator
# ---------------------------------------------------------------------------


class DiverseNearestNeighbors(BaseEstimator):
    """Diverse k-nearest-neighbour search on a graph index.

    Answers "the ``k`` nearest points with at most ``k'`` from any one group
    (seller, brand, document)" in one pass over a graph index, without the
    usual retrieve-many-then-filter step. This is the practical method of
    Anand, Indyk et al. (ICML 2025): the index is built with *DiverseIndex*
    (DiskANN's incremental build in which candidate search uses a per-group
    capped queue and pruning uses *DiversePrune*, which keeps edges toward other
    groups), and queries run *DiverseSearch*, DiskANN's best-first search with
    a per-group bounded priority queue.

    Parameters
    ----------
    n_neighbors : int, default=10
        Number of neighbours ``k`` returned by :meth:`kneighbors`.
    max_per_group : int or None, default=1
        At most this many neighbours of one group (``k'``). ``None`` puts no
        cap (plain k-NN); then ``fit(X)`` needs no groups.
    method : {"graph", "two_stage", "brute"}, default="graph"
        ``"graph"``: DiverseSearch on the graph index. ``"two_stage"``: plain
        graph search for ``search_list_size`` candidates, then the greedy
        filter (the baseline of the paper). ``"brute"``: the exact answer by
        brute force (no index is built).
    build : {"diverse", "standard"}, default="diverse"
        ``"diverse"``: the paper's DiverseIndex with DiversePrune.
        ``"standard"``: the plain DiskANN/Vamana build (the paper's ablation).
    max_degree : int, default=48
        Maximum out-degree ``R`` of the graph, at most ``2**31 - 1`` (the
        kernels' int32 indices; a value above ``n_samples - 1`` acts as
        ``n_samples - 1``).
    build_list_size : int, default=64
        Queue size ``L`` of the searches run while building (at most
        ``2**31 - 1``; above ``n_samples`` it acts as ``n_samples``).
    alpha : float, default=1.2
        Pruning parameter ``alpha`` in ``[1, 1e6]`` (larger keeps longer
        edges; at 1e6 every candidate already passes the test).
    m : int, default=2
        DiversePrune's knob: a candidate edge is pruned once ``m`` distinct
        groups block it (or one of its own group does). ``m=1`` is RobustPrune.
        The build's searches cap each group at ``build_list_size // m``.
    search_list_size : int or "auto", default="auto"
        Queue size ``L`` of a query (at least ``n_neighbors`` is used; above
        ``n_samples`` it acts as ``n_samples``); for ``method="two_stage"`` it
        is the number ``r`` of candidates retrieved. ``"auto"`` chooses it at
        fit, from the index itself: 256 indexed points (drawn with
        ``random_state``) are asked as new queries (the search starts from the
        entry points) at ``L = k``, then about 1.5 times larger, until their
        diverse recall against brute force reaches ``target_recall + 0.01``
        (see ``search_list_size_``). This costs one brute-force pass of 256
        queries over the data at fit.
    target_recall : float, default=0.95
        The diverse recall ``search_list_size="auto"`` aims at, in ``(0, 1]``.
        A warning says when the largest queue cannot reach it.
    metric : {"euclidean", "sqeuclidean", "cosine", "inner_product"}, \
            default="euclidean"
        Distance. ``"inner_product"`` ranks by decreasing ``<q, x>`` and
        reports ``-<q, x>`` as the distance.
    n_jobs : int, default=None
        Number of threads for building and querying (``None``: all cores).
    random_state : int, RandomState instance or None, default=None
        Order in which points are inserted into the graph.
    verbose : int, default=0
        Print build progress when positive.

    Attributes
    ----------
    n_features_in_ : int
        Number of features seen in ``fit``.
    n_samples_fit_ : int
        Number of indexed samples.
    group_labels_ : ndarray
        The distinct groups; ``group_labels_[group_codes_]`` gives each
        sample's group.
    group_codes_ : ndarray of shape (n_samples,)
        Group code of each sample, in ``0..len(group_labels_) - 1``.
    graph_indptr_ : ndarray of shape (n_samples + 1,), int64
        CSR row pointers of the out-edges (``None`` for ``method="brute"``).
    graph_indices_ : ndarray of shape (n_edges,), int32
        CSR column indices, at most ``max_degree`` per point.
    entry_point_ : int
        The build's seed: the indexed point nearest the centroid of the data
        (what DiskANN calls its "medoid"; the true medoid, which minimises the
        sum of distances, costs quadratic time). A query search starts from it
        and from 63 farthest-first points (see Notes).
    build_time_ : float
        Seconds spent building the graph.
    search_list_size_ : int or None
        The queue size queries use by default: ``search_list_size``, or the
        value ``"auto"`` chose (``None`` for ``method="brute"``).

    See Also
    --------
    diverse_kneighbors : The exact answer by brute force.
    sklearn.neighbors.NearestNeighbors : Plain (non-diverse) k-NN.

    Notes
    -----
    What is the paper's: the k'-colorful problem, DiverseIndex (Alg. 9),
    DiversePrune (Alg. 8), the diverse priority queue (Alg. 6) and
    DiverseSearch (Alg. 7); the two-stage baseline and the standard build as
    ablations.

    What is ours, and why:

    * During a query each group may hold up to ``max(k', ceil(k' L / k))``
      entries of the queue, and the answer is truncated to ``k'`` per group at
      the end (the capacity rule of DiskANN's production diversity search). A
      capacity of exactly ``k'`` lets one group's nearest point block the path
      to its other points, which costs recall.
    * Points are inserted in batches of doubling size (capped at 2% of the
      data, or 16 points): each batch is searched and pruned in parallel against the graph
      so far, and the reverse edges are added afterwards, grouped by target
      and re-pruned with the same diverse rule. This makes the build parallel
      and deterministic for a fixed ``random_state``; DiskANN inserts
      concurrently with locks. One build pass, as in DiskANN's in-memory build.
    * Prune candidates are the nodes expanded by the build search.
    * A repair pass ends the build: pruning (the reverse-edge re-prune above
      all) can remove every in-edge of a point, which no search can then
      reach. Each such point gets an edge from its nearest reachable point
      found by a search for it, within the degree bound (a full node gives
      up an edge off the spanning tree of the reachable points), so every
      point is reachable from the entry. On 20k clustered points with main's
      defaults 112 points were cut off; with the defaults below, none or a
      handful are.
    * The answer of ``method="graph"`` is the diverse top-k of *every* point
      whose distance the search evaluated, kept on the fly in a second small
      queue (no extra distance): never worse than truncating the final
      queue, as Algorithm 7 does. ``method="two_stage"`` keeps the plain
      truncation (it is the baseline).
    * Defaults: ``alpha=1.2``, ``L=64`` and ``m=2`` are DiskANN's usual values
      (the paper's own were not available to us); ``max_degree=48`` rather
      than DiskANN's 32 because, measured on clustered 32-d data with
      Zipf-distributed colours, ``R=32`` stays below diverse recall 0.9 at
      ``L <= 40`` (20k points) while ``R=48`` reaches 0.95 at ``L`` of 10 to
      15 there (measured from the medoid alone, before the 64 entry points
      below), and at ``L=15`` on 50k such points with them; on the manifold
      workloads of the benchmark ``L=10`` suffices. Keeping RobustPrune's edges
      next to the diverse ones was measured as well and lost on data with a
      dominant colour (0.88 against 0.95 at ``L=10``), so it is not done.
    * A query search starts from 64 entry points, not from the medoid alone:
      the medoid and 63 points chosen farthest-first from it (greedy
      k-center), all evaluated in the first round of Algorithm 7. On data in
      well-separated clusters few edges join the clusters, and a short list
      started at the medoid can stay in a wrong cluster: on 50k points in
      50 Gaussian blobs (32-d) with Zipf colours, 20 of 300 queries recalled
      under half their answer at ``L=40`` (diverse recall 0.93); from the 64
      entry points none, and recall 0.95 is reached at ``L=15`` with fewer
      distance evaluations (489 against 859 at ``L=40``). The cost is up to
      64 evaluations per query: on the manifold workloads about 6% more
      evaluations at ``L=10`` for the same recall. The build still searches
      from the medoid alone (searching it from the 64 points too was
      measured: the same recall per evaluation). The entry points are
      recomputed from the data after ``load``, not stored.
    * Queries run on a copy of the vectors and of the CSR lists renumbered in
      breadth-first order from the entry, which keeps a node's neighbours
      close in memory; results are mapped back to the original indices.
    * ``y`` is used as the groups when ``groups`` is not given, so that
      ``fit(X, groups)`` works positionally and the estimator fits in a
      ``Pipeline`` or ``GridSearchCV``; one of the two is required, except
      with ``max_per_group=None``, where ``fit(X)`` without groups indexes
      each sample as its own group, so every query is plain k-NN.
    * Rows are padded with index ``-1`` and distance ``inf`` when fewer than
      ``k`` points satisfy the cap (too few groups), or when a graph search
      finds too few.
    * Cosine and inner product run on the graph after a change of space
      (unit rows; the standard MIPS-to-L2 reduction for the inner product).
      Reported distances are recomputed exactly from the data.
    * ``search_list_size="auto"`` (the default; the paper fixes ``L`` by
      hand): on the issue's chunks-of-documents workload (99,905 vectors of
      20,000 documents, k=10, one per document) the former default
      ``L=100`` stood at recall 0.90; "auto" asks sample points as new
      queries rather than leaving each out of its own search, because that
      self-query starts from the point's own neighbours and overstates the
      recall of new queries (0.98 against 0.86 measured there at ``L=10``).
    * Any finite magnitude is indexed: when the largest magnitude of ``X``
      leaves ``[2**-60, 2**60]``, the data (and every query) are multiplied
      by a power of two, which is exact and changes no ranking, so float32
      squared distances neither overflow nor underflow (``X * 1e300`` made
      them all inf before). Data whose reported distances would exceed the
      float64 range is refused with a ``ValueError``.
    * Only the k'-colorful case is built; the general (k', C)-diverse mode
      under a second metric (the paper's Algorithms 3-5) is not.

    The brute-force path computes distance blocks in the array namespace of the
    input (with scikit-learn's ``array_api_dispatch``), so CuPy or torch arrays
    work; the graph build and search are Numba kernels on CPU copies.
    :func:`skalgos.neighbors._kernels.diverse_topk_cuda` is a ``numba.cuda``
    kernel of the batched brute-force diverse top-k.

    References
    ----------
    .. [1] P. Anand, P. Indyk, R. Krishnaswamy, S. Mahabadi, V. C. Raykar,
       K. Shiragur and H. Xu. "Graph-Based Algorithms for Diverse Similarity
       Search". ICML 2025, PMLR 267:1483-1504. arXiv:2502.13336.

    Examples
    --------
    >>> import numpy as np
    >>> from skalgos.neighbors import DiverseNearestNeighbors
    >>> X = np.array([[0.0], [0.1], [0.2], [1.0], [1.1]])
    >>> groups = ["a", "a", "a", "b", "b"]
    >>> nn = DiverseNearestNeighbors(n_neighbors=2, random_state=0).fit(X, groups)
    >>> dist, ind = nn.kneighbors([[0.05]])
    >>> ind
    array([[0, 3]])
    >>> nn.kneighbors([[0.05]], max_per_group=2, return_distance=False)
    array([[0, 1]])
    """

    # entry points of a query search: the entry and farthest-first points
    # (see Notes); not a constructor parameter, so saved files stay valid
    _n_entry_points = 64
    # self-queries of search_list_size="auto"
    _n_auto_queries = 256

    _parameter_constraints = {
        # integer sizes are bounded by the int32 indices of the kernels; sizes
        # above the number of samples act as that number (see Notes)
        "n_neighbors": [Interval(numbers.Integral, 1, _INT32_MAX, closed="both")],
        "max_per_group": [
            Interval(numbers.Integral, 1, _INT32_MAX, closed="both"),
            None,
        ],
        "method": [StrOptions({"graph", "two_stage", "brute"})],
        "build": [StrOptions({"diverse", "standard"})],
        "max_degree": [Interval(numbers.Integral, 2, _INT32_MAX, closed="both")],
        "build_list_size": [Interval(numbers.Integral, 1, _INT32_MAX, closed="both")],
        # alpha**2 scales float32 squared distances: beyond 1e6 the prune keeps
        # every candidate as it does at 1e6, and 1e300 overflowed
        "alpha": [Interval(numbers.Real, 1, 1e6, closed="both")],
        "m": [Interval(numbers.Integral, 1, _INT32_MAX, closed="both")],
        "search_list_size": [
            Interval(numbers.Integral, 1, _INT32_MAX, closed="both"),
            StrOptions({"auto"}),
        ],
        "target_recall": [Interval(numbers.Real, 0, 1, closed="right")],
        "metric": [StrOptions(set(_METRICS))],
        "n_jobs": [numbers.Integral, None],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        n_neighbors=10,
        *,
        max_per_group=1,
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
        tags.array_api_support = True
        return tags

    # -- fit -------------------------------------------------------------------

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, groups=None):
        """Index ``X`` with the group of each sample.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The points to index.
        y : array-like of shape (n_samples,), default=None
            The groups, when ``groups`` is not given (so ``fit(X, groups)``
            works positionally).
        groups : array-like of shape (n_samples,), default=None
            The group (color) of each sample: any hashable labels. Required
            unless ``max_per_group=None``, where ``None`` means one group per
            sample (plain k-NN).

        Returns
        -------
        self : DiverseNearestNeighbors
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
                "DiverseNearestNeighbors requires y to be passed, but the target y "
                "is None: give the group of each sample as groups= (or as y), for "
                "example fit(X, groups=labels), or set max_per_group=None for "
                "plain k-NN without groups."
            )
        xp = get_namespace(X)
        X = validate_data(self, X, dtype=[xp.float64, xp.float32])
        n = X.shape[0]
        if groups is None:  # max_per_group=None: plain k-NN, one group per sample
            groups = np.arange(n)
        codes, labels = _check_group_labels(to_numpy(groups), n)
        self._check_magnitude(to_numpy(X))
        self._fit_X = X
        self.n_samples_fit_ = n
        # the NumPy state the kernels use; public attributes are copies in the
        # namespace of X (see _publish)
        self._index = {
            "codes": codes,
            "labels": labels,
            "indptr": None,
            "indices": None,
        }
        self.entry_point_ = 0
        self.build_time_ = 0.0
        Xn = to_numpy(X)
        self._scale = _pow2_scale(np.max(np.abs(Xn)) if Xn.size else 0.0)
        rng = check_random_state(self.random_state)
        if self.method != "brute":
            t0 = time.perf_counter()
            self._build_graph(to_numpy(X), rng)
            self.build_time_ = time.perf_counter() - t0
        self._publish()
        self.search_list_size_ = self._choose_search_list_size(rng)
        return self

    def _check_magnitude(self, Xn):
        """Refuse data whose reported distances would overflow float64.

        The ranking itself is computed on data rescaled by a power of two
        (see ``_pow2_scale``), so any finite magnitude is indexed; only the
        *reported* distance of ``sqeuclidean`` and ``inner_product`` (a
        squared magnitude) or of ``euclidean`` can exceed float64's range.
        """
        max_abs = float(np.max(np.abs(Xn))) if Xn.size else 0.0
        if max_abs == 0.0:
            return
        d = Xn.shape[1]
        log2 = math.log2(max_abs)
        if self.metric in ("sqeuclidean", "inner_product"):
            overflow = 2 * log2 + math.log2(4 * d) > 1023
        elif self.metric == "euclidean":
            overflow = log2 + math.log2(2 * math.sqrt(d)) > 1023
        else:
            overflow = False
        if overflow:
            raise ValueError(
                f"X has entries up to {max_abs:.3g}: the {self.metric} distances "
                "between such points exceed the float64 range, so they cannot be "
                "reported. Rescale X (every metric here ranks the same after "
                "multiplying X and the queries by one positive factor), or use "
                "metric='cosine'."
            )

    def _choose_search_list_size(self, rng):
        """``search_list_size_``: the given int, or the "auto" choice.

        "auto": the smallest queue size on a ladder (``k``, then about 1.5x
        per step, up to the number of samples) whose diverse recall on
        self-queries of a sample of the indexed points (each leaving itself
        out), against brute force, reaches ``target_recall`` plus a margin
        of 0.01 (for the sample's noise).
        """
        if self.search_list_size != "auto":
            return int(self.search_list_size)
        if self.method == "brute":
            return None
        n = self.n_samples_fit_
        k = min(self.n_neighbors, n - 1)
        if k < 1:
            return self.n_neighbors
        kp = k if self.max_per_group is None else min(self.max_per_group, k)
        sample = np.sort(
            rng.choice(n, size=min(n, self._n_auto_queries), replace=False)
        )
        Xn = to_numpy(self._fit_X)
        Q = Xn[sample]
        # each sample point is held out of its own search, which starts from
        # the entry points as a new query's does: the self-query of
        # kneighbors(None) starts from the point's own neighbours, far easier
        # than a new query (0.98 there against 0.86 on new queries, measured),
        # and asking the point with itself in the index counts a free hit
        skip = sample.astype(np.int64)
        scale = self._scale
        truth = _brute(
            Q * scale if scale != 1.0 else Q,
            Xn * scale if scale != 1.0 else Xn,
            self._index["codes"], len(self._index["labels"]), k, kp, self.metric,
            skip, np, self.n_jobs,
        )  # fmt: skip
        goal = min(1.0, self.target_recall + 0.01)
        Qd = Q * scale if scale != 1.0 else Q
        Xd = Xn * scale if scale != 1.0 else Xn
        true_d = _final_distances(Qd, Xd, truth, self.metric, np)
        L = k
        recalls = []
        while True:
            ind = self._graph_query_rows(sample, k, kp, L, self.method)
            recall = _tie_aware_recall(
                ind, _final_distances(Qd, Xd, ind, self.metric, np), truth, true_d
            )
            recalls.append((L, recall))
            if recall >= goal or L >= n:
                break
            L = min(n, max(L + 1, int(math.ceil(1.5 * L))))
        self._auto_recalls = recalls
        if recall < goal:
            import warnings

            warnings.warn(
                f"search_list_size='auto' reached diverse recall {recall:.3f} on "
                f"the fit sample at the largest queue ({L}), below target_recall="
                f"{self.target_recall}: the graph cannot reach it; try a larger "
                "max_degree or build_list_size, or method='brute'.",
                UserWarning,
                stacklevel=3,
            )
        if self.verbose:
            print(f"[DiverseNearestNeighbors] search_list_size='auto' chose {L}")
        return int(L)

    def _graph_query_rows(self, rows, k, kp, L, method):
        """Graph answers for the fitted points ``rows``, each held out of its
        own search, which starts from the entry points like a new query's."""
        Q = to_numpy(self._fit_X)[rows]
        return self._graph_query(Q, None, k, kp, L, method, exclude=rows)

    def _publish(self):
        xp = get_namespace(self._fit_X)
        idx = self._index

        def out(a):
            if a is None or is_numpy_namespace(xp) or a.dtype.kind not in "biuf":
                return a
            return to_device(a, device(self._fit_X), xp=xp)

        self.group_codes_ = out(idx["codes"])
        self.group_labels_ = out(idx["labels"])
        self.graph_indptr_ = out(idx["indptr"])
        self.graph_indices_ = out(idx["indices"])

    def _prepare_graph_data(self, Xn):
        """The float32 rows the graph works on (original order)."""
        self._scale = _pow2_scale(np.max(np.abs(Xn)) if Xn.size else 0.0)
        if self._scale != 1.0:
            Xn = Xn * self._scale
        if self.metric == "inner_product":
            self._max_norm = float(np.sqrt(np.max(np.einsum("ij,ij->i", Xn, Xn))))
        else:
            self._max_norm = None
        return _graph_space(Xn, self.metric)

    def _prepare_search(self, data):
        """The search layout: vectors, groups and CSR lists in BFS order.

        Renumbering the points in breadth-first order from the entry puts a
        node's neighbours near it in memory, so a search touches fewer cache
        lines; the entry becomes point 0. ``perm[i]`` is the original index of
        internal point ``i``. Derived state: rebuilt after ``load`` and
        unpickling, never stored.
        """
        from scipy.sparse import csr_matrix
        from scipy.sparse.csgraph import breadth_first_order

        idx = self._index
        n = data.shape[0]
        A = csr_matrix(
            (
                np.ones(idx["indices"].size, dtype=np.int8),
                idx["indices"],
                idx["indptr"],
            ),
            shape=(n, n),
        )
        order = breadth_first_order(
            A, self.entry_point_, directed=True, return_predecessors=False
        )
        if order.size < n:  # unreachable points (a loaded file): keep them last
            rest = np.setdiff1d(np.arange(n), order, assume_unique=True)
            order = np.concatenate([order, rest])
        perm = order.astype(np.int64)
        B = A[perm][:, perm].tocsr()
        B.sort_indices()
        inv = np.argsort(perm)
        seeds = _spread_seeds(data, self.entry_point_, self._n_entry_points)
        idx["search"] = {
            "entries": inv[seeds].astype(np.int64),
            "data": np.ascontiguousarray(data[perm]),
            "codes": np.ascontiguousarray(idx["codes"][perm]),
            "indptr": B.indptr.astype(np.int64),
            "indices": B.indices.astype(np.int32),
            "perm": perm,
            "inv": inv,
        }

    def _build_graph(self, Xn, rng):
        import numba

        K = _kernels()
        data = self._prepare_graph_data(Xn)
        codes = self._index["codes"]
        n_codes = len(self._index["labels"])
        n = data.shape[0]
        # sizes beyond what n points can fill act as that bound (a queue
        # never holds more than n points, a node has at most n - 1 neighbours,
        # at most n_codes groups can block a candidate): clamped so that the
        # kernels never allocate for 2**31 entries
        R = max(1, min(self.max_degree, n - 1))
        L_param = max(self.build_list_size, 1)
        L = min(L_param, n)
        diverse = self.build == "diverse"
        m = min(self.m, n_codes + 1) if diverse else 1
        cap = min(L, max(1, L_param // self.m)) if diverse else L
        centroid = data.mean(axis=0)
        entry = int(np.argmin(((data - centroid) ** 2).sum(axis=1)))
        order = rng.permutation(n)
        order = np.concatenate([[entry], order[order != entry]]).astype(np.int64)
        adj = np.zeros((n, R), dtype=np.int32)
        deg = np.zeros(n, dtype=np.int32)
        max_cand = min(max(4 * L, 2 * R), n)
        max_batch = max(16, int(0.02 * n))
        done, bs = 1, 1
        with numba_threads(self.n_jobs) as nthreads:
            while done < n:
                batch = order[done : done + bs]
                # small batches on one thread: waking the pool costs more
                numba.set_num_threads(nthreads if batch.size >= _PARALLEL_MIN else 1)
                new_adj, new_deg = K.build_batch(
                    data, codes, n_codes, adj, deg, entry, batch, L, cap, R,
                    np.float32(self.alpha**2), m, max_cand, 8 * nthreads,
                )  # fmt: skip
                adj[batch] = new_adj
                deg[batch] = new_deg
                mask = np.arange(R)[None, :] < new_deg[:, None]
                tgt = new_adj[mask].astype(np.int64)
                src = np.repeat(batch, new_deg)
                perm = np.argsort(tgt, kind="stable")
                tgt, src = tgt[perm], src[perm]
                targets, first = np.unique(tgt, return_index=True)
                t_ptr = np.append(first, tgt.size).astype(np.int64)
                if targets.size:
                    K.add_reverse_edges(
                        data, codes, adj, deg, targets, t_ptr, src,
                        np.float32(self.alpha**2), R, m, 8 * nthreads,
                    )  # fmt: skip
                done += batch.size
                bs = min(2 * bs, max_batch)
                if self.verbose and (
                    done == n or bs == max_batch and done % (10 * bs) < bs
                ):
                    print(f"[DiverseNearestNeighbors] inserted {done}/{n} points")
            # a few points may end with every in-edge pruned away: link each
            # from its nearest reachable point (see Notes)
            cut_off, n_added = K.repair_reachability(
                data, codes, n_codes, adj, deg, entry, L
            )
            self._build_stats = {"unreachable_before_repair": int(cut_off),
                                 "repair_edges": int(n_added)}  # fmt: skip
            if self.verbose:
                print(
                    f"[DiverseNearestNeighbors] {cut_off} point(s) were unreachable "
                    f"from the entry; {n_added} repair edge(s) added"
                )
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(deg, out=indptr[1:])
        mask = np.arange(R)[None, :] < deg[:, None]
        self._index["indptr"] = indptr
        self._index["indices"] = adj[mask].astype(np.int32)
        self.entry_point_ = entry
        self._prepare_search(data)

    # -- query -----------------------------------------------------------------

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
        """Find the diverse k nearest neighbours of each query.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features), default=None
            The queries. ``None`` queries every indexed point, each leaving
            itself out (as in scikit-learn).
        n_neighbors : int, default=None
            ``k``; defaults to the constructor's value.
        return_distance : bool, default=True
            Also return the distances.
        max_per_group : int, default=None
            ``k'``; defaults to the constructor's value. A value of at least
            ``n_neighbors`` lifts the cap.
        search_list_size : int, default=None
            Queue size of the graph search; defaults to the constructor's value.
        method : {"graph", "two_stage", "brute"}, default=None
            Overrides the constructor's method for this call (a graph must have
            been built for ``"graph"`` and ``"two_stage"``).

        Returns
        -------
        distances : array of shape (n_queries, n_neighbors)
            Only with ``return_distance=True``; ascending, ``inf`` for padding.
        indices : array of shape (n_queries, n_neighbors)
            Indices into the fitted data; ``-1`` pads a row when fewer points
            satisfy the cap. In the namespace and on the device of ``X``.
        """
        check_is_fitted(self, "n_samples_fit_")
        k = self.n_neighbors if n_neighbors is None else n_neighbors
        kp = max_per_group if max_per_group is not None else self.max_per_group
        if search_list_size is None:
            L = getattr(self, "search_list_size_", None)
            L = self.search_list_size if L is None else L
            L = 100 if L == "auto" else L  # brute indexes: L is unused
        else:
            L = search_list_size
        method = self.method if method is None else method
        for name, value in (("n_neighbors", k), ("search_list_size", L)):
            if not isinstance(value, numbers.Integral) or value < 1:
                raise ValueError(f"{name} must be a positive integer; got {value!r}.")
        if kp is not None and (not isinstance(kp, numbers.Integral) or kp < 1):
            raise ValueError(
                f"max_per_group must be a positive integer or None; got {kp!r}."
            )
        if method not in ("graph", "two_stage", "brute"):
            raise ValueError(
                f"method must be 'graph', 'two_stage' or 'brute'; got {method!r}."
            )
        if method != "brute" and self._index["indptr"] is None:
            raise ValueError(
                f"method={method!r} needs a graph, but this index was fitted with "
                "method='brute'; refit with method='graph' or 'two_stage'."
            )
        kp = k if kp is None else min(int(kp), k)
        n = self.n_samples_fit_
        if X is None:
            Q = self._fit_X
            skip = np.arange(n, dtype=np.int64)
            if k > n - 1:
                raise ValueError(
                    f"Expected n_neighbors < n_samples_fit ({n}) when querying the "
                    f"fitted points against themselves; got n_neighbors={k}."
                )
        else:
            xp_q = get_namespace(X)
            Q = validate_data(self, X, reset=False, dtype=[xp_q.float64, xp_q.float32])
            skip = None
            if k > n:
                raise ValueError(
                    f"Expected n_neighbors <= n_samples_fit ({n}); got n_neighbors={k}."
                )
        xp = get_namespace(Q, self._fit_X)
        n_codes = len(self._index["labels"])
        codes = self._index["codes"]
        scale = getattr(self, "_scale", 1.0)
        if X is not None:
            q_max = float(xp.max(xp.abs(Q))) if Q.shape[0] else 0.0
            if q_max * scale > _SCALE_RANGE[1]:
                raise ValueError(
                    f"X has entries up to {q_max:.3g}, more than 2**60 times the "
                    "largest magnitude of the indexed data: their distances cannot "
                    "be ranked in float32. Rescale the queries and the data alike."
                )
        # extreme magnitudes: rank and measure on data rescaled by a power of
        # two, then undo the scale on the reported distances
        Qs, Xs = (Q, self._fit_X) if scale == 1.0 else (Q * scale, self._fit_X * scale)
        if method == "brute":
            idx = _brute(
                Qs, Xs, codes, n_codes, k, kp, self.metric, skip, xp, self.n_jobs
            )
        else:
            idx = self._graph_query(to_numpy(Q), skip, k, kp, max(int(L), k), method)
        if not return_distance:
            return self._to_query_space(idx, Q, xp)
        dist = _final_distances(Qs, Xs, idx, self.metric, xp)
        if scale != 1.0:
            # one division per power: scale**2 may underflow where the
            # distance does not (fit refused the data whose distances overflow)
            for _ in range(
                {"euclidean": 1, "sqeuclidean": 2, "inner_product": 2}.get(
                    self.metric, 0
                )
            ):
                dist = dist / scale
        return dist, self._to_query_space(idx, Q, xp)

    def score(self, X, y=None):
        """Mean diverse recall@k of the index's answers to the queries ``X``.

        Each query is answered by :meth:`kneighbors` (with the constructor's
        ``n_neighbors``, ``max_per_group``, ``search_list_size`` and
        ``method``) and scored against the exact diverse answer over the
        indexed points, computed by brute force, with
        :func:`skalgos.metrics.diverse_recall`. Higher is better, so
        :class:`~sklearn.model_selection.GridSearchCV` can tune
        ``search_list_size``, ``max_degree``, ``alpha`` or ``m`` on held-out
        queries.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)
            The queries.
        y : None
            Ignored: the groups that matter are those of the indexed points,
            given to :meth:`fit`. Accepted because scikit-learn passes the
            held-out targets (here, groups) to ``score``.

        Returns
        -------
        score : float
            Diverse recall@k in ``[0, 1]``; 1.0 for ``method="brute"``.
        """
        from ..metrics import diverse_recall

        check_is_fitted(self, "n_samples_fit_")
        if X is None:
            raise ValueError("score needs queries X; got None.")
        ind = self.kneighbors(X, return_distance=False)
        truth = self.kneighbors(X, return_distance=False, method="brute")
        return float(diverse_recall(ind, truth))

    @staticmethod
    def _to_query_space(idx, Q, xp):
        if is_numpy_namespace(xp):
            return idx
        return to_device(idx, device(Q), xp=xp)

    def _graph_query(
        self, Qn, skip, k, kp, L, method, return_stats=False, exclude=None
    ):
        K = _kernels()
        sr = self._index["search"]
        n = sr["data"].shape[0]
        if skip is None:
            if self._scale != 1.0:
                Qn = Qn * self._scale
            Qg = _graph_space(Qn, self.metric, max_norm=self._max_norm)
            self_points = np.full(Qg.shape[0], -1, dtype=np.int64)
            if exclude is not None:  # indexed points held out of their own search
                self_points = -(sr["inv"][exclude].astype(np.int64) + 2)
        else:  # every indexed point, in internal order
            Qg = sr["data"]
            self_points = np.arange(n, dtype=np.int64)
        if self.metric == "inner_product" and skip is not None:
            # an indexed point as a query is [x, 0], not its data row
            # [x, sqrt(M^2 - |x|^2)]: the MIPS-to-L2 reduction maps queries so
            Qg = Qg.copy()
            Qg[:, -1] = 0.0
        nq = Qg.shape[0]
        n_codes = len(self._index["labels"])
        # a queue never holds more than the n indexed points: larger sizes act
        # as n (and never make the kernel allocate for them)
        L = max(k, min(int(L), n))
        if method == "two_stage" or kp >= k:
            cap = L
        else:
            cap = min(L, max(kp, math.ceil(kp * L / k)))
        with numba_threads(self.n_jobs) as nthreads:
            if nq < _PARALLEL_MIN:
                import numba

                numba.set_num_threads(1)
                nthreads = 1
            n_chunks = max(1, min(nq, 4 * nthreads))
            visited, epoch = self._take_scratch(n_chunks, n, -(-nq // n_chunks))
            try:
                idx, _, n_dist = K.graph_search(
                    sr["data"], sr["codes"], n_codes, sr["indptr"], sr["indices"],
                    sr["entries"],
                    Qg, self_points, k, kp, L, cap, method == "graph",
                    visited[:n_chunks], epoch,
                )  # fmt: skip
            finally:
                self._give_back_scratch(visited, epoch + -(-nq // n_chunks))
        valid = idx >= 0
        idx[valid] = sr["perm"][idx[valid]]
        if skip is not None:  # rows back to the original order
            idx, n_dist = idx[sr["inv"]], n_dist[sr["inv"]]
        if return_stats:
            return idx, n_dist
        return idx

    def _take_scratch(self, n_chunks, n, per_chunk):
        """A visited-stamp array (at least n_chunks x n) and its next epoch.

        Reused across calls so a query allocates and clears nothing; two
        threads querying at once simply get two arrays.
        """
        with _SCRATCH_LOCK:
            scratch = self.__dict__.pop("_scratch", None)
        if (
            scratch is None
            or scratch[0].shape[0] < n_chunks
            or scratch[0].shape[1] != n
            or scratch[1] + per_chunk >= np.iinfo(np.uint32).max
        ):
            rows = max(n_chunks, 0 if scratch is None else scratch[0].shape[0])
            scratch = (np.zeros((rows, n), dtype=np.uint32), 1)
        return scratch

    def _give_back_scratch(self, visited, epoch):
        with _SCRATCH_LOCK:
            self._scratch = (visited, epoch)

    # -- persistence -------------------------------------------------------------

    def __getstate__(self):
        state = self.__dict__.copy()
        state.pop("_scratch", None)
        if "_index" in state:  # the search layout is recomputed on load
            state["_index"] = {
                k: v for k, v in state["_index"].items() if k != "search"
            }
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        index = getattr(self, "_index", None)
        if index is not None and index.get("indptr") is not None:
            self._prepare_search(self._prepare_graph_data(to_numpy(self._fit_X)))

    def save(self, path):
        """Write the fitted index to ``path`` (NumPy ``.npz``, no pickle).

        The file holds ``format`` (``"skalgos.neighbors.DiverseNearestNeighbors"``),
        ``version`` (an int), ``params`` (the constructor parameters as JSON),
        ``fit_X``, ``group_codes``, ``group_labels``, ``graph_indptr``,
        ``graph_indices``, ``entry_point``, ``build_time``,
        ``search_list_size_fitted`` (the fitted ``search_list_size_``, -1 for
        none), when the estimator was fitted on a DataFrame
        ``feature_names_in``, and ``checksum``: the SHA-256 of every other
        entry (name, dtype, shape and bytes), which :meth:`load` recomputes,
        so a file changed after saving is refused. Read it with :meth:`load`,
        which validates every entry.

        Parameters
        ----------
        path : str or path-like
            Destination file (NumPy adds ``.npz`` when missing).
        """
        check_is_fitted(self, "n_samples_fit_")
        labels = np.asarray(self._index["labels"])
        if labels.dtype.kind == "O":
            raise TypeError(
                "save() stores group labels as a NumPy array without pickle; these "
                "labels have object dtype. Use integer or string labels, or pickle."
            )
        params = self.get_params()
        if not isinstance(params["random_state"], (numbers.Integral, type(None))):
            params["random_state"] = None
        index = self._index
        has_graph = index["indptr"] is not None
        extra = {}
        if hasattr(self, "feature_names_in_"):
            extra["feature_names_in"] = np.asarray(self.feature_names_in_, dtype=str)
        fitted_L = getattr(self, "search_list_size_", None)
        entries = dict(
            format=np.array(_FORMAT),
            version=np.array(_FORMAT_VERSION),
            params=np.array(json.dumps(params)),
            fit_X=to_numpy(self._fit_X),
            group_codes=index["codes"],
            group_labels=labels,
            graph_indptr=index["indptr"] if has_graph else np.zeros(0, np.int64),
            graph_indices=index["indices"] if has_graph else np.zeros(0, np.int32),
            entry_point=np.array(self.entry_point_),
            build_time=np.array(self.build_time_),
            search_list_size_fitted=np.array(-1 if fitted_L is None else fitted_L),
            **extra,
        )
        entries["checksum"] = np.array(_array_checksum(entries))
        np.savez(path, **entries)

    @classmethod
    def load(cls, path, *, verify=False):
        """Read an index written by :meth:`save`, checking every array.

        Every entry of the file is validated before it is used: the format and
        version, the parameters (through ``_parameter_constraints``), the
        shape, dtype and finiteness of ``fit_X``, the length and range of
        ``group_codes``, the uniqueness of ``group_labels``, the CSR structure of
        the graph (``graph_indptr`` of length ``n_samples + 1``, starting at 0,
        non-decreasing, ending at ``len(graph_indices)``; every index in
        ``0..n_samples-1``, no self-loop, at most ``max_degree`` per point), the
        range of ``entry_point`` and the length of ``feature_names_in``. A file
        that fails any check raises ``ValueError`` naming the entry; nothing
        reaches the Numba kernels unchecked. Then the ``checksum`` is
        recomputed: a file whose content was changed after :meth:`save` (a
        graph emptied of edges, rows of ``fit_X`` reordered), however
        well-formed, is refused. Files of format version 1 (before the
        checksum) are read with a warning.

        Parameters
        ----------
        path : str or path-like
            A file written by :meth:`save`.
        verify : bool, default=False
            Also check the content against the data: every point must be
            reachable from the entry point, and the graph's answers to
            self-queries of 64 indexed points (each leaving itself out) must
            reach diverse recall 0.8 against brute force (a sound index is
            far above it; a file with reordered rows gave 0.20). Costs one
            brute-force pass over the data for 64 queries.

        Returns
        -------
        index : DiverseNearestNeighbors
            The fitted index (NumPy arrays).

        Raises
        ------
        ValueError
            If the file is not such an index, has another format version, or
            holds an entry that is missing, of the wrong shape or dtype, or out
            of range.
        """
        path = Path(path)
        if not path.exists() and path.with_suffix(path.suffix + ".npz").exists():
            path = path.with_suffix(path.suffix + ".npz")
        try:
            fh = open(path, "rb")
        except OSError as exc:
            raise ValueError(f"cannot open {path}: {exc}") from exc
        with fh:
            try:
                f = np.load(fh, allow_pickle=False)
            except Exception as exc:  # not a zip / npy file
                raise ValueError(
                    f"{path} is not a saved DiverseNearestNeighbors index: {exc}"
                ) from exc
            if not isinstance(f, np.lib.npyio.NpzFile) or "format" not in f.files:
                raise ValueError(
                    f"{path} is not a saved DiverseNearestNeighbors index."
                )
            with f:
                try:
                    entries = {key: f[key] for key in f.files}
                except Exception as exc:  # a truncated or corrupted member
                    raise ValueError(f"{path}: cannot read the index: {exc}") from exc
        return cls._from_arrays(entries, path, verify)

    @classmethod
    def _from_arrays(cls, f, path, verify=False):
        def fail(msg):
            raise ValueError(
                f"{path}: {msg}; the file is corrupted or was not "
                "written by DiverseNearestNeighbors.save."
            )

        def get(key, *, kinds, ndim):
            if key not in f:
                fail(f"entry {key!r} is missing")
            a = f[key]
            if a.ndim != ndim:
                fail(f"{key!r} must have {ndim} dimension(s), got shape {a.shape}")
            if a.dtype.kind not in kinds:
                fail(f"{key!r} has dtype {a.dtype}, expected kind {kinds!r}")
            return a

        fmt = get("format", kinds="U", ndim=0)
        if str(fmt) != _FORMAT:
            raise ValueError(f"{path} holds {str(fmt)!r}, not a {_FORMAT} index.")
        version = int(get("version", kinds="iu", ndim=0))
        if version not in (1, _FORMAT_VERSION):
            raise ValueError(
                f"{path} has format version {version}; this skalgos reads "
                f"versions 1 and {_FORMAT_VERSION}. Rebuild the index with this "
                "version."
            )
        try:
            params = json.loads(str(get("params", kinds="U", ndim=0)))
        except json.JSONDecodeError as exc:
            fail(f"'params' is not valid JSON ({exc})")
        expected = set(cls().get_params())
        if version == 1 and isinstance(params, dict):  # before target_recall
            params.setdefault("target_recall", 0.95)
        if not isinstance(params, dict) or set(params) != expected:
            fail(f"'params' must hold exactly the parameters {sorted(expected)}")
        est = cls(**params)
        try:
            est._validate_params()
        except InvalidParameterError as exc:
            fail(f"'params' are invalid: {exc}")
        X = get("fit_X", kinds="f", ndim=2)
        if X.dtype not in (np.float32, np.float64):
            fail(f"'fit_X' must be float32 or float64, got {X.dtype}")
        n, d = X.shape
        if n < 1 or d < 1:
            fail(f"'fit_X' must hold at least one sample and feature, got {X.shape}")
        if not np.all(np.isfinite(X)):
            fail("'fit_X' contains NaN or infinite values")
        codes = get("group_codes", kinds="iu", ndim=1)
        labels = get("group_labels", kinds="biufU", ndim=1)
        if codes.shape[0] != n:
            fail(f"'group_codes' has {codes.shape[0]} entries for {n} samples")
        if labels.size == 0 or np.unique(labels).size != labels.size:
            fail("'group_labels' must be non-empty and hold distinct labels")
        if codes.min() < 0 or codes.max() >= labels.size:
            fail(f"'group_codes' must lie in 0..{labels.size - 1}")
        indptr = get("graph_indptr", kinds="iu", ndim=1)
        indices = get("graph_indices", kinds="iu", ndim=1)
        entry = int(get("entry_point", kinds="iu", ndim=0))
        build_time = float(get("build_time", kinds="f", ndim=0))
        has_graph = indptr.size > 0
        if not has_graph:
            if indices.size:
                fail("'graph_indices' is not empty but 'graph_indptr' is")
            if est.method != "brute":
                fail(f"method={est.method!r} needs a graph, but the file has none")
            entry = 0
        else:
            if indptr.shape[0] != n + 1:
                fail(f"'graph_indptr' has {indptr.shape[0]} entries, expected {n + 1}")
            indptr = indptr.astype(np.int64)
            deg = np.diff(indptr)
            if indptr[0] != 0 or indptr[-1] != indices.shape[0] or np.any(deg < 0):
                fail(
                    "'graph_indptr' must start at 0, never decrease and end at "
                    f"len(graph_indices) = {indices.shape[0]}"
                )
            if deg.max() > est.max_degree:
                fail(f"a point has {deg.max()} out-edges > max_degree={est.max_degree}")
            if indices.size and (indices.min() < 0 or indices.max() >= n):
                fail(f"'graph_indices' must lie in 0..{n - 1}")
            if np.any(indices == np.repeat(np.arange(n), deg)):
                fail("'graph_indices' holds a self-loop")
            if not 0 <= entry < n:
                fail(f"'entry_point' is {entry}, outside 0..{n - 1}")
        if not np.isfinite(build_time):
            fail("'build_time' is not finite")
        fitted_L = None
        if version >= 2:
            fitted_L = int(get("search_list_size_fitted", kinds="iu", ndim=0))
            if fitted_L == -1:
                fitted_L = None
            elif not 1 <= fitted_L <= _INT32_MAX:
                fail(f"'search_list_size_fitted' is {fitted_L}, not in 1..2**31-1")
        else:
            import warnings

            warnings.warn(
                f"{path} has format version 1, which stores no checksum: its "
                "content cannot be checked. Save it again to add one, and "
                "consider load(..., verify=True).",
                UserWarning,
                stacklevel=3,
            )
        if fitted_L is None and est.method != "brute":
            fitted_L = 100 if est.search_list_size == "auto" else est.search_list_size
        if "feature_names_in" in f:
            names = get("feature_names_in", kinds="U", ndim=1)
            if names.shape[0] != d:
                fail(f"'feature_names_in' has {names.shape[0]} names for {d} features")
            est.feature_names_in_ = names.astype(object)
        # last: the structural checks above name the broken entry; this one
        # catches content changed after save that is still well-formed
        if version >= 2:
            stored = str(get("checksum", kinds="U", ndim=0))
            if stored != _array_checksum(f):
                raise ValueError(
                    f"{path}: the checksum does not match the content: the file "
                    "was modified after it was saved (or damaged). Rebuild the "
                    "index, or save it again from the fitted estimator."
                )
        est._fit_X = X
        est.n_features_in_ = d
        est.n_samples_fit_ = n
        est._index = {
            "codes": codes.astype(np.int64),
            "labels": labels,
            "indptr": indptr if has_graph else None,
            "indices": indices.astype(np.int32) if has_graph else None,
        }
        est.entry_point_ = entry
        est.build_time_ = build_time
        est.search_list_size_ = fitted_L
        est._check_magnitude(X)
        est._scale = _pow2_scale(np.max(np.abs(X)))
        if has_graph:
            est._prepare_search(est._prepare_graph_data(X))
        est._publish()
        if verify:
            est._verify(path)
        return est

    def _verify(self, path):
        """``load(verify=True)``: reachability and a sample against brute force."""
        from scipy.sparse import csr_matrix
        from scipy.sparse.csgraph import breadth_first_order

        from ..metrics import diverse_recall

        idx = self._index
        n = self.n_samples_fit_
        if idx["indptr"] is None:
            return
        A = csr_matrix(
            (
                np.ones(idx["indices"].size, dtype=np.int8),
                idx["indices"],
                idx["indptr"],
            ),
            shape=(n, n),
        )
        reached = breadth_first_order(
            A, self.entry_point_, directed=True, return_predecessors=False
        ).size
        if reached < n:
            raise ValueError(
                f"{path}: verify=True found {n - reached} of {n} points unreachable "
                "from the entry point: the graph is damaged. Rebuild the index."
            )
        k = min(self.n_neighbors, n - 1)
        if k < 1:
            return
        kp = k if self.max_per_group is None else min(self.max_per_group, k)
        rows = np.sort(
            np.random.RandomState(0).choice(
                n, size=min(n, _VERIFY_QUERIES), replace=False
            )
        )
        Xs = to_numpy(self._fit_X) * self._scale
        truth = _brute(
            Xs[rows], Xs, idx["codes"], len(idx["labels"]), k, kp, self.metric,
            rows.astype(np.int64), np, self.n_jobs,
        )  # fmt: skip
        L = self.search_list_size_ or 100
        ind = self._graph_query_rows(rows, k, kp, max(L, k), "graph")
        recall = float(diverse_recall(ind, truth))
        if recall < _VERIFY_MIN_RECALL:
            raise ValueError(
                f"{path}: verify=True measured diverse recall {recall:.2f} on "
                f"{rows.size} self-queries against brute force (at least "
                f"{_VERIFY_MIN_RECALL} expected): the graph does not fit the data "
                "(edges lost, or rows of fit_X reordered). Rebuild the index."
            )
