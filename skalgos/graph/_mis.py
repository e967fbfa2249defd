"""Maximum (weight) independent set: pCQO-MIS with iterated local search, the
greedy, an exact MILP and CHILS behind one estimator."""

import numbers
import time
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_array, check_non_negative

from ..utils._backend import (
    device,
    get_namespace,
    is_numpy_namespace,
    to_device,
    to_numpy,
)
from ..utils.validation import check_adjacency, validate_data

__all__ = [
    "PCQO_PRESETS",
    "MaximumIndependentSet",
    "improve_independent_set",
    "is_independent_set",
    "is_maximal_independent_set",
    "maximum_independent_set",
]

#: Parameter settings shipped with the official pCQO-MIS code.
#:
#: ``"er"`` was tuned for Erdos-Renyi graphs with 700-800 nodes and p = 0.15
#: (225,000 steps, a check every 450); ``"satlib"`` for the SATLIB graphs
#: (about 1,200 nodes, 7,500 steps, a check every 30). Use them as
#: ``MaximumIndependentSet(**PCQO_PRESETS["satlib"])``; they set every pCQO
#: parameter (``gamma`` and ``learning_rate`` included) and leave the local
#: search on.
PCQO_PRESETS = {
    "er": dict(
        gamma=350.0,
        gamma_prime=7.0,
        learning_rate=9e-6,
        momentum=0.9,
        max_iter=225_000,
        restart_interval=450,
        batch_size=256,
        init_std=2.25,
    ),
    "satlib": dict(
        gamma=900.0,
        gamma_prime=1.0,
        learning_rate=3e-4,
        momentum=0.875,
        max_iter=7_500,
        restart_interval=30,
        batch_size=256,
        init_std=2.25,
    ),
}

_AUTO_DENSE_MAX_NODES = 2000
_AUTO_DENSE_MIN_DENSITY = 0.05
# ``learning_rate="auto"`` is this divided by gamma (see the class Notes)
_AUTO_LR_TIMES_GAMMA = 0.02
# ``local_search_iter="auto"`` is this many ILS iterations per node
_AUTO_LS_ITER_PER_NODE = 20
_AUTO_LS_ITER_MIN = 2000
# CHILS: concurrent solutions and the time limit when ``time_limit`` is None
_CHILS_SOLUTIONS = 8
_CHILS_DEFAULT_SECONDS = 1.0


_CONTROLLER = []


def _blas_controller():
    """One threadpoolctl controller per process (scanning libraries is slow)."""
    if not _CONTROLLER:
        from threadpoolctl import ThreadpoolController

        _CONTROLLER.append(ThreadpoolController())
    return _CONTROLLER[0]


def _networkx_graph(G):
    try:
        import networkx as nx
    except ImportError:  # pragma: no cover - networkx is a dependency
        return False
    return isinstance(G, nx.Graph)


def _validate_graph(G, *, name="G", ignore_diagonal=False, estimator=None):
    """Return the validated graph as a 0/1 symmetric CSR array (float64).

    Any positive weight is an edge (its value is ignored); negative weights,
    NaN, complex values, asymmetric or non-square input raise. With
    ``ignore_diagonal`` the diagonal (self loops) is dropped instead of
    raising. Arrays first go through scikit-learn's ``validate_data`` (or
    ``check_array`` without an estimator), for its standard messages.
    """
    if _networkx_graph(G):
        if G.number_of_nodes() == 0:
            if G.is_directed():
                raise ValueError(
                    f"{name} must be an undirected graph; got a directed one."
                )
            return sp.csr_array((0, 0), dtype=float)
    elif getattr(G, "shape", None) != (0, 0) and not (
        isinstance(G, (list, tuple)) and len(G) == 0
    ):
        dtypes = getattr(G, "dtypes", None)
        if dtypes is not None and hasattr(dtypes, "items"):
            bad = [
                str(c)
                for c, t in dtypes.items()
                if getattr(t, "kind", "O") not in "biuf"
            ]
            if bad:
                raise TypeError(
                    f"{name} must be a numeric adjacency matrix; the DataFrame has "
                    f"non-numeric column(s) {bad[:5]}. Pass the adjacency as numbers "
                    "(or a networkx graph / scipy sparse matrix)."
                )
        kwargs = dict(
            accept_sparse=True,
            dtype="numeric",
            ensure_all_finite=True,
            ensure_min_samples=1,
            ensure_2d=True,
        )
        if estimator is not None:
            G = validate_data(estimator, G, reset=True, **kwargs)
        else:
            G = check_array(G, input_name=name, **kwargs)
        if not sp.issparse(G):
            G = to_numpy(G)
        check_non_negative(G, f"{name} (the adjacency matrix)")
    else:
        G = np.zeros((0, 0))
    A = check_adjacency(
        G, name=name, allow_weights=True, allow_self_loops=bool(ignore_diagonal)
    )
    if ignore_diagonal:
        A.setdiag(0)
        A.eliminate_zeros()
    A.data[:] = 1.0
    A.indptr = A.indptr.astype(np.int64, copy=False)
    A.indices = A.indices.astype(np.int64, copy=False)
    return A


def _as_mask(nodes, n, name="nodes"):
    arr = np.asarray(nodes)
    if arr.dtype == bool:
        if arr.shape != (n,):
            raise ValueError(
                f"A boolean {name} must have one entry per node ({n}); got shape "
                f"{arr.shape}."
            )
        return arr.astype(np.uint8)
    arr = arr.reshape(-1)
    if arr.size and arr.dtype.kind not in "iu":
        if arr.dtype.kind == "f" and np.all(arr == np.round(arr)):
            arr = arr.astype(np.int64)
        else:
            raise TypeError(
                f"{name} must be node indices (integers) or a boolean mask; got dtype "
                f"{arr.dtype}."
            )
    arr = arr.astype(np.int64)
    if arr.size and (arr.min() < 0 or arr.max() >= n):
        raise ValueError(
            f"{name} must be node indices in [0, {n}); got values from {arr.min()} "
            f"to {arr.max()}."
        )
    mask = np.zeros(n, dtype=np.uint8)
    mask[arr] = 1
    return mask


def is_independent_set(G, nodes):
    """Tell whether ``nodes`` is an independent set of the graph ``G``.

    Parameters
    ----------
    G : networkx.Graph, scipy sparse matrix or array-like of shape (n, n)
        The graph; any positive entry is an edge (see
        :class:`MaximumIndependentSet`). Nodes of a networkx graph are
        numbered in ``list(G.nodes)`` order.
    nodes : array-like of int, or boolean array of shape (n,)
        The candidate set, as node indices or as a mask.

    Returns
    -------
    independent : bool
        True when no two nodes of the set are adjacent.

    Examples
    --------
    >>> import networkx as nx
    >>> from skalgos.graph import is_independent_set
    >>> is_independent_set(nx.cycle_graph(5), [0, 2])
    True
    >>> is_independent_set(nx.cycle_graph(5), [0, 1])
    False
    """
    from ._kernels import check_masks

    A = _validate_graph(G)
    mask = _as_mask(nodes, A.shape[0])
    independent, _ = check_masks(A.indptr, A.indices, mask[None, :])
    return bool(independent[0])


def is_maximal_independent_set(G, nodes):
    """Tell whether ``nodes`` is a maximal independent set of ``G``.

    Maximal means independent and not extendable: every node outside the set
    has a neighbour inside it. This is the paper's MIS check (a 0/1 point is
    a fixed point of the projected gradient step exactly when it passes).

    Parameters
    ----------
    G : networkx.Graph, scipy sparse matrix or array-like of shape (n, n)
        The graph; any positive entry is an edge.
    nodes : array-like of int, or boolean array of shape (n,)
        The candidate set, as node indices or as a mask.

    Returns
    -------
    maximal : bool

    Examples
    --------
    >>> import networkx as nx
    >>> from skalgos.graph import is_maximal_independent_set
    >>> is_maximal_independent_set(nx.path_graph(4), [0, 2])
    True
    >>> is_maximal_independent_set(nx.path_graph(5), [0, 2])
    False
    """
    from ._kernels import check_masks

    A = _validate_graph(G)
    mask = _as_mask(nodes, A.shape[0])
    _, maximal = check_masks(A.indptr, A.indices, mask[None, :])
    return bool(maximal[0])


def _clique_cover(A):
    """Cliques that together cover every edge (greedy), for the MILP rows.

    A clique row ``sum_{i in C} x_i <= 1`` implies the edge rows of all its
    pairs and gives a much tighter LP relaxation than one row per edge.
    """
    n = A.shape[0]
    nbrs = [set(A.indices[A.indptr[i] : A.indptr[i + 1]].tolist()) for i in range(n)]
    uncovered = [{j for j in nbrs[i] if j > i} for i in range(n)]
    cliques = []
    for u in range(n):
        while uncovered[u]:
            v = min(uncovered[u])
            clique = [u, v]
            cand = nbrs[u] & nbrs[v]
            while cand:
                # prefer the candidate that covers most still-uncovered pairs
                w = max(
                    cand,
                    key=lambda c: (
                        sum(
                            c in uncovered[min(c, q)] or q in uncovered[min(c, q)]
                            for q in clique
                        ),
                        -c,
                    ),
                )
                clique.append(w)
                cand &= nbrs[w]
            for a in clique:
                for b in clique:
                    if a < b:
                        uncovered[a].discard(b)
            cliques.append(clique)
    return cliques


def _node_labels(G):
    """Node labels of a networkx graph in matrix order, else None."""
    return list(G.nodes) if _networkx_graph(G) else None


def _check_node_weight(node_weight, G, n):
    """Return node weights as a float64 array of shape (n,), or None.

    ``node_weight`` is None, an array-like of one non-negative weight per node,
    or (networkx input only) the name of a node attribute holding it.
    """
    if node_weight is None:
        return None
    if isinstance(node_weight, str):
        if not _networkx_graph(G):
            raise TypeError(
                f"node_weight={node_weight!r} names a node attribute, which only a "
                "networkx graph has; pass an array of one weight per node instead."
            )
        values = []
        for v, data in G.nodes(data=True):
            if node_weight not in data:
                raise ValueError(
                    f"node {v!r} has no attribute {node_weight!r}; give every node "
                    "one, or pass node_weight as an array."
                )
            values.append(data[node_weight])
        try:
            w = np.asarray(values, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(
                f"the node attribute {node_weight!r} must hold numbers; got "
                f"{type(values[0]).__name__}."
            ) from exc
    else:
        if hasattr(node_weight, "__array_namespace__") or hasattr(
            node_weight, "__cuda_array_interface__"
        ):
            node_weight = to_numpy(node_weight)
        try:
            w = np.array(node_weight, dtype=np.float64, copy=True)
        except (TypeError, ValueError) as exc:
            raise TypeError(
                "node_weight must be an array-like of numbers (one per node) or "
                f"a node attribute name; got {type(node_weight).__name__}."
            ) from exc
        if w.ndim != 1 or w.shape[0] != n:
            raise ValueError(
                f"node_weight must have one entry per node, shape ({n},); got shape "
                f"{w.shape}."
            )
    if w.shape != (n,):  # a networkx attribute that holds arrays
        raise ValueError(f"node_weight must give one number per node; got {w.shape}.")
    if not np.all(np.isfinite(w)):
        raise ValueError("node_weight contains NaN or infinite values; remove them.")
    if np.any(w < 0):
        raise ValueError(
            "node_weight must be non-negative; a node of negative weight is never "
            "worth taking, so drop it from the graph (or clip its weight to 0)."
        )
    return w


def _set_value(mask, w):
    """Size (int) of a 0/1 mask, or its total weight (float) with weights."""
    if w is None:
        return int(np.count_nonzero(mask))
    return float(np.dot(np.asarray(mask, dtype=np.float64), w))


def _solve_milp(A, w, time_limit, verbose):
    from scipy.optimize import Bounds, LinearConstraint, milp

    n = A.shape[0]
    cliques = _clique_cover(A)
    c = -np.ones(n) if w is None else -w
    kwargs = {}
    if cliques:
        rows = np.repeat(np.arange(len(cliques)), [len(q) for q in cliques])
        cols = np.concatenate([np.asarray(q, dtype=np.int64) for q in cliques])
        C = sp.csr_array((np.ones(cols.size), (rows, cols)), shape=(len(cliques), n))
        kwargs["constraints"] = LinearConstraint(C, -np.inf, 1.0)
    options = {"disp": bool(verbose)}
    if time_limit is not None:
        options["time_limit"] = float(time_limit)
    res = milp(
        c, integrality=np.ones(n), bounds=Bounds(0, 1), options=options, **kwargs
    )
    optimal = res.status == 0
    bound = getattr(res, "mip_dual_bound", None)
    upper = float(-bound) if bound is not None and np.isfinite(bound) else np.nan
    if optimal:
        upper = float(-res.fun)
        if w is None:
            upper = float(np.round(upper))
    mask = None if res.x is None else (res.x > 0.5).astype(np.uint8)
    return mask, optimal, upper


def _chils_integer_weights(w, n):
    """CHILS takes integer weights (C ``long long``): exact for integral
    weights, else scaled so the total stays below 2**62 and rounded."""
    if w is None:
        return np.ones(n, dtype=np.int64)
    total = float(w.sum())
    if np.all(w == np.round(w)) and total < 2.0**62:
        return w.astype(np.int64)
    wmax = float(w.max())
    if wmax == 0.0:
        return np.zeros(n, dtype=np.int64)
    scale = min(2.0**40 / wmax, 2.0**62 / max(total, 1.0))
    return np.round(w * scale).astype(np.int64)


def _solve_chils(A, w, time_limit, random_state):
    """Run CHILS (Grossmann, Langedal and Schulz) from the ``chils`` package."""
    try:
        import chils
    except ImportError as exc:
        raise ImportError(
            "solver='chils' needs the optional package chils; install it with "
            "pip install 'skalgos[mis]' (or pip install chils)."
        ) from exc
    n = A.shape[0]
    weights = _chils_integer_weights(w, n)
    solver = chils.CHILS()
    for i in range(n):
        solver.add_vertex(int(weights[i]))
    upper = sp.triu(A, k=1).tocoo()
    for u, v in zip(upper.row.tolist(), upper.col.tolist()):
        solver.add_edge(u, v)
    seed = int(random_state.randint(0, 2**31 - 1))
    seconds = _CHILS_DEFAULT_SECONDS if time_limit is None else float(time_limit)
    solver.run_full(seconds, _CHILS_SOLUTIONS, seed)
    mask = np.fromiter(
        (solver.get_solution_vertex_configuration(i) for i in range(n)),
        dtype=np.uint8,
        count=n,
    )
    return mask, float(solver.get_solution_time())


class MaximumIndependentSet(BaseEstimator):
    r"""Maximum (weight) independent set by pCQO-MIS and iterated local search.

    ``fit(X)`` finds a large set of pairwise non-adjacent nodes of the graph
    ``X`` (an adjacency matrix or a networkx graph), or with ``node_weight`` a
    set of large total weight. The default solver is pCQO-MIS [1]_: projected
    momentum gradient descent on the clique-informed quadratic relaxation

    .. math::

        f(x) = -\sum_i c_i x_i + \frac{\gamma}{2} x^T A x
               - \frac{\gamma'}{2} x^T \bar A x, \qquad x \in [0, 1]^n,

    where :math:`\bar A = 11^T - I - A` is the complement graph's adjacency
    and :math:`c` is 1 (or the node weights), run from ``batch_size``
    initializations at once: the batch is an ``n x batch_size`` matrix and a
    step is one sparse-dense product with :math:`A`. Every
    ``restart_interval`` steps each point is binarized (``x > threshold``) and
    checked; the best maximal independent set seen is kept, and every point
    is re-sampled around its current position (or the best set, or the
    initial mean: ``restart``). The result is then polished by the iterated
    local search (ILS) of Andrade, Resende and Werneck [2]_:
    (1,2)-swaps (remove one node, insert two) to a local optimum, and a
    perturbation loop that forces nodes into the solution and accepts worse
    solutions with a small probability.

    Parameters
    ----------
    solver : {"pcqo", "greedy", "milp", "chils"}, default="pcqo"
        ``"pcqo"``: the paper's method. ``"greedy"``: repeatedly take a node
        of minimum degree (with weights: of maximum ``weight / (degree + 1)``,
        GWMIN) in the remaining graph and delete it and its neighbours.
        ``"milp"``: exact, with :func:`scipy.optimize.milp` (HiGHS) on a
        clique-cover formulation; ``optimal_`` says whether optimality was
        proven within ``time_limit``. ``"chils"``: CHILS [3]_, the concurrent
        hybrid iterated local search of the KaMIS line, from the optional
        ``chils`` package (``pip install 'skalgos[mis]'``), run for
        ``time_limit`` seconds (1 s when None).
    gamma : float or "auto", default="auto"
        Edge penalty :math:`\gamma`. ``"auto"`` sets
        :math:`\gamma = 1.2\,(\max_i c_i + \gamma' (\hat s - 1))` with
        :math:`\hat s` 1.2 times the greedy set size, so that every maximal
        independent set up to that size is a strict local minimizer (the
        condition :math:`\gamma > c_i + \gamma'(|S| - 1)`). The official ER
        setting is 350 (:data:`PCQO_PRESETS`).
    gamma_prime : float, default=1.0
        Clique (complement) reward :math:`\gamma'`; 0 gives the older
        two-term objective.
    learning_rate : float or "auto", default="auto"
        Step size :math:`\eta`. ``"auto"`` is :math:`0.02 / \gamma`, so that
        the step does not depend on the scale ``gamma`` takes with the graph
        (the official settings have :math:`\eta\gamma` = 0.003 and 0.27).
    momentum : float, default=0.9
        Heavy-ball momentum :math:`m` (``V <- m V + eta grad``).
    max_iter : int, default=300
        Number of gradient steps (three check periods at the default
        interval). The official ER setting uses 225,000.
    restart_interval : int, default=100
        Steps between two MIS checks, :math:`T`; a restart follows each check.
    batch_size : int, default=32
        Number of parallel initializations :math:`B`.
    init_std : float, default=1.0
        Standard deviation :math:`\sigma` of the Gaussian initializations and
        restarts (2.25 in the official settings).
    init : {"degree", "degree_normalized"} or array-like, default="degree"
        Mean of the initializations: ``"degree"`` is
        :math:`\mu_i = 1 - d_i / d_{max}` (the C++ code),
        ``"degree_normalized"`` divides it by its maximum (the older Python
        code); an array is a warm start.
    restart : {"current", "best", "init"}, default="current"
        Centre of the re-sampling after each check: the current point (the
        C++ code), the best set found so far, or ``init``'s mean.
    reset_velocity : bool, default=False
        Zero the momentum at restarts. The official code keeps it.
    threshold : float, default=0.5
        Binarization threshold of the MIS check.
    complement : {"auto", "dense", "implicit"}, default="auto"
        How :math:`\bar A x` is computed. ``"dense"`` materializes
        :math:`\gamma A - \gamma' \bar A` as one dense ``n x n`` matrix (the
        paper's form: a step costs :math:`O(B n^2)` whatever the number of
        edges). ``"implicit"`` uses :math:`\bar A x = (1^T x) 1 - x - A x`
        with a sparse :math:`A`: on NumPy one fused Numba kernel per step (a
        sparse-dense product with the ``n x B`` batch, the gradient, the
        momentum and the projection), :math:`O(B |E|)`, and no ``n x n``
        matrix; the run time then grows with the edges, which gives up the
        paper's "time depends only on the nodes" in exchange for far less
        time and memory on sparse graphs. On other array namespaces (torch,
        CuPy) ``"implicit"`` keeps a dense :math:`A` but never forms
        :math:`\bar A`. ``"auto"`` is ``"dense"`` for graphs with at most 2000
        nodes and edge density at least 5%, else ``"implicit"``.
    dtype : {"float32", "float64", "float16"}, default="float32"
        Floating type of the iterates. The official code uses float16 on GPU;
        on NumPy, float16 needs ``complement="dense"``.
    local_search : bool, default=True
        Polish the result of ``"pcqo"`` or ``"greedy"`` (and a MILP incumbent
        not proven optimal) with the iterated local search. It starts from the
        better of the solver's set and the greedy set, so with it the result
        is never below the greedy. Not applied after ``"chils"``.
    local_search_iter : int or "auto", default="auto"
        Iterations of the ILS (one perturbation and local search each); 0
        runs the local search only (to a solution no (1,2)-swap improves).
        ``"auto"`` is ``max(20 n, 2000)``.
    time_limit : float or None, default=None
        Wall-clock budget in seconds for the whole fit: pCQO stops at its next
        MIS check once it is spent, the ILS at its next chunk (its first
        descent always completes), the MILP at the limit; ``"chils"`` runs
        exactly this long (1 s when None).
    ignore_diagonal : bool, default=False
        If False, self loops (a non-zero diagonal) raise a ``ValueError``; if
        True, the diagonal is dropped (useful for similarity matrices).
    n_jobs : int or None, default=None
        Threads for the pCQO kernels and the MIS check. ``None`` means 1 (the
        products are small and many; several threads on a busy machine are
        much slower), ``-1`` all cores. The ILS is sequential.
    random_state : int, RandomState instance or None, default=None
        Seeds the initializations, restarts, the ILS and CHILS.
    verbose : int, default=0
        Print progress at each MIS check (``"pcqo"``) or HiGHS' log
        (``"milp"``).

    Attributes
    ----------
    independent_set_ : array of shape (n_selected,), dtype int64
        Sorted indices of the selected nodes (for a networkx graph, positions
        in ``list(G.nodes)``). Always a maximal independent set.
    independent_set_labels_ : list
        The selected nodes as labels: for a networkx graph its node labels
        (in ``independent_set_`` order), else the indices as ints.
    mask_ : array of shape (n_nodes,), dtype bool
        The same set as a boolean mask. ``mask_`` and ``independent_set_``
        follow the input's array namespace and device.
    size_ : int
        Number of selected nodes.
    weight_ : float
        Total node weight of the set (``size_`` without ``node_weight``).
    n_iter_ : int
        Gradient steps taken (0 for the other solvers).
    n_local_search_iter_ : int
        ILS iterations run (0 without local search).
    history_ : list of (int, float, float, str)
        ``(iteration, best value so far, seconds since fit started, phase)``
        at each MIS check (phase ``"pcqo"``, iteration = gradient steps) and
        each ILS chunk (phase ``"local_search"``, iteration = ILS
        iterations); one ``"greedy"``, ``"milp"`` or ``"chils"`` entry for the
        other solvers. The value is the size, or the weight with
        ``node_weight``.
    n_maximal_found_ : int
        Number of (point, check) pairs that passed the MIS check (``"pcqo"``).
    used_fallback_ : bool
        True when pCQO found no maximal independent set and its final points
        were rounded greedily (a ``ConvergenceWarning`` is emitted), or when
        the MILP returned no incumbent in time and the greedy set was used.
    optimal_ : bool
        True only when ``solver="milp"`` proved optimality.
    upper_bound_ : float
        Proven upper bound on the optimum (``"milp"``), else NaN.
    gamma_ : float
        The edge penalty used (``"pcqo"``; NaN otherwise).
    learning_rate_ : float
        The step size used (``"pcqo"``; NaN otherwise).
    n_features_in_ : int
        Number of nodes.

    See Also
    --------
    maximum_independent_set : Function form.
    improve_independent_set : The local search alone, from any set.
    is_maximal_independent_set : The MIS check.
    networkx.algorithms.mis.maximal_independent_set : A random maximal set.

    Notes
    -----
    Ours, not the paper's:

    * The iterated local search is not part of pCQO-MIS; it is the
      Andrade-Resende-Werneck ILS (as in KaMIS), our own Numba
      implementation, and it does most of the work on sparse graphs: on this
      machine pCQO alone stays below the min-degree greedy on sparse random,
      regular, planar and SAT graphs (``benchmarks/results/mis.md``).
      ``local_search=False`` gives the paper's method alone. It starts from
      the better of pCQO's set and the greedy set.
    * With weights, the local search adds the (omega,1)-swaps of Nogueira,
      Pinheiro and Subramanian (insert a node, drop its solution neighbours,
      when that gains weight) and takes only the (1,2)-swaps that gain weight;
      a worse solution is kept with probability
      :math:`1 / (1 + \delta \delta^*)` with the losses counted in units of
      the mean weight (exactly ARW's rule without weights).
    * With weights, pCQO uses :math:`c = w / \bar w` (the weights over their
      mean; the optimum does not change) and keeps the heaviest checked set.
    * The defaults differ from the official settings, which are tuned per
      graph family (:data:`PCQO_PRESETS`): ``gamma="auto"`` (the local
      minimizer condition for the sizes at hand, so that maximal sets are
      found on any graph), ``learning_rate="auto"``, ``gamma_prime=1``,
      ``init_std=1``, ``restart_interval=100``, ``batch_size=32`` and
      ``max_iter=300``, measured on this machine (``benchmarks/mis.py``,
      section d): larger batches cost less per initialization but more per
      step; on an Erdos-Renyi graph of 20,000 nodes the first check after
      100 steps found no maximal set and the second did; and more steps did
      not change the size reached after the local search. So pCQO is a
      short phase that feeds the local search.
    * Any positive entry of the adjacency is an edge and its value is
      ignored; negative entries, NaN, asymmetry and self loops raise
      ``ValueError``. A networkx graph is read as structure only (edge
      attributes are ignored); node weights are used only when
      ``node_weight`` asks for them.
    * The dense mode folds the two products with :math:`A` and :math:`\bar A`
      into one with :math:`\gamma A - \gamma' \bar A` (same arithmetic, half
      the cost). The implicit complement is an option the paper does not have.
    * The MIS check is done directly on the binarized points with one sparse
      product (independent and maximal), which is what the paper's
      fixed-point test decides, vectorized over the batch.
    * If no point ever passes the check, each final point is rounded
      greedily (nodes in decreasing order of :math:`x_i`, kept when no kept
      neighbour), the best result is used, ``used_fallback_`` is set and a
      ``ConvergenceWarning`` says so. So ``independent_set_`` is always
      maximal.
    * Float32 by default (the official code runs float16 on GPU, whose
      spacing near 1 is too coarse for steps of order :math:`\eta\gamma`).
    * The random numbers are drawn with NumPy and moved to the device, so all
      array namespaces follow the same trajectory up to rounding.
    * CHILS takes integer weights: integral weights are passed exactly, others
      are scaled and rounded (a relative error below :math:`10^{-12}`).

    References
    ----------
    .. [1] I. Alkhouri, C. Le Denmat, Y. Li, C. Yu, J. Liu, R. Wang and
       A. Velasquez. "Differentiable Quadratic Optimization for the Maximum
       Independent Set Problem" (pCQO-MIS). ICML 2025, PMLR 267.
    .. [2] D. V. Andrade, M. G. C. Resende and R. F. Werneck. "Fast local
       search for the maximum independent set problem". Journal of
       Heuristics 18, 2012.
    .. [3] E. Grossmann, K. Langedal and C. Schulz. "Accelerating Reductions
       Using Graph Neural Networks and a New Concurrent Local Search for the
       Maximum Weight Independent Set Problem" (CHILS). 2024.

    Examples
    --------
    >>> import networkx as nx
    >>> from skalgos.graph import MaximumIndependentSet
    >>> G = nx.petersen_graph()
    >>> mis = MaximumIndependentSet(random_state=0).fit(G)
    >>> mis.size_
    4
    >>> MaximumIndependentSet(solver="milp").fit(G).optimal_
    True
    >>> G = nx.Graph([("a", "b"), ("b", "c")])
    >>> MaximumIndependentSet(random_state=0).fit(G).independent_set_labels_
    ['a', 'c']
    >>> nx.set_node_attributes(G, {"a": 1.0, "b": 5.0, "c": 1.0}, "w")
    >>> MaximumIndependentSet(random_state=0).fit(G, node_weight="w").weight_
    5.0
    """

    _parameter_constraints: dict = {
        "solver": [StrOptions({"pcqo", "greedy", "milp", "chils"})],
        "gamma": [Interval(numbers.Real, 0, None, closed="left"), StrOptions({"auto"})],
        "gamma_prime": [Interval(numbers.Real, 0, None, closed="left")],
        "learning_rate": [
            Interval(numbers.Real, 0, None, closed="neither"),
            StrOptions({"auto"}),
        ],
        "momentum": [Interval(numbers.Real, 0, 1, closed="left")],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "restart_interval": [Interval(numbers.Integral, 1, None, closed="left")],
        "batch_size": [Interval(numbers.Integral, 1, None, closed="left")],
        "init_std": [Interval(numbers.Real, 0, None, closed="left")],
        "init": [StrOptions({"degree", "degree_normalized"}), "array-like"],
        "restart": [StrOptions({"current", "best", "init"})],
        "reset_velocity": ["boolean"],
        "threshold": [Interval(numbers.Real, 0, 1, closed="neither")],
        "complement": [StrOptions({"auto", "dense", "implicit"})],
        "dtype": [StrOptions({"float32", "float64", "float16"})],
        "local_search": ["boolean"],
        "local_search_iter": [
            Interval(numbers.Integral, 0, None, closed="left"),
            StrOptions({"auto"}),
        ],
        "time_limit": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "ignore_diagonal": ["boolean"],
        "n_jobs": [numbers.Integral, None],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        solver="pcqo",
        *,
        gamma="auto",
        gamma_prime=1.0,
        learning_rate="auto",
        momentum=0.9,
        max_iter=300,
        restart_interval=100,
        batch_size=32,
        init_std=1.0,
        init="degree",
        restart="current",
        reset_velocity=False,
        threshold=0.5,
        complement="auto",
        dtype="float32",
        local_search=True,
        local_search_iter="auto",
        time_limit=None,
        ignore_diagonal=False,
        n_jobs=None,
        random_state=None,
        verbose=0,
    ):
        self.solver = solver
        self.gamma = gamma
        self.gamma_prime = gamma_prime
        self.learning_rate = learning_rate
        self.momentum = momentum
        self.max_iter = max_iter
        self.restart_interval = restart_interval
        self.batch_size = batch_size
        self.init_std = init_std
        self.init = init
        self.restart = restart
        self.reset_velocity = reset_velocity
        self.threshold = threshold
        self.complement = complement
        self.dtype = dtype
        self.local_search = local_search
        self.local_search_iter = local_search_iter
        self.time_limit = time_limit
        self.ignore_diagonal = ignore_diagonal
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = True
        tags.input_tags.sparse = True
        tags.input_tags.positive_only = True
        tags.target_tags.required = False
        tags.array_api_support = True
        return tags

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, node_weight=None):
        """Find a large (or heavy) independent set of the graph ``X``.

        Parameters
        ----------
        X : networkx.Graph, scipy sparse matrix or array of shape (n, n)
            Symmetric adjacency; any positive entry is an edge. With
            scikit-learn's ``array_api_dispatch`` on, a torch / CuPy /
            array-API array makes the pCQO iterations run in its namespace
            and on its device.
        y : None
            Ignored.
        node_weight : array-like of shape (n,), str or None, default=None
            Non-negative node weights, for the maximum weight independent set;
            for a networkx graph also the name of a node attribute holding
            them. None: every node counts 1.

        Returns
        -------
        self : MaximumIndependentSet
            The fitted solver.
        """
        from ._kernels import check_masks

        start = time.perf_counter()
        deadline = None if self.time_limit is None else start + self.time_limit
        G = X  # named X for scikit-learn (metadata routing, checks); a graph
        xp_input = None
        if hasattr(G, "shape") and not sp.issparse(G):
            xp_input = get_namespace(G)
        A = _validate_graph(
            G, name="X", ignore_diagonal=self.ignore_diagonal, estimator=self
        )
        n = A.shape[0]
        w = _check_node_weight(node_weight, G, n)
        labels = _node_labels(G)
        rng = check_random_state(self.random_state)
        self.n_features_in_ = n
        self.n_iter_ = 0
        self.n_local_search_iter_ = 0
        self.n_maximal_found_ = 0
        self.used_fallback_ = False
        self.optimal_ = False
        self.upper_bound_ = np.nan
        self.gamma_ = np.nan
        self.learning_rate_ = np.nan
        history = []
        if n == 0:
            self.optimal_ = True
            self.upper_bound_ = 0.0
            self._set_result(np.zeros(0, dtype=np.uint8), w, labels)
            self.history_ = [(0, 0, time.perf_counter() - start, self.solver)]
            self._to_namespace(xp_input, G)
            return self

        greedy = _greedy_mask(A, w)
        polish = self.local_search
        if self.solver == "greedy":
            mask = greedy
            history.append((0, _set_value(mask, w), _since(start), "greedy"))
        elif self.solver == "milp":
            remaining = None if deadline is None else max(deadline - _now(), 1e-3)
            mask, optimal, upper = _solve_milp(A, w, remaining, self.verbose)
            if mask is None or not check_masks(A.indptr, A.indices, mask[None])[0][0]:
                self.used_fallback_ = True
                mask = greedy
            self.optimal_ = bool(optimal) and not self.used_fallback_
            self.upper_bound_ = upper
            mask = _extend_to_maximal(A, mask)
            history.append((0, _set_value(mask, w), _since(start), "milp"))
            polish = polish and not self.optimal_
        elif self.solver == "chils":
            mask, _ = _solve_chils(A, w, self.time_limit, rng)
            mask = _extend_to_maximal(A, mask)
            history.append((0, _set_value(mask, w), _since(start), "chils"))
            polish = False
        else:
            from ..utils._backend import effective_n_threads, numba_threads

            n_threads = 1 if self.n_jobs is None else effective_n_threads(self.n_jobs)
            with _blas_controller().limit(limits=n_threads, user_api="blas"):
                with numba_threads(n_threads):
                    mask = self._fit_pcqo(
                        A, w, greedy, xp_input, G, start, deadline, rng, history
                    )
        if polish:
            from ._local_search import run_local_search

            if _set_value(greedy, w) > _set_value(mask, w):
                mask = greedy
            mask, self.n_local_search_iter_ = run_local_search(
                A,
                mask,
                w,
                max_iter=self._local_search_budget(n),
                deadline=deadline,
                random_state=rng,
                start=start,
                history=history,
            )
        self.history_ = history
        self._set_result(mask, w, labels)
        self._to_namespace(xp_input, G)
        return self

    def _local_search_budget(self, n):
        if self.local_search_iter == "auto":
            return max(_AUTO_LS_ITER_PER_NODE * n, _AUTO_LS_ITER_MIN)
        return int(self.local_search_iter)

    def _to_namespace(self, xp, G):
        """Fitted arrays follow the input's namespace and device."""
        if xp is None or is_numpy_namespace(xp):
            return
        dev = device(G)
        self.mask_ = to_device(self.mask_, dev, xp=xp)
        self.independent_set_ = to_device(self.independent_set_, dev, xp=xp)

    def _set_result(self, mask, w, labels):
        self.mask_ = np.asarray(mask, dtype=bool)
        self.independent_set_ = np.flatnonzero(self.mask_).astype(np.int64)
        self.size_ = int(self.independent_set_.size)
        self.weight_ = (
            float(self.size_) if w is None else float(w[self.independent_set_].sum())
        )
        if labels is None:
            self.independent_set_labels_ = self.independent_set_.tolist()
        else:
            self.independent_set_labels_ = [labels[i] for i in self.independent_set_]

    def _fit_pcqo(self, A, w, greedy, xp_input, G, start, deadline, rng, history):
        from ._kernels import (
            check_masks,
            pcqo_gradient,
            pcqo_sparse_steps,
            pcqo_step,
            priority_greedy,
        )

        n = A.shape[0]
        deg = np.diff(A.indptr).astype(np.float64)
        n_edges = A.nnz // 2
        if w is None:
            c = np.ones(n)
        else:
            positive = w[w > 0]
            c = w / positive.mean() if positive.size else np.zeros(n)

        gamma_prime = float(self.gamma_prime)
        if isinstance(self.gamma, str):  # "auto"
            s_est = 1.2 * int(greedy.sum())
            gamma = 1.2 * (float(c.max()) + gamma_prime * max(s_est - 1.0, 0.0))
            gamma = max(gamma, 1e-12)
        else:
            gamma = float(self.gamma)
        gamma = float(gamma)  # Python floats: array-api-strict refuses NumPy scalars
        self.gamma_ = gamma
        if isinstance(self.learning_rate, str):  # "auto"
            lr = _AUTO_LR_TIMES_GAMMA / gamma
        else:
            lr = float(self.learning_rate)
        lr = float(lr)
        self.learning_rate_ = lr

        if isinstance(self.init, str):
            dmax = deg.max()
            mu = 1.0 - deg / dmax if dmax > 0 else np.ones(n)
            if self.init == "degree_normalized" and mu.max() > 0:
                mu = mu / mu.max()
        else:
            mu = np.asarray(self.init, dtype=np.float64).reshape(-1)
            if mu.shape != (n,) or not np.all(np.isfinite(mu)):
                raise ValueError(
                    f"init must be 'degree', 'degree_normalized' or a finite array of "
                    f"one value per node ({n}); got shape {mu.shape}."
                )

        on_numpy = xp_input is None or is_numpy_namespace(xp_input)
        xp = get_namespace(np.empty(0)) if on_numpy else xp_input
        dev = "cpu" if on_numpy else device(G)
        dtype = getattr(xp, self.dtype, None)
        if dtype is None:
            raise ValueError(
                f"dtype={self.dtype!r} is not available in the array namespace of X "
                f"({xp.__name__}); use dtype='float32' or 'float64'."
            )
        mode = self.complement
        if mode == "auto":
            density = 2.0 * n_edges / max(n * (n - 1), 1)
            dense_ok = n <= _AUTO_DENSE_MAX_NODES and density >= _AUTO_DENSE_MIN_DENSITY
            mode = "dense" if dense_ok else "implicit"
        self.complement_ = mode
        # the fused kernel: NumPy, sparse A, batch as an n x B matrix
        fused = on_numpy and mode == "implicit"
        if fused and self.dtype == "float16":
            raise ValueError(
                "dtype='float16' on NumPy needs complement='dense' (the sparse "
                "kernel runs in float32 or float64); use dtype='float32'."
            )

        def put(a):
            a = np.asarray(a, dtype=self.dtype)
            return a if on_numpy else to_device(a, dev, xp=xp)

        ops = {}
        if mode == "dense":
            Ad = A.toarray()
            W = (gamma + gamma_prime) * Ad - gamma_prime
            np.fill_diagonal(W, 0.0)
            ops["W"] = put(W)
            del Ad, W
        elif not on_numpy:
            ops["A"] = put(A.toarray())
        c_dev = None if fused else put(c[None, :])

        B = self.batch_size
        T = self.restart_interval
        mom, sigma = float(self.momentum), float(self.init_std)

        def sample(centre):
            # the same random numbers for every layout and namespace
            R = sigma * rng.standard_normal((B, n))
            if fused:
                return np.ascontiguousarray((centre + R).T, dtype=self.dtype)
            return put(centre + R)

        X = sample(mu[None, :])
        if fused:
            V = np.zeros((n, B), dtype=self.dtype)
            scratch = np.empty((n, B), dtype=self.dtype)
        else:
            V = xp.zeros((B, n), dtype=dtype, **({} if on_numpy else {"device": dev}))

        best_mask, best_value = None, -np.inf
        it = 0
        while it < self.max_iter:
            steps = min(T, self.max_iter - it)
            if fused:
                out = pcqo_sparse_steps(
                    A.indptr, A.indices, c, X, V, scratch, steps, gamma,
                    gamma_prime, lr, mom,
                )  # fmt: skip
                if out is not X:
                    X, scratch = out, X
                M = np.ascontiguousarray((X > self.threshold).T).view(np.uint8)
            else:
                for _ in range(steps):
                    grad = pcqo_gradient(X, gamma, gamma_prime, c=c_dev, xp=xp, **ops)
                    X, V = pcqo_step(X, V, grad, lr, mom, xp=xp)
                M = to_numpy(X > self.threshold).astype(np.uint8)
            it += steps
            _, maximal = check_masks(A.indptr, A.indices, M)
            self.n_maximal_found_ += int(maximal.sum())
            if maximal.any():
                values = M.astype(np.float64) @ (np.ones(n) if w is None else w)
                values = np.where(maximal, values, -np.inf)
                b = int(np.argmax(values))
                if values[b] > best_value:
                    best_value, best_mask = float(values[b]), M[b].copy()
            elapsed = _since(start)
            shown = 0 if best_mask is None else _set_value(best_mask, w)
            history.append((it, shown, elapsed, "pcqo"))
            if self.verbose:
                print(
                    f"[pCQO] step {it}/{self.max_iter}: {int(maximal.sum())}/{B} "
                    f"maximal, best {shown}, {elapsed:.2f} s"
                )
            if it >= self.max_iter or (
                deadline is not None and time.perf_counter() >= deadline
            ):
                break
            if self.restart == "current":
                centre = to_numpy(X).T if fused else None
            elif self.restart == "best" and best_mask is not None:
                centre = best_mask[None, :].astype(np.float64)
            else:
                centre = mu[None, :]
            if centre is None:  # around the current points, in their namespace
                X = X + put(sigma * rng.standard_normal((B, n)))
            else:
                X = sample(centre)
            if self.reset_velocity:
                V = V * 0.0
        self.n_iter_ = it
        if best_mask is None:
            # nothing passed the check: greedy rounding of the final points
            self.used_fallback_ = True
            Xn = to_numpy(X).astype(np.float64)
            if fused:
                Xn = Xn.T
            orders = np.lexsort((np.broadcast_to(deg, Xn.shape), -Xn), axis=1)
            masks = priority_greedy(A.indptr, A.indices, orders)
            values = masks.astype(np.float64) @ (np.ones(n) if w is None else w)
            best_mask = masks[int(np.argmax(values))]
            history[-1] = (it, _set_value(best_mask, w), history[-1][2], "pcqo")
            warnings.warn(
                f"pCQO found no maximal independent set in {it} steps (no batch "
                "point passed the MIS check); its final points were rounded "
                "greedily. Raise max_iter or restart_interval, or use "
                "gamma='auto' and learning_rate='auto'.",
                ConvergenceWarning,
                stacklevel=4,  # the caller of fit (past sklearn's wrapper)
            )
        return best_mask


def _since(start):
    return time.perf_counter() - start


def _now():
    return time.perf_counter()


def _greedy_mask(A, w):
    """Min-degree greedy (unweighted) or GWMIN (weighted), as a 0/1 mask."""
    from ._kernels import greedy_min_degree, greedy_weighted

    n = A.shape[0]
    mask = np.zeros(n, dtype=np.uint8)
    if w is None:
        mask[greedy_min_degree(A.indptr, A.indices)] = 1
    else:
        mask[greedy_weighted(A.indptr, A.indices, w)] = 1
    return mask


def _extend_to_maximal(A, mask):
    """Add nodes (lowest degree first) to an independent ``mask`` until maximal."""
    from ._kernels import priority_greedy

    deg = np.diff(A.indptr)
    order = np.lexsort((deg, 1 - mask.astype(np.int64)))
    return priority_greedy(A.indptr, A.indices, order[None, :])[0]


def maximum_independent_set(
    G, *, solver="pcqo", node_weight=None, random_state=None, **params
):
    """Sorted node indices of a large (or heavy) independent set of ``G``.

    Function form of :class:`MaximumIndependentSet`; ``params`` are its
    parameters.

    Parameters
    ----------
    G : networkx.Graph, scipy sparse matrix or array-like of shape (n, n)
        The graph; any positive entry is an edge.
    solver : {"pcqo", "greedy", "milp", "chils"}, default="pcqo"
        See :class:`MaximumIndependentSet`.
    node_weight : array-like of shape (n,), str or None, default=None
        Node weights (or, for a networkx graph, a node attribute name).
    random_state : int, RandomState instance or None, default=None
        Seed.
    **params
        Other parameters of :class:`MaximumIndependentSet`.

    Returns
    -------
    nodes : ndarray of int64
        Sorted indices of a maximal independent set.

    Examples
    --------
    >>> import networkx as nx
    >>> from skalgos.graph import maximum_independent_set
    >>> nodes = maximum_independent_set(nx.cycle_graph(6), solver="milp")
    >>> len(nodes)
    3
    """
    est = MaximumIndependentSet(solver=solver, random_state=random_state, **params)
    return est.fit(G, node_weight=node_weight).independent_set_


def improve_independent_set(
    G, nodes, *, node_weight=None, max_iter="auto", time_limit=None, random_state=None
):
    """Improve an independent set with the Andrade-Resende-Werneck ILS.

    The set is first made maximal and locally optimal ((1,2)-swaps: drop one
    node, insert two; with weights also (omega,1)-swaps), then ``max_iter``
    iterations of the iterated local search perturb and re-optimize it. The
    result is never worse than the input.

    Parameters
    ----------
    G : networkx.Graph, scipy sparse matrix or array-like of shape (n, n)
        The graph; any positive entry is an edge.
    nodes : array-like of int, or boolean array of shape (n,)
        An independent set, as node indices (positions in ``list(G.nodes)``
        for a networkx graph) or a mask.
    node_weight : array-like of shape (n,), str or None, default=None
        Node weights (or, for a networkx graph, a node attribute name).
    max_iter : int or "auto", default="auto"
        ILS iterations; 0 runs the local search only; ``"auto"`` is
        ``max(20 n, 2000)``.
    time_limit : float or None, default=None
        Seconds after which no new chunk of iterations starts.
    random_state : int, RandomState instance or None, default=None
        Seed.

    Returns
    -------
    nodes : ndarray of int64
        Sorted indices of the improved, maximal independent set.

    Examples
    --------
    >>> import networkx as nx
    >>> from skalgos.graph import improve_independent_set
    >>> improve_independent_set(nx.path_graph(5), [1, 3], random_state=0)
    array([0, 2, 4])
    """
    from ._kernels import check_masks
    from ._local_search import run_local_search

    A = _validate_graph(G)
    n = A.shape[0]
    w = _check_node_weight(node_weight, G, n)
    mask = _as_mask(nodes, n)
    if not check_masks(A.indptr, A.indices, mask[None])[0][0]:
        raise ValueError(
            "nodes must be an independent set of G (two of them are adjacent); "
            "check it with is_independent_set."
        )
    if isinstance(max_iter, str):
        if max_iter != "auto":
            raise ValueError(
                f"max_iter must be an int >= 0 or 'auto'; got {max_iter!r}."
            )
        max_iter = max(_AUTO_LS_ITER_PER_NODE * n, _AUTO_LS_ITER_MIN)
    elif not isinstance(max_iter, numbers.Integral) or max_iter < 0:
        raise ValueError(f"max_iter must be an int >= 0 or 'auto'; got {max_iter!r}.")
    if time_limit is not None and not time_limit > 0:
        raise ValueError(f"time_limit must be positive or None; got {time_limit!r}.")
    start = time.perf_counter()
    best, _ = run_local_search(
        A,
        mask,
        w,
        max_iter=int(max_iter),
        deadline=None if time_limit is None else start + time_limit,
        random_state=check_random_state(random_state),
        start=start,
    )
    return np.flatnonzero(best).astype(np.int64)
