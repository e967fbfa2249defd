"""Predict-then-learn evaluation under delays, with regret in hindsight."""

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from sklearn.base import clone

__all__ = ["DelayedScore", "delayed_progressive_score"]


@dataclass
class DelayedScore:
    """Outcome of :func:`delayed_progressive_score`.

    Attributes
    ----------
    losses : ndarray of shape (n_rounds,)
        The learner's loss in each round, at the point it played.
    comparator_losses : ndarray of shape (n_rounds,)
        The best fixed comparator's loss in each round.
    regret : float
        ``sum(losses) - sum(comparator_losses)``.
    regret_curve : ndarray of shape (n_rounds,)
        Cumulative regret after each round.
    comparator : ndarray
        The comparator's weights (intercept last when the learner has one).
    sigma_max, d_tot, d_max : int
        Largest number of missing observations, total and largest delay.
    """

    losses: np.ndarray
    comparator_losses: np.ndarray
    regret: float
    regret_curve: np.ndarray
    comparator: np.ndarray
    sigma_max: int
    d_tot: int
    d_max: int


def _best_fixed(est, base, X, y, radius):
    n = base._features(np.asarray(X[:1], dtype=float)).shape[1]

    def f(w):
        return float(np.sum(est._hindsight_losses(w, X, y)))

    cons = ()
    if radius is not None:
        cons = (
            {
                "type": "ineq",
                "fun": lambda w: radius**2 - w @ w,
                "jac": lambda w: -2 * w,
            },
        )
    best = None
    for method in ("SLSQP",) if cons else ("L-BFGS-B",):
        res = minimize(
            f,
            np.zeros(n),
            method=method,
            constraints=cons,
            options={"maxiter": 1000, "ftol": 1e-12} if cons else {"maxiter": 2000},
        )
        best = res.x
    if radius is not None and np.linalg.norm(best) > radius:
        best = best * (radius / np.linalg.norm(best))
    return best


def delayed_progressive_score(estimator, X, y, delays=None, *, comparator="best_fixed"):
    """Play ``estimator`` on the stream under ``delays``; report its regret.

    The estimator (cloned) predicts each row before learning, and learns a
    row's label only ``delays[t]`` rows later (0: before the next prediction,
    the one convention of :mod:`skalgos.online.delays`). The regret is taken
    against the best fixed weights in hindsight for the learner's own loss on
    its feasible ball (``radius``), found with ``scipy.optimize.minimize``.

    Parameters
    ----------
    estimator : skalgos online learner
    X : array-like of shape (n_rounds, n_features)
    y : array-like of shape (n_rounds,)
    delays : array-like of shape (n_rounds,), int or None
    comparator : "best_fixed" or array-like, default="best_fixed"
        Fixed weights to compare with (in the learner's feature space,
        intercept last if it fits one).

    Returns
    -------
    score : DelayedScore

    Examples
    --------
    >>> import numpy as np
    >>> from skalgos.online import DelayedFTRLRegressor, delayed_progressive_score
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(100, 2)); y = X @ [1.0, -1.0]
    >>> s = delayed_progressive_score(DelayedFTRLRegressor(radius=3.0), X, y, delays=3)
    >>> s.d_tot, bool(s.regret > 0)
    (300, True)
    """
    est = clone(estimator)
    if "max_iter" in est.get_params(deep=False):
        est.set_params(max_iter=1)  # one pass: the stream is played once
    if "max_history" in est.get_params(deep=False):
        est.set_params(max_history=None)  # the loss of every round
    est.fit(X, y, delays=delays)
    X = np.asarray(X, dtype=float)
    losses = np.asarray(est.losses_)
    base = est._copy(0) if hasattr(est, "_copy") else est
    radius = getattr(base, "radius_", getattr(base, "radius", None))
    y_enc = np.asarray(y)
    if isinstance(comparator, str):
        w = _best_fixed(est, base, X, y_enc, radius)
    else:
        w = np.asarray(comparator, dtype=float)
    comp = np.asarray(est._hindsight_losses(w, X, y_enc), dtype=float)
    curve = np.cumsum(losses - comp)
    return DelayedScore(
        losses=losses,
        comparator_losses=comp,
        regret=float(curve[-1]) if curve.size else 0.0,
        regret_curve=curve,
        comparator=w,
        sigma_max=est.sigma_max_,
        d_tot=est.d_tot_,
        d_max=est.d_max_,
    )
