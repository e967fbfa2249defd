import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_iris
from sklearn.preprocessing import scale

from skalgos.datasets import make_federated
from skalgos.federated import (
    AdaMasFL,
    FedAsync,
    FedAvg,
    FedBuff,
    FedECADO,
    FederatedClassifier,
    FederatedRegressor,
    FedExP,
    FedNova,
    FedProx,
    MasFL,
)


def _iris():
    X, y = load_iris(return_X_y=True)
    return scale(X), y


def _quadratic_mixture(rng, n_clients=4, n=30):
    """Least-squares clients with different designs and targets: a mixture of
    heterogeneous quadratics whose global optimum is pooled least squares."""
    Xs, ys, cid = [], [], []
    for i in range(n_clients):
        X = rng.randn(n, 3) * (1 + 0.5 * i) + i
        Xs.append(X)
        ys.append(X @ rng.randn(3) + 0.1 * rng.randn(n) + i)
        cid += [i] * n
    X, y, cid = np.vstack(Xs), np.concatenate(ys), np.array(cid)
    A = np.c_[X, np.ones(len(X))]
    return X, y, cid, np.linalg.lstsq(A, y, rcond=None)[0]


def _params(est):
    return np.r_[np.ravel(est.coef_), np.ravel(est.intercept_)]


# ------------------------------------------------------------------ FedECADO
def test_fedecado_flows_off_fixed_steps_is_fedavg():
    X, y = _iris()
    kw = dict(n_clients=5, n_rounds=5, local_steps=4, learning_rate=0.1, random_state=0)
    avg = FederatedClassifier(FedAvg(), **kw).fit(X, y)
    eca = FederatedClassifier(FedECADO(inductance=np.inf, step_max=None), **kw).fit(
        X, y
    )
    np.testing.assert_allclose(_params(eca), _params(avg), rtol=1e-12, atol=1e-12)


def test_fedecado_equal_clients_equal_rates_is_fedavg():
    # every client holds the same data: flows stay zero, trajectories agree
    X, y = _iris()
    Xr, yr = np.vstack([X] * 3), np.concatenate([y] * 3)
    cid = np.repeat(np.arange(3), X.shape[0])
    kw = dict(partition="given", n_rounds=4, local_steps=5, batch_size=None)
    avg = FederatedClassifier(FedAvg(), **kw).fit(Xr, yr, client_id=cid)
    eca = FederatedClassifier(FedECADO(step_max=None), **kw).fit(Xr, yr, client_id=cid)
    np.testing.assert_allclose(_params(eca), _params(avg), rtol=1e-10, atol=1e-12)
    assert np.abs(eca.strategy_state_["flows"]).max() < 1e-12


def test_fedecado_exact_optimum_on_quadratic_mixture():
    X, y, cid, opt = _quadratic_mixture(np.random.RandomState(0))
    kw = dict(
        partition="given",
        local_steps=[1, 5, 10, 20],
        n_rounds=800,
        learning_rate=0.01,
        batch_size=None,
        alpha=0.0,
    )
    eca = FederatedRegressor(FedECADO(inductance=0.1), **kw).fit(X, y, client_id=cid)
    avg = FederatedRegressor(FedAvg(), **kw).fit(X, y, client_id=cid)
    np.testing.assert_allclose(_params(eca), opt, atol=1e-8)
    # FedAvg with unequal local work converges to a biased point
    assert np.abs(_params(avg) - opt).max() > 0.1


def test_fedecado_step_controller_bound():
    # (O4): every accepted local step satisfies dt * ||v_j - v_{j-1}||_inf / 2
    # <= lte_tol, with dt <= step_max and the local time within the window;
    # and the server window obeys the same rule one level up.
    from skalgos.federated._kernels import local_sgd
    from skalgos.federated._strategies import _stack

    X, y = _iris()
    strat = FedECADO(lte_tol=0.05, step_max=0.5, window_init=2.0, window_max=3.0)
    est = FederatedClassifier(
        strat, n_clients=4, local_steps=30, learning_rate=0.1, random_state=0
    )
    est._validate_params()
    data, ctx = est._setup(X, y, None, None, True)
    state, W = est.strategy_state_, est._W
    trace = []
    kwargs = est.strategy_._local_kwargs(state, ctx, W)
    local_sgd(
        data,
        _stack(ctx.xp, W, 4),
        np.full(4, 30),
        ctx.learning_rate,
        ctx.rng,
        batch_size=ctx.batch_size,
        trace=trace,
        **kwargs,
    )
    tight = 0
    tau = np.zeros(4)
    for rec in trace:
        on = rec["active"] > 0
        assert np.all(rec["step"][on] <= 0.5 + 1e-15)
        tau += rec["step"]
        if rec["change"] is not None:
            err = rec["step"] * rec["change"] / 2
            assert np.all(err[on] <= 0.05 * (1 + 1e-12))
            tight += int(np.sum(np.isclose(err[on], 0.05, rtol=1e-9)))
    assert tight > 0  # the controller was binding, not only the cap
    assert np.all(tau <= 2.0 * (1 + 1e-12))
    # server level: T_{k+1} ||xdot_k - xdot_{k-1}||_inf / 2 <= lte_tol
    est = FederatedClassifier(
        strat, n_clients=4, n_rounds=1, local_steps=30, random_state=0
    )
    Ws = []
    for _ in range(6):
        est.partial_fit(X, y, classes=[0, 1, 2])
        Ws.append(np.asarray(est._W))
    # windows[k]: the window of round k; the next round's is "window"
    T = est.strategy_state_["windows"] + [est.strategy_state_["window"]]
    W0 = np.zeros_like(Ws[0])
    vel = [(b - a) / t for a, b, t in zip([W0] + Ws[:-1], Ws, T)]
    for k in range(1, len(vel)):
        change = np.max(np.abs(vel[k] - vel[k - 1]))
        assert T[k + 1] * change / 2 <= 0.05 * (1 + 1e-12) or T[k + 1] == 3.0
        assert T[k + 1] <= 3.0
    assert est.history_[-1]["loss"] < est.history_[0]["loss"]


# ------------------------------------------------------------------ MasFL
class _ScaledLoss(FederatedClassifier):
    """The loss times 1000: every client gradient is scaled by the kernel's
    ``grad_scale`` (sample weights are normalised, so they cannot do it)."""

    def _setup(self, *args, **kwargs):
        data, ctx = super()._setup(*args, **kwargs)
        ctx.grad_scale = 1e3
        return data, ctx


# the unnormalised MasFL on 1000x the loss diverges (the point): it warns
@pytest.mark.filterwarnings("ignore:The training loss went up:UserWarning")
def test_adamasfl_invariant_to_loss_scaling():
    X, y = _iris()
    kw = dict(
        n_clients=6, n_rounds=3, local_steps=3, alpha=0.0, concurrency=3, random_state=1
    )
    a = FederatedClassifier(AdaMasFL(buffer_size=2), **kw).fit(X, y)
    b = _ScaledLoss(AdaMasFL(buffer_size=2), **kw).fit(X, y)
    np.testing.assert_allclose(_params(a), _params(b), rtol=1e-9, atol=1e-12)
    # the unnormalised MasFL is not scale invariant (so the test can fail)
    m1 = FederatedClassifier(MasFL(buffer_size=2), **kw).fit(X, y)
    m2 = _ScaledLoss(MasFL(buffer_size=2), **kw).fit(X, y)
    assert np.abs(_params(m1) - _params(m2)).max() > 1e-3


def test_adamasfl_auto_server_rate_decays_as_one_over_sqrt_updates():
    X, y = _iris()
    kw = dict(n_clients=6, n_rounds=3, local_steps=3, concurrency=3, random_state=1)
    est = FederatedClassifier(AdaMasFL(buffer_size=2), **kw).fit(X, y)
    k = est.strategy_state_["updates"]
    assert k == 3 * 6 // 2
    assert est.strategy_state_["server_lr"] == pytest.approx(1 / np.sqrt(k))
    fixed = FederatedClassifier(AdaMasFL(buffer_size=2, server_lr=0.2), **kw).fit(X, y)
    assert fixed.strategy_state_["server_lr"] == 0.2


def test_async_staleness_and_determinism():
    X, y = _iris()
    kw = dict(n_clients=8, n_rounds=3, concurrency=4, random_state=0)
    a = FederatedClassifier(FedBuff(buffer_size=2), **kw).fit(X, y)
    b = FederatedClassifier(FedBuff(buffer_size=2), **kw).fit(X, y)
    np.testing.assert_array_equal(_params(a), _params(b))
    assert max(h["staleness_max"] for h in a.history_) >= 1
    times = [h["time"] for h in a.history_]
    assert all(t1 < t2 for t1, t2 in zip(times, times[1:]))


# FedBuff's loss rises on these clients (the point of the test): it warns
@pytest.mark.filterwarnings("ignore:The training loss went up:UserWarning")
def test_masfl_beats_fedbuff_on_heterogeneous_quadratics():
    X, y, cid, opt = _quadratic_mixture(np.random.RandomState(0))
    kw = dict(
        partition="given",
        local_steps=[1, 5, 10, 20],
        n_rounds=150,
        learning_rate=0.01,
        batch_size=None,
        alpha=0.0,
        concurrency=2,
        random_state=0,
    )
    m = FederatedRegressor(MasFL(buffer_size=1, beta=0.5), **kw).fit(
        X, y, client_id=cid
    )
    f = FederatedRegressor(FedBuff(buffer_size=1), **kw).fit(X, y, client_id=cid)
    assert m.history_[-1]["loss"] <= f.history_[-1]["loss"]


# ------------------------------------------------------------------ one client
def _centralised_gd(X, y, n_steps, lr, n_classes):
    """Independent reference: full-batch GD on the mean softmax loss."""
    A = np.c_[X, np.ones(len(X))]
    Y = np.eye(n_classes)[y]
    W = np.zeros((A.shape[1], n_classes))
    path = [W.copy()]
    for _ in range(n_steps):
        Z = A @ W
        P = np.exp(Z - Z.max(1, keepdims=True))
        P /= P.sum(1, keepdims=True)
        W = W - lr * A.T @ (P - Y) / len(X)
        path.append(W.copy())
    return path


@pytest.mark.parametrize(
    "strategy",
    [
        FedAvg(),
        FedProx(mu=0.0),
        FedNova(),
        FedExP(),
        FedECADO(step_max=None),
        FedAsync(alpha=1.0),
        FedBuff(buffer_size=1),
    ],
    ids=lambda s: type(s).__name__,
)
def test_one_client_is_centralised(strategy):
    X, y = _iris()
    S, R, lr = 4, 3, 0.2
    est = FederatedClassifier(
        clone(strategy),
        n_clients=1,
        partition="iid",
        n_rounds=R,
        local_steps=S,
        learning_rate=lr,
        batch_size=None,
        alpha=0.0,
        random_state=0,
    ).fit(X, y)
    path = _centralised_gd(X, y, S * R, lr, 3)
    ref = path[-1]
    if isinstance(strategy, FedExP):  # FedExP reports the mean of the last two iterates
        ref = 0.5 * (path[-1] + path[-1 - S])
    np.testing.assert_allclose(est.coef_, ref[:-1].T, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(est.intercept_, ref[-1], rtol=1e-10, atol=1e-12)


# ------------------------------------------------------------------ API
def test_history_and_partial_fit():
    X, y = _iris()
    est = FederatedClassifier(n_clients=3, n_rounds=2, random_state=0)
    est.partial_fit(X, y, classes=[0, 1, 2])
    assert len(est.history_) == 1
    est.partial_fit(X, y)
    assert len(est.history_) == 2
    assert {"round", "time", "loss", "accuracy", "staleness_mean"} <= set(
        est.history_[0]
    )
    assert est.predict_proba(X[:5]).shape == (5, 3)


def test_strategy_by_name_and_grid():
    X, y = _iris()
    from sklearn.model_selection import GridSearchCV

    gs = GridSearchCV(
        FederatedClassifier(FedProx(), n_clients=3, n_rounds=2, random_state=0),
        {"strategy__mu": [0.0, 0.1]},
        cv=2,
    ).fit(X, y)
    assert gs.best_params_["strategy__mu"] in (0.0, 0.1)
    est = FederatedClassifier("fednova", n_clients=3, n_rounds=1).fit(X, y)
    assert isinstance(est.strategy_, FedNova)


def test_client_id_metadata_routing():
    import sklearn
    from sklearn.model_selection import cross_val_score

    X, y = _iris()
    cid = np.arange(X.shape[0]) % 4
    with sklearn.config_context(enable_metadata_routing=True):
        est = FederatedClassifier(n_rounds=2, partition="given").set_fit_request(
            client_id=True
        )
        s = cross_val_score(est, X, y, cv=2, params={"client_id": cid})
    assert s.shape == (2,)


def test_bad_input():
    X, y = _iris()
    with pytest.raises(ValueError, match="n_clients"):
        FederatedClassifier(n_clients=500).fit(X, y)
    with pytest.raises(ValueError, match="at least 2 classes"):
        FederatedClassifier(n_clients=2).fit(X, np.zeros(len(y)))
    with pytest.raises(ValueError, match="absent from classes"):
        FederatedClassifier(n_clients=2).partial_fit(X, y, classes=[0, 1])
    with pytest.raises(ValueError, match="local_steps"):
        FederatedClassifier(n_clients=3, local_steps=[1, 2]).fit(X, y)
    with pytest.raises(ValueError, match="client_id"):
        FederatedClassifier(partition="given").fit(X, y)
    with pytest.raises(ValueError, match="strategy"):
        FederatedClassifier(strategy="nope").fit(X, y)


# ------------------------------------------------------------------ datasets
def test_make_federated_skew_and_sizes():
    X, y = _iris()
    _, _, cid_skew = make_federated(X, y, 5, alpha=0.05, random_state=0)
    _, _, cid_flat = make_federated(X, y, 5, alpha=100.0, random_state=0)
    _, _, cid_iid = make_federated(X, y, 5, partition="iid", random_state=0)

    def purity(cid):  # mean share of each client's majority class
        return np.mean(
            [np.bincount(y[cid == k]).max() / (cid == k).sum() for k in range(5)]
        )

    assert purity(cid_skew) > purity(cid_flat) + 0.2
    assert np.bincount(cid_iid).max() - np.bincount(cid_iid).min() <= 1
    _, _, cid = make_federated(X, y, 10, alpha=0.5, min_size=5, random_state=0)
    assert np.bincount(cid, minlength=10).min() >= 5
    with pytest.raises(ValueError, match="fewer clients"):
        make_federated(X, y, 200, min_size=1)


# ------------------------------------------------------------------ engine
@pytest.mark.parametrize("strategy", [FedAvg(), FedECADO(), AdaMasFL(buffer_size=2)])
def test_engine_array_namespaces(array_namespace, strategy):
    ns = array_namespace
    X, y = _iris()
    kw = dict(n_clients=4, n_rounds=2, local_steps=3, concurrency=2, random_state=0)
    ref = FederatedClassifier(clone(strategy), **kw).fit(X, y)
    with ns.dispatch():
        est = FederatedClassifier(clone(strategy), **kw).fit(
            ns.asarray(X), ns.asarray(y)
        )
        coef = ns.to_numpy(est.coef_)
        pred = ns.to_numpy(est.predict(ns.asarray(X)))
    np.testing.assert_allclose(coef, ref.coef_, rtol=1e-6, atol=1e-8)
    np.testing.assert_array_equal(pred, ref.predict(X))


# ------------------------------------------------------------------ MLP
@pytest.mark.parametrize("task", ["classification", "regression"])
def test_mlp_gradient_matches_finite_differences(task):
    from skalgos.federated._kernels import (
        ClientData,
        client_losses,
        gradients,
        n_params,
    )
    from skalgos.utils import get_namespace

    rng = np.random.RandomState(0)
    c, m, d1, k, h = 2, 7, 4, 3, 5
    xp = get_namespace(np.ones(1))
    X = np.concatenate([rng.randn(c, m, d1 - 1), np.ones((c, m, 1))], axis=2)
    Y = (
        np.eye(k)[rng.randint(0, k, size=(c, m))]
        if task == "classification"
        else rng.randn(c, m, k)
    )
    w = np.ones((c, m))
    data = ClientData(xp, X, Y, w, np.full(c, m), task, 0.0, hidden=h)
    W = rng.randn(c, *n_params(d1, k, h)) * 0.5
    G = gradients(data, W, data.w, data.n_float)
    num = np.zeros_like(W)
    for idx in np.ndindex(W.shape[1:]):
        E = np.zeros_like(W)
        E[(slice(None),) + idx] = 1e-6
        num[(slice(None),) + idx] = (
            client_losses(data, W + E) - client_losses(data, W - E)
        ) / 2e-6
    np.testing.assert_allclose(G, num, rtol=1e-5, atol=1e-8)


def test_mlp_beats_linear_on_moons():
    from sklearn.datasets import make_moons

    X, y = make_moons(300, noise=0.1, random_state=0)
    kw = dict(n_clients=4, n_rounds=60, learning_rate=0.3, random_state=0)
    lin = FederatedClassifier(**kw).fit(X, y)
    mlp = FederatedClassifier(model="mlp", hidden_units=16, **kw).fit(X, y)
    assert mlp.score(X, y) > lin.score(X, y) + 0.05
    assert [a.shape for a in mlp.coefs_] == [(2, 16), (16, 2)]


def test_mlp_array_namespaces(array_namespace):
    ns = array_namespace
    X, y = _iris()
    kw = dict(model="mlp", hidden_units=4, n_clients=3, n_rounds=2, random_state=0)
    ref = FederatedClassifier(FedECADO(), **kw).fit(X, y)
    with ns.dispatch():
        est = FederatedClassifier(FedECADO(), **kw).fit(ns.asarray(X), ns.asarray(y))
        coefs = [ns.to_numpy(a) for a in est.coefs_]
    for a, b in zip(coefs, ref.coefs_):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-8)


# ------------------------------------------------------------------ realism
def _local_gd(A, Y, W, n_steps, lr):
    """Full-batch GD on one client's mean softmax loss (independent of the
    engine): rows ``A`` with the intercept column, one-hot ``Y``."""
    for _ in range(n_steps):
        Z = A @ W
        P = np.exp(Z - Z.max(1, keepdims=True))
        P /= P.sum(1, keepdims=True)
        W = W - lr * A.T @ (P - Y) / len(A)
    return W


def _fedavg_reference(X, y, cid, history, steps, lr):
    """FedAvg replayed from the reported clients of each round: the mean of
    their local models weighted by client size, renormalised over them."""
    A = np.c_[X, np.ones(len(X))]
    Y = np.eye(3)[y]
    W = np.zeros((A.shape[1], 3))
    for rec in history:
        clients = rec["clients"]
        if not clients:
            continue
        n = np.array([np.sum(cid == i) for i in clients], dtype=float)
        locs = [
            _local_gd(A[cid == i], Y[cid == i], W, int(steps[i]), lr) for i in clients
        ]
        W = sum(w * m for w, m in zip(n / n.sum(), locs))
    return W


_REALISM = dict(partition="given", batch_size=None, alpha=0.0, learning_rate=0.3)


@pytest.mark.parametrize(
    "strategy", [FedAvg(), FedECADO(), FedExP(), FedProx(mu=0.1)], ids=repr
)
def test_full_sampling_is_the_unsampled_run(strategy):
    # Sampling 100% of the clients, a deadline nobody misses and no dropout
    # take the code path of the plain run (nothing extra is drawn), so the
    # result is the same to the last bit.
    X, y = _iris()
    kw = dict(n_clients=6, n_rounds=4, local_steps="uniform", random_state=3)
    ref = FederatedClassifier(clone(strategy), **kw).fit(X, y)
    for extra in (
        {"clients_per_round": 1.0},
        {"clients_per_round": 6},
        {"deadline": 1e9, "stragglers": "drop", "dropout": 0.0},
    ):
        est = FederatedClassifier(clone(strategy), **kw, **extra).fit(X, y)
        np.testing.assert_array_equal(_params(est), _params(ref))
        assert est.history_ == ref.history_


def test_sampled_rounds_are_fedavg_over_the_sampled_clients():
    X, y = _iris()
    cid = np.arange(150) % 6
    est = FederatedClassifier(
        FedAvg(),
        n_rounds=5,
        local_steps=3,
        clients_per_round=0.5,
        random_state=0,
        **_REALISM,
    ).fit(X, y, client_id=cid)
    chosen = [tuple(r["clients"]) for r in est.history_]
    assert all(len(c) == 3 for c in chosen) and len(set(chosen)) > 1
    W = _fedavg_reference(X, y, cid, est.history_, np.full(6, 3), 0.3)
    np.testing.assert_allclose(_params(est), np.r_[W[:-1].T.ravel(), W[-1]], atol=1e-12)
    again = FederatedClassifier(
        FedAvg(),
        n_rounds=5,
        local_steps=3,
        clients_per_round=3,
        random_state=0,
        **_REALISM,
    ).fit(X, y, client_id=cid)
    assert [tuple(r["clients"]) for r in again.history_] == chosen  # seeded


def test_deadline_partial_work_is_a_smaller_step_budget():
    X, y = _iris()
    cid = np.arange(150) % 6
    kw = dict(n_rounds=3, random_state=1, **_REALISM)
    probe = FederatedClassifier(FedNova(), local_steps=8, **kw).fit(X, y, client_id=cid)
    speeds = np.asarray(probe.client_speeds_)
    D = float(max(np.median(8 * speeds), 1.01 * speeds.max()))  # all do >= 1 step
    budget = np.minimum(8, np.floor(D / speeds)).astype(int)
    assert budget.min() >= 1 and np.sum(budget < 8) >= 2
    late = FederatedClassifier(FedNova(), local_steps=8, deadline=D, **kw).fit(
        X, y, client_id=cid
    )
    ref = FederatedClassifier(FedNova(), local_steps=budget, **kw).fit(
        X, y, client_id=cid
    )
    np.testing.assert_array_equal(_params(late), _params(ref))
    assert all(r["n_stragglers"] == np.sum(8 * speeds > D) for r in late.history_)
    np.testing.assert_allclose([r["time"] for r in late.history_], D * np.arange(1, 4))


def test_deadline_drop_and_dropout_average_the_reporting_clients():
    X, y = _iris()
    cid = np.arange(150) % 6
    kw = dict(n_rounds=6, local_steps=4, random_state=2, **_REALISM)
    speeds = np.asarray(
        FederatedClassifier(FedAvg(), **kw).fit(X, y, client_id=cid).client_speeds_
    )
    D = float(np.median(4 * speeds))
    est = FederatedClassifier(
        FedAvg(), deadline=D, stragglers="drop", dropout=0.2, **kw
    ).fit(X, y, client_id=cid)
    on_time = set(np.flatnonzero(4 * speeds <= D).tolist())
    for r in est.history_:
        assert set(r["clients"]) <= on_time
        assert len(r["clients"]) + r["n_dropped"] + r["n_stragglers"] == 6
    assert sum(r["n_dropped"] for r in est.history_) > 0
    W = _fedavg_reference(X, y, cid, est.history_, np.full(6, 4), 0.3)
    np.testing.assert_allclose(_params(est), np.r_[W[:-1].T.ravel(), W[-1]], atol=1e-12)


def test_dropout_rate_and_asynchronous_dropout():
    X, y = _iris()
    est = FederatedClassifier(
        FedAvg(), n_clients=10, n_rounds=40, local_steps=1, dropout=0.3, random_state=0
    ).fit(X, y)
    lost = sum(r["n_dropped"] for r in est.history_)
    assert abs(lost / 400 - 0.3) < 4 * np.sqrt(0.3 * 0.7 / 400)
    kw = dict(n_clients=8, n_rounds=3, concurrency=4, random_state=0)
    a = FederatedClassifier(FedBuff(buffer_size=2), dropout=0.3, **kw).fit(X, y)
    b = FederatedClassifier(FedBuff(buffer_size=2), dropout=0.3, **kw).fit(X, y)
    np.testing.assert_array_equal(_params(a), _params(b))
    assert all(len(r["clients"]) == 8 for r in a.history_)
    assert sum(r["n_dropped"] for r in a.history_) > 0
    with pytest.raises(ValueError, match="asynchronous"):
        FederatedClassifier(FedBuff(), clients_per_round=2, **kw).fit(X, y)
    with pytest.raises(ValueError, match="clients_per_round=9"):
        FederatedClassifier(n_clients=8, clients_per_round=9).fit(X, y)


def test_no_report_rounds_warn():
    X, y = _iris()
    with pytest.warns(UserWarning, match="no client report"):
        FederatedClassifier(n_clients=2, n_rounds=8, dropout=0.9, random_state=0).fit(
            X, y
        )


def test_divergence_fails_loudly():
    rng = np.random.RandomState(0)
    X = rng.randn(200, 3) * 30
    y = X @ np.array([1.0, -2.0, 0.5])
    with pytest.raises(FloatingPointError, match=r"Round \d+: client \d+'s"):
        FederatedRegressor(n_clients=4, learning_rate=50.0, random_state=0).fit(X, y)
    with pytest.raises(FloatingPointError, match="Round 1: client 0's local model"):
        FederatedRegressor(
            n_clients=4, learning_rate=50.0, local_steps=200, random_state=0
        ).fit(X, y)
    # a finite but exploding classifier: the loss rose, say so
    Xc, yc = _iris()
    with pytest.warns(UserWarning, match="went up"):
        FederatedClassifier(
            n_clients=3, n_rounds=5, learning_rate=50.0, random_state=0
        ).fit(Xc * 10, yc)


# ------------------------------------------------------- drop-in defaults
def _iris_split():
    from sklearn.model_selection import train_test_split

    X, y = load_iris(return_X_y=True)
    return train_test_split(X, y, random_state=0)


def test_defaults_converge_on_iris_like_mlp():
    """At defaults (n_rounds='auto') the small-data fit reaches
    MLPClassifier's test accuracy; 20 fixed rounds (the old default) do not."""
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    Xtr, Xte, ytr, yte = _iris_split()
    fed = make_pipeline(StandardScaler(), FederatedClassifier(random_state=0))
    mlp = make_pipeline(StandardScaler(), MLPClassifier(max_iter=2000, random_state=0))
    acc = fed.fit(Xtr, ytr).score(Xte, yte)
    assert acc >= mlp.fit(Xtr, ytr).score(Xte, yte) - 0.05
    est = fed[-1]
    assert 20 < est.n_iter_ < est._planned_rounds  # stopped early, past 20
    short = make_pipeline(
        StandardScaler(), FederatedClassifier(n_rounds=20, random_state=0)
    )
    assert short.fit(Xtr, ytr).score(Xte, yte) < acc


def test_auto_rounds_stop_by_the_tol_rule():
    X, y = _iris()
    est = FederatedClassifier(n_clients=5, tol=1e-3, random_state=0).fit(X, y)
    loss = np.array([h["loss"] for h in est.history_])
    k = est.n_iter_no_change
    assert len(loss) == est.n_iter_
    # MLP's rule: each of the last k + 1 rounds failed to beat the best loss
    # before it by tol, and that never happened k + 1 times in a row earlier
    cnt, best, counts = 0, np.inf, []
    for value in loss:
        cnt = cnt + 1 if value > best - 1e-3 else 0
        best = min(best, value)
        counts.append(cnt)
    assert counts[-1] == k + 1
    assert max(counts[:-1]) <= k
    # a fixed n_rounds runs exactly that many rounds, whatever tol says
    fixed = FederatedClassifier(n_clients=5, n_rounds=300, random_state=0).fit(X, y)
    assert fixed.n_iter_ == len(fixed.history_) == 300


def test_auto_budget_exhausted_warns():
    """A learning rate so small that the loss still falls by more than tol
    per round when the budget ends: a ConvergenceWarning says what to do."""
    from sklearn.exceptions import ConvergenceWarning

    X, y = _iris()
    est = FederatedClassifier(n_clients=3, learning_rate=1e-2, tol=1e-6)
    with pytest.warns(ConvergenceWarning, match="whole budget of 200 rounds"):
        est.set_params(random_state=0).fit(X, y)
    assert est.n_iter_ == 200


def test_budget_grows_with_the_data():
    rng = np.random.RandomState(0)
    small = FederatedRegressor(n_clients=2, random_state=0)
    small.fit(rng.randn(100, 2), rng.randn(100))
    assert small._planned_rounds == 200
    n = 20000  # 10000 rows per client, 320 rows per round: 200 epochs
    big = FederatedRegressor(n_clients=2, partition="iid", random_state=0)
    X = rng.randn(n, 2)
    big.fit(X, X @ [1.0, 2.0] + 0.1 * rng.randn(n))
    assert big._planned_rounds == int(np.ceil(200 * 10000 / 320))
    assert big.n_iter_ < big._planned_rounds  # early stopping


# ------------------------------------------------------------ sample_weight
@pytest.mark.parametrize("Est", [FederatedClassifier, FederatedRegressor])
@pytest.mark.parametrize("strategy", [None, "fedecado", "fedprox"])
def test_integer_weights_are_repeated_rows(Est, strategy):
    """Full-batch clients given by client_id: weight k on a row is the row
    repeated k times (losses, client shares, target scaling)."""
    rng = np.random.RandomState(0)
    X, y = _iris()
    if Est is FederatedRegressor:
        y = 300.0 * X[:, 0] - 50.0 * X[:, 2] + 1000.0 + 10.0 * rng.randn(len(y))
    cid = rng.randint(0, 3, size=len(y))
    sw = rng.randint(0, 4, size=len(y))
    sw[:3] = 1  # each client keeps positive weight
    rep = np.repeat(np.arange(len(y)), sw)
    kw = dict(strategy=strategy, n_rounds=15, batch_size=None, random_state=0)
    a = Est(**kw).fit(X, y, client_id=cid, sample_weight=sw)
    b = Est(**kw).fit(X[rep], y[rep], client_id=cid[rep])
    np.testing.assert_allclose(_params(a), _params(b), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(
        [h["loss"] for h in a.history_], [h["loss"] for h in b.history_], rtol=1e-9
    )
    # and the weights matter (so the test can fail)
    c = Est(**kw).fit(X, y, client_id=cid)
    assert np.abs(_params(a) - _params(c)).max() > 1e-3


def test_weights_with_minibatches_draw_like_repeated_rows():
    """Mini-batches draw rows with probability w_j / sum(w): the weighted fit
    and the repeated-rows fit agree in distribution, so their averages over
    seeds converge to the same model (a weighted fit that ignored the weights
    in the draws would stay away)."""
    rng = np.random.RandomState(1)
    X = rng.randn(60, 2)
    y = X @ [1.0, -1.0] + 0.5 * rng.randn(60)
    sw = rng.randint(1, 4, size=60)
    rep = np.repeat(np.arange(60), sw)
    kw = dict(n_clients=1, n_rounds=30, batch_size=8, local_steps=5, alpha=0.0)
    pa = [
        _params(FederatedRegressor(random_state=s, **kw).fit(X, y, sample_weight=sw))
        for s in range(20)
    ]
    pb = [
        _params(FederatedRegressor(random_state=s, **kw).fit(X[rep], y[rep]))
        for s in range(20)
    ]
    exact = np.linalg.lstsq(
        np.c_[X, np.ones(60)] * np.sqrt(sw)[:, None], y * np.sqrt(sw), rcond=None
    )[0]
    np.testing.assert_allclose(np.mean(pa, axis=0), exact, atol=0.03)
    np.testing.assert_allclose(np.mean(pb, axis=0), exact, atol=0.03)


def test_zero_weight_client_is_an_error():
    X, y = _iris()
    cid = np.arange(len(y)) % 3
    sw = (cid != 1).astype(float)
    with pytest.raises(ValueError, match="client 1 has a total sample_weight of 0"):
        FederatedClassifier(n_rounds=2).fit(X, y, client_id=cid, sample_weight=sw)
    with pytest.raises(ValueError, match="(?i)negative"):
        FederatedClassifier(n_rounds=2).fit(X, y, sample_weight=-np.ones(len(y)))


# ------------------------------------------------------- target scaling
def test_standardize_target_is_equivariant_for_the_linear_model():
    """For the linear model the scaled and the raw fits are the same model
    (least squares with an unpenalised intercept is equivariant in y), and
    coef_ / intercept_ are in y's units."""
    rng = np.random.RandomState(0)
    X = rng.randn(300, 4)
    y = 5e4 + 2e3 * (X @ [1.0, -2.0, 0.5, 0.0]) + 500.0 * rng.randn(300)
    kw = dict(n_clients=4, n_rounds=40, random_state=0)
    a = FederatedRegressor(**kw).fit(X, y)
    b = FederatedRegressor(standardize_target=False, **kw).fit(X, y)
    assert a.target_scale_ == pytest.approx(y.std())
    assert (b.target_mean_, b.target_scale_) == (0.0, 1.0)
    np.testing.assert_allclose(a.predict(X), b.predict(X), rtol=1e-9)
    np.testing.assert_allclose(a.predict(X), X @ a.coef_ + a.intercept_, rtol=1e-12)
    assert a.history_[-1]["loss"] < 1.0  # the loss is in standardised units


def test_standardize_target_lets_the_mlp_fit_a_raw_target():
    rng = np.random.RandomState(0)
    X = rng.randn(400, 3)
    y = 3e4 + 1e4 * np.tanh(X[:, 0]) * X[:, 1] + 1e3 * rng.randn(400)
    kw = dict(model="mlp", n_clients=4, random_state=0)
    good = FederatedRegressor(**kw).fit(X, y)
    assert good.score(X, y) > 0.7
    mlp_out = good.predict(X[:5])
    W1, W2 = good.coefs_
    b1, b2 = good.intercepts_
    np.testing.assert_allclose(mlp_out, (np.tanh(X[:5] @ W1 + b1) @ W2 + b2)[:, 0])
    # unscaled, the loss is ~1e8 and the local steps barely move the model
    raw = FederatedRegressor(standardize_target=False, **kw).fit(X, y)
    assert raw.score(X, y) < 0.1


def test_sparse_input_is_the_dense_fit():
    import scipy.sparse as sp

    X, y = _iris()
    kw = dict(n_clients=3, n_rounds=5, random_state=0)
    a = FederatedClassifier(**kw).fit(sp.csr_matrix(X), y)
    b = FederatedClassifier(**kw).fit(X, y)
    np.testing.assert_array_equal(_params(a), _params(b))
    np.testing.assert_array_equal(a.predict_proba(sp.csc_matrix(X)), b.predict_proba(X))


# ---------------------------------------------------------------- issue 39
@pytest.mark.parametrize("scale", [1e300, 1e-300])
def test_regressor_target_of_any_magnitude(scale):
    # y * 1e300: the target's squares overflowed and predict gave 60
    # non-finite values; now its mean and scale are taken in a power-of-two
    # unit and the fit is y's, scaled (least squares is equivariant in y)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = X @ [1.0, -2.0, 0.5] + 0.1 * rng.normal(size=60)
    ref = FederatedRegressor(n_clients=3, n_rounds=20, random_state=0).fit(X, y)
    big = FederatedRegressor(n_clients=3, n_rounds=20, random_state=0)
    big.fit(X, y * scale)
    pred = big.predict(X)
    assert np.all(np.isfinite(pred))
    np.testing.assert_allclose(pred / scale, ref.predict(X), rtol=1e-9)
    assert big.target_scale_ == pytest.approx(ref.target_scale_ * scale, rel=1e-12)


def test_history_window_holds_the_last_rounds():
    X, y = _iris()
    full = FederatedClassifier(n_clients=3, n_rounds=30, random_state=0).fit(X, y)
    assert len(full.history_) == full.n_iter_ == 30
    for m in (0, 1, 7, 30, None):
        est = FederatedClassifier(
            n_clients=3, n_rounds=30, random_state=0, max_history=m
        ).fit(X, y)
        k = 30 if m is None else min(m, 30)
        assert est.n_iter_ == 30  # every round counted, kept or not
        assert est.history_ == full.history_[30 - k :]
        np.testing.assert_array_equal(est.predict_proba(X), full.predict_proba(X))
    back = pickle.loads(pickle.dumps(est))
    assert back.history_ == est.history_
    back.partial_fit(X, y)
    assert back.history_[-1]["round"] == 31


def test_history_window_across_partial_fit_rounds():
    X, y = _iris()
    cid = np.arange(len(y)) % 3
    full = FederatedRegressor(n_clients=3, random_state=0, max_history=None)
    part = FederatedRegressor(n_clients=3, random_state=0, max_history=4)
    for i in range(12):
        full.partial_fit(X, X[:, 0], client_id=cid)
        part.partial_fit(X, X[:, 0], client_id=cid)
        k = min(4, i + 1)
        assert part.history_ == full.history_[i + 1 - k :]
    assert [r["round"] for r in part.history_] == [9, 10, 11, 12]


def test_memory_flat_once_the_history_window_is_full():
    # one dict per round grew history_ by ~550 bytes per partial_fit call,
    # ~165 KB over the 300 rounds measured here. Measured from round 110 on
    # (numpy's and sklearn's small caches fill in the first rounds: ~15-30 KB
    # over these 300 rounds, tracemalloc points inside numpy), bound at
    # 48 KiB, under a third of what the old history added
    import gc
    import tracemalloc

    X, y = _iris()
    cid = np.arange(len(y)) % 3
    est = FederatedClassifier(n_clients=3, random_state=0, max_history=5)
    for _ in range(110):
        est.partial_fit(X, y, client_id=cid, classes=[0, 1, 2])
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        for _ in range(300):
            est.partial_fit(X, y, client_id=cid)
        gc.collect()
        growth = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    assert growth < 48 * 1024, f"{growth} bytes over rounds 111-410"
    assert len(est.history_) == 5 and est.n_iter_ == 410


def test_model_pickled_with_the_old_history_list_still_loads():
    X, y = _iris()
    est = FederatedClassifier(n_clients=3, n_rounds=5, random_state=0).fit(X, y)
    state = est.__getstate__()
    state["history_"] = state.pop("_history").records()
    old = FederatedClassifier.__new__(FederatedClassifier)
    old.__setstate__(state)
    assert old.history_ == est.history_
    old.partial_fit(X, y)
    assert old.history_[-1]["round"] == 6
