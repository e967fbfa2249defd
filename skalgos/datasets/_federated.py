"""Federated splits: Dirichlet non-IID partitions of any dataset."""

from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions, validate_params

__all__ = ["make_federated"]


def _dirichlet_partition(strata, n_clients, alpha, min_size, rng, max_tries=200):
    n = strata.shape[0]
    if n_clients * min_size > n:
        raise ValueError(
            f"n_clients={n_clients} clients of at least min_size={min_size} samples "
            f"need {n_clients * min_size} samples, got {n}; use fewer clients."
        )
    labels = np.unique(strata)
    for _ in range(max_tries):
        client = np.empty(n, dtype=np.intp)
        for c in labels:
            idx = np.flatnonzero(strata == c)
            rng.shuffle(idx)
            q = rng.dirichlet(np.full(n_clients, alpha))
            # per-row categorical draws: no rounding bias towards the last clients
            client[idx] = rng.choice(n_clients, size=idx.shape[0], p=q)
        if np.bincount(client, minlength=n_clients).min() >= min_size:
            return client
    raise ValueError(
        f"no Dirichlet split with every client holding >= {min_size} samples was "
        f"found in {max_tries} draws (alpha={alpha}); raise dirichlet alpha, lower "
        "min_size or use fewer clients."
    )


def _iid_partition(n, n_clients, rng):
    if n_clients > n:
        raise ValueError(
            f"n_clients={n_clients} is larger than the number of samples ({n})."
        )
    client = np.arange(n) % n_clients
    rng.shuffle(client)
    return client


def _strata(y, n_bins=10):
    y = np.asarray(y)
    if y.dtype.kind in "fc" and np.unique(y).shape[0] > n_bins:
        edges = np.quantile(y, np.linspace(0, 1, n_bins + 1)[1:-1])
        return np.searchsorted(edges, y)
    return np.unique(y, return_inverse=True)[1].ravel()


@validate_params(
    {
        "X": ["array-like"],
        "y": ["array-like"],
        "n_clients": [Interval(Integral, 1, None, closed="left")],
        "partition": [StrOptions({"dirichlet", "iid"})],
        "alpha": [Interval(Real, 0, None, closed="neither")],
        "min_size": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def make_federated(
    X,
    y,
    n_clients=10,
    *,
    partition="dirichlet",
    alpha=0.5,
    min_size=1,
    random_state=None,
):
    """Split a dataset across simulated clients (Dirichlet label skew or IID).

    With ``partition="dirichlet"`` each class (for a continuous ``y``: each of
    10 quantile bins) is divided among the clients in proportions drawn from
    ``Dirichlet(alpha * 1)``; small ``alpha`` gives strongly non-IID clients of
    unequal sizes. Draws are repeated until every client holds at least
    ``min_size`` samples.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The features (returned unchanged).
    y : array-like of shape (n_samples,)
        The targets, used to skew the split.
    n_clients : int, default=10
        Number of clients.
    partition : {"dirichlet", "iid"}, default="dirichlet"
        Label-skewed or uniform random split.
    alpha : float, default=0.5
        Dirichlet concentration.
    min_size : int, default=1
        Smallest client size accepted.
    random_state : int, RandomState instance or None, default=None
        Seed of the split.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
    client_id : ndarray of int, shape (n_samples,)
        The client of each row (pass it as ``fit(X, y, client_id=...)`` with
        ``partition="given"``).

    Examples
    --------
    >>> import numpy as np
    >>> from skalgos.datasets import make_federated
    >>> X, y = np.zeros((100, 2)), np.repeat([0, 1], 50)
    >>> X, y, cid = make_federated(X, y, n_clients=4, alpha=0.5, random_state=0)
    >>> int(np.bincount(cid).sum()), int(cid.max())
    (100, 3)
    """
    X = np.asarray(X)
    y = np.asarray(y)
    if X.shape[0] != y.shape[0]:
        raise ValueError(f"X has {X.shape[0]} rows but y has {y.shape[0]}.")
    rng = check_random_state(random_state)
    if partition == "iid":
        cid = _iid_partition(y.shape[0], n_clients, rng)
    else:
        cid = _dirichlet_partition(_strata(y), n_clients, alpha, min_size, rng)
    return X, y, cid
