import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from skalgos.torch.linalg import (  # noqa: E402
    conv2d_norm,
    dualize_conv2d,
    dualize_embed,
    dualize_linear,
    dualize_vector,
    embed_norm,
    linear_norm,
    newton_schulz,
    polar,
)


def _with_spectrum(m, n, s, seed=0, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    U, _ = torch.linalg.qr(torch.randn(m, min(m, n), generator=g, dtype=torch.float64))
    V, _ = torch.linalg.qr(torch.randn(n, min(m, n), generator=g, dtype=torch.float64))
    return (U * torch.as_tensor(s, dtype=torch.float64)) @ V.T, (U @ V.T)


@pytest.mark.parametrize("shape", [(64, 32), (32, 64), (100, 100)])
def test_muon_coefficients_band_and_direction(shape):
    m, n = shape
    s = np.linspace(1.0, 10.0, min(m, n))
    G, UV = _with_spectrum(m, n, s)
    X = newton_schulz(G.float())
    assert X.dtype == torch.float32 and X.shape == G.shape
    sv = torch.linalg.svdvals(X.double())
    # Muon's 5-step quintic does not converge; it maps the normalized spectrum
    # (here >= 0.01) into about [0.68, 1.14].
    assert sv.min() >= 0.68 and sv.max() <= 1.14
    cos = (X.double() * UV).sum() / (X.double().norm() * UV.norm())
    assert cos >= 0.97


@pytest.mark.parametrize("coefficients", ["cubic", "quintic"])
def test_convergent_iterations_reach_polar_factor(coefficients):
    G, UV = _with_spectrum(48, 24, np.linspace(1.0, 10.0, 24), seed=1)
    X = newton_schulz(G, steps=40, coefficients=coefficients)
    assert X.dtype == torch.float64
    assert torch.linalg.matrix_norm(X - UV) / torch.linalg.matrix_norm(UV) < 1e-6


def test_per_step_coefficient_table():
    G, UV = _with_spectrum(20, 10, np.linspace(1.0, 3.0, 10), seed=2)
    table = [(1.5, -0.5, 0.0)] * 30
    assert torch.allclose(
        newton_schulz(G, coefficients=table), newton_schulz(G, 30, "cubic")
    )
    with pytest.raises(ValueError, match="coefficients"):
        newton_schulz(G, coefficients="nope")


def test_scale_and_transpose_invariance():
    g = torch.Generator().manual_seed(3)
    G = torch.randn(40, 24, generator=g)
    X = newton_schulz(G)
    for c in (1e-3, 0.5, 7.0, 1e3):
        assert torch.allclose(newton_schulz(c * G), X, atol=2e-5)
    assert torch.allclose(newton_schulz(G.T), X.T, atol=1e-6)


def test_batched_equals_loop():
    G = torch.randn(3, 16, 8, generator=torch.Generator().manual_seed(4))
    X = newton_schulz(G)
    for i in range(3):
        assert torch.allclose(X[i], newton_schulz(G[i]), atol=1e-6)


def test_newton_schulz_rejects_vectors():
    with pytest.raises(ValueError, match="matrix"):
        newton_schulz(torch.ones(5))


def test_polar_is_orthogonal_and_matches_shampoo_identity():
    G = torch.randn(
        12, 12, generator=torch.Generator().manual_seed(5), dtype=torch.float64
    )
    Q = polar(G)
    assert torch.allclose(Q.T @ Q, torch.eye(12, dtype=torch.float64), atol=1e-12)

    def inv_quarter(A):
        w, V = torch.linalg.eigh(A)
        return (V * w.pow(-0.25)) @ V.T

    # One-shot Shampoo (G G^T)^{-1/4} G (G^T G)^{-1/4} is the polar factor.
    shampoo = inv_quarter(G @ G.T) @ G @ inv_quarter(G.T @ G)
    assert torch.allclose(shampoo, Q, atol=1e-9)


@pytest.mark.parametrize("shape", [(16, 8), (8, 16)])
def test_dualize_linear_is_unit_norm_steepest_direction(shape):
    g = torch.Generator().manual_seed(6)
    G = torch.randn(*shape, generator=g, dtype=torch.float64)
    D = dualize_linear(G)
    d_out, d_in = shape
    assert math.isclose(float(linear_norm(D)), 1.0, rel_tol=1e-10)
    nuclear = torch.linalg.matrix_norm(G, ord="nuc")
    assert math.isclose(
        float((G * D).sum()), math.sqrt(d_out / d_in) * float(nuclear), rel_tol=1e-10
    )
    for _ in range(20):  # no unit-norm direction does better
        T = torch.randn(*shape, generator=g, dtype=torch.float64)
        T = T / linear_norm(T)
        assert (G * T).sum() <= (G * D).sum() + 1e-12
    D_ns = dualize_linear(G, method="newton_schulz", steps=40, coefficients="cubic")
    assert torch.allclose(D_ns, D, atol=1e-6)


def test_dualize_embed_rows_unit_rms_and_zero_rows_stay():
    g = torch.Generator().manual_seed(7)
    G = torch.randn(10, 6, generator=g, dtype=torch.float64)
    G[[2, 5]] = 0.0
    D = dualize_embed(G)
    rms = D.pow(2).mean(dim=1).sqrt()
    nz = torch.ones(10, dtype=torch.bool)
    nz[[2, 5]] = False
    assert torch.allclose(rms[nz], torch.ones(8, dtype=torch.float64))
    assert torch.all(D[~nz] == 0)
    assert math.isclose(float(embed_norm(D)), 1.0, rel_tol=1e-12)
    for _ in range(20):
        T = torch.randn(10, 6, generator=g, dtype=torch.float64)
        T = T / embed_norm(T)
        assert (G * T).sum() <= (G * D).sum() + 1e-12


@pytest.mark.parametrize("mode", ["per_slice", "flatten"])
def test_dualize_conv2d_unit_norm(mode):
    g = torch.Generator().manual_seed(8)
    G = torch.randn(6, 4, 3, 3, generator=g, dtype=torch.float64)
    D = dualize_conv2d(G, mode=mode)
    assert D.shape == G.shape
    if mode == "per_slice":
        assert math.isclose(float(conv2d_norm(D)), 1.0, rel_tol=1e-10)
        for _ in range(20):
            T = torch.randn(6, 4, 3, 3, generator=g, dtype=torch.float64)
            T = T / conv2d_norm(T)
            assert (G * T).sum() <= (G * D).sum() + 1e-12
    else:
        assert math.isclose(float(linear_norm(D.reshape(6, -1))), 1.0, rel_tol=1e-10)
    with pytest.raises(ValueError, match="mode"):
        dualize_conv2d(G, mode="bad")


def test_dualize_vector():
    v = torch.tensor([3.0, 4.0, 0.0, 0.0], dtype=torch.float64)
    d = dualize_vector(v)
    assert torch.allclose(
        d, torch.tensor([0.6, 0.8, 0.0, 0.0], dtype=torch.float64) * 2
    )
    assert torch.all(dualize_vector(torch.zeros(3)) == 0)
