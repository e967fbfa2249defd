"""SoftImputeCompleter: the noisy-data default and the imputer face."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_diabetes, load_wine
from sklearn.linear_model import Ridge
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import make_pipeline

from skalgos.completion import SoftImputeCompleter


def _low_rank_bias_noise(m=150, n=60, rank=3, noise=0.5, frac=0.4, seed=0):
    rng = np.random.default_rng(seed)
    M = (
        rng.standard_normal((m, rank)) @ rng.standard_normal((rank, n))
        + rng.standard_normal(m)[:, None]
        + 2 * rng.standard_normal(n)[None, :]
        + 3.0
    )
    X = M + noise * rng.standard_normal(M.shape)
    obs = rng.random(M.shape) < frac
    return M, np.where(obs, X, np.nan), obs


def _bias_only(X, reg=5.0, n_iter=50):
    """User + item biases by alternating ridge means (surprise's BaselineOnly)."""
    obs = ~np.isnan(X)
    mu = np.nanmean(X)
    R = np.where(obs, X - mu, 0.0)
    b, c = np.zeros(X.shape[0]), np.zeros(X.shape[1])
    for _ in range(n_iter):
        b = (R - c[None, :] * obs).sum(1) / (obs.sum(1) + reg)
        c = (R - b[:, None] * obs).sum(0) / (obs.sum(0) + reg)
    return mu + b[:, None] + c[None, :]


def test_beats_bias_only_baseline_on_low_rank_plus_bias_plus_noise():
    M, X, obs = _low_rank_bias_noise()
    est = SoftImputeCompleter(random_state=0).fit(X)
    pairs = np.argwhere(~obs)
    pred = est.predict_entries(pairs)
    rmse = np.sqrt(np.mean((pred - M[~obs]) ** 2))
    base = np.sqrt(np.mean((_bias_only(X)[~obs] - M[~obs]) ** 2))
    # the low-rank part carries variance 3 per entry: at least half of it found
    assert rmse < 0.5 * base
    assert 1 <= est.rank_ <= est.max_rank


def test_fold_in_of_a_training_row_reproduces_its_fitted_value():
    _, X, _ = _low_rank_bias_noise(seed=1)
    est = SoftImputeCompleter(random_state=0)
    filled = est.fit_transform(X)
    np.testing.assert_allclose(est.transform(X[:7]), filled[:7], rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(est.transform(X), filled, rtol=1e-10, atol=1e-10)


def test_fold_in_with_side_information_reproduces_training_rows():
    _, X, _ = _low_rank_bias_noise(seed=2)
    F = np.random.default_rng(0).standard_normal((X.shape[1], 4))
    est = SoftImputeCompleter(F, random_state=0)
    filled = est.fit_transform(X)
    assert est.side_coef_.shape == (X.shape[0], 4)
    np.testing.assert_allclose(
        est.transform(X[5:9]), filled[5:9], rtol=1e-10, atol=1e-10
    )


def test_observed_entries_are_returned_as_given():
    _, X, obs = _low_rank_bias_noise(seed=3)
    out = SoftImputeCompleter(random_state=0).fit_transform(X)
    np.testing.assert_array_equal(out[obs], X[obs])
    assert np.isfinite(out).all()


def _with_nan(X, frac, seed):
    rng = np.random.default_rng(seed)
    X = X.astype(float).copy()
    X[rng.random(X.shape) < frac] = np.nan
    return X


def test_pipeline_on_new_rows_and_cross_val_score():
    data = load_diabetes()
    X = _with_nan(data.data * [1, 10, 100, 1, 1, 1, 1000, 1, 1, 1], 0.2, 0)
    pipe = make_pipeline(SoftImputeCompleter(random_state=0), Ridge(alpha=1e-3))
    scores = cross_val_score(pipe, X, data.target, cv=3)
    assert np.all(np.isfinite(scores)) and scores.mean() > 0.3
    pipe.fit(X[:300], data.target[:300])
    assert pipe.predict(X[300:]).shape == (142,)


def test_no_warning_at_defaults_on_an_ordinary_table_and_beats_the_mean():
    # warnings are errors in this suite (pyproject filterwarnings)
    data = load_wine()
    Xf = data.data
    X = _with_nan(Xf, 0.2, 1)
    hidden = np.isnan(X)
    out = SoftImputeCompleter(random_state=0).fit_transform(X)
    mean = np.where(hidden, np.nanmean(X, axis=0), X)
    err = np.sqrt(np.mean(((out - Xf) / Xf.std(0))[hidden] ** 2))
    err_mean = np.sqrt(np.mean(((mean - Xf) / Xf.std(0))[hidden] ** 2))
    assert err < 0.9 * err_mean


def test_column_scale_is_undone_on_output():
    _, X, obs = _low_rank_bias_noise(seed=4)
    s = np.geomspace(1e-3, 1e3, X.shape[1])
    a = SoftImputeCompleter(random_state=0).fit_transform(X)
    b = SoftImputeCompleter(random_state=0).fit_transform(X * s)
    # standardised per column: the fit does not depend on the units, up to the
    # pseudo-count shrinkage of the column moments (5 of about 60 entries)
    rel = np.linalg.norm((b / s - a)[~obs]) / np.linalg.norm(a[~obs])
    assert rel < 0.05


def test_sparse_input_lists_the_observed_entries():
    _, X, obs = _low_rank_bias_noise(seed=5, m=40, n=20)
    S = sp.csr_matrix((X[obs], np.nonzero(obs)), shape=X.shape)
    a = SoftImputeCompleter(random_state=0).fit_transform(X)
    b = SoftImputeCompleter(random_state=0).fit_transform(S)
    np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-8)


def test_fixed_shrinkage_and_bad_input():
    _, X, _ = _low_rank_bias_noise(seed=6, m=30, n=12)
    est = SoftImputeCompleter(shrinkage=2.0).fit(X)
    assert est.shrinkage_ == 2.0 and est.validation_rmse_ is None
    with pytest.raises(ValueError, match="col_side has 3 rows"):
        SoftImputeCompleter(np.ones((3, 2))).fit(X)
    with pytest.raises(ValueError, match="No entry of X is observed"):
        SoftImputeCompleter().fit(np.full((4, 3), np.nan))
    with pytest.raises(ValueError, match="pairs must index"):
        est.predict_entries(np.array([[30, 0]]))
    X0 = X.copy()
    SoftImputeCompleter(random_state=0).fit_transform(X)
    np.testing.assert_array_equal(np.isnan(X), np.isnan(X0))
    np.testing.assert_array_equal(X[~np.isnan(X)], X0[~np.isnan(X0)])


def test_convergence_warning_when_the_sweep_budget_runs_out():
    _, X, _ = _low_rank_bias_noise(seed=7)
    with pytest.warns(Warning, match="did not converge in max_iter=1"):
        SoftImputeCompleter(max_iter=1, tol=0.0, random_state=0).fit(X)
