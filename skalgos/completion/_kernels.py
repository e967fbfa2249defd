"""Array-API dense algebra of the completion solvers.

Everything here takes the namespace ``xp`` explicitly and uses only the array
API standard (plus its ``linalg`` extension), so NumPy, CuPy, torch and
array-api-strict arrays all run the same code. No Numba: the work is dense
BLAS/LAPACK (products and SVDs), which the namespaces already do well.
"""

import math

import numpy as np

from ..utils._backend import to_device
from ..utils._linalg import robust_svd

__all__ = [
    "complement",
    "factored_diff_norm",
    "frobenius",
    "orthonormal_basis",
    "svt",
]


def frobenius(Z, xp):
    """Frobenius norm as a Python float.

    ``linalg.vector_norm`` over all entries where the namespace has it (NumPy
    2: one BLAS dot, no m x n temporary); else the sum of squares.
    """
    norm = getattr(getattr(xp, "linalg", None), "vector_norm", None)
    if norm is not None:
        return float(norm(Z))
    return math.sqrt(float(xp.sum(Z * Z)))


def factored_diff_norm(f1, f0, xp):
    """``||U1 diag(s1) Vt1 - U0 diag(s0) Vt0||_F`` from the SVT factors.

    ``U1, U0`` and ``Vt1.T, Vt0.T`` have orthonormal columns (ranks r1, r0).
    With ``[U1 U0] = Qu Ru`` and ``[Vt1.T Vt0.T] = Qv Rv`` the difference is
    ``Qu (Ru diag(s1, -s0) Rv^T) Qv^T``, whose norm is that of the small
    middle factor: ``O((m + n)(r1 + r0)^2)`` instead of an m x n pass. The
    rounding is that of the dense difference (``eps`` times the norms).
    """
    U1, s1, Vt1 = f1
    U0, s0, Vt0 = f0
    if s0.shape[0] == 0 or s1.shape[0] == 0:
        s = s1 if s0.shape[0] == 0 else s0
        return math.sqrt(float(xp.sum(s * s)))
    _, Ru = xp.linalg.qr(xp.concat([U1, U0], axis=1))
    _, Rv = xp.linalg.qr(xp.concat([Vt1.T, Vt0.T], axis=1))
    C = (Ru * xp.concat([s1, -s0])) @ Rv.T
    return math.sqrt(float(xp.sum(C * C)))


def orthonormal_basis(S, xp, rtol=None):
    """Orthonormal basis of the column span of ``S`` (rank revealing, by SVD).

    Columns whose singular value is below ``rtol * s_max`` are dropped, so a
    rank-deficient side-information matrix gives the basis of its true span.
    Only the span matters to the model, hence this and not ``qr``.
    """
    if S.shape[1] == 0:
        return S
    U, s, _ = robust_svd(S, xp)
    if rtol is None:
        rtol = max(S.shape) * float(np.finfo(np.float64).eps)
    smax = float(s[0]) if s.shape[0] else 0.0
    keep = int(xp.sum(xp.astype(s > rtol * smax, xp.int32))) if smax > 0 else 0
    return U[:, :keep]


def complement(Z, A, B):
    """``(I - A A^T) Z (I - B B^T)`` with the projectors kept in low-rank form.

    ``A`` (m x a) and ``B`` (n x b) have orthonormal columns; ``None`` means no
    side information on that side (the identity complement). Costs
    ``O(mn(a + b))`` time and no m x m or n x n matrix.
    """
    if A is not None:
        Z = Z - A @ (A.T @ Z)
    if B is not None:
        Z = Z - (Z @ B) @ B.T
    return Z


class _SVDState:
    """Warm start of the truncated SVD: the previous right singular vectors.

    ``max_rank`` caps the rank the SVT may compute (``None``: no cap). When
    the cap binds (the smallest computed singular value is still above the
    threshold) ``capped`` is set: the step was a partial SVT, and the solver
    must not declare convergence on it (it raises the cap instead).
    """

    def __init__(self, rank, random_state, oversample=10, n_power=2, max_rank=None):
        self.rank = rank
        self.rng = random_state
        self.oversample = oversample
        self.n_power = n_power
        self.max_rank = max_rank
        self.capped = False
        self.V = None


def _full_svd(Z, xp):
    return robust_svd(Z, xp)


def _subspace_svd(Z, k, state, xp):
    """Top-``k`` SVD by block subspace iteration, warm started from ``state.V``.

    Consecutive ADMM iterates differ little, so the previous right singular
    vectors are an excellent start and two power steps suffice; the extra
    random columns (from ``state.rng``, moved to the device of ``Z``) let new
    directions enter.
    """
    m, n = Z.shape
    p = min(k + state.oversample, min(m, n))
    cols = p
    blocks = []
    if state.V is not None:
        V = state.V[:, : min(state.V.shape[1], p)]
        blocks.append(V)
        cols = p - V.shape[1]
    if cols > 0:
        G = state.rng.standard_normal((n, cols))
        blocks.append(to_device(G, _device(Z), xp=xp))
    Q0 = blocks[0] if len(blocks) == 1 else xp.concat(blocks, axis=1)
    Q0 = xp.astype(Q0, Z.dtype)
    Q, _ = xp.linalg.qr(Z @ Q0)
    for _ in range(state.n_power):
        Q, _ = xp.linalg.qr(Z.T @ Q)
        Q, _ = xp.linalg.qr(Z @ Q)
    Bsmall = Q.T @ Z  # p x n
    Ub, s, Vt = robust_svd(Bsmall, xp)
    return Q @ Ub, s, Vt


def _device(Z):
    from ..utils._backend import device

    return device(Z)


def svt(Z, tau, xp, state=None):
    """Singular value thresholding ``U max(S - tau, 0) V^T``.

    Parameters
    ----------
    Z : array of shape (m, n)
    tau : float
        Threshold, >= 0.
    xp : namespace
    state : _SVDState or None
        ``None`` computes a full thin SVD. Otherwise a truncated SVD of rank
        ``state.rank`` (warm started) is used and the rank is doubled until
        the smallest computed singular value falls below ``tau`` or the rank
        reaches ``state.max_rank`` (then ``state.capped`` is set), so the
        result equals full SVT up to the accuracy of the subspace iteration
        unless capped; the rank estimate for the next call is updated in
        place.

    Returns
    -------
    X : array of shape (m, n)
    rank : int
        Number of singular values above ``tau``.
    nuclear : float
        Nuclear norm of ``X``.
    factors : tuple
        ``(U, s, Vt)`` of ``X`` (rank ``rank``): ``X = (U * s) @ Vt``.
    """
    m, n = Z.shape
    kmax = min(m, n)
    cap = kmax if state is None or state.max_rank is None else state.max_rank
    if state is not None:
        state.capped = False
    if state is None or min(state.rank, cap) >= kmax // 2:
        U, s, Vt = _full_svd(Z, xp)
    else:
        k = min(state.rank, cap)
        while True:
            U, s, Vt = _subspace_svd(Z, k, state, xp)
            if float(s[-1]) <= tau or s.shape[0] >= kmax:
                break
            if k >= cap:
                # A partial SVT: the top ``cap + oversample`` directions only.
                state.capped = True
                break
            k = min(2 * k, cap)
            if k >= kmax // 2:
                U, s, Vt = _full_svd(Z, xp)
                break
    s = xp.clip(s - tau, min=0.0)
    r = int(xp.sum(xp.astype(s > 0, xp.int32)))
    if r == 0:
        X = xp.zeros_like(Z)
    else:
        X = (U[:, :r] * s[:r]) @ Vt[:r, :]
    if state is not None:
        state.V = Vt[: max(r, 1), :].T
        state.rank = max(r + 5, 1)
    return X, r, float(xp.sum(s)), (U[:, :r], s[:r], Vt[:r, :])
