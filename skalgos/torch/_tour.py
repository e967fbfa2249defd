"""Tour entry: TorchClassifier with Muon and with AdamW against MLPClassifier."""

import time
import warnings

from skalgos._tour import TourResult, register


@register(
    name="TorchClassifier",
    task="classification, Muon optimizer",
    data="digits (8x8), 30% test",
    baseline="MLPClassifier (adam)",
    metric="test accuracy",
)
def _entry(quick, random_state):
    import numpy as np
    from sklearn.datasets import load_digits
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.model_selection import train_test_split
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from threadpoolctl import threadpool_limits

    from skalgos.torch import TorchClassifier

    X, y = load_digits(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(
        X, y, test_size=0.3, random_state=random_state, stratify=y
    )
    hidden = (128, 128)
    epochs = 8 if quick else 40
    common = dict(
        module__hidden_sizes=hidden,
        max_epochs=epochs,
        batch_size=64,
        n_jobs=1,
        random_state=random_state,
    )
    models = {
        "Muon": TorchClassifier(optimizer="muon", lr=0.02, **common),
        "AdamW": TorchClassifier(optimizer="adamw", lr=1e-3, **common),
    }
    scores, times, curves = {}, {}, {}
    for name, clf in models.items():
        pipe = make_pipeline(StandardScaler(), clf)
        t0 = time.perf_counter()
        pipe.fit(Xtr, ytr)
        times[name] = time.perf_counter() - t0
        scores[name] = pipe.score(Xte, yte)
        curves[name] = [h["train_loss"] for h in clf.history_]

    mlp = make_pipeline(
        StandardScaler(),
        MLPClassifier(
            hidden_layer_sizes=hidden,
            batch_size=64,
            max_iter=epochs,
            random_state=random_state,
        ),
    )
    t0 = time.perf_counter()
    # One BLAS thread, like the torch models (n_jobs=1): a like-for-like timing.
    with warnings.catch_warnings(), threadpool_limits(1):
        warnings.simplefilter("ignore", ConvergenceWarning)
        mlp.fit(Xtr, ytr)
    mlp_time = time.perf_counter() - t0
    mlp_score = mlp.score(Xte, yte)
    curves["MLPClassifier"] = list(mlp[-1].loss_curve_)

    def draw(ax):
        for name, c in curves.items():
            ax.plot(np.arange(1, len(c) + 1), c, label=name)
        ax.set_yscale("log")
        ax.set_xlabel("epoch")
        ax.set_ylabel("training loss")
        ax.set_title("digits MLP 64-128-128-10")
        ax.legend()

    return TourResult(
        score=scores["Muon"],
        baseline_score=mlp_score,
        fit_time=times["Muon"],
        baseline_fit_time=mlp_time,
        higher_is_better=True,
        plot=draw,
        notes=f"AdamW: accuracy {scores['AdamW']:.4f} in {times['AdamW']:.2f} s "
        f"(same module, {epochs} epochs)",
    )
