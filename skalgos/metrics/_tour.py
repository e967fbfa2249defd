"""Tour entry: does the metric follow intuition on the paper's four sweeps?"""

import time

import numpy as np

from .._tour import TourResult, register

# name: (parameter, values, fixed kwargs, intuitive direction of compositionality)
LOOKUP_TABLE_SWEEPS = {
    "sentence length M": ("sentence_length", [1, 4, 16, 64], {}, "up"),
    "vocabulary size K": ("vocab_size", [2, 6, 20, 100], {}, "peak"),
    "dimensionality D": ("z_dim", [16, 64, 160], {}, "down"),
    "disentanglement q": ("disentanglement", [1, 2, 4, 8], {"vocab_size": 2}, "down"),
}


def follows(values, direction):
    """Whether a sweep's values move in the intuitive ``direction``."""
    v = np.asarray(values)
    if direction == "peak":
        return 0 < int(np.argmax(v)) < len(v) - 1
    d = np.diff(v)
    return bool(np.all(d > 0) if direction == "up" else np.all(d < 0))


def lookup_table_sweeps(n_samples, seeds):
    """Exact C (per-sample form) and topographic similarity along each sweep.

    Returns ``{name: (values, C means, topsim means, C time, topsim time)}``.
    """
    from ..datasets import make_lookup_table_language
    from . import topographic_similarity

    out = {}
    for name, (param, values, fixed, _) in LOOKUP_TABLE_SWEEPS.items():
        cs, ts, tc, tt = [], [], 0.0, 0.0
        for v in values:
            c_s, t_s = [], []
            for s in range(seeds):
                t0 = time.perf_counter()
                W, Z, terms = make_lookup_table_language(
                    n_samples, per_sample=True, random_state=s, **fixed, **{param: v}
                )
                c_s.append(terms["compositionality"])
                t1 = time.perf_counter()
                t_s.append(topographic_similarity(W, Z))
                tc, tt = tc + t1 - t0, tt + time.perf_counter() - t1
            cs.append(float(np.mean(c_s)))
            ts.append(float(np.mean(t_s)))
        out[name] = (values, cs, ts, tc, tt)
    return out


@register(
    name="RepresentationalCompositionality",
    task="follow the intuitive trend of 4 language sweeps",
    data="lookup-table languages (exact terms)",
    baseline="topographic similarity",
    metric="sweeps agreeing (of 4)",
)
def _entry(quick, random_state):
    res = lookup_table_sweeps(300 if quick else 1000, 1 if quick else 3)
    dirs = {k: v[3] for k, v in LOOKUP_TABLE_SWEEPS.items()}
    score = sum(follows(r[1], dirs[k]) for k, r in res.items())
    base = sum(follows(r[2], dirs[k]) for k, r in res.items())

    def plot(ax):
        for k, (values, cs, _ts, _, _) in res.items():
            x = np.arange(len(values))
            ax.plot(
                x, (np.array(cs) - 1) / (max(cs) - 1 + 1e-12), "o-", label=f"C: {k}"
            )
        ax.set_xlabel("sweep step")
        ax.set_ylabel("C - 1 (scaled)")
        ax.legend(fontsize=7)

    return TourResult(
        score=float(score),
        baseline_score=float(base),
        fit_time=sum(r[3] for r in res.values()),
        baseline_fit_time=sum(r[4] for r in res.values()),
        plot=plot,
    )
