"""skalgos: scikit-learn compatible estimators for nineteen ICML 2025 papers.

Subpackages are imported lazily, so ``import skalgos`` pulls in neither numba,
torch nor cupy; each family is loaded on first attribute access
(``skalgos.neighbors``) or by a direct import (``from skalgos.neighbors import ...``).
"""

import importlib as _importlib
from importlib.metadata import PackageNotFoundError as _PackageNotFoundError
from importlib.metadata import version as _version

try:
    __version__ = _version("skalgos")
except _PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0+unknown"

_submodules = [
    "cluster",
    "completion",
    "datasets",
    "federated",
    "graph",
    "kernel_ridge",
    "metrics",
    "neighbors",
    "online",
    "torch",
    "transport",
    "tree",
    "utils",
]

__all__ = _submodules + ["__version__", "show_versions"]


def __dir__():
    return __all__


def __getattr__(name):
    if name in _submodules:
        return _importlib.import_module(f"skalgos.{name}")
    if name == "show_versions":
        from .utils._show_versions import show_versions

        return show_versions
    raise AttributeError(f"module 'skalgos' has no attribute {name!r}")
