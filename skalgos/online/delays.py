"""Feedback-delay models: each draws one non-negative integer delay per round.

The convention everywhere in skalgos: the label of round ``t`` reaches the
learner at the end of round ``t + d_t``, so ``d_t = 0`` is the usual online
setting (the label is seen before the next prediction). River's delayed
progressive validation counts one more: River's ``delay=d`` is our ``d - 1``.

Examples
--------
>>> from skalgos.online.delays import Constant, Spike
>>> Constant(2).sample(4)
array([2, 2, 2, 2])
>>> Spike(at=1, size=3).sample(4)
array([0, 3, 0, 0])
"""

from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state

__all__ = [
    "Constant",
    "DelayModel",
    "FromArray",
    "Geometric",
    "HeavyTailed",
    "Spike",
    "UniformInt",
]


def _check_int(value, name, low=0):
    if not isinstance(value, Integral) or isinstance(value, bool) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}; got {value!r}.")
    return int(value)


class DelayModel:
    """Base class: ``sample(n_rounds, random_state)`` returns int64 delays."""

    def sample(self, n_rounds, random_state=None):
        n_rounds = _check_int(n_rounds, "n_rounds")
        out = np.asarray(self._sample(n_rounds, check_random_state(random_state)))
        return out.astype(np.int64)

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in vars(self).items())
        return f"{type(self).__name__}({args})"


class Constant(DelayModel):
    """Every label arrives ``delay`` rounds late."""

    def __init__(self, delay):
        self.delay = _check_int(delay, "delay")

    def _sample(self, n, rng):
        return np.full(n, self.delay)


class UniformInt(DelayModel):
    """Delays drawn uniformly from the integers ``low`` to ``high`` (both included)."""

    def __init__(self, low=0, high=20):
        self.low = _check_int(low, "low")
        self.high = _check_int(high, "high", low=self.low)

    def _sample(self, n, rng):
        return rng.randint(self.low, self.high + 1, size=n)


class Geometric(DelayModel):
    """Geometric delays on the integers ``k >= 0``, success probability ``p``."""

    def __init__(self, p=0.2):
        if not isinstance(p, Real) or not 0 < p <= 1:
            raise ValueError(f"p must be in (0, 1]; got {p!r}.")
        self.p = float(p)

    def _sample(self, n, rng):
        return rng.geometric(self.p, size=n) - 1


class HeavyTailed(DelayModel):
    """Mostly short delays, a few very long ones (the quantile-delay regime).

    With probability ``1 - long_fraction`` a delay is uniform on
    ``0 .. short_max``, else it equals ``long_delay``.
    """

    def __init__(self, short_max=2, long_delay=1000, long_fraction=0.05):
        self.short_max = _check_int(short_max, "short_max")
        self.long_delay = _check_int(long_delay, "long_delay")
        if not 0 <= long_fraction <= 1:
            raise ValueError(f"long_fraction must be in [0, 1]; got {long_fraction}.")
        self.long_fraction = float(long_fraction)

    def _sample(self, n, rng):
        d = rng.randint(0, self.short_max + 1, size=n)
        d[rng.rand(n) < self.long_fraction] = self.long_delay
        return d


class Spike(DelayModel):
    """No delay except one round, ``at``, whose label is ``size`` rounds late.

    ``at`` and ``size`` may be fractions of the horizon (floats in (0, 1]).
    """

    def __init__(self, at=0.0, size=0.5):
        self.at = at
        self.size = size

    def _sample(self, n, rng):
        at = int(self.at * n) if isinstance(self.at, float) else int(self.at)
        size = int(self.size * n) if isinstance(self.size, float) else int(self.size)
        d = np.zeros(n, dtype=np.int64)
        if n:
            d[min(max(at, 0), n - 1)] = max(size, 0)
        return d


class FromArray(DelayModel):
    """Delays given explicitly (repeated cyclically if the horizon is longer)."""

    def __init__(self, delays):
        arr = np.asarray(delays)
        if (
            arr.ndim != 1
            or arr.size == 0
            or arr.dtype.kind not in "iu"
            or (arr < 0).any()
        ):
            raise ValueError("delays must be a non-empty 1-D array of integers >= 0.")
        self.delays = arr.astype(np.int64)

    def _sample(self, n, rng):
        return np.resize(self.delays, n)
