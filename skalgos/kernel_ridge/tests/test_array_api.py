"""Feature matrices and solves through the array namespace of the input."""

import numpy as np

from skalgos.kernel_ridge import (
    InvariantKernelClassifier,
    InvariantKernelRidge,
    InvariantSpectralFeatures,
    PermutationGroup,
    SphereHarmonics,
)
from skalgos.utils._backend import get_namespace


def _data():
    basis = SphereHarmonics(4, 3)
    rng = np.random.default_rng(0)
    X = basis.sample(40, rng)
    y = X[:, 0] ** 2 + X.sum(1) ** 3
    return basis, X, y


def test_regressor_follows_namespace(array_namespace):
    basis, X, y = _data()
    ref = InvariantKernelRidge(basis, PermutationGroup(4), alpha=0.01).fit(X, y)
    Xd, yd = array_namespace.asarray(X), array_namespace.asarray(y)
    with array_namespace.dispatch():
        reg = InvariantKernelRidge(basis, PermutationGroup(4), alpha=0.01).fit(Xd, yd)
        pred = reg.predict(Xd)
        assert get_namespace(pred).__name__ == get_namespace(Xd).__name__
        assert get_namespace(reg.coef_).__name__ == get_namespace(Xd).__name__
    np.testing.assert_allclose(
        array_namespace.to_numpy(pred), ref.predict(X), atol=1e-10
    )
    # invariance holds in every namespace
    with array_namespace.dispatch():
        pred_perm = reg.predict(array_namespace.asarray(X[:, [3, 1, 0, 2]]))
    np.testing.assert_allclose(
        array_namespace.to_numpy(pred_perm), array_namespace.to_numpy(pred), atol=1e-10
    )


def test_features_follow_namespace(array_namespace):
    basis, X, _ = _data()
    ref = InvariantSpectralFeatures(basis, PermutationGroup(4)).fit_transform(X)
    Xd = array_namespace.asarray(X)
    with array_namespace.dispatch():
        out = InvariantSpectralFeatures(basis, PermutationGroup(4)).fit_transform(Xd)
        assert get_namespace(out).__name__ == get_namespace(Xd).__name__
    np.testing.assert_allclose(array_namespace.to_numpy(out), ref, atol=1e-12)


def test_classifier_follows_namespace(array_namespace):
    basis, X, y = _data()
    labels = np.digitize(y, np.quantile(y, [1 / 3, 2 / 3]))  # three classes
    ref = InvariantKernelClassifier(basis, PermutationGroup(4), alpha=0.01)
    ref.fit(X, labels)
    Xd, yd = array_namespace.asarray(X), array_namespace.asarray(labels)
    with array_namespace.dispatch():
        clf = InvariantKernelClassifier(basis, PermutationGroup(4), alpha=0.01)
        clf.fit(Xd, yd)
        scores = clf.decision_function(Xd)
        pred = clf.predict(Xd)
        assert get_namespace(scores).__name__ == get_namespace(Xd).__name__
        assert get_namespace(pred).__name__ == get_namespace(Xd).__name__
    np.testing.assert_allclose(
        array_namespace.to_numpy(scores), ref.decision_function(X), atol=1e-10
    )
    np.testing.assert_array_equal(array_namespace.to_numpy(pred), ref.predict(X))
