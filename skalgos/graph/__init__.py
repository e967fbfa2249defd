"""Maximum (weight) independent set: pCQO-MIS (ICML 2025) with iterated local
search, the greedy, an exact MILP and CHILS."""

from ._mis import (
    PCQO_PRESETS,
    MaximumIndependentSet,
    improve_independent_set,
    is_independent_set,
    is_maximal_independent_set,
    maximum_independent_set,
)

__all__ = [
    "PCQO_PRESETS",
    "MaximumIndependentSet",
    "improve_independent_set",
    "is_independent_set",
    "is_maximal_independent_set",
    "maximum_independent_set",
]
