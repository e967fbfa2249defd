"""Generators for the diverse nearest-neighbour family."""

import numbers

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, validate_params

__all__ = ["make_colored_manifold"]


@validate_params(
    {
        "n_samples": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_features": [Interval(numbers.Integral, 1, None, closed="left")],
        "intrinsic_dim": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_groups": [Interval(numbers.Integral, 1, None, closed="left")],
        "dominant_share": [Interval(numbers.Real, 0, 1, closed="both")],
        "noise": [Interval(numbers.Real, 0, None, closed="left")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def make_colored_manifold(
    n_samples=1000,
    n_features=64,
    intrinsic_dim=8,
    n_groups=1001,
    dominant_share=0.9,
    *,
    noise=0.01,
    random_state=None,
):
    """Points on a curved low-dimensional manifold with skewed colors.

    The setting of the experiments of Anand, Indyk et al. (2025): data of low
    intrinsic dimension and one dominant color (a big seller) next to many rare
    ones. Latent coordinates ``z ~ N(0, I)`` of dimension ``intrinsic_dim`` are
    mapped to ``n_features`` dimensions by ``z A + 0.5 sin(z B) C`` with random
    Gaussian matrices (a smooth curved embedding), plus isotropic noise. Each
    point gets color 0 with probability ``dominant_share`` and otherwise a color
    drawn uniformly from ``1..n_groups-1``, independently of its position (the
    paper's exact color assignment is not published; this is our reading of
    its dominant/rare split).

    Parameters
    ----------
    n_samples : int, default=1000
        Number of points.
    n_features : int, default=64
        Ambient dimension.
    intrinsic_dim : int, default=8
        Dimension of the latent manifold.
    n_groups : int, default=1001
        Number of colors: one dominant plus ``n_groups - 1`` rare ones.
    dominant_share : float, default=0.9
        Probability that a point has the dominant color 0. With
        ``n_groups=1`` every point has color 0.
    noise : float, default=0.01
        Standard deviation of the Gaussian noise added to every coordinate.
    random_state : int, RandomState instance or None, default=None
        Seed.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        The points.
    groups : ndarray of shape (n_samples,), int64
        The color of each point.

    Examples
    --------
    >>> from skalgos.datasets import make_colored_manifold
    >>> X, groups = make_colored_manifold(500, 16, 4, 51, 0.9, random_state=0)
    >>> X.shape, groups.shape
    ((500, 16), (500,))
    >>> bool(0.85 < (groups == 0).mean() < 0.95)
    True
    """
    rng = check_random_state(random_state)
    z = rng.standard_normal((n_samples, intrinsic_dim))
    A = rng.standard_normal((intrinsic_dim, n_features)) / np.sqrt(intrinsic_dim)
    B = rng.standard_normal((intrinsic_dim, intrinsic_dim))
    C = rng.standard_normal((intrinsic_dim, n_features)) / np.sqrt(intrinsic_dim)
    X = z @ A + 0.5 * np.sin(z @ B) @ C
    X += noise * rng.standard_normal(X.shape)
    if n_groups == 1:
        groups = np.zeros(n_samples, dtype=np.int64)
    else:
        rare = rng.randint(1, n_groups, size=n_samples)
        groups = np.where(rng.random_sample(n_samples) < dominant_share, 0, rare)
    return X, groups.astype(np.int64)
