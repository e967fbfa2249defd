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
# Array-API pCQO pieces
# ---------------------------------------------------------------------------


def pcqo_gradient(X, gamma, gamma_prime, *, W=None, A=None, A_sparse=None, xp):
    r"""Gradient of the pCQO objective for each row of ``X`` (shape (B, n)).

    :math:`\nabla f(x) = -1 + \gamma A x - \gamma' \bar A x`.

    Exactly one way of computing the quadratic term is given:

    * ``W``: the dense matrix :math:`\gamma A - \gamma' \bar A` (the paper's
      dense form, folded into one matrix so a step costs one product);
    * ``A``: the dense adjacency; :math:`\bar A x = (1^T x) 1 - x - A x`
      is computed implicitly, without the complement matrix;
    * ``A_sparse``: a SciPy sparse adjacency (NumPy only), implicit complement,
      so a step costs ``O(B |E|)``.
    """
    if W is not None:
        return X @ W - 1.0
    if A_sparse is not None:
        AX = (A_sparse @ X.T).T
    else:
        AX = X @ A
    s = xp.sum(X, axis=1, keepdims=True)
    return (gamma + gamma_prime) * AX - gamma_prime * (s - X) - 1.0


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
