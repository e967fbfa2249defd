"""Diverse k-nearest-neighbour search on a graph index (Anand, Indyk et al., ICML 2025)."""

from ._diverse import DiverseNearestNeighbors, diverse_kneighbors

__all__ = ["DiverseNearestNeighbors", "diverse_kneighbors"]
