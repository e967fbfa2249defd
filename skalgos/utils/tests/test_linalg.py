"""robust_svd: the LAPACK fallback shared by the families (issue 39, item 1)."""

import numpy as np
import pytest

from skalgos.utils._linalg import robust_svd


class _FailingLinalg:
    """A namespace whose gesdd-backed SVD never converges."""

    class linalg:
        @staticmethod
        def svd(Z, full_matrices=False):
            raise np.linalg.LinAlgError("SVD did not converge")

        @staticmethod
        def svdvals(Z):
            raise np.linalg.LinAlgError("SVD did not converge")


@pytest.mark.parametrize("scale", [1.0, 1e150])
def test_robust_svd_falls_back_to_gesvd(scale):
    # where gesdd fails (3 of 10 runs of one OCMC fit with over-complete side
    # information, threaded BLAS), the QR-iteration driver gives the same SVD
    rng = np.random.default_rng(0)
    Z = scale * rng.normal(size=(40, 25))
    U, s, Vt = robust_svd(Z, _FailingLinalg)
    np.testing.assert_allclose(s, np.linalg.svd(Z, compute_uv=False), rtol=1e-12)
    np.testing.assert_allclose(U * s @ Vt, Z, rtol=1e-10, atol=1e-10 * scale)
    np.testing.assert_allclose(
        robust_svd(Z, _FailingLinalg, compute_uv=False), s, rtol=1e-12
    )


def test_robust_svd_non_numpy_input_reraises():
    class Other:
        size = 1

    with pytest.raises(np.linalg.LinAlgError):
        robust_svd(Other(), _FailingLinalg)


def test_robust_svd_non_finite_input_is_a_clear_error():
    Z = np.ones((4, 3))
    Z[0, 0] = np.inf
    with pytest.raises(ValueError, match="NaN or infinite"):
        robust_svd(Z, _FailingLinalg)
