"""Numba kernels of the alternating ridge solver of ``SoftImputeCompleter``.

One half-sweep solves, for every row of a CSR pattern, the ridge problem of
its observed entries on fixed factors: ``(F_o^T F_o + diag(reg)) x = F_o^T v``.
The cost is ``O(nnz k^2 + m k^3)``: it follows the observed entries and the
rank, never the ``m x n`` size of the matrix.
"""

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def ridge_rows(indptr, indices, values, F, reg, out):
    """Row-wise ridge solves on a CSR pattern; writes ``out[i]``."""
    k = F.shape[1]
    G = np.empty((k, k))
    rhs = np.empty(k)
    for i in range(indptr.shape[0] - 1):
        G[:, :] = 0.0
        rhs[:] = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            j = indices[p]
            v = values[p]
            for a in range(k):
                fa = F[j, a]
                rhs[a] += fa * v
                for b in range(a + 1):
                    G[a, b] += fa * F[j, b]
        for a in range(k):
            G[a, a] += reg[a]
            for b in range(a):
                G[b, a] = G[a, b]
        out[i, :] = np.linalg.solve(G, rhs)
