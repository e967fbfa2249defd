"""Flat memory on long streams (issue 39, item 5).

Every estimator with ``partial_fit`` (and the River adapters of
:mod:`skalgos.online`) is fed a long stream of 2-row batches after a warm-up,
under ``tracemalloc``; the traced memory may not grow by more than
``BOUND`` bytes over the stream: the state must be O(model), not O(calls).

Call counts. The issue asks for 100,000 calls. On this project's CI (2
shared cores, loaded) one traced ``partial_fit`` of an online learner costs
2-8 ms (``validate_data`` and the protocol's bookkeeping; traced allocations
are 2-3x slower than untraced ones), a federated round or a torch epoch
10-40 ms, one River question-and-answer 0.5-2 ms, so 100,000 calls would take
5-60 minutes per estimator. The file has ~60 s, so the counts below are
sized to ~3-5 s per case once the memory is flat (``N_CALLS``): 600 calls
for the online learners (32 KiB / 600: a leak of 55 bytes per call is
caught, and one float kept per row is 64 bytes per 2-row call), 120 for the
federated and torch estimators (a dict per round or epoch, 400-600 bytes,
is caught), 1,500 for the River adapters (22 bytes per call). The bound is
three times the noise of a flat stream (an FTRL learner whose lists are
emptied after each call: 11 KiB after 5,000 calls, 27 KiB at the worst
check). ``SKALGOS_STREAM_CALLS=100000`` runs every case for the issue's
100,000 calls (the warm-up then lasts ``SKALGOS_STREAM_CALLS // 10``
calls), which is what a bounded history (a ``deque(maxlen=...)``) needs to
be seen flat: its window has to fill during the warm-up.

A case that grows stops as soon as it is past ``BOUND`` (checked every 50
calls), so a strict xfail costs well under its full count.

``DynamicCorrelationClustering`` inserts one node per row: its state is
O(nodes) by design (features, label and graph per node), so it is held to a
bound per node inserted (``NODE_BOUND``) instead of a flat total.

tracemalloc sees Python objects and NumPy buffers; torch's tensor storage
(its own C++ allocator) is not traced, so the torch cases cover the Python
side only (histories, caches, lists).
"""

import gc
import os
import pickle
import tracemalloc
import warnings

import numpy as np
import pytest

from skalgos.utils import all_estimators
from skalgos.utils._test_common.instance_generator import get_data, get_spec

BOUND = 32 * 1024  # bytes, over the whole measured stream
NODE_BOUND = 4096  # bytes per node inserted (DynamicCorrelationClustering)
CHECK_EVERY = 50
_SCALE = os.environ.get("SKALGOS_STREAM_CALLS")

# name -> (calls measured, warm-up calls); see the module docstring
_ONLINE = (600, 50)
_SLOW = (120, 10)
N_CALLS = {
    "BOLD": _ONLINE,
    "ClippedVAWRegressor": _ONLINE,
    "DelayedFTRLRegressor": _ONLINE,
    "DelayedOGDClassifier": _ONLINE,
    "DelayedOGDRegressor": _ONLINE,
    "DelayedOnlineNewtonStepClassifier": _ONLINE,
    "DelayedOnlineNewtonStepRegressor": _ONLINE,
    "FederatedClassifier": _SLOW,
    "FederatedRegressor": _SLOW,
    "TorchClassifier": _SLOW,
    "TorchRegressor": _SLOW,
    # ~10-15 ms per 2-node insertion under load: 200 calls, 400 nodes
    "DynamicCorrelationClustering": (200, 20),
    "river:ClippedVAWRegressor": (1500, 100),
    "river:DelayedOGDClassifier": (1500, 100),
}

# Estimators whose stream grows (name -> reason), each a strict xfail. The
# online learners' online_predictions_ / losses_, the federated and torch
# history_ and the River adapters' lists, which grew one entry per call
# (issue 39), keep the last max_history rounds now. The torch estimators
# also warned on nearly every 2-row partial_fit ("the training loss grew"),
# comparing losses of different batches, and each warning's own text went
# into the warnings registry; they compare the epochs of one call now. What
# remains (measured 2026-12-08, tracemalloc traceback diff over 300 calls
# after a 50-call warm-up: ~100 B/call; ~300 B/call right after a 10-call
# warm-up) is allocated inside torch's profiler record_function (the
# optimizer's step and zero_grad), numpy's reductions and sklearn's
# check_array, with no attribute of ours growing.
_TORCH = (
    "history_ bounded; ~100-300 B/call allocated inside torch's "
    "record_function (optimizer step / zero_grad), numpy reductions and "
    "sklearn check_array, no attribute of ours grows (issue 39)"
)
GROWS = {"TorchClassifier": _TORCH, "TorchRegressor": _TORCH}


def streaming_names():
    """Every estimator with partial_fit, plus the River adapters."""
    names = [n for n, c in all_estimators() if hasattr(c, "partial_fit")]
    return names + ["river:ClippedVAWRegressor", "river:DelayedOGDClassifier"]


def counts(name):
    n, warm = N_CALLS[name]
    if _SCALE:
        n = int(_SCALE)
        warm = max(warm, n // 10)
    return n, warm


def make_stream(name):
    """``(estimator, step)``: ``step(i)`` makes call ``i`` of the stream."""
    if name.startswith("river:"):
        pytest.importorskip("river", reason="the River adapters need river")
        from skalgos.online import ClippedVAWRegressor, DelayedOGDClassifier, as_river

        if name == "river:ClippedVAWRegressor":
            model = as_river(ClippedVAWRegressor(standardize=False))
            X, y, _ = get_data(ClippedVAWRegressor(), 0)
        else:
            model = as_river(DelayedOGDClassifier(), classes=[0, 1])
            X, y, _ = get_data(DelayedOGDClassifier(), 0)
        rows = [dict(enumerate(r)) for r in X.tolist()]
        labels = y.tolist()

        def step(i):
            j = i % len(rows)
            model.predict_one(rows[j])
            model.learn_one(rows[j], labels[j])

        return model, step

    if name.startswith("Torch"):
        pytest.importorskip("torch", reason="the torch estimators need torch")
    cls = dict(all_estimators())[name]
    init = get_spec(cls).get("init", {})
    est = cls(**(init[0] if isinstance(init, list) else init))
    X, y, _ = get_data(est, 0)
    if name == "DynamicCorrelationClustering":
        # fresh points (a node per row), as many as the stream inserts
        n, warm = counts(name)
        X = np.random.default_rng(0).normal(size=(2 * (n + warm) + 2, X.shape[1]))
    first = {}
    if "Classifier" in name:
        first["classes"] = np.unique(y)
    n_batches = X.shape[0] // 2

    def step(i):
        j = 2 * (i % n_batches)
        yb = None if y is None else y[j : j + 2]
        est.partial_fit(X[j : j + 2], yb, **(first if i == 0 else {}))

    return est, step


def _sizes(est):
    """Pickled size of each attribute (to name the one that grows)."""
    out = {}
    for k, v in vars(est).items():
        try:
            out[k] = len(pickle.dumps(v, protocol=4))
        except Exception:  # unpicklable state (locks, modules): not compared
            pass
    return out


def measure(name, n_calls=None, n_warm=None, stop_above=None, stream=None):
    """Traced memory growth of a stream of ``n_calls`` calls after a warm-up.

    Returns a dict: ``calls`` made (fewer when ``stop_above`` bytes were
    passed), ``growth`` in bytes, ``per_call``, ``per_node`` (rows inserted,
    for DynamicCorrelationClustering) and ``attrs``, the attributes whose
    pickled size grew most (bytes).
    """
    if n_calls is None or n_warm is None:
        n0, w0 = counts(name)
        n_calls = n0 if n_calls is None else n_calls
        n_warm = w0 if n_warm is None else n_warm
    est, step = make_stream(name) if stream is None else stream
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a warning here is not what we test
        for i in range(n_warm):
            step(i)
        target = est.learner_ if name.startswith("river:") else est
        before = _sizes(target)
        gc.collect()
        tracemalloc.start()
        try:
            base = tracemalloc.get_traced_memory()[0]
            done = 0
            for i in range(n_warm, n_warm + n_calls):
                step(i)
                done += 1
                if stop_above is not None and done % CHECK_EVERY == 0:
                    if tracemalloc.get_traced_memory()[0] - base > stop_above:
                        gc.collect()
                        if tracemalloc.get_traced_memory()[0] - base > stop_above:
                            break
            gc.collect()
            growth = tracemalloc.get_traced_memory()[0] - base
        finally:
            tracemalloc.stop()
    after = _sizes(target)
    attrs = sorted(((after[k] - before.get(k, 0), k) for k in after), reverse=True)[:3]
    return {
        "calls": done,
        "growth": growth,
        "per_call": growth / done,
        "per_node": growth / (2 * done),
        "attrs": [(k, d) for d, k in attrs if d > 0],
    }


def _cases():
    out = []
    for name in streaming_names():
        marks = []
        if name in GROWS:
            marks.append(
                pytest.mark.xfail(strict=True, reason=f"issue 39: {GROWS[name]}")
            )
        out.append(pytest.param(name, marks=marks, id=name))
    return out


def test_every_streaming_estimator_has_a_count():
    # a new estimator with partial_fit must get a case (and a count) here;
    # without the torch extra all_estimators() lists no torch estimator, so
    # the check is one-way (every present estimator has a count)
    missing = set(streaming_names()) - set(N_CALLS)
    assert not missing, f"no partial_fit stream case for {sorted(missing)}"


@pytest.mark.slow
@pytest.mark.parametrize("name", _cases())
def test_memory_flat_on_long_stream(name):
    if name == "DynamicCorrelationClustering":
        pytest.skip("O(nodes) by design: test_dynamic_cc_memory_per_node")
    res = measure(name, stop_above=BOUND)
    n, _ = counts(name)
    assert res["growth"] <= BOUND and res["calls"] == n, (
        f"{name}: traced memory grew {res['growth']} bytes in {res['calls']} "
        f"partial_fit calls ({res['per_call']:.1f} bytes/call, bound {BOUND} "
        f"over {n} calls); growing attributes (pickled bytes): {res['attrs']}"
    )


@pytest.mark.slow
def test_dynamic_cc_memory_per_node():
    # every row is a node with its features, label and edges: O(nodes) state,
    # but a constant per node (no per-node cost growing with the graph)
    name = "DynamicCorrelationClustering"
    res = measure(name)
    assert res["per_node"] <= NODE_BOUND, (
        f"{name}: {res['per_node']:.0f} traced bytes per node inserted "
        f"({res['growth']} over {2 * res['calls']} nodes), bound {NODE_BOUND}; "
        f"growing attributes (pickled bytes): {res['attrs']}"
    )


def test_measure_sees_a_leak():
    # the harness itself: a list kept per call is caught and named
    class Leaky:
        def __init__(self):
            self.kept_ = []

        def partial_fit(self, X, y):
            self.kept_.append(np.asarray(X, dtype=float).sum())
            return self

    est = Leaky()
    X = np.ones((2, 3))

    def step(i):
        est.partial_fit(X, None)

    res = measure("leaky", n_calls=3000, n_warm=10, stream=(est, step))
    assert res["growth"] > 3000 * 8  # at least a pointer per call
    assert res["attrs"][0][0] == "kept_"
