"""Input handling shared by the transport estimators (ragged lists of clouds)."""

import os
import sys
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_array

from ..utils._backend import check_array_api_support, to_numpy
from ..utils.validation import check_point_clouds

_INTERNAL_DIRS = (
    os.path.dirname(os.path.abspath(sys.modules["sklearn"].__file__)) + os.sep,
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep,
)


def _caller_stacklevel():
    """``stacklevel`` of the first frame outside skalgos' and sklearn's code.

    The warning then points at the user's line (and test modules count as
    users), however many wrappers (``_fit_context``, ``set_output``) sit in
    between.
    """
    frame, level = sys._getframe(1), 1
    while frame is not None:
        path = os.path.abspath(frame.f_code.co_filename)
        internal = (
            path.startswith(_INTERNAL_DIRS) and os.sep + "tests" + os.sep not in path
        )
        if not internal:
            return level
        frame, level = frame.f_back, level + 1
    return level


def _is_cloud_list(X):
    """True for a list/tuple whose items are 2-D (one cloud each)."""
    if not isinstance(X, (list, tuple)) or len(X) == 0:
        return False
    first = X[0]
    return getattr(first, "ndim", None) == 2 or (
        isinstance(first, (list, tuple))
        and len(first) > 0
        and isinstance(first[0], (list, tuple, np.ndarray))
    )


def validate_clouds(X, *, name="X", weights=None, estimator=None):
    """Turn the accepted input layouts into a list of float64 clouds.

    Accepted layouts:

    * a list (or tuple) of array-likes of shape ``(n_points_i, n_dims)``, the
      sizes may differ (a ragged list);
    * an array of shape ``(n_clouds, n_points, n_dims)`` (equal sizes);
    * an array of shape ``(n_clouds, n_points)``: one 1-D cloud per row, the
      scikit-learn convention of one sample per row.

    Returns
    -------
    clouds : list of ndarray
    weights : list of ndarray
    layout : {"list", "3d", "2d"}
        How the input came, so that transformers answer in the same layout.

    With ``estimator`` given, a foreign array namespace under
    ``array_api_dispatch=True`` is refused first, naming the estimator (see
    :func:`skalgos.utils._backend.check_array_api_support`).
    """
    if estimator is not None:
        items = list(X) if isinstance(X, (list, tuple)) else []
        check_array_api_support(estimator, X, *items)
    if isinstance(X, (list, tuple)) and len(X) == 0:
        raise ValueError(f"{name} is empty; pass at least one point cloud.")
    if _is_cloud_list(X):
        clouds = [to_numpy(c) for c in X]
        for i, c in enumerate(clouds):
            if np.iscomplexobj(c):
                raise ValueError(f"Complex data not supported in {name}[{i}].")
        clouds, weights = check_point_clouds(clouds, name=name, weights=weights)
        return clouds, weights, "list"
    if sp.issparse(X):
        check_array(X, accept_sparse=False)  # raises the usual sparse message
    if hasattr(X, "shape") and hasattr(X, "dtype"):
        X = to_numpy(X)
    elif not isinstance(X, (list, tuple)) and not hasattr(X, "__array__"):
        raise TypeError(
            f"{name} must be a list of point clouds (arrays of shape "
            f"(n_points, n_dims)), a 3-D array (n_clouds, n_points, n_dims) or a "
            f"2-D array of 1-D clouds; got {type(X).__name__}."
        )
    ndim = X.ndim if isinstance(X, np.ndarray) else np.asarray(X, dtype=object).ndim
    if ndim == 3:
        arr = np.asarray(X)
        if np.iscomplexobj(arr):
            raise ValueError(f"Complex data not supported in {name}.")
        clouds, weights = check_point_clouds(list(arr), name=name, weights=weights)
        return clouds, weights, "3d"
    # Two-dimensional (or wrong) input: sklearn's validation gives the usual
    # messages (1-D input, NaN, complex, empty, sparse, object dtype).
    arr = check_array(X, accept_sparse=False, dtype="numeric", ensure_2d=True)
    if arr.shape[1] > 1:
        warnings.warn(
            f"{name} is one 2-D array of shape {arr.shape}: it is read as "
            f"{arr.shape[0]} one-dimensional clouds of {arr.shape[1]} points each "
            "(one cloud per row, scikit-learn's one-sample-per-row convention). "
            f"To pass a single cloud of {arr.shape[0]} points in "
            f"R^{arr.shape[1]}, wrap it in a list: [{name}]. To silence this for "
            f"1-D clouds, pass {name}[:, :, None] (a 3-D array).",
            UserWarning,
            stacklevel=_caller_stacklevel(),
        )
    clouds, weights = check_point_clouds(
        [row[:, None] for row in arr], name=name, weights=weights
    )
    return clouds, weights, "2d"


def format_like(clouds, layout):
    """Return ``clouds`` (a list) in the layout the input came in."""
    if layout == "list":
        return clouds
    arr = np.stack(clouds)
    if layout == "2d":
        return arr[:, :, 0]
    return arr
