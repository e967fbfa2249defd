"""Representational compositionality against topographic similarity.

Claim (Elmoznino et al., ICML 2025): C(Z) = K(Z) / K(Z|W) follows the intuitive
direction in all four lookup-table sweeps, where topographic similarity (the
metric in use today) agrees in one; and prequential C^L separates compositional
from holistic object languages (the paper: 1.95 vs 1.02 with and without
iterated learning). Section (c) checks K(Z) for a continuous Z against the
exact C of lookup-table languages: the marginal-Gaussian K(Z) (an upper bound,
the old default) against the two-part code through W (the default now).

    python benchmarks/compositionality.py [--quick]
"""

import time
import warnings

import numpy as np
from _common import parse_args, report
from scipy.linalg import LinAlgWarning
from sklearn.linear_model import Ridge

from skalgos.datasets import make_lookup_table_language, make_object_language
from skalgos.metrics import RepresentationalCompositionality, topographic_similarity
from skalgos.metrics._tour import LOOKUP_TABLE_SWEEPS, follows, lookup_table_sweeps

SEEDS = 3
LANG_SEEDS = 5
N_SAMPLES = 1000
CONT_SAMPLES = 600
# (sentence_length, vocab_size, z_dim, disentanglement); q = M is a holistic table
CONT_LANGUAGES = [
    (4, 5, 8, 1),
    (4, 3, 8, 1),
    (4, 3, 8, 4),
    (2, 5, 16, 1),
    (2, 5, 16, 2),
]


def sweeps(args):
    res = lookup_table_sweeps(
        300 if args.quick else N_SAMPLES, 2 if args.quick else SEEDS
    )
    rows, c_ok, t_ok = [], 0, 0
    for name, (values, cs, ts, _, _) in res.items():
        direction = LOOKUP_TABLE_SWEEPS[name][3]
        c_agree, t_agree = follows(cs, direction), follows(ts, direction)
        c_ok += c_agree
        t_ok += t_agree
        rows.append(
            [
                f"{name} = {values}",
                direction,
                " ".join(f"{x:.3f}" for x in cs),
                "yes" if c_agree else "no",
                " ".join(f"{x:.2f}" for x in ts),
                "yes" if t_agree else "no",
            ]
        )
    rows.append(
        [
            "sweeps agreeing (paper: C 4/4, topsim 1/4)",
            "",
            f"{c_ok}/4",
            "",
            f"{t_ok}/4",
            f"ratio C/topsim agreements: {c_ok / max(t_ok, 1):.1f}",
        ]
    )
    return rows


def languages(args):
    seeds = 2 if args.quick else LANG_SEEDS
    reps = 10 if args.quick else 50
    n_values = 4 if args.quick else 8
    kw = dict(min_size=20, increment=20) if args.quick else {}
    results = {}
    t0 = time.process_time()
    for kind, noise in [
        ("compositional", 0.0),
        ("partial (eps=0.25)", 0.25),
        ("holistic", 0.0),
    ]:
        cs, ts = [], []
        for s in range(seeds):
            W, Z = make_object_language(
                2,
                n_values,
                reps,
                kind="holistic" if kind == "holistic" else "compositional",
                noise=noise,
                random_state=s,
            )
            est = RepresentationalCompositionality(random_state=s, **kw).fit(W, Z)
            cs.append(est.compositionality_)
            ts.append(topographic_similarity(W, Z))
        results[kind] = (np.mean(cs), np.std(cs), np.mean(ts))
    cpu = time.process_time() - t0
    rows = [
        [k, f"{m:.3f} +- {sd:.3f}", f"{t:.3f}"] for k, (m, sd, t) in results.items()
    ]
    comp, hol = results["compositional"], results["holistic"]
    rows.append(
        [
            "ratio compositional / holistic",
            f"{comp[0] / hol[0]:.2f}",
            f"{comp[2] / hol[2]:.2f}",
        ]
    )
    rows.append(["paper (iterated learning / none)", "1.95 / 1.02 = 1.91", "-"])
    rows.append(["CPU seconds (all languages and seeds)", f"{cpu:.1f}", ""])
    return rows


def continuous(args):
    # ridge on a per-position one-hot code with an intercept is redundant
    # (ill-conditioned by construction, harmless): scipy warns on every chunk
    warnings.simplefilter("ignore", LinAlgWarning)
    n = 300 if args.quick else CONT_SAMPLES
    langs = CONT_LANGUAGES[1:3] if args.quick else CONT_LANGUAGES
    rows = []
    t0 = time.process_time()
    for M, K, D, q in langs:
        W, Z, terms = make_lookup_table_language(
            n, M, K, D, disentanglement=q, random_state=0
        )
        exact = terms["compositionality"]
        ridge = dict(estimator=Ridge(alpha=1e-6), val_size=0.0, random_state=0)
        c_naive = (
            RepresentationalCompositionality(k_z="naive", **ridge)
            .fit(W, Z)
            .compositionality_
        )
        c_two = RepresentationalCompositionality(**ridge).fit(W, Z).compositionality_
        mlp = RepresentationalCompositionality(random_state=0).fit(W, Z)
        kind = "holistic" if q == M > 1 else "compositional"
        rows.append(
            [
                f"M={M}, K={K}, D={D}, q={q} ({kind})",
                f"{exact:.3f}",
                f"{c_naive:.3f}",
                f"{c_two:.3f}",
                f"{(c_two - 1) / (exact - 1):.2f}",
                f"{mlp.compositionality_:.3f}",
                f"{(mlp.compositionality_ - 1) / (exact - 1):.2f}",
            ]
        )
    rows.append(
        [
            "CPU seconds (all rows)",
            f"{time.process_time() - t0:.1f}",
            "",
            "",
            "",
            "",
            "",
        ]
    )
    return rows


def main():
    args = parse_args("compositionality", __doc__)
    report(
        args,
        "Representational compositionality vs topographic similarity",
        [
            (
                "(a) Lookup-table sweeps: exact C (per-sample form) and topsim",
                ["sweep", "intuitive", "C", "C agrees", "topsim", "topsim agrees"],
                sweeps(args),
            ),
            (
                "(b) Object languages: prequential C^L (K(Z) uniform) vs topsim",
                ["language", "C^L (mean +- sd over seeds)", "topsim"],
                languages(args),
            ),
            (
                "(c) Continuous Z: C^L against the exact C of lookup tables "
                "(ratio = estimated (C - 1) / exact (C - 1); 1 is exact)",
                [
                    "language",
                    "exact C",
                    "C, K(Z) marginal Gaussian (old default), ridge",
                    "C, K(Z) two-part (new default), ridge",
                    "ratio (two-part, ridge)",
                    "C, two-part, default MLP",
                    "ratio (two-part, MLP)",
                ],
                continuous(args),
            ),
        ],
    )


if __name__ == "__main__":
    main()
