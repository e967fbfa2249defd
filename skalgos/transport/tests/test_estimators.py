"""PWBarycenter, PWAligner, PWKMeans and make_shape_clouds."""

import numpy as np
import ot
import pytest
from sklearn.metrics import adjusted_rand_score

from skalgos.datasets import make_shape_clouds
from skalgos.transport import (
    PWAligner,
    PWBarycenter,
    PWKMeans,
    pw_barycenter,
    pw_distance,
)


def _haar(d, rng):
    Q, R = np.linalg.qr(rng.normal(size=(d, d)))
    return Q * np.sign(np.diag(R))


def _shape(n=30, shape="F", seed=0):
    (S,), _ = make_shape_clouds(
        1,
        shape,
        n_points=n,
        noise=0,
        resample=False,
        rotate=False,
        permute=False,
        random_state=seed,
    )
    return S - S.mean(axis=0)


@pytest.mark.parametrize("shape", ["F", "helix"])
def test_barycenter_of_rotated_copies_recovers_the_shape(shape):
    S = _shape(30, shape)
    rng = np.random.default_rng(1)
    d = S.shape[1]
    copies = [(S @ _haar(d, rng))[rng.permutation(30)] for _ in range(10)]
    bary = PWBarycenter(
        n_support=30, support_init="first", init="fiedler", max_iter=20, random_state=0
    ).fit(copies)
    scale = np.sqrt((S**2).sum(axis=1).mean())
    assert pw_distance(bary.barycenter_, S, init="best") <= 1e-6 * scale
    assert bary.inertia_ <= 1e-10
    # reported in the first cloud's frame: aligned with copies[0] as it is
    assert pw_distance(bary.barycenter_, copies[0], init="identity") <= 1e-6
    for Y, P in zip(copies, bary.rotations_):
        assert np.allclose(P.T @ P, np.eye(d))
        # Y @ P is in the barycenter's frame: no further rotation needed
        assert pw_distance(bary.barycenter_, Y @ P, init="identity") <= 1e-6
    assert np.allclose(bary.rotations_[0], np.eye(d))


def test_barycenter_of_one_cloud_is_the_cloud_up_to_orthogonal_map():
    rng = np.random.default_rng(2)
    Y = rng.normal(size=(15, 2)) * [2, 1]
    bary = PWBarycenter(n_support=15, init="best", random_state=0).fit([Y])
    assert pw_distance(bary.barycenter_, Y, init="best") < 1e-6


def test_barycenter_beats_wasserstein_on_rotated_copies():
    S = _shape(40)
    rng = np.random.default_rng(3)
    copies = [(S @ _haar(2, rng))[rng.permutation(40)] for _ in range(6)]
    pw = pw_barycenter(
        copies, n_support=40, support_init="first", max_iter=10, random_state=0
    )
    w = pw_barycenter(
        copies,
        n_support=40,
        support_init="first",
        metric="w",
        max_iter=10,
        random_state=0,
    )
    assert pw_distance(w, S, init="best") > 10 * pw_distance(pw, S, init="best")


def test_rotations_disabled_equals_pot_free_support_barycenter():
    rng = np.random.default_rng(4)
    clouds = [rng.normal(size=(n, 2)) + [1.0, -2.0] for n in (12, 15, 9)]
    weights = [rng.uniform(0.5, 1.0, size=len(c)) for c in clouds]
    weights = [w / w.sum() for w in weights]
    lam = np.array([0.5, 0.3, 0.2])
    X0 = rng.normal(size=(7, 2))
    expected = ot.lp.free_support_barycenter(
        clouds, weights, X0, weights=lam, numItermax=50, stopThr=1e-9
    )
    ours, log = pw_barycenter(
        clouds,
        support_init=X0,
        metric="w",
        center=False,
        max_iter=50,
        tol=1e-9,
        cloud_weights=lam,
        atom_weights=weights,
        log=True,
    )
    np.testing.assert_allclose(ours, expected, rtol=0, atol=1e-8)
    assert log["n_iter"] >= 1 and len(log["plans"]) == 3


def test_barycenter_attributes_transform_and_score():
    clouds, _ = make_shape_clouds(5, "F", n_points=30, random_state=0)
    bary = PWBarycenter(n_support=20, max_iter=5, store_plans=True, random_state=0).fit(
        clouds
    )
    assert bary.barycenter_.shape == (20, 2)
    assert np.allclose(bary.support_weights_, 1 / 20)
    assert len(bary.rotations_) == len(bary.plans_) == 5
    assert bary.plans_[0].shape == (20, clouds[0].shape[0])
    assert bary.n_features_in_ == 2 and 1 <= bary.n_iter_ <= 5
    D = bary.transform(clouds)
    assert D.shape == (5, 1) and np.all(D >= 0)
    assert bary.score(clouds) == pytest.approx(-np.mean(D[:, 0] ** 2))
    # the fitted inertia is the weighted sum of the squared distances
    assert bary.inertia_ == pytest.approx(np.mean(D[:, 0] ** 2), rel=1e-6, abs=1e-9)


def test_barycenter_fit_transform_equals_fit_then_transform():
    clouds, _ = make_shape_clouds(4, "spiral", n_points=20, random_state=1)
    a = PWBarycenter(n_support=10, max_iter=3, random_state=0).fit_transform(clouds)
    b = (
        PWBarycenter(n_support=10, max_iter=3, random_state=0)
        .fit(clouds)
        .transform(clouds)
    )
    np.testing.assert_array_equal(a, b)


def test_aligner_puts_rotated_copies_onto_the_reference():
    S = _shape(25)
    rng = np.random.default_rng(5)
    copies = [(S @ _haar(2, rng)) + rng.normal(size=2) for _ in range(4)]
    al = PWAligner(reference=S, init="best").fit(copies)
    out = al.transform(copies)
    assert isinstance(out, list) and len(out) == 4
    for Y in out:  # same points (no permutation here), in the reference frame
        np.testing.assert_allclose(Y, S, atol=1e-8)
    # 3-D array in, 3-D array out; first-cloud reference
    arr = np.stack(copies)
    out3 = PWAligner(init="best").fit_transform(arr)
    assert out3.shape == arr.shape
    np.testing.assert_allclose(out3[1], out3[0], atol=1e-8)


def test_aligner_barycenter_reference():
    clouds, _ = make_shape_clouds(3, "F", n_points=20, random_state=2)
    al = PWAligner(reference="barycenter", n_support=15, random_state=0).fit(clouds)
    assert al.reference_.shape == (15, 2)


def test_kmeans_clusters_rotated_shapes_where_wasserstein_fails():
    # exact rotated / reflected / permuted copies: within-class PW is zero
    clouds, y = make_shape_clouds(
        12,
        ["F", "spiral", "star"],
        n_points=40,
        noise=0,
        resample=False,
        random_state=0,
    )
    km = PWKMeans(n_clusters=3, n_support=40, random_state=0).fit(clouds)
    assert adjusted_rand_score(y, km.labels_) == 1.0
    np.testing.assert_array_equal(km.predict(clouds), km.labels_)
    assert len(km.cluster_centers_) == 3 and km.cluster_centers_[0].shape == (40, 2)
    assert km.inertia_ < 1e-8
    assert km.inertia_ == pytest.approx(-km.score(clouds))
    w = PWKMeans(n_clusters=3, n_support=40, metric="w", random_state=0).fit(clouds)
    assert adjusted_rand_score(y, w.labels_) < 1.0


def test_kmeans_random_seeding_and_too_few_clouds():
    clouds, y = make_shape_clouds(6, ["F", "heart"], n_points=20, random_state=3)
    km = PWKMeans(n_clusters=2, n_support=10, init="random", random_state=0).fit(clouds)
    assert set(km.labels_) <= {0, 1}
    with pytest.raises(ValueError, match="n_clusters"):
        PWKMeans(n_clusters=7).fit(clouds)


@pytest.mark.parametrize("Est", [PWBarycenter, PWKMeans, PWAligner])
@pytest.mark.parametrize(
    "X, match",
    [
        ([np.ones((4, 2)), np.ones((5, 3))], "same dimension"),
        ([np.ones((4, 2)), np.empty((0, 2))], "at least 1"),
        ([np.ones((4, 2)), np.array([[np.nan, 1.0], [1.0, 2.0]])], "NaN"),
        ([], "empty|at least one"),
    ],
)
def test_estimators_bad_clouds(Est, X, match):
    with pytest.raises(ValueError, match=match):
        Est().fit(X)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"atom_weights": [np.full(4, 0.3), np.full(3, 1 / 3)]}, "sum to one"),
        (
            {"atom_weights": [np.array([1.5, -0.5, 0, 0]), np.full(3, 1 / 3)]},
            "non-negative",
        ),
        ({"cloud_weights": [0.7, 0.7]}, "sum to one"),
        ({"cloud_weights": [1.5, -0.5]}, "non-negative"),
    ],
)
def test_barycenter_bad_weights(kwargs, match):
    X = [np.arange(8.0).reshape(4, 2), np.arange(6.0).reshape(3, 2) ** 2]
    with pytest.raises(ValueError, match=match):
        PWBarycenter(n_support=3).fit(X, **kwargs)


def test_dimension_mismatch_at_predict_time():
    X = [np.random.default_rng(0).normal(size=(6, 2)) for _ in range(3)]
    km = PWKMeans(n_clusters=2, n_support=4, random_state=0).fit(X)
    with pytest.raises(ValueError, match="dimension"):
        km.predict([np.ones((5, 3))])


def test_make_shape_clouds():
    clouds, y, refs = make_shape_clouds(
        6, ["helix", "s_curve"], n_points=50, random_state=0, return_references=True
    )
    assert len(clouds) == 6 and all(c.shape[1] == 3 for c in clouds)
    assert y.tolist() == [0, 0, 0, 1, 1, 1] and len(refs) == 2
    sizes = {c.shape[0] for c in clouds}
    assert min(sizes) >= 50  # points are kept or duplicated, never dropped
    again, _ = make_shape_clouds(6, ["helix", "s_curve"], n_points=50, random_state=0)
    for c1, c2 in zip(clouds, again):
        np.testing.assert_array_equal(c1, c2)
    # noiseless copies are equivalent to their reference
    clean, _, (ref,) = make_shape_clouds(
        2,
        "F",
        n_points=30,
        noise=0,
        resample=False,
        random_state=1,
        return_references=True,
    )
    assert pw_distance(clean[0], ref, init="best") < 1e-6
    digits, yd = make_shape_clouds(10, "digits", random_state=0)
    assert sorted(yd.tolist()) == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4]
    assert all(10 <= c.shape[0] <= 64 and c.shape[1] == 2 for c in digits)
    with pytest.raises(ValueError, match="Unknown shape"):
        make_shape_clouds(2, "blob")
    with pytest.raises(ValueError, match="same dimension"):
        make_shape_clouds(2, ["F", "helix"])


def test_aligner_feeds_a_cloud_estimator_in_a_pipeline():
    from sklearn.pipeline import make_pipeline

    clouds, y = make_shape_clouds(
        6, ["F", "star"], n_points=30, noise=0, resample=False, random_state=4
    )
    pipe = make_pipeline(
        PWAligner(init="best"),
        PWKMeans(n_clusters=2, n_support=30, pw_init="identity", random_state=0),
    )
    labels = pipe.fit_predict(clouds)
    assert adjusted_rand_score(y, labels) == 1.0


# --- issue 26: the 2-D warning, set_output, n_init, cached Fiedler vectors ---


@pytest.mark.parametrize("Est", [PWBarycenter, PWKMeans, PWAligner])
def test_single_2d_array_warns_and_names_the_fix(Est):
    X = make_shape_clouds(1, "helix", n_points=12, random_state=0)[0][0]
    est = Est(n_support=4) if Est is not PWAligner else Est()
    if Est is PWKMeans:
        est.set_params(n_clusters=1, n_init=1, max_iter=1)
    with pytest.warns(UserWarning, match=r"wrap it in a list: \[X\]") as record:
        est.fit(X)
    assert record[0].filename == __file__  # points at the caller's line
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est.fit([X])  # one cloud of 3-D points: no warning
        est.fit(X[:, :, None])  # 1-D clouds said explicitly: no warning
        est.fit(X[:, :1])  # one-point clouds are not ambiguous


def test_barycenter_pandas_output():
    pd = pytest.importorskip("pandas")
    clouds = make_shape_clouds(4, "F", n_points=15, random_state=0)[0]
    bary = PWBarycenter(10, init="identity", max_iter=3, random_state=0).fit(clouds)
    assert list(bary.get_feature_names_out()) == ["pwbarycenter0"]
    default = bary.transform(clouds)
    out = bary.set_output(transform="pandas").transform(clouds)
    assert isinstance(out, pd.DataFrame) and list(out.columns) == ["pwbarycenter0"]
    np.testing.assert_allclose(out.to_numpy(), default)


def test_aligner_set_output_refuses_dataframes_clearly():
    aligner = PWAligner()
    assert aligner.set_output(transform="default") is aligner
    with pytest.raises(ValueError, match="point clouds"):
        aligner.set_output(transform="pandas")


def test_kmeans_n_init_keeps_the_lowest_inertia():
    from sklearn.utils import check_random_state

    from skalgos.transport._common import preprocess
    from skalgos.transport._validation import validate_clouds

    clouds, y = make_shape_clouds(
        9, ["helix", "trefoil", "swiss_roll"], n_points=20, random_state=0
    )
    kw = dict(n_clusters=3, n_support=10, max_iter=3, barycenter_max_iter=5)
    km = PWKMeans(n_init=4, random_state=0, **kw).fit(clouds)
    # the four runs, replayed from the same random stream
    ref = PWKMeans(n_init=1, **kw)
    C, W, _ = validate_clouds(clouds)
    C = preprocess(C, W, center=True, normalize=False)
    rng = check_random_state(0)
    runs = [ref._lloyd(C, W, "fiedler", rng) for _ in range(4)]
    inertias = [r[2] for r in runs]
    assert len(set(np.round(inertias, 10))) > 1  # the seed matters here
    assert km.inertia_ == pytest.approx(min(inertias), rel=1e-12)
    np.testing.assert_array_equal(km.labels_, runs[int(np.argmin(inertias))][1])
    one = PWKMeans(n_init=1, random_state=0, **kw).fit(clouds)
    assert one.inertia_ == pytest.approx(inertias[0], rel=1e-12)


def test_fiedler_vectors_are_computed_once_per_cloud(monkeypatch):
    import hashlib

    from skalgos.transport import _pw

    _pw._FIEDLER_CACHE.clear()
    seen = []
    original = _pw._knn_laplacian_fiedler

    def counting(X, *args, **kwargs):
        seen.append(hashlib.sha1(np.ascontiguousarray(X).tobytes()).hexdigest())
        return original(X, *args, **kwargs)

    monkeypatch.setattr(_pw, "_knn_laplacian_fiedler", counting)
    clouds, _ = make_shape_clouds(6, ["helix", "trefoil"], n_points=15, random_state=0)
    PWKMeans(2, n_support=8, max_iter=2, n_init=1, random_state=0).fit(clouds)
    assert len(seen) == len(set(seen))  # never twice for the same cloud
    assert len(seen) > len(clouds)  # the centroids' too
    # a cloud edited in place is a new key, never a stale vector
    X = clouds[0] - clouds[0].mean(axis=0)
    f0 = _pw._fiedler(X)
    X[:3] *= 2.0
    np.testing.assert_allclose(_pw._fiedler(X), original(X))
    assert not np.allclose(_pw._fiedler(X), f0)


@pytest.mark.parametrize("e", [-300, -100, 100, 140])
def test_barycenter_is_scale_equivariant_at_extreme_magnitudes(e):
    # issue 39: X * 1e257 raised "SVD did not converge" (the Procrustes
    # matrix overflowed); the clouds are now solved at unit scale (an exact
    # power-of-two rescale) and the results scaled back
    rng = np.random.default_rng(3)
    clouds = [rng.normal(size=(12, 2)) for _ in range(3)]
    # tol is absolute (squared units): 0 runs both fits the same iterations
    kw = dict(n_support=5, max_iter=5, inner_max_iter=5, tol=0.0, inner_tol=0.0)
    kw["random_state"] = 0
    ref = PWBarycenter(**kw).fit(clouds)
    s = 10.0**e
    big = PWBarycenter(**kw).fit([c * s for c in clouds])
    np.testing.assert_allclose(big.barycenter_, ref.barycenter_ * s, rtol=1e-9)
    np.testing.assert_allclose(big.inertia_, ref.inertia_ * s * s, rtol=1e-9)
    D = big.transform([c * s for c in clouds])
    assert np.all(np.isfinite(D))
    np.testing.assert_allclose(D, ref.transform(clouds) * s, rtol=1e-9)
    assert big.n_iter_ == ref.n_iter_


def test_barycenter_refuses_coordinates_whose_squares_overflow():
    rng = np.random.default_rng(3)
    clouds = [rng.normal(size=(12, 2)) * 1e257 for _ in range(3)]
    with pytest.raises(ValueError, match="X has coordinates.*normalize='max_radius'"):
        PWBarycenter(n_support=4).fit(clouds)
    # the fix the message names works
    bary = PWBarycenter(n_support=4, normalize="max_radius", random_state=0)
    D = bary.fit(clouds).transform(clouds)
    assert np.all(np.isfinite(D)) and np.all(np.isfinite(bary.barycenter_))


def test_procrustes_falls_back_when_gesdd_does_not_converge(monkeypatch):
    # issue 39: the Procrustes SVDs go through skalgos.utils._linalg.robust_svd
    from skalgos.transport._pw import _procrustes

    rng = np.random.default_rng(4)
    M = rng.normal(size=(3, 3))
    expected = _procrustes(M)

    def fails(*args, **kwargs):
        raise np.linalg.LinAlgError("SVD did not converge")

    monkeypatch.setattr(np.linalg, "svd", fails)
    P = _procrustes(M)
    np.testing.assert_allclose(P, expected, atol=1e-12)
    np.testing.assert_allclose(P.T @ P, np.eye(3), atol=1e-12)
