"""
Images and token ids through TorchClassifier: a CNN and an EmbeddingBag
=======================================================================

:class:`~skalgos.torch.TorchClassifier` passes ``X`` of any rank to the
module unchanged: the 8x8 digits as a batch of images ``(n, 1, 8, 8)`` for a
small convolutional network, and integer token ids, which stay int64, for an
``nn.EmbeddingBag``. Both sit in a :class:`~sklearn.pipeline.Pipeline` and
are tuned by :class:`~sklearn.model_selection.GridSearchCV`; an
:class:`~skalgos.torch.callbacks.EarlyStopping` callback on a validation
split ends the CNN's training. The plot shows the CNN's training and
validation losses per epoch.
"""

# %%
import os

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer
from torch import nn

from skalgos.torch import TorchClassifier
from skalgos.torch.callbacks import EarlyStopping

QUICK = os.environ.get("SKALGOS_EXAMPLES_QUICK") == "1"


class SmallCNN(nn.Module):
    """conv 3x3 -> ReLU -> 2x2 max-pool -> linear head."""

    def __init__(self, n_features_in, n_outputs, channels=16):
        super().__init__()
        self.conv = nn.Conv2d(n_features_in, channels, 3, padding=1)
        self.head = nn.Linear(channels * 4 * 4, n_outputs)

    def forward(self, x):
        h = nn.functional.max_pool2d(nn.functional.relu(self.conv(x)), 2)
        return self.head(h.flatten(1))


def to_images(X):
    return (X / 16.0).reshape(-1, 1, 8, 8)


X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(
    X, y, test_size=0.3, random_state=0, stratify=y
)
cnn = make_pipeline(
    FunctionTransformer(to_images),
    TorchClassifier(
        SmallCNN,
        max_epochs=3 if QUICK else 40,
        validation_fraction=0.15,
        callbacks=[EarlyStopping(patience=3)],
        n_jobs=1,
        random_state=0,
    ),
)
search = GridSearchCV(
    cnn, {"torchclassifier__module__channels": [8, 16]}, cv=2 if QUICK else 3
).fit(X_train, y_train)
print(
    f"CNN: best {search.best_params_}, test accuracy {search.score(X_test, y_test):.3f}"
)
history = search.best_estimator_[-1].history_

# %%
# Token ids: the label says whether most tokens of a sequence come from the
# first half of a 50-symbol vocabulary.
rng = np.random.default_rng(0)
n, length, vocab = 2000, 16, 50
p_low = rng.choice([0.3, 0.7], size=n)
low = rng.random((n, length)) < p_low[:, None]
ids = np.where(
    low,
    rng.integers(0, vocab // 2, (n, length)),
    rng.integers(vocab // 2, vocab, (n, length)),
)
labels = (low.mean(1) > 0.5).astype(int)


class BagOfTokens(nn.Module):
    def __init__(self, n_outputs, dim=16):
        super().__init__()
        self.bag = nn.EmbeddingBag(vocab, dim, mode="mean")
        self.out = nn.Linear(dim, n_outputs)

    def forward(self, token_ids):  # int64, shape (batch, length)
        return self.out(self.bag(token_ids))


ids_train, ids_test, l_train, l_test = train_test_split(ids, labels, random_state=0)
bag = GridSearchCV(
    TorchClassifier(
        BagOfTokens, max_epochs=3 if QUICK else 20, n_jobs=1, random_state=0
    ),
    {"lr": [3e-3, 1e-2]},
    cv=2,
).fit(ids_train, l_train)
print(
    f"EmbeddingBag: best {bag.best_params_}, test accuracy {bag.score(ids_test, l_test):.3f}"
)

# %%
fig, ax = plt.subplots(figsize=(5, 3.5))
epochs = [row["epoch"] for row in history]
ax.plot(epochs, [row["train_loss"] for row in history], label="training loss")
ax.plot(epochs, [row["valid_loss"] for row in history], label="validation loss")
ax.set_xlabel("epoch")
ax.set_ylabel("cross-entropy")
ax.set_title("CNN on 8x8 digits (early stopping, patience 3)")
ax.legend()
fig.tight_layout()
plt.show()
