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
   bound over the vanilla one as the radius grows;
4. Wasserstein certification: the same model and clients (bootstrap rows of
   the held-out split, Dirichlet label mixtures); each client reports its
   adversarial risks phi_gamma (squared Euclidean cost on the standardised
   features). Ratio of the Wasserstein tail bound to the vanilla one as the
   radius grows, and the coverage / (1 - delta) against an attacked target
   network (every row pushed a distance sqrt(radius) toward its nearest wrong
   class, which lies in the ball), with the true attacked tail from 3000 fresh
   clients.

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
from skalgos.metrics import client_adversarial_risk, dkw_band, robust_cdf_bound

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
W_CLIENTS, W_N, W_REPS = 300, 200, (5 if Q else 40)
W_RADII = [0.0, 0.01, 0.05, 0.2]
W_GAMMAS = np.geomspace(0.01, 1000, 16)

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

# --- 4. Wasserstein certification ---------------------------------------------
byc = [np.flatnonzero(yte == c) for c in range(10)]


def bootstrap_clients(k):
    """k clients of W_N rows: Dirichlet(0.5) class mixtures, rows drawn with
    replacement from the held-out split."""
    idx = []
    for p in rng.dirichlet(np.full(10, 0.5), size=k):
        counts = rng.multinomial(W_N, p)
        idx.append(
            np.concatenate([rng.choice(byc[c], m) for c, m in enumerate(counts)])
        )
    return np.concatenate(idx), np.repeat(np.arange(k), W_N)


def attack(Xs, ys, radius):
    """Move each row sqrt(radius) toward the nearest boundary of a wrong class."""
    if radius == 0:
        return Xs
    W, b = clf.coef_, clf.intercept_
    t = np.searchsorted(clf.classes_, ys)
    S = Xs @ W.T + b
    dW = W[t][:, None, :] - W[None, :, :]
    nrm = np.linalg.norm(dW, axis=2)
    dist = np.where(
        nrm > 0,
        (S[np.arange(len(ys)), t][:, None] - S) / np.maximum(nrm, 1e-300),
        np.inf,
    )
    dist[np.arange(len(ys)), t] = np.inf
    j = np.argmin(dist, axis=1)
    u = dW[np.arange(len(ys)), j] / nrm[np.arange(len(ys)), j][:, None]
    return Xs - np.sqrt(radius) * u


w_lam = np.linspace(0.05, 0.5, 10)
fresh_idx, fresh_cid = bootstrap_clients(3000)
truth_w = {}
for r in W_RADII:
    Xa = attack(Xte[fresh_idx], yte[fresh_idx], r)
    err = np.bincount(fresh_cid, weights=clf.predict(Xa) != yte[fresh_idx]) / W_N
    truth_w[r] = np.mean(err[None, :] >= w_lam[:, None], axis=1)
w_cov = {r: 0 for r in W_RADII}
w_ratio = {r: [] for r in W_RADII}
w_tight = {r: [] for r in W_RADII}
with timer() as t_w:
    for _ in range(W_REPS):
        idx, cid = bootstrap_clients(W_CLIENTS)
        adv = client_adversarial_risk(clf, Xte[idx], yte[idx], W_GAMMAS, client_id=cid)
        van = robust_cdf_bound(
            adv.losses, w_lam, radius=0.0, delta=DELTA, n_samples=adv.n_samples
        ).upper
        for r in W_RADII:
            ub = robust_cdf_bound(
                adv.losses,
                w_lam,
                wasserstein=adv.adversarial,
                radius=r,
                delta=DELTA,
                n_samples=adv.n_samples,
            ).upper
            w_cov[r] += bool(np.all(ub >= truth_w[r]))
            w_ratio[r].append(np.mean(ub) / np.mean(van))
            w_tight[r].append(np.mean(ub) / max(np.mean(truth_w[r]), 1e-12))
rows4 = []
for r in W_RADII:
    c = w_cov[r] / W_REPS
    rows4.append(
        [
            f"radius {r}",
            float(np.mean(w_ratio[r])),
            c / (1 - DELTA),
            float(np.mean(w_tight[r])),
            float(np.mean(truth_w[r])),
            W_REPS,
        ]
    )
rows4[0].append(t_w())
for row in rows4[1:]:
    row.append("")

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
        (
            f"4. Wasserstein certification, {W_CLIENTS} clients x {W_N} rows, "
            f"delta {DELTA}, {len(W_GAMMAS)} multipliers, thresholds 0.05..0.5",
            [
                "shift",
                "tail bound Wasserstein / vanilla",
                "coverage of attacked network / (1 - delta)",
                "bound / attacked truth (mean over thresholds)",
                "attacked truth (mean tail)",
                "repeats",
                "seconds",
            ],
            rows4,
        ),
    ],
)
