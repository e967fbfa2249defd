"""Tour entry: pCQO-MIS on a networkx graph against networkx's maximal set."""

import time

from .._tour import TourResult, register


@register(
    name="MaximumIndependentSet",
    task="maximum independent set",
    data="networkx G(n, p), n=120 (60 quick), p=0.15",
    baseline="networkx maximal_independent_set (best of 50)",
    metric="independent set size",
)
def _entry(quick, random_state):
    import networkx as nx

    from ._mis import MaximumIndependentSet

    n = 60 if quick else 120
    G = nx.gnp_random_graph(n, 0.15, seed=random_state)

    t0 = time.perf_counter()
    est = MaximumIndependentSet(
        batch_size=32 if quick else 256,
        max_iter=900 if quick else 4500,
        random_state=random_state,
    ).fit(G)
    fit_time = time.perf_counter() - t0

    t0 = time.perf_counter()
    sizes = [
        len(nx.maximal_independent_set(G, seed=random_state + k)) for k in range(50)
    ]
    base_time = time.perf_counter() - t0
    greedy = MaximumIndependentSet("greedy").fit(G)

    def plot(ax):
        steps = [h[0] for h in est.history_]
        best = [h[1] for h in est.history_]
        ax.step(steps, best, where="post", marker="o", label="pCQO best size")
        ax.axhline(max(sizes), color="C1", ls="--", label="networkx, best of 50")
        ax.axhline(greedy.size_, color="C2", ls=":", label="min-degree greedy")
        ax.set_xlabel("gradient steps")
        ax.set_ylabel("independent set size")
        ax.legend(loc="lower right")

    return TourResult(
        score=est.size_,
        baseline_score=max(sizes),
        fit_time=fit_time,
        baseline_fit_time=base_time,
        higher_is_better=True,
        plot=plot,
        notes=f"min-degree greedy: {greedy.size_}",
    )
