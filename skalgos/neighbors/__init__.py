"""Diverse k-nearest-neighbour search on a graph index (Anand, Indyk et al., ICML 2025)."""

from ._diverse import DiverseNearestNeighbors, diverse_kneighbors
from ._sharded import ShardedDiverseNearestNeighbors

__all__ = [
    "DiverseNearestNeighbors",
    "ShardedDiverseNearestNeighbors",
    "diverse_kneighbors",
]
