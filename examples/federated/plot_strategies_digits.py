"""
Federated strategies on non-IID digits
======================================

The digits are split across 20 clients with a Dirichlet(0.1) label skew, so
most clients see two or three digits only, and every client runs its own
number of local steps each round (uniform in 1..20). We train the same softmax
model with each synchronous strategy of :mod:`skalgos.federated` and plot the
test accuracy after every round, against a centralised
:class:`~sklearn.linear_model.LogisticRegression` trained on all the data.
Then we certify the trained FedECADO model on unseen clients with a DKW band
on the clients' risk CDF.
"""

# %%
import os

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from skalgos.datasets import make_federated
from skalgos.federated import (
    FedAvg,
    FedECADO,
    FederatedClassifier,
    FedExP,
    FedNova,
    FedProx,
)

QUICK = os.environ.get("SKALGOS_EXAMPLES_QUICK") == "1"
n_rounds = 8 if QUICK else 60

X, y = load_digits(return_X_y=True)
Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=0)
sc = StandardScaler().fit(Xtr)
Xtr, Xte = sc.transform(Xtr), sc.transform(Xte)
_, _, client_id = make_federated(Xtr, ytr, 20, alpha=0.1, min_size=2, random_state=0)

# %%
# Accuracy over rounds, one curve per strategy
# --------------------------------------------
strategies = {
    "FedAvg": FedAvg(),
    "FedProx": FedProx(mu=0.01),
    "FedNova": FedNova(),
    "FedExP": FedExP(),
    "FedECADO": FedECADO(),
}
fig, ax = plt.subplots(figsize=(6, 4))
models = {}
for name, strategy in strategies.items():
    est = FederatedClassifier(
        strategy,
        partition="given",
        local_steps="uniform",
        learning_rate=0.05,
        random_state=0,
    )
    acc = []
    for _ in range(n_rounds):
        est.partial_fit(Xtr, ytr, client_id=client_id, classes=np.arange(10))
        acc.append(est.score(Xte, yte))
    models[name] = est
    ax.plot(np.arange(1, n_rounds + 1), acc, label=name)
central = LogisticRegression(max_iter=1000).fit(Xtr, ytr).score(Xte, yte)
ax.axhline(central, color="k", ls="--", label="centralised")
ax.set_xlabel("communication round")
ax.set_ylabel("test accuracy")
ax.legend()
fig.tight_layout()

# %%
# Certifying the model on unseen clients
# --------------------------------------
# The held-out rows are split into 40 new clients; each reports only its
# 0-1 loss. The band holds the CDF of a new client's risk with probability
# 95%.
_, _, test_clients = make_federated(Xte, yte, 40, alpha=0.5, min_size=3, random_state=1)
band = models["FedECADO"].certify(Xte, yte, test_clients, delta=0.05)
lam = np.linspace(0, 1, 201)
lo, up = band.evaluate(lam)
fig, ax = plt.subplots(figsize=(6, 4))
ax.step(band.quantiles, np.arange(1, 41) / 40, where="post", label="empirical CDF")
ax.fill_between(lam, lo, up, step="post", alpha=0.3, label="95% DKW band")
ax.set_xlabel("client risk (0-1 loss)")
ax.set_ylabel("P(risk <= x)")
ax.legend()
fig.tight_layout()
