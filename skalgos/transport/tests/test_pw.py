"""pw_distance against exact oracles: brute force in 2-D, closed form in 1-D."""

import numpy as np
import ot
import pytest

from skalgos.datasets import make_shape_clouds
from skalgos.transport import procrustes_wasserstein, pw_distance


def _rot(t):
    return np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]])


def _haar(d, rng):
    Q, R = np.linalg.qr(rng.normal(size=(d, d)))
    return Q * np.sign(np.diag(R))


def _centered(X):
    return X - X.mean(axis=0)


def _w2_sq(X, Y):
    a = np.full(len(X), 1 / len(X))
    b = np.full(len(Y), 1 / len(Y))
    return ot.emd2(a, b, ot.dist(X, Y))


def _brute_force_2d(X, Y, n_angles=1440):
    """Global PW^2 in 2-D: W2^2 on a grid of O(2), then a local polish."""
    X, Y = _centered(X), _centered(Y)
    best, best_P = np.inf, None
    for refl in (np.eye(2), np.diag([1.0, -1.0])):
        for t in np.linspace(0, 2 * np.pi, n_angles, endpoint=False):
            P = refl @ _rot(t)
            v = _w2_sq(X, Y @ P)
            if v < best:
                best, best_P = v, P
    P, _, hist = procrustes_wasserstein(X, Y, rotation_init=best_P, tol=0)
    return min(best, hist[-1])


@pytest.mark.parametrize("d", [2, 3])
def test_zero_on_rotated_reflected_permuted_copy(d):
    rng = np.random.default_rng(d)
    X = rng.normal(size=(40, d)) * np.arange(1, d + 1)
    for _ in range(5):
        Y = (X @ _haar(d, rng))[rng.permutation(40)]
        assert pw_distance(X, Y, init="best") < 1e-6
        assert np.isclose(pw_distance(X, Y, init="best", squared=True), 0, atol=1e-12)


@pytest.mark.parametrize("shape", ["F", "helix"])
def test_fiedler_init_succeeds_on_random_orthogonal_maps(shape):
    # the paper's initialization study, noiseless: Fiedler hit 50/50
    (X,), _, (ref,) = make_shape_clouds(
        1,
        shape,
        n_points=60,
        noise=0,
        resample=False,
        random_state=0,
        return_references=True,
    )
    rng = np.random.default_rng(1)
    d = X.shape[1]
    successes = 0
    n_trials = 20
    for _ in range(n_trials):
        Y = (ref @ _haar(d, rng))[rng.permutation(len(ref))]
        successes += pw_distance(ref, Y, init="fiedler") < 1e-6
    assert successes >= 0.95 * n_trials


@pytest.mark.parametrize("seed", range(4))
def test_matches_brute_force_over_the_angle_in_2d(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(10, 2)) * [2.0, 1.0]
    Y = rng.normal(size=(12, 2)) * [1.5, 0.5]
    brute = _brute_force_2d(X, Y)
    ours = pw_distance(
        X, Y, init="best", n_init=16, squared=True, tol=0, random_state=0
    )
    assert ours >= brute - 1e-9  # nothing beats the global optimum
    assert ours == pytest.approx(brute, abs=1e-6)


@pytest.mark.parametrize("seed", range(3))
def test_exact_in_1d(seed):
    rng = np.random.default_rng(seed)
    X, Y = rng.exponential(size=(15, 1)), rng.normal(size=(9, 1))
    X, Y = _centered(X), _centered(Y)
    expected = min(_w2_sq(X, Y), _w2_sq(X, -Y))
    assert pw_distance(X, Y, init="best", squared=True) == pytest.approx(
        expected, abs=1e-10
    )
    assert pw_distance(X, Y, init="pca", squared=True) == pytest.approx(
        expected, abs=1e-10
    )


def _pw(X, Y):
    # tiny unstructured clouds have many local minima: many starts
    return pw_distance(X, Y, init="best", n_init=64, tol=0, random_state=0)


def test_symmetry_and_triangle_inequality_on_random_triples():
    rng = np.random.default_rng(0)
    for _ in range(4):
        A, B, C = (rng.normal(size=(8, 2)) * rng.uniform(0.5, 2, 2) for _ in range(3))
        ab, ba, bc, ac = _pw(A, B), _pw(B, A), _pw(B, C), _pw(A, C)
        assert ab == pytest.approx(ba, abs=1e-8)
        assert ac <= ab + bc + 1e-8
        assert ab > 1e-3  # non-equivalent clouds are at positive distance
        # the oracle agrees
        assert ab**2 == pytest.approx(_brute_force_2d(A, B), abs=1e-6)


@pytest.mark.parametrize("init", ["identity", "best"])
def test_never_exceeds_w2(init):
    rng = np.random.default_rng(3)
    for _ in range(5):
        X, Y = rng.normal(size=(20, 2)), rng.normal(size=(15, 2)) * [2, 0.5]
        w2 = np.sqrt(_w2_sq(_centered(X), _centered(Y)))
        assert pw_distance(X, Y, init=init) <= w2 + 1e-12


def test_invariance_to_orthogonal_maps_of_either_cloud():
    rng = np.random.default_rng(5)
    X, Y = rng.normal(size=(9, 2)), rng.normal(size=(11, 2)) * [3, 1]
    ref = _pw(X, Y)
    moved = _pw(X @ _haar(2, rng), Y @ _haar(2, rng))
    assert moved == pytest.approx(ref, abs=1e-7)


def test_translation_is_removed_by_centering():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(20, 3))
    Y = X @ _haar(3, rng) + [5.0, -2.0, 1.0]
    assert pw_distance(X, Y, init="best") < 1e-6
    assert pw_distance(X, Y, init="best", center=False) > 1.0


def test_objective_history_is_non_increasing_and_details_are_consistent():
    rng = np.random.default_rng(7)
    X, Y = rng.normal(size=(30, 2)), rng.normal(size=(25, 2)) * [2, 0.7]
    res = pw_distance(X, Y, init="identity", return_details=True, tol=0)
    assert np.all(np.diff(res.objective) <= 1e-12)
    P, G = res.rotation, res.plan
    assert np.allclose(P.T @ P, np.eye(2))
    assert np.allclose(G.sum(axis=1), 1 / 30) and np.allclose(G.sum(axis=0), 1 / 25)
    Xc, Yc = _centered(X), _centered(Y)
    cost = (G * ot.dist(Xc, Yc @ P)).sum()
    assert res.distance == pytest.approx(np.sqrt(cost), rel=1e-10)
    assert res.init_used == "identity" and res.n_iter == len(res.objective) - 1


def test_rotations_only_extension():
    (F,), _ = make_shape_clouds(
        1, "F", n_points=50, noise=0, resample=False, rotate=False, random_state=0
    )
    mirrored = F * [-1.0, 1.0]
    rotated = F @ _rot(1.0)
    assert pw_distance(F, mirrored, init="best") < 1e-6
    chiral = pw_distance(F, mirrored, init="best", allow_reflection=False)
    assert chiral > 0.05  # a letter F is not a rotated mirror F
    res = pw_distance(
        F, rotated, init="best", allow_reflection=False, return_details=True
    )
    assert res.distance < 1e-6 and np.linalg.det(res.rotation) > 0


def test_matrix_init_and_weights():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(12, 2)) * [2, 1]
    Q = _rot(2.0)
    Y = X @ Q
    # starting at the true inverse map gives zero at once
    res = pw_distance(X, Y, init=Q.T, return_details=True)
    assert res.distance < 1e-7 and res.init_used == "matrix"
    a = rng.uniform(size=12)
    a /= a.sum()
    assert pw_distance(X, Y, a, a, init="best") < 1e-6


def test_entropic_solver_is_refused_with_the_reason():
    from skalgos.transport import (
        PWAligner,
        PWBarycenter,
        PWKMeans,
        procrustes_wasserstein,
    )

    X = np.random.default_rng(9).normal(size=(12, 2))
    with pytest.raises(ValueError, match="sinkhorn' was removed.*emd"):
        pw_distance(X, X, ot_solver="sinkhorn")
    with pytest.raises(ValueError, match="sinkhorn' was removed"):
        procrustes_wasserstein(X, X, ot_solver="sinkhorn")
    for est in (PWBarycenter(4), PWAligner(), PWKMeans(1, n_support=4)):
        with pytest.raises(ValueError, match="sinkhorn' was removed"):
            est.set_params(ot_solver="sinkhorn").fit([X, X])
    assert pw_distance(X, X @ _rot(0.3), init="best", reg=0.5) < 1e-6  # reg unused


def test_torch_inputs_go_through_pot_backend():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(10)
    X, Y = rng.normal(size=(15, 2)), rng.normal(size=(12, 2)) * [2, 0.5]
    ref = pw_distance(X, Y, init="best", return_details=True)
    Xt, Yt = torch.from_numpy(X), torch.from_numpy(Y)
    res = pw_distance(Xt, Yt, init="best", return_details=True)
    assert isinstance(res.plan, torch.Tensor) and isinstance(res.rotation, torch.Tensor)
    assert res.distance == pytest.approx(ref.distance, abs=1e-10)
    np.testing.assert_allclose(res.plan.numpy(), ref.plan, atol=1e-12)
    wt = torch.full((15,), 1 / 15, dtype=torch.float64)
    assert pw_distance(Xt, Yt, wt, None, init="identity") == pytest.approx(
        pw_distance(X, Y, init="identity"), abs=1e-10
    )


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"Y": np.ones((4, 3))}, "same dimension"),
        ({"a": np.full(5, 0.3)}, "sum to one"),
        ({"a": np.array([0.5, 0.5, 0.5, -0.5, 0.0])}, "non-negative"),
        ({"a": np.ones(3) / 3}, "shape"),
        ({"X": np.empty((0, 2))}, "empty"),
        ({"X": np.array([[np.nan, 0.0], [1, 1], [2, 2], [3, 3], [4, 4]])}, "NaN"),
        ({"X": np.ones(5)}, "2-D"),
        ({"init": "nope"}, "init must be one of"),
        ({"init": np.ones((2, 2))}, "orthogonal"),
        ({"init": np.eye(3)}, "shape"),
        ({"init": np.diag([1.0, -1.0]), "allow_reflection": False}, "reflection"),
        ({"max_iter": -1}, "max_iter"),
        ({"ot_solver": "lp"}, "ot_solver"),
        ({"n_init": 0}, "n_init"),
        ({"X": np.ones((5, 2)) * 1j}, "Complex"),
    ],
)
def test_bad_input(kwargs, match):
    rng = np.random.default_rng(0)
    args = {"X": rng.normal(size=(5, 2)), "Y": rng.normal(size=(4, 2))}
    args.update(kwargs)
    X, Y = args.pop("X"), args.pop("Y")
    with pytest.raises(ValueError, match=match):
        pw_distance(X, Y, **args)


def test_inputs_are_not_modified():
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(10, 2)) + 3, rng.normal(size=(8, 2)) - 1
    X0, Y0 = X.copy(), Y.copy()
    pw_distance(X, Y, init="best")
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(Y, Y0)


def test_works_when_cupy_imports_but_has_no_gpu(tmp_path):
    # A CuPy that imports but cannot create arrays (no driver), as on CI: POT
    # registers its CuPy backend, whose construction then raises. NumPy and
    # torch inputs must never reach it.
    import subprocess
    import sys
    import textwrap

    for name in ("cupy", "cupyx"):
        pkg = tmp_path / name
        pkg.mkdir()
        (pkg / "__init__.py").write_text(
            "class ndarray:\n    pass\n\n\n"
            "def __getattr__(name):\n"
            "    raise RuntimeError('cudaErrorNoDevice: no CUDA-capable device')\n"
        )
    code = textwrap.dedent(
        f"""
        import sys; sys.path.insert(0, {str(tmp_path)!r})
        import numpy as np
        import ot.backend
        assert any(b.__name__ == "CupyBackend"
                   for b in ot.backend.get_available_backend_implementations())
        try:
            ot.backend.get_backend_list()
        except Exception:
            pass
        else:
            raise AssertionError("the stand-in CuPy should make the list raise")
        from skalgos.transport import PWBarycenter, pw_distance
        rng = np.random.default_rng(0)
        X, Y = rng.normal(size=(8, 2)), rng.normal(size=(7, 2))
        print(pw_distance(X, Y, init="best") > 0)
        PWBarycenter(n_support=4, max_iter=2).fit([X, Y])
        try:
            import torch
        except ImportError:
            pass
        else:
            pw_distance(torch.from_numpy(X), torch.from_numpy(Y), init="best")
        print("ok")
        """
    )
    res = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300
    )
    assert res.returncode == 0, res.stderr[-3000:]
    assert "ok" in res.stdout


# --- issue 35: the Fiedler start's OT plan is reused by the first PW step ----


def _digit_clouds(n_per=3, digits=(0, 1, 7)):
    from sklearn.datasets import load_digits

    d = load_digits()
    rng = np.random.RandomState(0)
    clouds = []
    for c in digits:
        for i in rng.choice(np.flatnonzero(d.target == c), n_per, replace=False):
            r, col = np.nonzero(d.images[i] > 4.0)
            clouds.append(np.c_[col, -r].astype(float))
    return clouds


def test_reusing_the_fiedler_plan_changes_no_digit(monkeypatch):
    # the first PW step solves the same exact OT problem as the Fiedler
    # start's scoring: reusing that plan must give bit-identical results
    from skalgos.transport import PWKMeans, _pw

    clouds = _digit_clouds()
    km = PWKMeans(n_clusters=3, n_support=20, n_init=1, max_iter=3, random_state=0)
    fast = km.fit(clouds)
    labels, inertia = fast.labels_.copy(), fast.inertia_
    centers = [c.copy() for c in fast.cluster_centers_]
    calls = []
    original = _pw.procrustes_wasserstein

    def no_reuse(*args, _first=None, **kwargs):
        calls.append(_first is not None)
        return original(*args, **kwargs)

    monkeypatch.setattr(_pw, "procrustes_wasserstein", no_reuse)
    slow = PWKMeans(
        n_clusters=3, n_support=20, n_init=1, max_iter=3, random_state=0
    ).fit(clouds)
    assert any(calls)  # the reuse was on in the first fit
    np.testing.assert_array_equal(slow.labels_, labels)
    assert slow.inertia_ == inertia
    for a, b in zip(slow.cluster_centers_, centers):
        np.testing.assert_array_equal(a, b)
