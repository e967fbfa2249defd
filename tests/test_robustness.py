"""Property-based robustness suite over ``all_estimators()`` (issue 39, item 6).

Every estimator (its first instance of the common checks' spec, fitted on the
spec's data, :mod:`skalgos.utils._test_common.instance_generator`) gets
cases of these kinds, drawn by hypothesis with a fixed, derandomized seed:

``magnitude``
    X (or y) times ``10**e``, ``e`` in [-300, 300].
``constant_column``
    one column (a coordinate of every point for point clouds) set to a
    constant (0, 1, or ``10**e``).
``duplicate_rows``
    some rows (clouds; nodes for a pairwise X) repeated.
``single_sample``
    the first row only.
``single_class``
    a constant y (for estimators that take one).
``shape``
    a random subset of the rows and of the columns (points for clouds).
``param_valid`` / ``param_invalid``
    one parameter of ``_parameter_constraints`` set to a value that the
    constraints accept / refuse (from NaN, +-inf, +-1, 0, 0.5, 1e+-300,
    +-2**31, strings, None, booleans and the declared string options).
``dataframe``
    X as a pandas DataFrame whose first column is int, bool, category or
    str (2-D feature matrices only).

Property: each case gives finite output (``get_output`` of the spec:
``predict``, ``transform``, ``labels_`` or the spec's own) of the right shape,
or an error from our code. **Our code** means: a ``ValueError`` or
``TypeError`` (subclasses included: sklearn's ``InvalidParameterError``,
``NotFittedError``) whose innermost traceback frame is either

* a ``raise`` statement in a file under ``skalgos/`` (an exception raised by
  numpy, scipy, numba or torch inside a skalgos line that is not a ``raise``
  does not count), or
* a line of scikit-learn's input validation, which we call:
  ``sklearn/utils/validation.py``, ``sklearn/utils/_param_validation.py``,
  ``sklearn/utils/multiclass.py``, ``sklearn/base.py``, or
  ``sklearn/utils/_array_api.py`` when ``validation.py`` is on the stack
  (``check_array``'s conversion, e.g. "could not convert string to float").

Anything else is a FAIL: another exception type (``ZeroDivisionError``,
``OverflowError``, ``LinAlgError``, ``MemoryError``, ``RuntimeError``...), a
ValueError from numpy/scipy/numba/torch internals, non-finite output, a wrong
shape, a case over ``CASE_TIMEOUT`` seconds, or a crash of the process.

Each estimator's cases run in one subprocess (``python -c`` importing this
file's :func:`worker`; a hang or a crash restarts it at the next case), two
estimators at a time on the CI's two cores, under a 4 GiB address-space
limit. ``N_PER_KIND`` examples per kind keep the file under ~4 minutes;
``benchmarks/robustness.py`` runs the same cases with more examples and
writes the outcome table to ``benchmarks/results/robustness.md``.
"""

import json
import math
import os
import select
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

N_PER_KIND = 2
CASE_TIMEOUT = 20  # seconds per case (SIGALRM in the worker)
MEMORY_LIMIT = 4 * 1024**3  # bytes of address space per worker
KINDS = (
    "magnitude",
    "constant_column",
    "duplicate_rows",
    "single_sample",
    "single_class",
    "shape",
    "param_valid",
    "param_invalid",
    "dataframe",
)
# values tried for a parameter (JSON: NaN and Infinity pass through json)
_VALUES = (
    math.nan,
    math.inf,
    -math.inf,
    -1,
    0,
    1,
    2,
    0.5,
    -0.5,
    1e-300,
    1e300,
    2**31,
    -(2**31),
    "bogus",
    None,
    True,
    False,
    "auto",
)
# parameters not varied: they start processes, write files, print, pick a
# device, or take objects (a value from _VALUES only tests the type check)
_SKIP_PARAMS = {"n_jobs", "verbose", "shard_dir", "backend", "device", "callbacks"}
# budgets (iterations, rounds, time): a huge value is a long run asked for,
# not a bug, so they are not given 1e300 / 2**31
_BUDGET_WORDS = (
    "iter",
    "round",
    "step",
    "epoch",
    "time",
    "patience",
    "n_init",
    "repeats",
    "copies",
    "budget",
    "max_size",
    "max_elements",
    "increment",
    "min_size",
    "chunks",
    "n_shrinkages",
    "bn_recalibration",
)

_TESTS = Path(__file__).resolve().parent
_SKALGOS = (_TESTS.parent / "skalgos").resolve()


# --------------------------------------------------------------------------
# the worker (runs in the subprocess)
# --------------------------------------------------------------------------
def _instance(name):
    from skalgos.utils._test_common.instance_generator import (
        _construct_instances,
        _estimator_classes,
    )

    return next(_construct_instances(dict(_estimator_classes())[name]))


def _is_ours(exc):
    """A ValueError/TypeError raised by our code (see the module docstring)."""
    import linecache
    import traceback

    if not isinstance(exc, (ValueError, TypeError)):
        return False
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return False
    last = frames[-1]
    path = Path(last.filename).resolve()
    if path.is_relative_to(_SKALGOS):
        line = linecache.getline(last.filename, last.lineno).strip()
        return line.startswith("raise")
    parts = path.as_posix()
    validation = ("sklearn/utils/validation.py", "sklearn/utils/_param_validation.py")
    if parts.endswith(validation + ("sklearn/utils/multiclass.py", "sklearn/base.py")):
        return True
    if parts.endswith("sklearn/utils/_array_api.py"):
        return any(f.filename.endswith(validation[0]) for f in frames)
    return False


def _shape_rule(ref, X):
    ref, X = np.shape(ref), np.shape(X)
    if ref == X:
        return "same"
    if ref and ref[0] == X[0]:
        return "rows"
    return "fixed"


def _apply(case, X, y, pairwise):
    """The case's data: a transformed copy of the spec's ``(X, y)``."""
    kind = case["kind"]
    X = np.array(X, copy=True)
    y = None if y is None else np.array(y, copy=True)
    n = X.shape[0]
    if kind == "magnitude":
        s = 10.0 ** case["e"]
        if case["target"] == "y" and y is not None:
            y = y * s
        else:
            X = X * s
    elif kind == "constant_column":
        j = case["j"] % X.shape[-1]
        c = {"zero": 0.0, "one": 1.0, "big": 10.0 ** case["e"]}[case["value"]]
        X = X.astype(float) if X.dtype.kind != "f" else X
        if np.isnan(X).any():  # a matrix to complete: the observed entries
            X[..., j] = np.where(np.isnan(X[..., j]), np.nan, c)
        else:
            X[..., j] = c
    elif kind == "duplicate_rows":
        rng = np.random.default_rng(case["seed"])
        idx = np.concatenate([np.arange(n), rng.integers(0, n, case["k"])])
        X = X[idx][:, idx] if pairwise else X[idx]
        y = None if y is None else y[idx]
    elif kind == "single_sample":
        X = X[:1, :1] if pairwise else X[:1]
        y = None if y is None else y[:1]
    elif kind == "single_class":
        y = np.full_like(y, y.flat[0])
    elif kind == "shape":
        rng = np.random.default_rng(case["seed"])
        rows = np.sort(rng.choice(n, max(1, round(case["rows"] * n)), replace=False))
        if pairwise:
            X = X[rows][:, rows]
        else:
            X = X[rows]
            d = X.shape[1]
            cols = np.sort(rng.choice(d, max(1, round(case["cols"] * d)), False))
            if X.ndim == 2 and X.dtype.kind == "f":
                X = X[:, cols]
            elif X.ndim == 3:  # point clouds: a subset of the points
                X = X[:, cols]
        y = None if y is None else y[rows]
    elif kind == "dataframe":
        import pandas as pd

        df = pd.DataFrame(X, columns=[f"x{i}" for i in range(X.shape[1])])
        col = np.round(X[:, 0]).astype(np.int64)
        df["x0"] = {
            "int": col,
            "bool": col > np.median(col),
            "category": pd.Categorical(col.astype(str)),
            "str": col.astype(str).astype(object),
        }[case["dtype"]]
        X = df
    return X, y


def _run_case(name, case):
    import warnings

    from sklearn.base import clone
    from sklearn.utils import get_tags

    from skalgos.utils._test_common.instance_generator import get_data, get_output

    base = _instance(name)
    X0, y0, fp = get_data(base, case.get("seed", 0) % 4)
    est = clone(base)
    if case["kind"].startswith("param"):
        est.set_params(**{case["param"]: case["value"]})
    X, y = _apply(case, X0, y0, get_tags(base).input_tags.pairwise)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            est.fit(X, y, **fp)
            out = get_output(est, X)
            if hasattr(out, "detach"):
                out = out.detach().cpu().numpy()
            out = np.asarray(out)
        except Exception as exc:  # the property: classified, never raised
            kind = "clear" if _is_ours(exc) else "FAIL"
            msg = (
                f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            )
            return kind, msg[:300]
    ref = case["ref_shape"]
    rule = case["rule"]
    shape = tuple(out.shape)
    n = np.shape(X)[0]
    ok_shape = {
        "same": shape == tuple(np.shape(X)),
        "rows": len(shape) == len(ref) and shape[:1] == (n,),
        "fixed": shape == tuple(ref),
    }[rule]
    if not ok_shape:
        return "FAIL", f"output shape {shape} for X of shape {np.shape(X)} ({rule})"
    if out.dtype.kind in "fc" and not np.all(np.isfinite(out)):
        return "FAIL", f"non-finite output ({int(np.sum(~np.isfinite(out)))} values)"
    return "ok", ""


class _Timeout(BaseException):
    pass


def worker():
    """Read ``{"name", "cases"}`` from stdin; print one JSON line per case."""
    import resource
    import signal

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    job = json.loads(sys.stdin.read())

    def alarm(signum, frame):
        raise _Timeout

    signal.signal(signal.SIGALRM, alarm)
    for i, case in enumerate(job["cases"]):
        print(json.dumps({"i": i, "start": True}), flush=True)
        signal.alarm(CASE_TIMEOUT)
        try:
            kind, msg = _run_case(job["name"], case)
        except _Timeout:
            kind, msg = "FAIL", f"timeout: over {CASE_TIMEOUT} s"
        except MemoryError:
            kind, msg = "FAIL", "MemoryError (over the worker's 4 GiB)"
        finally:
            signal.alarm(0)
        print(json.dumps({"i": i, "outcome": kind, "msg": msg}), flush=True)


def reference(name):
    """Shape of the clean output and its rule, for each estimator (worker)."""
    import warnings

    from skalgos.utils._test_common.instance_generator import get_data, get_output

    est = _instance(name)
    X, y, fp = get_data(est, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y, **fp)
        out = np.asarray(get_output(est, X))
    return list(out.shape), _shape_rule(out, X)


# --------------------------------------------------------------------------
# the cases (hypothesis, in the parent)
# --------------------------------------------------------------------------
def _param_values(name):
    """``{"valid": [(param, value)...], "invalid": [...]}`` for an estimator."""
    from sklearn.utils._param_validation import (
        InvalidParameterError,
        StrOptions,
        validate_parameter_constraints,
    )

    from skalgos.utils import all_estimators

    cls = dict(all_estimators())[name]
    out = {"valid": [], "invalid": []}
    for param, constraints in sorted(cls._parameter_constraints.items()):
        if param in _SKIP_PARAMS:
            continue
        budget = any(w in param for w in _BUDGET_WORDS)
        values = list(_VALUES)
        for c in constraints:
            if isinstance(c, StrOptions):
                values += sorted(c.options)
        for v in values:
            if budget and isinstance(v, (int, float)) and abs(v) >= 2**31:
                continue
            try:
                validate_parameter_constraints(
                    {param: constraints}, {param: v}, caller_name=name
                )
            except InvalidParameterError:
                out["invalid"].append((param, v))
            except Exception:  # a constraint that cannot judge this value
                out["invalid"].append((param, v))
            else:
                out["valid"].append((param, v))
    return out


def _draw(strategy, n, settings, given, Phase):
    drawn = []

    @settings(
        derandomize=True,
        max_examples=n,
        database=None,
        phases=[Phase.generate],
        deadline=None,
    )
    @given(strategy)
    def collect(case):
        drawn.append(case)

    collect()
    return drawn


def make_cases(name, n_per_kind, tags):
    """Hypothesis-drawn cases for ``name``: ``{kind: [case, ...]}``."""
    from hypothesis import Phase, given, settings
    from hypothesis import strategies as st

    values = _param_values(name)
    seed = st.integers(0, 2**16)
    strategies = {
        "magnitude": st.fixed_dictionaries(
            {
                "e": st.integers(-300, 300),
                "target": st.sampled_from(["X", "y"] if tags["y"] else ["X"]),
                "seed": seed,
            }
        ),
        "constant_column": st.fixed_dictionaries(
            {
                "j": st.integers(0, 100),
                "value": st.sampled_from(["zero", "one", "big"]),
                "e": st.integers(-300, 300),
                "seed": seed,
            }
        ),
        "duplicate_rows": st.fixed_dictionaries(
            {"k": st.integers(1, 20), "seed": seed}
        ),
        "single_sample": st.fixed_dictionaries({"seed": seed}),
        "single_class": st.fixed_dictionaries({"seed": seed}),
        "shape": st.fixed_dictionaries(
            {
                "rows": st.floats(0.0, 1.0),
                "cols": st.floats(0.0, 1.0),
                "seed": seed,
            }
        ),
        "param_valid": st.fixed_dictionaries(
            {"pv": st.sampled_from(values["valid"]), "seed": seed}
        ),
        "param_invalid": st.fixed_dictionaries(
            {"pv": st.sampled_from(values["invalid"]), "seed": seed}
        ),
        "dataframe": st.fixed_dictionaries(
            {
                "dtype": st.sampled_from(["int", "bool", "category", "str"]),
                "seed": seed,
            }
        ),
    }
    applicable = {
        "single_class": tags["y"],
        "dataframe": tags["table"],
        "param_valid": bool(values["valid"]),
        "param_invalid": bool(values["invalid"]),
    }
    out = {}
    for kind in KINDS:
        if not applicable.get(kind, True):
            out[kind] = []
            continue
        drawn = _draw(strategies[kind], n_per_kind, settings, given, Phase)
        cases, seen = [], set()
        for case in drawn:
            case = dict(case, kind=kind)
            if "pv" in case:
                case["param"], case["value"] = case.pop("pv")
            key = json.dumps(case, sort_keys=True)
            if key not in seen:
                seen.add(key)
                cases.append(case)
        out[kind] = cases[:n_per_kind]
    return out


# --------------------------------------------------------------------------
# the parent: one subprocess per estimator
# --------------------------------------------------------------------------
_BOOT = (
    "import sys; sys.path.insert(0, {tests!r}); import test_robustness as t; t.{fn}()"
)


def _spawn(fn, cwd):
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    env["MKL_NUM_THREADS"] = "1"
    return subprocess.Popen(
        [sys.executable, "-c", _BOOT.format(tests=str(_TESTS), fn=fn)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
        env=env,
    )


def _ref_worker():
    name = sys.stdin.read().strip()
    from sklearn.utils import get_tags

    base = _instance(name)
    tags = get_tags(base)
    from skalgos.utils._test_common.instance_generator import get_data

    X, y, _ = get_data(base, 0)
    shape, rule = reference(name)
    print(
        json.dumps(
            {
                "ref_shape": shape,
                "rule": rule,
                "y": y is not None,
                "table": bool(
                    np.ndim(X) == 2
                    and np.asarray(X).dtype.kind == "f"
                    and not tags.input_tags.pairwise
                    and not np.isnan(X).any()
                ),
            }
        )
    )


def _reference_info(name, cwd):
    proc = _spawn("_ref_worker", cwd)
    out, err = proc.communicate(name, timeout=300)
    if proc.returncode != 0:
        raise RuntimeError(f"{name}: reference fit failed:\n{err[-3000:]}")
    return json.loads(out.strip().splitlines()[-1])


def run_cases(name, cases, cwd, timeout=CASE_TIMEOUT + 30):
    """Run ``cases`` of one estimator in a worker (restarted after a hang or
    a crash); ``{kind: [(outcome, msg, case), ...]}``."""
    results = [None] * len(cases)
    start = 0
    while start < len(cases):
        proc = _spawn("worker", cwd)
        proc.stdin.write(json.dumps({"name": name, "cases": cases[start:]}))
        proc.stdin.close()
        current, last = None, time.monotonic()
        while True:
            ready, _, _ = select.select([proc.stdout], [], [], 1.0)
            if ready:
                line = proc.stdout.readline()
                if not line:
                    break
                if not line.startswith("{"):
                    continue  # an estimator's own print
                msg = json.loads(line)
                last = time.monotonic()
                current = start + msg["i"]
                if "outcome" in msg:
                    results[current] = (msg["outcome"], msg["msg"])
            elif time.monotonic() - last > timeout:
                proc.kill()
                break
        proc.wait()
        if current is None:
            current = start
        if results[current] is None:  # hung or crashed in this case
            why = (
                f"hang: no answer in {timeout} s"
                if proc.returncode == -9
                else f"crash: exit status {proc.returncode}"
            )
            results[current] = ("FAIL", why)
        start = current + 1
        proc.stderr.close()
        proc.stdout.close()
    out = {kind: [] for kind in KINDS}
    for case, res in zip(cases, results):
        out[case["kind"]].append((*res, case))
    return out


def run_all(names, n_per_kind, workers=2):
    """``{name: {kind: [(outcome, msg, case), ...]}}`` for every estimator:
    reference fits and cases in subprocesses, ``workers`` at a time; the
    cases are drawn here (hypothesis, one thread)."""
    with tempfile.TemporaryDirectory() as cwd:
        with ThreadPoolExecutor(workers) as pool:
            infos = dict(zip(names, pool.map(lambda n: _reference_info(n, cwd), names)))
            jobs = {}
            for name in names:
                info = infos[name]
                by_kind = make_cases(name, n_per_kind, info)
                cases = [
                    dict(c, ref_shape=info["ref_shape"], rule=info["rule"])
                    for kind in KINDS
                    for c in by_kind[kind]
                ]
                jobs[name] = pool.submit(run_cases, name, cases, cwd)
            return {name: f.result() for name, f in jobs.items()}


def summarize(results):
    """``outcome`` of a kind: FAIL if any case failed, else clear if any
    error, else ok; n/a without cases."""
    if not results:
        return "n/a"
    kinds = {r[0] for r in results}
    return "FAIL" if "FAIL" in kinds else "clear" if "clear" in kinds else "ok"


# --------------------------------------------------------------------------
# the tests
# --------------------------------------------------------------------------
def _names():
    from skalgos.utils import all_estimators

    return [n for n, _ in all_estimators()]


# (estimator, kind) -> observed failure (2026-12-07), issue 39
XFAIL = {}


def _params():
    out = []
    for name in _names():
        for kind in KINDS:
            marks = []
            if (name, kind) in XFAIL:
                marks.append(
                    pytest.mark.xfail(
                        strict=True, reason=f"issue 39: {XFAIL[name, kind]}"
                    )
                )
            out.append(pytest.param(name, kind, marks=marks, id=f"{name}-{kind}"))
    return out


@pytest.fixture(scope="module")
def outcomes():
    pytest.importorskip("hypothesis")
    pytest.importorskip("pandas")
    return run_all(_names(), N_PER_KIND)


# one xdist worker runs the whole module (CI's --dist loadgroup), so the
# module fixture, which runs every case, runs once and not once per worker
@pytest.mark.slow
@pytest.mark.full_suite
@pytest.mark.xdist_group("robustness")
@pytest.mark.parametrize("name, kind", _params())
def test_robust(outcomes, name, kind):
    results = outcomes[name][kind]
    failed = [(msg, case) for outcome, msg, case in results if outcome == "FAIL"]
    assert not failed, f"{name} / {kind}: " + "; ".join(
        f"{msg} (case {case})" for msg, case in failed
    )


def test_is_ours_tells_our_errors_from_numpy():
    def ours():
        from skalgos.online import river_delay_to_skalgos

        river_delay_to_skalgos([-1])

    def numpy_inside():
        np.reshape(np.arange(3), (2, 2))

    def linalg():
        np.linalg.inv(np.zeros((2, 2)))

    from sklearn.utils.validation import check_array

    def sklearn_validation():
        check_array([["a"]], dtype=np.float64)

    results = {}
    for f in (ours, numpy_inside, linalg, sklearn_validation):
        try:
            f()
        except Exception as exc:
            results[f.__name__] = _is_ours(exc)
    assert results == {
        "ours": True,
        "numpy_inside": False,
        "linalg": False,
        "sklearn_validation": True,
    }
