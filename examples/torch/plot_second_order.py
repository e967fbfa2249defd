"""
Loss and sharpness per optimizer: SAM, tilted SAM, KFAC, Shampoo, SyMO
======================================================================

:class:`~skalgos.torch.TorchClassifier` trains a small tanh MLP on digits
with 20% of the training labels flipped, once per optimizer: plain SGD,
SAM, tilted SAM (:class:`~skalgos.torch.optim.TiltedSAM`, ``t = 20``), the
layer-wise preconditioners (KFAC with the cross-entropy Gauss-Newton
factor, and Shampoo) and SyMO, which needs a bias-free MLP, so every run
uses one. The loss logged per epoch is what the optimizer's ``step``
returns: the loss at the weights for SGD/SAM/KFAC/Shampoo/SyMO, the tilted
loss over the perturbed samples for TSAM. After training we measure the
sharpness of the training loss with
:func:`~skalgos.torch.hessian_top_eigenvalue` (power iteration on
Hessian-vector products) and :func:`~skalgos.torch.hessian_trace`
(Hutchinson).
"""

# %%
import os

import matplotlib.pyplot as plt
import numpy as np
import torch
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

from skalgos.torch import TorchClassifier, hessian_top_eigenvalue, hessian_trace

QUICK = os.environ.get("SKALGOS_EXAMPLES_QUICK") == "1"
EPOCHS = 3 if QUICK else 25

X, y = load_digits(return_X_y=True)
X = (X / 16.0).astype(np.float32)
X_train, X_test, y_train, y_test = train_test_split(
    X, y, test_size=0.3, random_state=0, stratify=y
)
rng = np.random.default_rng(0)
flip = rng.random(len(y_train)) < 0.2
y_train = y_train.copy()
y_train[flip] = rng.integers(0, 10, flip.sum())


def bias_free_mlp(n_features_in, n_outputs, hidden=64):
    return torch.nn.Sequential(
        torch.nn.Linear(n_features_in, hidden, bias=False),
        torch.nn.Tanh(),
        torch.nn.Linear(hidden, n_outputs, bias=False),
    )


# %%
# One estimator per optimizer, each learning rate in its optimizer's units.
settings = {
    "sgd": dict(lr=0.1, optimizer__momentum=0.9),
    "sam": dict(lr=0.1, optimizer__momentum=0.9, optimizer__rho=0.05),
    "tsam": dict(
        lr=0.1,
        optimizer__momentum=0.9,
        optimizer__tilt=20.0,
        optimizer__noise_radius=0.05,
    ),
    "kfac": dict(lr=0.1, optimizer__fisher="cross_entropy", optimizer__damping=0.03),
    "shampoo": dict(lr=0.01, optimizer__epsilon=1e-6, optimizer__update_every=1),
    "symo": dict(lr=0.02, optimizer__damping=1e-4),
}
results = {}
loss = torch.nn.CrossEntropyLoss()
Xt, yt = torch.tensor(X_train[:400]), torch.tensor(y_train[:400])
for name, kw in settings.items():
    clf = TorchClassifier(
        module=bias_free_mlp,
        optimizer=name,
        max_epochs=EPOCHS,
        batch_size=64,
        n_jobs=1,
        random_state=0,
        **kw,
    ).fit(X_train, y_train)
    gen = torch.Generator().manual_seed(0)
    eig = hessian_top_eigenvalue(clf.module_, loss, Xt, yt, iters=30, generator=gen)
    trace = hessian_trace(clf.module_, loss, Xt, yt, n_draws=10, generator=gen)
    results[name] = (clf.history_, clf.score(X_test, y_test), eig, trace)
    print(
        f"{name:>8}: test acc {results[name][1]:.3f}, top eig {eig:.3g}, trace {trace:.3g}"
    )

# %%
# Training loss per epoch, and the sharpness of the final weights.
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
for name, (history, acc, _, _) in results.items():
    ax1.plot(
        [h["epoch"] for h in history],
        [h["train_loss"] for h in history],
        label=f"{name} ({acc:.3f})",
    )
ax1.set_xlabel("epoch")
ax1.set_ylabel("training loss (noisy labels)")
ax1.set_title("test accuracy in brackets")
ax1.legend()
names = list(results)
ax2.bar(names, [results[n][2] for n in names])
ax2.set_ylabel("top Hessian eigenvalue")
ax2.set_title("sharpness of the final weights")
fig.tight_layout()
