"""Graph generators for the maximum independent set family.

All return a symmetric 0/1 :class:`scipy.sparse.csr_array` (no self loops),
are deterministic under ``random_state`` and scale to tens of thousands of
nodes (the Erdos-Renyi sampler is ``O(n + |E|)``).
"""

import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state

__all__ = [
    "make_erdos_renyi_graph",
    "make_gnm_graph",
    "make_planted_independent_set",
    "make_sat_independent_set",
]


def _check_int(value, name, low):
    if not isinstance(value, numbers.Integral) or isinstance(value, bool):
        raise TypeError(f"{name} must be an integer; got {type(value).__name__}.")
    if value < low:
        raise ValueError(f"{name} must be >= {low}; got {value}.")
    return int(value)


def _check_p(p, name="p"):
    if not isinstance(p, numbers.Real) or not 0.0 <= p <= 1.0:
        raise ValueError(f"{name} must be a probability in [0, 1]; got {p!r}.")
    return float(p)


def _from_pairs(n, rows, cols):
    rows = np.asarray(rows, dtype=np.int64)
    cols = np.asarray(cols, dtype=np.int64)
    data = np.ones(2 * rows.size)
    A = sp.csr_array(
        (data, (np.concatenate([rows, cols]), np.concatenate([cols, rows]))),
        shape=(n, n),
    )
    A.sum_duplicates()
    A.data[:] = 1.0
    return A


def _pair_from_linear(k, n):
    """Map linear indices of the strict upper triangle (row-major) to (i, j)."""
    # row i starts at offset i*n - i*(i+1)/2 - ... use the row-start array
    starts = np.cumsum(np.concatenate([[0], np.arange(n - 1, 0, -1)]))
    i = np.searchsorted(starts, k, side="right") - 1
    j = k - starts[i] + i + 1
    return i, j


def _er_pairs(n, p, rng):
    n_pairs = n * (n - 1) // 2
    if n_pairs == 0 or p == 0.0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    if p == 1.0:
        k = np.arange(n_pairs, dtype=np.int64)
    else:
        # geometric skips over the pair list: exact G(n, p) in O(n + |E|)
        chunks, pos = [], -1
        expected = int(n_pairs * p + 10 * np.sqrt(n_pairs * p) + 10)
        while pos < n_pairs:
            gaps = rng.geometric(p, size=expected)
            idx = pos + np.cumsum(gaps)
            chunks.append(idx)
            pos = int(idx[-1])
        k = np.concatenate(chunks)
        k = k[k < n_pairs]
    return _pair_from_linear(k, n)


def make_erdos_renyi_graph(n_nodes, p, *, random_state=None):
    """Erdos-Renyi graph G(n, p): each pair is an edge with probability ``p``.

    The paper's ER-[700-800] test set uses ``p = 0.15``; its density series
    uses 0.05 to 0.20.

    Parameters
    ----------
    n_nodes : int
        Number of nodes.
    p : float
        Edge probability in [0, 1].
    random_state : int, RandomState instance or None, default=None
        Seed.

    Returns
    -------
    A : scipy.sparse.csr_array of shape (n_nodes, n_nodes)
        Symmetric 0/1 adjacency.

    Examples
    --------
    >>> from skalgos.datasets import make_erdos_renyi_graph
    >>> A = make_erdos_renyi_graph(50, 0.1, random_state=0)
    >>> A.shape, bool((A != A.T).nnz == 0)
    ((50, 50), True)
    """
    n = _check_int(n_nodes, "n_nodes", 0)
    p = _check_p(p)
    rng = check_random_state(random_state)
    i, j = _er_pairs(n, p, rng)
    return _from_pairs(n, i, j)


def make_gnm_graph(n_nodes, n_edges=None, *, random_state=None):
    """Uniform random graph with exactly ``n_edges`` edges, G(n, m).

    Parameters
    ----------
    n_nodes : int
        Number of nodes.
    n_edges : int or None, default=None
        Number of edges; ``None`` gives the paper's GNM setting
        ``ceil(n (n - 1) / 4)``, half of all pairs.
    random_state : int, RandomState instance or None, default=None
        Seed.

    Returns
    -------
    A : scipy.sparse.csr_array of shape (n_nodes, n_nodes)

    Examples
    --------
    >>> from skalgos.datasets import make_gnm_graph
    >>> int(make_gnm_graph(10, 7, random_state=0).nnz // 2)
    7
    """
    n = _check_int(n_nodes, "n_nodes", 0)
    n_pairs = n * (n - 1) // 2
    m = -(-n * (n - 1) // 4) if n_edges is None else _check_int(n_edges, "n_edges", 0)
    if m > n_pairs:
        raise ValueError(f"n_edges={m} exceeds the {n_pairs} pairs of {n} nodes.")
    rng = check_random_state(random_state)
    k = np.sort(rng.choice(n_pairs, size=m, replace=False)) if m else np.zeros(0, int)
    i, j = _pair_from_linear(np.asarray(k, dtype=np.int64), n)
    return _from_pairs(n, i, j)


def make_planted_independent_set(
    n_nodes, n_planted, p, *, shuffle=True, random_state=None
):
    """Random graph with a planted independent set of known size.

    ``n_planted`` nodes get no edges among themselves; every other pair
    (inside the rest, or between the rest and the planted set) is an edge with
    probability ``p``. The planted set is maximal whenever every other node
    has a planted neighbour (almost surely for ``n_planted * p >> log n``), and
    for ``n_planted`` well above ``2 ln(n p) / p`` it is the maximum with high
    probability.

    Parameters
    ----------
    n_nodes : int
        Number of nodes.
    n_planted : int
        Size of the planted independent set, at most ``n_nodes``.
    p : float
        Edge probability of the other pairs.
    shuffle : bool, default=True
        Randomly permute the node order, so the planted nodes are not the
        first ones.
    random_state : int, RandomState instance or None, default=None
        Seed.

    Returns
    -------
    A : scipy.sparse.csr_array of shape (n_nodes, n_nodes)
        Symmetric 0/1 adjacency.
    planted : ndarray of shape (n_planted,), dtype int64
        Sorted indices of the planted independent set.

    Examples
    --------
    >>> from skalgos.datasets import make_planted_independent_set
    >>> from skalgos.graph import is_independent_set
    >>> A, planted = make_planted_independent_set(100, 20, 0.2, random_state=0)
    >>> planted.size, is_independent_set(A, planted)
    (20, True)
    """
    n = _check_int(n_nodes, "n_nodes", 0)
    k = _check_int(n_planted, "n_planted", 0)
    if k > n:
        raise ValueError(f"n_planted={k} exceeds n_nodes={n}.")
    p = _check_p(p)
    rng = check_random_state(random_state)
    i, j = _er_pairs(n, p, rng)
    # nodes 0..k-1 are planted before shuffling: drop the pairs inside them
    keep = j >= k
    i, j = i[keep], j[keep]
    perm = rng.permutation(n) if shuffle else np.arange(n)
    A = _from_pairs(n, perm[i], perm[j])
    return A, np.sort(perm[:k]).astype(np.int64)


def make_sat_independent_set(n_variables=100, n_clauses=403, *, random_state=None):
    """SATLIB-style graph of a satisfiable random 3-SAT formula; MIS known.

    A random 3-SAT formula with a hidden satisfying assignment (each clause is
    drawn uniformly among the clauses over three distinct variables that the
    assignment satisfies) is turned into a graph as in the SATLIB benchmark
    of the paper: one node per literal occurrence, a triangle per clause, and
    an edge between every two complementary literals. An independent set takes
    at most one node per clause, and picking one true literal per clause is
    independent, so the independence number is exactly ``n_clauses``. With
    100 variables and 403 clauses (the SATLIB CBS family) the graph has 1209
    nodes.

    Parameters
    ----------
    n_variables : int, default=100
        Number of Boolean variables, at least 3.
    n_clauses : int, default=403
        Number of clauses.
    random_state : int, RandomState instance or None, default=None
        Seed.

    Returns
    -------
    A : scipy.sparse.csr_array of shape (3 * n_clauses, 3 * n_clauses)
        Symmetric 0/1 adjacency. Node ``3 c + t`` is literal ``t`` of clause
        ``c``.
    alpha : int
        The independence number, ``n_clauses``.

    Examples
    --------
    >>> from skalgos.datasets import make_sat_independent_set
    >>> A, alpha = make_sat_independent_set(10, 30, random_state=0)
    >>> A.shape, alpha
    ((90, 90), 30)
    """
    nv = _check_int(n_variables, "n_variables", 3)
    nc = _check_int(n_clauses, "n_clauses", 0)
    rng = check_random_state(random_state)
    truth = rng.randint(2, size=nv).astype(bool)
    var = np.empty((nc, 3), dtype=np.int64)
    sign = np.empty((nc, 3), dtype=bool)  # True: positive literal
    for c in range(nc):
        var[c] = rng.choice(nv, size=3, replace=False)
        while True:
            s = rng.randint(2, size=3).astype(bool)
            if np.any(s == truth[var[c]]):  # the clause is satisfied
                break
        sign[c] = s
    lit_var, lit_sign = var.reshape(-1), sign.reshape(-1)
    rows, cols = [], []
    base = 3 * np.arange(nc)
    for a, b in ((0, 1), (0, 2), (1, 2)):
        rows.append(base + a)
        cols.append(base + b)
    # complementary literals: same variable, opposite signs
    order = np.lexsort((lit_sign, lit_var))
    sv, ss = lit_var[order], lit_sign[order]
    for v in range(nv):
        lo, hi = np.searchsorted(sv, [v, v + 1])
        neg = order[lo:hi][~ss[lo:hi]]
        pos = order[lo:hi][ss[lo:hi]]
        if neg.size and pos.size:
            r, c = np.meshgrid(neg, pos, indexing="ij")
            rows.append(r.reshape(-1))
            cols.append(c.reshape(-1))
    A = _from_pairs(3 * nc, np.concatenate(rows), np.concatenate(cols))
    return A, nc
