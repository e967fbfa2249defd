"""Federated learning: simulated clients, synchronous and asynchronous strategies.

``FederatedClassifier`` / ``FederatedRegressor`` train a linear model across
simulated clients with a strategy object: FedAvg, FedProx, FedNova, FedExP,
FedECADO (ICML 2025) and, on a virtual clock, FedAsync, FedBuff, MasFL and
AdaMasFL (ICML 2025). Certification of per-client risk lives in
:mod:`skalgos.metrics` (``dkw_band``, ``robust_cdf_bound``,
``robust_mean_bound``).
"""

from ._federated import FederatedClassifier, FederatedRegressor
from ._strategies import (
    AdaMasFL,
    FedAsync,
    FedAvg,
    FedBuff,
    FedECADO,
    FedExP,
    FedNova,
    FedProx,
    MasFL,
)

__all__ = [
    "AdaMasFL",
    "FedAsync",
    "FedAvg",
    "FedBuff",
    "FedECADO",
    "FedExP",
    "FedNova",
    "FedProx",
    "FederatedClassifier",
    "FederatedRegressor",
    "MasFL",
]
