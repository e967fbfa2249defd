"""Asynchronous mini-batching for any torch optimizer (Attia, Gaash, Koren, ICML 2025).

:class:`AsyncMiniBatch` wraps a ``torch.optim.Optimizer``: gradients arrive
with the version of the iterate they were computed at; fresh ones (computed
at the current iterate) are summed, stale ones are dropped, and the wrapped
optimizer steps once on the mean of ``B = max(1, ceil(tau_q))`` fresh
gradients. :class:`DelaySimulator` replays a delay sequence on one process,
computing each gradient at the stale parameter snapshot it would have seen.
The bookkeeping is :class:`skalgos.online.QuantileMiniBatcher`, shared with
the NumPy :class:`skalgos.online.AsyncMiniBatchRegressor`.
"""

from contextlib import contextmanager

import numpy as np
import torch

from ..online._async import QuantileMiniBatcher
from ..online.delays import DelayModel
from ..utils.validation import check_delays

__all__ = ["AsyncMiniBatch", "DelaySimulator"]


def _params(optimizer):
    return [p for group in optimizer.param_groups for p in group["params"]]


class AsyncMiniBatch:
    """Train from stale gradients: keep the fresh ones, step once per ``B``.

    Parameters
    ----------
    optimizer : torch.optim.Optimizer
        The base method; it steps on the mean of ``B`` fresh gradients.
    quantile : float in (0, 1] or "adaptive", default=0.9
        ``q`` of the q-quantile delay ``tau_q``. "adaptive" picks the ``q``
        minimizing ``tau_q / q`` (our plug-in rule, see Notes).
    batch_size : "auto" or int, default="auto"
        ``B``. "auto" is ``max(1, ceil(tau_q))``, from ``delays`` when given
        (the paper's fixed-``q`` procedure), else re-estimated after each step
        from the delays passed to :meth:`submit`.
    delays : array-like or None, default=None
        The delay sequence, when known in advance.

    Attributes
    ----------
    version : int
        Base steps taken; the index of the published iterate.
    n_fresh_, n_stale_ : int
        Gradients kept and dropped.
    batch_size_ : int
        The current ``B``.
    delay_quantiles_ : dict
        ``{q: tau_q}`` for q in (0.5, 0.9, 0.99, 1.0) of the delays seen so
        far (empty if :meth:`submit` got none).

    Notes
    -----
    The paper's: the staleness filter and the batch size ``B = ceil(tau_q)``
    (derived from its abstract; the method section could not be read). Ours:
    the adaptive rule. Fresh gradients are summed in a buffer of our own and
    written, averaged, into each parameter's ``.grad`` just before the base
    ``step()``, so a closure may use ``.grad`` freely in between.

    References
    ----------
    .. [1] Attia, Gaash, Koren. "Faster Stochastic Optimization with Arbitrary
       Delays via Asynchronous Mini-Batching", ICML 2025 (arXiv:2408.07503).

    Examples
    --------
    >>> import torch
    >>> from skalgos.torch._async import AsyncMiniBatch
    >>> w = torch.nn.Parameter(torch.zeros(2, dtype=torch.float64))
    >>> opt = AsyncMiniBatch(torch.optim.SGD([w], lr=0.5), batch_size=2)
    >>> opt.submit([torch.ones(2, dtype=torch.float64)], 0)
    True
    >>> opt.submit([torch.ones(2, dtype=torch.float64)], 0), opt.version
    (True, 1)
    >>> opt.submit([torch.ones(2, dtype=torch.float64)], 0), opt.n_stale_
    (False, 1)
    >>> w.detach().tolist()
    [-0.5, -0.5]
    """

    def __init__(self, optimizer, quantile=0.9, batch_size="auto", delays=None):
        if not isinstance(optimizer, torch.optim.Optimizer):
            raise TypeError(
                "optimizer must be a torch.optim.Optimizer instance; got "
                f"{type(optimizer).__name__}."
            )
        self.optimizer = optimizer
        self._mb = QuantileMiniBatcher(quantile, batch_size, delays)
        self._acc = None
        self._delays = []

    @property
    def version(self):
        return self._mb.version

    @property
    def n_fresh_(self):
        return self._mb.n_fresh_

    @property
    def n_stale_(self):
        return self._mb.n_stale_

    @property
    def batch_size_(self):
        return self._mb.batch_size_

    @property
    def delay_quantiles_(self):
        if not self._delays:
            return {}
        d = np.asarray(self._delays)
        qs = (0.5, 0.9, 0.99, 1.0)
        return {q: int(np.quantile(d, q, method="higher")) for q in qs}

    @property
    def param_groups(self):
        return self.optimizer.param_groups

    def _read(self, grads):
        params = _params(self.optimizer)
        if callable(grads):
            for p in params:
                p.grad = None
            with torch.enable_grad():
                out = grads()
            if isinstance(out, (list, tuple)):
                grads = out
            else:  # the closure ran backward(): read .grad
                grads = [p.grad for p in params]
        grads = list(grads)
        if len(grads) != len(params):
            raise ValueError(
                f"grads has {len(grads)} entries for {len(params)} parameters "
                "(one per parameter, in param_groups order; None for none)."
            )
        return params, grads

    def submit(self, grads, computed_at_version, delay=None):
        """Offer one gradient; return True if it was fresh (and kept).

        Parameters
        ----------
        grads : sequence of tensors (or None) or callable
            One gradient per parameter of the wrapped optimizer, in
            ``param_groups`` order, or a closure that either returns them or
            runs ``backward()`` (then ``.grad`` is read). A closure is called
            only for a fresh gradient.
        computed_at_version : int
            The :attr:`version` of the iterate the gradient was computed at.
        delay : int, default=None
            Its delay in arrivals, recorded for ``batch_size="auto"`` without
            known delays and for :attr:`delay_quantiles_`.

        Returns
        -------
        fresh : bool
        """
        if delay is not None:
            self._delays.append(int(delay))
        if not self._mb.offer(int(computed_at_version), delay):
            return False
        params, grads = self._read(grads)
        if self._acc is None:
            self._acc = [torch.zeros_like(p) for p in params]
        with torch.no_grad():
            for a, g in zip(self._acc, grads):
                if g is not None:
                    a.add_(g)
        if self._mb.ready():
            B = self._mb.batch_size_
            for p, a in zip(params, self._acc):
                p.grad = a / B
            self.optimizer.step()
            self._acc = None
            self._mb.step_done()
        return True

    def zero_grad(self, set_to_none=True):
        """Zero the wrapped optimizer's ``.grad`` (the fresh buffer is kept)."""
        self.optimizer.zero_grad(set_to_none=set_to_none)


class DelaySimulator:
    """Replay a delay sequence: gradients computed at stale parameter snapshots.

    Arrival ``t`` carries a gradient computed at the iterate that was
    published at arrival ``t - delays[t]`` (the initial iterate if that is
    before the start). Snapshots are kept only while a future arrival can
    still need them.

    Parameters
    ----------
    model : torch.nn.Module
    delays : array-like of shape (n_steps,) or DelayModel
    n_steps : int, default=None
        Needed with a ``DelayModel`` (sampled with ``random_state``).
    random_state : int, RandomState instance or None, default=None

    Attributes
    ----------
    delays : ndarray of int64
    n_snapshots_ : int
        Snapshots held now.

    Examples
    --------
    >>> import torch
    >>> from skalgos.torch._async import AsyncMiniBatch, DelaySimulator
    >>> torch.manual_seed(0) and None
    >>> model = torch.nn.Linear(2, 1).double()
    >>> X = torch.randn(64, 2, dtype=torch.float64); y = X @ torch.tensor([1.0, -1.0]).double()
    >>> opt = AsyncMiniBatch(torch.optim.SGD(model.parameters(), lr=0.1), batch_size=1)
    >>> sim = DelaySimulator(model, [0, 3] * 200)
    >>> def loss(m, t):
    ...     i = t % 64
    ...     return ((m(X[i : i + 1]).squeeze(1) - y[i : i + 1]) ** 2).mean()
    >>> sim.run(opt, loss)
    >>> opt.n_stale_ > 0, bool(loss(model, 0) < 1e-3)
    (True, True)
    """

    def __init__(self, model, delays, n_steps=None, random_state=None):
        if not isinstance(model, torch.nn.Module):
            raise TypeError(f"model must be a torch.nn.Module; got {type(model)}.")
        if isinstance(delays, DelayModel):
            if n_steps is None:
                raise ValueError("n_steps is needed when delays is a DelayModel.")
            delays = delays.sample(n_steps, random_state)
        delays = np.asarray(delays)
        self.delays = check_delays(delays, delays.shape[0]).astype(np.int64)
        self.model = model
        T = self.delays.shape[0]
        src = np.arange(T) - self.delays
        # Earliest arrival step still referenced from arrival t onwards.
        self._need = np.minimum.accumulate(src[::-1])[::-1]
        self._version_at = np.zeros(T, dtype=np.int64)
        self._snapshots = {}
        self._t = 0

    @property
    def n_snapshots_(self):
        return len(self._snapshots)

    def _params(self):
        return [p for p in self.model.parameters()]

    def publish(self, version):
        """Record the iterate published at the current arrival (its version).

        Returns the version the arriving gradient was computed at.
        """
        t = self._t
        if t >= self.delays.shape[0]:
            raise IndexError("the delay sequence is exhausted.")
        self._version_at[t] = version
        if version not in self._snapshots:
            self._snapshots[version] = [p.detach().clone() for p in self._params()]
        src = t - self.delays[t]
        v = int(self._version_at[src]) if src >= 0 else 0
        # Drop snapshots no future arrival can reference (versions grow with t).
        if t + 1 < self.delays.shape[0]:
            need = int(self._need[t + 1])
            if need < 0:
                oldest = 0
            elif need <= t:
                oldest = int(self._version_at[need])
            else:
                oldest = version
            for k in [k for k in self._snapshots if k < oldest and k != v]:
                del self._snapshots[k]
        self._t += 1
        return v

    @contextmanager
    def at_version(self, version):
        """Temporarily load the snapshot of ``version`` into the model."""
        params = self._params()
        current = [p.detach().clone() for p in params]
        with torch.no_grad():
            for p, s in zip(params, self._snapshots[version]):
                p.copy_(s)
        try:
            yield self.model
        finally:
            with torch.no_grad():
                for p, c in zip(params, current):
                    p.copy_(c)

    def gradient(self, loss_fn, version, t):
        """Gradients of ``loss_fn(model, t)`` at the snapshot of ``version``."""
        with self.at_version(version) as model, torch.enable_grad():
            loss = loss_fn(model, t)
            return list(torch.autograd.grad(loss, self._params(), allow_unused=True))

    def run(self, optimizer, loss_fn, n_steps=None):
        """Play ``n_steps`` arrivals (default: all) through an :class:`AsyncMiniBatch`.

        ``loss_fn(model, t)`` is the stochastic loss of arrival ``t``; it is
        evaluated only for fresh arrivals.
        """
        T = self.delays.shape[0] - self._t if n_steps is None else int(n_steps)
        for _ in range(T):
            t = self._t
            v = self.publish(optimizer.version)
            optimizer.submit(
                lambda v=v, t=t: self.gradient(loss_fn, v, t),
                v,
                delay=int(self.delays[t]),
            )
