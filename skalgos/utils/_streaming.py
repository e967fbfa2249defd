"""Feed an incremental estimator chunk by chunk: Dask arrays, Dask DataFrames,
iterables of chunks or in-memory arrays.

Dask is imported here only when a Dask collection is passed, never at
``import skalgos``.
"""

import numbers
import time

import numpy as np
from sklearn.base import is_classifier
from sklearn.utils import _safe_indexing
from sklearn.utils._param_validation import Interval, validate_params
from sklearn.utils.validation import _num_samples

__all__ = ["partial_fit_chunks"]

_DEFAULT_CHUNK_SIZE = 1000


def _is_dask(obj):
    # the Dask collection protocol, checked without importing dask
    return (
        obj is not None and not isinstance(obj, type) and hasattr(obj, "__dask_graph__")
    )


def _is_dask_frame(obj):
    # Dask arrays have npartitions too; DataFrames and Series have divisions
    return _is_dask(obj) and hasattr(obj, "divisions")


def _is_dask_array(obj):
    return _is_dask(obj) and hasattr(obj, "numblocks")


def _has_unknown(sizes):
    return any(s != s for s in sizes)  # NaN: unknown chunk sizes


def _align_to_rows(obj, name, row_sizes):
    """Dask array ``obj`` rechunked along rows to ``row_sizes`` (one column
    block), as a flat array of delayed blocks."""
    if _is_dask_frame(obj):
        obj = obj.to_dask_array(lengths=True)
    if tuple(obj.chunks[0]) != tuple(row_sizes):
        if _has_unknown(obj.chunks[0]):
            obj = obj.compute_chunk_sizes()
        if obj.shape[0] != sum(row_sizes):
            raise ValueError(
                f"X has {int(sum(row_sizes))} rows and {name} has "
                f"{obj.shape[0]}: pass a {name} with one entry per row of X."
            )
        obj = obj.rechunk({0: tuple(row_sizes)})
    if obj.ndim == 2 and obj.numblocks[1] > 1:
        obj = obj.rechunk({1: -1})
    return list(obj.to_delayed().ravel())


def _slice_by_sizes(obj, name, row_sizes):
    """An in-memory ``obj`` cut into consecutive pieces of ``row_sizes`` rows."""
    n = _num_samples(obj)
    if n != sum(row_sizes):
        raise ValueError(
            f"X has {int(sum(row_sizes))} rows and {name} has {n}: pass a {name} "
            "with one entry per row of X."
        )
    stops = np.cumsum(row_sizes)
    starts = stops - np.asarray(row_sizes)
    return [_safe_indexing(obj, slice(int(a), int(b))) for a, b in zip(starts, stops)]


def _companion_pieces(obj, name, row_sizes, n_chunks, X_is_frame):
    """The per-chunk pieces of ``y`` or ``sample_weight`` for X's chunks."""
    if obj is None:
        return [None] * n_chunks
    if _is_dask_frame(obj) and X_is_frame:
        if obj.npartitions != n_chunks:
            raise ValueError(
                f"X has {n_chunks} partitions and {name} has {obj.npartitions}: "
                f"give {name} the partitions of X, e.g. take it as a column of X "
                f"(y='column name') or build both from one DataFrame."
            )
        return [obj.partitions[i] for i in range(n_chunks)]
    if _is_dask(obj):
        if X_is_frame and _is_dask_array(obj) and obj.numblocks[0] == n_chunks:
            if obj.ndim == 2 and obj.numblocks[1] > 1:
                obj = obj.rechunk({1: -1})
            return list(obj.to_delayed().ravel())
        return _align_to_rows(obj, name, row_sizes())
    return _slice_by_sizes(obj, name, row_sizes())


def _dask_source(X, y, sample_weight):
    """Per-pass chunk source of a Dask array or DataFrame ``X``: a list of
    ``(X_piece, y_piece, sw_piece)`` left lazy until each is computed."""
    if _is_dask_frame(X):
        n_chunks = X.npartitions
        x_pieces = [X.partitions[i] for i in range(n_chunks)]
        sizes_cache = []

        def row_sizes():
            if not sizes_cache:  # one pass over X, only when y is not per partition
                sizes_cache.append(tuple(X.map_partitions(len).compute()))
            return sizes_cache[0]

        is_frame = True
    else:
        if X.ndim != 2:
            raise ValueError(
                f"X must be a 2-D Dask array of shape (n_samples, n_features), got "
                f"{X.ndim} dimension(s); reshape it, e.g. X.reshape(-1, 1)."
            )
        if X.numblocks[1] > 1:  # one block per chunk of rows: all columns
            X = X.rechunk({1: -1})
        if _needs_row_sizes(y) or _needs_row_sizes(sample_weight):
            if _has_unknown(X.chunks[0]):
                X = X.compute_chunk_sizes()
        x_pieces = list(X.to_delayed().ravel())
        n_chunks = len(x_pieces)

        def row_sizes():
            return X.chunks[0]

        is_frame = False
    y_pieces = _companion_pieces(y, "y", row_sizes, n_chunks, is_frame)
    sw_pieces = _companion_pieces(
        sample_weight, "sample_weight", row_sizes, n_chunks, is_frame
    )
    return list(zip(x_pieces, y_pieces, sw_pieces))


def _needs_row_sizes(obj):
    """Whether aligning ``obj`` with X's blocks needs X's row chunk sizes."""
    return obj is not None and not (
        _is_dask_array(obj) and not _has_unknown(obj.chunks[0])
    )


def _unique_classes(y, X):
    """The sorted class labels of a 1-D ``y`` (computed for Dask input)."""
    if isinstance(y, str):
        y = X[y]
    if _is_dask(y):
        if getattr(y, "ndim", 1) != 1:
            return None
        if _is_dask_frame(y):
            return np.unique(np.asarray(y.unique().compute()))
        import dask.array as da

        return np.asarray(da.unique(y).compute())
    y = np.asarray(y)
    return np.unique(y) if y.ndim == 1 else None


def _compute(pieces):
    if any(_is_dask(p) for p in pieces):
        import dask

        return dask.compute(*pieces)
    return pieces


def _as_chunk(item):
    if isinstance(item, tuple):
        if not 1 <= len(item) <= 3:
            raise ValueError(
                "Each chunk of an iterable X must be X_chunk, (X_chunk,), "
                "(X_chunk, y_chunk) or (X_chunk, y_chunk, sample_weight_chunk); "
                f"got a tuple of {len(item)} items."
            )
        return tuple(item) + (None,) * (3 - len(item))
    return item, None, None


@validate_params(
    {
        "estimator": "no_validation",
        "X": "no_validation",
        "y": "no_validation",
        "chunk_size": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "classes": ["array-like", None],
        "sample_weight": "no_validation",
        "n_passes": [Interval(numbers.Integral, 1, None, closed="left")],
        "verbose": ["verbose"],
    },
    # the estimator validates its own parameters in partial_fit
    prefer_skip_nested_validation=False,
)
def partial_fit_chunks(
    estimator,
    X,
    y=None,
    *,
    chunk_size=None,
    classes=None,
    sample_weight=None,
    n_passes=1,
    verbose=0,
):
    """Fit an incremental estimator chunk by chunk with ``partial_fit``.

    The data may be larger than memory: for a Dask array or Dask DataFrame
    the chunks are its blocks (row chunks) or partitions, computed one at a
    time, so that at most one chunk is held in memory by this function; an
    iterable yields the chunks itself; an in-memory array is cut into
    consecutive chunks of ``chunk_size`` rows. The chunks are passed to
    ``estimator.partial_fit`` in order, so the result is exactly that of
    calling ``partial_fit`` by hand on the same chunks.

    Every skalgos estimator with ``partial_fit`` can be fed this way: the
    delayed online learners of :mod:`skalgos.online`
    (:class:`~skalgos.online.DelayedOGDRegressor`,
    :class:`~skalgos.online.DelayedFTRLRegressor`, ...), the federated
    estimators (:class:`~skalgos.federated.FederatedClassifier`,
    :class:`~skalgos.federated.FederatedRegressor`: one round per chunk),
    the torch estimators and
    :class:`~skalgos.cluster.DynamicCorrelationClustering`, as well as any
    scikit-learn incremental estimator.

    Parameters
    ----------
    estimator : estimator instance
        An estimator with a ``partial_fit`` method; it is updated in place
        (it is not cloned, so an already fitted estimator continues).
    X : dask array, dask DataFrame, array-like or iterable of chunks
        - A 2-D Dask array: one chunk per block of rows (blocks along the
          columns are merged first).
        - A Dask DataFrame: one chunk per partition (a pandas DataFrame).
        - An in-memory array (anything with a ``shape``: NumPy array, pandas
          DataFrame, SciPy sparse matrix): consecutive chunks of
          ``chunk_size`` rows.
        - Any other iterable: its items are the chunks, each ``X_chunk`` or a
          tuple ``(X_chunk, y_chunk)`` or ``(X_chunk, y_chunk,
          sample_weight_chunk)`` (Dask pieces are computed). With
          ``n_passes > 1`` it must be re-iterable (a list, not a generator).
    y : dask array, dask Series, array-like, str or None, default=None
        Targets, aligned with the rows of ``X`` (a Dask ``y`` is rechunked
        to the row chunks of a Dask array ``X``; a Dask Series must have the
        partitions of a Dask DataFrame ``X``). A string names a column of a
        (Dask or pandas) DataFrame ``X`` that is the target and is dropped
        from the features. ``None`` for unsupervised estimators and for an
        iterable ``X``, whose chunks carry their targets.
    chunk_size : int, default=None
        Rows per chunk for an in-memory ``X`` (``None``: 1000). Must be
        ``None`` for a Dask or iterable ``X``, whose chunks are given; rechunk
        a Dask array with ``X.rechunk({0: n})`` to change them.
    classes : array-like, default=None
        For classifiers, every class label, passed to the first
        ``partial_fit`` call. ``None``: the distinct labels of ``y``, computed
        first for a Dask ``y`` (one pass over ``y``); required when ``X`` is
        an iterable of chunks (the first chunk may miss a class), unless the
        estimator is already fitted.
    sample_weight : dask array, dask Series, array-like or None, default=None
        Per-row weights, aligned as ``y`` is; passed chunk by chunk.
    n_passes : int, default=1
        Number of passes over the data (each pass in the same chunk order).
    verbose : int, default=0
        ``1``: a line per pass; ``2`` or more: a line per chunk.

    Returns
    -------
    estimator : estimator instance
        The same estimator, after every ``partial_fit`` call.

    Raises
    ------
    TypeError
        If ``estimator`` has no ``partial_fit`` method.
    ValueError
        If ``y`` or ``sample_weight`` do not match the rows of ``X``, if
        ``classes`` is needed and missing, or if ``chunk_size`` is given for
        chunks that are already fixed.

    See Also
    --------
    skalgos.online.DelayedFTRLRegressor : An online learner to stream.

    Notes
    -----
    Each chunk is computed with ``dask.compute`` on the current scheduler
    (the ``dask.distributed`` Client when there is one), ``X``, ``y`` and
    ``sample_weight`` pieces of a chunk together, so that shared inputs are
    read once per chunk. A chunk that depends on a global reduction (for
    example ``X - X.mean(axis=0)``) recomputes it every time: ``persist`` or
    compute such statistics first. With a Dask ``y`` and ``classes=None``
    the labels are computed before the first chunk (an extra pass over
    ``y``); a Dask ``y`` or in-memory ``y`` that is not chunked like ``X``
    needs ``X``'s row chunk sizes, which costs one more pass when Dask does
    not know them (for example after boolean indexing or for a DataFrame).

    dask-ml's ``dask_ml.wrappers.Incremental`` is the other route; with
    dask-ml 2025.1.0, dask 2026.8 and scikit-learn 1.9 its ``fit`` works
    (with ``shuffle_blocks=False`` it gives the same model as this function)
    but its ``score`` fails on Dask arrays and DataFrames, hence this helper.

    Examples
    --------
    >>> import numpy as np
    >>> from skalgos.online import DelayedFTRLRegressor
    >>> from skalgos.utils import partial_fit_chunks
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(1000, 3)); y = X @ [0.5, -0.4, 0.2]
    >>> est = partial_fit_chunks(
    ...     DelayedFTRLRegressor(strong_convexity=0.1), X, y, chunk_size=100)
    >>> bool(est.score(X, y) > 0.95)
    True

    The same model, by hand:

    >>> ref = DelayedFTRLRegressor(strong_convexity=0.1)
    >>> for start in range(0, 1000, 100):
    ...     ref = ref.partial_fit(X[start:start + 100], y[start:start + 100])
    >>> bool(np.array_equal(ref.coef_, est.coef_))
    True

    With Dask (``pip install 'skalgos[dask]'``) the chunks are the blocks:
    ``partial_fit_chunks(est, da.from_zarr(...), y_dask)``, or for a Dask
    DataFrame ``partial_fit_chunks(est, ddf, y="target")``.
    """
    if isinstance(estimator, type):
        raise TypeError(
            f"partial_fit_chunks needs an estimator instance, got the class "
            f"{estimator.__name__}: pass {estimator.__name__}() instead."
        )
    if not callable(getattr(estimator, "partial_fit", None)):
        raise TypeError(
            f"partial_fit_chunks needs an estimator with a partial_fit method; "
            f"{type(estimator).__name__} has none. Use an incremental estimator "
            f"(for example skalgos.online.DelayedFTRLRegressor, "
            f"skalgos.federated.FederatedClassifier or sklearn's "
            f"SGDRegressor), or call fit on data that fits in memory."
        )
    classifier = is_classifier(estimator)
    if classes is not None and not classifier:
        raise ValueError(
            f"classes is for classifiers; {type(estimator).__name__} is not one: "
            "leave classes=None."
        )
    y_column = y if isinstance(y, str) else None
    if y_column is not None and not hasattr(X, "columns"):
        raise ValueError(
            f"y={y_column!r} names a column of X, which needs a (pandas or Dask) "
            f"DataFrame X; got {type(X).__name__}: pass y as an array instead."
        )

    if _is_dask(X):
        if chunk_size is not None:
            raise ValueError(
                "chunk_size is for in-memory X; a Dask X is fed one block or "
                "partition at a time: leave chunk_size=None and rechunk X "
                "(X.rechunk({0: n}) or ddf.repartition(npartitions=n))."
            )
        kind = "dask"
        chunks = _dask_source(X, None if y_column else y, sample_weight)
    elif hasattr(X, "shape"):
        kind = "array"
        size = _DEFAULT_CHUNK_SIZE if chunk_size is None else chunk_size
        n = _num_samples(X)
        sizes = [min(size, n - s) for s in range(0, n, size)]
        x_pieces = _slice_by_sizes(X, "X", sizes)
        if _is_dask(y) or _is_dask(sample_weight):
            raise ValueError(
                "X is in memory but y or sample_weight is a Dask collection: "
                "pass X as a Dask collection too (dask.array.from_array(X)), or "
                "compute y."
            )
        y_pieces = (
            [None] * len(sizes)
            if y is None or y_column is not None
            else _slice_by_sizes(y, "y", sizes)
        )
        sw_pieces = (
            [None] * len(sizes)
            if sample_weight is None
            else _slice_by_sizes(sample_weight, "sample_weight", sizes)
        )
        chunks = list(zip(x_pieces, y_pieces, sw_pieces))
    else:
        try:
            iter(X)
        except TypeError:
            raise TypeError(
                "X must be a Dask array or DataFrame, an array-like or an "
                f"iterable of chunks; got {type(X).__name__}."
            ) from None
        if y is not None or sample_weight is not None or chunk_size is not None:
            raise ValueError(
                "X is an iterable of chunks: y, sample_weight and chunk_size "
                "must be None; yield (X_chunk, y_chunk) or (X_chunk, y_chunk, "
                "sample_weight_chunk) tuples instead."
            )
        if n_passes > 1 and iter(X) is X:
            raise ValueError(
                f"n_passes={n_passes} needs to read X again, and X is an iterator "
                "(it can be read once): pass a list of chunks or an object whose "
                "__iter__ starts a new pass."
            )
        kind = "iterable"
        chunks = X

    fitted = hasattr(estimator, "classes_")
    if classifier and classes is None and not fitted:
        if kind == "iterable":
            raise ValueError(
                f"classes is required to stream an iterable of chunks into the "
                f"classifier {type(estimator).__name__} (the first chunk may miss "
                "a class): pass classes=[...] with every label."
            )
        if y is not None:
            classes = _unique_classes(y, X)
    first = True
    for p in range(n_passes):
        t0 = time.perf_counter()
        n_rows = n_chunks = 0
        for i, item in enumerate(chunks):
            Xc, yc, swc = _compute(_as_chunk(item) if kind == "iterable" else item)
            if y_column is not None:
                Xc, yc = Xc.drop(columns=[y_column]), Xc[y_column]
            if yc is not None and _num_samples(yc) != _num_samples(Xc):
                raise ValueError(
                    f"Chunk {i}: X has {_num_samples(Xc)} rows and y has "
                    f"{_num_samples(yc)}; chunk y like X (the same row blocks or "
                    "partitions)."
                )
            kwargs = {} if swc is None else {"sample_weight": swc}
            if first and classifier and classes is not None:
                kwargs["classes"] = classes
            if yc is None:
                estimator.partial_fit(Xc, **kwargs)
            else:
                estimator.partial_fit(Xc, yc, **kwargs)
            first = False
            n_rows += _num_samples(Xc)
            n_chunks += 1
            if verbose >= 2:
                print(
                    f"[partial_fit_chunks] pass {p + 1}/{n_passes}, chunk {i + 1}: "
                    f"{_num_samples(Xc)} rows"
                )
            del Xc, yc, swc
        if n_chunks == 0:
            raise ValueError("X holds no chunk: there is nothing to fit.")
        if verbose >= 1:
            print(
                f"[partial_fit_chunks] pass {p + 1}/{n_passes}: {n_chunks} chunks, "
                f"{n_rows} rows in {time.perf_counter() - t0:.2f} s"
            )
    return estimator
