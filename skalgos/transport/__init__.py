"""Procrustes-Wasserstein distance, alignment, barycenters and clustering.

Point clouds compared up to rotations, reflections and the order of their
points (Adamo et al., ICML 2025), built on POT's exact OT.
"""

from ._aligner import PWAligner
from ._barycenter import PWBarycenter, pw_barycenter
from ._kmeans import PWKMeans
from ._pw import PWResult, procrustes_wasserstein, pw_distance

__all__ = [
    "PWAligner",
    "PWBarycenter",
    "PWKMeans",
    "PWResult",
    "procrustes_wasserstein",
    "pw_barycenter",
    "pw_distance",
]
