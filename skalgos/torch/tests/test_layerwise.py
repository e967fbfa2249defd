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


# short grid-search fits, some of which end near the class priors
@pytest.mark.filterwarnings(
    "ignore:.*class frequencies:sklearn.exceptions.ConvergenceWarning"
)
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


# -- Conv2d ----------------------------------------------------------------
def _patches_loop(x, kernel, stride, pads, dilation=1, padding_mode="zeros"):
    """Brute-force Conv2d patches by slicing the padded input, no F.unfold.

    ``pads = ((top, bottom), (left, right))``. Rows are ordered (sample,
    output row, output column), columns (channel, kernel row, kernel col).
    """
    N, C, H, W = x.shape
    kh, kw = kernel
    (pt, pb), (pl, pr) = pads
    if padding_mode == "zeros":
        xp = torch.zeros(N, C, H + pt + pb, W + pl + pr, dtype=x.dtype)
        xp[:, :, pt : pt + H, pl : pl + W] = x
    else:
        xp = torch.nn.functional.pad(x, (pl, pr, pt, pb), mode=padding_mode)
    Ho = (xp.shape[2] - dilation * (kh - 1) - 1) // stride + 1
    Wo = (xp.shape[3] - dilation * (kw - 1) - 1) // stride + 1
    rows = torch.empty(N, Ho, Wo, C * kh * kw, dtype=x.dtype)
    for i in range(Ho):
        for j in range(Wo):
            r0, c0 = i * stride, j * stride
            patch = xp[
                :,
                :,
                r0 : r0 + dilation * (kh - 1) + 1 : dilation,
                c0 : c0 + dilation * (kw - 1) + 1 : dilation,
            ]
            rows[:, i, j] = patch.reshape(N, -1)
    return rows.reshape(N * Ho * Wo, -1)


def _with_ones(P):
    return torch.cat([P, torch.ones(len(P), 1, dtype=P.dtype)], 1)


def _check_patches(conv, x, P):
    # the reference patches reproduce the layer's forward pass
    W = conv.weight.detach().reshape(conv.out_channels, -1)
    out = P @ W.T
    if conv.bias is not None:
        out = out + conv.bias.detach()
    ref = conv(x).detach().permute(0, 2, 3, 1).reshape(-1, conv.out_channels)
    torch.testing.assert_close(out, ref)


_CONV_CASES = {
    "k3p1s1": (dict(kernel_size=3, padding=1, stride=1), (3, 3), 1, ((1, 1),) * 2, 1),
    "k3p1s2": (dict(kernel_size=3, padding=1, stride=2), (3, 3), 2, ((1, 1),) * 2, 1),
    "k23same": (
        dict(kernel_size=(2, 3), padding="same"),
        (2, 3),
        1,
        ((0, 1), (1, 1)),
        1,
    ),
    "dil2reflect": (
        dict(kernel_size=3, padding=2, dilation=2, padding_mode="reflect"),
        (3, 3),
        1,
        ((2, 2),) * 2,
        2,
    ),
}


# torch's own note on padding="same" with an even kernel (the k23same case)
@pytest.mark.filterwarnings("ignore:Using padding='same':UserWarning")
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("case", list(_CONV_CASES))
def test_kfac_conv_factors_match_brute_force(case, bias):
    kw, kernel, stride, pads, dil = _CONV_CASES[case]
    g = torch.Generator().manual_seed(0)
    N = 4
    x = torch.randn(N, 2, 6, 6, generator=g, dtype=torch.float64)
    torch.manual_seed(0)
    conv = torch.nn.Conv2d(2, 3, bias=bias, **kw).double()
    Y = torch.randn(conv(x).shape, generator=g, dtype=torch.float64)

    def loss_fn():
        return torch.nn.functional.mse_loss(torch.tanh(conv(x)), Y)

    # independent references, computed before the step
    mode = kw.get("padding_mode", "zeros")
    P = _patches_loop(x, kernel, stride, pads, dil, mode)
    _check_patches(conv, x, P)
    Pa = _with_ones(P) if bias else P
    A_ref = sum(torch.outer(p, p) for p in Pa) / len(Pa)
    out = conv(x)
    go = torch.autograd.grad(torch.nn.functional.mse_loss(torch.tanh(out), Y), out)[0]
    S_ref = torch.zeros(3, 3, dtype=torch.float64)
    for i in range(N):  # summed over positions, averaged over samples
        for h in range(go.shape[2]):
            for w in range(go.shape[3]):
                gi = N * go[i, :, h, w]  # per-sample loss gradient
                S_ref += torch.outer(gi, gi) / N

    opt = LayerwisePreconditioner(conv, lr=0.1, factor_decay=0.0)

    def closure():
        opt.zero_grad()
        loss = loss_fn()
        loss.backward()
        return loss

    opt.step(closure)
    st = opt.state[conv.weight]
    torch.testing.assert_close(st["A"], A_ref)
    torch.testing.assert_close(st["S"], S_ref)


def test_kfac_conv_gauss_newton_factor_under_linear_head():
    # fisher="mse" for Conv2d -> ReLU -> flatten -> Linear: S is the sum over
    # positions / mean over samples of J_t^T (2/m) J_t, J_t the Jacobian of
    # the head output with respect to position t of the conv output.
    g = torch.Generator().manual_seed(1)
    N, m = 3, 2
    x = torch.randn(N, 2, 5, 5, generator=g, dtype=torch.float64)
    torch.manual_seed(1)
    net = torch.nn.Sequential(
        torch.nn.Conv2d(2, 3, 3, stride=2, padding=1),
        torch.nn.ReLU(),
        torch.nn.Flatten(),
        torch.nn.Linear(3 * 3 * 3, m),
    ).double()
    Y = torch.randn(N, m, generator=g, dtype=torch.float64)
    o = net[0](x).detach()
    head = net[1:]
    S_ref = torch.zeros(3, 3, dtype=torch.float64)
    for i in range(N):
        J = torch.autograd.functional.jacobian(lambda t: head(t[None])[0], o[i])
        for h in range(o.shape[2]):
            for w in range(o.shape[3]):
                Jt = J[:, :, h, w]  # (m, C)
                S_ref += (2.0 / m) * Jt.T @ Jt / N
    opt = LayerwisePreconditioner(net, lr=0.1, factor_decay=0.0, fisher="mse")
    opt.step(_closure(opt, net, x, Y))
    torch.testing.assert_close(opt.state[net[0].weight]["S"], S_ref)


_EXACT_CASES = {
    # (Conv2d kwargs, input size, n samples, kernel, stride, pads)
    "k1": (dict(kernel_size=1), 5, 20, (1, 1), 1, ((0, 0),) * 2),
    "k_full": (dict(kernel_size=4), 4, 120, (4, 4), 1, ((0, 0),) * 2),
    "k3p1s2": (
        dict(kernel_size=3, padding=1, stride=2),
        6,
        20,
        (3, 3),
        2,
        ((1, 1),) * 2,
    ),
}


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("case", list(_EXACT_CASES))
def test_kfac_conv_one_step_solves_least_squares(case, bias):
    # A single conv is linear in its patches and the MSE over all outputs has
    # the Kronecker Hessian (2/C) mean(a a^T) (x) I: one step is Newton's.
    kw, size, N, kernel, stride, pads = _EXACT_CASES[case]
    g = torch.Generator().manual_seed(0)
    scales = torch.tensor([1.0, 10.0], dtype=torch.float64)
    x = torch.randn(N, 2, size, size, generator=g, dtype=torch.float64)
    x = x * scales[None, :, None, None] + 0.5
    torch.manual_seed(0)
    true = torch.nn.Conv2d(2, 3, bias=True, **kw).double()
    with torch.no_grad():
        Y = true(x) + 0.1 * torch.randn(true(x).shape, generator=g, dtype=x.dtype)
    conv = torch.nn.Conv2d(2, 3, bias=bias, **kw).double()
    opt = LayerwisePreconditioner(
        conv, lr=1.0, damping=0.0, factor_decay=0.0, fisher="mse"
    )
    opt.step(_closure(opt, conv, x, Y))
    P = _patches_loop(x, kernel, stride, pads)
    Pa = _with_ones(P) if bias else P
    Yr = Y.permute(0, 2, 3, 1).reshape(-1, 3)
    sol = torch.linalg.lstsq(Pa, Yr).solution.T
    W = conv.weight.detach().reshape(3, -1)
    if bias:
        W = torch.cat([W, conv.bias.detach()[:, None]], 1)
    np.testing.assert_allclose(W.numpy(), sol.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("fisher", ["mse", "cross_entropy", "empirical"])
def test_kfac_conv1x1_equals_linear_per_pixel(fisher):
    g = torch.Generator().manual_seed(2)
    N, H, W = 6, 4, 5
    T = H * W
    x = torch.randn(N, 3, H, W, generator=g, dtype=torch.float64)
    x[:, 1] += 0.8 * x[:, 0]  # correlated channels: a nontrivial A
    torch.manual_seed(2)
    conv = torch.nn.Conv2d(3, 4, 1).double()
    lin = torch.nn.Linear(3, 4).double()
    with torch.no_grad():
        lin.weight.copy_(conv.weight.reshape(4, 3))
        lin.bias.copy_(conv.bias)
    X = x.permute(0, 2, 3, 1).reshape(-1, 3)
    if fisher == "mse":
        Y = torch.randn(N, 4, H, W, generator=g, dtype=x.dtype)
        Yr = Y.permute(0, 2, 3, 1).reshape(-1, 4)
        losses = (
            lambda: torch.nn.functional.mse_loss(conv(x), Y),
            lambda: torch.nn.functional.mse_loss(lin(X), Yr),
        )
    else:
        y = torch.randint(0, 4, (N, H, W), generator=g)
        losses = (
            lambda: torch.nn.functional.cross_entropy(conv(x), y),
            lambda: torch.nn.functional.cross_entropy(lin(X), y.reshape(-1)),
        )
    kw = dict(lr=0.5, damping=0.1, factor_decay=0.0, fisher=fisher)
    opts = []
    for net, loss_fn in zip((conv, lin), losses):
        opt = LayerwisePreconditioner(net, **kw)

        def closure(opt=opt, loss_fn=loss_fn):
            opt.zero_grad()
            loss = loss_fn()
            loss.backward()
            return loss

        opt.step(closure)
        opts.append(opt)
    sc, sl = opts[0].state[conv.weight], opts[1].state[lin.weight]
    torch.testing.assert_close(sc["A"], sl["A"])
    if fisher == "empirical":
        # Linear counts the N * T pixels as samples, KFC the N images
        torch.testing.assert_close(T * sc["S"], sl["S"])
    else:
        torch.testing.assert_close(sc["S"], sl["S"])
        torch.testing.assert_close(conv.weight.detach().reshape(4, 3), lin.weight)
        torch.testing.assert_close(conv.bias, lin.bias)


@pytest.mark.parametrize("cin,cout,k", [(2, 4, 3), (1, 12, 3), (1, 9, 3)])
def test_shampoo_conv_one_shot_step_is_polar_factor(cin, cout, k):
    g = torch.Generator().manual_seed(0)
    conv = torch.nn.Conv2d(cin, cout, k)
    W0, b0 = conv.weight.detach().clone(), conv.bias.detach().clone()
    G = torch.randn(W0.shape, generator=g)
    Gb = torch.randn(b0.shape, generator=g)
    opt = LayerwisePreconditioner(
        conv, lr=1.0, mode="shampoo", factor_decay=0.0, epsilon=0.0
    )

    def closure():
        opt.zero_grad()
        loss = (conv.weight * G).sum() + (conv.bias * Gb).sum()
        loss.backward()
        return loss

    opt.step(closure)
    step = (W0 - conv.weight.detach()).reshape(cout, -1)
    torch.testing.assert_close(step, polar(G.reshape(cout, -1)), rtol=1e-4, atol=1e-4)
    # the bias is a column matrix: its polar factor is the unit vector
    torch.testing.assert_close(
        b0 - conv.bias.detach(), Gb / Gb.norm(), rtol=1e-4, atol=1e-4
    )


def _images(n=64, seed=0):
    # label: is the left half of the image brighter than the right half
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, 1, 6, 6, generator=g)
    y = (X[..., :3].mean((1, 2, 3)) > X[..., 3:].mean((1, 2, 3))).long()
    return X, y


def _cnn():
    return torch.nn.Sequential(
        torch.nn.Conv2d(1, 4, 3, padding=1),
        torch.nn.ReLU(),
        torch.nn.Flatten(),
        torch.nn.Linear(4 * 6 * 6, 2),
    )


def _ce_closure(opt, net, X, y):
    def closure():
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(net(X), y)
        loss.backward()
        return loss

    return closure


@pytest.mark.parametrize(
    "kw",
    [
        dict(mode="kfac", lr=0.2, damping=0.1),
        dict(mode="kfac", lr=0.2, damping=0.1, fisher="cross_entropy"),
        dict(mode="shampoo", lr=0.05, epsilon=1e-6, update_every=1),
    ],
    ids=["kfac-empirical", "kfac-ggn", "shampoo"],
)
def test_small_cnn_trains(kw):
    X, y = _images()
    torch.manual_seed(0)
    net = _cnn()
    opt = LayerwisePreconditioner(net, **kw)
    closure = _ce_closure(opt, net, X, y)
    first = float(closure().detach())
    for _ in range(20):
        opt.step(closure)
    assert float(closure().detach()) < 0.5 * first
    assert "A" in opt.state[net[0].weight] or "L" in opt.state[net[0].weight]


def _mlp_case():
    X, Y = _ill_conditioned()
    torch.manual_seed(0)
    net = torch.nn.Sequential(
        torch.nn.Linear(6, 5), torch.nn.Tanh(), torch.nn.Linear(5, 3)
    )
    return net, lambda opt, net: _closure(opt, net, X, Y)


def _cnn_case():
    X, y = _images()
    torch.manual_seed(0)
    return _cnn(), lambda opt, net: _ce_closure(opt, net, X, y)


@pytest.mark.parametrize("case", [_mlp_case, _cnn_case], ids=["mlp", "cnn"])
@pytest.mark.parametrize("mode", ["kfac", "shampoo"])
def test_state_dict_and_pickle_round_trip(mode, case):
    net, closure = case()
    kw = dict(lr=0.1, mode=mode, momentum=0.5, update_every=2)
    opt = LayerwisePreconditioner(net, **kw)
    for _ in range(3):
        opt.step(closure(opt, net))
    buf = io.BytesIO()
    torch.save(opt.state_dict(), buf)
    net2 = copy.deepcopy(net)
    opt2 = LayerwisePreconditioner(net2, **kw)
    buf.seek(0)
    opt2.load_state_dict(torch.load(buf))
    assert opt2.steps == opt.steps == 3
    opt.step(closure(opt, net))
    opt2.step(closure(opt2, net2))
    for a, b in zip(net.parameters(), net2.parameters()):
        torch.testing.assert_close(a, b)
    # Unpickled, the hooks are live again and the step is the same.
    net3, opt3 = pickle.loads(pickle.dumps((net, opt)))
    opt3.step(closure(opt3, net3))
    opt.step(closure(opt, net))
    for a, b in zip(net.parameters(), net3.parameters()):
        torch.testing.assert_close(a, b)


def test_kfac_conv_step_is_damped_kronecker_solve_not_sgd():
    g = torch.Generator().manual_seed(3)
    N, lr, lam = 5, 0.1, 0.1
    x = torch.randn(N, 2, 5, 5, generator=g, dtype=torch.float64)
    x[:, 1] = x[:, 0] + 0.1 * x[:, 1]  # strongly correlated input channels
    Y = torch.randn(N, 3, 5, 5, generator=g, dtype=torch.float64)
    torch.manual_seed(3)
    conv = torch.nn.Conv2d(2, 3, 3, padding=1).double()
    W0 = conv.weight.detach().clone()
    out = conv(x)
    loss = torch.nn.functional.mse_loss(out, Y)
    gW, gb, go = torch.autograd.grad(loss, [conv.weight, conv.bias, out])
    Pa = _with_ones(_patches_loop(x, (3, 3), 1, ((1, 1),) * 2))
    A = Pa.T @ Pa / len(Pa)
    gr = N * go.permute(0, 2, 3, 1).reshape(-1, 3)
    S = gr.T @ gr / N
    G = torch.cat([gW.reshape(3, -1), gb[:, None]], 1)
    eye = lambda k: torch.eye(k, dtype=torch.float64)  # noqa: E731
    D = torch.linalg.solve(S + lam * eye(3), G)
    D = torch.linalg.solve(A + lam * eye(len(A)), D.T).T  # A is symmetric
    opt = LayerwisePreconditioner(conv, lr=lr, damping=lam, factor_decay=0.0)
    opt.step(_closure(opt, conv, x, Y))
    step = (W0 - conv.weight.detach()) / lr
    torch.testing.assert_close(step, D[:, :-1].reshape(W0.shape))
    assert not torch.allclose(step, gW, rtol=0.1, atol=0.0)


def test_grouped_conv_kfac_falls_back_to_sgd_shampoo_does_not():
    g = torch.Generator().manual_seed(4)
    x = torch.randn(3, 4, 5, 5, generator=g, dtype=torch.float64)
    Y = torch.randn(3, 4, 5, 5, generator=g, dtype=torch.float64)
    mse = torch.nn.functional.mse_loss
    for mode in ("kfac", "shampoo"):
        torch.manual_seed(4)
        conv = torch.nn.Conv2d(4, 4, 3, padding=1, groups=2).double()
        W0 = conv.weight.detach().clone()
        (gW,) = torch.autograd.grad(mse(conv(x), Y), conv.weight)
        if mode == "kfac":
            with pytest.warns(UserWarning, match="groups=2"):
                opt = LayerwisePreconditioner(conv, lr=0.1, mode=mode)
        else:
            opt = LayerwisePreconditioner(conv, lr=0.1, mode=mode)
        opt.step(_closure(opt, conv, x, Y))
        step = (W0 - conv.weight.detach()) / 0.1
        assert torch.allclose(step, gW) == (mode == "kfac")


def test_kfac_conv_unbatched_input_matches_batch_of_one():
    g = torch.Generator().manual_seed(5)
    x = torch.randn(2, 5, 5, generator=g, dtype=torch.float64)
    Y = torch.randn(3, 5, 5, generator=g, dtype=torch.float64)
    states = []
    for xx, yy in ((x, Y), (x[None], Y[None])):
        torch.manual_seed(5)
        conv = torch.nn.Conv2d(2, 3, 3, padding=1).double()
        opt = LayerwisePreconditioner(conv, lr=0.1, factor_decay=0.0)
        opt.step(_closure(opt, conv, xx, yy))
        states.append((opt.state[conv.weight], conv.weight.detach()))
    for key in ("A", "S"):
        torch.testing.assert_close(states[0][0][key], states[1][0][key])
    torch.testing.assert_close(states[0][1], states[1][1])
