"""Maximum independent set: pCQO-MIS (ICML 2025), min-degree greedy, exact MILP."""

from ._mis import (
    PCQO_PRESETS,
    MaximumIndependentSet,
    is_independent_set,
    is_maximal_independent_set,
    maximum_independent_set,
)

__all__ = [
    "PCQO_PRESETS",
    "MaximumIndependentSet",
    "is_independent_set",
    "is_maximal_independent_set",
    "maximum_independent_set",
]
