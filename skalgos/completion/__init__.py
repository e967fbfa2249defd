"""Matrix completion with incomplete side information (OCMC, ICML 2025)."""

from ._ocmc import (
    IMCCompleter,
    NuclearNormCompleter,
    OCMCCompleter,
    OCMCRegressor,
    ocmc_complete,
)
from ._soft_impute import SoftImputeCompleter

__all__ = [
    "IMCCompleter",
    "NuclearNormCompleter",
    "OCMCCompleter",
    "OCMCRegressor",
    "SoftImputeCompleter",
    "ocmc_complete",
]
