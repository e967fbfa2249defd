"""Tour entry: clustering rotated digit clouds, PW k-means vs Wasserstein k-means."""

import time

from .._tour import TourResult, register


@register(
    name="PWKMeans",
    task="cluster point clouds (5 digits)",
    data="digits 0-4 as pixel clouds, randomly rotated/reflected",
    baseline="Wasserstein k-means (POT free-support barycenters)",
    metric="ARI",
)
def _entry(quick, random_state):
    from sklearn.metrics import adjusted_rand_score

    from ..datasets import make_shape_clouds
    from . import PWKMeans

    per_class, support, max_iter = (3, 10, 5) if quick else (10, 20, 10)
    clouds, y = make_shape_clouds(
        5 * per_class, "digits", noise=0, resample=False, random_state=random_state
    )
    kw = dict(
        n_support=support,
        max_iter=max_iter,
        n_init=1 if quick else 3,
        random_state=random_state,
    )
    t0 = time.perf_counter()
    pw = PWKMeans(5, **kw).fit(clouds)
    t_pw = time.perf_counter() - t0
    t0 = time.perf_counter()
    w = PWKMeans(5, metric="w", **kw).fit(clouds)
    t_w = time.perf_counter() - t0

    def draw(ax):
        for j, C in enumerate(pw.cluster_centers_):
            ax.scatter(C[:, 0] + 2.5 * j, C[:, 1], s=12)
        ax.set_aspect("equal")
        ax.set_title("PWKMeans centroids of rotated digit clouds")
        ax.set_xticks([])
        ax.set_yticks([])

    return TourResult(
        score=adjusted_rand_score(y, pw.labels_),
        baseline_score=adjusted_rand_score(y, w.labels_),
        fit_time=t_pw,
        baseline_fit_time=t_w,
        higher_is_better=True,
        plot=draw,
        notes=f"{len(clouds)} clouds; centroids of {support} points",
    )
