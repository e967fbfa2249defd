"""OCMC: matrix completion with incomplete side information, and its baselines.

One solver core (:func:`_solve`, the paper's linearised ADMM with singular
value thresholding and an increasing penalty) and four estimators over it:

* :class:`OCMCCompleter` (a transformer on the matrix with NaN for missing),
* :class:`OCMCRegressor` (the same model on the ``(row, col) -> value`` table),
* :class:`NuclearNormCompleter` (no side information),
* :class:`IMCCompleter` (inductive matrix completion, perfect side information).
"""

import math
import numbers
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import (
    BaseEstimator,
    OneToOneFeatureMixin,
    RegressorMixin,
    TransformerMixin,
    _fit_context,
)
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ..utils._backend import device, get_namespace, to_device, to_numpy
from ..utils._linalg import robust_svd
from ..utils.validation import float_dtype, validate_data
from ._kernels import (
    _SVDState,
    complement,
    factored_diff_norm,
    frobenius,
    orthonormal_basis,
    svt,
)

__all__ = [
    "IMCCompleter",
    "NuclearNormCompleter",
    "OCMCCompleter",
    "OCMCRegressor",
    "ocmc_complete",
]

# Matrices with min(m, n) at least this use the truncated SVD under svd="auto".
_AUTO_TRUNCATED_MIN_SIDE = 400
# Smallest rank cap of the truncated SVT (see _SVDState.max_rank).
_MIN_RANK_CAP = 50
# lambda_y="auto": share of observed entries held out, the ratios
# lambda_y / lambda_x tried (in this order), the rises of the hold-out error
# after which the walk stops, the tolerance of the selection fits, and the
# ratio used when there are too few entries to hold any out (the official
# synthetic setting).
_AUTO_HOLDOUT = 0.1
_AUTO_RATIOS = (0.0, 0.5, 1.0, 2.0, 4.0)
_AUTO_PATIENCE = 2
_AUTO_TOL = 1e-4
# ... and the hold-out error at which the walk stops at once (the hidden
# entries are recovered: no ratio can do meaningfully better).
_AUTO_GOOD = 1e-3
_AUTO_FALLBACK_RATIO = 4.0
# In exact mode only lambda_y / lambda_x matters; the solver runs with the
# weights rescaled to sum to this times max(1, sqrt(mn) / 100) (on unit-RMS
# data), a speed choice.
_EXACT_WEIGHT_SUM = 0.1


# ---------------------------------------------------------------------------
# Solver core
# ---------------------------------------------------------------------------


def _float_dtype(xp, x):
    """float32 for float32 input; else float64 unless the device lacks it."""
    if float_dtype(x) == np.float32:
        return xp.float32
    try:
        xp.zeros(1, dtype=xp.float64, device=device(x))
        return xp.float64
    except Exception:  # pragma: no cover - e.g. torch MPS
        return xp.float32


def n_blocks_of(use_y):
    return 2.0 if use_y else 1.0


def _spectral_norm(Z, xp, n_iter=20):
    """Largest singular value of ``Z`` by power iteration (a few products)."""
    # A deterministic start (the column sums, or ones), so that fits do not
    # depend on random_state unless the truncated SVD is used.
    v = xp.sum(xp.abs(Z), axis=0) + 1.0
    s = 0.0
    for _ in range(n_iter):
        u = Z @ v
        nu = math.sqrt(float(xp.sum(u * u)))
        if nu == 0.0:
            return 0.0
        v = Z.T @ (u / nu)
        s = math.sqrt(float(xp.sum(v * v)))
        v = v / s
    return s


def _solve(
    obs,
    mask,
    A,
    B,
    *,
    lambda_x,
    lambda_y,
    loss,
    gamma,
    mu,
    beta,
    beta_max,
    rho,
    max_iter,
    tol,
    svd,
    svd_rank,
    random_state,
    verbose,
    xp,
    lift=False,
    force_complement=False,
    name="OCMC",
):
    """Linearised ADMM for ``lx ||X||_* + ly ||P(X)||_*`` under the data term.

    ``obs`` holds the observed values (zeros elsewhere) and ``mask`` the 0/1
    observation pattern, both m x n, already scaled. ``A``/``B`` are
    orthonormal bases (or ``None``). ``P(X) = (I - AA^T) X (I - BB^T)``.

    With ``lift=True`` the variable is ``Z`` (a x b) and the matrix is
    ``A Z B^T`` (inductive matrix completion); ``lambda_y`` is then ignored.

    The ``P`` block is dropped when it is identically zero (a side spans the
    whole space, or ``lambda_y == 0``), and when it is the identity (no side
    information at all) the two nuclear norms merge into one with weight
    ``lambda_x + lambda_y``: both are exact reductions of the model.
    ``force_complement`` keeps the two-block iteration in every case (the
    tests use it to check the reductions through the full iteration).
    """
    m, n = obs.shape
    exact = loss == "exact"
    if lift:
        use_y = False
        lam = lambda_x
    else:
        no_side = A is None and B is None
        zero_p = (A is not None and A.shape[1] == m) or (
            B is not None and B.shape[1] == n
        )
        if force_complement:
            use_y, lam = True, lambda_x
        elif no_side:
            use_y, lam = False, lambda_x + lambda_y
        else:
            use_y = lambda_y > 0 and not zero_p
            lam = lambda_x

    def forward(V):
        if not lift:
            return V
        out = V
        if A is not None:
            out = A @ out
        if B is not None:
            out = out @ B.T
        return out

    def adjoint(W):
        if not lift:
            return W
        out = W
        if A is not None:
            out = A.T @ out
        if B is not None:
            out = out @ B
        return out

    shape_var = (
        (A.shape[1] if A is not None else m, B.shape[1] if B is not None else n)
        if lift
        else (m, n)
    )
    dtype = obs.dtype
    dev = device(obs)
    X = xp.zeros(shape_var, dtype=dtype, device=dev)
    Xf = xp.zeros((m, n), dtype=dtype, device=dev)
    Y = xp.zeros((m, n), dtype=dtype, device=dev) if use_y else None

    # Rank-0 SVT factors of the zero start (X and Y): the dual residual is
    # computed from the factors of consecutive iterates.
    def zero_factors(rows, cols):
        return (
            xp.zeros((rows, 0), dtype=dtype, device=dev),
            xp.zeros((0,), dtype=dtype, device=dev),
            xp.zeros((0, cols), dtype=dtype, device=dev),
        )

    fac = zero_factors(*shape_var)
    fac_y_old = zero_factors(m, n)
    M1 = xp.zeros((m, n), dtype=dtype, device=dev) if exact else None
    M2 = xp.zeros((m, n), dtype=dtype, device=dev) if use_y else None
    norm_obs = max(frobenius(obs, xp), np.finfo(np.float64).tiny)

    truncated = svd == "randomized" or (
        svd == "auto" and min(shape_var) >= _AUTO_TRUNCATED_MIN_SIDE
    )

    def new_state():
        if not truncated:
            return None
        rank = svd_rank if svd_rank is not None else max(10, min(shape_var) // 20)
        cap = max(_MIN_RANK_CAP, min(shape_var) // 40)
        return _SVDState(rank, random_state, max_rank=cap)

    if beta == "auto":
        # Continuation: start where the first threshold equals the top
        # singular value of the first SVT argument, so the iterate grows in
        # rank from 0 instead of starting at full rank on large matrices.
        top = _spectral_norm(obs, xp)
        if exact:
            beta = mu * lam / (n_blocks_of(use_y) * max(top, 1e-300))
        else:
            beta = 1e-2
    state_x, state_y = new_state(), new_state()
    hist = {"primal": [], "complement": [], "dual": [], "rank": []}
    converged = False
    nuc_x = nuc_y = 0.0
    n_blocks = 2.0 if use_y else 1.0
    it = 0
    # Carried from one iteration to the next (each is a function of the
    # current Xf, Y, M2): R = P_Omega(Xf - obs) and D = P(Xf) - Y. Y and M2
    # lie in the range of P (Y thresholds P(Xf) + M2 / beta, M2 sums
    # beta * D), so P(Xf - Y + M2 / beta) = D + M2 / beta: one projection
    # per iteration instead of two.
    R = mask * (Xf - obs)
    D = None
    for it in range(1, max_iter + 1):
        if exact:
            G = beta * R + M1
            L = beta * n_blocks
        else:
            G = R / gamma
            L = 1.0 / gamma + (beta if use_y else 0.0)
        if use_y:
            G = G + M2 if D is None else G + (beta * D + M2)
        t = mu / L
        X_new, rank_x, nuc_x, fac_new = svt(X - t * adjoint(G), t * lam, xp, state_x)
        Xf = forward(X_new)
        comp_res = 0.0
        if use_y:
            # Xf = U diag(s) V^T (use_y implies no lift), so P(Xf) =
            # (P_A' U) diag(s) (P_B' V)^T: the complement of the factors,
            # O((m + n) r (a + b)), then one m x n product; and
            # ||Xf||_F = ||s||_2 (U, V orthonormal).
            Ux, sx, Vtx = fac_new
            PX = (complement(Ux, A, None) * sx) @ complement(Vtx, None, B)
            norm_xf = math.sqrt(float(xp.sum(sx * sx)))
            Y, _, nuc_y, fac_y = svt(PX + M2 / beta, lambda_y / beta, xp, state_y)
            D = PX - Y
            M2 = M2 + beta * D
            comp_res = frobenius(D, xp) / max(norm_xf, 1e-300)
        R = mask * (Xf - obs)
        primal = frobenius(R, xp) / norm_obs
        if exact:
            M1 = M1 + beta * R
        # Dual residual of the linearised step (LADMAP): the prox term's
        # gradient (X_new - X) / t, plus beta times the change of Y.
        # Both changes from the SVT factors (no m x n pass).
        dual = factored_diff_norm(fac_new, fac, xp) / t
        if use_y:
            dual = max(dual, beta * factored_diff_norm(fac_y, fac_y_old, xp))
        dual = dual / norm_obs
        X, fac = X_new, fac_new
        if use_y:
            fac_y_old = fac_y
        hist["primal"].append(primal)
        hist["complement"].append(comp_res)
        hist["dual"].append(dual)
        hist["rank"].append(rank_x)
        if verbose and (it % max(1, 50 // verbose) == 0 or it == 1):
            print(
                f"[{name}] iter {it:5d}  primal {primal:.2e}  complement "
                f"{comp_res:.2e}  dual {dual:.2e}  beta {beta:.1e}  rank {rank_x}"
            )
        if (primal <= tol or not exact) and comp_res <= tol and dual <= tol:
            capped = [st for st in (state_x, state_y) if st is not None and st.capped]
            if not capped:
                converged = True
                break
            # A partial SVT is not a fixed point of the exact iteration:
            # allow more rank and go on.
            for st in capped:
                st.max_rank = 2 * st.max_rank
        # Penalty schedule (ours): grow beta while the primal residuals are
        # more than ten times the dual one (residual balancing). A fixed
        # geometric schedule, as in the official code, either stalls far from
        # feasibility (small beta_max) or freezes X before it is optimal.
        if max(primal if exact else 0.0, comp_res) > 10.0 * dual:
            beta = min(beta_max, rho * beta)
    if not use_y:
        Y = complement(Xf, A, B) if not lift else None
        nuc_y = None
    U, s, Vt = fac
    V = Vt.T
    if lift:
        U = A @ U if A is not None else U
        V = B @ V if B is not None else V
    return {
        "X": Xf,
        "factors": (U, s, V),
        "Y": Y,
        "n_iter": it,
        "converged": converged,
        "residuals": hist,
        "nuc_x": nuc_x,
        "nuc_y": nuc_y,
    }


# ---------------------------------------------------------------------------
# Input handling
# ---------------------------------------------------------------------------


def _check_side(S, n_rows, name):
    """Validate and orthonormalise one side-information matrix (on the host).

    Returns a float64 NumPy basis, or ``None`` for no side information.
    """
    if S is None:
        return None
    Sn = to_numpy(S)
    if Sn.dtype.kind not in "biuf":
        raise TypeError(
            f"{name} must be a numeric array of shape (n_rows, n_features); "
            f"got dtype {Sn.dtype}."
        )
    what = "rows" if name == "row_side" else "columns"
    if Sn.ndim == 1:
        raise ValueError(
            f"{name} must be 2-D, of shape ({n_rows}, n_features); got a 1-D "
            "array. Use S.reshape(-1, 1) for a single feature."
        )
    if Sn.ndim != 2:
        raise ValueError(f"{name} must be 2-D; got an array with {Sn.ndim} dims.")
    if Sn.shape[0] != n_rows:
        raise ValueError(
            f"{name} has {Sn.shape[0]} rows but the matrix has {n_rows} {what}; "
            f"{name} needs one row per matrix {what[:-1]}."
        )
    Sn = Sn.astype(np.float64)
    if not np.all(np.isfinite(Sn)):
        raise ValueError(
            f"{name} contains NaN or infinite values; side information must be "
            "complete (impute or drop those features first)."
        )
    if Sn.shape[1] == 0:
        return None
    basis = orthonormal_basis(Sn, np)
    return None if basis.shape[1] == 0 else basis


def _is_numpy(xp):
    from ..utils._backend import is_numpy_namespace

    return is_numpy_namespace(xp)


def _side_to(S, like, xp, dtype):
    """Move a numpy side matrix onto the device of ``like``."""
    if S is None:
        return None
    if _is_numpy(xp):
        return np.asarray(to_numpy(S), dtype=dtype)
    if isinstance(S, np.ndarray) or not hasattr(S, "__array_namespace__"):
        S = to_device(np.asarray(to_numpy(S), dtype=np.float64), device(like), xp=xp)
    return xp.astype(S, dtype)


def _like(a, like, xp):
    """The NumPy array ``a`` in the namespace and on the device of ``like``."""
    if _is_numpy(xp):
        return a
    return to_device(a, device(like), xp=xp)


def _prepare_sides(row_side, col_side, m, n, like, xp, dtype):
    A = _check_side(row_side, m, "row_side")
    B = _check_side(col_side, n, "col_side")
    return _side_to(A, like, xp, dtype), _side_to(B, like, xp, dtype)


# ---------------------------------------------------------------------------
# Estimators
# ---------------------------------------------------------------------------

_SOLVER_CONSTRAINTS = {
    "lambda_x": [Interval(numbers.Real, 0, None, closed="neither")],
    "loss": [StrOptions({"exact", "squared"})],
    "gamma": [Interval(numbers.Real, 0, None, closed="neither")],
    "mu": [Interval(numbers.Real, 0, 2, closed="neither")],
    "beta": [Interval(numbers.Real, 0, None, closed="neither"), StrOptions({"auto"})],
    "beta_max": [Interval(numbers.Real, 0, None, closed="neither")],
    "rho": [Interval(numbers.Real, 1, None, closed="left")],
    "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
    "tol": [Interval(numbers.Real, 0, None, closed="left")],
    "svd": [StrOptions({"auto", "full", "randomized"})],
    "svd_rank": [Interval(numbers.Integral, 1, None, closed="left"), None],
    "random_state": ["random_state"],
    "verbose": ["verbose"],
}


class _CompletionMixin:
    """Fitting shared by every face: scaling, the solver call, fitted attrs."""

    _model = "ocmc"  # "ocmc", "nnm" or "imc"

    def _sides(self):
        return getattr(self, "row_side", None), getattr(self, "col_side", None)

    def _fit_matrix(self, obs, mask, xp):
        """Solve on ``obs``/``mask`` (namespace ``xp``) and set fitted attributes."""
        m, n = obs.shape
        if self.svd_rank is not None and self.svd_rank > min(m, n):
            raise ValueError(
                f"svd_rank={self.svd_rank} exceeds min(m, n)={min(m, n)} of the "
                f"{m} x {n} matrix; use svd_rank <= {min(m, n)} or None."
            )
        n_obs = int(xp.sum(xp.astype(mask, xp.int32)))
        if n_obs == 0:
            raise ValueError(
                "No entry is observed: every entry of the matrix is missing (NaN), "
                "so there is nothing to complete from."
            )
        row_side, col_side = self._sides()
        A, B = _prepare_sides(row_side, col_side, m, n, obs, xp, obs.dtype)
        if self._model == "nnm":
            A = B = None
        # The model is homogeneous of degree one in the data: solve on the
        # observations divided by a power of two near their max-abs (exact)
        # and scale back, so that no square or norm overflows (X * 1e300)
        # or underflows (X * 1e-300) inside the solver.
        unit = _unit_of(obs, xp)
        obs = obs / unit
        lambda_y = getattr(self, "lambda_y", 0.0)
        scores = None
        if lambda_y == "auto":
            lambda_y, scores = self._choose_lambda_y(obs, mask, A, B, xp)
        result, scale = self._solve_data(obs, mask, A, B, lambda_y, n_obs, xp)
        if not result["converged"]:
            warnings.warn(
                f"{type(self).__name__} did not converge in max_iter={self.max_iter} "
                f"iterations (tol={self.tol}); last primal residual "
                f"{result['residuals']['primal'][-1]:.2e}. Increase max_iter or "
                "beta_max, or loosen tol.",
                ConvergenceWarning,
                stacklevel=3,
            )
        X = result["X"]
        with np.errstate(over="ignore"):  # refused just below, with the fix
            completed = X * unit
        if not bool(xp.all(xp.isfinite(completed))):
            raise ValueError(
                f"The completed matrix overflows {completed.dtype} (X's observed "
                f"entries reach {unit:.3g} in magnitude): divide X by a constant "
                "(e.g. its largest absolute value) and multiply the result back."
            )
        self.completed_ = completed
        U, sv, V = result["factors"]
        root = xp.sqrt(sv) * math.sqrt(unit)
        self.row_factors_, self.col_factors_ = U * root, V * root
        self.n_iter_ = result["n_iter"]
        self.converged_ = result["converged"]
        self.residuals_ = result["residuals"]
        self.row_basis_, self.col_basis_ = A, B
        self.scale_ = scale * unit
        nuc = _nuclear(X, xp)
        if self._model == "imc":
            self.complement_ = None
            objective = self.lambda_x * nuc
        elif self._model == "nnm":
            self.complement_ = None
            objective = self.lambda_x * nuc
        else:
            Y = result["Y"]
            self.complement_ = Y * unit
            objective = self.lambda_x * nuc + lambda_y * _nuclear(
                complement(X, A, B), xp
            )
        if self.loss == "squared":
            R = mask * (X - obs)
            objective += float(xp.sum(R * R)) / (2.0 * self.gamma * scale)
        self.objective_ = objective * unit
        self.n_observed_ = n_obs
        if self._model == "ocmc":
            self.lambda_y_ = float(lambda_y)
            self.lambda_y_scores_ = scores
        return self

    def _solve_data(self, obs, mask, A, B, lambda_y, n_obs, xp, tol=None):
        """One solve in the units of the data; returns ``(result, scale)``."""
        m, n = obs.shape
        # The exact model is homogeneous of degree one in the data, so solve on
        # data of unit RMS: the defaults of lambda/beta then suit any scale.
        scale = frobenius(obs, xp) / math.sqrt(n_obs)
        if scale == 0.0:
            scale = 1.0
        if n_obs == m * n and self.loss == "exact":
            # Fully observed and interpolating: the constraint fixes X.
            no_res = {"primal": [], "complement": [], "dual": [], "rank": []}
            result = {
                "X": obs,
                "Y": complement(obs, A, B) if self._model != "imc" else None,
                "n_iter": 0,
                "converged": True,
                "residuals": no_res,
                "nuc_x": None,
                "nuc_y": None,
                "factors": _factors_of(obs, xp),
            }
            if not (self._model == "imc" and (A is not None or B is not None)):
                return result, scale  # (else A Z B^T must still be fitted)
        lam_x, lam_y = self.lambda_x, lambda_y
        force = getattr(self, "_force_complement", False)
        if self.loss == "exact":
            # Larger matrices have larger sampling-noise singular values;
            # growing the (immaterial) weight scale with sqrt(mn) keeps
            # the iterates low rank. The X-step's weight is set to it
            # (lambda_x, or the merged lambda_x + lambda_y without side
            # information), so OCMC's X-step thresholds like NNM's.
            target = _EXACT_WEIGHT_SUM * max(1.0, math.sqrt(m * n) / 100.0)
            merged = self._model == "ocmc" and A is None and B is None
            k = target / (lam_x + (lam_y if merged and not force else 0.0))
            lam_x, lam_y = lam_x * k, lam_y * k
        result = _solve(
            obs / scale,
            mask,
            A,
            B,
            lambda_x=lam_x,
            lambda_y=lam_y,
            loss=self.loss,
            gamma=self.gamma,
            mu=self.mu,
            beta=self.beta,
            beta_max=self.beta_max,
            rho=self.rho,
            max_iter=self.max_iter,
            tol=self.tol if tol is None else tol,
            svd=self.svd,
            svd_rank=self.svd_rank,
            random_state=check_random_state(self.random_state),
            verbose=self.verbose,
            xp=xp,
            lift=self._model == "imc",
            force_complement=force,
            name=type(self).__name__,
        )
        result["X"] = result["X"] * scale
        U, sv, V = result["factors"]
        result["factors"] = (U, sv * scale, V)
        if result["Y"] is not None:
            result["Y"] = result["Y"] * scale
        return result, scale

    def _choose_lambda_y(self, obs, mask, A, B, xp):
        """``lambda_y="auto"``: hold-out validation over observed entries.

        A random ``_AUTO_HOLDOUT`` share of the observed entries is hidden,
        the model is fitted on the rest for ``lambda_y = lambda_x * ratio``
        with the ratios of ``_AUTO_RATIOS`` in increasing order (ratio 0 is
        nuclear-norm completion), and the ratio with the least hold-out
        error wins. The walk stops once the error has risen
        ``_AUTO_PATIENCE`` times in a row past the best (the error is
        unimodal in the ratio in our runs), or at once when it is at most
        ``_AUTO_GOOD`` (the hidden entries are recovered).
        """
        m, n = obs.shape
        if (A is None and B is None) or (
            (A is not None and A.shape[1] == m) or (B is not None and B.shape[1] == n)
        ):
            # The complement block is I or 0: the ratio is immaterial.
            return 0.0, None
        mask_np = to_numpy(mask) > 0
        idx = np.flatnonzero(mask_np)
        n_hold = int(round(_AUTO_HOLDOUT * idx.size))
        if n_hold < 1 or idx.size - n_hold < 1:
            return float(self.lambda_x * _AUTO_FALLBACK_RATIO), None
        rng = check_random_state(self.random_state)
        hold = rng.choice(idx, size=n_hold, replace=False)
        keep_np = mask_np.copy().ravel()
        keep_np[hold] = False
        keep_np = keep_np.reshape(m, n)
        keep = xp.astype(_like(keep_np, obs, xp), obs.dtype)
        obs_np = to_numpy(obs)
        target = obs_np.ravel()[hold]
        norm = max(float(np.linalg.norm(target)), np.finfo(np.float64).tiny)
        scores = {}
        best, rises = None, 0
        with warnings.catch_warnings():
            # The selection fits are auxiliary; the final fit still warns.
            warnings.simplefilter("ignore", ConvergenceWarning)
            for ratio in _AUTO_RATIOS:
                lam = float(self.lambda_x * ratio)
                res, _ = self._solve_data(
                    obs * keep,
                    keep,
                    A,
                    B,
                    lam,
                    int(keep_np.sum()),
                    xp,
                    tol=max(self.tol, _AUTO_TOL),
                )
                pred = to_numpy(res["X"]).ravel()[hold]
                scores[lam] = float(np.linalg.norm(pred - target)) / norm
                if best is None or scores[lam] < scores[best]:
                    best, rises = lam, 0
                    if scores[lam] <= _AUTO_GOOD:
                        break
                else:
                    rises += 1
                    if rises >= _AUTO_PATIENCE:
                        break
        return best, scores


def _unit_of(obs, xp):
    """Power of two ``u`` with ``max|obs| / u`` in [1, 2) (1 when all zero).

    Dividing by a power of two is exact, so the solve on ``obs / u`` is the
    solve on ``obs`` in other units, digit for digit.
    """
    amax = float(xp.max(xp.abs(obs))) if obs.shape[0] * obs.shape[1] else 0.0
    if amax == 0.0:
        return 1.0
    return math.ldexp(1.0, math.frexp(amax)[1] - 1)


def _check_same_namespace(X, est, method):
    """Refuse inputs from another namespace/device than the fit (sklearn's rule)."""
    try:
        from sklearn.utils._array_api import check_same_namespace
    except ImportError:  # pragma: no cover - private helper moved
        return
    check_same_namespace(X, est, attribute="completed_", method=method)


def _factors_of(X, xp):
    """``(U, s, V)`` of ``X`` at its numerical rank (full SVD; small cases)."""
    U, s, Vt = robust_svd(X, xp)
    smax = float(s[0]) if s.shape[0] else 0.0
    r = int(xp.sum(xp.astype(s > max(X.shape) * 1e-15 * smax, xp.int32)))
    return U[:, :r], s[:r], Vt[:r, :].T


def _entries(est, pairs):
    """Values of ``row_factors_ @ col_factors_.T`` at ``(row, col)`` pairs."""
    xp = get_namespace(est.row_factors_)
    rows, cols = pairs[:, 0], pairs[:, 1]
    if not _is_numpy(xp):
        dev = device(est.row_factors_)
        rows, cols = to_device(rows, dev, xp=xp), to_device(cols, dev, xp=xp)
    L = xp.take(est.row_factors_, rows, axis=0)
    R = xp.take(est.col_factors_, cols, axis=0)
    return xp.sum(L * R, axis=1)


def _from_sparse(X, dtype):
    """Observed values and mask (dense m x n) of a scipy sparse matrix.

    Every stored entry is observed, explicit zeros included; entries not
    stored are missing. Duplicates (COO) are averaged, as in
    :class:`OCMCRegressor`.
    """
    C = X.tocoo()
    if C.data.size and not np.all(np.isfinite(C.data)):
        raise ValueError(
            "The sparse matrix stores NaN or infinite values. On sparse input "
            "the stored entries are the observed ones: do not store missing "
            "entries, and store an observed 0 as an explicit zero."
        )
    return _dense_from_entries(C.row, C.col, C.data, C.shape, dtype)


def _dense_from_entries(rows, cols, values, shape, dtype):
    """Dense observed values (``dtype``) and boolean mask of ``shape``.

    Duplicated positions are averaged. The work and the temporaries are
    O(number of entries); the only m x n arrays are the two returned.
    """
    m, n = shape
    flat = np.asarray(rows, dtype=np.int64) * n + np.asarray(cols, dtype=np.int64)
    pos, inverse = np.unique(flat, return_inverse=True)
    # inverse takes every value in 0 .. pos.size - 1: no minlength needed.
    sums = np.bincount(inverse, weights=np.asarray(values, dtype=np.float64))
    counts = np.bincount(inverse)
    obs = np.zeros(m * n, dtype=dtype)
    obs[pos] = sums / counts
    mask = np.zeros(m * n, dtype=bool)
    mask[pos] = True
    return obs.reshape(m, n), mask.reshape(m, n)


def _nuclear(X, xp):
    return float(xp.sum(robust_svd(X, xp, compute_uv=False)))


class _MatrixCompleter(
    _CompletionMixin, OneToOneFeatureMixin, TransformerMixin, BaseEstimator
):
    """Transformer face: the matrix with NaN for missing entries."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.sparse = True
        tags.array_api_support = True
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags

    def _observed(self, X, reset):
        """``(obs, mask_bool, xp)`` of a dense matrix with NaN, or a sparse one."""
        X = validate_data(
            self,
            X,
            ensure_all_finite="allow-nan",
            dtype=("numeric"),
            accept_sparse=("csr", "csc", "coo"),
            copy=False,
            reset=reset,
        )
        if sp.issparse(X):
            obs, mask_b = _from_sparse(X, float_dtype(X))
            return obs, mask_b, np
        xp = get_namespace(X)
        X = xp.astype(X, _float_dtype(xp, X))
        mask_b = ~xp.isnan(X)
        return xp.where(mask_b, X, xp.zeros_like(X)), mask_b, xp

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Complete the matrix ``X`` (NaN marks a missing entry).

        Parameters
        ----------
        X : array-like or scipy sparse matrix of shape (m, n)
            The partially observed matrix: ``NaN`` marks missing entries.
            A scipy sparse matrix lists the observed entries instead: every
            stored entry is observed, **explicit zeros included** (an
            observed 0), and entries not stored are missing (call
            ``X.eliminate_zeros()`` first if your zeros mean "missing");
            duplicate COO entries are averaged.
        y : None
            Ignored.

        Returns
        -------
        self : object
            The fitted estimator; the completed matrix is ``completed_``,
            also as ``row_factors_ @ col_factors_.T``.
        """
        obs, mask_b, xp = self._observed(X, reset=True)
        mask = xp.astype(mask_b, obs.dtype)
        self._fit_matrix(obs, mask, xp)
        # Kept to recognise the fitted matrix in transform (transductive).
        self._fit_mask = mask_b
        self._fit_obs = obs
        return self

    def predict_entries(self, pairs):
        """Values of the completed matrix at ``(row, col)`` pairs.

        Read from the factors (``O(len(pairs) * rank)``), not from
        ``completed_``.

        Parameters
        ----------
        pairs : array-like of shape (n_entries, 2)
            Integer ``(row, col)`` positions.

        Returns
        -------
        values : array of shape (n_entries,)
        """
        check_is_fitted(self)
        pairs = _check_pairs(pairs, self.completed_.shape, name="pairs")
        return _entries(self, pairs)

    def transform(self, X):
        """Return the completed matrix; ``X`` must be the matrix given to ``fit``.

        Completion is transductive: there is no model for rows or columns that
        were not part of the fit.

        Parameters
        ----------
        X : array-like of shape (m, n)
            The matrix passed to ``fit`` (same shape, same missing entries,
            same observed values).

        Returns
        -------
        completed : array of shape (m, n)
            ``completed_``.
        """
        check_is_fitted(self)
        if not sp.issparse(X):
            _check_same_namespace(X, self, "transform")
        obs, mask, xp = self._observed(X, reset=False)
        fit_mask = to_numpy(self._fit_mask)
        same = tuple(obs.shape) == fit_mask.shape
        if same:
            same = np.array_equal(to_numpy(mask), fit_mask) and np.array_equal(
                to_numpy(obs).astype(np.float64),
                to_numpy(self._fit_obs).astype(np.float64),
            )
        xp = get_namespace(self.completed_)
        if not same:
            raise ValueError(
                f"{type(self).__name__}.transform only accepts the matrix it was "
                "fitted on (completion is transductive). To complete new rows or "
                "columns, include them, with their side information, in the "
                "matrix passed to fit (or fit_transform)."
            )
        return xp.asarray(self.completed_, copy=True)

    def fit_transform(self, X, y=None):
        """Fit on ``X`` and return the completed matrix.

        Parameters
        ----------
        X : array-like of shape (m, n)
            The partially observed matrix; ``NaN`` marks missing entries.
        y : None
            Ignored.

        Returns
        -------
        completed : array of shape (m, n)
        """
        self.fit(X)
        xp = get_namespace(self.completed_)
        return xp.asarray(self.completed_, copy=True)


_LAMBDA_Y_DOC = """
    lambda_y : float or "auto", default="auto"
        Weight of ``||(I - P_A) X (I - P_B)||_*``. With ``loss="exact"`` only the
        ratio ``lambda_y / lambda_x`` changes the solution; the scale changes
        only the speed of convergence. ``"auto"`` (ours) chooses it from the
        data by hold-out: 10 % of the observed entries (drawn with
        ``random_state``) are hidden, the model is fitted on the rest with
        ``lambda_y / lambda_x`` in 0, 0.5, 1, 2, 4 (in that order, stopping
        once the hold-out error has risen twice in a row past the best, or
        falls to 1e-3 relative; tolerance ``max(tol, 1e-4)``), and the
        final fit on all entries uses
        the ratio with the least hold-out error. Ratio 0 is nuclear-norm
        completion, so side information that does not help is ignored rather
        than trusted (4, the largest, is the official synthetic setting). Costs
        up to five extra fits. Without side information
        (or when a side spans the whole space) the ratio is immaterial and
        ``lambda_y_`` is 0. With fewer than 5 observed entries: 4, the
        official code's synthetic setting.
"""

_LAMBDA_X_DOC = """
    lambda_x : float, default=1.0
        Weight of ``||X||_*``.
"""

_SHARED_DOC_PARAMS = """    loss : {"exact", "squared"}, default="exact"
        ``"exact"`` interpolates the observed entries (the paper's model);
        ``"squared"`` replaces the constraint by ``||P_Omega(X - R)||^2 /
        (2 gamma s)``, ``s`` the RMS of the observed entries (for noisy data).
    gamma : float, default=1.0
        Data-fit weight of ``loss="squared"`` (larger trusts the data less).
    mu : float in (0, 2), default=1.0
        Step of the linearised X-update, ``eta = mu / ||A||^2`` in units of
        ``1 / beta`` (``||A||^2 = 2`` with side information). ``mu < 1`` is
        the textbook-safe region; the official code uses 1.2.
    beta : float or "auto", default="auto"
        Initial penalty of the augmented Lagrangian. ``"auto"`` (ours) starts
        where the first singular value threshold equals the spectral norm of
        the (scaled) observations, a continuation that keeps the iterates low
        rank on large matrices; the official code starts at 1e-2.
    beta_max : float, default=1e4
        Largest penalty.
    rho : float, default=1.5
        Penalty growth factor, applied while the primal residual exceeds ten
        times the dual residual.
    max_iter : int, default=2000
        Iteration cap.
    tol : float, default=1e-5
        Stop when the relative feasibility residual, the relative complement
        residual and the relative dual residual are all below ``tol``.
    svd : {"auto", "full", "randomized"}, default="auto"
        ``"full"``: a thin SVD per thresholding. ``"randomized"``: a
        truncated SVD by subspace iteration warm started from the previous
        iterate, with the rank grown until every discarded singular value
        is below the threshold or the rank reaches a cap (``max(50,
        min(m, n) // 40)``, doubled whenever the stopping rule is met while
        the cap binds, so the final iterate is an exact SVT). ``"auto"``:
        truncated when ``min(m, n) >= 400``.
    svd_rank : int or None, default=None
        Initial rank of the truncated SVD (``None``: ``max(10, min(m, n) //
        20)``). Must not exceed ``min(m, n)``.
    random_state : int, RandomState instance or None, default=None
        Seeds the random start block of the truncated SVD.
    verbose : int, default=0
        Print residuals every ``50 // verbose`` iterations.
"""


class OCMCCompleter(_MatrixCompleter):
    """Matrix completion with incomplete side information (OCMC).

    Solves ``min ||X||_* + lambda ||(I - P_A) X (I - P_B)||_*`` subject to
    agreement with the observed entries, where ``P_A`` and ``P_B`` project
    onto the spans of the row and column side information. The second term
    asks the part of ``X`` that the side information does not explain to be
    low rank as well, so partial (incomplete) side information helps.

    Parameters
    ----------
    row_side : array-like of shape (m, a) or None, default=None
        Row side information (features of the rows). Any basis: it is
        orthonormalised, and only its span matters. ``None`` or zero columns:
        none.
    col_side : array-like of shape (n, b) or None, default=None
        Column side information, as ``row_side``.
    {lambda_x}
    {lambda_y}
    {params}
    Attributes
    ----------
    completed_ : array of shape (m, n)
        The completed matrix (in the input's namespace and device).
    row_factors_ : array of shape (m, rank)
        ``completed_ = row_factors_ @ col_factors_.T`` (``U sqrt(S)`` of the
        final singular value thresholding).
    col_factors_ : array of shape (n, rank)
        ``V sqrt(S)``.
    lambda_y_ : float
        The ``lambda_y`` used (the chosen one under ``lambda_y="auto"``).
    lambda_y_scores_ : dict or None
        Under ``lambda_y="auto"``: relative hold-out error per ``lambda_y``
        tried; ``None`` when nothing was selected.
    complement_ : array of shape (m, n)
        The solver's ``Y``, the complement block ``(I - P_A) X (I - P_B)``.
    n_iter_ : int
        Iterations run.
    converged_ : bool
        Whether the stopping rule was met before ``max_iter``.
    objective_ : float
        ``lambda_x ||X||_* + lambda_y ||P(X)||_*`` at the solution (plus the
        data term for ``loss="squared"``), in the units of the data.
    residuals_ : dict of lists
        Per-iteration ``"primal"``, ``"complement"``, ``"dual"`` residuals
        and ``"rank"`` of ``X`` (in the scaled problem).
    row_basis_, col_basis_ : array or None
        The orthonormalised side information.
    scale_ : float
        RMS of the observed entries, by which the data were divided.
    n_observed_ : int
        Number of observed entries.
    n_features_in_ : int
        ``n``, the number of columns.

    See Also
    --------
    OCMCRegressor : the same model on the ``(row, col) -> value`` table.
    NuclearNormCompleter : no side information.
    IMCCompleter : perfect side information.

    Notes
    -----
    The model and the linearised ADMM follow the paper and its official MATLAB
    code (``lan-weizhang/OCMC``, solver ``IDMC``). Ours, with reasons:

    * A stopping rule (the official code runs a fixed number of iterations):
      relative feasibility, complement and dual residuals below ``tol``.
    * A residual-balancing penalty schedule (``beta`` grows by ``rho`` while
      the primal residual exceeds ten times the dual one) and a continuation
      start ``beta="auto"``, instead of the code's fixed growth ``1.2`` up to
      ``beta_max=1``: the fixed schedule stalls far from feasibility, or,
      with a large ``beta_max``, freezes ``X`` before it is optimal.
    * The data are divided by the RMS ``s`` of the observed entries before
      solving and the solution multiplied back, and in exact mode the weights
      are rescaled so that the X-step's weight has a size-dependent value
      (the same as :class:`NuclearNormCompleter`'s). The exact model is
      homogeneous and only ``lambda_y / lambda_x`` matters, so this changes
      nothing but the speed, and one set of defaults works for data of any
      scale and size.
    * ``lambda_y="auto"`` (the default) chooses the ratio by hold-out of
      observed entries; the official code fixes it (4 in its synthetic
      script), which loses to plain nuclear-norm completion when the side
      information is noisy and only partly informative.
    * The truncated SVT caps its rank during the iteration (a partial SVT
      in the early, high-rank phase); convergence is only declared on
      uncapped steps.
    * ``mu=1.0`` (the textbook step bound) instead of the code's 1.2.
    * Projectors in low-rank form (``Z - A(A^T Z)``) instead of m x m
      matrices, and an optional truncated SVD.
    * Sparse input is accepted (stored entries are the observed ones), but
      the solver is dense: its iterates and the multiplier of the
      ``Y = P(X)`` constraint are m x n (that multiplier is full rank in
      general), so memory is ``O(mn)`` (about 10 m x n arrays), not
      ``O(nnz + (m + n) r)``.
    * Without side information the two nuclear norms coincide and are solved
      as one (``NuclearNormCompleter`` with weight ``lambda_x + lambda_y``);
      when a side spans the whole space the complement is zero and the
      ``lambda_y`` block is dropped. Both are exact reductions.
    * ``loss="squared"`` (a data-fit term instead of interpolation) is our
      reconstruction: the official code has none.

    Perfect side information does not turn OCMC into inductive matrix
    completion: only the complement block is pushed to zero. Use
    :class:`IMCCompleter` when the side information is known to be exact.

    References
    ----------
    .. [1] G. Chang, W. Zhang and L. Zhang. "Matrix Completion with Incomplete
       Side Information via Orthogonal Complement Projection". ICML 2025,
       PMLR 267:7393-7416.

    Examples
    --------
    >>> from skalgos.completion import OCMCCompleter
    >>> from skalgos.datasets import make_side_info_completion
    >>> M, mask, A, B, R = make_side_info_completion(
    ...     40, 40, rank=3, completeness=0.7, sampling_rate=0.5, random_state=0)
    >>> est = OCMCCompleter(row_side=A, col_side=B)
    >>> X = est.fit_transform(M)
    >>> bool(np.linalg.norm(X - R) / np.linalg.norm(R) < 1e-3)
    True
    """

    _parameter_constraints = {
        "row_side": ["array-like", None],
        "col_side": ["array-like", None],
        "lambda_y": [
            Interval(numbers.Real, 0, None, closed="left"),
            StrOptions({"auto"}),
        ],
        **_SOLVER_CONSTRAINTS,
    }

    def __init__(
        self,
        row_side=None,
        col_side=None,
        *,
        lambda_x=1.0,
        lambda_y="auto",
        loss="exact",
        gamma=1.0,
        mu=1.0,
        beta="auto",
        beta_max=1e4,
        rho=1.5,
        max_iter=2000,
        tol=1e-5,
        svd="auto",
        svd_rank=None,
        random_state=None,
        verbose=0,
    ):
        self.row_side = row_side
        self.col_side = col_side
        self.lambda_x = lambda_x
        self.lambda_y = lambda_y
        self.loss = loss
        self.gamma = gamma
        self.mu = mu
        self.beta = beta
        self.beta_max = beta_max
        self.rho = rho
        self.max_iter = max_iter
        self.tol = tol
        self.svd = svd
        self.svd_rank = svd_rank
        self.random_state = random_state
        self.verbose = verbose


class NuclearNormCompleter(_MatrixCompleter):
    """Nuclear-norm matrix completion (no side information), the OCMC baseline.

    Solves ``min ||X||_*`` subject to agreement with the observed entries
    (or with a squared data-fit term), with the same linearised ADMM as
    :class:`OCMCCompleter`; with one constraint block this is the classic
    singular value thresholding iteration with an increasing penalty.

    Parameters
    ----------
    {lambda_x}
    {params}
    Attributes
    ----------
    completed_ : array of shape (m, n)
        The completed matrix.
    row_factors_ : array of shape (m, rank)
        ``completed_ = row_factors_ @ col_factors_.T``.
    col_factors_ : array of shape (n, rank)
        Column factors.
    complement_ : None
        No complement block (kept for a uniform interface).
    n_iter_ : int
        Iterations run.
    converged_ : bool
        Whether the stopping rule was met.
    objective_ : float
        ``lambda_x ||X||_*`` (plus the data term for ``loss="squared"``).
    residuals_ : dict of lists
        Per-iteration residual histories.
    row_basis_, col_basis_ : None
        No side information.
    scale_ : float
        RMS of the observed entries.
    n_observed_ : int
        Number of observed entries.
    n_features_in_ : int
        Number of columns.

    See Also
    --------
    OCMCCompleter : with (incomplete) side information.

    Notes
    -----
    ``OCMCCompleter`` without side information is this estimator with
    ``lambda_x`` replaced by ``lambda_x + lambda_y``. See
    :class:`OCMCCompleter` for the solver's deviations from the official code.

    References
    ----------
    .. [1] G. Chang, W. Zhang and L. Zhang. "Matrix Completion with Incomplete
       Side Information via Orthogonal Complement Projection". ICML 2025.

    Examples
    --------
    >>> from skalgos.completion import NuclearNormCompleter
    >>> from skalgos.datasets import make_side_info_completion
    >>> M, mask, _, _, R = make_side_info_completion(
    ...     40, 40, rank=2, completeness=0.0, sampling_rate=0.6, random_state=0)
    >>> X = NuclearNormCompleter().fit_transform(M)
    >>> bool(np.linalg.norm(X - R) / np.linalg.norm(R) < 1e-3)
    True
    """

    _model = "nnm"
    _parameter_constraints = dict(_SOLVER_CONSTRAINTS)

    def __init__(
        self,
        *,
        lambda_x=1.0,
        loss="exact",
        gamma=1.0,
        mu=1.0,
        beta="auto",
        beta_max=1e4,
        rho=1.5,
        max_iter=2000,
        tol=1e-5,
        svd="auto",
        svd_rank=None,
        random_state=None,
        verbose=0,
    ):
        self.lambda_x = lambda_x
        self.loss = loss
        self.gamma = gamma
        self.mu = mu
        self.beta = beta
        self.beta_max = beta_max
        self.rho = rho
        self.max_iter = max_iter
        self.tol = tol
        self.svd = svd
        self.svd_rank = svd_rank
        self.random_state = random_state
        self.verbose = verbose


class IMCCompleter(_MatrixCompleter):
    """Inductive matrix completion: ``X = A Z B^T`` with ``||Z||_*`` minimal.

    The baseline that assumes *perfect* side information: the completed
    matrix is restricted to the spans of ``row_side`` and ``col_side``
    (Maxide of Xu, Jin and Zhou with ``loss="squared"``; its interpolating
    form with ``loss="exact"``). Solved by the same linearised ADMM as
    :class:`OCMCCompleter`, on ``Z``.

    Parameters
    ----------
    row_side : array-like of shape (m, a) or None, default=None
        Row side information (``None``: no restriction on the column space).
    col_side : array-like of shape (n, b) or None, default=None
        Column side information (``None``: no restriction on the row space).
    {lambda_x}
    {params}
    Attributes
    ----------
    completed_ : array of shape (m, n)
        ``A Z B^T``.
    row_factors_ : array of shape (m, rank)
        ``completed_ = row_factors_ @ col_factors_.T``.
    col_factors_ : array of shape (n, rank)
        Column factors.
    complement_ : None
        Always zero for IMC (not stored).
    n_iter_ : int
        Iterations run.
    converged_ : bool
        Whether the stopping rule was met.
    objective_ : float
        ``lambda_x ||Z||_*`` (plus the data term for ``loss="squared"``).
    residuals_ : dict of lists
        Per-iteration residual histories.
    row_basis_, col_basis_ : array or None
        The orthonormalised side information.
    scale_ : float
        RMS of the observed entries.
    n_observed_ : int
        Number of observed entries.
    n_features_in_ : int
        Number of columns.

    Notes
    -----
    With incomplete side information IMC cannot fit what the side
    information misses: its error is at least ``||R - P_A R P_B|| / ||R||``.
    In exact mode the constraints are then infeasible and the iteration
    ends at ``max_iter`` with a :class:`~sklearn.exceptions.ConvergenceWarning`;
    use ``loss="squared"`` there.

    References
    ----------
    .. [1] M. Xu, R. Jin and Z.-H. Zhou. "Speedup Matrix Completion with Side
       Information: Application to Multi-Label Learning". NeurIPS 2013.

    Examples
    --------
    >>> from skalgos.completion import IMCCompleter
    >>> from skalgos.datasets import make_side_info_completion
    >>> M, mask, A, B, R = make_side_info_completion(
    ...     40, 40, rank=3, completeness=1.0, sampling_rate=0.1, random_state=0)
    >>> X = IMCCompleter(row_side=A, col_side=B).fit_transform(M)
    >>> bool(np.linalg.norm(X - R) / np.linalg.norm(R) < 1e-3)
    True
    """

    _model = "imc"
    _parameter_constraints = {
        "row_side": ["array-like", None],
        "col_side": ["array-like", None],
        **_SOLVER_CONSTRAINTS,
    }

    def __init__(
        self,
        row_side=None,
        col_side=None,
        *,
        lambda_x=1.0,
        loss="exact",
        gamma=1.0,
        mu=1.0,
        beta="auto",
        beta_max=1e4,
        rho=1.5,
        max_iter=2000,
        tol=1e-5,
        svd="auto",
        svd_rank=None,
        random_state=None,
        verbose=0,
    ):
        self.row_side = row_side
        self.col_side = col_side
        self.lambda_x = lambda_x
        self.loss = loss
        self.gamma = gamma
        self.mu = mu
        self.beta = beta
        self.beta_max = beta_max
        self.rho = rho
        self.max_iter = max_iter
        self.tol = tol
        self.svd = svd
        self.svd_rank = svd_rank
        self.random_state = random_state
        self.verbose = verbose


def _check_pairs(X, shape, name="X"):
    """``(row, col)`` integer pairs as an int64 NumPy array of shape (k, 2)."""
    Xn = to_numpy(X)
    if Xn.ndim != 2 or Xn.shape[1] != 2:
        raise ValueError(
            f"{name} must be an array of (row, col) index pairs, of shape "
            f"(n_entries, 2); got shape {Xn.shape}."
        )
    if Xn.dtype.kind == "f":
        if not np.all(np.isfinite(Xn)) or not np.array_equal(Xn, np.round(Xn)):
            raise ValueError(
                f"{name} must hold integer (row, col) indices; got non-integer "
                "values. Pass the positions of the entries, not their features."
            )
    elif Xn.dtype.kind not in "iub":
        raise TypeError(f"{name} must be an integer array of (row, col) pairs.")
    Xn = Xn.astype(np.int64)
    if Xn.size and Xn.min() < 0:
        raise ValueError(f"{name} holds negative indices; indices start at 0.")
    if shape is not None and Xn.size:
        if Xn[:, 0].max() >= shape[0] or Xn[:, 1].max() >= shape[1]:
            raise ValueError(
                f"{name} holds indices outside the {shape[0]} x {shape[1]} matrix "
                f"(max row {Xn[:, 0].max()}, max col {Xn[:, 1].max()}); set shape= "
                "or pass side information with one row per matrix row/column."
            )
    return Xn


def _side_rows(S):
    if S is None:
        return None
    return int(S.shape[0]) if hasattr(S, "shape") else len(S)


class OCMCRegressor(_CompletionMixin, RegressorMixin, BaseEstimator):
    """OCMC on the entry table: ``(row, col)`` pairs in, entry values out.

    The same model and solver as :class:`OCMCCompleter`, shaped as a
    regressor so that scikit-learn's model selection works on observed
    entries: ``KFold`` over the rows of ``X`` is hold-out-entry validation,
    and ``GridSearchCV`` tunes ``lambda_y`` (or any other parameter).

    Parameters
    ----------
    shape : tuple of two ints or None, default=None
        ``(m, n)`` of the matrix. ``None``: taken from the side-information
        row counts, else from the largest index seen in ``fit`` plus one.
    row_side : array-like of shape (m, a) or None, default=None
        Row side information (any basis; only its span matters). A
        constructor parameter, so ``clone`` and ``GridSearchCV`` carry it
        unsliced.
    col_side : array-like of shape (n, b) or None, default=None
        Column side information.
    {lambda_x}
    {lambda_y}
    {params}
    Attributes
    ----------
    completed_ : array of shape (m, n)
        The completed matrix.
    row_factors_ : array of shape (m, rank)
        ``completed_ = row_factors_ @ col_factors_.T`` (``U sqrt(S)`` of the
        final singular value thresholding).
    col_factors_ : array of shape (n, rank)
        ``V sqrt(S)``.
    lambda_y_ : float
        The ``lambda_y`` used (the chosen one under ``lambda_y="auto"``).
    lambda_y_scores_ : dict or None
        Under ``lambda_y="auto"``: relative hold-out error per ``lambda_y``
        tried; ``None`` when nothing was selected.
    complement_ : array of shape (m, n)
        The complement block ``Y``.
    shape_ : tuple
        ``(m, n)`` used.
    n_iter_, converged_, objective_, residuals_, row_basis_, col_basis_, \
scale_, n_observed_ :
        As in :class:`OCMCCompleter`.
    n_features_in_ : int
        Always 2.

    See Also
    --------
    OCMCCompleter : the transformer face.

    Notes
    -----
    Repeated ``(row, col)`` pairs in ``fit`` are averaged. ``predict`` reads
    ``completed_`` at any pairs inside ``shape_``. ``score`` is R^2; for
    cross-validation ``scoring="neg_root_mean_squared_error"`` is usual.
    See :class:`OCMCCompleter` for the deviations from the paper.

    References
    ----------
    .. [1] G. Chang, W. Zhang and L. Zhang. "Matrix Completion with Incomplete
       Side Information via Orthogonal Complement Projection". ICML 2025.

    Examples
    --------
    >>> from skalgos.completion import OCMCRegressor
    >>> from skalgos.datasets import make_side_info_completion
    >>> M, mask, A, B, R = make_side_info_completion(
    ...     30, 30, rank=2, completeness=0.5, sampling_rate=0.6, random_state=0)
    >>> pairs = np.argwhere(mask)
    >>> reg = OCMCRegressor(row_side=A, col_side=B).fit(pairs, M[mask])
    >>> hidden = np.argwhere(~mask)
    >>> err = reg.predict(hidden) - R[~mask]
    >>> bool(np.abs(err).max() < 1e-3)
    True
    """

    _parameter_constraints = {
        "shape": [tuple, None],
        "row_side": ["array-like", None],
        "col_side": ["array-like", None],
        "lambda_y": [
            Interval(numbers.Real, 0, None, closed="left"),
            StrOptions({"auto"}),
        ],
        **_SOLVER_CONSTRAINTS,
    }

    def __init__(
        self,
        shape=None,
        row_side=None,
        col_side=None,
        *,
        lambda_x=1.0,
        lambda_y="auto",
        loss="exact",
        gamma=1.0,
        mu=1.0,
        beta="auto",
        beta_max=1e4,
        rho=1.5,
        max_iter=2000,
        tol=1e-5,
        svd="auto",
        svd_rank=None,
        random_state=None,
        verbose=0,
    ):
        self.shape = shape
        self.row_side = row_side
        self.col_side = col_side
        self.lambda_x = lambda_x
        self.lambda_y = lambda_y
        self.loss = loss
        self.gamma = gamma
        self.mu = mu
        self.beta = beta
        self.beta_max = beta_max
        self.rho = rho
        self.max_iter = max_iter
        self.tol = tol
        self.svd = svd
        self.svd_rank = svd_rank
        self.random_state = random_state
        self.verbose = verbose

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.array_api_support = True
        tags.input_tags.positive_only = True  # X holds indices
        return tags

    def _resolve_shape(self, pairs):
        if self.shape is not None:
            if len(self.shape) != 2 or not all(
                isinstance(s, numbers.Integral) and s > 0 for s in self.shape
            ):
                raise ValueError(
                    f"shape must be a pair of positive ints (m, n); got {self.shape}."
                )
            return (int(self.shape[0]), int(self.shape[1]))
        m, n = _side_rows(self.row_side), _side_rows(self.col_side)
        if m is None:
            m = int(pairs[:, 0].max()) + 1 if pairs.size else 0
        if n is None:
            n = int(pairs[:, 1].max()) + 1 if pairs.size else 0
        return (m, n)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit on observed entries: ``y[k]`` is the value at ``X[k] = (i, j)``.

        Parameters
        ----------
        X : array-like of shape (n_entries, 2)
            Integer ``(row, col)`` positions of the observed entries.
        y : array-like of shape (n_entries,)
            Their values.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        X, y = validate_data(self, X, y, dtype=None, y_numeric=True)
        xp = get_namespace(X, y)
        pairs = _check_pairs(X, None)
        shape = self._resolve_shape(pairs)
        pairs = _check_pairs(X, shape)
        yn = to_numpy(y).astype(np.float64).ravel()
        dtype = _float_dtype(xp, y)
        obs_np, mask_np = _dense_from_entries(
            pairs[:, 0],
            pairs[:, 1],
            yn,
            shape,
            dtype if _is_numpy(xp) else np.float64,
        )
        if _is_numpy(xp):
            obs, mask = obs_np, mask_np.astype(dtype)
        else:
            dev = device(X)
            obs = xp.astype(to_device(obs_np, dev, xp=xp), dtype)
            mask = xp.astype(to_device(mask_np.astype(np.float64), dev, xp=xp), dtype)
        self.shape_ = shape
        self._fit_matrix(obs, mask, xp)
        return self

    def predict(self, X):
        """Values of the completed matrix at ``(row, col)`` pairs.

        Parameters
        ----------
        X : array-like of shape (n_entries, 2)
            Integer ``(row, col)`` positions.

        Returns
        -------
        y : array of shape (n_entries,)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=None, reset=False)
        _check_same_namespace(X, self, "predict")
        pairs = _check_pairs(X, self.shape_)
        return _entries(self, pairs)


for _cls in (OCMCCompleter, NuclearNormCompleter, IMCCompleter, OCMCRegressor):
    _cls.__doc__ = _cls.__doc__.replace("{lambda_x}", _LAMBDA_X_DOC.strip())
    _cls.__doc__ = _cls.__doc__.replace("{params}", _SHARED_DOC_PARAMS.strip())
    _cls.__doc__ = _cls.__doc__.replace("{lambda_y}", _LAMBDA_Y_DOC.strip())


def ocmc_complete(
    M,
    row_side=None,
    col_side=None,
    *,
    lambda_x=1.0,
    lambda_y="auto",
    return_estimator=False,
    **params,
):
    """Complete ``M`` (NaN = missing) with OCMC; the function form.

    Parameters
    ----------
    M : array-like of shape (m, n)
        The partially observed matrix.
    row_side, col_side : array-like or None
        Side information, as in :class:`OCMCCompleter`.
    lambda_x, lambda_y : float
        Weights of the two nuclear norms.
    return_estimator : bool, default=False
        Also return the fitted :class:`OCMCCompleter`.
    **params
        Any other :class:`OCMCCompleter` parameter.

    Returns
    -------
    completed : array of shape (m, n)
    estimator : OCMCCompleter
        Only with ``return_estimator=True``.

    Examples
    --------
    >>> from skalgos.completion import ocmc_complete
    >>> M = np.outer([1.0, 2.0, 3.0], [1.0, 1.0, 2.0])
    >>> M[0, 2] = np.nan
    >>> X = ocmc_complete(M)
    >>> round(float(X[0, 2]), 4)
    2.0
    """
    est = OCMCCompleter(
        row_side=row_side,
        col_side=col_side,
        lambda_x=lambda_x,
        lambda_y=lambda_y,
        **params,
    )
    X = est.fit_transform(M)
    return (X, est) if return_estimator else X
