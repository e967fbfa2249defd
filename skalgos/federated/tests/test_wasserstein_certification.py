"""Meta-Wasserstein certification: adversarial risks, knapsack, coverage."""

import numpy as np
import pytest
from scipy import optimize, stats

from skalgos.metrics import (
    client_adversarial_risk,
    dkw_band,
    robust_cdf_bound,
    robust_mean_bound,
)
from skalgos.metrics._certification import _knapsack, _wasserstein_cdf


class _Linear:
    """A fixed, fitted linear classifier (sklearn attribute conventions)."""

    def __init__(self, W, b, classes):
        self.coef_, self.intercept_, self.classes_ = W, b, np.asarray(classes)

    def predict(self, X):
        W = self.coef_
        if W.shape[0] == 1:
            return self.classes_[(X @ W[0] + self.intercept_[0] > 0).astype(int)]
        return self.classes_[np.argmax(X @ W.T + self.intercept_, axis=1)]


@pytest.mark.parametrize("cost", ["sq_euclidean", "euclidean"])
def test_adversarial_risk_matches_grid_search(cost):
    # oracle: sup over a fine grid of x' of 1{h(x') != y} - gamma c(x, x')
    rng = np.random.RandomState(0)
    est = _Linear(rng.normal(size=(3, 2)), rng.normal(size=3), [0, 1, 2])
    X = rng.uniform(-1, 1, size=(6, 2))
    y = rng.randint(3, size=6)
    h = 0.004
    g1 = np.arange(-3, 3 + h, h)
    G = np.stack(np.meshgrid(g1, g1), -1).reshape(-1, 2)
    wrong_grid = est.predict(G)[None, :] != y[:, None]
    for gamma in (0.5, 3.0, 20.0):
        adv = client_adversarial_risk(
            est, X, y, [gamma], client_id=np.arange(6), cost=cost
        )
        d2 = ((X[:, None, :] - G[None, :, :]) ** 2).sum(-1)
        c = d2 if cost == "sq_euclidean" else np.sqrt(d2)
        brute = np.max(np.where(wrong_grid, 1.0, 0.0) - gamma * c, axis=1)
        brute = np.maximum(brute, (est.predict(X) != y).astype(float))
        phi = adv.adversarial[gamma]
        # the grid can only miss the supremum, by at most a grid step of cost
        e, D = np.sqrt(2) * h, 6 * np.sqrt(2)  # grid gap, box diameter
        step = gamma * ((2 * D * e + e * e) if cost == "sq_euclidean" else e)
        assert np.all(brute <= phi + 1e-12)
        assert np.all(phi - brute <= step + 1e-12)
        assert np.any(phi > (est.predict(X) != y))  # some rows gain from moving


def test_adversarial_risk_binary_sklearn_convention():
    from sklearn.linear_model import LogisticRegression

    rng = np.random.RandomState(1)
    X = rng.normal(size=(300, 3))
    y = np.where(X @ [1.0, -2.0, 0.5] > 0.3, "b", "a")
    clf = LogisticRegression().fit(X, y)
    adv = client_adversarial_risk(clf, X, y, [5.0])
    # distance to the separating plane, by hand
    w, b = clf.coef_[0], clf.intercept_[0]
    s = X @ w + b
    m = np.where(y == "b", s, -s)
    per = np.where(m <= 0, 1.0, np.maximum(0, 1 - 5.0 * (m / np.linalg.norm(w)) ** 2))
    np.testing.assert_allclose(adv.adversarial[5.0], [per.mean()], rtol=1e-12)
    np.testing.assert_allclose(adv.losses, [np.mean(clf.predict(X) != y)])


def test_knapsack_matches_linprog():
    rng = np.random.RandomState(2)
    for _ in range(30):
        K = rng.randint(1, 15)
        cost = rng.exponential(size=K) * (rng.uniform(size=K) > 0.3)
        budget = rng.uniform(0, 1.5)
        res = optimize.linprog(
            -np.ones(K) / K,
            A_ub=cost[None, :] / K,
            b_ub=[budget],
            bounds=[(0, 1)] * K,
            method="highs",
        )
        assert _knapsack(cost[None, :], budget)[0] == pytest.approx(-res.fun, abs=1e-9)


def _adversarial_grid(r, rng, gammas=(1.0, 10.0)):
    return {g: np.minimum(1.0, r + rng.uniform(0, 0.3, r.shape) / g) for g in gammas}


@pytest.mark.filterwarnings("ignore:.*the bound is vacuous:UserWarning")
def test_wasserstein_equals_vanilla_at_radius_zero():
    rng = np.random.RandomState(3)
    r = rng.beta(2, 5, size=150)
    lam = np.linspace(0.013, 0.987, 37)
    adv = _adversarial_grid(r, rng)
    band = dkw_band(r, delta=0.05, n_samples=50)
    rob = robust_cdf_bound(r, lam, wasserstein=adv, radius=0.0, n_samples=50)
    np.testing.assert_allclose(rob.upper, 1 - band.evaluate(lam)[0], atol=1e-12)
    m = robust_mean_bound(r, wasserstein=adv, radius=0.0).upper
    assert m == robust_mean_bound(r, radius=0.0).upper


def test_wasserstein_monotone_in_radius_and_gamma_grid():
    rng = np.random.RandomState(4)
    r = rng.beta(2, 5, size=200)
    adv = _adversarial_grid(r, rng, gammas=(0.5, 2.0, 8.0, 32.0))
    lam = np.linspace(0.1, 0.8, 15)
    prev_c = robust_cdf_bound(r, lam, wasserstein=adv, radius=0.0).upper
    prev_m = robust_mean_bound(r, wasserstein=adv, radius=0.0).upper
    for eps in (0.001, 0.01, 0.05, 0.2):
        cur_c = robust_cdf_bound(r, lam, wasserstein=adv, radius=eps).upper
        cur_m = robust_mean_bound(r, wasserstein=adv, radius=eps).upper
        assert np.all(cur_c >= prev_c - 1e-12) and cur_m >= prev_m - 1e-12
        prev_c, prev_m = cur_c, cur_m
    # more multipliers give a larger lifting cost, hence a smaller tail bound
    sub = {g: adv[g] for g in (2.0, 32.0)}
    assert np.all(
        robust_cdf_bound(r, lam, wasserstein=adv, radius=0.05).upper
        <= robust_cdf_bound(r, lam, wasserstein=sub, radius=0.05).upper + 1e-12
    )


def _exact_worst_tail(m, lam, eps):
    """sup of P_mu'(R >= lam) over the meta-Wasserstein ball, exactly.

    Lifting a client with margin m to risk lam at least cost: move its
    correctly classified points nearest to the boundary, x0 in (0, t) with
    Phi(t - m) = lam, onto it, at cost int_0^t x^2 phi(x - m) dx; the best
    mu' then spends the budget on the cheapest clients (a knapsack)."""
    t = np.maximum(m + stats.norm.ppf(lam), 0.0)
    x = np.linspace(0.0, 1.0, 2001)[None, :] * t[:, None]
    cost = np.trapezoid(x**2 * stats.norm.pdf(x - m[:, None]), x, axis=1)
    return _knapsack(cost[None, :], eps)[0]


def test_wasserstein_program_is_exact_on_population_clients():
    # With the clients' exact phi_gamma (no sampling), the knapsack over the
    # Lagrangian cost bounds is the exact worst-case tail as the gamma grid
    # gets fine (convex duality); it must never fall below it.
    m = np.linspace(0.5, 2.0, 400)
    gam = np.geomspace(0.05, 5000, 120)
    x = np.linspace(0, 1, 401)[None, None, :] / np.sqrt(gam)[:, None, None]
    inner = np.trapezoid(
        (1 - gam[:, None, None] * x**2) * stats.norm.pdf(x - m[None, :, None]),
        x,
        axis=2,
    )
    r = stats.norm.cdf(-m)
    phi = r[None, :] + inner
    lam = np.array([0.25, 0.3, 0.35, 0.4])
    for eps in (0.005, 0.02, 0.05):
        val, _ = _wasserstein_cdf(r, lam, gam, phi, 0.0, 1.0, eps, 0.05, None)
        truth = np.array([_exact_worst_tail(m, t, eps) for t in lam])
        assert np.all(val >= truth - 2e-3)
        assert np.all(val <= truth + 1e-2)


def test_wasserstein_bounds_cover_worst_case_network():
    # clients: x | y=+-1 ~ N((+-m_k, 0), I) with m_k ~ U[0.5, 2]; h(x) = sign(x0).
    # The true risk of a client is Phi(-m_k); the worst target network in the
    # ball W1(mu, mu') <= eps (ground cost W_c, squared Euclidean) is exact.
    est = _Linear(np.array([[1.0, 0.0]]), np.array([0.0]), [0, 1])
    rng = np.random.RandomState(5)
    K, n, eps, delta, reps = 300, 1000, 0.02, 0.1, 30
    gammas = np.geomspace(0.5, 200, 12)
    lam = np.linspace(0.05, 0.4, 8)
    m_pop = np.linspace(0.5, 2.0, 4001)  # the meta-distribution, finely
    truth_tail = np.array([_exact_worst_tail(m_pop, t, eps) for t in lam])
    s = np.sqrt(eps)  # translating every client by s is in the ball too
    truth_mean = stats.norm.cdf(-(m_pop - s)).mean()
    ok_c = ok_m = 0
    widths = []
    for _ in range(reps):
        mk = rng.uniform(0.5, 2.0, size=K)
        yk = rng.randint(2, size=(K, n))
        Xk = rng.normal(size=(K, n, 2))
        Xk[..., 0] += np.where(yk == 1, mk[:, None], -mk[:, None])
        adv = client_adversarial_risk(
            est,
            Xk.reshape(-1, 2),
            yk.ravel(),
            gammas,
            client_id=np.repeat(np.arange(K), n),
        )
        kw = dict(wasserstein=adv.adversarial, radius=eps, delta=delta)
        cdf = robust_cdf_bound(adv.losses, lam, n_samples=adv.n_samples, **kw)
        mean = robust_mean_bound(adv.losses, n_samples=adv.n_samples, **kw)
        ok_c += bool(np.all(cdf.upper >= truth_tail))
        ok_m += bool(mean.upper >= truth_mean)
        widths.append(cdf.upper)
    floor = (1 - delta) - 3 * np.sqrt(delta * (1 - delta) / reps)
    assert ok_c / reps >= floor and ok_m / reps >= floor
    # and the certificate is informative: below 1 at the larger thresholds
    assert np.mean(widths, axis=0)[-1] < 1.0


def test_wasserstein_bad_input():
    r = np.array([0.1, 0.5])
    good = {1.0: [0.2, 0.6]}
    with pytest.raises(ValueError, match="not both"):
        robust_cdf_bound(r, f_divergence="kl", wasserstein=good, radius=0.1)
    with pytest.raises(ValueError, match="gamma"):
        robust_cdf_bound(r, wasserstein={0.0: [0.2, 0.6]}, radius=0.1)
    with pytest.raises(ValueError, match="at least the clean loss"):
        robust_mean_bound(r, wasserstein={1.0: [0.0, 0.6]}, radius=0.1)
    with pytest.raises(ValueError, match="one adversarial loss per client"):
        robust_cdf_bound(r, wasserstein={1.0: [0.2]}, radius=0.1)
    with pytest.raises(ValueError, match="loss_range"):
        robust_cdf_bound(r, wasserstein={1.0: [0.2, 1.5]}, radius=0.1)
    with pytest.raises(TypeError, match="mapping"):
        robust_cdf_bound(r, wasserstein=[0.2, 0.6], radius=0.1)
    est = _Linear(np.array([[1.0, 0.0]]), np.array([0.0]), [0, 1])
    X, y = np.array([[1.0, 0.0], [-1.0, 0.0]]), np.array([1, 0])
    with pytest.raises(ValueError, match="gammas"):
        client_adversarial_risk(est, X, y, [-1.0])
    with pytest.raises(ValueError, match="cost"):
        client_adversarial_risk(est, X, y, [1.0], cost="l1")
    with pytest.raises(ValueError, match="features"):
        client_adversarial_risk(est, X[:, :1], y, [1.0])
    with pytest.raises(TypeError, match="linear classifiers only"):
        client_adversarial_risk(object(), X, y, [1.0])


@pytest.mark.filterwarnings("ignore:.*the bound is vacuous:UserWarning")
def test_classifier_certify_wasserstein():
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
    lam = [0.2, 0.5]
    gam = np.geomspace(0.1, 100, 8)
    b0 = clf.certify(X[1000:], y[1000:], cid, wasserstein_gammas=gam, thresholds=lam)
    b1 = clf.certify(
        X[1000:], y[1000:], cid, wasserstein_gammas=gam, radius=1.0, thresholds=lam
    )
    assert np.all(b1.upper >= b0.upper)
    with pytest.raises(ValueError, match="not both"):
        clf.certify(X[1000:], y[1000:], cid, f_divergence="kl", wasserstein_gammas=gam)
    mlp = FederatedClassifier(model="mlp", n_clients=5, n_rounds=2, random_state=0)
    mlp.fit(X[:500], y[:500])
    with pytest.raises(ValueError, match="model='linear'"):
        mlp.certify(X[1000:], y[1000:], cid, wasserstein_gammas=gam)
