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


_KERNEL = """
from skalgos.utils._backend import jit


@jit
def double(x):
    return 2 * x
"""
_CALL = (
    "import kern; kern.double(3); "
    "print(sum(kern.double.stats.cache_hits.values()), "
    "sum(kern.double.stats.cache_misses.values()), kern.double._cache._cache_path)"
)


def _call_kernel(directory, cache_home):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update(
        PYTHONPATH=os.pathsep.join([str(directory), root]),
        XDG_CACHE_HOME=str(cache_home),
    )
    out = subprocess.run(
        [sys.executable, "-c", _CALL],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    hits, misses, path = out.stdout.split(maxsplit=2)
    return int(hits), int(misses), path.strip()


def test_numba_cache_hits_in_the_next_process(tmp_path):
    # beside the sources when the package directory is writable
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "kern.py").write_text(_KERNEL)
    first = _call_kernel(tmp_path / "src", tmp_path / "home")
    second = _call_kernel(tmp_path / "src", tmp_path / "home")
    assert first[:2] == (0, 1) and second[:2] == (1, 0)
    assert first[2] == str(tmp_path / "src" / "__pycache__")


def test_numba_cache_falls_back_to_user_dir_when_read_only(tmp_path):
    # a read-only package directory (a system-wide install): the cache goes to
    # the user's cache directory and still hits. chattr +i makes the directory
    # read-only even for root, who ignores permission bits.
    src = tmp_path / "src"
    src.mkdir()
    (src / "kern.py").write_text(_KERNEL)
    if subprocess.run(["chattr", "+i", str(src)], capture_output=True).returncode:
        pytest.skip("cannot make a read-only directory here (chattr +i refused)")
    try:
        first = _call_kernel(src, tmp_path / "home")
        second = _call_kernel(src, tmp_path / "home")
    finally:
        subprocess.run(["chattr", "-i", str(src)], check=True)
    assert not (src / "__pycache__").exists()
    assert first[:2] == (0, 1) and second[:2] == (1, 0)
    assert first[2].startswith(str(tmp_path / "home" / "numba"))


def test_first_compile_of_a_family_is_announced_once(capsys):
    from skalgos.utils import _backend

    class FakeDispatcher:
        py_func = staticmethod(lambda: None)

    FakeDispatcher.py_func.__module__ = "skalgos.fakefamily._kernels"
    _backend._ANNOUNCED.discard("fakefamily")
    _backend._announce_compile(FakeDispatcher())
    _backend._announce_compile(FakeDispatcher())
    err = capsys.readouterr().err
    assert err.count("compiling the fakefamily kernels") == 1
    assert "once per install" in err
