"""Maximum independent set: pCQO-MIS, the min-degree greedy and an exact MILP."""

import numbers
import time

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_array, check_non_negative, validate_data

from ..utils._backend import (
    device,
    get_namespace,
    is_numpy_namespace,
    to_device,
    to_numpy,
)
from ..utils.validation import check_adjacency

__all__ = [
    "PCQO_PRESETS",
    "MaximumIndependentSet",
    "is_independent_set",
    "is_maximal_independent_set",
    "maximum_independent_set",
]

#: Parameter settings shipped with the official pCQO-MIS code.
#:
#: ``"er"`` was tuned for Erdos-Renyi graphs with 700-800 nodes and p = 0.15
#: (225,000 steps, a check every 450); ``"satlib"`` for the SATLIB graphs
#: (about 1,200 nodes, 7,500 steps, a check every 30). Use them as
#: ``MaximumIndependentSet(**PCQO_PRESETS["satlib"])``.
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


def _solve_milp(A, time_limit, verbose):
    from scipy.optimize import Bounds, LinearConstraint, milp

    n = A.shape[0]
    cliques = _clique_cover(A)
    c = -np.ones(n)
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
        upper = float(np.round(-res.fun))
    mask = None if res.x is None else (res.x > 0.5).astype(np.uint8)
    return mask, optimal, upper


class MaximumIndependentSet(BaseEstimator):
    r"""Maximum independent set by pCQO-MIS, min-degree greedy or exact MILP.

    ``fit(X)`` finds a large set of pairwise non-adjacent nodes of the graph
    ``X`` (an adjacency matrix or a networkx graph). The default solver is
    pCQO-MIS [1]_: projected momentum gradient descent on the clique-informed quadratic relaxation

    .. math::

        f(x) = -\sum_i x_i + \frac{\gamma}{2} x^T A x
               - \frac{\gamma'}{2} x^T \bar A x, \qquad x \in [0, 1]^n,

    where :math:`\bar A = 11^T - I - A` is the complement graph's adjacency,
    run from ``batch_size`` initializations in parallel. Every
    ``restart_interval`` steps each point is binarized (``x > threshold``) and
    checked; the largest maximal independent set seen is kept, and every point
    is re-sampled around its current position (or the best set, or the
    initial mean: ``restart``).

    Parameters
    ----------
    solver : {"pcqo", "greedy", "milp"}, default="pcqo"
        ``"pcqo"``: the paper's method. ``"greedy"``: repeatedly take a node
        of minimum degree in the remaining graph and delete it and its
        neighbours (the classic strong baseline). ``"milp"``: exact, with
        :func:`scipy.optimize.milp` (HiGHS) on a clique-cover formulation;
        ``optimal_`` says whether optimality was proven within ``time_limit``.
    gamma : float or "auto", default=350.0
        Edge penalty :math:`\gamma`. The default is the official ER setting.
        ``"auto"`` sets :math:`\gamma = 1.2\,(1 + \gamma' (\hat s - 1))` with
        :math:`\hat s` 1.2 times the greedy set size, so that maximal
        independent sets up to that size are strict local minimizers.
    gamma_prime : float, default=7.0
        Clique (complement) reward :math:`\gamma'`; 0 gives the older
        two-term objective.
    learning_rate : float, default=9e-6
        Step size :math:`\eta`.
    momentum : float, default=0.9
        Heavy-ball momentum :math:`m` (``V <- m V + eta grad``).
    max_iter : int, default=4500
        Number of gradient steps (10 restart periods at the default interval).
        The official ER setting uses 225,000 (``PCQO_PRESETS["er"]``).
    restart_interval : int, default=450
        Steps between two MIS checks, :math:`T`; a restart follows each check.
    batch_size : int, default=256
        Number of parallel initializations :math:`B`.
    init_std : float, default=2.25
        Standard deviation :math:`\sigma` of the Gaussian initializations and
        restarts.
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
        with a sparse :math:`A` (NumPy) so a step costs :math:`O(B |E|)` and
        no ``n x n`` matrix exists; the run time then grows with the edges,
        which gives up the paper's "time depends only on the nodes" property
        in exchange for far less time and memory on sparse graphs. On other
        array namespaces (torch, CuPy) ``"implicit"`` keeps a dense :math:`A`
        but never forms :math:`\bar A`. ``"auto"`` is ``"dense"`` for graphs
        with at most 2000 nodes and edge density at least 5%, else
        ``"implicit"``.
    dtype : {"float32", "float64", "float16"}, default="float32"
        Floating type of the iterates. The official code uses float16 on GPU.
    time_limit : float or None, default=None
        Wall-clock budget in seconds for ``"pcqo"`` (checked at each MIS
        check) and ``"milp"``.
    ignore_diagonal : bool, default=False
        If False, self loops (a non-zero diagonal) raise a ``ValueError``; if
        True, the diagonal is dropped (useful for similarity matrices).
    n_jobs : int or None, default=None
        Threads for the NumPy matrix products (BLAS) and the Numba MIS check.
        ``None`` means 1 (the products are small and many; several BLAS
        threads on a busy machine are much slower), ``-1`` all cores.
    random_state : int, RandomState instance or None, default=None
        Seeds the initializations and restarts.
    verbose : int, default=0
        Print progress at each MIS check (``"pcqo"``) or HiGHS' log
        (``"milp"``).

    Attributes
    ----------
    independent_set_ : array of shape (n_selected,), dtype int64
        Sorted indices of the selected nodes (for a networkx graph, positions
        in ``list(G.nodes)``). Always a maximal independent set.
    mask_ : array of shape (n_nodes,), dtype bool
        The same set as a boolean mask. Both follow the input's array
        namespace and device.
    size_ : int
        Number of selected nodes.
    n_iter_ : int
        Gradient steps taken (0 for ``"greedy"`` and ``"milp"``).
    history_ : list of (int, int, float)
        ``(steps, best size so far, seconds since fit started)`` at each MIS
        check (one entry for ``"greedy"`` and ``"milp"``).
    n_maximal_found_ : int
        Number of (point, check) pairs that passed the MIS check (``"pcqo"``).
    used_fallback_ : bool
        True when pCQO found no maximal independent set and the result was
        obtained by greedy rounding of its final points, or when the MILP
        returned no incumbent in time and the greedy result is reported.
    optimal_ : bool
        True only when ``solver="milp"`` proved optimality.
    upper_bound_ : float
        Proven upper bound on the independence number (``"milp"``), else NaN.
    n_features_in_ : int
        Number of nodes.

    See Also
    --------
    maximum_independent_set : Function form.
    is_maximal_independent_set : The MIS check.
    networkx.algorithms.mis.maximal_independent_set : A random maximal set.

    Notes
    -----
    Ours, not the paper's:

    * Any positive entry of the adjacency is an edge and its value is
      ignored (MIS is unweighted); negative entries, NaN, asymmetry and self
      loops raise ``ValueError``.
    * The dense mode folds the two products with :math:`A` and :math:`\bar A`
      into one with :math:`\gamma A - \gamma' \bar A` (same arithmetic, half
      the cost). The implicit complement is an option the paper does not have.
    * The MIS check is done directly on the binarized points with one sparse
      product (independent and maximal), which is what the paper's
      fixed-point test decides, vectorized over the batch.
    * If no point ever passes the check (too few steps or badly tuned
      parameters), each final point is rounded greedily (nodes in decreasing
      order of :math:`x_i`, kept when no kept neighbour) and the largest
      result is returned, with ``used_fallback_ = True``. So
      ``independent_set_`` is always maximal.
    * ``max_iter`` defaults to 4500 instead of the ER setting's 225,000, to
      suit CPUs; the shipped settings are in :data:`PCQO_PRESETS`.
    * Float32 by default (the official code runs float16 on GPU, whose
      spacing near 1 is too coarse for steps of order
      :math:`\eta\gamma`).
    * The random numbers are drawn with NumPy and moved to the device, so all
      array namespaces follow the same trajectory up to rounding.
    * ``independent_set_`` and ``mask_`` are computed on the host and then
      moved to the input's array namespace and device.
    * ``gamma="auto"`` (:math:`\gamma = 1.2 (1 + \gamma' (\hat s - 1))`
      with :math:`\hat s` 1.2 times the greedy set size) is ours: it
      enforces the local-minimizer condition below; the paper tunes
      :math:`\gamma` per graph family.

    The tuning is graph-family specific (the paper tunes per family); the
    local-minimizer condition :math:`\gamma > 1 + \gamma'(|S| - 1)` for the
    sets of interest is the first thing to satisfy (``gamma="auto"``).

    References
    ----------
    .. [1] I. Alkhouri, C. Le Denmat, Y. Li, C. Yu, J. Liu, R. Wang and
       A. Velasquez. "Differentiable Quadratic Optimization for the Maximum
       Independent Set Problem" (pCQO-MIS). ICML 2025, PMLR 267.

    Examples
    --------
    >>> import networkx as nx
    >>> from skalgos.graph import MaximumIndependentSet
    >>> G = nx.petersen_graph()
    >>> mis = MaximumIndependentSet(batch_size=16, max_iter=900,
    ...                             random_state=0).fit(G)
    >>> mis.size_
    4
    >>> MaximumIndependentSet(solver="milp").fit(G).optimal_
    True
    """

    _parameter_constraints: dict = {
        "solver": [StrOptions({"pcqo", "greedy", "milp"})],
        "gamma": [Interval(numbers.Real, 0, None, closed="left"), StrOptions({"auto"})],
        "gamma_prime": [Interval(numbers.Real, 0, None, closed="left")],
        "learning_rate": [Interval(numbers.Real, 0, None, closed="neither")],
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
        gamma=350.0,
        gamma_prime=7.0,
        learning_rate=9e-6,
        momentum=0.9,
        max_iter=4500,
        restart_interval=450,
        batch_size=256,
        init_std=2.25,
        init="degree",
        restart="current",
        reset_velocity=False,
        threshold=0.5,
        complement="auto",
        dtype="float32",
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
    def fit(self, X, y=None):
        """Find a large independent set of the graph ``X``.

        Parameters
        ----------
        X : networkx.Graph, scipy sparse matrix or array of shape (n, n)
            Symmetric adjacency; any positive entry is an edge. With
            scikit-learn's ``array_api_dispatch`` on, a torch / CuPy /
            array-API array makes the pCQO iterations run in its namespace
            and on its device.
        y : None
            Ignored.

        Returns
        -------
        self : MaximumIndependentSet
            The fitted solver.
        """
        from ._kernels import check_masks, greedy_min_degree

        start = time.perf_counter()
        G = X  # named X for scikit-learn (metadata routing, checks); a graph
        xp_input = None
        if hasattr(G, "shape") and not sp.issparse(G):
            xp_input = get_namespace(G)
        A = _validate_graph(
            G, name="X", ignore_diagonal=self.ignore_diagonal, estimator=self
        )
        n = A.shape[0]
        self.n_features_in_ = n
        self.n_iter_ = 0
        self.n_maximal_found_ = 0
        self.used_fallback_ = False
        self.optimal_ = False
        self.upper_bound_ = np.nan
        if n == 0:
            self.optimal_ = True
            self.upper_bound_ = 0.0
            self._set_result(np.zeros(0, dtype=np.uint8))
            self.history_ = [(0, 0, time.perf_counter() - start)]
            self._to_namespace(xp_input, G)
            return self

        if self.solver == "greedy":
            mask = np.zeros(n, dtype=np.uint8)
            mask[greedy_min_degree(A.indptr, A.indices)] = 1
            self._set_result(mask)
        elif self.solver == "milp":
            mask, optimal, upper = _solve_milp(A, self.time_limit, self.verbose)
            if mask is None or not check_masks(A.indptr, A.indices, mask[None])[0][0]:
                self.used_fallback_ = True
                mask = np.zeros(n, dtype=np.uint8)
                mask[greedy_min_degree(A.indptr, A.indices)] = 1
            self.optimal_ = bool(optimal) and not self.used_fallback_
            self.upper_bound_ = upper
            self._set_result(_extend_to_maximal(A, mask))
        else:
            from ..utils._backend import effective_n_threads, numba_threads

            n_threads = 1 if self.n_jobs is None else effective_n_threads(self.n_jobs)
            with _blas_controller().limit(limits=n_threads, user_api="blas"):
                with numba_threads(n_threads):
                    self._fit_pcqo(A, xp_input, G, start)
            self._to_namespace(xp_input, G)
            return self
        self.history_ = [(0, self.size_, time.perf_counter() - start)]
        self._to_namespace(xp_input, G)
        return self

    def _to_namespace(self, xp, G):
        """Fitted arrays follow the input's namespace and device."""
        if xp is None or is_numpy_namespace(xp):
            return
        dev = device(G)
        self.mask_ = to_device(self.mask_, dev, xp=xp)
        self.independent_set_ = to_device(self.independent_set_, dev, xp=xp)

    def _set_result(self, mask):
        self.mask_ = np.asarray(mask, dtype=bool)
        self.independent_set_ = np.flatnonzero(self.mask_).astype(np.int64)
        self.size_ = int(self.independent_set_.size)

    def _fit_pcqo(self, A, xp_input, G, start):
        from ._kernels import (
            check_masks,
            greedy_min_degree,
            pcqo_gradient,
            pcqo_step,
            priority_greedy,
        )

        n = A.shape[0]
        rng = check_random_state(self.random_state)
        deg = np.diff(A.indptr).astype(np.float64)
        n_edges = A.nnz // 2

        gamma_prime = float(self.gamma_prime)
        if isinstance(self.gamma, str):  # "auto"
            s_est = 1.2 * greedy_min_degree(A.indptr, A.indices).size
            gamma = 1.2 * (1.0 + gamma_prime * max(s_est - 1.0, 0.0))
            gamma = max(gamma, 1.2)
        else:
            gamma = float(self.gamma)
        self.gamma_ = gamma

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
        elif on_numpy:
            ops["A_sparse"] = A.astype(self.dtype)
        else:
            ops["A"] = put(A.toarray())

        B = self.batch_size
        T = self.restart_interval
        lr, mom, sigma = float(self.learning_rate), float(self.momentum), self.init_std
        X = put(mu[None, :] + sigma * rng.standard_normal((B, n)))
        V = xp.zeros((B, n), dtype=dtype, **({} if on_numpy else {"device": dev}))

        best_mask, best_size = None, -1
        history = []
        it = 0
        while it < self.max_iter:
            for _ in range(min(T, self.max_iter - it)):
                grad = pcqo_gradient(X, gamma, gamma_prime, xp=xp, **ops)
                X, V = pcqo_step(X, V, grad, lr, mom, xp=xp)
            it = min(it + T, self.max_iter)
            M = to_numpy(X > self.threshold).astype(np.uint8)
            _, maximal = check_masks(A.indptr, A.indices, M)
            self.n_maximal_found_ += int(maximal.sum())
            if maximal.any():
                sizes = np.where(maximal, M.sum(axis=1, dtype=np.int64), -1)
                b = int(np.argmax(sizes))
                if sizes[b] > best_size:
                    best_size, best_mask = int(sizes[b]), M[b].copy()
            elapsed = time.perf_counter() - start
            history.append((it, max(best_size, 0), elapsed))
            if self.verbose:
                print(
                    f"[pCQO] step {it}/{self.max_iter}: {int(maximal.sum())}/{B} "
                    f"maximal, best size {max(best_size, 0)}, {elapsed:.2f} s"
                )
            if it >= self.max_iter or (
                self.time_limit is not None and elapsed >= self.time_limit
            ):
                break
            if self.restart == "current":
                centre = X
            elif self.restart == "best" and best_mask is not None:
                centre = put(best_mask[None, :])
            else:
                centre = put(mu[None, :])
            X = centre + put(sigma * rng.standard_normal((B, n)))
            if self.reset_velocity:
                V = V * 0.0
        self.n_iter_ = it
        if best_mask is None:
            # nothing passed the check: greedy rounding of the final points
            self.used_fallback_ = True
            Xn = to_numpy(X).astype(np.float64)
            orders = np.lexsort((np.broadcast_to(deg, Xn.shape), -Xn), axis=1)
            masks = priority_greedy(A.indptr, A.indices, orders)
            best_mask = masks[int(np.argmax(masks.sum(axis=1)))]
            history[-1] = (it, int(best_mask.sum()), history[-1][2])
        self.history_ = history
        self._set_result(best_mask)


def _extend_to_maximal(A, mask):
    """Add nodes (lowest degree first) to an independent ``mask`` until maximal."""
    from ._kernels import priority_greedy

    deg = np.diff(A.indptr)
    order = np.lexsort((deg, 1 - mask.astype(np.int64)))
    return priority_greedy(A.indptr, A.indices, order[None, :])[0]


def maximum_independent_set(G, *, solver="pcqo", random_state=None, **params):
    """Sorted node indices of a large independent set of ``G``.

    Function form of :class:`MaximumIndependentSet`; ``params`` are its
    parameters.

    Parameters
    ----------
    G : networkx.Graph, scipy sparse matrix or array-like of shape (n, n)
        The graph; any positive entry is an edge.
    solver : {"pcqo", "greedy", "milp"}, default="pcqo"
        See :class:`MaximumIndependentSet`.
    random_state : int, RandomState instance or None, default=None
        Seed for ``"pcqo"``.
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
    return est.fit(G).independent_set_
