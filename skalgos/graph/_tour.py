"""Tour entry: pCQO-MIS + local search on a networkx graph against networkx."""

import time

from .._tour import TourResult, register


@register(
    name="MaximumIndependentSet",
    task="maximum independent set",
    data="networkx G(n, p), n=1000 (200 quick), average degree 10",
    baseline="networkx maximal_independent_set (best of 50)",
    metric="independent set size",
)
def _entry(quick, random_state):
    import networkx as nx

    from ._mis import MaximumIndependentSet

    n = 200 if quick else 1000
    G = nx.gnp_random_graph(n, 10 / (n - 1), seed=random_state)

    t0 = time.perf_counter()
    est = MaximumIndependentSet(random_state=random_state).fit(G)
    fit_time = time.perf_counter() - t0

    t0 = time.perf_counter()
    sizes = [
        len(nx.maximal_independent_set(G, seed=random_state + k)) for k in range(50)
    ]
    base_time = time.perf_counter() - t0
    greedy = MaximumIndependentSet("greedy", local_search=False).fit(G)
    alone = MaximumIndependentSet(local_search=False, random_state=random_state)
    alone.fit(G)

    def plot(ax):
        pts = [(h[2], h[1]) for h in est.history_ if h[1] > 0]
        ax.step(*zip(*pts), where="post", marker=".", label="pCQO, then ILS")
        ax.axhline(max(sizes), color="C1", ls="--", label="networkx, best of 50")
        ax.axhline(greedy.size_, color="C2", ls=":", label="min-degree greedy")
        ax.set_xlabel("seconds")
        ax.set_ylabel("independent set size")
        ax.legend(loc="lower right")

    return TourResult(
        score=est.size_,
        baseline_score=max(sizes),
        fit_time=fit_time,
        baseline_fit_time=base_time,
        higher_is_better=True,
        plot=plot,
        notes=f"min-degree greedy: {greedy.size_}; pCQO alone: {alone.size_}",
    )
