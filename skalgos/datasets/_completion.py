"""Synthetic low-rank matrices with incomplete side information (OCMC)."""

import numbers

import numpy as np
from sklearn.utils import check_random_state

__all__ = ["make_noisy_side_info_completion", "make_side_info_completion"]


def _orth(M):
    Q, _ = np.linalg.qr(M)
    return Q


def _side(U, k, rng):
    """A random k-dimensional subspace of span(U) (a random rotation inside it)."""
    if k == 0:
        return np.zeros((U.shape[0], 0))
    G = rng.standard_normal((U.shape[1], k))
    return _orth(U @ G)


def make_side_info_completion(
    m=100,
    n=100,
    rank=10,
    completeness=0.5,
    sampling_rate=0.3,
    noise=0.0,
    random_state=None,
):
    """A low-rank matrix, a random mask, and incomplete side information.

    The generator of the OCMC paper's synthetic experiment: ``R = L R^T`` with
    Gaussian factors ``L`` (m x rank) and ``R`` (n x rank); the row side
    information is an orthonormal basis of a random ``k``-dimensional subspace
    of the true column space of ``R`` (``k = round(rank * completeness)``),
    and likewise for the columns. Each entry is observed independently with
    probability ``sampling_rate``; observed entries get Gaussian noise of
    standard deviation ``noise`` times the RMS of the entries.

    Parameters
    ----------
    m, n : int, default=100
        Matrix shape.
    rank : int, default=10
        Rank of the true matrix; at most ``min(m, n)``.
    completeness : float in [0, 1] or pair of floats, default=0.5
        Fraction of the true row (and column) space that the side information
        spans. A pair gives ``(row, column)`` completeness. 0 gives
        zero-column side information (none); 1 spans the whole true space.
    sampling_rate : float in (0, 1], default=0.3
        Probability that an entry is observed.
    noise : float >= 0, default=0.0
        Noise level, relative to the RMS of the true entries.
    random_state : int, RandomState instance or None, default=None
        Seed.

    Returns
    -------
    M : ndarray of shape (m, n)
        The observed matrix, ``NaN`` at missing entries.
    mask : ndarray of bool, shape (m, n)
        True where observed.
    row_side : ndarray of shape (m, k_row)
        Orthonormal row side information.
    col_side : ndarray of shape (n, k_col)
        Orthonormal column side information.
    truth : ndarray of shape (m, n)
        The noiseless low-rank matrix.

    Notes
    -----
    As in the official code (``genera.m`` of ``lan-weizhang/OCMC``), the side
    basis is a random rotation of a subspace of the true one, even at
    ``completeness=1``. At least one entry is always observed.

    References
    ----------
    .. [1] G. Chang, W. Zhang and L. Zhang. "Matrix Completion with Incomplete
       Side Information via Orthogonal Complement Projection". ICML 2025.

    Examples
    --------
    >>> from skalgos.datasets import make_side_info_completion
    >>> M, mask, A, B, R = make_side_info_completion(
    ...     20, 30, rank=4, completeness=0.5, random_state=0)
    >>> M.shape, A.shape, B.shape, np.linalg.matrix_rank(R)
    ((20, 30), (20, 2), (30, 2), np.int64(4))
    """
    for name, v in (("m", m), ("n", n), ("rank", rank)):
        if not isinstance(v, numbers.Integral) or v < 1:
            raise ValueError(f"{name} must be a positive int; got {v!r}.")
    if rank > min(m, n):
        raise ValueError(f"rank={rank} exceeds min(m, n)={min(m, n)}.")
    comp = np.broadcast_to(np.asarray(completeness, dtype=float), (2,))
    if np.any(comp < 0) or np.any(comp > 1):
        raise ValueError(f"completeness must lie in [0, 1]; got {completeness!r}.")
    if not 0 < sampling_rate <= 1:
        raise ValueError(f"sampling_rate must lie in (0, 1]; got {sampling_rate!r}.")
    if noise < 0:
        raise ValueError(f"noise must be >= 0; got {noise!r}.")
    rng = check_random_state(random_state)
    L = rng.standard_normal((m, rank))
    Rf = rng.standard_normal((n, rank))
    truth = L @ Rf.T
    U, V = _orth(L), _orth(Rf)
    k_row, k_col = (int(round(rank * c)) for c in comp)
    row_side = _side(U, k_row, rng)
    col_side = _side(V, k_col, rng)
    mask = rng.uniform(size=(m, n)) < sampling_rate
    if not mask.any():
        mask[rng.randint(m), rng.randint(n)] = True
    M = truth.copy()
    if noise > 0:
        rms = np.sqrt(np.mean(truth**2))
        M = M + noise * rms * rng.standard_normal((m, n))
    M[~mask] = np.nan
    return M, mask, row_side, col_side, truth


def make_noisy_side_info_completion(
    m=200, n=150, rank=8, sampling_rate=0.25, noise=1.0, random_state=None
):
    """A low-rank matrix with noisy, partly informative side information.

    Side information as users have it: on each side, half the true singular
    directions, each with Gaussian noise of ``noise`` times its own norm,
    next to as many random columns that carry nothing. The side information
    is neither orthonormal nor inside the true space, unlike
    :func:`make_side_info_completion`. Each entry is observed independently
    with probability ``sampling_rate``; observed entries are noiseless.

    Parameters
    ----------
    m, n : int, default=(200, 150)
        Matrix shape.
    rank : int, default=8
        Rank of the true matrix; ``rank // 2`` true directions per side.
    sampling_rate : float in (0, 1], default=0.25
        Probability that an entry is observed.
    noise : float >= 0, default=1.0
        Noise on each true direction, relative to its norm.
    random_state : int, RandomState instance or None, default=None
        Seed.

    Returns
    -------
    M : ndarray of shape (m, n)
        The observed matrix, ``NaN`` at missing entries.
    row_side : ndarray of shape (m, 2 * (rank // 2))
    col_side : ndarray of shape (n, 2 * (rank // 2))
    truth : ndarray of shape (m, n)
        The low-rank matrix.

    Examples
    --------
    >>> from skalgos.datasets import make_noisy_side_info_completion
    >>> M, A, B, R = make_noisy_side_info_completion(40, 30, 4, random_state=0)
    >>> M.shape, A.shape, B.shape
    ((40, 30), (40, 4), (30, 4))
    """
    rng = check_random_state(random_state)
    R = rng.standard_normal((m, rank)) @ rng.standard_normal((rank, n))
    U, _, Vt = np.linalg.svd(R, full_matrices=False)
    k = rank // 2

    def side(W, size):
        true = W[:, :k] + noise * rng.standard_normal((size, k)) / np.sqrt(size)
        return np.hstack([true, rng.standard_normal((size, k))])

    A, B = side(U, m), side(Vt.T, n)
    M = np.where(rng.uniform(size=(m, n)) < sampling_rate, R, np.nan)
    return M, A, B, R
