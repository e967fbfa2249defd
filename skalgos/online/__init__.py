"""Online learners under delayed feedback, and asynchronous mini-batching."""

from . import delays
from ._async import AsyncMiniBatchRegressor, QuantileMiniBatcher, quantile_batch_size
from ._evaluation import DelayedScore, delayed_progressive_score
from ._learners import (
    BOLD,
    ClippedVAWRegressor,
    DelayedFTRLRegressor,
    DelayedOGDClassifier,
    DelayedOGDRegressor,
    DelayedOnlineNewtonStepClassifier,
    DelayedOnlineNewtonStepRegressor,
)
from ._river import as_river, river_delay_to_skalgos

__all__ = [
    "AsyncMiniBatchRegressor",
    "BOLD",
    "ClippedVAWRegressor",
    "DelayedFTRLRegressor",
    "DelayedOGDClassifier",
    "DelayedOGDRegressor",
    "DelayedOnlineNewtonStepClassifier",
    "DelayedOnlineNewtonStepRegressor",
    "DelayedScore",
    "QuantileMiniBatcher",
    "as_river",
    "river_delay_to_skalgos",
    "delayed_progressive_score",
    "delays",
    "quantile_batch_size",
]


def __getattr__(name):
    # RiverRegressor / RiverClassifier: made on first access (needs River)
    from . import _river

    if name in _river._LAZY:
        return getattr(_river, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
