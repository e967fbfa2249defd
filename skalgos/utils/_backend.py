"""The one door to array namespaces, devices, GPUs and Numba.

Every family goes through this module for anything that depends on where an
array lives: which namespace to compute with, how to move a result back to the
input's device, whether a GPU is usable, and how Numba kernels are compiled and
threaded. Dispatch always follows the inputs; there is no global device switch.

Policy (the same as scikit-learn's array API support):

* With ``sklearn.set_config(array_api_dispatch=True)``, :func:`get_namespace`
  returns the array-API namespace of the inputs (NumPy, CuPy, torch,
  array-api-strict, ...), so the computation and fitted attributes stay on the
  input's device.
* With dispatch off (the default), everything is computed with NumPy, and
  non-NumPy inputs are converted with :func:`to_numpy` by input validation.

Numba kernels follow one pattern: :func:`jit` compiles ``nogil`` CPU kernels
with an on-disk cache, :func:`cuda_jit` compiles ``numba.cuda`` kernels (which
run on CPU under ``NUMBA_ENABLE_CUDASIM=1``), and :func:`numba_threads` caps the
number of Numba threads for a block of work so that nested parallelism under
joblib does not oversubscribe the machine.
"""

import contextlib
import functools
import os
import sys

import numpy as np
import scipy.sparse as sp
from sklearn import get_config

__all__ = [
    "available_namespaces",
    "check_array_api_support",
    "cuda_available",
    "cuda_jit",
    "cupy_available",
    "device",
    "effective_n_threads",
    "get_namespace",
    "is_numpy_namespace",
    "jit",
    "numba_cache_dir",
    "numba_threads",
    "size",
    "to_device",
    "to_numpy",
]


def _compat():
    import array_api_compat

    return array_api_compat


def _is_array(x):
    return hasattr(x, "shape") and hasattr(x, "dtype") and not sp.issparse(x)


def get_namespace(*arrays, xp=None):
    """Return the array namespace to compute with for ``arrays``.

    Parameters
    ----------
    *arrays : array-like
        Arrays (NumPy, CuPy, torch, array-api-strict, ...). ``None``, Python
        scalars, lists and sparse matrices are ignored.
    xp : module, default=None
        A namespace to use as is (for example one already found by a caller).

    Returns
    -------
    xp : module
        An array-API compatible namespace. With scikit-learn's
        ``array_api_dispatch`` off this is always the array-API wrapper of NumPy.

    Raises
    ------
    TypeError
        If the arrays come from different libraries while dispatch is on.

    Examples
    --------
    >>> import numpy as np
    >>> from skalgos.utils import get_namespace
    >>> xp = get_namespace(np.ones(3))
    >>> float(xp.sum(xp.ones(3)))
    3.0
    """
    if xp is not None:
        return xp
    compat = _compat()
    arrays = [a for a in arrays if _is_array(a)]
    if not arrays or not get_config().get("array_api_dispatch", False):
        return compat.array_namespace(np.empty(0))
    return compat.array_namespace(*arrays)


def _namespace_name(xp):
    name = getattr(xp, "__name__", type(xp).__name__)
    return name.removeprefix("array_api_compat.")


def check_array_api_support(estimator, *arrays):
    """Refuse non-NumPy arrays for an estimator that cannot compute with them.

    The one place where an estimator without array API support (its tag
    ``array_api_support`` is False) meets a CuPy, torch, array-api-strict, ...
    array while scikit-learn's ``array_api_dispatch`` is on. Without dispatch,
    input validation converts such arrays to NumPy as scikit-learn does, so
    nothing is refused. :func:`skalgos.utils.validation.validate_data` calls
    this first, so every estimator refuses the same way.

    Parameters
    ----------
    estimator : estimator instance
        The estimator about to receive ``arrays``.
    *arrays : array-like
        Its inputs; ``None``, lists, sparse matrices and data frames are ignored.

    Raises
    ------
    TypeError
        Naming the estimator, the namespace and the two ways out.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import Ridge
    >>> from skalgos.utils._backend import check_array_api_support
    >>> check_array_api_support(Ridge(), np.ones((2, 2)))  # NumPy always passes
    """
    if not get_config().get("array_api_dispatch", False):
        return
    compat = _compat()
    foreign = [
        a
        for a in arrays
        if _is_array(a) and compat.is_array_api_obj(a) and not compat.is_numpy_array(a)
    ]
    if not foreign:
        return
    from sklearn.utils import get_tags

    if get_tags(estimator).array_api_support:
        return
    names = sorted({_namespace_name(compat.array_namespace(a)) for a in foreign})
    raise TypeError(
        f"{type(estimator).__name__} does not support array_api_dispatch=True "
        f"with {' and '.join(names)} arrays: it computes with NumPy only. Pass "
        "NumPy arrays (skalgos.utils.to_numpy(X)), or fit it outside "
        "sklearn.config_context(array_api_dispatch=True), where inputs are "
        "converted to NumPy."
    )


def is_numpy_namespace(xp):
    """True when ``xp`` is NumPy or its array-API wrapper."""
    return xp is np or _compat().is_numpy_namespace(xp)


def device(x):
    """The device of array ``x`` (``"cpu"`` for NumPy arrays)."""
    return _compat().device(x)


def size(x):
    """Number of elements of ``x`` (array-API arrays may lack ``.size``)."""
    return _compat().size(x)


def to_device(x, device, xp=None):
    """Return ``x`` as an array of namespace ``xp`` on ``device``.

    ``x`` may be a NumPy array that is moved to the GPU (CuPy or torch CUDA),
    or an array already in ``xp``.
    """
    xp = get_namespace(x) if xp is None else xp
    compat = _compat()
    if is_numpy_namespace(xp):
        return to_numpy(x)
    if not (hasattr(x, "__array_namespace__") or compat.is_array_api_obj(x)):
        x = np.asarray(x)
    if compat.is_numpy_array(x):
        x = xp.asarray(x)
    return compat.to_device(x, device)


def to_numpy(x):
    """Return ``x`` as a NumPy array, copying from any device if needed.

    Examples
    --------
    >>> import numpy as np
    >>> from skalgos.utils import to_numpy
    >>> to_numpy([1, 2, 3])
    array([1, 2, 3])
    """
    compat = _compat()
    if isinstance(x, np.ndarray) or not _is_array(x):
        return np.asarray(x)
    if compat.is_cupy_array(x):
        return x.get()
    if compat.is_torch_array(x):
        return x.detach().cpu().numpy()
    if compat.is_array_api_strict_namespace(compat.array_namespace(x)):
        import array_api_strict

        return np.asarray(
            array_api_strict.asarray(x, device=array_api_strict.Device("CPU_DEVICE"))
        )
    return np.asarray(x)


@functools.lru_cache(maxsize=1)
def cupy_available():
    """True only when CuPy is importable *and* a CUDA device can be used.

    An importable CuPy without a driver or a GPU (the state of CI machines)
    gives False, and nothing is raised.

    Examples
    --------
    >>> from skalgos.utils import cupy_available
    >>> isinstance(cupy_available(), bool)
    True
    """
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() < 1:
            return False
        cupy.zeros(1).sum()  # a real allocation and kernel launch
        return True
    except Exception:  # ImportError, CUDARuntimeError, missing driver, ...
        return False


def cuda_available():
    """True when ``numba.cuda`` kernels can run: a GPU, or the CUDA simulator."""
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        return True
    try:
        from numba import cuda

        return bool(cuda.is_available())
    except Exception:
        return False


def available_namespaces():
    """Yield ``(name, xp, device)`` for every array namespace usable here.

    NumPy always; array-api-strict (with a simulated non-CPU device) and torch
    CPU when installed; CuPy and torch CUDA only when a GPU is usable. The test
    suite's ``xp`` fixture is built from this list.
    """
    compat = _compat()
    yield "numpy", compat.array_namespace(np.empty(0)), "cpu"
    try:
        import array_api_strict

        yield "array_api_strict", array_api_strict, array_api_strict.Device("device1")
    except ImportError:
        pass
    try:
        import torch

        yield "torch", compat.array_namespace(torch.empty(0)), "cpu"
        if torch.cuda.is_available():
            yield "torch_cuda", compat.array_namespace(torch.empty(0)), "cuda"
    except ImportError:
        pass
    if cupy_available():
        import cupy

        yield "cupy", compat.array_namespace(cupy.empty(0)), None


# ---------------------------------------------------------------------------
# Numba
# ---------------------------------------------------------------------------


_ANNOUNCED = set()


def _announce_compile(dispatcher):
    """Say once per process and family that its kernels are being compiled."""
    module = getattr(dispatcher.py_func, "__module__", "") or ""
    parts = module.split(".")
    if parts[0] != "skalgos" or len(parts) < 2:
        return
    family = parts[1] if parts[1] != "utils" else "shared"
    if family in _ANNOUNCED:
        return
    _ANNOUNCED.add(family)
    cache = getattr(getattr(dispatcher, "_cache", None), "_cache_path", None)
    where = f" into {cache}" if cache else ""
    print(
        f"skalgos: compiling the {family} kernels with Numba{where}; "
        "this happens once per install and version.",
        file=sys.stderr,
        flush=True,
    )


@functools.lru_cache(maxsize=1)
def _install_compile_listener():
    """Listen to Numba's compile event, which fires only on a cache miss."""
    from numba.core import event

    class _Listener(event.Listener):
        def on_start(self, ev):
            _announce_compile(ev.data["dispatcher"])

        def on_end(self, ev):
            pass

    event.register("numba:compile", _Listener())


def numba_cache_dir(kernel):
    """Where Numba keeps (or would keep) the compiled code of ``kernel``.

    Numba writes next to the source (``__pycache__``) when that directory is
    writable, as in an editable install or a user's virtual environment, and
    falls back to the user's cache directory (``~/.cache/numba``, or
    ``NUMBA_CACHE_DIR`` when set) when the package directory is read-only.

    Parameters
    ----------
    kernel : numba dispatcher
        A kernel compiled with :func:`jit`.

    Returns
    -------
    path : str or None
        ``None`` for a kernel compiled without ``cache=True``.
    """
    cache = getattr(kernel, "_cache", None)
    return getattr(cache, "_cache_path", None)


def jit(func=None, *, parallel=False, fastmath=False, cache=True, **kwargs):
    """Compile a CPU kernel with ``numba.njit(cache=True, nogil=True)``.

    Works both bare (``@jit``) and with arguments (``@jit(parallel=True)``).
    Numba is imported when the first kernel is decorated, that is when a family's
    ``_kernels`` module is imported, never by ``import skalgos``. The machine
    code is cached on disk (see :func:`numba_cache_dir`), so only the first
    call in a fresh install compiles; that first compile prints one line per
    family on stderr.
    """

    def decorate(f):
        import numba

        _install_compile_listener()
        return numba.njit(
            cache=cache, nogil=True, parallel=parallel, fastmath=fastmath, **kwargs
        )(f)

    return decorate if func is None else decorate(func)


def cuda_jit(func=None, **kwargs):
    """Compile a ``numba.cuda`` kernel (simulated on CPU with NUMBA_ENABLE_CUDASIM=1)."""

    def decorate(f):
        from numba import cuda

        return cuda.jit(**kwargs)(f)

    return decorate if func is None else decorate(func)


def effective_n_threads(n_jobs=None):
    """Number of threads a kernel may use for ``n_jobs``.

    Follows scikit-learn's rules for its OpenMP code: ``None`` means every core
    allowed by the current limits (``OMP_NUM_THREADS``, which joblib's workers
    lower to avoid oversubscription, and threadpoolctl's limits); negative values
    count back from the number of cores.
    """
    try:
        from sklearn.utils._openmp_helpers import _openmp_effective_n_threads

        n = _openmp_effective_n_threads(n_jobs)
    except Exception:  # pragma: no cover - private helper moved
        cpus = os.cpu_count() or 1
        n = (
            cpus
            if n_jobs is None
            else (n_jobs if n_jobs > 0 else max(1, cpus + 1 + n_jobs))
        )
    return max(1, int(n))


@contextlib.contextmanager
def numba_threads(n_jobs=None):
    """Limit Numba's thread pool to ``effective_n_threads(n_jobs)`` in a block.

    Examples
    --------
    >>> from skalgos.utils._backend import numba_threads
    >>> with numba_threads(1):
    ...     pass
    """
    import numba

    n = min(effective_n_threads(n_jobs), numba.config.NUMBA_NUM_THREADS)
    previous = numba.get_num_threads()
    numba.set_num_threads(n)
    try:
        yield n
    finally:
        numba.set_num_threads(previous)
