"""Optimizers: Muon (modular duality), schedule-free SGD/AdamW, the registry."""

from ._layerwise import LayerwisePreconditioner
from ._muon import Muon, MuonWithAuxAdamW, muon_param_groups
from ._registry import (
    available_optimizers,
    build_optimizer,
    default_lr,
    get_optimizer,
    optimizer_flags,
    register_optimizer,
)
from ._sam import SAM, TSAM, TiltedSAM, tilted_weights
from ._schedulefree import AdamWScheduleFree, SGDScheduleFree, recalibrate_batchnorm
from ._symo import StructuredCurvature, SyMO

__all__ = [
    "LayerwisePreconditioner",
    "SAM",
    "StructuredCurvature",
    "SyMO",
    "TSAM",
    "TiltedSAM",
    "tilted_weights",
    "AdamWScheduleFree",
    "Muon",
    "MuonWithAuxAdamW",
    "SGDScheduleFree",
    "available_optimizers",
    "build_optimizer",
    "default_lr",
    "get_optimizer",
    "muon_param_groups",
    "optimizer_flags",
    "recalibrate_batchnorm",
    "register_optimizer",
]
