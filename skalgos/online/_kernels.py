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
def _secular_root(lam, c, radius):
    # Find mu >= 0 with sum_i (lam_i c_i / (lam_i + mu))^2 = radius^2, by
    # bisection on a bracket (the left side decreases in mu).
    lo, hi = 0.0, 1.0
    while True:
        s = 0.0
        for i in range(lam.shape[0]):
            v = lam[i] * c[i] / (lam[i] + hi)
            s += v * v
        if s <= radius * radius:
            break
        hi *= 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        s = 0.0
        for i in range(lam.shape[0]):
            v = lam[i] * c[i] / (lam[i] + mid)
            s += v * v
        if s > radius * radius:
            lo = mid
        else:
            hi = mid
    return hi


def project_ball(y, radius, A=None):
    """Project ``y`` onto ``{x : ||x|| <= radius}`` in the norm of ``A``.

    ``argmin_x (x - y)^T A (x - y)`` over the ball: ``y`` itself if inside,
    else ``(A + mu I)^{-1} A y`` with the ``mu`` that puts it on the sphere.
    ``A=None`` is the Euclidean projection.
    """
    norm = float(np.linalg.norm(y))
    if radius is None or norm <= radius:
        return y
    if A is None:
        return y * (radius / norm)
    lam, V = np.linalg.eigh(A)
    c = V.T @ y
    mu = _secular_root(lam, c, float(radius))
    return V @ (lam * c / (lam + mu))
