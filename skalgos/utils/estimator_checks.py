"""skalgos' own common checks, run on every estimator beside scikit-learn's.

Each check takes an estimator instance, fits it on the data its spec gives
(see :mod:`skalgos.utils._test_common.instance_generator`) and asserts one
property a user relies on: pickling keeps predictions, ``clone`` works, the
estimator runs in a ``Pipeline`` and under ``GridSearchCV(n_jobs=2)``, ``fit``
leaves its inputs alone, a fixed ``random_state`` makes fits repeatable,
float32 input works or is refused clearly, float32 stays float32 exactly where
the tags say so, for estimators tagged ``array_api_support`` every array
namespace gives the NumPy answer, and the others refuse a foreign namespace with
one clear error.
"""

import copy
import pickle

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer
from sklearn.utils import get_tags
from sklearn.utils.validation import check_is_fitted

from ._backend import available_namespaces, to_device, to_numpy
from ._test_common.instance_generator import get_data, get_output, get_spec

__all__ = ["check_skalgos_estimator", "yield_skalgos_checks"]


class SkipCheck(Exception):
    """Raised by a check that does not apply to an estimator (with the reason)."""


def _fit(est, X, y, fit_params):
    return est.fit(X, **fit_params) if y is None else est.fit(X, y, **fit_params)


def _with_seed(est, seed=0):
    if "random_state" in est.get_params():
        est.set_params(random_state=seed)
    return est


def _assert_same_output(a, b, msg):
    a, b = to_numpy(a), to_numpy(b)
    if sp.issparse(a):
        a, b = a.toarray(), b.toarray()
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b), err_msg=msg)


def _snapshot(obj):
    """A deep copy that can be compared with :func:`_assert_unchanged`."""
    return copy.deepcopy(obj)


def _assert_unchanged(before, after, path):
    if isinstance(before, np.ndarray):
        np.testing.assert_array_equal(before, after, err_msg=f"{path} was modified")
        return
    if sp.issparse(before):
        assert (before != after).nnz == 0, f"{path} (sparse) was modified"
        return
    if isinstance(before, dict):
        assert before.keys() == after.keys(), f"{path} keys changed"
        for k in before:
            _assert_unchanged(before[k], after[k], f"{path}[{k!r}]")
        return
    if isinstance(before, (list, tuple)):
        assert len(before) == len(after), f"{path} length changed"
        for i, (b, a) in enumerate(zip(before, after)):
            _assert_unchanged(b, a, f"{path}[{i}]")
        return
    if hasattr(before, "edges") and hasattr(before, "nodes"):  # networkx graph
        assert set(before.edges) == set(after.edges), f"{path} (graph) was modified"
        return
    if hasattr(before, "__array_namespace__") or hasattr(before, "detach"):
        np.testing.assert_array_equal(to_numpy(before), to_numpy(after), err_msg=path)
        return
    assert before == after, f"{path} was modified"


def check_pickle_roundtrip(estimator):
    """A fitted estimator pickles and gives identical outputs after loading."""
    X, y, fit_params = get_data(estimator)
    est = _fit(_with_seed(clone(estimator)), X, y, fit_params)
    before = get_output(est, X)
    loaded = pickle.loads(pickle.dumps(est))
    _assert_same_output(before, get_output(loaded, X), "output changed after pickling")


def check_clone(estimator):
    """``clone`` keeps parameters and returns an unfitted copy."""
    X, y, fit_params = get_data(estimator)
    est = _fit(_with_seed(clone(estimator)), X, y, fit_params)
    fresh = clone(est)
    assert type(fresh) is type(est)
    p1, p2 = est.get_params(deep=False), fresh.get_params(deep=False)
    assert p1.keys() == p2.keys()
    try:
        check_is_fitted(fresh)
    except NotFittedError:
        pass
    else:
        raise AssertionError("clone() of a fitted estimator should be unfitted")


def check_in_pipeline(estimator):
    """The estimator is usable as the last step of a ``Pipeline``."""
    X, y, fit_params = get_data(estimator)
    est = _with_seed(clone(estimator))
    direct = get_output(_fit(clone(est), X, y, fit_params), X)
    pipe = Pipeline([("identity", FunctionTransformer(validate=False)), ("est", est)])
    routed = {f"est__{k}": v for k, v in fit_params.items()}
    pipe.fit(X, **routed) if y is None else pipe.fit(X, y, **routed)
    fitted = pipe.named_steps["est"]
    _assert_same_output(direct, get_output(fitted, X), "Pipeline changed the output")
    if hasattr(fitted, "predict"):
        _assert_same_output(direct, pipe.predict(X), "Pipeline.predict differs")


def _default_grid(est):
    params = est.get_params(deep=False)
    if "random_state" in params:
        return {"random_state": [0, 1]}
    name, value = next(iter(params.items()))
    return {name: [value]}


def check_grid_search_n_jobs(estimator):
    """``GridSearchCV(n_jobs=2)`` fits and refits the estimator."""
    spec = get_spec(estimator)
    X, y, fit_params = get_data(estimator)
    scoring = spec.get("scoring")
    if scoring is None and not hasattr(estimator, "score"):
        raise SkipCheck("no score method and no 'scoring' in the spec")
    grid = spec.get("grid") or _default_grid(estimator)
    search = GridSearchCV(
        _with_seed(clone(estimator)),
        grid,
        cv=spec.get("cv", 2),
        n_jobs=2,
        scoring=scoring,
        error_score="raise",
    )
    search.fit(X, **fit_params) if y is None else search.fit(X, y, **fit_params)
    assert set(search.best_params_) == set(grid), search.best_params_
    assert np.isfinite(search.best_score_), search.best_score_


def check_fit_does_not_modify_input(estimator):
    """``fit`` (and the output method) leave ``X``, ``y`` and fit params alone."""
    X, y, fit_params = get_data(estimator)
    saved = _snapshot((X, y, fit_params))
    est = _fit(_with_seed(clone(estimator)), X, y, fit_params)
    get_output(est, X)
    _assert_unchanged(saved, (X, y, fit_params), "input")


def check_fit_deterministic(estimator):
    """Two fits with the same ``random_state`` give identical outputs."""
    if get_tags(estimator).non_deterministic:
        raise SkipCheck("tagged non_deterministic")
    X, y, fit_params = get_data(estimator)
    a = get_output(_fit(_with_seed(clone(estimator)), X, y, fit_params), X)
    b = get_output(_fit(_with_seed(clone(estimator)), X, y, fit_params), X)
    _assert_same_output(a, b, "two fits with the same random_state differ")


def check_float32(estimator):
    """float32 input works (finite output) or is refused with a clear error."""
    X, y, fit_params = get_data(estimator)
    if not (isinstance(X, np.ndarray) and X.dtype.kind == "f"):
        raise SkipCheck("the check data is not a float array")
    X32 = X.astype(np.float32)
    est = _with_seed(clone(estimator))
    try:
        _fit(est, X32, y, fit_params)
    except (TypeError, ValueError) as exc:
        assert "float32" in str(exc) or "dtype" in str(exc), (
            f"float32 input was refused without naming the dtype: {exc}"
        )
        return
    out = to_numpy(get_output(est, X32))
    if out.dtype.kind == "f":
        assert np.all(np.isfinite(out)), "float32 input gave non-finite output"


def check_dtype_preservation(estimator):
    """float32 input gives float32 output exactly where the tags say so.

    A transformer keeps float32 if and only if its
    ``transformer_tags.preserves_dtype`` lists it, so the tag tells the truth
    both ways. A regressor's predictions follow a float32 input (the house
    rule, as in scikit-learn's linear models): scikit-learn has no tag for it.
    """
    X, y, fit_params = get_data(estimator)
    if not (isinstance(X, np.ndarray) and X.dtype.kind == "f"):
        raise SkipCheck("the check data is not a float array")
    tags = get_tags(estimator)
    is_transformer = tags.transformer_tags is not None and hasattr(
        estimator, "transform"
    )
    if not is_transformer and tags.estimator_type != "regressor":
        raise SkipCheck("neither a transformer nor a regressor: outputs are labels")
    X32 = X.astype(np.float32)
    est = _fit(_with_seed(clone(estimator)), X32, y, fit_params)
    out = to_numpy(est.transform(X32) if is_transformer else est.predict(X32))
    if sp.issparse(out):
        out = out.data
    name = type(estimator).__name__
    if is_transformer:
        claimed = "float32" in tags.transformer_tags.preserves_dtype
        if claimed:
            assert out.dtype == np.float32, (
                f"{name}'s tags list float32 in preserves_dtype but float32 input "
                f"gave {out.dtype} output"
            )
        else:
            assert out.dtype != np.float32, (
                f"{name} keeps float32 but its tags do not say so: add 'float32' "
                "to transformer_tags.preserves_dtype"
            )
    else:
        assert out.dtype == np.float32, (
            f"{name}.predict turned float32 input into {out.dtype} predictions"
        )


def check_array_api_refusal(estimator):
    """Without array API support, a foreign namespace gets one clear error.

    Under ``array_api_dispatch=True``, fitting on array-api-strict arrays must
    raise the ``TypeError`` of
    :func:`skalgos.utils._backend.check_array_api_support`, naming the
    estimator and the namespace, not an error from deep inside the fit.
    """
    if get_tags(estimator).array_api_support:
        raise SkipCheck("tagged array_api_support (check_array_api_namespaces)")
    try:
        import array_api_strict
    except ImportError:
        raise SkipCheck("array-api-strict is not installed") from None
    from sklearn import config_context

    X, y, fit_params = get_data(estimator)
    if not isinstance(X, np.ndarray):
        raise SkipCheck("the check data is not a NumPy array")
    dev = array_api_strict.Device("device1")
    Xd = to_device(X, dev, xp=array_api_strict)
    yd = None if y is None else to_device(np.asarray(y), dev, xp=array_api_strict)
    name = type(estimator).__name__
    with config_context(array_api_dispatch=True):
        try:
            _fit(_with_seed(clone(estimator)), Xd, yd, fit_params)
        except Exception as exc:
            msg = str(exc)
            if isinstance(exc, TypeError) and name in msg and "array_api_strict" in msg:
                return
            raise AssertionError(
                f"{name} refused array-api-strict input without naming itself and "
                f"the namespace in a TypeError: {type(exc).__name__}: {msg}"
            ) from exc
    raise AssertionError(
        f"{name} is not tagged array_api_support but accepted array-api-strict "
        "input under array_api_dispatch=True: tag it, or refuse through "
        "skalgos.utils.validation.validate_data"
    )


def check_array_api_namespaces(estimator):
    """Every usable namespace gives NumPy's output, in the input's namespace."""
    if not get_tags(estimator).array_api_support:
        raise SkipCheck("not tagged array_api_support")
    from sklearn import config_context

    X, y, fit_params = get_data(estimator)
    if not isinstance(X, np.ndarray):
        raise SkipCheck("the check data is not a NumPy array")
    ref = to_numpy(get_output(_fit(_with_seed(clone(estimator)), X, y, fit_params), X))
    tol = get_spec(estimator).get("array_api_rtol", 1e-5)
    for name, xp, dev in available_namespaces():
        if name == "numpy":
            continue
        Xd = to_device(X, dev, xp=xp)
        yd = None if y is None else to_device(np.asarray(y), dev, xp=xp)
        with config_context(array_api_dispatch=True):
            est = _fit(_with_seed(clone(estimator)), Xd, yd, fit_params)
            out = get_output(est, Xd)
        np.testing.assert_allclose(
            to_numpy(out), ref, rtol=tol, atol=tol, err_msg=f"namespace {name}"
        )


_CHECKS = [
    check_pickle_roundtrip,
    check_clone,
    check_in_pipeline,
    check_grid_search_n_jobs,
    check_fit_does_not_modify_input,
    check_fit_deterministic,
    check_float32,
    check_dtype_preservation,
    check_array_api_namespaces,
    check_array_api_refusal,
]


def yield_skalgos_checks(estimator):
    """Yield ``(estimator, check)`` pairs, skipping those the spec rules out.

    A check named in the spec's ``skipped_skalgos_checks`` is yielded wrapped so
    that it raises :class:`SkipCheck` with the written reason.
    """
    skipped = get_spec(estimator).get("skipped_skalgos_checks", {})
    for check in _CHECKS:
        if check.__name__ in skipped:
            reason = skipped[check.__name__]

            def skipped_check(est, _reason=reason):
                raise SkipCheck(_reason)

            skipped_check.__name__ = check.__name__
            yield estimator, skipped_check
        else:
            yield estimator, check


def check_skalgos_estimator(estimator):
    """Run every skalgos check on ``estimator``; return the skipped ones.

    Returns
    -------
    skipped : dict
        ``{check_name: reason}`` of the checks that did not apply.
    """
    skipped = {}
    for est, check in yield_skalgos_checks(estimator):
        try:
            check(est)
        except SkipCheck as exc:
            skipped[check.__name__] = str(exc)
    return skipped
