"""Deterministic, robust dense linear algebra shared by the families.

LAPACK's divide-and-conquer SVD (``gesdd``, NumPy's driver) can report "SVD
did not converge" on inputs that the QR-iteration driver (``gesvd``) handles,
and under a threaded BLAS whether it does so can change from run to run on the
same input (issue 39). :func:`robust_svd` falls back to ``gesvd`` (then to
``gesvd`` on the matrix scaled to unit max-norm) so a fit never fails on one
run and succeeds on the next.
"""

import numpy as np

__all__ = ["robust_svd"]


def robust_svd(Z, xp, compute_uv=True):
    """Thin SVD that does not fail where LAPACK's divide and conquer does.

    ``gesdd`` (NumPy's driver) can report "SVD did not converge" on an input
    that the QR-iteration driver ``gesvd`` handles, and under a threaded BLAS
    whether it does so changes from run to run on the same input (issue 39:
    3 of 10 runs of one OCMC fit). A NumPy input retries with ``gesvd``, then
    with ``gesvd`` on the matrix scaled to unit max-norm; other namespaces
    (CuPy, torch) use their own driver.

    Parameters
    ----------
    Z : array of shape (m, n)
    xp : namespace
        The array namespace of ``Z`` (``numpy`` or an array-API namespace).
    compute_uv : bool, default=True
        Return ``(U, s, Vt)``; else the singular values only.

    Returns
    -------
    (U, s, Vt) or s
        Thin SVD, singular values in decreasing order.

    Raises
    ------
    ValueError
        When ``Z`` holds NaN or infinite values, or when neither driver
        converges (also on the rescaled matrix).
    """
    try:
        if compute_uv:
            return xp.linalg.svd(Z, full_matrices=False)
        return xp.linalg.svdvals(Z)
    except np.linalg.LinAlgError:
        if not isinstance(Z, np.ndarray):
            raise
    import scipy.linalg

    if not np.all(np.isfinite(Z)):
        raise ValueError(
            "The matrix to decompose holds NaN or infinite values (an overflow "
            "upstream): scale the input (e.g. StandardScaler) so that its "
            "entries stay far below the float64 limit of 1.8e308."
        )
    scale = float(np.max(np.abs(Z))) if Z.size else 1.0
    scale = scale if scale > 0 else 1.0
    for factor in (1.0, scale):
        try:
            out = scipy.linalg.svd(
                Z / factor,
                full_matrices=False,
                compute_uv=compute_uv,
                lapack_driver="gesvd",
                check_finite=False,
            )
        except np.linalg.LinAlgError:
            continue
        if compute_uv:
            U, sv, Vt = out
            return U, sv * factor, Vt
        return out * factor
    raise ValueError(
        "SVD did not converge with LAPACK's gesdd nor gesvd (also after "
        "rescaling): the matrix has entries of extreme magnitude; scale the "
        "input (e.g. StandardScaler) or check it for near-overflow values."
    )
