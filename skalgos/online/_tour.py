"""Tour entry: clipped VAW under delayed labels vs ``SGDRegressor.partial_fit``."""

import time

import numpy as np

from .._tour import TourResult, register


@register(
    name="ClippedVAWRegressor",
    task="online regression, labels late",
    data="diabetes stream, Geometric(0.1) delays",
    baseline="SGDRegressor.partial_fit (same delays)",
    metric="mean online squared error",
)
def _entry(quick, random_state):
    from sklearn.datasets import load_diabetes
    from sklearn.linear_model import SGDRegressor

    from . import ClippedVAWRegressor
    from .delays import Geometric

    X, y = load_diabetes(return_X_y=True)
    rng = np.random.default_rng(random_state)
    perm = rng.permutation(len(y))
    # Scaling from the data's fixed ranges (features are pre-scaled in
    # sklearn; y divided by a constant), so no statistic leaks from the future.
    X, y = X[perm] * 20.0, y[perm] / 100.0
    if quick:
        X, y = X[:200], y[:200]
    delays = Geometric(0.1).sample(len(y), random_state)

    ClippedVAWRegressor().fit(X[:5], y[:5])  # load the Numba kernel first
    t0 = time.perf_counter()
    vaw = ClippedVAWRegressor(fit_intercept=True).fit(X, y, delays=delays)
    fit_time = time.perf_counter() - t0
    ours = np.asarray(vaw.online_predictions_)

    # The baseline plays the same protocol: predict row t, then learn the
    # labels whose delay has run out (one partial_fit call per arrival).
    t0 = time.perf_counter()
    sgd = SGDRegressor(random_state=random_state)
    arrive = np.arange(len(y)) + delays
    base = np.zeros(len(y))
    fitted = False
    for t in range(len(y)):
        base[t] = sgd.predict(X[t : t + 1])[0] if fitted else 0.0
        due = np.flatnonzero(arrive == t)
        if due.size:
            sgd.partial_fit(X[due], y[due])
            fitted = True
    base_time = time.perf_counter() - t0

    err = (ours - y) ** 2
    err_b = (base - y) ** 2

    def draw(ax):
        steps = np.arange(1, len(y) + 1)
        ax.plot(np.cumsum(err) / steps, label="ClippedVAWRegressor")
        ax.plot(np.cumsum(err_b) / steps, label="SGDRegressor.partial_fit")
        ax.set_xlabel("round")
        ax.set_ylabel("mean online squared error")
        ax.set_yscale("log")
        ax.legend()

    return TourResult(
        score=float(err.mean()),
        baseline_score=float(err_b.mean()),
        fit_time=fit_time,
        baseline_fit_time=base_time,
        higher_is_better=False,
        plot=draw,
    )
