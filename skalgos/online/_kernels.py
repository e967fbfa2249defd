"""Numba kernels of the second-order online learners: rank-one inverse
updates and projections onto a Euclidean ball in a Mahalanobis norm."""

import numpy as np

from ..utils._backend import jit


@jit
def sherman_morrison(A_inv, u):
    """In place: ``A_inv <- (A + u u^T)^{-1}`` given ``A_inv = A^{-1}``. O(n^2)."""
    n = u.shape[0]
    Au = A_inv @ u
    denom = 1.0 + u @ Au
    for i in range(n):
        for j in range(n):
            A_inv[i, j] -= Au[i] * Au[j] / denom


@jit
def _tridiagonal_solve(a, b, rhs):
    """Solve ``T x = rhs`` for the SPD tridiagonal ``T`` (diagonal ``a``,
    off-diagonal ``b``) by Thomas elimination, O(k)."""
    k = a.shape[0]
    c = np.empty(k)
    x = np.empty(k)
    c[0] = a[0]
    x[0] = rhs[0]
    for i in range(1, k):
        m = b[i - 1] / c[i - 1]
        c[i] = a[i] - m * b[i - 1]
        x[i] = rhs[i] - m * x[i - 1]
    x[k - 1] /= c[k - 1]
    for i in range(k - 2, -1, -1):
        x[i] = (x[i] - b[i] * x[i + 1]) / c[i]
    return x


@jit
def _tridiagonal_trust_region(alpha, beta, beta0, radius):
    """``h`` minimizing ``h^T T h / 2 - beta0 h_1`` over ``||h|| <= radius``.

    ``T`` is the SPD Lanczos tridiagonal. Returns ``h`` and its multiplier
    ``mu >= 0`` (``(T + mu I) h = beta0 e_1``), found by the More-Sorensen
    Newton iteration on ``1/||h(mu)|| - 1/radius``, which increases
    monotonically to the root from ``mu = 0``.
    """
    k = alpha.shape[0]
    rhs = np.zeros(k)
    rhs[0] = beta0
    mu = 0.0
    h = _tridiagonal_solve(alpha, beta, rhs)
    for _ in range(100):
        nh = np.sqrt(h @ h)
        if nh <= radius * (1.0 + 1e-14):
            break
        w = _tridiagonal_solve(alpha + mu, beta, h)
        mu += (nh * nh / (h @ w)) * (nh - radius) / radius
        h = _tridiagonal_solve(alpha + mu, beta, rhs)
    return h, mu


@jit
def _lanczos_projection(A, y, radius, rtol):
    """``argmin_{||x|| <= radius} (x - y)^T A (x - y)`` by Lanczos (GLTR).

    The problem is the trust-region subproblem ``min x^T A x / 2 - b^T x``,
    ``b = A y``; its solution ``(A + mu I)^{-1} b`` lies in the Krylov space
    of ``A`` and ``b``. Each Lanczos step costs one product with ``A``
    (O(n^2)) plus the reorthogonalization (O(k n)); the small tridiagonal
    problem is solved exactly, and the iteration stops when the KKT residual
    ``||(A + mu I) x - b|| = beta_k |h_k|`` is below ``rtol ||b||`` (or the
    space is exhausted, where the answer is exact). Returns ``x`` and the
    number ``k`` of Lanczos vectors used.
    """
    n = y.shape[0]
    b = A @ y
    beta0 = np.sqrt(b @ b)
    Q = np.empty((n, n))  # rows: the Lanczos vectors (only k + 1 are written)
    alpha = np.zeros(n)
    beta = np.zeros(n)
    Q[0] = b / beta0
    h = np.zeros(1)
    k = 0
    for k in range(n):
        v = A @ Q[k]
        alpha[k] = Q[k] @ v
        v -= alpha[k] * Q[k]
        if k > 0:
            v -= beta[k - 1] * Q[k - 1]
        for _ in range(2):  # full reorthogonalization, twice is enough
            for j in range(k + 1):
                v -= (Q[j] @ v) * Q[j]
        beta[k] = np.sqrt(v @ v)
        h, mu = _tridiagonal_trust_region(alpha[: k + 1], beta[:k], beta0, radius)
        if beta[k] * abs(h[k]) <= rtol * beta0 or k == n - 1:
            break
        Q[k + 1] = v / beta[k]
    return Q[: k + 1].T @ h, k + 1


def project_ball(y, radius, A=None, rtol=1e-12):
    """Project ``y`` onto ``{x : ||x|| <= radius}`` in the norm of ``A``.

    ``argmin_x (x - y)^T A (x - y)`` over the ball: ``y`` itself if inside,
    else ``(A + mu I)^{-1} A y`` with the ``mu >= 0`` that puts it on the
    sphere. ``A=None`` is the Euclidean projection (O(n)); otherwise ``A`` is
    symmetric positive definite and the projection is found by Lanczos
    (:func:`_lanczos_projection`): ``k`` products with ``A``, O(k n^2), with
    ``k`` the Krylov dimension needed for the relative KKT residual ``rtol``
    (small when ``A`` is well conditioned, at most ``n``).
    """
    norm = float(np.linalg.norm(y))
    if radius is None or norm <= radius:
        return y
    if A is None:
        return y * (radius / norm)
    x, _ = _lanczos_projection(
        np.ascontiguousarray(A), np.ascontiguousarray(y), float(radius), rtol
    )
    return x


def project_ball_eigh(y, radius, A):
    """The textbook A-norm projection, ``O(n^3)``: the reference for
    :func:`project_ball` (its tests and the benchmark of its cost).

    Eigendecomposition of ``A`` and a bracketed root of the secular equation
    ``sum_i (lam_i c_i / (lam_i + mu))^2 = radius^2``. Returns ``x`` and
    ``mu`` (``mu = 0`` and ``x = y`` when ``y`` is inside the ball).
    """
    from scipy.optimize import brentq

    if np.linalg.norm(y) <= radius:
        return y, 0.0
    lam, V = np.linalg.eigh(A)
    c = V.T @ y

    def excess(mu):
        return np.sum((lam * c / (lam + mu)) ** 2) - radius**2

    hi = 1.0
    while excess(hi) > 0:
        hi *= 2
    mu = brentq(excess, 0.0, hi, xtol=1e-300, rtol=1e-15, maxiter=500)
    return V @ (lam * c / (lam + mu)), mu
