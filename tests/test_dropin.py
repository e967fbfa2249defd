"""Drop-in parity at defaults on scikit-learn's bundled data (issues 34 and 35).

The small version of ``benchmarks/dropin.py``: each estimator at its defaults,
fitted as a new user would (``make_pipeline(StandardScaler(), Estimator())``,
``train_test_split(random_state=0)``, the target left raw), must score at least
its scikit-learn counterpart's score minus 0.05 (R^2 against the counterpart's
or 0, whichever is higher; accuracy against the best counterpart). Warnings
raised at fit are recorded (not turned into errors) and shown in the failure
message: the acceptance is the score.
"""

import importlib
import warnings

import numpy as np
import pytest
from sklearn.datasets import load_diabetes, load_iris, load_wine
from sklearn.impute import SimpleImputer
from sklearn.kernel_ridge import KernelRidge
from sklearn.linear_model import LogisticRegression, Ridge, SGDClassifier
from sklearn.metrics import accuracy_score, r2_score
from sklearn.model_selection import cross_val_score, train_test_split
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import KBinsDiscretizer, StandardScaler
from sklearn.tree import DecisionTreeClassifier

MARGIN = 0.05

# Rows where the acceptance does not hold yet (issues 34 and 35 stay open for
# them). strict: the test fails the day the row passes, so the mark comes off.
_TRANSDUCTIVE = (
    "issue 35: the paper's completers stay transductive (OCMC's exact "
    "completion); SoftImputeCompleter is the drop-in imputer. These lose to "
    "mean imputation on raw wine and cannot transform new rows"
)
KNOWN_FAILURES = {
    ("test_classifier_iris", "BDDClassifier"): (
        "issue 35 open: after KBinsDiscretizer(encode='ordinal') BDDClassifier "
        "scores 0.895 on this iris split against 0.974 (5-fold CV: 0.927 "
        "against DecisionTreeClassifier's 0.933, benchmarks/results/bdd.md)"
    ),
    **{
        ("test_completer_beats_mean_imputation", f"{n}-wine"): _TRANSDUCTIVE
        for n in ("NuclearNormCompleter", "OCMCCompleter", "IMCCompleter")
    },
    **{
        ("test_completer_in_a_pipeline_with_new_rows", n): _TRANSDUCTIVE
        for n in ("NuclearNormCompleter", "OCMCCompleter", "IMCCompleter")
    },
}


def _params(test, values, ids):
    return [
        pytest.param(
            *(v if isinstance(v, tuple) else (v,)),
            id=i,
            marks=[pytest.mark.xfail(strict=True, reason=KNOWN_FAILURES[(test, i)])]
            if (test, i) in KNOWN_FAILURES
            else [],
        )
        for v, i in zip(values, ids, strict=True)
    ]


REGRESSORS = [
    ("skalgos.online", "DelayedOGDRegressor"),
    ("skalgos.online", "DelayedFTRLRegressor"),
    ("skalgos.online", "DelayedOnlineNewtonStepRegressor"),
    ("skalgos.online", "BOLD"),
    ("skalgos.online", "ClippedVAWRegressor"),
    ("skalgos.online", "AsyncMiniBatchRegressor"),
    ("skalgos.torch", "TorchRegressor"),
    ("skalgos.federated", "FederatedRegressor"),
]
CLASSIFIERS = [
    ("skalgos.online", "DelayedOGDClassifier"),
    ("skalgos.online", "DelayedOnlineNewtonStepClassifier"),
    ("skalgos.torch", "TorchClassifier"),
    ("skalgos.federated", "FederatedClassifier"),
    ("skalgos.kernel_ridge", "InvariantKernelClassifier"),
    ("skalgos.tree", "BDDClassifier"),
]
COMPLETERS = [
    "NuclearNormCompleter",
    "OCMCCompleter",
    "IMCCompleter",
    "SoftImputeCompleter",
]


def _make(module, name):
    if module == "skalgos.torch":
        pytest.importorskip("torch")
    est = getattr(importlib.import_module(module), name)()
    if "random_state" in est.get_params(deep=False):
        est.set_params(random_state=0)
    return est


def _fit(model, X, y=None):
    """Fit, returning the warnings raised (recorded, not raised)."""
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        model.fit(X, y)
    return sorted({f"{w.category.__name__}: {str(w.message)[:120]}" for w in rec})


def _split(loader):
    X, y = loader(return_X_y=True, as_frame=True)
    return train_test_split(X, y, random_state=0)


@pytest.fixture(scope="module")
def diabetes():
    Xtr, Xte, ytr, yte = _split(load_diabetes)
    ridge = make_pipeline(StandardScaler(), Ridge()).fit(Xtr, ytr)
    return Xtr, Xte, ytr, yte, r2_score(yte, ridge.predict(Xte))


@pytest.fixture(scope="module")
def iris():
    Xtr, Xte, ytr, yte = _split(load_iris)
    scores = {}
    for cp in (
        LogisticRegression(),
        SGDClassifier(random_state=0),
        MLPClassifier(random_state=0),
        DecisionTreeClassifier(random_state=0),
    ):
        model = make_pipeline(StandardScaler(), cp)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # MLPClassifier's ConvergenceWarning
            model.fit(Xtr, ytr)
        scores[type(cp).__name__] = accuracy_score(yte, model.predict(Xte))
    return Xtr, Xte, ytr, yte, scores


@pytest.mark.parametrize(
    "module, name",
    _params(
        "test_regressor_raw_target_diabetes", REGRESSORS, [n for _, n in REGRESSORS]
    ),
)
def test_regressor_raw_target_diabetes(diabetes, module, name):
    Xtr, Xte, ytr, yte, ridge_r2 = diabetes
    model = make_pipeline(StandardScaler(), _make(module, name))
    warns = _fit(model, Xtr, ytr)
    r2 = r2_score(yte, model.predict(Xte))
    ref = max(ridge_r2, 0.0)
    assert r2 >= ref - MARGIN, (
        f"{name} at defaults on load_diabetes (raw target): R^2 {r2:.3f}, "
        f"Ridge {ridge_r2:.3f}, needs >= {ref - MARGIN:.3f}; warnings: {warns}"
    )


def test_invariant_kernel_ridge_raw_target_diabetes(diabetes):
    # its counterpart is KernelRidge (R^2 against KernelRidge's or 0)
    Xtr, Xte, ytr, yte, _ = diabetes
    kr = make_pipeline(StandardScaler(), KernelRidge()).fit(Xtr, ytr)
    ref = max(r2_score(yte, kr.predict(Xte)), 0.0)
    model = make_pipeline(
        StandardScaler(), _make("skalgos.kernel_ridge", "InvariantKernelRidge")
    )
    warns = _fit(model, Xtr, ytr)
    r2 = r2_score(yte, model.predict(Xte))
    assert r2 >= ref - MARGIN, (
        f"InvariantKernelRidge at defaults on load_diabetes: R^2 {r2:.3f}, "
        f"needs >= {ref - MARGIN:.3f}; warnings: {warns}"
    )


@pytest.mark.parametrize(
    "module, name",
    _params("test_classifier_iris", CLASSIFIERS, [n for _, n in CLASSIFIERS]),
)
def test_classifier_iris(iris, module, name):
    Xtr, Xte, ytr, yte, scores = iris
    prep = KBinsDiscretizer(encode="ordinal") if name == "BDDClassifier" else None
    model = make_pipeline(prep or StandardScaler(), _make(module, name))
    warns = _fit(model, Xtr, ytr)
    acc = accuracy_score(yte, model.predict(Xte))
    best = max(scores, key=scores.get)
    assert acc >= scores[best] - MARGIN, (
        f"{name} at defaults on iris: accuracy {acc:.3f}, best counterpart "
        f"{best} {scores[best]:.3f}; warnings: {warns}"
    )


def _hide(X, rate=0.2, seed=0):
    rng = np.random.RandomState(seed)
    hidden = rng.rand(*X.shape) < rate
    Xm = X.copy()
    Xm[hidden] = np.nan
    return Xm, hidden


@pytest.mark.parametrize(
    "name, loader",
    _params(
        "test_completer_beats_mean_imputation",
        [(n, ld) for n in COMPLETERS for ld in (load_diabetes, load_wine)],
        [f"{n}-{d}" for n in COMPLETERS for d in ("diabetes", "wine")],
    ),
)
def test_completer_beats_mean_imputation(name, loader):
    # wine's columns have very different scales (issue 35: 1.64x-2.25x the mean's)
    X = loader().data.astype(float)
    Xm, hidden = _hide(X)
    mean = SimpleImputer().fit_transform(Xm)
    est = _make("skalgos.completion", name)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        out = np.asarray(est.fit_transform(Xm), dtype=float)
    rmse = np.sqrt(np.mean((out[hidden] - X[hidden]) ** 2))
    rmse_mean = np.sqrt(np.mean((mean[hidden] - X[hidden]) ** 2))
    assert np.isfinite(rmse) and rmse <= rmse_mean, (
        f"{name} at defaults: RMSE on hidden entries {rmse:.4g} > mean "
        f"imputation {rmse_mean:.4g}; warnings: {sorted({str(w.message)[:120] for w in rec})}"
    )


@pytest.mark.parametrize(
    "name",
    _params("test_completer_in_a_pipeline_with_new_rows", COMPLETERS, COMPLETERS),
)
def test_completer_in_a_pipeline_with_new_rows(name):
    # cross_val_score transforms held-out rows the completer never saw
    X, y = load_diabetes(return_X_y=True)
    Xm, _ = _hide(X)
    ref = cross_val_score(make_pipeline(SimpleImputer(), Ridge()), Xm, y).mean()
    model = make_pipeline(_make("skalgos.completion", name), Ridge())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r2 = cross_val_score(model, Xm, y, error_score="raise").mean()
    assert r2 >= max(ref, 0.0) - MARGIN, (
        f"make_pipeline({name}(), Ridge()): CV R^2 {r2:.3f}, "
        f"SimpleImputer + Ridge {ref:.3f}"
    )


@pytest.mark.parametrize(
    "module, name",
    [
        ("skalgos.online", "DelayedOGDRegressor"),
        ("skalgos.online", "DelayedFTRLRegressor"),
        ("skalgos.online", "DelayedOnlineNewtonStepRegressor"),
        ("skalgos.online", "BOLD"),
        ("skalgos.online", "ClippedVAWRegressor"),
        ("skalgos.online", "AsyncMiniBatchRegressor"),
        ("skalgos.torch", "TorchRegressor"),
    ],
)
def test_regressor_takes_a_one_hot_encoders_sparse_output(module, name):
    # ColumnTransformer with a OneHotEncoder gives a sparse matrix when the
    # output is mostly zeros (the drop-in table's diamonds tables raised
    # "Sparse data was passed"); SGDRegressor takes it, so ours must, with
    # the same predictions as on the dense matrix
    if module == "skalgos.torch":
        pytest.importorskip("torch", reason="the torch extra is not installed")
    import scipy.sparse as sp
    from sklearn.preprocessing import OneHotEncoder

    Est = getattr(importlib.import_module(module), name)
    rng = np.random.default_rng(0)
    cats = rng.integers(0, 12, size=(300, 3))
    Xs = OneHotEncoder().fit_transform(cats)
    assert sp.issparse(Xs)
    y = 100 + 10 * Xs.toarray() @ rng.normal(size=Xs.shape[1])
    sparse = Est(random_state=0).fit(Xs, y)
    dense = Est(random_state=0).fit(Xs.toarray(), y)
    np.testing.assert_allclose(sparse.predict(Xs), dense.predict(Xs.toarray()))
    assert sparse.score(Xs, y) > 0.5
