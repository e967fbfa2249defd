"""Tour entry: diverse 10-NN on digits with the digit as the color."""

import time

import numpy as np

from skalgos._tour import TourResult, register


@register(
    name="DiverseNearestNeighbors",
    task="diverse 10-NN (1 per color)",
    data="digits, color = digit",
    baseline="NearestNeighbors + filter",
    metric="diverse recall@10",
)
def _entry(quick, random_state):
    from sklearn.datasets import load_digits
    from sklearn.neighbors import NearestNeighbors

    from skalgos.metrics import diverse_recall
    from skalgos.neighbors import DiverseNearestNeighbors, diverse_kneighbors

    X, y = load_digits(return_X_y=True)
    rng = np.random.RandomState(random_state)
    perm = rng.permutation(X.shape[0])
    n_q = 100 if quick else 300
    Q, X, y = X[perm[:n_q]], X[perm[n_q:]], y[perm[n_q:]]
    k, r = 10, 20  # the baseline over-fetches r neighbours, then filters
    _, truth = diverse_kneighbors(X, y, Q, n_neighbors=k, max_per_group=1)

    t0 = time.perf_counter()
    nn = DiverseNearestNeighbors(n_neighbors=k, random_state=random_state).fit(X, y)
    fit_time = time.perf_counter() - t0
    ind = nn.kneighbors(Q, search_list_size=r, return_distance=False)

    t0 = time.perf_counter()
    base = NearestNeighbors(n_neighbors=r).fit(X)
    base_fit = time.perf_counter() - t0
    cand = base.kneighbors(Q, return_distance=False)
    filtered = []
    for row in cand:
        seen, keep = set(), []
        for j in row:
            if y[j] not in seen:
                seen.add(y[j])
                keep.append(j)
        filtered.append((keep + [-1] * k)[:k])
    score = diverse_recall(ind, truth)
    base_score = diverse_recall(np.array(filtered), truth)

    def plot(ax):
        per_q = [len(set(a) & set(b)) / k for a, b in zip(ind, truth)]
        per_b = [len(set(a) & set(b)) / k for a, b in zip(filtered, truth)]
        ax.hist([per_q, per_b], bins=np.linspace(0, 1, 11), label=[
            "DiverseNearestNeighbors (queue 20)", "NearestNeighbors(20) + filter"
        ])  # fmt: skip
        ax.set_xlabel("diverse recall@10 per query")
        ax.set_ylabel("queries")
        ax.legend()

    return TourResult(
        score=score,
        baseline_score=base_score,
        fit_time=fit_time,
        baseline_fit_time=base_fit,
        plot=plot,
        notes="both look at about 20 candidates per query",
    )
