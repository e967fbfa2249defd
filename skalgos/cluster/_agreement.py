"""DYNAMIC-AGREEMENT (Cohen-Addad, Lattanzi, Maggiori, Parotsidis, ICML 2024).

The baseline SPARSE-PIVOT is compared against. A sampled version of the
Agreement algorithm: anchors (chosen with probability ``anchor/d(u)``) that are
heavy link to the neighbours they agree with in a sparse graph, links are
cleaned when agreement or heaviness fails, and every insertion notifies a few
random neighbours over two levels. Clusters are the connected components of
the sparse graph. Written in Python on top of the counted database; its
constants follow the ICML 2024 notebooks.
"""

import random

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

DEFAULT_AGREEMENT_PARAMS = {
    "epsilon": 0.2,
    "n_agreement_samples": 2,
    "n_connect_samples": 2,
    "n_notifications": 2,
    "anchor_numerator": 20.0,
}


class AgreementState:
    """Sparse graph, anchors and random stream of DYNAMIC-AGREEMENT."""

    def __init__(self, seed, params):
        self.rng = random.Random(seed)
        p = dict(DEFAULT_AGREEMENT_PARAMS)
        p.update(params or {})
        self.eps = float(p["epsilon"])
        self.t = int(p["n_agreement_samples"])
        self.n_connect = int(p["n_connect_samples"])
        self.n_notify = int(p["n_notifications"])
        self.anchor = float(p["anchor_numerator"])
        self.anchors = set()  # membership tests only, never iterated
        # node -> {linked node: None}: a dict used as an insertion-ordered set.
        # The random stream is consumed while iterating over links, so the
        # iteration order must survive pickling (a set's order depends on its
        # table's history, which unpickling rebuilds differently).
        self.links = {}

    def _link(self, a, b):
        if a == b:
            return
        self.links.setdefault(a, {})[b] = None
        self.links.setdefault(b, {})[a] = None

    def _unlink(self, a, b):
        self.links.get(a, {}).pop(b, None)
        self.links.get(b, {}).pop(a, None)

    def agree(self, db, u, v):
        """Sampled agreement test: few sampled neighbours of one miss the other."""
        if u == v:
            return True
        rng, t = self.rng, self.t
        thr = 0.4 * self.eps * t
        miss = 0
        for _ in range(t):
            if not db.adjacent(db.random_neighbor(u, rng), v):
                miss += 1
        if miss > thr:
            return False
        miss = 0
        for _ in range(t):
            if not db.adjacent(db.random_neighbor(v, rng), u):
                miss += 1
        return miss <= thr

    def heavy(self, db, u):
        """Sampled heaviness: few sampled neighbours disagree with ``u``."""
        rng = self.rng
        bad = 0
        for _ in range(self.t):
            if not self.agree(db, u, db.random_neighbor(u, rng)):
                bad += 1
        return bad <= 1.2 * self.eps * self.t

    def _process(self, db, x):
        links, anchors = self.links, self.anchors
        if x in anchors:
            for y in [y for y in links.get(x, ()) if y not in anchors]:
                self._unlink(x, y)
            anchors.discard(x)
        d = db.degree(x)
        if self.rng.random() < self.anchor / max(d, 1) and self.heavy(db, x):
            anchors.add(x)
            for y in db.neighbors(x).tolist():
                if self.agree(db, x, y):
                    self._link(x, y)
        # Clean: drop links to anchors that no longer agree or are not heavy.
        for w in [w for w in links.get(x, ()) if w in anchors and w != x]:
            if not (self.agree(db, x, w) and self.heavy(db, w)):
                self._unlink(x, w)
        # Connect: link to agreeing heavy anchors of a few random neighbours.
        for _ in range(self.n_connect):
            w = db.random_neighbor(x, self.rng)
            for r in [r for r in links.get(w, ()) if r in anchors]:
                if r == x or r in links.get(x, ()):
                    continue
                if db.adjacent(x, r) and self.agree(db, x, r) and self.heavy(db, r):
                    self._link(x, r)

    def insert(self, db, u, deleted):
        """Handle the arrival of node ``u`` (already stored in ``db``)."""
        rng = self.rng
        notified = [u]
        seen = {u}
        level0 = []
        for _ in range(self.n_notify):
            w = db.random_neighbor(u, rng)
            if w not in seen:
                seen.add(w)
                level0.append(w)
                notified.append(w)
        for v in level0:
            for _ in range(self.n_notify):
                w = db.random_neighbor(v, rng)
                if w not in seen:
                    seen.add(w)
                    notified.append(w)
        for x in notified:
            if not deleted[x]:
                self._process(db, x)

    def labels(self, n, deleted):
        """Connected components of the sparse graph over the live nodes.

        Each component is named by its smallest internal id.
        """
        rows, cols = [], []
        for a, nbrs in self.links.items():
            if deleted[a]:
                continue
            for b in nbrs:
                if b > a and not deleted[b]:
                    rows.append(a)
                    cols.append(b)
        G = sp.coo_array(
            (np.ones(len(rows)), (np.asarray(rows, int), np.asarray(cols, int))),
            shape=(n, n),
        )
        _, comp = connected_components(G, directed=False)
        first = np.full(comp.max() + 1 if n else 0, n, dtype=np.int64)
        np.minimum.at(first, comp, np.arange(n))
        return first[comp]
