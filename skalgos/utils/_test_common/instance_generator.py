"""How each estimator is instantiated and fed in the common checks.

``ESTIMATOR_SPECS`` maps an estimator's class name to a dict with these keys
(all optional):

``init``
    Constructor keyword arguments, or a list of such dicts (one instance each).
    Use small settings: the common checks fit many times on tiny data.
``expected_failed_checks``
    ``{check_name: reason}`` for scikit-learn's checks that cannot pass, each
    with a written reason (why the check does not apply to this estimator).
``data``
    ``callable(random_state) -> (X, y, fit_params)`` for skalgos' own checks
    (pickling, Pipeline, GridSearchCV, input immutability, determinism,
    float32). Defaults follow the estimator type (see ``default_data``).
``output``
    ``callable(fitted_estimator, X) -> array`` compared by the checks; the
    default is ``predict``, else ``transform``, else ``labels_``.
``grid``
    Parameter grid for the GridSearchCV check (default: a grid over
    ``random_state`` if the estimator has one).
``skipped_skalgos_checks``
    ``{check_name: reason}`` for skalgos' own checks that do not apply.

Each family keeps its entries in its own section below, so that families never
edit the same lines. Test-only estimators can be added with
:func:`register_estimator`.
"""

import numpy as np
from sklearn.datasets import make_blobs, make_regression
from sklearn.utils import get_tags

from ..discovery import all_estimators

# --- completion --------------------------------------------------------------
_COMPLETION = {}


# --- kernel_ridge ------------------------------------------------------------
_KERNEL_RIDGE = {}


# --- transport ---------------------------------------------------------------
_TRANSPORT = {}


# --- tree --------------------------------------------------------------------
_TREE = {}


# --- cluster -----------------------------------------------------------------
_CLUSTER = {}


# --- neighbors ---------------------------------------------------------------
_NEIGHBORS = {}


# --- graph -------------------------------------------------------------------
_GRAPH = {}


# --- online ------------------------------------------------------------------
def _online_binary_data(random_state):
    # The delayed ONS / OGD classifiers are binary (logistic loss).
    X, y = make_blobs(n_samples=60, centers=2, n_features=4, random_state=random_state)
    return X, y, {}


def _online_regression_data(random_state):
    # Scaled so that the default unit-ball learners are not saturated.
    X, y = make_regression(
        n_samples=60, n_features=4, noise=0.1, random_state=random_state
    )
    return X / 3.0, y / np.abs(y).max(), {}


_ONLINE = {
    "DelayedOGDClassifier": {"data": _online_binary_data},
    "DelayedOnlineNewtonStepClassifier": {"data": _online_binary_data},
    "DelayedFTRLRegressor": {"data": _online_regression_data},
    "DelayedOGDRegressor": {"data": _online_regression_data},
    "DelayedOnlineNewtonStepRegressor": {"data": _online_regression_data},
    "ClippedVAWRegressor": {"data": _online_regression_data},
    "BOLD": {"data": _online_regression_data},
    "AsyncMiniBatchRegressor": {
        "init": {"n_steps": 400, "random_state": 0},
        "data": _online_regression_data,
    },
}


# --- federated ---------------------------------------------------------------
_FEDERATED = {}


# --- metrics -----------------------------------------------------------------
_METRICS = {}


# --- torch -------------------------------------------------------------------
_TORCH = {}


# --- test-only estimators (register_estimator) -------------------------------
_REGISTERED = {}


def _all_specs():
    specs = {}
    for part in (
        _COMPLETION,
        _KERNEL_RIDGE,
        _TRANSPORT,
        _TREE,
        _CLUSTER,
        _NEIGHBORS,
        _GRAPH,
        _ONLINE,
        _FEDERATED,
        _METRICS,
        _TORCH,
    ):
        overlap = set(specs) & set(part)
        if overlap:  # pragma: no cover - a programming error caught in CI
            raise RuntimeError(f"Estimator specs defined twice: {sorted(overlap)}")
        specs.update(part)
    return specs


ESTIMATOR_SPECS = _all_specs()


def register_estimator(cls, **spec):
    """Add a (test-only) estimator class to the common checks.

    Parameters
    ----------
    cls : type
        An estimator class.
    **spec
        The keys described in this module's docstring.

    Returns
    -------
    cls : type
        Unchanged, so this can be used as a class decorator.
    """
    _REGISTERED[cls.__name__] = (cls, spec)
    return cls


def unregister_estimator(cls):
    """Remove a class added with :func:`register_estimator`."""
    _REGISTERED.pop(cls.__name__, None)


def get_spec(estimator):
    """The spec dict of an estimator instance or class (empty if none)."""
    name = (
        estimator.__name__ if isinstance(estimator, type) else type(estimator).__name__
    )
    if name in _REGISTERED:
        return _REGISTERED[name][1]
    return ESTIMATOR_SPECS.get(name, {})


def _estimator_classes():
    classes = dict(all_estimators())
    for name, (cls, _) in _REGISTERED.items():
        classes[name] = cls
    return sorted(classes.items())


def _construct_instances(cls):
    init = get_spec(cls).get("init", {})
    for params in init if isinstance(init, list) else [init]:
        yield cls(**params)


def _tested_estimators():
    """Yield one instance per (estimator class, init settings)."""
    for _, cls in _estimator_classes():
        yield from _construct_instances(cls)


def _get_expected_failed_checks(estimator):
    """``{check_name: reason}`` for ``parametrize_with_checks``."""
    return dict(get_spec(estimator).get("expected_failed_checks", {}))


def default_data(estimator, random_state=0):
    """Small data matching the estimator's type: ``(X, y, fit_params)``."""
    tags = get_tags(estimator)
    if tags.estimator_type == "classifier":
        X, y = make_blobs(
            n_samples=60, centers=3, n_features=4, random_state=random_state
        )
        return X, y, {}
    if tags.estimator_type == "regressor":
        X, y = make_regression(
            n_samples=60, n_features=4, noise=0.1, random_state=random_state
        )
        return X, y, {}
    X, _ = make_blobs(n_samples=60, centers=3, n_features=4, random_state=random_state)
    y = None
    if tags.target_tags.required:
        y = np.arange(X.shape[0]) % 2
    return X, y, {}


def get_data(estimator, random_state=0):
    """The data skalgos' own checks fit ``estimator`` on."""
    make = get_spec(estimator).get("data")
    if make is None:
        return default_data(estimator, random_state)
    return make(random_state)


def get_output(estimator, X):
    """What the checks compare after fitting (see ``output`` in the specs)."""
    output = get_spec(estimator).get("output")
    if output is not None:
        return output(estimator, X)
    for method in ("predict", "transform"):
        if hasattr(estimator, method):
            return getattr(estimator, method)(X)
    if hasattr(estimator, "labels_"):
        return estimator.labels_
    raise AttributeError(
        f"{type(estimator).__name__} has no predict/transform/labels_; give its spec "
        "an 'output' callable."
    )
