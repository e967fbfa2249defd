import warnings

import numpy as np
import pytest
from scipy import optimize, stats

from skalgos.metrics import dkw_band, robust_cdf_bound, robust_mean_bound
from skalgos.metrics._certification import _constants, _f_mean_program, _two_value


def test_dkw_coverage_monte_carlo():
    # clients' true risks ~ Beta(2, 5); each reports the 0-1 loss on n samples
    rng = np.random.RandomState(0)
    K, n, delta, reps = 200, 100, 0.1, 300
    grid = np.linspace(0, 1, 401)
    F = stats.beta(2, 5).cdf(grid)
    covered = 0
    for _ in range(reps):
        risk = rng.beta(2, 5, size=K)
        rhat = rng.binomial(n, risk) / n
        lo, up = dkw_band(rhat, delta=delta, n_samples=n).evaluate(grid)
        covered += bool(np.all((lo <= F + 1e-12) & (F <= up + 1e-12)))
    cov = covered / reps
    se = np.sqrt(delta * (1 - delta) / reps)
    assert cov >= (1 - delta) - 3 * se


def test_dkw_exact_is_tighter_and_quantile_interval():
    r = np.random.RandomState(1).uniform(size=300)
    a = dkw_band(r, method="massart")
    b = dkw_band(r, method="exact")
    assert b.eps_clients <= a.eps_clients
    lo, hi = a.quantile_interval(0.5)
    assert lo <= np.median(r) <= hi


def test_robust_equals_vanilla_at_radius_zero():
    r = np.random.RandomState(2).beta(2, 5, size=150)
    lam = np.linspace(0.013, 0.987, 37)  # off the data points
    band = dkw_band(r, delta=0.05)
    for f in ("kl", "chi2", "tv"):
        rob = robust_cdf_bound(r, lam, f_divergence=f, radius=0.0, delta=0.05)
        np.testing.assert_allclose(rob.upper, 1 - band.evaluate(lam)[0], atol=1e-12)


@pytest.mark.parametrize("f", ["kl", "chi2", "tv"])
def test_robust_bound_monotone_in_radius(f):
    r = np.random.RandomState(3).beta(2, 5, size=300)
    lam = np.linspace(0.1, 0.6, 11)
    prev = robust_cdf_bound(r, lam, f_divergence=f, radius=0.0).upper
    for eps in (0.05, 0.2, 0.5):
        cur = robust_cdf_bound(r, lam, f_divergence=f, radius=eps).upper
        assert np.all(cur >= prev - 1e-12)
        prev = cur


@pytest.mark.parametrize("f", ["kl", "chi2"])
def test_two_value_solver_matches_full_program(f):
    # oracle: the K-variable program solved by SLSQP from several starts
    rng = np.random.RandomState(4)
    K = 12
    Lam, fun, fmin, r1, r2, _ = _constants(f, 0.3, 0.05, K)
    budget = 0.3 + r2
    for _ in range(3):
        bad = rng.rand(K) < rng.uniform(0.2, 0.6)
        p = bad.mean()
        cons = [
            {"type": "ineq", "fun": lambda a: 1 + r1 - a.mean()},
            {"type": "ineq", "fun": lambda a: a.mean() - 1 + r1},
            {"type": "ineq", "fun": lambda a: budget - fun(a).mean()},
        ]
        best = -np.inf
        for start in (np.ones(K), np.where(bad, 1.5, 0.8)):
            res = optimize.minimize(
                lambda a, bad=bad: -(a * bad).mean(),
                start,
                bounds=[(1e-9, Lam)] * K,
                constraints=cons,
                method="SLSQP",
                options={"ftol": 1e-12, "maxiter": 1000},
            )
            if res.success:
                best = max(best, -res.fun)
        val = float(_two_value(np.array([p]), Lam, fun, fmin, r1, budget)[0])
        assert val >= best - 1e-6  # exact optimum is never below a local solver
        assert val <= best + 1e-4


def test_robust_cdf_covers_shifted_network():
    # source risks Beta(2, 5); target Beta(2.6, 5) (KL about 0.05); radius 0.1
    rng = np.random.RandomState(5)
    src, tgt = stats.beta(2, 5), stats.beta(2.6, 5)
    x = np.linspace(1e-6, 1 - 1e-6, 20001)
    kl = np.trapezoid(tgt.pdf(x) * np.log(tgt.pdf(x) / src.pdf(x)), x)
    assert kl < 0.1
    lam = np.linspace(0.1, 0.7, 13)
    truth = tgt.sf(lam)
    delta, reps, ok = 0.1, 100, 0
    for _ in range(reps):
        r = src.rvs(size=300, random_state=rng)
        ok += bool(
            np.all(robust_cdf_bound(r, lam, radius=0.1, delta=delta).upper >= truth)
        )
    assert ok / reps >= (1 - delta) - 3 * np.sqrt(delta * (1 - delta) / reps)


def test_robust_mean_bound():
    r = np.random.RandomState(6).beta(2, 5, size=80)
    m0 = robust_mean_bound(r).upper
    m1 = robust_mean_bound(r, radius=0.1).upper
    m2 = robust_mean_bound(r, radius=0.3, f_divergence="chi2").upper
    assert r.mean() < m0 <= m1 <= 1
    assert r.mean() < m2 <= 1


def test_certification_bad_input():
    with pytest.raises(ValueError, match="loss_range"):
        dkw_band([0.1, 1.5])
    with pytest.raises(ValueError, match="delta"):
        dkw_band([0.1, 0.5], delta=1.0)
    with pytest.raises(ValueError, match="delta"):
        robust_cdf_bound([0.1, 0.5], radius=0.1, delta=0.0)
    with pytest.raises(ValueError, match="f_divergence"):
        robust_cdf_bound([0.1, 0.5], f_divergence="hellinger", radius=0.1)
    with pytest.raises(ValueError, match="at most 1"):
        robust_mean_bound([0.1, 0.5], f_divergence="tv", radius=1.5)
    with pytest.raises(ValueError, match="radius"):
        robust_mean_bound([0.1, 0.5], radius=-1.0)
    with pytest.raises(ValueError, match="n_samples"):
        dkw_band([0.1, 0.5], n_samples=[10, 0])


def test_classifier_certify():
    from sklearn.datasets import load_digits
    from sklearn.preprocessing import scale

    from skalgos.datasets import make_federated
    from skalgos.federated import FederatedClassifier

    X, y = load_digits(return_X_y=True)
    X = scale(X)
    clf = FederatedClassifier(n_clients=10, n_rounds=5, random_state=0).fit(
        X[:1000], y[:1000]
    )
    _, _, cid = make_federated(
        X[1000:], y[1000:], 20, alpha=1.0, min_size=5, random_state=0
    )
    # 20 clients of about 40 rows: the bounds say nothing, and say why
    with pytest.warns(UserWarning, match="per-client Hoeffding term dominates"):
        band = clf.certify(X[1000:], y[1000:], cid)
    with pytest.warns(UserWarning, match="vacuous"):
        rob = clf.certify(X[1000:], y[1000:], cid, f_divergence="tv", radius=0.2)
    assert band.quantiles.shape == (20,)
    assert np.all((rob.upper >= 0) & (rob.upper <= 1))


def test_tv_two_value_solver_matches_the_linear_program():
    # with f = |t - 1| / 2 the K-variable program is a linear program
    # (s_k >= |alpha_k - 1|): solve it with HiGHS as the oracle
    rng = np.random.RandomState(7)
    K = 40
    Lam, fun, fmin, r1, r2, _ = _constants("tv", 0.05, 0.05, K)
    budget = 0.05 + r2
    for _ in range(4):
        bad = (rng.rand(K) < rng.uniform(0.05, 0.6)).astype(float)
        eye = np.eye(K)
        A = np.block(
            [
                [np.ones((1, K)) / K, np.zeros((1, K))],
                [-np.ones((1, K)) / K, np.zeros((1, K))],
                [np.zeros((1, K)), np.full((1, K), 0.5 / K)],
                [eye, -eye],
                [-eye, -eye],
            ]
        )
        b = np.r_[1 + r1, r1 - 1, budget, np.ones(K), -np.ones(K)]
        res = optimize.linprog(
            np.r_[-bad / K, np.zeros(K)],
            A_ub=A,
            b_ub=b,
            bounds=[(0, Lam)] * K + [(0, None)] * K,
        )
        val = float(_two_value(np.array([bad.mean()]), Lam, fun, fmin, r1, budget)[0])
        assert val == pytest.approx(-res.fun, abs=1e-9)


def test_tv_mean_program_is_the_greedy_mass_move():
    # No slacks: moving TV mass eps from the lowest losses to the highest
    # (each raised up to Lam) is optimal; the linear program must find it.
    rng = np.random.RandomState(8)
    K, eps, Lam = 50, 0.1, 3.0
    u = np.sort(rng.uniform(size=K))
    f = lambda t: 0.5 * np.abs(t - 1)  # noqa: E731
    got = _f_mean_program(u, "tv", Lam, f, 0.0, eps)
    move = eps * K  # units of alpha removed from the bottom, added at the top
    low = np.floor(move).astype(int)
    gain = -u[:low].sum() - (move - low) * u[low]
    room, k = move, K - 1
    while room > 1e-12:
        take = min(room, Lam - 1)
        gain += take * u[k]
        room -= take
        k -= 1
    assert got == pytest.approx(u.mean() + gain / K, abs=1e-9)


def test_chi2_bound_raises_no_overflow():
    # thresholds at or below every loss make p = 1, where the old solver
    # divided by 1 - p ~ 1e-300 and squared the result
    r = np.random.RandomState(9).beta(2, 5, size=300)
    lam = np.r_[0.0, np.linspace(0.05, 0.9, 9)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for radius in (0.01, 0.1, 1.0, 10.0):
            for f in ("chi2", "kl", "tv"):
                if f == "tv" and radius > 1:
                    continue
                up = robust_cdf_bound(
                    r, lam, f_divergence=f, radius=radius, n_samples=5000
                ).upper
                assert np.all(np.isfinite(up)) and up[0] == 1.0


def test_vacuous_bounds_warn_and_name_the_term():
    rng = np.random.RandomState(10)
    risk = rng.beta(2, 20, size=300)
    rhat = rng.binomial(50, risk) / 50  # K = 300 clients of 50 samples
    lam = np.linspace(0.05, 0.3, 6)
    with pytest.warns(UserWarning, match="per-client Hoeffding term dominates"):
        robust_cdf_bound(rhat, lam, f_divergence="kl", radius=0.1, n_samples=50)
    with pytest.warns(UserWarning, match="per-client Hoeffding term dominates"):
        dkw_band(rhat, n_samples=50)
    # exact risks of 8 clients: the clients-level terms are the problem
    with pytest.warns(UserWarning, match="DKW term over the clients dominates"):
        robust_cdf_bound(risk[:8], lam[:4], f_divergence="chi2", radius=0.2)
    with pytest.warns(UserWarning, match="DKW term over the clients dominates"):
        robust_mean_bound(risk[:8], f_divergence="tv", radius=0.2)
    # enough clients and samples: no warning
    big = rng.beta(2, 20, size=3000)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        robust_cdf_bound(big, lam, f_divergence="kl", radius=0.1, n_samples=20000)
        dkw_band(big, n_samples=20000)
