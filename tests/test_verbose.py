"""``verbose`` across families (issue 37): progress lines on long work when
set, each starting with the estimator's name; nothing at ``verbose=0``."""

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.preprocessing import KBinsDiscretizer


def _bdd(verbose):
    from skalgos.tree import BDDClassifier

    X, y = load_iris(return_X_y=True)
    Xb = KBinsDiscretizer(n_bins=3, encode="ordinal").fit_transform(X)
    return BDDClassifier(verbose=verbose, random_state=0), Xb, y, {}


def _dnn(verbose):
    from skalgos.neighbors import DiverseNearestNeighbors

    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 8))
    groups = rng.integers(0, 300, size=3000)
    est = DiverseNearestNeighbors(verbose=verbose, random_state=0)
    return est, X, None, {"groups": groups}


def _torch(verbose):
    pytest.importorskip("torch", reason="the torch extra is not installed")
    from skalgos.torch import TorchClassifier

    X, y = load_iris(return_X_y=True)
    est = TorchClassifier(max_epochs=5, verbose=verbose, n_jobs=1, random_state=0)
    return est, X, y, {}


CASES = {
    "BDDClassifier": _bdd,
    "DiverseNearestNeighbors": _dnn,
    "TorchClassifier": _torch,
}


@pytest.mark.parametrize("name", list(CASES))
def test_verbose_fit_shows_progress_and_verbose_0_is_silent(name, capfd):
    est, X, y, kw = CASES[name](verbose=1)
    est.fit(X, y, **kw)
    out = capfd.readouterr().out
    lines = [ln for ln in out.splitlines() if ln.strip()]
    assert len(lines) >= 2, out  # progress, not a single closing line
    assert all(ln.startswith(f"[{name}]") for ln in lines), out

    est, X, y, kw = CASES[name](verbose=0)
    est.fit(X, y, **kw)
    captured = capfd.readouterr()
    assert captured.out == ""
