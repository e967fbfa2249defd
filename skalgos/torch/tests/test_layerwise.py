import copy
import io
import pickle

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from sklearn.model_selection import GridSearchCV  # noqa: E402

from skalgos.torch import TorchClassifier, TorchRegressor  # noqa: E402
from skalgos.torch.linalg import polar  # noqa: E402
from skalgos.torch.optim import LayerwisePreconditioner  # noqa: E402


def _closure(opt, net, X, Y):
    def closure():
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(net(X), Y)
        loss.backward()
        return loss

    return closure


def _ill_conditioned(n=200, d=6, m=3, cond=1e3, seed=0):
    g = torch.Generator().manual_seed(seed)
    scales = torch.logspace(0, np.log10(cond) / 2, d)
    X = torch.randn(n, d, generator=g) * scales
    W = torch.randn(m, d, generator=g)
    Y = X @ W.T + 0.1 * torch.randn(n, m, generator=g)
    return X, Y


@pytest.mark.parametrize("bias", [False, True])
def test_kfac_one_step_solves_least_squares(bias):
    X, Y = _ill_conditioned()
    torch.manual_seed(0)
    layer = torch.nn.Linear(X.shape[1], Y.shape[1], bias=bias)
    opt = LayerwisePreconditioner(
        layer, lr=1.0, damping=0.0, factor_decay=0.0, fisher="mse"
    )
    opt.step(_closure(opt, layer, X, Y))
    Xa = torch.cat([X, torch.ones(len(X), 1)], 1) if bias else X
    sol = torch.linalg.lstsq(Xa.double(), Y.double()).solution.T
    W = layer.weight.detach().double()
    if bias:
        W = torch.cat([W, layer.bias.detach().double()[:, None]], 1)
    np.testing.assert_allclose(W.numpy(), sol.numpy(), rtol=1e-3, atol=1e-3)
    # factor A equals X^T X / n computed directly
    A = opt.state[layer.weight]["A"]
    torch.testing.assert_close(A, Xa.T @ Xa / len(X), rtol=1e-5, atol=1e-5)


def test_kfac_two_layer_frozen_head_gives_least_squares_G():
    # y = F G x, F frozen: one KFAC step (Gauss-Newton factors) solves for G.
    X, Y = _ill_conditioned(m=4)
    torch.manual_seed(1)
    net = torch.nn.Sequential(
        torch.nn.Linear(6, 2, bias=False), torch.nn.Linear(2, 4, bias=False)
    )
    net[1].weight.requires_grad_(False)
    opt = LayerwisePreconditioner(
        net, lr=1.0, damping=0.0, factor_decay=0.0, fisher="mse"
    )
    opt.step(_closure(opt, net, X, Y))
    F = net[1].weight.detach().double()
    # normal equations of min_G ||X G^T F^T - Y||: F^T F G X^T X = F^T Y^T X
    Xd, Yd = X.double(), Y.double()
    G = torch.linalg.solve(F.T @ F, F.T @ Yd.T @ Xd) @ torch.linalg.inv(Xd.T @ Xd)
    np.testing.assert_allclose(
        net[0].weight.detach().double().numpy(), G.numpy(), rtol=1e-3, atol=1e-3
    )


def test_kfac_beats_sgd_on_ill_conditioned_regression():
    X, Y = _ill_conditioned(cond=1e4)
    losses = {}
    for name, factory in {
        "kfac": lambda m: LayerwisePreconditioner(
            m, lr=0.5, damping=1e-3, update_every=1, fisher="mse"
        ),
        "sgd": lambda m: torch.optim.SGD(m.parameters(), lr=1e-4),
    }.items():
        torch.manual_seed(0)
        layer = torch.nn.Linear(6, 3)
        opt = factory(layer)
        closure = _closure(opt, layer, X, Y)
        for _ in range(20):
            if name == "sgd":
                closure()
                opt.step()
            else:
                opt.step(closure)
        losses[name] = float(closure().detach())
    assert losses["kfac"] < 0.1 * losses["sgd"]


@pytest.mark.parametrize("shape", [(5, 5), (4, 7), (7, 4)])
def test_shampoo_one_shot_step_is_polar_factor(shape):
    g = torch.Generator().manual_seed(0)
    W0 = torch.randn(*shape, generator=g)
    G = torch.randn(*shape, generator=g)
    w = torch.nn.Parameter(W0.clone())
    layer = torch.nn.Linear(shape[1], shape[0], bias=False)
    with torch.no_grad():
        layer.weight.copy_(W0)
    opt = LayerwisePreconditioner(
        layer, lr=1.0, mode="shampoo", factor_decay=0.0, epsilon=0.0
    )

    def closure():
        opt.zero_grad()
        loss = (layer.weight * G).sum()  # gradient G
        loss.backward()
        return loss

    opt.step(closure)
    step = W0 - layer.weight.detach()
    torch.testing.assert_close(step, polar(G), rtol=1e-4, atol=1e-4)
    del w


@pytest.mark.parametrize("mode", ["kfac", "shampoo"])
def test_state_dict_and_pickle_round_trip(mode):
    X, Y = _ill_conditioned()
    torch.manual_seed(0)
    net = torch.nn.Sequential(
        torch.nn.Linear(6, 5), torch.nn.Tanh(), torch.nn.Linear(5, 3)
    )
    kw = dict(lr=0.1, mode=mode, momentum=0.5, update_every=2)
    opt = LayerwisePreconditioner(net, **kw)
    for _ in range(3):
        opt.step(_closure(opt, net, X, Y))
    buf = io.BytesIO()
    torch.save(opt.state_dict(), buf)
    net2 = copy.deepcopy(net)
    opt2 = LayerwisePreconditioner(net2, **kw)
    buf.seek(0)
    opt2.load_state_dict(torch.load(buf))
    assert opt2.steps == opt.steps == 3
    opt.step(_closure(opt, net, X, Y))
    opt2.step(_closure(opt2, net2, X, Y))
    for a, b in zip(net.parameters(), net2.parameters()):
        torch.testing.assert_close(a, b)
    net3, opt3 = pickle.loads(pickle.dumps((net, opt)))
    opt3.step(_closure(opt3, net3, X, Y))  # hooks re-registered after unpickling


@pytest.mark.parametrize(
    "name,kw",
    [
        ("kfac", {"optimizer__fisher": "cross_entropy", "optimizer__damping": 0.1}),
        ("kfac", {"optimizer__damping": 0.1}),
        ("shampoo", {"optimizer__epsilon": 1e-6, "optimizer__update_every": 1}),
    ],
)
def test_in_torch_classifier_and_grid_search(name, kw):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 4)).astype(np.float32)
    y = (X[:, 0] - X[:, 2] > 0).astype(int)
    clf = TorchClassifier(
        optimizer=name, lr=0.05, max_epochs=10, batch_size=32, random_state=0, **kw
    )
    clf.fit(X, y)
    assert clf.score(X, y) > 0.85
    gs = GridSearchCV(clf.set_params(max_epochs=2), {"lr": [0.01, 0.05]}, cv=2)
    gs.fit(X, y)
    pickle.loads(pickle.dumps(clf)).predict(X)


def test_in_torch_regressor_mse_fisher():
    X, Y = _ill_conditioned(m=1)
    reg = TorchRegressor(
        optimizer="kfac",
        lr=0.5,
        max_epochs=5,
        batch_size=200,
        random_state=0,
        module__hidden_sizes=(),
        optimizer__fisher="mse",
        optimizer__damping=0.0,
        optimizer__factor_decay=0.0,
        optimizer__update_every=1,
    )
    reg.fit(X.numpy(), Y.numpy().ravel())
    assert reg.score(X.numpy(), Y.numpy().ravel()) > 0.99


def test_bad_arguments():
    layer = torch.nn.Linear(2, 2)
    with pytest.raises(TypeError, match="module"):
        LayerwisePreconditioner(layer.parameters())
    with pytest.raises(ValueError, match="mode"):
        LayerwisePreconditioner(layer, mode="adam")
    with pytest.raises(ValueError, match="closure"):
        LayerwisePreconditioner(layer).step()
