import copy
import io
import pickle

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from sklearn.model_selection import GridSearchCV  # noqa: E402

from skalgos.torch import TorchRegressor  # noqa: E402
from skalgos.torch.optim import StructuredCurvature, SyMO  # noqa: E402


def _mlp(dims, seed=0, act=torch.nn.Tanh):
    torch.manual_seed(seed)
    layers = []
    for i, (a, b) in enumerate(zip(dims[:-1], dims[1:])):
        if i:
            layers.append(act())
        layers.append(torch.nn.Linear(a, b, bias=False))
    return torch.nn.Sequential(*layers)


def _gradients(dims, R=3, seed=0):
    net = _mlp(dims, seed)
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(R):
        X = torch.randn(16, dims[0], generator=g)
        Y = torch.randn(16, dims[-1], generator=g)
        net.zero_grad()
        torch.nn.functional.mse_loss(net(X), Y).backward()
        out.append(
            [m.weight.grad.clone() for m in net if isinstance(m, torch.nn.Linear)]
        )
    return out


DIMS = [(4, 3, 2), (4, 3, 3, 2), (3, 5, 4, 4, 2)]


@pytest.mark.parametrize("dims", DIMS)
def test_factor_round_trip_and_matvec(dims):
    C = StructuredCurvature.from_gradients(_gradients(dims))
    D = C.to_dense()
    assert torch.allclose(D, D.T)
    back = StructuredCurvature.from_dense(dims, D)
    torch.testing.assert_close(back.Phi_in, C.Phi_in)
    torch.testing.assert_close(back.Phi_out, C.Phi_out)
    np.testing.assert_allclose(back.phi, C.phi, rtol=1e-12)
    if C.Psi is not None:
        torch.testing.assert_close(back.Psi, C.Psi)
    torch.testing.assert_close(back.to_dense(), D)
    v = torch.randn(D.shape[0], dtype=torch.float64)
    torch.testing.assert_close(C.matvec(v), D @ v)


@pytest.mark.parametrize("dims", DIMS)
def test_structured_inverse_equals_dense_pinv(dims):
    C = StructuredCurvature.from_gradients(_gradients(dims, R=2))
    D = C.to_dense()
    dense_pinv = torch.linalg.pinv(D, hermitian=True, rtol=1e-10)
    scale = float(dense_pinv.abs().max())  # entries that are 0 carry rounding
    torch.testing.assert_close(
        C.inverse().to_dense(), dense_pinv, rtol=1e-6, atol=1e-9 * scale
    )
    # power(-1/2) squared times C is the projector onto the range of C
    S = C.power(-0.5).to_dense()
    P = D @ dense_pinv
    torch.testing.assert_close(S @ S @ D, P, rtol=1e-6, atol=1e-7)
    torch.testing.assert_close(C.sqrt().to_dense() @ C.sqrt().to_dense(), D)


def _hidden_symmetries(width):
    """All (permutation, sign) pairs of one hidden layer of ``width`` units."""
    import itertools

    for perm in itertools.permutations(range(width)):
        for signs in itertools.product((1.0, -1.0), repeat=width):
            yield list(perm), torch.tensor(signs, dtype=torch.float64)


@pytest.mark.parametrize("dims", [(4, 3, 2), (3, 2, 2, 2)])
def test_structure_equals_orbit_average_of_ggT(dims):
    # A tanh MLP without biases is invariant under permuting and flipping
    # the signs of the units of every hidden layer (tanh is odd). Averaging
    # g g^T over that whole group (the hyperoctahedral group per layer) gives
    # exactly the structured estimate, every entry, zeros included.
    import itertools

    grads = [G.double() for G in _gradients(dims, R=1)[0]]
    C = StructuredCurvature.from_gradients([grads]).to_dense()
    acc = torch.zeros_like(C)
    count = 0
    layers = [list(_hidden_symmetries(w)) for w in dims[1:-1]]
    for sym in itertools.product(*layers):
        Gs = [G.clone() for G in grads]
        for l, (perm, signs) in enumerate(sym):
            # unit j of hidden layer l+1: row j of W_{l+1}, column j of W_{l+2}
            Gs[l] = signs[:, None] * Gs[l][perm]
            Gs[l + 1] = Gs[l + 1][:, perm] * signs[None, :]
        g = torch.cat([G.reshape(-1) for G in Gs])
        acc += torch.outer(g, g)
        count += 1
    acc /= count
    torch.testing.assert_close(acc, C, rtol=1e-12, atol=1e-15)
    assert (C == 0).any()  # the group average does create the zero pattern


def test_symo_step_is_structured_preconditioned_gradient():
    dims = (4, 3, 2)
    net = _mlp(dims)
    X, Y = torch.randn(10, 4), torch.randn(10, 2)
    opt = SyMO(net, lr=0.1, factor_decay=0.0, damping=1e-3)
    before = torch.cat([p.detach().reshape(-1).double() for p in net.parameters()])

    def closure():
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(net(X), Y)
        loss.backward()
        return loss

    opt.step(closure)
    after = torch.cat([p.detach().reshape(-1).double() for p in net.parameters()])
    grads = [p.grad.clone() for p in net.parameters()]
    C = StructuredCurvature.from_gradients([grads]).to_dense()
    w, V = torch.linalg.eigh(C + 1e-3 * torch.eye(C.shape[0], dtype=C.dtype))
    P = (V * w**-0.5) @ V.T
    g = torch.cat([G.reshape(-1).double() for G in grads])
    torch.testing.assert_close(before - after, 0.1 * P @ g, rtol=1e-4, atol=1e-6)


def test_symo_trains_and_state_dict_round_trip():
    net = _mlp((5, 8, 8, 2))
    g = torch.Generator().manual_seed(0)
    X = torch.randn(64, 5, generator=g)
    Y = torch.tanh(X[:, :2])

    def make(n):
        opt = SyMO(n, lr=0.05, damping=1e-4)

        def closure():
            opt.zero_grad()
            loss = torch.nn.functional.mse_loss(n(X), Y)
            loss.backward()
            return loss

        return opt, closure

    opt, closure = make(net)
    first = float(closure().detach())
    for _ in range(30):
        opt.step(closure)
    assert float(closure().detach()) < 0.5 * first
    buf = io.BytesIO()
    torch.save(opt.state_dict(), buf)
    net2 = copy.deepcopy(net)
    opt2, closure2 = make(net2)
    buf.seek(0)
    opt2.load_state_dict(torch.load(buf, weights_only=False))
    opt.step(closure)
    opt2.step(closure2)
    for a, b in zip(net.parameters(), net2.parameters()):
        torch.testing.assert_close(a, b)
    pickle.loads(pickle.dumps(opt))


def test_rejects_non_mlp():
    with pytest.raises(ValueError, match="bias-free"):
        SyMO(torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Linear(3, 1)))
    with pytest.raises(ValueError, match="two"):
        SyMO(torch.nn.Linear(3, 1, bias=False))


def _bias_free(n_features_in, n_outputs, hidden=16):
    return _mlp((n_features_in, hidden, n_outputs))


# a grid over short fits, some of which end near the mean predictor
@pytest.mark.filterwarnings("ignore:.*mean of y:sklearn.exceptions.ConvergenceWarning")
def test_in_torch_regressor_and_grid_search():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 4)).astype(np.float32)
    y = np.tanh(X @ np.array([1.0, -1.0, 0.5, 0.0], dtype=np.float32))
    reg = TorchRegressor(
        module=_bias_free,
        optimizer="symo",
        lr=0.05,
        max_epochs=20,
        batch_size=120,
        random_state=0,
        optimizer__damping=1e-4,
    )
    reg.fit(X, y)
    assert reg.score(X, y) > 0.8
    gs = GridSearchCV(reg.set_params(max_epochs=3), {"lr": [0.01, 0.05]}, cv=2)
    gs.fit(X, y)
    pickle.loads(pickle.dumps(reg)).predict(X)


def test_in_torch_classifier():
    from skalgos.torch import TorchClassifier

    rng = np.random.default_rng(1)
    X = rng.normal(size=(100, 4)).astype(np.float32)
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    clf = TorchClassifier(
        module=_bias_free,
        optimizer="symo",
        lr=0.05,
        max_epochs=15,
        batch_size=50,
        random_state=0,
        optimizer__damping=1e-4,
    ).fit(X, y)
    assert clf.score(X, y) > 0.85
