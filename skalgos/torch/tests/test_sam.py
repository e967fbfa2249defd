import copy
import io
import pickle

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from sklearn.model_selection import GridSearchCV  # noqa: E402

from skalgos.torch import (  # noqa: E402
    TorchClassifier,
    hessian_top_eigenvalue,
    hessian_trace,
    perturbed_sharpness,
)
from skalgos.torch.optim import SAM, TSAM, TiltedSAM, tilted_weights  # noqa: E402


def _problem(seed=0):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(40, 5, generator=g)
    y = torch.randint(0, 3, (40,), generator=g)
    torch.manual_seed(seed)
    net = torch.nn.Sequential(
        torch.nn.Linear(5, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3)
    )
    return net, X, y


def _closure(opt, net, X, y):
    def closure():
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(net(X), y)
        loss.backward()
        return loss

    return closure


def _grad_at(net, X, y, eps):
    """Loss and flat gradient at theta + eps (eps a list like the params)."""
    net = copy.deepcopy(net)
    with torch.no_grad():
        for p, e in zip(net.parameters(), eps):
            p.add_(e)
    net.zero_grad()
    loss = torch.nn.functional.cross_entropy(net(X), y)
    loss.backward()
    return float(loss.detach()), [p.grad.clone() for p in net.parameters()]


def _noise(params, gen, radius):
    z = [torch.randn(p.shape, generator=gen) for p in params]
    norm = float(torch.sqrt(sum((v.double() ** 2).sum() for v in z)))
    if norm > radius:
        z = [v * (radius / (norm + 1e-12)) for v in z]
    return z


def _step_and_update(opt_factory, seed=0):
    net, X, y = _problem(seed)
    before = [p.detach().clone() for p in net.parameters()]
    opt = opt_factory(net)
    opt.step(_closure(opt, net, X, y))
    return net, opt, [b - p.detach() for b, p in zip(before, net.parameters())]


def test_tilted_weights_limits():
    losses = torch.tensor([0.3, 1.2, 0.7])
    np.testing.assert_allclose(tilted_weights(losses, 0.0), [1 / 3] * 3)
    np.testing.assert_allclose(tilted_weights(losses, 1e4), [0, 1, 0], atol=1e-12)
    ref = np.exp(2.0 * losses.numpy()) / np.exp(2.0 * losses.numpy()).sum()
    np.testing.assert_allclose(tilted_weights(losses, 2.0), ref, rtol=1e-6)


@pytest.mark.parametrize("tilt", [0.0, 1e5, 3.0])
def test_tsam_aggregates_sample_gradients(tilt):
    # sampler="noise": the sample points are theta + (documented) noise draws.
    # t = 0 gives the mean of the sample gradients, large t the gradient at
    # the worst sample, other t the softmax(t * loss) average.
    s, radius = 4, 0.5
    net, X, y = _problem()
    ref_gen = torch.Generator().manual_seed(7)
    samples = [
        _grad_at(net, X, y, _noise(list(net.parameters()), ref_gen, radius))
        for _ in range(s)
    ]
    losses = np.array([lo for lo, _ in samples])
    w = np.exp(tilt * (losses - losses.max()))
    w /= w.sum()
    expected = [
        sum(wi * g[k] for wi, (_, g) in zip(w, samples))
        for k in range(len(samples[0][1]))
    ]
    if tilt == 0.0:
        np.testing.assert_allclose(w, 1 / s)
    if tilt == 1e5:
        assert w.max() == pytest.approx(1.0)

    _, opt, update = _step_and_update(
        lambda m: TiltedSAM(
            m.parameters(),
            lr=1.0,
            tilt=tilt,
            num_samples=s,
            sampler="noise",
            noise_radius=radius,
            generator=torch.Generator().manual_seed(7),
        )
    )
    np.testing.assert_allclose(opt.last_losses.numpy(), losses, rtol=1e-6)
    for u, e in zip(update, expected):
        np.testing.assert_allclose(u.numpy(), e.numpy(), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("tilt", [0.0, 1.0, 50.0])
def test_tsam_one_sample_without_noise_is_sam(tilt):
    def sam(m):
        return SAM(m.parameters(), lr=0.3, momentum=0.9, rho=0.1)

    def tsam(m):
        return TiltedSAM(
            m.parameters(),
            lr=0.3,
            momentum=0.9,
            rho=0.1,
            tilt=tilt,
            num_samples=1,
            noise="none",
        )

    net_a, _, _ = _step_and_update(sam)
    net_b, _, _ = _step_and_update(tsam)
    for a, b in zip(net_a.parameters(), net_b.parameters()):
        torch.testing.assert_close(a, b, rtol=0, atol=0)


def test_sam_ascent_point_is_exact_maximizer_of_linear_loss():
    # L(theta) = a . theta: the SAM step uses the gradient at theta + rho a/|a|,
    # which is again a; the first step moves exactly to the ball's maximizer.
    a = torch.tensor([3.0, -4.0])
    w = torch.nn.Parameter(torch.zeros(2))
    opt = SAM([w], lr=1.0, rho=0.5)
    w.grad = a.clone()
    opt.first_step()
    np.testing.assert_allclose(w.detach().numpy(), 0.5 * a.numpy() / 5.0, rtol=1e-6)
    opt.second_step()
    np.testing.assert_allclose(w.detach().numpy(), -a.numpy(), rtol=1e-6)


@pytest.mark.parametrize("cls", [SAM, TiltedSAM])
def test_radius_zero_is_base_optimizer(cls):
    kw = dict(noise="none", num_samples=2) if cls is TiltedSAM else {}
    net_a, _, _ = _step_and_update(
        lambda m: cls(m.parameters(), lr=0.2, momentum=0.5, rho=0.0, **kw)
    )
    net_b, X, y = _problem()
    base = torch.optim.SGD(net_b.parameters(), lr=0.2, momentum=0.5)
    _closure(base, net_b, X, y)()
    base.step()
    for a, b in zip(net_a.parameters(), net_b.parameters()):
        torch.testing.assert_close(a, b, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("sampler", ["noise_ascent", "hmc"])
def test_tsam_samplers_reduce_loss_and_state_dict_round_trip(sampler):
    net, X, y = _problem()
    opt = TSAM(
        net.parameters(),
        lr=0.2,
        momentum=0.9,
        rho=0.05,
        noise_radius=0.05,
        sampler=sampler,
        generator=torch.Generator().manual_seed(0),
    )
    closure = _closure(opt, net, X, y)
    first = float(closure().detach())
    for _ in range(15):
        opt.step(closure)
    assert float(closure().detach()) < first
    # checkpoint: base optimizer's momentum survives a round trip
    buf = io.BytesIO()
    torch.save(opt.state_dict(), buf)
    net2 = copy.deepcopy(net)
    opt2 = TSAM(net2.parameters(), lr=0.2, momentum=0.9, sampler=sampler)
    buf.seek(0)
    opt2.load_state_dict(torch.load(buf))
    m1 = [opt.base_optimizer.state[p]["momentum_buffer"] for p in net.parameters()]
    m2 = [opt2.base_optimizer.state[p]["momentum_buffer"] for p in net2.parameters()]
    for a, b in zip(m1, m2):
        torch.testing.assert_close(a, b)
    clone = pickle.loads(pickle.dumps(opt))
    assert clone.tilt == opt.tilt and clone.base_optimizer is not None


def test_seeded_generator_is_deterministic():
    def run():
        return _step_and_update(
            lambda m: TiltedSAM(
                m.parameters(), lr=0.1, generator=torch.Generator().manual_seed(3)
            )
        )[2]

    for a, b in zip(run(), run()):
        torch.testing.assert_close(a, b, rtol=0, atol=0)


def test_bad_arguments():
    w = torch.nn.Parameter(torch.zeros(2))
    with pytest.raises(ValueError, match="tilt"):
        TiltedSAM([w], lr=0.1, tilt=-1)
    with pytest.raises(ValueError, match="sampler"):
        TiltedSAM([w], lr=0.1, sampler="mcmc")
    with pytest.raises(ValueError, match="closure"):
        SAM([w], lr=0.1).step()


@pytest.mark.parametrize("name", ["sam", "tsam"])
def test_in_torch_classifier_and_grid_search(name):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 4)).astype(np.float32)
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    kw = {"optimizer__momentum": 0.9}
    if name == "tsam":
        kw.update(optimizer__num_samples=2, optimizer__noise_radius=0.05)
    clf = TorchClassifier(
        optimizer=name, lr=0.1, max_epochs=15, batch_size=32, random_state=0, **kw
    )
    clf.fit(X, y)
    assert clf.score(X, y) > 0.85
    gs = GridSearchCV(
        clf.set_params(max_epochs=3), {"optimizer__rho": [0.0, 0.05]}, cv=2
    )
    gs.fit(X, y)
    assert set(gs.cv_results_["param_optimizer__rho"]) == {0.0, 0.05}
    pickle.loads(pickle.dumps(clf)).predict(X)


def test_hessian_measures_on_quadratic():
    # Linear least squares: the Hessian of sum((Xw - y)^2) is 2 X^T X.
    g = torch.Generator().manual_seed(0)
    X = torch.randn(30, 6, generator=g)
    y = torch.randn(30, 1, generator=g)
    layer = torch.nn.Linear(6, 1, bias=False)

    def loss(out, t):
        return ((out - t) ** 2).sum()

    H = 2 * (X.T @ X).double()
    lam = hessian_top_eigenvalue(
        layer,
        loss,
        X,
        y,
        iters=500,
        tol=1e-9,
        generator=torch.Generator().manual_seed(1),
    )
    assert lam == pytest.approx(float(torch.linalg.eigvalsh(H).max()), rel=1e-4)
    tr = hessian_trace(
        layer, loss, X, y, n_draws=2000, generator=torch.Generator().manual_seed(2)
    )
    # Hutchinson: std = sqrt(2 * sum_offdiag H^2 / n_draws); allow 4 std.
    off = float((H**2).sum() - (torch.diagonal(H) ** 2).sum())
    assert abs(tr - float(torch.trace(H))) < 4 * (2 * off / 2000) ** 0.5
    # Gaussian sharpness of a quadratic: E[L(w + e)] - L(w) = sigma^2 tr(H) / 2
    s = perturbed_sharpness(
        layer,
        loss,
        X,
        y,
        sigma=0.1,
        n_draws=3000,
        generator=torch.Generator().manual_seed(3),
    )
    assert s == pytest.approx(0.01 * float(torch.trace(H)) / 2, rel=0.1)


def test_sam_perturbation_has_global_norm_across_param_groups():
    # Two groups, one rho: ||e|| over all parameters is rho (not sqrt(2) rho),
    # and the step equals the one-group step exactly.
    a, b = torch.tensor([3.0, -4.0]), torch.tensor([1.0, 2.0, 2.0])

    def perturbation(groups_of):
        w1 = torch.nn.Parameter(torch.zeros(2))
        w2 = torch.nn.Parameter(torch.zeros(3))
        opt = SAM(groups_of(w1, w2), lr=1.0, rho=0.5)
        w1.grad, w2.grad = a.clone(), b.clone()
        opt.first_step()
        return torch.cat([w1.detach(), w2.detach()])

    two = perturbation(lambda w1, w2: [{"params": [w1]}, {"params": [w2]}])
    one = perturbation(lambda w1, w2: [w1, w2])
    g = torch.cat([a, b])
    torch.testing.assert_close(two, 0.5 * g / g.norm())
    torch.testing.assert_close(two, one)
    assert float(two.norm()) == pytest.approx(0.5, rel=1e-6)


@pytest.mark.parametrize("cls", [SAM, TiltedSAM])
def test_rho_is_read_per_param_group(cls):
    # Group 2 has rho = 0: the ascent point moves group 1 only, by
    # rho_1 g_1 / ||g|| with the global norm ||g||.
    w1 = torch.nn.Parameter(torch.tensor([1.0, -1.0]))
    w2 = torch.nn.Parameter(torch.tensor([2.0]))
    kw = dict(noise="none", num_samples=1) if cls is TiltedSAM else {}
    opt = cls(
        [{"params": [w1], "rho": 0.3}, {"params": [w2], "rho": 0.0}], lr=0.0, **kw
    )
    seen = []

    def closure():
        opt.zero_grad()
        seen.append((w1.detach().clone(), w2.detach().clone()))
        loss = (w1**2).sum() + 3 * w2.sum()
        loss.backward()
        return loss

    opt.step(closure)
    g = torch.tensor([2.0, -2.0, 3.0])
    at1, at2 = seen[-1]  # the ascent point
    torch.testing.assert_close(at1, torch.tensor([1.0, -1.0]) + 0.3 * g[:2] / g.norm())
    torch.testing.assert_close(at2, torch.tensor([2.0]))
