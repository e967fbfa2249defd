"""Input checks shared by several families: graphs, point clouds, delays, groups.

Each check returns a validated copy (never a view the caller could see
modified) and raises ``ValueError`` / ``TypeError`` naming the parameter and
the fix.
"""

import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import validate_data as _sklearn_validate_data

from ._backend import check_array_api_support

__all__ = [
    "check_adjacency",
    "check_delays",
    "check_groups",
    "check_point_clouds",
    "float_dtype",
    "target_mean_scale",
    "validate_data",
]


def float_dtype(X):
    """The float dtype an estimator's real-valued output should have for ``X``.

    float32 for float32 input (the house rule: predictions and transforms keep
    a float32 input's precision, as scikit-learn's linear models do), float64
    for anything else (float64, integers, lists, sparse float64, ...).

    Examples
    --------
    >>> import numpy as np
    >>> from skalgos.utils.validation import float_dtype
    >>> float_dtype(np.ones(2, dtype=np.float32)), float_dtype([1, 2])
    (<class 'numpy.float32'>, <class 'numpy.float64'>)
    """
    dtype = getattr(X, "dtype", None)
    try:
        is32 = dtype is not None and np.dtype(dtype) == np.float32
    except TypeError:  # a dtype of another namespace (torch, array-api-strict)
        is32 = "float32" in str(dtype)
    return np.float32 if is32 else np.float64


def target_mean_scale(y, sample_weight=None):
    """Weighted mean and standard deviation of a target, per column.

    What ``StandardScaler`` on ``y`` gives, with row ``i`` counted
    ``sample_weight[i]`` times; a (near-)constant column keeps scale 1
    (centred only). Shared by the estimators that standardise their target
    inside (``standardize_target``).

    Parameters
    ----------
    y : ndarray of shape (n_samples,) or (n_samples, n_outputs)
    sample_weight : ndarray of shape (n_samples,) or None

    Returns
    -------
    mean, scale : ndarray of shape y.shape[1:]
    """
    y = np.asarray(y)
    mean = np.average(y, axis=0, weights=sample_weight)
    scale = np.sqrt(np.average((y - mean) ** 2, axis=0, weights=sample_weight))
    eps = np.finfo(y.dtype if y.dtype.kind == "f" else np.float64).eps
    tiny = ~(scale > 1e3 * eps * np.maximum(1.0, np.abs(mean)))
    return mean, np.where(tiny, 1.0, scale)


def validate_data(
    _estimator, /, X="no_validation", y="no_validation", *, densify=False, **kwargs
):
    """scikit-learn's ``validate_data``, refusing namespaces the estimator lacks.

    Every skalgos estimator validates its input through this function, so an
    estimator without array API support meets a CuPy, torch or
    array-api-strict array under ``array_api_dispatch=True`` with one clear
    ``TypeError`` (see :func:`skalgos.utils._backend.check_array_api_support`)
    instead of an error from deep inside the validation. The arguments and the
    return value are those of :func:`sklearn.utils.validation.validate_data`.

    ``densify=True`` accepts a sparse X (CSR, CSC or COO, such as the
    default output of a ``ColumnTransformer`` with a ``OneHotEncoder``) and
    returns it dense, for the estimators whose algorithm works on dense rows
    but which must take what their scikit-learn counterparts take.
    """
    check_array_api_support(_estimator, X, y)
    if densify:
        kwargs.setdefault("accept_sparse", ["csr", "csc", "coo"])
    out = _sklearn_validate_data(_estimator, X=X, y=y, **kwargs)
    if not densify:
        return out
    if isinstance(out, tuple):
        Xv, yv = out
        return (Xv.toarray() if sp.issparse(Xv) else Xv), yv
    return out.toarray() if sp.issparse(out) else out


def check_adjacency(G, *, name="G", allow_weights=False, allow_self_loops=False):
    """Validate a graph and return its symmetric adjacency as CSR.

    Parameters
    ----------
    G : networkx.Graph, scipy sparse matrix or array-like of shape (n, n)
        The graph. A networkx graph is read as structure only: every edge
        counts as 1 whatever its attributes (a ``weight=0`` attribute is still
        an edge, a negative one is not an error), with its nodes in
        ``list(G.nodes)`` order.
    name : str, default="G"
        Parameter name used in error messages.
    allow_weights : bool, default=False
        If False, every stored entry must be 0 or 1.
    allow_self_loops : bool, default=False
        If False, a non-zero diagonal raises.

    Returns
    -------
    A : scipy.sparse.csr_array of shape (n, n), dtype float64
        Symmetric, with sorted indices and no explicit zeros.

    Examples
    --------
    >>> import networkx as nx
    >>> from skalgos.utils.validation import check_adjacency
    >>> check_adjacency(nx.path_graph(3)).toarray()
    array([[0., 1., 0.],
           [1., 0., 1.],
           [0., 1., 0.]])
    """
    try:
        import networkx as nx
    except ImportError:  # pragma: no cover - networkx is a dependency
        nx = None
    if nx is not None and isinstance(G, nx.Graph):
        if G.is_directed():
            raise ValueError(f"{name} must be an undirected graph; got a directed one.")
        # weight=None: the structure, never an edge attribute (a weight-0 edge
        # would otherwise vanish); parallel edges of a multigraph count once
        A = nx.to_scipy_sparse_array(
            G, nodelist=list(G.nodes), weight=None, dtype=float, format="csr"
        )
        A.data[:] = 1.0
    elif sp.issparse(G):
        A = sp.csr_array(G, dtype=float, copy=True)
    else:
        try:
            A = np.array(G, dtype=float, copy=True)
        except (TypeError, ValueError) as exc:
            raise TypeError(
                f"{name} must be a networkx graph, a scipy sparse matrix or a square "
                f"array; got {type(G).__name__}."
            ) from exc
        if A.ndim != 2:
            raise ValueError(
                f"{name} must be a square 2-D adjacency matrix; got ndim={A.ndim}."
            )
        A = sp.csr_array(A)
    if A.shape[0] != A.shape[1]:
        raise ValueError(f"{name} must be square; got shape {A.shape}.")
    A.eliminate_zeros()
    A.sort_indices()
    data = A.data
    if not np.all(np.isfinite(data)):
        raise ValueError(f"{name} contains NaN or infinite entries; remove them.")
    if np.any(data < 0):
        raise ValueError(
            f"{name} has negative entries; edge weights must be non-negative."
        )
    if not allow_weights and np.any(data != 1):
        raise ValueError(
            f"{name} must be a 0/1 adjacency matrix; got weights other than 1. "
            f"Binarize it first, e.g. (A != 0).astype(float)."
        )
    if not allow_self_loops and np.any(A.diagonal() != 0):
        raise ValueError(f"{name} has self loops (non-zero diagonal); remove them.")
    if (abs(A - A.T) > 1e-12 * max(1.0, float(np.abs(data).max(initial=0)))).nnz:
        raise ValueError(f"{name} must be symmetric (an undirected graph).")
    return A


def check_point_clouds(clouds, *, name="X", weights=None, min_points=1):
    """Validate a list of point clouds of a common dimension.

    Parameters
    ----------
    clouds : sequence of array-like of shape (n_i, d)
        The clouds; their sizes may differ (a ragged list).
    name : str, default="X"
        Parameter name used in error messages.
    weights : sequence of array-like of shape (n_i,) or None
        Probability weights per cloud; ``None`` gives uniform weights.
    min_points : int, default=1
        Minimum number of points per cloud.

    Returns
    -------
    clouds : list of ndarray of shape (n_i, d), float64 copies
    weights : list of ndarray of shape (n_i,)
    """
    if isinstance(clouds, np.ndarray) and clouds.ndim == 2:
        clouds = [clouds]
    try:
        clouds = [np.array(c, dtype=float, copy=True) for c in clouds]
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"{name} must be a list of 2-D arrays of shape (n_points, n_dims)."
        ) from exc
    if not clouds:
        raise ValueError(f"{name} is empty; pass at least one point cloud.")
    dims = set()
    for i, c in enumerate(clouds):
        if c.ndim != 2:
            raise ValueError(
                f"{name}[{i}] must be 2-D (n_points, n_dims); got ndim={c.ndim}."
            )
        if c.shape[0] < min_points:
            raise ValueError(
                f"{name}[{i}] has {c.shape[0]} points; at least {min_points} needed."
            )
        if not np.all(np.isfinite(c)):
            raise ValueError(f"{name}[{i}] contains NaN or infinite values.")
        dims.add(c.shape[1])
    if len(dims) != 1:
        raise ValueError(
            f"All clouds in {name} must have the same dimension; got {sorted(dims)}."
        )
    if weights is None:
        weights = [np.full(c.shape[0], 1.0 / c.shape[0]) for c in clouds]
    else:
        if len(weights) != len(clouds):
            raise ValueError(
                f"weights has {len(weights)} entries for {len(clouds)} clouds in {name}."
            )
        weights = [np.array(w, dtype=float, copy=True) for w in weights]
        for i, (w, c) in enumerate(zip(weights, clouds)):
            if w.shape != (c.shape[0],):
                raise ValueError(
                    f"weights[{i}] must have shape ({c.shape[0]},); got {w.shape}."
                )
            if np.any(w < 0) or not np.all(np.isfinite(w)):
                raise ValueError(f"weights[{i}] must be finite and non-negative.")
            if not np.isclose(w.sum(), 1.0, rtol=0, atol=1e-8):
                raise ValueError(
                    f"weights[{i}] must sum to one; got {w.sum():.6g}. "
                    f"Normalize with w / w.sum()."
                )
    return clouds, weights


def check_delays(delays, n_samples, *, name="delays"):
    """Validate per-row feedback delays: non-negative integers, one per row.

    The convention everywhere in skalgos: ``delays[t] = 0`` means the label of
    row ``t`` is available right after its prediction (the usual online
    setting); ``delays[t] = d`` means it arrives after ``d`` further rows.

    Returns
    -------
    delays : ndarray of shape (n_samples,), dtype int64
    """
    if delays is None:
        return np.zeros(n_samples, dtype=np.int64)
    arr = np.array(delays, copy=True)
    if arr.ndim == 0:
        arr = np.full(n_samples, arr)
    if arr.shape != (n_samples,):
        raise ValueError(
            f"{name} must have one entry per row ({n_samples}); got shape {arr.shape}."
        )
    if arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
            raise ValueError(f"{name} must be whole numbers of rows.")
    elif arr.dtype.kind not in "iub":
        raise TypeError(f"{name} must be integers; got dtype {arr.dtype}.")
    arr = arr.astype(np.int64)
    if np.any(arr < 0):
        raise ValueError(f"{name} must be non-negative (0 means immediate feedback).")
    return arr


def check_groups(groups, n_samples, *, name="groups", min_groups=1):
    """Validate one group label per sample and encode it as 0..n_groups-1.

    Returns
    -------
    codes : ndarray of shape (n_samples,), dtype int64
    classes : ndarray
        The distinct group labels, ``classes[codes]`` recovers ``groups``.
    """
    if groups is None:
        raise ValueError(f"{name} is required: pass one label per sample.")
    arr = np.asarray(groups)
    if arr.ndim != 1 or arr.shape[0] != n_samples:
        raise ValueError(
            f"{name} must be 1-D with one label per sample ({n_samples}); "
            f"got shape {arr.shape}."
        )
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite labels.")
    classes, codes = np.unique(arr, return_inverse=True)
    if not isinstance(min_groups, numbers.Integral) or classes.size < min_groups:
        raise ValueError(f"{name} must contain at least {min_groups} distinct labels.")
    return codes.astype(np.int64), classes
