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
def _kernel_ridge_specs():
    from ...kernel_ridge import CyclicGroup, PermutationGroup, TorusFourier

    # The checks' data are not on a manifold; a torus basis reads any real point
    # modulo its period, and a long period keeps the data inside one period.
    torus = TorusFourier(max_frequency=1, period=40.0)
    grid = {"alpha": [1e-3, 1e-1]}
    invariant = (
        "the instance is permutation invariant (the estimator's purpose) and the "
        "check's target is not, so no invariant model reaches the check's training "
        "score; the same fits without a group pass (tested in skalgos/kernel_ridge)"
    )
    train = {
        "check_regressors_train": invariant,
        "check_regressors_train(readonly_memmap=True)": invariant,
        "check_regressors_train(readonly_memmap=True,X_dtype=float32)": invariant,
    }
    train_clf = {k.replace("regressors", "classifiers"): v for k, v in train.items()}
    return {
        "InvariantKernelRidge": {
            "init": {"basis": torus, "group": PermutationGroup()},
            "grid": grid,
            "array_api_rtol": 1e-6,
            "expected_failed_checks": train,
        },
        "InvariantKernelClassifier": {
            "init": {"basis": torus, "group": PermutationGroup()},
            "grid": grid,
            "expected_failed_checks": train_clf,
        },
        "InvariantSpectralFeatures": {
            "init": {"basis": torus, "group": PermutationGroup()},
            "grid": {"weights": ["none", "sobolev"]},
            "scoring": lambda est, X, y=None: 0.0,
            "array_api_rtol": 1e-6,
        },
        "GroupAveragedKernelRidge": {
            "init": {"group": CyclicGroup(4), "alpha": 0.1},
            "grid": grid,
        },
    }


_KERNEL_RIDGE = _kernel_ridge_specs()


# --- transport ---------------------------------------------------------------
_TRANSPORT = {}


# --- tree --------------------------------------------------------------------
def _tree_data(random_state):
    rng = np.random.RandomState(random_state)
    X = rng.randint(0, 3, size=(30, 3)).astype(float)
    y = (X[:, 0] + X[:, 1] > 2).astype(int)
    return X, y, {}


_TREE = {
    "BDDClassifier": {
        # a small size cap, binned features and a time limit keep the exact
        # search cheap on the checks' continuous data
        "init": {
            "objective": "min_errors",
            "max_size": 3,
            "max_domain": 4,
            "time_limit": 20.0,
        },
        "data": _tree_data,
        "grid": {"max_size": [1, 2]},
    },
}


# --- cluster -----------------------------------------------------------------
_STABLE_IDS = (
    "labels_ are stable cluster ids (the pivot's node id), not consecutive "
    "integers 0..k-1, so that a cluster keeps its id while other clusters "
    "appear or dissolve under insertions"
)
_CLUSTER = {
    "DynamicCorrelationClustering": {
        # Feature rows stream in; edges join points closer than `radius`
        # (the common checks feed feature matrices, not adjacencies).
        "init": [
            {"affinity": "radius", "radius": 1.0, "random_state": 0},
            {
                "affinity": "radius",
                "radius": 1.0,
                "algorithm": "reference",
                "random_state": 0,
            },
            {
                "affinity": "radius",
                "radius": 1.0,
                "algorithm": "agreement",
                "random_state": 0,
            },
        ],
        "expected_failed_checks": {
            "check_clustering": _STABLE_IDS,
            "check_clustering(readonly_memmap=True)": _STABLE_IDS,
        },
    },
}


# --- neighbors ---------------------------------------------------------------
def _neighbors_data(random_state):
    # y carries the groups (colors): 6 groups, one of them dominant
    X, _ = make_blobs(n_samples=60, centers=3, n_features=4, random_state=random_state)
    rng = np.random.RandomState(random_state)
    groups = np.where(rng.rand(60) < 0.6, 0, rng.randint(1, 6, size=60))
    return X, groups, {}


def _neighbors_output(est, X):
    return est.kneighbors(X, return_distance=False)


def _neighbors_score(est, X, y=None):
    # a finite score for GridSearchCV: minus the mean distance to the neighbours
    return -float(np.mean(est.kneighbors(X)[0]))


_NEIGHBORS = {
    "DiverseNearestNeighbors": {
        "init": [
            dict(
                n_neighbors=3,
                max_degree=8,
                build_list_size=16,
                search_list_size=20,
                random_state=0,
            ),
            dict(n_neighbors=3, method="brute"),
        ],
        "data": _neighbors_data,
        "output": _neighbors_output,
        "scoring": _neighbors_score,
        "grid": {"m": [1, 2]},
    },
}


# --- graph -------------------------------------------------------------------
_GRAPH = {}


# --- online ------------------------------------------------------------------
_ONLINE = {}


# --- federated ---------------------------------------------------------------
_FED_INIT = {"n_clients": 2, "n_rounds": 3, "local_steps": 3}
_FED_PARTITION = (
    "rows are split across clients by a seeded random partition, so weighting a "
    "row by 2 and duplicating it give different client datasets (and mini-batch "
    "draws); the weighted loss itself is exact (tested in skalgos/federated)"
)
_FEDERATED = {
    "FederatedClassifier": {
        "init": [
            _FED_INIT,
            dict(_FED_INIT, strategy="fedbuff"),
            dict(
                _FED_INIT, model="mlp", hidden_units=8, n_rounds=20, learning_rate=0.3
            ),
        ],
        "grid": {"learning_rate": [0.05, 0.1]},
        "expected_failed_checks": {
            "check_sample_weight_equivalence_on_dense_data": _FED_PARTITION,
        },
    },
    "FederatedRegressor": {
        "init": [_FED_INIT, dict(_FED_INIT, strategy="fedecado")],
        "grid": {"learning_rate": [0.05, 0.1]},
        "expected_failed_checks": {
            "check_sample_weight_equivalence_on_dense_data": _FED_PARTITION,
        },
    },
}


# --- metrics -----------------------------------------------------------------
def _object_language(random_state):
    from ...datasets import make_object_language

    W, Z = make_object_language(2, 3, 10, random_state=random_state)
    return W, Z, {}


_METRICS = {
    "RepresentationalCompositionality": dict(
        init=dict(min_size=5, increment=20, max_epochs=3, patience=1),
        data=_object_language,
        output=lambda est, W: np.array([est.compositionality_, est.k_z_given_w_]),
        grid={"increment": [20, 30]},
    ),
}


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
