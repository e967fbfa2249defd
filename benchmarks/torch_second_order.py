"""Benchmarks for TSAM, layer-wise preconditioning (KFAC) and SyMO.

One run, ratios measured in the same run against the baselines:

1. TSAM vs SAM vs plain SGD (ERM) with 20% label noise, on digits and on a
   bag of words of the bundled pydoc text (an MLP each): test accuracy, top
   Hessian eigenvalue, Gaussian-perturbation sharpness, time per step; 3 seeds.
2. Linear representation learning ``y = F* G* x`` with ill-conditioned
   inputs: steps until the subspace distance of ``row(G)`` to ``row(G*)``
   falls below 0.1, SGD / KFAC and Adam / KFAC, as cond(Sigma_x) grows (best
   lr of a small grid each). Then the single-index model ``y = tanh(<beta*,
   x>)`` fitted by a two-layer tanh network: steps until the top direction
   of the first layer's change ``W_t - W_0`` is within sine 0.1 of beta*
   (SGD's drifts toward ``Sigma beta*``, Stein's lemma), same ratios.
3. SyMO on a teacher-student tanh MLP (bias-free, ill-conditioned inputs):
   steps to a target train loss, GD / SyMO, Adam / SyMO, KFAC / SyMO (best lr
   of a small grid each), time per step.

Scaled down for 2 shared CPU cores (float32, one torch thread); the sizes
are at the top. ``--quick`` shrinks everything for CI.
"""

import statistics
import sys
from pathlib import Path

import numpy as np
import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).parent))
from _common import parse_args, report, timer  # noqa: E402

from skalgos.torch import hessian_top_eigenvalue, perturbed_sharpness  # noqa: E402
from skalgos.torch.optim import (  # noqa: E402
    SAM,
    LayerwisePreconditioner,
    SyMO,
    TiltedSAM,
)

args = parse_args("torch_second_order", __doc__.splitlines()[0])
QUICK = args.quick
torch.set_num_threads(1)

# -- parameters --------------------------------------------------------------
SEEDS = [0] if QUICK else [0, 1, 2]
TSAM_EPOCHS = 2 if QUICK else 30
TSAM_HIDDEN = 64 if QUICK else 128
LABEL_NOISE = 0.2
TILTS = [1.0] if QUICK else [1.0, 20.0]
REP = dict(d=20, k=3, m=10, n=500 if QUICK else 1000)
CONDS = [1.0, 100.0] if QUICK else [1.0, 10.0, 100.0, 1000.0]
REP_STEPS = 100 if QUICK else 1000
REP_GRID = {
    "sgd": [0.5] if QUICK else [0.3, 1.0, 3.0, 10.0],
    "adam": [0.01] if QUICK else [0.003, 0.01, 0.03, 0.1],
    "kfac": [0.5] if QUICK else [0.3, 0.5, 1.0],
}
SI = dict(d=20, m=16, n=500 if QUICK else 1000)  # single-index sizes
SI_STEPS = 50 if QUICK else 300
SI_GRID = {  # kfac: (lr, damping) pairs
    "sgd": [1.0] if QUICK else [0.3, 1.0, 3.0, 10.0],
    "adam": [0.01] if QUICK else [0.003, 0.01, 0.03, 0.1],
    "kfac": [(0.3, 1e-2)]
    if QUICK
    else [(0.1, 1e-2), (0.3, 1e-2), (1.0, 1e-2), (0.3, 1e-3), (1.0, 1e-3)],
}
TEACHER_DIMS = (20, 14, 8) if QUICK else (50, 35, 20)
TEACHER_N = 500 if QUICK else 2000
TEACHER_STEPS = 50 if QUICK else 300
TEACHER_GRID = {  # symo: (lr, damping) pairs
    "gd": [3.0] if QUICK else [3.0, 10.0, 20.0],
    "adam": [0.01] if QUICK else [0.01, 0.03, 0.1],
    "kfac": [0.1] if QUICK else [0.1, 0.3],
    "symo": [(0.05, 1e-4)] if QUICK else [(0.01, 1e-6), (0.1, 1e-4), (0.3, 1e-3)],
}
TARGET_FRACTION = 0.05 if QUICK else 0.01  # target loss / initial loss


def med(xs):
    return statistics.median(xs)


# -- 1. TSAM -----------------------------------------------------------------
def digits_data(seed):
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    X, y = load_digits(return_X_y=True)
    X = (X / 16.0).astype(np.float32)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=seed)
    rng = np.random.default_rng(seed)
    flip = rng.random(len(ytr)) < LABEL_NOISE
    ytr = ytr.copy()
    ytr[flip] = rng.integers(0, 10, flip.sum())
    t = torch.tensor
    return t(Xtr), t(ytr), t(Xte), t(yte)


def text_data(seed):
    """Bag of words of 60-word passages of the 10 longest pydoc topics."""
    from pydoc_data.topics import topics

    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.model_selection import train_test_split

    longest = sorted(topics, key=lambda k: -len(topics[k]))[:10]
    docs, labels = [], []
    for label, key in enumerate(longest):
        words = topics[key].split()
        for i in range(0, len(words) - 59, 60):
            docs.append(" ".join(words[i : i + 60]))
            labels.append(label)
    y = np.array(labels)
    Dtr, Dte, ytr, yte = train_test_split(
        docs, y, test_size=0.3, random_state=seed, stratify=y
    )
    vec = TfidfVectorizer(max_features=1000).fit(Dtr)
    Xtr = vec.transform(Dtr).toarray().astype(np.float32)
    Xte = vec.transform(Dte).toarray().astype(np.float32)
    rng = np.random.default_rng(seed)
    flip = rng.random(len(ytr)) < LABEL_NOISE
    ytr = ytr.copy()
    ytr[flip] = rng.integers(0, 10, flip.sum())
    t = torch.tensor
    return t(Xtr), t(ytr), t(Xte), t(yte)


def tsam_run(name, seed, tilt=None, data=digits_data):
    Xtr, ytr, Xte, yte = data(seed)
    torch.manual_seed(seed)
    net = nn.Sequential(
        nn.Linear(Xtr.shape[1], TSAM_HIDDEN), nn.ReLU(), nn.Linear(TSAM_HIDDEN, 10)
    )
    base = dict(lr=0.05, momentum=0.9)
    if name == "erm":
        opt = torch.optim.SGD(net.parameters(), **base)
    elif name == "sam":
        opt = SAM(net.parameters(), rho=0.05, **base)
    else:
        opt = TiltedSAM(
            net.parameters(),
            rho=0.05,
            tilt=tilt,
            num_samples=3,
            noise_radius=0.05,
            generator=torch.Generator().manual_seed(seed),
            **base,
        )
    loss_fn = nn.CrossEntropyLoss()
    gen = torch.Generator().manual_seed(seed)
    steps, step_time = 0, 0.0
    for _ in range(TSAM_EPOCHS):
        perm = torch.randperm(len(Xtr), generator=gen)
        for i in range(0, len(Xtr), 64):
            xb, yb = Xtr[perm[i : i + 64]], ytr[perm[i : i + 64]]

            def closure(xb=xb, yb=yb):
                opt.zero_grad()
                loss = loss_fn(net(xb), yb)
                loss.backward()
                return loss

            with timer() as t:
                if name == "erm":
                    closure()
                    opt.step()
                else:
                    opt.step(closure)
            step_time += t()
            steps += 1
    with torch.no_grad():
        acc = float((net(Xte).argmax(1) == yte).float().mean())
    sub = slice(0, 500)
    lam = hessian_top_eigenvalue(
        net, loss_fn, Xtr[sub], ytr[sub], iters=30, generator=gen
    )
    sharp = perturbed_sharpness(
        net, loss_fn, Xtr[sub], ytr[sub], sigma=0.05, n_draws=20, generator=gen
    )
    return acc, lam, sharp, 1e3 * step_time / steps


methods = [("erm", None), ("sam", None)] + [("tsam", t) for t in TILTS]
HEADER1 = [
    "method",
    "test acc",
    "acc - ERM",
    "top Hessian eig",
    "eig ratio vs SAM",
    "Gauss sharpness",
    "sharpness ratio vs SAM",
    "ms/step",
    "time ratio vs SAM",
]


def tsam_section(title, data):
    res = {}
    for name, tilt in methods:
        runs = [tsam_run(name, s, tilt, data) for s in SEEDS]
        res[(name, tilt)] = [med([r[i] for r in runs]) for i in range(4)]
    erm, sam = res[("erm", None)], res[("sam", None)]
    rows = []
    for (name, tilt), (acc, lam, sharp, ms) in res.items():
        label = name if tilt is None else f"tsam (t={tilt:g})"
        rows.append(
            [
                label,
                acc,
                acc - erm[0],
                lam,
                lam / sam[1],
                sharp,
                sharp / sam[2],
                ms,
                ms / sam[3],
            ]
        )
    return (
        f"TSAM: {title}, {int(LABEL_NOISE * 100)}% label noise, {TSAM_EPOCHS} "
        f"epochs, median of {len(SEEDS)} seeds",
        HEADER1,
        rows,
    )


sec1 = tsam_section("digits MLP", digits_data)
sec1_text = tsam_section(
    "bag of words (tf-idf, 1000 terms) of 60-word passages of the 10 longest "
    "pydoc topics, MLP",
    text_data,
)


# -- 2. linear representation learning -------------------------------------
def rep_problem(cond, seed):
    d, k, m, n = REP["d"], REP["k"], REP["m"], REP["n"]
    g = torch.Generator().manual_seed(seed)
    Q, _ = torch.linalg.qr(torch.randn(d, d, generator=g))
    evals = torch.logspace(0, -np.log10(cond), d)
    X = torch.randn(n, d, generator=g) * evals.sqrt() @ Q.T
    G_star = torch.linalg.qr(torch.randn(d, k, generator=g))[0].T
    F_star = torch.randn(m, k, generator=g)
    Y = X @ G_star.T @ F_star.T
    return X, Y, G_star


def subspace_distance(G, G_star, top=None):
    """Sine of the largest principal angle between row(G) and row(G*); with
    ``top``, row(G) is cut to its ``top`` leading right singular vectors."""
    if top is not None:
        G = torch.linalg.svd(G.double())[2][:top]
    V = torch.linalg.qr(G.T.double())[0]
    Vs = torch.linalg.qr(G_star.T.double())[0]
    return float(torch.linalg.matrix_norm(V - Vs @ (Vs.T @ V), ord=2))


def layerwise_optimizer(method, hp, net):
    """SGD / Adam at step ``hp``, or KFAC at ``hp = lr`` or ``(lr, damping)``."""
    if method == "sgd":
        return torch.optim.SGD(net.parameters(), lr=hp)
    if method == "adam":
        return torch.optim.Adam(net.parameters(), lr=hp)
    lr, damping = hp if isinstance(hp, tuple) else (hp, 1e-4)
    return LayerwisePreconditioner(
        net, lr=lr, damping=damping, factor_decay=0.0, update_every=1, fisher="mse"
    )


def steps_until(reached, method, opt, net, X, Y, cap):
    """Full-batch MSE steps until ``reached(step)``; ``cap`` if never (or on
    divergence)."""

    def closure():
        opt.zero_grad()
        loss = nn.functional.mse_loss(net(X), Y)
        loss.backward()
        return loss

    for step in range(cap):
        if reached(step):
            return step
        try:
            loss = opt.step(closure) if method == "kfac" else (closure(), opt.step())[0]
        except FloatingPointError:
            return cap
        if not torch.isfinite(torch.as_tensor(loss)):
            return cap
    return cap


def layerwise_rows(steps, grids):
    """Best (over each method's grid) median steps per condition number."""
    rows = []
    for cond in CONDS:
        best = {
            method: min(med([steps(method, hp, cond, s) for s in SEEDS]) for hp in grid)
            for method, grid in grids.items()
        }
        rows.append(
            [
                f"{cond:g}",
                best["sgd"],
                best["adam"],
                best["kfac"],
                best["sgd"] / max(best["kfac"], 1),
                best["adam"] / max(best["kfac"], 1),
            ]
        )
    return rows


def rep_steps(method, lr, cond, seed):
    X, Y, G_star = rep_problem(cond, seed)
    torch.manual_seed(seed + 100)
    net = nn.Sequential(
        nn.Linear(REP["d"], REP["k"], bias=False),
        nn.Linear(REP["k"], REP["m"], bias=False),
    )
    opt = layerwise_optimizer(method, lr, net)

    def reached(step):
        return subspace_distance(net[0].weight.detach(), G_star) < 0.1

    return steps_until(reached, method, opt, net, X, Y, REP_STEPS)


rows2 = layerwise_rows(rep_steps, REP_GRID)
sec2 = (
    f"Layer-wise: steps to subspace distance < 0.1 (d={REP['d']}, k={REP['k']}, "
    f"m={REP['m']}, n={REP['n']}, cap {REP_STEPS}; best lr each)",
    ["cond(Sigma_x)", "SGD", "Adam", "KFAC", "ratio SGD/KFAC", "ratio Adam/KFAC"],
    rows2,
)


# -- 2b. single-index model ------------------------------------------------------
def si_problem(cond, seed):
    d, n = SI["d"], SI["n"]
    g = torch.Generator().manual_seed(seed)
    Q, _ = torch.linalg.qr(torch.randn(d, d, generator=g))
    evals = torch.logspace(0, -np.log10(cond), d)
    X = torch.randn(n, d, generator=g) * evals.sqrt() @ Q.T
    beta = torch.randn(d, generator=g)
    beta = beta / torch.sqrt(beta @ ((Q * evals) @ Q.T) @ beta)  # unit variance
    return X, torch.tanh(X @ beta)[:, None], beta[None, :]


def si_steps(method, hp, cond, seed):
    X, Y, beta = si_problem(cond, seed)
    torch.manual_seed(seed + 100)
    net = nn.Sequential(
        nn.Linear(SI["d"], SI["m"], bias=False),
        nn.Tanh(),
        nn.Linear(SI["m"], 1, bias=False),
    )
    with torch.no_grad():
        net[0].weight.mul_(0.1)  # small first layer: the feature-learning regime
    W0 = net[0].weight.detach().clone()
    opt = layerwise_optimizer(method, hp, net)

    def reached(step):
        change = net[0].weight.detach() - W0
        return step > 0 and subspace_distance(change, beta, top=1) < 0.1

    return steps_until(reached, method, opt, net, X, Y, SI_STEPS)


rows2b = layerwise_rows(si_steps, SI_GRID)
sec2b = (
    f"Layer-wise, single index y = tanh(<beta*, x>): steps until the top right "
    f"singular vector of W_t - W_0 is within sine 0.1 of beta* (d={SI['d']}, "
    f"hidden {SI['m']}, n={SI['n']}, cap {SI_STEPS}; best lr each, KFAC's "
    "damping in its grid)",
    ["cond(Sigma_x)", "SGD", "Adam", "KFAC", "ratio SGD/KFAC", "ratio Adam/KFAC"],
    rows2b,
)


# -- 3. SyMO -------------------------------------------------------------------
def teacher_problem(seed):
    d0, d1, d2 = TEACHER_DIMS
    g = torch.Generator().manual_seed(seed)
    Q, _ = torch.linalg.qr(torch.randn(d0, d0, generator=g))
    evals = torch.logspace(0, -3, d0)
    X = torch.randn(TEACHER_N, d0, generator=g) * evals.sqrt() @ Q.T
    W1 = torch.randn(d1, d0, generator=g) / d0**0.5
    W2 = torch.randn(d2, d1, generator=g) / d1**0.5
    Y = torch.tanh(X @ W1.T) @ W2.T
    return X, Y


def student(seed):
    d0, d1, d2 = TEACHER_DIMS
    torch.manual_seed(seed + 1000)
    net = nn.Sequential(
        nn.Linear(d0, d1, bias=False), nn.Tanh(), nn.Linear(d1, d2, bias=False)
    )
    for m in net:
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, std=m.in_features**-0.5)
    return net


def teacher_run(method, lr, seed):
    X, Y = teacher_problem(seed)
    net = student(seed)
    if method == "gd":
        opt = torch.optim.SGD(net.parameters(), lr=lr)
    elif method == "adam":
        opt = torch.optim.Adam(net.parameters(), lr=lr)
    elif method == "kfac":
        opt = LayerwisePreconditioner(
            net, lr=lr, damping=0.017, update_every=1, fisher="mse"
        )
    else:
        lr, damping = lr
        opt = SyMO(net, lr=lr, damping=damping)

    def closure():
        opt.zero_grad()
        loss = nn.functional.mse_loss(net(X), Y)
        loss.backward()
        return loss

    with torch.no_grad():
        target = TARGET_FRACTION * float(nn.functional.mse_loss(net(X), Y))
    hit, step_time = TEACHER_STEPS, 0.0
    for step in range(TEACHER_STEPS):
        with timer() as t:
            try:
                if method in ("gd", "adam"):
                    loss = closure()
                    opt.step()
                else:
                    loss = opt.step(closure)
            except FloatingPointError:
                loss = float("nan")
        step_time += t()
        loss = float(torch.as_tensor(loss).detach())
        if not np.isfinite(loss):
            break
        if loss < target and hit == TEACHER_STEPS:
            hit = step
            break
    return hit, 1e3 * step_time / (step + 1)


best3 = {}
for method, grid in TEACHER_GRID.items():
    cands = []
    for lr in grid:
        runs = [teacher_run(method, lr, s) for s in SEEDS]
        cands.append((med([r[0] for r in runs]), med([r[1] for r in runs]), str(lr)))
    best3[method] = min(cands)
sy = best3["symo"]
rows3 = [
    [m, b[2], b[0], b[0] / max(sy[0], 1), b[1], b[1] / sy[1]] for m, b in best3.items()
]
sec3 = (
    f"SyMO: teacher tanh MLP {TEACHER_DIMS}, n={TEACHER_N}, cond 1e3, full batch; "
    f"steps to {TARGET_FRACTION:g} x initial loss (cap {TEACHER_STEPS})",
    [
        "method",
        "best lr (SyMO: lr, damping)",
        "steps",
        "steps ratio vs SyMO",
        "ms/step",
        "time ratio",
    ],
    rows3,
)

report(
    args,
    "skalgos.torch second-order optimizers: TSAM, KFAC, SyMO",
    [sec1, sec1_text, sec2, sec2b, sec3],
)
