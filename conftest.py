"""Root pytest configuration shared by ``skalgos/`` and ``tests/``."""

import os

# scikit-learn's array API dispatch needs this before scipy is imported.
os.environ.setdefault("SCIPY_ARRAY_API", "1")
os.environ.setdefault("MPLBACKEND", "Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

# pytest-xdist runs one worker per core: one BLAS/OpenMP thread each. Two
# workers with two spinning BLAS threads apiece on two cores made dense tests
# (completion, kernel ridge) up to ten times slower.
threadpool_limits(1)

collect_ignore_glob = []
try:  # skalgos.torch raises on import without torch: do not even collect it
    import torch

    torch.set_num_threads(1)  # the same reason as threadpool_limits above
except ImportError:
    collect_ignore_glob += ["skalgos/torch/*", "examples/torch/*"]
try:  # likewise skalgos.federated.flower without Flower (its tests skip)
    import flwr  # noqa: F401
except ImportError:
    collect_ignore_glob += ["skalgos/federated/flower/*"]


def _namespaces():
    from skalgos.utils._backend import available_namespaces

    return list(available_namespaces())


class Namespace:
    """One array namespace for tests: ``asarray`` moves NumPy data onto it.

    Inside a test, ``with ns.dispatch():`` turns scikit-learn's
    ``array_api_dispatch`` on, so estimators follow the input's namespace.
    """

    def __init__(self, name, xp, device):
        self.name, self.xp, self.device = name, xp, device

    def asarray(self, x, dtype=None):
        from skalgos.utils._backend import to_device

        x = np.asarray(x) if dtype is None else np.asarray(x, dtype=dtype)
        return to_device(x, self.device, xp=self.xp)

    def to_numpy(self, x):
        from skalgos.utils._backend import to_numpy

        return to_numpy(x)

    def dispatch(self):
        from sklearn import config_context

        return config_context(array_api_dispatch=self.name != "numpy")

    def __repr__(self):
        return self.name


@pytest.fixture(params=_namespaces(), ids=lambda p: p[0])
def array_namespace(request):
    """Parametrized over numpy, array_api_strict, torch CPU and usable GPUs."""
    return Namespace(*request.param)


@pytest.fixture(autouse=True)
def _doctest_namespace(doctest_namespace):
    doctest_namespace["np"] = np


# The robustness suite (tests/test_robustness.py) and the benchmarks' --quick
# runs (tests/test_benchmarks.py) take about ten minutes of two cores. The
# README's test command skips them; CI's full-extras stage sets
# SKALGOS_FULL_SUITE=1 and runs them once, with every extra installed.
FULL_SUITE = os.environ.get("SKALGOS_FULL_SUITE", "") == "1"


# CI runs the suite twice: first the README's command in a venv without
# extras, then with every extra. So that a test is not run twice for nothing,
# the first run writes the node ids it passed to SKALGOS_RECORD_PASSED, and
# the second, given the same file in SKALGOS_SKIP_PASSED, deselects them. What
# the second run still runs: every test the first skipped (it needs an extra,
# or is part of the full suite), every expected failure, and every test id the
# extras add (the torch array namespace, the torch estimators' checks).
RECORD_PASSED = os.environ.get("SKALGOS_RECORD_PASSED", "")
SKIP_PASSED = os.environ.get("SKALGOS_SKIP_PASSED", "")
_passed, _failed = set(), set()


def _read_passed(path):
    try:
        with open(path, encoding="utf-8") as f:
            return {line.rstrip("\n") for line in f if line.strip()}
    except FileNotFoundError:
        raise pytest.UsageError(
            f"SKALGOS_SKIP_PASSED={path!r}: no such file (it is written by a "
            "run with SKALGOS_RECORD_PASSED set to the same path)"
        ) from None


def pytest_collection_modifyitems(config, items):
    if SKIP_PASSED:
        passed = _read_passed(SKIP_PASSED)
        keep = [item for item in items if item.nodeid not in passed]
        if len(keep) < len(items):
            config.hook.pytest_deselected(
                items=[item for item in items if item.nodeid in passed]
            )
            items[:] = keep
    if FULL_SUITE:
        return
    skip = pytest.mark.skip(
        reason="part of the full suite: run with SKALGOS_FULL_SUITE=1 "
        "(CI's full-extras stage does)"
    )
    for item in items:
        if item.get_closest_marker("full_suite") is not None:
            item.add_marker(skip)


def pytest_runtest_logreport(report):
    # a test passed when its call passed and neither setup nor teardown
    # failed; an expected failure (xfail) is not a pass
    if not RECORD_PASSED:
        return
    if report.failed or hasattr(report, "wasxfail"):
        _passed.discard(report.nodeid)
        _failed.add(report.nodeid)
    elif report.when == "call" and report.passed:
        _passed.add(report.nodeid)


def pytest_sessionfinish(session, exitstatus):
    # with pytest-xdist the reports reach the controller, which writes the
    # file; the workers (which have ``workerinput``) write nothing
    if not RECORD_PASSED or hasattr(session.config, "workerinput"):
        return
    with open(RECORD_PASSED, "w", encoding="utf-8") as f:
        for nodeid in sorted(_passed - _failed):
            f.write(nodeid + "\n")
