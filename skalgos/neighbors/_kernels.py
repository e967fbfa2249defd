"""Numba and ``numba.cuda`` kernels of diverse k-NN search.

Everything here works on plain arrays:

* ``data``: float32 array of shape (n, d); the graph code always uses squared
  Euclidean distances (cosine and inner product are mapped to it by the
  estimator, see :mod:`._diverse`).
* ``codes``: int64 group code of each point, in ``0..n_codes-1``.
* a graph is given as ``(start, deg, flat)``: the out-neighbours of ``i`` are
  ``flat[start[i]:start[i] + deg[i]]``. The build uses a fixed-width table
  (``start[i] = i * R``); queries use the final CSR arrays
  (``start = indptr[:-1]``, ``deg = diff(indptr)``).

The diverse priority queue (the paper's Algorithm 6) is a list sorted by
distance of at most ``L`` entries with at most ``cap`` entries per group; the
greedy search (Algorithm 7) expands the closest unexpanded entry until every
entry is expanded; the prune (Algorithm 8) is RobustPrune in which a candidate
is dropped once ``m`` distinct groups have blocked it, or once a point of its own
group has.
"""

import math

import numpy as np
from numba import cuda, prange

from ..utils._backend import cuda_jit, jit

# ---------------------------------------------------------------------------
# small helpers
# ---------------------------------------------------------------------------

# the fast-math flags that let LLVM vectorise a float32 sum of squares
# (reassociation), without the no-NaN / no-inf assumptions of fastmath=True
# that would break the comparisons with inf below
_FAST = {"reassoc", "contract"}


# inline="always": inlined in Numba IR rather than called. Note that every
# array argument of an inlined call is still reference-counted (atomic
# increments and decrements) at each call; the search's hot loop therefore
# writes its distance out (see _greedy_search)
@jit(fastmath=_FAST, inline="always")
def _sqdist(data, i, q):
    s = np.float32(0.0)
    for t in range(data.shape[1]):
        diff = data[i, t] - q[t]
        s += diff * diff
    return s


@jit(fastmath=_FAST, inline="always")
def _sqdist_rows(data, i, j):
    s = np.float32(0.0)
    for t in range(data.shape[1]):
        diff = data[i, t] - data[j, t]
        s += diff * diff
    return s


@jit(fastmath=_FAST)
def _greedy_search(
    data,
    q,
    codes,
    start,
    deg,
    flat,
    entries,
    self_point,
    L,
    cap,
    visited,
    stamp,
    ids,
    dists,
    expd,
    cnt,
    gw,
    buf,
    exp_out,
    pool,
):
    """Best-first search with the diverse queue.

    Returns ``(size, n_exp, n_dist, pool_size)``. With ``self_point >= 0`` the
    search starts from that point's neighbours and never reports it (queries
    of the training points against themselves); with ``self_point <= -2`` it
    starts from the entry points, as a new query does, and never evaluates
    point ``-self_point - 2`` (the held-out self-queries of
    ``search_list_size="auto"``). The ids of expanded nodes are
    written to ``exp_out`` (up to its length). ``visited[i] == stamp`` marks
    the evaluated points (an epoch counter: no clearing between queries).

    ``pool = (pool_k, pool_kp, p_ids, p_dists, p_gw, p_cnt)`` is the diverse
    top-k of every evaluated point, kept on the fly (``pool_k = 0``: no pool).
    ``gw`` and ``p_gw`` (float32, one per group, inf on entry and on exit)
    hold the worst distance of each full group, so that a point of a full
    group that is not closer is rejected without a scan. ``buf`` (int64)
    holds at least ``entries.shape[0]`` and the largest out-degree.
    The queue is a list sorted by distance (ties keep insertion order) of at
    most ``L`` entries, at most ``cap`` of one group; ``cnt[c]`` counts the
    entries of group ``c``; ``cur`` is at most the position of the first
    unexpanded entry.

    The evaluation of a neighbour and both queue insertions are written out
    in the one loop below, not in helper functions: arrays passed to an
    inlined Numba function are reference-counted at each call (a dozen
    atomic operations per evaluated point, which cost three times the
    distance itself, measured).
    """
    pool_k, pool_kp, p_ids, p_dists, p_gw, p_cnt = pool
    dim = data.shape[1]
    size = 0
    n_dist = 0
    n_exp = 0
    pool_size = 0
    cur = 0
    # the first round evaluates the entry points, or the neighbours of
    # self_point; every later round the neighbours of an expanded node
    if self_point >= 0:
        visited[self_point] = stamp
        node = self_point
        only_entry = False
    else:
        node = entries[0]
        only_entry = True
        if self_point <= -2:  # leave point -self_point - 2 out, start at the entries
            visited[-self_point - 2] = stamp
    while True:
        if only_entry:
            s = 0
            dn = entries.shape[0]
        else:
            s = start[node]
            dn = deg[node]
        # the unvisited neighbours, compacted without a branch (whether a
        # neighbour was visited is hard to predict: a mispredicted branch per
        # neighbour cost more than the distance, measured), in list order
        m = 0
        for t in range(dn):
            nb = entries[t] if only_entry else flat[s + t]
            buf[m] = nb
            m += visited[nb] != stamp
            visited[nb] = stamp
        for t in range(m):
            nb = buf[t]
            n_dist += 1
            d = np.float32(0.0)
            for j in range(dim):
                diff = data[nb, j] - q[j]
                d += diff * diff
            c = codes[nb]
            # --- the queue (Algorithm 6) ---
            # gw[c] is the distance of group c's worst entry while the group
            # is full (inf otherwise): a closer point of a full group replaces
            # that entry, found by a backward scan only when it is replaced
            if size == L and d >= dists[size - 1]:
                pass
            elif cnt[c] >= cap:
                if d < gw[c]:
                    j = size - 1
                    while codes[ids[j]] != c:
                        j -= 1
                    # drop entry j and insert nb: one shift of pos..j-1
                    pos = j
                    while pos > 0 and dists[pos - 1] > d:
                        ids[pos] = ids[pos - 1]
                        dists[pos] = dists[pos - 1]
                        expd[pos] = expd[pos - 1]
                        pos -= 1
                    ids[pos] = nb
                    dists[pos] = d
                    expd[pos] = False
                    if pos < cur:
                        cur = pos
                    j = size - 1
                    while codes[ids[j]] != c:
                        j -= 1
                    gw[c] = dists[j]
            else:
                if size == L:
                    size -= 1
                    c2 = codes[ids[size]]
                    cnt[c2] -= 1
                    gw[c2] = np.inf
                pos = size
                while pos > 0 and dists[pos - 1] > d:
                    ids[pos] = ids[pos - 1]
                    dists[pos] = dists[pos - 1]
                    expd[pos] = expd[pos - 1]
                    pos -= 1
                ids[pos] = nb
                dists[pos] = d
                expd[pos] = False
                size += 1
                cnt[c] += 1
                if pos < cur:
                    cur = pos
                if cnt[c] >= cap:
                    j = size - 1
                    while codes[ids[j]] != c:
                        j -= 1
                    gw[c] = dists[j]
            # --- the answer pool: the same rule, k entries, k' per group ---
            if pool_k == 0 or (pool_size == pool_k and d >= p_dists[pool_size - 1]):
                pass
            elif p_cnt[c] >= pool_kp:
                if d < p_gw[c]:
                    j = pool_size - 1
                    while codes[p_ids[j]] != c:
                        j -= 1
                    pos = j
                    while pos > 0 and p_dists[pos - 1] > d:
                        p_ids[pos] = p_ids[pos - 1]
                        p_dists[pos] = p_dists[pos - 1]
                        pos -= 1
                    p_ids[pos] = nb
                    p_dists[pos] = d
                    j = pool_size - 1
                    while codes[p_ids[j]] != c:
                        j -= 1
                    p_gw[c] = p_dists[j]
            else:
                if pool_size == pool_k:
                    pool_size -= 1
                    c2 = codes[p_ids[pool_size]]
                    p_cnt[c2] -= 1
                    p_gw[c2] = np.inf
                pos = pool_size
                while pos > 0 and p_dists[pos - 1] > d:
                    p_ids[pos] = p_ids[pos - 1]
                    p_dists[pos] = p_dists[pos - 1]
                    pos -= 1
                p_ids[pos] = nb
                p_dists[pos] = d
                pool_size += 1
                p_cnt[c] += 1
                if p_cnt[c] >= pool_kp:
                    j = pool_size - 1
                    while codes[p_ids[j]] != c:
                        j -= 1
                    p_gw[c] = p_dists[j]
        only_entry = False
        while cur < size and expd[cur]:
            cur += 1
        if cur >= size:
            break
        expd[cur] = True
        node = ids[cur]
        if n_exp < exp_out.shape[0]:
            exp_out[n_exp] = node
        n_exp += 1
    # gw and p_gw are inf again on exit (cnt and p_cnt are the caller's)
    for t in range(size):
        gw[codes[ids[t]]] = np.inf
    for t in range(pool_size):
        p_gw[codes[p_ids[t]]] = np.inf
    return size, n_exp, n_dist, pool_size


@jit
def _truncate(ids, dists, size, codes, cnt, k, kprime, out_i, out_d):
    """Greedy filter of a sorted list: at most ``kprime`` per group, ``k`` in all.

    ``cnt`` must be zero for every group in the list; it is zero again on exit.
    Unfilled slots get index -1 and distance inf.
    """
    taken = 0
    for t in range(size):
        if taken == k:
            break
        c = codes[ids[t]]
        if cnt[c] < kprime:
            cnt[c] += 1
            out_i[taken] = ids[t]
            out_d[taken] = dists[t]
            taken += 1
    for t in range(size):
        cnt[codes[ids[t]]] = 0
    for t in range(taken, k):
        out_i[t] = -1
        out_d[t] = np.inf
    return taken


# ---------------------------------------------------------------------------
# search
# ---------------------------------------------------------------------------


@jit(parallel=True, fastmath=_FAST)
def graph_search(
    data,
    codes,
    n_codes,
    indptr,
    flat,
    entries,
    Q,
    self_points,
    k,
    kprime,
    L,
    cap,
    use_pool,
    visited,
    epoch,
):
    """Diverse (or, with ``cap >= L``, plain) graph search for every query.

    The graph is CSR (``indptr``, ``flat``). ``visited`` is a scratch array
    of shape (n_chunks, n) holding epoch stamps below ``epoch`` (no clearing:
    the caller resets it before the stamps would wrap); query ``qi`` of a
    chunk uses stamp ``epoch + qi - lo``. The queries are split into
    ``n_chunks`` contiguous chunks run in parallel.

    Returns ``(indices, sqdists, n_dist)``: the top ``k`` with at most
    ``kprime`` per group, and the distance evaluations of each query. With
    ``use_pool`` the answer is the diverse top-k of *every* evaluated point
    (kept on the fly, no extra distance); without it, the greedy filter of
    the final queue (the two-stage baseline).
    """
    nq = Q.shape[0]
    out_i = np.empty((nq, k), dtype=np.int64)
    out_d = np.empty((nq, k), dtype=np.float32)
    n_dist = np.zeros(nq, dtype=np.int64)
    n_chunks = max(1, min(nq, visited.shape[0]))
    start = indptr[:-1]
    deg = indptr[1:] - indptr[:-1]
    max_deg = 0
    for i in range(deg.shape[0]):
        max_deg = max(max_deg, deg[i])
    for ch in prange(n_chunks):
        vis = visited[ch]
        ids = np.empty(L + 1, dtype=np.int64)
        dists = np.empty(L + 1, dtype=np.float32)
        expd = np.zeros(L + 1, dtype=np.bool_)
        cnt = np.zeros(n_codes, dtype=np.int64)
        gw = np.full(n_codes, np.inf, dtype=np.float32)
        buf = np.empty(max(entries.shape[0], max_deg), dtype=np.int64)
        exp_out = np.empty(0, dtype=np.int64)
        pk = k if use_pool else 0
        p_ids = np.empty(k + 1, dtype=np.int64)
        p_dists = np.empty(k + 1, dtype=np.float32)
        p_cnt = np.zeros(n_codes, dtype=np.int64)
        p_gw = np.full(n_codes, np.inf, dtype=np.float32)
        pool = (pk, kprime, p_ids, p_dists, p_gw, p_cnt)
        lo = ch * nq // n_chunks
        hi = (ch + 1) * nq // n_chunks
        for qi in range(lo, hi):
            stamp = np.uint32(epoch + qi - lo)
            size, _, nd, psize = _greedy_search(
                data, Q[qi], codes, start, deg, flat, entries, self_points[qi], L,
                cap, vis, stamp, ids, dists, expd, cnt, gw, buf, exp_out, pool,
            )  # fmt: skip
            n_dist[qi] = nd
            for t in range(size):
                cnt[codes[ids[t]]] = 0
            if use_pool:
                for t in range(psize):
                    p_cnt[codes[p_ids[t]]] = 0
                for t in range(k):
                    if t < psize:
                        out_i[qi, t] = p_ids[t]
                        out_d[qi, t] = p_dists[t]
                    else:
                        out_i[qi, t] = -1
                        out_d[qi, t] = np.inf
            else:
                _truncate(ids, dists, size, codes, cnt, k, kprime, out_i[qi], out_d[qi])
    return out_i, out_d, n_dist


@jit(parallel=True)
def greedy_filter(cand_i, codes, n_codes, k, kprime, n_chunks):
    """Greedy filter of candidate lists sorted by distance (``-1`` is padding).

    Keeps each candidate unless its group already has ``kprime``, until ``k``
    are kept: the second stage of the two-stage baseline (used on other
    libraries' candidate lists in the benchmark).
    """
    nq, r = cand_i.shape
    out_i = np.empty((nq, k), dtype=np.int64)
    n_chunks = max(1, min(nq, n_chunks))
    for ch in prange(n_chunks):
        cnt = np.zeros(n_codes, dtype=np.int64)
        lo = ch * nq // n_chunks
        hi = (ch + 1) * nq // n_chunks
        for qi in range(lo, hi):
            taken = 0
            for t in range(r):
                if taken == k:
                    break
                p = cand_i[qi, t]
                if p < 0:
                    continue
                c = codes[p]
                if cnt[c] < kprime:
                    cnt[c] += 1
                    out_i[qi, taken] = p
                    taken += 1
            for t in range(r):
                if cand_i[qi, t] >= 0:
                    cnt[codes[cand_i[qi, t]]] = 0
            for t in range(taken, k):
                out_i[qi, t] = -1
    return out_i


# ---------------------------------------------------------------------------
# build (DiverseIndex = DiskANN fast build with DiverseSearch and DiversePrune)
# ---------------------------------------------------------------------------


@jit(fastmath=_FAST)
def _prune(cand, cand_d, ncand, data, codes, alpha2, R, m, out, blk, nblk, removed):
    """DiversePrune of one node; ``cand`` sorted by ``cand_d`` (distance to p).

    With ``m <= 1`` this is DiskANN's RobustPrune. Returns the out-degree.
    """
    for j in range(ncand):
        nblk[j] = 0
        removed[j] = False
    cnt = 0
    for i in range(ncand):
        if removed[i]:
            continue
        u = cand[i]
        out[cnt] = u
        cnt += 1
        if cnt == R:
            break
        cu = codes[u]
        for j in range(i + 1, ncand):
            if removed[j]:
                continue
            w = cand[j]
            if alpha2 * _sqdist_rows(data, u, w) <= cand_d[j]:
                if m <= 1 or codes[w] == cu:
                    removed[j] = True
                    continue
                seen = False
                for t in range(nblk[j]):
                    if blk[j * m + t] == cu:
                        seen = True
                        break
                if not seen:
                    blk[j * m + nblk[j]] = cu
                    nblk[j] += 1
                    if nblk[j] >= m:
                        removed[j] = True
    return cnt


@jit
def _sort_candidates(cand, cand_d, ncand):
    order = np.argsort(cand_d[:ncand], kind="mergesort")
    c2 = cand[:ncand][order].copy()
    d2 = cand_d[:ncand][order].copy()
    cand[:ncand] = c2
    cand_d[:ncand] = d2


@jit(parallel=True, fastmath=_FAST)
def build_batch(
    data,
    codes,
    n_codes,
    adj,
    deg,
    entry,
    batch,
    L,
    cap,
    R,
    alpha2,
    m,
    max_cand,
    n_chunks,
):
    """Search and prune every point of ``batch`` against the current graph.

    Reads ``adj``/``deg`` only; returns the new out-lists ``(new_adj, new_deg)``
    of the batch points, one row each.
    """
    nb = batch.shape[0]
    n = data.shape[0]
    new_adj = np.empty((nb, R), dtype=np.int32)
    new_deg = np.zeros(nb, dtype=np.int32)
    start = np.arange(n) * R
    flat = adj.ravel()
    n_chunks = max(1, min(nb, n_chunks))
    ents = np.full(1, entry, dtype=np.int64)
    for ch in prange(n_chunks):
        visited = np.zeros(n, dtype=np.int32)
        ids = np.empty(L + 1, dtype=np.int64)
        dists = np.empty(L + 1, dtype=np.float32)
        expd = np.zeros(L + 1, dtype=np.bool_)
        cnt = np.zeros(n_codes, dtype=np.int64)
        exp_out = np.empty(max_cand, dtype=np.int64)
        cand = np.empty(max_cand + L, dtype=np.int64)
        cand_d = np.empty(max_cand + L, dtype=np.float32)
        out = np.empty(R, dtype=np.int64)
        blk = np.empty((max_cand + L) * max(m, 1), dtype=np.int64)
        nblk = np.empty(max_cand + L, dtype=np.int64)
        removed = np.empty(max_cand + L, dtype=np.bool_)
        gw = np.full(n_codes, np.inf, dtype=np.float32)
        buf = np.empty(max(R, 1), dtype=np.int64)
        no_pool = (0, 1, ids, dists, gw, cnt)
        lo = ch * nb // n_chunks
        hi = (ch + 1) * nb // n_chunks
        for bi in range(lo, hi):
            p = batch[bi]
            stamp = bi - lo + 1
            q = data[p]
            size, n_exp, _, _ = _greedy_search(
                data, q, codes, start, deg, flat, ents, -1, L, cap, visited,
                stamp, ids, dists, expd, cnt, gw, buf, exp_out, no_pool,
            )  # fmt: skip
            for t in range(size):
                cnt[codes[ids[t]]] = 0
            # candidates: the expanded nodes (the final queue is all expanded)
            ncand = 0
            for t in range(min(n_exp, max_cand)):
                v = exp_out[t]
                if v != p:
                    cand[ncand] = v
                    cand_d[ncand] = _sqdist(data, v, q)
                    ncand += 1
            _sort_candidates(cand, cand_d, ncand)
            dcount = _prune(
                cand, cand_d, ncand, data, codes, alpha2, R, m, out, blk, nblk, removed
            )
            for t in range(dcount):
                new_adj[bi, t] = out[t]
            new_deg[bi] = dcount
    return new_adj, new_deg


@jit(parallel=True, fastmath=_FAST)
def add_reverse_edges(
    data, codes, adj, deg, targets, t_ptr, sources, alpha2, R, m, n_chunks
):
    """Add edges ``target -> source`` (grouped by target); re-prune overflows.

    ``sources[t_ptr[j]:t_ptr[j+1]]`` are the new in-neighbours of
    ``targets[j]``. A node whose degree would exceed ``R`` is re-pruned with the
    same (diverse) rule, so the reverse edges keep the build's property.
    """
    nt = targets.shape[0]
    n_chunks = max(1, min(nt, n_chunks))
    for ch in prange(n_chunks):
        size_max = R + 1
        for j in range(nt):
            w = t_ptr[j + 1] - t_ptr[j]
            if R + w > size_max:
                size_max = R + w
        cand = np.empty(size_max, dtype=np.int64)
        cand_d = np.empty(size_max, dtype=np.float32)
        out = np.empty(R, dtype=np.int64)
        blk = np.empty(size_max * max(m, 1), dtype=np.int64)
        nblk = np.empty(size_max, dtype=np.int64)
        removed = np.empty(size_max, dtype=np.bool_)
        lo = ch * nt // n_chunks
        hi = (ch + 1) * nt // n_chunks
        for j in range(lo, hi):
            u = targets[j]
            ncand = 0
            for t in range(deg[u]):
                cand[ncand] = adj[u, t]
                ncand += 1
            for s in range(t_ptr[j], t_ptr[j + 1]):
                v = sources[s]
                dup = False
                for t in range(ncand):
                    if cand[t] == v:
                        dup = True
                        break
                if not dup and v != u:
                    cand[ncand] = v
                    ncand += 1
            if ncand <= R:
                for t in range(ncand):
                    adj[u, t] = cand[t]
                deg[u] = ncand
                continue
            for t in range(ncand):
                cand_d[t] = _sqdist_rows(data, u, cand[t])
            _sort_candidates(cand, cand_d, ncand)
            dcount = _prune(
                cand, cand_d, ncand, data, codes, alpha2, R, m, out, blk, nblk, removed
            )
            for t in range(dcount):
                adj[u, t] = out[t]
            deg[u] = dcount


@jit
def _mark_reachable(adj, deg, root, reached, tree, stack):
    """Mark every node reachable from ``root``; returns how many were new.

    The edges of the depth-first tree are flagged in ``tree`` (shape of
    ``adj``): as long as they stay, every marked node stays reachable.
    """
    if reached[root]:
        return 0
    reached[root] = True
    stack[0] = root
    top = 1
    count = 1
    while top > 0:
        top -= 1
        u = stack[top]
        for t in range(deg[u]):
            v = adj[u, t]
            if not reached[v]:
                reached[v] = True
                tree[u, t] = True
                stack[top] = v
                top += 1
                count += 1
    return count


@jit(fastmath=_FAST)
def repair_reachability(data, codes, n_codes, adj, deg, entry, L):
    """Make every node reachable from ``entry``; returns ``(n_before, n_edges)``.

    ``n_before`` is the number of nodes the build left unreachable. For each
    unreachable node ``v`` (in index order) a greedy search for ``v`` from the
    entry finds reachable nodes near it; the nearest expanded one with a free
    slot gets the edge ``u -> v`` (the edge an insertion of ``v`` would have
    asked for), and everything reachable from ``v`` is marked reached. When
    every expanded node is full, the nearest one gives up an edge that is not
    on the spanning tree of the reached nodes (toward the target of largest
    in-degree), so no reached node is cut off: one pass suffices.
    """
    n, R = adj.shape
    start = np.arange(n) * R
    flat = adj.reshape(-1)
    reached = np.zeros(n, dtype=np.bool_)
    tree = np.zeros((n, R), dtype=np.bool_)
    stack = np.empty(n, dtype=np.int64)
    n_before = n - _mark_reachable(adj, deg, entry, reached, tree, stack)
    if n_before == 0:
        return 0, 0
    indeg = np.zeros(n, dtype=np.int64)
    for u in range(n):
        for t in range(deg[u]):
            indeg[adj[u, t]] += 1
    visited = np.zeros(n, dtype=np.int32)
    ids = np.empty(L + 1, dtype=np.int64)
    dists = np.empty(L + 1, dtype=np.float32)
    expd = np.zeros(L + 1, dtype=np.bool_)
    cnt = np.zeros(n_codes, dtype=np.int64)
    max_exp = 8 * L + 64
    exp_out = np.empty(max_exp, dtype=np.int64)
    gw = np.full(n_codes, np.inf, dtype=np.float32)
    buf = np.empty(max(adj.shape[1], 1), dtype=np.int64)
    no_pool = (0, 1, ids, dists, gw, cnt)
    ents = np.full(1, entry, dtype=np.int64)
    n_edges = 0
    stamp = 0
    for v in range(n):
        if reached[v]:
            continue
        stamp += 1
        size, n_exp, _, _ = _greedy_search(
            data, data[v], codes, start, deg, flat, ents, -1, L, L, visited,
            stamp, ids, dists, expd, cnt, gw, buf, exp_out, no_pool,
        )  # fmt: skip
        for t in range(size):
            cnt[codes[ids[t]]] = 0
        free, free_d, full, full_slot, full_d = -1, np.inf, -1, -1, np.inf
        for t in range(min(n_exp, max_exp)):
            u = exp_out[t]  # reached: the search walks the graph from the entry
            d = _sqdist_rows(data, u, v)
            if deg[u] < R:
                if d < free_d:
                    free, free_d = u, d
            elif d < full_d:
                slot, slot_in = -1, -1
                for j in range(R):
                    if not tree[u, j] and indeg[adj[u, j]] > slot_in:
                        slot, slot_in = j, indeg[adj[u, j]]
                if slot >= 0:
                    full, full_slot, full_d = u, slot, d
        if free >= 0:
            u, t = free, deg[free]
            deg[u] += 1
        elif full >= 0:
            u, t = full, full_slot
            indeg[adj[u, t]] -= 1
        else:
            raise RuntimeError("could not make every point reachable from the entry")
        adj[u, t] = v
        tree[u, t] = True
        indeg[v] += 1
        n_edges += 1
        _mark_reachable(adj, deg, v, reached, tree, stack)
    return n_before, n_edges


# ---------------------------------------------------------------------------
# exact (brute-force) diverse top-k
# ---------------------------------------------------------------------------


@jit
def _diverse_topk_row(
    D, codes, k, kprime, skip, cbuf_d, cbuf_i, ccnt, touched, out_i, out_d
):
    """Exact greedy answer of one row of distances ``D``.

    Keeps the ``kprime`` nearest points of each group (ties to the smaller
    index), then the ``k`` nearest of those. That is the greedy scan by
    distance, which is optimal for the partition-matroid constraint.
    """
    n = D.shape[0]
    nt = 0
    for j in range(n):
        if j == skip:
            continue
        d = D[j]
        if d != d:  # NaN distances never qualify
            continue
        c = codes[j]
        base = c * kprime
        m = ccnt[c]
        if m == 0:
            touched[nt] = c
            nt += 1
        if m < kprime:
            pos = m
            ccnt[c] = m + 1
        elif d < cbuf_d[base + kprime - 1]:
            pos = kprime - 1
        else:
            continue
        while pos > 0 and cbuf_d[base + pos - 1] > d:
            cbuf_d[base + pos] = cbuf_d[base + pos - 1]
            cbuf_i[base + pos] = cbuf_i[base + pos - 1]
            pos -= 1
        cbuf_d[base + pos] = d
        cbuf_i[base + pos] = j
    taken = 0
    for a in range(nt):
        c = touched[a]
        base = c * kprime
        for b in range(ccnt[c]):
            d = cbuf_d[base + b]
            i = cbuf_i[base + b]
            if taken == k and (
                d > out_d[k - 1] or (d == out_d[k - 1] and i > out_i[k - 1])
            ):
                break  # later entries of this group are farther still
            pos = taken if taken < k else k - 1
            if taken < k:
                taken += 1
            while pos > 0 and (
                out_d[pos - 1] > d or (out_d[pos - 1] == d and out_i[pos - 1] > i)
            ):
                out_d[pos] = out_d[pos - 1]
                out_i[pos] = out_i[pos - 1]
                pos -= 1
            out_d[pos] = d
            out_i[pos] = i
        ccnt[c] = 0
    for t in range(taken, k):
        out_i[t] = -1
        out_d[t] = np.inf
    return taken


@jit(parallel=True)
def diverse_topk(D, codes, n_codes, k, kprime, skip, n_chunks):
    """Exact diverse top-k of each row of a distance block ``D`` (nq, n).

    ``skip[i] >= 0`` leaves that column out of row ``i``.
    """
    nq = D.shape[0]
    out_i = np.empty((nq, k), dtype=np.int64)
    out_d = np.empty((nq, k), dtype=D.dtype)
    n_chunks = max(1, min(nq, n_chunks))
    for ch in prange(n_chunks):
        cbuf_d = np.empty(n_codes * kprime, dtype=D.dtype)
        cbuf_i = np.empty(n_codes * kprime, dtype=np.int64)
        ccnt = np.zeros(n_codes, dtype=np.int64)
        touched = np.empty(n_codes, dtype=np.int64)
        lo = ch * nq // n_chunks
        hi = (ch + 1) * nq // n_chunks
        for qi in range(lo, hi):
            _diverse_topk_row(
                D[qi],
                codes,
                k,
                kprime,
                skip[qi],
                cbuf_d,
                cbuf_i,
                ccnt,
                touched,
                out_i[qi],
                out_d[qi],
            )
    return out_i, out_d


# ---------------------------------------------------------------------------
# numba.cuda: batched brute-force diverse top-k, one thread per query
# ---------------------------------------------------------------------------


@cuda_jit
def _diverse_topk_cuda(
    data, Q, codes, k, kprime, cbuf_d, cbuf_i, ccnt, touched, out_i, out_d
):
    qi = cuda.grid(1)
    if qi >= Q.shape[0]:
        return
    n = data.shape[0]
    nt = 0
    for j in range(n):
        d = 0.0
        for t in range(data.shape[1]):
            diff = data[j, t] - Q[qi, t]
            d += diff * diff
        c = codes[j]
        base = c * kprime
        m = ccnt[qi, c]
        if m == 0:
            touched[qi, nt] = c
            nt += 1
        if m < kprime:
            pos = m
            ccnt[qi, c] = m + 1
        elif d < cbuf_d[qi, base + kprime - 1]:
            pos = kprime - 1
        else:
            continue
        while pos > 0 and cbuf_d[qi, base + pos - 1] > d:
            cbuf_d[qi, base + pos] = cbuf_d[qi, base + pos - 1]
            cbuf_i[qi, base + pos] = cbuf_i[qi, base + pos - 1]
            pos -= 1
        cbuf_d[qi, base + pos] = d
        cbuf_i[qi, base + pos] = j
    taken = 0
    for a in range(nt):
        c = touched[qi, a]
        base = c * kprime
        for b in range(ccnt[qi, c]):
            d = cbuf_d[qi, base + b]
            i = cbuf_i[qi, base + b]
            if taken == k:
                last_d = out_d[qi, k - 1]
                if d > last_d or (d == last_d and i > out_i[qi, k - 1]):
                    break
            pos = taken
            if taken < k:
                taken += 1
            else:
                pos = k - 1
            while pos > 0 and (
                out_d[qi, pos - 1] > d
                or (out_d[qi, pos - 1] == d and out_i[qi, pos - 1] > i)
            ):
                out_d[qi, pos] = out_d[qi, pos - 1]
                out_i[qi, pos] = out_i[qi, pos - 1]
                pos -= 1
            out_d[qi, pos] = d
            out_i[qi, pos] = i
    for t in range(taken, k):
        out_i[qi, t] = -1
        out_d[qi, t] = math.inf


def diverse_topk_cuda(data, Q, codes, n_codes, k, kprime, threads_per_block=64):
    """Exact squared-Euclidean diverse top-k with the ``numba.cuda`` kernel.

    One GPU thread per query computes its distances on the fly and keeps the
    ``kprime`` nearest points of each group in global scratch memory, then
    merges them into the ``k`` nearest. ``data``/``Q`` may be NumPy or CUDA
    arrays (CuPy, torch); runs on the CPU under ``NUMBA_ENABLE_CUDASIM=1``.

    Returns
    -------
    indices : ndarray of shape (n_queries, k), int64, -1 for padding
    sqdists : ndarray of shape (n_queries, k), inf for padding
    """
    nq = Q.shape[0]
    if hasattr(data, "__cuda_array_interface__"):
        data = cuda.as_cuda_array(data)
    else:
        data = cuda.to_device(np.ascontiguousarray(data, dtype=np.float64))
    if hasattr(Q, "__cuda_array_interface__"):
        Q = cuda.as_cuda_array(Q)
    else:
        Q = cuda.to_device(np.ascontiguousarray(Q, dtype=np.float64))
    codes = cuda.to_device(np.ascontiguousarray(codes, dtype=np.int64))
    cbuf_d = cuda.device_array((nq, n_codes * kprime), dtype=np.float64)
    cbuf_i = cuda.device_array((nq, n_codes * kprime), dtype=np.int64)
    ccnt = cuda.to_device(np.zeros((nq, n_codes), dtype=np.int64))
    touched = cuda.device_array((nq, n_codes), dtype=np.int64)
    out_i = cuda.device_array((nq, k), dtype=np.int64)
    out_d = cuda.device_array((nq, k), dtype=np.float64)
    blocks = max(1, (nq + threads_per_block - 1) // threads_per_block)
    _diverse_topk_cuda[blocks, threads_per_block](
        data, Q, codes, k, kprime, cbuf_d, cbuf_i, ccnt, touched, out_i, out_d
    )
    return out_i.copy_to_host(), out_d.copy_to_host()
