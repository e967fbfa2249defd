"""Sharpness-aware minimization (SAM) and tilted SAM (TSAM).

Both wrap a base optimizer and need a closure (zero grads, forward, loss,
backward, return the loss) that they call several times per step.
"""

import math

import torch

__all__ = ["SAM", "TSAM", "TiltedSAM", "tilted_weights"]


def _params_with_grad(groups):
    return [p for g in groups for p in g["params"] if p.grad is not None]


def _ascent_direction(groups):
    """``{p: e_p}`` with ``e = rho_g T^2 g / ||T g||`` (T = |p| if adaptive else 1).

    The norm ``||T g||`` is global, over every parameter with a gradient in
    every group; ``rho`` and ``adaptive`` are read per group (as in the
    reference davda54/sam), so with one ``rho`` for all groups ``||e|| = rho``.
    """
    pairs = [(g, p) for g in groups for p in g["params"] if p.grad is not None]
    if not pairs:
        return {}
    scaled = [(p.abs() * p.grad if g["adaptive"] else p.grad) for g, p in pairs]
    norm = torch.linalg.vector_norm(
        torch.stack([torch.linalg.vector_norm(s) for s in scaled])
    )
    return {
        p: (p.pow(2) if g["adaptive"] else 1.0)
        * p.grad
        * (g["rho"] / (norm + 1e-12)).to(p.dtype)
        for g, p in pairs
    }


def tilted_weights(losses, tilt):
    """The tilted weights ``softmax(tilt * losses)`` of the TSAM estimator.

    Parameters
    ----------
    losses : sequence of float or 1-D tensor
        The losses at the sampled perturbations.
    tilt : float
        The tilt ``t >= 0``; 0 gives uniform weights, ``t -> inf`` puts all
        the weight on the largest loss.

    Returns
    -------
    weights : 1-D float64 tensor summing to one.

    Examples
    --------
    >>> from skalgos.torch.optim import tilted_weights
    >>> tilted_weights([1.0, 2.0], 0.0).tolist()
    [0.5, 0.5]
    """
    losses = torch.as_tensor(losses, dtype=torch.float64)
    return torch.softmax(float(tilt) * losses, dim=0)


class _Stateful(torch.optim.Optimizer):
    """Shared plumbing: a base optimizer on the same param groups."""

    requires_closure = True

    def _init_base(self, base_optimizer, base_kwargs):
        if not (
            isinstance(base_optimizer, type)
            and issubclass(base_optimizer, torch.optim.Optimizer)
        ) and not callable(base_optimizer):
            raise TypeError(
                "base_optimizer must be a torch.optim.Optimizer subclass or a "
                f"callable(param_groups, **kw); got {base_optimizer!r}."
            )
        self.base_optimizer = base_optimizer(self.param_groups, **base_kwargs)
        self.param_groups = self.base_optimizer.param_groups
        self.defaults.update(self.base_optimizer.defaults)

    def __getstate__(self):
        # torch.optim.Optimizer pickles only defaults/state/param_groups;
        # keep the base optimizer and our settings too.
        return dict(self.__dict__)

    def state_dict(self):
        """Our state and the base optimizer's (momentum etc.)."""
        return {"own": super().state_dict(), "base": self.base_optimizer.state_dict()}

    def load_state_dict(self, state_dict):
        """Inverse of :meth:`state_dict`."""
        super().load_state_dict(state_dict["own"])
        self.base_optimizer.load_state_dict(state_dict["base"])
        self.param_groups = self.base_optimizer.param_groups

    @staticmethod
    def _closure(closure):
        if closure is None:
            raise ValueError(
                "This optimizer needs step(closure); the closure must zero the "
                "gradients, run forward and backward, and return the loss."
            )
        return torch.enable_grad()(closure)


class SAM(_Stateful):
    """Sharpness-aware minimization around a base optimizer.

    One :meth:`step` calls the closure twice: the gradient at ``theta``, the
    ascent point ``theta + rho g / ||g||`` (a global norm over all parameters
    with gradients), then the base optimizer steps from ``theta`` with the
    gradient taken at the ascent point.

    Parameters
    ----------
    params : iterable of tensors or param groups
    base_optimizer : torch.optim.Optimizer subclass, default=torch.optim.SGD
        Built as ``base_optimizer(self.param_groups, **base_kwargs)``.
    rho : float, default=0.05
        Radius of the perturbation ball. 0 gives the base optimizer.
    adaptive : bool, default=False
        ASAM's scale-invariant ball, ``T = |theta|``.
    **base_kwargs
        For the base optimizer (``lr``, ``momentum``...).

    Notes
    -----
    ``step(closure)`` always evaluates the gradient at ``theta`` itself
    (ours): the gradient left over in ``.grad`` may be stale (the estimators'
    fit loop and skorch call ``step(closure)`` without a prior backward,
    skorch issue #785). :meth:`first_step` / :meth:`second_step` are public
    for manual loops. The state dict holds the base optimizer's state.

    References
    ----------
    Foret, Kleiner, Mobahi, Neyshabur, "Sharpness-aware minimization for
    efficiently improving generalization", ICLR 2021.

    Examples
    --------
    >>> import torch
    >>> from skalgos.torch.optim import SAM
    >>> w = torch.nn.Parameter(torch.tensor([1.0, -2.0]))
    >>> opt = SAM([w], lr=0.1, rho=0.0)
    >>> def closure():
    ...     opt.zero_grad()
    ...     loss = (w**2).sum()
    ...     loss.backward()
    ...     return loss
    >>> float(opt.step(closure))
    5.0
    >>> w.detach().tolist()
    [0.800000011920929, -1.600000023841858]
    """

    def __init__(
        self, params, base_optimizer=torch.optim.SGD, rho=0.05, adaptive=False, **kw
    ):
        if not rho >= 0:
            raise ValueError(f"rho must be >= 0; got {rho!r}.")
        super().__init__(params, dict(rho=float(rho), adaptive=bool(adaptive)))
        self._init_base(base_optimizer, kw)

    @torch.no_grad()
    def first_step(self, zero_grad=False):
        """Move to the ascent point ``theta + e`` (keeps ``theta``)."""
        for p, e in _ascent_direction(self.param_groups).items():
            self.state[p]["old_p"] = p.detach().clone()
            p.add_(e)
        if zero_grad:
            self.zero_grad()

    @torch.no_grad()
    def second_step(self, zero_grad=False):
        """Restore ``theta`` and let the base optimizer step."""
        for group in self.param_groups:
            for p in group["params"]:
                old = self.state.get(p, {}).pop("old_p", None)
                if old is not None:
                    p.copy_(old)
        self.base_optimizer.step()
        if zero_grad:
            self.zero_grad()

    def step(self, closure=None):
        """One SAM step; returns the loss at ``theta``."""
        closure = self._closure(closure)
        loss = closure()
        self.first_step(zero_grad=True)
        closure()
        self.second_step()
        return loss.detach() if torch.is_tensor(loss) else loss


class TiltedSAM(_Stateful):
    r"""Tilted sharpness-aware minimization (TSAM).

    Minimizes :math:`R_t(\theta) = \frac1t \log \mathbb E_\epsilon
    e^{t L(\theta+\epsilon)}`. Each step draws ``num_samples`` perturbations
    :math:`\epsilon_i`, evaluates losses :math:`\ell_i` and gradients
    :math:`g_i` there, and gives the base optimizer
    :math:`\sum_i \mathrm{softmax}(t\ell)_i\, g_i`, the self-normalized
    estimate of :math:`\nabla R_t`. ``t = 0`` averages (randomized
    smoothing); ``t -> inf`` keeps the worst sample (SAM-like).

    Parameters
    ----------
    params : iterable of tensors or param groups
    base_optimizer : torch.optim.Optimizer subclass, default=torch.optim.SGD
    rho : float, default=0.05
        Radius of the SAM ascent step (``sampler="noise_ascent"``) and of the
        ball the HMC sampler projects on (together with ``noise_radius``).
    tilt : float, default=1.0
        The tilt ``t >= 0`` (the released code's default is 1).
    num_samples : int, default=3
        Perturbations per step (cost: ``2 * num_samples`` closure calls with
        the ``noise_ascent`` sampler, ``num_samples`` with ``noise``).
    noise : {"gaussian", "uniform", "none"}, default="gaussian"
        Initial perturbation: ``noise_scale`` times N(0, I) (or U(-1, 1))
        over all parameters, rescaled to global norm
        ``min(||noise||, noise_radius)``.
    noise_radius : float, default=1.0
    noise_scale : float, default=1.0
    sampler : {"noise_ascent", "noise", "hmc"}, default="noise_ascent"
        ``"noise_ascent"`` is what the released code runs (its ``random1``):
        noise, then one SAM ascent step from there. ``"noise"`` uses the noise
        alone (plain Monte Carlo of the tilted objective). ``"hmc"`` is our
        reconstruction of the paper's Hamiltonian-dynamics sampler (see
        Notes).
    hmc_step, hmc_sigma, hmc_iters : float, float, int, default=0.01, 1.0, 1
        Leapfrog step, momentum standard deviation and number of leapfrog
        steps of the ``"hmc"`` sampler.
    adaptive : bool, default=False
        ASAM-style scaled ascent step.
    generator : torch.Generator or None, default=None
        Source of the noise; a seeded generator makes steps deterministic.
    **base_kwargs
        For the base optimizer.

    Attributes
    ----------
    last_losses : tensor of shape (num_samples,)
        The sample losses of the latest step.
    last_weights : tensor of shape (num_samples,)
        Their tilted weights.

    Notes
    -----
    The noise of sample ``i`` is drawn parameter by parameter, in
    ``param_groups`` order, with one ``torch.randn`` (or ``rand``) call each.

    Paper vs ours: the paper samples from :math:`e^{tL(\theta+\epsilon)}`
    on the ball with an algorithm "motivated by the discretization of
    Hamiltonian dynamics"; its released code (litian96/TSAM) runs only the
    noise-plus-ascent heuristic, which is our default. ``sampler="hmc"``
    is our reconstruction: momentum :math:`p \sim N(0, \sigma^2 I)`,
    ``hmc_iters`` leapfrog steps on the potential :math:`-tL` (half kick
    :math:`p \mathrel{+}= \frac\alpha2 t\nabla L`, drift
    :math:`\epsilon \mathrel{+}= \alpha p`, half kick) started from the
    noise, then projection onto the ball of radius
    ``max(noise_radius, rho)``, without a Metropolis step. Each leapfrog step
    costs one extra closure call. We aggregate the samples with an online
    (streaming) softmax, so memory is one extra gradient copy instead of the
    code's ``num_samples`` copies; the result is the same up to rounding.
    The released language script stores ``p.data`` instead of ``p.grad``
    (a bug we do not reproduce). :meth:`step` returns the tilted loss
    estimate :math:`\frac1t\log\frac1s\sum_i e^{t\ell_i}` (the mean at
    ``t = 0``). BatchNorm running statistics are updated by every closure
    call (the code freezes them in the perturbed passes); use a module
    without BatchNorm or accept the drift.

    References
    ----------
    Li, Zhou, Bilmes, "Tilted Sharpness-Aware Minimization", ICML 2025
    (arXiv:2410.22656).

    Examples
    --------
    >>> import torch
    >>> from skalgos.torch.optim import TiltedSAM
    >>> w = torch.nn.Parameter(torch.tensor([1.0, -2.0]))
    >>> opt = TiltedSAM([w], lr=0.1, num_samples=1, noise="none", rho=0.0)
    >>> def closure():
    ...     opt.zero_grad()
    ...     loss = (w**2).sum()
    ...     loss.backward()
    ...     return loss
    >>> round(float(opt.step(closure)), 4)
    5.0
    >>> w.detach().tolist()
    [0.800000011920929, -1.600000023841858]
    """

    def __init__(
        self,
        params,
        base_optimizer=torch.optim.SGD,
        rho=0.05,
        tilt=1.0,
        num_samples=3,
        noise="gaussian",
        noise_radius=1.0,
        noise_scale=1.0,
        sampler="noise_ascent",
        hmc_step=0.01,
        hmc_sigma=1.0,
        hmc_iters=1,
        adaptive=False,
        generator=None,
        **kw,
    ):
        if not rho >= 0:
            raise ValueError(f"rho must be >= 0; got {rho!r}.")
        if not tilt >= 0:
            raise ValueError(f"tilt must be >= 0; got {tilt!r}.")
        if int(num_samples) < 1:
            raise ValueError(f"num_samples must be >= 1; got {num_samples!r}.")
        if noise not in ("gaussian", "uniform", "none"):
            raise ValueError(
                f"noise must be 'gaussian', 'uniform' or 'none'; got {noise!r}."
            )
        if sampler not in ("noise_ascent", "noise", "hmc"):
            raise ValueError(
                f"sampler must be 'noise_ascent', 'noise' or 'hmc'; got {sampler!r}."
            )
        if not noise_radius >= 0 or not noise_scale >= 0:
            raise ValueError("noise_radius and noise_scale must be >= 0.")
        defaults = dict(rho=float(rho), adaptive=bool(adaptive))
        super().__init__(params, defaults)
        self.tilt = float(tilt)
        self.num_samples = int(num_samples)
        self.noise = noise
        self.noise_radius = float(noise_radius)
        self.noise_scale = float(noise_scale)
        self.sampler = sampler
        self.hmc_step = float(hmc_step)
        self.hmc_sigma = float(hmc_sigma)
        self.hmc_iters = int(hmc_iters)
        self.generator = generator
        self.last_losses = None
        self.last_weights = None
        self._init_base(base_optimizer, kw)

    def __getstate__(self):
        state = dict(self.__dict__)
        if state.get("generator") is not None:  # generators do not pickle
            state["_generator_state"] = state.pop("generator").get_state()
        return state

    def __setstate__(self, state):
        gen_state = state.pop("_generator_state", None)
        super().__setstate__(state)
        if gen_state is not None:
            self.generator = torch.Generator()
            self.generator.set_state(gen_state)
        self.__dict__.setdefault("generator", None)

    def _params(self):
        return [p for g in self.param_groups for p in g["params"] if p.requires_grad]

    def _draw(self, params, kind, scale):
        out = []
        for p in params:
            if kind == "gaussian":
                z = torch.randn(p.shape, generator=self.generator, dtype=p.dtype)
            else:
                z = 2 * torch.rand(p.shape, generator=self.generator, dtype=p.dtype) - 1
            out.append(scale * z.to(p.device))
        return out

    @staticmethod
    def _project(vecs, radius):
        norm = float(torch.sqrt(sum((v.double() ** 2).sum() for v in vecs)))
        if norm > radius:
            f = radius / (norm + 1e-12)
            vecs = [v * f for v in vecs]
        return vecs

    def _initial(self, params):
        if self.noise == "none":
            return [torch.zeros_like(p) for p in params]
        z = self._draw(params, self.noise, self.noise_scale)
        return self._project(z, self.noise_radius)

    @torch.no_grad()
    def _move(self, params, base, eps):
        for p, b, e in zip(params, base, eps):
            p.copy_(b + e)

    def _sample(self, closure, params, base):
        """One perturbation; leaves the sample's gradient in ``.grad``."""
        eps = self._initial(params)
        if self.sampler == "noise":
            self._move(params, base, eps)
            return closure()
        if self.sampler == "noise_ascent":
            self._move(params, base, eps)
            closure()
            with torch.no_grad():
                e = _ascent_direction(self.param_groups)
                eps = [ep + e.get(p, 0.0) for p, ep in zip(params, eps)]
            self._move(params, base, eps)
            return closure()
        # "hmc": leapfrog on U = -t L, started from the noise
        a, t = self.hmc_step, self.tilt
        mom = self._draw(params, "gaussian", self.hmc_sigma)
        self._move(params, base, eps)
        closure()
        for _ in range(self.hmc_iters):
            with torch.no_grad():
                grads = [
                    p.grad if p.grad is not None else torch.zeros_like(p)
                    for p in params
                ]
                mom = [m + 0.5 * a * t * g for m, g in zip(mom, grads)]
                eps = [ep + a * m for ep, m in zip(eps, mom)]
            self._move(params, base, eps)
            closure()
            with torch.no_grad():
                grads = [
                    p.grad if p.grad is not None else torch.zeros_like(p)
                    for p in params
                ]
                mom = [m + 0.5 * a * t * g for m, g in zip(mom, grads)]
        radius = max(self.noise_radius, *(g["rho"] for g in self.param_groups))
        eps = self._project(eps, radius)
        self._move(params, base, eps)
        return closure()

    def step(self, closure=None):
        """One TSAM step; returns the tilted loss estimate (see Notes)."""
        closure = self._closure(closure)
        params = self._params()
        base = [p.detach().clone() for p in params]
        acc = [torch.zeros_like(p) for p in params]
        m, z = -math.inf, 0.0  # running max of t*l, running sum of exp
        losses = []
        for _ in range(self.num_samples):
            loss = float(torch.as_tensor(self._sample(closure, params, base)).detach())
            losses.append(loss)
            s = self.tilt * loss
            with torch.no_grad():
                if s > m:
                    shrink = math.exp(m - s) if m > -math.inf else 0.0
                    acc = [a_ * shrink for a_ in acc]
                    z, m = z * shrink, s
                w = math.exp(s - m)
                z += w
                for a_, p in zip(acc, params):
                    if p.grad is not None:
                        a_.add_(p.grad, alpha=w)
        with torch.no_grad():
            for p, b, a_ in zip(params, base, acc):
                p.copy_(b)
                p.grad = a_ / z
        self.base_optimizer.step()
        self.last_losses = torch.tensor(losses, dtype=torch.float64)
        self.last_weights = tilted_weights(self.last_losses, self.tilt)
        if self.tilt == 0:
            return torch.tensor(sum(losses) / len(losses))
        ls = self.last_losses * self.tilt
        est = (torch.logsumexp(ls, 0) - math.log(len(losses))) / self.tilt
        return est.to(torch.float32)


#: Alias of :class:`TiltedSAM`.
TSAM = TiltedSAM
