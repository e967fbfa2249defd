"""Minimum-size BDDs (WitBDD reconstruction): sizes, solve times, accuracy.

Three claims, measured in one run:

1. size: minimum BDD versus minimum decision tree (the same exact search with
   sharing switched off) and versus sklearn's fully grown CART tree;
2. solve time: the witness search versus the SAT encoding (python-sat) of the
   same model, on the same instances;
3. accuracy: 5-fold CV accuracy at equal size (number of tests) of the
   min-errors BDD, the min-errors tree and CART (``max_leaf_nodes=size+1``
   on the raw features, the baseline users pick today).

Run: ``python benchmarks/bdd.py`` (``--quick`` for CI).
"""

import itertools
import re
import warnings

import numpy as np
from _common import parse_args, report, timer
from sklearn.datasets import load_breast_cancer, load_iris
from sklearn.exceptions import ConvergenceWarning
from sklearn.feature_selection import SelectKBest, f_classif
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.tree import DecisionTreeClassifier

from skalgos.tree import BDDClassifier, min_decision_tree
from skalgos.tree._bdd import _Encoding

# --- parameters --------------------------------------------------------------
TIME_LIMIT = 60.0  # seconds per exact solve (full run)
QUICK_TIME_LIMIT = 3.0
SIZES = (2, 3, 4)  # accuracy section
QUICK_SIZES = (2, 3)
SLACK = (0, 2)  # error budgets: forced errors + slack
RANDOM_STATE = 0


def cube(d):
    return np.array(list(itertools.product([0, 1], repeat=d)), dtype=float)


def instances(quick):
    out = {}
    X = cube(3)
    out["parity-3"] = (X, X.sum(1).astype(int) % 2, None)
    X = cube(4)
    out["(x1&x2)|(x3&x4)"] = (
        X,
        ((X[:, 0] * X[:, 1] + X[:, 2] * X[:, 3]) > 0) * 1,
        None,
    )
    Xi, yi = load_iris(return_X_y=True)
    out["iris 3-class, D=3"] = (Xi, yi, 3)
    if quick:
        return out
    out["parity-4"] = (X, X.sum(1).astype(int) % 2, None)
    X6 = cube(6)
    addr = (2 * X6[:, 0] + X6[:, 1]).astype(int)
    out["multiplexer-6"] = (X6, X6[np.arange(64), 2 + addr].astype(int), None)
    X5 = cube(5)
    out["majority-5"] = (X5, (X5.sum(1) >= 3).astype(int), None)
    out["iris setosa-vs-rest, D=3"] = (Xi, (yi == 0).astype(int), 3)
    out["iris versicolor-vs-virginica, D=3"] = (Xi[50:], yi[50:], 3)
    Xb, yb = breast_cancer_top6()
    idx = np.random.default_rng(RANDOM_STATE).choice(len(yb), 80, replace=False)
    out["breast cancer top-6, n=80, D=3"] = (Xb[idx], yb[idx], 3)
    return out


def breast_cancer_top6():
    X, y = load_breast_cancer(return_X_y=True)
    return SelectKBest(f_classif, k=6).fit_transform(X, y), y


def forced_errors(X, y, D):
    try:
        BDDClassifier(max_domain=D).fit(X, y)
        return 0
    except ValueError as exc:
        return int(re.search(r">= (\d+)", str(exc)).group(1))


def cart_inner_nodes(X, y, D):
    # the fully grown CART on the same encoding the exact search sees
    enc = _Encoding(np.asarray(X, float), D)
    cart = DecisionTreeClassifier(random_state=RANDOM_STATE).fit(enc.codes, y)
    return int((cart.tree_.children_left >= 0).sum())


def solve(func, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        with timer() as t:
            est = func(*args, **kwargs)
    return est, t()


def main():
    args = parse_args("bdd", __doc__.splitlines()[0])
    limit = QUICK_TIME_LIMIT if args.quick else TIME_LIMIT
    try:
        import pysat  # noqa: F401

        have_sat = True
    except ImportError:  # pragma: no cover
        have_sat = False

    size_rows, time_rows = [], []
    for name, (X, y, D) in instances(args.quick).items():
        forced = forced_errors(X, y, D)
        cart = cart_inner_nodes(X, y, D)
        for slack in SLACK:
            t = forced + slack
            kw = dict(max_domain=D, max_errors=t, time_limit=limit)
            bdd, tb = solve(BDDClassifier(**kw).fit, X, y)
            tree, tt = solve(min_decision_tree, X, y, **kw)
            opt = "yes" if bdd.is_optimal_ and tree.is_optimal_ else "no (time limit)"
            size_rows.append(
                [
                    name,
                    t,
                    bdd.n_inner_nodes_,
                    tree.n_inner_nodes_,
                    cart,
                    tree.n_inner_nodes_ / max(bdd.n_inner_nodes_, 1),
                    cart / max(bdd.n_inner_nodes_, 1),
                    opt,
                ]
            )
            if have_sat:
                sat, ts = solve(BDDClassifier(solver="sat", **kw).fit, X, y)
                agree = "yes" if sat.n_inner_nodes_ == bdd.n_inner_nodes_ else "no"
                if not (sat.is_optimal_ and bdd.is_optimal_):
                    agree += " (time limit)"
                time_rows.append(
                    [
                        name,
                        t,
                        bdd.n_inner_nodes_,
                        sat.n_inner_nodes_,
                        agree,
                        tb,
                        ts,
                        tb / ts,
                    ]
                )
            print(f"{name} t={t}: bdd {bdd.n_inner_nodes_} tree {tree.n_inner_nodes_}")

    acc_rows = []
    Xi, yi = load_iris(return_X_y=True)
    data = {"iris (3 classes), D=3": (Xi, yi, 3)}
    if not args.quick:
        Xb, yb = breast_cancer_top6()
        data["breast cancer top-6, D=3"] = (Xb, yb, 3)
    n_folds = 3 if args.quick else 5
    cv = StratifiedKFold(n_folds, shuffle=True, random_state=RANDOM_STATE)
    for name, (X, y, D) in data.items():
        for s in QUICK_SIZES if args.quick else SIZES:
            bdd = BDDClassifier(
                objective="min_errors", max_size=s, max_domain=D, time_limit=limit
            )
            cart = DecisionTreeClassifier(
                max_leaf_nodes=s + 1, random_state=RANDOM_STATE
            )
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                with timer() as tb:
                    a_bdd = cross_val_score(bdd, X, y, cv=cv).mean()
                a_tree = np.mean(
                    [
                        (
                            min_decision_tree(
                                X[tr],
                                y[tr],
                                objective="min_errors",
                                max_size=s,
                                max_domain=D,
                                time_limit=limit,
                            ).predict(X[te])
                            == y[te]
                        ).mean()
                        for tr, te in cv.split(X, y)
                    ]
                )
            a_cart = cross_val_score(cart, X, y, cv=cv).mean()
            acc_rows.append([name, s, a_bdd, a_tree, a_cart, a_bdd / a_cart, tb()])

    sections = [
        (
            "Size: minimum BDD vs minimum tree vs full CART (inner nodes)",
            [
                "instance",
                "max_errors t",
                "min BDD",
                "min tree",
                "CART full",
                "ratio tree/BDD",
                "ratio CART/BDD",
                "both proven optimal",
            ],
            size_rows,
        ),
        (
            "Solve time: witness search vs SAT encoding (min_size, seconds)",
            [
                "instance",
                "t",
                "witness size",
                "SAT size",
                "agree",
                "witness s",
                "SAT s",
                "ratio witness/SAT",
            ],
            time_rows,
        ),
        (
            f"Accuracy at equal size ({n_folds}-fold CV; CART on raw features)",
            [
                "data",
                "size (tests)",
                "min-errors BDD",
                "min-errors tree",
                "CART",
                "ratio BDD/CART",
                "BDD CV seconds",
            ],
            acc_rows,
        ),
    ]
    report(args, "BDDClassifier (skalgos.tree)", sections)


if __name__ == "__main__":
    main()
