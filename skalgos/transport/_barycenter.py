"""Procrustes-Wasserstein barycenter of a list of point clouds."""

import numbers

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin, _fit_context
from sklearn.utils import check_random_state, metadata_routing
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ._common import check_pw_init, preprocess, pw_sq, unit_scale, w_sq
from ._pw import INITS, check_ot_solver
from ._validation import validate_clouds

__all__ = ["PWBarycenter", "pw_barycenter"]


def _initial_support(clouds, n_support, support_init, rng):
    d = clouds[0].shape[1]
    if isinstance(support_init, str):
        if support_init == "gaussian":
            # N(0, s^2 I) with s the clouds' RMS coordinate spread (the paper
            # draws N(0, I) on clouds scaled to unit radius)
            s = np.sqrt(np.mean([np.mean(c**2) for c in clouds]))
            return rng.normal(scale=s if s > 0 else 1.0, size=(n_support, d))
        # "first": points of the first cloud, all of them once if possible
        first = clouds[0]
        n = first.shape[0]
        if n_support <= n:
            idx = rng.choice(n, n_support, replace=False)
        else:
            idx = np.concatenate([np.arange(n), rng.choice(n, n_support - n)])
        return first[idx].copy()
    X0 = np.array(support_init, dtype=float, copy=True)
    if X0.ndim != 2 or X0.shape[1] != d:
        raise ValueError(
            f"support_init must be 'gaussian', 'first' or an array of shape "
            f"(n_support, {d}); got shape {X0.shape}."
        )
    if not np.all(np.isfinite(X0)):
        raise ValueError("support_init contains NaN or infinite values.")
    return X0


def _cloud_weights(cloud_weights, n):
    if cloud_weights is None:
        return np.full(n, 1.0 / n)
    lam = np.array(cloud_weights, dtype=float, copy=True)
    if lam.shape != (n,):
        raise ValueError(f"cloud_weights must have shape ({n},); got {lam.shape}.")
    if not np.all(np.isfinite(lam)) or np.any(lam < 0):
        raise ValueError("cloud_weights must be finite and non-negative.")
    if not np.isclose(lam.sum(), 1.0, rtol=0, atol=1e-8):
        raise ValueError(
            f"cloud_weights must sum to one; got {lam.sum():.6g}. Normalize with "
            "cloud_weights / cloud_weights.sum()."
        )
    return lam


def _support_weights(support_weights, k):
    if support_weights is None:
        return np.full(k, 1.0 / k)
    b = np.array(support_weights, dtype=float, copy=True)
    if b.shape != (k,):
        raise ValueError(f"support_weights must have shape ({k},); got {b.shape}.")
    if not np.all(np.isfinite(b)) or np.any(b <= 0):
        raise ValueError("support_weights must be finite and positive.")
    if not np.isclose(b.sum(), 1.0, rtol=0, atol=1e-8):
        raise ValueError(f"support_weights must sum to one; got {b.sum():.6g}.")
    return b


def _fit_barycenter(
    clouds,
    weights,
    lam,
    X0,
    b,
    *,
    metric,
    init,
    max_iter,
    tol,
    inner_max_iter,
    inner_tol,
    allow_reflection,
    ot_solver,
    reg,
    store_plans,
    verbose,
    unit=1.0,
):
    """The fixed-point / block-coordinate descent on preprocessed NumPy clouds.

    ``unit``: the clouds were divided by it (verbose prints data units).
    """
    import ot

    check_ot_solver(ot_solver)
    d = X0.shape[1]
    X = X0.copy()
    rotations = [np.eye(d) for _ in clouds]
    history = []
    pw_kw = dict(
        allow_reflection=allow_reflection,
        max_iter=inner_max_iter,
        tol=inner_tol,
        ot_solver=ot_solver,
        reg=reg,
    )

    def solve(i, X, it):
        Y, a = clouds[i], weights[i]
        if metric == "w":
            if ot_solver == "emd":  # exactly POT's free_support_barycenter step
                G = ot.emd(b, a, ot.dist(X, Y))
                return float((G * ot.dist(X, Y)).sum()), np.eye(d), G
            return w_sq(X, Y, b, a, ot_solver=ot_solver, reg=reg)
        # Besides the per-iteration init (the paper recomputes it every outer
        # iteration), the previous rotation is also tried (ours).
        extra = [("previous", rotations[i])] if it > 0 else []
        return pw_sq(X, Y, b, a, init, extra_inits=extra, **pw_kw)

    n_iter = 0
    for it in range(max_iter):
        X_new = np.zeros_like(X)
        for i, (Y, li) in enumerate(zip(clouds, lam)):
            _, P, G = solve(i, X, it)
            rotations[i] = P
            X_new += li * (G @ (Y @ P)) / b[:, None]
        disp = float(((X_new - X) ** 2).sum())
        history.append(disp)
        X = X_new
        n_iter = it + 1
        if verbose:
            shown = disp * unit * unit
            print(f"PWBarycenter: iteration {n_iter}, displacement {shown:.3e}")
        if disp <= tol:
            break
    # one more pass at the final support: the inertia, rotations and plans
    # that belong to the returned barycenter
    inertia, plans = 0.0, []
    for i, li in enumerate(lam):
        val, P, G = solve(i, X, n_iter)
        rotations[i] = P
        inertia += li * val
        plans.append(G)
    if metric == "pw":
        # the barycenter is an O(d) class; report it in the first cloud's frame
        R = rotations[0]
        X = X @ R.T
        rotations = [P @ R.T for P in rotations]
    return X, rotations, (plans if store_plans else None), inertia, n_iter, history


def pw_barycenter(
    X,
    *,
    n_support=256,
    cloud_weights=None,
    atom_weights=None,
    support_weights=None,
    support_init="gaussian",
    metric="pw",
    init="fiedler",
    max_iter=100,
    tol=1e-10,
    inner_max_iter=100,
    inner_tol=1e-10,
    center=True,
    normalize=False,
    allow_reflection=True,
    ot_solver="emd",
    reg=1e-2,
    random_state=None,
    log=False,
):
    """Free-support Procrustes-Wasserstein barycenter (function API).

    See :class:`PWBarycenter` for the parameters. Returns the barycenter
    support of shape (n_support, d), and with ``log=True`` also a dict with
    ``rotations``, ``plans``, ``inertia``, ``n_iter``, ``displacement_history``
    and ``support_weights``.

    Examples
    --------
    >>> import numpy as np
    >>> from skalgos.transport import pw_barycenter
    >>> X = [np.array([[1.0, 0.0], [-1.0, 0.0]]), np.array([[0.0, 1.0], [0.0, -1.0]])]
    >>> B = pw_barycenter(X, n_support=2, support_init="first", random_state=0)
    >>> np.round(np.sort(np.abs(B), axis=0), 6)
    array([[0., 1.],
           [0., 1.]])
    """
    est = PWBarycenter(
        n_support=n_support,
        support_init=support_init,
        metric=metric,
        init=init,
        max_iter=max_iter,
        tol=tol,
        inner_max_iter=inner_max_iter,
        inner_tol=inner_tol,
        center=center,
        normalize=normalize,
        allow_reflection=allow_reflection,
        ot_solver=ot_solver,
        reg=reg,
        store_plans=log,
        random_state=random_state,
    ).fit(
        X,
        cloud_weights=cloud_weights,
        atom_weights=atom_weights,
        support_weights=support_weights,
    )
    if not log:
        return est.barycenter_
    return est.barycenter_, {
        "rotations": est.rotations_,
        "plans": est.plans_,
        "inertia": est.inertia_,
        "n_iter": est.n_iter_,
        "displacement_history": est.displacement_history_,
        "support_weights": est.support_weights_,
    }


_PW_PARAMS = {
    "init": [StrOptions(set(INITS)), "array-like"],
    "max_iter": [Interval(numbers.Integral, 0, None, closed="left")],
    "tol": [Interval(numbers.Real, 0, None, closed="left")],
    "center": ["boolean"],
    "normalize": [StrOptions({"max_radius"}), "boolean"],
    "allow_reflection": ["boolean"],
    "ot_solver": [StrOptions({"emd", "sinkhorn"})],
    "reg": [Interval(numbers.Real, 0, None, closed="neither")],
}


class PWBarycenter(TransformerMixin, BaseEstimator):
    """Procrustes-Wasserstein barycenter of a list of point clouds.

    Minimizes ``sum_i lambda_i PW_2^2(mu_{B, b}, mu_{Y_i, a_i})`` over the
    support ``B`` (``n_support`` points, fixed weights ``b``) by the paper's
    fixed point :cite:`pw2025barycenters`: align each cloud to the current
    support (PW: OT plan + orthogonal map), then move every support point to
    the weighted barycentric projection of the aligned clouds. With
    ``metric="w"`` rotations are disabled and this is POT's
    ``free_support_barycenter``.

    Parameters
    ----------
    n_support : int, default=256
        Number of support points of the barycenter (ignored when
        ``support_init`` is an array).
    support_init : {"gaussian", "first"} or array of shape (n_support, d), \
            default="gaussian"
        Starting support: Gaussian points (the paper), points of the first
        cloud, or an array.
    metric : {"pw", "w"}, default="pw"
        PW barycenter, or the plain Wasserstein (free-support) barycenter.
    init : {"fiedler", "identity", "gw", "gw_geodesic", "pca", "best"} or \
            array of shape (d, d), default="fiedler"
        Initialization of each PW solve (see :func:`pw_distance`).
    max_iter : int, default=100
        Maximum number of outer (support update) iterations.
    tol : float, default=1e-10
        Stop when the squared Frobenius displacement of the support is at
        most ``tol`` (absolute, as in the paper and POT).
    inner_max_iter : int, default=100
        Maximum OT/Procrustes iterations of each PW solve.
    inner_tol : float, default=1e-10
        Tolerance of each PW solve.
    center : bool, default=True
        Centre every cloud (weighted mean) before fitting.
    normalize : {False, "max_radius"}, default=False
        ``"max_radius"`` also scales every cloud to unit maximum radius, as
        the official code does.
    allow_reflection : bool, default=True
        Align over O(d) (the paper) or rotations only (ours).
    ot_solver : {"emd"}, default="emd"
        Exact OT (the paper). ``"sinkhorn"`` was removed and raises a
        ``ValueError`` that says why (see :func:`pw_distance`).
    reg : float, default=1e-2
        Unused: read only by the removed entropic solver, kept so that code
        passing it still runs.
    store_plans : bool, default=False
        Keep the transport plans in ``plans_``.
    random_state : int, RandomState instance or None, default=None
        Seeds the starting support.
    verbose : int, default=0
        Print the displacement at each outer iteration.

    Attributes
    ----------
    barycenter_ : ndarray of shape (n_support, d)
        The support, in the frame of the first cloud.
    support_weights_ : ndarray of shape (n_support,)
        The fixed barycenter weights ``b``.
    rotations_ : list of ndarray of shape (d, d)
        ``P_i`` with ``Y_i @ P_i`` aligned to ``barycenter_`` (``Y_i`` centred).
    plans_ : list of ndarray or None
        Transport plans between ``barycenter_`` and each cloud (if stored).
    inertia_ : float
        ``sum_i lambda_i PW_2^2(barycenter_, Y_i)``.
    n_iter_ : int
        Number of outer iterations run.
    displacement_history_ : list of float
        Squared displacement of the support per outer iteration.
    n_features_in_ : int
        Dimension ``d`` of the clouds.

    Notes
    -----
    The input is a ragged list of clouds, not an ``(n_samples, n_features)``
    table: ``X`` is a list of ``(n_i, d)`` arrays, a 3-D array, or a 2-D
    array read as one 1-D cloud per row (with a warning when the rows have
    more than one entry: a single cloud ``Y`` of shape ``(n, d)`` is passed
    as ``[Y]``).

    Deviations from the paper (ours): at every outer iteration each PW solve
    starts from the chosen init *and* from the cloud's previous rotation,
    keeping the better, so that a poor re-initialization cannot undo
    progress; after convergence one more alignment pass computes
    ``inertia_``, ``rotations_`` and ``plans_`` at the returned support; the
    Gaussian start is scaled to the clouds. The solver runs on the clouds
    divided by a power of two near their largest coordinate (exact; PW is
    homogeneous), so clouds of any magnitude fit; clouds with coordinates
    above 1e150 are refused, as their squared distances overflow. The
    support is reported in the first cloud's frame, as the authors do for
    display.

    References
    ----------
    .. [1] D. Adamo, M. Corneli, M. Vuillien, E. Vila. "An in depth look at the
       Procrustes-Wasserstein distance: properties and barycenters", ICML 2025.

    Examples
    --------
    >>> import numpy as np
    >>> from skalgos.transport import PWBarycenter, pw_distance
    >>> S = np.array([[0.0, 0.0], [2.0, 0.0], [0.0, 1.0]])
    >>> R = np.array([[0.0, -1.0], [1.0, 0.0]])
    >>> bary = PWBarycenter(n_support=3, support_init="first", random_state=0)
    >>> bary.fit([S, S @ R, (S @ R @ R)[::-1]]).barycenter_.shape
    (3, 2)
    >>> bool(pw_distance(bary.barycenter_, S, init="best") < 1e-6)
    True
    """

    # fit's extra arguments are plain arguments, not routed metadata (keeps a
    # generated set_fit_request out of the API)
    __metadata_request__fit = {
        "cloud_weights": metadata_routing.UNUSED,
        "atom_weights": metadata_routing.UNUSED,
        "support_weights": metadata_routing.UNUSED,
    }

    _parameter_constraints = {
        "n_support": [Interval(numbers.Integral, 1, None, closed="left")],
        "support_init": [StrOptions({"gaussian", "first"}), "array-like"],
        "metric": [StrOptions({"pw", "w"})],
        **_PW_PARAMS,
        "inner_max_iter": [Interval(numbers.Integral, 0, None, closed="left")],
        "inner_tol": [Interval(numbers.Real, 0, None, closed="left")],
        "store_plans": ["boolean"],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        n_support=256,
        *,
        support_init="gaussian",
        metric="pw",
        init="fiedler",
        max_iter=100,
        tol=1e-10,
        inner_max_iter=100,
        inner_tol=1e-10,
        center=True,
        normalize=False,
        allow_reflection=True,
        ot_solver="emd",
        reg=1e-2,
        store_plans=False,
        random_state=None,
        verbose=0,
    ):
        self.n_support = n_support
        self.support_init = support_init
        self.metric = metric
        self.init = init
        self.max_iter = max_iter
        self.tol = tol
        self.inner_max_iter = inner_max_iter
        self.inner_tol = inner_tol
        self.center = center
        self.normalize = normalize
        self.allow_reflection = allow_reflection
        self.ot_solver = ot_solver
        self.reg = reg
        self.store_plans = store_plans
        self.random_state = random_state
        self.verbose = verbose

    def _pw_kw(self):
        return dict(
            allow_reflection=self.allow_reflection,
            max_iter=self.inner_max_iter,
            tol=self.inner_tol,
            ot_solver=self.ot_solver,
            reg=self.reg,
        )

    def _prep(self, X, atom_weights=None):
        clouds, weights, layout = validate_clouds(
            X, weights=atom_weights, estimator=self
        )
        clouds = preprocess(
            clouds, weights, center=self.center, normalize=self.normalize
        )
        return clouds, weights, layout

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(
        self, X, y=None, *, cloud_weights=None, atom_weights=None, support_weights=None
    ):
        """Fit the barycenter of the clouds ``X``.

        Parameters
        ----------
        X : list of array-like of shape (n_i, d), or array
            The clouds (see Notes of the class for the accepted layouts).
        y : None
            Ignored.
        cloud_weights : array-like of shape (n_clouds,), default=None
            The barycentric weights ``lambda_i``; uniform when None.
        atom_weights : list of array-like of shape (n_i,), default=None
            Point weights of each cloud; uniform when None.
        support_weights : array-like of shape (n_support,), default=None
            The barycenter's fixed weights ``b``; uniform when None.

        Returns
        -------
        self : PWBarycenter
        """
        check_ot_solver(self.ot_solver)
        clouds, weights, _ = self._prep(X, atom_weights)
        d = clouds[0].shape[1]
        init = check_pw_init(self.init, d, self.allow_reflection)
        lam = _cloud_weights(cloud_weights, len(clouds))
        rng = check_random_state(self.random_state)
        # solved on clouds / s (exact: s a power of two), scaled back below
        s = unit_scale(clouds)
        if isinstance(self.support_init, str):
            clouds = [c / s for c in clouds]
            X0 = _initial_support(clouds, self.n_support, self.support_init, rng)
        else:
            X0 = _initial_support(clouds, self.n_support, self.support_init, rng)
            s = max(s, unit_scale([X0], "support_init"))
            clouds, X0 = [c / s for c in clouds], X0 / s
        b = _support_weights(support_weights, X0.shape[0])
        B, rotations, plans, inertia, n_iter, history = _fit_barycenter(
            clouds,
            weights,
            lam,
            X0,
            b,
            metric=self.metric,
            init=init,
            max_iter=self.max_iter,
            tol=self.tol / s / s,
            inner_max_iter=self.inner_max_iter,
            inner_tol=self.inner_tol / s / s,
            allow_reflection=self.allow_reflection,
            ot_solver=self.ot_solver,
            reg=self.reg,
            store_plans=self.store_plans,
            verbose=self.verbose,
            unit=s,
        )
        self.barycenter_ = B * s
        self.support_weights_ = b
        self.rotations_ = rotations
        self.plans_ = plans
        self.inertia_ = float(inertia) * s * s
        self.n_iter_ = n_iter
        self.displacement_history_ = [h * s * s for h in history]
        self.n_features_in_ = d
        return self

    def _distances_sq(self, X):
        check_is_fitted(self)
        clouds, weights, _ = self._prep(X)
        d = clouds[0].shape[1]
        if d != self.n_features_in_:
            raise ValueError(
                f"X has clouds of dimension {d}, but {type(self).__name__} was "
                f"fitted on dimension {self.n_features_in_}."
            )
        B, b = self.barycenter_, self.support_weights_
        # on (B, clouds) / s, as in fit; the distances are scaled back
        s = max(unit_scale(clouds), unit_scale([B], "barycenter_"))
        B, clouds = B / s, [c / s for c in clouds]
        if self.metric == "w":
            d_sq = [w_sq(B, Y, b, a)[0] for Y, a in zip(clouds, weights)]
        else:
            init = check_pw_init(self.init, d, self.allow_reflection)
            kw = dict(self._pw_kw(), tol=self.inner_tol / s / s)
            d_sq = [pw_sq(B, Y, b, a, init, **kw)[0] for Y, a in zip(clouds, weights)]
        return np.asarray(d_sq), s

    def transform(self, X):
        """PW distance of each cloud to the barycenter.

        Parameters
        ----------
        X : list of array-like of shape (n_i, d), or array
            The clouds.

        Returns
        -------
        D : ndarray of shape (n_clouds, 1)
        """
        d_sq, s = self._distances_sq(X)
        return (np.sqrt(d_sq) * s)[:, None]

    def get_feature_names_out(self, input_features=None):
        """The one output column, ``pwbarycenter0`` (the distance).

        With it, ``set_output(transform="pandas")`` gives a one-column
        DataFrame of distances, one row per cloud.

        Parameters
        ----------
        input_features : None
            Ignored (the input is a list of clouds, which has no columns).

        Returns
        -------
        names : ndarray of str objects, shape (1,)
        """
        check_is_fitted(self)
        return np.asarray([f"{type(self).__name__.lower()}0"], dtype=object)

    def score(self, X, y=None):
        """Minus the mean squared PW distance of the clouds to the barycenter.

        Parameters
        ----------
        X : list of array-like of shape (n_i, d), or array
            The clouds.
        y : None
            Ignored.

        Returns
        -------
        score : float
        """
        d_sq, s = self._distances_sq(X)
        return -float(np.mean(d_sq)) * s * s

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # a ragged list of clouds is the input; 2-D arrays are read as 1-D
        # clouds (one per row) and 3-D arrays as equal-size clouds
        tags.input_tags.two_d_array = True
        tags.input_tags.three_d_array = True
        tags.transformer_tags.preserves_dtype = ["float64"]
        return tags
