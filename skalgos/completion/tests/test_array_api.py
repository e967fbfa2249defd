"""Dense algebra through the array namespace: every namespace gives NumPy's fit."""

import numpy as np

from skalgos.completion import NuclearNormCompleter, OCMCCompleter, OCMCRegressor
from skalgos.datasets import make_side_info_completion
from skalgos.utils import get_namespace


def _problem():
    return make_side_info_completion(
        20, 16, rank=2, completeness=0.5, sampling_rate=0.5, random_state=0
    )


def test_completer_in_namespace(array_namespace):
    ns = array_namespace
    M, mask, A, B, R = _problem()
    ref = OCMCCompleter(A, B, random_state=0).fit_transform(M)
    Md = ns.asarray(M)
    with ns.dispatch():
        est = OCMCCompleter(ns.asarray(A), ns.asarray(B), random_state=0)
        X = est.fit_transform(Md)
        assert get_namespace(X).__name__ == get_namespace(Md).__name__
        again = est.transform(Md)
    np.testing.assert_allclose(ns.to_numpy(X), ref, atol=1e-8)
    np.testing.assert_allclose(ns.to_numpy(again), ref, atol=1e-8)
    np.testing.assert_allclose(ns.to_numpy(est.complement_).shape, ref.shape)


def test_truncated_svd_in_namespace(array_namespace):
    ns = array_namespace
    M, mask, A, B, R = _problem()
    kw = dict(svd="randomized", svd_rank=2, random_state=0)
    ref = NuclearNormCompleter(**kw).fit_transform(M)
    with ns.dispatch():
        X = NuclearNormCompleter(**kw).fit_transform(ns.asarray(M))
    np.testing.assert_allclose(ns.to_numpy(X), ref, atol=1e-8)


def test_regressor_in_namespace(array_namespace):
    ns = array_namespace
    M, mask, A, B, R = _problem()
    pairs, y = np.argwhere(mask), M[mask]
    test = np.argwhere(~mask)
    ref = (
        OCMCRegressor(row_side=A, col_side=B, random_state=0)
        .fit(pairs, y)
        .predict(test)
    )
    with ns.dispatch():
        reg = OCMCRegressor(row_side=A, col_side=B, random_state=0)
        reg.fit(ns.asarray(pairs), ns.asarray(y))
        pred = reg.predict(ns.asarray(test))
    np.testing.assert_allclose(ns.to_numpy(pred), ref, atol=1e-8)
