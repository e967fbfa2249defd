"""Matrix completion with incomplete side information (OCMC, ICML 2025)."""

from ._ocmc import (
    IMCCompleter,
    NuclearNormCompleter,
    OCMCCompleter,
    OCMCRegressor,
    ocmc_complete,
)

__all__ = [
    "IMCCompleter",
    "NuclearNormCompleter",
    "OCMCCompleter",
    "OCMCRegressor",
    "ocmc_complete",
]
