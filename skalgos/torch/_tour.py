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
    scores, times, curves = _scaled_scores(models, Xtr, ytr, Xte, yte)

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


@register(
    name="TiltedSAM",
    task="classification under 20% label noise",
    data="digits (8x8), 30% test",
    baseline="same MLP, plain SGD (ERM)",
    metric="test accuracy",
)
def _entry_tsam(quick, random_state):
    import numpy as np
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    from skalgos.torch import TorchClassifier

    X, y = load_digits(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(
        X, y, test_size=0.3, random_state=random_state, stratify=y
    )
    rng = np.random.default_rng(random_state)
    flip = rng.random(len(ytr)) < 0.2
    ytr = ytr.copy()
    ytr[flip] = rng.integers(0, 10, flip.sum())
    common = dict(
        module__hidden_sizes=(64,),
        lr=0.05,
        optimizer__momentum=0.9,
        max_epochs=3 if quick else 20,
        batch_size=64,
        n_jobs=1,
        random_state=random_state,
    )
    models = {
        "tsam": TorchClassifier(
            optimizer="tsam", optimizer__rho=0.05, optimizer__tilt=20.0, **common
        ),
        "sgd": TorchClassifier(optimizer="sgd", **common),
    }
    scores, times, curves = _scaled_scores(models, Xtr, ytr, Xte, yte)

    def draw(ax):
        for name, c in curves.items():
            ax.plot(np.arange(1, len(c) + 1), c, label=name)
        ax.set_xlabel("epoch")
        ax.set_ylabel("training loss (noisy labels)")
        ax.legend()

    return TourResult(
        score=scores["tsam"],
        baseline_score=scores["sgd"],
        fit_time=times["tsam"],
        baseline_fit_time=times["sgd"],
        plot=draw,
    )


@register(
    name="LayerwisePreconditioner",
    task="regression, ill-conditioned inputs (KFAC)",
    data="linear teacher, cond(Sigma_x) = 1e3",
    baseline="same model, Adam",
    metric="test MSE after equal epochs",
)
def _entry_kfac(quick, random_state):
    import numpy as np

    from skalgos.torch import TorchRegressor

    rng = np.random.default_rng(random_state)
    d, n = 20, 400 if quick else 2000
    scales = np.logspace(0, -1.5, d)  # condition number 1e3 of the covariance
    X = rng.normal(size=(2 * n, d)) * scales
    y = X @ rng.normal(size=d) / scales.mean()
    Xtr, Xte, ytr, yte = X[:n], X[n:], y[:n], y[n:]
    common = dict(
        module__hidden_sizes=(),
        max_epochs=3 if quick else 10,
        batch_size=100,
        n_jobs=1,
        random_state=random_state,
    )
    models = {
        "kfac": TorchRegressor(
            optimizer="kfac",
            lr=1.0,
            optimizer__damping=1e-4,
            optimizer__update_every=1,
            **common,
        ),
        "adam": TorchRegressor(
            optimizer="adamw", lr=1e-2, optimizer__weight_decay=0.0, **common
        ),
    }
    mse, times = _test_mse(models, Xtr, ytr, Xte, yte)
    return TourResult(
        score=mse["kfac"],
        baseline_score=mse["adam"],
        fit_time=times["kfac"],
        baseline_fit_time=times["adam"],
        higher_is_better=False,
    )


@register(
    name="SyMO",
    task="regression with a bias-free tanh MLP (symmetry-structured curvature)",
    data="tanh teacher, inputs with cond(Sigma_x) = 1e3",
    baseline="same model, full-batch gradient descent",
    metric="test MSE after equal full-batch steps",
)
def _entry_symo(quick, random_state):
    import numpy as np
    import torch

    from skalgos.torch import TorchRegressor

    rng = np.random.default_rng(random_state)
    d0, d1, n = 20, 12, 300 if quick else 1000
    Q = np.linalg.qr(rng.normal(size=(d0, d0)))[0]
    X = (rng.normal(size=(2 * n, d0)) * np.logspace(0, -1.5, d0)) @ Q.T
    W1 = 3 * rng.normal(size=(d1, d0)) / np.sqrt(d0)
    y = np.tanh(X @ W1.T) @ rng.normal(size=d1) / np.sqrt(d1)
    X, y = X.astype(np.float32), y.astype(np.float32)
    Xtr, Xte, ytr, yte = X[:n], X[n:], y[:n], y[n:]

    def bias_free_mlp(n_features_in, n_outputs):
        # SyMO's structure is that of bias-free MLPs. module=None would build
        # one for optimizer="symo" only; the GD baseline must train the same
        # model, so both get this factory.
        return torch.nn.Sequential(
            torch.nn.Linear(n_features_in, 16, bias=False),
            torch.nn.Tanh(),
            torch.nn.Linear(16, n_outputs, bias=False),
        )

    common = dict(
        module=bias_free_mlp,
        max_epochs=30 if quick else 200,
        batch_size=n,  # full batch: one step per epoch
        n_jobs=1,
        random_state=random_state,
    )
    models = {
        "symo": TorchRegressor(
            optimizer="symo", lr=0.05, optimizer__damping=1e-4, **common
        ),
        "gd": TorchRegressor(optimizer="sgd", lr=1.0, **common),
    }
    mse, times = _test_mse(models, Xtr, ytr, Xte, yte)
    return TourResult(
        score=mse["symo"],
        baseline_score=mse["gd"],
        fit_time=times["symo"],
        baseline_fit_time=times["gd"],
        higher_is_better=False,
    )


def _test_mse(models, Xtr, ytr, Xte, yte):
    """Fit each regressor; its test MSE and fit time, by name."""
    import numpy as np

    mse, times = {}, {}
    for name, reg in models.items():
        t0 = time.perf_counter()
        reg.fit(Xtr, ytr)
        times[name] = time.perf_counter() - t0
        mse[name] = float(np.mean((reg.predict(Xte) - yte) ** 2))
    return mse, times


def _scaled_scores(models, Xtr, ytr, Xte, yte):
    """Fit each torch estimator behind a StandardScaler; its test score, fit
    time and training-loss curve, by name."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    scores, times, curves = {}, {}, {}
    for name, clf in models.items():
        pipe = make_pipeline(StandardScaler(), clf)
        t0 = time.perf_counter()
        pipe.fit(Xtr, ytr)
        times[name] = time.perf_counter() - t0
        scores[name] = pipe.score(Xte, yte)
        curves[name] = [h["train_loss"] for h in clf.history_]
    return scores, times, curves
