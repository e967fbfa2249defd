"""Numba kernels of the dynamic correlation clustering family.

Three groups of kernels live here:

* the counted graph database (growable sorted adjacency lists, the three
  database operations of the model of Cohen-Addad et al. (2024), each of which
  increments ``ops``), see :class:`skalgos.cluster.GraphDatabase`;
* the per-insertion loops of REFERENCE CLUSTERING and SPARSE-PIVOT;
* static PIVOT (KwikCluster) on a CSR graph.

Conventions. Node ids are internal: the arrival index in the database, so that
every adjacency list is sorted (earlier neighbours first, later arrivals are
appended in increasing order) and adjacency is a binary search. The database
tuple is ``db = (start, cap, length, pool, ops, closed)`` where ``closed`` is a
one-element int64 array (1: closed neighbourhoods, the node counts as its own
neighbour). Randomness is a splitmix64 stream whose state is a one-element
uint64 array kept by the estimator, so that the stream continues across calls.
"""

import numpy as np

from skalgos.utils._backend import jit

OP_DEGREE = 0
OP_NEIGHBOR = 1
OP_ADJACENCY = 2

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S11 = np.uint64(11)
_INV53 = 1.0 / 9007199254740992.0


# --- random numbers -----------------------------------------------------------


@jit
def rng_next(state):
    """Next 64-bit output of the splitmix64 stream held in ``state[0]``."""
    state[0] += _GOLDEN
    z = state[0]
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    return z ^ (z >> _S31)


@jit
def rng_unit(state):
    """Uniform float in the open interval (0, 1)."""
    return (float(rng_next(state) >> _S11) + 0.5) * _INV53


@jit
def rng_int(state, n):
    """Uniform integer in [0, n)."""
    j = int(rng_unit(state) * n)
    if j >= n:
        j = n - 1
    return j


# --- the counted graph database -----------------------------------------------


@jit
def db_degree(db, v):
    """Database operation 1: the degree of ``v`` (counted)."""
    start, cap, length, pool, ops, closed = db
    ops[OP_DEGREE] += 1
    return length[v] + closed[0]


@jit
def db_neighbor(db, v, j):
    """The ``j``-th neighbour of ``v`` (one neighbour query, counted).

    A full scan of N(v) is charged d(v) such queries.
    """
    start, cap, length, pool, ops, closed = db
    ops[OP_NEIGHBOR] += 1
    return pool[start[v] + j]


@jit
def _search(pool, lo, hi, x):
    while lo < hi:
        mid = (lo + hi) >> 1
        y = pool[mid]
        if y < x:
            lo = mid + 1
        elif y > x:
            hi = mid
        else:
            return True
    return False


@jit
def db_adjacent(db, u, v):
    """Database operation 3: whether ``u`` and ``v`` are adjacent (counted).

    ``u == v`` is adjacent iff neighbourhoods are closed.
    """
    start, cap, length, pool, ops, closed = db
    ops[OP_ADJACENCY] += 1
    if u == v:
        return closed[0] == 1
    if length[u] > length[v]:
        u, v = v, u
    return _search(pool, start[u], start[u] + length[u], v)


@jit
def db_append(db, u, nb):
    """Add node ``u`` with sorted neighbours ``nb`` (all < u, already present).

    The caller has reserved the capacities (see ``GraphDatabase.reserve``).
    Ingestion is the database's work, not the algorithm's: it is not counted.
    """
    start, cap, length, pool, ops, closed = db
    length[u] = nb.shape[0]
    s = start[u]
    for j in range(nb.shape[0]):
        w = nb[j]
        pool[s + j] = w
        pool[start[w] + length[w]] = u
        length[w] += 1


@jit
def db_regrow(old_start, length, old_pool, new_start, new_pool):
    """Copy each stored list into a pool with new offsets."""
    for v in range(length.shape[0]):
        a = old_start[v]
        b = new_start[v]
        for j in range(length[v]):
            new_pool[b + j] = old_pool[a + j]


@jit
def db_induced_lower(start, length, pool, keep_new_id):
    """Lower adjacency lists (earlier neighbours) of the kept nodes, renumbered.

    ``keep_new_id[v]`` is the new id of ``v`` or -1 if ``v`` is purged. Returns
    ``(indptr, indices)`` in the new ids, rows in new-id order.
    """
    n = length.shape[0]
    m = 0
    for v in range(n):
        m += length[v]
    n_new = 0
    for v in range(n):
        if keep_new_id[v] >= 0:
            n_new += 1
    indptr = np.zeros(n_new + 1, dtype=np.int64)
    indices = np.empty(m, dtype=np.int64)
    k = 0
    r = 0
    for v in range(n):
        nv = keep_new_id[v]
        if nv < 0:
            continue
        for j in range(length[v]):
            w = pool[start[v] + j]
            if w >= v:
                break
            nw = keep_new_id[w]
            if nw >= 0:
                indices[k] = nw
                k += 1
        r += 1
        indptr[r] = k
    return indptr, indices[:k]


# --- REFERENCE CLUSTERING (BCMT 2023 PIVOT variant), exact and dynamic --------


@jit
def _less(rank, a, b):
    """Whether ``a`` ranks before ``b`` (b == -1 ranks last; ties by id)."""
    if b < 0:
        return True
    if rank[a] < rank[b]:
        return True
    if rank[a] > rank[b]:
        return False
    return a < b


@jit
def reference_block(first, indptr, indices, db, rank, sp, state, hist):
    """Insert nodes ``first, first+1, ...`` with REFERENCE CLUSTERING.

    ``p[x]`` is the lowest-ranked node of N[x]; ``x`` is a pivot iff
    ``p[x] == x``; ``x`` is clustered with ``p[x]`` iff ``p[x]`` is a pivot.
    The insertion of ``u`` scans N(u) once: it sets ``p[u]`` and lowers
    ``p[w]`` to ``u`` for every neighbour ``w`` whose pivot ranks after ``u``
    (a former pivot ``w`` stops being one, which makes the rest of its cluster
    singletons). This keeps exactly the static clustering of the current graph.
    ``sp`` is the SPARSE-PIVOT state tuple; only ``p``, ``is_pivot``, the
    B-lists (the nodes pointing to each node) and the label bookkeeping are
    used, ``in_c`` is True throughout.
    """
    p, is_pivot, in_c, bhead, bnext = sp[0], sp[1], sp[2], sp[3], sp[4]
    ops = db[4]
    for r in range(indptr.shape[0] - 1):
        u = first + r
        db_append(db, u, indices[indptr[r] : indptr[r + 1]])
        o0 = ops[0]
        o1 = ops[1]
        o2 = ops[2]
        rank[u] = rng_unit(state)
        _init_node(sp, u)
        in_c[u] = True
        d = db_degree(db, u) - db[5][0]
        best = u
        for j in range(d):
            w = db_neighbor(db, u, j)
            if _less(rank, w, best):
                best = w
        _b_add(sp, best, u)
        is_pivot[u] = best == u
        start = db[0]
        pool = db[3]
        for j in range(d):
            w = pool[start[u] + j]
            pw = p[w]
            if _less(rank, u, pw):
                if pw == w:
                    # w stops being a pivot: its members become singletons
                    is_pivot[w] = False
                    z = bhead[w]
                    while z >= 0:
                        _mark(sp, z)
                        z = bnext[z]
                _b_remove(sp, pw, w)
                _b_add(sp, u, w)
        if hist.shape[0] > 0:
            hist[r, 0] = ops[0] - o0
            hist[r, 1] = ops[1] - o1
            hist[r, 2] = ops[2] - o2


# --- SPARSE-PIVOT -------------------------------------------------------------

# sp = (p, is_pivot, in_c, bhead, bnext, bprev, bsize, last_break, thr,
#       buf, buf2, fbuf, tbuf, name, named, mark, lab, dlog, dcount)
# name[v]: the node naming pivot v's cluster (v itself while v is live),
# named[y]: the pivot whose cluster y names (or -1), lab[x]: x's current label
# (internal id, -1 if deleted); mark / dlog / dcount: the nodes whose label
# may have changed since the last refresh_labels (each logged once).
# prm = (L, k, eps, singleton_threshold, mode, log_n) with mode 0: sampled
# break, 1: threshold search, 2: no break (C_v = B_v).


@jit
def _mark(sp, x):
    """Log ``x`` as a node whose label may have changed."""
    mark, dlog, dcount = sp[15], sp[17], sp[18]
    if mark[x] == 0:
        mark[x] = 1
        dlog[dcount[0]] = x
        dcount[0] += 1


@jit
def _init_node(sp, u):
    p, is_pivot, in_c, bhead, bnext, bprev, bsize = sp[:7]
    p[u] = -1
    is_pivot[u] = False
    in_c[u] = False
    bhead[u] = -1
    bnext[u] = -1
    bprev[u] = -1
    bsize[u] = 0
    sp[7][u] = 0
    sp[8][u] = 0.0
    sp[13][u] = -1
    sp[14][u] = -1
    sp[16][u] = -1
    _mark(sp, u)


@jit
def _b_add(sp, v, x):
    p, is_pivot, in_c, bhead, bnext, bprev, bsize = sp[:7]
    _mark(sp, x)
    h = bhead[v]
    bnext[x] = h
    bprev[x] = -1
    if h >= 0:
        bprev[h] = x
    bhead[v] = x
    bsize[v] += 1
    p[x] = v


@jit
def _b_remove(sp, v, x):
    bhead, bnext, bprev, bsize = sp[3], sp[4], sp[5], sp[6]
    _mark(sp, x)
    a = bprev[x]
    b = bnext[x]
    if a >= 0:
        bnext[a] = b
    else:
        bhead[v] = b
    if b >= 0:
        bprev[b] = a
    bnext[x] = -1
    bprev[x] = -1
    bsize[v] -= 1


@jit
def _gather(sp, v, out):
    """Members of B_v into ``out`` with the pivot first; returns their count."""
    bhead, bnext = sp[3], sp[4]
    out[0] = v
    b = 1
    x = bhead[v]
    while x >= 0:
        if x != v:
            out[b] = x
            b += 1
        x = bnext[x]
    return b


@jit
def _break_cluster(db, sp, prm, state, v):
    """BREAK-CLUSTER: choose C_v inside B_v (pivot always kept)."""
    in_c = sp[2]
    last_break = sp[7]
    thr = sp[8]
    buf = sp[9]
    buf2 = sp[10]
    fbuf = sp[11]
    L, k, eps, frac, mode, log_n = prm
    b = _gather(sp, v, buf)
    # _mark, rng_int and the adjacency test (operation 3, searched in x's
    # list) are written out in the loops below: as calls they cost atomic
    # reference-count updates of their array arguments per iteration.
    mark, dlog, dcount = sp[15], sp[17], sp[18]
    for i in range(b):
        x = buf[i]
        if mark[x] == 0:
            mark[x] = 1
            dlog[dcount[0]] = x
            dcount[0] += 1
    last_break[v] = b
    in_c[v] = True
    if mode == 2:
        for i in range(1, b):
            in_c[buf[i]] = True
        return
    if mode == 0:
        # The experiments' rule: keep x iff it is adjacent to at least a
        # fraction `frac` of k uniform samples of B_v.
        start, length, pool, ops, closed = db[0], db[2], db[3], db[4], db[5]
        self_adj = closed[0] == 1
        for i in range(1, b):
            x = buf[i]
            sx = start[x]
            ex = sx + length[x]
            hits = 0
            for _ in range(k):
                state[0] += _GOLDEN
                z = state[0]
                z = (z ^ (z >> _S30)) * _MIX1
                z = (z ^ (z >> _S27)) * _MIX2
                z = z ^ (z >> _S31)
                j = int((float(z >> _S11) + 0.5) * _INV53 * b)
                if j >= b:
                    j = b - 1
                y = buf[j]
                ops[OP_ADJACENCY] += 1
                if y == x:
                    if self_adj:
                        hits += 1
                    continue
                lo = sx
                hi = ex
                while lo < hi:
                    mid = (lo + hi) >> 1
                    w = pool[mid]
                    if w < y:
                        lo = mid + 1
                    elif w > y:
                        hi = mid
                    else:
                        hits += 1
                        break
            in_c[x] = hits >= frac * k
        return
    # Threshold search (Algorithms 4-7): C_t = {pivot} + {x in B_v: d(x) >= t}
    # for t in {(1+eps)^i}; pick the t minimising the estimated cost of
    # "C_t one cluster, B_v \ C_t singletons", which, up to terms that do not
    # depend on t, is |C_t|(|C_t|-1)/2 - 2 E(C_t).
    for i in range(1, b):
        fbuf[i] = db_degree(db, buf[i])
    deg = fbuf[1:b].copy()
    order = np.argsort(-deg, kind="mergesort")
    buf2[0] = v
    for i in range(b - 1):
        buf2[i + 1] = buf[1 + order[i]]
        fbuf[i + 1] = deg[order[i]]
    n_pairs = b * (b - 1) / 2.0
    tau = 5.0 * b * log_n / eps**3
    ein = np.zeros(b + 1)
    exact = n_pairs <= tau
    if exact:
        for i in range(1, b):
            c = 1.0  # B_v lies in N[v]: the pivot is adjacent by construction
            for j in range(1, i):
                if db_adjacent(db, buf2[i], buf2[j]):
                    c += 1.0
            ein[i + 1] = ein[i] + c
    best_c = 1
    best_cost = 0.0
    best_t = np.inf
    t = 1.0
    maxdeg = fbuf[1] if b > 1 else 0.0
    while True:
        # c = 1 + #{x : d(x) >= t}; fbuf[1:b] is sorted in decreasing order
        c = 1
        while c < b and fbuf[c] >= t:
            c += 1
        if c > 1:
            if exact:
                e = ein[c]
            else:
                m = int(min(5.0 * c * log_n / eps**3, 1e6)) + 1
                hits = 0
                for _ in range(m):
                    a = rng_int(state, c)
                    z = rng_int(state, c - 1)
                    if z >= a:
                        z += 1
                    if a == 0 or z == 0 or db_adjacent(db, buf2[a], buf2[z]):
                        hits += 1
                e = hits / m * c * (c - 1) / 2.0
            cost = c * (c - 1) / 2.0 - 2.0 * e
            if cost < best_cost or (cost == best_cost and c > best_c):
                best_cost = cost
                best_c = c
                best_t = t
        if t > maxdeg:
            break
        t *= 1.0 + eps
    thr[v] = best_t
    for i in range(1, b):
        in_c[buf2[i]] = i < best_c


@jit
def _explore(db, sp, prm, state, rank, v):
    """EXPLORE(v): pull into B_v the neighbours whose pivot ranks after v.

    The B-list moves (_b_add, _b_remove, _mark), JOIN, db_adjacent and the
    re-break test are written out here: as calls, each one cost atomic
    reference-count updates of the state arrays it takes (tens per call).
    """
    p, is_pivot, in_c, bhead, bnext, bprev, bsize = (
        sp[0], sp[1], sp[2], sp[3], sp[4], sp[5], sp[6]
    )  # fmt: skip
    last_break, thr, tbuf = sp[7], sp[8], sp[12]
    mark, dlog, dcount = sp[15], sp[17], sp[18]
    start, length, pool, ops, closed = db[0], db[2], db[3], db[4], db[5]
    eps = prm[2]
    mode = prm[4]
    n_t = 0
    ops[OP_DEGREE] += 1
    d = length[v]
    sv = start[v]
    rv = rank[v]
    for j in range(d):
        ops[OP_NEIGHBOR] += 1
        w = pool[sv + j]
        pw = p[w]
        if pw == v:
            continue
        if pw >= 0 and not (rv < rank[pw] or (rv == rank[pw] and v < pw)):
            continue
        if is_pivot[w]:
            # w stops being a pivot: each member moves to v if adjacent to v,
            # else becomes a singleton.
            is_pivot[w] = False
            z = bhead[w]
            while z >= 0:
                nz = bnext[z]
                if z != w:
                    # _b_remove(w, z)
                    if mark[z] == 0:
                        mark[z] = 1
                        dlog[dcount[0]] = z
                        dcount[0] += 1
                    za = bprev[z]
                    zb = bnext[z]
                    if za >= 0:
                        bnext[za] = zb
                    else:
                        bhead[w] = zb
                    if zb >= 0:
                        bprev[zb] = za
                    bnext[z] = -1
                    bprev[z] = -1
                    bsize[w] -= 1
                    # db_adjacent(z, v)
                    ops[OP_ADJACENCY] += 1
                    if z == v:
                        adj = closed[0] == 1
                    else:
                        x, y = z, v
                        if length[x] > length[y]:
                            x, y = y, x
                        adj = False
                        lo = start[x]
                        hi = lo + length[x]
                        while lo < hi:
                            mid = (lo + hi) >> 1
                            q = pool[mid]
                            if q < y:
                                lo = mid + 1
                            elif q > y:
                                hi = mid
                            else:
                                adj = True
                                break
                    if adj:
                        # JOIN(z, v): z into B_v (already marked); UPDATE-CLUSTER
                        h = bhead[v]
                        bnext[z] = h
                        bprev[z] = -1
                        if h >= 0:
                            bprev[h] = z
                        bhead[v] = z
                        bsize[v] += 1
                        p[z] = v
                        if mode == 1:
                            ops[OP_DEGREE] += 1
                            in_c[z] = length[z] + closed[0] >= thr[v]
                        else:
                            in_c[z] = True
                    else:
                        in_c[z] = False
                z = nz
            # _b_remove(w, w)
            pw = w
        elif pw >= 0 and is_pivot[pw]:
            tbuf[n_t] = pw
            n_t += 1
        else:
            pw = -1
        if mark[w] == 0:
            mark[w] = 1
            dlog[dcount[0]] = w
            dcount[0] += 1
        if pw >= 0:
            # _b_remove(pw, w)
            za = bprev[w]
            zb = bnext[w]
            if za >= 0:
                bnext[za] = zb
            else:
                bhead[pw] = zb
            if zb >= 0:
                bprev[zb] = za
            bsize[pw] -= 1
        # JOIN(w, v)
        h = bhead[v]
        bnext[w] = h
        bprev[w] = -1
        if h >= 0:
            bprev[h] = w
        bhead[v] = w
        bsize[v] += 1
        p[w] = v
        if mode == 1:
            ops[OP_DEGREE] += 1
            in_c[w] = length[w] + closed[0] >= thr[v]
        else:
            in_c[w] = True
    for i in range(n_t):
        t = tbuf[i]
        if is_pivot[t]:
            b = bsize[t]
            last = last_break[t]
            if b >= (1.0 + eps) * last or b * (1.0 + eps) <= last:
                _break_cluster(db, sp, prm, state, t)


@jit
def sparse_pivot_block(first, indptr, indices, db, rank, sp, prm, state, hist, n_db):
    """Insert nodes ``first, first+1, ...`` with SPARSE-PIVOT (Algorithm 3).

    ``n_db`` is the database size before the block; the pivot threshold
    ``L`` and the sample size ``k`` follow ``ln`` of the current size when
    ``prm`` carries ``L <= 0`` / ``k <= 0``.

    The per-insertion work (_init_node, JOIN, the re-break test, the
    database operations) is written out in the loop: as helper calls it cost
    atomic reference-count updates of every array taken (tens per call).
    """
    p, is_pivot, in_c, bhead, bnext, bprev, bsize = (
        sp[0], sp[1], sp[2], sp[3], sp[4], sp[5], sp[6]
    )  # fmt: skip
    last_break, thr = sp[7], sp[8]
    name, named, mark, lab, dlog, dcount = (
        sp[13],
        sp[14],
        sp[15],
        sp[16],
        sp[17],
        sp[18],
    )
    start, length, pool, ops, closed = db[0], db[2], db[3], db[4], db[5]
    cl = closed[0]
    L0, k0, eps, frac, mode, _ = prm
    for r in range(indptr.shape[0] - 1):
        u = first + r
        db_append(db, u, indices[indptr[r] : indptr[r + 1]])
        n_now = n_db + r + 1
        log_n = np.log(max(n_now, 2))
        L = L0 if L0 > 0 else log_n
        k = k0 if k0 > 0 else max(1, int(np.floor(log_n)))
        cur = (L, k, eps, frac, mode, log_n)
        o0 = ops[0]
        o1 = ops[1]
        o2 = ops[2]
        ru = rng_unit(state)
        rank[u] = ru
        # _init_node(u)
        p[u] = -1
        is_pivot[u] = False
        in_c[u] = False
        bhead[u] = -1
        bnext[u] = -1
        bprev[u] = -1
        bsize[u] = 0
        last_break[u] = 0
        thr[u] = 0.0
        name[u] = -1
        named[u] = -1
        lab[u] = -1
        if mark[u] == 0:
            mark[u] = 1
            dlog[dcount[0]] = u
            dcount[0] += 1
        ops[OP_DEGREE] += 1
        lu = length[u]
        su = start[u]
        du = lu + cl
        best = -1
        if ru * du <= L:
            # Case 1: scan N[u].
            best = u
            rb = ru
            for j in range(lu):
                ops[OP_NEIGHBOR] += 1
                w = pool[su + j]
                rw = rank[w]
                if rw < rb or (rw == rb and w < best):
                    best = w
                    rb = rw
            if best == u:
                is_pivot[u] = True
                _b_add(sp, u, u)
                in_c[u] = True
                _explore(db, sp, cur, state, rank, u)
                _break_cluster(db, sp, cur, state, u)
                best = -1
            elif is_pivot[best]:
                pass  # joined below
            else:
                p[u] = best  # a singleton that knows its lowest neighbour
                best = -1
        else:
            # Case 2: sample k neighbours; candidate pivots are the sampled
            # pivots and the sampled nodes' pivots adjacent to u.
            rb = np.inf
            for _ in range(k):
                ops[OP_NEIGHBOR] += 1
                if du == 0:
                    continue
                j = rng_int(state, du)
                if j == lu:
                    continue  # u itself (closed neighbourhoods)
                s = pool[su + j]
                if is_pivot[s] and (
                    best < 0 or rank[s] < rb or (rank[s] == rb and s < best)
                ):
                    best = s
                    rb = rank[s]
                ps = p[s]
                if (
                    ps >= 0
                    and ps != s
                    and is_pivot[ps]
                    and (best < 0 or rank[ps] < rb or (rank[ps] == rb and ps < best))
                ):
                    ops[OP_ADJACENCY] += 1
                    if ps == u:
                        hit = cl == 1
                    else:
                        x, y = u, ps
                        if length[x] > length[y]:
                            x, y = y, x
                        hit = False
                        lo = start[x]
                        hi = lo + length[x]
                        while lo < hi:
                            mid = (lo + hi) >> 1
                            q = pool[mid]
                            if q < y:
                                lo = mid + 1
                            elif q > y:
                                hi = mid
                            else:
                                hit = True
                                break
                    if hit:
                        best = ps
                        rb = rank[ps]
            if best >= 0 and not (rb < ru or (rb == ru and best < u)):
                best = -1
        if best >= 0:
            # JOIN(u, best), EXPLORE(best) in case 1, then BREAK-CLUSTER(best)
            # if |B_best| left [last / (1 + eps), last * (1 + eps)]
            if mark[u] == 0:
                mark[u] = 1
                dlog[dcount[0]] = u
                dcount[0] += 1
            h = bhead[best]
            bnext[u] = h
            bprev[u] = -1
            if h >= 0:
                bprev[h] = u
            bhead[best] = u
            bsize[best] += 1
            p[u] = best
            if mode == 1:
                ops[OP_DEGREE] += 1
                in_c[u] = du >= thr[best]
            else:
                in_c[u] = True
            if ru * du <= L:
                ops[OP_DEGREE] += 1
                if (length[best] + cl) * ru <= L:
                    _explore(db, sp, cur, state, rank, best)
            b = bsize[best]
            last = last_break[best]
            if b >= (1.0 + eps) * last or b * (1.0 + eps) <= last:
                _break_cluster(db, sp, cur, state, best)
        if hist.shape[0] > 0:
            hist[r, 0] = ops[0] - o0
            hist[r, 1] = ops[1] - o1
            hist[r, 2] = ops[2] - o2


# --- labels, kept up to date from the logged nodes --------------------------


@jit
def _cluster_of(sp, x):
    """The pivot whose reported cluster C_v holds ``x``, or -1."""
    p, is_pivot, in_c = sp[0], sp[1], sp[2]
    v = p[x]
    if v >= 0 and is_pivot[v] and in_c[x]:
        return v
    return -1


@jit
def _set_label(sp, x, y, user_of, labels, count):
    lab = sp[16]
    if lab[x] == x:
        count[0] -= 1
    lab[x] = y
    if y == x:
        count[0] += 1
    labels[user_of[x]] = user_of[y] if y >= 0 else -1


@jit
def _rename(sp, deleted, v, user_of, labels, count):
    """Name pivot v's cluster: v while it is live, else a live member; write
    the label of every live member of C_v (O(|B_v|), once per renaming)."""
    bhead, bnext, name, named = sp[3], sp[4], sp[13], sp[14]
    if not sp[1][v]:
        return
    y = -1
    if not deleted[v]:
        y = v
    else:
        z = bhead[v]
        while z >= 0:
            if not deleted[z] and _cluster_of(sp, z) == v:
                y = z
                break
            z = bnext[z]
    old = name[v]
    if old >= 0 and named[old] == v:
        named[old] = -1
    name[v] = y
    if y >= 0:
        named[y] = v
    z = bhead[v]
    while z >= 0:
        if not deleted[z] and _cluster_of(sp, z) == v:
            _set_label(sp, z, y, user_of, labels, count)
        z = bnext[z]


@jit
def mark_nodes(sp, nodes):
    """Log ``nodes`` (e.g. just deleted) for the next refresh_labels."""
    for i in range(nodes.shape[0]):
        _mark(sp, nodes[i])


@jit
def refresh_labels(sp, deleted, user_of, labels, count):
    """Recompute the labels of the logged nodes; O(#logged) plus renamings.

    A cluster is named by its pivot while the pivot is live, else by one of
    its live members (never by a deleted node), singletons by themselves,
    deleted nodes get -1. ``labels`` is indexed by user id, ``count[0]`` is
    the number of live nodes that name their own cluster, i.e. the number of
    clusters.
    """
    name, named, mark, dlog, dcount = sp[13], sp[14], sp[15], sp[17], sp[18]
    for i in range(dcount[0]):
        x = dlog[i]
        mark[x] = 0
        old = named[x]
        if old >= 0 and (deleted[x] or _cluster_of(sp, x) != old):
            # x named a cluster it has left: that cluster needs a new name
            named[x] = -1
            if name[old] == x:
                name[old] = -1
            _rename(sp, deleted, old, user_of, labels, count)
        if deleted[x]:
            _set_label(sp, x, -1, user_of, labels, count)
            continue
        v = _cluster_of(sp, x)
        if v < 0:
            _set_label(sp, x, x, user_of, labels, count)
            continue
        y = name[v]
        if y < 0 or deleted[y] or named[y] != v or _cluster_of(sp, y) != v:
            _rename(sp, deleted, v, user_of, labels, count)
        else:
            _set_label(sp, x, y, user_of, labels, count)
    dcount[0] = 0


# --- static PIVOT (KwikCluster) -------------------------------------------------


@jit
def kwik_cluster(indptr, indices, perm):
    """Static PIVOT: visit nodes in ``perm``; an unassigned node becomes a
    pivot and takes every unassigned neighbour. Returns pivot labels."""
    n = indptr.shape[0] - 1
    labels = np.full(n, -1, dtype=np.int64)
    for i in range(n):
        v = perm[i]
        if labels[v] >= 0:
            continue
        labels[v] = v
        for j in range(indptr[v], indptr[v + 1]):
            w = indices[j]
            if labels[w] < 0:
                labels[w] = v
    return labels
