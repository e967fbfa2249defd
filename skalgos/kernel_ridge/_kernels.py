"""Numba kernels: eigenfunctions of the Laplacian on spheres and tori.

Both kernels evaluate an orthonormal eigenbasis row by row with three-term
recurrences (homogeneous Gegenbauer polynomials on the sphere, Chebyshev-style
angle addition on the torus), in parallel over rows. They work on float64
NumPy arrays; the estimators move the resulting feature matrices to the input's
array namespace.
"""

import numpy as np
from numba import prange

from ..utils._backend import jit


@jit(parallel=True)
def sphere_harmonics_cpu(X, max_degree, levels, trig, norms, out):
    """Real hyperspherical (Gelfand-Tsetlin) harmonics of the rows of ``X``.

    ``levels[f]`` holds ``(l_2, ..., l_d)`` with ``l_2 <= ... <= l_d`` (the
    degree), ``trig[f]`` is 0 for the cosine and 1 for the sine of the circle
    factor ``(x_1 + i x_2)^{l_2}``, ``norms[f]`` the normalising constant. The
    factor of level ``j`` is ``r_j^m C_m^{(l_{j-1} + (j-2)/2)}(x_j / r_j)``,
    which is evaluated as a homogeneous polynomial by the Gegenbauer
    recurrence, so nothing is divided by ``r_j``.
    """
    n, d = X.shape
    n_funcs = levels.shape[0]
    K = max_degree
    for i in prange(n):
        r2 = np.empty(d)
        acc = 0.0
        for j in range(d):
            acc += X[i, j] * X[i, j]
            r2[j] = acc
        cr = np.empty(K + 1)
        ci = np.empty(K + 1)
        cr[0] = 1.0
        ci[0] = 0.0
        for m in range(1, K + 1):
            cr[m] = cr[m - 1] * X[i, 0] - ci[m - 1] * X[i, 1]
            ci[m] = cr[m - 1] * X[i, 1] + ci[m - 1] * X[i, 0]
        # P[j, a, m] for the coordinate j (0-based, j >= 2), lower degree a.
        P = np.zeros((d, K + 1, K + 1))
        for j in range(2, d):
            t = X[i, j]
            rr = r2[j]
            for a in range(K + 1):
                lam = a + (j - 1) / 2.0  # (j_1based - 2) / 2 with j_1based = j + 1
                P[j, a, 0] = 1.0
                if K - a >= 1:
                    P[j, a, 1] = 2.0 * lam * t
                for m in range(2, K - a + 1):
                    P[j, a, m] = (
                        2.0 * (m + lam - 1.0) * t * P[j, a, m - 1]
                        - (m + 2.0 * lam - 2.0) * rr * P[j, a, m - 2]
                    ) / m
        for f in range(n_funcs):
            l2 = levels[f, 0]
            v = cr[l2] if trig[f] == 0 else ci[l2]
            for j in range(2, d):
                lo = levels[f, j - 2]
                v *= P[j, lo, levels[f, j - 1] - lo]
            out[i, f] = norms[f] * v


@jit(parallel=True)
def torus_fourier_cpu(X, max_freq, freqs, trig, omega, out):
    """Products of ``sqrt(2) cos`` / ``sqrt(2) sin`` over the coordinates.

    ``freqs[f, j]`` is the integer frequency of coordinate ``j`` in function
    ``f`` and ``trig[f, j]`` selects the cosine (0) or sine (1). The angle
    multiples come from the recurrence ``cos((l+1)t) = 2 cos t cos(lt) -
    cos((l-1)t)`` (and the same for the sine).
    """
    n, d = X.shape
    n_funcs = freqs.shape[0]
    L = max_freq
    sq2 = np.sqrt(2.0)
    for i in prange(n):
        C = np.empty((d, L + 1))
        S = np.empty((d, L + 1))
        for j in range(d):
            t = omega * X[i, j]
            c1 = np.cos(t)
            C[j, 0] = 1.0
            S[j, 0] = 0.0
            if L >= 1:
                C[j, 1] = c1
                S[j, 1] = np.sin(t)
            for m in range(2, L + 1):
                C[j, m] = 2.0 * c1 * C[j, m - 1] - C[j, m - 2]
                S[j, m] = 2.0 * c1 * S[j, m - 1] - S[j, m - 2]
        for f in range(n_funcs):
            v = 1.0
            for j in range(d):
                m = freqs[f, j]
                if m > 0:
                    if trig[f, j] == 0:
                        v *= sq2 * C[j, m]
                    else:
                        v *= sq2 * S[j, m]
            out[i, f] = v
