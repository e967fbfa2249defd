"""Data for skalgos.kernel_ridge: invariant targets on the sphere and the torus."""

import numpy as np
from sklearn.utils import check_random_state

__all__ = ["make_invariant_sphere_regression", "make_sign_invariant_torus_regression"]


def make_invariant_sphere_regression(
    n_samples=500, n_features=6, *, noise=0.1, random_state=None
):
    """Uniform points on ``S^{n_features-1}`` with a permutation-invariant target.

    ``f*(x) = sum_i x_i^4 + (sum_i x_i)^3 + 0.1 exp(sum_i x_i)``, invariant under
    every permutation of the coordinates. The exponential term is not a
    polynomial, so any truncated spectral model keeps some bias. This is the
    benchmark target of the Spec-Avg notes (our choice; the paper's experiment
    is on the torus, see :func:`make_sign_invariant_torus_regression`).

    Parameters
    ----------
    n_samples : int, default=500
        Number of points.
    n_features : int, default=6
        Ambient dimension (the sphere is ``S^{n_features-1}``).
    noise : float, default=0.1
        Standard deviation of the Gaussian noise added to ``y``.
    random_state : int, RandomState or None, default=None
        Seed.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        Unit-norm rows.
    y : ndarray of shape (n_samples,)
        ``f*(X)`` plus noise.

    Examples
    --------
    >>> from skalgos.datasets import make_invariant_sphere_regression
    >>> X, y = make_invariant_sphere_regression(4, 3, random_state=0)
    >>> X.shape, bool(np.allclose((X**2).sum(1), 1))
    ((4, 3), True)
    """
    rng = check_random_state(random_state)
    X = rng.standard_normal((n_samples, n_features))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    s = X.sum(axis=1)
    y = (X**4).sum(axis=1) + s**3 + 0.1 * np.exp(s)
    return X, y + noise * rng.standard_normal(n_samples)


def make_sign_invariant_torus_regression(
    n_samples=500, n_features=10, *, noise=0.1, random_state=None
):
    """The paper's experiment: uniform points of ``[-1, 1)^d``, sign-invariant target.

    ``f*(x) = (1/d) sum_i i x_i^2`` (``i`` from 1), invariant under the
    ``2^d`` coordinate sign flips.

    Parameters
    ----------
    n_samples : int, default=500
        Number of points.
    n_features : int, default=10
        Dimension ``d`` of the torus.
    noise : float, default=0.1
        Standard deviation of the Gaussian noise added to ``y``.
    random_state : int, RandomState or None, default=None
        Seed.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)

    Examples
    --------
    >>> from skalgos.datasets import make_sign_invariant_torus_regression
    >>> X, y = make_sign_invariant_torus_regression(3, 2, noise=0.0, random_state=0)
    >>> bool(np.allclose(y, (X[:, 0] ** 2 + 2 * X[:, 1] ** 2) / 2))
    True
    """
    rng = check_random_state(random_state)
    X = rng.uniform(-1.0, 1.0, size=(n_samples, n_features))
    w = np.arange(1, n_features + 1) / n_features
    y = (X**2) @ w
    return X, y + noise * rng.standard_normal(n_samples)
