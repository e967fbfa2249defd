"""Short reference implementations of two completion baselines, for ocmc.py.

No maintained package installs cleanly with numpy 2 for either (fancyimpute
pins an old cvxpy/TensorFlow stack; DirtyIMC has no Python package), so both
are written here from their papers' update rules, in a few lines each.

* SoftImpute (Mazumder, Hastie and Tibshirani, JMLR 2010): ``Z <- SVT_lam(
  P_Omega(M) + P_Omega^perp(Z))`` along a decreasing ``lam`` path with warm
  starts, the final ``lam`` a small fraction of the first (noiseless data).
* DirtyIMC (Chiang, Hsieh and Dhillon, NeurIPS 2015): ``X = A W B^T + N``,
  ``min 1/2 ||P_Omega(X - M)||^2 + lam_W ||W||_* + lam_N ||N||_*`` by
  accelerated proximal gradient (step 1/2, the Lipschitz constant of the
  stacked map), along a decreasing path of ``(lam_W, lam_N)``.
"""

import numpy as np
from sklearn.utils.extmath import randomized_svd


def _svt(Z, tau, max_rank=None, rng=0):
    if max_rank is None or max_rank >= min(Z.shape) // 2:
        U, s, Vt = np.linalg.svd(Z, full_matrices=False)
    else:
        U, s, Vt = randomized_svd(Z, max_rank, n_iter=2, random_state=rng)
    s = np.maximum(s - tau, 0.0)
    r = int(np.sum(s > 0))
    return (U[:, :r] * s[:r]) @ Vt[:r]


def soft_impute(
    M, n_lambdas=12, ratio=1e-4, max_iter=100, tol=1e-5, max_rank=None, total=None
):
    """SoftImpute on ``M`` (NaN = missing) along a geometric ``lam`` path.

    ``max_rank``: rank of the randomized SVD (``None``: full SVD), the
    ``rank.max`` of the R package. ``total`` caps the iterations over the
    whole path (``None``: ``n_lambdas * max_iter``).
    """
    mask = ~np.isnan(M)
    obs = np.where(mask, M, 0.0)
    lam_max = (
        np.linalg.norm(obs, 2)
        if max_rank is None
        else randomized_svd(obs, 1, random_state=0)[1][0]
    )
    Z = np.zeros_like(obs)
    budget = n_lambdas * max_iter if total is None else total
    for lam in lam_max * np.geomspace(0.9, ratio, n_lambdas):
        for _ in range(max_iter):
            if budget <= 0:
                return Z
            budget -= 1
            Z_new = _svt(np.where(mask, obs, Z), lam, max_rank)
            change = np.linalg.norm(Z_new - Z) / max(np.linalg.norm(Z), 1e-300)
            Z = Z_new
            if change < tol:
                break
    return Z


def dirty_imc(
    M, A, B, weight_ratio=1.0, n_lambdas=12, ratio=1e-4, max_iter=200, tol=1e-6
):
    """DirtyIMC on ``M`` (NaN = missing) with orthonormal sides ``A``, ``B``.

    ``lam_W = weight_ratio * lam_N``; the path runs ``lam_N`` from the
    largest useful value down to ``ratio`` times it.
    """
    mask = ~np.isnan(M)
    obs = np.where(mask, M, 0.0)
    W = np.zeros((A.shape[1], B.shape[1]))
    N = np.zeros_like(obs)
    Wy, Ny, t = W.copy(), N.copy(), 1.0
    lam_max = np.linalg.norm(obs, 2)
    step = 0.5
    for lam in lam_max * np.geomspace(0.9, ratio, n_lambdas):
        for _ in range(max_iter):
            G = mask * (A @ Wy @ B.T + Ny - obs)
            W_new = _svt(Wy - step * (A.T @ G @ B), step * weight_ratio * lam)
            N_new = _svt(Ny - step * G, step * lam)
            t_new = (1 + np.sqrt(1 + 4 * t * t)) / 2
            Wy = W_new + (t - 1) / t_new * (W_new - W)
            Ny = N_new + (t - 1) / t_new * (N_new - N)
            change = np.linalg.norm(N_new - N) + np.linalg.norm(W_new - W)
            scale = max(np.linalg.norm(N) + np.linalg.norm(W), 1e-300)
            W, N, t = W_new, N_new, t_new
            if change / scale < tol:
                break
        t = 1.0  # restart the momentum at each path point
        Wy, Ny = W.copy(), N.copy()
    return A @ W @ B.T + N


def soft_impute_heldout(
    M, n_lambdas=10, ratio=1e-2, max_iter=30, tol=1e-3, max_rank=30, holdout=0.1, seed=0
):
    """SoftImpute for noisy data as its users run it (ours, not fancyimpute).

    Columns centred by their observed means (and added back), the
    ``lam`` path ``lam_max * geomspace(0.9, ratio)`` with warm starts, ``lam``
    chosen by RMSE on ``holdout`` of the observed entries, then the path rerun
    on all entries down to the chosen ``lam``. Dense iterates, randomized SVD of
    rank ``max_rank``. No row/column biases beyond the column means.
    """
    mask = ~np.isnan(M)
    cm = np.nanmean(np.where(mask.any(0), M, 0.0), axis=0)
    cm = np.where(np.isnan(cm), 0.0, cm)
    C = M - cm
    obs = np.where(mask, C, 0.0)
    k = min(max_rank, min(M.shape) - 1)
    lam_max = randomized_svd(obs, 1, random_state=0)[1][0]
    path = lam_max * np.geomspace(0.9, ratio, n_lambdas)

    def run(msk, lams):
        Z = np.zeros_like(obs)
        out = []
        for lam in lams:
            for _ in range(max_iter):
                Z_new = _svt(np.where(msk, obs, Z), lam, k)
                change = np.linalg.norm(Z_new - Z) / max(np.linalg.norm(Z), 1e-300)
                Z = Z_new
                if change < tol:
                    break
            out.append(Z)
        return out

    rng = np.random.default_rng(seed)
    hold = mask & (rng.random(M.shape) < holdout)
    errs = [
        np.sqrt(np.mean((Z[hold] - obs[hold]) ** 2)) for Z in run(mask & ~hold, path)
    ]
    best = int(np.argmin(errs))
    return run(mask, path[: best + 1])[-1] + cm


def run_capped(f, cap):
    """``f()`` in a forked child, given up after ``cap`` wall seconds.

    Returns ``(result, seconds)``, or ``(None, cap)`` when the child had not
    finished by then (it is terminated): a capped bound, for baselines such as
    IterativeImputer on ~1,300 columns. ``cap=None`` runs ``f`` here.
    """
    import multiprocessing as mp
    import time

    t = time.perf_counter()
    if cap is None:
        return f(), time.perf_counter() - t
    ctx = mp.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)

    def target():
        child.send(f())
        child.close()

    proc = ctx.Process(target=target, daemon=True)
    proc.start()
    out = parent.recv() if parent.poll(cap) else None
    proc.join(1 if out is None else None)
    if proc.is_alive():
        proc.terminate()
        proc.join()
    return out, (cap if out is None else time.perf_counter() - t)
