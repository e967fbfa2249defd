"""``as_river``: our learners as River estimators, driven by River's own
progressive validation. River is optional: these tests skip without it,
unless ``SKALGOS_REQUIRE_EXTRAS`` names ``river`` (CI sets it, so that a
missing install fails instead of skipping)."""

import importlib
import os
import pickle
import sys

import numpy as np
import pytest
from sklearn.base import clone

from skalgos.online import (
    BOLD,
    ClippedVAWRegressor,
    DelayedFTRLRegressor,
    DelayedOGDClassifier,
    DelayedOGDRegressor,
    DelayedOnlineNewtonStepClassifier,
    DelayedOnlineNewtonStepRegressor,
    as_river,
    river_delay_to_skalgos,
)

from .test_online import _paper


def _require(name):
    if name in os.environ.get("SKALGOS_REQUIRE_EXTRAS", "").split(","):
        return importlib.import_module(name)  # CI: missing means failure
    return pytest.importorskip(name)


def _stream(T=150, n=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(T, n)) / np.sqrt(n)
    y = X @ rng.normal(size=n) + 0.1 * rng.normal(size=T)
    return X, y


def _dicts(X, y):
    return [({f"x{j}": v for j, v in enumerate(row)}, t) for row, t in zip(X, y)]


# the paper's stream setting (standardize=False, radius=1.0, one pass): river
# feeds one row at a time, so a running target scale would differ from fit's
REGRESSORS = [
    _paper(ClippedVAWRegressor, alpha=0.5),
    _paper(ClippedVAWRegressor, covariance="all", fit_intercept=True),
    _paper(DelayedOnlineNewtonStepRegressor),
    _paper(DelayedOGDRegressor),
    _paper(DelayedFTRLRegressor, 0.5),
    _paper(BOLD, n_copies=4),
]


@pytest.mark.parametrize("est", REGRESSORS, ids=repr)
@pytest.mark.parametrize("river_delay", [None, 0, 1, 4, 9])
def test_progressive_val_score_plays_our_delayed_protocol(est, river_delay):
    river = _require("river")
    from river import evaluate, metrics

    X, y = _stream()
    T = len(y)
    # River answers the labels still due when the stream ends, in row order:
    # in our protocol they arrive at the end of the last round.
    d = np.full(T, river_delay_to_skalgos(river_delay))
    d = np.minimum(d, T - 1 - np.arange(T))
    ours = clone(est).fit(X, y, delays=d)
    model = as_river(est)
    assert isinstance(model, river.base.Regressor)
    metric = evaluate.progressive_val_score(
        _dicts(X, y), model, metrics.MSE(), delay=river_delay
    )
    fitted = model.learner_
    np.testing.assert_allclose(
        fitted.online_predictions_, ours.online_predictions_, rtol=1e-12, atol=1e-12
    )
    np.testing.assert_allclose(fitted.losses_, ours.losses_, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(fitted.predict(X), ours.predict(X), atol=1e-12)
    assert (fitted.d_tot_, fitted.d_max_, fitted.sigma_max_) == (
        ours.d_tot_,
        ours.d_max_,
        ours.sigma_max_,
    )
    # River's own metric saw the same predictions
    mse = np.mean((np.asarray(ours.online_predictions_) - y) ** 2)
    assert metric.get() == pytest.approx(mse, rel=1e-12)


def test_callable_per_row_delays_convert_row_by_row():
    _require("river")
    from river import evaluate, metrics

    X, y = _stream(200, seed=1)
    # (River answers a d = 0 row before the older rows due with it; ours go
    # by row, so the exact match is for d >= 1)
    rd = np.random.default_rng(3).integers(1, 15, size=200)
    rd[10] = 120  # one label far out of order
    row_of = {float(t): i for i, t in enumerate(y)}

    def delay(x, t):  # River's callable delay: one per row
        return int(rd[row_of[float(t)]])

    est = _paper(DelayedOnlineNewtonStepRegressor)
    model = as_river(est)
    evaluate.progressive_val_score(_dicts(X, y), model, metrics.MAE(), delay=delay)
    ours = _paper(DelayedOnlineNewtonStepRegressor).fit(
        X, y, delays=river_delay_to_skalgos(rd)
    )
    np.testing.assert_allclose(
        model.learner_.online_predictions_, ours.online_predictions_, atol=1e-12
    )
    assert model.learner_.d_max_ == ours.d_max_ == 119


@pytest.mark.parametrize(
    "est",
    [_paper(DelayedOnlineNewtonStepClassifier), _paper(DelayedOGDClassifier)],
    ids=repr,
)
@pytest.mark.parametrize("metric_name", ["LogLoss", "Accuracy"])
def test_classifier_under_river(est, metric_name):
    river = _require("river")
    from river import evaluate, metrics

    X, y = _stream(160, seed=2)
    yb = y > 0
    model = as_river(est, classes=[False, True])
    assert isinstance(model, river.base.Classifier)
    metric = getattr(metrics, metric_name)()
    evaluate.progressive_val_score(_dicts(X, yb), model, metric, delay=6)
    # without classes=, boolean labels are learned from the first answer;
    # the 6 questions before it get no prediction (River's {}), not scored
    late = as_river(est)
    other = getattr(metrics, metric_name)()
    evaluate.progressive_val_score(_dicts(X, yb), late, other, delay=6)
    np.testing.assert_allclose(
        late.learner_.online_predictions_, model.learner_.online_predictions_
    )
    p = np.asarray(model.learner_.online_predictions_)[6:]
    if metric_name == "LogLoss":
        ref = -np.mean(np.where(yb[6:], np.log(p), np.log1p(-p)))
    else:
        ref = np.mean((p > 0.5) == yb[6:])
    assert other.get() == pytest.approx(ref, rel=1e-9)
    ours = clone(est).fit(X, yb, delays=5)
    p = np.asarray(ours.online_predictions_)
    np.testing.assert_allclose(model.learner_.online_predictions_, p, atol=1e-12)
    if metric_name == "LogLoss":
        ref = -np.mean(np.where(yb, np.log(p), np.log1p(-p)))
    else:  # River's predict_one: the more probable label (ties: the first)
        ref = np.mean((p > 0.5) == yb)
    assert metric.get() == pytest.approx(ref, rel=1e-9)
    proba = model.predict_proba_one(_dicts(X[:1], yb[:1])[0][0])
    assert set(proba) == {False, True} and sum(proba.values()) == pytest.approx(1)


def test_classifier_labels_and_errors():
    _require("river")
    X, y = _stream(20)
    rows = _dicts(X, np.where(y > 0, "up", "down"))
    model = as_river(DelayedOGDClassifier())
    assert model.predict_proba_one(rows[0][0]) == {}  # labels not known yet
    with pytest.raises(ValueError, match="classes"):
        model.learn_one(*rows[0])
    model = as_river(DelayedOGDClassifier(), classes=["down", "up"])
    for x, t in rows:
        model.predict_one(x)
        model.learn_one(x, t)
    assert model.predict_one(rows[0][0]) in ("down", "up")
    with pytest.raises(ValueError, match="missing"):
        model.predict_one({"x0": 1.0})
    with pytest.raises(ValueError, match="regressor"):
        as_river(ClippedVAWRegressor(), classes=[0, 1])
    with pytest.raises(TypeError, match="delayed learners"):
        from sklearn.linear_model import SGDRegressor

        as_river(SGDRegressor())


def test_untracked_predictions_leave_the_learner_alone():
    _require("river")
    X, y = _stream(60, seed=4)
    rows = _dicts(X, y)
    model = as_river(
        _paper(ClippedVAWRegressor, covariance="all"), track_questions=False
    )
    for x, t in rows:
        for _ in range(3):  # serving the same row thrice changes nothing
            model.predict_one(x)
        model.learn_one(x, t)
    ref = _paper(ClippedVAWRegressor, covariance="all").fit(X, y)
    np.testing.assert_allclose(model.learner_.predict(X), ref.predict(X), atol=1e-12)
    assert model.learner_.t_ == 60 and not model.learner_.pending_


def test_river_clone_and_pickle():
    _require("river")
    from river import evaluate, metrics

    X, y = _stream(50)
    model = as_river(
        _paper(DelayedOnlineNewtonStepRegressor), feature_names=["x2", "x0", "x1"]
    )
    evaluate.progressive_val_score(_dicts(X, y), model, metrics.MAE(), delay=3)
    back = pickle.loads(pickle.dumps(model))
    np.testing.assert_allclose(back.learner_.coef_, model.learner_.coef_)
    fresh = model.clone()
    assert fresh.learner_ is None and fresh.feature_names == ["x2", "x0", "x1"]
    assert type(fresh).__name__ == "RiverRegressor"
    from skalgos.online import RiverRegressor

    assert type(model) is RiverRegressor


def test_without_river_the_error_says_how_to_install(monkeypatch):
    from skalgos.online import _river

    _river._river_classes.cache_clear()
    monkeypatch.setitem(sys.modules, "river", None)
    try:
        with pytest.raises(ImportError, match="pip install river"):
            as_river(ClippedVAWRegressor())
    finally:
        _river._river_classes.cache_clear()


def test_river_delay_conversion_rejects_bad_values():
    with pytest.raises(ValueError, match="non-negative integers"):
        river_delay_to_skalgos([1, -2])
    np.testing.assert_array_equal(river_delay_to_skalgos([0, 1, 2]), [0, 0, 1])
