"""Kernel regression with exact invariances (Spec-Avg, ICML 2025).

Estimators whose predictions are exactly invariant under a finite group acting
isometrically on a sphere, a torus or a product of these, at a cost polynomial
in the number of group generators.
"""

from ._bases import (
    LiftedSphereHarmonics,
    ProductBasis,
    SphereHarmonics,
    TorusFourier,
)
from ._group_average import GroupAveragedKernelRidge
from ._groups import CyclicGroup, FiniteGroup, PermutationGroup, SignFlipGroup
from ._invariance import invariance_discrepancy
from ._spec_avg import (
    InvariantKernelClassifier,
    InvariantKernelRidge,
    InvariantSpectralFeatures,
    invariant_basis,
)

__all__ = [
    "CyclicGroup",
    "FiniteGroup",
    "GroupAveragedKernelRidge",
    "InvariantKernelClassifier",
    "InvariantKernelRidge",
    "InvariantSpectralFeatures",
    "LiftedSphereHarmonics",
    "PermutationGroup",
    "ProductBasis",
    "SignFlipGroup",
    "SphereHarmonics",
    "TorusFourier",
    "invariance_discrepancy",
    "invariant_basis",
]
