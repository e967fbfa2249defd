"""Benchmarks for skalgos.torch: Newton-Schulz, Muon, schedule-free, the bound.

One run, ratios measured in the same run against the baseline:

1. Newton-Schulz (5 steps, float32) time vs the exact polar factor by
   ``torch.linalg.svd``, n = 128..1024.
2. Our Muon step (``ns_dtype="auto"``, float32 and bfloat16 Newton-Schulz)
   vs ``torch.optim.Muon`` (always bfloat16: slow on CPUs without bfloat16
   matrix units, fast on those with them; the header records the CPU's
   flags and what the ``"auto"`` probe picked).
3. Steps and wall-clock seconds to a target validation loss, AdamW / Muon:
   a small character-level transformer on ``pydoc_data.topics`` and an MLP
   on digits, a small lr grid per optimizer (best lr each), 3 seeds. A run
   that never reaches the target counts as the cap, printed as a lower
   bound (">= 200").
4. Schedule-free AdamW (one run, evaluated at T/4, T/2, T) vs AdamW + cosine
   tuned separately for each horizon, digits MLP.
5. The convex bound: predicted best lr for cosine (from a WSD sweep) and for
   WSD at 2T, against the measured best; and extend_horizon vs naive.

6. ``--defaults`` (its own results file, torch_optim_defaults.md; no
   timings): the lr sweep behind every registry name's ``lr="auto"``, and
   the test accuracy of every name at its defaults against AdamW's on
   standardised wine, breast cancer and digits.

Scaled down for 2 shared CPU cores (float32, one torch thread): the sizes
are at the top. ``--quick`` shrinks everything for CI.
"""

import math
import re
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np
import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).parent))
from _common import parse_args, report, timer  # noqa: E402

from skalgos.torch.linalg import (  # noqa: E402
    fast_ns_dtype,
    newton_schulz,
    ns_dtype_probe,
    polar,
)
from skalgos.torch.lr_scheduler import (  # noqa: E402
    extend_horizon,
    lr_factors,
    transfer_base_lr,
)
from skalgos.torch.optim import Muon, build_optimizer  # noqa: E402

DEFAULTS = "--defaults" in sys.argv
if DEFAULTS:  # the shared parser knows --quick and --output only
    sys.argv.remove("--defaults")
args = parse_args(
    "torch_optim_defaults" if DEFAULTS else "torch_optim", __doc__.splitlines()[0]
)
QUICK = args.quick

# -- parameters --------------------------------------------------------------
NS_SIZES = [64, 128] if QUICK else [128, 256, 512, 1024]
NS_REPEATS = 2 if QUICK else 5
MUON_SHAPES = [(128, 128)] * 2 if QUICK else [(256, 256), (256, 512), (512, 256)]
SEEDS = [0] if QUICK else [0, 1, 2]
LM = dict(context=16 if QUICK else 32, d=32 if QUICK else 64, layers=2, batch=16)
LM_STEPS = 30 if QUICK else 200
LM_GRID = {
    "adamw": [3e-3] if QUICK else [1e-3, 3e-3, 1e-2],
    "muon": [0.02] if QUICK else [0.01, 0.02, 0.05],
}
DIGITS_STEPS = 40 if QUICK else 400
DIGITS_HIDDEN = (64, 64) if QUICK else (256, 256)
DIGITS_GRID = {
    "adamw": [3e-3] if QUICK else [1e-3, 3e-3, 1e-2],
    "muon": [0.02] if QUICK else [0.02, 0.05, 0.1],
}
EVAL_EVERY = 10
SF_STEPS = 40 if QUICK else 400
SF_GRID = [3e-3] if QUICK else [1e-3, 3e-3, 1e-2]
BOUND_STEPS = 40 if QUICK else 200
BOUND_GRID = np.geomspace(0.05, 3.2, 4 if QUICK else 7)  # a factor 2 apart (full)

torch.set_num_threads(1)


def cpu_flags():
    """The lscpu flags that decide bfloat16 speed (AMX, AVX-512 BF16...)."""
    try:
        out = subprocess.run(
            ["lscpu"], capture_output=True, text=True, timeout=10, check=True
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    flags = next(
        (
            ln.split(":", 1)[1].split()
            for ln in out.splitlines()
            if ln.startswith("Flags")
        ),
        [],
    )
    keep = [f for f in flags if re.match(r"(amx|avx512|avx2|fma|avx_vnni)", f)]
    return ", ".join(sorted(keep)) or "none of amx/avx512/avx2/fma"


# -- 6. registry defaults (--defaults) ---------------------------------------------
# The grid per registry name; each name's default_lr is on its grid.
DEFAULTS_GRID = {
    "adamw": [1e-3, 3e-3, 1e-2],
    "adamw_sf": [1e-3, 3e-3, 1e-2, 3e-2],
    "kfac": [1e-3, 3e-3, 1e-2, 3e-2, 0.1],
    "muon": [0.01, 0.02, 0.05, 0.1],
    "sam": [0.01, 0.03, 0.1, 0.3],
    "sgd": [0.01, 0.03, 0.1, 0.3],
    "sgd_sf": [0.1, 0.3, 1.0, 3.0],
    "shampoo": [1e-3, 3e-3, 1e-2, 3e-2],
    "symo": [0.01, 0.03, 0.09, 0.3],
    "tsam": [0.01, 0.03, 0.1, 0.3],
}


def run_defaults():
    import warnings

    from sklearn.datasets import load_breast_cancer, load_digits, load_wine
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    from skalgos.torch import TorchClassifier
    from skalgos.torch.optim import available_optimizers, default_lr

    loaders = {"wine": load_wine, "breast cancer": load_breast_cancer}
    if not QUICK:
        loaders["digits"] = load_digits
    seeds = [0] if QUICK else [0, 1]
    data = {}
    for key, load in loaders.items():
        X, y = load(return_X_y=True)
        Xtr, Xte, ytr, yte = train_test_split(
            X, y, test_size=0.25, random_state=0, stratify=y
        )
        sc = StandardScaler().fit(Xtr)
        data[key] = (sc.transform(Xtr), sc.transform(Xte), ytr, yte)

    def accuracy(name, lr):
        out = {}
        for key, (Xtr, Xte, ytr, yte) in data.items():
            accs = []
            for seed in seeds:
                # 20 epochs: the budget these rates were measured at (the
                # default before max_epochs="auto", issue 34)
                clf = TorchClassifier(
                    optimizer=name, lr=lr, max_epochs=20, n_jobs=1, random_state=seed
                )
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    try:
                        accs.append(clf.fit(Xtr, ytr).score(Xte, yte))
                    except FloatingPointError:
                        accs.append(math.nan)  # diverged: printed as nan
            out[key] = statistics.mean(accs)
        return out

    names = available_optimizers()
    sweep, rows_sweep = {}, []
    for name in names:
        grid = [default_lr(name)] if QUICK else DEFAULTS_GRID[name]
        assert default_lr(name) in grid, name
        for lr in grid:
            acc = sweep[name, lr] = accuracy(name, lr)
            mark = "yes" if lr == default_lr(name) else ""
            rows_sweep.append(
                (name, lr, *acc.values(), statistics.mean(acc.values()), mark)
            )
    ref = sweep["adamw", default_lr("adamw")]
    rows_acc = []
    for name in names:
        acc = sweep[name, default_lr(name)]
        gap = min(acc[k] - ref[k] for k in data)
        rows_acc.append(
            (
                name,
                default_lr(name),
                *acc.values(),
                round(100 * gap, 1),
                "yes" if gap >= -0.05 else "NO",
            )
        )
    keys = list(data)
    sections = [
        (
            "Every registry name at its defaults (lr='auto') vs AdamW at its defaults: "
            f"test accuracy, mean of {len(seeds)} seed(s)",
            [
                "optimizer",
                "lr='auto'",
                *keys,
                "worst gap vs AdamW (points)",
                "within 5 points",
            ],
            rows_acc,
        ),
        (
            "The lr sweep behind lr='auto': the best mean accuracy, the smaller lr when "
            "two are within 0.5 points",
            ["optimizer", "lr", *keys, "mean", "default"],
            rows_sweep,
        ),
    ]
    notes = [
        "Data: each set split 75/25 (stratified, random_state=0), standardised on the "
        "training part. TorchClassifier defaults otherwise: MLP (64,), 20 epochs "
        "(pinned: max_epochs='auto' is the default since issue 34), batch 64; 'kfac' and 'shampoo' with their registry settings (damping 0.1, epsilon "
        "1e-4), 'symo' with its bias-free tanh MLP. Accuracies only, no timings.",
    ]
    command = "python benchmarks/torch_optim.py --defaults" + (
        " --quick" if QUICK else ""
    )
    report(
        args,
        "skalgos.torch registry defaults (lr='auto')",
        sections,
        command=command,
        notes=notes,
    )


if DEFAULTS:
    run_defaults()
    sys.exit(0)


def median_time(fn, repeats):
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        with timer() as t:
            fn()
        times.append(t())
    return statistics.median(times)


# -- 1. Newton-Schulz vs SVD --------------------------------------------------
rows_ns = []
for n in NS_SIZES:
    G = torch.randn(n, n, generator=torch.Generator().manual_seed(n))
    reps = 1 if n >= 1024 else NS_REPEATS
    t_ns = median_time(lambda G=G: newton_schulz(G), reps)
    t_bf = median_time(lambda G=G: newton_schulz(G, dtype=torch.bfloat16), reps)
    t_svd = median_time(lambda G=G: polar(G), reps)
    rows_ns.append((n, t_ns * 1e3, t_bf * 1e3, t_svd * 1e3, t_svd / t_ns, t_svd / t_bf))


# -- 2. Muon step time ----------------------------------------------------------
def muon_step_time(cls, **kw):
    g = torch.Generator().manual_seed(0)
    params = [nn.Parameter(torch.randn(*s, generator=g)) for s in MUON_SHAPES]
    for p in params:
        p.grad = torch.randn(p.shape, generator=g)
    opt = cls(params, lr=0.02, weight_decay=0.0, **kw)
    return median_time(opt.step, NS_REPEATS)


probe = {n: ns_dtype_probe(size=n) for n in (64, 128, 256)}
picks = {n: str(fast_ns_dtype(size=n)).replace("torch.", "") for n in probe}
auto_dtype = picks[min(256, min(min(s) for s in MUON_SHAPES))]
t_auto = muon_step_time(Muon)
t_f32 = muon_step_time(Muon, ns_dtype=torch.float32)
t_bf16 = muon_step_time(Muon, ns_dtype=torch.bfloat16)
rows_muon = []
t_torch = muon_step_time(torch.optim.Muon) if hasattr(torch.optim, "Muon") else None
base = t_torch if t_torch is not None else t_f32
if t_torch is not None:
    rows_muon.append(("torch.optim.Muon, bfloat16 NS (baseline)", t_torch * 1e3, 1.0))
rows_muon += [
    (
        f"skalgos Muon, ns_dtype='auto' (default; picked {auto_dtype})",
        t_auto * 1e3,
        t_auto / base,
    ),
    ("skalgos Muon, ns_dtype=float32", t_f32 * 1e3, t_f32 / base),
    ("skalgos Muon, ns_dtype=bfloat16", t_bf16 * 1e3, t_bf16 / base),
]


# -- data ---------------------------------------------------------------------
def char_data():
    from pydoc_data.topics import topics

    text = "".join(topics[k] for k in sorted(topics))
    if QUICK:
        text = text[:60000]
    vocab = sorted(set(text))
    table = {c: i for i, c in enumerate(vocab)}
    ids = torch.tensor([table[c] for c in text], dtype=torch.long)
    cut = int(0.9 * len(ids))
    return ids[:cut], ids[cut:], len(vocab)


def digits_data():
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    X, y = load_digits(return_X_y=True)
    X = (X / 16.0).astype(np.float32)
    Xtr, Xva, ytr, yva = train_test_split(
        X, y, test_size=0.3, random_state=0, stratify=y
    )
    return (torch.tensor(Xtr), torch.tensor(ytr), torch.tensor(Xva), torch.tensor(yva))


class Block(nn.Module):
    def __init__(self, d, heads=4):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        # Separate Q, K, V matrices (Muon orthogonalizes each one).
        self.q, self.k, self.v, self.o = (nn.Linear(d, d, bias=False) for _ in range(4))
        self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):
        B, T, d = x.shape
        h = self.ln1(x)
        q, k, v = (
            m(h).view(B, T, self.heads, -1).transpose(1, 2)
            for m in (self.q, self.k, self.v)
        )
        a = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.o(a.transpose(1, 2).reshape(B, T, d))
        return x + self.fc2(nn.functional.gelu(self.fc1(self.ln2(x))))


class CharLM(nn.Module):
    def __init__(self, vocab, d, layers, context):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.zeros(context, d))
        self.blocks = nn.Sequential(*[Block(d) for _ in range(layers)])
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab)

    def forward(self, idx):
        return self.head(self.ln(self.blocks(self.embed(idx) + self.pos)))


def make_opt(name, model, lr, schedule_steps=None, schedule=None):
    if name == "muon":
        opt = build_optimizer("muon", model, lr, exclude=("embed", "head", "pos"))
    elif name == "adamw":
        opt = build_optimizer("adamw", model, lr, weight_decay=0.0)
    else:
        opt = build_optimizer(name, model, lr)
    sched = None
    if schedule is not None:
        f = schedule
        sched = torch.optim.lr_scheduler.LambdaLR(
            opt, lambda t: float(f[min(t, len(f) - 1)])
        )
    return opt, sched


def train(model, opt, sched, batch_fn, loss_fn, steps, eval_fn, eval_at, clock=None):
    """Validation curve ``[(step, loss)]``; ``clock`` gets the training seconds."""
    import time

    curve = []
    mode = callable(getattr(opt, "train", None))
    spent = 0.0
    for t in range(1, steps + 1):
        tic = time.perf_counter()
        model.train()
        if mode:
            opt.train()
        xb, yb = batch_fn(t)

        def closure(xb=xb, yb=yb):
            opt.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            return loss

        opt.step(closure)
        if sched is not None:
            sched.step()
        spent += time.perf_counter() - tic
        if t in eval_at:
            if clock is not None:
                clock.append(spent)
            if mode:
                opt.eval()
            model.eval()
            with torch.no_grad():
                curve.append((t, float(eval_fn())))
    return curve


def steps_to(curve, target):
    for t, v in curve:
        if v <= target:
            return t
    return math.inf


def seconds_to(curve, clock, target):
    for (_, v), sec in zip(curve, clock):
        if v <= target:
            return sec
    return math.inf


def bound(x, cap):
    """A measurement, or ``">= cap"`` when the run hit the cap (a lower bound)."""
    return f">= {cap:.4g}" if math.isinf(x) else x


def compare_adamw_muon(make_model, batch_fn_for, loss_fn, eval_fn_for, steps, grid):
    eval_at = set(range(EVAL_EVERY, steps + 1, EVAL_EVERY))
    curves = {}
    for name, lrs in grid.items():
        for lr in lrs:
            for seed in SEEDS:
                torch.manual_seed(seed)
                model = make_model()
                opt, _ = make_opt(name, model, lr)
                clock = []
                c = train(
                    model,
                    opt,
                    None,
                    batch_fn_for(seed),
                    loss_fn,
                    steps,
                    eval_fn_for(model),
                    eval_at,
                    clock,
                )
                curves[name, lr, seed] = (c, clock)
    # Best lr per optimizer: lowest median final validation loss over seeds.
    best = {}
    for name, lrs in grid.items():
        finals = {
            lr: statistics.median(curves[name, lr, s][0][-1][1] for s in SEEDS)
            for lr in lrs
        }
        best[name] = min(finals, key=finals.get)
    # Target: a loss both tuned optimizers reach (the worse final, + 2%).
    target = 1.02 * max(
        statistics.median(curves[n, best[n], s][0][-1][1] for s in SEEDS) for n in grid
    )
    out = {}
    for name in grid:
        runs = [curves[name, best[name], s] for s in SEEDS]
        st = statistics.median(steps_to(c, target) for c, _ in runs)
        sec = statistics.median(seconds_to(c, k, target) for c, k in runs)
        ms = statistics.median(k[-1] / steps for _, k in runs) * 1e3
        final = statistics.median(c[-1][1] for c, _ in runs)
        out[name] = dict(lr=best[name], steps=st, seconds=sec, ms=ms, final=final)
    return target, out


# -- 3a. char-LM ----------------------------------------------------------------
train_ids, val_ids, vocab = char_data()
C = LM["context"]


def lm_batches(seed):
    g = torch.Generator().manual_seed(1000 + seed)

    def batch(t):
        i = torch.randint(0, len(train_ids) - C - 1, (LM["batch"],), generator=g)
        x = torch.stack([train_ids[j : j + C] for j in i])
        y = torch.stack([train_ids[j + 1 : j + C + 1] for j in i])
        return x, y

    return batch


gv = torch.Generator().manual_seed(7)
vi = torch.randint(0, len(val_ids) - C - 1, (64 if QUICK else 256,), generator=gv)
VX = torch.stack([val_ids[j : j + C] for j in vi])
VY = torch.stack([val_ids[j + 1 : j + C + 1] for j in vi])


def lm_loss(logits, y):
    return nn.functional.cross_entropy(
        logits.reshape(-1, logits.shape[-1]), y.reshape(-1)
    )


lm_target, lm_res = compare_adamw_muon(
    lambda: CharLM(vocab, LM["d"], LM["layers"], C),
    lm_batches,
    lm_loss,
    lambda model: lambda: lm_loss(model(VX), VY),
    LM_STEPS,
    LM_GRID,
)

# -- 3b. digits MLP ---------------------------------------------------------------
Xtr, ytr, Xva, yva = digits_data()


def mlp(hidden=DIGITS_HIDDEN):
    layers, d = [], 64
    for h in hidden:
        layers += [nn.Linear(d, h), nn.ReLU()]
        d = h
    return nn.Sequential(*layers, nn.Linear(d, 10))


def digit_batches(seed, batch=128):
    g = torch.Generator().manual_seed(2000 + seed)

    def batch_fn(t):
        i = torch.randint(0, len(Xtr), (batch,), generator=g)
        return Xtr[i], ytr[i]

    return batch_fn


ce = nn.functional.cross_entropy
dg_target, dg_res = compare_adamw_muon(
    mlp,
    digit_batches,
    ce,
    lambda model: lambda: ce(model(Xva), yva),
    DIGITS_STEPS,
    DIGITS_GRID,
)


def rows_for(res, steps):
    a, m = res["adamw"], res["muon"]

    def ratio(x, y):
        if math.isinf(x) or math.isinf(y):
            return "n/a (capped)"
        return x / y

    rows = []
    for label, r in (("AdamW (baseline)", a), ("Muon + aux AdamW", m)):
        rows.append(
            (
                label,
                r["lr"],
                bound(r["steps"], steps),
                bound(r["seconds"], r["ms"] * steps / 1e3),
                r["final"],
                r["ms"],
                ratio(a["steps"], r["steps"]),
                ratio(a["seconds"], r["seconds"]),
            )
        )
    return rows


# -- 4. schedule-free vs tuned cosine --------------------------------------------
def digits_run(name, lr, steps, schedule=None, seed=0, hidden=(128,)):
    torch.manual_seed(seed)
    model = mlp(hidden)
    opt, sched = make_opt(name, model, lr, schedule=schedule)
    checkpoints = {steps // 4, steps // 2, steps}
    c = train(
        model,
        opt,
        sched,
        digit_batches(seed),
        ce,
        steps,
        lambda: ce(model(Xva), yva),
        checkpoints,
    )
    return dict(c)


sf = {lr: digits_run("adamw_sf", lr, SF_STEPS) for lr in SF_GRID}
rows_sf = []
for frac, T in (("T/4", SF_STEPS // 4), ("T/2", SF_STEPS // 2), ("T", SF_STEPS)):
    sf_best = min(sf[lr][T] for lr in SF_GRID)
    cos_best = min(
        digits_run("adamw", lr, T, schedule=lr_factors("cosine", T))[T]
        for lr in SF_GRID
    )
    rows_sf.append((f"{frac} = {T} steps", cos_best, sf_best, sf_best / cos_best))


# -- 5. the bound: lr transfer across schedules and horizons -----------------------
def sweep(kind, T, **kw):
    f = lr_factors(kind, T, **kw)
    losses = {
        lr: digits_run("sgd", lr, T, schedule=f, hidden=(64,))[T] for lr in BOUND_GRID
    }
    losses = {lr: v if math.isfinite(v) else math.inf for lr, v in losses.items()}
    return min(losses, key=losses.get), losses


T = BOUND_STEPS
best_wsd, loss_wsd = sweep("wsd", T)
best_cos, _ = sweep("cosine", T)
best_wsd2, loss_wsd2 = sweep("wsd", 2 * T)
pred_cos = transfer_base_lr(
    best_wsd, lr_factors("wsd", T + 1), lr_factors("cosine", T + 1)
)
pred_wsd2 = transfer_base_lr(
    best_wsd, lr_factors("wsd", T + 1), lr_factors("wsd", 2 * T + 1)
)
step = math.log2(BOUND_GRID[1] / BOUND_GRID[0])
rows_bound = [
    (
        "WSD(T) -> cosine(T)",
        best_wsd,
        pred_cos,
        best_cos,
        abs(math.log2(pred_cos / best_cos)),
        step,
    ),
    (
        "WSD(T) -> WSD(2T)",
        best_wsd,
        pred_wsd2,
        best_wsd2,
        abs(math.log2(pred_wsd2 / best_wsd2)),
        step,
    ),
]
ext = extend_horizon(best_wsd, T, 2 * T)
ext_loss = digits_run(
    "sgd",
    best_wsd,
    2 * T,
    schedule=lr_factors("wsd", 2 * T, cooldown_fraction=ext["cooldown_fraction"]),
    hidden=(64,),
)[2 * T]
naive_loss = loss_wsd2[best_wsd]
rows_ext = [
    ("naive: same lr, 20% cooldown (baseline)", 0.2, naive_loss, 1.0),
    (
        "extend_horizon: same lr, longer cooldown",
        round(ext["cooldown_fraction"], 3),
        ext_loss,
        ext_loss / naive_loss,
    ),
]

STEP_HEADER = [
    "optimizer",
    "best lr",
    "median steps to target",
    "median seconds to target",
    "median final val loss",
    "ms / step",
    "ratio AdamW/this, steps",
    "ratio AdamW/this, seconds",
]
sections = [
    (
        "Newton-Schulz (5 steps) vs exact polar by SVD (float32)",
        [
            "n",
            "NS float32 ms",
            "NS bfloat16 ms",
            "SVD ms (baseline)",
            "ratio SVD/NS float32",
            "ratio SVD/NS bfloat16",
        ],
        rows_ns,
    ),
    (
        f"Muon step time, matrices {MUON_SHAPES}",
        ["optimizer", "ms / step", "ratio vs torch.optim.Muon"],
        rows_muon,
    ),
    (
        f"Char-LM on pydoc_data.topics ({LM['layers']} layers, d={LM['d']}, context {C}, "
        f"batch {LM['batch']}, {LM_STEPS} steps, {len(SEEDS)} seeds): steps to validation "
        f"loss {lm_target:.3f}",
        STEP_HEADER,
        rows_for(lm_res, LM_STEPS),
    ),
    (
        f"Digits MLP 64-{'-'.join(map(str, DIGITS_HIDDEN))}-10 (batch 128, {DIGITS_STEPS} "
        f"steps, {len(SEEDS)} seeds): steps to validation loss {dg_target:.3f}",
        STEP_HEADER,
        rows_for(dg_res, DIGITS_STEPS),
    ),
    (
        "Schedule-free AdamW (one run) vs AdamW + cosine tuned for each horizon, digits "
        f"MLP 64-128-10, lr grid {SF_GRID}",
        [
            "horizon",
            "cosine val loss (baseline)",
            "schedule-free val loss",
            "ratio SF/cosine",
        ],
        rows_sf,
    ),
    (
        f"Convex bound: predicted vs measured best base lr, SGD on digits MLP 64-64-10, "
        f"T={T}, lr grid {BOUND_GRID.round(3).tolist()}",
        [
            "transfer",
            "tuned lr (WSD, T)",
            "predicted lr",
            "measured best lr",
            "|log2 ratio predicted/measured|",
            "grid step (log2)",
        ],
        rows_bound,
    ),
    (
        f"Extending a WSD run from T={T} to 2T={2 * T} (SGD, digits): final val loss",
        ["schedule", "cooldown fraction", "val loss", "ratio vs naive"],
        rows_ext,
    ),
]
notes = [
    f"CPU flags that decide bfloat16 speed: {cpu_flags()}.",
    "Muon's ns_dtype='auto' probe on this machine (5 Newton-Schulz steps on an n x n "
    "matrix, n the matrix's smaller side rounded up to a power of two, at most 256): "
    + "; ".join(
        f"n={n}: float32 {t[torch.float32] * 1e3:.3g} ms, bfloat16 "
        f"{t[torch.bfloat16] * 1e3:.3g} ms, picks {picks[n]}"
        for n, t in probe.items()
    )
    + " (bfloat16 only when at least 20% faster). The Muon rows below use this "
    "default.",
    "Steps and seconds to target: the target is the worse of the two tuned finals + "
    "2%; evaluations every 10 steps, so step counts are multiples of 10; seconds are "
    "training time only (evaluations excluded), medians over seeds. '>= N' marks a "
    "median run that never reached the target within the cap (a lower bound, not a "
    "measurement).",
]
report(
    args,
    "skalgos.torch optimizers (CPU, float32, 1 torch thread)",
    sections,
    notes=notes,
)
