"""Numba kernel of the exact BDD search (our reconstruction, see ``_bdd.py``).

The search builds a free binary decision diagram top-down, one inner node at
a time, in a topological order of the diagram. When a node is *processed* its
set of training rows is final (every parent is already processed), so its test
is chosen among the tests that split that set non-trivially, and each side is
sent to a sink, to a node that is already open (this is where subgraphs are
shared) or to a new node. Every arc of the diagram therefore carries at least
one training row, its *witness*; pure sides and single-row sides always go
straight to a sink (never worse). Open nodes are processed in a canonical
order (the earliest-created open node that will receive no further arc), which
removes most symmetric duplicates, and refuted states (the multiset of open
row sets, the remaining error budget) are cached with the largest number of
extra nodes known not to suffice.

All the work happens on the unique rows of the rank-encoded data, with one
count per class and row.
"""

import numpy as np
from numba import types
from numba.typed import Dict

from ..utils._backend import jit

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_WAITING = np.uint64(0x9E3779B97F4A7C15)
# refuted states kept at most (about 100 bytes each); beyond, the search goes
# on without caching new ones rather than exhausting memory
_MAX_CACHE = 4_000_000


@jit
def _mix(x):
    # splitmix64 finaliser: turns a sum of row keys into a well-spread hash
    x = (x ^ (x >> np.uint64(30))) * _M1
    x = (x ^ (x >> np.uint64(27))) * _M2
    return x ^ (x >> np.uint64(31))


@jit
def _side_stats(rows, n_rows, W, out_counts):
    """Class totals of a row set; returns (cost to its majority sink, class)."""
    n_classes = W.shape[1]
    for c in range(n_classes):
        out_counts[c] = 0
    for k in range(n_rows):
        r = rows[k]
        for c in range(n_classes):
            out_counts[c] += W[r, c]
    best = 0
    total = 0
    for c in range(n_classes):
        total += out_counts[c]
        if out_counts[c] > out_counts[best]:
            best = c
    return total - out_counts[best], best


@jit
def _rec(
    Xr,
    W,
    n_values,
    keys,
    s_cap,
    t_cap,
    share,
    max_nodes,
    cache,
    node_of,
    status,
    wait,
    sethash,
    feat,
    thr_lo,
    thr_hi,
    left,
    right,
    ctr,
):
    # ctr = [n_created, n_errors, n_search_nodes, timed_out]
    ctr[2] += 1
    if ctr[3] != 0:
        return False
    if max_nodes > 0 and ctr[2] > max_nodes:
        ctr[3] = 1
        return False
    used = ctr[0]
    h = np.uint64(0)
    any_open = False
    for v in range(used):
        if status[v] == 1:
            any_open = True
            if wait[v]:
                h += _mix(sethash[v] ^ _WAITING)
            else:
                h += _mix(sethash[v])
    if not any_open:
        return True
    t_rem = t_cap - ctr[1]
    key = _mix(h + np.uint64(t_rem) * _M2 + np.uint64(1 if share else 2))
    cap = s_cap - used
    if key in cache:
        if cache[key] >= cap:
            return False

    m, d = Xr.shape
    n_classes = W.shape[1]
    rows = np.empty(m, np.int64)
    lrows = np.empty(m, np.int64)
    rrows = np.empty(m, np.int64)
    counts = np.empty(n_classes, np.int64)
    max_d = 1
    for f in range(d):
        if n_values[f] > max_d:
            max_d = n_values[f]
    present = np.zeros(max_d, np.bool_)
    seen = np.empty(max_d * d + 1, np.uint64)
    dests_l = np.empty(s_cap + 2, np.int64)
    dests_r = np.empty(s_cap + 2, np.int64)
    set_wait = np.zeros(s_cap, np.bool_)

    # lower bound: the last node processed must send both sides to sinks, and
    # a node whose rows no single test resolves (within the error budget)
    # stays so when more rows arrive; in a tree each such node needs a child
    n_hard = 0
    if cap == 0 or not share:
        cum = np.zeros((max_d, n_classes), np.int64)
        for v in range(used):
            if status[v] != 1:
                continue
            n_s = 0
            for r in range(m):
                if node_of[r] == v:
                    rows[n_s] = r
                    n_s += 1
            if _best_split_cost(Xr, W, n_values, rows, n_s, cum, counts) > t_rem:
                n_hard += 1
        if share:
            if n_hard == used - _n_closed(status, used):
                n_hard = 1
            else:
                n_hard = 0
    if n_hard > cap:
        if len(cache) < _MAX_CACHE:
            cache[key] = cap
        return False

    for u in range(used):
        if status[u] != 1 or wait[u]:
            continue
        n_s = 0
        for r in range(m):
            if node_of[r] == u:
                rows[n_s] = r
                n_s += 1
        cost_s, _ = _side_stats(rows, n_s, W, counts)
        if cost_s > 0 and n_s > 1:
            status[u] = 2
            n_seen = 0
            for f in range(d):
                if n_values[f] < 2:
                    continue
                for k in range(n_values[f]):
                    present[k] = False
                for k in range(n_s):
                    present[Xr[rows[k], f]] = True
                a = -1
                for b in range(n_values[f]):
                    if not present[b]:
                        continue
                    if a < 0:
                        a = b
                        continue
                    # the test x[f] <= a separates a | b (consecutive present values)
                    nl = 0
                    nr = 0
                    hl = np.uint64(0)
                    hr = np.uint64(0)
                    for k in range(n_s):
                        r = rows[k]
                        if Xr[r, f] <= a:
                            lrows[nl] = r
                            nl += 1
                            hl += keys[r]
                        else:
                            rrows[nr] = r
                            nr += 1
                            hr += keys[r]
                    hcanon = hl if Xr[rows[0], f] <= a else hr
                    dup = False
                    for k in range(n_seen):
                        if seen[k] == hcanon:
                            dup = True
                            break
                    a_old = a
                    a = b
                    if dup:
                        continue
                    seen[n_seen] = hcanon
                    n_seen += 1
                    cost_l, cls_l = _side_stats(lrows, nl, W, counts)
                    cost_r, cls_r = _side_stats(rrows, nr, W, counts)
                    # destinations: -1 sink, >= 0 open node, used / used+1 new
                    n_dl = _dest_options(
                        cost_l, nl, t_rem, share, status, used, u, dests_l
                    )
                    n_dr = _dest_options(
                        cost_r, nr, t_rem, share, status, used, u, dests_r
                    )
                    for il in range(n_dl):
                        dl = dests_l[il]
                        for ir in range(n_dr):
                            dr = dests_r[ir]
                            if dl == -1 and dr == -1:
                                if cls_l == cls_r:
                                    continue
                                if cost_l + cost_r > t_rem:
                                    continue
                            elif dl == -1:
                                if cost_l > t_rem:
                                    continue
                            elif dr == -1:
                                if cost_r > t_rem:
                                    continue
                            # a new right node gets the next free index
                            if dr == used and dl == used:
                                dr = used + 1
                            if dl == dr and dl >= 0:
                                continue
                            n_new = 0
                            if dl >= used:
                                n_new += 1
                            if dr >= used:
                                n_new += 1
                            if used + n_new > s_cap:
                                continue
                            # apply: route both sides, recurse, undo
                            wl = False
                            wr = False
                            err = 0
                            for side in range(2):
                                dest = dl if side == 0 else dr
                                srows = lrows if side == 0 else rrows
                                ns = nl if side == 0 else nr
                                hs = hl if side == 0 else hr
                                if dest == -1:
                                    err += cost_l if side == 0 else cost_r
                                    for k in range(ns):
                                        node_of[srows[k]] = -1
                                else:
                                    if dest >= used:
                                        status[dest] = 1
                                        wait[dest] = False
                                        sethash[dest] = np.uint64(0)
                                    elif side == 0:
                                        wl = wait[dest]
                                    else:
                                        wr = wait[dest]
                                    wait[dest] = False
                                    sethash[dest] += hs
                                    for k in range(ns):
                                        node_of[srows[k]] = dest
                            feat[u] = f
                            thr_lo[u] = a_old
                            thr_hi[u] = b
                            left[u] = dl if dl >= 0 else -(cls_l + 1)
                            right[u] = dr if dr >= 0 else -(cls_r + 1)
                            ctr[0] = used + n_new
                            ctr[1] += err
                            if _rec(
                                Xr,
                                W,
                                n_values,
                                keys,
                                s_cap,
                                t_cap,
                                share,
                                max_nodes,
                                cache,
                                node_of,
                                status,
                                wait,
                                sethash,
                                feat,
                                thr_lo,
                                thr_hi,
                                left,
                                right,
                                ctr,
                            ):
                                return True
                            ctr[0] = used
                            ctr[1] -= err
                            for side in range(1, -1, -1):
                                dest = dl if side == 0 else dr
                                srows = lrows if side == 0 else rrows
                                ns = nl if side == 0 else nr
                                hs = hl if side == 0 else hr
                                for k in range(ns):
                                    node_of[srows[k]] = u
                                if dest >= 0:
                                    sethash[dest] -= hs
                                    if dest >= used:
                                        status[dest] = 0
                                        wait[dest] = False
                                    else:
                                        wait[dest] = wl if side == 0 else wr
                            if ctr[3] != 0:
                                return False
            status[u] = 1
        if not share:
            break
        # processing a later node first means u must still receive an arc
        wait[u] = True
        set_wait[u] = True
    for v in range(s_cap):
        if set_wait[v]:
            wait[v] = False
    if ctr[3] == 0:
        if key in cache:
            if cache[key] < cap:
                cache[key] = cap
        elif len(cache) < _MAX_CACHE:
            cache[key] = cap
    return False


@jit
def _n_closed(status, used):
    k = 0
    for v in range(used):
        if status[v] == 2:
            k += 1
    return k


@jit
def _best_split_cost(Xr, W, n_values, rows, n_s, cum, total):
    """Fewest errors of one test whose two sides go to their majority sinks."""
    n_classes = W.shape[1]
    for c in range(n_classes):
        total[c] = 0
    for k in range(n_s):
        for c in range(n_classes):
            total[c] += W[rows[k], c]
    n_all = 0
    best_all = 0
    for c in range(n_classes):
        n_all += total[c]
        if total[c] > best_all:
            best_all = total[c]
    best = n_all - best_all  # no split at all
    for f in range(Xr.shape[1]):
        nv = n_values[f]
        if nv < 2:
            continue
        for k in range(nv):
            for c in range(n_classes):
                cum[k, c] = 0
        for k in range(n_s):
            r = rows[k]
            for c in range(n_classes):
                cum[Xr[r, f], c] += W[r, c]
        for k in range(1, nv):
            for c in range(n_classes):
                cum[k, c] += cum[k - 1, c]
        for k in range(nv - 1):
            n_left = 0
            max_left = 0
            max_right = 0
            for c in range(n_classes):
                lc = cum[k, c]
                rc = total[c] - lc
                n_left += lc
                if lc > max_left:
                    max_left = lc
                if rc > max_right:
                    max_right = rc
            cost = (n_left - max_left) + (n_all - n_left - max_right)
            if cost < best:
                best = cost
    return best


@jit
def _dest_options(cost, n_rows, t_rem, share, status, used, u, out):
    n = 0
    if cost == 0 or n_rows == 1:
        # pure or unsplittable sides go to their majority sink (never worse)
        out[0] = -1
        return 1
    if cost <= t_rem:
        out[n] = -1
        n += 1
    if share:
        for v in range(used):
            if v != u and status[v] == 1:
                out[n] = v
                n += 1
    out[n] = used
    n += 1
    return n


@jit
def _search(Xr, W, n_values, keys, s_cap, t_cap, share, max_nodes, cache, ctr):
    """Is there a diagram with <= ``s_cap`` inner nodes and <= ``t_cap`` errors?

    ``s_cap >= 1``. Returns ``(found, feat, thr_lo, thr_hi, left, right)``; the
    node arrays hold the diagram when found (node 0 is the root; a negative
    child ``-(c + 1)`` is the sink of class ``c``). ``ctr`` (int64, length 4)
    receives ``[n_nodes, n_errors, n_search_nodes, timed_out]``.
    """
    m = Xr.shape[0]
    node_of = np.zeros(m, np.int64)
    status = np.zeros(s_cap, np.int8)
    wait = np.zeros(s_cap, np.bool_)
    sethash = np.zeros(s_cap, np.uint64)
    feat = np.full(s_cap, -1, np.int64)
    thr_lo = np.zeros(s_cap, np.int64)
    thr_hi = np.zeros(s_cap, np.int64)
    left = np.zeros(s_cap, np.int64)
    right = np.zeros(s_cap, np.int64)
    status[0] = 1
    for r in range(m):
        sethash[0] += keys[r]
    ctr[0] = 1
    ctr[1] = 0
    ctr[3] = 0
    found = _rec(
        Xr,
        W,
        n_values,
        keys,
        s_cap,
        t_cap,
        share,
        max_nodes,
        cache,
        node_of,
        status,
        wait,
        sethash,
        feat,
        thr_lo,
        thr_hi,
        left,
        right,
        ctr,
    )
    return found, feat, thr_lo, thr_hi, left, right


@jit
def _new_cache():
    """An empty refutation cache (built in compiled code, so it is cached too)."""
    return Dict.empty(key_type=types.uint64, value_type=types.int64)
