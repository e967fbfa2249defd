"""``skalgos.show_versions()``: what is installed, for bug reports."""

import platform
import sys
from importlib.metadata import PackageNotFoundError, version

_DEPS = [
    "skalgos",
    "numpy",
    "scipy",
    "scikit-learn",
    "numba",
    "pot",
    "networkx",
    "array-api-compat",
    "threadpoolctl",
    "torch",
    "cupy-cuda12x",
    "flwr",
    "python-sat",
    "hnswlib",
    "array-api-strict",
]


def _versions():
    out = {}
    for dep in _DEPS:
        try:
            out[dep] = version(dep)
        except PackageNotFoundError:
            out[dep] = None
    return out


def show_versions():
    """Print the versions of Python, skalgos, its dependencies and the GPU state.

    Examples
    --------
    >>> import skalgos
    >>> skalgos.show_versions()  # doctest: +SKIP
    """
    from ._backend import cupy_available

    print("\nSystem:")
    print(f"    python: {sys.version.split()[0]}")
    print(f"  platform: {platform.platform()}")
    print("\nPython dependencies:")
    for dep, ver in _versions().items():
        print(f"{dep:>17}: {ver}")
    print("\nDevices:")
    print(f"{'usable CuPy GPU':>17}: {cupy_available()}")
