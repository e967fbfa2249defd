"""Basis providers and group actions: orthonormality and representation oracles."""

import math

import numpy as np
import pytest
from scipy.special import eval_gegenbauer

from skalgos.kernel_ridge import (
    CyclicGroup,
    FiniteGroup,
    PermutationGroup,
    ProductBasis,
    SignFlipGroup,
    SphereHarmonics,
    TorusFourier,
)
from skalgos.kernel_ridge._bases import harmonic_dimension


def _zonal(k, d, t):
    """Reproducing kernel of degree-k harmonics (normalised measure)."""
    if d == 2:
        return (
            np.ones_like(t) if k == 0 else 2 * np.cos(k * np.arccos(np.clip(t, -1, 1)))
        )
    a = (d - 2) / 2
    return (
        harmonic_dimension(k, d) * eval_gegenbauer(k, a, t) / eval_gegenbauer(k, a, 1.0)
    )


@pytest.mark.parametrize("d, K", [(2, 6), (3, 6), (5, 5), (6, 4)])
def test_sphere_addition_theorem(d, K):
    # sum_l phi_l(x) phi_l(y) = Z_k(x.y) holds iff the functions of degree k are an
    # orthonormal basis of the degree-k harmonics.
    basis = SphereHarmonics(d, K)
    rng = np.random.default_rng(d)
    X, Y = basis.sample(9, rng), basis.sample(7, rng)
    F, G = basis.evaluate(X), basis.evaluate(Y)
    spaces = basis.eigenspaces()
    assert len(spaces) == K + 1
    for k, (s, e, lam) in enumerate(spaces):
        assert e - s == harmonic_dimension(k, d)
        assert lam == k * (k + d - 2)
        np.testing.assert_allclose(
            F[:, s:e] @ G[:, s:e].T, _zonal(k, d, X @ Y.T), rtol=0, atol=1e-10
        )
    # total count: polynomials of degree K and K-1 restricted to the sphere
    assert basis.n_functions == math.comb(K + d - 1, d - 1) + math.comb(
        K + d - 2, d - 1
    )


def test_torus_orthonormal_on_exact_grid():
    # A uniform grid with more than 2 L points per axis integrates trigonometric
    # polynomials of degree <= 2 L exactly, so the Gram matrix must be I.
    basis = TorusFourier(2, max_frequency=2.3, period=3.0)
    g = (np.arange(8) / 8 - 0.5) * 3.0
    X = np.array([(a, b) for a in g for b in g])
    F = basis.evaluate(X)
    np.testing.assert_allclose(F.T @ F / len(X), np.eye(basis.n_functions), atol=1e-12)
    freqs = basis._built()[1]
    assert (freqs**2).sum(axis=1).max() <= 2.3**2
    w = 2 * np.pi / 3.0
    np.testing.assert_allclose(basis.eigenvalues, w**2 * (freqs**2).sum(axis=1))


def test_torus_kernel_matches_direct_formula():
    basis = TorusFourier(3, max_frequency=3)
    lam, freqs, trig, L, omega = basis._built()
    X = np.random.default_rng(0).uniform(-5, 5, size=(6, 3))
    F = basis.evaluate(X)
    ref = np.ones_like(F)
    for f in range(freqs.shape[0]):
        for j in range(3):
            m = freqs[f, j]
            if m:
                fun = np.sin if trig[f, j] else np.cos
                ref[:, f] *= np.sqrt(2) * fun(omega * m * X[:, j])
    np.testing.assert_allclose(F, ref, atol=1e-12)


def _check_representation(basis, group, n_pairs=6):
    els = group.elements()
    D = basis.actions(els)
    rng = np.random.default_rng(0)
    X = basis.sample(5, rng)
    F = basis.evaluate(X)
    spaces = basis.eigenspaces()
    for e_idx in rng.choice(len(els), size=min(n_pairs, len(els)), replace=False):
        A, b = els[e_idx]
        Fg = basis.evaluate(X @ A.T + b)
        for k, (s, e, _) in enumerate(spaces):
            Dk = D[e_idx][k]
            np.testing.assert_allclose(Fg[:, s:e], F[:, s:e] @ Dk.T, atol=1e-10)
            np.testing.assert_allclose(Dk @ Dk.T, np.eye(e - s), atol=1e-10)
    # D(gh) = D(g) D(h) for the composed element x -> g(h(x))
    (A1, b1), (A2, b2) = els[1], els[-1]
    composed = basis.actions([(A1 @ A2, A1 @ b2 + b1)])[0]
    for k in range(len(spaces)):
        np.testing.assert_allclose(composed[k], D[1][k] @ D[-1][k], atol=1e-10)


def test_representation_sphere_permutations():
    _check_representation(SphereHarmonics(5, 4), PermutationGroup(5))


def test_representation_torus_flips_and_shifts():
    basis = TorusFourier(2, max_frequency=2)
    shift = FiniteGroup(
        [np.array([[0.0, 1.0], [1.0, 0.0]]), np.diag([-1.0, 1.0])],
        translations=[[0.5, 0.0], [0.0, 0.0]],
    )
    _check_representation(basis, shift)
    _check_representation(basis, CyclicGroup(4, dim=2, kind="translation", axes=(0,)))


def test_representation_product_point_permutations():
    basis = ProductBasis([SphereHarmonics(3, 2)] * 3)
    _check_representation(basis, PermutationGroup(9, block=3))


def test_product_basis_is_tensor_product():
    f1, f2 = SphereHarmonics(3, 2), TorusFourier(1, 2)
    basis = ProductBasis([f1, f2], max_eigenvalue=6.0)
    X = np.hstack([f1.sample(4, 0), f2.sample(4, 1)])
    F = basis.evaluate(X)
    lam, combos, _ = basis._built()
    F1, F2 = f1.evaluate(X[:, :3]), f2.evaluate(X[:, 3:])
    np.testing.assert_allclose(F, F1[:, combos[:, 0]] * F2[:, combos[:, 1]], atol=1e-14)
    np.testing.assert_allclose(
        lam, f1.eigenvalues[combos[:, 0]] + f2.eigenvalues[combos[:, 1]]
    )
    assert lam.max() <= 6.0 and np.all(np.diff(lam) >= 0)


def test_group_orders():
    assert PermutationGroup(5).n_elements() == 120
    assert SignFlipGroup(6).n_elements() == 64
    assert PermutationGroup(9, block=3).n_elements() == 6
    assert CyclicGroup(7, dim=3).n_elements() == 7
    assert CyclicGroup(5, dim=2, kind="translation", axes=(0, 1)).n_elements() == 5
    with pytest.raises(ValueError, match="max_elements"):
        PermutationGroup(8).elements(max_elements=100)


def test_sphere_points_checked_or_projected():
    basis = SphereHarmonics(3, 2)
    X = np.array([[1.0, 1.0, 0.0]])
    with pytest.raises(ValueError, match="unit sphere.*project=True"):
        basis.evaluate(X)
    Fp = SphereHarmonics(3, 2, project=True).evaluate(X)
    np.testing.assert_allclose(Fp, basis.evaluate(X / np.sqrt(2)))
    with pytest.raises(ValueError, match="zero vector"):
        SphereHarmonics(3, 2, project=True).evaluate(np.zeros((1, 3)))


def test_bad_group_elements_refused():
    with pytest.raises(ValueError, match="not an orthogonal matrix"):
        FiniteGroup([np.array([[1.0, 0.5], [0.0, 1.0]])]).generating_set()
    with pytest.raises(ValueError, match="not a permutation"):
        FiniteGroup([np.array([0, 0, 1])]).generating_set()
    rot = CyclicGroup(8, dim=2).generating_set()[0]
    with pytest.raises(ValueError, match="signed permutation"):
        TorusFourier(2, 1).check_element(*rot)
    with pytest.raises(ValueError, match="no translations"):
        SphereHarmonics(2, 1).check_element(np.eye(2), np.array([0.1, 0.0]))
    with pytest.raises(ValueError, match="block"):
        ProductBasis([SphereHarmonics(3, 1), TorusFourier(3, 1)]).check_element(
            PermutationGroup(6, block=3).generating_set()[0][0], np.zeros(6)
        )
