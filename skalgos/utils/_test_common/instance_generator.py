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
def _completion_matrix(random_state):
    from skalgos.datasets import make_side_info_completion

    M, *_ = make_side_info_completion(
        12, 10, rank=2, completeness=0.5, sampling_rate=0.6, random_state=random_state
    )
    return M, None, {}


def _completion_table(random_state):
    from skalgos.datasets import make_side_info_completion

    M, mask, *_ = make_side_info_completion(
        12, 10, rank=2, completeness=0.5, sampling_rate=0.6, random_state=random_state
    )
    return np.argwhere(mask), M[mask], {}


_TRANSDUCTIVE = (
    "completion is transductive: transform only accepts the matrix given to fit "
    "and raises a ValueError for any other matrix"
)
_COMPLETER_FAILS = {
    "check_fit_idempotent": _TRANSDUCTIVE + " (the check transforms a held-out split)",
    "check_methods_sample_order_invariance": _TRANSDUCTIVE
    + " (the check transforms permuted rows)",
    "check_methods_subset_invariance": _TRANSDUCTIVE
    + " (the check transforms row subsets)",
    "check_transformer_n_iter": "a fully observed matrix is returned as is, "
    "without iterating, so n_iter_ is 0 on the check's complete data",
}
_PAIRS = (
    "X must be integer (row, col) index pairs of shape (n_entries, 2); the "
    "check feeds float feature matrices"
)
_REGRESSOR_FAILS = {
    name: _PAIRS
    for name in (
        "check_fit_score_takes_y",
        "check_estimators_overwrite_params",
        "check_estimators_nan_inf",
        "check_dont_overwrite_parameters",
        "check_estimators_fit_returns_self",
        "check_readonly_memmap_input",
        "check_n_features_in_after_fitting",
        "check_estimators_pickle",
        "check_estimators_dtypes",
        "check_dtype_object",
        "check_pipeline_consistency",
        "check_regressor_data_not_an_array",
        "check_regressors_no_decision_function",
        "check_supervised_y_2d",
        "check_f_contiguous_array_estimator",
        "check_regressors_int",
        "check_regressors_train",
        "check_array_api_input",
        "check_array_api_same_namespace",
        "check_array_api_mixed_inputs",
        "check_positive_only_tag_during_fit",
        "check_methods_sample_order_invariance",
        "check_methods_subset_invariance",
        "check_fit2d_1sample",
        "check_fit2d_1feature",
        "check_dict_unchanged",
        "check_fit_idempotent",
        "check_fit_check_is_fitted",
        "check_n_features_in",
        "check_fit2d_predict1d",
        "check_non_transformer_estimators_n_iter",
    )
}
_COMPLETER_SPEC = {
    "data": _completion_matrix,
    # transductive: score the training fit by its own objective (lower is better)
    "scoring": lambda est, X, y=None: -float(est.objective_),
    "expected_failed_checks": _COMPLETER_FAILS,
    "array_api_rtol": 1e-7,
}
_COMPLETION = {
    "OCMCCompleter": dict(_COMPLETER_SPEC, grid={"lambda_y": [1.0, 4.0]}),
    "NuclearNormCompleter": dict(_COMPLETER_SPEC, grid={"tol": [1e-4, 1e-5]}),
    "IMCCompleter": dict(_COMPLETER_SPEC, grid={"tol": [1e-4, 1e-5]}),
    # inductive (new rows are folded in): no transductive expected failures
    "SoftImputeCompleter": {
        "init": {"random_state": 0},
        "data": _completion_matrix,
        "grid": {"max_rank": [2, 5]},
    },
    "OCMCRegressor": {
        # The matrix shape is given: a CV fold may miss the last rows.
        "init": {"shape": (12, 10)},
        "data": _completion_table,
        "expected_failed_checks": _REGRESSOR_FAILS,
        "grid": {"lambda_y": [1.0, 4.0]},
        "cv": 2,
        "array_api_rtol": 1e-7,
    },
}


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
def _transport_data(random_state=0):
    """Six rotated/reflected 2-D clouds of two shapes, as a 3-D float array."""
    rng = np.random.default_rng(random_state)
    shapes = [rng.normal(size=(8, 2)) * [2.0, 0.3], rng.normal(size=(8, 2))]
    clouds = []
    for i in range(6):
        t = rng.uniform(0, 2 * np.pi)
        Q = np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]])
        if i % 3 == 0:
            Q = Q @ np.diag([1.0, -1.0])
        clouds.append(shapes[i % 2][rng.permutation(8)] @ Q)
    return np.stack(clouds), None, {}


_TRANSPORT_CLOUD_CHECKS = {
    # The input is a list of point clouds; sklearn's 2-D X is read as one 1-D
    # cloud per row, so checks tied to a fixed feature count cannot hold.
    "check_n_features_in_after_fitting": (
        "the number of columns of a 2-D X is the number of points of each 1-D "
        "cloud, which may vary between fit and predict; n_features_in_ is the "
        "cloud dimension (1 here), checked instead"
    ),
    "check_n_features_in": (
        "n_features_in_ is the dimension of the clouds (1 for a 2-D X of 1-D "
        "clouds), not X.shape[1], which is the number of points per cloud"
    ),
}
_TRANSPORT_TRANSFORMER_CHECKS = {
    "check_transformer_general": (
        "asserts that transform refuses a different number of columns; for 1-D "
        "clouds that is a different number of points, which is valid input "
        "(fit_transform == fit().transform is tested in skalgos/transport/tests)"
    ),
    "check_transformer_general(readonly_memmap=True)": (
        "same as check_transformer_general: clouds of another size are valid"
    ),
}

_TRANSPORT = {
    "PWAligner": {
        "init": {"init": "identity", "max_iter": 5},
        # an unsupervised aligner has no score; the check is that the search
        # fits and refits it in parallel workers
        "scoring": lambda est, X, y=None: 0.0,
        "data": _transport_data,
        "output": lambda est, X: np.asarray(est.transform(X)),
        "expected_failed_checks": {
            **_TRANSPORT_CLOUD_CHECKS,
            **_TRANSPORT_TRANSFORMER_CHECKS,
            "check_transformer_n_iter": (
                "max_iter caps the PW iterations of each cloud in transform; fit "
                "only picks the reference and runs no iterations"
            ),
        },
    },
    "PWBarycenter": {
        "init": {
            "n_support": 4,
            "init": "identity",
            "max_iter": 3,
            "inner_max_iter": 5,
        },
        "data": _transport_data,
        "expected_failed_checks": {
            **_TRANSPORT_CLOUD_CHECKS,
            **_TRANSPORT_TRANSFORMER_CHECKS,
        },
    },
    "PWKMeans": {
        "init": {
            "n_clusters": 2,
            "n_support": 4,
            "max_iter": 2,
            "pw_init": "identity",
            "barycenter_max_iter": 2,
            "inner_max_iter": 5,
        },
        "data": _transport_data,
        "expected_failed_checks": {
            **_TRANSPORT_CLOUD_CHECKS,
            **{
                name: (
                    "asserts ARI > 0.4 on 2-D blobs, which PWKMeans reads as 1-D "
                    "two-point clouds: after centring and up to sign only |x1 - x2| "
                    "remains, so the blobs are invisible to a rotation-invariant "
                    "distance by design"
                )
                for name in (
                    "check_clustering",
                    "check_clustering(readonly_memmap=True)",
                )
            },
        },
    },
}


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


def _held_out_disagreements(est, X, y=None):
    """Minus the correlation clustering cost of clustering the held-out rows
    with the fitted hyper-parameters (edges join rows closer than ``radius``)."""
    from sklearn.base import clone
    from sklearn.metrics import pairwise_distances

    from ...metrics import correlation_clustering_cost

    X = np.asarray(X, dtype=np.float64)
    A = (pairwise_distances(X) < est.radius).astype(np.int8)
    np.fill_diagonal(A, 0)
    return -float(correlation_clustering_cost(A, clone(est).fit_predict(X)))


_CLUSTER = {
    "DynamicCorrelationClustering": {
        "scoring": _held_out_disagreements,
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
    "ShardedDiverseNearestNeighbors": {
        "init": [
            dict(
                n_neighbors=3,
                n_shards=3,
                max_degree=8,
                build_list_size=16,
                search_list_size=20,
                random_state=0,
            ),
            dict(
                n_neighbors=3,
                n_shards=2,
                sharding="kmeans",
                method="brute",
                random_state=0,
            ),
        ],  # fmt: skip
        "data": _neighbors_data,
        "output": _neighbors_output,
        "scoring": _neighbors_score,
        "grid": {"n_shards": [1, 2]},
    },
}


# --- graph -------------------------------------------------------------------
def _to_numpy(x):
    from skalgos.utils._backend import to_numpy

    return to_numpy(x)


def _graph_mis_data(random_state):
    from skalgos.datasets import make_erdos_renyi_graph

    A = make_erdos_renyi_graph(30, 0.2, random_state=random_state).toarray()
    return A, None, {}


# sklearn's checks feed pairwise estimators a linear kernel X X^T, whose
# diagonal is non-zero: ignore_diagonal=True lets the checks run on it (the
# default refuses self loops, which the family's own tests check).
_GRAPH_MIS_SPEC = dict(
    data=_graph_mis_data,
    output=lambda est, X: _to_numpy(est.mask_).astype(np.float64),
)

_GRAPH = {
    "MaximumIndependentSet": dict(
        scoring=lambda est, X, y=None: float(est.size_),
        init=[
            dict(
                batch_size=8,
                max_iter=60,
                restart_interval=30,
                dtype="float64",
                ignore_diagonal=True,
            ),
            dict(solver="greedy", ignore_diagonal=True),
            dict(solver="milp", ignore_diagonal=True),
        ],
        **_GRAPH_MIS_SPEC,
    ),
}


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


_ONLINE_SW_REASON = (
    "an online learner plays rows in order: a row of weight k is one step "
    "of weight k at one point, k repeated rows are k steps at k points, "
    "elsewhere in the (shuffled) stream; weight 0 / 1 is exactly dropping "
    "/ keeping the row (tested in skalgos/online)"
)
# sparse X is made dense at validation, so the sparse variant of the check
# fails for the same reason as the dense one
_ONLINE_SW = {
    "check_sample_weight_equivalence_on_dense_data": _ONLINE_SW_REASON,
    "check_sample_weight_equivalence_on_sparse_data": _ONLINE_SW_REASON,
}
_ONLINE = {
    "DelayedOGDClassifier": {
        "data": _online_binary_data,
        "expected_failed_checks": _ONLINE_SW,
    },
    "DelayedOnlineNewtonStepClassifier": {
        "data": _online_binary_data,
        "expected_failed_checks": _ONLINE_SW,
    },
    "DelayedFTRLRegressor": {
        "data": _online_regression_data,
        "expected_failed_checks": _ONLINE_SW,
    },
    "DelayedOGDRegressor": {
        "data": _online_regression_data,
        "expected_failed_checks": _ONLINE_SW,
    },
    "DelayedOnlineNewtonStepRegressor": {
        "data": _online_regression_data,
        "expected_failed_checks": _ONLINE_SW,
    },
    "ClippedVAWRegressor": {"data": _online_regression_data},
    "BOLD": {"data": _online_regression_data, "expected_failed_checks": _ONLINE_SW},
    "AsyncMiniBatchRegressor": {
        "init": {"n_steps": 400, "random_state": 0},
        "data": _online_regression_data,
        "expected_failed_checks": {
            check: (
                "without sample_weight rows are drawn by randint (the paper's "
                "stream, which the benchmark reproduces), with it by inverse "
                "CDF of one uniform per arrival: equal in distribution; with "
                "unit weights on the repeated rows the draws are exactly the "
                "same (tested in skalgos/online; sparse X is made dense)"
            )
            for check in (
                "check_sample_weight_equivalence_on_dense_data",
                "check_sample_weight_equivalence_on_sparse_data",
            )
        },
    },
}


# --- federated ---------------------------------------------------------------
_FED_INIT = {"n_clients": 2, "n_rounds": 3, "local_steps": 3}
_FED_PARTITION = (
    "rows are split across clients by a seeded random partition, so weighting a "
    "row by 2 and duplicating it give different client datasets (and mini-batch "
    "draws), and a client whose rows all weigh 0 is an error; with the clients "
    "given and full batches integer weights are repeated rows exactly (tested "
    "in skalgos/federated)"
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
            "check_sample_weight_equivalence_on_sparse_data": _FED_PARTITION,
        },
    },
    "FederatedRegressor": {
        "init": [_FED_INIT, dict(_FED_INIT, strategy="fedecado")],
        "grid": {"learning_rate": [0.05, 0.1]},
        "expected_failed_checks": {
            "check_sample_weight_equivalence_on_dense_data": _FED_PARTITION,
            "check_sample_weight_equivalence_on_sparse_data": _FED_PARTITION,
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
        # sklearn's checks pass labels stored as floats (0.0 / 1.0): declared
        # categorical, as the float-label warning tells users to do
        init=dict(min_size=5, increment=20, max_epochs=3, patience=1, discrete_z=True),
        data=_object_language,
        output=lambda est, W: np.array([est.compositionality_, est.k_z_given_w_]),
        grid={"increment": [20, 30]},
    ),
}


# --- torch -------------------------------------------------------------------
# Small, fast settings: the common checks fit many times on tiny data. lr=1e-2
# with 40 epochs reaches sklearn's accuracy / R^2 thresholds on its test data.
_TORCH_INIT = dict(lr=1e-2, max_epochs=40, batch_size=32, n_jobs=1, random_state=0)
_TORCH_SW_FLOAT32 = (
    "float32 training: weighted and repeated rows agree to 2e-7 absolute, "
    "above the check's rtol=1e-7; in float64 the check passes "
    "(skalgos/torch/tests/test_estimator_training.py)"
)
_TORCH = {
    "TorchClassifier": {
        "init": _TORCH_INIT,
        # The optimizer is a hyperparameter like any other (Muon via the grid).
        "grid": {"optimizer": ["adamw", "muon"]},
        "expected_failed_checks": {
            "check_sample_weight_equivalence_on_dense_data": _TORCH_SW_FLOAT32,
            "check_sample_weight_equivalence_on_sparse_data": _TORCH_SW_FLOAT32,
        },
    },
    "TorchRegressor": {
        "init": _TORCH_INIT,
        "expected_failed_checks": {
            check: (
                "early_stopping='auto' holds out a validation split from 20 "
                "rows on: the check's 15 weighted rows train on all of them, "
                "its repeated rows lose 10% to validation. With "
                "early_stopping=False the check passes in float64 ("
                "skalgos/torch/tests/test_estimator_training.py); " + _TORCH_SW_FLOAT32
            )
            for check in (
                "check_sample_weight_equivalence_on_dense_data",
                "check_sample_weight_equivalence_on_sparse_data",
            )
        },
    },
}


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
