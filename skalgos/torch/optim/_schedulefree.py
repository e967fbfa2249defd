"""Schedule-free SGD and AdamW (memory-efficient form, explicit train/eval)."""

from contextlib import contextmanager

import torch

__all__ = ["AdamWScheduleFree", "SGDScheduleFree", "recalibrate_batchnorm"]


@torch.no_grad()
def recalibrate_batchnorm(module, batches, n_batches=50):
    """Recompute BatchNorm running statistics at the current weights.

    Schedule-free optimizers collect BatchNorm statistics at the training
    point :math:`y`, but evaluate at the average :math:`x`. Call this after
    ``optimizer.eval()``: every BatchNorm's statistics are reset and
    recomputed as a cumulative average (``momentum=None``) over up to
    ``n_batches`` batches in train mode, without gradients. The module is
    left in eval mode.

    Parameters
    ----------
    module : torch.nn.Module
    batches : iterable of tensors (or tuples whose first item is the input)
    n_batches : int, default=50

    Returns
    -------
    n_seen : int
        Batches forwarded (batches of one sample are skipped).

    Examples
    --------
    >>> import torch
    >>> from skalgos.torch.optim import recalibrate_batchnorm
    >>> net = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.BatchNorm1d(3))
    >>> X = torch.randn(40, 2, generator=torch.Generator().manual_seed(0))
    >>> recalibrate_batchnorm(net, X.split(10))
    4
    >>> bool(torch.allclose(net[1].running_mean, net[0](X).mean(0), atol=1e-6))
    True
    """
    bns = [
        m
        for m in module.modules()
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)
    ]
    if not bns:
        return 0
    saved = [m.momentum for m in bns]
    for m in bns:
        m.reset_running_stats()
        m.momentum = None
    module.train()
    seen = 0
    try:
        for batch in batches:
            if seen >= n_batches:
                break
            x = batch[0] if isinstance(batch, (tuple, list)) else batch
            if len(x) > 1:
                module(x)
                seen += 1
    finally:
        for m, mom in zip(bns, saved):
            m.momentum = mom
        module.eval()
    return seen


class _ScheduleFreeBase(torch.optim.Optimizer):
    """Shared machinery: the averaging weights and the train/eval switch.

    ``p`` holds :math:`y` in train mode and the average :math:`x` in eval
    mode; the base iterate :math:`z` is kept in the state.
    """

    requires_closure = False
    requires_mode_switch = True

    def __init__(self, params, defaults):
        defaults = dict(defaults, k=0, lr_max=0.0, weight_sum=0.0, train_mode=False)
        super().__init__(params, defaults)

    @property
    def mode(self):
        """``"train"`` (params hold y) or ``"eval"`` (params hold x)."""
        return "train" if self.param_groups[0]["train_mode"] else "eval"

    @torch.no_grad()
    def _switch(self, to_train):
        for group in self.param_groups:
            if group["train_mode"] == to_train:
                continue
            beta = group[self._beta_key][0] if self._beta_is_pair else group["momentum"]
            # eval: x = y / beta + (1 - 1/beta) z ; train: y = (1 - beta) z + beta x
            weight = (1 - beta) if to_train else (1 - 1 / beta)
            for p in group["params"]:
                state = self.state[p]
                if "z" in state:
                    p.lerp_(state["z"], weight)
            group["train_mode"] = to_train

    def train(self):
        """Move the parameters to :math:`y`, where gradients are taken."""
        self._switch(True)
        return self

    def eval(self):
        """Move the parameters to the average :math:`x`, for evaluation."""
        self._switch(False)
        return self

    @contextmanager
    def evaluating(self):
        """Context manager: eval mode inside, the previous mode restored after."""
        was_train = self.mode == "train"
        self.eval()
        try:
            yield self
        finally:
            if was_train:
                self.train()

    def _weights(self, group):
        """Scheduled lr and the averaging weight c_{t+1} of this step."""
        k = group["k"]
        warmup = group["warmup_steps"]
        lr = group["lr"] * ((k + 1) / warmup if k < warmup else 1.0)
        group["scheduled_lr"] = lr
        group["lr_max"] = lr_max = max(lr, group["lr_max"])
        weight = ((k + 1) ** group["r"]) * (lr_max ** group["weight_lr_power"])
        group["weight_sum"] = group["weight_sum"] + weight
        ckp1 = weight / group["weight_sum"] if group["weight_sum"] > 0 else 0.0
        return lr, ckp1

    def _check_train(self):
        if not self.param_groups[0]["train_mode"]:
            raise RuntimeError(
                f"{type(self).__name__}.step() called in eval mode. Call "
                "optimizer.train() before training steps and optimizer.eval() "
                "before evaluating or saving (TorchClassifier/TorchRegressor "
                "do this for you)."
            )

    @torch.no_grad()
    def step(self, closure=None):
        """One schedule-free step; ``closure`` (optional) recomputes the loss."""
        self._check_train()
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            lr, ckp1 = self._weights(group)
            beta = group[self._beta_key][0] if self._beta_is_pair else group["momentum"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if "z" not in state:
                    state["z"] = p.detach().clone()
                    self._init_state(state, p)
                g = self._direction(group, state, p)
                z = state["z"]
                p.lerp_(z, ckp1)
                p.add_(g, alpha=lr * (beta * (1 - ckp1) - 1))
                z.sub_(g, alpha=lr)
            group["k"] += 1
        return loss

    def _init_state(self, state, p):
        pass


class SGDScheduleFree(_ScheduleFreeBase):
    """Schedule-free SGD (Defazio et al., 2024), analysed by Ahn et al. (2025).

    Three sequences: gradients at :math:`y_t = (1-\\beta) z_t + \\beta x_t`,
    the base step :math:`z_{t+1} = z_t - \\gamma_t(\\nabla f(y_t) + \\lambda
    y_t)`, and the average :math:`x_{t+1} = (1-c_{t+1}) x_t + c_{t+1}
    z_{t+1}` with :math:`c_{t+1} = w_t/\\sum_{i\\le t} w_i` and
    :math:`w_t = (t+1)^r \\gamma_{\\max,t}^{p}`. Only :math:`y` (in the
    parameters) and :math:`z` are stored. Ahn, Magakyan and Cutkosky show
    that this is an instance of online-to-nonconvex conversion, optimal for
    nonsmooth nonconvex losses, and that :math:`\\beta` near 1 is what the
    nonconvex theory wants.

    Call :meth:`train` before stepping and :meth:`eval` before evaluating or
    saving; the optimizer starts in eval mode.

    Parameters
    ----------
    params : iterable
    lr : float, default=1.0
    momentum : float, default=0.9
        The interpolation :math:`\\beta` (1 is primal averaging, 0 is
        Polyak-Ruppert averaging).
    weight_decay : float, default=0.0
        Evaluated at :math:`y`.
    warmup_steps : int, default=0
        Linear warmup of :math:`\\gamma_t`.
    r : float, default=0.0
    weight_lr_power : float, default=2.0

    Notes
    -----
    Written from the update rules of the memory-efficient form; the
    ``schedulefree`` package is used only as a test oracle. Unlike that
    package, gradients are not modified in place. The paper's theory allows
    general averaging weights; these defaults are the package's.

    References
    ----------
    .. [1] Ahn, K., Magakyan, G. and Cutkosky, A. "General framework for
       online-to-nonconvex conversion: Schedule-free SGD is also effective
       for nonconvex optimization", ICML 2025. arXiv:2411.07061.
    .. [2] Defazio, A. et al. "The Road Less Scheduled", NeurIPS 2024.

    Examples
    --------
    >>> import torch
    >>> from skalgos.torch.optim import SGDScheduleFree
    >>> w = torch.nn.Parameter(torch.tensor([1.0]))
    >>> opt = SGDScheduleFree([w], lr=0.1)
    >>> _ = opt.train()
    >>> for _ in range(3):
    ...     opt.zero_grad()
    ...     (w ** 2).sum().backward()
    ...     _ = opt.step()
    >>> _ = opt.eval()
    >>> opt.mode, round(w.item(), 4)  # x_3 = mean(z_1, z_2, z_3) = (0.8 + 0.64 + 0.4976) / 3
    ('eval', 0.6459)
    """

    _beta_key = "momentum"
    _beta_is_pair = False

    def __init__(
        self,
        params,
        lr=1.0,
        momentum=0.9,
        weight_decay=0.0,
        warmup_steps=0,
        r=0.0,
        weight_lr_power=2.0,
    ):
        if not lr >= 0:
            raise ValueError(f"SGDScheduleFree: lr must be >= 0; got {lr}.")
        if not 0.0 < momentum <= 1.0:
            raise ValueError(
                f"SGDScheduleFree: momentum must be in (0, 1]; got {momentum}."
            )
        super().__init__(
            params,
            dict(
                lr=lr,
                momentum=momentum,
                weight_decay=weight_decay,
                warmup_steps=warmup_steps,
                r=r,
                weight_lr_power=weight_lr_power,
            ),
        )

    def _direction(self, group, state, p):
        g = p.grad
        if group["weight_decay"] != 0:
            g = g + group["weight_decay"] * p
        return g


class AdamWScheduleFree(_ScheduleFreeBase):
    """Schedule-free AdamW: schedule-free steps on Adam-normalized gradients.

    The gradient is divided by :math:`\\sqrt{\\hat v} + \\epsilon`, with
    :math:`v` an EMA of :math:`g^2` (rate :math:`\\beta_2`, bias-corrected);
    there is no first-moment EMA (:math:`\\beta_1` is the interpolation
    :math:`\\beta`). Weight decay is added at :math:`y` after normalization.
    Call :meth:`train` before stepping and :meth:`eval` before evaluating.

    Parameters
    ----------
    params : iterable
    lr : float, default=2.5e-3
    betas : tuple of 2 floats, default=(0.9, 0.999)
    eps : float, default=1e-8
    weight_decay : float, default=0.0
    warmup_steps : int, default=0
    r : float, default=0.0
    weight_lr_power : float, default=2.0

    Notes
    -----
    Written from the update rules; the ``schedulefree`` package is a
    test-only oracle. Gradients are not modified in place.

    References
    ----------
    .. [1] Ahn, K., Magakyan, G. and Cutkosky, A. ICML 2025. arXiv:2411.07061.
    .. [2] Defazio, A. et al. "The Road Less Scheduled", NeurIPS 2024.

    Examples
    --------
    >>> import torch
    >>> from skalgos.torch.optim import AdamWScheduleFree
    >>> w = torch.nn.Parameter(torch.tensor([1.0, -1.0]))
    >>> opt = AdamWScheduleFree([w], lr=0.1).train()
    >>> (w ** 2).sum().backward()
    >>> _ = opt.step()
    >>> [round(v, 4) for v in w.detach().tolist()]  # first step: sign descent
    [0.9, -0.9]
    """

    _beta_key = "betas"
    _beta_is_pair = True

    def __init__(
        self,
        params,
        lr=2.5e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0.0,
        warmup_steps=0,
        r=0.0,
        weight_lr_power=2.0,
    ):
        if not lr >= 0:
            raise ValueError(f"AdamWScheduleFree: lr must be >= 0; got {lr}.")
        if not (0.0 < betas[0] <= 1.0 and 0.0 <= betas[1] < 1.0):
            raise ValueError(
                f"AdamWScheduleFree: betas must be in (0, 1] x [0, 1); got {betas}."
            )
        super().__init__(
            params,
            dict(
                lr=lr,
                betas=tuple(betas),
                eps=eps,
                weight_decay=weight_decay,
                warmup_steps=warmup_steps,
                r=r,
                weight_lr_power=weight_lr_power,
            ),
        )

    def _init_state(self, state, p):
        state["exp_avg_sq"] = torch.zeros_like(p)

    def _direction(self, group, state, p):
        beta2 = group["betas"][1]
        g = p.grad
        v = state["exp_avg_sq"]
        v.mul_(beta2).addcmul_(g, g, value=1 - beta2)
        bias_correction2 = 1 - beta2 ** (group["k"] + 1)
        d = g / (v / bias_correction2).sqrt().add_(group["eps"])
        if group["weight_decay"] != 0:
            d = d + group["weight_decay"] * p
        return d
