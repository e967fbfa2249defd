"""Sharpness measures of a trained module: Hessian top eigenvalue and trace."""

import torch

__all__ = ["hessian_top_eigenvalue", "hessian_trace", "perturbed_sharpness"]


def _loss_and_params(module, loss_fn, X, y):
    params = [p for p in module.parameters() if p.requires_grad]
    loss = loss_fn(module(X), y)
    return loss, params


def _hvp(module, loss_fn, X, y):
    with torch.enable_grad():
        loss, params = _loss_and_params(module, loss_fn, X, y)
        grads = torch.autograd.grad(loss, params, create_graph=True)

    def hvp(vs):
        with torch.enable_grad():
            hv = torch.autograd.grad(grads, params, grad_outputs=vs, retain_graph=True)
        return [h.detach() for h in hv]

    return hvp, params


def _dot(a, b):
    return sum((x * y).sum() for x, y in zip(a, b))


def hessian_top_eigenvalue(module, loss_fn, X, y, iters=50, tol=1e-6, generator=None):
    """Largest-magnitude eigenvalue of the loss Hessian, by power iteration.

    Uses Hessian-vector products (double backprop) over all parameters that
    require gradients, on the batch ``(X, y)``.

    Parameters
    ----------
    module : torch.nn.Module
    loss_fn : callable ``loss_fn(output, y) -> scalar``
    X, y : tensors
    iters : int, default=50
    tol : float, default=1e-6
        Stop when the relative change of the estimate is below ``tol``.
    generator : torch.Generator or None
        For the random start vector.

    Returns
    -------
    float

    Examples
    --------
    >>> import torch
    >>> from skalgos.torch import hessian_top_eigenvalue
    >>> layer = torch.nn.Linear(2, 1, bias=False)
    >>> X = torch.tensor([[1.0, 0.0], [0.0, 2.0]])
    >>> y = torch.zeros(2, 1)
    >>> loss = lambda out, t: ((out - t) ** 2).sum()
    >>> round(hessian_top_eigenvalue(layer, loss, X, y), 4)  # 2 * max(1, 4)
    8.0
    """
    hvp, params = _hvp(module, loss_fn, X, y)
    v = [torch.randn(p.shape, generator=generator, dtype=p.dtype) for p in params]
    norm = torch.sqrt(_dot(v, v))
    v = [x / norm for x in v]
    lam = 0.0
    for _ in range(int(iters)):
        hv = hvp(v)
        new = float(_dot(v, hv))
        norm = torch.sqrt(_dot(hv, hv))
        if float(norm) == 0.0:
            return 0.0
        v = [x / norm for x in hv]
        if abs(new - lam) <= tol * max(abs(new), 1e-12):
            lam = new
            break
        lam = new
    return lam


def hessian_trace(module, loss_fn, X, y, n_draws=50, generator=None):
    """Hutchinson estimate of the loss Hessian's trace (Rademacher probes).

    Parameters are as in :func:`hessian_top_eigenvalue`; ``n_draws`` probe
    vectors are averaged (unbiased; the variance is twice the squared
    off-diagonal Frobenius norm over ``n_draws``).

    Returns
    -------
    float

    Examples
    --------
    >>> import torch
    >>> from skalgos.torch import hessian_trace
    >>> layer = torch.nn.Linear(2, 1, bias=False)
    >>> X = torch.tensor([[1.0, 0.0], [0.0, 2.0]])  # diagonal Hessian: exact
    >>> loss = lambda out, t: ((out - t) ** 2).sum()
    >>> round(hessian_trace(layer, loss, X, torch.zeros(2, 1), n_draws=3), 4)
    10.0
    """
    hvp, params = _hvp(module, loss_fn, X, y)
    total = 0.0
    for _ in range(int(n_draws)):
        v = [
            torch.randint(0, 2, p.shape, generator=generator).to(p.dtype) * 2 - 1
            for p in params
        ]
        total += float(_dot(v, hvp(v)))
    return total / int(n_draws)


@torch.no_grad()
def perturbed_sharpness(module, loss_fn, X, y, sigma=0.05, n_draws=20, generator=None):
    """``E[L(theta + eps)] - L(theta)`` with ``eps ~ N(0, sigma^2 I)``.

    The flatness probe of the TSAM code ("Gaussian perturbation when
    evaluating smoothness"). The module's parameters are restored exactly.

    Returns
    -------
    float

    Examples
    --------
    >>> import torch
    >>> from skalgos.torch import perturbed_sharpness
    >>> layer = torch.nn.Linear(2, 1, bias=False)
    >>> loss = lambda out, t: ((out - t) ** 2).mean()
    >>> X, y = torch.randn(8, 2), torch.zeros(8, 1)
    >>> perturbed_sharpness(layer, loss, X, y, sigma=0.0)
    0.0
    """
    params = [p for p in module.parameters()]
    base = [p.detach().clone() for p in params]
    l0 = float(loss_fn(module(X), y))
    total = 0.0
    try:
        for _ in range(int(n_draws)):
            for p, b in zip(params, base):
                p.copy_(
                    b + sigma * torch.randn(p.shape, generator=generator, dtype=p.dtype)
                )
            total += float(loss_fn(module(X), y))
    finally:
        for p, b in zip(params, base):
            p.copy_(b)
    return total / int(n_draws) - l0
