import copy
import math

import pytest

torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402

from skalgos.torch.linalg import linear_norm, polar  # noqa: E402
from skalgos.torch.optim import Muon, MuonWithAuxAdamW, muon_param_groups  # noqa: E402


def _params(shapes, seed=0, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    return [nn.Parameter(torch.randn(*s, generator=g, dtype=dtype)) for s in shapes]


def _grads(params, seed):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(p.shape, generator=g, dtype=p.dtype) for p in params]


def _run(opt, params, steps, seed0=100):
    for t in range(steps):
        for p, gr in zip(params, _grads(params, seed0 + t)):
            p.grad = gr
        opt.step()


@pytest.mark.skipif(
    not hasattr(torch.optim, "Muon"), reason="torch.optim.Muon needs torch>=2.9"
)
@pytest.mark.parametrize("adjust_lr_fn", [None, "match_rms_adamw"])
@pytest.mark.parametrize("nesterov", [True, False])
def test_parity_with_torch_muon(adjust_lr_fn, nesterov):
    shapes = [(32, 16), (16, 48), (24, 24)]
    ours, theirs = _params(shapes), _params(shapes)
    start = [p.detach().clone() for p in ours]
    kw = dict(
        lr=0.02,
        weight_decay=0.1,
        momentum=0.9,
        nesterov=nesterov,
        adjust_lr_fn=adjust_lr_fn,
    )
    _run(Muon(ours, ns_dtype=torch.bfloat16, **kw), ours, 3)
    _run(torch.optim.Muon(theirs, **kw), theirs, 3)
    for p, q, p0 in zip(ours, theirs, start):
        d_ours, d_theirs = p.detach() - p0, q.detach() - p0
        # bfloat16 Newton-Schulz: agreement to bf16 precision of the update.
        assert (d_ours - d_theirs).abs().max() <= 1e-2 * d_theirs.abs().max()


def test_float32_close_to_bfloat16_reference():
    a, b = _params([(40, 20)]), _params([(40, 20)])
    _run(Muon(a, lr=0.05), a, 2)
    _run(Muon(b, lr=0.05, ns_dtype=torch.bfloat16), b, 2)
    assert (a[0] - b[0]).abs().max() < 5e-3


def test_first_step_is_scaled_polar_factor():
    (W,) = _params([(12, 5)], dtype=torch.float64)
    W0 = W.detach().clone()
    G = _grads([W], 1)[0]
    W.grad = G
    Muon([W], lr=0.1, nesterov=False, orthogonalizer="svd").step()
    expected = W0 - 0.1 * math.sqrt(12 / 5) * polar(G)
    assert torch.allclose(W.detach(), expected, atol=1e-12)


def test_conv_filter_lr_uses_flattened_shape():
    (W,) = _params([(16, 2, 3, 3)], dtype=torch.float64)
    W0 = W.detach().clone()
    G = _grads([W], 2)[0]
    W.grad = G
    Muon([W], lr=0.1, nesterov=False, orthogonalizer="svd").step()
    # (out, in*k*k) = (16, 18): the scale is sqrt(max(1, 16/18)) = 1, not the
    # kernel's 3/3 by accident; check a tall filter too.
    expected = W0 - 0.1 * polar(G.reshape(16, 18)).reshape(W.shape)
    assert torch.allclose(W.detach(), expected, atol=1e-12)
    (V,) = _params([(40, 1, 2, 2)], dtype=torch.float64)
    V0 = V.detach().clone()
    GV = _grads([V], 3)[0]
    V.grad = GV
    Muon([V], lr=0.1, nesterov=False, orthogonalizer="svd").step()
    expected = V0 - 0.1 * math.sqrt(40 / 4) * polar(GV.reshape(40, 4)).reshape(V.shape)
    assert torch.allclose(V.detach(), expected, atol=1e-12)


def test_state_dict_round_trip():
    params = _params([(20, 10), (10, 30)])
    opt = Muon(params, lr=0.03, weight_decay=0.01)
    _run(opt, params, 3)
    saved_params = [p.detach().clone() for p in params]
    saved_state = copy.deepcopy(opt.state_dict())
    _run(opt, params, 1, seed0=500)
    after = [p.detach().clone() for p in params]

    fresh = [nn.Parameter(p.clone()) for p in saved_params]
    opt2 = Muon(fresh, lr=0.03, weight_decay=0.01)
    opt2.load_state_dict(saved_state)
    _run(opt2, fresh, 1, seed0=500)
    for a, b in zip(after, fresh):
        assert torch.equal(a, b.detach())


def test_gradients_are_not_modified():
    params = _params([(8, 6)])
    opt = Muon(params)
    g = _grads(params, 9)[0]
    params[0].grad = g.clone()
    opt.step()
    opt.step()
    assert torch.equal(params[0].grad, g)


def test_one_dimensional_parameter_is_refused_with_routing_hint():
    with pytest.raises(ValueError, match="muon_param_groups"):
        Muon([nn.Parameter(torch.zeros(5))])
    with pytest.raises(ValueError, match="momentum"):
        Muon(_params([(3, 3)]), momentum=1.5)


def test_param_without_grad_is_untouched():
    a, b = _params([(4, 4), (4, 4)])
    b0 = b.detach().clone()
    a.grad = torch.ones(4, 4)
    Muon([a, b], weight_decay=0.5).step()
    assert torch.equal(b.detach(), b0)


class _Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(10, 8)
        self.conv1 = nn.Conv2d(1, 4, 3)
        self.conv2 = nn.Conv2d(4, 4, 3)
        self.norm = nn.LayerNorm(8)
        self.hidden = nn.Linear(8, 8)
        self.head = nn.Linear(8, 3)


def test_muon_param_groups_routing():
    net = _Net()
    muon, adamw = muon_param_groups(net)
    assert muon["use_muon"] and not adamw["use_muon"]
    ids = {id(p) for p in muon["params"]}
    assert ids == {id(net.conv2.weight), id(net.hidden.weight)}
    rest = {id(p) for p in adamw["params"]}
    for p in (
        net.embed.weight,
        net.conv1.weight,
        net.head.weight,
        net.norm.weight,
        net.hidden.bias,
        net.conv2.bias,
    ):
        assert id(p) in rest
    groups = muon_param_groups(net, first_layer="muon", exclude=())
    assert id(net.conv1.weight) in {id(p) for p in groups[0]["params"]}
    opt = MuonWithAuxAdamW(muon_param_groups(net))
    assert len(opt.param_groups) == 2


def test_aux_adamw_matches_torch_adamw():
    a, b = _params([(5,), (3, 4)]), _params([(5,), (3, 4)])
    kw = dict(lr=1e-2, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1)
    ours = MuonWithAuxAdamW([dict(params=a, use_muon=False, **kw)])
    theirs = torch.optim.AdamW(b, **kw)
    _run(ours, a, 4)
    _run(theirs, b, 4)
    for p, q in zip(a, b):
        assert torch.allclose(p, q, atol=1e-6)


def test_aux_requires_use_muon_flag():
    with pytest.raises(ValueError, match="use_muon"):
        MuonWithAuxAdamW([dict(params=_params([(3, 3)]))])


def test_modular_mode_steps_have_lr_norm_per_layer():
    net = nn.Sequential(nn.Embedding(7, 6), nn.Linear(6, 12), nn.Linear(12, 4))
    net = net.double()
    before = {n: p.detach().clone() for n, p in net.named_parameters()}
    groups = muon_param_groups(net, modular=True, muon_lr=0.1)
    kinds = sorted(g["kind"] for g in groups)
    assert kinds == ["embed", "linear", "vector"]
    opt = Muon(groups, lr=0.1, momentum=0.0, orthogonalizer="svd")
    g = torch.Generator().manual_seed(0)
    for p in net.parameters():
        p.grad = torch.randn(p.shape, generator=g, dtype=p.dtype)
    net[0].weight.grad[3] = 0.0  # a token absent from the batch
    opt.step()
    d = {n: before[n] - p.detach() for n, p in net.named_parameters()}
    assert math.isclose(float(linear_norm(d["1.weight"])), 0.1, rel_tol=1e-9)
    assert math.isclose(float(linear_norm(d["2.weight"])), 0.1, rel_tol=1e-9)
    rms = d["0.weight"].pow(2).mean(dim=1).sqrt()
    assert torch.allclose(
        rms[[0, 1, 2, 4, 5, 6]], torch.full((6,), 0.1, dtype=torch.float64)
    )
    assert torch.all(d["0.weight"][3] == 0)
    assert math.isclose(float(d["1.bias"].pow(2).mean().sqrt()), 0.1, rel_tol=1e-9)


def test_ns_dtype_auto_uses_bfloat16_only_when_the_probe_is_faster(monkeypatch):
    from skalgos.torch import linalg

    calls = []

    def fake_probe(bf16_seconds):
        def probe(device, size):
            calls.append((device, size))
            return {torch.float32: 1.0, torch.bfloat16: bf16_seconds}

        return probe

    for bf16, expected in [
        (0.5, torch.bfloat16),
        (0.9, torch.float32),
        (70.0, torch.float32),
    ]:
        monkeypatch.setattr(linalg, "_NS_DTYPE_CACHE", {})
        monkeypatch.setattr(linalg, "ns_dtype_probe", fake_probe(bf16))
        assert linalg.fast_ns_dtype("cpu") == expected
        assert linalg.fast_ns_dtype("cpu") == expected  # cached: one probe
    assert len(calls) == 3 and all(size == 256 for _, size in calls)
    # one probe per size bucket (32 ... 256); larger matrices reuse 256
    monkeypatch.setattr(linalg, "_NS_DTYPE_CACHE", {})
    calls.clear()
    for size in (4, 40, 64, 100, 1024, 4096):
        linalg.fast_ns_dtype("cpu", size=size)
    assert [s for _, s in calls] == [32, 64, 128, 256]
    # Muon's default follows the probe; float64 parameters stay float64
    monkeypatch.setattr(linalg, "_NS_DTYPE_CACHE", {("cpu", 32): torch.bfloat16})
    G = torch.randn(6, 4, generator=torch.Generator().manual_seed(0))
    auto = linalg.newton_schulz(G, dtype="auto")
    torch.testing.assert_close(auto, linalg.newton_schulz(G, dtype=torch.bfloat16))
    assert linalg._work_dtype(G.double(), "auto") == torch.float64
    W = torch.nn.Parameter(torch.zeros(6, 4))
    opt, ref = Muon([W], lr=0.1), torch.nn.Parameter(torch.zeros(6, 4))
    ref_opt = Muon([ref], lr=0.1, ns_dtype=torch.bfloat16)
    W.grad = ref.grad = G.clone()
    opt.step()
    ref_opt.step()
    assert torch.equal(W, ref)
    with pytest.raises(ValueError, match="ns_dtype"):
        Muon([W], ns_dtype="fast")
