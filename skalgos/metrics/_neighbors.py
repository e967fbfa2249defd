"""Scores of the diverse nearest-neighbour family."""

import numpy as np

from ..utils._backend import to_numpy

__all__ = ["diverse_recall"]


def diverse_recall(indices, true_indices):
    """Recall of reported neighbours against the exact diverse answer.

    For each query, the fraction of its exact answer (``true_indices``, the
    greedy diverse top-k of :func:`skalgos.neighbors.diverse_kneighbors`) that
    the reported ``indices`` contain, averaged over queries. Padding entries
    (``-1``) are ignored on both sides; a query whose exact answer is empty
    counts as fully recalled. Scoring against the *diverse* ground truth, not
    the plain k-NN, is what makes recall meaningful under a group cap.

    Parameters
    ----------
    indices : array-like of shape (n_queries, k)
        Reported neighbour indices (any array namespace), ``-1`` for padding.
    true_indices : array-like of shape (n_queries, k_true)
        The exact diverse answer, ``-1`` for padding.

    Returns
    -------
    recall : float
        In ``[0, 1]``.

    Examples
    --------
    >>> from skalgos.metrics import diverse_recall
    >>> diverse_recall([[0, 1, 2], [3, 4, -1]], [[0, 2, 5], [3, 4, -1]])
    0.8333...
    """
    ind = np.asarray(to_numpy(indices))
    true = np.asarray(to_numpy(true_indices))
    if ind.ndim != 2 or true.ndim != 2:
        raise ValueError(
            "indices and true_indices must be 2-D (n_queries, k); got shapes "
            f"{ind.shape} and {true.shape}."
        )
    if ind.shape[0] != true.shape[0]:
        raise ValueError(
            f"indices has {ind.shape[0]} queries but true_indices has {true.shape[0]}."
        )
    if ind.shape[0] == 0:
        raise ValueError("diverse_recall needs at least one query.")
    scores = np.empty(ind.shape[0])
    for r, (a, b) in enumerate(zip(ind, true)):
        b = set(b[b >= 0].tolist())
        scores[r] = 1.0 if not b else len(b & set(a[a >= 0].tolist())) / len(b)
    return float(scores.mean())
