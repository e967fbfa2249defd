import copy

import pytest

torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402

from skalgos.torch.optim import AdamWScheduleFree, SGDScheduleFree  # noqa: E402


def _net(seed=0):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 1)).double()


def _data(seed=1):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(32, 3, generator=g, dtype=torch.float64)
    return X, torch.sin(X.sum(1, keepdim=True))


def _step(net, opt, X, y):
    def closure():
        opt.zero_grad()
        loss = ((net(X) - y) ** 2).mean()
        loss.backward()
        return loss

    return opt.step(closure)


@pytest.mark.parametrize("cls,lr", [(SGDScheduleFree, 0.2), (AdamWScheduleFree, 0.05)])
def test_eval_weights_are_the_average_of_z(cls, lr):
    net = _net()
    X, y = _data()
    opt = cls(net.parameters(), lr=lr).train()
    zs = []
    for _ in range(15):
        _step(net, opt, X, y)
        zs.append([opt.state[p]["z"].clone() for p in net.parameters()])
    opt.eval()
    # r=0, no warmup, constant lr: c_{t+1} = 1/(t+1), so x_T = mean(z_2..z_{T+1}).
    for i, p in enumerate(net.parameters()):
        mean = torch.stack([z[i] for z in zs]).mean(0)
        assert torch.allclose(p.detach(), mean, atol=1e-12, rtol=0)


def test_eval_weights_with_warmup_are_weighted_average():
    net = _net()
    X, y = _data()
    lr, warm = 0.2, 5
    opt = SGDScheduleFree(net.parameters(), lr=lr, warmup_steps=warm).train()
    zs, ws, lr_max = [], [], 0.0
    for k in range(12):
        _step(net, opt, X, y)
        lr_max = max(lr_max, lr * min(1.0, (k + 1) / warm))
        ws.append(lr_max**2)
        zs.append([opt.state[p]["z"].clone() for p in net.parameters()])
    opt.eval()
    w = torch.tensor(ws, dtype=torch.float64)
    for i, p in enumerate(net.parameters()):
        Z = torch.stack([z[i] for z in zs])
        mean = (w.view(-1, *([1] * (Z.ndim - 1))) * Z).sum(0) / w.sum()
        assert torch.allclose(p.detach(), mean, atol=1e-12, rtol=0)


def test_memory_efficient_form_equals_three_sequence_reference():
    beta, lr, wd, T = 0.9, 0.1, 0.01, 10
    net = _net()
    ref = copy.deepcopy(net)
    X, y = _data()
    opt = SGDScheduleFree(
        net.parameters(), lr=lr, momentum=beta, weight_decay=wd
    ).train()
    x = [p.detach().clone() for p in ref.parameters()]
    z = [p.detach().clone() for p in ref.parameters()]
    for t in range(T):
        _step(net, opt, X, y)
        with torch.no_grad():
            for p, xi, zi in zip(ref.parameters(), x, z):
                p.copy_((1 - beta) * zi + beta * xi)  # y_t
        ref.zero_grad()
        ((ref(X) - y) ** 2).mean().backward()
        c = 1.0 / (t + 1)
        with torch.no_grad():
            for p, xi, zi in zip(ref.parameters(), x, z):
                zi.sub_(lr * (p.grad + wd * p))
                xi.mul_(1 - c).add_(c * zi)
    with torch.no_grad():  # y at the end, where the memory-efficient p sits
        ys = [(1 - beta) * zi + beta * xi for xi, zi in zip(x, z)]
    for p, yi in zip(net.parameters(), ys):
        assert torch.allclose(p.detach(), yi, atol=1e-10)
    opt.eval()
    for p, xi in zip(net.parameters(), x):
        assert torch.allclose(p.detach(), xi, atol=1e-10)


def test_mode_round_trip_and_step_in_eval_raises():
    net = _net()
    X, y = _data()
    opt = SGDScheduleFree(net.parameters(), lr=0.1)
    assert opt.mode == "eval"
    with pytest.raises(RuntimeError, match="train"):
        _step(net, opt, X, y)
    opt.train()
    for _ in range(4):
        _step(net, opt, X, y)
    y_params = [p.detach().clone() for p in net.parameters()]
    with opt.evaluating():
        assert opt.mode == "eval"
    assert opt.mode == "train"
    for p, q in zip(net.parameters(), y_params):
        assert torch.allclose(p.detach(), q, atol=1e-14)


def test_state_dict_round_trip_in_eval_mode():
    net = _net()
    X, y = _data()
    opt = AdamWScheduleFree(net.parameters(), lr=0.05, weight_decay=0.01).train()
    for _ in range(5):
        _step(net, opt, X, y)
    opt.eval()
    saved_net = copy.deepcopy(net.state_dict())
    saved_opt = copy.deepcopy(opt.state_dict())
    opt.train()
    for _ in range(3):
        _step(net, opt, X, y)
    expected = [p.detach().clone() for p in net.parameters()]

    net2 = _net(seed=5)
    net2.load_state_dict(saved_net)
    opt2 = AdamWScheduleFree(net2.parameters(), lr=0.05, weight_decay=0.01)
    opt2.load_state_dict(saved_opt)
    assert opt2.mode == "eval"
    opt2.train()
    for _ in range(3):
        _step(net2, opt2, X, y)
    for p, q in zip(net2.parameters(), expected):
        assert torch.allclose(p.detach(), q, atol=1e-12)


@pytest.mark.parametrize(
    "ours,theirs,kw",
    [
        (
            SGDScheduleFree,
            "SGDScheduleFree",
            dict(lr=0.3, momentum=0.9, weight_decay=0.01, warmup_steps=3),
        ),
        (
            AdamWScheduleFree,
            "AdamWScheduleFree",
            dict(lr=0.02, betas=(0.9, 0.99), weight_decay=0.01, warmup_steps=3),
        ),
    ],
)
def test_parity_with_schedulefree_package(ours, theirs, kw):
    schedulefree = pytest.importorskip("schedulefree")
    net_a, net_b = _net(), _net()
    X, y = _data()
    a = ours(net_a.parameters(), **kw).train()
    b = getattr(schedulefree, theirs)(net_b.parameters(), foreach=False, **kw)
    b.train()
    for _ in range(8):
        _step(net_a, a, X, y)
        _step(net_b, b, X, y)
    for p, q in zip(net_a.parameters(), net_b.parameters()):
        assert torch.allclose(p, q, atol=1e-10)
    a.eval()
    b.eval()
    for p, q in zip(net_a.parameters(), net_b.parameters()):
        assert torch.allclose(p, q, atol=1e-10)


def test_gradients_not_modified():
    net = _net()
    X, y = _data()
    opt = AdamWScheduleFree(net.parameters(), weight_decay=0.1).train()
    opt.zero_grad()
    ((net(X) - y) ** 2).mean().backward()
    grads = [p.grad.clone() for p in net.parameters()]
    opt.step()
    for p, g in zip(net.parameters(), grads):
        assert torch.equal(p.grad, g)
