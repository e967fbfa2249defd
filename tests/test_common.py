"""scikit-learn's and skalgos' common checks over every discovered estimator."""

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from skalgos.utils._test_common.instance_generator import (
    _get_expected_failed_checks,
    _tested_estimators,
)
from skalgos.utils.estimator_checks import SkipCheck, yield_skalgos_checks

ESTIMATORS = list(_tested_estimators())


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=_get_expected_failed_checks)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


def _skalgos_params():
    for est in ESTIMATORS:
        for est_, check in yield_skalgos_checks(est):
            yield pytest.param(
                est_, check, id=f"{type(est_).__name__}-{check.__name__}"
            )


@pytest.mark.parametrize("estimator, check", list(_skalgos_params()))
def test_skalgos_checks(estimator, check):
    try:
        check(estimator)
    except SkipCheck as exc:
        pytest.skip(str(exc))
