"""Inputs of any rank and integer inputs reach the module as they are."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from sklearn.datasets import load_digits  # noqa: E402
from sklearn.model_selection import GridSearchCV  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import FunctionTransformer  # noqa: E402
from torch import nn  # noqa: E402

from skalgos.torch import TorchClassifier, TorchRegressor  # noqa: E402


def _to_images(X):
    return (X / 16.0).reshape(-1, 1, 8, 8)


class SmallCNN(nn.Module):
    def __init__(self, n_features_in, n_outputs, channels=8):
        super().__init__()
        self.conv = nn.Conv2d(n_features_in, channels, 3, padding=1)
        self.head = nn.Linear(channels * 4 * 4, n_outputs)

    def forward(self, x):
        assert x.ndim == 4 and x.is_floating_point()
        h = nn.functional.max_pool2d(torch.relu(self.conv(x)), 2)
        return self.head(h.flatten(1))


def test_conv2d_on_digit_images_through_pipeline_and_grid_search():
    X, y = load_digits(return_X_y=True)
    X, y = X[:400], y[:400]
    pipe = make_pipeline(
        FunctionTransformer(_to_images),
        TorchClassifier(
            SmallCNN, lr=1e-2, max_epochs=5, batch_size=32, n_jobs=1, random_state=0
        ),
    )
    search = GridSearchCV(
        pipe, {"torchclassifier__module__channels": [4, 6]}, cv=2
    ).fit(X, y)
    clf = search.best_estimator_[-1]
    assert clf.n_features_in_ == 1 and clf._input_shape == (1, 8, 8)
    assert search.best_score_ > 0.85
    assert search.score(X, y) > 0.9
    with pytest.raises(ValueError, match="sample shape"):
        clf.predict(np.zeros((2, 1, 4, 16)))


def test_default_mlp_flattens_images():
    X, y = load_digits(return_X_y=True)
    Xi = _to_images(X[:400])
    a = TorchClassifier(max_epochs=3, random_state=0).fit(Xi, y[:400])
    b = TorchClassifier(max_epochs=3, random_state=0).fit(Xi.reshape(400, -1), y[:400])
    np.testing.assert_allclose(
        a.predict_proba(Xi), b.predict_proba(Xi.reshape(400, -1)), rtol=1e-6
    )


def _tokens(n, length=12, vocab=30, seed=0):
    # label 1 when most tokens come from the first half of the vocabulary
    rng = np.random.default_rng(seed)
    p_low = rng.choice([0.2, 0.8], size=n)
    low = rng.random((n, length)) < p_low[:, None]
    ids = np.where(
        low,
        rng.integers(0, vocab // 2, (n, length)),
        rng.integers(vocab // 2, vocab, (n, length)),
    )
    return ids, (low.mean(1) > 0.5).astype(int)


class BagOfTokens(nn.Module):
    def __init__(self, n_outputs, vocab=30, dim=8):
        super().__init__()
        self.bag = nn.EmbeddingBag(vocab, dim, mode="mean")
        self.out = nn.Linear(dim, n_outputs)

    def forward(self, ids):
        assert ids.dtype == torch.int64
        return self.out(self.bag(ids))


def test_embedding_bag_on_token_ids_through_pipeline_and_grid_search():
    X, y = _tokens(400)
    assert X.dtype == np.int64
    pipe = make_pipeline(
        FunctionTransformer(),  # passes the int array through unchanged
        TorchClassifier(BagOfTokens, max_epochs=15, batch_size=32, random_state=0),
    )
    search = GridSearchCV(pipe, {"torchclassifier__lr": [3e-3, 1e-2]}, cv=2).fit(X, y)
    Xt, yt = _tokens(200, seed=1)
    assert search.score(Xt, yt) > 0.9
    clf = search.best_estimator_[-1]
    with pytest.raises(ValueError, match="integer"):
        clf.predict(Xt + 0.5)
    # int32 ids are widened to int64 (what Embedding layers index with)
    np.testing.assert_array_equal(clf.predict(Xt.astype(np.int32)), clf.predict(Xt))


def test_integer_input_to_a_float_module_asks_for_dtype():
    X, y = _tokens(60)
    clf = TorchClassifier(
        lambda n_features_in, n_outputs: nn.Linear(n_features_in, n_outputs),
        max_epochs=1,
    )
    with pytest.raises(RuntimeError, match="dtype='float32'"):
        clf.fit(X, y)
    clf.set_params(dtype="float32").fit(X, y)
    assert clf._x_dtype == np.float32


def test_dtype_float64_trains_a_float64_module():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 3))
    reg = TorchRegressor(dtype="float64", lr=0.05, max_epochs=3, random_state=0)
    reg.fit(X, X[:, 0])
    assert all(p.dtype == torch.float64 for p in reg.module_.parameters())
    assert reg.predict(X).dtype == np.float64
    with pytest.raises(ValueError, match="dtype"):
        TorchRegressor(dtype="complex64", max_epochs=1).fit(X, X[:, 0])
    # integer X with the default MLP is read as real features
    Xi = rng.integers(0, 5, size=(80, 3))
    reg = TorchRegressor(lr=0.05, max_epochs=3, random_state=0).fit(Xi, Xi[:, 0])
    assert reg._x_dtype == np.float32
