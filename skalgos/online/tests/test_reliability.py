"""Inputs of any finite magnitude and long streams (issue 39)."""

import gc
import pickle
import tracemalloc

import numpy as np
import pytest
from sklearn.base import clone, is_classifier
from sklearn.datasets import make_classification, make_regression

from skalgos.online import (
    BOLD,
    ClippedVAWRegressor,
    DelayedFTRLRegressor,
    DelayedOGDClassifier,
    DelayedOGDRegressor,
    DelayedOnlineNewtonStepClassifier,
    DelayedOnlineNewtonStepRegressor,
    delayed_progressive_score,
)

REGRESSORS = [
    DelayedFTRLRegressor(),
    DelayedOGDRegressor(),
    DelayedOnlineNewtonStepRegressor(),
    ClippedVAWRegressor(),
    BOLD(),
]
CLASSIFIERS = [DelayedOGDClassifier(), DelayedOnlineNewtonStepClassifier()]
ALL = REGRESSORS + CLASSIFIERS


def _ids(ests):
    return [type(e).__name__ for e in ests]


def _reg_data(n=60):
    X, y = make_regression(n, 3, noise=1.0, random_state=0)
    return X, y


def _clf_data(n=60):
    X, y = make_classification(n, 3, n_informative=2, n_redundant=0, random_state=0)
    return X, y


# ---------------------------------------------------------------- magnitude
@pytest.mark.parametrize("est", REGRESSORS, ids=_ids(REGRESSORS))
@pytest.mark.parametrize("scale", [1e300, 1e-300])
def test_target_of_any_magnitude_is_scaled_inside(est, scale):
    # standardize=True: the learners are equivariant in y's scale, and the
    # target's statistics are kept in a power-of-two unit, so y * 1e300 (its
    # squares overflowed: OverflowError) gives the predictions of y, scaled
    X, y = _reg_data()
    ref = clone(est).set_params(max_iter=1).fit(X, y, delays=2)
    big = clone(est).set_params(max_iter=1).fit(X, y * scale, delays=2)
    pred = big.predict(X)
    assert np.all(np.isfinite(pred))
    np.testing.assert_allclose(pred / scale, ref.predict(X), rtol=1e-9, atol=0)
    np.testing.assert_allclose(
        big.online_predictions_ / scale, ref.online_predictions_, rtol=1e-9
    )


@pytest.mark.parametrize("est", REGRESSORS, ids=_ids(REGRESSORS))
def test_target_of_any_magnitude_partial_fit(est):
    X, y = _reg_data()
    ref, big = clone(est), clone(est)
    for i in range(0, 60, 6):
        ref.partial_fit(X[i : i + 6], y[i : i + 6])
        big.partial_fit(X[i : i + 6], y[i : i + 6] * 1e300)
    pred = big.predict(X)
    assert np.all(np.isfinite(pred))
    np.testing.assert_allclose(pred / 1e300, ref.predict(X), rtol=1e-9)


@pytest.mark.parametrize("est", REGRESSORS, ids=_ids(REGRESSORS))
def test_raw_target_beyond_range_is_refused_naming_y(est):
    X, y = _reg_data()
    est = clone(est).set_params(standardize=False)
    with pytest.raises(ValueError, match=r"^y has values .*TransformedTargetRegressor"):
        est.fit(X, y * 1e300)
    with pytest.raises(ValueError, match=r"^y has values .*standardize=True"):
        clone(est).partial_fit(X, y * 1e300)
    est.fit(X, y * 1e45)  # inside the range: finite
    assert np.all(np.isfinite(est.predict(X)))


@pytest.mark.parametrize("est", ALL, ids=_ids(ALL))
@pytest.mark.parametrize("method", ["fit", "partial_fit"])
def test_features_beyond_range_are_refused_naming_X(est, method):
    # X * 1e300 gave ZeroDivisionError (FTRL, BOLD, ONS), or non-finite
    # predictions without a word (VAW, OGD)
    X, y = _reg_data() if est in REGRESSORS else _clf_data()
    kw = {}
    if method == "partial_fit" and is_classifier(est):
        kw["classes"] = np.unique(y)
    with pytest.raises(ValueError, match=r"^X has values .*StandardScaler"):
        getattr(clone(est), method)(X * 1e300, y, **kw)


@pytest.mark.parametrize("est", ALL, ids=_ids(ALL))
def test_predict_on_features_beyond_range_is_refused(est):
    # a clean fit, then X * 1e300 at predict: ClippedVAWRegressor returned
    # non-finite predictions without a warning
    X, y = _reg_data() if est in REGRESSORS else _clf_data()
    est = clone(est).fit(X, y)
    with pytest.raises(ValueError, match=r"^X has values"):
        est.predict(X * 1e300)


@pytest.mark.parametrize("est", ALL, ids=_ids(ALL))
@pytest.mark.parametrize("scale", [1e45, 1e-300])
def test_large_and_tiny_features_inside_the_range_give_finite_output(est, scale):
    # ONS at X * 1e45 raised ZeroDivisionError: Hazan's epsilon
    # 1 / (gamma D)^2 underflowed (now lambda_0 = 1 / (gamma D^2))
    X, y = _reg_data() if est in REGRESSORS else _clf_data()
    est = clone(est).fit(X * scale, y)
    out = est.predict(X * scale)
    assert np.all(np.isfinite(np.asarray(out, dtype=float)))
    assert np.all(np.isfinite(est.online_predictions_))


@pytest.mark.parametrize(
    "cls", [DelayedOnlineNewtonStepRegressor, DelayedOnlineNewtonStepClassifier]
)
@pytest.mark.parametrize("radius", [1e300, 1e-300])
def test_ons_radius_out_of_range_is_refused(cls, radius):
    # radius=1e300 raised OverflowError, 1e-300 ZeroDivisionError
    X, y = _reg_data() if "Regressor" in cls.__name__ else _clf_data()
    with pytest.raises(ValueError, match="'radius' parameter"):
        cls(radius=radius).fit(X, y)
    est = cls(radius=1e50).fit(X, y)
    out = est.decision_function(X) if is_classifier(est) else est.predict(X)
    assert np.all(np.isfinite(out))


def test_river_refuses_features_and_raw_targets_beyond_range():
    pytest.importorskip("river")
    from skalgos.online import as_river

    model = as_river(ClippedVAWRegressor(standardize=False))
    model.learn_one({0: 1.0, 1: 2.0}, 1.0)
    with pytest.raises(ValueError, match="^X has values"):
        model.predict_one({0: 1e300, 1: 2.0})
    with pytest.raises(ValueError, match="^y has values"):
        model.learn_one({0: 1.0, 1: 2.0}, 1e300)


# ------------------------------------------------------------------ history
@pytest.mark.parametrize("est", ALL, ids=_ids(ALL))
def test_history_window_holds_the_last_rounds(est):
    X, y = _reg_data(200) if est in REGRESSORS else _clf_data(200)
    full = clone(est).set_params(max_iter=1, max_history=None).fit(X, y, delays=3)
    assert len(full.online_predictions_) == len(full.losses_) == 200
    for m in (0, 1, 37, 200, 10_000):
        part = clone(est).set_params(max_iter=1, max_history=m).fit(X, y, delays=3)
        k = min(m, 200)
        assert len(part.online_predictions_) == len(part.losses_) == k
        np.testing.assert_array_equal(
            part.online_predictions_, full.online_predictions_[200 - k :]
        )
        np.testing.assert_array_equal(part.losses_, full.losses_[200 - k :])
        # the running total covers every round, kept or not
        assert part.cumulative_loss_ == pytest.approx(np.sum(full.losses_), rel=1e-12)
        np.testing.assert_array_equal(part.predict(X), full.predict(X))


def test_history_window_across_partial_fit_calls():
    X, y = _reg_data(300)
    full = DelayedFTRLRegressor(standardize=False, max_history=None)
    part = DelayedFTRLRegressor(standardize=False, max_history=50)
    for i in range(0, 300, 7):
        full.partial_fit(X[i : i + 7], y[i : i + 7], delays=2)
        part.partial_fit(X[i : i + 7], y[i : i + 7], delays=2)
        k = min(50, part.t_)
        np.testing.assert_array_equal(
            part.online_predictions_, full.online_predictions_[part.t_ - k :]
        )
        np.testing.assert_array_equal(part.losses_, full.losses_[part.t_ - k :])


def test_pickle_keeps_the_rounds_not_the_window():
    X, y = _reg_data(30)
    est = DelayedOGDRegressor().fit(X, y, delays=1)
    back = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(back.online_predictions_, est.online_predictions_)
    np.testing.assert_array_equal(back.losses_, est.losses_)
    # 30 rounds kept, not the 10,000-round window (160 kB)
    assert len(pickle.dumps(est)) < 20_000
    back.partial_fit(X, y)  # and the stream goes on
    assert len(back.online_predictions_) == 60


def test_no_history_before_fit():
    est = DelayedOGDRegressor()
    assert not hasattr(est, "online_predictions_")
    assert not hasattr(est, "losses_")


def test_progressive_score_sees_every_round_whatever_the_window():
    X, y = _reg_data(80)
    s = delayed_progressive_score(DelayedOGDRegressor(max_history=10), X, y, 2)
    ref = delayed_progressive_score(DelayedOGDRegressor(max_history=None), X, y, 2)
    assert s.losses.shape == (80,)
    np.testing.assert_array_equal(s.losses, ref.losses)


def _growth(step, n_warm, n_calls):
    for i in range(n_warm):
        step(i)
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        for i in range(n_warm, n_warm + n_calls):
            step(i)
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("est", ALL, ids=_ids(ALL))
def test_memory_flat_once_the_window_is_full(est):
    # a window of 40 rounds, full after the warm-up: 1000 further 2-row
    # calls add nothing per call (the lists grew by ~136 bytes per call; a
    # flat stream shows 10-20 kB of allocator noise)
    X, y = _reg_data(40) if est in REGRESSORS else _clf_data(40)
    est = clone(est).set_params(max_history=40)
    first = {"classes": np.unique(y)} if is_classifier(est) else {}

    def step(i):
        j = 2 * (i % 20)
        est.partial_fit(X[j : j + 2], y[j : j + 2], **(first if i == 0 else {}))

    growth = _growth(step, 30, 1000)
    assert growth < 32 * 1024, f"{growth} bytes over 1000 calls"
    assert len(est.online_predictions_) == 40


def test_model_pickled_with_the_old_lists_still_loads():
    X, y = _reg_data(30)
    est = DelayedOGDRegressor(standardize=False).fit(X, y, delays=1)
    state = est.__getstate__()
    h = state.pop("_history")
    state["online_predictions_"] = h.predictions().tolist()
    state["losses_"] = h.losses().tolist()
    old = DelayedOGDRegressor.__new__(DelayedOGDRegressor)
    old.__setstate__(state)
    np.testing.assert_array_equal(old.online_predictions_, est.online_predictions_)
    np.testing.assert_array_equal(old.losses_, est.losses_)
    old.partial_fit(X, y)
    assert len(old.online_predictions_) == 60
