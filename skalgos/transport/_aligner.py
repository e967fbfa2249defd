"""Align point clouds to a reference with the Procrustes-Wasserstein map."""

import numbers

from sklearn.base import BaseEstimator, TransformerMixin, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ._barycenter import _PW_PARAMS, PWBarycenter
from ._common import check_pw_init, preprocess, pw_sq
from ._pw import check_ot_solver
from ._validation import format_like, validate_clouds

__all__ = ["PWAligner"]


class PWAligner(TransformerMixin, BaseEstimator):
    """Rotate / reflect point clouds onto a reference cloud (PW alignment).

    ``fit`` picks the reference; ``transform`` centres every cloud and
    applies its Procrustes-Wasserstein map ``P_i`` (the orthogonal part of
    the PW solution, :cite:`pw2025barycenters`), so that ``Y_i @ P_i`` lies
    in the reference frame. Point order and sizes are kept, so the output can
    feed any cloud-wise method in a :class:`~sklearn.pipeline.Pipeline`.

    Parameters
    ----------
    reference : {"first", "barycenter"} or array of shape (n_points, d), \
            default="first"
        The first fitted cloud, the PW barycenter of the fitted clouds
        (:class:`PWBarycenter` with ``n_support`` points), or a given cloud.
    init : {"fiedler", "identity", "gw", "gw_geodesic", "pca", "best"} or \
            array of shape (d, d), default="fiedler"
        Initialization of each PW solve (see :func:`pw_distance`).
    max_iter : int, default=100
        Maximum OT/Procrustes iterations per cloud.
    tol : float, default=1e-10
        Tolerance of each PW solve.
    center : bool, default=True
        Centre the clouds (weighted mean) before aligning; the output is
        centred.
    normalize : {False, "max_radius"}, default=False
        Also scale each cloud to unit maximum radius.
    allow_reflection : bool, default=True
        Align over O(d) (the paper) or rotations only (ours).
    ot_solver : {"emd"}, default="emd"
        Exact OT (the paper). ``"sinkhorn"`` was removed and raises a
        ``ValueError`` that says why (see :func:`pw_distance`).
    reg : float, default=1e-2
        Unused: read only by the removed entropic solver, kept so that code
        passing it still runs.
    n_support : int, default=100
        Support size of the barycenter reference.
    random_state : int, RandomState instance or None, default=None
        Seeds the barycenter reference.

    Attributes
    ----------
    reference_ : ndarray of shape (n_ref, d)
        The (centred) reference cloud.
    reference_weights_ : ndarray of shape (n_ref,)
        Its point weights.
    n_features_in_ : int
        Dimension ``d`` of the clouds.

    Notes
    -----
    The output layout follows the input: a list gives a list, a 3-D array a
    3-D array, a 2-D array (one 1-D cloud per row) a 2-D array. Clouds have no
    DataFrame form, so :meth:`set_output` accepts only ``"default"``. Aligning to a
    reference is how the paper displays barycenters; the transformer itself
    is ours.

    References
    ----------
    .. [1] D. Adamo, M. Corneli, M. Vuillien, E. Vila. "An in depth look at the
       Procrustes-Wasserstein distance: properties and barycenters", ICML 2025.

    Examples
    --------
    >>> import numpy as np
    >>> from skalgos.transport import PWAligner
    >>> S = np.array([[0.0, 0.0], [3.0, 0.0], [0.0, 1.0]])
    >>> R = np.array([[0.0, -1.0], [1.0, 0.0]])
    >>> aligned = PWAligner(init="best").fit([S]).transform([S @ R])
    >>> np.allclose(aligned[0], S - S.mean(axis=0))
    True
    """

    _parameter_constraints = {
        "reference": [StrOptions({"first", "barycenter"}), "array-like"],
        **_PW_PARAMS,
        "n_support": [Interval(numbers.Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        reference="first",
        *,
        init="fiedler",
        max_iter=100,
        tol=1e-10,
        center=True,
        normalize=False,
        allow_reflection=True,
        ot_solver="emd",
        reg=1e-2,
        n_support=100,
        random_state=None,
    ):
        self.reference = reference
        self.init = init
        self.max_iter = max_iter
        self.tol = tol
        self.center = center
        self.normalize = normalize
        self.allow_reflection = allow_reflection
        self.ot_solver = ot_solver
        self.reg = reg
        self.n_support = n_support
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Choose the reference cloud.

        Parameters
        ----------
        X : list of array-like of shape (n_i, d), or array
            The clouds.
        y : None
            Ignored.

        Returns
        -------
        self : PWAligner
        """
        check_ot_solver(self.ot_solver)
        clouds, weights, _ = validate_clouds(X, estimator=self)
        d = clouds[0].shape[1]
        check_pw_init(self.init, d, self.allow_reflection)
        if isinstance(self.reference, str) and self.reference == "barycenter":
            bary = PWBarycenter(
                self.n_support,
                init=self.init,
                inner_max_iter=self.max_iter,
                inner_tol=self.tol,
                center=self.center,
                normalize=self.normalize,
                allow_reflection=self.allow_reflection,
                ot_solver=self.ot_solver,
                reg=self.reg,
                random_state=self.random_state,
            ).fit(clouds)
            ref, w = bary.barycenter_, bary.support_weights_
        else:
            if isinstance(self.reference, str):  # "first"
                ref, w = clouds[0], weights[0]
            else:
                (ref,), (w,) = validate_clouds([self.reference], name="reference")[:2]
                if ref.shape[1] != d:
                    raise ValueError(
                        f"reference has dimension {ref.shape[1]}; the clouds have {d}."
                    )
            (ref,) = preprocess(
                [ref], [w], center=self.center, normalize=self.normalize
            )
        self.reference_ = ref
        self.reference_weights_ = w
        self.n_features_in_ = d
        return self

    def _rotations(self, clouds, weights):
        init = check_pw_init(self.init, self.n_features_in_, self.allow_reflection)
        kw = dict(
            allow_reflection=self.allow_reflection,
            max_iter=self.max_iter,
            tol=self.tol,
            ot_solver=self.ot_solver,
            reg=self.reg,
        )
        return [
            pw_sq(self.reference_, Y, self.reference_weights_, a, init, **kw)[1]
            for Y, a in zip(clouds, weights)
        ]

    def transform(self, X):
        """Centre each cloud and rotate it into the reference frame.

        Parameters
        ----------
        X : list of array-like of shape (n_i, d), or array
            The clouds.

        Returns
        -------
        aligned : list of ndarray of shape (n_i, d), or array
            In the layout of ``X``.
        """
        check_is_fitted(self)
        clouds, weights, layout = validate_clouds(X, estimator=self)
        if clouds[0].shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has clouds of dimension {clouds[0].shape[1]}, but PWAligner was "
                f"fitted on dimension {self.n_features_in_}."
            )
        clouds = preprocess(
            clouds, weights, center=self.center, normalize=self.normalize
        )
        rotations = self._rotations(clouds, weights)
        return format_like([Y @ P for Y, P in zip(clouds, rotations)], layout)

    def set_output(self, *, transform=None):
        """Accept only the default output container.

        ``transform`` returns point clouds (a list, or a 3-D array), which
        have no DataFrame form, so ``"pandas"`` and ``"polars"`` are refused
        rather than silently ignored; the global ``transform_output`` setting
        leaves the output as clouds too. Put a transformer that gives one row
        per cloud after the aligner (e.g. :class:`PWBarycenter`, whose
        distances support ``set_output``) and configure that one.

        Parameters
        ----------
        transform : {"default"} or None, default=None
            ``"default"`` or ``None`` (nothing to configure).

        Returns
        -------
        self : PWAligner
        """
        if transform not in (None, "default"):
            raise ValueError(
                f"PWAligner cannot give {transform!r} output: transform returns "
                "point clouds (a list or a 3-D array), which have no DataFrame "
                "form. Use set_output(transform='default'), and set the output of "
                "the step after the aligner instead."
            )
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = True
        tags.input_tags.three_d_array = True
        tags.transformer_tags.preserves_dtype = ["float64"]
        return tags
