"""The counted graph database of the dynamic model (Cohen-Addad et al., 2024)."""

import numpy as np

from . import _kernels as K

__all__ = ["GraphDatabase"]

_OPS = ("degree", "random_neighbor", "adjacency")


class GraphDatabase:
    """Growable graph behind the three counted database operations.

    The dynamic correlation clustering model sees the graph only through
    (1) the degree of a node, (2) a uniformly random neighbour of a node and
    (3) whether two nodes are adjacent (the Assadi-Wang model used by
    Cohen-Addad, Lattanzi, Maggiori and Parotsidis, ICML 2024, and by
    SPARSE-PIVOT). Every such query increments :attr:`ops`; the number of
    queries per insertion is the update time of the model. Reading the
    ``j``-th neighbour during a full scan of N(v) is charged as one
    neighbour query, so a scan costs d(v).

    Nodes get consecutive internal ids in arrival order. Each adjacency list
    is then sorted (earlier neighbours first, later arrivals appended in
    increasing order), a random neighbour is O(1) and adjacency is a binary
    search. Lists live in one pool with per-node capacity; a list that fills
    up moves to the end of the pool with doubled capacity (amortized O(1)).
    Storing edges is the database's work and is not counted.

    Parameters
    ----------
    closed_neighborhood : bool, default=True
        If True, every node is its own neighbour: degrees count the node,
        random neighbours may return it and ``adjacent(v, v)`` is True.

    Attributes
    ----------
    n_nodes : int
        Number of nodes stored.
    ops : ndarray of shape (3,), dtype int64
        Counts of degree, neighbour and adjacency queries so far.

    Examples
    --------
    >>> import numpy as np
    >>> from skalgos.cluster import GraphDatabase
    >>> db = GraphDatabase()
    >>> db.add_nodes([[], [0], [0, 1]])  # a triangle, node by node
    >>> db.degree(0), db.adjacent(1, 2), db.op_counts()["total"]
    (3, True, 2)
    """

    def __init__(self, closed_neighborhood=True):
        self.closed_neighborhood = bool(closed_neighborhood)
        self.closed = np.array([int(self.closed_neighborhood)], dtype=np.int64)
        # per-node arrays with spare capacity; entries >= n_nodes are unused
        self.start = np.zeros(0, dtype=np.int64)
        self.cap = np.zeros(0, dtype=np.int64)
        self.length = np.zeros(0, dtype=np.int64)
        self.pool = np.zeros(16, dtype=np.int64)
        self.top = 0
        self.ops = np.zeros(3, dtype=np.int64)
        self.n_nodes = 0

    # -- the arrays seen by the kernels ---------------------------------------
    @property
    def db(self):
        """The tuple of arrays the Numba kernels take."""
        return (self.start, self.cap, self.length, self.pool, self.ops, self.closed)

    def _grow_nodes(self, need):
        """Room for ``need`` nodes in the per-node arrays (amortized doubling)."""
        if need <= self.start.shape[0]:
            return
        size = max(need, 2 * self.start.shape[0], 16)
        for attr in ("start", "cap", "length"):
            old = getattr(self, attr)
            new = np.zeros(size, dtype=np.int64)
            new[: old.shape[0]] = old
            setattr(self, attr, new)

    def reserve(self, indptr, indices):
        """Make room for a block of new nodes (before :func:`db_append`).

        ``indptr``/``indices`` give, for each new node in arrival order, its
        sorted neighbours among the nodes stored before it. The work is
        O(m + e log e) for m new nodes with e edges, plus copying the lists
        that outgrow their capacity (amortized O(1) per stored edge): nothing
        is proportional to the number of stored nodes.
        """
        m = indptr.shape[0] - 1
        n0 = self.n_nodes
        n1 = n0 + m
        self._grow_nodes(n1)
        touched, extra = np.unique(indices, return_counts=True)
        touched = touched.astype(np.int64)
        extra = extra.astype(np.int64)
        old = touched < n0
        o_rows, o_extra = touched[old], extra[old]
        o_need = self.length[o_rows] + o_extra
        grow = o_need > self.cap[o_rows]
        o_rows, o_need = o_rows[grow], o_need[grow]
        # new rows: their earlier neighbours plus the later ones of this block
        n_need = np.diff(indptr).astype(np.int64)
        new = ~old
        n_need[touched[new] - n0] += extra[new]
        rows = np.concatenate([o_rows, np.arange(n0, n1, dtype=np.int64)])
        new_cap = np.concatenate([o_need + o_need // 2 + 2, n_need + 1])
        total = int(new_cap.sum())
        if self.top + total > self.pool.shape[0]:
            size = max(2 * self.pool.shape[0], self.top + total)
            pool = np.empty(size, dtype=np.int64)
            pool[: self.top] = self.pool[: self.top]
            self.pool = pool
        offsets = self.top + np.concatenate([[0], np.cumsum(new_cap)[:-1]])
        o_start = offsets[: o_rows.shape[0]].astype(np.int64)
        K.db_regrow(
            self.start[o_rows], self.length[o_rows], self.pool, o_start, self.pool
        )
        self.start[rows] = offsets
        self.cap[rows] = new_cap
        self.length[n0:n1] = 0
        self.top += total
        self.n_nodes = n1

    def add_nodes(self, neighbor_lists):
        """Store new nodes, each given by its neighbours among earlier nodes."""
        lists = [np.unique(np.asarray(nb, dtype=np.int64)) for nb in neighbor_lists]
        n0 = self.n_nodes
        for i, nb in enumerate(lists):
            if nb.size and (nb[0] < 0 or nb[-1] >= n0 + i):
                raise ValueError(
                    f"node {n0 + i} may only link to earlier nodes 0..{n0 + i - 1}."
                )
        indptr = np.concatenate([[0], np.cumsum([len(nb) for nb in lists])])
        indices = (
            np.concatenate(lists) if lists else np.zeros(0, dtype=np.int64)
        ).astype(np.int64)
        self.reserve(indptr.astype(np.int64), indices)
        db = self.db
        for i, nb in enumerate(lists):
            K.db_append(db, n0 + i, nb)

    # -- the three counted operations -----------------------------------------
    def degree(self, v):
        """Operation 1: the degree of ``v`` (counted)."""
        self.ops[0] += 1
        return int(self.length[v]) + int(self.closed[0])

    def random_neighbor(self, v, rng):
        """Operation 2: a uniform random neighbour of ``v`` (counted).

        ``rng`` is a :class:`random.Random`-like object with ``random()``.
        """
        self.ops[1] += 1
        n = int(self.length[v])
        d = n + int(self.closed[0])
        j = int(rng.random() * d)
        if j >= n:
            return int(v)
        return int(self.pool[self.start[v] + j])

    def neighbor(self, v, j):
        """The ``j``-th stored neighbour of ``v`` (one neighbour query)."""
        self.ops[1] += 1
        return int(self.pool[self.start[v] + j])

    def neighbors(self, v):
        """All neighbours of ``v`` (without ``v``); charged d(v) queries."""
        n = int(self.length[v])
        self.ops[1] += n
        s = int(self.start[v])
        return self.pool[s : s + n]

    def adjacent(self, u, v):
        """Operation 3: whether ``u`` and ``v`` are adjacent (counted)."""
        self.ops[2] += 1
        if u == v:
            return bool(self.closed[0])
        lu, lv = int(self.length[u]), int(self.length[v])
        if lu > lv:
            u, v, lu = v, u, lv
        s = int(self.start[u])
        row = self.pool[s : s + lu]
        i = int(np.searchsorted(row, v))
        return bool(i < lu and row[i] == v)

    def op_counts(self):
        """``{"degree", "random_neighbor", "adjacency", "total"}`` so far."""
        out = {name: int(c) for name, c in zip(_OPS, self.ops)}
        out["total"] = int(self.ops.sum())
        return out
