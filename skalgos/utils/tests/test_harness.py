"""The common-check harness picks up a registered estimator and catches bugs."""

from numbers import Real

import numpy as np
import pytest
from sklearn.base import BaseEstimator, RegressorMixin, _fit_context
from sklearn.utils._param_validation import Interval
from sklearn.utils.estimator_checks import check_estimator
from sklearn.utils.validation import check_is_fitted

from skalgos.utils._test_common import instance_generator as ig
from skalgos.utils.estimator_checks import (
    check_array_api_refusal,
    check_dtype_preservation,
    check_fit_does_not_modify_input,
    check_skalgos_estimator,
)
from skalgos.utils.validation import validate_data


class ToyMeanRegressor(RegressorMixin, BaseEstimator):
    """Predicts a shrunk mean of y; exists only to exercise the harness."""

    _parameter_constraints = {"shrink": [Interval(Real, 0, 1, closed="both")]}

    def __init__(self, shrink=0.0):
        self.shrink = shrink

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.regressor_tags.poor_score = True  # a constant predictor
        return tags

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        X, y = validate_data(self, X, y, y_numeric=True)
        self.mean_ = (1 - self.shrink) * float(np.mean(y))
        return self

    def predict(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        return np.full(X.shape[0], self.mean_, dtype=X.dtype)


class ToyInPlaceRegressor(ToyMeanRegressor):
    """A buggy toy that centres X in place: the harness must catch it."""

    def fit(self, X, y):
        super().fit(X, y)
        if isinstance(X, np.ndarray):
            X -= X.mean(axis=0)
        return self


@pytest.fixture
def registered_toy():
    ig.register_estimator(ToyMeanRegressor, init={"shrink": 0.5})
    yield ToyMeanRegressor
    ig.unregister_estimator(ToyMeanRegressor)


def test_registered_estimator_is_discovered(registered_toy):
    instances = [e for e in ig._tested_estimators() if type(e) is registered_toy]
    assert len(instances) == 1 and instances[0].shrink == 0.5
    assert ig._get_expected_failed_checks(instances[0]) == {}


def test_registered_estimator_passes_both_harnesses(registered_toy):
    est = next(e for e in ig._tested_estimators() if type(e) is registered_toy)
    check_estimator(est, expected_failed_checks=ig._get_expected_failed_checks(est))
    skipped = check_skalgos_estimator(est)
    # No random_state and no array API tag: those two checks do not apply.
    assert set(skipped) == {"check_array_api_namespaces"}


def test_harness_catches_in_place_modification():
    ig.register_estimator(ToyInPlaceRegressor)
    try:
        with pytest.raises(AssertionError, match="modified"):
            check_fit_does_not_modify_input(ToyInPlaceRegressor())
    finally:
        ig.unregister_estimator(ToyInPlaceRegressor)


class ToyUpcastRegressor(ToyMeanRegressor):
    """A buggy toy whose predictions are float64 for float32 input."""

    def predict(self, X):
        return super().predict(X).astype(np.float64)


class ToySklearnValidationRegressor(ToyMeanRegressor):
    """A toy validating with scikit-learn's validate_data, not skalgos' one."""

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        from sklearn.utils.validation import validate_data as sk_validate_data

        X, y = sk_validate_data(self, X, y, y_numeric=True)
        self.mean_ = float(np.mean(y))
        return self


def test_harness_catches_upcast_predictions():
    with pytest.raises(AssertionError, match="float32 input into float64"):
        check_dtype_preservation(ToyUpcastRegressor())


def test_harness_catches_unclear_namespace_error():
    pytest.importorskip("array_api_strict")
    # scikit-learn's own validation fails on the strict array deep inside
    with pytest.raises(AssertionError, match="without naming itself"):
        check_array_api_refusal(ToySklearnValidationRegressor())


def test_namespace_refusal_names_estimator_and_namespace():
    array_api_strict = pytest.importorskip("array_api_strict")
    from sklearn import config_context

    X = array_api_strict.asarray([[1.0], [2.0], [3.0]])
    with config_context(array_api_dispatch=True):
        with pytest.raises(TypeError, match="ToyMeanRegressor .*array_api_strict"):
            ToyMeanRegressor().fit(X, array_api_strict.asarray([1.0, 2.0, 3.0]))


def test_every_spec_names_a_real_estimator():
    # a spec without an importable estimator is a typo, unless the estimator
    # lives in an optional extra that is not installed here
    from skalgos.utils.discovery import all_estimators

    names = {name for name, _ in all_estimators()}
    unmatched = set(ig.ESTIMATOR_SPECS) - names
    try:
        import torch  # noqa: F401
    except ImportError:
        unmatched -= set(ig._TORCH)
    assert not unmatched, unmatched
