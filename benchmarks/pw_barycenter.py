"""Procrustes-Wasserstein barycenters and clustering against plain Wasserstein.

B1 shape preservation: PW(W barycenter, truth) / PW(PW barycenter, truth) on
rotated / reflected noisy copies of one 2-D shape; the W barycenter is POT's
``free_support_barycenter`` from the same start.
B2 success rate of each PW initialization on random orthogonal maps (2-D and
3-D), the paper's protocol: success when PW from the init reaches, within
1e-7, the value of the un-rotated copy from the identity.
B3 clustering sklearn digits 0-4 (10 per class) as pixel clouds, without and
with random rotations: ARI of PWKMeans / ARI of Wasserstein k-means (one run
each, n_init=1, for both).
B4 PWKMeans on 3-D helix / trefoil / swiss-roll clouds: ARI and inertia of one
run per seed against n_init=3 (the default), and the fit time with the
per-cloud Fiedler cache against without it (the old code's cost).
B5 the entropic path that was removed (issue 26): block-coordinate descent
with POT's Sinkhorn, epsilon annealed from the mean cost down to reg, duals
warm-started, against the exact PW iterations from the same Fiedler start.

Run: python benchmarks/pw_barycenter.py [--quick]
"""

import numpy as np
import ot
from _common import parse_args, report, timer
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

from skalgos.datasets import make_shape_clouds
from skalgos.transport import PWBarycenter, PWKMeans, pw_distance

# parameters -----------------------------------------------------------------
B1_SHAPES = ["F", "spiral"]
B1_COPIES, B1_POINTS, B1_SUPPORT = 20, 100, 100
B2_COPIES, B2_POINTS = 50, 250
B2_SHAPES = {"2-D": "F", "3-D": "s_curve"}
B2_INITS = ["identity", "gw", "gw_geodesic", "fiedler", "pca"]
B3_PER_CLASS, B3_SUPPORT, B3_SEEDS = 10, 20, [0, 1, 2]
B4_CLOUDS, B4_POINTS, B4_SUPPORT, B4_SEEDS = 9, 80, 40, [0, 1]
B5_SIZES, B5_REGS = [300, 1000], [1e-2, 3e-3]
QUICK = dict(
    B4_CLOUDS=6,
    B4_POINTS=30,
    B4_SUPPORT=15,
    B4_SEEDS=[0],
    B5_SIZES=[100],
    B1_COPIES=4,
    B1_POINTS=30,
    B1_SUPPORT=30,
    B2_COPIES=5,
    B2_POINTS=40,
    B3_PER_CLASS=3,
    B3_SEEDS=[0],
)


def _haar(d, rng):
    Q, R = np.linalg.qr(rng.normal(size=(d, d)))
    return Q * np.sign(np.diag(R))


def b1(copies, n_points, support):
    rows = []
    for shape in B1_SHAPES:
        clouds, _, (truth,) = make_shape_clouds(
            copies, shape, n_points=n_points, random_state=0, return_references=True
        )
        clouds = [c - c.mean(axis=0) for c in clouds]
        X0 = np.random.default_rng(0).normal(scale=0.5, size=(support, 2))
        with timer() as tw:
            w = ot.lp.free_support_barycenter(
                clouds,
                [np.full(len(c), 1 / len(c)) for c in clouds],
                X0,
                numItermax=100,
                stopThr=1e-10,
            )
        with timer() as tp:
            pw = (
                PWBarycenter(
                    support,
                    support_init=X0,
                    init="fiedler",
                    max_iter=20,
                    random_state=0,
                )
                .fit(clouds)
                .barycenter_
            )
        d_w = pw_distance(w, truth, init="best")
        d_pw = pw_distance(pw, truth, init="best")
        rows.append(
            [shape, copies, f"{d_w:.4f}", f"{d_pw:.4f}", d_w / d_pw, tw(), tp()]
        )
    return rows


def b2(copies, n_points):
    rows = []
    for dim, shape in B2_SHAPES.items():
        plain, _, (ref,) = make_shape_clouds(
            copies,
            shape,
            n_points=n_points,
            rotate=False,
            random_state=1,
            return_references=True,
        )
        rng = np.random.default_rng(2)
        d = ref.shape[1]
        rotated = [c @ _haar(d, rng) for c in plain]
        target = [pw_distance(ref, c, init="identity", squared=True) for c in plain]
        rates, times = {}, {}
        for init in B2_INITS:
            with timer() as t:
                vals = [pw_distance(ref, c, init=init, squared=True) for c in rotated]
            rates[init] = int(sum(v <= t0 + 1e-7 for v, t0 in zip(vals, target)))
            times[init] = t()
        ratio = rates["fiedler"] / max(rates["identity"], 1)
        rows.append(
            [dim, shape, copies]
            + [rates[i] for i in B2_INITS]
            + [ratio, times["fiedler"], times["identity"]]
        )
    return rows


def b3(per_class, support, seeds):
    rows = []
    for rotate in (False, True):
        res = {"pw": [], "w": []}
        for seed in seeds:
            clouds, y = make_shape_clouds(
                5 * per_class,
                "digits",
                noise=0,
                resample=False,
                permute=True,
                rotate=rotate,
                random_state=seed,
            )
            for metric in ("pw", "w"):
                km = PWKMeans(
                    5,
                    n_support=support,
                    metric=metric,
                    max_iter=10,
                    n_init=1,
                    random_state=seed,
                )
                with timer() as t:
                    km.fit(clouds)
                res[metric].append(
                    (
                        adjusted_rand_score(y, km.labels_),
                        normalized_mutual_info_score(y, km.labels_),
                        t(),
                    )
                )
        pw, w = np.mean(res["pw"], axis=0), np.mean(res["w"], axis=0)
        ratio = pw[0] / w[0] if w[0] > 0 else "n/a (ARI W <= 0)"
        rows.append(
            [
                "rotated" if rotate else "upright (paper)",
                5 * per_class,
                len(seeds),
                pw[0],
                w[0],
                ratio,
                pw[1],
                w[1],
                pw[2],
                w[2],
            ]
        )
    return rows


def b4(n_clouds, n_points, support, seeds):
    from skalgos.transport import _pw

    clouds, y = make_shape_clouds(
        n_clouds, ["helix", "trefoil", "swiss_roll"], n_points=n_points, random_state=0
    )
    rows = []

    def fit(seed, n_init, cache):
        _pw._FIEDLER_CACHE.clear()
        size = _pw._FIEDLER_CACHE_SIZE
        _pw._FIEDLER_CACHE_SIZE = size if cache else 0  # 0: recompute every pair
        try:
            km = PWKMeans(3, n_support=support, n_init=n_init, random_state=seed)
            with timer() as t:
                km.fit(clouds)
        finally:
            _pw._FIEDLER_CACHE_SIZE = size
        return adjusted_rand_score(y, km.labels_), km.inertia_, t()

    for seed in seeds:
        ari1, in1, t_old = fit(seed, 1, cache=False)
        _, _, t_new = fit(seed, 1, cache=True)
        ari3, in3, t3 = fit(seed, 3, cache=True)
        rows.append([seed, ari1, in1, ari3, in3, t_old, t_new, t_old / t_new, t3])
    return rows


def _entropic_pw(X, Y, a, b, P, reg, max_iter=100, tol=1e-7):
    """The removed design: annealed, warm-started Sinkhorn inside the PW loop."""
    import warnings

    from skalgos.transport._pw import _procrustes_from_plan

    warm, prev, scale, t, n_sinkhorn = None, np.inf, None, 0, 0
    while True:
        M = ot.dist(X, Y @ P)
        scale = M.mean() if scale is None else scale
        eps = max(reg, 0.5**t) * scale
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # non-convergence is counted below
            G, log = ot.sinkhorn(
                a, b, M, eps, numItermax=2000, stopThr=1e-6, warmstart=warm, log=True
            )
        n_sinkhorn += log["niter"]
        warm = (np.log(log["u"]), np.log(log["v"]))
        obj = float((G * M).sum())
        P = _procrustes_from_plan(X, Y, G, True)
        t += 1
        if (eps <= reg * scale * (1 + 1e-12) and prev - obj <= tol * obj) or (
            t >= max_iter
        ):
            return obj, n_sinkhorn, t
        prev = obj


def b5(sizes, regs):
    from skalgos.transport._pw import _initial_rotation

    rows = []
    for n in sizes:
        (X, Y), _ = make_shape_clouds(2, "helix", n_points=n, random_state=0)
        X, Y = X - X.mean(axis=0), Y - Y.mean(axis=0)
        a, b = np.full(len(X), 1 / len(X)), np.full(len(Y), 1 / len(Y))
        P0 = _initial_rotation("fiedler", X, Y, a, b, True)
        with timer() as te:
            exact = pw_distance(X, Y, init=P0, squared=True, center=False)
        for reg in regs:
            with timer() as ts:
                obj, its, outer = _entropic_pw(X, Y, a, b, P0, reg)
            rows.append(
                [n, reg, exact, obj, obj / exact, te(), ts(), ts() / te(), outer, its]
            )
    return rows


def main():
    args = parse_args("pw_barycenter", __doc__.splitlines()[0])
    p = dict(
        B1_COPIES=B1_COPIES,
        B1_POINTS=B1_POINTS,
        B1_SUPPORT=B1_SUPPORT,
        B2_COPIES=B2_COPIES,
        B2_POINTS=B2_POINTS,
        B3_PER_CLASS=B3_PER_CLASS,
        B3_SEEDS=B3_SEEDS,
        B4_CLOUDS=B4_CLOUDS,
        B4_POINTS=B4_POINTS,
        B4_SUPPORT=B4_SUPPORT,
        B4_SEEDS=B4_SEEDS,
        B5_SIZES=B5_SIZES,
    )
    if args.quick:
        p.update(QUICK)
    sections = [
        (
            "B1 shape preservation (baseline: POT free_support_barycenter; ratio "
            "= PW(W bary, truth) / PW(PW bary, truth), higher is better for PW)",
            [
                "shape",
                "copies",
                "PW(W bary, truth)",
                "PW(PW bary, truth)",
                "ratio",
                "W s",
                "PW s",
            ],
            b1(p["B1_COPIES"], p["B1_POINTS"], p["B1_SUPPORT"]),
        ),
        (
            "B2 initialization successes out of the copies (paper, 2-D dog: GW 35, "
            "Geo-GW 46, Fiedler 50, PCA 31; 3-D dragon: 45, 43, 50, 8); ratio = "
            "Fiedler / identity (baseline)",
            ["dim", "shape", "copies", *B2_INITS, "ratio", "Fiedler s", "identity s"],
            b2(p["B2_COPIES"], p["B2_POINTS"]),
        ),
        (
            "B3 digit clouds, k-means with 5 clusters (baseline: Wasserstein "
            "k-means; paper on MNIST upright: ARI 0.767 vs 0.407, ratio 1.88)",
            [
                "variant",
                "clouds",
                "seeds",
                "ARI PW",
                "ARI W",
                "ratio",
                "NMI PW",
                "NMI W",
                "PW s",
                "W s",
            ],
            b3(p["B3_PER_CLASS"], B3_SUPPORT, p["B3_SEEDS"]),
        ),
        (
            f"B4 PWKMeans on 3-D helix / trefoil / swiss-roll clouds ({p['B4_CLOUDS']} "
            f"clouds of about {p['B4_POINTS']} points, 3 clusters, n_support "
            f"{p['B4_SUPPORT']}): one run against n_init=3 (baseline: one run); "
            "fit time without the Fiedler cache (baseline, the old code) and with it",
            [
                "seed",
                "ARI n_init=1",
                "inertia n_init=1",
                "ARI n_init=3",
                "inertia n_init=3",
                "no-cache s (baseline)",
                "cache s",
                "time ratio",
                "n_init=3 s",
            ],
            b4(p["B4_CLOUDS"], p["B4_POINTS"], p["B4_SUPPORT"], p["B4_SEEDS"]),
        ),
        (
            "B5 the removed entropic path: annealed warm-started Sinkhorn PW "
            "against exact PW (baseline) on two 3-D helices, same Fiedler start; "
            "the issue's goal was PW^2 within 5% and faster above some n",
            [
                "n",
                "reg (of mean cost)",
                "exact PW^2",
                "entropic PW^2",
                "ratio",
                "exact s",
                "entropic s",
                "time ratio entropic/exact",
                "PW iterations",
                "Sinkhorn iterations",
            ],
            b5(p["B5_SIZES"], B5_REGS),
        ),
    ]
    report(args, "Procrustes-Wasserstein barycenters (skalgos.transport)", sections)


def b6_ot_counts(settings=None):
    """Issue 35: PWKMeans cost at defaults, counted in POT calls.

    36 digit images (0-5, six each, pixels > 4 as in ``make_shape_clouds``),
    ``n_clusters=6``, ``random_state=0``. Counts of ``ot.emd`` / ``ot.emd2`` /
    ``ot.emd_1d`` calls do not depend on the machine's load; the seconds do.
    Run: ``cd benchmarks && python -c "import pw_barycenter as b; b.b6_ot_counts()"``.
    """
    import json
    import time

    import ot
    from sklearn.datasets import load_digits
    from sklearn.metrics import adjusted_rand_score

    counts = {"emd": 0, "emd2": 0, "emd_1d": 0}
    originals = {name: getattr(ot, name) for name in counts}

    def counted(name):
        def call(*args, **kwargs):
            counts[name] += 1
            return originals[name](*args, **kwargs)

        return call

    d = load_digits()
    rng = np.random.RandomState(0)
    idx = np.concatenate(
        [rng.choice(np.flatnonzero(d.target == c), 6, replace=False) for c in range(6)]
    )
    clouds = []
    for i in idx:
        r, c = np.nonzero(d.images[i] > 4.0)
        clouds.append(np.c_[c, -r].astype(float))
    if settings is None:
        settings = [dict(metric="w", n_init=1), {}, dict(n_init=1), dict(metric="w")]
    rows = []
    try:
        for name in counts:
            setattr(ot, name, counted(name))
        for extra in settings:
            for name in counts:
                counts[name] = 0
            km = PWKMeans(n_clusters=6, random_state=0, **extra)
            start = time.perf_counter()
            km.fit(clouds)
            row = dict(
                params=extra,
                seconds=round(time.perf_counter() - start, 2),
                ari=round(adjusted_rand_score(d.target[idx], km.labels_), 4),
                inertia=round(km.inertia_, 5),
                n_iter=km.n_iter_,
                **counts,
            )
            print(json.dumps(row), flush=True)
            rows.append(row)
    finally:
        for name, f in originals.items():
            setattr(ot, name, f)
    return rows


if __name__ == "__main__":
    main()
