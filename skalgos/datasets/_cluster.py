"""Graph and stream generators for dynamic correlation clustering."""

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state

__all__ = ["make_drifting_blobs", "make_planted_partition_graph"]


def _unique_pairs(u, v, n):
    lo, hi = np.minimum(u, v), np.maximum(u, v)
    keep = lo != hi
    code = np.sort(lo[keep].astype(np.int64) * n + hi[keep])
    if code.size:
        code = code[np.concatenate([[True], code[1:] != code[:-1]])]
    return code // n, code % n


def make_planted_partition_graph(
    n_clusters, cluster_size, p_in, p_out, *, random_state=None
):
    """Planted-partition graph as a sparse adjacency, fast for large n.

    Nodes ``i * cluster_size ... (i + 1) * cluster_size - 1`` form cluster
    ``i``. Each pair inside a cluster is an edge with probability about
    ``p_in``, each pair across clusters with probability ``p_out``
    (independent pairs, sampled in O(n + m) time by Poisson-many uniform
    draws, deduplicated).

    Parameters
    ----------
    n_clusters : int
        Number of planted clusters.
    cluster_size : int
        Nodes per cluster.
    p_in, p_out : float in [0, 1]
        Edge probabilities inside and across clusters.
    random_state : int, RandomState instance or None, default=None
        Seeds the graph.

    Returns
    -------
    A : scipy.sparse.csr_array of shape (n, n)
        Symmetric 0/1 adjacency without self loops, ``n = n_clusters *
        cluster_size``.
    labels : ndarray of shape (n,)
        The planted cluster of each node.

    Examples
    --------
    >>> from skalgos.datasets import make_planted_partition_graph
    >>> A, y = make_planted_partition_graph(3, 4, 1.0, 0.0, random_state=0)
    >>> A.shape, int(A.sum()) // 2  # three disjoint K4 (6 edges each)
    ((12, 12), 18)
    """
    rs = check_random_state(random_state)
    k, s = int(n_clusters), int(cluster_size)
    n = k * s
    labels = np.repeat(np.arange(k), s)
    us, vs = [], []
    # Uniform ordered draws hit a given pair with probability 2 / size per
    # draw; -ln(1 - p) * size / 2 draws give each pair probability p.
    if s > 1 and p_in > 0:
        if p_in >= 1:
            iu, ju = np.triu_indices(s, k=1)
            for c in range(k):
                us.append(iu + c * s)
                vs.append(ju + c * s)
        else:
            m = rs.poisson(-np.log1p(-p_in) * s * s / 2.0, size=k)
            for c in range(k):
                us.append(rs.randint(0, s, size=m[c]) + c * s)
                vs.append(rs.randint(0, s, size=m[c]) + c * s)
    if k > 1 and p_out > 0:
        m = rs.poisson(-np.log1p(-min(p_out, 1 - 1e-12)) * n * (n - s) / 2.0)
        a = rs.randint(0, n, size=m)
        b = rs.randint(0, n - s, size=m)
        b = b + s * ((b // s) >= (a // s))  # skip a's own cluster
        us.append(a)
        vs.append(b)
    if us:
        lo, hi = _unique_pairs(np.concatenate(us), np.concatenate(vs), n)
    else:
        lo = hi = np.zeros(0, dtype=np.int64)
    data = np.ones(2 * lo.size)
    A = sp.csr_array(
        (data, (np.concatenate([lo, hi]), np.concatenate([hi, lo]))), shape=(n, n)
    )
    A.sort_indices()
    return A, labels


def make_drifting_blobs(
    n_samples=1000,
    n_centers=5,
    n_features=2,
    *,
    cluster_std=1.0,
    drift=10.0,
    center_box=(-20.0, 20.0),
    random_state=None,
):
    """Gaussian blobs whose centres drift over time, rows in arrival order.

    A stand-in for the gas-sensor *drift* stream of the SPARSE-PIVOT
    experiments: sample ``t`` belongs to a random blob whose centre has moved
    by ``drift * t / n_samples`` along a fixed random direction.

    Parameters
    ----------
    n_samples : int, default=1000
    n_centers : int, default=5
    n_features : int, default=2
    cluster_std : float, default=1.0
    drift : float, default=10.0
        Total distance each centre travels over the stream.
    center_box : tuple of float, default=(-20.0, 20.0)
        Box the initial centres are drawn from.
    random_state : int, RandomState instance or None, default=None

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        Rows in arrival (time) order.
    y : ndarray of shape (n_samples,)
        Blob of each row.

    Examples
    --------
    >>> from skalgos.datasets import make_drifting_blobs
    >>> X, y = make_drifting_blobs(10, 2, random_state=0)
    >>> X.shape, y.shape
    ((10, 2), (10,))
    """
    rs = check_random_state(random_state)
    centers = rs.uniform(*center_box, size=(n_centers, n_features))
    direction = rs.normal(size=(n_centers, n_features))
    direction /= np.linalg.norm(direction, axis=1, keepdims=True)
    y = rs.randint(0, n_centers, size=n_samples)
    t = np.arange(n_samples) / max(n_samples, 1)
    X = centers[y] + drift * t[:, None] * direction[y]
    X += rs.normal(scale=cluster_std, size=X.shape)
    return X, y
