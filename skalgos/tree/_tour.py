"""Tour entry: a minimum BDD against CART at equal size on binned iris."""

import time

import numpy as np

from skalgos._tour import TourResult, register


@register(
    name="BDDClassifier",
    task="3-class classification, 4 tests at most",
    data="iris, 3 bins per feature",
    baseline="DecisionTreeClassifier(max_leaf_nodes=5)",
    metric="5-fold CV accuracy",
)
def _entry(quick, random_state):
    from sklearn.datasets import load_iris
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import KBinsDiscretizer
    from sklearn.tree import DecisionTreeClassifier

    from skalgos.tree import BDDClassifier, plot_bdd

    X, y = load_iris(return_X_y=True)
    size = 3 if quick else 4
    cv = StratifiedKFold(3 if quick else 5, shuffle=True, random_state=random_state)
    bdd = BDDClassifier(objective="min_errors", max_size=size, max_domain=3)
    # the baseline sees the same equal-frequency bins and the same number of tests
    cart = make_pipeline(
        KBinsDiscretizer(n_bins=3, encode="ordinal", strategy="quantile"),
        DecisionTreeClassifier(max_leaf_nodes=size + 1, random_state=random_state),
    )
    start = time.perf_counter()
    score = cross_val_score(bdd, X, y, cv=cv).mean()
    fit_time = time.perf_counter() - start
    start = time.perf_counter()
    baseline = cross_val_score(cart, X, y, cv=cv).mean()
    baseline_time = time.perf_counter() - start
    bdd.fit(X, y)
    names = ["sepal len", "sepal wid", "petal len", "petal wid"]

    def draw(ax):
        plot_bdd(bdd, ax=ax, feature_names=names, class_names=["set", "ver", "vir"])
        ax.set_title(
            f"min-errors BDD, {bdd.n_inner_nodes_} tests, "
            f"{bdd.training_errors_} training errors"
        )

    return TourResult(
        score=float(score),
        baseline_score=float(baseline),
        fit_time=fit_time,
        baseline_fit_time=baseline_time,
        plot=draw,
        notes=f"optimal={bdd.is_optimal_}; {np.round(score, 3)} vs {np.round(baseline, 3)}",
    )
