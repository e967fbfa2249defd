"""Layer-wise (Kronecker-factored) preconditioning: KFAC and Shampoo."""

import functools
import warnings

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["LayerwisePreconditioner"]

_FISHERS = ("empirical", "mse", "cross_entropy")


def _sym_power(M, p, damping=0.0, rtol=1e-10):
    """``(M + damping I)^p`` of a symmetric PSD matrix, pseudo-inverse style.

    Computed in float64; eigenvalues below ``rtol * max`` count as zero (and
    stay zero for negative ``p``).
    """
    dtype = M.dtype
    if not bool(torch.isfinite(M).all()):
        raise FloatingPointError(
            "Non-finite curvature factor: training diverged; lower lr or raise damping."
        )
    M = M.double()
    M = 0.5 * (M + M.T)
    if damping:
        M = M + damping * torch.eye(M.shape[0], dtype=M.dtype, device=M.device)
    w, V = torch.linalg.eigh(M)
    keep = w > rtol * max(float(w.max()), 0.0)
    f = torch.zeros_like(w)
    f[keep] = w[keep] ** p
    return ((V * f) @ V.T).to(dtype)


def _channels_last(t):
    """Rows of a conv output ``(N, C, H, W)`` (or unbatched ``(C, H, W)``).

    Returns the ``(N * H * W, C)`` matrix whose rows are the per-position
    vectors over the channel axis.
    """
    if t.ndim == 3:
        t = t.unsqueeze(0)
    return t.movedim(1, -1).reshape(-1, t.shape[1])


def _conv_patches(layer, x):
    """The unfolded input patches of a Conv2d, ``(N * H_out * W_out, d)``.

    ``d = in_channels * kh * kw`` in the order of ``weight.reshape(out, -1)``.
    The padding is applied like ``nn.Conv2d`` does (``F.pad`` with the
    layer's padding, "same" included, and ``padding_mode``), then the
    patches are unfolded with the layer's kernel size, dilation and stride.
    """
    if x.ndim == 3:
        x = x.unsqueeze(0)
    pad = list(layer._reversed_padding_repeated_twice)
    if any(pad):
        mode = "constant" if layer.padding_mode == "zeros" else layer.padding_mode
        x = F.pad(x, pad, mode=mode)
    cols = F.unfold(x, layer.kernel_size, dilation=layer.dilation, stride=layer.stride)
    return cols.transpose(1, 2).reshape(-1, cols.shape[1])


class LayerwisePreconditioner(torch.optim.Optimizer):
    r"""KFAC or Shampoo preconditioning of every ``nn.Linear`` and ``nn.Conv2d``.

    For a layer with gradient matrix :math:`G` (a Conv2d weight of shape
    ``(out, in / groups, kh, kw)`` is the matrix ``(out, in / groups * kh *
    kw)``; the bias, if any, is appended as a last column in KFAC mode):

    * ``mode="kfac"``: :math:`\Delta W = -\eta\,(S+\lambda I)^{-1} G
      (A+\lambda I)^{-1}`, with :math:`A = \mathbb E[aa^\top]` (layer inputs,
      a 1 appended for the bias) and :math:`S` the backpropagated curvature at
      the layer's outputs (see ``fisher``).
    * ``mode="shampoo"``: :math:`\Delta W = -\eta\,L^{p} G R^{p}` with
      :math:`L = \beta L + (1-\beta) GG^\top`, :math:`R = \beta R +
      (1-\beta) G^\top G` (started at ``epsilon * I``), ``p = exponent``
      (default -1/4); a bias is its own column matrix.

    ``nn.Conv2d`` in KFAC mode follows KFC (Grosse & Martens, 2016):
    :math:`a` ranges over the unfolded input patches (the layer's kernel
    size, dilation, stride and padding, ``padding="same"`` and any
    ``padding_mode`` included), and the convention for the spatial positions
    is: :math:`A` is the mean over samples *and* output positions,
    :math:`S` is summed over output positions and averaged over the
    :math:`N` samples of the batch. With ``fisher="empirical"``,
    :math:`S = N \sum_{i,t} g_{it} g_{it}^\top`, :math:`g_{it}` the
    gradient of the (mean-reduced) loss at output position :math:`t` of
    sample :math:`i` over the channel axis (for Linear, :math:`N` counts the
    rows, all leading dimensions, as before). Then :math:`A\otimes S` is
    KFC's approximation of the curvature of the loss averaged over samples,
    and for a single Conv2d under ``fisher="mse"`` it is the exact Hessian,
    so one step with ``lr=1``, ``damping=0``, ``factor_decay=0`` solves the
    least-squares problem on the patches. Grouped convolutions
    (``groups > 1``, e.g. depthwise) are not KFAC-preconditioned: their
    factors would be block diagonal over the groups, which is not
    implemented, so their parameters take plain SGD steps and the
    constructor warns, naming the layer. Shampoo preconditions every Conv2d
    (grouped ones too) through the reshaped weight matrix.

    Parameters of other layers (Conv1d, Conv3d, norms, embeddings) take
    plain SGD steps with the same ``lr`` (and ``momentum``).

    Parameters
    ----------
    module : torch.nn.Module
        The model (hooks are registered on its ``nn.Linear`` and
        ``nn.Conv2d`` submodules).
    lr : float, default=1.0
    mode : {"kfac", "shampoo"}, default="kfac"
    damping : float, default=1e-3
        KFAC's Tikhonov damping :math:`\lambda` (added to both factors).
    factor_decay : float, default=0.95
        EMA rate :math:`\beta` of the factors; 0 uses the current batch only.
    update_every : int, default=10
        Recompute the factor inverses (roots) every that many steps (always
        on the first step).
    exponent : float or None, default=None
        Shampoo's root, default -1/4 (``-1/(2k)`` for a matrix).
    epsilon : float, default=1e-12
        Shampoo's regularizer: the initial factors are ``epsilon * I`` and
        the roots are taken of ``L + epsilon I`` and ``R + epsilon I`` (as
        in facebookresearch/optimizers' ``distributed_shampoo``), so
        directions the gradients no longer excite are not amplified without
        bound once the EMA has forgotten the initial factor.
    fisher : {"empirical", "mse", "cross_entropy"}, default="empirical"
        KFAC's output factor :math:`S`. ``"empirical"``: the covariance of the
        per-sample output gradients of the loss. ``"mse"`` (``nn.MSELoss``,
        mean reduction) and ``"cross_entropy"``: the exact Gauss-Newton factor
        :math:`\mathbb E[J^\top H J]` of that loss, by one extra backward pass
        per output (done inside the forward pass, so ``n_outputs`` passes).
        A 4-D output of a model with Conv2d layers is read as ``(N, C, H,
        W)`` (torch's layout, also ``nn.CrossEntropyLoss``'s class axis): its
        ``N * H * W`` positions are rows, like samples, and the passes run
        over the ``C`` channels. All positions are backpropagated at once, so
        this is exact when each output position depends on one position of a
        layer's output (the layer is followed only by 1x1 convolutions and
        pointwise operations, e.g. it is the last layer) and an
        approximation otherwise.
    momentum : float, default=0.0
        Heavy-ball momentum on the preconditioned step.
    weight_decay : float, default=0.0
        Decoupled: ``theta -= lr * weight_decay * theta``.

    Notes
    -----
    The paper (Zhang et al., 2025) analyses stylized KFAC steps
    :math:`G^+ = G - \eta (F^\top F)^{-1}\nabla_G L\,\hat\Sigma_x^{-1}` whose
    left factor is the Gauss-Newton curvature of the layer output, i.e.
    ``fisher="mse"`` here; with ``damping=0``, ``factor_decay=0`` and
    ``lr=1`` one step solves a linear least-squares problem exactly. Ours:
    the ``"empirical"`` default works with any loss (the estimators do not
    tell the optimizer which loss they use); pass ``optimizer__fisher`` to
    get the Gauss-Newton factor. No grafting, no blocking of large layers,
    no KFAC factors for grouped Conv2d (those layers fall back to SGD) and no
    Conv1d / Conv3d preconditioning. Modules with BatchNorm couple samples,
    so the Gauss-Newton factors become approximate.
    ``step`` requires a closure (it captures the statistics during it).

    References
    ----------
    Zhang, Moniri, Nagwekar, Rahman, Xue, Hassani, Matni, "On the Concurrence
    of Layer-wise Preconditioning Methods and Provable Feature Learning",
    ICML 2025 (arXiv:2502.01763). Martens & Grosse, KFAC, ICML 2015. Grosse
    & Martens, "A Kronecker-factored approximate Fisher matrix for
    convolution layers" (KFC), ICML 2016. Gupta, Koren, Singer, Shampoo, ICML
    2018.

    Examples
    --------
    >>> import torch
    >>> from skalgos.torch.optim import LayerwisePreconditioner
    >>> g = torch.Generator().manual_seed(0)
    >>> X = torch.randn(50, 3, generator=g)
    >>> Y = X @ torch.tensor([[1.0], [-2.0], [0.5]])
    >>> layer = torch.nn.Linear(3, 1, bias=False)
    >>> opt = LayerwisePreconditioner(layer, lr=1.0, damping=0.0,
    ...                               factor_decay=0.0, fisher="mse")
    >>> def closure():
    ...     opt.zero_grad()
    ...     loss = torch.nn.functional.mse_loss(layer(X), Y)
    ...     loss.backward()
    ...     return loss
    >>> _ = opt.step(closure)
    >>> [round(v, 3) for v in layer.weight.detach().flatten().tolist()]
    [1.0, -2.0, 0.5]
    """

    requires_closure = True

    def __init__(
        self,
        module,
        lr=1.0,
        mode="kfac",
        damping=1e-3,
        factor_decay=0.95,
        update_every=10,
        exponent=None,
        epsilon=1e-12,
        fisher="empirical",
        momentum=0.0,
        weight_decay=0.0,
    ):
        if not isinstance(module, nn.Module):
            raise TypeError(
                "LayerwisePreconditioner needs the module (it hooks its Linear "
                f"and Conv2d layers), not parameters; got {type(module).__name__}."
            )
        if mode not in ("kfac", "shampoo"):
            raise ValueError(f"mode must be 'kfac' or 'shampoo'; got {mode!r}.")
        if fisher not in _FISHERS:
            raise ValueError(f"fisher must be one of {_FISHERS}; got {fisher!r}.")
        if not 0 <= factor_decay < 1:
            raise ValueError(f"factor_decay must be in [0, 1); got {factor_decay!r}.")
        if int(update_every) < 1:
            raise ValueError(f"update_every must be >= 1; got {update_every!r}.")
        if not damping >= 0:
            raise ValueError(f"damping must be >= 0; got {damping!r}.")
        defaults = dict(lr=lr, momentum=momentum, weight_decay=weight_decay)
        super().__init__(module.parameters(), defaults)
        self.module = module
        self.mode = mode
        self.damping = float(damping)
        self.factor_decay = float(factor_decay)
        self.update_every = int(update_every)
        self.exponent = -0.25 if exponent is None else float(exponent)
        self.epsilon = float(epsilon)
        self.fisher = fisher
        self.steps = 0
        self._layers = []
        for name, m in module.named_modules():
            if isinstance(m, nn.Conv2d) and mode == "kfac" and m.groups != 1:
                warnings.warn(
                    f"LayerwisePreconditioner(mode='kfac'): Conv2d layer "
                    f"{name or type(m).__name__!r} has groups={m.groups}; KFAC "
                    "factors are implemented for groups=1 only, so its "
                    "parameters take plain SGD steps.",
                    UserWarning,
                    stacklevel=2,
                )
            elif isinstance(m, (nn.Linear, nn.Conv2d)):
                self._layers.append(m)
        # A 4-D module output is read as (N, C, H, W) only for models with
        # convolutions (Linear-only models keep the last axis as features).
        self._conv_output = any(isinstance(m, nn.Conv2d) for m in module.modules())
        self._register_hooks()

    # -- hooks -------------------------------------------------------------
    def _register_hooks(self):
        self._capture = False
        self._handles = []
        if self.mode != "kfac":
            return
        for layer in self._layers:
            self._handles.append(layer.register_forward_hook(self._save_io))
        if self.fisher != "empirical":
            self._handles.append(self.module.register_forward_hook(self._ggn))

    def _save_io(self, layer, inputs, output):
        if self._capture and torch.is_grad_enabled():
            self._io[layer] = (inputs[0].detach(), output)
            if self.fisher == "empirical" and output.requires_grad:
                output.register_hook(functools.partial(self._save_grad_out, layer))

    def _save_grad_out(self, layer, grad):
        if self._capture:
            grad = grad.detach()
            if isinstance(layer, nn.Conv2d):
                # KFC: summed over positions, averaged over the N samples.
                n = grad.shape[0] if grad.ndim == 4 else 1
                go = _channels_last(grad)
            else:
                go = grad.reshape(-1, grad.shape[-1])
                n = go.shape[0]
            self._stats_S[layer] = n * (go.T @ go)

    def _ggn(self, module, inputs, z):
        if not (self._capture and torch.is_grad_enabled()) or not self._io:
            return
        if z.ndim == 4 and self._conv_output:
            z2 = _channels_last(z)
        else:
            z2 = z.reshape(-1, z.shape[-1])
        n, m = z2.shape
        layers = [la for la in self._layers if la in self._io]
        outs = [self._io[la][1] for la in layers]
        if self.fisher == "cross_entropy":
            p = torch.softmax(z2.detach(), dim=1)
        S = {la: 0.0 for la in layers}
        for k in range(m):
            if self.fisher == "mse":
                v = torch.zeros_like(z2)
                v[:, k] = (2.0 / m) ** 0.5
            else:
                v = -p * p[:, k : k + 1] ** 0.5
                v[:, k] += p[:, k] ** 0.5
            grads = torch.autograd.grad(
                z2, outs, grad_outputs=v, retain_graph=True, allow_unused=True
            )
            for la, b in zip(layers, grads):
                if b is not None:
                    if isinstance(la, nn.Conv2d):
                        b = _channels_last(b)
                    else:
                        b = b.reshape(-1, b.shape[-1])
                    S[la] = S[la] + b.T @ b / n
        self._stats_S.update(S)

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("_handles", None)
        state.pop("_io", None)
        return state

    def __setstate__(self, state):
        # The hooks travel with the pickled module (its hook dicts hold our
        # bound methods), so they are live again; only the handles are lost.
        super().__setstate__(state)
        self._capture, self._handles = False, []

    def state_dict(self):
        """The factors, inverses, momenta and the step count."""
        sd = super().state_dict()
        sd["layerwise_steps"] = self.steps
        return sd

    def load_state_dict(self, state_dict):
        """Inverse of :meth:`state_dict`."""
        state_dict = dict(state_dict)
        steps = state_dict.pop("layerwise_steps", None)
        super().load_state_dict(state_dict)
        if steps is not None:
            self.steps = steps

    # -- the step ----------------------------------------------------------
    def _ema(self, state, key, new):
        b = self.factor_decay
        if key not in state or b == 0:
            state[key] = new.detach().clone()
        else:
            state[key].mul_(b).add_(new.detach(), alpha=1 - b)

    def _kfac_stats(self, layer):
        x = self._io[layer][0]
        if isinstance(layer, nn.Conv2d):
            a = _conv_patches(layer, x)  # A: mean over samples and positions
        else:
            a = x.reshape(-1, x.shape[-1])
        if layer.bias is not None:
            a = torch.cat([a, torch.ones_like(a[:, :1])], dim=1)
        st = self.state[layer.weight]
        self._ema(st, "A", a.T @ a / a.shape[0])
        if layer in self._stats_S:
            self._ema(st, "S", self._stats_S[layer])

    def _kfac_direction(self, layer, refresh):
        st = self.state[layer.weight]
        W = layer.weight
        G = W.grad.reshape(W.shape[0], -1)  # Conv2d: (out, in/groups*kh*kw)
        if layer.bias is not None and layer.bias.grad is not None:
            G = torch.cat([G, layer.bias.grad[:, None]], dim=1)
        elif layer.bias is not None:
            G = torch.cat([G, torch.zeros_like(G[:, :1])], dim=1)
        if "A" not in st or "S" not in st:
            return None
        if refresh or "A_inv" not in st:
            st["A_inv"] = _sym_power(st["A"], -1.0, self.damping)
            st["S_inv"] = _sym_power(st["S"], -1.0, self.damping)
        D = st["S_inv"] @ G @ st["A_inv"]
        if layer.bias is not None:
            return {W: D[:, :-1].reshape(W.shape), layer.bias: D[:, -1]}
        return {W: D.reshape(W.shape)}

    def _shampoo_direction(self, p, refresh):
        G = p.grad if p.grad.ndim == 2 else p.grad.reshape(p.grad.shape[0], -1)
        st = self.state[p]
        eye = lambda k: self.epsilon * torch.eye(k, dtype=G.dtype, device=G.device)  # noqa: E731
        if "L" not in st:
            st["L"], st["R"] = eye(G.shape[0]), eye(G.shape[1])
        b = self.factor_decay
        st["L"].mul_(b).add_(G @ G.T, alpha=1 - b)
        st["R"].mul_(b).add_(G.T @ G, alpha=1 - b)
        if refresh or "L_root" not in st:
            st["L_root"] = _sym_power(st["L"], self.exponent, self.epsilon)
            st["R_root"] = _sym_power(st["R"], self.exponent, self.epsilon)
        return (st["L_root"] @ G @ st["R_root"]).reshape(p.shape)

    def step(self, closure=None):
        """One preconditioned step; returns the closure's loss."""
        if closure is None:
            raise ValueError(
                "LayerwisePreconditioner.step needs the closure (zero grads, "
                "forward, loss, backward, return the loss)."
            )
        self._io, self._stats_S = {}, {}
        self._capture = True
        try:
            with torch.enable_grad():
                loss = closure()
        finally:
            self._capture = False
        refresh = self.steps % self.update_every == 0
        with torch.no_grad():
            directions = {}
            for layer in self._layers:
                if self.mode == "kfac":
                    if layer in self._io:
                        self._kfac_stats(layer)
                    if layer.weight.grad is not None:
                        d = self._kfac_direction(layer, refresh)
                        if d is not None:
                            directions.update(d)
                else:
                    for p in (layer.weight, layer.bias):
                        if p is not None and p.grad is not None:
                            directions[p] = self._shampoo_direction(p, refresh)
            for group in self.param_groups:
                lr, mom, wd = group["lr"], group["momentum"], group["weight_decay"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    d = directions.get(p, p.grad)
                    if mom:
                        st = self.state[p]
                        buf = st.get("momentum_buffer")
                        if buf is None:
                            buf = st["momentum_buffer"] = d.detach().clone()
                        else:
                            buf.mul_(mom).add_(d)
                        d = buf
                    if wd:
                        p.mul_(1 - lr * wd)
                    p.add_(d, alpha=-lr)
        self._io, self._stats_S = {}, {}
        self.steps += 1
        return loss.detach() if torch.is_tensor(loss) else loss
