"""Nuclear-norm completion of noisy data, with biases, as a drop-in imputer."""

import math
import numbers
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import (
    BaseEstimator,
    OneToOneFeatureMixin,
    TransformerMixin,
    _fit_context,
)
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_array, check_is_fitted

from ..utils._linalg import robust_svd
from ..utils.validation import validate_data
from ._als_kernels import ridge_rows

__all__ = ["SoftImputeCompleter"]


_MAX_UNSCALED = 1e100


def _unit_of(vals):
    """Power of two ``u`` with ``max|vals| / u`` in [1, 2) (1 when all zero)."""
    amax = float(np.max(np.abs(vals))) if vals.size else 0.0
    if amax == 0.0:
        return 1.0
    return math.ldexp(1.0, math.frexp(amax)[1] - 1)


def _coo(X):
    """``(rows, cols, values)`` of the observed entries of a NaN matrix or sparse."""
    if sp.issparse(X):
        C = sp.coo_matrix(X)
        C.sum_duplicates()
        return C.row.astype(np.int64), C.col.astype(np.int64), C.data.astype(float)
    rows, cols = np.nonzero(~np.isnan(X))
    return rows.astype(np.int64), cols.astype(np.int64), X[rows, cols].astype(float)


def _csr(rows, cols, vals, n_rows):
    order = np.lexsort((cols, rows))
    indptr = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n_rows), out=indptr[1:])
    return indptr, cols[order], order


class _Fit:
    """Alternating ridge (factored nuclear norm) on a fixed observed pattern.

    Unknowns: row factors ``A`` (m, k), column factors ``B`` (n, k), row and
    column biases ``b``, ``c`` and, with column side information ``F``
    (n, f), row coefficients ``G`` (m, f) on it.
    """

    def __init__(self, rows, cols, z, shape, k, reg_bias, F=None):
        m, n = shape
        self.rows, self.cols, self.z, self.shape = rows, cols, z, shape
        self.k, self.reg_bias = k, reg_bias
        self.F = np.zeros((n, 0)) if F is None else F
        self.r_ptr, self.r_idx, self.r_ord = _csr(rows, cols, z, m)
        self.c_ptr, self.c_idx, self.c_ord = _csr(cols, rows, z, n)
        self.mu = float(z.mean()) if z.size else 0.0

    def zeros(self):
        m, n = self.shape
        f = self.F.shape[1]
        return [
            np.zeros((m, self.k)),
            np.zeros((n, self.k)),
            np.zeros(m),
            np.zeros(n),
            np.zeros((m, f)),
        ]

    def side(self, G, rows=None, cols=None):
        rows = self.rows if rows is None else rows
        cols = self.cols if cols is None else cols
        if G.shape[1] == 0:
            return 0.0
        return np.einsum("ij,ij->i", G[rows], self.F[cols])

    def residual(self, A, B, b, c, G):
        fit = np.einsum("ij,ij->i", A[self.rows], B[self.cols])
        return self.z - self.mu - b[self.rows] - c[self.cols] - fit - self.side(G)

    def objective(self, A, B, b, c, G, lam):
        r = self.residual(A, B, b, c, G)
        return 0.5 * (
            r @ r
            + lam * (np.sum(A * A) + np.sum(B * B) + np.sum(G * G))
            + self.reg_bias * (b @ b + c @ c)
        )

    def svd_step(self, A, B, b, c, G, lam):
        """One soft-impute step from the current fit (sparse plus low rank).

        ``Z = P_Omega(R - A B^T) + A B^T`` is applied through products only:
        a warm-started block power iteration on the current column factors.
        """
        m, n = self.shape
        res = self.residual(A, B, b, c, G)
        S = sp.csr_matrix((res, (self.rows, self.cols)), shape=(m, n))
        V = B.copy()
        if not np.any(V):
            V = np.random.default_rng(0).standard_normal(V.shape)
        for _ in range(3):
            Q = np.linalg.qr(S @ V + A @ (B.T @ V))[0]
            V = np.linalg.qr(S.T @ Q + B @ (A.T @ Q))[0]
        Y = S @ V + A @ (B.T @ V)
        U, s, Wt = robust_svd(Y, np)
        s = np.sqrt(np.maximum(s - lam, 1e-3 * lam))
        return U * s, (V @ Wt.T) * s

    def sweep(self, A, B, b, c, G, lam):
        """Columns, then rows: the row unknowns are then the exact fold-in."""
        k = self.k
        reg = np.full(k + 1, lam)
        reg[k] = self.reg_bias
        # columns: unknowns [v_j, c_j] on features [A_i, 1]
        H = np.hstack([A, np.ones((A.shape[0], 1))])
        v = (self.z - self.mu - b[self.rows] - self.side(G))[self.c_ord]
        out = np.empty((B.shape[0], k + 1))
        ridge_rows(self.c_ptr, self.c_idx, v, H, reg, out)
        B[:], c[:] = out[:, :k], out[:, k]
        self.rows_step(A, B, b, c, G, lam)

    def rows_step(self, A, B, b, c, G, lam):
        A[:], b[:], G[:] = _ridge_fold(
            self.r_ptr,
            self.r_idx,
            (self.z - self.mu - c[self.cols])[self.r_ord],
            B,
            self.F,
            lam,
            self.reg_bias,
        )

    def solve(self, state, lam, max_iter, tol):
        A, B, b, c, G = (x.copy() for x in state)
        A, B = self.svd_step(A, B, b, c, G, lam)
        self.rows_step(A, B, b, c, G, lam)
        prev = self.objective(A, B, b, c, G, lam)
        for it in range(1, max_iter + 1):
            self.sweep(A, B, b, c, G, lam)
            obj = self.objective(A, B, b, c, G, lam)
            if prev - obj <= tol * max(abs(obj), 1e-300):
                return [A, B, b, c, G], it, True
            prev = obj
        return [A, B, b, c, G], max_iter, False


def _ridge_fold(ptr, idx, v, B, F, lam, reg_bias):
    """Per-row ridge of ``v`` on ``[B_j, F_j, 1]``: ``(a_i, g_i, b_i)``."""
    k, f = B.shape[1], F.shape[1]
    H = np.hstack([B, F, np.ones((B.shape[0], 1))])
    reg = np.full(k + f + 1, lam)
    reg[k + f] = reg_bias
    out = np.empty((ptr.shape[0] - 1, k + f + 1))
    ridge_rows(ptr, idx, v, H, reg, out)
    return out[:, :k], out[:, k + f], out[:, k : k + f]


class SoftImputeCompleter(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Nuclear-norm completion of noisy data with biases; a drop-in imputer.

    Fits ``x_ij ~ s_j (mu + b_i + c_j + a_i . v_j) + m_j`` on the observed
    entries: columns centred and scaled (``m_j``, ``s_j``, undone on output),
    row and column biases ``b_i``, ``c_j`` (as recommender baselines such as
    surprise's ``BaselineOnly``), and a low-rank part with the squared data
    fit and nuclear-norm shrinkage ``lambda ||A V^T||_*``, the shrinkage
    chosen on a hold-out of the observed entries.

    ``transform`` folds new rows into the fitted model: each row's
    coefficients ``(a_i, b_i)`` are the ridge solution of its observed
    entries on the fitted column factors, with the same shrinkage. So the
    completer stands where ``SimpleImputer``, ``KNNImputer`` or
    ``IterativeImputer`` stand (``make_pipeline(SoftImputeCompleter(),
    Ridge())``, ``cross_val_score``). Observed entries are returned as given;
    missing ones are filled.

    Parameters
    ----------
    col_side : array-like of shape (n, f) or None, default=None
        Column side information (item attributes such as genres or year),
        standardised internally. Adds ``g_i . f_j`` to the model, each row's
        coefficients ``g_i`` shrunk like its factors (an inductive term on
        the attributes; the low-rank part models what they do not explain).
    shrinkage : float or "auto", default="auto"
        The nuclear-norm weight ``lambda`` (in units of the standardised
        data). ``"auto"``: the best of ``n_shrinkages`` values on a geometric
        path below the largest useful one, by RMSE on a hold-out of
        ``validation_fraction`` of the observed entries, then refitted on all.
    max_rank : int, default=20
        Rank of the factors (the solution's rank is at most this; the
        shrinkage sets it below). Cost per iteration is
        ``O(nnz * max_rank^2 + (m + n) * max_rank^3)``.
    scale : bool, default=True
        Centre and scale each column by its observed mean and standard
        deviation (both shrunk towards the pooled values by
        ``bias_shrinkage`` pseudo-observations), undone on output. The
        model is then scale-equivariant and fits entries of any finite
        magnitude; with ``scale=False`` the loss is in data units and
        entries beyond [1e-100, 1e100] in magnitude are refused.
    bias_shrinkage : float, default=5.0
        Ridge weight of the row and column biases (and the pseudo-count of
        the column centring and scaling).
    n_shrinkages : int, default=8
        Length of the shrinkage path for ``shrinkage="auto"``.
    validation_fraction : float, default=0.1
        Share of the observed entries held out to choose the shrinkage.
    max_iter : int, default=100
        Alternating sweeps per shrinkage value.
    tol : float, default=1e-4
        Stop when a sweep lowers the objective by less than ``tol`` (relative).
    random_state : int, RandomState instance or None, default=None
        Seeds the hold-out split.

    Attributes
    ----------
    shrinkage_ : float
        The shrinkage used.
    rank_ : int
        Rank of the fitted low-rank part.
    row_factors_, col_factors_ : ndarray of shape (m, max_rank), (n, max_rank)
    row_bias_, col_bias_ : ndarray of shape (m,), (n,)
    mean_, scale_ : ndarray of shape (n,)
        Column centring and scaling.
    validation_rmse_ : ndarray of shape (n_shrinkages,) or None
        Hold-out RMSE (standardised units) along the path.
    n_iter_ : int
        Sweeps of the final fit.
    n_features_in_ : int

    See Also
    --------
    NuclearNormCompleter : the interpolating (``loss="exact"``) model of the paper.
    OCMCCompleter : with side information (the paper's model).

    Notes
    -----
    Not the OCMC paper's model: the paper interpolates the observations
    (``P_Omega(X) = P_Omega(R)``), which is right for exact low-rank data and
    wrong for noisy ratings or tables (it then fits the noise; measured in
    ``benchmarks/results/ocmc_ratings.md``). This is SoftImpute's squared-loss
    model (Mazumder, Hastie and Tibshirani 2010) plus biases and column
    scaling. The solver is the factored form of the nuclear norm,
    ``||X||_* = min_{X = A V^T} (||A||^2 + ||V||^2) / 2``, solved by
    alternating exact ridge solves (softImpute-ALS of Hastie et al. 2015
    without fill-in), each shrinkage value started from one sparse-plus-low-
    rank soft-impute step; equal to the convex problem whenever
    ``max_rank`` exceeds the rank of its solution.

    References
    ----------
    .. [1] R. Mazumder, T. Hastie, R. Tibshirani, "Spectral regularization
       algorithms for learning large incomplete matrices", JMLR 11, 2010.
    .. [2] T. Hastie, R. Mazumder, J. Lee, R. Zadeh, "Matrix completion and
       low-rank SVD via fast alternating least squares", JMLR 16, 2015.

    Examples
    --------
    >>> import numpy as np
    >>> from skalgos.completion import SoftImputeCompleter
    >>> rng = np.random.default_rng(0)
    >>> M = rng.standard_normal((60, 3)) @ rng.standard_normal((3, 8))
    >>> X = M.copy()
    >>> X[rng.random(M.shape) < 0.2] = np.nan
    >>> filled = SoftImputeCompleter(random_state=0).fit_transform(X)
    >>> bool(np.isnan(filled).any())
    False
    """

    _parameter_constraints = {
        "col_side": ["array-like", None],
        "shrinkage": [
            Interval(numbers.Real, 0, None, closed="left"),
            StrOptions({"auto"}),
        ],
        "max_rank": [Interval(numbers.Integral, 1, None, closed="left")],
        "scale": ["boolean"],
        "bias_shrinkage": [Interval(numbers.Real, 0, None, closed="neither")],
        "n_shrinkages": [Interval(numbers.Integral, 1, None, closed="left")],
        "validation_fraction": [Interval(numbers.Real, 0, 1, closed="neither")],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        col_side=None,
        *,
        shrinkage="auto",
        max_rank=20,
        scale=True,
        bias_shrinkage=5.0,
        n_shrinkages=8,
        validation_fraction=0.1,
        max_iter=100,
        tol=1e-4,
        random_state=None,
    ):
        self.col_side = col_side
        self.shrinkage = shrinkage
        self.max_rank = max_rank
        self.scale = scale
        self.bias_shrinkage = bias_shrinkage
        self.n_shrinkages = n_shrinkages
        self.validation_fraction = validation_fraction
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.sparse = True
        return tags

    def _validate(self, X, reset):
        return validate_data(
            self,
            X,
            ensure_all_finite="allow-nan",
            dtype=np.float64,
            accept_sparse=("csr", "csc", "coo"),
            reset=reset,
        )

    def _standardise_fit(self, rows, cols, vals, n):
        """Column means and scales, shrunk by empirical Bayes.

        A column's log-variance is shrunk towards the average one, and its
        mean towards the average column mean, each in proportion to its
        sampling variance against the spread across columns (James-Stein
        style). Columns with many entries keep their own moments (a table's
        columns of any units); columns with few (an item with two ratings)
        borrow from the others.
        """
        if not self.scale:
            self.mean_ = np.zeros(n)
            self.scale_ = np.ones(n)
            return
        cnt = np.bincount(cols, minlength=n).astype(float)
        safe = np.maximum(cnt, 1.0)
        xbar = np.bincount(cols, vals, minlength=n) / safe
        dev = vals - xbar[cols]
        ss = np.bincount(cols, dev * dev, minlength=n)
        ok = cnt >= 2
        v = np.where(ok, ss / np.maximum(cnt - 1.0, 1.0), 0.0)
        pos = ok & (v > 0)
        if pos.any():
            logv = np.log(np.where(pos, v, 1.0))
            samp = 2.0 / np.maximum(cnt - 1.0, 1.0)
            lbar = float(np.average(logv[pos], weights=cnt[pos]))
            tau2 = max(float(np.var(logv[pos]) - np.mean(samp[pos])), 1e-3)
            w = np.where(pos, tau2 / (tau2 + samp), 0.0)
            var = np.exp(w * logv + (1.0 - w) * lbar)
        else:
            var = np.ones(n)
        g = float(np.average(xbar[cnt > 0], weights=cnt[cnt > 0]))
        se2 = var / safe
        if ok.sum() >= 2:
            tau2 = max(float(np.var(xbar[ok]) - np.mean(se2[ok])), 0.0)
        else:
            tau2 = 0.0
        w = np.where(cnt > 0, tau2 / (tau2 + se2), 0.0) if tau2 > 0 else 0.0
        mean = w * xbar + (1.0 - w) * g
        scale = np.sqrt(var)
        scale[~(scale > 1e-12 * max(1.0, abs(g)))] = 1.0
        self.mean_, self.scale_ = np.broadcast_to(mean, (n,)).copy(), scale

    def _check_magnitude(self, vals):
        """With ``scale=False`` the squared loss is in data units: refuse
        entries whose squares overflow or underflow float64."""
        if self.scale or vals.size == 0:
            return
        amax = float(np.max(np.abs(vals)))
        if amax > _MAX_UNSCALED or 0 < amax < 1 / _MAX_UNSCALED:
            raise ValueError(
                f"X has observed entries of magnitude {amax:.3g}; with "
                "scale=False the squared loss is in data units and overflows "
                f"or underflows float64 outside [1e-100, 1e100]. Use scale=True "
                "(the default: scale-equivariant) or rescale X (e.g. "
                "StandardScaler)."
            )

    def _col_side(self, n):
        """Column side information, standardised (constant columns dropped)."""
        if self.col_side is None:
            return None
        F = check_array(
            self.col_side,
            dtype=np.float64,
            ensure_2d=True,
            ensure_min_features=0,
            input_name="col_side",
        )
        if F.shape[0] != n:
            raise ValueError(
                f"col_side has {F.shape[0]} rows but X has {n} columns; give one "
                "row of side information per column of X."
            )
        sd = F.std(axis=0)
        keep = sd > 1e-12 * np.maximum(1.0, np.abs(F).max(axis=0))
        return (F[:, keep] - F[:, keep].mean(axis=0)) / sd[keep]

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Fit the model on the observed entries of ``X`` (NaN = missing).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (m, n)
            ``NaN`` marks a missing entry; a sparse matrix lists the observed
            entries (explicit zeros are observed).
        y : None
            Ignored.

        Returns
        -------
        self : object
        """
        self._fit(self._validate(X, reset=True))
        return self

    def _fit(self, X):
        m, n = X.shape
        rows, cols, vals = _coo(X)
        if vals.size == 0:
            raise ValueError(
                "No entry of X is observed (all NaN): nothing to complete from."
            )
        self._check_magnitude(vals)
        # centring and scaling make the model scale-equivariant: standardise
        # vals / u (u a power of two near their max-abs, an exact division)
        # and carry u in mean_ and scale_, so no square overflows (1e300) or
        # underflows (1e-300)
        unit = _unit_of(vals) if self.scale else 1.0
        self._standardise_fit(rows, cols, vals / unit, n)
        self.mean_, self.scale_ = self.mean_ * unit, self.scale_ * unit
        F = self._col_side(n)
        self.side_ = F
        z = (vals - self.mean_[cols]) / self.scale_[cols]
        k = int(min(self.max_rank, m, n))
        rng = check_random_state(self.random_state)
        full = _Fit(rows, cols, z, (m, n), k, self.bias_shrinkage, F)
        self.validation_rmse_ = self.shrinkage_path_ = None
        if self.shrinkage == "auto":
            lam_max = self._lam_max(full)
            path = lam_max * np.geomspace(0.9, 0.9e-2, self.n_shrinkages)
            hold = rng.random(z.size) < self.validation_fraction
            if hold.sum() == 0 or (~hold).sum() == 0 or lam_max == 0:
                lam = float(path[-1]) if lam_max > 0 else 1.0
                start = full.zeros()
            else:
                tr = _Fit(
                    rows[~hold],
                    cols[~hold],
                    z[~hold],
                    (m, n),
                    k,
                    self.bias_shrinkage,
                    F,
                )
                start, errs, sols = full.zeros(), [], []
                rh, ch = rows[hold], cols[hold]
                for lam_i in path:
                    start, _, _ = tr.solve(start, lam_i, self.max_iter, self.tol)
                    A, B, b, c, G = start
                    pred = (
                        tr.mu
                        + b[rh]
                        + c[ch]
                        + tr.side(G, rh, ch)
                        + np.einsum("ij,ij->i", A[rh], B[ch])
                    )
                    errs.append(float(np.sqrt(np.mean((pred - z[hold]) ** 2))))
                    sols.append(start)
                    # the path descends: two rises in a row end it
                    if len(errs) >= 3 and errs[-1] > errs[-2] > errs[-3]:
                        break
                best = int(np.argmin(errs))
                lam, start = float(path[best]), sols[best]
                self.validation_rmse_ = np.asarray(errs)
                self.shrinkage_path_ = path[: len(errs)]
        else:
            lam, start = max(float(self.shrinkage), 1e-8), full.zeros()
        (A, B, b, c, G), it, ok = full.solve(start, lam, self.max_iter, self.tol)
        if not ok:
            warnings.warn(
                f"SoftImputeCompleter did not converge in max_iter={self.max_iter} "
                f"sweeps (tol={self.tol}); increase max_iter or tol.",
                ConvergenceWarning,
                stacklevel=3,
            )
        self.shrinkage_ = lam
        self.mu_ = full.mu
        self.row_factors_, self.col_factors_ = A, B
        self.row_bias_, self.col_bias_ = b, c
        self.side_coef_ = G
        strength = np.linalg.norm(B, axis=0) * np.linalg.norm(A, axis=0)
        self.rank_ = int(np.sum(strength > 1e-2 * lam))
        self.n_iter_ = it
        return X

    @staticmethod
    def _lam_max(fit):
        """Largest useful shrinkage: spectral norm of the bias-model residual."""
        A, B, b, c, G = fit.zeros()
        lam_big = 1e12
        for _ in range(20):  # biases (and side coefficients) alone
            fit.sweep(A, B, b, c, G, lam_big)
        A[:], B[:] = 0.0, 0.0
        res = fit.residual(A, B, b, c, G)
        S = sp.csr_matrix((res, (fit.rows, fit.cols)), shape=fit.shape)
        if S.nnz == 0 or not np.any(res):
            return 0.0
        v = np.random.default_rng(0).standard_normal(fit.shape[1])
        for _ in range(30):
            u = S @ v
            nu = np.linalg.norm(u)
            if nu == 0:
                return 0.0
            v = S.T @ (u / nu)
        return float(np.linalg.norm(v))

    def _values(self, A, b, G, i=None, j=None):
        """Model values in data units (all cells, or at pairs ``(i, j)``)."""
        F = self.side_
        if i is None:
            Z = self.mu_ + b[:, None] + self.col_bias_[None, :]
            Z = Z + A @ self.col_factors_.T
            if F is not None and F.shape[1]:
                Z = Z + G @ F.T
            return Z * self.scale_ + self.mean_
        z = (
            self.mu_
            + b[i]
            + self.col_bias_[j]
            + np.einsum("ij,ij->i", A[i], self.col_factors_[j])
        )
        if F is not None and F.shape[1]:
            z = z + np.einsum("ij,ij->i", G[i], F[j])
        return z * self.scale_[j] + self.mean_[j]

    def _output(self, X, A, b, G):
        out = self._values(A, b, G)
        if sp.issparse(X):
            C = sp.coo_matrix(X)
            out[C.row, C.col] = C.data
        else:
            obs = ~np.isnan(X)
            out[obs] = X[obs]
        return out

    def fit_transform(self, X, y=None):
        """Fit on ``X`` and return it completed (observed entries kept).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (m, n)
            ``NaN`` marks a missing entry.
        y : None
            Ignored.

        Returns
        -------
        completed : ndarray of shape (m, n)
        """
        X = self._fit(self._validate(X, reset=True))
        return self._output(X, self.row_factors_, self.row_bias_, self.side_coef_)

    def transform(self, X):
        """Complete rows by folding them into the fitted model.

        Each row's coefficients (factor, bias and side coefficients) are the
        ridge solution of its observed entries on the fitted column factors,
        with the fitted shrinkage: the same step that fits the training rows,
        so a training row gets back its fitted values. A row with no observed
        entry gets ``mu + c_j`` (the column means).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_rows, n_features_in_)
            ``NaN`` marks a missing entry.

        Returns
        -------
        completed : ndarray of shape (n_rows, n_features_in_)
            Observed entries as given, missing ones filled.
        """
        check_is_fitted(self)
        X = self._validate(X, reset=False)
        A, b, G = self._fold_in(X)
        return self._output(X, A, b, G)

    def _fold_in(self, X):
        rows, cols, vals = _coo(X)
        self._check_magnitude(vals)
        m = X.shape[0]
        F = self.side_ if self.side_ is not None else np.zeros((len(self.mean_), 0))
        z = (vals - self.mean_[cols]) / self.scale_[cols]
        ptr, idx, order = _csr(rows, cols, z, m)
        v = (z - self.mu_ - self.col_bias_[cols])[order]
        return _ridge_fold(
            ptr, idx, v, self.col_factors_, F, self.shrinkage_, self.bias_shrinkage
        )

    def predict_entries(self, pairs):
        """Model values at ``(row, col)`` pairs of the fitted matrix.

        Parameters
        ----------
        pairs : array-like of shape (n_entries, 2)
            Integer ``(row, col)`` positions in the matrix given to ``fit``.

        Returns
        -------
        values : ndarray of shape (n_entries,)
        """
        check_is_fitted(self)
        pairs = np.asarray(pairs)
        if pairs.ndim != 2 or pairs.shape[1] != 2 or pairs.dtype.kind not in "iu":
            raise ValueError(
                "pairs must be integer (row, col) pairs of shape (n_entries, 2)."
            )
        m, n = self.row_factors_.shape[0], self.col_factors_.shape[0]
        i, j = pairs[:, 0], pairs[:, 1]
        if pairs.size and (i.min() < 0 or i.max() >= m or j.min() < 0 or j.max() >= n):
            raise ValueError(
                f"pairs must index the fitted {m} x {n} matrix (0 <= row < {m}, "
                f"0 <= col < {n})."
            )
        return self._values(self.row_factors_, self.row_bias_, self.side_coef_, i, j)
