"""The baseline: kernel ridge with a group-averaged kernel, enumerating the group."""

from numbers import Integral, Real

import numpy as np
import scipy.linalg
from sklearn.base import BaseEstimator, RegressorMixin, _fit_context
from sklearn.metrics.pairwise import PAIRWISE_KERNEL_FUNCTIONS, pairwise_kernels
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ..utils.validation import float_dtype, validate_data
from ._groups import _GroupBase

__all__ = ["GroupAveragedKernelRidge"]


class GroupAveragedKernelRidge(RegressorMixin, BaseEstimator):
    """Kernel ridge regression with the group-averaged kernel (enumerates ``G``).

    The kernel is ``K_G(x, y) = (1/|G|) sum_g k(g x, y)``, which is invariant in
    each argument when ``k(g x, g y) = k(x, y)`` (true for ``"rbf"``,
    ``"laplacian"``, ``"linear"``, ``"poly"``, ``"cosine"`` and orthogonal
    group elements). Each kernel evaluation costs ``|G|`` base evaluations, so
    fitting costs ``O(|G| n^2)``: this is the estimator Spec-Avg avoids, kept
    for tests and benchmarks on small groups.

    Parameters
    ----------
    group : group or None, default=None
        Any skalgos group; ``None`` is plain kernel ridge.
    alpha : float, default=1.0
        Ridge penalty (as in :class:`sklearn.kernel_ridge.KernelRidge`).
    kernel : str or callable, default="rbf"
        A kernel name of :func:`sklearn.metrics.pairwise.pairwise_kernels`, or
        a callable ``k(x, y)``. ``"precomputed"`` is not supported (the group
        acts on points).
    gamma, degree, coef0 : float
        Kernel parameters, as in ``KernelRidge``.
    kernel_params : dict or None, default=None
        Extra parameters of a callable kernel.
    max_elements : int, default=10000
        Refuse groups with more elements than this.

    Attributes
    ----------
    dual_coef_ : ndarray of shape (n_samples,) or (n_samples, n_targets)
        Dual coefficients.
    X_fit_ : ndarray of shape (n_samples, n_features)
        Training points.
    n_group_elements_ : int
        ``|G|``.
    n_features_in_ : int
        Number of input features.

    References
    ----------
    .. [1] B. Tahmasebi, S. Jegelka. "The Exact Sample Complexity Gain from
       Invariances for Kernel Regression", NeurIPS 2023 (group averaging); used
       as the baseline of A. Soleymani et al., ICML 2025.

    Examples
    --------
    >>> import numpy as np
    >>> from skalgos.kernel_ridge import GroupAveragedKernelRidge, PermutationGroup
    >>> X = np.random.default_rng(0).standard_normal((20, 3))
    >>> y = X.sum(axis=1) ** 2
    >>> reg = GroupAveragedKernelRidge(PermutationGroup(3), alpha=0.1).fit(X, y)
    >>> reg.n_group_elements_
    6
    >>> bool(np.allclose(reg.predict(X[:, [1, 2, 0]]), reg.predict(X)))
    True
    """

    _parameter_constraints = {
        "group": [_GroupBase, None],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "kernel": [
            StrOptions(set(PAIRWISE_KERNEL_FUNCTIONS) - {"precomputed"}),
            callable,
        ],
        "gamma": [Interval(Real, 0, None, closed="left"), None],
        "degree": [Interval(Real, 0, None, closed="left")],
        "coef0": [Real],
        "kernel_params": [dict, None],
        "max_elements": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(
        self,
        group=None,
        *,
        alpha=1.0,
        kernel="rbf",
        gamma=None,
        degree=3,
        coef0=1,
        kernel_params=None,
        max_elements=10000,
    ):
        self.group = group
        self.alpha = alpha
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.max_elements = max_elements

    def _base_kernel(self, X, Y):
        if callable(self.kernel):
            params = self.kernel_params or {}
        else:
            params = {"gamma": self.gamma, "degree": self.degree, "coef0": self.coef0}
        return pairwise_kernels(X, Y, metric=self.kernel, filter_params=True, **params)

    def _averaged(self, X, Y):
        K = np.zeros((X.shape[0], Y.shape[0]))
        for A, b in self._elements:
            K += self._base_kernel(X @ A.T + b, Y)
        return K / len(self._elements)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit kernel ridge with the averaged kernel.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_targets)

        Returns
        -------
        self : object
        """
        X, y = validate_data(
            self, X, y, multi_output=True, y_numeric=True, dtype=np.float64
        )
        d = X.shape[1]
        if self.group is None:
            self._elements = [(np.eye(d), np.zeros(d))]
        else:
            try:
                group = self.group.resolve(d)
            except (TypeError, ValueError) as exc:
                raise ValueError(f"{exc} (X has n_features={d})") from exc
            gens = group.generating_set()
            if gens and gens[0][0].shape != (d, d):
                raise ValueError(
                    f"The group acts on R^{gens[0][0].shape[0]}, but X has "
                    f"n_features={d}."
                )
            self._elements = group.elements(self.max_elements)
        self.n_group_elements_ = len(self._elements)
        K = self._averaged(X, X)
        K = 0.5 * (K + K.T)
        K.flat[:: K.shape[0] + 1] += self.alpha
        try:
            self.dual_coef_ = scipy.linalg.solve(K, y, assume_a="pos")
        except (np.linalg.LinAlgError, scipy.linalg.LinAlgError):
            self.dual_coef_ = np.linalg.lstsq(K, y, rcond=None)[0]
        self.X_fit_ = X
        return self

    def predict(self, X):
        """Predict with the group-averaged kernel.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y : ndarray of shape (n_samples,) or (n_samples, n_targets)
        """
        check_is_fitted(self)
        out_dtype = float_dtype(X)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return (self._averaged(X, self.X_fit_) @ self.dual_coef_).astype(
            out_dtype, copy=False
        )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags
