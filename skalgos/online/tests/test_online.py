"""Delayed online learners: reductions, textbook bounds, protocol invariants."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone

from skalgos.online import (
    BOLD,
    AsyncMiniBatchRegressor,
    ClippedVAWRegressor,
    DelayedFTRLRegressor,
    DelayedOGDClassifier,
    DelayedOGDRegressor,
    DelayedOnlineNewtonStepClassifier,
    DelayedOnlineNewtonStepRegressor,
    QuantileMiniBatcher,
    delayed_progressive_score,
)
from skalgos.online.delays import (
    Constant,
    FromArray,
    Geometric,
    HeavyTailed,
    Spike,
    UniformInt,
)

# The paper's single-pass stream semantics (the estimators' defaults add
# target standardisation, radius="auto", multi-pass fit, a larger classifier
# ball and tail averaging for batch use): every stream test pins them.
_PAPER = {
    "standardize": False,
    "max_iter": 1,
    "average": False,
    "radius": 1.0,
}


def _paper(cls, *args, **kw):
    est = cls(*args, **kw)
    params = est.get_params(deep=False)
    paper = dict(_PAPER)
    if cls is DelayedFTRLRegressor and not args:
        paper["strong_convexity"] = 1.0
    if cls is DelayedOnlineNewtonStepClassifier:
        paper["epsilon"] = "auto"
    if cls is ClippedVAWRegressor:
        paper["fit_intercept"] = False
    if cls is BOLD and not args and "base_estimator" not in kw:
        paper["base_estimator"] = _paper(DelayedFTRLRegressor)
    est.set_params(**{k: v for k, v in paper.items() if k in params and k not in kw})
    return est


def _stream(T=120, n=3, seed=0, noise=0.1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(T, n)) / np.sqrt(n)
    y = X @ rng.normal(size=n) + noise * rng.normal(size=T)
    return X, y


# -- reductions to the undelayed textbook algorithms --------------------------


def test_vaw_zero_delay_is_textbook_vaw():
    X, y = _stream()
    lam = 0.7
    est = _paper(ClippedVAWRegressor, alpha=lam, clip=None).fit(X, y)
    n = X.shape[1]
    for t in range(X.shape[0]):
        A = lam * np.eye(n) + X[: t + 1].T @ X[: t + 1]
        b = X[:t].T @ y[:t]
        expect = X[t] @ np.linalg.solve(A, b)
        assert est.online_predictions_[t] == pytest.approx(expect, abs=1e-10)
    both = _paper(ClippedVAWRegressor, alpha=lam, clip=None, covariance="all").fit(X, y)
    np.testing.assert_allclose(
        both.online_predictions_, est.online_predictions_, atol=1e-10
    )


@pytest.mark.parametrize(
    "cls", [DelayedOnlineNewtonStepRegressor, DelayedOnlineNewtonStepClassifier]
)
def test_ons_zero_delay_is_textbook_ons(cls):
    X, y = _stream(80)
    if cls is DelayedOnlineNewtonStepClassifier:
        y = (y > 0).astype(int)
        signs = np.where(y == 1, 1.0, -1.0)
    gamma, eps = 0.3, 2.0
    est = _paper(cls, radius=None, gamma=gamma, epsilon=eps, fit_intercept=False).fit(
        X, y
    )
    n = X.shape[1]
    A = eps * np.eye(n)
    w = np.zeros(n)
    for t in range(X.shape[0]):
        m = X[t] @ w
        if cls is DelayedOnlineNewtonStepClassifier:
            assert est.online_predictions_[t] == pytest.approx(1 / (1 + np.exp(-m)))
            g = -signs[t] / (1 + np.exp(signs[t] * m)) * X[t]
        else:
            assert est.online_predictions_[t] == pytest.approx(m, abs=1e-10)
            g = (m - y[t]) * X[t]
        A += np.outer(g, g)
        w = w - np.linalg.solve(A, g) / gamma
    np.testing.assert_allclose(est.coef_, w, atol=1e-9)


def test_ogd_zero_delay_is_textbook_projected_ogd():
    X, y = _stream(60)
    est = _paper(
        DelayedOGDRegressor, radius=0.5, learning_rate=0.2, fit_intercept=False
    ).fit(X, y)
    w = np.zeros(3)
    for t in range(60):
        assert est.online_predictions_[t] == pytest.approx(X[t] @ w)
        w = w - 0.2 * (X[t] @ w - y[t]) * X[t]
        if np.linalg.norm(w) > 0.5:
            w *= 0.5 / np.linalg.norm(w)
    np.testing.assert_allclose(est.coef_, w, atol=1e-12)


def test_ftrl_zero_delay_unconstrained_is_ftl_on_surrogates():
    X, y = _stream(50)
    lam = 2.0
    est = _paper(DelayedFTRLRegressor, lam, radius=None, fit_intercept=False).fit(X, y)
    ws, lin = [np.zeros(3)], np.zeros(3)
    for t in range(50):
        w = ws[-1]
        g = (X[t] @ w - y[t]) * X[t] + lam * w
        lin += lam * w - g
        ws.append(lin / (lam * (t + 1)))
    np.testing.assert_allclose(est.coef_, ws[-1], atol=1e-12)


# -- regret below the proven (undelayed) bounds -------------------------------


def test_vaw_regret_below_textbook_bound():
    # Cesa-Bianchi & Lugosi, Thm 11.8, for the loss (yhat - y)^2 / 2 here:
    # regret(u) <= a ||u||^2 / 2 + (d Y^2 / 2) sum_i ln(1 + lambda_i / a).
    X, y = _stream(300, n=4, seed=3)
    a = 1.0
    score = delayed_progressive_score(
        _paper(ClippedVAWRegressor, alpha=a, clip=None), X, y, comparator=np.zeros(4)
    )
    u = np.linalg.solve(a * np.eye(4) + X.T @ X, X.T @ y)
    regret = np.sum(score.losses) - np.sum(0.5 * (X @ u - y) ** 2)
    lam = np.linalg.eigvalsh(X.T @ X)
    bound = 0.5 * a * u @ u + 0.5 * 4 * np.max(y**2) * np.sum(np.log1p(lam / a))
    assert regret <= bound


def test_ogd_regret_below_textbook_bound():
    # Hazan, Thm 3.1: eta_t = D / (G sqrt(t)) gives regret <= 1.5 G D sqrt(T).
    X, y = _stream(400, seed=4)
    radius = 1.0
    s = delayed_progressive_score(
        _paper(DelayedOGDRegressor, radius=radius, fit_intercept=False), X, y
    )
    G = np.max(np.linalg.norm(X, axis=1)) * (
        np.max(np.linalg.norm(X, axis=1)) * radius + np.max(np.abs(y))
    )
    assert s.regret <= 1.5 * G * 2 * radius * np.sqrt(len(y))


def test_ftl_strongly_convex_regret_below_log_bound():
    # FTL on lambda-strongly convex surrogates: regret <= (2 G^2 / lambda)(1 + ln T),
    # with G bounding the surrogate gradients on the ball.
    X, y = _stream(400, seed=5)
    lam, radius = 1.0, 1.0
    s = delayed_progressive_score(
        _paper(
            DelayedFTRLRegressor,
            lam,
            radius=radius,
            adaptive=False,
            fit_intercept=False,
        ),
        X,
        y,
    )
    xm = np.max(np.linalg.norm(X, axis=1))
    G = xm * (xm * radius + np.max(np.abs(y))) + lam * radius + lam * 2 * radius
    assert 0 <= s.regret + 1e-9
    assert s.regret <= 2 * G**2 / lam * (1 + np.log(len(y)))


# -- regret below proven bounds under non-zero delays ---------------------------
#
# Conventions (0-indexed rounds): the label of round s arrives at the end of
# round s + d_s; sigma_t = #{s < t : s + d_s >= t} labels are missing when
# round t is played; S_t = sum_{r <= t} (sigma_r + 1). Every bound below is
# proved in its comment for the update the learner implements, with the
# constants of the data: X = max ||x_t||, Y = max |y_t|, radius R, D = 2R.

_DELAYS = [Constant(4), UniformInt(0, 20), Spike(at=0.1, size=0.5)]


def _sigmas(d):
    arrive = np.arange(len(d)) + np.asarray(d)
    return np.array([np.sum(arrive[:t] >= t) for t in range(len(d))])


def _observed(d):
    """Rounds whose label arrives within the stream, in arrival order."""
    T = len(d)
    arrive = np.arange(T) + np.asarray(d)
    order = sorted((a, s) for s, a in enumerate(arrive) if a <= T - 1)
    return [s for _, s in order], np.array([a for a, _ in order])


def _squared_G(X, y, R):
    """Largest gradient norm of (w.x - y)^2 / 2 on the ball of radius R."""
    xm = np.max(np.linalg.norm(X, axis=1))
    return xm * (xm * R + np.max(np.abs(y)))


def _grad_norms(est, X, y):
    """||g_t|| of (w_t.x_t - y_t)^2 / 2 at the point w_t played in each round."""
    return np.abs(np.asarray(est.online_predictions_) - y) * np.linalg.norm(X, axis=1)


class _Spy:
    """Record what a learner does at each play and update (for the bounds)."""

    def __init__(self, est):
        self.plays, self.updates = [], []
        point, update = est._point, est._update

        def spy_point():
            w = point()
            self.plays.append((getattr(est, "_G", None), est._sigma_sum, w.copy()))
            return w

        def spy_update(x, y, w, sw=1.0):
            before = est._w.copy() if hasattr(est, "_w") else None
            self.updates.append((x.copy(), float(y), w.copy(), before))
            return update(x, y, w, sw)

        est._point, est._update = spy_point, spy_update


@pytest.mark.parametrize("model", _DELAYS, ids=repr)
def test_delayed_ogd_fixed_step_regret_below_bound(model):
    # Updates in arrival order, w_{k+1} = Proj(w_k - eta g_{s_k}), with g_s taken
    # at the point x_s played in round s. Convexity and the OGD telescoping give
    # sum_k <g, w_k - u> <= R^2/(2 eta) + eta G^2 K / 2 (w_1 = 0, K updates).
    # The staleness term <g, x_s - w_k> <= G ||x_s - w_k|| <= eta G^2 n_k, with
    # n_k the updates applied between round s's play and its own update; each
    # such pair is charged to the sigma of the later-played round, so
    # sum_k n_k <= sum_t sigma_t. A round whose label never arrives costs <= G D.
    # G is the largest ||g_t|| at the points played.
    T, R = 800, 1.0
    X, y = _stream(T, n=4, seed=7)
    d = model.sample(T, 0)
    K = len(_observed(d)[0])
    eta = R / (_squared_G(X, y, R) * np.sqrt(K + 2 * _sigmas(d).sum()))
    est = _paper(DelayedOGDRegressor, radius=R, learning_rate=eta, fit_intercept=False)
    s = delayed_progressive_score(est, X, y, delays=d)
    G = np.max(_grad_norms(est.fit(X, y, delays=d), X, y))
    bound = R**2 / (2 * eta) + eta * G**2 * (K / 2 + _sigmas(d).sum())
    bound += 2 * R * G * (T - K)
    assert s.sigma_max == _sigmas(d).max()
    assert s.regret <= bound
    assert bound < G * 2 * R * T  # the bound says something


@pytest.mark.parametrize("model", _DELAYS, ids=repr)
def test_delayed_ogd_auto_step_regret_below_sqrt_dtot_bound(model):
    # eta_k = D / (G_k sqrt(S_{a_k})), G_k the largest gradient norm seen (this
    # one included) and a_k the round the update arrives in: non-increasing, and
    # each move is <= eta_k ||g_k|| <= D / sqrt(S_{a_k}). The OGD telescoping
    # with non-increasing steps gives sum_k <g, w_k - u> <= D^2 / (2 eta_K) +
    # sum_k eta_k ||g_k||^2 / 2 <= G D sqrt(S_{a_K}) / 2 + G D sum_k 1 / (2
    # sqrt(S_{a_k})). A staleness pair (charged as above to the later-played
    # round t, whose S_t is at most the S of the update) costs <= G D / sqrt(S_t),
    # and an unobserved round <= G D:
    # regret <= G D [sqrt(S_{a_K}) / 2 + sum_k 1 / (2 sqrt(S_{a_k}))
    #                + sum_t sigma_t / sqrt(S_t) + (T - K)].
    T, R = 800, 1.0
    X, y = _stream(T, n=4, seed=8)
    d = model.sample(T, 0)
    est = _paper(DelayedOGDRegressor, radius=R, fit_intercept=False)
    s = delayed_progressive_score(est, X, y, delays=d)
    G = np.max(_grad_norms(est.fit(X, y, delays=d), X, y))
    sig = _sigmas(d)
    S = np.cumsum(sig + 1)
    obs, arrive = _observed(d)
    D = 2 * R
    bound = (
        G
        * D
        * (
            np.sqrt(S[arrive[-1]]) / 2
            + np.sum(0.5 / np.sqrt(S[arrive]))
            + np.sum(sig / np.sqrt(S))
            + (T - len(obs))
        )
    )
    assert s.regret <= bound
    assert bound < G * D * T


@pytest.mark.parametrize("model", _DELAYS, ids=repr)
def test_delayed_ftl_regret_below_sigma_log_bound(model):
    # f_t = (w.x - y)^2/2 + lam/2 ||w||^2 is lam-strongly convex, so its regret
    # is at most that on h_t(w) = <g_t, w> + lam/2 ||w - w_t||^2, whose
    # gradients on the ball are <= G_h = G + lam R + lam D. The learner plays
    # w_t = argmin_ball sum_{s in O_t} h_s; z_{t+1} = argmin_ball sum_{s <= t} h_s
    # (be-the-leader: sum h_t(z_{t+1}) <= sum h_t(u)). The two objectives differ
    # by the sigma_t + 1 terms not in O_t, and the full one is lam (t+1)-strongly
    # convex, so ||w_t - z_{t+1}|| <= (sigma_t + 1) G_h / (lam (t + 1)):
    # regret <= (G_h^2 / lam) sum_t (sigma_t + 1) / (t + 1)
    #        <= (G_h^2 / lam) (sigma_max + 1)(1 + ln T).
    T, R, lam = 800, 1.0, 1.0
    X, y = _stream(T, n=4, seed=9)
    d = model.sample(T, 0)
    kw = dict(radius=R, adaptive=False, fit_intercept=False)
    est = _paper(DelayedFTRLRegressor, lam, **kw)
    spy = _Spy(est)
    est.fit(X, y, delays=d)
    s = delayed_progressive_score(
        _paper(DelayedFTRLRegressor, lam, **kw), X, y, delays=d
    )
    np.testing.assert_allclose(s.losses, est.losses_)  # the spy changed nothing
    Gh = _surrogate_G(spy, X, y, lam, R)
    assert Gh <= _squared_G(X, y, R) + 3 * lam * R
    sig = _sigmas(d)
    bound = Gh**2 / lam * np.sum((sig + 1) / np.arange(1, T + 1))
    assert s.regret <= bound
    assert bound <= Gh**2 / lam * (sig.max() + 1) * (1 + np.log(T))


def _surrogate_G(spy, X, y, lam, R):
    """Bound on ||grad h_t(w)|| = ||g_t + lam (w - w_t)|| over the ball: the
    largest ||g_t|| at the points played, plus lam D."""
    W = np.array([w for _, _, w in spy.plays[: len(y)]])
    g = (np.einsum("ij,ij->i", W, X) - y)[:, None] * X + lam * W
    return np.max(np.linalg.norm(g, axis=1)) + 2 * lam * R


@pytest.mark.parametrize("model", _DELAYS, ids=repr)
def test_adaptive_delayed_ftrl_regret_below_bound(model):
    # The adaptive learner adds r_t(w) = ||w||^2 / (2 eta_t), eta_t = D / (G_t
    # sqrt(S_t)) (no term while G_t = 0): non-decreasing in t. With
    # Phi_t = sum_{s < t} h_s + r_t and wt_t its minimizer (undelayed FTRL on
    # the same regularizers), the FTRL lemma gives
    #   sum h_t(wt_t) - h_t(u) <= r_T(u) + sum_t ||grad P_t(wt_t)||^2 / (2 mu_{t+1}),
    # P_t = h_t + r_{t+1} - r_t, mu_{t+1} = lam (t+1) + 1/eta_{t+1} (0-indexed t),
    # ||grad P_t|| <= G_h + (1/eta_{t+1} - 1/eta_t) R; and the delayed point is
    # within sigma_t G_h / mu_t of wt_t (mu_t = lam t + 1/eta_t), so
    #   regret <= R^2/(2 eta_T) + sum_t (G_h + Delta_t R)^2 / (2 mu_{t+1})
    #             + sum_t G_h^2 sigma_t / mu_t.
    T, R, lam = 800, 1.0, 0.05
    X, y = _stream(T, n=4, seed=10)
    d = model.sample(T, 0)
    est = _paper(DelayedFTRLRegressor, lam, radius=R, fit_intercept=False)
    spy = _Spy(est)
    est.fit(X, y, delays=d)
    s = delayed_progressive_score(
        _paper(DelayedFTRLRegressor, lam, radius=R, fit_intercept=False), X, y, delays=d
    )
    np.testing.assert_allclose(s.losses, est.losses_)  # the spy changed nothing
    Gt, St, _ = (np.array(v) for v in zip(*spy.plays[:T]))
    inv_eta = Gt * np.sqrt(St) / (2 * R)  # 0 while no gradient has arrived
    Gh = _surrogate_G(spy, X, y, lam, R)
    G = Gh - 2 * lam * R
    sig = _sigmas(d)
    t = np.arange(T)
    mu = lam * t + inv_eta
    inv_next = np.append(inv_eta[1:], inv_eta[-1])
    mu_next = lam * (t + 1) + inv_next
    stale = np.divide(sig, mu, out=np.zeros(T), where=sig > 0)
    bound = (
        R**2 * inv_eta[-1] / 2
        + np.sum((Gh + (inv_next - inv_eta) * R) ** 2 / (2 * mu_next))
        + Gh**2 * np.sum(stale)
    )
    assert np.all(np.diff(inv_eta) >= 0)  # the regularizers never shrink
    assert s.regret <= bound
    assert bound < G * 2 * R * T


class _ONSSpy:
    """Record each delayed-ONS update: the round, the played point, the
    iterate before the step, the ridge ``lambda_k`` and the step taken."""

    def __init__(self, est):
        self.rows = []
        update = est._update

        def spy_update(x, y, w, sw=1.0):
            before = est._w.copy()
            update(x, y, w, sw)
            # the update comes at the end of round t_ - 1
            self.rows.append(
                (est.t_ - 1, x.copy(), float(y), w.copy(), before, est._lam)
            )

        est._update = spy_update


def _logistic_stream(T, seed, n=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(T, n)) / np.sqrt(n)
    w = np.linspace(1.0, -1.0, n)
    y = (X @ w + 0.5 * rng.normal(size=T) > 0).astype(int)
    return X, y


@pytest.mark.parametrize("model", [Constant(0)] + _DELAYS, ids=repr)
def test_delayed_ons_adaptive_regret_below_bound(model):
    # Logistic loss with ||x|| <= X on the ball of radius R: G = X, alpha =
    # exp(-X R), gamma = min(1/(4 G D), alpha) / 2 (Hazan, Lemma 4.3):
    #   f_s(x_s) - f_s(u) <= <g, x_s - u> - gamma/2 <g, x_s - u>^2
    # at the point x_s played in round s. The update k (arrival order) is
    # w_{k+1} = Proj^{A_k}(w_k - A_k^{-1} g_k), A_k = lambda_k I + gamma
    # sum_{j<=k} g_j g_j^T, with the delay ridge lambda_k non-decreasing.
    # Pythagoras in the A_k-norm and telescoping, with A_k - A_{k-1} =
    # (lambda_k - lambda_{k-1}) I + gamma g_k g_k^T and ||w - u|| <= D:
    #   sum_k a_k - gamma/2 a_k^2 <= lambda_K D^2 / 2 + sum_k g^T A_k^{-1} g / 2,
    # a_k = <g_k, w_k - u>. The played point differs from w_k by b_k =
    # <g, x_s - w_k>, costing |b_k| (1 + gamma G D) per round; an unobserved
    # round costs <= G D. Log-det: sum_k g^T A_k^{-1} g <= ln det(I + gamma
    # sum g g^T / lambda_0) / gamma; each step moves ||w_{j+1} - w_j|| <=
    # sqrt(g^T A_j^{-1} g / lambda_j) <= G / lambda_j, so the ridge that grows
    # with the missing labels is what keeps the stale term small.
    T, R = 600, 1.0
    X, y = _logistic_stream(T, 11)
    d = model.sample(T, 0)
    xm = np.max(np.linalg.norm(X, axis=1))
    G, Dm = xm, 2 * R
    gamma = 0.5 * min(1 / (4 * G * Dm), np.exp(-xm * R))
    eps = 1 / (gamma * Dm) ** 2
    kw = dict(radius=R, gamma=gamma, epsilon=eps, fit_intercept=False)
    est = _paper(DelayedOnlineNewtonStepClassifier, **kw)
    spy = _ONSSpy(est)
    est.fit(X, y, delays=d)
    s = delayed_progressive_score(
        _paper(DelayedOnlineNewtonStepClassifier, **kw), X, y, d
    )
    np.testing.assert_allclose(s.losses, est.losses_)  # the spy changed nothing
    rounds, lams, grads, stale, moves = [], [], [], [], []
    A = gamma * eps * np.eye(3)
    M = np.zeros((3, 3))
    ga = 0.0
    for k, (t, x, yy, w_played, w_now, lam) in enumerate(spy.rows):
        sgn = 1.0 if yy == 1.0 else -1.0
        g = -sgn / (1 + np.exp(sgn * (w_played @ x))) * x
        M += gamma * np.outer(g, g)
        A = lam * np.eye(3) + M
        ga += g @ np.linalg.solve(A, g)
        w_next = spy.rows[k + 1][4] if k + 1 < len(spy.rows) else est._w
        moves.append(np.linalg.norm(w_next - w_now))
        assert moves[-1] <= np.sqrt(g @ np.linalg.solve(A, g) / lam) + 1e-12
        stale.append(abs(g @ (w_played - w_now)))
        rounds.append(t)
        lams.append(lam)
        grads.append(g)
    lams, rounds, stale = np.array(lams), np.array(rounds), np.array(stale)
    K = len(spy.rows)
    lam0 = gamma * eps
    assert K == len(_observed(d)[0])
    assert np.all(np.diff(lams) >= 0) and lams[0] >= lam0
    sig = _sigmas(d)
    obs, arrive = _observed(d)
    # The played point of round s_k is w after the updates of rounds < s_k.
    for k, s_k in enumerate(obs):
        between = [j for j in range(k) if rounds[j] >= s_k]
        path = sum(moves[j] for j in between)
        assert stale[k] <= np.linalg.norm(grads[k]) * path + 1e-12
        assert path <= sum(G / lams[j] for j in between) + 1e-12
    if not np.any(d):
        assert np.all(lams == lam0) and stale.sum() == 0.0
    else:
        assert lams[-1] > lam0  # the delay ridge grew
        assert lams[-1] <= lam0 + G / Dm * np.sqrt(sig.sum()) + 1e-12
    logdet = np.linalg.slogdet(np.eye(3) + M / lam0)[1]
    assert ga <= logdet / gamma + 1e-9
    bound = lams[-1] * Dm**2 / 2 + ga / 2
    bound += (1 + gamma * G * Dm) * stale.sum() + G * Dm * (T - K)
    assert s.regret <= bound
    assert bound < G * Dm * T


def test_delayed_ons_step_shrinks_as_feedback_is_outstanding():
    # Same state, same feedback: round n0's label arrives after m further
    # rounds whose own labels never come back, so nothing else moves the
    # learner and only the outstanding count differs. The step it takes
    # must not grow with m (it grew before the fix: gamma was lowered, which
    # lengthens the step A^{-1} g / gamma).
    X, y = _stream(160, n=4, seed=3)
    n0 = 40
    for est in (
        _paper(DelayedOnlineNewtonStepRegressor),
        _paper(DelayedOnlineNewtonStepRegressor, gamma="theory"),
        _paper(DelayedOnlineNewtonStepClassifier),
    ):
        yy = (y > 0).astype(int) if hasattr(est, "predict_proba") else y
        steps = []
        for m in (0, 5, 20, 80):
            d = np.zeros(n0 + 1 + m, dtype=int)
            d[n0] = m
            d[n0 + 1 :] = 10**6
            e = clone(est).fit(X[:n0], yy[:n0])
            before = e.coef_.copy()
            e.partial_fit(X[n0 : n0 + 1 + m], yy[n0 : n0 + 1 + m], delays=d[n0:])
            assert e.n_observed_ == n0 + 1
            steps.append(np.linalg.norm(e.coef_ - before))
        assert steps[0] > 0
        assert np.all(np.diff(steps) <= 1e-15), (est, steps)
        assert steps[-1] < 0.5 * steps[0], (est, steps)


def test_delayed_ons_defaults_do_not_lose_to_delayed_ogd():
    # Standardised streams, both learners at their defaults.
    from sklearn.datasets import load_breast_cancer, make_friedman1
    from sklearn.preprocessing import StandardScaler

    X, y = make_friedman1(1500, noise=1.0, random_state=0)
    X = StandardScaler().fit_transform(X)
    y = (y - y.mean()) / y.std()
    d = Constant(20).sample(len(y))
    ons = _paper(DelayedOnlineNewtonStepRegressor).fit(X, y, delays=d)
    ogd = _paper(DelayedOGDRegressor).fit(X, y, delays=d)
    assert np.mean(ons.losses_) < np.mean(ogd.losses_)
    Xb, yb = load_breast_cancer(return_X_y=True)
    perm = np.random.default_rng(0).permutation(len(yb))
    Xb, yb = StandardScaler().fit_transform(Xb)[perm], yb[perm]
    d = UniformInt(0, 20).sample(len(yb), 0)
    ons = _paper(DelayedOnlineNewtonStepClassifier).fit(Xb, yb, delays=d)
    ogd = _paper(DelayedOGDClassifier).fit(Xb, yb, delays=d)
    assert np.mean(ons.losses_) < np.mean(ogd.losses_)


# -- the A-norm projection (Lanczos on the trust-region subproblem) -------------


def _projection_reference(A, y, radius):
    from skalgos.online._kernels import project_ball_eigh

    return project_ball_eigh(y, radius, A)


@pytest.mark.parametrize(
    "n, cond, scale", [(3, 10, 5.0), (40, 1e3, 1.05), (80, 1e2, 30)]
)
def test_a_norm_projection_matches_eigendecomposition_and_kkt(n, cond, scale):
    from skalgos.online._kernels import project_ball

    rng = np.random.default_rng(n)
    U, _ = np.linalg.qr(rng.normal(size=(n, n)))
    A = (U * np.logspace(0, np.log10(cond), n)) @ U.T
    A = 0.5 * (A + A.T)
    y = rng.normal(size=n)
    y *= scale / np.linalg.norm(y)
    A0, y0 = A.copy(), y.copy()
    x = project_ball(y, 1.0, A)
    ref, mu = _projection_reference(A, y, 1.0)
    np.testing.assert_allclose(x, ref, atol=1e-9)
    assert np.linalg.norm(x) == pytest.approx(1.0, abs=1e-12)
    # KKT: A (y - x) = mu x with mu >= 0.
    np.testing.assert_allclose(A @ (y - x), mu * x, atol=1e-8 * np.linalg.norm(A @ y))
    np.testing.assert_array_equal(A, A0)
    np.testing.assert_array_equal(y, y0)
    inside = y / np.linalg.norm(y) * 0.5
    assert project_ball(inside, 1.0, A) is inside


def test_a_norm_projection_krylov_size_is_rank_plus_one():
    # A = eps I + sum of m rank-one terms: the Krylov space of (A, A y) has
    # dimension <= m + 1, so Lanczos ends there with the exact projection
    # (the ONS matrix after m updates).
    from skalgos.online._kernels import _lanczos_projection

    rng = np.random.default_rng(0)
    n, m = 60, 7
    G = rng.normal(size=(m, n))
    A = 0.1 * np.eye(n) + G.T @ G
    y = 3 * rng.normal(size=n)
    x, k = _lanczos_projection(A, y, 1.0, 1e-12)
    assert k <= m + 1
    np.testing.assert_allclose(x, _projection_reference(A, y, 1.0)[0], atol=1e-10)


def test_ons_with_active_ball_matches_eigendecomposition_projection(monkeypatch):
    from skalgos.online import _learners

    rng = np.random.default_rng(2)
    X = rng.normal(size=(150, 6))
    y = (X @ rng.normal(size=6) > 0).astype(int)
    d = UniformInt(0, 5).sample(150, 0)
    kw = dict(radius=0.3, gamma=0.5, epsilon=1.0, fit_intercept=False)
    ours = _paper(DelayedOnlineNewtonStepClassifier, **kw).fit(X, y, delays=d)
    calls = []

    def reference(v, radius, A=None):
        if A is None or np.linalg.norm(v) <= radius:
            return v
        calls.append(1)
        return _projection_reference(A, v, radius)[0]

    monkeypatch.setattr(_learners, "project_ball", reference)
    ref = _paper(DelayedOnlineNewtonStepClassifier, **kw).fit(X, y, delays=d)
    assert len(calls) > 50  # the constraint was active
    np.testing.assert_allclose(ours.coef_, ref.coef_, atol=1e-9)
    np.testing.assert_allclose(ours.losses_, ref.losses_, atol=1e-9)


def test_clipping_never_hurts_when_label_in_range():
    X, y = _stream(200, seed=6, noise=0.5)
    d = UniformInt(0, 5).sample(200, 0)
    clip = _paper(ClippedVAWRegressor, alpha=0.5).fit(X, y, delays=d)
    plain = _paper(ClippedVAWRegressor, alpha=0.5, clip=None).fit(X, y, delays=d)
    Y = 0.0
    seen = set()
    pending = {}
    for t in range(200):
        in_range = abs(y[t]) <= Y
        if in_range:
            assert clip.losses_[t] <= plain.losses_[t] + 1e-12
        assert abs(clip.online_predictions_[t]) <= Y + 1e-12
        pending[t] = t + d[t]
        for s_ in [s_ for s_, r in pending.items() if r <= t]:
            Y = max(Y, abs(y[s_]))
            seen.add(s_)
            del pending[s_]


def test_ftrl_beats_bold_on_a_spike():
    X, y = _stream(300, seed=7)
    d = Spike(at=0, size=150).sample(300)
    ftrl = delayed_progressive_score(
        _paper(DelayedFTRLRegressor, 1.0, adaptive=False), X, y, d
    )
    bold = delayed_progressive_score(
        _paper(BOLD, _paper(DelayedFTRLRegressor, 1.0, adaptive=False)), X, y, d
    )
    assert ftrl.sigma_max == 1 and ftrl.d_max == 150
    assert bold.regret > 5 * ftrl.regret


# -- protocol --------------------------------------------------------------------


@pytest.mark.parametrize(
    "est",
    [
        _paper(DelayedFTRLRegressor, 0.5),
        _paper(DelayedOnlineNewtonStepRegressor, gamma=0.5),
        _paper(ClippedVAWRegressor),
        _paper(DelayedOGDRegressor),
        _paper(BOLD, n_copies=4),
        _paper(DelayedOnlineNewtonStepClassifier, gamma=0.5),
        _paper(DelayedOGDClassifier),
    ],
    ids=lambda e: type(e).__name__,
)
def test_partial_fit_in_chunks_equals_fit(est):
    X, y = _stream(90)
    classifier = hasattr(est, "predict_proba")
    if classifier:
        y = np.where(y > 0, "yes", "no")
    d = Geometric(0.3).sample(90, random_state=1)
    full = clone(est).fit(X, y, delays=d)
    part = clone(est)
    # The one-row chunk holds one class only: classes= names both up front.
    kw = {"classes": ["no", "yes"]} if classifier else {}
    for sl in (slice(0, 25), slice(25, 26), slice(26, 90)):
        part.partial_fit(X[sl], y[sl], delays=d[sl], **kw)
    np.testing.assert_allclose(
        full.online_predictions_, part.online_predictions_, atol=1e-12
    )
    if classifier:
        np.testing.assert_array_equal(full.classes_, part.classes_)
        np.testing.assert_allclose(
            full.predict_proba(X), part.predict_proba(X), atol=1e-12
        )
        np.testing.assert_array_equal(full.predict(X), part.predict(X))
    else:
        np.testing.assert_allclose(full.predict(X), part.predict(X), atol=1e-12)
    assert len(part.pending_) == len(full.pending_)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(0, 6), min_size=5, max_size=40))
def test_protocol_counters_and_no_early_feedback(delays):
    T = len(delays)
    X, y = _stream(T)
    est = _paper(DelayedOGDRegressor, learning_rate=0.1).fit(X, y, delays=delays)
    d = np.array(delays)
    assert est.d_tot_ == d.sum() and est.d_max_ == d.max()
    sigma = [sum(1 for s in range(t) if s + d[s] >= t) for t in range(T)]
    assert est.sigma_max_ == max(sigma)
    assert est.n_observed_ == sum(1 for s in range(T) if s + d[s] <= T - 1)
    # A label seen too early would change a prediction: delaying every
    # feedback to the end must give predictions from the initial weights.
    late = _paper(DelayedOGDRegressor, learning_rate=0.1).fit(
        X, y, delays=np.arange(T)[::-1] + T
    )
    np.testing.assert_array_equal(late.online_predictions_, np.zeros(T))


def test_classifier_binary_and_errors():
    X, y = _stream(80)
    labels = np.where(y > 0, "pos", "neg")
    clf = _paper(DelayedOGDClassifier, radius=3).fit(X, labels, delays=1)
    assert set(clf.predict(X)) <= {"neg", "pos"}
    np.testing.assert_allclose(clf.predict_proba(X).sum(axis=1), 1)
    with pytest.raises(ValueError, match="Only one class"):
        DelayedOGDClassifier().fit(X, np.zeros(80))


@pytest.mark.parametrize(
    "delays, match",
    [([0, 1], "one entry per row"), ([-1] * 10, "non-negative"), ([0.5] * 10, "whole")],
)
def test_bad_delays(delays, match):
    X, y = _stream(10)
    with pytest.raises(ValueError, match=match):
        _paper(DelayedFTRLRegressor).fit(X, y, delays=delays)


def test_bad_labels_and_feature_change():
    X, y = _stream(10)
    y2 = y.copy()
    y2[3] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        _paper(ClippedVAWRegressor).fit(X, y2)
    est = _paper(ClippedVAWRegressor).partial_fit(X, y)
    with pytest.raises(ValueError, match="features"):
        est.partial_fit(X[:, :2], y)


def test_delay_models():
    assert (Constant(3).sample(5) == 3).all()
    u = UniformInt(2, 4).sample(1000, 0)
    assert u.min() == 2 and u.max() == 4
    g = Geometric(0.5).sample(2000, 0)
    assert g.min() == 0 and abs(g.mean() - 1.0) < 0.15
    h = HeavyTailed().sample(4000, 0)
    assert abs(np.mean(h == 1000) - 0.05) < 0.015
    np.testing.assert_array_equal(FromArray([1, 2]).sample(5), [1, 2, 1, 2, 1])
    with pytest.raises(ValueError):
        Constant(-1)


# -- asynchronous mini-batching --------------------------------------------------


def test_async_zero_delay_is_minibatch_sgd():
    X, y = _stream(50)
    B, lr, T = 4, 0.3, 200
    est = _paper(
        AsyncMiniBatchRegressor,
        batch_size=B,
        learning_rate=lr,
        fit_intercept=False,
        random_state=0,
    ).fit(X, y, delays=np.zeros(T, int))
    idx = np.random.RandomState(0).randint(0, 50, size=T)
    w = np.zeros(3)
    for k in range(T // B):
        rows = idx[k * B : (k + 1) * B]
        w = w - lr * np.mean((X[rows] @ w - y[rows])[:, None] * X[rows], axis=0)
    np.testing.assert_allclose(est.coef_, w, atol=1e-12)
    assert est.n_stale_ == 0 and est.n_updates_ == T // B


def test_async_constant_delay_one_update_every_d_plus_one():
    X, y = _stream(30)
    D, T = 3, 100
    est = _paper(AsyncMiniBatchRegressor, batch_size=1, random_state=0).fit(
        X, y, delays=np.full(T, D)
    )
    # after each update, the next D arrivals were computed at the old iterate
    assert est.n_updates_ == len(range(D, T, D + 1))
    assert est.n_fresh_ == est.n_updates_ and est.n_stale_ == T - est.n_fresh_


@settings(max_examples=20, deadline=None)
@given(
    st.lists(st.integers(0, 30), min_size=20, max_size=120), st.sampled_from([0.5, 0.9])
)
def test_quantile_rounds_lower_bound(delays, q):
    d = np.array(delays)
    mb = QuantileMiniBatcher(q, delays=d)
    version_at = []
    for t, dt in enumerate(d):
        version_at.append(mb.version)
        v = version_at[t - dt] if t - dt >= 0 else 0
        if mb.offer(v, dt) and mb.ready():
            mb.step_done()
    tau = np.quantile(d, q, method="higher")
    B = mb.batch_size_
    assert B == max(1, int(np.ceil(tau)))
    assert mb.version >= q * len(d) / (tau + B) - 1
    assert mb.n_fresh_ + mb.n_stale_ == len(d)


def test_quantile_beats_async_under_heavy_tails():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 5))
    y = X @ rng.normal(size=5)
    d = HeavyTailed(long_delay=500).sample(3000, 1)
    ours = _paper(
        AsyncMiniBatchRegressor, quantile=0.9, learning_rate=0.1, random_state=0
    ).fit(X, y, d)
    base = _paper(
        AsyncMiniBatchRegressor, "async", learning_rate=0.1, random_state=0
    ).fit(X, y, d)
    assert ours.loss_curve_[-1] < base.loss_curve_[-1]


def test_async_auto_learning_rate_is_stable_on_unscaled_data():
    # learning_rate="auto" = 1 / max ||x||^2: no divergence on large features.
    rng = np.random.default_rng(0)
    X = 100.0 * rng.normal(size=(80, 3))
    y = X @ np.array([0.5, -1.0, 2.0])
    for method in ("quantile", "async"):
        est = _paper(AsyncMiniBatchRegressor, method, n_steps=2000, random_state=0).fit(
            X, y
        )
        assert np.all(np.isfinite(est.loss_curve_))
        assert est.loss_curve_[-1] < est.loss_curve_[0]
        assert est.learning_rate_ == pytest.approx(
            1.0 / np.max(np.sum(X**2, axis=1) + 1.0)
        )


def test_classifier_unfitted():
    from sklearn.exceptions import NotFittedError

    X = np.random.default_rng(0).normal(size=(9, 2))
    with pytest.raises(NotFittedError):
        DelayedOGDClassifier().predict(X)


# -- batch defaults (issue 34): weights, multiclass, real data, warnings ----------


@pytest.mark.parametrize(
    "make",
    [
        lambda: DelayedOGDRegressor(max_iter=3, shuffle=False),
        lambda: DelayedFTRLRegressor(max_iter=3, shuffle=False),
        lambda: DelayedOnlineNewtonStepRegressor(max_iter=3, shuffle=False),
        lambda: ClippedVAWRegressor(max_iter=3, shuffle=False),
        lambda: BOLD(n_copies=1, max_iter=3, shuffle=False),
        lambda: DelayedOGDClassifier(max_iter=3, shuffle=False),
    ],
)
def test_sample_weight_equals_repeating_or_dropping_rows(make):
    # VAW's state is sum w x x^T and sum w y x: integer weights are exactly
    # repeated rows. The gradient learners take one step of weight k at one
    # point where k repeats take k steps, so for them weight 0 / 1 is
    # checked: exactly dropping / keeping the row (also through the target
    # scale and radius="auto", which are weighted).
    X, y = _stream(40, seed=2)
    est = make()
    if hasattr(est, "predict_proba"):
        y = (y > 0).astype(int)
    high = 4 if isinstance(est, ClippedVAWRegressor) else 2
    sw = np.random.default_rng(0).integers(0, high, size=40)
    w = clone(est).fit(X, y, sample_weight=sw)
    r = clone(est).fit(np.repeat(X, sw, axis=0), np.repeat(y, sw))
    method = "decision_function" if hasattr(est, "predict_proba") else "predict"
    np.testing.assert_allclose(
        getattr(w, method)(X), getattr(r, method)(X), rtol=1e-9, atol=1e-12
    )


def test_async_integer_weights_draw_the_repeated_rows():
    X, y = _stream(30, seed=1)
    sw = np.random.default_rng(1).integers(0, 4, size=30)
    Xr, yr = np.repeat(X, sw, axis=0), np.repeat(y, sw)
    kw = dict(n_steps=500, random_state=0)
    w = AsyncMiniBatchRegressor(**kw).fit(X, y, sample_weight=sw)
    r = AsyncMiniBatchRegressor(**kw).fit(Xr, yr, sample_weight=np.ones(len(yr)))
    np.testing.assert_allclose(w.coef_, r.coef_, rtol=1e-10)
    np.testing.assert_allclose(w.intercept_, r.intercept_, rtol=1e-10)


@pytest.mark.parametrize(
    "cls", [DelayedOGDClassifier, DelayedOnlineNewtonStepClassifier]
)
def test_multiclass_ovr_agrees_with_each_binary_problem(cls):
    from sklearn.datasets import load_iris
    from sklearn.linear_model import SGDClassifier

    X, y = load_iris(return_X_y=True)
    X = (X - X.mean(0)) / X.std(0)
    kw = dict(max_iter=1, random_state=0)
    clf = cls(**kw).fit(X, y)
    margins = clf.decision_function(X)
    ref = SGDClassifier(max_iter=5, tol=None).fit(X, y)
    assert margins.shape == ref.decision_function(X).shape == (150, 3)
    assert clf.predict_proba(X).shape == (150, 3)
    np.testing.assert_allclose(clf.predict_proba(X).sum(axis=1), 1)
    for k, label in enumerate(clf.classes_):
        one = cls(**kw).fit(X, (y == label).astype(int))
        np.testing.assert_allclose(margins[:, k], one.decision_function(X), atol=1e-12)
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[margins.argmax(1)])


def test_partial_fit_one_pass_with_classes():
    X, y = _stream(90)
    labels = np.digitize(y, [-0.3, 0.3])  # three classes
    full = DelayedOGDClassifier(max_iter=1).fit(X, labels)
    part = DelayedOGDClassifier()
    for sl in (slice(0, 5), slice(5, 90)):
        part.partial_fit(X[sl], labels[sl], classes=[0, 1, 2])
    assert part.t_ == 90 and full.t_ == 90  # one pass, not max_iter
    np.testing.assert_allclose(part.decision_function(X), full.decision_function(X))
    with pytest.raises(ValueError, match="outside the classes"):
        part.partial_fit(X[:2], [0, 7])


def test_raw_target_parity_with_ridge_on_diabetes():
    from sklearn.datasets import load_diabetes
    from sklearn.linear_model import Ridge
    from sklearn.model_selection import train_test_split
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = load_diabetes(return_X_y=True)  # raw target: 25 to 346
    Xtr, Xte, ytr, yte = train_test_split(X, y, random_state=0)
    ridge = make_pipeline(StandardScaler(), Ridge()).fit(Xtr, ytr).score(Xte, yte)
    for est in (
        DelayedOGDRegressor(random_state=0),
        DelayedFTRLRegressor(random_state=0),
        DelayedOnlineNewtonStepRegressor(random_state=0),
        DelayedOnlineNewtonStepRegressor(radius=None, random_state=0),
        ClippedVAWRegressor(random_state=0),
        BOLD(random_state=0),
        AsyncMiniBatchRegressor(random_state=0),
    ):
        score = make_pipeline(StandardScaler(), est).fit(Xtr, ytr).score(Xte, yte)
        assert score >= max(ridge, 0) - 0.05, (est, score, ridge)


def test_unit_ball_on_a_raw_target_warns():
    from sklearn.datasets import load_diabetes

    X, y = load_diabetes(return_X_y=True)
    with pytest.warns(UserWarning, match="standardize=True"):
        DelayedOGDRegressor(standardize=False, radius=1.0).fit(X, y)
