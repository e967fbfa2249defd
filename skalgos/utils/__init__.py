"""Utilities shared by every family: array backend, validation, discovery."""

from ._backend import (
    cupy_available,
    device,
    get_namespace,
    to_device,
    to_numpy,
)
from ._streaming import partial_fit_chunks
from .discovery import all_estimators

__all__ = [
    "all_estimators",
    "cupy_available",
    "device",
    "get_namespace",
    "partial_fit_chunks",
    "to_device",
    "to_numpy",
]
