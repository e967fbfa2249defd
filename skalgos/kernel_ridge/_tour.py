"""Tour entry: exactly invariant kernel ridge against sklearn's KernelRidge."""

import time

import numpy as np

from .._tour import TourResult, register


@register(
    name="InvariantKernelRidge",
    task="permutation-invariant regression",
    data="S^5 under S_6 (quick: S^4, S_5)",
    baseline="KernelRidge (rbf)",
    metric="test MSE",
)
def _entry(quick, random_state):
    from sklearn.kernel_ridge import KernelRidge

    from ..datasets import make_invariant_sphere_regression
    from . import InvariantKernelRidge, PermutationGroup, SphereHarmonics
    from ._invariance import invariance_discrepancy

    d, n, degree = (5, 200, 4) if quick else (6, 1000, 6)
    X, y = make_invariant_sphere_regression(n, d, noise=0.1, random_state=random_state)
    Xt, ft = make_invariant_sphere_regression(
        500, d, noise=0.0, random_state=random_state + 1
    )
    group = PermutationGroup(d)
    t0 = time.perf_counter()
    ours = InvariantKernelRidge(SphereHarmonics(d, degree), group, alpha=1e-3).fit(X, y)
    fit_time = time.perf_counter() - t0
    t0 = time.perf_counter()
    krr = KernelRidge(kernel="rbf", alpha=1e-2, gamma=1.0).fit(X, y)
    base_time = time.perf_counter() - t0
    mse = float(np.mean((ours.predict(Xt) - ft) ** 2))
    base_mse = float(np.mean((krr.predict(Xt) - ft) ** 2))
    ids = [invariance_discrepancy(m, Xt[:50], group) for m in (ours, krr)]

    def plot(ax):
        names = ["InvariantKernelRidge", "KernelRidge"]
        x = np.arange(2)
        ax.bar(x - 0.2, [mse, base_mse], 0.4, label="test MSE")
        ax.bar(
            x + 0.2, [max(v, 1e-16) for v in ids], 0.4, label="invariance discrepancy"
        )
        ax.set_yscale("log")
        ax.set_xticks(x, names)
        ax.legend()

    return TourResult(
        score=mse,
        baseline_score=base_mse,
        fit_time=fit_time,
        baseline_fit_time=base_time,
        higher_is_better=False,
        plot=plot,
        notes=f"invariance discrepancy {ids[0]:.1e} vs {ids[1]:.2f}",
    )
