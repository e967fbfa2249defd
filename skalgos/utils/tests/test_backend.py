"""The backend: dispatch follows the input and sklearn's config; threads; kernels."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from sklearn import config_context

from skalgos.utils import get_namespace, to_numpy
from skalgos.utils._backend import (
    effective_n_threads,
    is_numpy_namespace,
    numba_threads,
    to_device,
)
from skalgos.utils._kernels import row_argmin


def test_dispatch_off_always_numpy(array_namespace):
    x = array_namespace.asarray(np.arange(6.0).reshape(2, 3))
    assert is_numpy_namespace(get_namespace(x))


def test_dispatch_on_follows_input(array_namespace):
    x = array_namespace.asarray(np.arange(6.0).reshape(2, 3))
    with array_namespace.dispatch():
        xp = get_namespace(x)
        y = xp.sum(x, axis=1)
    assert (array_namespace.name == "numpy") == is_numpy_namespace(xp)
    np.testing.assert_allclose(to_numpy(y), [3.0, 12.0])


def test_round_trip_to_device(array_namespace):
    a = np.arange(5.0)
    x = array_namespace.asarray(a)
    np.testing.assert_array_equal(to_numpy(x), a)
    back = to_device(a, array_namespace.device, xp=array_namespace.xp)
    np.testing.assert_array_equal(to_numpy(back), a)


def test_mixed_namespaces_raise_under_dispatch():
    array_api_strict = pytest.importorskip("array_api_strict")
    with config_context(array_api_dispatch=True), pytest.raises(TypeError):
        get_namespace(np.ones(2), array_api_strict.ones(2))


def test_effective_n_threads_respects_omp_limit():
    code = "from skalgos.utils._backend import effective_n_threads as f; print(f(None))"
    env = dict(os.environ, OMP_NUM_THREADS="1")
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.stdout.strip() == "1", out.stderr
    assert effective_n_threads(1) == 1


def test_numba_threads_restores():
    import numba

    before = numba.get_num_threads()
    with numba_threads(1) as n:
        assert n == 1 == numba.get_num_threads()
    assert numba.get_num_threads() == before


@pytest.mark.parametrize("shape", [(1, 1), (7, 3), (50, 20)])
def test_row_argmin_cpu_matches_numpy(shape):
    rng = np.random.default_rng(0)
    D = rng.random(shape)
    np.testing.assert_array_equal(row_argmin(D), np.argmin(D, axis=1))


def test_row_argmin_namespace(array_namespace):
    D = np.random.default_rng(1).random((9, 4))
    with array_namespace.dispatch():
        idx = row_argmin(array_namespace.asarray(D))
    np.testing.assert_array_equal(to_numpy(idx), np.argmin(D, axis=1))


def test_row_argmin_cuda_kernel_under_simulator():
    code = textwrap.dedent(
        """
        import numpy as np
        from skalgos.utils._kernels import row_argmin_cuda
        D = np.random.default_rng(2).random((37, 5))
        got = row_argmin_cuda(D, threads_per_block=16)
        assert (got == np.argmin(D, axis=1)).all(), got
        print("ok")
        """
    )
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    res = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0 and "ok" in res.stdout, res.stderr
