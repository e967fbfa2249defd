"""The correlation clustering objective (number of disagreements)."""

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import column_or_1d

from ..utils.validation import check_adjacency

__all__ = ["correlation_clustering_cost"]


def correlation_clustering_cost(A, labels):
    """Number of disagreements of a clustering with a graph.

    An edge between two clusters and a non-edge inside a cluster each cost
    one: the textbook (unordered pairs) count of correlation clustering with
    complete information.

    Parameters
    ----------
    A : networkx.Graph, scipy sparse matrix or array-like of shape (n, n)
        Symmetric 0/1 adjacency without self loops ("+" pairs are edges,
        every other pair is "-").
    labels : array-like of shape (n,)
        Cluster id of each node. Nodes with a negative label are absent
        (e.g. deleted): they and their pairs are left out of the count.

    Returns
    -------
    cost : int
        Edges across clusters plus non-edges inside clusters.

    Examples
    --------
    >>> import networkx as nx
    >>> from skalgos.metrics import correlation_clustering_cost
    >>> G = nx.path_graph(3)
    >>> correlation_clustering_cost(G, [0, 0, 0])  # one missing edge (0, 2)
    1
    >>> correlation_clustering_cost(G, [0, 1, 2])  # both edges cut
    2
    """
    A = check_adjacency(A, name="A")
    labels = column_or_1d(np.asarray(labels), warn=False)
    if labels.shape[0] != A.shape[0]:
        raise ValueError(
            f"labels has {labels.shape[0]} entries but A has {A.shape[0]} nodes; "
            "give one label per node."
        )
    if not np.issubdtype(labels.dtype, np.integer):
        if not np.all(np.asarray(labels, dtype=float) == np.round(labels)):
            raise ValueError("labels must be integers.")
        labels = labels.astype(np.int64)
    keep = labels >= 0
    upper = sp.triu(A, k=1).tocoo()
    r, c = upper.row, upper.col
    both = keep[r] & keep[c]
    same = labels[r] == labels[c]
    cut = int(np.count_nonzero(both & ~same))
    inside = int(np.count_nonzero(both & same))
    _, sizes = np.unique(labels[keep], return_counts=True)
    pairs = int(np.sum(sizes.astype(np.int64) * (sizes - 1) // 2))
    return cut + pairs - inside
