"""Federated learning: FedECADO against FedAvg/FedProx/FedNova/FedExP, AdaMasFL
against FedBuff/FedAsync on a virtual clock, and certification coverage.

One run, three tables, all on sklearn's digits (80/20 split, standardised):

1. synchronous: 20 clients, Dirichlet alpha 0.1, local budgets U{1..20} per
   client and round; test accuracy at equal rounds and rounds to 80%;
   ratio acc(FedECADO) / acc(best baseline);
2. asynchronous: 50 clients, Dirichlet 0.3, concurrency 10, buffer 5, step
   times lognormal(0, 1); simulated time to 85% test accuracy (ratio baseline /
   AdaMasFL) and final accuracy over a learning-rate grid (worst / best);
3. certification: a LogisticRegression's per-client 0-1 risk on Dirichlet
   client mixtures of the held-out split; empirical coverage of the DKW band
   over Monte-Carlo networks divided by 1 - delta, and the robust (KL) tail
   bound over the vanilla one as the radius grows.

Usage: ``python benchmarks/federated.py [--quick] [--output PATH]``.
"""

import numpy as np
from _common import parse_args, report, timer
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from skalgos.datasets import make_federated
from skalgos.federated import (
    AdaMasFL,
    FedAsync,
    FedAvg,
    FedBuff,
    FedECADO,
    FederatedClassifier,
    FedExP,
    FedNova,
    FedProx,
    MasFL,
)
from skalgos.metrics import dkw_band, robust_cdf_bound

args = parse_args("federated", __doc__.splitlines()[0])
Q = args.quick

# --- parameters -----------------------------------------------------------------
SEED = 0
SYNC_CLIENTS, SYNC_ALPHA, SYNC_ROUNDS = 20, 0.1, (15 if Q else 100)
SYNC_LR = 0.05
ASYNC_CLIENTS, ASYNC_ALPHA, ASYNC_ROUNDS = 50, 0.3, (3 if Q else 30)
CONCURRENCY, BUFFER = 10, 5
LR_GRID = [1e-2, 1e-1] if Q else [1e-3, 1e-2, 1e-1, 1.0]
ASYNC_LR = 0.05
CERT_CLIENTS, CERT_N, CERT_REPS, DELTA = 300, 100, (30 if Q else 200), 0.05
RADII = [0.0, 0.05, 0.1, 0.2, 0.3]

X, y = load_digits(return_X_y=True)
Xtr, Xte, ytr, yte = train_test_split(
    X, y, test_size=0.2, random_state=SEED, stratify=y
)
sc = StandardScaler().fit(Xtr)
Xtr, Xte = sc.transform(Xtr), sc.transform(Xte)


def curve(strategy, n_clients, alpha, n_rounds, lr, **kw):
    """Test accuracy and simulated time after every round."""
    _, _, cid = make_federated(
        Xtr, ytr, n_clients, alpha=alpha, min_size=2, random_state=SEED
    )
    est = FederatedClassifier(
        strategy,
        partition="given",
        n_rounds=n_rounds,
        local_steps="uniform",
        learning_rate=lr,
        random_state=SEED,
        **kw,
    )
    acc, times = [], []
    with timer() as t:
        for _ in range(n_rounds):
            est.partial_fit(Xtr, ytr, client_id=cid, classes=np.arange(10))
            acc.append(est.score(Xte, yte))
            times.append(est.history_[-1]["time"])
    return np.array(acc), np.array(times), t()


def first(cond, values):
    idx = np.flatnonzero(cond)
    return values[idx[0]] if idx.size else np.inf


# --- 1. synchronous ---------------------------------------------------------------
central = LogisticRegression(max_iter=2000).fit(Xtr, ytr).score(Xte, yte)
sync = {
    "FedAvg": FedAvg(),
    "FedProx": FedProx(mu=0.01),
    "FedNova": FedNova(),
    "FedExP": FedExP(),
    "FedECADO": FedECADO(),
}
res = {
    k: curve(s, SYNC_CLIENTS, SYNC_ALPHA, SYNC_ROUNDS, SYNC_LR) for k, s in sync.items()
}
rounds = np.arange(1, SYNC_ROUNDS + 1)
best = max((k for k in sync if k != "FedECADO"), key=lambda k: res[k][0][-1])
rows1 = []
for k, (acc, _, sec) in res.items():
    r80 = first(acc >= 0.8, rounds)
    rows1.append([k, acc[-1], acc[-1] / res[best][0][-1], r80, sec])
rows1.append(["centralised LogisticRegression (reference)", central, "", "", ""])
r80_e = first(res["FedECADO"][0] >= 0.8, rounds)
r80_b = first(res[best][0] >= 0.8, rounds)
rows1.append(
    [
        f"ratio FedECADO / best baseline ({best})",
        res["FedECADO"][0][-1] / res[best][0][-1],
        "",
        f"rounds-to-80% ratio (best / FedECADO): {r80_b / r80_e:.3g}",
        "",
    ]
)

# --- 2. asynchronous --------------------------------------------------------------
asyn = {
    "FedBuff": lambda: FedBuff(buffer_size=BUFFER),
    "FedAsync": lambda: FedAsync(),
    "MasFL": lambda: MasFL(buffer_size=BUFFER),
    "AdaMasFL": lambda: AdaMasFL(buffer_size=BUFFER),
}
kw = {"concurrency": CONCURRENCY}
t85 = {}
rows2 = []
for k, make in asyn.items():
    acc, times, sec = curve(
        make(), ASYNC_CLIENTS, ASYNC_ALPHA, ASYNC_ROUNDS, ASYNC_LR, **kw
    )
    t85[k] = first(acc >= 0.85, times)
    grid = [
        curve(make(), ASYNC_CLIENTS, ASYNC_ALPHA, ASYNC_ROUNDS, lr, **kw)[0][-1]
        for lr in LR_GRID
    ]
    rows2.append([k, acc[-1], t85[k], min(grid), max(grid), min(grid) / max(grid), sec])
for k in ("FedBuff", "FedAsync"):
    rows2.append(
        [
            f"ratio time-to-85% {k} / AdaMasFL",
            t85[k] / t85["AdaMasFL"],
            "",
            "",
            "",
            "",
            "",
        ]
    )
spread = {r[0]: r[5] for r in rows2[:4]}
rows2.append(
    [
        "ratio worst/best over lr grid, AdaMasFL / FedBuff",
        spread["AdaMasFL"] / spread["FedBuff"],
        "",
        "",
        "",
        "",
        "",
    ]
)

# --- 3. certification -------------------------------------------------------------
clf = LogisticRegression(max_iter=2000).fit(Xtr, ytr)
err_c = np.array([np.mean(clf.predict(Xte[yte == c]) != c) for c in range(10)])
rng = np.random.RandomState(SEED)


def risks(k, alpha=0.5):
    return rng.dirichlet(np.full(10, alpha), size=k) @ err_c


truth = np.sort(risks(5000))
grid = np.linspace(0, 1, 501)
F = np.searchsorted(truth, grid, side="right") / truth.size
covered, ratios = 0, {r: [] for r in RADII}
lam = np.linspace(0.02, 0.3, 15)
with timer() as t_cert:
    for _ in range(CERT_REPS):
        rhat = rng.binomial(CERT_N, risks(CERT_CLIENTS)) / CERT_N
        band = dkw_band(rhat, delta=DELTA, n_samples=CERT_N)
        lo, up = band.evaluate(grid)
        covered += bool(np.all((lo <= F) & (F <= up)))
        van = robust_cdf_bound(
            rhat, lam, radius=0.0, delta=DELTA, n_samples=CERT_N
        ).upper
        for r in RADII:
            rob = robust_cdf_bound(
                rhat, lam, f_divergence="kl", radius=r, delta=DELTA, n_samples=CERT_N
            ).upper
            ratios[r].append(np.mean(rob) / np.mean(van))
cov = covered / CERT_REPS
rows3 = [
    ["DKW band coverage / (1 - delta)", cov / (1 - DELTA), cov, CERT_REPS, t_cert()]
]
for r in RADII:
    rows3.append(
        [
            f"KL tail bound robust / vanilla, radius {r}",
            float(np.mean(ratios[r])),
            "",
            "",
            "",
        ]
    )

report(
    args,
    "skalgos.federated benchmark (digits)",
    [
        (
            f"1. Synchronous, {SYNC_CLIENTS} clients, Dirichlet {SYNC_ALPHA}, budgets "
            f"U{{1..20}}, {SYNC_ROUNDS} rounds, lr {SYNC_LR}",
            [
                "strategy",
                "test acc",
                "acc ratio vs best baseline",
                "rounds to 80%",
                "seconds",
            ],
            rows1,
        ),
        (
            f"2. Asynchronous, {ASYNC_CLIENTS} clients, Dirichlet {ASYNC_ALPHA}, concurrency "
            f"{CONCURRENCY}, buffer {BUFFER}, {ASYNC_ROUNDS} rounds of {ASYNC_CLIENTS} "
            f"arrivals, lr {ASYNC_LR}; lr grid {LR_GRID}",
            [
                "strategy",
                "test acc",
                "sim. time to 85%",
                "worst acc on grid",
                "best acc on grid",
                "worst/best",
                "seconds",
            ],
            rows2,
        ),
        (
            f"3. Certification, {CERT_CLIENTS} clients x {CERT_N} samples, delta {DELTA}",
            ["quantity", "ratio", "value", "repeats", "seconds"],
            rows3,
        ),
    ],
)
