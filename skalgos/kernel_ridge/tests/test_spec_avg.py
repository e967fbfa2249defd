"""Spec-Avg estimators: exact invariance, reductions to kernel ridge, oracles."""

import itertools

import numpy as np
import pytest
from sklearn.datasets import make_regression
from sklearn.kernel_ridge import KernelRidge
from sklearn.linear_model import Ridge
from sklearn.pipeline import make_pipeline
from sklearn.utils.estimator_checks import (
    check_classifiers_train,
    check_regressors_train,
)

from skalgos.kernel_ridge import (
    FiniteGroup,
    GroupAveragedKernelRidge,
    InvariantKernelClassifier,
    InvariantKernelRidge,
    InvariantSpectralFeatures,
    PermutationGroup,
    ProductBasis,
    SignFlipGroup,
    SphereHarmonics,
    TorusFourier,
    invariance_discrepancy,
    invariant_basis,
)


def _sphere_data(d, n, seed=0):
    rng = np.random.default_rng(seed)
    X = SphereHarmonics(d).sample(n, rng)
    y = (X**4).sum(1) + X.sum(1) ** 3 + 0.1 * np.exp(X.sum(1)) + 0.3 * X[:, 0]
    return X, y + 0.05 * rng.standard_normal(n)


def _sobolev_kernel(basis, X, Y, D, alpha_exp):
    """Truncated Sobolev kernel sum_l D_l^-a phi(x) phi(y), built independently."""
    F, G = basis.evaluate(X)[:, :D], basis.evaluate(Y)[:, :D]
    lam = basis.eigenvalues[:D]
    counts = np.array([np.sum(lam <= v * (1 + 1e-12) + 1e-12) for v in lam])
    return (F * counts ** (-alpha_exp)) @ G.T


# --- exact invariance over every element of small groups ------------------


@pytest.mark.parametrize(
    "basis, group, data",
    [
        (SphereHarmonics(5, 4), PermutationGroup(5), "sphere"),
        (TorusFourier(6, 2), SignFlipGroup(6), "torus"),
        (
            ProductBasis([SphereHarmonics(3, 2)] * 3),
            PermutationGroup(9, block=3),
            "prod",
        ),
    ],
    ids=["S5-on-S4", "flips-on-T6", "S3-on-S2^3"],
)
@pytest.mark.parametrize("primary", ["ridge", "empirical"])
def test_predictions_exactly_invariant(basis, group, data, primary):
    rng = np.random.default_rng(1)
    X = basis.sample(80, rng)
    y = np.sin(3 * X[:, 0]) + X[:, 1] * X[:, -1] + X[:, 2] ** 2  # not invariant
    reg = InvariantKernelRidge(basis, group, primary=primary).fit(X, y)
    Xt = basis.sample(30, rng)
    assert invariance_discrepancy(reg, Xt, group) <= 1e-10
    plain = InvariantKernelRidge(basis, None, primary=primary).fit(X, y)
    assert invariance_discrepancy(plain, Xt, group) > 1e-3  # the test can fail


# --- reductions to kernel ridge --------------------------------------------


def test_trivial_group_is_kernel_ridge_on_truncated_kernel():
    basis = SphereHarmonics(4, 4)
    X, y = _sphere_data(4, 60)
    Xt, _ = _sphere_data(4, 20, seed=5)
    reg = InvariantKernelRidge(
        basis, None, alpha=0.03, smoothness=2.5, center_y=False
    ).fit(X, y)
    a = 2 * 2.5 / 3
    D = basis.n_functions
    krr = KernelRidge(alpha=0.03, kernel="precomputed").fit(
        _sobolev_kernel(basis, X, X, D, a), y
    )
    np.testing.assert_allclose(
        reg.predict(Xt), krr.predict(_sobolev_kernel(basis, Xt, X, D, a)), atol=1e-10
    )


@pytest.mark.parametrize(
    "basis, group",
    [
        (SphereHarmonics(4, 4), PermutationGroup(4)),
        (TorusFourier(3, 2), SignFlipGroup(3)),
        (ProductBasis([SphereHarmonics(3, 2)] * 2), PermutationGroup(6, block=3)),
    ],
    ids=["sphere", "torus", "product"],
)
def test_ridge_mode_is_group_averaged_kernel_ridge(basis, group):
    rng = np.random.default_rng(3)
    X, Xt = basis.sample(50, rng), basis.sample(15, rng)
    y = X[:, 0] + X[:, 1] ** 2 + 0.1 * rng.standard_normal(50)
    reg = InvariantKernelRidge(basis, group, alpha=0.01, center_y=False).fit(X, y)
    D, a = basis.n_functions, 2.0  # smoothness=None means s = manifold_dim

    def averaged(A_pts, B_pts):
        els = group.elements()
        return sum(
            _sobolev_kernel(basis, A_pts @ M.T + b, B_pts, D, a) for M, b in els
        ) / len(els)

    krr = KernelRidge(alpha=0.01, kernel="precomputed").fit(averaged(X, X), y)
    np.testing.assert_allclose(
        reg.predict(Xt), krr.predict(averaged(Xt, X)), atol=1e-10
    )
    # projecting features (not a fitted solution) is what makes them equal
    assert reg.n_invariant_ < reg.n_basis_


def test_empirical_primary_is_the_empirical_mean():
    basis = TorusFourier(3, 2)
    rng = np.random.default_rng(0)
    X = basis.sample(40, rng)
    y = rng.standard_normal(40)
    reg = InvariantKernelRidge(basis, primary="empirical", center_y=False).fit(X, y)
    np.testing.assert_allclose(reg.coef_, basis.evaluate(X).T @ y / 40, atol=1e-14)
    assert reg.intercept_ == 0


def test_empirical_primary_projects_the_coefficients():
    basis, group = SphereHarmonics(4, 3), PermutationGroup(4)
    X, y = _sphere_data(4, 50)
    reg = InvariantKernelRidge(basis, group, primary="empirical", center_y=False)
    reg.fit(X, y)
    ftilde = basis.evaluate(X).T @ y / 50
    P = np.zeros((basis.n_functions,) * 2)
    for s, e, _, V in reg.blocks_:
        P[s:e, s:e] = V @ V.T
    Xt, _ = _sphere_data(4, 10, seed=2)
    np.testing.assert_allclose(
        reg.predict(Xt), basis.evaluate(Xt) @ (P @ ftilde), atol=1e-12
    )


def test_least_squares_recovers_invariant_target():
    basis, group = SphereHarmonics(5, 4), PermutationGroup(5)
    rng = np.random.default_rng(7)
    X, Xt = basis.sample(60, rng), basis.sample(20, rng)
    blocks = invariant_basis(basis, group)
    c = [rng.standard_normal(V.shape[1]) for *_, V in blocks]

    def f_star(Z):
        F = basis.evaluate(Z)
        return sum(F[:, s:e] @ (V @ ck) for (s, e, _, V), ck in zip(blocks, c))

    reg = InvariantKernelRidge(basis, group, alpha=0.0).fit(X, f_star(X))
    assert reg.n_invariant_ <= 60
    np.testing.assert_allclose(reg.predict(Xt), f_star(Xt), atol=1e-10)


def test_pipeline_features_ridge_equals_regressor():
    basis, group = TorusFourier(3, 2), SignFlipGroup(3)
    rng = np.random.default_rng(2)
    X = basis.sample(50, rng)
    y = np.cos(np.pi * X[:, 0]) * X[:, 1] ** 2 + 0.1 * rng.standard_normal(50)
    pipe = make_pipeline(
        InvariantSpectralFeatures(basis, group, weights="sobolev"),
        Ridge(alpha=0.1, fit_intercept=False),
    ).fit(X, y)
    reg = InvariantKernelRidge(basis, group, alpha=0.1, center_y=False).fit(X, y)
    np.testing.assert_allclose(pipe.predict(X), reg.predict(X), atol=1e-10)


# --- projector, character formula, contraction ------------------------------


def _partitions(k, max_part):
    if k == 0:
        return 1
    return sum(_partitions(k - p, p) for p in range(1, min(k, max_part) + 1))


def test_invariant_dimension_matches_character_formula_and_molien():
    basis, group = SphereHarmonics(5, 5), PermutationGroup(5)
    els = group.elements()
    D = basis.actions(els)
    blocks = invariant_basis(basis, group)
    for k, (*_, V) in enumerate(blocks):
        chi = sum(np.trace(Dg[k]) for Dg in D) / len(els)
        assert abs(chi - round(chi)) < 1e-10
        assert V.shape[1] == round(chi)
        # invariant harmonics of degree k = invariant polynomials of degree k
        # minus those of degree k - 2 (Molien series of S_5: partitions, parts <= 5)
        expect = _partitions(k, 5) - (_partitions(k - 2, 5) if k >= 2 else 0)
        assert V.shape[1] == expect
        avg = sum(Dg[k] for Dg in D) / len(els)
        np.testing.assert_allclose(V @ V.T, avg, atol=1e-12)


def test_torus_sign_flip_invariants_are_cosine_products():
    basis = TorusFourier(4, 2)
    blocks = invariant_basis(basis, SignFlipGroup(4))
    freqs = basis._built()[1]
    sq = (freqs**2).sum(1)
    distinct = {tuple(r) for r in freqs}
    for s, e, lam, V in blocks:
        level = round(lam / np.pi**2)
        assert V.shape[1] == sum(1 for r in distinct if sum(m * m for m in r) == level)
        assert np.all(sq[s:e] == level)


def test_projector_independent_of_generating_set():
    basis = SphereHarmonics(4, 4)
    transpositions = []
    for i, j in itertools.combinations(range(4), 2):
        p = np.arange(4)
        p[[i, j]] = p[[j, i]]
        transpositions.append(p)
    a = invariant_basis(basis, PermutationGroup(4))
    b = invariant_basis(basis, FiniteGroup(transpositions))
    for (*_, Va), (*_, Vb) in zip(a, b):
        np.testing.assert_allclose(Va @ Va.T, Vb @ Vb.T, atol=1e-12)


def test_projection_is_a_contraction_towards_invariants():
    basis, group = SphereHarmonics(4, 3), PermutationGroup(4)
    blocks = invariant_basis(basis, group)
    rng = np.random.default_rng(0)
    for s, e, _, V in blocks:
        P = V @ V.T
        for _ in range(20):
            c = rng.standard_normal(e - s)
            c_star = V @ rng.standard_normal(V.shape[1])
            assert np.linalg.norm(P @ c - c_star) <= np.linalg.norm(c - c_star) + 1e-12


# --- cut-offs ---------------------------------------------------------------


def test_cut_offs_keep_whole_eigenspaces():
    basis = SphereHarmonics(3, 4)  # eigenspaces of size 1, 3, 5, 7, 9
    X, y = _sphere_data(3, 40)
    assert InvariantKernelRidge(basis, n_basis=10).fit(X, y).n_basis_ == 9
    assert InvariantKernelRidge(basis, n_basis=9).fit(X, y).n_basis_ == 9
    assert InvariantKernelRidge(basis, max_eigenvalue=6).fit(X, y).n_basis_ == 9
    # "auto": D = n^(1/(1+a)), a = 2 s / 2 = 2: 40^(1/3) = 3.4 -> snaps to 1,
    # 200^(1/3) = 5.8 -> snaps to 1 + 3
    reg = InvariantKernelRidge(basis, n_basis="auto", smoothness=2).fit(X, y)
    assert reg.n_basis_ == 1
    X, y = _sphere_data(3, 200)
    reg = InvariantKernelRidge(basis, n_basis="auto", smoothness=2).fit(X, y)
    assert reg.n_basis_ == 4
    assert InvariantKernelRidge(basis, n_basis=1).fit(X, y).n_basis_ == 1
    with pytest.raises(ValueError, match="max_eigenvalue"):
        InvariantKernelRidge(basis, max_eigenvalue=-1.0).fit(X, y)


# --- classifier, baseline ---------------------------------------------------


def test_classifier_is_one_vs_rest_invariant_ridge():
    basis, group = TorusFourier(2, 3), SignFlipGroup(2)
    rng = np.random.default_rng(0)
    X = basis.sample(90, rng)
    r = np.abs(X).max(axis=1)
    y = np.where(r < 0.4, "in", np.where(r < 0.75, "mid", "out"))
    clf = InvariantKernelClassifier(basis, group, alpha=1e-2).fit(X, y)
    assert list(clf.classes_) == ["in", "mid", "out"]
    assert clf.score(X, y) > 0.8
    for c, label in enumerate(clf.classes_):
        reg = InvariantKernelRidge(basis, group, alpha=1e-2).fit(
            X, np.where(y == label, 1.0, -1.0)
        )
        np.testing.assert_allclose(
            clf.decision_function(X)[:, c], reg.predict(X), atol=1e-10
        )
    assert invariance_discrepancy(clf, X, group) <= 1e-10
    np.testing.assert_array_equal(clf.predict(-X), clf.predict(X))


def test_group_averaged_baseline():
    X, y = _sphere_data(4, 40)
    plain = GroupAveragedKernelRidge(None, alpha=0.1, kernel="rbf", gamma=0.5).fit(X, y)
    krr = KernelRidge(alpha=0.1, kernel="rbf", gamma=0.5).fit(X, y)
    np.testing.assert_allclose(plain.predict(X), krr.predict(X), atol=1e-10)
    avg = GroupAveragedKernelRidge(PermutationGroup(4), alpha=0.1, gamma=0.5).fit(X, y)
    assert avg.n_group_elements_ == 24
    assert invariance_discrepancy(avg, X, PermutationGroup(4)) <= 1e-10
    assert invariance_discrepancy(krr, X, PermutationGroup(4)) > 1e-3
    with pytest.raises(ValueError, match="more than 10 elements"):
        GroupAveragedKernelRidge(PermutationGroup(4), max_elements=10).fit(X, y)


def test_without_group_sklearn_train_checks_pass():
    # the reason given for the expected failure in the common checks
    torus = TorusFourier(max_frequency=1, period=40.0)
    check_regressors_train("InvariantKernelRidge", InvariantKernelRidge(torus))
    check_classifiers_train(
        "InvariantKernelClassifier", InvariantKernelClassifier(torus)
    )


def test_discrepancy_with_random_elements():
    X, y = _sphere_data(6, 60)
    reg = InvariantKernelRidge(SphereHarmonics(6, 3), PermutationGroup(6)).fit(X, y)
    assert (
        invariance_discrepancy(
            reg, X, PermutationGroup(6), n_elements=20, random_state=0
        )
        <= 1e-10
    )
    X2, y2 = make_regression(30, 6, random_state=0)
    lin = Ridge().fit(X2, y2)
    assert (
        invariance_discrepancy(
            lin, X2, PermutationGroup(6), n_elements=5, random_state=0
        )
        > 0
    )


# --- bad input --------------------------------------------------------------


def test_bad_input_is_refused_clearly():
    X, y = _sphere_data(4, 30)
    with pytest.raises(ValueError, match="unit sphere"):
        InvariantKernelRidge(SphereHarmonics(4, 2)).fit(2 * X, y)
    reg = InvariantKernelRidge(SphereHarmonics(4, 2, project=True)).fit(2 * X, y)
    np.testing.assert_allclose(reg.predict(3 * X), reg.predict(X), atol=1e-12)
    with pytest.raises(ValueError, match="n_features=4"):
        InvariantKernelRidge(SphereHarmonics(4, 2), PermutationGroup(5)).fit(X, y)
    with pytest.raises(ValueError, match="n_features=4"):
        InvariantKernelRidge(SphereHarmonics(5, 2)).fit(X, y)
    shear = np.eye(4)
    shear[0, 1] = 0.3
    with pytest.raises(ValueError, match="orthogonal"):
        InvariantKernelRidge(SphereHarmonics(4, 2), FiniteGroup([shear])).fit(X, y)
    with pytest.raises(ValueError, match="n_features=1"):
        InvariantKernelRidge(SphereHarmonics(max_degree=2)).fit(X[:, :1], y)
    with pytest.raises(TypeError, match="basis"):
        InvariantKernelRidge("sphere").fit(X, y)


def test_grid_search_over_basis_and_cut_off():
    from sklearn.model_selection import GridSearchCV

    X, y = _sphere_data(4, 60)
    base = InvariantKernelRidge(SphereHarmonics(4, 2), PermutationGroup(4))
    grid = {"basis__max_degree": [2, 4], "n_basis": [None, 5], "alpha": [1e-3, 1e-1]}
    search = GridSearchCV(base, grid, cv=3).fit(X, y)
    assert search.best_params_["basis__max_degree"] == 4
    assert base.basis.max_degree == 2  # the user's basis is left alone


# --- issue 26: feature names, defaults, sample weights ----------------------


def test_feature_names_and_pandas_output():
    pd = pytest.importorskip("pandas")
    X, _ = _sphere_data(4, 30)
    feat = InvariantSpectralFeatures(SphereHarmonics(4, 4), PermutationGroup(4))
    names = feat.fit(X).get_feature_names_out()
    assert list(names) == [f"invariantspectralfeatures{i}" for i in range(8)]
    out = feat.set_output(transform="pandas").transform(X)
    assert isinstance(out, pd.DataFrame)
    assert list(out.columns) == list(names)
    np.testing.assert_allclose(
        out.to_numpy(), feat.set_output(transform="default").transform(X)
    )


def test_default_construction_infers_sphere_harmonics():
    X, y = _sphere_data(5, 80)
    reg = InvariantKernelRidge().fit(X, y)
    assert isinstance(reg.basis_, SphereHarmonics)
    assert reg.basis_.dim == 5 and reg.basis_.max_degree == reg.max_degree_
    assert reg.group_ is None and reg.basis is None
    ref = InvariantKernelRidge(SphereHarmonics(5, reg.max_degree_)).fit(X, y)
    np.testing.assert_allclose(reg.predict(X), ref.predict(X), rtol=1e-12)
    clf = InvariantKernelClassifier().fit(X, (y > np.median(y)).astype(int))
    assert clf.n_features_in_ == 5
    feat = InvariantSpectralFeatures(group=PermutationGroup()).fit(X)
    assert feat.basis_.max_degree == feat.max_degree_ == 3  # D(3) = 50 <= 80 < D(4)


def test_auto_degree_cap_rule():
    from skalgos.kernel_ridge._spec_avg import _auto_degree_cap

    # harmonic counts on S^5: D(5) = 378, D(6) = 714, D(7) = 1254, D(8) = 2079
    assert [_auto_degree_cap(6, n) for n in (500, 1000, 2000)] == [5, 6, 7]
    assert _auto_degree_cap(2, 10**6) == 20  # the compute guard
    with pytest.raises(ValueError, match="max_degree='auto'"):
        SphereHarmonics(4, "auto").evaluate(np.eye(4))


@pytest.mark.parametrize("primary", ["ridge", "empirical"])
def test_auto_degree_leave_one_out_is_exact(primary):
    from skalgos.kernel_ridge._spec_avg import _loo_degree

    X, y = _sphere_data(4, 25)
    kw = dict(group=PermutationGroup(4), alpha=1e-2, primary=primary, center_y=False)
    reg = InvariantKernelRidge(SphereHarmonics(4, 4), **kw).fit(X, y)
    Psi = reg._features(X)
    scores, best = _loo_degree(Psi, y[:, None], reg.blocks_, 1e-2, primary)
    for degree in range(5):
        errs = []
        for i in range(25):
            keep = np.arange(25) != i
            fit = InvariantKernelRidge(SphereHarmonics(4, degree), **kw)
            fit.fit(X[keep], y[keep])
            errs.append((fit.predict(X[i : i + 1])[0] - y[i]) ** 2)
        assert scores[degree] == pytest.approx(np.mean(errs), rel=1e-8)
    assert best == min(scores, key=scores.get)


def test_auto_degree_finds_the_degree_of_the_target():
    rng = np.random.default_rng(3)
    X = SphereHarmonics(5).sample(300, rng)
    f = (X**4).sum(1)  # invariant, degree 4 exactly
    y = f + 0.01 * rng.standard_normal(300)
    reg = InvariantKernelRidge(
        SphereHarmonics(5, "auto"), PermutationGroup(5), alpha=1e-6
    ).fit(X, y)
    assert reg.max_degree_ == 4
    assert set(reg.degree_scores_) == set(range(5 + 1))  # cap: D(5) = 196 <= 300 < D(6)
    assert reg.degree_scores_[3] > 10 * reg.degree_scores_[4]
    Xp = X[:, rng.permutation(5)]
    np.testing.assert_allclose(reg.predict(Xp), reg.predict(X), atol=1e-10)


@pytest.mark.parametrize("primary", ["ridge", "empirical"])
def test_integer_sample_weight_equals_repeated_rows(primary):
    X, y = _sphere_data(4, 40)
    w = np.random.default_rng(1).integers(0, 4, size=40)
    kw = dict(basis=SphereHarmonics(4, 4), group=PermutationGroup(4), primary=primary)
    reg = InvariantKernelRidge(**kw).fit(X, y, sample_weight=w)
    rep = InvariantKernelRidge(**kw).fit(np.repeat(X, w, 0), np.repeat(y, w))
    np.testing.assert_allclose(reg.coef_, rep.coef_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(reg.intercept_, rep.intercept_, rtol=1e-12)
    unweighted = InvariantKernelRidge(**kw).fit(X, y)
    assert not np.allclose(reg.coef_, unweighted.coef_)
    w_copy = w.copy()
    InvariantKernelClassifier(**kw).fit(X, y > 1.0, sample_weight=w)
    np.testing.assert_array_equal(w, w_copy)


def test_weighted_normal_equations():
    X, y = _sphere_data(4, 50)
    w = np.random.default_rng(2).uniform(0.1, 3.0, size=50)
    alpha = 1e-2
    reg = InvariantKernelRidge(
        SphereHarmonics(4, 3), PermutationGroup(4), alpha=alpha
    ).fit(X, y, sample_weight=w)
    Psi = reg._features(X)
    mu = np.average(y, weights=w)
    lhs = Psi.T @ (w[:, None] * Psi) + alpha * np.eye(Psi.shape[1])
    np.testing.assert_allclose(lhs @ reg.coef_, Psi.T @ (w * (y - mu)), atol=1e-10)
    assert reg.intercept_ == pytest.approx(mu)
    with pytest.raises(ValueError, match="sample_weight"):
        reg.fit(X, y, sample_weight=-w)
    with pytest.raises(ValueError, match="[Ss]ample.weight"):
        reg.fit(X, y, sample_weight=np.zeros(50))


# --------------------------------------------------------------- issue 35: budget, proba


def test_memory_budget_refuses_before_allocating(monkeypatch):
    """A wide table at a degree whose harmonic count explodes: a clear error, no array."""
    import skalgos.kernel_ridge._spec_avg as sa

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 26))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = X[:, 0]
    allocated = []
    real_zeros = np.zeros

    def spy(shape, *a, **k):
        allocated.append(shape)
        return real_zeros(shape, *a, **k)

    monkeypatch.setattr(sa.np, "zeros", spy)
    # degree 6 on S^25: D = C(31, 6) + C(30, 5) = 878,787 functions
    with pytest.raises(MemoryError, match="GiB, above the budget"):
        InvariantKernelRidge(SphereHarmonics(26, 6)).fit(X, y)
    assert allocated == []
    # the estimate is the one the check uses, and a small budget refuses a small fit
    spaces = sa._kept_spaces(SphereHarmonics(26, 2).resolve(26), None, None)
    need = sa._estimated_bytes(spaces, None, 40)
    with pytest.raises(MemoryError):
        sa._check_memory(spaces, None, 40, budget=need - 1)
    sa._check_memory(spaces, None, 40, budget=need)


def test_classifier_predict_proba_is_softmax_of_scores():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(90, 4))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y3 = np.digitize(np.sort(np.abs(X), axis=1)[:, -1], [0.6, 0.75])
    g = PermutationGroup(4)
    clf = InvariantKernelClassifier(SphereHarmonics(4, 4), g).fit(X, y3)
    P = clf.predict_proba(X)
    S = clf.decision_function(X)
    ref = np.exp(S - S.max(axis=1, keepdims=True))
    ref /= ref.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(P, ref, rtol=1e-12)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-12)
    np.testing.assert_array_equal(clf.classes_[P.argmax(axis=1)], clf.predict(X))
    # invariant: permuting the coordinates leaves the probabilities unchanged
    np.testing.assert_allclose(clf.predict_proba(X[:, [2, 0, 3, 1]]), P, atol=1e-10)
    yb = (y3 > 0).astype(int)
    clfb = InvariantKernelClassifier(SphereHarmonics(4, 4), g).fit(X, yb)
    s = clfb.decision_function(X)
    Pb = clfb.predict_proba(X)
    np.testing.assert_allclose(Pb[:, 1], 1.0 / (1.0 + np.exp(-2.0 * s)), rtol=1e-12)
    np.testing.assert_array_equal(clfb.classes_[Pb.argmax(axis=1)], clfb.predict(X))


@pytest.mark.parametrize("dim,degree", [(2, 6), (3, 5), (5, 3), (6, 4), (26, 2)])
def test_sphere_eigenspaces_from_counts_match_the_built_basis(dim, degree):
    """The count-only spectrum (used by the memory check) is the built one."""
    from skalgos.kernel_ridge._bases import _BasisBase

    basis = SphereHarmonics(dim, degree)
    assert basis.eigenspaces() == _BasisBase.eigenspaces(basis)


# ------------------------------------------------ issue 35: sparse tables


def _one_hot_table(n=120, seed=0):
    """A mixed table through ColumnTransformer: sparse one-hot + scaled numeric."""
    from sklearn.compose import ColumnTransformer
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    rng = np.random.default_rng(seed)
    num = rng.normal(size=(n, 3))
    cat = rng.integers(0, 4, size=(n, 2))
    raw = np.hstack([num, cat]).astype(object)
    ct = ColumnTransformer(
        [("num", StandardScaler(), [0, 1, 2]), ("cat", OneHotEncoder(), [3, 4])],
        sparse_threshold=1.0,
    )
    Xs = ct.fit_transform(raw)
    y = num[:, 0] + 0.5 * num[:, 1] ** 2 + (cat[:, 0] == 2) + 0.1 * rng.normal(size=n)
    return Xs, y


def test_sparse_one_hot_table_predicts_as_its_dense_version():
    import scipy.sparse as sp

    Xs, y = _one_hot_table()
    assert sp.issparse(Xs) and Xs.shape == (120, 11)
    Xd = Xs.toarray()
    reg_s, reg_d = InvariantKernelRidge().fit(Xs, y), InvariantKernelRidge().fit(Xd, y)
    assert reg_s.max_degree_ == reg_d.max_degree_ >= 1
    assert reg_s.basis_.scale == pytest.approx(reg_d.basis_.scale, rel=1e-12)
    np.testing.assert_allclose(reg_s.predict(Xs), reg_d.predict(Xd), rtol=1e-10)
    np.testing.assert_allclose(reg_s.predict(Xd), reg_d.predict(Xs), rtol=1e-10)
    assert reg_d.score(Xd, y) > 0.5  # a real fit, not a constant
    yc = (y > np.median(y)).astype(int)
    clf_s = InvariantKernelClassifier().fit(sp.csc_matrix(Xs), yc)
    clf_d = InvariantKernelClassifier().fit(Xd, yc)
    np.testing.assert_array_equal(clf_s.predict(Xs), clf_d.predict(Xd))
    np.testing.assert_allclose(clf_s.predict_proba(Xs), clf_d.predict_proba(Xd))
    feat_s = InvariantSpectralFeatures().fit(sp.coo_matrix(Xs))
    feat_d = InvariantSpectralFeatures().fit(Xd)
    np.testing.assert_allclose(feat_s.transform(Xs), feat_d.transform(Xd), atol=1e-12)
    # float32 sparse input keeps its precision, as float32 dense input does
    f32 = InvariantSpectralFeatures().fit(Xs.astype(np.float32)).transform(Xs)
    assert f32.dtype == np.float32


def test_sparse_input_refused_when_its_dense_copy_breaks_the_budget():
    import scipy.sparse as sp

    import skalgos.kernel_ridge._spec_avg as sa

    Xs, y = _one_hot_table()
    dense = Xs.shape[0] * Xs.shape[1] * 8
    budget = 0.5 * dense / 1024**3
    # a fixed degree whose own arrays fit the budget, but not with dense X on top
    basis = SphereHarmonics(11, 2, project=True)
    spaces = sa._kept_spaces(basis.resolve(11), None, None)
    fixed = (sa._estimated_bytes(spaces, None, 120) + 0.5 * dense) / 1024**3
    InvariantKernelRidge(basis, memory_budget=fixed).fit(Xs.toarray(), y)  # dense fits
    for est in (
        InvariantKernelRidge(memory_budget=budget),
        InvariantKernelRidge(basis, memory_budget=fixed),
        InvariantSpectralFeatures(memory_budget=budget),
    ):
        with pytest.raises(TypeError, match="sparse.*memory_budget"):
            est.fit(Xs, y)
        est.set_params(memory_budget=None).fit(Xs, y)  # no limit: it fits
    # a fitted model refuses a sparse batch too large to densify, and takes it dense
    reg = InvariantKernelRidge().fit(Xs, y)
    big = sp.vstack([Xs] * 4, format="csr")
    reg.set_params(memory_budget=2 * dense / 1024**3)
    with pytest.raises(TypeError, match="fewer rows per"):
        reg.predict(big)
    np.testing.assert_allclose(reg.predict(big.toarray())[:120], reg.predict(Xs))
