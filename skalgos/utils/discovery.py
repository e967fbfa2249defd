"""Find every public estimator, display and function of skalgos."""

import inspect
import pkgutil
from importlib import import_module
from operator import itemgetter
from pathlib import Path

from sklearn.base import (
    BaseEstimator,
    ClassifierMixin,
    ClusterMixin,
    RegressorMixin,
    TransformerMixin,
)

_ROOT = Path(__file__).parent.parent
_MODULES_TO_SKIP = {"tests", "_test_common", "externals", "__main__", "_tour"}


def _optional_skip(name):
    """Modules whose import needs an optional extra that is missing here."""
    if name.startswith("skalgos.torch"):
        try:
            import torch  # noqa: F401
        except ImportError:
            return True
    if ".flower" in name:
        try:
            import flwr  # noqa: F401
        except ImportError:
            return True
    return False


def _walk_modules():
    for _, name, _ in pkgutil.walk_packages([str(_ROOT)], prefix="skalgos."):
        parts = set(name.split("."))
        if parts & _MODULES_TO_SKIP or any(p.startswith("test_") for p in parts):
            continue
        if _optional_skip(name):
            continue
        yield import_module(name)


def _public_members(predicate):
    found = set()
    for module in _walk_modules():
        for name, obj in inspect.getmembers(module, predicate):
            if name.startswith("_") or not getattr(obj, "__module__", "").startswith(
                "skalgos"
            ):
                continue
            found.add((name, obj))
    return sorted(found, key=itemgetter(0))


def all_estimators(type_filter=None):
    """List every estimator class of skalgos.

    Parameters
    ----------
    type_filter : {"classifier", "regressor", "cluster", "transformer"} \
            or list of those, default=None
        Keep only estimators of these kinds; ``None`` keeps all.

    Returns
    -------
    estimators : list of (name, class) tuples
        Sorted by name. Abstract classes and test-only modules are left out;
        ``skalgos.torch`` is included only when torch is installed.

    Examples
    --------
    >>> from skalgos.utils.discovery import all_estimators
    >>> isinstance(all_estimators(), list)
    True
    """

    def is_estimator(obj):
        return (
            inspect.isclass(obj)
            and issubclass(obj, BaseEstimator)
            and obj is not BaseEstimator
            and not inspect.isabstract(obj)
        )

    estimators = _public_members(is_estimator)
    if type_filter is None:
        return estimators
    filters = [type_filter] if isinstance(type_filter, str) else list(type_filter)
    mixins = {
        "classifier": ClassifierMixin,
        "regressor": RegressorMixin,
        "transformer": TransformerMixin,
        "cluster": ClusterMixin,
    }
    unknown = set(filters) - set(mixins)
    if unknown:
        raise ValueError(
            f"type_filter must be None or one of {sorted(mixins)}; got {sorted(unknown)}."
        )
    return [
        (name, cls)
        for name, cls in estimators
        if any(issubclass(cls, mixins[f]) for f in filters)
    ]


def all_functions():
    """List every public function of skalgos as (name, function) tuples."""
    return _public_members(inspect.isfunction)
