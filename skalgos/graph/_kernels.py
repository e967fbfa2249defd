"""Kernels for the maximum independent set family.

Two kinds live here:

* Numba CPU kernels on a CSR adjacency (``indptr``, ``indices``): the batched
  MIS check, the min-degree greedy and the priority greedy used to round a
  relaxed point to a maximal independent set. They are ``O(n + |E|)`` per mask.
* Array-API functions for the pCQO update (gradient, momentum step, the
  matching MIS check on dense adjacency), written against a namespace ``xp``
  so that NumPy, torch, CuPy and array-api-strict run the same code.
"""

import numpy as np
from numba import prange

from ..utils._backend import jit

# ---------------------------------------------------------------------------
# Numba kernels on CSR graphs
# ---------------------------------------------------------------------------


@jit(parallel=True)
def _check_masks(indptr, indices, masks, independent, maximal):
    """For each row of ``masks`` (uint8, 0/1), test independence and maximality."""
    n_masks, n = masks.shape
    for b in prange(n_masks):
        ind = True
        mx = True
        for i in range(n):
            hit = False
            for k in range(indptr[i], indptr[i + 1]):
                if masks[b, indices[k]]:
                    hit = True
                    break
            if masks[b, i]:
                if hit:
                    ind = False
            elif not hit:
                mx = False
            if not ind:
                break
        independent[b] = ind
        maximal[b] = ind and mx


def check_masks(indptr, indices, masks):
    """Return ``(independent, maximal)`` boolean arrays, one entry per mask row."""
    masks = np.ascontiguousarray(masks, dtype=np.uint8)
    independent = np.empty(masks.shape[0], dtype=np.bool_)
    maximal = np.empty(masks.shape[0], dtype=np.bool_)
    if masks.shape[0]:
        _check_masks(indptr, indices, masks, independent, maximal)
    return independent, maximal


@jit
def _greedy_min_degree(indptr, indices, out):
    """Min-degree greedy: take a node of minimum residual degree, delete N[v].

    Bucket queue over degrees (doubly linked lists), so the whole run is
    ``O(n + |E|)``. Ties go to the node most recently put in its bucket,
    which is deterministic. Returns the number of selected nodes written to
    ``out``.
    """
    n = indptr.shape[0] - 1
    deg = np.empty(n, dtype=np.int64)
    alive = np.ones(n, dtype=np.bool_)
    head = -np.ones(n + 1, dtype=np.int64)
    nxt = -np.ones(n, dtype=np.int64)
    prv = -np.ones(n, dtype=np.int64)
    # insert in reverse order so that, among equal degrees, node 0 is on top
    for v in range(n - 1, -1, -1):
        d = indptr[v + 1] - indptr[v]
        deg[v] = d
        nxt[v] = head[d]
        if head[d] >= 0:
            prv[head[d]] = v
        head[d] = v
    cur = 0
    count = 0
    remaining = n
    while remaining > 0:
        while head[cur] < 0:
            cur += 1
        v = head[cur]
        out[count] = v
        count += 1
        # delete v and its alive neighbours
        for step in range(-1, indptr[v + 1] - indptr[v]):
            u = v if step < 0 else indices[indptr[v] + step]
            if not alive[u]:
                continue
            alive[u] = False
            remaining -= 1
            d = deg[u]
            if prv[u] >= 0:
                nxt[prv[u]] = nxt[u]
            else:
                head[d] = nxt[u]
            if nxt[u] >= 0:
                prv[nxt[u]] = prv[u]
            # the neighbours of a deleted node lose one degree each
            for k in range(indptr[u], indptr[u + 1]):
                w = indices[k]
                if not alive[w]:
                    continue
                dw = deg[w]
                if prv[w] >= 0:
                    nxt[prv[w]] = nxt[w]
                else:
                    head[dw] = nxt[w]
                if nxt[w] >= 0:
                    prv[nxt[w]] = prv[w]
                dw -= 1
                deg[w] = dw
                prv[w] = -1
                nxt[w] = head[dw]
                if head[dw] >= 0:
                    prv[head[dw]] = w
                head[dw] = w
                if dw < cur:
                    cur = dw
    return count


def greedy_min_degree(indptr, indices):
    """Sorted node indices chosen by the min-degree greedy."""
    n = indptr.shape[0] - 1
    out = np.empty(max(n, 1), dtype=np.int64)
    count = _greedy_min_degree(indptr, indices, out) if n else 0
    return np.sort(out[:count])


@jit
def _heap_better(hk, hv, a, b):
    return hk[a] > hk[b] or (hk[a] == hk[b] and hv[a] < hv[b])


@jit
def _heap_push(hk, hv, size, key, v):
    i = size
    hk[i] = key
    hv[i] = v
    while i > 0:
        p = (i - 1) // 2
        if _heap_better(hk, hv, i, p):
            hk[i], hk[p] = hk[p], hk[i]
            hv[i], hv[p] = hv[p], hv[i]
            i = p
        else:
            break
    return size + 1


@jit
def _heap_pop(hk, hv, size):
    size -= 1
    hk[0] = hk[size]
    hv[0] = hv[size]
    i = 0
    while True:
        left = 2 * i + 1
        if left >= size:
            break
        c = left
        if left + 1 < size and _heap_better(hk, hv, left + 1, left):
            c = left + 1
        if _heap_better(hk, hv, c, i):
            hk[i], hk[c] = hk[c], hk[i]
            hv[i], hv[c] = hv[c], hv[i]
            i = c
        else:
            break
    return size


@jit
def _greedy_weighted(indptr, indices, w, out):
    """GWMIN (Sakai, Togasaki and Yamazaki, 2003): repeatedly take the node
    maximizing ``w(v) / (d(v) + 1)`` in the remaining graph and delete it and
    its neighbours. A lazy max-heap (stale entries skipped), so the run is
    ``O((n + |E|) log n)``; ties go to the smaller index."""
    n = indptr.shape[0] - 1
    deg = np.empty(n, dtype=np.int64)
    alive = np.ones(n, dtype=np.bool_)
    cap = n + indptr[n] + 1
    hk = np.empty(cap, dtype=np.float64)
    hv = np.empty(cap, dtype=np.int64)
    size = 0
    for v in range(n):
        deg[v] = indptr[v + 1] - indptr[v]
        size = _heap_push(hk, hv, size, w[v] / (deg[v] + 1.0), v)
    count = 0
    while size > 0:
        key = hk[0]
        v = hv[0]
        size = _heap_pop(hk, hv, size)
        if not alive[v] or key != w[v] / (deg[v] + 1.0):
            continue
        out[count] = v
        count += 1
        for step in range(-1, indptr[v + 1] - indptr[v]):
            u = v if step < 0 else indices[indptr[v] + step]
            if not alive[u]:
                continue
            alive[u] = False
            for k in range(indptr[u], indptr[u + 1]):
                t = indices[k]
                if alive[t]:
                    deg[t] -= 1
                    size = _heap_push(hk, hv, size, w[t] / (deg[t] + 1.0), t)
    return count


def greedy_weighted(indptr, indices, w):
    """Sorted node indices chosen by GWMIN (weight over degree plus one)."""
    n = indptr.shape[0] - 1
    out = np.empty(max(n, 1), dtype=np.int64)
    w = np.ascontiguousarray(w, dtype=np.float64)
    count = _greedy_weighted(indptr, indices, w, out) if n else 0
    return np.sort(out[:count])


@jit(parallel=True)
def _priority_greedy(indptr, indices, orders, masks):
    """Scan nodes in each row's order; keep a node if no kept neighbour.

    The result of each row is an independent set that is also maximal: a node
    left out was rejected because one of its neighbours was kept.
    """
    n_rows, n = orders.shape
    for b in prange(n_rows):
        for t in range(n):
            v = orders[b, t]
            ok = True
            for k in range(indptr[v], indptr[v + 1]):
                if masks[b, indices[k]]:
                    ok = False
                    break
            if ok:
                masks[b, v] = 1


def priority_greedy(indptr, indices, orders):
    """Masks (uint8) of the priority greedy, one row per row of ``orders``."""
    orders = np.ascontiguousarray(orders, dtype=np.int64)
    masks = np.zeros(orders.shape, dtype=np.uint8)
    if orders.size:
        _priority_greedy(indptr, indices, orders, masks)
    return masks


# ---------------------------------------------------------------------------
# pCQO on a sparse graph, batched and fused (Numba, NumPy arrays)
# ---------------------------------------------------------------------------


@jit(parallel=True)
def _pcqo_sparse_steps(indptr, indices, c, X, V, Xn, s, n_steps, a, b, lr, mom):
    """``n_steps`` projected heavy-ball steps on ``X`` of shape (n, B).

    One column per initialization, so each step is one sparse-dense product
    ``A @ X`` (each row of ``X`` is a contiguous batch of B values) fused with
    the gradient, the momentum update and the projection on the box:

    ``G = a (A X) - b (1 1^T X - X) - c``, ``V <- mom V + lr G``,
    ``X <- clip(X - V, 0, 1)``

    with ``a = gamma + gamma'``, ``b = gamma'`` and ``c`` the node weights.
    ``Xn`` is scratch of the same shape and ``s`` of shape (B,). Returns the
    array holding the final iterate (``X`` or ``Xn``).
    """
    n, B = X.shape
    one = X.dtype.type(1.0)
    zero = X.dtype.type(0.0)
    for _ in range(n_steps):
        for j in range(B):
            s[j] = zero
        for i in range(n):
            for j in range(B):
                s[j] += X[i, j]
        for i in prange(n):
            for j in range(B):
                Xn[i, j] = zero
            for k in range(indptr[i], indptr[i + 1]):
                r = indices[k]
                for j in range(B):
                    Xn[i, j] += X[r, j]
            ci = c[i]
            for j in range(B):
                x = X[i, j]
                g = a * Xn[i, j] - b * (s[j] - x) - ci
                v = mom * V[i, j] + lr * g
                V[i, j] = v
                x = x - v
                if x < zero:
                    x = zero
                elif x > one:
                    x = one
                Xn[i, j] = x
        X, Xn = Xn, X
    return X


def pcqo_sparse_steps(
    indptr, indices, c, X, V, Xn, n_steps, gamma, gamma_prime, lr, mom
):
    """Wrapper of :func:`_pcqo_sparse_steps` casting the scalars to X's dtype."""
    t = X.dtype.type
    s = np.empty(X.shape[1], dtype=X.dtype)
    return _pcqo_sparse_steps(
        indptr,
        indices,
        np.asarray(c, dtype=X.dtype),
        X,
        V,
        Xn,
        s,
        int(n_steps),
        t(gamma + gamma_prime),
        t(gamma_prime),
        t(lr),
        t(mom),
    )


# ---------------------------------------------------------------------------
# Array-API pCQO pieces
# ---------------------------------------------------------------------------


def pcqo_gradient(X, gamma, gamma_prime, *, c=1.0, W=None, A=None, A_sparse=None, xp):
    r"""Gradient of the pCQO objective for each row of ``X`` (shape (B, n)).

    :math:`\nabla f(x) = -c + \gamma A x - \gamma' \bar A x`, with ``c`` the
    node weights (a scalar or a (1, n) array; 1 for the unweighted problem).

    Exactly one way of computing the quadratic term is given:

    * ``W``: the dense matrix :math:`\gamma A - \gamma' \bar A` (the paper's
      dense form, folded into one matrix so a step costs one product);
    * ``A``: the dense adjacency; :math:`\bar A x = (1^T x) 1 - x - A x`
      is computed implicitly, without the complement matrix;
    * ``A_sparse``: a SciPy sparse adjacency (NumPy only), implicit complement,
      so a step costs ``O(B |E|)``.
    """
    if W is not None:
        return X @ W - c
    if A_sparse is not None:
        AX = (A_sparse @ X.T).T
    else:
        AX = X @ A
    s = xp.sum(X, axis=1, keepdims=True)
    return (gamma + gamma_prime) * AX - gamma_prime * (s - X) - c


def pcqo_objective(X, A, gamma, gamma_prime, *, xp):
    r"""The objective :math:`f(x)` for each row of ``X``, with dense ``A``.

    :math:`f(x) = -\sum_i x_i + \frac{\gamma}{2} x^T A x
    - \frac{\gamma'}{2} x^T \bar A x`; used by tests (finite differences).
    """
    AX = X @ A
    s = xp.sum(X, axis=1)
    xAx = xp.sum(X * AX, axis=1)
    xAbarx = s * s - xp.sum(X * X, axis=1) - xAx
    return -s + 0.5 * gamma * xAx - 0.5 * gamma_prime * xAbarx


def pcqo_step(X, V, grad, learning_rate, momentum, *, xp):
    """One heavy-ball step with projection on the box ``[0, 1]^n``.

    ``V <- m V + eta * grad``; ``X <- clip(X - V, 0, 1)``, as in the official
    solver (velocity form of momentum).
    """
    V = momentum * V + learning_rate * grad
    if isinstance(X, np.ndarray):  # NumPy: skip the wrapper's broadcasting
        X = X - V
        np.clip(X, 0.0, 1.0, out=X)
        return X, V
    X = xp.clip(X - V, 0.0, 1.0)
    return X, V


def check_masks_dense(M, A, *, xp):
    """Array-API version of :func:`check_masks` for a dense 0/1 ``A``.

    ``M`` is a (B, n) array of 0/1 floats. A row is independent when no
    selected node has a selected neighbour, and maximal when in addition every
    unselected node has one. Used on GPU namespaces and as the test reference.
    """
    hits = (M @ A) > 0.5
    sel = M > 0.5
    independent = xp.logical_not(xp.any(xp.logical_and(sel, hits), axis=1))
    covered = xp.all(xp.logical_or(sel, hits), axis=1)
    return independent, xp.logical_and(independent, covered)


# ---------------------------------------------------------------------------
# Iterated local search (Andrade, Resende and Werneck, 2012), Numba
# ---------------------------------------------------------------------------
#
# The solution is kept as in ARW's implementation: a permutation of the nodes
# whose first ``nsol`` entries are the solution, the tightness of every node
# (its number of solution neighbours) and the set of 1-tight nodes, so that a
# node enters or leaves the solution in O(degree). Every insertion and removal
# of an ILS iteration is logged, so a rejected perturbation is undone in time
# proportional to what it changed, never O(n).
#
# All state lives in arrays (``st`` rows, ``sc`` and ``fs`` scalars), so the
# search runs in chunks of iterations called from Python (which checks the
# clock between chunks: Numba has no timer) and resumes where it stopped.

# rows of ``st`` (int64, shape (13, n))
_PERM, _POS, _TIGHT, _OTL, _OTP, _QL, _QP, _CL, _CP, _AGE, _FL, _FP, _LBUF, _DL, _DP = (
    range(15)
)
N_STATE_ROWS = 15
# entries of ``sc`` (int64)
_NSOL, _NOT, _NQ, _NC, _NLOG, _LOGON, _LOGOVF, _NF, _ITER, _PLATEAU, _ND = range(11)
N_INT_SCALARS = 11
# entries of ``fs`` (float64)
_CUR, _BEST, _EPS, _WUNIT = range(4)
N_FLOAT_SCALARS = 4
# with weights, ``fs[_NBW + v]`` is the total weight of v's solution neighbours
_NBW = N_FLOAT_SCALARS
# ARW look at four random nodes and force the one out of the solution longest
_FORCE_CANDIDATES = 4


@jit(inline="always")
def _rand(rng):
    """xorshift64*: next 64-bit value; ``rng`` is a uint64 array of one."""
    x = rng[0]
    x ^= x >> np.uint64(12)
    x ^= x << np.uint64(25)
    x ^= x >> np.uint64(27)
    rng[0] = x
    return x * np.uint64(2685821657736338717)


@jit(inline="always")
def _randint(rng, m):
    """Uniform integer in ``[0, m)`` (``m >= 1``)."""
    return np.int64((_rand(rng) >> np.uint64(11)) % np.uint64(m))


@jit(inline="always")
def _random(rng):
    """Uniform float in ``[0, 1)``."""
    return np.float64(_rand(rng) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@jit(inline="always")
def _set_add(st, L, P, sc, k, v):
    if st[P, v] < 0:
        m = sc[k]
        st[L, m] = v
        st[P, v] = m
        sc[k] = m + 1


@jit(inline="always")
def _set_del(st, L, P, sc, k, v):
    p = st[P, v]
    if p >= 0:
        m = sc[k] - 1
        last = st[L, m]
        st[L, p] = last
        st[P, last] = p
        st[P, v] = -1
        sc[k] = m


@jit(inline="always")
def _set_pop_random(st, L, P, sc, k, rng):
    v = st[L, _randint(rng, sc[k])]
    _set_del(st, L, P, sc, k, v)
    return v


@jit(inline="always")
def _set_clear(st, L, P, sc, k):
    for i in range(sc[k]):
        st[P, st[L, i]] = -1
    sc[k] = 0


@jit(inline="always")
def _insol(st, sc, v):
    return st[_POS, v] < sc[_NSOL]


@jit(inline="always")
def _log(sc, log, code):
    if sc[_LOGON]:
        m = sc[_NLOG]
        if m < log.shape[0]:
            log[m] = code
            sc[_NLOG] = m + 1
        else:
            sc[_LOGOVF] = 1


@jit(inline="always")
def _mark(st, sc, best, v):
    """Track the nodes where the solution and ``best`` differ (``_DL``), so
    that saving a new best costs the number of changes, not O(n)."""
    if (st[_POS, v] < sc[_NSOL]) != (best[v] == 1):
        _set_add(st, _DL, _DP, sc, _ND, v)
    else:
        _set_del(st, _DL, _DP, sc, _ND, v)


@jit
def _add(indptr, indices, w, weighted, st, sc, fs, log, best, v):
    """Insert ``v`` (which must have no solution neighbour)."""
    p = st[_POS, v]
    m = sc[_NSOL]
    u = st[_PERM, m]
    st[_PERM, p] = u
    st[_POS, u] = p
    st[_PERM, m] = v
    st[_POS, v] = m
    sc[_NSOL] = m + 1
    fs[_CUR] += w[v]
    _set_del(st, _OTL, _OTP, sc, _NOT, v)
    wv = w[v]
    for k in range(indptr[v], indptr[v + 1]):
        u = indices[k]
        if weighted:
            fs[_NBW + u] += wv
        t = st[_TIGHT, u] + 1
        st[_TIGHT, u] = t
        if t == 1:
            _set_add(st, _OTL, _OTP, sc, _NOT, u)
        elif t == 2:
            _set_del(st, _OTL, _OTP, sc, _NOT, u)
    _mark(st, sc, best, v)
    _log(sc, log, v)


@jit
def _remove(indptr, indices, w, weighted, st, sc, fs, log, best, v):
    """Remove ``v`` from the solution; queue the nodes that may now enter."""
    p = st[_POS, v]
    m = sc[_NSOL] - 1
    u = st[_PERM, m]
    st[_PERM, p] = u
    st[_POS, u] = p
    st[_PERM, m] = v
    st[_POS, v] = m
    sc[_NSOL] = m
    fs[_CUR] -= w[v]
    _set_add(st, _QL, _QP, sc, _NQ, v)
    wv = w[v]
    eps = fs[_EPS]
    for k in range(indptr[v], indptr[v + 1]):
        u = indices[k]
        t = st[_TIGHT, u] - 1
        st[_TIGHT, u] = t
        if t == 1:
            _set_add(st, _OTL, _OTP, sc, _NOT, u)
        elif t == 0:
            _set_del(st, _OTL, _OTP, sc, _NOT, u)
            _set_add(st, _QL, _QP, sc, _NQ, u)
        if weighted:
            nb = fs[_NBW + u] - wv
            fs[_NBW + u] = nb
            # queue u only if an (omega,1)-swap may now pay
            if t > 0 and w[u] > nb + eps:
                _set_add(st, _QL, _QP, sc, _NQ, u)
    _mark(st, sc, best, v)
    _log(sc, log, -v - 1)


@jit
def _update_candidates(indptr, indices, st, sc, x):
    """Queue the solution nodes that gained a 1-tight neighbour when ``x`` left."""
    for k in range(indptr[x], indptr[x + 1]):
        t = indices[k]
        if st[_TIGHT, t] != 1 or _insol(st, sc, t):
            continue
        for kk in range(indptr[t], indptr[t + 1]):
            s = indices[kk]
            if _insol(st, sc, s):
                _set_add(st, _CL, _CP, sc, _NC, s)
                break


@jit
def _drain_queue(indptr, indices, w, weighted, st, sc, fs, log, best, rng):
    """Insert free nodes (the solution becomes maximal) and, with weights,
    apply every improving (omega, 1)-swap: insert ``v`` and drop its solution
    neighbours when ``w[v]`` exceeds their total weight."""
    while sc[_NQ] > 0:
        v = _set_pop_random(st, _QL, _QP, sc, _NQ, rng)
        if _insol(st, sc, v):
            continue
        if st[_TIGHT, v] == 0:
            _add(indptr, indices, w, weighted, st, sc, fs, log, best, v)
            _set_add(st, _CL, _CP, sc, _NC, v)
            continue
        if not weighted or not w[v] > fs[_NBW + v] + fs[_EPS]:
            continue
        # the running sum drifts with rounding: decide on the exact one
        s = 0.0
        for k in range(indptr[v], indptr[v + 1]):
            u = indices[k]
            if _insol(st, sc, u):
                s += w[u]
        if w[v] > s + fs[_EPS]:
            for k in range(indptr[v], indptr[v + 1]):
                u = indices[k]
                if _insol(st, sc, u):
                    _remove(indptr, indices, w, weighted, st, sc, fs, log, best, u)
                    _update_candidates(indptr, indices, st, sc, u)
            _add(indptr, indices, w, weighted, st, sc, fs, log, best, v)
            _set_add(st, _CL, _CP, sc, _NC, v)


@jit
def _two_improvement(indptr, indices, w, weighted, st, sc, fs, log, best, rng, x):
    """ARW's (1,2)-swap around solution node ``x``: drop ``x``, insert two
    non-adjacent 1-tight neighbours of ``x`` (with weights: only if they weigh
    more than ``x``). The pair is drawn uniformly among all valid pairs."""
    nL = 0
    for k in range(indptr[x], indptr[x + 1]):
        u = indices[k]
        if st[_TIGHT, u] == 1:
            st[_LBUF, nL] = u
            nL += 1
    if nL < 2:
        return False
    found = 0
    bu = x  # placeholders (a literal -1 would compile _add twice)
    bv = x
    for i in range(nL - 1, -1, -1):
        v = st[_LBUF, i]
        # a pair with L[0] was seen from its partner, unless none exists
        if i == 0 and (found == 0 or nL == 2):
            break
        a = indptr[v]
        end = indptr[v + 1]
        for j in range(nL):
            y = st[_LBUF, j]
            if y == v:
                continue
            while a < end and indices[a] < y:
                a += 1
            if a < end and indices[a] == y:
                continue  # adjacent
            if weighted and not (w[v] + w[y] > w[x] + fs[_EPS]):
                continue
            found += 1
            if found == 1 or _randint(rng, found) == 0:
                bu = v
                bv = y
    if found == 0:
        return False
    _remove(indptr, indices, w, weighted, st, sc, fs, log, best, x)
    _add(indptr, indices, w, weighted, st, sc, fs, log, best, bu)
    _add(indptr, indices, w, weighted, st, sc, fs, log, best, bv)
    _set_add(st, _CL, _CP, sc, _NC, bu)
    _set_add(st, _CL, _CP, sc, _NC, bv)
    _drain_queue(indptr, indices, w, weighted, st, sc, fs, log, best, rng)
    _update_candidates(indptr, indices, st, sc, x)
    return True


@jit
def _local_search(indptr, indices, w, weighted, st, sc, fs, log, best, rng, forced):
    """Make the solution maximal, then apply (1,2)-swaps until none is left.

    A ``forced`` node (just inserted by the perturbation) is examined last, so
    the search does not simply undo the perturbation first.
    """
    _drain_queue(indptr, indices, w, weighted, st, sc, fs, log, best, rng)
    pending = forced >= 0
    while True:
        if sc[_NC] == 0:
            if not pending:
                break
            x = forced
            pending = False
        else:
            x = _set_pop_random(st, _CL, _CP, sc, _NC, rng)
            if pending and x == forced:
                continue
        if not _insol(st, sc, x):
            continue
        _two_improvement(indptr, indices, w, weighted, st, sc, fs, log, best, rng, x)


@jit
def _force(indptr, indices, w, weighted, st, sc, fs, log, best, v, track):
    """Insert ``v``, removing its solution neighbours (the perturbation)."""
    if track:
        _set_add(st, _FL, _FP, sc, _NF, v)
    for k in range(indptr[v], indptr[v + 1]):
        u = indices[k]
        if track:
            _set_add(st, _FL, _FP, sc, _NF, u)
        if _insol(st, sc, u):
            _remove(indptr, indices, w, weighted, st, sc, fs, log, best, u)
            _update_candidates(indptr, indices, st, sc, u)
    _add(indptr, indices, w, weighted, st, sc, fs, log, best, v)
    _set_add(st, _CL, _CP, sc, _NC, v)


@jit
def _unwind(indptr, indices, w, weighted, st, sc, fs, log, best):
    """Undo the logged operations of this iteration, newest first."""
    sc[_LOGON] = 0
    for i in range(sc[_NLOG] - 1, -1, -1):
        code = log[i]
        if code >= 0:
            _remove(indptr, indices, w, weighted, st, sc, fs, log, best, code)
        else:
            _add(indptr, indices, w, weighted, st, sc, fs, log, best, -code - 1)
    sc[_NLOG] = 0
    sc[_LOGON] = 1
    # the restored solution was a local optimum: nothing is pending
    _set_clear(st, _QL, _QP, sc, _NQ)
    _set_clear(st, _CL, _CP, sc, _NC)


@jit
def _save_best(st, sc, fs, best):
    """The current solution becomes ``best`` (in the number of differences)."""
    for i in range(sc[_ND]):
        v = st[_DL, i]
        best[v] = 1 if st[_POS, v] < sc[_NSOL] else 0
    _set_clear(st, _DL, _DP, sc, _ND)
    fs[_BEST] = fs[_CUR]


@jit
def _oldest_of_random(st, rng, L, offset, count):
    """Among a few random entries of ``st[L, offset:offset+count]``, the one
    with the oldest age (ARW's tie to a tabu-like memory)."""
    best = st[L, offset + _randint(rng, count)]
    for _ in range(_FORCE_CANDIDATES - 1):
        v = st[L, offset + _randint(rng, count)]
        if st[_AGE, v] < st[_AGE, best]:
            best = v
    return best


@jit
def _ils_init(indptr, indices, w, weighted, mask, st, sc, fs, log, best, rng):
    """Load an independent ``mask`` into the state and run the local search."""
    n = indptr.shape[0] - 1
    for r in range(N_STATE_ROWS):
        for v in range(n):
            st[r, v] = -1
    for i in range(sc.shape[0]):
        sc[i] = 0
    fs[_CUR] = 0.0
    nsol = 0
    for v in range(n):
        if mask[v]:
            st[_PERM, nsol] = v
            st[_POS, v] = nsol
            nsol += 1
            fs[_CUR] += w[v]
    p = nsol
    for v in range(n):
        if not mask[v]:
            st[_PERM, p] = v
            st[_POS, v] = p
            p += 1
    sc[_NSOL] = nsol
    for v in range(n):
        st[_AGE, v] = 0
        best[v] = 1 if mask[v] else 0
        t = 0
        nb = 0.0
        for k in range(indptr[v], indptr[v + 1]):
            if mask[indices[k]]:
                t += 1
                nb += w[indices[k]]
        st[_TIGHT, v] = t
        if weighted:
            fs[_NBW + v] = nb
        if mask[v]:
            _set_add(st, _CL, _CP, sc, _NC, v)
        else:
            if t == 1:
                _set_add(st, _OTL, _OTP, sc, _NOT, v)
            if t == 0 or weighted:
                _set_add(st, _QL, _QP, sc, _NQ, v)
    sc[_LOGON] = 0
    no_force = sc[_NSOL] - sc[_NSOL] - 1  # -1, not a literal (one compilation)
    _local_search(indptr, indices, w, weighted, st, sc, fs, log, best, rng, no_force)
    sc[_LOGON] = 1
    _save_best(st, sc, fs, best)


@jit
def _ils_iterate(indptr, indices, w, weighted, st, sc, fs, log, best, rng, n_iter):
    """Run ``n_iter`` iterations of ARW's iterated local search.

    Each iteration forces one node into the solution (rarely more, close to
    each other), removes its neighbours, runs the local search, and keeps the
    result if it is not worse; a worse result is kept with probability
    ``1 / (1 + delta * delta_best)`` (in units of ``fs[_WUNIT]``) unless a
    worse result was accepted within the last ``|S|`` iterations, else it is
    undone and a random 1-swap is tried instead. ``best`` holds the best
    solution met. Returns the number of iterations run.
    """
    n = indptr.shape[0] - 1
    unit = fs[_WUNIT]
    eps = fs[_EPS]
    done = 0
    # -1 ("no node") as a variable: a literal -1 passed to _force or
    # _local_search would compile them (and everything below) a second time
    no_node = sc[_NSOL] - sc[_NSOL] - 1
    for _ in range(n_iter):
        nsol = sc[_NSOL]
        if nsol >= n:
            break  # every node is in the solution: nothing to perturb
        sc[_ITER] += 1
        it = sc[_ITER]
        done += 1
        if sc[_PLATEAU] > 0:
            sc[_PLATEAU] -= 1
        sc[_NLOG] = 0
        sc[_LOGOVF] = 0
        sc[_LOGON] = 1
        before = fs[_CUR]
        n_force = 1
        if _randint(rng, 2 * max(nsol, 1)) == 0:
            n_force = 2
            while _randint(rng, 2) == 0:
                n_force += 1
        v = _oldest_of_random(st, rng, _PERM, nsol, n - nsol)
        # ``track`` is a variable, not a literal: one compilation of _force
        track = n_force > 1
        if not track:
            _force(indptr, indices, w, weighted, st, sc, fs, log, best, v, track)
            forced = v
        else:
            _set_clear(st, _FL, _FP, sc, _NF)
            for _i in range(n_force):
                if v < 0:
                    break
                _force(indptr, indices, w, weighted, st, sc, fs, log, best, v, track)
                v = no_node
                count = 0
                for j in range(sc[_NF]):
                    y = st[_FL, j]
                    for k in range(indptr[y], indptr[y + 1]):
                        u = indices[k]
                        if _insol(st, sc, u) or st[_FP, u] >= 0:
                            continue
                        count += 1
                        if _randint(rng, count) == 0:
                            v = u
            forced = no_node
        _local_search(indptr, indices, w, weighted, st, sc, fs, log, best, rng, forced)
        after = fs[_CUR]
        if after > fs[_BEST] + eps:
            _save_best(st, sc, fs, best)
        delta = (before - after) / unit
        if delta > eps / unit and sc[_LOGOVF] == 0:
            delta_best = (fs[_BEST] - after) / unit
            pden = 1.0 + delta_best * delta
            if sc[_PLATEAU] > 0 or _random(rng) * pden >= 1.0:
                _unwind(indptr, indices, w, weighted, st, sc, fs, log, best)
                if sc[_NOT] > 0:
                    x = _oldest_of_random(st, rng, _OTL, 0, sc[_NOT])
                    _force(
                        indptr, indices, w, weighted, st, sc, fs, log, best, x,
                        track and not track,  # False, as a variable
                    )  # fmt: skip
                    _local_search(
                        indptr, indices, w, weighted, st, sc, fs, log, best, rng, x
                    )
                    if fs[_CUR] > fs[_BEST] + eps:
                        _save_best(st, sc, fs, best)
            else:
                sc[_PLATEAU] = sc[_NSOL]
        # nodes that this iteration moved out of the solution get younger
        for i in range(sc[_NLOG]):
            u = log[i]
            if u < 0:
                u = -u - 1
            if not _insol(st, sc, u):
                st[_AGE, u] = it
    return done


@jit
def _ils_run(indptr, indices, w, weighted, mask, st, sc, fs, log, best, rng, n_iter):
    """One compiled entry for both phases (compiling them apart took twice as
    long): ``n_iter < 0`` loads ``mask`` and runs the first local search,
    otherwise ``n_iter`` ILS iterations run."""
    if n_iter < 0:
        _ils_init(indptr, indices, w, weighted, mask, st, sc, fs, log, best, rng)
        return 0
    return _ils_iterate(
        indptr, indices, w, weighted, st, sc, fs, log, best, rng, n_iter
    )


def ils_init(indptr, indices, w, weighted, mask, st, sc, fs, log, best, rng):
    """Load the independent 0/1 ``mask`` into the state (arrays allocated by
    the caller, see :func:`._local_search.run_local_search`), make it maximal
    and locally optimal, and store it in ``best``."""
    _ils_run(indptr, indices, w, bool(weighted), mask, st, sc, fs, log, best, rng, -1)


def ils_iterate(indptr, indices, w, weighted, st, sc, fs, log, best, rng, n_iter):
    """Run ``n_iter`` ILS iterations on the state; returns how many ran."""
    return int(
        _ils_run(
            indptr, indices, w, bool(weighted), best, st, sc, fs, log, best, rng,
            int(n_iter),
        )
    )  # fmt: skip
