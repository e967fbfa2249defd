"""The sample kernel pair that shows the house pattern for compiled code.

``row_argmin`` finds the column of the smallest entry in each row of a dense
matrix. It has three implementations: the array-API reference
(:func:`row_argmin` on non-NumPy inputs), a Numba CPU kernel parallel over rows,
and a ``numba.cuda`` kernel with one thread per row. Families copy this layout
for their own kernels: reference in the namespace, ``@jit`` for CPU NumPy
arrays, ``@cuda_jit`` for device arrays, and tests that the three agree.
"""

import numpy as np
from numba import cuda, prange

from ._backend import cuda_jit, get_namespace, is_numpy_namespace, jit


@jit(parallel=True)
def _row_argmin_cpu(D, out):
    for i in prange(D.shape[0]):
        best = 0
        best_val = D[i, 0]
        for j in range(1, D.shape[1]):
            if D[i, j] < best_val:
                best_val = D[i, j]
                best = j
        out[i] = best


@cuda_jit
def _row_argmin_cuda(D, out):
    i = cuda.grid(1)
    if i < D.shape[0]:
        best = 0
        best_val = D[i, 0]
        for j in range(1, D.shape[1]):
            if D[i, j] < best_val:
                best_val = D[i, j]
                best = j
        out[i] = best


def row_argmin_cuda(D, threads_per_block=128):
    """Run the ``numba.cuda`` kernel on ``D`` (a NumPy, CuPy or device array).

    Under ``NUMBA_ENABLE_CUDASIM=1`` this runs on the CPU, which is how the
    kernel is tested without a GPU.
    """
    n = D.shape[0]
    out = cuda.device_array(n, dtype=np.int64)
    blocks = max(1, (n + threads_per_block - 1) // threads_per_block)
    if hasattr(D, "__cuda_array_interface__"):
        D = cuda.as_cuda_array(D)  # CuPy / torch CUDA arrays, without a copy
    _row_argmin_cuda[blocks, threads_per_block](D, out)
    return out.copy_to_host()


def row_argmin(D):
    """Index of the smallest entry of each row of ``D``.

    Parameters
    ----------
    D : array of shape (n_rows, n_cols)
        Any array-API array; ties go to the first column.

    Returns
    -------
    idx : array of shape (n_rows,)
        In the namespace and on the device of ``D``.

    Examples
    --------
    >>> import numpy as np
    >>> from skalgos.utils._kernels import row_argmin
    >>> row_argmin(np.array([[3.0, 1.0, 2.0], [0.0, 5.0, 0.0]]))
    array([1, 0])
    """
    xp = get_namespace(D)
    if is_numpy_namespace(xp):
        D = np.ascontiguousarray(D)
        if D.shape[1] == 0:
            raise ValueError("D must have at least one column.")
        out = np.empty(D.shape[0], dtype=np.int64)
        _row_argmin_cpu(D, out)
        return out
    return xp.argmin(D, axis=1)
