"""Dynamic correlation clustering under node insertions (SPARSE-PIVOT, ICML 2025)."""

from ._dynamic_cc import (
    DynamicCorrelationClustering,
    correlation_clustering_milp,
    pivot,
)
from ._graph_database import GraphDatabase

__all__ = [
    "DynamicCorrelationClustering",
    "GraphDatabase",
    "correlation_clustering_milp",
    "pivot",
]
