"""Warmup-stable-decay schedules and the last-iterate convex bound.

Schaipp et al. (2025) observe that the bound on the suboptimality of the last
SGD iterate for non-smooth convex problems (Defazio et al., 2023, Theorem 10)
predicts the shape of real loss curves under different learning-rate
schedules, in particular the benefit of a cooldown. Because the bound is a
closed-form function of the schedule, it can choose learning rates: the
optimal base rate of a schedule, how to transfer a tuned rate across
schedules, and how to extend a tuned run to a longer horizon.
"""

import math

import numpy as np
from torch.optim.lr_scheduler import LRScheduler

__all__ = [
    "WSD",
    "Cosine",
    "TwoStageWSD",
    "convex_bound",
    "extend_horizon",
    "lr_factors",
    "optimal_base_lr",
    "transfer_base_lr",
]


def lr_factors(
    kind,
    total_steps,
    *,
    warmup_steps=0,
    cooldown_fraction=0.2,
    decay="linear",
    final_lr_factor=0.0,
    warmup_start_factor=0.0,
    milestone=None,
    factor=1.0,
):
    """Learning-rate multipliers :math:`\\rho_t` of a schedule, one per step.

    Parameters
    ----------
    kind : {"constant", "wsd", "cosine", "linear", "two_stage"}
        ``"wsd"``: constant, then a cooldown over the last
        ``int(cooldown_fraction * total_steps)`` steps; ``"linear"`` is WSD
        with ``cooldown_fraction=1``; ``"cosine"``: half cosine from 1 to
        ``final_lr_factor`` after warmup; ``"two_stage"``: 1 until
        ``milestone``, then ``factor``, then the WSD cooldown from ``factor``.
    total_steps : int
    warmup_steps : int, default=0
        Linear warmup from ``warmup_start_factor`` (step 0) towards 1.
    cooldown_fraction : float in [0, 1], default=0.2
    decay : {"linear", "sqrt"}, default="linear"
        Cooldown shape: linear, or "1-sqrt".
    final_lr_factor : float, default=0.0
        Multiplier reached at the last step.
    warmup_start_factor : float, default=0.0
    milestone : int, default=None
        ``"two_stage"`` only: step at which the rate drops to ``factor``.
    factor : float, default=1.0
        ``"two_stage"`` only.

    Returns
    -------
    rho : ndarray of shape (total_steps,)
        At cooldown step ``j`` (0-based) of ``n``, the linear cooldown is
        :math:`\\rho_{last} - (j+1)(\\rho_{last} - \\rho_{final})/n`, so the
        last multiplier equals ``final_lr_factor``.

    Examples
    --------
    >>> from skalgos.torch.lr_scheduler import lr_factors
    >>> lr_factors("wsd", 5, cooldown_fraction=0.4).tolist()
    [1.0, 1.0, 1.0, 0.5, 0.0]
    """
    T = int(total_steps)
    if T < 1:
        raise ValueError(f"total_steps must be >= 1; got {total_steps}.")
    if not 0.0 <= cooldown_fraction <= 1.0:
        raise ValueError(
            f"cooldown_fraction must be in [0, 1]; got {cooldown_fraction}."
        )
    if decay not in ("linear", "sqrt"):
        raise ValueError(f"decay must be 'linear' or 'sqrt'; got {decay!r}.")
    W = int(warmup_steps)
    t = np.arange(T, dtype=float)
    rho = np.ones(T)
    if kind == "linear":
        kind, cooldown_fraction = "wsd", 1.0
    if kind == "constant":
        pass
    elif kind == "cosine":
        n = max(T - W, 1)
        j = np.clip(t - W + 1, 0, n)
        rho = final_lr_factor + (1 - final_lr_factor) * 0.5 * (
            1 + np.cos(np.pi * j / n)
        )
    elif kind in ("wsd", "two_stage"):
        level = 1.0
        if kind == "two_stage":
            if milestone is None:
                raise ValueError("kind='two_stage' needs a milestone step.")
            rho[int(milestone) :] = factor
            level = factor
        n = int(cooldown_fraction * T)
        n = min(n, T - W) if W + n > T else n
        if n > 0:
            j = np.arange(n, dtype=float)
            if decay == "linear":
                cool = level - (j + 1) * (level - final_lr_factor) / n
            else:
                cool = final_lr_factor + (level - final_lr_factor) * (
                    1 - np.sqrt((j + 1) / n)
                )
            # Clip rounding below the final value (e.g. -1e-18 instead of 0).
            rho[T - n :] = np.maximum(cool, min(final_lr_factor, level))
    else:
        raise ValueError(
            "kind must be one of 'constant', 'wsd', 'cosine', 'linear', 'two_stage'; "
            f"got {kind!r}."
        )
    if W > 0:
        w = t[: min(W, T)]
        rho[: len(w)] = np.minimum(
            rho[: len(w)], warmup_start_factor + (1 - warmup_start_factor) * w / W
        )
    return rho


class _FactorSchedule(LRScheduler):
    """An LRScheduler whose rate at step ``t`` is ``base_lr * factor(t)``.

    The factors come from :func:`lr_factors` with ``self._kind`` and the
    keywords of :meth:`_factor_kwargs`; :meth:`extend` re-plans the schedule
    for a longer horizon and continues at the current step.
    """

    _kind = None
    _settings = ()  # the lr_factors keywords stored as attributes

    def _init_schedule(self, optimizer, total_steps, last_epoch, **settings):
        self.total_steps = int(total_steps)
        for key, value in settings.items():
            setattr(self, key, value)
        self._refresh()
        LRScheduler.__init__(self, optimizer, last_epoch)

    def _factor_kwargs(self):
        return {key: getattr(self, key) for key in self._settings}

    def _refresh(self):
        self._factors = lr_factors(
            self._kind, self.total_steps, **self._factor_kwargs()
        ).tolist()

    def factor(self, step):
        """Multiplier at (0-based) ``step``."""
        return self._factors[min(max(step, 0), self.total_steps - 1)]

    def get_lr(self):
        f = self.factor(self.last_epoch)
        return [base * f for base in self.base_lrs]

    def extend(self, total_steps, *, lr_scale=1.0, **changes):
        """Re-plan the schedule to end at ``total_steps``; continue at the current step.

        Parameters
        ----------
        total_steps : int
            The new horizon, at least the number of steps taken.
        lr_scale : float, default=1.0
            Multiplies the base rates.
        **changes
            New values of the schedule's settings (``cooldown_fraction``...).

        Returns
        -------
        self
        """
        total_steps = int(total_steps)
        if total_steps < self.last_epoch:
            raise ValueError(
                f"total_steps={total_steps} is before the current step "
                f"{self.last_epoch}; a schedule can only be extended."
            )
        for key, value in changes.items():
            if not hasattr(self, key):
                raise TypeError(f"{type(self).__name__} has no setting {key!r}.")
            setattr(self, key, value)
        self.total_steps = total_steps
        self.base_lrs = [b * float(lr_scale) for b in self.base_lrs]
        self._refresh()
        lrs = self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, lrs):
            group["lr"] = lr
        self._last_lr = lrs
        return self


class WSD(_FactorSchedule):
    """Warmup-stable-decay: warmup, constant, then a linear or 1-sqrt cooldown.

    A :class:`torch.optim.lr_scheduler.LRScheduler` stepped once per batch;
    the rate at step ``t`` is ``base_lr * lr_factors("wsd", total_steps,
    ...)[t]`` (the last value after ``total_steps``). :meth:`extend`
    re-plans it for a longer run (the estimators feed it
    :func:`extend_horizon`).

    Parameters
    ----------
    optimizer : torch.optim.Optimizer
    total_steps : int
    warmup_steps : int, default=0
    cooldown_fraction : float, default=0.2
    decay : {"linear", "sqrt"}, default="linear"
    final_lr_factor : float, default=0.0
    warmup_start_factor : float, default=0.0
    last_epoch : int, default=-1

    References
    ----------
    .. [1] Schaipp, F., Hägele, A., Taylor, A., Simsekli, U. and Bach, F.
       "The Surprising Agreement Between Convex Optimization Theory and
       Learning-Rate Scheduling for Large Model Training", ICML 2025.
       arXiv:2501.18965.

    Examples
    --------
    >>> import torch
    >>> from skalgos.torch.lr_scheduler import WSD
    >>> opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
    >>> sched = WSD(opt, total_steps=4, cooldown_fraction=0.5)
    >>> lrs = []
    >>> for _ in range(4):
    ...     lrs.append(opt.param_groups[0]["lr"])
    ...     opt.step()
    ...     sched.step()
    >>> lrs
    [1.0, 1.0, 0.5, 0.0]
    """

    _kind = "wsd"
    _settings = (
        "warmup_steps",
        "cooldown_fraction",
        "decay",
        "final_lr_factor",
        "warmup_start_factor",
    )

    def __init__(
        self,
        optimizer,
        total_steps,
        warmup_steps=0,
        cooldown_fraction=0.2,
        decay="linear",
        final_lr_factor=0.0,
        warmup_start_factor=0.0,
        last_epoch=-1,
    ):
        self._init_schedule(
            optimizer,
            total_steps,
            last_epoch,
            warmup_steps=int(warmup_steps),
            cooldown_fraction=cooldown_fraction,
            decay=decay,
            final_lr_factor=final_lr_factor,
            warmup_start_factor=warmup_start_factor,
        )


class Cosine(_FactorSchedule):
    """Half-cosine decay (after an optional linear warmup), stepped per batch.

    The rate at step ``t`` is ``base_lr * lr_factors("cosine", total_steps,
    ...)[t]``. Unlike :class:`torch.optim.lr_scheduler.CosineAnnealingLR`
    (a periodic cosine that climbs back up after ``T_max``), it stays at
    ``final_lr_factor`` after ``total_steps``, and :meth:`extend` stretches
    the cosine over a longer horizon, continuing at the current step.

    Parameters
    ----------
    optimizer : torch.optim.Optimizer
    total_steps : int
    warmup_steps : int, default=0
    final_lr_factor : float, default=0.0
    warmup_start_factor : float, default=0.0
    last_epoch : int, default=-1

    Examples
    --------
    >>> import torch
    >>> from skalgos.torch.lr_scheduler import Cosine
    >>> opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
    >>> sched = Cosine(opt, total_steps=4)
    >>> [round(sched.factor(t), 3) for t in range(4)]
    [0.854, 0.5, 0.146, 0.0]
    """

    _kind = "cosine"
    _settings = ("warmup_steps", "final_lr_factor", "warmup_start_factor")

    def __init__(
        self,
        optimizer,
        total_steps,
        warmup_steps=0,
        final_lr_factor=0.0,
        warmup_start_factor=0.0,
        last_epoch=-1,
    ):
        self._init_schedule(
            optimizer,
            total_steps,
            last_epoch,
            warmup_steps=int(warmup_steps),
            final_lr_factor=final_lr_factor,
            warmup_start_factor=warmup_start_factor,
        )


class TwoStageWSD(WSD):
    """Two-stage WSD: 1 until ``milestone``, then ``factor``, then a cooldown.

    The schedule :func:`extend_horizon` returns for ``mode="two_stage"``
    (pass its ``milestone``, ``factor`` and ``cooldown_fraction``). Stepped
    once per batch, like :class:`WSD`.

    Parameters
    ----------
    optimizer : torch.optim.Optimizer
    total_steps : int
    milestone : int
    factor : float
    cooldown_fraction : float, default=0.2
    decay : {"linear", "sqrt"}, default="linear"
    final_lr_factor : float, default=0.0
    last_epoch : int, default=-1

    Examples
    --------
    >>> import torch
    >>> from skalgos.torch.lr_scheduler import TwoStageWSD
    >>> opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
    >>> sched = TwoStageWSD(opt, total_steps=5, milestone=2, factor=0.5,
    ...                     cooldown_fraction=0.4)
    >>> [sched.factor(t) for t in range(5)]
    [1.0, 1.0, 0.5, 0.25, 0.0]
    """

    _kind = "two_stage"

    def __init__(
        self,
        optimizer,
        total_steps,
        milestone,
        factor,
        cooldown_fraction=0.2,
        decay="linear",
        final_lr_factor=0.0,
        last_epoch=-1,
    ):
        self._init_schedule(
            optimizer,
            total_steps,
            last_epoch,
            milestone=int(milestone),
            stage_factor=float(factor),
            cooldown_fraction=cooldown_fraction,
            decay=decay,
            final_lr_factor=final_lr_factor,
        )

    def _factor_kwargs(self):
        kw = {k: getattr(self, k) for k in ("milestone", "cooldown_fraction")}
        kw.update(decay=self.decay, final_lr_factor=self.final_lr_factor)
        return dict(kw, factor=self.stage_factor)


def _etas_and_T(factors, base_lr, T):
    rho = np.asarray(factors, dtype=float)
    if rho.ndim != 1 or rho.size == 0:
        raise ValueError("factors must be a non-empty 1-D sequence of multipliers.")
    if np.any(rho < 0) or not np.all(np.isfinite(rho)):
        raise ValueError("factors must be finite and >= 0.")
    if T is None:
        # Trailing zero steps do not move the iterate: bound the last moving one.
        nz = np.flatnonzero(rho > 0)
        if nz.size == 0:
            raise ValueError("factors are all zero; the bound is undefined.")
        T = int(nz[-1]) + 1
    T = int(T)
    if not 1 <= T <= rho.size:
        raise ValueError(f"T must be in [1, {rho.size}]; got {T}.")
    eta = base_lr * rho[:T]
    if eta[-1] <= 0:
        raise ValueError(
            "The learning rate at step T is 0; the last-iterate bound needs "
            "eta_T > 0 (use T=None to drop trailing zeros)."
        )
    return eta, T


def convex_bound(
    factors, base_lr=1.0, D=1.0, G=1.0, T=None, kind="last_iterate", split=False
):
    """Bound on :math:`\\mathbb E f(x_T) - f_\\star` of SGD with a schedule.

    For SGD :math:`x_{t+1} = x_t - \\eta_t g_t` on a convex function with
    :math:`\\|g_t\\| \\le G_t` and :math:`D = \\|x_1 - x_\\star\\|`, with
    :math:`S_k = \\sum_{t=k}^T \\eta_t`, the last iterate satisfies

    .. math::

        \\Omega_T = \\frac{D^2}{2S_1} + \\frac{\\sum_{t=1}^T \\eta_t^2 G_t^2}{2S_1}
        + \\frac12 \\sum_{k=1}^{T-1} \\frac{\\eta_k}{S_{k+1}}
        \\frac{\\sum_{t=k}^T \\eta_t^2 G_t^2}{S_k}.

    Parameters
    ----------
    factors : array-like of shape (n,)
        Schedule multipliers :math:`\\rho_t`; :math:`\\eta_t = `
        ``base_lr`` :math:`\\rho_t`.
    base_lr : float, default=1.0
    D : float, default=1.0
    G : float or array-like of shape (n,), default=1.0
        Gradient-norm bound, a constant or one per step.
    T : int, default=None
        Step at which to bound; ``None`` is the last step with a non-zero
        rate (a final rate of 0 does not move the iterate).
    kind : {"last_iterate", "average"}, default="last_iterate"
        ``"average"`` is the classical bound
        :math:`(D^2 + \\sum \\eta_t^2 G_t^2) / (2\\sum \\eta_t)` for the
        averaged iterate.
    split : bool, default=False
        Return the three terms :math:`(t_1, t_2, t_3)` instead of their sum
        (for ``"average"``: ``(t_1, t_2, 0)``).

    Returns
    -------
    bound : float or tuple of 3 floats

    Examples
    --------
    >>> from skalgos.torch.lr_scheduler import convex_bound
    >>> convex_bound([1.0, 1.0], split=True)
    (0.25, 0.5, 0.5)
    """
    eta, T = _etas_and_T(factors, base_lr, T)
    G = np.broadcast_to(np.asarray(G, dtype=float), (len(np.asarray(factors)),))[:T]
    sq = eta**2 * G**2
    # Suffix sums computed directly (reversed cumsum) rather than by
    # subtracting from the total, which cancels catastrophically.
    S = np.cumsum(eta[::-1])[::-1]  # S[k] = sum_{t>=k} eta_t (0-based)
    Q = np.cumsum(sq[::-1])[::-1]
    t1 = D**2 / (2 * S[0])
    t2 = Q[0] / (2 * S[0])
    if kind == "average":
        terms = (float(t1), float(t2), 0.0)
    elif kind == "last_iterate":
        t3 = 0.5 * np.sum(eta[:-1] / S[1:] * Q[:-1] / S[:-1]) if T > 1 else 0.0
        terms = (float(t1), float(t2), float(t3))
    else:
        raise ValueError(f"kind must be 'last_iterate' or 'average'; got {kind!r}.")
    return terms if split else sum(terms)


def optimal_base_lr(factors, D=1.0, G=1.0, T=None, kind="last_iterate"):
    """Base rate minimizing :func:`convex_bound`, and the minimal bound.

    :math:`\\Omega_T(\\gamma) = A/\\gamma + B\\gamma` with :math:`A = t_1`
    and :math:`B = t_2 + t_3` at :math:`\\gamma = 1`, so
    :math:`\\gamma^\\star = \\sqrt{A/B}` and :math:`\\Omega^\\star = 2\\sqrt{AB}`.

    Returns
    -------
    gamma_star : float
    bound_star : float

    Examples
    --------
    >>> from skalgos.torch.lr_scheduler import optimal_base_lr
    >>> optimal_base_lr([1.0, 1.0])
    (0.5, 1.0)
    """
    t1, t2, t3 = convex_bound(factors, 1.0, D=D, G=G, T=T, kind=kind, split=True)
    A, B = t1, t2 + t3
    return math.sqrt(A / B), 2 * math.sqrt(A * B)


def transfer_base_lr(base_lr, from_factors, to_factors, T_from=None, T_to=None):
    """Move a tuned base rate from one schedule to another by the bound.

    Returns ``base_lr`` times :math:`\\gamma^\\star(\\text{to}) /
    \\gamma^\\star(\\text{from})`; the unknown :math:`D` and :math:`G` cancel.

    Examples
    --------
    >>> from skalgos.torch.lr_scheduler import lr_factors, transfer_base_lr
    >>> wsd, cos = lr_factors("wsd", 1001), lr_factors("cosine", 1001)
    >>> 1.5 < transfer_base_lr(1.0, wsd, cos) < 2.5
    True
    """
    g_from, _ = optimal_base_lr(from_factors, T=T_from)
    g_to, _ = optimal_base_lr(to_factors, T=T_to)
    return base_lr * g_to / g_from


def _bisect(fun, lo, hi, iters=60):
    f_lo = fun(lo)
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        f_mid = fun(mid)
        if (f_mid > 0) == (f_lo > 0):
            lo, f_lo = mid, f_mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def extend_horizon(
    base_lr, T0, T1, cooldown_fraction=0.2, mode="cooldown", decay="linear"
):
    """Schedule for continuing a WSD run tuned at horizon ``T0`` up to ``T1``.

    Parameters
    ----------
    base_lr : float
        The rate tuned for WSD with ``cooldown_fraction`` at ``T0`` steps.
    T0, T1 : int
        Old and new horizons, ``T1 > T0``.
    cooldown_fraction : float, default=0.2
    mode : {"cooldown", "two_stage"}, default="cooldown"
        ``"cooldown"``: keep ``base_lr`` and choose the cooldown fraction
        :math:`c` of the ``T1`` run whose bound-optimal rate equals that of
        the tuned run. ``"two_stage"``: keep ``base_lr`` until the old
        cooldown start :math:`(1-c)T_0`, then use ``factor * base_lr`` with
        ``factor`` chosen the same way, then cool down over the last
        ``cooldown_fraction`` of ``T1``.
    decay : {"linear", "sqrt"}, default="linear"

    Returns
    -------
    schedule : dict
        ``"cooldown"``: ``{"base_lr", "total_steps", "cooldown_fraction"}``;
        ``"two_stage"``: also ``"milestone"`` and ``"factor"``. Feed it to
        :func:`lr_factors` (``kind="wsd"`` or ``"two_stage"``). If no
        cooldown fraction keeps the rate (the horizon grows too much),
        ``cooldown_fraction`` is 1 and ``base_lr`` is rescaled by the bound.

    Examples
    --------
    >>> from skalgos.torch.lr_scheduler import extend_horizon
    >>> s = extend_horizon(1e-3, 4000, 8000)
    >>> round(s["cooldown_fraction"], 1)
    0.6
    """
    T0, T1 = int(T0), int(T1)
    if not T1 > T0 >= 2:
        raise ValueError(f"Need T1 > T0 >= 2; got T0={T0}, T1={T1}.")
    ref, _ = optimal_base_lr(
        lr_factors("wsd", T0 + 1, cooldown_fraction=cooldown_fraction, decay=decay)
    )
    if mode == "cooldown":

        def gap(c):
            f = lr_factors("wsd", T1 + 1, cooldown_fraction=c, decay=decay)
            return math.log(optimal_base_lr(f)[0] / ref)

        lo, hi = 1.0 / (T1 + 1), 1.0
        if gap(hi) < 0:
            f = lr_factors("wsd", T1 + 1, cooldown_fraction=1.0, decay=decay)
            return dict(
                base_lr=base_lr * optimal_base_lr(f)[0] / ref,
                total_steps=T1,
                cooldown_fraction=1.0,
            )
        c = hi if gap(lo) > 0 else _bisect(gap, lo, hi)
        return dict(base_lr=base_lr, total_steps=T1, cooldown_fraction=c)
    if mode == "two_stage":
        milestone = int(round((1 - cooldown_fraction) * T0))

        def gap(kappa):
            f = lr_factors(
                "two_stage",
                T1 + 1,
                milestone=milestone,
                factor=float(kappa),
                cooldown_fraction=cooldown_fraction,
                decay=decay,
            )
            return math.log(optimal_base_lr(f)[0] / ref)

        # The bound is not monotone in the factor near 0: bracket the largest
        # root from a coarse grid, then bisect.
        grid = np.linspace(0.02, 1.0, 50)
        above = [k for k in grid if gap(k) > 0]
        if not above:
            kappa = 1.0
        else:
            lo = max(above)
            kappa = 1.0 if lo >= 1.0 else _bisect(gap, lo, lo + grid[1] - grid[0])
        return dict(
            base_lr=base_lr,
            total_steps=T1,
            cooldown_fraction=cooldown_fraction,
            milestone=milestone,
            factor=float(kappa),
        )
    raise ValueError(f"mode must be 'cooldown' or 'two_stage'; got {mode!r}.")
