"""Invariance discrepancy: how far a fitted model is from exact invariance."""

import numpy as np
from sklearn.utils import check_random_state

from ..utils._backend import to_numpy
from ._groups import _GroupBase

__all__ = ["invariance_discrepancy"]


def _output(estimator, X):
    for method in ("predict", "decision_function", "transform"):
        if method == "predict" and hasattr(estimator, "decision_function"):
            continue  # classifiers: compare scores, not labels
        if hasattr(estimator, method):
            return np.asarray(to_numpy(getattr(estimator, method)(X)), dtype=float)
    raise TypeError(f"{type(estimator).__name__} has no predict/transform method.")


def invariance_discrepancy(
    estimator, X, group, *, n_elements=None, random_state=None, max_elements=100_000
):
    """``max_{x in X, g in G} |f(g x) - f(x)|`` for a fitted estimator.

    The paper's invariance discrepancy (Fig. 1), over the points ``X`` and the
    group elements. For classifiers ``f`` is the decision function.

    Parameters
    ----------
    estimator : fitted estimator
        With ``predict``, ``decision_function`` or ``transform``.
    X : array-like of shape (n_samples, n_features)
        Points.
    group : group
        The group to test.
    n_elements : int or None, default=None
        ``None`` uses every element (enumerated, at most ``max_elements``);
        an int draws that many random elements (random words in the
        generators), for groups too large to enumerate.
    random_state : int, RandomState or None, default=None
        For the random elements.
    max_elements : int, default=100000
        Largest group that is enumerated.

    Returns
    -------
    discrepancy : float

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LinearRegression
    >>> from skalgos.kernel_ridge import SignFlipGroup, invariance_discrepancy
    >>> X = np.array([[1.0, 2.0], [0.5, -1.0]])
    >>> lin = LinearRegression().fit(X, [1.0, 0.0])
    >>> invariance_discrepancy(lin, X, SignFlipGroup(2)) > 0
    True
    """
    if not isinstance(group, _GroupBase):
        raise TypeError(f"group must be a skalgos group; got {group!r}.")
    Xn = np.asarray(to_numpy(X), dtype=np.float64)
    group = group.resolve(Xn.shape[1])
    if n_elements is None:
        elements = group.elements(max_elements)
    else:
        rng = check_random_state(random_state)
        gens = group.generating_set()
        d = Xn.shape[1]
        elements = []
        for _ in range(int(n_elements)):
            A, b = np.eye(d), np.zeros(d)
            for _ in range(rng.randint(1, 4 * len(gens) + 8)):
                G, c = gens[rng.randint(len(gens))]
                A, b = G @ A, G @ b + c
            elements.append((A, b))
    base = _output(estimator, X)
    worst = 0.0
    for element in elements:
        out = _output(estimator, group.apply(Xn, element))
        worst = max(worst, float(np.abs(out - base).max(initial=0.0)))
    return worst
