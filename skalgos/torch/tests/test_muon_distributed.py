"""Two-process Muon on the gloo backend equals single-process Muon."""

import os
import socket

import pytest

torch = pytest.importorskip("torch")

import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402

SHAPES = [(16, 8), (8, 24), (12, 12), (4, 2, 3, 3), (20, 6)]


def _problem():
    g = torch.Generator().manual_seed(0)
    params = [torch.nn.Parameter(torch.randn(*s, generator=g)) for s in SHAPES]
    grads = [[torch.randn(*s, generator=g) for s in SHAPES] for _ in range(3)]
    return params, grads


def _train(params, grads):
    from skalgos.torch.optim import Muon

    opt = Muon(params, lr=0.05, weight_decay=0.01)
    for step in grads:
        for p, gr in zip(params, step):
            p.grad = gr.clone()
        opt.step()
    return [p.detach().clone() for p in params]


def _worker(rank, world, port, out):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    try:
        from skalgos.torch import linalg

        calls = []
        real = linalg._orthogonalize

        def counting(G, method, **kw):
            calls.append(tuple(G.shape))
            return real(G, method, **kw)

        linalg._orthogonalize = counting
        params, grads = _problem()
        result = _train(params, grads)
        torch.save({"params": result, "calls": len(calls)}, f"{out}/rank{rank}.pt")
    finally:
        dist.destroy_process_group()


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_two_process_gloo_equals_single_process(tmp_path):
    if not dist.is_available() or not dist.is_gloo_available():
        pytest.skip("torch.distributed with gloo is not available")
    # fork: the children need not re-import torch (spawn costs seconds each).
    mp.start_processes(
        _worker, args=(2, _free_port(), str(tmp_path)), nprocs=2, start_method="fork"
    )
    params, grads = _problem()
    reference = _train(params, grads)
    total = 0
    for rank in range(2):
        res = torch.load(tmp_path / f"rank{rank}.pt")
        for a, b in zip(res["params"], reference):
            assert torch.allclose(a, b, atol=1e-6, rtol=0)
        total += res["calls"]
    # Each rank orthogonalized only its share: 5 matrices x 3 steps in all.
    assert total == len(SHAPES) * 3
