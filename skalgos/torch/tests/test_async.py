"""AsyncMiniBatch and DelaySimulator: reductions, the staleness filter, rounds."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from skalgos.online.delays import Constant, HeavyTailed  # noqa: E402
from skalgos.torch._async import AsyncMiniBatch, DelaySimulator  # noqa: E402

DT = torch.float64


def _data(n=48, d=3, seed=0):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, d, generator=g, dtype=DT)
    y = X @ torch.arange(1.0, d + 1, dtype=DT) + 0.1 * torch.randn(
        n, generator=g, dtype=DT
    )
    return X, y


def _model(d=3, seed=0):
    torch.manual_seed(seed)
    return torch.nn.Linear(d, 1).to(DT)


def _loss(model, X, y):
    return ((model(X).squeeze(1) - y) ** 2).mean()


@pytest.mark.parametrize("B", [1, 4])
def test_zero_delays_equal_base_optimizer_with_B_times_larger_batch(B):
    X, y = _data()
    b = 3  # rows per submitted gradient
    ref, ours = _model(), _model()
    base = torch.optim.SGD(ref.parameters(), lr=0.05, momentum=0.9)
    opt = AsyncMiniBatch(
        torch.optim.SGD(ours.parameters(), lr=0.05, momentum=0.9), batch_size=B
    )
    n_rounds = len(y) // (b * B)
    for k in range(n_rounds):
        rows = slice(k * b * B, (k + 1) * b * B)
        base.zero_grad()
        _loss(ref, X[rows], y[rows]).backward()
        base.step()
        for j in range(B):
            r = slice(k * b * B + j * b, k * b * B + (j + 1) * b)
            grads = torch.autograd.grad(_loss(ours, X[r], y[r]), ours.parameters())
            assert opt.submit(grads, opt.version, delay=0)
    assert opt.version == n_rounds and opt.n_stale_ == 0
    for p, q in zip(ref.parameters(), ours.parameters()):
        torch.testing.assert_close(p, q, rtol=1e-12, atol=1e-12)


def test_zero_delay_B1_is_bitwise_the_base_optimizer():
    X, y = _data()
    ref, ours = _model(), _model()
    base = torch.optim.Adam(ref.parameters(), lr=0.01)
    opt = AsyncMiniBatch(torch.optim.Adam(ours.parameters(), lr=0.01), batch_size=1)
    for t in range(20):
        r = slice(2 * t, 2 * t + 2)
        base.zero_grad()
        _loss(ref, X[r], y[r]).backward()
        base.step()

        def closure(r=r):
            _loss(ours, X[r], y[r]).backward()

        opt.submit(closure, opt.version)
    for p, q in zip(ref.parameters(), ours.parameters()):
        assert torch.equal(p, q)


def test_stale_gradients_are_never_applied():
    w = torch.nn.Parameter(torch.zeros(2, dtype=DT))
    opt = AsyncMiniBatch(torch.optim.SGD([w], lr=1.0), batch_size=2)
    poison = [torch.full((2,), float("nan"), dtype=DT)]
    one = [torch.ones(2, dtype=DT)]
    assert opt.submit(one, 0)
    assert not opt.submit(poison, -1)  # computed at an unknown older iterate
    assert opt.submit(one, 0)  # step 1: w = -1
    for _ in range(5):
        assert not opt.submit(poison, 0)  # computed at version 0, now stale
    called = []
    assert not opt.submit(lambda: called.append(1), 0)  # closure not even run
    assert not called
    assert opt.n_fresh_ == 2 and opt.n_stale_ == 7 and opt.version == 1
    assert torch.equal(w.detach(), torch.tensor([-1.0, -1.0], dtype=DT))


def test_constant_delay_one_update_every_D_plus_1_steps():
    X, y = _data()
    D, T = 4, 60
    model = _model()
    opt = AsyncMiniBatch(torch.optim.SGD(model.parameters(), lr=0.05), batch_size=1)
    sim = DelaySimulator(model, Constant(D), n_steps=T)
    versions = []
    for t in range(T):
        v = sim.publish(opt.version)
        opt.submit(lambda v=v, t=t: sim.gradient(_lossf(X, y), v, t), v, delay=D)
        versions.append(opt.version)
    # The first arrival (t = 0) is computed at the initial iterate, as are the
    # arrivals up to D; then every fresh one needs D + 1 further arrivals.
    expected = 1 + (T - 1) // (D + 1)
    assert opt.version == expected
    assert opt.n_fresh_ == expected and opt.n_stale_ == T - expected
    assert opt.delay_quantiles_[1.0] == D


def _lossf(X, y):
    def f(model, t):
        i = t % len(y)
        return _loss(model, X[i : i + 1], y[i : i + 1])

    return f


def test_simulator_gradient_is_taken_at_the_stale_snapshot():
    X, y = _data()
    model = _model()
    opt = AsyncMiniBatch(torch.optim.SGD(model.parameters(), lr=0.1), batch_size=1)
    sim = DelaySimulator(model, [0, 0, 0, 2, 0])
    snapshots = []
    for t in range(5):
        snapshots.append([p.detach().clone() for p in model.parameters()])
        v = sim.publish(opt.version)
        g = sim.gradient(_lossf(X, y), v, t)
        # Direct computation at the parameters published at step t - d_t.
        src = max(t - sim.delays[t], 0)
        ref = _model()
        with torch.no_grad():
            for p, s in zip(ref.parameters(), snapshots[src]):
                p.copy_(s)
        g_ref = torch.autograd.grad(_lossf(X, y)(ref, t), ref.parameters())
        for a, b in zip(g, g_ref):
            torch.testing.assert_close(a, b, rtol=0, atol=0)
        # The live parameters are untouched by the snapshot evaluation.
        for p, s in zip(model.parameters(), snapshots[t]):
            assert torch.equal(p.detach(), s)
        opt.submit(g, v)


@pytest.mark.parametrize("seed", [0, 1])
def test_rounds_lower_bound_with_quantile_batch(seed):
    # (O3): at least q T / (tau_q + B) - 1 base steps for B = ceil(tau_q).
    X, y = _data()
    q, T = 0.9, 600
    delays = HeavyTailed(short_max=3, long_delay=200).sample(T, seed)
    model = _model()
    opt = AsyncMiniBatch(
        torch.optim.SGD(model.parameters(), lr=0.01), quantile=q, delays=delays
    )
    sim = DelaySimulator(model, delays)
    sim.run(opt, _lossf(X, y))
    tau = int(np.quantile(delays, q, method="higher"))
    B = opt.batch_size_
    assert B == max(1, tau)
    assert opt.version >= q * T / (tau + B) - 1
    assert opt.n_fresh_ + opt.n_stale_ == T
    assert sim.n_snapshots_ <= 3 + opt.version


def test_simulator_trains_and_prunes_snapshots():
    X, y = _data(n=64)
    model = _model()
    opt = AsyncMiniBatch(torch.optim.SGD(model.parameters(), lr=0.1), batch_size=1)
    sim = DelaySimulator(model, [0, 1] * 300)
    with torch.no_grad():
        before = _loss(model, X, y).item()
    sim.run(opt, _lossf(X, y))
    with torch.no_grad():
        assert _loss(model, X, y).item() < 0.1 * before
    assert sim.n_snapshots_ <= 3


def test_bad_input():
    w = torch.nn.Parameter(torch.zeros(2))
    with pytest.raises(TypeError, match="torch.optim.Optimizer"):
        AsyncMiniBatch([w])
    with pytest.raises(ValueError, match="quantile"):
        AsyncMiniBatch(torch.optim.SGD([w], lr=0.1), quantile=1.5)
    opt = AsyncMiniBatch(torch.optim.SGD([w], lr=0.1))
    with pytest.raises(ValueError, match="one per parameter"):
        opt.submit([torch.ones(2), torch.ones(2)], 0)
    with pytest.raises(ValueError, match="n_steps"):
        DelaySimulator(torch.nn.Linear(2, 1), Constant(1))
    with pytest.raises(ValueError):
        DelaySimulator(torch.nn.Linear(2, 1), [1, -1])
