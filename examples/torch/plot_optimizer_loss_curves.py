"""
Loss curves per optimizer on digits
===================================

:class:`~skalgos.torch.TorchClassifier` trains the same MLP with each
registered optimizer: SGD, AdamW, Muon (hidden matrices orthogonalized by
Newton-Schulz, the rest on AdamW), and the schedule-free SGD and AdamW,
whose evaluation weights are an average of the iterates. Each learning rate
is in its optimizer's own units, which is why they differ. The estimator's
``history_`` holds one row per epoch; we plot the training loss and, for the
schedule-free optimizers, note that the loss is measured at the training
point :math:`y` while predictions use the average :math:`x`.
"""

# %%
import os

import matplotlib.pyplot as plt
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skalgos.torch import TorchClassifier

QUICK = os.environ.get("SKALGOS_EXAMPLES_QUICK") == "1"
EPOCHS = 4 if QUICK else 30

X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(
    X, y, test_size=0.3, random_state=0, stratify=y
)

# %%
# One estimator per optimizer, with a learning rate in its own units.
settings = {
    "sgd": dict(lr=0.05, optimizer__momentum=0.9),
    "adamw": dict(lr=1e-3),
    "muon": dict(lr=0.02),
    "sgd_sf": dict(lr=0.5),
    "adamw_sf": dict(lr=3e-3),
}
results = {}
for name, kw in settings.items():
    clf = TorchClassifier(
        optimizer=name,
        module__hidden_sizes=(128, 128),
        max_epochs=EPOCHS,
        batch_size=64,
        n_jobs=1,
        random_state=0,
        **kw,
    )
    pipe = make_pipeline(StandardScaler(), clf).fit(X_train, y_train)
    results[name] = (clf.history_, pipe.score(X_test, y_test))
    print(f"{name:>9}: test accuracy {results[name][1]:.3f}")

# %%
# Training loss per epoch (mean over the epoch's mini-batches).
fig, ax = plt.subplots(figsize=(6, 4))
for name, (history, acc) in results.items():
    epochs = [h["epoch"] for h in history]
    ax.plot(epochs, [h["train_loss"] for h in history], label=f"{name} ({acc:.3f})")
ax.set_yscale("log")
ax.set_xlabel("epoch")
ax.set_ylabel("training loss")
ax.set_title("digits, MLP 64-128-128-10 (test accuracy in brackets)")
ax.legend()
fig.tight_layout()
