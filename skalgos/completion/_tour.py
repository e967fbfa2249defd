"""Tour entry: OCMC against IterativeImputer and nuclear-norm completion."""

import time
import warnings

import numpy as np

from .._tour import TourResult, register


@register(
    name="OCMCCompleter",
    task="matrix completion, incomplete side info",
    data="low-rank synthetic, completeness 0.5",
    baseline="IterativeImputer",
    metric="relative error (lower better)",
)
def _entry(quick, random_state):
    from sklearn.experimental import enable_iterative_imputer  # noqa: F401
    from sklearn.impute import IterativeImputer

    from ..datasets import make_side_info_completion
    from ._ocmc import NuclearNormCompleter, OCMCCompleter

    size, rank, p = (50, 3, 0.3) if quick else (100, 6, 0.25)
    M, mask, A, B, R = make_side_info_completion(
        size, size, rank, 0.5, p, random_state=random_state
    )

    def rel(X):
        return float(np.linalg.norm(X - R) / np.linalg.norm(R))

    t0 = time.perf_counter()
    est = OCMCCompleter(A, B, tol=1e-4, random_state=random_state)
    err_ocmc = rel(est.fit_transform(M))
    t_ocmc = time.perf_counter() - t0
    t0 = time.perf_counter()
    err_nnm = rel(NuclearNormCompleter(tol=1e-4).fit_transform(M))
    t_nnm = time.perf_counter() - t0
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # IterativeImputer's ConvergenceWarning
        imp = IterativeImputer(max_iter=5, random_state=random_state)
        err_ii = rel(imp.fit_transform(M))
    t_ii = time.perf_counter() - t0

    def draw(ax):
        names = ["OCMC", "nuclear norm", "IterativeImputer"]
        ax.bar(names, [err_ocmc, err_nnm, err_ii], color=["C0", "C1", "C7"])
        ax.set_ylabel("relative Frobenius error")

    return TourResult(
        score=err_ocmc,
        baseline_score=err_ii,
        fit_time=t_ocmc,
        baseline_fit_time=t_ii,
        higher_is_better=False,
        plot=draw,
        notes=f"nuclear norm (no side info): error {err_nnm:.3g} in {t_nnm:.2f} s",
    )
